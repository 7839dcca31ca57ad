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
	"testing/synctest"
	"time"
)

// TestStress runs thousands of goroutines taking, giving back, destroying
// and abandoning objects while the factory fails, panics and stalls at
// random and Reload runs, and checks the design brief's invariants:
//
//  1. never more than MaxObjects alive, counting creates in flight;
//  2. an object is held by at most one caller at a time;
//  3. every take ends, with an object or an error, by its deadline;
//  4. every created object is destroyed exactly once by the end of Close;
//  5. factory panics and errors fail single takes, never the pool.
//
// It runs in a synctest bubble, so deadlines are exact and the run is the
// same on a loaded machine as on an idle one.
func TestStress(t *testing.T) {
	for _, tt := range []struct {
		name         string
		fifo         bool
		handoffAfter time.Duration
	}{
		{"LIFO", false, 0},
		{"FIFO", true, 0},
		{"LIFO/bounded", false, time.Millisecond},
		{"FIFO/bounded", true, time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { stress(t, tt.fifo, tt.handoffAfter) })
		})
	}
}

func stress(t *testing.T, fifo bool, handoffAfter time.Duration) {
	const (
		maxObjects = 16
		goroutines = 2000
		rounds     = 12
	)
	// Faults come at fixed rates, by create and test number, so every run
	// has its share of each.
	var tests atomic.Int64
	f := &factory{
		create: func(ctx context.Context, id int) error {
			switch {
			case id%10 == 3:
				return errors.New("connection refused")
			case id%29 == 5:
				panic("driver bug")
			case id%31 == 7:
				time.Sleep(5 * time.Second) // stalls past CreateTimeout, ignoring ctx
			case id%7 == 1:
				select {
				case <-time.After(50 * time.Millisecond):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		},
		test: func(ctx context.Context, c *conn) error {
			if tests.Add(1)%20 == 0 {
				return errors.New("server gone away")
			}
			return nil
		},
	}
	p, err := New[*conn](f, Config{
		MaxObjects:         maxObjects,
		MinIdle:            2,
		MinObjects:         4,
		MaxQueueSize:       goroutines / 2,
		CreateTimeout:      time.Second,
		TestTimeout:        time.Second,
		ValidationInterval: 100 * time.Millisecond,
		MaxIdleTime:        300 * time.Millisecond,
		MaxLifetime:        2 * time.Second,
		FIFO:               fifo,
		HandoffAfter:       handoffAfter,
		Logger:             discardLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}

	var taken atomic.Int64 // takes that got a lease of their own
	taken.Add(6)           // the quiet spell's, below
	var wg sync.WaitGroup
	loadDone := make(chan struct{})
	reloads := make(chan struct{})
	go func() {
		defer close(reloads)
		for {
			select {
			case <-loadDone:
				return
			case <-time.After(500 * time.Millisecond):
				if err := p.Reload(context.Background()); err != nil {
					t.Errorf("Reload: %v", err)
				}
			}
		}
	}()
	for range goroutines {
		wg.Go(func() {
			for range rounds {
				// Spread the load over seconds of the bubble's time, so
				// idle eviction, tests and lifetimes come into play.
				time.Sleep(time.Duration(rand.IntN(1000)) * time.Millisecond)
				switch op := rand.IntN(10); {
				case op == 0:
					l, err := p.TryAcquire()
					if err == nil {
						taken.Add(1)
						use(t, l, nil)
					}
				case op == 1:
					_ = p.With(context.Background(), func(ctx context.Context, c *conn) error {
						taken.Add(1)
						c.hold(t)
						defer c.unhold()
						time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
						return nil
					})
				case op == 2:
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(20))*time.Millisecond)
					r := <-p.AcquireAsync(ctx)
					cancel()
					if r.Err == nil {
						taken.Add(1)
						use(t, r.Lease, nil)
					}
				default:
					timeout := time.Duration(1+rand.IntN(200)) * time.Millisecond
					ctx, cancel := context.WithTimeout(context.Background(), timeout)
					start := time.Now()
					l, err := p.Acquire(ctx)
					if d := time.Since(start); d > timeout {
						t.Errorf("a take ended %v after its %v deadline", d-timeout, timeout)
					}
					cancel()
					if err != nil {
						checkTakeError(t, err)
						continue
					}
					taken.Add(1)
					use(t, l, f)
				}
			}
		})
	}
	wg.Wait()
	close(loadDone)
	<-reloads
	// A quiet spell: six objects go idle together, and are tested, evicted
	// down to MinIdle or retired by age, and refilled.
	var idle []Lease[*conn]
	for len(idle) < 6 {
		if l, err := p.Acquire(context.Background()); err == nil {
			idle = append(idle, l)
		}
	}
	for _, l := range idle {
		if err := l.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
	}
	time.Sleep(3 * time.Second)
	if m := f.max(); m > maxObjects {
		t.Errorf("%d objects alive at once, want at most %d", m, maxObjects)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	f.checkAllDestroyed(t)
	s := p.Stats()
	if s.Created != s.Destroyed+s.Hijacked || s.Total != 0 || s.Idle != 0 || s.InUse != 0 || s.Reserved != 0 || s.Waiting != 0 {
		t.Errorf("stats do not balance after Close: %+v", s)
	}
	if s.Acquires != taken.Load() {
		t.Errorf("Stats().Acquires = %d, but %d takes got a lease", s.Acquires, taken.Load())
	}
	d := s.DestroyedBy
	if s.CreateErrors == 0 || s.CreateTimeouts == 0 || d.Reloaded == 0 || s.Tests == 0 || d.TestFailed == 0 ||
		d.Invalid == 0 || d.Discarded == 0 || d.Lifetime+d.Idle == 0 || s.TimedOutAcquires == 0 || s.Hijacked == 0 {
		t.Errorf("the run did not exercise failures, reloads and tests: %+v", s)
	}
}

// use holds the object a moment, then gives it back, destroys it, marks it
// broken first, or, given the factory, hijacks it and destroys it as its
// owner.
func use(t *testing.T, l Lease[*conn], f *factory) {
	c := l.Value()
	c.hold(t)
	time.Sleep(time.Duration(rand.IntN(2)) * time.Millisecond)
	c.unhold()
	switch n := rand.IntN(50); {
	case n == 0:
		if err := l.Destroy(); err != nil {
			t.Errorf("Destroy: %v", err)
		}
	case n == 2 && f != nil:
		f.disown(c)
		got, err := l.Hijack()
		if err != nil || got != c {
			t.Errorf("Hijack = %v, %v; want the leased object", got, err)
		}
		f.Destroy(got) // its holder's to destroy now
	case n == 1:
		c.broken.Store(true)
		fallthrough
	default:
		if err := l.Release(); err != nil {
			t.Errorf("Release: %v", err)
		}
	}
	if err := l.Release(); !errors.Is(err, ErrReleased) {
		t.Errorf("second Release: %v", err)
	}
}

func checkTakeError(t *testing.T, err error) {
	var ce *CreateError
	switch {
	case errors.Is(err, ErrTimeout), errors.Is(err, ErrPoolExhausted), errors.As(err, &ce):
	default:
		t.Errorf("unexpected take error: %v", err)
	}
}

// TestStressRealTime is the stress test outside a bubble, on real time and
// real parallelism, over every mix of FIFO and HandoffAfter, with MinIdle
// and MinObjects, traces and leak thresholds on, mixing every way to take
// (Acquire, TryAcquire, AcquireAsync with futures read or dropped, With)
// and leaking leases for the garbage collector to find.
func TestStressRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, fifo := range []bool{false, true} {
		for _, handoffAfter := range []time.Duration{0, time.Millisecond} {
			t.Run(fmt.Sprintf("FIFO=%v/HandoffAfter=%v", fifo, handoffAfter), func(t *testing.T) {
				stressRealTime(t, fifo, handoffAfter)
			})
		}
	}
}

func stressRealTime(t *testing.T, fifo bool, handoffAfter time.Duration) {
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
	var leaked, abandoned atomic.Int64
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
						abandoned.Add(1)
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
	s := p.Stats()
	if s.Leaks > leaked.Load()+abandoned.Load() {
		t.Errorf("%d leaks reclaimed; %d leases were leaked and %d futures abandoned", s.Leaks, leaked.Load(), abandoned.Load())
	}
	if m := f.max(); m > 8 {
		t.Errorf("%d alive at once", m)
	}
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
