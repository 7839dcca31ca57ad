package actorpool

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// 5. Tests, eviction, lifetime, leak threshold.

func TestPeriodicTest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 2, ValidationInterval: time.Minute})
		a, b := acquire(t, p), acquire(t, p)
		b.Value().dead.Store(true)
		release(t, a)
		release(t, b)
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if n := f.tests.Load(); n != 0 {
			t.Fatalf("%d tests before ValidationInterval passed", n)
		}
		time.Sleep(20 * time.Second) // one housekeeping period past the interval
		synctest.Wait()
		if n := f.tests.Load(); n != 2 {
			t.Fatalf("%d tests after ValidationInterval, want 2", n)
		}
		s := p.Stats()
		if s.DestroyedBy.TestFailed != 1 || s.Idle != 1 || s.Tests != 2 {
			t.Errorf("after the tests: %+v", s)
		}
	})
}

func TestObjectUnderTestIsNotHandedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		testing := make(chan struct{})
		finish := make(chan struct{})
		f := &factory{test: func(ctx context.Context, c *conn) error {
			close(testing)
			<-finish
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 1, ValidationInterval: time.Second})
		release(t, acquire(t, p))
		<-testing
		if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("TryAcquire during a test = %v, want ErrWouldBlock", err)
		}
		got := make(chan Lease[*conn])
		go func() { got <- acquire(t, p) }()
		synctest.Wait()
		close(finish)
		l := <-got // handed over as soon as the test passed
		if l.Value().id != 1 {
			t.Errorf("got conn %d, want the tested conn 1", l.Value().id)
		}
		release(t, l)
	})
}

func TestTestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{test: func(ctx context.Context, c *conn) error {
			<-ctx.Done()
			return ctx.Err()
		}}
		p := newPool(t, f, Config{MaxObjects: 1, ValidationInterval: time.Second, TestTimeout: 3 * time.Second})
		release(t, acquire(t, p))
		time.Sleep(time.Second + 250*time.Millisecond + 3*time.Second)
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.TestTimeout != 1 {
			t.Errorf("a test that outlived TestTimeout did not retire its object: %+v", s.DestroyedBy)
		}
	})
}

func TestMaxIdleTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 2, MaxIdleTime: time.Minute})
		a, b := acquire(t, p), acquire(t, p)
		release(t, a)
		time.Sleep(30 * time.Second)
		release(t, b)
		time.Sleep(30*time.Second - time.Millisecond)
		synctest.Wait()
		if s := p.Stats(); s.Idle != 2 {
			t.Fatalf("evicted before MaxIdleTime: %+v", s)
		}
		// Within a housekeeping period (MaxIdleTime/4) of a's minute...
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if s := p.Stats(); s.Idle != 1 || s.DestroyedBy.Idle != 1 {
			t.Fatalf("a not evicted on time: %+v", s)
		}
		// ...and of b's.
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if s := p.Stats(); s.Idle != 0 || s.DestroyedBy.Idle != 2 {
			t.Fatalf("b not evicted on time: %+v", s)
		}
	})
}

func TestMaxIdleTimeKeepsMinIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 3, MinIdle: 1, MaxIdleTime: time.Minute})
		a, b, c := acquire(t, p), acquire(t, p), acquire(t, p)
		release(t, a)
		release(t, b)
		release(t, c)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if s := p.Stats(); s.Idle != 1 || s.Total != 1 {
			t.Errorf("MaxIdleTime evicted below MinIdle, or not at all: %+v", s)
		}
	})
}

func TestMaxLifetime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 2, MaxLifetime: 10 * time.Minute})
		idle, held := acquire(t, p), acquire(t, p)
		release(t, idle)
		// Jitter shortens lifetimes by up to a tenth.
		time.Sleep(9*time.Minute - time.Second)
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Lifetime != 0 {
			t.Fatalf("retired before MaxLifetime minus jitter: %+v", s)
		}
		time.Sleep(time.Minute + 3*time.Minute/2) // past the lifetime, plus a housekeeping period
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Lifetime != 1 {
			t.Fatalf("idle object not retired after MaxLifetime: %+v", s)
		}
		release(t, held) // past its lifetime: destroyed on return
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Lifetime != 2 || s.Total != 0 {
			t.Fatalf("object given back after MaxLifetime was kept: %+v", s)
		}
	})
}

