package actorpool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// 1. Capacity.

func TestNeverMoreThanMaxObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{create: func(ctx context.Context, id int) error {
			time.Sleep(10 * time.Millisecond)
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 4})
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for range 20 {
					l := acquire(t, p)
					l.Value().hold(t)
					time.Sleep(time.Millisecond)
					l.Value().unhold()
					release(t, l)
				}
			})
		}
		wg.Wait()
		if m := f.max(); m > 4 {
			t.Errorf("%d objects alive or being created at once, want at most 4", m)
		}
		if n := f.creates.Load(); n != 4 {
			t.Errorf("%d creates, want 4: objects are reused, not remade", n)
		}
	})
}

func TestCreatesRunInParallel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{create: func(ctx context.Context, id int) error {
			time.Sleep(time.Second)
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 8})
		start := time.Now()
		var wg sync.WaitGroup
		leases := make(chan Lease[*conn], 8)
		for range 8 {
			wg.Go(func() { leases <- acquire(t, p) })
		}
		wg.Wait()
		if d := time.Since(start); d != time.Second {
			t.Errorf("8 takes with 1s creates took %v, want 1s: creates must run in parallel", d)
		}
		close(leases)
		for l := range leases {
			release(t, l)
		}
	})
}

func TestSlowCreateBlocksNoOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		f := &factory{create: func(ctx context.Context, id int) error {
			if id == 2 {
				<-unblock
			}
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 2})
		first := acquire(t, p)
		release(t, first)
		// Object 2's create hangs; a second taker waits for it...
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		held := acquire(t, p)
		done := make(chan error)
		go func() {
			l, err := p.Acquire(ctx)
			if err == nil {
				release(t, l)
			}
			done <- err
		}()
		synctest.Wait()
		// ...while the pool goes on serving: releases, takes, stats.
		release(t, held)
		if err := <-done; err != nil {
			t.Fatalf("waiter not served by a release while a create hung: %v", err)
		}
		l, err := p.TryAcquire()
		if err != nil {
			t.Fatalf("TryAcquire while a create hangs: %v", err)
		}
		release(t, l)
		if s := p.Stats(); s.Creating != 1 || s.Total != 2 {
			t.Errorf("stats = creating %d total %d, want 1 and 2", s.Creating, s.Total)
		}
		close(unblock)
	})
}

// 2. Order.

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

func TestWaitersServedInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 1})
		held := acquire(t, p)
		var order []int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Go(func() {
				l := acquire(t, p)
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				release(t, l)
			})
			synctest.Wait() // waiter i is queued before i+1 starts
		}
		release(t, held)
		wg.Wait()
		if fmt.Sprint(order) != "[0 1 2 3 4]" {
			t.Errorf("waiters served in order %v, want arrival order", order)
		}
	})
}

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

// 3. The wait queue.

func TestMaxQueueSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 1, MaxQueueSize: 2})
		held := acquire(t, p)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() { release(t, acquire(t, p)) })
		}
		synctest.Wait()
		if _, err := p.Acquire(context.Background()); !errors.Is(err, ErrPoolExhausted) {
			t.Fatalf("third waiter: %v, want ErrPoolExhausted", err)
		}
		if s := p.Stats(); s.ExhaustedAcquires != 1 || s.Waiting != 2 {
			t.Errorf("stats: exhausted %d waiting %d, want 1 and 2", s.ExhaustedAcquires, s.Waiting)
		}
		release(t, held)
		wg.Wait()
	})
}

func TestCanceledWaiterLeavesQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 1})
		held := acquire(t, p)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() {
			_, err := p.Acquire(ctx)
			errc <- err
		}()
		synctest.Wait()
		if w := p.Stats().Waiting; w != 1 {
			t.Fatalf("waiting = %d, want 1", w)
		}
		cancel()
		err := <-errc
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
			t.Errorf("canceled take: %v, want context.Canceled and not ErrTimeout", err)
		}
		if s := p.Stats(); s.Waiting != 0 || s.CanceledAcquires != 1 {
			t.Errorf("after cancel: waiting %d canceled %d, want 0 and 1", s.Waiting, s.CanceledAcquires)
		}
		release(t, held)
		if s := p.Stats(); s.Idle != 1 {
			t.Errorf("object not idle after release with no waiter: %+v", s)
		}
	})
}

