package actorpool

import (
	"cmp"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// What the pool does while creates fail (its server is down), and how it
// comes back: the create backoff, the errors of takes meanwhile, and the
// recovery once creates succeed again.

var errRefused = errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")

// checkWrapsCause fails t unless err wraps the create error errRefused and
// says so in its message.
func checkWrapsCause(t *testing.T, what string, err error) {
	t.Helper()
	var ce *CreateError
	if !errors.Is(err, errRefused) || !errors.As(err, &ce) ||
		!strings.Contains(err.Error(), "; last create error: actorpool: create failed: "+errRefused.Error()) {
		t.Errorf("%s while creates fail = %v, want it to wrap the last create error and show it", what, err)
	}
}

func TestUnservedTakesWrapTheCreateErrorWhileCreatesFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var up atomic.Bool
		f := &factory{create: func(context.Context, int) error {
			if up.Load() {
				return nil
			}
			return errRefused
		}}
		p := newPool(t, f, Config{MaxObjects: 2, MaxQueueSize: 1})
		if _, err := p.Acquire(context.Background()); !errors.Is(err, errRefused) {
			t.Fatalf("Acquire = %v, want the create error", err)
		}

		// The pool now backs off 10ms. A take whose deadline passes in
		// that pause sees no create fail while it waits, and must still
		// say why nothing was free.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		_, err := p.Acquire(ctx)
		cancel()
		var we *WaitError
		if !errors.As(err, &we) || !errors.Is(err, ErrTimeout) {
			t.Fatalf("Acquire = %v, want a WaitError matching ErrTimeout", err)
		}
		if !errors.As(we.LastCreateErr, new(*CreateError)) {
			t.Errorf("WaitError.LastCreateErr = %v, want the *CreateError", we.LastCreateErr)
		}
		checkWrapsCause(t, "a timed-out take", err)

		// A take refused by a full queue, and TryAcquire, say why too.
		queued := make(chan error)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Millisecond)
			defer cancel()
			_, err := p.Acquire(ctx)
			queued <- err
		}()
		synctest.Wait()
		_, err = p.Acquire(context.Background())
		if !errors.Is(err, ErrPoolExhausted) {
			t.Errorf("Acquire with a full queue = %v, want ErrPoolExhausted", err)
		}
		checkWrapsCause(t, "a take refused by a full queue", err)
		_, err = p.TryAcquire()
		if !errors.Is(err, ErrWouldBlock) {
			t.Errorf("TryAcquire = %v, want ErrWouldBlock", err)
		}
		checkWrapsCause(t, "TryAcquire", err)
		checkWrapsCause(t, "a queued take that timed out", <-queued)

		// Once a create succeeds, takes no longer blame creates.
		up.Store(true)
		a, b := acquire(t, p), acquire(t, p)
		ctx, cancel = context.WithTimeout(context.Background(), time.Millisecond)
		_, err = p.Acquire(ctx)
		cancel()
		if !errors.As(err, &we) || we.LastCreateErr != nil || strings.Contains(err.Error(), "create") {
			t.Errorf("Acquire after creates recovered = %v, want a WaitError without a create error", err)
		}
		if _, err := p.TryAcquire(); err != ErrWouldBlock {
			t.Errorf("TryAcquire after creates recovered = %v, want ErrWouldBlock itself", err)
		}
		release(t, a)
		release(t, b)
	})
}

// TestBackoffCountsRoundsOfFailures fails sixteen creates at once, as an
// outage fails every create in flight: they count as one failure, and the
// probes that follow come after 10ms, 20ms, 40ms, 80ms, then every 100ms.
func TestBackoffCountsRoundsOfFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		var mu sync.Mutex
		var probes []time.Duration
		var start time.Time
		f := &factory{create: func(ctx context.Context, id int) error {
			if id <= 16 {
				<-gate
				return errRefused
			}
			mu.Lock()
			probes = append(probes, time.Since(start))
			mu.Unlock()
			return errRefused
		}}
		p := newPool(t, f, Config{MaxObjects: 16})
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
				defer cancel()
				p.Acquire(ctx)
			})
		}
		synctest.Wait()
		if n := f.creates.Load(); n != 16 {
			t.Fatalf("%d creates for 64 takers, want 16, one per object", n)
		}
		start = time.Now()
		close(gate)
		wg.Wait()

		var want []time.Duration
		for n, at := 1, time.Duration(0); ; n++ {
			at += backoff(n)
			if at >= 1500*time.Millisecond {
				break
			}
			want = append(want, at)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(probes, want) {
			t.Errorf("probes after the 16 failures at %v\nwant %v", probes, want)
		}
		if want[3] != 150*time.Millisecond || len(want) != 17 {
			t.Errorf("the schedule %v is not 10ms, 20ms, 40ms, 80ms, then 100ms apart", want)
		}
	})
}

