package actorpool

// The parked object is the one most recently given back, kept in a single
// word of the pool (Pool.parked) instead of the idle list, with its slot
// left in use under the seq of the lease that gave it back. Giving an
// object back is then one CAS, on that word, and taking it again one more,
// on its slot, which is what makes the uncontended cycle cheap; the idle
// list holds the rest.
//
// Whoever takes a parked object (a taker, a giver-back making room, the
// keeper) claims its slot with a CAS from in use under the parked seq. A
// taker leaves the word as it is: once the slot's seq has moved on, the word
// is stale, every further claim through it fails, and the next give-back
// replaces it. Two rules keep this safe:
//
//   - the word is replaced or cleared only after the object it names has
//     been claimed, so a lease that was already given back sees either its
//     object parked or its seq gone, never a gap in between;
//   - a claim compares the whole state word, seq included, so a stale word
//     can never claim the slot from its next holder.
//
// LIFO pools only: parking the newest object contradicts FIFO.

func packParked(idx int32, seq uint32) uint64 { return uint64(seq)<<32 | uint64(idx+1) }

func unpackParked(v uint64) (idx int32, seq uint32) { return int32(uint32(v)) - 1, uint32(v >> 32) }

// isParked reports whether the object of slot idx, in use with seq, is in
// fact parked.
func (p *core) isParked(idx int32, seq uint32) bool {
	return p.parked.Load() == packParked(idx, seq)
}

// park parks a slot that the caller holds in use with seq, moving the
// object parked before it, if it is still parked, to the idle list.
func (p *core) park(s *slot, seq uint32) {
	mine := packParked(s.idx, seq)
	for {
		v := p.parked.Load()
		if v != 0 {
			// Claim the parked object by listing it; if it is no longer
			// in use under the parked seq, someone took it already and the
			// word is stale.
			idx, oseq := unpackParked(v)
			o := &p.slots[idx]
			if st := o.load(); st.kind() == kindInUse && st.seq() == oseq {
				p.list(o, kindInUse, oseq)
			}
		}
		if p.parked.CompareAndSwap(v, mine) {
			return
		}
	}
}

// acquireParked claims the parked object for a taker, returning its slot moved
// to in use with the next seq, or nil.
// It makes one attempt: a claim that loses a race leaves the object to the
// winner, or to the idle list.
func (p *core) acquireParked() (*slot, uint32) {
	v := p.parked.Load()
	if v == 0 {
		return nil, 0
	}
	idx, seq := unpackParked(v)
	s := &p.slots[idx]
	st := s.load()
	if nst := st.handedOut(); st.kind() == kindInUse && st.seq() == seq && s.cas(st, nst) {
		return s, nst.seq()
	}
	return nil, 0
}

// unpark claims the parked object for the keeper if it is the one in slot
// s, moving it to reserved, and reports whether it did.
func (p *core) unpark(s *slot, seq uint32) bool {
	v := packParked(s.idx, seq)
	if p.parked.Load() != v {
		return false
	}
	if _, ok := s.move(kindInUse, seq, kindReserved); !ok {
		return false
	}
	p.parked.CompareAndSwap(v, 0)
	return true
}
