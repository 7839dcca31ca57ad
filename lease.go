package actorpool

import (
	"fmt"
	"runtime"
	"strings"
)

// A Lease is the right to use one object of a pool until it is given back,
// with Release, or thrown away, with Destroy. Exactly one of the two must be
// called, once; a second call, or a call on a copy after either, returns
// ErrReleased and has no effect, so a stale lease can never give back or
// destroy an object that has since been lent to someone else.
//
// A Lease is a small value, safe to copy; its copies are the same lease.
// The zero Lease holds nothing.
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
	if !s.c.release(s, l.t, l.seq) {
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
	if !s.c.discard(s, l.t, l.seq) {
		return ErrReleased
	}
	return nil
}

// leakNote is what a ticket's cleanup carries: which slot, and which of its
// tickets, so a note that arrives late is recognised.
type leakNote struct {
	idx int32
	gen uint32
}

// newTicket gives a slot whose object is being installed a ticket, unless
// it has one, and arms the cleanup that reports the ticket's loss.
func (p *core) newTicket(s *slot) {
	if s.ticket != nil {
		return
	}
	t := &ticket{s: s}
	gen := s.ticketGen.Add(1)
	s.cleanup = runtime.AddCleanup(t, p.onLeak, leakNote{idx: s.idx, gen: gen})
	s.ticket = t
}

// dropTicket disarms and drops a slot's ticket, when its object is
// destroyed. The ticket is in the slot then: a lease given back or
// destroyed returns it first.
func (s *slot) dropTicket() {
	if s.ticket != nil {
		s.cleanup.Stop()
		s.ticket = nil
	}
}

// onLeak runs on the runtime's cleanup goroutine when a ticket is
// collected: the lease holding it was dropped without being given back.
func (p *core) onLeak(n leakNote) {
	if !p.post(message{kind: msgLeak, idx: n.idx, gen: n.gen}) {
		// The actor is gone; reclaim here so the object is still
		// destroyed exactly once.
		if s, ok := p.reclaim(n); ok {
			p.destroyInline(s, causeLeak)
		}
	}
}

// reclaim takes back the slot of a leaked lease and logs LEAK-DETECTED.
func (p *core) reclaim(n leakNote) (*slot, bool) {
	s := &p.slots[n.idx]
	if s.ticketGen.Load() != n.gen {
		return nil, false
	}
	st := s.load()
	if st.kind() != kindInUse {
		return nil, false
	}
	if _, ok := s.move(kindInUse, st.seq(), kindReserved); !ok {
		return nil, false
	}
	p.stats.leaks.Add(1)
	args := []any{"slot", n.idx}
	if tr := s.trace.Load(); tr != nil {
		args = append(args, "acquired", formatTrace(tr))
	} else {
		args = append(args, "acquired", "unknown; set Config.TraceAcquires to record where")
	}
	p.log.Error("LEAK-DETECTED: a lease was dropped without Release or Destroy; its object is destroyed", args...)
	return s, true
}

func formatTrace(tr *acquireTrace) string {
	var b strings.Builder
	frames := runtime.CallersFrames(tr.pcs)
	for {
		f, more := frames.Next()
		fmt.Fprintf(&b, "%s\n\t%s:%d\n", f.Function, f.File, f.Line)
		if !more {
			break
		}
	}
	return b.String()
}
