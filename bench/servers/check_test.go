package servers

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEveryPoolPassesCheck runs Check on every pool against the real
// servers: it fails if an adapter answers wrong, and skips (fails under
// CI) when a server is unreachable.
func TestEveryPoolPassesCheck(t *testing.T) {
	for _, s := range Servers {
		t.Run(s.BenchName(), func(t *testing.T) {
			addr := Need(t, s)
			for _, c := range Of(All(), s) {
				t.Run(c.Name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					if err := Check(ctx, c, addr); err != nil {
						t.Fatal(err)
					}
				})
			}
		})
	}
}

// Fake pools, in memory, one correct and others each breaking one rule,
// prove that Check catches what it claims to without a server.

// fakePG answers from Values; its fields break it.
type fakePG struct {
	mu         sync.Mutex
	open, size int
	shift      int  // answer row id+shift
	noNotFound bool // answer "" for a missing row
	extra      int  // connections Warm opens beyond those asked for
}

func (f *fakePG) Warm(_ context.Context, n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open = n + f.extra
	return nil
}

func (f *fakePG) Open() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open
}

func (f *fakePG) Close() error                         { return nil }
func (f *fakePG) Select1(context.Context) (int, error) { return 1, nil }
func (f *fakePG) Lookup(_ context.Context, id int) (string, error) {
	if id < 0 || id >= KeySpace {
		if f.noNotFound {
			return "", nil
		}
		return "", fmt.Errorf("row %d: %w", id, ErrNotFound)
	}
	return Values[(id+f.shift)%KeySpace], nil
}

// fakeRedis is a map; its fields break it.
type fakeRedis struct {
	fakePG
	kv       sync.Map
	dropSets bool // SET does nothing
}

func (f *fakeRedis) Get(_ context.Context, key string) (string, error) {
	if v, ok := f.kv.Load(key); ok {
		return v.(string), nil
	}
	for i, k := range Keys {
		if k == key {
			return Values[(i+f.shift)%KeySpace], nil
		}
	}
	return "", fmt.Errorf("key %s: %w", key, ErrNotFound)
}

func (f *fakeRedis) Set(_ context.Context, key, value string) error {
	if !f.dropSets {
		f.kv.Store(key, value)
	}
	return nil
}

func TestCheckCatchesBrokenPools(t *testing.T) {
	tests := []struct {
		name   string
		server Server
		pool   func() Pool
		want   string // in Check's error; "" for none
	}{
		{"postgres fake", Postgres, func() Pool { return &fakePG{} }, ""},
		{"redis fake", Redis, func() Pool { return &fakeRedis{} }, ""},
		{"postgres wrong row", Postgres, func() Pool { return &fakePG{shift: 1} }, "lookup of row"},
		{"redis wrong key", Redis, func() Pool { return &fakeRedis{fakePG: fakePG{shift: 1}} }, "GET actorpool:bench:"},
		{"postgres missing row found", Postgres, func() Pool { return &fakePG{noNotFound: true} }, "want one wrapping ErrNotFound"},
		{"redis SET lost", Redis, func() Pool { return &fakeRedis{dropSets: true} }, "after SET"},
		{"postgres over its size", Postgres, func() Pool { return &fakePG{extra: 1} }, "the pool holds 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Contender{Name: "fake", Server: tt.server, New: func(string, int, Dialer) (Pool, error) { return tt.pool(), nil }}
			err := Check(context.Background(), c, "unused")
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Check failed a correct pool: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Check error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestCellNames(t *testing.T) {
	if got, want := (Cell{Op: Select1, Clients: 8}).FullName("pgpool"), "Postgres/query=select1/clients=8/pool=pgpool"; got != want {
		t.Errorf("FullName = %q, want %q", got, want)
	}
	if got, want := (Cell{Op: Get, Clients: 256}).FullName("go-redis"), "Redis/op=get/clients=256/pool=go-redis"; got != want {
		t.Errorf("FullName = %q, want %q", got, want)
	}
	if n := len(Cells(Postgres)) + len(Cells(Redis)); n != len(Ops)*len(Clients) {
		t.Errorf("%d cells, want %d", n, len(Ops)*len(Clients))
	}
}

func TestSelect(t *testing.T) {
	cs, err := Select("redigo, pgpool")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Name != "pgpool" || cs[1].Name != "redigo" {
		t.Errorf("Select(redigo, pgpool) = %v, want pgpool then redigo", cs)
	}
	if _, err := Select("pgbouncer"); err == nil || !strings.Contains(err.Error(), `"pgbouncer"`) {
		t.Errorf("Select(pgbouncer) error = %v, want one naming the unknown pool", err)
	}
	for _, s := range Servers {
		if Baseline(s) == "" {
			t.Errorf("no pool of ours for %v", s)
		}
	}
}

func TestReachSaysHowToRun(t *testing.T) {
	// Port 1 on the loopback address: nothing listens there.
	t.Setenv(PostgresVar, "postgres://postgres@127.0.0.1:1/postgres")
	err := Postgres.Reach(Postgres.Addr())
	if err == nil {
		t.Skip("something listens on 127.0.0.1:1")
	}
	for _, want := range []string{"127.0.0.1:1", "from " + PostgresVar, "start one there, or set " + PostgresVar} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Reach error %q lacks %q", err, want)
		}
	}
	t.Setenv(RedisVar, "no-port")
	if err := Redis.Reach(Redis.Addr()); err == nil || !strings.Contains(err.Error(), "want host:port") {
		t.Errorf("Reach(no-port) error = %v, want one asking for host:port", err)
	}
	t.Setenv(RedisVar, "")
	if got := Redis.Addr(); got != RedisDefault {
		t.Errorf("Addr() with %s empty = %q, want the default %q", RedisVar, got, RedisDefault)
	}
}
