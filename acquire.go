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
	// One home for the fast path and the wait, read in this frame: an
	// object handed to the caller as a waiter goes back to the word its
	// next take here looks in first.
	h := p.home()
	if p.starving.Load() && p.waiting.Load() > 0 {
		// Bounded fairness, and a waiter has waited too long: queue
		// behind it rather than take an object ahead of it.
		return p.acquireSlow(ctx, h)
	}
	if s, seq := p.acquireIdle(h); s != nil {
		return s, seq, nil
	}
	return p.acquireSlow(ctx, h)
}

// acquireIdle claims an idle object it can hand out for a taker whose
// home is shard h (home): the one parked in h first, then the idle list,
// then those parked in other shards. It returns the slot moved to in use
// with seq, its state recording h, where the object will be parked when
// it is given back; or nil when none is idle. A take passes p.home(), read
// in its own frame; a waiter's, the home its take read (waiter.home).
func (p *core) acquireIdle(h uint32) (*slot, uint32) {
	// acquireUsable for the home shard, written out: the uncontended take
	// makes one call fewer.
	if s, seq := p.acquireParked(h, h); s != nil {
		if _, bad := p.unusable(s); !bad {
			return s, seq
		}
		p.retireUnusable(s, seq)
	}
	if s, seq := p.acquireListed(h); s != nil {
		return s, seq
	}
	for i := uint32(1); i <= p.parkMask; i++ {
		if s, seq := p.acquireUsable((h+i)&p.parkMask, h); s != nil {
			return s, seq
		}
	}
	return nil, 0
}

// acquireUsable claims the object parked in shard i for a taker whose
// home is h (acquireParked) if it can hand it out, retiring it if not.
func (p *core) acquireUsable(i, h uint32) (*slot, uint32) {
	s, seq := p.acquireParked(i, h)
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
// hand out, for a taker whose home is h.
func (p *core) acquireListed(h uint32) (*slot, uint32) {
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
		got, seq := p.settle(s, h)
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
// object out, in shard h, to the caller if it is idle, returning the new
// seq, and otherwise clears the listed bit of what is a stale entry (the
// keeper reserved or replaced the object after it was listed), so the
// slot's next owner lists it again.
func (p *core) settle(s *slot, h uint32) (got bool, seq uint32) {
	for {
		st := s.load()
		if st.kind() == kindIdle {
			nst := st.handedOut().withShard(h) &^ listedBit
			if s.cas(st, nst) {
				p.leaveShard(s, st)
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
	if s, seq := p.acquireIdle(p.home()); s != nil {
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
