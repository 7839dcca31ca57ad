package actorpool

// Creating objects and backing off. The keeper starts a create for each
// waiting taker it has room for, and for MinIdle (maintain); each runs on a
// goroutine of its own (create) and reports back; a new object is
// installed in a free slot and put in service (created), and a failed
// create fails the oldest waiting take and backs the keeper off
// (createFailed).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Create backoff after consecutive rounds of failed creates: 10ms, 20ms,
// 40ms, 80ms, then 100ms. While backing off the keeper has at most one create
// in flight, a probe, so a pool whose server is down tries about ten times a
// second, and tries again at most 100ms after the server is back. Once a
// probe succeeds, the backoff ends and the waiters get creates at once, up
// to MaxObjects.
const (
	backoffMin = 10 * time.Millisecond
	backoffMax = 100 * time.Millisecond
)

// backoff is the pause after the nth consecutive round of failed creates.
func backoff(n int) time.Duration {
	return min(backoffMin<<min(n-1, 20), backoffMax)
}

// A createOp is a create in flight, as the keeper tracks it.
type createOp struct {
	gen      uint64    // keeper.gen when it started: an older one is retired
	round    uint64    // keeper.round when it started; see createFailed
	deadline time.Time // its context's: CreateTimeout after it started
	refill   bool      // started for MinIdle rather than for a waiting take
	timedOut bool      // outlived CreateTimeout: its take has failed already
}

// maintain starts the creates that waiting takers and MinIdle call for,
// within MaxObjects and the backoff.
func (k *keeper[T]) maintain() {
	p := k.p
	if k.closing {
		return
	}
	room := p.cfg.MaxObjects - k.alive
	if room <= 0 {
		k.warm = false
		return
	}
	// Creates that timed out or predate a Reload still hold room, but
	// they neither serve a taker nor count as a probe.
	pending, refilling := k.pendingCreates()
	backoff := k.failures > 0
	if backoff && (k.now.Before(k.retryAt) || pending > 0) {
		return
	}
	need := int(p.waiting.Load()) - pending
	if k.warm && pending == 0 {
		need = max(need, 1)
	}
	k.warm = false
	if backoff {
		need = min(need, 1)
	}
	for range min(need, room) {
		k.startCreate(false)
		room--
		pending++
	}
	if refilling == 0 && room > 0 && !(backoff && pending > 0) && k.belowMinimum(pending) {
		k.startCreate(true)
	}
}

// belowMinimum reports whether the pool keeps fewer objects than MinIdle
// idle or MinObjects alive, counting pending creates as done.
func (k *keeper[T]) belowMinimum(pending int) bool {
	cfg := &k.p.cfg
	if cfg.MinObjects == 0 && cfg.MinIdle == 0 {
		return false
	}
	c := k.p.census()
	// Objects being destroyed are still counted alive, holding their
	// place in MaxObjects, but they are not kept. Objects under test go
	// back to idle when it passes: counting them out would create a
	// replacement for each at every validation round.
	testing := c.reserved - c.leaving
	return k.alive-c.leaving < cfg.MinObjects || c.idle+testing+pending < cfg.MinIdle
}

// pendingCreates counts the creates in flight that will bring a usable
// object, and those of them that are for MinIdle: not timed out (their take
// has failed already), and not started before a Reload (their object will
// be destroyed).
func (k *keeper[T]) pendingCreates() (all, refill int) {
	for _, op := range k.creates {
		if !op.timedOut && op.gen == k.gen {
			all++
			if op.refill {
				refill++
			}
		}
	}
	return all, refill
}

// startCreate starts a create on a goroutine of its own, counting it alive
// so that MaxObjects holds while it runs.
func (k *keeper[T]) startCreate(refill bool) {
	p := k.p
	ctx, cancel := context.WithTimeout(k.baseCtx, p.cfg.CreateTimeout)
	deadline, _ := ctx.Deadline()
	k.nextOp++
	id := k.nextOp
	k.creates[id] = &createOp{gen: k.gen, round: k.round, deadline: deadline, refill: refill}
	k.alive++
	k.creating++
	p.total.Store(int32(k.alive))
	p.stats.creating.Store(int32(k.creating))
	p.stats.createAttempts.Add(1)
	go p.create(ctx, cancel, id)
}

// create runs Factory.Create on its own goroutine and reports the result.
// A create that outlives CreateTimeout is failed by the keeper at the
// deadline (expireCreates), not by a timer of its own, whose goroutine
// nothing would wait for.
func (p *Pool[T]) create(ctx context.Context, cancel context.CancelFunc, id uint64) {
	start := time.Now()
	obj, err := p.createObj(ctx)
	if o := p.cfg.Observer; o != nil {
		o.ObserveCreate(time.Since(start), err)
	}
	timedOut := err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
	cancel()
	if err == nil && p.validate {
		// A fresh object that fails validation is destroyed here, not
		// leaked, and the take waiting for it gets the reason.
		if verr := p.validateObj(obj); verr != nil {
			p.stats.created.Add(1) // made, then destroyed: counted both ways
			p.destroyObj(obj)
			p.stats.destroyed[causeInvalid].Add(1)
			err = fmt.Errorf("new object failed Validate: %w", verr)
		}
	}
	if !p.post(message{kind: msgCreated, op: id, obj: obj, err: err, timedOut: timedOut}) {
		p.createdLate(obj, err)
	}
}