// TestRecoveryAfterOutage runs 64 clients, with 1s deadlines, on a pool of
// 16 whose server goes away for 2.5s: every object breaks and every create
// fails at once. The pool must try about ten times a second meanwhile, and
// once the server is back, succeed within 150ms, be full within 300ms, and
// serve the takes that were waiting.
func TestRecoveryAfterOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			clients  = 64
			size     = 16
			deadline = time.Second
			connect  = 2 * time.Millisecond // a create's cost while the server is up
		)
		var down atomic.Bool
		var mu sync.Mutex
		var attempts, successes []time.Time
		f := &factory{create: func(ctx context.Context, id int) error {
			mu.Lock()
			attempts = append(attempts, time.Now())
			mu.Unlock()
			if down.Load() {
				return errRefused
			}
			time.Sleep(connect)
			mu.Lock()
			successes = append(successes, time.Now())
			mu.Unlock()
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: size})

		type take struct {
			start, end time.Time
			err        error
		}
		var takes []take
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i := range clients {
			// Clients pause a little after a failure, each its own time,
			// so that their waits do not all end together.
			pause := time.Duration(5+3*i) * time.Millisecond
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithTimeout(context.Background(), deadline)
					start := time.Now()
					l, err := p.Acquire(ctx)
					end := time.Now()
					cancel()
					mu.Lock()
					takes = append(takes, take{start, end, err})
					mu.Unlock()
					if err != nil {
						time.Sleep(pause)
						continue
					}
					time.Sleep(time.Millisecond)
					l.Release()
				}
			})
		}

		time.Sleep(time.Second)
		// The server goes away: objects fail Validate when given back,
		// as a closed connection does, and creates are refused.
		down.Store(true)
		downAt := time.Now()
		f.mu.Lock()
		for _, c := range f.conns {
			if c != nil {
				c.broken.Store(true)
			}
		}
		f.mu.Unlock()
		time.Sleep(2500 * time.Millisecond)
		down.Store(false)
		upAt := time.Now()
		time.Sleep(2 * time.Second)
		close(stop)
		wg.Wait()

		mu.Lock()
		defer mu.Unlock()
		var outage, steady int // attempts while down, and in its last second
		for _, at := range attempts {
			if !at.Before(downAt) && at.Before(upAt) {
				outage++
			}
			if !at.Before(upAt.Add(-time.Second)) && at.Before(upAt) {
				steady++
			}
		}
		if steady > 11 {
			t.Errorf("%d create attempts in a second while the server was down, want about 10", steady)
		}
		// At most one round of parallel creates, then about ten a second.
		if outage > size+30 {
			t.Errorf("%d create attempts in the 2.5s the server was down, want at most %d", outage, size+30)
		}
		var back []time.Time
		for _, at := range successes {
			if at.After(upAt) {
				back = append(back, at)
			}
		}
		if len(back) != size {
			t.Fatalf("%d objects created after the server came back, want %d: one per slot, no more", len(back), size)
		}
		if d := back[0].Sub(upAt); d > 150*time.Millisecond {
			t.Errorf("first create succeeded %v after the server came back, want within 150ms", d)
		}
		if d := back[size-1].Sub(upAt); d > 300*time.Millisecond {
			t.Errorf("pool full %v after the server came back, want within 300ms", d)
		}
		// A take waiting when the server came back, with more than 150ms
		// left, is served.
		var waiting, failed int
		var firstErr error
		for _, tk := range takes {
			if tk.start.Before(upAt) && tk.end.After(upAt) && tk.start.Add(deadline).Sub(upAt) > 150*time.Millisecond {
				waiting++
				if tk.err != nil {
					failed++
					firstErr = cmp.Or(firstErr, tk.err)
				}
			}
		}
		if failed > 0 {
			t.Errorf("%d of the %d takes waiting when the server came back failed, the first with: %v", failed, waiting, firstErr)
		}
		if waiting < clients/2 {
			t.Errorf("only %d takes were waiting when the server came back; the test did not exercise recovery", waiting)
		}
		t.Logf("%d create attempts while down, %d in its last second; first success %v and pool full %v after the server came back; %d takes waiting then, %d failed",
			outage, steady, back[0].Sub(upAt), back[size-1].Sub(upAt), waiting, failed)
	})
}

