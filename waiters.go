package actorpool

import (
	"context"
	"sync"
)

// A waiter is a take that found no idle object. Waiters queue first come,
// first served, under Pool.mu, and are handed objects directly: whoever
// frees an object while waiters exist gives it to the oldest live one,
// so an object never sits idle while a waiter sleeps.
type waiter struct {
	ch         chan handoff // capacity 1, so a hand-off never blocks
	done       <-chan struct{}
	prev, next *waiter
	queued     bool
	since      int64 // Pool.since() when the wait began
	createErrs int64 // the pool's create error count when the wait began
}

// A handoff is what a waiter receives: a slot handed out to it, or an error
// that ends its take. A slot of -1 with no error means the waiter was
// skipped because its context had ended.
type handoff struct {
	idx int32
	err error
}

// waiterCache recycles waiters and their channels. Each pool has its own,
// so that a channel is only ever used by the goroutines of one pool (which
// testing/synctest requires of pools made inside a bubble).
type waiterCache struct{ sync.Pool }

func (c *waiterCache) get(ctx context.Context) *waiter {
	w, _ := c.Get().(*waiter)
	if w == nil {
		w = &waiter{ch: make(chan handoff, 1)}
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
}

// removeLocked takes w out of the queue. p.mu must be held.
func (p *core) removeLocked(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		p.head = w.next
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
	p.nwait++
	p.waiting.Store(int32(p.nwait))
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
		p.post(message{kind: msgSweep})
	}
}
