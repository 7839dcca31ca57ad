package actorpool

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// 7. With.

func TestWithGivesBackOnReturnErrorPanicAndGoexit(t *testing.T) {
	tests := []struct {
		name string
		fn   func(ctx context.Context, c *conn) error
	}{
		{"return", func(context.Context, *conn) error { return nil }},
		{"error", func(context.Context, *conn) error { return errors.New("query failed") }},
		{"panic", func(context.Context, *conn) error { panic("handler bug") }},
		{"Goexit", func(context.Context, *conn) error { runtime.Goexit(); return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &factory{}
			p := newPool(t, f, Config{MaxObjects: 1})
			done := make(chan any)
			go func() {
				defer func() { done <- recover() }()
				_ = p.With(context.Background(), tt.fn)
			}()
			v := <-done
			if tt.name == "panic" && v != "handler bug" {
				t.Errorf("With swallowed the panic: recovered %v", v)
			}
			s := p.Stats()
			if s.Idle != 1 || s.InUse != 0 || s.Destroyed != 0 {
				t.Errorf("object not given back, or destroyed, after fn's %s: %+v", tt.name, s)
			}
		})
	}
}

func TestWithReturnsFnError(t *testing.T) {
	p := newPool(t, &factory{}, Config{MaxObjects: 1})
	boom := errors.New("boom")
	if err := p.With(context.Background(), func(context.Context, *conn) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("With = %v, want fn's error", err)
	}
}