// TestRecoveryAfterStall runs 64 clients, with 1s deadlines, on a pool of
// 16 whose server freezes for 5s, as a server whose processes are all
// stopped (SIGSTOP) does: nothing fails, nothing answers. Each call in
// flight hangs until its deadline, where the client cuts it and the
// connection is lost (pgx closes a connection whose statement it cut),
// and each connect hangs until the server thaws, then completes. The pool
// must replace every lost object with a create that waits in the server's
// queue, one per object and no more, so that the creates in flight when
// the server thaws are enough to fill it; be full one connect after the
// thaw, and as fast as before it; and serve the takes that were waiting.
// It models BenchmarkStall's event=freeze (bench module) on a real
// PostgreSQL; a pool that treated the hung creates as failures, and
// probed, would have one create in flight at the thaw and be full a
// connect later.
func TestRecoveryAfterStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			clients  = 64
			size     = 16
			deadline = time.Second
			connect  = 20 * time.Millisecond // a create's cost while the server answers
			query    = 5 * time.Millisecond
			frozen   = 5 * time.Second
		)
		var mu sync.Mutex
		var attempts, successes, ok []time.Time
		thawed := make(chan struct{})
		var frozenAt time.Time // zero until the freeze; guarded by mu
		isFrozen := func() bool {
			mu.Lock()
			defer mu.Unlock()
			select {
			case <-thawed:
				return false
			default:
				return !frozenAt.IsZero()
			}
		}
		f := &factory{create: func(ctx context.Context, id int) error {
			mu.Lock()
			attempts = append(attempts, time.Now())
			mu.Unlock()
			if isFrozen() {
				select {
				case <-thawed:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			time.Sleep(connect)
			mu.Lock()
			successes = append(successes, time.Now())
			mu.Unlock()
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: size})

		type take struct {
			start, end time.Time
			err        error
		}
		var takes []take
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for i := range clients {
			pause := time.Duration(5+3*i) * time.Millisecond
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithTimeout(context.Background(), deadline)
					start := time.Now()
					l, err := p.Acquire(ctx)
					end := time.Now()
					mu.Lock()
					takes = append(takes, take{start, end, err})
					mu.Unlock()
					if err != nil {
						cancel()
						time.Sleep(pause)
						continue
					}
					if isFrozen() {
						select {
						case <-thawed:
						case <-ctx.Done():
							// The client cuts the call, and with it the
							// connection: given back, it fails Validate.
							l.Value().broken.Store(true)
						}
					}
					if !l.Value().broken.Load() {
						time.Sleep(query)
						mu.Lock()
						ok = append(ok, time.Now())
						mu.Unlock()
					}
					cancel()
					l.Release()
				}
			})
		}

		time.Sleep(time.Second)
		mu.Lock()
		frozenAt = time.Now()
		mu.Unlock()
		time.Sleep(frozen)
		inFlight := p.Stats().Creating
		mu.Lock()
		close(thawed)
		thawAt := time.Now()
		mu.Unlock()
		time.Sleep(time.Second)
		close(stop)
		wg.Wait()

		mu.Lock()
		defer mu.Unlock()
		var whileFrozen int
		for _, at := range attempts {
			if !at.Before(frozenAt) && at.Before(thawAt) {
				whileFrozen++
			}
		}
		// One create per lost object, in flight until the thaw: enough to
		// fill the pool, and no storm of connects on a server that does
		// not answer.
		if whileFrozen != size || inFlight != size {
			t.Errorf("%d creates started while the server was frozen, %d in flight when it thawed; want %d and %d, one per lost object",
				whileFrozen, inFlight, size, size)
		}
		var back []time.Time
		for _, at := range successes {
			if at.After(thawAt) {
				back = append(back, at)
			}
		}
		if len(back) != size {
			t.Fatalf("%d objects created after the thaw, want %d: one per slot, no more", len(back), size)
		}
		if d := back[size-1].Sub(thawAt); d > connect {
			t.Errorf("pool full %v after the thaw, want within one connect, %v", d, connect)
		}
		// As fast as before the freeze from one connect after the thaw:
		// every 100ms of the second that follows carries at least 90% of
		// the calls of the 100ms before the freeze.
		count := func(from time.Time) (n int) {
			for _, at := range ok {
				if !at.Before(from) && at.Before(from.Add(100*time.Millisecond)) {
					n++
				}
			}
			return n
		}
		base := count(frozenAt.Add(-100 * time.Millisecond))
		for at := thawAt.Add(connect); !at.Add(100 * time.Millisecond).After(thawAt.Add(time.Second)); at = at.Add(100 * time.Millisecond) {
			if n := count(at); 10*n < 9*base {
				t.Errorf("%d calls in the 100ms from %v after the thaw, want at least 90%% of the %d before the freeze",
					n, at.Sub(thawAt), base)
			}
		}
		// Every take ends by its deadline, and one waiting at the thaw
		// with more than 100ms left is served.
		var waiting, failed, late int
		var firstErr error
		for _, tk := range takes {
			if tk.end.Sub(tk.start) > deadline {
				late++
			}
			if tk.start.Before(thawAt) && tk.end.After(thawAt) && tk.start.Add(deadline).Sub(thawAt) > 100*time.Millisecond {
				waiting++
				if tk.err != nil {
					failed++
					firstErr = cmp.Or(firstErr, tk.err)
				}
			}
		}
		if late > 0 {
			t.Errorf("%d takes ended after their deadline", late)
		}
		if failed > 0 {
			t.Errorf("%d of the %d takes waiting when the server thawed failed, the first with: %v", failed, waiting, firstErr)
		}
		if waiting < clients/2 {
			t.Errorf("only %d takes were waiting when the server thawed; the test did not exercise recovery", waiting)
		}
		if m := f.max(); m > size {
			t.Errorf("%d objects alive or being created at once, more than MaxObjects %d", m, size)
		}
		t.Logf("%d creates started while frozen, %d in flight at the thaw; pool full %v after it; %d calls in 100ms before the freeze; %d takes waiting at the thaw, %d failed",
			whileFrozen, inFlight, back[size-1].Sub(thawAt), base, waiting, failed)
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

