package actorpool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/actorpool/actorpool/internal/leakcheck"
)

// 8. Close.

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p, err := New[*conn](f, Config{MaxObjects: 3, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		idle, held, other := acquire(t, p), acquire(t, p), acquire(t, p)
		release(t, idle)
		release(t, other)
		// One waiter, on a full pool.
		full := acquire(t, p)
		full2 := acquire(t, p)
		waiter := make(chan error)
		go func() {
			_, err := p.Acquire(context.Background())
			waiter <- err
		}()
		synctest.Wait()

		closed := make(chan error)
		go func() { closed <- p.Close(context.Background()) }()
		if err := <-waiter; !errors.Is(err, ErrClosed) {
			t.Errorf("waiter on Close: %v, want ErrClosed", err)
		}
		synctest.Wait()
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) with objects still lent out", err)
		default:
		}
		if f.live() != 3 {
			t.Errorf("%d objects alive, want the 3 lent out", f.live())
		}
		if _, err := p.Acquire(context.Background()); !errors.Is(err, ErrClosed) {
			t.Errorf("Acquire after Close: %v", err)
		}
		if _, err := p.TryAcquire(); !errors.Is(err, ErrClosed) {
			t.Errorf("TryAcquire after Close: %v", err)
		}
		if err := p.Reload(context.Background()); !errors.Is(err, ErrClosed) {
			t.Errorf("Reload after Close: %v", err)
		}
		release(t, held)
		release(t, full)
		release(t, full2)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		f.checkAllDestroyed(t)
		if s := p.Stats(); s.DestroyedBy.Closed != 3 || s.Total != 0 {
			t.Errorf("stats after Close: %+v", s)
		}
	})
}

func TestCloseIdempotent(t *testing.T) {
	checkGoroutinesOnce(t)
	f := &factory{}
	p, err := New[*conn](f, Config{MaxObjects: 4, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	var leases []Lease[*conn]
	for range 4 {
		leases = append(leases, acquire(t, p))
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if err := p.Close(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	for _, l := range leases {
		release(t, l)
	}
	wg.Wait()
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("Close after Close: %v", err)
	}
	f.checkAllDestroyed(t)
}

func TestCloseFailsTakeWaitingOnCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{create: func(ctx context.Context, id int) error {
			<-ctx.Done() // a connect that Close cancels
			return ctx.Err()
		}}
		p, err := New[*conn](f, Config{MaxObjects: 1, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		taken := make(chan error)
		go func() {
			_, err := p.Acquire(context.Background())
			taken <- err
		}()
		synctest.Wait()
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-taken; !errors.Is(err, ErrClosed) {
			t.Errorf("take waiting on a create: %v, want ErrClosed", err)
		}
	})
}

func TestCloseDestroysObjectCreatedLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		finish := make(chan struct{})
		f := &factory{create: func(ctx context.Context, id int) error {
			<-finish // ignores its context
			return nil
		}}
		p, err := New[*conn](f, Config{MaxObjects: 1, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		go p.Acquire(context.Background())
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- p.Close(context.Background()) }()
		synctest.Wait()
		close(finish)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		f.checkAllDestroyed(t)
		if f.creates.Load() != 1 {
			t.Errorf("%d creates", f.creates.Load())
		}
	})
}

func TestNothingCreatedAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{create: func(ctx context.Context, id int) error {
			time.Sleep(time.Second)
			return nil
		}}
		p, err := New[*conn](f, Config{MaxObjects: 8, MinIdle: 8, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond) // two of eight made
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		n := f.creates.Load()
		time.Sleep(time.Hour)
		if f.creates.Load() != n || n > 3 {
			t.Errorf("creates went on after Close: %d, then %d", n, f.creates.Load())
		}
		f.checkAllDestroyed(t)
	})
}

func TestCloseGivesUpAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p, err := New[*conn](f, Config{MaxObjects: 2, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		l := acquire(t, p)
		release(t, acquire(t, p)) // the other one idle
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		err = p.Close(ctx)
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("Close returned after %v, want its 5s deadline", d)
		}
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 objects still out") {
			t.Fatalf("Close = %v, want a deadline error counting 1 object out", err)
		}
		if err2 := p.Close(context.Background()); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("second Close = %v, want the same error", err2)
		}
		// The holder gives it back after Close gave up: it is destroyed
		// then, by the holder, exactly once, and nothing is out any more.
		release(t, l)
		f.checkAllDestroyed(t)
		if err := p.Close(context.Background()); err != nil {
			t.Errorf("Close after the last object came back = %v, want nil", err)
		}
	})
}

