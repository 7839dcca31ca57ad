package actorpool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestStressModesRealTime is the real-time stress over every mix of FIFO
// and HandoffAfter, with MinIdle and MinObjects, traces and leak
// thresholds on, mixing every way to take (Acquire, TryAcquire,
// AcquireAsync with futures read or dropped, With) and leaking leases for
// the garbage collector.
func TestStressModesRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, fifo := range []bool{false, true} {
		for _, handoffAfter := range []time.Duration{0, time.Millisecond} {
			t.Run(fmt.Sprintf("FIFO=%v/HandoffAfter=%v", fifo, handoffAfter), func(t *testing.T) {
				stressModes(t, fifo, handoffAfter)
			})
		}
	}
}

func stressModes(t *testing.T, fifo bool, handoffAfter time.Duration) {
	checkGoroutinesOnce(t)
	f := &factory{create: func(ctx context.Context, id int) error {
		if rand.IntN(10) == 0 {
			return errors.New("refused")
		}
		return nil
	}}
	p, err := New[*conn](f, Config{MaxObjects: 8, MinIdle: 2, MinObjects: 3, FIFO: fifo, HandoffAfter: handoffAfter,
		TraceAcquires: true, LeakThreshold: 50 * time.Millisecond, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var leaked atomic.Int64
	for g := range 1000 {
		wg.Go(func() {
			for i := range 10 {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(3000))*time.Microsecond)
				leak := g%200 == 0 && i == 0
				switch rand.IntN(6) {
				case 0:
					if l, err := p.TryAcquire(); err == nil {
						if leak {
							leaked.Add(1)
						} else {
							use(t, l, f)
						}
					}
				case 1:
					_ = p.With(ctx, func(ctx context.Context, c *conn) error {
						c.hold(t)
						defer c.unhold()
						if rand.IntN(3) == 0 {
							l, err := p.Acquire(ctx)
							if err != nil || l.Value() != c || !l.Nested() {
								t.Errorf("nested Acquire = %v, %v", l.Value(), err)
							}
						}
						return nil
					})
				case 2:
					ch := p.AcquireAsync(ctx)
					if leak {
						// Abandoned future: what it delivers is a leak, or
						// nothing.
						cancel()
						continue
					}
					r := <-ch
					if r.Err == nil {
						use(t, r.Lease, f)
					}
				default:
					l, err := p.Acquire(ctx)
					if err == nil {
						if leak {
							leaked.Add(1)
						} else {
							use(t, l, f)
						}
					}
				}
				cancel()
			}
		})
	}
	wg.Wait()
	waitFor(t, "the leaks to be reclaimed", func() bool {
		runtime.GC()
		s := p.Stats()
		return s.Leaks >= leaked.Load() && s.InUse == 0
	})
	if m := f.max(); m > 8 {
		t.Errorf("%d alive at once", m)
	}
	s := p.Stats()
	if s.Waiting != 0 {
		t.Errorf("waiters left: %+v", s)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.checkAllDestroyed(t)
	s = p.Stats()
	if s.Created != s.Destroyed+s.Hijacked || s.Total != 0 || s.Idle != 0 || s.InUse != 0 || s.Reserved != 0 {
		t.Errorf("stats do not balance after Close: %+v", s)
	}
}
