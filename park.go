package actorpool

// The parked object is the one most recently given back, kept in a single
// word of the pool (Pool.parked) instead of the idle list, with its slot
// left in use under the seq of the lease that gave it back. Giving an
// object back is then one CAS, and taking it again two, which is what makes
// the uncontended cycle cheap; the idle list holds the rest.
//
// The rule that keeps parking safe: whoever takes a parked object (a taker,
// a giver-back making room, the actor) first claims its slot with a CAS from
// in use under the parked seq, and only then clears the word. A lease that
// was already given back therefore sees either its object parked or its
// seq gone, never a gap in between, and a stale parked word fails every
// claim.
//
// LIFO pools only: parking the newest object contradicts FIFO.

func packParked(idx int32, seq uint32) uint64 { return uint64(seq)<<32 | uint64(idx+1) }

func unpackParked(v uint64) (idx int32, seq uint32) { return int32(uint32(v)) - 1, uint32(v >> 32) }

// isParked reports whether the object of slot idx, in use with seq, is in
// fact parked.
func (p *Pool[T]) isParked(idx int32, seq uint32) bool {
	return p.parked.Load() == packParked(idx, seq)
}

// park parks a slot that the caller holds in use with seq, moving the
// object parked before it to the idle list. It reports false if the slot
// was no longer the caller's.
func (p *Pool[T]) park(s *slot[T], seq uint32) bool {
	mine := packParked(s.idx, seq)
	for {
		v := p.parked.Load()
		if v == 0 {
			if p.parked.CompareAndSwap(0, mine) {
				return true
			}
			continue
		}
		idx, oseq := unpackParked(v)
		if p.list(&p.slots[idx], kindInUse, oseq) {
			if p.parked.CompareAndSwap(v, mine) {
				return true
			}
			continue
		}
		// Someone claimed the parked object and is about to clear the
		// word; rather than wait for them, list this one.
		return p.list(s, kindInUse, seq)
	}
}

// takeParked claims the parked object for a taker, returning its slot moved
// to in use with the next seq, or nil.
func (p *Pool[T]) takeParked() (*slot[T], uint32) {
	v := p.parked.Load()
	if v == 0 {
		return nil, 0
	}
	idx, seq := unpackParked(v)
	s := &p.slots[idx]
	st, ok := s.handOut(kindInUse, seq)
	if !ok {
		return nil, 0
	}
	p.parked.CompareAndSwap(v, 0)
	return s, st.seq()
}

// unpark claims the parked object for the actor if it is the one in slot
// s, moving it to reserved, and reports whether it did.
func (p *Pool[T]) unpark(s *slot[T], seq uint32) bool {
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