func TestCloseReportsLeakedObjectAfterAbandon(t *testing.T) {
	// After Close gives up, releases and leaks are still destroyed once.
	before := leakcheck.Take()
	f := &factory{}
	p, err := New[*conn](f, Config{MaxObjects: 2, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	leakOne(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Close(ctx); err == nil {
		t.Fatal("Close with a leaked lease and a canceled context succeeded")
	}
	before.Check(t)
	waitFor(t, "the leak to be reclaimed", func() bool {
		runtime.GC()
		return f.destroys.Load() == 1 && p.Stats().Total == 0
	})
	f.checkAllDestroyed(t)
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("Close after the leaked object was reclaimed = %v, want nil", err)
	}
}

// After Close gave up, whatever brings back an object still out counts it
// off, so that a later Close reports what is out at its own time: an error
// while something is, nil once everything came back.
func TestCloseAfterGivingUpReportsWhatIsStillOut(t *testing.T) {
	tests := []struct {
		name string
		// out opens a pool over f, puts one object out and returns what
		// brings it back after Close gave up.
		out func(t *testing.T, f *factory, open func() *Pool[*conn]) func()
	}{
		{"released by its holder", func(t *testing.T, f *factory, open func() *Pool[*conn]) func() {
			l := acquire(t, open())
			return func() { release(t, l) }
		}},
		{"destroyed by its holder", func(t *testing.T, f *factory, open func() *Pool[*conn]) func() {
			l := acquire(t, open())
			return func() {
				if err := l.Destroy(); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"created late", func(t *testing.T, f *factory, open func() *Pool[*conn]) func() {
			finish := make(chan struct{})
			f.create = func(ctx context.Context, id int) error { <-finish; return nil }
			p := open()
			go p.Acquire(context.Background()) // fails with ErrClosed
			synctest.Wait()
			return func() { close(finish) }
		}},
		{"create failed late", func(t *testing.T, f *factory, open func() *Pool[*conn]) func() {
			finish := make(chan struct{})
			f.create = func(ctx context.Context, id int) error { <-finish; return errors.New("refused") }
			p := open()
			go p.Acquire(context.Background())
			synctest.Wait()
			return func() { close(finish) }
		}},
		{"tested late", func(t *testing.T, f *factory, open func() *Pool[*conn]) func() {
			started, finish := make(chan struct{}), make(chan struct{})
			f.test = func(ctx context.Context, c *conn) error { close(started); <-finish; return nil }
			release(t, acquire(t, open()))
			<-started
			return func() { close(finish) }
		}},
		{"destroyed late", func(t *testing.T, f *factory, open func() *Pool[*conn]) func() {
			finish := make(chan struct{})
			f.destroy = func(c *conn) { <-finish }
			l := acquire(t, open())
			if err := l.Destroy(); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			return func() { close(finish) }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &factory{}
				var p *Pool[*conn]
				bringBack := tt.out(t, f, func() *Pool[*conn] {
					var err error
					p, err = New[*conn](f, Config{MaxObjects: 2, ValidationInterval: time.Second, TestTimeout: time.Hour, Logger: discardLogger()})
					if err != nil {
						t.Fatal(err)
					}
					return p
				})
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Close with something out = %v, want a deadline error", err)
				}
				if err := p.Close(ctx); err == nil || !strings.Contains(err.Error(), "1 objects still out") {
					t.Fatalf("second Close while it is still out = %v, want an error counting 1 object out", err)
				}
				bringBack()
				synctest.Wait()
				if err := p.Close(context.Background()); err != nil {
					t.Errorf("Close after it came back = %v, want nil", err)
				}
				if s := p.Stats(); s.Total != 0 {
					t.Errorf("Total = %d after everything came back", s.Total)
				}
				f.checkAllDestroyed(t)
			})
		})
	}
}

// An object given back just as Close gives up, past the giver's first look
// at whether the pool is closed, goes idle rather than being destroyed; its
// giver, finding the keeper gone, destroys it rather than leave it idle
// forever.
func TestObjectGivenBackAsCloseGivesUpIsDestroyed(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		t.Run(fmt.Sprintf("FIFO=%v", fifo), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				validating, resume := make(chan struct{}), make(chan struct{})
				var stall atomic.Bool
				f := &factory{validate: func(c *conn) error {
					if stall.CompareAndSwap(true, false) {
						close(validating)
						<-resume
					}
					return nil
				}}
				p, err := New[*conn](f, Config{MaxObjects: 1, FIFO: fifo, Logger: discardLogger()})
				if err != nil {
					t.Fatal(err)
				}
				l := acquire(t, p)
				stall.Store(true)
				released := make(chan error)
				go func() { released <- l.Release() }()
				<-validating // the giver saw the pool open
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				if err := p.Close(ctx); err == nil {
					t.Fatal("Close gave up with an object out and returned nil")
				}
				close(resume)
				if err := <-released; err != nil {
					t.Fatal(err)
				}
				if err := p.Close(context.Background()); err != nil {
					t.Errorf("Close after the object came back = %v, want nil", err)
				}
				f.checkAllDestroyed(t)
			})
		})
	}
}

