package actorpool

import (
	"runtime"
	"sync/atomic"
)

// The idle list holds the indexes of idle slots, either as a stack
// (last-in, first-out, the default) or as a queue (first-in, first-out).
// Both are lock-free. A slot's listed bit guarantees its index is in the
// list at most once, so neither can overflow.
//
// The list is only a hint: a taker that pops an index settles it against
// the slot's state, taking the object if it is idle and otherwise clearing
// the listed bit. The keeper never pops; it reserves slots through their
// state alone.

// idleStack is a Treiber stack. The head packs the top index (+1, so that 0
// is empty) with a tag bumped on every change, so a pop that read a stale
// top cannot succeed (the ABA problem).
type idleStack struct {
	head  atomic.Uint64
	slots []slot
}

const (
	stackIdxBits = 21 // index+1 up to MaxObjectsLimit
	stackIdxMask = 1<<stackIdxBits - 1
)

func (st *idleStack) push(i int32) {
	s := &st.slots[i]
	for {
		h := st.head.Load()
		s.next.Store(uint32(h & stackIdxMask))
		nh := (h>>stackIdxBits+1)<<stackIdxBits | uint64(i+1)
		if st.head.CompareAndSwap(h, nh) {
			return
		}
	}
}

func (st *idleStack) pop() (int32, bool) {
	for {
		h := st.head.Load()
		top := h & stackIdxMask
		if top == 0 {
			return 0, false
		}
		next := st.slots[top-1].next.Load()
		nh := (h>>stackIdxBits+1)<<stackIdxBits | uint64(next)
		if st.head.CompareAndSwap(h, nh) {
			return int32(top - 1), true
		}
	}
}

// idleQueue is Dmitry Vyukov's bounded multi-producer multi-consumer queue.
// Each cell's sequence number says whether it is ready to be written or
// read in the current lap.
type idleQueue struct {
	cells []queueCell
	mask  uint64
	_     [56]byte
	tail  atomic.Uint64
	_     [56]byte
	head  atomic.Uint64
	_     [56]byte
}

type queueCell struct {
	seq atomic.Uint64
	val atomic.Int32
}

// init sizes the queue to twice capacity, rounded up to a power of two.
func (q *idleQueue) init(capacity int) {
	n := 1
	for n < 2*capacity {
		n <<= 1
	}
	q.cells = make([]queueCell, n)
	q.mask = uint64(n - 1)
	for i := range q.cells {
		q.cells[i].seq.Store(uint64(i))
	}
}

func (q *idleQueue) push(i int32) {
	pos := q.tail.Load()
	for {
		c := &q.cells[pos&q.mask]
		seq := c.seq.Load()
		switch d := int64(seq) - int64(pos); {
		case d == 0:
			if q.tail.CompareAndSwap(pos, pos+1) {
				c.val.Store(i)
				c.seq.Store(pos + 1)
				return
			}
			pos = q.tail.Load()
		case d < 0:
			// A consumer has claimed this cell a lap ago and not yet
			// freed it. The queue holds at most half its capacity, so
			// this only happens while that consumer is descheduled.
			runtime.Gosched()
			pos = q.tail.Load()
		default:
			pos = q.tail.Load()
		}
	}
}

func (q *idleQueue) pop() (int32, bool) {
	pos := q.head.Load()
	for {
		c := &q.cells[pos&q.mask]
		seq := c.seq.Load()
		switch d := int64(seq) - int64(pos+1); {
		case d == 0:
			if q.head.CompareAndSwap(pos, pos+1) {
				v := c.val.Load()
				c.seq.Store(pos + q.mask + 1)
				return v, true
			}
			pos = q.head.Load()
		case d < 0:
			return 0, false
		default:
			pos = q.head.Load()
		}
	}
}
