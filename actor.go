package actorpool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"
)

// The actor is the one goroutine that changes a pool's lifecycle state:
// which slots are free, how many objects are alive and being created, the
// create backoff, the reload generation, closing. That state lives in a
// lifecycle value that no other goroutine touches, so it needs no lock.
// Factory calls that may block (Create, Test, Destroy) run on goroutines of
// their own and report back through the mailbox, so the actor never waits
// on one.

type msgKind uint8

const (
	msgDemand        msgKind = iota // takers are waiting; create if there is room
	msgWarm                         // TryAcquire found nothing; create one if there is room
	msgCreated                      // a create returned
	msgCreateTimeout                // a create outlived CreateTimeout
	msgTested                       // a test returned within TestTimeout
	msgTestTimeout                  // a test outlived TestTimeout: destroy its object
	msgTestEnded                    // a test that outlived TestTimeout returned at last
	msgRetire                       // destroy the object of a reserved slot
	msgDestroyed                    // a Destroy returned
	msgLeak                         // a lease's ticket was collected
	msgSweep                        // an object may have gone idle after Close swept
	msgReload
	msgClose
	msgAbandon // Close's context ended: stop now
)

type message struct {
	kind     msgKind
	idx      int32
	gen      uint32 // ticket generation, for msgLeak
	op       uint64 // create id, for msgCreated and msgCreateTimeout
	obj      any    // the new object, for msgCreated
	err      error
	timedOut bool
	cause    destroyCause
	reply    chan struct{}
}

// Create backoff after consecutive rounds of failed creates: 10ms, 20ms,
// 40ms, 80ms, then 100ms. While backing off the actor has at most one create
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

// lifecycle is the actor's private state.
type lifecycle[T any] struct {
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

	baseCtx context.Context // parent of create and test contexts; canceled by Close
	cancel  context.CancelFunc
	now     time.Time
	tick    time.Duration // housekeeping period, 0 when nothing needs it
	nextRun time.Time
	timer   *time.Timer
}

type createOp struct {
	gen      uint64
	round    uint64 // lifecycle.round when it started
	refill   bool
	timedOut bool
}

func newLifecycle[T any](p *Pool[T]) *lifecycle[T] {
	a := &lifecycle[T]{
		p:       p,
		free:    make([]int32, 0, len(p.slots)),
		creates: make(map[uint64]*createOp),
		tick:    housekeepingPeriod(p.cfg),
	}
	for i := len(p.slots) - 1; i >= 0; i-- {
		a.free = append(a.free, int32(i))
	}
	a.baseCtx, a.cancel = context.WithCancel(context.Background())
	return a
}

// housekeepingPeriod is how often the actor sweeps the slots: often enough
// that idle time, lifetime, validation and leak thresholds are enforced
// within a quarter of themselves, and at least once a second so that the
// coarse clock stays fresh and the acquire count is folded.
func housekeepingPeriod(c Config) time.Duration {
	tick := time.Second
	for _, d := range []time.Duration{c.MaxIdleTime, c.MaxLifetime, c.ValidationInterval, c.LeakThreshold} {
		if d > 0 && d/4 < tick {
			tick = d / 4
		}
	}
	return max(tick, time.Millisecond)
}

func (a *lifecycle[T]) run() {
	p := a.p
	defer close(p.done)
	a.timer = time.NewTimer(time.Hour)
	a.timer.Stop()
	defer a.timer.Stop()
	defer a.cancel()
	a.now = time.Now()
	a.nextRun = a.now.Add(a.tick)
	a.maintain()
	for {
		a.arm()
		select {
		case <-p.mbox.wake:
		case <-a.timer.C:
		}
		a.now = time.Now()
		msgs := p.mbox.take()
		for i, m := range msgs {
			if m.kind == msgAbandon {
				a.abandon(m.err, msgs[i+1:])
				return
			}
			a.handle(m)
		}
		if !a.now.Before(a.nextRun) {
			a.housekeep()
			a.nextRun = a.now.Add(a.tick)
		}
		a.maintain()
		if a.closing && a.alive == 0 && p.testing.Load() == 0 {
			p.fold()
			p.mbox.close()
			return
		}
	}
}

// arm sets the timer for the next thing the actor must do unprompted: a
// housekeeping sweep while objects are alive, a create after backoff.
func (a *lifecycle[T]) arm() {
	var next time.Time
	if a.alive > 0 || a.p.cfg.MinIdle > 0 {
		next = a.nextRun
	}
	if a.failures > 0 && a.retryAt.After(a.now) && (next.IsZero() || a.retryAt.Before(next)) {
		next = a.retryAt
	}
	if next.IsZero() {
		a.timer.Stop()
		return
	}
	a.timer.Reset(max(next.Sub(a.now), 0))
}

