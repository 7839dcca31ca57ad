package actorpool

import (
	"runtime"
	"sync/atomic"
)

// A slot holds one object for its whole life and one word of atomic state
// that takers, holders and the keeper agree through, the way HikariCP's
// ConcurrentBag entries do. A pool has MaxObjects slots, allocated once.
//
// The state word packs three things:
//
//	bits 0-1   kind: free, idle, inUse or reserved
//	bit 2      listed: the slot's index is in the idle list (or was just
//	           popped by a taker that has yet to settle it)
//	bits 8-13  shard: the home of the taker the object was last handed
//	           to, whose parked word it is parked in when given back (see
//	           park.go); it changes only with the seq, when the object is
//	           handed out (to a taker, or to a waiter by a holder or the
//	           keeper), so that no give-back, stale or not, can move it
//	bits 32-63 seq: bumped each time the object is handed out; a lease
//	           carries the seq it was given, so a stale lease never matches
//
// Who may move a slot, and through which function, is slotMoves
// (slotmoves.go). Every move is a CAS on the whole word, so a taker clearing
// the listed bit and any of the moves there never lose each other's change.
type slot struct {
	state atomic.Uint64
	next  atomic.Uint32 // the idle stack's link: index+1 of the slot below, 0 for none

	// Written by the keeper while the slot is free or reserved, and read by
	// holders after the hand-out that publishes them. The object itself is
	// in Pool.objs, at the slot's index, so that this type, and the hot
	// path working on it, has no type parameter and inlines.
	c   *core
	idx int32

	// doomed is set, to a destroyCause+1, when the keeper decides the object
	// must go (a Reload, its lifetime) while someone else may hold it, or
	// when a nested lease destroys the object that its With holds; the
	// next to take or give it back retires it. One load of a word on the
	// slot's own cache line is all the hot path spends on both.
	doomed atomic.Uint32

	// leaving is set while the slot is reserved because its object is on
	// its way out of the pool — being destroyed, or taken by Lease.Hijack —
	// rather than under test, so that Stats can tell the two apart. The
	// keeper clears it when it frees the slot.
	leaving atomic.Bool

	// ticket is the leak-detection token, held here while the object is not
	// lent out and carried by the lease while it is, so that a lease dropped
	// without being given back leaves the ticket unreachable.
	ticket    *ticket
	ticketGen atomic.Uint32
	cleanup   runtime.Cleanup
	trace     atomic.Pointer[acquireTrace]
	leasedAt  int64 // Pool.since() at the hand-out, when Config.Observer is set; the holder's

	// When the lease of seq servedSeq was handed to a waiter, Pool.since()
	// at the moment it received it: written by that waiter, read by
	// whoever gives the lease back, to tell a short hold (see release).
	// A lease taken without waiting leaves them as they were, and its seq
	// does not match. Atomic, because a second, concurrent give-back of
	// the same lease (a caller's bug, which release refuses) may read them
	// as the next holder writes them.
	servedAt  atomic.Int64
	servedSeq atomic.Uint32

	// Actor-only bookkeeping.
	gen        uint64 // the pool's reload generation when the object was created
	expiresAt  int64  // unix nanoseconds when the object retires, or 0
	createdAt  int64
	seenSeq    uint32 // seq and kind when the keeper last saw the slot change
	seenKind   slotKind
	seenAt     int64 // when the keeper first saw the slot in seenKind with seenSeq
	testedAt   int64
	leakLogged uint32 // seq of the lease already logged as a suspected leak, +1
	foldedSeq  uint32 // seq already counted in the pool's acquire total

	_ [64]byte // keep neighbours' hot words off this slot's cache line
}

type slotKind uint8

const (
	kindFree slotKind = iota
	kindIdle
	kindInUse
	kindReserved
)

func (k slotKind) String() string {
	return [...]string{"free", "idle", "in use", "reserved"}[k]
}

// state is the decoded form of slot.state.
type state uint64

const (
	kindMask   = 3
	listedBit  = 1 << 2
	shardShift = 8
	shardMask  = (maxParkShards - 1) << shardShift
	seqShift   = 32
)

func (s state) kind() slotKind { return slotKind(s & kindMask) }
func (s state) listed() bool   { return s&listedBit != 0 }
func (s state) shard() uint32  { return uint32(s&shardMask) >> shardShift }
func (s state) seq() uint32    { return uint32(s >> seqShift) }

// withShard returns s with shard h.
func (s state) withShard(h uint32) state { return s&^shardMask | state(h)<<shardShift }

// with returns s moved to kind k, keeping its seq and listed bit.
func (s state) with(k slotKind) state { return s&^kindMask | state(k) }

// handedOut returns s moved to inUse with the next seq, keeping the listed
// bit and the shard.
func (s state) handedOut() state {
	// The seq is the top bits: adding one there wraps it round, as a
	// uint32 would, and leaves the bits below as they are.
	return (s+1<<seqShift)&^kindMask | state(kindInUse)
}

func (s *slot) load() state { return state(s.state.Load()) }

// doom reports why the object in s must go, if it was doomed (doomed).
func (s *slot) doom() (destroyCause, bool) {
	c := s.doomed.Load()
	return destroyCause(c - 1), c != 0
}

// cas is the one way the slot's state changes. Under the race detector it
// also checks the move against slotMoves (slotmoves.go); otherwise
// checkMoves is false and the check is compiled out.
func (s *slot) cas(old, new state) bool {
	if checkMoves {
		return s.checkedCAS(old, new)
	}
	return s.state.CompareAndSwap(uint64(old), uint64(new))
}

// move changes the slot from kind from to kind to, keeping seq and the
// listed bit, and fails if the slot is not in kind from with seq.
func (s *slot) move(from slotKind, seq uint32, to slotKind) (state, bool) {
	for {
		st := s.load()
		if st.kind() != from || st.seq() != seq {
			return st, false
		}
		if s.cas(st, st.with(to)) {
			return st.with(to), true
		}
	}
}

// handOut moves the slot from kind from with seq to inUse with the next
// seq, for a taker whose home is shard h.
func (s *slot) handOut(from slotKind, seq uint32, h uint32) (state, bool) {
	for {
		st := s.load()
		if st.kind() != from || st.seq() != seq {
			return st, false
		}
		nst := st.handedOut().withShard(h)
		if s.cas(st, nst) {
			s.c.leaveShard(s, st)
			return nst, true
		}
	}
}