// Lifetimes are shortened at random, by up to a tenth of MaxLifetime or by
// up to LifetimeJitter, so that objects made together do not retire
// together.
func TestLifetimeJitter(t *testing.T) {
	for _, tt := range []struct {
		name     string
		jitter   time.Duration
		shortest time.Duration
	}{
		{"default", 0, 54 * time.Minute},
		{"LifetimeJitter", time.Minute, 59 * time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newPool(t, &factory{}, Config{MaxObjects: 64, MaxLifetime: time.Hour, LifetimeJitter: tt.jitter})
				var leases []Lease[*conn]
				for range 64 {
					leases = append(leases, acquire(t, p))
				}
				seen := map[int64]bool{}
				for _, l := range leases {
					s := l.t.s
					life := time.Duration(s.expiresAt - s.createdAt)
					if life > time.Hour || life < tt.shortest {
						t.Errorf("lifetime %v outside [%v, 1h]", life, tt.shortest)
					}
					seen[s.expiresAt] = true
					release(t, l)
				}
				if len(seen) < 32 {
					t.Errorf("only %d distinct lifetimes among 64 objects: no jitter", len(seen))
				}
			})
		})
	}
}

func TestLeakThresholdLogsOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		p := newPool(t, &factory{}, Config{MaxObjects: 1, LeakThreshold: time.Minute, TraceAcquires: true, Logger: logs.logger()})
		l := acquire(t, p)
		time.Sleep(59 * time.Second)
		synctest.Wait()
		if strings.Contains(logs.String(), "suspected leak") {
			t.Fatal("logged before LeakThreshold")
		}
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		out := logs.String()
		if n := strings.Count(out, "suspected leak"); n != 1 {
			t.Fatalf("logged %d times, want once:\n%s", n, out)
		}
		if !strings.Contains(out, "TestLeakThresholdLogsOnce") {
			t.Errorf("log does not say where the lease was taken:\n%s", out)
		}
		if p.Stats().SuspectedLeaks != 1 {
			t.Error("SuspectedLeaks not counted")
		}
		release(t, l)
	})
}

// A passing test does not reset an object's idle clock: with tests more
// often than MaxIdleTime, idle objects must still be evicted.
func TestTestsDoNotKeepObjectsAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 1, MaxIdleTime: time.Minute, ValidationInterval: 10 * time.Second})
		release(t, acquire(t, p))
		time.Sleep(time.Minute + 15*time.Second)
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Idle != 1 || s.Tests == 0 {
			t.Errorf("object tested every 10s was not evicted after a minute idle: %+v", s)
		}
	})
}

// A Test that ignores its context is still bounded by TestTimeout: at the
// deadline its object is destroyed (which is what unblocks a test stuck in
// I/O), its place is free for a new object, and what Test returns late is
// ignored.
func TestTestTimeoutWhenTestIgnoresContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		started := make(chan struct{})
		gone := make(chan struct{})   // closed when conn 1 is destroyed, as a socket closed under a blocked read
		finish := make(chan struct{}) // lets the test end if the pool never destroys conn 1
		f := &factory{
			test: func(ctx context.Context, c *conn) error {
				if c.id != 1 {
					return nil
				}
				close(started)
				select {
				case <-gone:
				case <-finish:
				}
				return nil // a late pass: it must not put the destroyed object back
			},
			destroy: func(c *conn) {
				if c.id == 1 {
					close(gone)
				}
			},
		}
		p := newPool(t, f, Config{MaxObjects: 1, ValidationInterval: time.Second, TestTimeout: 3 * time.Second, Logger: logs.logger()})
		t.Cleanup(func() { close(finish) })
		c1 := acquire(t, p)
		release(t, c1)
		<-started
		time.Sleep(3*time.Second - time.Millisecond)
		synctest.Wait()
		if s := p.Stats(); f.destroys.Load() != 0 || s.Reserved != 1 {
			t.Fatalf("before TestTimeout: %d destroys, %+v", f.destroys.Load(), s)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		s := p.Stats()
		if f.destroys.Load() != 1 || s.DestroyedBy.TestTimeout != 1 {
			t.Fatalf("a Test ignoring its context kept its object past TestTimeout: %d destroys, %+v", f.destroys.Load(), s.DestroyedBy)
		}
		if s.Total != 0 || s.Reserved != 0 || s.Idle != 0 {
			t.Errorf("the timed-out object's place was not freed: %+v", s)
		}
		if s.Tests != 1 {
			t.Errorf("Tests = %d after the late return, want 1", s.Tests)
		}
		if !strings.Contains(logs.String(), "outlived TestTimeout") {
			t.Errorf("the test timeout was not logged:\n%s", logs.String())
		}
		// The late pass was ignored: the next take gets a new object.
		l := acquire(t, p)
		if id := l.Value().id; id != 2 {
			t.Errorf("take after the test timeout got conn %d, want a new conn 2", id)
		}
		release(t, l)
	})
}

