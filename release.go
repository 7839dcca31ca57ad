package actorpool

// The release path: where an object goes when its holder gives it back,
// and how objects reach waiters. An object given back goes straight to the
// oldest waiter (serveLocked) while objects are being handed off, and
// otherwise idle: parked (park.go) or listed (list), after which a waiter
// that queued meanwhile is served (serveIdle) or woken to compete
// (wakeOne). A giver that serves a waiter yields its processor to it. The
// keeper puts new and tested objects in service the same way
// (putInService), and fails waiters when creates fail or the pool
// closes (failLocked).

import (
	"runtime"
	"time"
)

// release returns a slot that the caller holds in use with seq: to the
// oldest waiter if there is one, else to the idle objects. It reports false
// if the slot was not the caller's to give: a stale lease.
func (p *core) release(s *slot, seq uint32) bool {
	if p.closed.Load() {
		return p.retire(s, seq, kindInUse, causeClose)
	}
	if cause, bad := p.unusable(s); bad {
		return p.retire(s, seq, kindInUse, cause)
	}
	if p.waiting.Load() > 0 && p.handingOff() {
		// Read before the hand-off, after which the slot is the waiter's.
		short := p.shortHold(s, seq)
		p.mu.Lock()
		w, ok := p.serveLocked(s, kindInUse, seq)
		p.mu.Unlock()
		if !ok {
			return false
		}
		if w != nil {
			w.ch <- handoff{idx: s.idx}
			if short {
				// Let the waiter run now, and this goroutine after it.
				// A giver that went straight on to its next take would
				// find nothing idle, queue behind the waiter it just
				// served, and so on for every take: a line of waiters
				// that never drains, and a park and a wake-up per take
				// for as long as the pool is busy. Yielding puts the
				// giver at the back of the run queue instead: by the
				// time it takes again the waiters ahead of it have been
				// served, and once the line is empty takes go back to
				// the fast path. smartconnpool yields the same way. See
				// docs/benchmarks.md, "Issue 14".
				runtime.Gosched()
			}
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

// yieldBelow is the longest hold after which a giver that had waited for
// its object yields to the waiter it serves. Holds this short are work in
// memory, which a line of waiters only slows down: the line persists
// because each giver queues again before the waiter it served has run,
// and the yield drains it. A longer hold (a query, a request) keeps takers
// waiting for a reason; there, yielding only sends the giver to the back
// of the run queue, behind goroutines woken by the network, and lengthens
// its next take's tail (docs/benchmarks.md, "Issue 14": a yield on every
// hand-off doubled pgpool's p99 at 64 clients on 16 connections, whose
// holds are a round trip to PostgreSQL, 10 µs and up).
const yieldBelow = 5 * time.Microsecond

// shortHold reports whether the lease of s with seq was handed to a waiter
// and given back within yieldBelow. A lease taken without waiting reads no
// clock here.
func (p *core) shortHold(s *slot, seq uint32) bool {
	return s.servedSeq.Load() == seq && p.since()-s.servedAt.Load() < int64(yieldBelow)
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

// relist makes idle again an object that a taker claimed for waiters who
// had all given up by the time it was theirs. p.mu is held, so no waiter
// can queue meanwhile.
func (p *core) relist(s *slot, seq uint32) {
	if p.cfg.FIFO {
		p.list(s, kindInUse, seq)
	} else {
		p.park(s, seq)
	}
	if p.closed.Load() {
		p.sweep()
	}
}

// serveLocked claims the slot, from kind from with seq, for the oldest live
// waiter, and dequeues that waiter; the caller hands it the slot with
// w.ch <- handoff{idx: s.idx} once it has let go of p.mu, so that the lock
// is not held while the waiter is woken. It returns a nil waiter, leaving
// the slot as it was, when no waiter is left, and ok false when the slot
// was not in kind from with seq (a stale lease), in which case no waiter is
// dequeued. p.mu must be held.
func (p *core) serveLocked(s *slot, from slotKind, seq uint32) (w *waiter, ok bool) {
	w = p.nextWaiterLocked()
	if w == nil {
		return nil, true
	}
	if _, ok := s.handOut(from, seq); !ok {
		p.requeueLocked(w)
		return nil, false
	}
	if p.starving.Load() && (p.nwait == 0 || p.since()-w.since < int64(p.cfg.HandoffAfter)) {
		// Served a waiter that was not starving, or the last one: back to
		// letting running goroutines take objects first.
		p.starving.Store(false)
	}
	return w, true
}

// serveIdle hands idle objects to waiters until one or the other runs out.
// It closes the race in which a waiter queued just after a holder, seeing
// no waiter, made its object idle: the holder and the new waiter both look
// after their own step, so one of them sees the other's.
func (p *core) serveIdle() {
	p.mu.Lock()
	p.serveIdleLocked()
	p.mu.Unlock()
}

// serveIdleLocked is serveIdle with p.mu held.
func (p *core) serveIdleLocked() {
	for p.nwait > 0 {
		s, seq := p.acquireIdle()
		if s == nil {
			return
		}
		// acquireIdle moved the slot to inUse for us; hand that hand-out on,
		// or put the object back if every waiter turned out to be gone.
		w := p.nextWaiterLocked()
		if w == nil {
			p.stats.unlent.Add(1)
			p.relist(s, seq)
			return
		}
		w.ch <- handoff{idx: s.idx}
	}
}

// wakeOne wakes the oldest waiter to compete for an object just made idle,
// unless a waiter is already awake for that.
func (p *core) wakeOne() {
	p.mu.Lock()
	if w := p.head; w != nil && p.woken == nil {
		// A waiter put back at the head after a failed hand-off may still
		// have its wake-up to act on; it counts as the one awake, and gets
		// no second one, which could fill its channel.
		if !w.woken {
			w.woken = true
			w.ch <- handoff{idx: wakeUp}
		}
		p.woken = w
		p.wakeOut.Store(true)
	}
	p.mu.Unlock()
}

// failLocked ends the oldest live waiter's take with err, and reports
// whether there was one. p.mu must be held.
func (p *core) failLocked(err error) bool {
	w := p.nextWaiterLocked()
	if w == nil {
		return false
	}
	w.ch <- handoff{idx: -1, err: err}
	return true
}

// putInService hands a reserved slot's object to the oldest waiter, or
// lists it idle.
func (k *keeper[T]) putInService(s *slot) {
	p := k.p
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
