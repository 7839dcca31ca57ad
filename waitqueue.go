package actorpool

import (
	"context"
	"sync"
)

// A waiter is a take that found no idle object. Waiters queue first come,
// first served, under core.mu, and are handed objects directly: whoever
// frees an object while waiters exist gives it to the oldest live one,
// so an object never sits idle while a waiter sleeps.
//
// With Config.HandoffAfter set, an object given back goes idle instead, so
// that a running goroutine can take it at once, and the oldest waiter is
// woken to compete for it (one waiter at a time: core.woken). Once the
// oldest waiter has waited HandoffAfter, the next give-back (or the waiter,
// losing a race) sets core.starving, and objects are handed straight to
// waiters again until one is served that had waited less.
type waiter struct {
	ch         chan handoff // capacity 2: a wake-up and a hand-off never block
	done       <-chan struct{}
	prev, next *waiter
	queued     bool
	woken      bool  // a wake-up is in ch, or being acted on
	since      int64 // core.since() when the wait began
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

// get returns a waiter for a take on ctx.
func (c *waiterCache) get(ctx context.Context) *waiter {
	w, _ := c.Get().(*waiter)
	if w == nil {
		w = &waiter{ch: make(chan handoff, 2)}
	}
	w.done = ctx.Done()
	return w
}

// put recycles a waiter whose wait has ended and whose channel is empty.
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
