package actorpool

// The acquire path, in the order a take runs it. A take first tries the
// fast path, acquireIdle: the parked object, then the idle list, each
// claimed with a CAS on its slot and checked (unusable) before it is lent.
// Finding none, it queues as a waiter and sleeps (acquireSlow) until it is
// handed an object, its take fails, it is woken to compete for an object
// given back (compete, with Config.HandoffAfter), or its context ends
// (abandonWait, giveUp). The wait queue itself is in waitqueue.go; who
// hands objects to waiters is in release.go.

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// acquire is Acquire after the check for a lease held by a With.
func (p *core) acquire(ctx context.Context) (*slot, uint32, error) {
	if p.closed.Load() {
		return nil, 0, ErrClosed
	}
	if done := ctx.Done(); done != nil {
		select {
		case <-done:
			return nil, 0, p.waitError(ctx, 0)
		default:
		}
	}
	if p.starving.Load() && p.waiting.Load() > 0 {
		// Bounded fairness, and a waiter has waited too long: queue
		// behind it rather than take an object ahead of it.
		return p.acquireSlow(ctx)
	}
	if s, seq := p.acquireIdle(); s != nil {
		return s, seq, nil
	}
	return p.acquireSlow(ctx)
}

// acquireIdle claims an idle object it can hand out, the parked one first,
// and returns its slot moved to in use with seq, or nil when none is idle.
func (p *core) acquireIdle() (*slot, uint32) {
	if s, seq := p.acquireParked(); s != nil {
		if _, bad := p.unusable(s); !bad {
			return s, seq
		}
		p.retireUnusable(s, seq)
	}
	return p.acquireListed()
}

// acquireListed claims the first idle object of the idle list that it can
// hand out.
func (p *core) acquireListed() (*slot, uint32) {
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
		p.retireUnusable(s, seq)
	}
}

// settle resolves a slot index just popped from the idle list: it hands the
// object out to the caller if it is idle, returning the new seq, and
// otherwise clears the listed bit of what is a stale entry (the keeper
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

// invalid runs Factory.Validate on the object in s.
func (p *core) invalid(s *slot) (destroyCause, bool) {
	return causeInvalid, p.validateSlot(s) != nil
}

// retireUnusable retires an object a taker claimed and found unusable.
func (p *core) retireUnusable(s *slot, seq uint32) {
	cause, _ := p.unusable(s)
	p.stats.unlent.Add(1)
	p.retire(s, seq, kindInUse, cause)
}

// tryAcquire is TryAcquire: the fast path, and on a miss a word to the
// keeper that an object would have been wanted.
func (p *core) tryAcquire() (*slot, uint32, error) {
	if p.closed.Load() {
		return nil, 0, ErrClosed
	}
	if s, seq := p.acquireIdle(); s != nil {
		return s, seq, nil
	}
	p.stats.emptyAcquires.Add(1)
	if int(p.total.Load()) < p.cfg.MaxObjects {
		p.post(message{kind: msgWarm})
	}
	return nil, 0, p.unserved(ErrWouldBlock)
}

// startAsync counts an asynchronous take in, unless the pool is closing.
// Doing so under the lock that Close takes to stop new waiters means Close
// either sees the take, and waits for it, or the take sees ErrClosed.
func (p *core) startAsync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.qclosed {
		return false
	}
	p.asyncTakes.Add(1)
	return true
}

// acquireSlow queues the caller as a waiter and blocks until it is served
// or ctx ends.
func (p *core) acquireSlow(ctx context.Context) (*slot, uint32, error) {
	w := p.waiters.get(ctx)
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
	// An object may have gone idle between acquireIdle and enqueueLocked.
	p.serveIdleLocked()
	p.mu.Unlock()

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

// compete is what a woken waiter does: take an idle object if one is left,
// and otherwise go back to waiting, having told the pool to hand objects
// straight to waiters if it has now waited past Config.HandoffAfter.
func (p *core) compete(w *waiter) (*slot, uint32, bool) {
	s, seq := p.acquireIdle()
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

// abandonWait ends the wait of a taker whose context ended: it leaves the
// queue, or, if it was served or passed over as the context ended, takes
// what it was handed and passes an object on.
func (p *core) abandonWait(ctx context.Context, w *waiter) (*slot, uint32, error) {
	p.mu.Lock()
	if w.queued {
		woken := w.woken
		p.removeLocked(w)
		if woken {
			// It was woken to compete, and leaves: consume the wake-up, and
			// pass it on to the next waiter.
			<-w.ch
			w.woken = false
			p.serveIdleLocked()
		}
		p.mu.Unlock()
		if woken && p.waiting.Load() > 0 && !p.handingOff() {
			p.wakeOne()
		}
		return nil, 0, p.giveUp(ctx, w)
	}
	p.mu.Unlock()
	// Served, or passed over, as the context ended: the hand-off is
	// already in the channel, maybe behind a wake-up.
	h := <-w.ch
	if h.idx == wakeUp {
		p.mu.Lock()
		w.woken = false
		p.mu.Unlock()
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

// unserved returns err, why a take ends without an object, wrapping the
// latest create error while creates are failing: a full queue or no idle
// object is then a symptom, and the create error its cause.
func (p *core) unserved(err error) error {
	if ce := p.createErr.Load(); ce != nil {
		return fmt.Errorf("%w; last create error: %w", err, ce)
	}
	return err
}