// Objects that come back while the keeper is busy, so that their messages
// follow Close's giving up in the batch the keeper takes next, are destroyed
// too.
func TestCloseGivingUpDisposesOfTheRestOfItsBatch(t *testing.T) {
	for _, how := range []string{"destroyed", "released"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &stallWriter{stalled: make(chan struct{}), resume: make(chan struct{})}
				testing, failTest := make(chan struct{}), make(chan struct{})
				validating, resumeValidate := make(chan struct{}), make(chan struct{})
				var stallValidate atomic.Bool
				f := &factory{
					test: func(ctx context.Context, c *conn) error {
						close(testing)
						<-failTest // ignores its context, which Close cancels
						return errors.New("dead")
					},
					validate: func(c *conn) error {
						if stallValidate.CompareAndSwap(true, false) {
							close(validating)
							<-resumeValidate
						}
						return nil
					},
				}
				p, err := New[*conn](f, Config{MaxObjects: 2, ValidationInterval: time.Second, TestTimeout: time.Hour,
					Logger: slog.New(slog.NewTextHandler(w, nil))})
				if err != nil {
					t.Fatal(err)
				}
				held, idle := acquire(t, p), acquire(t, p)
				release(t, idle)
				<-testing
				released := make(chan error)
				if how == "released" {
					// The giver sees the pool open, then stalls in Validate.
					stallValidate.Store(true)
					go func() { released <- held.Release() }()
					<-validating
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				closed := make(chan error)
				go func() { closed <- p.Close(ctx) }()
				synctest.Wait()
				close(failTest) // the keeper logs the failed test, and stalls there
				<-w.stalled
				time.Sleep(time.Second) // Close gives up meanwhile
				synctest.Wait()
				// The object comes back after Close gave up, before the keeper
				// has seen that it did.
				if how == "destroyed" {
					if err := held.Destroy(); err != nil {
						t.Fatal(err)
					}
				} else {
					close(resumeValidate)
					if err := <-released; err != nil {
						t.Fatal(err)
					}
				}
				close(w.resume)
				if err := <-closed; err != nil && !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Close = %v, want nil or a deadline error", err)
				}
				synctest.Wait()
				if err := p.Close(context.Background()); err != nil {
					t.Errorf("Close after everything came back = %v, want nil", err)
				}
				f.checkAllDestroyed(t)
			})
		})
	}
}

// stallWriter blocks the first write to it until resume is closed: a log
// destination that holds up the goroutine logging, the keeper, so that
// messages pile up in its inbox.
type stallWriter struct {
	once            sync.Once
	stalled, resume chan struct{}
}

func (w *stallWriter) Write(b []byte) (int, error) {
	w.once.Do(func() {
		close(w.stalled)
		<-w.resume
	})
	return len(b), nil
}

// A Test that Close cancels by its context is not a failed test: its object
// is destroyed by Close, counted so, and no test failure is logged.
func TestCloseCancelingTestCountsNoTestFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		started := make(chan struct{})
		f := &factory{test: func(ctx context.Context, c *conn) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		}}
		p := newPool(t, f, Config{MaxObjects: 1, ValidationInterval: time.Second, TestTimeout: time.Minute, Logger: logs.logger()})
		release(t, acquire(t, p))
		<-started
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := p.Stats(); s.DestroyedBy.TestFailed != 0 || s.DestroyedBy.Closed != 1 {
			t.Errorf("a test canceled by Close counted as a failure: %+v", s.DestroyedBy)
		}
		if strings.Contains(logs.String(), "test failed") {
			t.Errorf("a test canceled by Close logged as failed:\n%s", logs.String())
		}
	})
}