func TestFreshObjectFailingValidateIsDestroyed(t *testing.T) {
	f := &factory{validate: func(c *conn) error {
		if c.id == 1 {
			return errors.New("handshake incomplete")
		}
		return nil
	}}
	p := newPool(t, f, Config{MaxObjects: 1})
	_, err := p.Acquire(context.Background())
	if !errors.Is(err, ErrCreateFailed) || !strings.Contains(err.Error(), "handshake incomplete") {
		t.Fatalf("Acquire = %v, want a create error saying why the new object was invalid", err)
	}
	if f.destroys.Load() != 1 {
		t.Error("the invalid new object was not destroyed")
	}
}

func TestMinIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var inFlight, maxInFlight atomic.Int32
		f := &factory{create: func(ctx context.Context, id int) error {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			if n > maxInFlight.Load() {
				maxInFlight.Store(n)
			}
			time.Sleep(100 * time.Millisecond)
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 8, MinIdle: 3})
		time.Sleep(301 * time.Millisecond)
		synctest.Wait()
		if s := p.Stats(); s.Idle != 3 {
			t.Fatalf("MinIdle 3 not filled at once: %+v", s)
		}
		if n := maxInFlight.Load(); n != 1 {
			t.Errorf("MinIdle refill ran %d creates at once, want 1", n)
		}
		// Taking two leaves one idle; the pool refills to three.
		a, b := acquire(t, p), acquire(t, p)
		time.Sleep(time.Second)
		synctest.Wait()
		if s := p.Stats(); s.Idle != 3 || s.InUse != 2 {
			t.Errorf("MinIdle not refilled: %+v", s)
		}
		release(t, a)
		release(t, b)
	})
}

