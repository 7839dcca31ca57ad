package actorpool

import (
	"context"
	"sync"
)

// A waiter is a take that found no idle object. Waiters queue first come,
// first served, under Pool.mu, and are handed objects directly: whoever
// frees an object while waiters exist gives it to the oldest live one,
// so an object never sits idle while a waiter sleeps.
//
// With Config.HandoffAfter set, an object given back goes idle instead, so
// that a running goroutine can take it at once, and the oldest waiter is
// woken to compete for it (one waiter at a time: Pool.woken). Once the
// oldest waiter has waited HandoffAfter, the next give-back (or the waiter,
// losing a race) sets Pool.starving, and objects are handed straight to
// waiters again until one is served that had waited less.
type waiter struct {
	ch         chan handoff // capacity 2: a wake-up and a hand-off never block
	done       <-chan struct{}
	prev, next *waiter
	queued     bool
	woken      bool  // a wake-up is in ch, or being acted on
	since      int64 // Pool.since() when the wait began
}

// A handoff is what a waiter receives: a slot handed out to it, a wake-up
// to compete for an idle object, or an error that ends its take. A slot of
// -1 with no error means the waiter was skipped because its context had
// ended.
type handoff struct {
	idx int32
	err error
}

// wakeUp is the index of a handoff that wakes a waiter to compete.
const wakeUp = -2

// waiterCache recycles waiters and their channels. Each pool has its own,
// so that a channel is only ever used by the goroutines of one pool (which
// testing/synctest requires of pools made inside a bubble).
type waiterCache struct{ sync.Pool }

func (c *waiterCache) get(ctx context.Context) *waiter {
	w, _ := c.Get().(*waiter)
	if w == nil {
		w = &waiter{ch: make(chan handoff, 2)}
	}
	w.done = ctx.Done()
	return w
}

func (c *waiterCache) put(w *waiter) {
	w.done = nil
	c.Put(w)
}

// enqueueLocked adds w at the tail. p.mu must be held.
func (p *core) enqueueLocked(w *waiter) {
	w.queued = true
	w.prev, w.next = p.tail, nil
	if p.tail != nil {
		p.tail.next = w
	} else {
		p.head = w
	}
	p.tail = w
	p.nwait++
	p.waiting.Store(int32(p.nwait))
	if p.head == w {
		p.headSince.Store(w.since)
	}
}

// removeLocked takes w out of the queue. p.mu must be held.
func (p *core) removeLocked(w *waiter) {
	if p.woken == w {
		// Its wake-up stays in its channel for it to find; the next give-back
		// may wake another.
		p.woken = nil
		p.wakeOut.Store(false)
	}
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		p.head = w.next
		if w.next != nil {
			p.headSince.Store(w.next.since)
		}
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		p.tail = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	p.nwait--
	p.waiting.Store(int32(p.nwait))
}

// nextWaiterLocked dequeues the oldest waiter whose context has not ended.
// Waiters it passes over are told so, and end their takes with their
// context's error: an object is never handed to a taker that has already
// given up (vitess #20310). p.mu must be held.
func (p *core) nextWaiterLocked() *waiter {
	for w := p.head; w != nil; w = p.head {
		p.removeLocked(w)
		select {
		case <-w.done:
			w.ch <- handoff{idx: -1}
			continue
		default:
		}
		return w
	}
	return nil
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

// requeueLocked puts w back at the head of the queue. p.mu must be held.
func (p *core) requeueLocked(w *waiter) {
	w.queued = true
	w.prev, w.next = nil, p.head
	if p.head != nil {
		p.head.prev = w
	} else {
		p.tail = w
	}
	p.head = w
	p.headSince.Store(w.since)
	p.nwait++
	p.waiting.Store(int32(p.nwait))
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

// compete is what a woken waiter does: take an idle object if one is left,
// and otherwise go back to waiting, having told the pool to hand objects
// straight to waiters if it has now waited past Config.HandoffAfter.
func (p *core) compete(w *waiter) (*slot, uint32, bool) {
	s, seq := p.takeIdle()
	p.mu.Lock()
	w.woken = false
	if p.woken == w {
		p.woken = nil
		p.wakeOut.Store(false)
	}
	if s != nil {
		if w.queued {
			p.removeLocked(w)
			p.mu.Unlock()
			return s, seq, true
		}
		p.mu.Unlock()
		// w was dequeued to be served as it competed: a hand-off or an
		// error is on its way. It keeps what it took and passes the other
		// object on.
		if h := <-w.ch; h.idx >= 0 {
			p.stats.unlent.Add(1)
			o := &p.slots[h.idx]
			p.giveBack(o, o.load().seq())
		}
		return s, seq, true
	}
	if w.queued && p.since()-w.since >= int64(p.cfg.HandoffAfter) {
		p.starving.Store(true)
	}
	// An object given back while w competed may be idle with no waiter
	// awake for it.
	p.serveIdleLocked()
	p.mu.Unlock()
	return nil, 0, false
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
		s, seq := p.takeIdle()
		if s == nil {
			return
		}
		// takeIdle moved the slot to inUse for us; hand that hand-out on,
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