// A waiter whose context has ended is passed over, and the object goes to
// the next waiter, never to the one that gave up.
func TestDeadWaiterPassedOver(t *testing.T) {
	p := newPool(t, &factory{}, Config{MaxObjects: 1})
	held := acquire(t, p)
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	dead, live := p.waiters.get(canceled), p.waiters.get(context.Background())
	p.mu.Lock()
	p.enqueueLocked(dead)
	p.enqueueLocked(live)
	p.mu.Unlock()
	release(t, held)
	if h := <-dead.ch; h.idx != -1 || h.err != nil {
		t.Errorf("dead waiter got %+v, want to be passed over", h)
	}
	h := <-live.ch
	if h.idx < 0 {
		t.Fatalf("live waiter got %+v, want the object", h)
	}
	s := &p.slots[h.idx]
	p.giveBack(s, s.load().seq())
}

func TestWaiterGivingUpAsServedPassesObjectOn(t *testing.T) {
	// Many rounds of: a waiter's context ends just as an object is handed
	// to it. The object must end up with the next waiter or idle.
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 1})
		for range 100 {
			held := acquire(t, p)
			ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
			first := make(chan error, 1)
			go func() {
				l, err := p.Acquire(ctx)
				if err == nil {
					release(t, l)
				}
				first <- err
			}()
			second := make(chan Lease[*conn], 1)
			go func() { second <- acquire(t, p) }()
			synctest.Wait()
			time.Sleep(time.Millisecond) // the deadline and the release coincide
			release(t, held)
			<-first
			release(t, <-second)
			cancel()
		}
		if s := p.Stats(); s.Idle != 1 || s.InUse != 0 || s.Total != 1 {
			t.Errorf("object lost: %+v", s)
		}
	})
}

// 4. Timeouts and failures.

func TestCreateError(t *testing.T) {
	refused := errors.New("connection refused")
	p := newPool(t, &factory{create: func(context.Context, int) error { return refused }}, Config{MaxObjects: 2})
	_, err := p.Acquire(context.Background())
	var ce *CreateError
	if !errors.As(err, &ce) || !errors.Is(err, refused) || !errors.Is(err, ErrCreateFailed) {
		t.Fatalf("Acquire = %v, want a *CreateError wrapping the cause", err)
	}
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %q does not say why", err)
	}
	if s := p.Stats(); s.CreateErrors != 1 || s.Total != 0 {
		t.Errorf("stats after a failed create: %+v", s)
	}
}

func TestCreatePanicIsAnError(t *testing.T) {
	var n atomic.Int32
	p := newPool(t, &factory{create: func(context.Context, int) error {
		if n.Add(1) == 1 {
			panic("driver bug")
		}
		return nil
	}}, Config{MaxObjects: 1})
	_, err := p.Acquire(context.Background())
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Func != "Factory.Create" || !strings.Contains(err.Error(), "driver bug") {
		t.Fatalf("Acquire after a panicking Create = %v, want a *PanicError", err)
	}
	// The pool is not stuck: the next take gets an object (after the
	// backoff that the failure started).
	l := acquire(t, p)
	release(t, l)
}

func TestCreateTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		f := &factory{create: func(ctx context.Context, id int) error {
			if id == 1 {
				<-release // ignores its context
			}
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 2, CreateTimeout: 5 * time.Second})
		start := time.Now()
		_, err := p.Acquire(context.Background())
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("take failed after %v, want exactly CreateTimeout, 5s", d)
		}
		var ce *CreateError
		if !errors.As(err, &ce) || ce.Timeout != 5*time.Second || !strings.Contains(err.Error(), "timed out after 5s") {
			t.Fatalf("Acquire = %v, want a CreateError saying it timed out after 5s", err)
		}
		if s := p.Stats(); s.CreateTimeouts != 1 || s.Total != 1 {
			t.Errorf("stats: %d create timeouts, total %d; want 1 and 1 (the hung create still counts)", s.CreateTimeouts, s.Total)
		}
		close(release)
		// The late object is kept and serves the next take.
		l, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if l.Value().id != 1 {
			t.Errorf("got conn %d, want the late conn 1", l.Value().id)
		}
		l.Release()
	})
}