// Every object Create returned is counted in Created, so that after Close
// Created equals Destroyed plus Hijacked: also a new object that fails
// Validate and is destroyed at once, and one whose Create returns after
// Close gave up waiting for it.
func TestCreatedCountsEveryObjectDestroyed(t *testing.T) {
	for _, tt := range []struct {
		name string
		run  func(t *testing.T, f *factory, p *Pool[*conn])
	}{
		{"new object failing Validate", func(t *testing.T, f *factory, p *Pool[*conn]) {
			f.validate = func(c *conn) error { return errors.New("handshake incomplete") }
			if _, err := p.Acquire(context.Background()); !errors.Is(err, ErrCreateFailed) {
				t.Fatalf("Acquire = %v, want a create error", err)
			}
			if err := p.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
		}},
		{"create returning after Close gave up", func(t *testing.T, f *factory, p *Pool[*conn]) {
			finish := make(chan struct{})
			f.create = func(ctx context.Context, id int) error {
				<-finish // ignores its context
				return nil
			}
			go p.Acquire(context.Background())
			synctest.Wait()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Close = %v, want it to give up at its deadline", err)
			}
			close(finish)
			synctest.Wait()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &factory{}
				p, err := New[*conn](f, Config{MaxObjects: 1, Logger: discardLogger()})
				if err != nil {
					t.Fatal(err)
				}
				tt.run(t, f, p)
				f.checkAllDestroyed(t)
				s := p.Stats()
				if s.Destroyed != 1 || s.Created != s.Destroyed+s.Hijacked || s.Total != 0 {
					t.Errorf("after Close: Created %d, Destroyed %d, Hijacked %d, Total %d; want Created = Destroyed + Hijacked = 1, Total 0",
						s.Created, s.Destroyed, s.Hijacked, s.Total)
				}
			})
		})
	}
}

// A Create of an interface type that returns a nil object and no error
// gives the take that nil object, as it would a nil pointer, rather than
// crashing the keeper on the type assertion of a nil interface.
func TestCreateOfNilInterface(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var destroyed atomic.Int32
		p, err := New[io.Closer](FactoryFuncs[io.Closer]{
			CreateFunc:  func(ctx context.Context) (io.Closer, error) { return nil, nil },
			DestroyFunc: func(io.Closer) { destroyed.Add(1) },
		}, Config{MaxObjects: 1, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		l, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatalf("Acquire = %v", err)
		}
		if l.Value() != nil {
			t.Errorf("Value = %v, want the nil object Create returned", l.Value())
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := destroyed.Load(); n != 1 {
			t.Errorf("Destroy called %d times, want 1", n)
		}
	})
}

// The keeper enforces CreateTimeout itself, waking at the deadline rather
// than at its next housekeeping sweep: also when the create starts while
// the keeper's timer is set for a later deadline, a test's, so that the
// message that started it must re-arm the timer.
func TestCreateTimeoutIsExactBetweenSweeps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      Config
		testHung bool // the first object is under a hung test when the take comes
	}{
		{name: "alone", cfg: Config{MaxObjects: 1, CreateTimeout: 1100 * time.Millisecond}},
		{name: "beside a test with a later deadline", testHung: true,
			cfg: Config{MaxObjects: 2, CreateTimeout: 1100 * time.Millisecond, ValidationInterval: time.Second, TestTimeout: 10 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				unhang := make(chan struct{})
				testBegun := make(chan struct{})
				f := &factory{
					create: func(ctx context.Context, id int) error {
						if id == 1 && tc.testHung {
							return nil
						}
						<-unhang // ignores its context
						return nil
					},
					test: func(ctx context.Context, c *conn) error {
						close(testBegun)
						<-unhang
						return nil
					},
				}
				p := newPool(t, f, tc.cfg)
				defer close(unhang)
				if tc.testHung {
					release(t, acquire(t, p))
					<-testBegun
					time.Sleep(100 * time.Millisecond) // off the sweeps' beat
				}
				start := time.Now()
				_, err := p.Acquire(context.Background())
				if !errors.Is(err, ErrCreateFailed) {
					t.Fatalf("Acquire = %v, want the create's timeout", err)
				}
				if d := time.Since(start); d != tc.cfg.CreateTimeout {
					t.Errorf("take failed after %v, want exactly CreateTimeout, %v", d, tc.cfg.CreateTimeout)
				}
			})
		})
	}
}
