package actorpool

import (
	"math/bits"
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
// cache line (parkedWord). A goroutine parks in the word of its home
// shard, picked by where its stack is (home), and takes from that word
// first, so that a goroutine that takes and gives back in a loop takes its
// own object again through a word and a slot that no other processor
// writes. With one word for the whole pool, every take and give-back on
// 16 cores moved that word's cache line, and the slot's, from one
// processor to another (docs/benchmarks.md, "Issue 23"). A slot records
// the shard it was last parked in, in its state word (slot.go), so that
// whether a lease's object is parked is still one word to read, and only
// its holder moves it (moveShard).
//
// Whoever takes a parked object (a taker, a giver-back making room, the
// keeper) claims its slot with a CAS from in use under the parked seq. A
// taker leaves its own home word as it is, stale once the slot's seq has
// moved on, since it will park there again and a clear would cost the
// uncontended cycle a CAS; a taker looking through other shards' words
// clears each word it takes from or finds stale, so that the next look
// passes over it without reading the slot, whose cache line its holder
// writes. Two rules keep this safe:
//
//   - the word is replaced or cleared only after the object it names has
//     been claimed, so a lease that was already given back sees either its
//     object parked or its seq gone, never a gap in between;
//   - a claim compares the whole state word, seq included, so a stale word
//     can never claim the slot from its next holder.
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
	maxParkShards     = 64
)

// A parkedWord is one shard's parked word, alone on its cache line.
type parkedWord struct {
	atomic.Uint64
	_ [56]byte
}

// initParked makes the parked words: parkShardsPerProc per processor,
// rounded up to a power of two, within the bounds above. A FIFO pool
// parks nothing, and gets one word, always empty, so that a take that
// finds the idle list empty does not look through the others.
func (p *core) initParked() {
	procs := runtime.GOMAXPROCS(0)
	n := 1
	for !p.cfg.FIFO && n < parkShardsPerProc*procs && n < 2*p.cfg.MaxObjects && n < maxParkShards {
		n <<= 1
	}
	p.parked = make([]parkedWord, n)
	p.parkMask = uint32(n - 1)
	p.parkShift = uint8(64 - bits.TrailingZeros(uint(n)))
}

// home returns the calling goroutine's shard: a hash of the 8 KiB block
// its stack is in, the same from one take to the next (unless the stack
// has grown and moved since), and different, mostly, from another
// goroutine's. Go gives a goroutine no cheaper identity, nor the
// processor it runs on, through its standard library.
func (p *core) home() uint32 {
	var b byte
	a := uint64(uintptr(unsafe.Pointer(&b))) >> 13
	// Fibonacci hashing: the top bits of the product.
	return uint32(a * 0x9E3779B97F4A7C15 >> p.parkShift)
}

func packParked(idx int32, seq uint32) uint64 { return uint64(seq)<<32 | uint64(idx+1) }

func unpackParked(v uint64) (idx int32, seq uint32) { return int32(uint32(v)) - 1, uint32(v >> 32) }

// isParked reports whether the object of slot idx, in use with seq, is in
// fact parked.
func (p *core) isParked(idx int32, seq uint32) bool {
	return p.parkedWord(&p.slots[idx]).Load() == packParked(idx, seq)
}

// parkedWord returns the word slot s was last parked in, or the first
// word if it was never parked.
func (p *core) parkedWord(s *slot) *atomic.Uint64 { return p.wordOf(s.load()) }

// wordOf returns the word of the shard in st.
func (p *core) wordOf(st state) *atomic.Uint64 { return &p.parked[st.shard()&p.parkMask].Uint64 }

// park parks a slot that the caller holds in use with seq in the caller's
// home word, moving the object parked there before it, if it is still
// parked, to the idle list. It reports false, and parks nothing, if the
// slot is not in use with seq: a second give-back of a lease, racing the
// first, that found the lease in force before the first parked it.
func (p *core) park(s *slot, seq uint32) bool {
	h := p.home()
	// moveShard's first look, written out: the uncontended cycle, one
	// goroutine in one shard, makes no call here.
	if st := s.load(); st.kind() != kindInUse || st.seq() != seq || st.shard() != h && !p.moveShard(s, seq, h) {
		return false
	}
	mine := packParked(s.idx, seq)
	word := &p.parked[h].Uint64
	for {
		v := word.Load()
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
		if word.CompareAndSwap(v, mine) {
			return true
		}
	}
}

// moveShard records shard h in the state of slot s, which the caller
// holds in use with seq, unless it is there already, and reports false if
// the slot is not in use with seq. The shard lives in the state word, and
// changes by a CAS that compares the seq, so that a stale give-back can
// never point a slot away from the word its object is parked in (which
// Close, the keeper and Stats find it through). A CAS only when the
// shard changes: the uncontended cycle, one goroutine in one shard, pays
// a load. The word of the shard it leaves is cleared if it still names
// the slot: the caller holds the object, so it is stale there, and left
// alone it could outlive the slot's seq coming round again.
func (p *core) moveShard(s *slot, seq uint32, h uint32) bool {
	for {
		st := s.load()
		if st.kind() != kindInUse || st.seq() != seq {
			return false
		}
		if st.shard() == h {
			return true
		}
		if s.cas(st, st.withShard(h)) {
			old := p.wordOf(st)
			if v := old.Load(); v != 0 {
				if idx, _ := unpackParked(v); idx == s.idx {
					old.CompareAndSwap(v, 0)
				}
			}
			return true
		}
	}
}

// acquireParked claims the object parked in shard h for a taker,
// returning its slot moved to in use with the next seq, or nil. With
// clear, it then clears the word, or clears it if it is stale, unless a
// giver has parked there since.
// It makes one attempt: a claim that loses a race leaves the object to the
// winner, or to the idle list.
func (p *core) acquireParked(h uint32, clear bool) (*slot, uint32) {
	word := &p.parked[h].Uint64
	v := word.Load()
	if v == 0 {
		return nil, 0
	}
	idx, seq := unpackParked(v)
	s := &p.slots[idx]
	st := s.load()
	if st.kind() == kindInUse && st.seq() == seq {
		nst := st.handedOut()
		if !s.cas(st, nst) {
			return nil, 0
		}
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