// created takes in what a create brought: a new object, installed and put
// in service (or retired, if Close or Reload came meanwhile), or an error.
func (k *keeper[T]) created(m message) {
	p := k.p
	op := k.creates[m.op]
	delete(k.creates, m.op)
	k.creating--
	p.stats.creating.Store(int32(k.creating))
	if m.err != nil {
		k.alive--
		p.total.Store(int32(k.alive))
		if op.timedOut {
			return // counted and reported at the deadline
		}
		if m.timedOut {
			k.createFailed(op, &CreateError{Err: m.err, Timeout: p.cfg.CreateTimeout}, true)
			return
		}
		k.createFailed(op, &CreateError{Err: m.err}, false)
		return
	}
	k.failures = 0
	p.createErr.Store(nil)
	p.stats.created.Add(1)
	obj, _ := m.obj.(T) // nil when Create of an interface type returned a nil one
	s := k.install(obj, op.gen)
	switch {
	case k.closing:
		k.destroy(s.idx, causeClose)
	case op.gen != k.gen:
		k.destroy(s.idx, causeReload)
	default:
		k.putInService(s)
	}
}

// install puts a new object in a free slot, reserved for the keeper.
func (k *keeper[T]) install(obj T, gen uint64) *slot {
	p := k.p
	idx := k.free[len(k.free)-1]
	k.free = k.free[:len(k.free)-1]
	s := &p.slots[idx]
	p.objs[idx] = obj
	s.gen = gen
	s.doomed.Store(0)
	s.createdAt = k.now.UnixNano()
	s.expiresAt = 0
	if l := p.cfg.MaxLifetime; l > 0 {
		// Drawn as a uint64, since LifetimeJitter+1 overflows a Duration
		// when LifetimeJitter is math.MaxInt64.
		life := int64(l) - int64(rand.Uint64N(uint64(p.cfg.LifetimeJitter)+1))
		if s.createdAt <= math.MaxInt64-life {
			s.expiresAt = s.createdAt + life
		} // else past what a clock reading holds (year 2262): never
	}
	s.testedAt = s.createdAt
	// The slot's idle clock starts now, whatever it saw of the object
	// that had it before.
	s.seenKind, s.seenSeq, s.seenAt = kindIdle, s.load().seq(), s.createdAt
	s.trace.Store(nil)
	p.newTicket(s)
	for {
		st := s.load()
		if st.kind() != kindFree {
			panic("actorpool: installing into a slot that is not free")
		}
		if s.cas(st, st.with(kindReserved)) {
			return s
		}
	}
}

// expireCreates fails the creates that have outlived CreateTimeout without
// returning, so that the takes waiting for them fail on time even if Create
// ignores its context. After Close began it leaves them be: Close has
// canceled them, and their takes have failed already.
func (k *keeper[T]) expireCreates() {
	if k.closing {
		return
	}
	for _, op := range k.creates {
		if !op.timedOut && !k.now.Before(op.deadline) {
			op.timedOut = true
			k.createFailed(op, &CreateError{Err: context.DeadlineExceeded, Timeout: k.p.cfg.CreateTimeout}, true)
		}
	}
}

// createDeadline returns the earliest deadline that expireCreates has yet
// to enforce, or the zero time if there is none.
func (k *keeper[T]) createDeadline() time.Time {
	var next time.Time
	if k.closing {
		return next
	}
	for _, op := range k.creates {
		if !op.timedOut {
			next = sooner(next, op.deadline)
		}
	}
	return next
}

// createFailed counts a failed create, backs off, and fails the oldest
// waiting take with the error, as database/sql does: the take that the
// create was for, or the one that has waited longest for any. Until a
// create succeeds, every take that ends without an object wraps the error
// (see core.createErr).
//
// Creates that were in flight together when the server went away fail
// together: only the first failure of a round, that of a create started
// since the last counted failure, lengthens the backoff, so that an outage
// that fails sixteen creates at once backs off 10ms, not to the cap.
func (k *keeper[T]) createFailed(op *createOp, err *CreateError, timedOut bool) {
	p := k.p
	p.stats.createErrors.Add(1)
	if timedOut {
		p.stats.createTimeouts.Add(1)
	}
	p.createErr.Store(err)
	if op.round == k.round {
		k.round++
		k.failures++
		k.retryAt = k.now.Add(backoff(k.failures))
	}
	p.log.Warn("actorpool: create failed", "err", err.Err, "failures", k.failures, "retry_in", max(k.retryAt.Sub(k.now), 0))
	if k.closing {
		return
	}
	p.mu.Lock()
	p.failLocked(err)
	p.mu.Unlock()
}
