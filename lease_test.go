package actorpool

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
)

// 6. Leases.

func TestReleaseTwice(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		p := newPool(t, &factory{}, Config{MaxObjects: 1, FIFO: fifo})
		l := acquire(t, p)
		release(t, l)
		if err := l.Release(); !errors.Is(err, ErrReleased) {
			t.Fatalf("second Release = %v, want ErrReleased", err)
		}
		if err := l.Destroy(); !errors.Is(err, ErrReleased) {
			t.Fatalf("Destroy after Release = %v, want ErrReleased", err)
		}
		if l.Value() != nil {
			t.Error("Value after Release returned the object")
		}
		// The object, now someone else's, is untouched by the stale lease.
		other := acquire(t, p)
		if err := l.Release(); !errors.Is(err, ErrReleased) {
			t.Fatalf("stale Release while the object is lent again = %v, want ErrReleased", err)
		}
		if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("a stale Release gave the object back: TryAcquire = %v", err)
		}
		if other.Value() == nil {
			t.Fatal("the new holder lost its object")
		}
		release(t, other)
	}
}

func TestReleaseAfterDestroy(t *testing.T) {
	f := &factory{}
	p := newPool(t, f, Config{MaxObjects: 1})
	l := acquire(t, p)
	if err := l.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); !errors.Is(err, ErrReleased) {
		t.Fatalf("Release after Destroy = %v, want ErrReleased", err)
	}
	if err := l.Destroy(); !errors.Is(err, ErrReleased) {
		t.Fatalf("second Destroy = %v, want ErrReleased", err)
	}
	waitFor(t, "the destroy", func() bool { return f.destroys.Load() == 1 })
	if s := p.Stats(); s.DestroyedBy.Discarded != 1 {
		t.Errorf("stats: %+v", s.DestroyedBy)
	}
}

func TestZeroLease(t *testing.T) {
	var l Lease[*conn]
	if l.Value() != nil || !errors.Is(l.Release(), ErrReleased) || !errors.Is(l.Destroy(), ErrReleased) {
		t.Error("the zero Lease acts as if it held something")
	}
}

// Stale releases racing fresh takes must never hand one object to two
// holders.
func TestStaleReleasesNeverDoubleHandOut(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		p := newPool(t, &factory{}, Config{MaxObjects: 2, FIFO: fifo})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 2000 {
					l, err := p.Acquire(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					c := l.Value()
					c.hold(t)
					c.unhold()
					release(t, l)
					if err := l.Release(); !errors.Is(err, ErrReleased) {
						t.Errorf("stale Release = %v", err)
						return
					}
					if err := l.Destroy(); !errors.Is(err, ErrReleased) {
						t.Errorf("stale Destroy = %v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		// Two objects, or one when every waiter was served by a release
		// before the keeper saw the demand: the pool creates only for
		// takers it cannot serve otherwise.
		if s := p.Stats(); s.Total < 1 || s.Total > 2 || s.Idle != s.Total || s.Destroyed != 0 {
			t.Errorf("after stale releases: %+v", s)
		}
	}
}

func TestDestroyWakesWaiterWithReplacement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 1})
		l := acquire(t, p)
		got := make(chan Lease[*conn])
		go func() { got <- acquire(t, p) }()
		synctest.Wait()
		if err := l.Destroy(); err != nil {
			t.Fatal(err)
		}
		r := <-got
		if r.Value().id != 2 {
			t.Errorf("waiter got conn %d, want the replacement, conn 2", r.Value().id)
		}
		release(t, r)
	})
}
