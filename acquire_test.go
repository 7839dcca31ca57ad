package actorpool

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestIdleReuseOrder(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		t.Run(fmt.Sprintf("FIFO=%v", fifo), func(t *testing.T) {
			p := newPool(t, &factory{}, Config{MaxObjects: 3, FIFO: fifo})
			a, b, c := acquire(t, p), acquire(t, p), acquire(t, p)
			ids := []int{a.Value().id, b.Value().id, c.Value().id}
			release(t, a)
			release(t, b)
			release(t, c)
			var got []int
			for range 3 {
				l := acquire(t, p)
				got = append(got, l.Value().id)
				defer release(t, l)
			}
			want := []int{ids[2], ids[1], ids[0]}
			if fifo {
				want = ids
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("reused %v, want %v", got, want)
			}
		})
	}
}

func TestAcquireOnDoneContext(t *testing.T) {
	p := newPool(t, &factory{}, Config{MaxObjects: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire(canceled ctx) = %v", err)
	}
}

func TestTryAcquire(t *testing.T) {
	f := &factory{}
	p := newPool(t, f, Config{MaxObjects: 1})
	if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("TryAcquire on an empty pool = %v, want ErrWouldBlock", err)
	}
	// It asked for an object in the background.
	waitFor(t, "a create started by TryAcquire", func() bool { return p.Stats().Idle == 1 })
	l, err := p.TryAcquire()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
		t.Errorf("TryAcquire on a busy pool = %v, want ErrWouldBlock", err)
	}
	release(t, l)
	if n := f.creates.Load(); n != 1 {
		t.Errorf("%d creates, want 1", n)
	}
}

func TestValidateBeforeHandOut(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 2, FIFO: fifo})
		a, b := acquire(t, p), acquire(t, p)
		ca, cb := a.Value(), b.Value()
		release(t, a)
		release(t, b)
		// Both go bad while idle; the next take must get neither.
		ca.broken.Store(true)
		cb.broken.Store(true)
		l := acquire(t, p)
		if id := l.Value().id; id != 3 {
			t.Errorf("FIFO=%v: got conn %d, want a fresh conn 3", fifo, id)
		}
		release(t, l)
		waitFor(t, "the destroys", func() bool { return f.destroys.Load() == 2 })
	}
}