func TestWithIsReentrant(t *testing.T) {
	p := newPool(t, &factory{}, Config{MaxObjects: 1})
	err := p.With(context.Background(), func(ctx context.Context, outer *conn) error {
		// A pool of one would deadlock here without reentrancy.
		return p.With(ctx, func(ctx context.Context, inner *conn) error {
			if inner != outer {
				t.Error("nested With got a different object")
			}
			l, err := p.Acquire(ctx)
			if err != nil {
				return err
			}
			if l.Value() != outer {
				t.Error("nested Acquire got a different object")
			}
			if err := l.Release(); err != nil {
				t.Errorf("nested Release = %v", err)
			}
			// Only the outermost With gives the object back.
			if s := p.Stats(); s.InUse != 1 {
				t.Errorf("inner give-back returned the object: %+v", s)
			}
			n, err := Do(ctx, p, func(ctx context.Context, c *conn) (int, error) { return c.id, nil })
			if err != nil || n != outer.id {
				t.Errorf("nested Do = %d, %v", n, err)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Idle != 1 || s.InUse != 0 {
		t.Errorf("outer With did not give the object back: %+v", s)
	}
}

func TestWithOnTwoPools(t *testing.T) {
	p1 := newPool(t, &factory{}, Config{MaxObjects: 1})
	p2 := newPool(t, &factory{}, Config{MaxObjects: 1})
	err := p1.With(context.Background(), func(ctx context.Context, a *conn) error {
		return p2.With(ctx, func(ctx context.Context, b *conn) error {
			return p1.With(ctx, func(ctx context.Context, a2 *conn) error {
				if a2 != a {
					t.Error("p1's lease lost under p2's With")
				}
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDetachTakesOwnObject(t *testing.T) {
	p := newPool(t, &factory{}, Config{MaxObjects: 2})
	err := p.With(context.Background(), func(ctx context.Context, outer *conn) error {
		got := make(chan *conn)
		go func() {
			_ = p.With(Detach(ctx), func(ctx context.Context, c *conn) error {
				got <- c
				return nil
			})
		}()
		if c := <-got; c == outer {
			t.Error("a detached With reused the outer object")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestContextOfFinishedWithIsNotReused(t *testing.T) {
	p := newPool(t, &factory{}, Config{MaxObjects: 1})
	var kept context.Context
	_ = p.With(context.Background(), func(ctx context.Context, c *conn) error {
		kept = ctx
		return nil
	})
	hold := make(chan struct{})
	defer close(hold)
	started := make(chan struct{})
	go func() {
		_ = p.With(context.Background(), func(context.Context, *conn) error {
			close(started)
			<-hold
			return nil
		})
	}()
	<-started
	// The context outlived its With; its lease is gone, so a take on it
	// must not share the object that another With now holds.
	if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("TryAcquire = %v", err)
	}
	ctx, cancel := context.WithCancel(kept)
	cancel()
	if _, err := p.Acquire(ctx); err == nil {
		t.Error("Acquire on a stale With context shared a held object")
	}
}

func TestDo(t *testing.T) {
	p := newPool(t, &factory{}, Config{MaxObjects: 1})
	id, err := Do(context.Background(), p, func(ctx context.Context, c *conn) (int, error) { return c.id, nil })
	if err != nil || id != 1 {
		t.Errorf("Do = %d, %v", id, err)
	}
}

// Destroy on a nested lease marks the object that the outer callback still
// uses; the outermost With destroys it when it gives it back, and a waiting
// taker then gets a new object at once.
func TestNestedDestroyWaitsForOutermostWith(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 1})
		got := make(chan Lease[*conn], 1)
		err := p.With(context.Background(), func(ctx context.Context, outer *conn) error {
			outerLease, err := p.Acquire(ctx)
			if err != nil {
				return err
			}
			go func() { got <- acquire(t, p) }() // waits for the only object
			synctest.Wait()
			err = p.With(ctx, func(ctx context.Context, inner *conn) error {
				l, err := p.Acquire(ctx)
				if err != nil {
					return err
				}
				if err := l.Destroy(); err != nil {
					t.Errorf("nested Destroy = %v", err)
				}
				if err := l.Destroy(); err != nil {
					t.Errorf("second nested Destroy = %v, want nil", err)
				}
				return nil
			})
			if err != nil {
				return err
			}
			synctest.Wait()
			if n := outer.destroyed.Load(); n != 0 {
				t.Fatal("a nested Destroy destroyed the object that the outer callback holds")
			}
			if v := outerLease.Value(); v != outer {
				t.Errorf("Value on the outer lease after a nested Destroy = %v, want the object", v)
			}
			if l, err := p.Acquire(ctx); err != nil || l.Value() != outer {
				t.Errorf("nested Acquire after a nested Destroy = %v, %v; want the same object", l.Value(), err)
			}
			select {
			case <-got:
				t.Fatal("a waiting taker got an object while the With held the only one")
			default:
			}
			if s := p.Stats(); s.InUse != 1 || s.Destroyed != 0 {
				t.Errorf("after a nested Destroy: %+v", s)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		l := <-got
		if d := time.Since(start); d != 0 {
			t.Errorf("the waiting taker got its object %v after With returned, want at once", d)
		}
		if l.Value().id != 2 {
			t.Errorf("the waiting taker got conn %d, want a new conn 2", l.Value().id)
		}
		if s := p.Stats(); s.DestroyedBy.Discarded != 1 || f.destroys.Load() != 1 {
			t.Errorf("the object destroyed inside With was not destroyed when With gave it back: %+v", s.DestroyedBy)
		}
		release(t, l)
	})
}

// Bind gives a lease taken with Acquire the nesting a With's lease has.
func TestBind(t *testing.T) {
	f := &factory{}
	p := newPool(t, f, Config{MaxObjects: 1})
	l := acquire(t, p)
	if l.Nested() {
		t.Fatal("a lease from Acquire reports Nested")
	}
	ctx := l.Bind(context.Background())
	inner, err := p.Acquire(ctx)
	if err != nil {
		t.Fatalf("Acquire on a bound context, with the only object out: %v", err)
	}
	if !inner.Nested() || inner.Value() != l.Value() {
		t.Fatalf("Acquire on a bound context: nested %v, same object %v", inner.Nested(), inner.Value() == l.Value())
	}
	if err := p.With(ctx, func(ctx context.Context, c *conn) error {
		if c != l.Value() {
			t.Error("With on a bound context took another object")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	release(t, inner) // gives nothing back
	if s := p.Stats(); s.InUse != 1 {
		t.Fatalf("the nested Release gave the object back: %+v", s)
	}
	release(t, l)
	if s := p.Stats(); s.Idle != 1 {
		t.Fatalf("after the outer Release: %+v", s)
	}
	// Once the lease is given back, the context carries nothing.
	other, err := p.Acquire(ctx)
	if err != nil || other.Nested() {
		t.Fatalf("Acquire on the context of a lease given back: nested %v, %v", other.Nested(), err)
	}
	release(t, other)
}
