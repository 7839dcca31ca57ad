package actorpool

import (
	"cmp"
	"context"
	"errors"
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
