package actorpool

import (
	"errors"
	"testing"
	"testing/synctest"
)

func TestReleaseHandsStraightToWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 1})
		held := acquire(t, p)
		got := make(chan Lease[*conn])
		go func() { got <- acquire(t, p) }()
		synctest.Wait()
		release(t, held)
		// The waiter has not run yet, but the object is already its own:
		// no one can barge in and take it.
		if l, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("TryAcquire after a release to a waiter = %v, %v; want ErrWouldBlock", l, err)
		}
		release(t, <-got)
	})
}

func TestValidateOnRelease(t *testing.T) {
	f := &factory{}
	p := newPool(t, f, Config{MaxObjects: 1})
	l := acquire(t, p)
	l.Value().broken.Store(true)
	release(t, l)
	waitFor(t, "the invalid object's destroy", func() bool { return f.destroys.Load() == 1 })
	if s := p.Stats(); s.DestroyedBy.Invalid != 1 || s.Idle != 0 {
		t.Errorf("an object that failed Validate on release was kept: %+v", s)
	}
	l = acquire(t, p)
	if l.Value().id != 2 {
		t.Errorf("got conn %d, want a new one", l.Value().id)
	}
	release(t, l)
}
