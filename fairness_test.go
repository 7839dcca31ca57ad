package actorpool

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// With Config.HandoffAfter set, a running goroutine may take an object
// given back ahead of a waiter that has not waited that long; the waiter is
// woken to compete and, once it has waited past the bound, is handed the
// next object straight.
func TestBoundedFairness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 1, HandoffAfter: time.Millisecond})
		held := acquire(t, p)
		got := make(chan Lease[*conn])
		go func() { got <- acquire(t, p) }()
		synctest.Wait()

		// The waiter has waited less than HandoffAfter: the running
		// goroutine takes the object it gave back.
		release(t, held)
		barged, err := p.TryAcquire()
		if err != nil {
			t.Fatalf("TryAcquire right after a give-back = %v; bounded fairness lets it take the object", err)
		}
		synctest.Wait() // the woken waiter competed, and lost

		// Once it has waited past HandoffAfter, the next give-back goes
		// straight to it, whether or not it has run since it was woken:
		// a woken goroutine may wait a whole time slice for a processor.
		time.Sleep(2 * time.Millisecond)
		release(t, barged)
		if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("TryAcquire after the waiter waited past HandoffAfter = %v, want ErrWouldBlock", err)
		}
		l := <-got
		release(t, l)
		// Served, and the queue empty: back to letting running goroutines
		// in first.
		if p.starving.Load() {
			t.Error("still handing off after the starving waiter was served")
		}
	})
}

// Under bounded fairness a woken waiter that finds the object still idle
// takes it.
func TestBoundedFairnessWakesWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 1, HandoffAfter: time.Millisecond})
		held := acquire(t, p)
		got := make(chan Lease[*conn])
		go func() { got <- acquire(t, p) }()
		synctest.Wait()
		release(t, held)
		select {
		case l := <-got:
			release(t, l)
		case <-time.After(time.Second):
			t.Fatal("the waiter was not woken to take the idle object")
		}
	})
}

// No waiter is passed over for much longer than HandoffAfter, however many
// goroutines barge.
func TestBoundedFairnessBoundsWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const hold = 100 * time.Microsecond
		p := newPool(t, &factory{}, Config{MaxObjects: 2, HandoffAfter: time.Millisecond})
		var mu sync.Mutex
		var longest time.Duration
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for range 50 {
					start := time.Now()
					l := acquire(t, p)
					if d := time.Since(start); d > 0 {
						mu.Lock()
						longest = max(longest, d)
						mu.Unlock()
					}
					time.Sleep(hold)
					release(t, l)
				}
			})
		}
		wg.Wait()
		// A waiter is passed over until it loses a race after the bound;
		// then waiters are served in order: the bound, the give-back that
		// declares it starving, and one turn of the queue.
		if bound := time.Millisecond + 17*hold; longest > bound {
			t.Errorf("longest wait %v, want at most %v", longest, bound)
		}
	})
}

func TestBoundedFairnessCanceledWokenWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 1, HandoffAfter: time.Millisecond})
		held := acquire(t, p)
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan error)
		go func() {
			l, err := p.Acquire(ctx)
			if err == nil {
				release(t, l)
			}
			first <- err
		}()
		synctest.Wait()
		second := make(chan Lease[*conn])
		go func() { second <- acquire(t, p) }()
		synctest.Wait()
		// Wake the first waiter and cancel it before it runs; the wake-up
		// must pass to the second, which gets the object.
		release(t, held)
		barged, err := p.TryAcquire()
		if err != nil {
			t.Fatal(err)
		}
		release(t, barged)
		cancel()
		if err := <-first; !errors.Is(err, context.Canceled) {
			// It may have won the object before its context ended.
			if err != nil {
				t.Fatalf("first waiter: %v", err)
			}
		}
		select {
		case l := <-second:
			release(t, l)
		case <-time.After(time.Second):
			t.Fatal("the second waiter was stranded")
		}
	})
}