// No timer of the pool is left to fire, nor a goroutine that one started
// left to run its code, once Close has returned: every object is destroyed
// by then, exactly once, and an hour later nothing has changed. Each case
// ends a create or a test at the moment Close's cancel or a deadline makes
// a timer or a context.AfterFunc start its callback, and runs many times,
// as whether such a goroutine outlives Close is up to the scheduler.
func TestCloseLeavesNoTimerBehind(t *testing.T) {
	const timeout = 3 * time.Second
	for _, tc := range []struct {
		name string
		f    func(started chan<- struct{}) *factory
		cfg  Config
		// start makes the pool busy with what Close must wait for.
		start func(t *testing.T, p *Pool[*conn], started <-chan struct{})
	}{{
		name: "create canceled by Close",
		f: func(chan<- struct{}) *factory {
			return &factory{create: func(ctx context.Context, id int) error {
				<-ctx.Done()
				return ctx.Err()
			}}
		},
		cfg:   Config{MaxObjects: 2, CreateTimeout: timeout},
		start: startTakes,
	}, {
		name: "create returning at CreateTimeout",
		f: func(chan<- struct{}) *factory {
			return &factory{create: func(ctx context.Context, id int) error {
				time.Sleep(timeout) // deaf to Close's cancel
				return nil
			}}
		},
		cfg:   Config{MaxObjects: 2, CreateTimeout: timeout},
		start: startTakes,
	}, {
		name: "test returning at TestTimeout",
		f: func(started chan<- struct{}) *factory {
			return &factory{test: func(ctx context.Context, c *conn) error {
				started <- struct{}{}
				time.Sleep(timeout) // deaf to Close's cancel
				return nil
			}}
		},
		cfg:   Config{MaxObjects: 16, ValidationInterval: time.Second, TestTimeout: timeout},
		start: startTests,
	}, {
		name: "test hung past TestTimeout",
		f: func(started chan<- struct{}) *factory {
			gone := make(chan struct{})
			return &factory{
				test: func(ctx context.Context, c *conn) error {
					started <- struct{}{}
					<-gone // until its object is destroyed
					return nil
				},
				destroy: func(c *conn) { close(gone) },
			}
		},
		cfg:   Config{MaxObjects: 1, ValidationInterval: time.Second, TestTimeout: timeout},
		start: startTests,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			for range 300 {
				synctest.Test(t, func(t *testing.T) {
					started := make(chan struct{}, tc.cfg.MaxObjects)
					f := tc.f(started)
					cfg := tc.cfg
					cfg.Logger = discardLogger()
					p, err := New[*conn](f, cfg)
					if err != nil {
						t.Fatal(err)
					}
					tc.start(t, p, started)
					if err := p.Close(context.Background()); err != nil {
						t.Fatal(err)
					}
					if left := timerCallbacks(); len(left) > 0 {
						t.Fatalf("%d goroutines started by a timer still run the pool's code after Close returned:\n\n%s",
							len(left), strings.Join(left, "\n\n"))
					}
					f.checkAllDestroyed(t)
					synctest.Wait() // for the takes that Close failed to count their failure
					stats, creates, tests := p.Stats(), f.creates.Load(), f.tests.Load()
					time.Sleep(time.Hour)
					synctest.Wait()
					if s := p.Stats(); s != stats || f.creates.Load() != creates || f.tests.Load() != tests {
						t.Errorf("the pool moved after Close returned: stats %+v, then %+v; %d creates, then %d; %d tests, then %d",
							stats, s, creates, f.creates.Load(), tests, f.tests.Load())
					}
				})
			}
		})
	}
}

// startTakes has a take wait for each object the pool may create.
func startTakes(t *testing.T, p *Pool[*conn], _ <-chan struct{}) {
	for range p.Config().MaxObjects {
		go p.Acquire(context.Background())
	}
	synctest.Wait()
}

// startTests fills the pool with objects and waits until each one's first
// test has begun.
func startTests(t *testing.T, p *Pool[*conn], started <-chan struct{}) {
	var leases []Lease[*conn]
	for range p.Config().MaxObjects {
		leases = append(leases, acquire(t, p))
	}
	for _, l := range leases {
		release(t, l)
	}
	for range leases {
		<-started
	}
}

// timerCallbacks returns the stacks of the goroutines in the caller's
// synctest bubble that a timer or a context.AfterFunc started and that run
// the pool's code.
func timerCallbacks() []string {
	var found []string
	for _, g := range leakcheck.Bubble() {
		byTimer := strings.Contains(g, "\ncreated by time.goFunc") || strings.Contains(g, "\ncreated by context.(*afterFuncCtx)")
		if byTimer && strings.Contains(g, "github.com/actorpool/actorpool.") {
			found = append(found, g)
		}
	}
	return found
}
