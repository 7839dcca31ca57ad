package pools

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/actorpool/actorpool/internal/leakcheck"
)

func TestEveryPoolPassesCheck(t *testing.T) {
	for _, c := range All() {
		t.Run(c.Name, func(t *testing.T) {
			before := leakcheck.Take()
			if err := Check(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			before.Check(t)
		})
	}
}

// Broken pools, each breaking one rule, prove that Check catches it.

// sharedPool lends one object to everyone.
type sharedPool struct{ o *Object }

func (p *sharedPool) Do(_ context.Context, fn func(*Object)) error { fn(p.o); return nil }
func (p *sharedPool) Close() error                                 { return nil }

// spendthriftPool creates an object for every take and destroys it after.
type spendthriftPool struct{ f *Factory }

func (p *spendthriftPool) Do(ctx context.Context, fn func(*Object)) error {
	o, err := p.f.Create(ctx)
	if err != nil {
		return err
	}
	fn(o)
	p.f.Destroy(o)
	return nil
}
func (p *spendthriftPool) Close() error { return nil }

// leakyPool is a channel pool whose Close forgets to destroy anything.
type leakyPool struct{ Pool }

func (p leakyPool) Close() error { return nil }

// doubleDestroyPool is a channel pool whose Close destroys every idle
// object twice.
type doubleDestroyPool struct{ *chanPool }

func (p doubleDestroyPool) Close() error {
	var objs []*Object
	for len(p.idle) > 0 {
		objs = append(objs, <-p.idle)
	}
	for _, o := range objs {
		p.f.Destroy(o)
		p.f.Destroy(o)
	}
	return nil
}

func TestCheckCatchesBrokenPools(t *testing.T) {
	tests := []struct {
		name string
		new  func(cfg Config) (Pool, error)
		want string
	}{
		{"lends one object to all", func(cfg Config) (Pool, error) {
			o, err := cfg.Factory.Create(context.Background())
			return &sharedPool{o: o}, err
		}, "already held"},
		{"creates past its size", func(cfg Config) (Pool, error) {
			return &spendthriftPool{f: cfg.Factory}, nil
		}, "alive at once"},
		{"loses objects at Close", func(cfg Config) (Pool, error) {
			p, err := NewChan(cfg)
			return leakyPool{p}, err
		}, "destroyed 0"},
		{"destroys twice", func(cfg Config) (Pool, error) {
			p, err := NewChan(cfg)
			if err != nil {
				return nil, err
			}
			return doubleDestroyPool{p.(*chanPool)}, nil
		}, "destroyed 4 objects twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(context.Background(), Contender{Name: "broken", New: tt.new})
			if err == nil {
				t.Fatalf("Check passed a pool that %s", tt.name)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Check: %v\nwant an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	tests := []struct {
		list    string
		want    []string
		wantErr string
	}{
		{"", namesOf(All()), ""},
		{"puddle, actorpool", []string{"actorpool", "puddle"}, ""},
		{"actorpool,nosuch", nil, `no pool named "nosuch"`},
	}
	for _, tt := range tests {
		got, err := Select(tt.list)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Select(%q) error = %v, want one mentioning %q", tt.list, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Select(%q): %v", tt.list, err)
			continue
		}
		if g := namesOf(got); strings.Join(g, ",") != strings.Join(tt.want, ",") {
			t.Errorf("Select(%q) = %v, want %v", tt.list, g, tt.want)
		}
	}
}

func namesOf(cs []Contender) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

func TestConfigValidation(t *testing.T) {
	for _, c := range All() {
		if _, err := c.New(Config{Size: 0, Factory: &Factory{}}); err == nil || !strings.Contains(err.Error(), "Size") {
			t.Errorf("%s: New with Size 0: error = %v, want one naming Size", c.Name, err)
		}
		if _, err := c.New(Config{Size: 1}); err == nil || !strings.Contains(err.Error(), "Factory") {
			t.Errorf("%s: New with no Factory: error = %v, want one naming Factory", c.Name, err)
		}
	}
}

func TestMailboxServesWaitersInOrder(t *testing.T) {
	// One object, held while three takers queue one after another: they
	// must get it in the order they asked.
	p := newMailbox(&Factory{}, 1)
	defer p.Close()
	ctx := context.Background()
	release := make(chan struct{})
	held := make(chan struct{})
	go p.Do(ctx, func(*Object) { close(held); <-release })
	<-held
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range 3 {
		queued := make(chan struct{})
		wg.Go(func() {
			reply := make(chan taken, 1)
			p.mbox <- mail{kind: mailTake, reply: reply}
			close(queued)
			tk := <-reply
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			p.mbox <- mail{kind: mailGiveBack, obj: tk.obj}
		})
		<-queued
	}
	close(release)
	wg.Wait()
	if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Errorf("waiters served in order %v, want [0 1 2]", order)
	}
}
