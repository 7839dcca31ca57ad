package actorpool

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		finish := make(chan struct{})
		f := &factory{create: func(ctx context.Context, id int) error {
			if id == 3 {
				<-finish
			}
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 4})
		idle, held := acquire(t, p), acquire(t, p)
		if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) { // starts create 3
			t.Fatal(err)
		}
		release(t, idle)
		synctest.Wait()

		if err := p.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Reloaded != 1 {
			t.Fatalf("idle object not destroyed at once by Reload: %+v", s.DestroyedBy)
		}
		// A new take gets a new object.
		fresh := acquire(t, p)
		if fresh.Value().id != 4 {
			t.Errorf("take after Reload got conn %d, want a new conn 4", fresh.Value().id)
		}
		// The object in use is destroyed when it comes back.
		release(t, held)
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Reloaded != 2 {
			t.Errorf("object in use kept after Reload: %+v", s.DestroyedBy)
		}
		// The create in flight is destroyed when it comes back.
		close(finish)
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Reloaded != 3 || s.Total != 1 {
			t.Errorf("create in flight at Reload kept: %+v", s)
		}
		release(t, fresh)
	})
}

func TestReloadServesWaiterOfStaleCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		finish := make(chan struct{})
		f := &factory{create: func(ctx context.Context, id int) error {
			if id == 1 {
				<-finish
			}
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 1})
		got := make(chan Lease[*conn])
		go func() { got <- acquire(t, p) }() // waits on create 1
		synctest.Wait()
		if err := p.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		close(finish)
		l := <-got
		if l.Value().id != 2 {
			t.Errorf("waiter got conn %d, made before Reload; want conn 2", l.Value().id)
		}
		release(t, l)
	})
}

// A give-back whose check for a doomed object ran just before Reload doomed
// it, and that makes the object idle after Reload looked at the idle
// objects, retires it itself: Reload's look and the give-back's after
// going idle cannot both miss. Validate runs in the give-back between its
// check of the doom and the object going idle; this one runs Reload there.
func TestReloadRetiresObjectGoingIdleMeanwhile(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		t.Run(fmt.Sprintf("FIFO=%v", fifo), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var p *Pool[*conn]
				var reloadNow atomic.Bool
				f := &factory{validate: func(*conn) error {
					if reloadNow.Swap(false) {
						if err := p.Reload(context.Background()); err != nil {
							t.Error(err)
						}
					}
					return nil
				}}
				p = newPool(t, f, Config{MaxObjects: 2, FIFO: fifo})
				l := acquire(t, p)
				reloadNow.Store(true)
				release(t, l)
				if reloadNow.Load() {
					t.Fatal("Validate did not run in the give-back")
				}
				synctest.Wait()
				if s := p.Stats(); s.Idle != 0 || s.DestroyedBy.Reloaded != 1 || f.destroys.Load() != 1 {
					t.Errorf("object doomed by Reload while going idle left idle: %+v", s)
				}
				fresh := acquire(t, p)
				if fresh.Value().id != 2 {
					t.Errorf("take after Reload got conn %d, want a new conn 2", fresh.Value().id)
				}
				release(t, fresh)
			})
		})
	}
}

// A take that starts after Reload has returned gets a new object, even as
// a waiter served by a give-back whose check for a doomed object ran just
// before Reload doomed it. Validate runs in the give-back after that
// check; this one runs Reload there, then queues a take and lets it wait.
func TestReloadThenWaiterGetsNewObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p *Pool[*conn]
		var reloadNow atomic.Bool
		got := make(chan Lease[*conn], 1)
		f := &factory{validate: func(*conn) error {
			if reloadNow.Swap(false) {
				if err := p.Reload(context.Background()); err != nil {
					t.Error(err)
				}
				go func() { got <- acquire(t, p) }()
				synctest.Wait()
			}
			return nil
		}}
		p = newPool(t, f, Config{MaxObjects: 1})
		held := acquire(t, p)
		reloadNow.Store(true)
		release(t, held)
		l := <-got
		if id := l.Value().id; id != 2 {
			t.Errorf("a take started after Reload returned got conn %d, want a new conn 2", id)
		}
		release(t, l)
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Reloaded != 1 || s.Total != 1 {
			t.Errorf("after Reload and a take: %+v", s)
		}
	})
}