// A hung test racing Close that gave up: the test deadline still destroys
// the object, once, and the late result changes nothing.
func TestTestTimeoutAfterCloseGaveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		gone := make(chan struct{})
		finish := make(chan struct{}) // lets the test end if the pool never destroys the object
		defer close(finish)
		f := &factory{
			test: func(ctx context.Context, c *conn) error {
				close(started)
				select { // ignores its context, which Close cancels
				case <-gone:
				case <-finish:
				}
				return nil
			},
			destroy: func(c *conn) { close(gone) },
		}
		p, err := New[*conn](f, Config{MaxObjects: 1, ValidationInterval: time.Second, TestTimeout: 10 * time.Second, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		release(t, acquire(t, p))
		<-started
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = p.Close(ctx)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 objects still out") ||
			!strings.Contains(err.Error(), "1 Factory.Test calls have not returned") {
			t.Fatalf("Close with a test hung = %v", err)
		}
		time.Sleep(10 * time.Second) // past TestTimeout
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.TestTimeout != 1 {
			t.Errorf("the hung test's object was not destroyed at TestTimeout after Close gave up: %+v", s.DestroyedBy)
		}
		if err := p.Close(context.Background()); err != nil {
			t.Errorf("Close after the hung test ended = %v, want nil", err)
		}
		f.checkAllDestroyed(t)
	})
}

// Close cancels a test's context; a Test that ignores it is still bounded
// by TestTimeout, so Close ends then rather than waiting for Test forever.
func TestCloseWaitsForHungTestOnlyUntilTestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		gone := make(chan struct{})
		finish := make(chan struct{}) // lets the test end if the pool never destroys the object
		defer close(finish)
		f := &factory{
			test: func(ctx context.Context, c *conn) error {
				close(started)
				select {
				case <-gone:
				case <-finish:
				}
				return nil
			},
			destroy: func(c *conn) { close(gone) },
		}
		p, err := New[*conn](f, Config{MaxObjects: 1, ValidationInterval: time.Second, TestTimeout: 10 * time.Second, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		release(t, acquire(t, p))
		<-started
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Fatalf("Close = %v", err)
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("Close with a hung test returned after %v, want TestTimeout, 10s", d)
		}
		if s := p.Stats(); s.DestroyedBy.TestTimeout != 1 {
			t.Errorf("destroyed by: %+v", s.DestroyedBy)
		}
		f.checkAllDestroyed(t)
	})
}

// MinObjects keeps objects alive, in use or idle: they are made at once,
// not evicted for idle time below it, and replaced when they retire; and
// while they are all in use, no idle ones are added.
func TestMinObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 4, MinObjects: 2, MaxIdleTime: time.Minute, MaxLifetime: time.Hour})
		synctest.Wait()
		if s := p.Stats(); s.Idle != 2 || s.Total != 2 {
			t.Fatalf("at start: %+v, want 2 idle", s)
		}
		a, b := acquire(t, p), acquire(t, p)
		synctest.Wait()
		if s := p.Stats(); s.Total != 2 || f.creates.Load() != 2 {
			t.Fatalf("with both in use: %+v after %d creates, want 2 alive: MinObjects counts objects in use", s, f.creates.Load())
		}
		c := acquire(t, p) // a third, on demand
		release(t, a)
		release(t, b)
		release(t, c)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if s := p.Stats(); s.Total != 2 || s.DestroyedBy.Idle != 1 {
			t.Fatalf("after idling: %+v, want the third evicted and 2 kept", s)
		}
		time.Sleep(time.Hour)
		synctest.Wait()
		if s := p.Stats(); s.Total != 2 || s.DestroyedBy.Lifetime != 2 {
			t.Fatalf("after their lifetime: %+v, want 2 retired and 2 new", s)
		}
		// A broken object given back is replaced too.
		l := acquire(t, p)
		l.Value().broken.Store(true)
		release(t, l)
		synctest.Wait()
		if s := p.Stats(); s.Total != 2 || s.DestroyedBy.Invalid != 1 {
			t.Fatalf("after an invalid object: %+v, want it replaced", s)
		}
	})
}

// Stats tells objects under test from objects being destroyed, and counts
// every create started.
func TestStatsDestroying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		f := &factory{destroy: func(*conn) { <-unblock }}
		p := newPool(t, f, Config{MaxObjects: 2})
		a, b := acquire(t, p), acquire(t, p)
		if err := a.Destroy(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if s := p.Stats(); s.Reserved != 1 || s.Destroying != 1 || s.CreateAttempts != 2 {
			t.Fatalf("while a Destroy runs: %+v, want 1 reserved, being destroyed, and 2 creates started", s)
		}
		close(unblock)
		release(t, b)
		synctest.Wait()
		if s := p.Stats(); s.Reserved != 0 || s.Destroying != 0 {
			t.Fatalf("after the Destroy: %+v", s)
		}
	})
}

