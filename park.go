package actorpool

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// A parked object is one just given back, kept in a parked word of the
// pool (core.parked) instead of the idle list, with its slot left in use
// under the seq of the lease that gave it back. Giving an object back is
// then one CAS, on that word, and taking it again one more, on its slot,
// which is what makes the uncontended cycle cheap; the idle list holds the
// rest.
//
// The pool has several parked words, one per shard, each alone on its
// cache line (parkedWord). A taker looks first in the word of its home
// shard, picked by where its stack is (home), and the claim that hands it
// an object records that shard in the slot's state (slot.go); the object
// is parked in that shard's word when it is given back. So a goroutine
// that takes and gives back in a loop takes its own object again through
// a word and a slot that no other processor writes, and its give-back
// computes no home: it parks where its take looked, however deep in its
// stack the give-back runs. With one word for the whole pool, every take
// and give-back on 16 cores moved that word's cache line, and the slot's,
// from one processor to another (docs/benchmarks.md, "Issue 23").
//
// The shard in a slot's state changes only with a claim, in the CAS that
// moves the seq on. A lease's holder, and a stale give-back of an earlier
// lease, never change it: the word a lease's object is parked in, which
// Close, the keeper, Stats and a second give-back find it through, is the
// one its state names for as long as the seq is that lease's.
//
// Whoever takes a parked object (a taker, a giver-back making room, the
// keeper) claims its slot with a CAS from in use under the parked seq. A
// taker leaves its own home word as it is, stale once the slot's seq has
// moved on, since it will park there again and a clear would cost the
// uncontended cycle a CAS; a taker looking through other shards' words
// clears each word it takes from or finds stale, so that the next look
// passes over it without reading the slot, whose cache line its holder
// writes. Every other claim clears the word of the shard the object was
// in if it still names the slot (leaveShard). Three rules keep this safe:
//
//   - the word is replaced or cleared only after the object it names has
//     been claimed, so a lease that was already given back sees either its
//     object parked or claimed (its seq gone, or its kind no longer in
//     use), never a gap in between;
//   - a claim through a word, a taker's or a giver's making room,
//     compares the state's kind and seq and claims only a slot whose
//     state names that word's shard, so a stale word can never claim the
//     slot from its next holder;
//   - a stale word is overwritten or cleared within a hand-out or two of
//     the slot (leaveShard), so that it cannot outlive the seq coming
//     round again.
//
// LIFO pools only: parking the newest object contradicts FIFO. Reuse is
// last in, first out per shard, and then through the idle list, which a
// park over a parked object adds that object to: the most recently given
// back objects are reused first, and surplus ones go idle and age out.

// parkShardsPerProc and maxParkShards size the parked words: four per
// processor, so that goroutines running at once rarely share one, but no
// more than 64, nor more than twice the objects, since a taker whose own
// word is empty, and a waiter before it sleeps, look through them all.
const (
	parkShardsPerProc = 4
	maxParkShardBits  = 6
	maxParkShards     = 1 << maxParkShardBits
)

// A parkedWord is one shard's parked word, alone on its cache line.
type parkedWord struct {
	atomic.Uint64
	_ [56]byte
}

// initParked picks how many of the parked words the pool uses:
// parkShardsPerProc per processor, rounded up to a power of two, within
// the bounds above. A FIFO pool parks nothing, and uses one word, always
// empty, so that a take that finds the idle list empty does not look
// through the others.
func (p *core) initParked() {
	procs := runtime.GOMAXPROCS(0)
	n := 1
	for !p.cfg.FIFO && n < parkShardsPerProc*procs && n < 2*p.cfg.MaxObjects && n < maxParkShards {
		n <<= 1
	}
	p.parkMask = uint32(n - 1)
}

// home returns the calling goroutine's shard: a hash of the 2 KiB block
// of its stack that the take runs in, the same from one take to the next
// at the same call site (unless the stack has grown and moved since), and
// different, mostly, from another goroutine's. Goroutines start on 2 KiB
// stacks, side by side in memory: a coarser block would put the stacks of
// goroutines started together, a server's workers say, in one shard. Go
// gives a goroutine no cheaper identity, nor the processor it runs on,
// through its standard library.
func (p *core) home() uint32 {
	var b byte
	a := uint64(uintptr(unsafe.Pointer(&b))) >> 11
	// Fibonacci hashing: the top bits of the product, as many as the most
	// shards need, then those that this pool's shards do. A shift by a
	// constant, where one by the pool's shard count costs a load, a
	// variable shift and Go's check for a shift past 63.
	return uint32(a*0x9E3779B97F4A7C15>>(64-maxParkShardBits)) & p.parkMask
}

func packParked(idx int32, seq uint32) uint64 { return uint64(seq)<<32 | uint64(idx+1) }

func unpackParked(v uint64) (idx int32, seq uint32) { return int32(uint32(v)) - 1, uint32(v >> 32) }

// isParked reports whether the object of slot idx, in use with seq, is in
// fact parked.
func (p *core) isParked(idx int32, seq uint32) bool {
	return p.parkedWord(&p.slots[idx]).Load() == packParked(idx, seq)
}

