package actorpool

// The wait: what becomes of a take that finds no idle object, from queueing
// to the end of its wait. acquireSlow queues the taker as a waiter and
// sleeps until one of four things comes through its channel:
//
//   - an object, handed to it by whoever freed one (serving, below);
//   - a wake-up to compete for an object given back idle, with
//     Config.HandoffAfter (wakeOne, compete);
//   - an error that ends its take: the create made for it failed, or the
//     pool is closing (failLocked);
//   - nothing, because it was passed over once its context had ended;
//
// or until its context ends, upon which it gives up (abandonWait, giveUp).
// The fast path that runs before a take waits is in acquire.go; where an
// object given back goes, when no waiter is served, is in release.go.

import (
	"context"
	"errors"
	"sync"
	"time"
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
	woken      bool   // a wake-up is in ch, or being acted on
	since      int64  // core.since() when the wait began
	home       uint32 // the taker's home shard, recorded in what it is handed
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

// Queueing. A take that found nothing idle joins the queue's tail and
// sleeps on its channel; the queue is a list under p.mu, so that a waiter
// can leave it from anywhere when its context ends.

// acquireSlow queues the caller, whose home is shard h, as a waiter and
// blocks until it is served or ctx ends.
func (p *core) acquireSlow(ctx context.Context, h uint32) (*slot, uint32, error) {
	w := p.waiters.get(ctx)
	w.home = h
	p.mu.Lock()
	if p.qclosed {
		p.mu.Unlock()
		p.waiters.put(w)
		p.stats.emptyAcquires.Add(1)
		return nil, 0, ErrClosed
	}
	if p.cfg.MaxQueueSize > 0 && p.nwait >= p.cfg.MaxQueueSize {
		p.mu.Unlock()
		p.waiters.put(w)
		p.stats.emptyAcquires.Add(1)
		p.stats.exhausted.Add(1)
		return nil, 0, p.unserved(ErrPoolExhausted)
	}
	w.since = p.since()
	p.enqueueLocked(w)
	p.mu.Unlock()
	// An object may have gone idle between acquireIdle and enqueueLocked.
	p.serveIdle()

	if int(p.total.Load()) < p.cfg.MaxObjects && p.demand.CompareAndSwap(false, true) {
		p.post(message{kind: msgDemand})
	}

	for {
		var h handoff
		if w.done == nil {
			// A context that never ends: a plain receive is cheaper than a
			// select.
			h = <-w.ch
		} else {
			select {
			case h = <-w.ch:
			case <-w.done:
				return p.abandonWait(ctx, w)
			}
		}
		switch {
		case h.idx == wakeUp:
			if s, seq, ok := p.compete(w); ok {
				p.finishWait(w, nil)
				return s, seq, nil
			}
		case h.idx >= 0:
			s := &p.slots[h.idx]
			seq := s.load().seq()
			s.servedAt.Store(p.finishServed(w))
			s.servedSeq.Store(seq)
			return s, seq, nil
		case h.err != nil:
			return nil, 0, p.finishWait(w, h.err)
		default:
			return nil, 0, p.giveUp(ctx, w)
		}
	}
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
		p.headHome.Store(w.home)
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
			p.headHome.Store(w.next.home)
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
	p.headHome.Store(w.home)
	p.nwait++
	p.waiting.Store(int32(p.nwait))
}

// Serving. Whoever frees an object while waiters exist hands it to the
// oldest live one: a holder giving it back (release), the keeper with a
// new or tested object (putInService), or a taker that finds objects idle
// with waiters queued (serveIdle). With Config.HandoffAfter, an object
// given back goes idle instead while no waiter has waited too long
// (handingOff), and wakeOne wakes the oldest waiter to compete for it.

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
	if _, ok := s.handOut(from, seq, w.home); !ok {
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
//
// It claims each object before it takes p.mu, so that looking through
// the idle objects, a read of every shard's parked word, is not done
// under the lock that every waiter and every giver to a waiter takes; it
// claims it in the oldest waiter's home shard, which is where the object
// goes back unless another waiter is served it.
func (p *core) serveIdle() {
	for p.waiting.Load() > 0 {
		s, seq := p.acquireIdle(p.headHome.Load())
		if s == nil {
			return
		}
		p.mu.Lock()
		if cause, ok := s.doom(); ok {
			// Reload doomed it since acquireIdle checked: see release.
			p.mu.Unlock()
			p.stats.unlent.Add(1)
			p.retire(s, seq, kindInUse, cause)
			continue
		}
		w := p.nextWaiterLocked()
		if w == nil {
			p.stats.unlent.Add(1)
			p.relist(s, seq)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		w.ch <- handoff{idx: s.idx}
	}
}

// serveIdleLocked is serveIdle with p.mu held.
func (p *core) serveIdleLocked() {
	for p.nwait > 0 {
		s, seq := p.acquireIdle(p.head.home)
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

// relist makes idle again an object that a taker claimed for waiters who
// had all given up by the time it was theirs. p.mu is held, so no waiter
// can queue meanwhile.
func (p *core) relist(s *slot, seq uint32) {
	if p.cfg.FIFO {
		p.list(s, kindInUse, seq)
	} else {
		p.park(s, seq)
	}
	// Reload may have doomed the object while it was claimed, and looked
	// at the idle objects then: relisting it is its going idle.
	p.retireIfDoomed(s, seq)
	if p.closed.Load() {
		p.sweep()
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

// Competing. A waiter woken by wakeOne races running goroutines for the
// object given back.

// compete is what a woken waiter does: take an idle object if one is left,
// and otherwise go back to waiting, having told the pool to hand objects
// straight to waiters if it has now waited past Config.HandoffAfter.
func (p *core) compete(w *waiter) (*slot, uint32, bool) {
	s, seq := p.acquireIdle(w.home)
	p.mu.Lock()
	w.woken = false
	if p.woken == w {
		p.woken = nil
		p.wakeOut.Store(false)
	}
	if s != nil {
		if w.queued {
			p.removeLocked(w)
			// Objects given back while w was awake woke no one else: w
			// takes one, and the others must not sit idle while waiters
			// sleep.
			p.serveIdleLocked()
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
			p.release(o, o.load().seq())
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

// Giving up. A waiter whose context ends leaves the queue, unless it was
// served or passed over meanwhile: then it takes what is already in its
// channel and passes any object on.

// abandonWait ends the wait of a taker whose context ended: it leaves the
// queue, or, if it was served or passed over as the context ended, takes
// what it was handed and passes an object on.
func (p *core) abandonWait(ctx context.Context, w *waiter) (*slot, uint32, error) {
	p.mu.Lock()
	if w.queued {
		woken := w.woken
		p.removeLocked(w)
		p.mu.Unlock()
		if woken {
			// It was woken to compete, and leaves.
			<-w.ch
			p.passWakeUp(w)
		}
		return nil, 0, p.giveUp(ctx, w)
	}
	p.mu.Unlock()
	// Served, or passed over, as the context ended: the hand-off is
	// already in the channel, maybe behind a wake-up.
	h := <-w.ch
	if h.idx == wakeUp {
		// Woken to compete, then dequeued before it ran (passed over, or
		// failed).
		p.passWakeUp(w)
		h = <-w.ch
	}
	if h.idx >= 0 {
		p.stats.unlent.Add(1)
		s := &p.slots[h.idx]
		p.release(s, s.load().seq())
	}
	if h.err != nil {
		return nil, 0, p.finishWait(w, h.err)
	}
	return nil, 0, p.giveUp(ctx, w)
}

// passWakeUp passes on the wake-up of w, woken to compete and now out of
// the queue without having competed: removeLocked let the next give-back
// wake another waiter, but the object w was woken for went idle before,
// and no one else is awake for it. So it is handed to a waiter, and,
// while objects given back go idle, the next waiter is woken.
func (p *core) passWakeUp(w *waiter) {
	p.mu.Lock()
	w.woken = false
	p.serveIdleLocked()
	p.mu.Unlock()
	if p.waiting.Load() > 0 && !p.handingOff() {
		p.wakeOne()
	}
}

// giveUp ends a wait whose context ended, with a WaitError.
func (p *core) giveUp(ctx context.Context, w *waiter) error {
	err := p.waitError(ctx, time.Duration(p.since()-w.since))
	if errors.Is(err, ErrTimeout) {
		p.stats.timeouts.Add(1)
	} else {
		p.stats.canceled.Add(1)
	}
	return p.finishWait(w, err)
}

// Ending a wait, however it ended: the wait recorded, the waiter recycled.

// finishServed is finishWait for a waiter handed an object, returning
// when it ended.
func (p *core) finishServed(w *waiter) int64 {
	now := p.since()
	p.recordWait(w, time.Duration(now-w.since), nil)
	return now
}

// finishWait records a wait that ended with err (nil when it was served),
// recycles w and returns err.
func (p *core) finishWait(w *waiter, err error) error {
	p.recordWait(w, time.Duration(p.since()-w.since), err)
	return err
}

// recordWait records a wait of d that ended with err, and recycles w.
func (p *core) recordWait(w *waiter, d time.Duration, err error) {
	p.stats.waits.Add(1)
	p.stats.waitNanos.Add(int64(d))
	if o := p.cfg.Observer; o != nil {
		o.ObserveWait(d, err)
	}
	p.waiters.put(w)
}

// waitError is the error of a take whose context ended after waiting for
// waited: how busy the pool was, and why creates fail, if they do.
func (p *core) waitError(ctx context.Context, waited time.Duration) error {
	c := p.census()
	e := &WaitError{
		Waited:  waited,
		Idle:    c.idle,
		InUse:   c.inUse,
		Max:     p.cfg.MaxObjects,
		Waiting: int(p.waiting.Load()) + 1,
		Err:     ctx.Err(),
	}
	if ce := p.createErr.Load(); ce != nil {
		e.LastCreateErr = ce
	}
	return e
}
