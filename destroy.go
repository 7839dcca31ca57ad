package actorpool

// Taking objects out of service. Whoever holds an object it must not keep
// retires it: a holder giving back an object that is unusable (doomed, or
// failing Validate), a taker that claimed one so (retireUnusable), or
// Lease.Destroy. Retiring moves the slot to reserved and asks the keeper
// to destroy the object. The keeper reserves idle objects itself
// (reserveIdle) when it evicts them, tests them, or retires them for Close
// and Reload. Either way the keeper destroys the object on a goroutine of
// its own (destroy) and frees the slot when Destroy returns (destroyed).

// unusable reports why the object in s, held by the caller, must not be
// handed out or kept. It is small enough to inline; Validate, when the
// factory has one, is a call of its own.
func (p *core) unusable(s *slot) (destroyCause, bool) {
	if cause, ok := s.doom(); ok {
		return cause, true
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

// retire takes a slot that the caller holds in kind from with seq out of
// service and has the keeper destroy its object. It reports false if the
// slot was not in kind from with seq.
func (p *core) retire(s *slot, seq uint32, from slotKind, cause destroyCause) bool {
	if _, ok := s.move(from, seq, kindReserved); !ok {
		return false
	}
	p.retireReserved(s, cause)
	return true
}

// retireIfDoomed retires an object the caller has just made idle, giving
// it back or relisting it, if it was doomed meanwhile. The keeper dooms
// objects in use (Reload), then retires those it finds idle; if it did
// both between the caller's check of the doom and the object going idle,
// it left the object to the caller, who sees the doom now. Doom then look
// on the keeper's side, go idle then look on this one: one of the two
// looks sees the other's step, so no doomed object is left idle, counted
// as idle after Reload has returned until a take finds it.
func (p *core) retireIfDoomed(s *slot, seq uint32) {
	if s.doomed.Load() != 0 {
		p.retireIdleSlot(s, seq)
	}
}

// retireIdleSlot has the keeper retire a slot that the caller made idle
// with seq, as its object was doomed, unless someone has claimed it since:
// a taker, who will find it doomed, or the keeper. The keeper looks, not
// the caller: by the time the caller would, the keeper may have evicted
// the object and put a new one in the slot, idle under the same seq (a
// slot's seq moves only with a hand-out), so that the slot's state is the
// very word the caller made idle, and reserving it would retire an object
// that no one doomed. The keeper alone replaces objects, so the doom it
// reads is that of the object in the slot.
func (p *core) retireIdleSlot(s *slot, seq uint32) {
	if p.post(message{kind: msgRetireIdle, idx: s.idx}) {
		return
	}
	// The keeper is gone, and replaces no object anymore.
	if st := s.load(); st.seq() == seq && p.reserveIdle(s, st) {
		cause, _ := s.doom()
		p.retireReserved(s, cause)
	}
}

// retireReserved has the keeper destroy the object of a slot the caller
// reserved.
func (p *core) retireReserved(s *slot, cause destroyCause) {
	s.leaving.Store(true)
	if !p.post(message{kind: msgRetire, idx: s.idx, cause: cause}) {
		// The keeper is gone: Close gave up waiting for this object, so
		// its holder destroys it.
		p.destroyInline(s, cause)
	}
}

// reserveIdle moves an idle or parked object, seen in state st, to
// reserved for the keeper, and reports whether it did.
func (p *core) reserveIdle(s *slot, st state) bool {
	switch st.kind() {
	case kindIdle:
		_, ok := s.move(kindIdle, st.seq(), kindReserved)
		return ok
	case kindInUse:
		return p.unpark(s, st.seq())
	}
	return false
}

// retireIdle destroys every idle object: on Close, and on Reload those of
// an older generation.
func (k *keeper[T]) retireIdle(cause destroyCause) {
	p := k.p
	for i := range p.slots {
		s := &p.slots[i]
		st := s.load()
		if cause == causeReload && s.gen == k.gen {
			continue
		}
		if p.reserveIdle(s, st) {
			k.destroy(s.idx, cause)
		}
	}
}

// destroy destroys the object of a reserved slot on a goroutine of its own.
func (k *keeper[T]) destroy(idx int32, cause destroyCause) {
	p := k.p
	s := &p.slots[idx]
	s.leaving.Store(true)
	obj := p.objs[s.idx]
	go func() {
		p.destroyObj(obj)
		p.stats.destroyed[cause].Add(1)
		if !p.post(message{kind: msgDestroyed, idx: idx}) {
			p.cameBack()
		}
	}()
}

// destroyed frees the slot of an object whose Destroy returned, or that
// Lease.Hijack took out of the pool.
func (k *keeper[T]) destroyed(idx int32) {
	p := k.p
	s := &p.slots[idx]
	var zero T
	p.objs[idx] = zero
	s.clearTicket()
	s.trace.Store(nil)
	s.leaving.Store(false)
	for {
		st := s.load()
		if st.kind() != kindReserved {
			panic("actorpool: freeing a slot that is not reserved")
		}
		if s.cas(st, st.with(kindFree)) {
			break
		}
	}
	k.free = append(k.free, idx)
	k.alive--
	p.total.Store(int32(k.alive))
}