// parkedWord returns the word slot s is parked in, if it is: that of the
// shard its last hand-out recorded.
func (p *core) parkedWord(s *slot) *atomic.Uint64 { return p.wordOf(s.load()) }

// wordOf returns the word of the shard in st.
func (p *core) wordOf(st state) *atomic.Uint64 { return &p.parked[st.shard()].Uint64 }

// park parks a slot that the caller holds in use with seq in the word of
// the shard its state names, the one its taker looked in, moving the
// object parked there before it, if it is still parked, to the idle list.
// It reports false, and parks nothing, if the slot is not in use with seq,
// or is parked with seq already: a second give-back of a lease that found
// the lease in force before the first parked it.
func (p *core) park(s *slot, seq uint32) bool { return p.parkFrom(s, s.load(), seq) }

// parkFrom is park, from st, the state of slot s as the caller read it.
func (p *core) parkFrom(s *slot, st state, seq uint32) bool {
	if st.kind() != kindInUse || st.seq() != seq {
		return false
	}
	mine := packParked(s.idx, seq)
	word := p.wordOf(st)
	for {
		v := word.Load()
		if v == mine {
			return false
		}
		if v != 0 {
			// Claim the parked object by listing it; if it is no longer
			// in use under the parked seq, someone took it already and the
			// word is stale.
			idx, oseq := unpackParked(v)
			o := &p.slots[idx]
			if ost := o.load(); ost.kind() == kindInUse && ost.seq() == oseq && ost.shard() == st.shard() {
				p.list(o, kindInUse, oseq)
			}
		}
		if word.CompareAndSwap(v, mine) {
			break
		}
	}
	if now := s.load(); now.kind() != kindInUse || now.seq() != seq {
		// Claimed since the check above: by a taker, of what this parked
		// (fine), or, before this parked, of what a racing give-back of
		// the same lease parked, in which case the word now names a seq
		// that has moved on, in a shard the object may have left. Either
		// way the word is stale, and a stale word left in a shard that
		// the object has left is never cleared by its next claims. Every
		// claim changes the kind or the seq; the one change that does
		// neither, a taker clearing the listed bit of a stale idle-list
		// entry (settle), claims nothing, and the object stays parked.
		word.CompareAndSwap(mine, 0)
	}
	return true
}

// leaveShard clears the word of the shard in st, the state of slot s
// before a claim, if the word names the slot: the claim made it stale.
// Every claim but a taker's through its own home word does so (that one
// leaves the word for its give-back to park over): so a stale word is
// overwritten or cleared within a hand-out or two, and cannot outlive
// the slot's seq coming round again (2^32 hand-outs), after which it
// would name the slot's next holder's seq, and claim the object from it.
func (p *core) leaveShard(s *slot, st state) {
	word := p.wordOf(st)
	if v := word.Load(); v != 0 {
		if idx, _ := unpackParked(v); idx == s.idx {
			word.CompareAndSwap(v, 0)
		}
	}
}

// acquireParked claims the object parked in shard i for a taker whose
// home is h, returning its slot moved to in use with the next seq and
// shard h, or nil. In a shard other than its home, the taker then clears
// the word, or clears it if it is stale, unless a giver has parked there
// since.
// It makes one attempt: a claim that loses a race leaves the object to the
// winner, or to the idle list.
func (p *core) acquireParked(i, h uint32) (*slot, uint32) {
	clear := i != h
	word := &p.parked[i].Uint64
	v := word.Load()
	if v == 0 {
		return nil, 0
	}
	idx, seq := unpackParked(v)
	s := &p.slots[idx]
	if nst, ok := s.claimParked(s.load(), seq, i, h); ok {
		if clear {
			word.CompareAndSwap(v, 0)
		}
		return s, nst.seq()
	}
	if clear {
		word.CompareAndSwap(v, 0) // stale: the object was claimed
	}
	return nil, 0
}

// claimParked moves slot s, read in state st, from parked in shard i under
// seq to handed out to a taker whose home is h, and returns its new state;
// it reports false if the slot is not, or no longer, parked there under
// seq. A CAS that fails only because a taker cleared the slot's stale
// listed bit (settle) is tried again: that taker claimed nothing, and a
// claim given up then would leave the object parked with no one the
// wiser, serveIdle among them, while a waiter sleeps.
func (s *slot) claimParked(st state, seq, i, h uint32) (state, bool) {
	// In use under seq in shard i, listed or not: every other bit is 0.
	parked := state(seq)<<seqShift | state(i)<<shardShift | state(kindInUse)
	for st&^listedBit == parked {
		nst := st.handedOut().withShard(h)
		if s.cas(st, nst) {
			return nst, true
		}
		st = s.load()
	}
	return st, false
}

// unpark claims the parked object for the keeper if it is the one in slot
// s, moving it to reserved, and reports whether it did.
func (p *core) unpark(s *slot, seq uint32) bool {
	v := packParked(s.idx, seq)
	word := p.parkedWord(s)
	if word.Load() != v {
		return false
	}
	if _, ok := s.move(kindInUse, seq, kindReserved); !ok {
		return false
	}
	word.CompareAndSwap(v, 0)
	return true
}
