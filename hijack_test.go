package actorpool

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

func TestHijack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 1})
		l := acquire(t, p)
		c, err := l.Hijack()
		if err != nil {
			t.Fatalf("Hijack: %v", err)
		}
		if c == nil || c != f.conns[0] {
			t.Fatalf("Hijack returned %v, want the leased object", c)
		}
		// The caller owns it now, and the pool forgets it: its place is
		// free for a new object.
		defer f.Destroy(c)
		for _, stale := range []func() error{l.Release, l.Destroy, func() error { _, err := l.Hijack(); return err }} {
			if err := stale(); !errors.Is(err, ErrReleased) {
				t.Errorf("after Hijack: %v, want ErrReleased", err)
			}
		}
		synctest.Wait()
		if s := p.Stats(); s.Total != 0 || s.Hijacked != 1 || s.Destroyed != 0 || s.Reserved != 0 {
			t.Fatalf("after Hijack: %+v, want nothing alive, 1 hijacked, 0 destroyed", s)
		}
		other := acquire(t, p)
		if other.Value() == c {
			t.Fatal("the pool lent the hijacked object again")
		}
		release(t, other)
		if n := f.creates.Load(); n != 2 {
			t.Errorf("%d creates, want 2: the hijacked object's place went to a new one", n)
		}
		if c.destroyed.Load() != 0 {
			t.Error("the pool destroyed the hijacked object")
		}
	})
}

// A With's object belongs to the With: a nested lease cannot hijack it.
func TestHijackInsideWith(t *testing.T) {
	p := newPool(t, &factory{}, Config{MaxObjects: 1})
	err := p.With(context.Background(), func(ctx context.Context, c *conn) error {
		l, err := p.Acquire(ctx)
		if err != nil {
			return err
		}
		if _, err := l.Hijack(); !errors.Is(err, ErrHeldByWith) {
			t.Errorf("Hijack of a With's lease = %v, want ErrHeldByWith", err)
		}
		if l.Value() != c {
			t.Error("the refused Hijack took the object from the With")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.Idle != 1 || s.Hijacked != 0 {
		t.Errorf("after the With: %+v, want its object idle", s)
	}
}

// Close does not wait for a hijacked object: it is no longer the pool's.
func TestCloseDoesNotWaitForHijacked(t *testing.T) {
	checkGoroutinesOnce(t)
	f := &factory{}
	p, err := New[*conn](f, Config{MaxObjects: 2, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	l := acquire(t, p)
	c, err := l.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10e9)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close with a hijacked object out: %v", err)
	}
	if c.destroyed.Load() != 0 {
		t.Error("Close destroyed the hijacked object")
	}
	f.Destroy(c)
	f.checkAllDestroyed(t)
}