func (a *lifecycle[T]) handle(m message) {
	p := a.p
	switch m.kind {
	case msgDemand:
		p.demand.Store(false)
	case msgWarm:
		a.warm = true
	case msgCreated:
		a.created(m)
	case msgCreateTimeout:
		a.createTimedOut(m.op)
	case msgTested:
		a.tested(m)
	case msgTestTimeout:
		a.destroy(m.idx, causeTestTimeout)
	case msgTestEnded:
		// Nothing to do but see whether Close is done.
	case msgRetire:
		a.destroy(m.idx, m.cause)
	case msgDestroyed:
		a.destroyed(m.idx)
	case msgLeak:
		if s, ok := p.reclaim(leakNote{idx: m.idx, gen: m.gen}); ok {
			a.destroy(s.idx, causeLeak)
		}
	case msgSweep:
		if a.closing {
			a.retireIdle(causeClose)
		}
	case msgReload:
		a.reload()
		close(m.reply)
	case msgClose:
		a.close()
	}
}

// maintain starts the creates that waiting takers and MinIdle call for,
// within MaxObjects and the backoff.
func (a *lifecycle[T]) maintain() {
	p := a.p
	if a.closing {
		return
	}
	room := p.cfg.MaxObjects - a.alive
	if room <= 0 {
		a.warm = false
		return
	}
	// Creates that timed out or predate a Reload still hold room, but
	// they neither serve a taker nor count as a probe.
	pending, refilling := a.pendingCreates()
	backoff := a.failures > 0
	if backoff && (a.now.Before(a.retryAt) || pending > 0) {
		return
	}
	need := int(p.waiting.Load()) - pending
	if a.warm && pending == 0 {
		need = max(need, 1)
	}
	a.warm = false
	if backoff {
		need = min(need, 1)
	}
	for range min(need, room) {
		a.startCreate(false)
		room--
		pending++
	}
	if p.cfg.MinIdle > 0 && refilling == 0 && room > 0 && !(backoff && pending > 0) {
		if p.census().idle+pending < p.cfg.MinIdle {
			a.startCreate(true)
		}
	}
}

// pendingCreates counts the creates in flight that will bring a usable
// object, and those of them that are for MinIdle: not timed out (their take
// has failed already), and not started before a Reload (their object will
// be destroyed).
func (a *lifecycle[T]) pendingCreates() (all, refill int) {
	for _, op := range a.creates {
		if !op.timedOut && op.gen == a.gen {
			all++
			if op.refill {
				refill++
			}
		}
	}
	return all, refill
}

func (a *lifecycle[T]) startCreate(refill bool) {
	p := a.p
	a.nextOp++
	id := a.nextOp
	a.creates[id] = &createOp{gen: a.gen, round: a.round, refill: refill}
	a.alive++
	a.creating++
	p.total.Store(int32(a.alive))
	p.stats.creating.Store(int32(a.creating))
	ctx, cancel := context.WithTimeout(a.baseCtx, p.cfg.CreateTimeout)
	go p.create(ctx, cancel, id)
}

// create runs Factory.Create on its own goroutine and reports the result.
// A create that outlives CreateTimeout is reported at the deadline, so the
// take waiting for it fails on time even if Create ignores its context.
func (p *Pool[T]) create(ctx context.Context, cancel context.CancelFunc, id uint64) {
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			p.post(message{kind: msgCreateTimeout, op: id})
		}
	})
	start := time.Now()
	obj, err := p.createObj(ctx)
	if o := p.cfg.Observer; o != nil {
		o.ObserveCreate(time.Since(start), err)
	}
	stop()
	timedOut := err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
	cancel()
	if err == nil && p.validate {
		// A fresh object that fails validation is destroyed here, not
		// leaked, and the take waiting for it gets the reason.
		if verr := p.validateObj(obj); verr != nil {
			p.destroyObj(obj)
			p.stats.destroyed[causeInvalid].Add(1)
			err = fmt.Errorf("new object failed Validate: %w", verr)
		}
	}
	if !p.post(message{kind: msgCreated, op: id, obj: obj, err: err, timedOut: timedOut}) {
		p.createdLate(obj, err)
	}
}

// createdLate disposes of what a create brought back after the actor
// stopped: Close gave up, so nothing may be kept.
func (p *Pool[T]) createdLate(obj T, err error) {
	if err == nil {
		p.destroyObj(obj)
		p.stats.destroyed[causeClose].Add(1)
	}
	p.cameBack()
}