func TestServerDownBacksOffAndWaitersEndByDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
		f := &factory{create: func(context.Context, int) error { return down }}
		p := newPool(t, f, Config{MaxObjects: 8})
		var wg sync.WaitGroup
		var timeouts atomic.Int32
		start := time.Now()
		for range 50 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				_, err := p.Acquire(ctx)
				if time.Since(start) > 2*time.Second {
					t.Errorf("a take ended after its deadline: %v", time.Since(start))
				}
				if !errors.Is(err, down) {
					t.Errorf("take failed with %v, want an error wrapping the create error", err)
				}
				if errors.Is(err, ErrTimeout) {
					timeouts.Add(1)
					if !strings.Contains(err.Error(), "waited 2s, 0/8 available") {
						t.Errorf("timeout error %q does not say how long and how many were free", err)
					}
				}
			})
		}
		wg.Wait()
		if timeouts.Load() == 0 {
			t.Error("no take timed out; the test did not exercise deadlines")
		}
		// At most 8 parallel tries, then a probe after 10ms, 20ms, 40ms,
		// 80ms, then every 100ms: a few dozen in 2s, not thousands.
		if n := f.creates.Load(); n > 8+24 {
			t.Errorf("%d creates in 2s while the server was down; creation must back off", n)
		}
	})
}

func TestServerBackUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var up atomic.Bool
		f := &factory{create: func(context.Context, int) error {
			if !up.Load() {
				return errors.New("refused")
			}
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 4})
		for range 5 {
			if _, err := p.Acquire(context.Background()); err == nil {
				t.Fatal("take succeeded while the server was down")
			}
		}
		up.Store(true)
		start := time.Now()
		l := acquire(t, p)
		release(t, l)
		if d := time.Since(start); d > backoffMax {
			t.Errorf("recovery took %v, want no more than the backoff cap, %v", d, backoffMax)
		}
	})
}

func TestWaitErrorMessage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 2})
		a, b := acquire(t, p), acquire(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := p.Acquire(ctx)
		var we *WaitError
		if !errors.As(err, &we) || !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire = %v, want a WaitError matching ErrTimeout and DeadlineExceeded", err)
		}
		want := "actorpool: acquire timed out: waited 2s, 0/2 available (2 in use, 1 waiting): context deadline exceeded"
		if err.Error() != want {
			t.Errorf("error = %q\nwant    %q", err, want)
		}
		// Three waits: two for objects being created (instantly, in the
		// bubble's time), one that timed out.
		if s := p.Stats(); s.TimedOutAcquires != 1 || s.Waits != 3 || s.WaitDuration != 2*time.Second {
			t.Errorf("stats: %+v", s)
		}
		release(t, a)
		release(t, b)
	})
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

func TestAcquireAsync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 1})
		first := <-p.AcquireAsync(context.Background())
		if first.Err != nil {
			t.Fatal(first.Err)
		}
		ch := p.AcquireAsync(context.Background())
		synctest.Wait()
		select {
		case r := <-ch:
			t.Fatalf("async take completed while the only object was out: %+v", r)
		default:
		}
		release(t, first.Lease)
		r := <-ch
		if r.Err != nil || r.Lease.Value() == nil {
			t.Fatalf("async take: %+v", r)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		timedOut := <-p.AcquireAsync(ctx)
		if !errors.Is(timedOut.Err, ErrTimeout) {
			t.Errorf("async take past its deadline: %v", timedOut.Err)
		}
		release(t, r.Lease)
	})
}

func TestAcquireAsyncDeliversErrClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p, err := New[*conn](f, Config{MaxObjects: 1, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		held := acquire(t, p)
		ch := p.AcquireAsync(context.Background())
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- p.Close(context.Background()) }()
		if r := <-ch; !errors.Is(r.Err, ErrClosed) {
			t.Errorf("pending async take on Close: %v, want ErrClosed", r.Err)
		}
		if r := <-p.AcquireAsync(context.Background()); !errors.Is(r.Err, ErrClosed) {
			t.Errorf("async take after Close: %v, want ErrClosed", r.Err)
		}
		release(t, held)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		f.checkAllDestroyed(t)
	})
}

// A create that hangs past CreateTimeout, ignoring its context, must not
// hold up the creates after it, although it still holds its room.
func TestHungCreateBlocksNoLaterCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unhang := make(chan struct{})
		f := &factory{create: func(ctx context.Context, id int) error {
			if id == 1 {
				<-unhang
			}
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 2, CreateTimeout: time.Second})
		if _, err := p.Acquire(context.Background()); !errors.Is(err, ErrCreateFailed) {
			t.Fatalf("take waiting on the hung create: %v, want its timeout", err)
		}
		start := time.Now()
		l := acquire(t, p)
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("next take waited %v behind a hung create", d)
		}
		release(t, l)
		close(unhang)
	})
}
