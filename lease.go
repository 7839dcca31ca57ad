package actorpool

import (
	"context"
	"runtime"
	"time"
)

// A Lease is the right to use one object of a pool until it is given back,
// with Release, or thrown away, with Destroy. Exactly one of the two must be
// called, once; a second call, or a call on a copy after either, returns
// ErrReleased and has no effect, so a stale lease can never give back or
// destroy an object that has since been lent to someone else.
//
// A Lease is a small value, safe to copy; its copies are the same lease.
// The zero Lease holds nothing. Like an *os.File, a lease is given back by
// one goroutine: Release, Destroy and Hijack of one lease racing each
// other from two goroutines are a data race, which the race detector
// reports, and the later of the two may go unrefused.
//
// A lease that becomes unreachable without being given back is found by the
// garbage collector: the pool logs LEAK-DETECTED, destroys the object and
// frees its place.
type Lease[T any] struct {
	p      *Pool[T]
	t      *ticket
	seq    uint32
	nested bool // lent from a With on the caller's context: With gives it back
}

// A ticket stands for the object while it is lent out. The slot holds it
// while the object is not lent, the lease holds it while it is; when it
// becomes unreachable, the lease was dropped and the object leaked.
type ticket struct{ s *slot }

// Value returns the leased object, or the zero value once the lease has
// been given back or destroyed.
func (l Lease[T]) Value() T {
	if l.t != nil {
		if s, ok := current(l.t, l.seq); ok {
			return l.p.objs[s.idx]
		}
	}
	var zero T
	return zero
}

// Release gives the object back. It is validated and handed to the
// longest-waiting taker, or made idle; an object that fails validation, or
// has outlived Config.MaxLifetime or a Reload, is destroyed instead.
//
// Release returns ErrReleased if the lease was already given back or
// destroyed. On a lease lent by a With on the caller's context, it does
// nothing: the outermost With gives the object back.
func (l Lease[T]) Release() error {
	if l.t == nil {
		return ErrReleased
	}
	s, ok := current(l.t, l.seq)
	if !ok {
		return ErrReleased
	}
	if l.nested {
		return nil
	}
	if !s.c.releaseLease(s, l.t, l.seq) {
		return ErrReleased
	}
	return nil
}

// Destroy gives the object back to be destroyed, for an object the caller
// knows is broken. A replacement is created if a taker is waiting.
// Destroy returns ErrReleased if the lease was already given back or
// destroyed.
//
// On a lease lent by a With on the caller's context, Destroy only marks the
// object, because the callbacks of that With still hold it: the outermost
// With destroys it when it gives it back, and a taker waiting then gets a
// new object. Until then the object stays theirs: Value on every lease of
// that With still returns it, and a nested With or Acquire still gets it.
// Like Release on such a lease, Destroy gives nothing back itself, so
// calling it again returns nil and changes nothing.
func (l Lease[T]) Destroy() error {
	if l.t == nil {
		return ErrReleased
	}
	s, ok := current(l.t, l.seq)
	if !ok {
		return ErrReleased
	}
	if l.nested {
		s.doomed.Store(uint32(causeDiscarded) + 1)
		return nil
	}
	if !s.c.destroyLease(s, l.t, l.seq) {
		return ErrReleased
	}
	return nil
}

// Nested reports whether the lease was lent by a With on the caller's
// context, or bound to it with Bind: its Release and Destroy then give
// nothing back, since the outer holder still holds the object.
func (l Lease[T]) Nested() bool { return l.nested }

// Bind returns a context like ctx that carries the lease, as the context of
// a With callback does: With and Acquire on the pool with that context get
// this lease's object, as a nested lease whose Release gives nothing back,
// for as long as the lease is in force. The lease itself is still the
// caller's to give back. It lets an adapter build its own With around its
// own take, with hooks of its own on the way out and back.
func (l Lease[T]) Bind(ctx context.Context) context.Context {
	if l.t == nil || l.nested {
		return ctx
	}
	if !l.p.withUsed.Load() {
		l.p.withUsed.Store(true)
	}
	return &leaseContext{Context: ctx, pool: l.p, lease: l.t, seq: l.seq}
}

// Hijack takes the object out of the pool for good and returns it: its
// place is freed, so the pool may create another in its stead, and the
// pool will never validate, test or destroy it. The caller owns it from
// then on and must destroy it; Close does not wait for it. Use it for a
// connection that must outlive the pool's hold on it, such as one kept
// listening for notifications. Hijack returns ErrReleased if the lease was
// already given back, destroyed or hijacked.
//
// A lease lent by a With on the caller's context cannot be hijacked, since
// the callbacks of that With still hold the object: Hijack then returns
// ErrHeldByWith and changes nothing.
func (l Lease[T]) Hijack() (T, error) {
	var zero T
	if l.t == nil {
		return zero, ErrReleased
	}
	s, ok := current(l.t, l.seq)
	if !ok {
		return zero, ErrReleased
	}
	if l.nested {
		return zero, ErrHeldByWith
	}
	obj := l.p.objs[s.idx]
	if !s.c.hijackLease(s, l.t, l.seq) {
		return zero, ErrReleased
	}
	return obj, nil
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
	// A lease is in force while its slot is in use with its seq and not
	// parked: given back and parked, the slot keeps the seq until a taker
	// claims it. So the state first, then the word of the shard it names,
	// then the state again: a parked object is claimed (its state changed)
	// before its word is replaced, and the shard changes only with the seq,
	// so a state unchanged across the word's read means that the word read
	// was the one to read. A state that changed meanwhile is looked at
	// again.
	for {
		st := s.load()
		if st.kind() != kindInUse || st.seq() != seq {
			return s, false
		}
		if s.c.wordOf(st).Load() == packParked(s.idx, seq) {
			return s, false
		}
		if s.load() == st {
			return s, true
		}
	}
}

// releaseLease gives back the object of a lease in force, returning the ticket
// to the slot first.
func (p *core) releaseLease(s *slot, t *ticket, seq uint32) bool {
	s.ticket = t
	if p.traced {
		p.observeHold(s)
	}
	return p.release(s, seq)
}

// destroyLease retires the object of a lease in force, for Lease.Destroy.
func (p *core) destroyLease(s *slot, t *ticket, seq uint32) bool {
	s.ticket = t
	if p.traced {
		p.observeHold(s)
	}
	return p.retire(s, seq, kindInUse, causeDiscarded)
}

// hijackLease takes the object of a lease in force out of the pool, for
// Lease.Hijack: the keeper frees its slot without destroying it.
func (p *core) hijackLease(s *slot, t *ticket, seq uint32) bool {
	s.ticket = t
	if p.traced {
		p.observeHold(s)
	}
	if _, ok := s.move(kindInUse, seq, kindReserved); !ok {
		return false
	}
	s.leaving.Store(true)
	p.stats.hijacked.Add(1)
	if !p.post(message{kind: msgHijacked, idx: s.idx}) {
		// The keeper is gone: Close gave up waiting for this object,
		// which is no longer the pool's to count.
		p.cameBack()
	}
	return true
}

// observeHold reports a lease's hold time to the Observer, if any.
func (p *core) observeHold(s *slot) {
	if o := p.cfg.Observer; o != nil {
		o.ObserveHold(time.Duration(p.since() - s.leasedAt))
	}
}