func (p *Pool[T]) createObj(ctx context.Context) (obj T, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = p.panicked("Create", v)
		}
	}()
	return p.factory.Create(ctx)
}

func (a *lifecycle[T]) created(m message) {
	p := a.p
	op := a.creates[m.op]
	delete(a.creates, m.op)
	a.creating--
	p.stats.creating.Store(int32(a.creating))
	if m.err != nil {
		a.alive--
		p.total.Store(int32(a.alive))
		if op.timedOut {
			return // counted and reported at the deadline
		}
		if m.timedOut {
			a.createFailed(op, &CreateError{Err: m.err, Timeout: p.cfg.CreateTimeout}, true)
			return
		}
		a.createFailed(op, &CreateError{Err: m.err}, false)
		return
	}
	a.failures = 0
	p.createErr.Store(nil)
	p.stats.created.Add(1)
	s := a.install(m.obj.(T), op.gen)
	switch {
	case a.closing:
		a.destroy(s.idx, causeClose)
	case op.gen != a.gen:
		a.destroy(s.idx, causeReload)
	default:
		a.putInService(s)
	}
}

func (a *lifecycle[T]) createTimedOut(id uint64) {
	op, ok := a.creates[id]
	if !ok || op.timedOut {
		return
	}
	op.timedOut = true
	a.createFailed(op, &CreateError{Err: context.DeadlineExceeded, Timeout: a.p.cfg.CreateTimeout}, true)
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
func (a *lifecycle[T]) createFailed(op *createOp, err *CreateError, timedOut bool) {
	p := a.p
	p.stats.createErrors.Add(1)
	if timedOut {
		p.stats.createTimeouts.Add(1)
	}
	p.createErr.Store(err)
	if op.round == a.round {
		a.round++
		a.failures++
		a.retryAt = a.now.Add(backoff(a.failures))
	}
	p.log.Warn("actorpool: create failed", "err", err.Err, "failures", a.failures, "retry_in", max(a.retryAt.Sub(a.now), 0))
	if a.closing {
		return
	}
	p.mu.Lock()
	p.failLocked(err)
	p.mu.Unlock()
}

// install puts a new object in a free slot, reserved for the actor.
func (a *lifecycle[T]) install(obj T, gen uint64) *slot {
	p := a.p
	idx := a.free[len(a.free)-1]
	a.free = a.free[:len(a.free)-1]
	s := &p.slots[idx]
	p.objs[idx] = obj
	s.gen = gen
	s.doomed.Store(0)
	s.createdAt = a.now.UnixNano()
	s.expiresAt = 0
	if l := p.cfg.MaxLifetime; l > 0 {
		s.expiresAt = a.now.Add(l - rand.N(l/10+1)).UnixNano()
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

// putInService hands a reserved slot's object to the oldest waiter, or
// lists it idle.
func (a *lifecycle[T]) putInService(s *slot) {
	p := a.p
	seq := s.load().seq()
	p.mu.Lock()
	w, _ := p.serveLocked(s, kindReserved, seq)
	if w == nil {
		// Listed under the lock, so that no waiter can queue in between
		// unseen.
		p.list(s, kindReserved, seq)
	}
	p.mu.Unlock()
	if w != nil {
		w.ch <- handoff{idx: s.idx}
	}
}

// destroy destroys the object of a reserved slot on a goroutine of its own.
func (a *lifecycle[T]) destroy(idx int32, cause destroyCause) {
	p := a.p
	s := &p.slots[idx]
	obj := p.objs[s.idx]
	go func() {
		p.destroyObj(obj)
		p.stats.destroyed[cause].Add(1)
		if !p.post(message{kind: msgDestroyed, idx: idx}) {
			p.cameBack()
		}
	}()
}

// destroyed frees the slot of an object whose Destroy returned.
func (a *lifecycle[T]) destroyed(idx int32) {
	p := a.p
	s := &p.slots[idx]
	var zero T
	p.objs[idx] = zero
	s.dropTicket()
	s.trace.Store(nil)
	for {
		st := s.load()
		if st.kind() != kindReserved {
			panic("actorpool: freeing a slot that is not reserved")
		}
		if s.cas(st, st.with(kindFree)) {
			break
		}
	}
	a.free = append(a.free, idx)
	a.alive--
	p.total.Store(int32(a.alive))
}

// reload starts a new generation: every object alive is doomed, idle ones
// are destroyed now, the rest when they come back, and creates in flight
// when they return.
func (a *lifecycle[T]) reload() {
	a.gen++
	for i := range a.p.slots {
		s := &a.p.slots[i]
		if s.load().kind() != kindFree {
			s.doomed.Store(uint32(causeReload) + 1)
		}
	}
	a.retireIdle(causeReload)
}

// retireIdle destroys every idle object: on Close, and on Reload.
func (a *lifecycle[T]) retireIdle(cause destroyCause) {
	p := a.p
	for i := range p.slots {
		s := &p.slots[i]
		st := s.load()
		if cause == causeReload && s.gen == a.gen {
			continue
		}
		if p.reserveIdle(s, st) {
			a.destroy(s.idx, cause)
		}
	}
}

// reserveIdle moves an idle or parked object, seen in state st, to
// reserved for the actor, and reports whether it did.
func (p *core) reserveIdle(s *slot, st state) bool {
	switch st.kind() {
	case kindIdle:
		_, ok := s.move(kindIdle, st.seq(), kindReserved)
		return ok
	case kindInUse:
		return p.unpark(s, st.seq())
	}
	return false
}

// housekeep sweeps the slots: it folds the acquire count, destroys idle
// objects past MaxIdleTime or MaxLifetime, starts tests of objects idle
// past ValidationInterval, and logs leases held past LeakThreshold.
func (a *lifecycle[T]) housekeep() {
	p := a.p
	p.fold()
	if a.closing {
		return
	}
	cfg := &p.cfg
	now := a.now.UnixNano()
	idle := p.census().idle
	testable := cfg.ValidationInterval > 0 && hasTest(p.factory)
	for i := range p.slots {
		s := &p.slots[i]
		st := s.load()
		k := st.kind()
		if k == kindInUse && p.isParked(s.idx, st.seq()) {
			k = kindIdle
		}
		if k == kindReserved {
			// Under test or being destroyed. A test does not reset the
			// object's idle clock, so its seen state is left as it was.
			continue
		}
		if k != s.seenKind || st.seq() != s.seenSeq {
			s.seenKind, s.seenSeq, s.seenAt = k, st.seq(), now
		}
		switch k {
		case kindIdle:
			var cause destroyCause
			switch {
			case s.gen != a.gen:
				cause = causeReload
			case s.expiresAt != 0 && now >= s.expiresAt:
				cause = causeLifetime
			case cfg.MaxIdleTime > 0 && now-s.seenAt >= int64(cfg.MaxIdleTime) && idle > cfg.MinIdle:
				cause = causeIdle
			default:
				if testable && now-max(s.seenAt, s.testedAt) >= int64(cfg.ValidationInterval) && p.reserveIdle(s, st) {
					a.test(s)
				}
				continue
			}
			if p.reserveIdle(s, st) {
				idle--
				a.destroy(s.idx, cause)
			}
		case kindInUse:
			if s.expiresAt != 0 && now >= s.expiresAt {
				// Retired by its holder when it comes back.
				s.doomed.CompareAndSwap(0, uint32(causeLifetime)+1)
			}
			if cfg.LeakThreshold > 0 && now-s.seenAt >= int64(cfg.LeakThreshold) && s.leakLogged != st.seq()+1 {
				s.leakLogged = st.seq() + 1
				p.stats.suspected.Add(1)
				args := []any{"slot", s.idx, "held_for", time.Duration(now - s.seenAt).Round(time.Millisecond)}
				if tr := s.trace.Load(); tr != nil {
					args = append(args, "acquired", formatTrace(tr))
				}
				p.log.Warn("actorpool: lease held past LeakThreshold; suspected leak", args...)
			}
		}
	}
}

// test runs Factory.Test on a reserved slot's object on its own goroutine.
//
// The object is the test's until Test returns or TestTimeout passes,
// whichever comes first. At the deadline it is destroyed even if Test
// ignores its context (destroying it is what unblocks a test stuck in
// I/O), its slot and its place in MaxObjects are freed, and what Test
// returns later is ignored. Until Test returns, its goroutine is counted in
// p.testing, so that Close waits for it.
func (a *lifecycle[T]) test(s *slot) {
	p := a.p
	obj := p.objs[s.idx]
	ctx, cancel := context.WithTimeout(a.baseCtx, p.cfg.TestTimeout)
	var claimed atomic.Bool // by Test returning or by the deadline: the object's next owner
	p.testing.Add(1)
	// A timer of its own rather than the context's: Close cancels the
	// context, and a test that ignores it is still bounded by TestTimeout.
	deadline := time.AfterFunc(p.cfg.TestTimeout, func() {
		if claimed.CompareAndSwap(false, true) {
			p.testTimedOut(s)
		}
	})
	go func() {
		start := time.Now()
		err := p.testObj(ctx, obj)
		if o := p.cfg.Observer; o != nil {
			o.ObserveTest(time.Since(start), err)
		}
		p.stats.tests.Add(1)
		deadline.Stop()
		timedOut := err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
		cancel()
		mine := claimed.CompareAndSwap(false, true)
		p.testing.Add(-1)
		if !mine {
			// The deadline came first: the object is destroyed, or being
			// destroyed, and its slot may hold another object by now.
			p.post(message{kind: msgTestEnded})
			return
		}
		if !p.post(message{kind: msgTested, idx: s.idx, err: err, timedOut: timedOut}) {
			p.destroyInline(s, causeClose)
		}
	}()
}

// testTimedOut has the object of a test that outlived TestTimeout
// destroyed: by the actor, or here once the actor has stopped.
func (p *core) testTimedOut(s *slot) {
	p.log.Warn("actorpool: test outlived TestTimeout; destroying the object", "slot", s.idx, "timeout", p.cfg.TestTimeout)
	if !p.post(message{kind: msgTestTimeout, idx: s.idx}) {
		p.destroyInline(s, causeTestTimeout)
	}
}

func (p *Pool[T]) testObj(ctx context.Context, obj T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = p.panicked("Test", v)
		}
	}()
	return p.factory.Test(ctx, obj)
}

func (a *lifecycle[T]) tested(m message) {
	p := a.p
	s := &p.slots[m.idx]
	switch {
	case m.timedOut:
		p.log.Warn("actorpool: test timed out; destroying the object", "timeout", p.cfg.TestTimeout, "err", m.err)
		a.destroy(m.idx, causeTestTimeout)
	case m.err != nil:
		p.log.Warn("actorpool: test failed; destroying the object", "err", m.err)
		a.destroy(m.idx, causeTestFailed)
	case a.closing:
		a.destroy(m.idx, causeClose)
	case s.doomed.Load() != 0:
		a.destroy(m.idx, destroyCause(s.doomed.Load()-1))
	case s.expiresAt != 0 && a.now.UnixNano() >= s.expiresAt:
		a.destroy(m.idx, causeLifetime)
	default:
		s.testedAt = a.now.UnixNano()
		a.putInService(s)
	}
}

// close begins Close: no new waiters, waiters fail, creates and tests are
// canceled, idle objects are destroyed. Objects in use are destroyed as
// they come back, and the actor returns when none is left.
func (a *lifecycle[T]) close() {
	p := a.p
	a.closing = true
	a.cancel()
	p.mu.Lock()
	p.qclosed = true
	for p.failLocked(ErrClosed) {
	}
	p.mu.Unlock()
	a.retireIdle(causeClose)
}

// abandon stops the actor before every object is back, because Close's
// context ended. What is still out is destroyed by whoever brings it back:
// the holder on Release or Destroy, the create or test goroutine when it
// returns, the goroutine of a destroy in flight, the test deadline, the
// leak cleanup. From here on p.total counts what is still out, and each of
// them counts its object off (cameBack), so that a later Close reports the
// truth at the time of its call.
//
// The messages after msgAbandon in its batch (rest) and those left in the
// mailbox are what came back meanwhile; abandon disposes of them.
func (a *lifecycle[T]) abandon(ctxErr error, rest []message) {
	p := a.p
	if !a.closing {
		a.close()
	}
	p.abandonErr = ctxErr
	// p.total is a.alive now, as the actor stores every change of it; no
	// one counts off before the mailbox is closed.
	for _, m := range slices.Concat(rest, p.mbox.close()) {
		switch m.kind {
		case msgRetire:
			p.destroyInline(&p.slots[m.idx], m.cause)
		case msgCreated:
			obj, _ := m.obj.(T) // nil when a create of an interface type failed
			p.createdLate(obj, m.err)
		case msgTested:
			p.destroyInline(&p.slots[m.idx], causeClose)
		case msgTestTimeout:
			p.destroyInline(&p.slots[m.idx], causeTestTimeout)
		case msgDestroyed:
			p.cameBack()
		case msgLeak:
			if s, ok := p.reclaim(leakNote{idx: m.idx, gen: m.gen}); ok {
				p.destroyInline(s, causeLeak)
			}
		}
	}
	// An object made idle after Close swept may have had its sweep
	// message in the mailbox just closed.
	p.sweepInline()
	p.fold()
}