// A MaxLifetime too long for a clock reading to hold, such as
// math.MaxInt64 meant as "forever", never retires an object, and a
// LifetimeJitter as long as it does not crash the keeper.
func TestHugeMaxLifetime(t *testing.T) {
	for _, tt := range []struct {
		name         string
		life, jitter time.Duration
	}{
		{"MaxLifetime MaxInt64", math.MaxInt64, 0},
		{"LifetimeJitter MaxInt64", math.MaxInt64, math.MaxInt64},
		{"MaxLifetime 270 years", 270 * 365 * 24 * time.Hour, time.Hour},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := newPool(t, &factory{}, Config{MaxObjects: 4, MaxLifetime: tt.life, LifetimeJitter: tt.jitter})
				held := acquire(t, p)
				release(t, acquire(t, p))
				time.Sleep(time.Minute)
				synctest.Wait()
				release(t, held)
				synctest.Wait()
				if s := p.Stats(); s.DestroyedBy.Lifetime != 0 || s.Idle != 2 {
					t.Errorf("objects retired for their lifetime within a minute: %+v", s)
				}
			})
		})
	}
}

// A test that outlived TestTimeout and returns once its slot holds a new
// object, itself under test, changes nothing: the new object is neither
// destroyed nor put back by the late result, and its own test's deadline
// is enforced, at the deadline.
func TestLateTestSparesItsSlotsNextTest(t *testing.T) {
	for _, late := range []error{nil, errors.New("dead")} {
		t.Run(fmt.Sprintf("late result %v", late), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const timeout = 1100 * time.Millisecond // off the sweeps' beat
				began := make(chan int, 2)
				lateA := make(chan struct{})
				finish := make(chan struct{})
				defer close(finish)
				f := &factory{test: func(ctx context.Context, c *conn) error {
					began <- c.id
					switch c.id {
					case 1:
						<-lateA // deaf to its context and to Destroy
						return late
					default:
						<-finish
						return nil
					}
				}}
				p := newPool(t, f, Config{MaxObjects: 1, ValidationInterval: time.Second, TestTimeout: timeout})
				release(t, acquire(t, p))
				if id := <-began; id != 1 {
					t.Fatalf("conn %d tested first", id)
				}
				time.Sleep(timeout)
				synctest.Wait()
				if s := p.Stats(); s.DestroyedBy.TestTimeout != 1 || s.Total != 0 {
					t.Fatalf("conn 1 not destroyed at TestTimeout: %+v", s)
				}
				l := acquire(t, p)
				if id := l.Value().id; id != 2 {
					t.Fatalf("took conn %d, want a new conn 2 in the freed slot", id)
				}
				release(t, l)
				if id := <-began; id != 2 {
					t.Fatalf("conn %d tested, want conn 2", id)
				}
				close(lateA) // conn 1's test returns while conn 2's runs
				time.Sleep(timeout - time.Millisecond)
				synctest.Wait()
				if s := p.Stats(); f.destroys.Load() != 1 || s.Reserved != 1 || s.Idle != 0 {
					t.Fatalf("conn 1's late test moved conn 2: %d destroys, %+v", f.destroys.Load(), s)
				}
				time.Sleep(time.Millisecond)
				synctest.Wait()
				if s := p.Stats(); f.destroys.Load() != 2 || s.DestroyedBy.TestTimeout != 2 || s.Total != 0 {
					t.Fatalf("conn 2's test was not timed out at its deadline: %d destroys, %+v", f.destroys.Load(), s)
				}
			})
		})
	}
}

// A Test that returns at the very moment of its deadline races the
// keeper's enforcing it: whichever claims the object first, it is
// destroyed at most once, and the pool serves takes after.
func TestTestReturningAtItsDeadline(t *testing.T) {
	const timeout = 1100 * time.Millisecond
	for range 100 {
		synctest.Test(t, func(t *testing.T) {
			began := make(chan struct{}, 1)
			f := &factory{test: func(ctx context.Context, c *conn) error {
				began <- struct{}{}
				time.Sleep(timeout) // deaf to its context
				return nil
			}}
			p := newPool(t, f, Config{MaxObjects: 1, ValidationInterval: time.Second, TestTimeout: timeout})
			release(t, acquire(t, p))
			<-began
			time.Sleep(timeout)
			synctest.Wait()
			s := p.Stats()
			if int(s.DestroyedBy.TestTimeout)+s.Idle != 1 || s.Total != s.Idle {
				t.Fatalf("after a test ended at its deadline: %+v", s)
			}
			release(t, acquire(t, p))
		})
	}
}
