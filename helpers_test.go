package actorpool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actorpool/actorpool/internal/leakcheck"
)

// A conn is the object the test factory makes. It records its holders and
// its destruction so tests can check invariants 2 and 4.
type conn struct {
	id        int
	holders   atomic.Int32
	destroyed atomic.Int32
	broken    atomic.Bool // Validate fails
	dead      atomic.Bool // Test fails
	disowned  atomic.Bool // hijacked: its holder, not the pool, counts and destroys it
}

// hold marks c held by one more caller and fails the test if that makes
// two.
func (c *conn) hold(t testing.TB) {
	t.Helper()
	if n := c.holders.Add(1); n != 1 {
		t.Errorf("conn %d held by %d callers at once", c.id, n)
	}
}

func (c *conn) unhold() { c.holders.Add(-1) }

// factory is a Factory whose behaviour each test sets through hooks, and
// which counts what the pool asks of it.
type factory struct {
	mu        sync.Mutex
	conns     []*conn
	alive     int // created, or being created, and not destroyed
	maxAlive  int
	creates   atomic.Int64
	destroys  atomic.Int64
	validates atomic.Int64
	tests     atomic.Int64

	create   func(ctx context.Context, id int) error // nil: succeed at once
	validate func(c *conn) error                     // nil: c.broken decides
	test     func(ctx context.Context, c *conn) error
	destroy  func(c *conn)
}

func (f *factory) Create(ctx context.Context) (*conn, error) {
	f.mu.Lock()
	f.alive++
	f.maxAlive = max(f.maxAlive, f.alive)
	id := len(f.conns) + 1
	f.conns = append(f.conns, nil)
	f.mu.Unlock()
	f.creates.Add(1)
	fail := func() {
		f.mu.Lock()
		f.alive--
		f.mu.Unlock()
	}
	var err error
	func() {
		returned := false
		defer func() {
			if v := recover(); v != nil {
				fail()
				panic(v)
			}
			if !returned {
				fail() // runtime.Goexit
			}
		}()
		if f.create != nil {
			err = f.create(ctx, id)
		}
		returned = true
	}()
	if err != nil {
		fail()
		return nil, err
	}
	c := &conn{id: id}
	f.mu.Lock()
	f.conns[id-1] = c
	f.mu.Unlock()
	return c, nil
}

func (f *factory) Destroy(c *conn) {
	if n := c.destroyed.Add(1); n != 1 {
		panic(fmt.Sprintf("conn %d destroyed %d times", c.id, n))
	}
	f.destroys.Add(1)
	if !c.disowned.Load() {
		f.mu.Lock()
		f.alive--
		f.mu.Unlock()
	}
	if f.destroy != nil {
		f.destroy(c)
	}
}

func (f *factory) Validate(c *conn) error {
	f.validates.Add(1)
	if f.validate != nil {
		return f.validate(c)
	}
	if c.broken.Load() {
		return errors.New("broken")
	}
	return nil
}

func (f *factory) Test(ctx context.Context, c *conn) error {
	f.tests.Add(1)
	if f.test != nil {
		return f.test(ctx, c)
	}
	if c.dead.Load() {
		return errors.New("dead")
	}
	return nil
}

// disown counts c out of the objects the pool holds, for a holder about to
// hijack it, before the pool frees its place for another.
func (f *factory) disown(c *conn) {
	c.disowned.Store(true)
	f.mu.Lock()
	f.alive--
	f.mu.Unlock()
}

func (f *factory) max() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxAlive
}

func (f *factory) live() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.alive
}

// checkAllDestroyed fails the test unless every conn the factory made was
// destroyed exactly once (invariant 4). Call it after Close.
func (f *factory) checkAllDestroyed(t testing.TB) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		if c == nil {
			continue
		}
		if n := c.destroyed.Load(); n != 1 {
			t.Errorf("conn %d destroyed %d times, want 1", c.id, n)
		}
	}
	if f.alive != 0 {
		t.Errorf("factory counts %d conns alive after Close", f.alive)
	}
}

// newPool makes a pool over f and closes it when the test ends, checking
// that every object was destroyed exactly once and no goroutine is left.
func newPool(t testing.TB, f *factory, cfg Config) *Pool[*conn] {
	t.Helper()
	checkGoroutinesOnce(t)
	if cfg.Logger == nil {
		cfg.Logger = discardLogger()
	}
	p, err := New[*conn](f, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
		f.checkAllDestroyed(t)
	})
	return p
}

// goroutineChecks holds the tests that will check for goroutines left.
var goroutineChecks sync.Map

// checkGoroutinesOnce has t check, once, that no goroutine started since
// its first call is left when t ends. newPool calls it before it makes its
// pool, so that the pool's keeper is checked, and before it registers the
// pool's Close: cleanups run last first, so the check runs after every pool
// of the test is closed. A test that makes its pools with New calls it
// first.
func checkGoroutinesOnce(t testing.TB) {
	if _, done := goroutineChecks.LoadOrStore(t, true); done {
		return
	}
	before := leakcheck.Take()
	t.Cleanup(func() {
		goroutineChecks.Delete(t)
		before.Check(t)
	})
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// logBuffer is a slog destination that tests can read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// acquire takes a lease and marks its conn held.
func acquire(t testing.TB, p *Pool[*conn]) Lease[*conn] {
	t.Helper()
	l, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return l
}

func release(t testing.TB, l Lease[*conn]) {
	t.Helper()
	if err := l.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// waitFor polls cond, which must become true because of work already set
// in motion on other goroutines, yielding the processor between polls. It
// is for outcomes of real concurrency (the garbage collector, a goroutine
// about to run), not for time: tests of time use testing/synctest.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}
