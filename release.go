package actorpool

// The give-back: where an object goes when its holder gives it back.
// Straight to the oldest waiter (serveLocked, wait.go) while objects are
// being handed off, and otherwise idle: parked (park.go) or listed (list),
// after which a waiter that queued meanwhile is served (serveIdle) or woken
// to compete (wakeOne). A giver that serves a waiter after a short hold
// yields its processor to it.

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
		if cause, ok := s.doom(); ok {
			// Reload doomed it since the check above, and may have
			// returned: the oldest waiter may be a take that queued
			// after, which is owed a new object. Checked under the lock
			// it queued under, so that the doom is seen if it did.
			p.mu.Unlock()
			return p.retire(s, seq, kindInUse, cause)
		}
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
	} else if !p.park(s, seq) {
		return false
	}
	p.retireIfDoomed(s, seq)
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