// An object that a waiter woken to compete claims for the next waiter
// (serveIdleLocked), and makes idle again because that waiter has given up
// (relist), is retired if Reload doomed it meanwhile, as a give-back that
// makes an object idle is: Reload looked at the idle objects while it was
// claimed, and relisting it is its going idle. Validate runs on the claim,
// before the relist: there the test ends the next waiter's context and
// runs Reload.
func TestReloadRetiresObjectRelistedMeanwhile(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		t.Run(fmt.Sprintf("FIFO=%v", fifo), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var p *Pool[*conn]
				var x, y Lease[*conn]
				var xc *conn
				var armed, yArmed atomic.Bool
				var xCalls atomic.Int32
				ctx2, cancel2 := context.WithCancel(context.Background())
				defer cancel2()
				f := &factory{validate: func(c *conn) error {
					if !armed.Load() {
						return nil
					}
					switch {
					case c == xc && xCalls.Add(1) == 2:
						// The first waiter, woken by x's give-back, has
						// claimed x as it competed. y is given back now,
						// with that waiter awake: no one else is woken.
						if err := y.Release(); err != nil {
							t.Error(err)
						}
						yArmed.Store(true)
					case c != xc && yArmed.Swap(false):
						// The first waiter claims y for the second.
						cancel2()
						if err := p.Reload(context.Background()); err != nil {
							t.Error(err)
						}
					}
					return nil
				}}
				p = newPool(t, f, Config{MaxObjects: 2, FIFO: fifo, HandoffAfter: time.Hour})
				x, y = acquire(t, p), acquire(t, p)
				xc = x.Value()
				first := make(chan Lease[*conn], 1)
				go func() { first <- acquire(t, p) }()
				synctest.Wait()
				second := make(chan error, 1)
				go func() {
					l, err := p.Acquire(ctx2)
					if err == nil {
						release(t, l)
					}
					second <- err
				}()
				synctest.Wait()
				armed.Store(true)
				release(t, x)
				l := <-first
				if err := <-second; !errors.Is(err, context.Canceled) {
					t.Fatalf("second waiter: %v, want context.Canceled", err)
				}
				if yArmed.Load() || xCalls.Load() != 2 {
					t.Fatal("Validate did not run where the test expects")
				}
				synctest.Wait()
				if s := p.Stats(); s.Idle != 0 || s.DestroyedBy.Reloaded != 1 {
					t.Errorf("object doomed by Reload while relisted left idle: %+v", s)
				}
				armed.Store(false)
				release(t, l)
				fresh := acquire(t, p)
				if id := fresh.Value().id; id <= 2 {
					t.Errorf("take after Reload got conn %d, want a new one", id)
				}
				release(t, fresh)
			})
		})
	}
}

// A give-back that makes its object idle just as Reload dooms it retires
// the object itself, after the keeper's look at the idle objects. Before
// it does, the keeper may have evicted the object (it is older than the
// Reload) and installed a new one in its slot, idle under the same seq: a
// slot's seq moves only when its object is handed out, so the slot's
// state is the same word as before. The give-back must leave the new
// object alone: no Reload doomed it, and no one has held it. (A FIFO
// pool's give-back lists its object instead of parking it, and the new
// object is idle the same way.)
func TestLateRetireOfDoomedObjectSparesItsSuccessor(t *testing.T) {
	b := newBare(false)
	s, seq := b.lent(t)
	b.k.reload() // the object is lent: its giver retires it
	// The give-back, up to its look at the doom.
	b.p.park(s, seq)
	if _, ok := s.doom(); !ok {
		t.Fatal("Reload did not doom the lent object")
	}
	// Meanwhile the keeper evicts the object, destroys it, and puts a new
	// one in its slot, idle.
	if !b.p.reserveIdle(s, s.load()) {
		t.Fatal("the keeper cannot reserve the parked object")
	}
	b.k.destroyed(s.idx)
	if o := b.idle(); o != s {
		t.Fatalf("the new object went to slot %d, want %d", o.idx, s.idx)
	}
	// The rest of the give-back, and the keeper's handling of what it
	// asked.
	b.p.retireIdleSlot(s, seq)
	if st := s.load(); st.kind() != kindIdle {
		t.Fatalf("the new object, idle and never lent, is %v after the late retire of the old one", st.kind())
	}
	for _, m := range b.p.inbox.take() {
		b.k.handle(m)
	}
	if st := s.load(); st.kind() != kindIdle {
		t.Errorf("the new object, idle and never lent, is %v after the keeper handled the late retire of the old one", st.kind())
	}
}
