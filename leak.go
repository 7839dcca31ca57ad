package actorpool

import (
	"fmt"
	"runtime"
	"strings"
)

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

// clearTicket disarms and clears a slot's ticket, when its object is
// destroyed. The ticket is in the slot then: a lease given back or
// destroyed returns it first.
func (s *slot) clearTicket() {
	if s.ticket != nil {
		s.cleanup.Stop()
		s.ticket = nil
	}
}

// onLeak runs on the runtime's cleanup goroutine when a ticket is
// collected: the lease holding it was dropped without being given back.
func (p *core) onLeak(n leakNote) {
	if !p.post(message{kind: msgLeak, idx: n.idx, gen: n.gen}) {
		// The keeper is gone; reclaim here so the object is still
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

// An acquireTrace is where a lease was taken, kept when
// Config.TraceAcquires is set.
type acquireTrace struct {
	pcs []uintptr
}
