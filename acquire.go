package actorpool

// The fast path of a take, in the order a take runs it: the object parked
// in its own shard's word, then the idle list, then the other shards'
// words (park.go), each claimed with a CAS on its slot and checked
// (unusable, destroy.go) before it is lent. A take that finds none waits:
// acquireSlow and the whole wait are in wait.go.

import (
	"context"
	"fmt"
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

// acquireIdle claims an idle object it can hand out, the one parked in
// the caller's home shard first, then the idle list, then those parked in
// other shards, and returns its slot moved to in use with seq, or nil when
// none is idle.
func (p *core) acquireIdle() (*slot, uint32) {
	h := p.home()
	if s, seq := p.acquireParkedUsable(h, false); s != nil {
		return s, seq
	}
	if s, seq := p.acquireListed(); s != nil {
		return s, seq
	}
	for i := uint32(1); i <= p.parkMask; i++ {
		if s, seq := p.acquireParkedUsable((h+i)&p.parkMask, true); s != nil {
			return s, seq
		}
	}
	return nil, 0
}

// acquireParkedUsable claims the object parked in shard h if it can hand
// it out, retiring it if not; see acquireParked for clear.
func (p *core) acquireParkedUsable(h uint32, clear bool) (*slot, uint32) {
	s, seq := p.acquireParked(h, clear)
	if s == nil {
		return nil, 0
	}
	if _, bad := p.unusable(s); bad {
		p.retireUnusable(s, seq)
		return nil, 0
	}
	return s, seq
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

// unserved returns err, why a take ends without an object, wrapping the
// latest create error while creates are failing: a full queue or no idle
// object is then a symptom, and the create error its cause.
func (p *core) unserved(err error) error {
	if ce := p.createErr.Load(); ce != nil {
		return fmt.Errorf("%w; last create error: %w", err, ce)
	}
	return err
}
