package actorpool

import (
	"context"
	"time"
)

// The keeper is the one goroutine of a pool that changes its lifecycle
// state: which slots are free, how many objects are alive and being
// created, the create backoff, the reload generation, closing. It is an
// actor, owning that state and told of events by messages; its name keeps
// it apart from package actor, which is unrelated. The state lives in a
// keeper value that no other goroutine touches, so it needs no lock. Factory calls that may block (Create, Test,
// Destroy) run on goroutines of their own and report back through the
// keeper's inbox, so the keeper never waits on one.
//
// This file holds its loop and its messages; what it does with them is in
// create.go (creating and backing off), housekeeping.go (eviction,
// lifetime, tests, suspected leaks), destroy.go, reload.go and close.go.

// A msgKind says what a message to the keeper reports or asks.
type msgKind uint8

const (
	msgDemand     msgKind = iota // takers are waiting; create if there is room
	msgWarm                      // TryAcquire found nothing; create one if there is room
	msgCreated                   // a create returned
	msgTested                    // a test returned within TestTimeout
	msgTestEnded                 // a test that outlived TestTimeout returned at last
	msgRetire                    // destroy the object of a reserved slot
	msgRetireIdle                // a doomed object was made idle: retire it if it still is
	msgDestroyed                 // a Destroy returned
	msgHijacked                  // Lease.Hijack took a reserved slot's object: free the slot
	msgLeak                      // a lease's ticket was collected
	msgSweep                     // an object may have gone idle after Close swept
	msgReload                    // Reload: retire every object; close reply when idle ones are
	msgClose                     // Close began
	msgAbandon                   // Close's context ended: stop now
)

// A message is what the keeper's inbox carries: an event, and what the
// keeper needs to act on it.
type message struct {
	kind     msgKind
	idx      int32
	gen      uint32 // ticket generation, for msgLeak
	op       uint64 // create id, for msgCreated
	obj      any    // the new object, for msgCreated
	err      error
	timedOut bool
	cause    destroyCause
	reply    chan struct{} // closed when a msgReload is done
}

// A keeper is the state of a pool's lifecycle goroutine, touched by no other
// goroutine.
type keeper[T any] struct {
	p *Pool[T]

	free     []int32 // indexes of free slots
	alive    int     // objects in slots, plus creates in flight
	creating int
	creates  map[uint64]*createOp
	nextOp   uint64
	failures int    // consecutive rounds of failed creates
	round    uint64 // counts the rounds of failed creates; see createFailed
	retryAt  time.Time
	warm     bool // TryAcquire asked for an object
	gen      uint64
	closing  bool

	baseCtx  context.Context // parent of create and test contexts; canceled by Close
	cancel   context.CancelFunc
	now      time.Time
	tick     time.Duration      // housekeeping period
	testable bool               // ValidationInterval is set and the factory has a Test
	tests    map[int32]*testRun // by slot: the tests in flight, whose deadlines the keeper enforces
	nextRun  time.Time
	timer    *time.Timer
}

// newKeeper returns the keeper of p, with every slot free; New starts its
// run.
func newKeeper[T any](p *Pool[T]) *keeper[T] {
	k := &keeper[T]{
		p:       p,
		free:    make([]int32, 0, len(p.slots)),
		creates: make(map[uint64]*createOp),
		tests:   make(map[int32]*testRun),
		tick:    housekeepingPeriod(p.cfg),
	}
	k.testable = p.cfg.ValidationInterval > 0 && p.tester != nil
	for i := len(p.slots) - 1; i >= 0; i-- {
		k.free = append(k.free, int32(i))
	}
	k.baseCtx, k.cancel = context.WithCancel(context.Background())
	return k
}

// run is the keeper's loop: it wakes for messages and for its timer, acts on
// what came, sweeps the slots when housekeeping is due, starts the creates
// that takers and MinIdle call for, and returns once Close is done or has
// given up.
func (k *keeper[T]) run() {
	p := k.p
	defer close(p.done)
	k.timer = time.NewTimer(time.Hour)
	k.timer.Stop()
	defer k.timer.Stop()
	defer k.cancel()
	k.now = time.Now()
	k.nextRun = k.now.Add(k.tick)
	k.maintain()
	for {
		k.arm()
		select {
		case <-p.inbox.wake:
		case <-k.timer.C:
		}
		k.now = time.Now()
		msgs := p.inbox.take()
		for i, m := range msgs {
			if m.kind == msgAbandon {
				k.abandon(m.err, msgs[i+1:])
				return
			}
			k.handle(m)
		}
		k.expireCreates()
		k.expireTests()
		if !k.now.Before(k.nextRun) {
			k.housekeep()
			k.nextRun = k.now.Add(k.tick)
		}
		k.maintain()
		if k.drained() {
			p.fold()
			p.inbox.close()
			return
		}
	}
}

// arm sets the timer for the next thing the keeper must do unprompted: a
// housekeeping sweep while objects are alive, a create after backoff, the
// deadline of a create or a test. The deadlines are the keeper's rather
// than timers of their own, so that no goroutine a timer starts can outlive
// Close.
func (k *keeper[T]) arm() {
	var next time.Time
	if k.alive > 0 || k.p.cfg.MinIdle > 0 || k.p.cfg.MinObjects > 0 {
		next = k.nextRun
	}
	if k.failures > 0 && k.retryAt.After(k.now) {
		next = sooner(next, k.retryAt)
	}
	next = sooner(next, k.createDeadline())
	next = sooner(next, k.testDeadline())
	if next.IsZero() {
		k.timer.Stop()
		return
	}
	k.timer.Reset(max(next.Sub(k.now), 0))
}

// handle acts on one message.
func (k *keeper[T]) handle(m message) {
	p := k.p
	switch m.kind {
	case msgDemand:
		p.demand.Store(false)
	case msgWarm:
		k.warm = true
	case msgCreated:
		k.created(m)
	case msgTested:
		k.tested(m)
	case msgTestEnded:
		// Nothing to do but see whether Close is done.
	case msgRetire:
		k.destroy(m.idx, m.cause)
	case msgRetireIdle:
		s := &p.slots[m.idx]
		if cause, ok := s.doom(); ok && p.reserveIdle(s, s.load()) {
			k.destroy(m.idx, cause)
		}
	case msgDestroyed, msgHijacked:
		k.destroyed(m.idx)
	case msgLeak:
		if s, ok := p.reclaim(leakNote{idx: m.idx, gen: m.gen}); ok {
			k.destroy(s.idx, causeLeak)
		}
	case msgSweep:
		if k.closing {
			k.retireIdle(causeClose)
		}
	case msgReload:
		k.reload()
		close(m.reply)
	case msgClose:
		k.close()
	}
}

// sooner returns the earlier of a and b, the zero time standing for none.
func sooner(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
