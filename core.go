package actorpool

import (
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// core is the part of a pool that does not depend on the object type: the
// slots' states, the idle list, the parked word, the wait queue, the
// counters, the actor's mailbox. Keeping the hot path of taking and giving
// back in methods without a type parameter lets the compiler inline it;
// Pool[T] adds the objects and the factory around it.
type core struct {
	cfg      Config
	log      *slog.Logger
	validate bool // whether Factory.Validate can fail
	traced   bool // TraceAcquires or Observer: hand-outs record more
	epoch    time.Time
	slots    []slot

	// Typed work the core asks of Pool[T].
	validateSlot func(s *slot) error // Factory.Validate on the slot's object
	destroySlot  func(s *slot)       // Factory.Destroy on the slot's object, now

	closed   atomic.Bool
	starving atomic.Bool // HandoffAfter > 0 and a waiter has waited past it: hand objects straight to waiters
	withUsed atomic.Bool // With has run: from then on Acquire looks for a lease in its context

	_      [64]byte
	parked atomic.Uint64 // the last object given back; see park.go
	stack  idleStack
	queue  idleQueue

	_         [64]byte
	waiting   atomic.Int32 // nwait, readable without the lock
	headSince atomic.Int64 // the oldest waiter's since, readable without the lock
	wakeOut   atomic.Bool  // HandoffAfter > 0: a waiter is awake to compete for an object; wake no other

	mu         sync.Mutex // guards the wait queue
	head, tail *waiter
	woken      *waiter // the waiter woken to compete, if any
	nwait      int
	qclosed    bool // no new waiters: the pool is closing
	asyncTakes sync.WaitGroup
	waiters    waiterCache

	total      atomic.Int32 // objects alive or being created, kept by the actor; once it has abandoned, those still out
	testing    atomic.Int32 // Factory.Test calls running, those past TestTimeout included
	demand     atomic.Bool  // a demand message is on its way to the actor
	mbox       mailbox
	done       chan struct{} // closed when the actor returns
	abandonErr error         // Close's context error if the actor gave up waiting; set before done is closed

	// createErr is the error of the latest create while creates are
	// failing: the actor sets it when a create fails and clears it when
	// one succeeds. Every take that ends without an object meanwhile
	// wraps it, so that the caller learns why none was free.
	createErr atomic.Pointer[CreateError]

	stats counters
}

func (p *core) init(cfg Config) {
	p.cfg = cfg
	p.log = cfg.Logger.With("pool", cfg.Name)
	p.traced = cfg.TraceAcquires || cfg.Observer != nil
	p.epoch = time.Now()
	p.slots = make([]slot, cfg.MaxObjects)
	for i := range p.slots {
		p.slots[i].c = p
		p.slots[i].idx = int32(i)
	}
	p.stack.slots = p.slots
	if cfg.FIFO {
		p.queue.init(cfg.MaxObjects)
	}
	p.mbox.init()
	p.done = make(chan struct{})
}

// takeIdle claims an idle object it can hand out, the parked one first,
// and returns its slot moved to in use with seq, or nil when none is idle.
func (p *core) takeIdle() (*slot, uint32) {
	if s, seq := p.takeParked(); s != nil {
		if _, bad := p.unusable(s); !bad {
			return s, seq
		}
		p.drop(s, seq)
	}
	return p.takeListed()
}

// takeListed claims the first idle object of the idle list that it can hand
// out.
func (p *core) takeListed() (*slot, uint32) {
	for {
		var i int32
		var ok bool
		if p.cfg.FIFO {
			i, ok = p.queue.pop()
		} else {
			i, ok = p.stack.pop()
		}
		if !ok {
			return nil, 0
		}
		s := &p.slots[i]
		got, seq := settle(s)
		if !got {
			continue
		}
		if _, bad := p.unusable(s); !bad {
			return s, seq
		}
		p.drop(s, seq)
	}
}

// drop retires an object a taker claimed and found unusable.
func (p *core) drop(s *slot, seq uint32) {
	cause, _ := p.unusable(s)
	p.stats.unlent.Add(1)
	p.retire(s, seq, kindInUse, cause)
}

// settle resolves a slot index just popped from the idle list: it hands the
// object out to the caller if it is idle, returning the new seq, and
// otherwise clears the listed bit of what is a stale entry (the actor
// reserved or replaced the object after it was listed), so the slot's next
// owner lists it again.
func settle(s *slot) (got bool, seq uint32) {
	for {
		st := s.load()
		if st.kind() == kindIdle {
			nst := st.handedOut() &^ listedBit
			if s.cas(st, nst) {
				return true, nst.seq()
			}
		} else if s.cas(st, st&^listedBit) {
			return false, 0
		}
	}
}

// unusable reports why the object in s, held by the caller, must not be
// handed out or kept. It is small enough to inline; Validate, when the
// factory has one, is a call of its own.
func (p *core) unusable(s *slot) (destroyCause, bool) {
	if c := s.doomed.Load(); c != 0 {
		return destroyCause(c - 1), true
	}
	if p.validate {
		return p.invalid(s)
	}
	return 0, false
}

func (p *core) invalid(s *slot) (destroyCause, bool) {
	return causeInvalid, p.validateSlot(s) != nil
}

// giveBack returns a slot that the caller holds in use with seq: to the
// oldest waiter if there is one, else to the idle objects. It reports false
// if the slot was not the caller's to give: a stale lease.
func (p *core) giveBack(s *slot, seq uint32) bool {
	if p.closed.Load() {
		return p.retire(s, seq, kindInUse, causeClose)
	}
	if cause, bad := p.unusable(s); bad {
		return p.retire(s, seq, kindInUse, cause)
	}
	if p.waiting.Load() > 0 && p.handingOff() {
		p.mu.Lock()
		w, ok := p.serveLocked(s, kindInUse, seq)
		p.mu.Unlock()
		if !ok {
			return false
		}
		if w != nil {
			w.ch <- handoff{idx: s.idx}
			return true
		}
	}
	if p.cfg.FIFO {
		if !p.list(s, kindInUse, seq) {
			return false
		}
	} else {
		p.park(s, seq)
	}
	// A waiter may have queued, or Close begun, between the checks above
	// and the object going idle; each of them looks at the idle objects
	// after its own step, and this looks at them after ours.
	if p.waiting.Load() > 0 {
		if p.handingOff() {
			p.serveIdle()
		} else if !p.wakeOut.Load() {
			p.wakeOne()
		}
	}
	if p.closed.Load() {
		p.sweep()
	}
	return true
}

// handingOff reports whether objects given back go straight to waiters:
// always with strict fairness, and with bounded fairness while a waiter has
// waited past Config.HandoffAfter. Only called while waiters exist.
//
// The giver, not only the waiter, declares a waiter starving: a woken
// waiter may not run for a while, since running goroutines that never
// block keep their processor for up to a scheduler time slice (10 ms), and
// until it runs it cannot say it has waited too long. Reading the clock
// here costs a give-back tens of nanoseconds, and only while takers wait.
func (p *core) handingOff() bool {
	if p.cfg.HandoffAfter == 0 || p.starving.Load() {
		return true
	}
	if p.since()-p.headSince.Load() >= int64(p.cfg.HandoffAfter) {
		p.starving.Store(true)
		return true
	}
	return false
}

// list moves a slot from kind from with seq to idle, and puts its index in
// the idle list unless it is listed already. It reports false if the slot
// was not in kind from with seq.
func (p *core) list(s *slot, from slotKind, seq uint32) bool {
	for {
		st := s.load()
		if st.kind() != from || st.seq() != seq {
			return false
		}
		if !s.cas(st, st.with(kindIdle)|listedBit) {
			continue
		}
		if !st.listed() {
			if p.cfg.FIFO {
				p.queue.push(s.idx)
			} else {
				p.stack.push(s.idx)
			}
		}
		return true
	}
}

// retire takes a slot that the caller holds in kind from with seq out of
// service and has the actor destroy its object. It reports false if the
// slot was not in kind from with seq.
func (p *core) retire(s *slot, seq uint32, from slotKind, cause destroyCause) bool {
	if _, ok := s.move(from, seq, kindReserved); !ok {
		return false
	}
	if !p.post(message{kind: msgRetire, idx: s.idx, cause: cause}) {
		// The actor is gone: Close gave up waiting for this object, so
		// its holder destroys it.
		p.destroyInline(s, cause)
	}
	return true
}

// destroyInline destroys a reserved slot's object on the calling goroutine,
// for objects that come back after the actor has stopped, and counts it
// off.
func (p *core) destroyInline(s *slot, cause destroyCause) {
	p.destroySlot(s)
	p.stats.destroyed[cause].Add(1)
	p.cameBack()
}

// cameBack counts off an object, or a create, that came back after the
// actor abandoned it: what is left in p.total is what Close reports as
// still out.
func (p *core) cameBack() { p.total.Add(-1) }

// sweep has the objects made idle after Close began destroyed: by the
// actor, or here once it has stopped.
func (p *core) sweep() {
	if !p.post(message{kind: msgSweep}) {
		p.sweepInline()
	}
}

// sweepInline destroys idle and parked objects on the calling goroutine,
// once the actor has stopped.
func (p *core) sweepInline() {
	for i := range p.slots {
		s := &p.slots[i]
		if p.reserveIdle(s, s.load()) {
			p.destroyInline(s, causeClose)
		}
	}
}

// lend takes the ticket of a slot just moved to in use, for the lease that
// the caller is about to hand out.
func (p *core) lend(s *slot) *ticket {
	t := s.ticket
	s.ticket = nil
	if p.traced {
		p.record(s)
	}
	return t
}

// record notes where and when a lease was taken, for leak reports and the
// Observer.
func (p *core) record(s *slot) {
	if p.cfg.TraceAcquires {
		pcs := make([]uintptr, 32)
		s.trace.Store(&acquireTrace{pcs: pcs[:runtime.Callers(4, pcs)]})
	}
	if p.cfg.Observer != nil {
		s.leasedAt = p.since()
	}
}

// current reports the slot of a lease that is still in force: its slot is
// in use under the lease's seq, and not parked (given back). t must not be
// nil.
func current(t *ticket, seq uint32) (*slot, bool) {
	s := t.s
	// Parked first, state second: a parked object is claimed (its state
	// changed) before the parked word is replaced, so if it is not parked
	// now, a claim has already shown in its state.
	if s.c.parked.Load() == packParked(s.idx, seq) {
		return s, false
	}
	st := s.load()
	return s, st.kind() == kindInUse && st.seq() == seq
}

// release gives back the object of a lease in force, returning the ticket
// to the slot first.
func (p *core) release(s *slot, t *ticket, seq uint32) bool {
	s.ticket = t
	if p.traced {
		p.observeHold(s)
	}
	return p.giveBack(s, seq)
}

// discard destroys the object of a lease in force.
func (p *core) discard(s *slot, t *ticket, seq uint32) bool {
	s.ticket = t
	if p.traced {
		p.observeHold(s)
	}
	return p.retire(s, seq, kindInUse, causeDiscarded)
}

// observeHold reports a lease's hold time to the Observer, if any.
func (p *core) observeHold(s *slot) {
	if o := p.cfg.Observer; o != nil {
		o.ObserveHold(time.Duration(p.since() - s.leasedAt))
	}
}

// since is the pool's monotonic clock, for wait and hold times: one read of
// the monotonic clock, where time.Now reads the wall clock too.
func (p *core) since() int64 { return int64(time.Since(p.epoch)) }

// post sends a message to the actor, and reports false when the actor has
// stopped.
func (p *core) post(m message) bool { return p.mbox.post(m) }

func stack() []byte {
	buf := make([]byte, 8<<10)
	return buf[:runtime.Stack(buf, false)]
}
