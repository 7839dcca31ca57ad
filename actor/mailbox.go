package actor

// A mailbox holds the tasks waiting for a worker, in the order they came. It
// is a ring buffer when bounded and a list of chunks when not; both keep
// their storage between tasks, so that queuing a task does not allocate. The
// actor's mutex guards it. Its methods, and those of ring and chunks, take
// and fill elements through pointers, so that a task is copied once on its
// way in and once on its way out: the copies happen while the actor's lock
// is held, and make every other sender and worker wait.
type mailbox[T any] struct {
	bounded bool
	ring    ring[envelope[T]]
	list    chunks[envelope[T]]
}

func newMailbox[T any](capacity int) mailbox[T] {
	if capacity == 0 {
		return mailbox[T]{}
	}
	return mailbox[T]{bounded: true, ring: ring[envelope[T]]{buf: make([]envelope[T], capacity)}}
}

func (m *mailbox[T]) len() int {
	if m.bounded {
		return m.ring.n
	}
	return m.list.n
}

func (m *mailbox[T]) full() bool { return m.bounded && m.ring.n == len(m.ring.buf) }

// push adds *e at the back; the caller has checked that the mailbox is not full.
func (m *mailbox[T]) push(e *envelope[T]) {
	if m.bounded {
		m.ring.push(e)
	} else {
		m.list.push(e)
	}
}

// pop moves the front to *dst; the caller has checked that the mailbox is
// not empty.
func (m *mailbox[T]) pop(dst *envelope[T]) {
	if m.bounded {
		m.ring.pop(dst)
	} else {
		m.list.pop(dst)
	}
}

// lend lends up to max tasks from the front of an unbounded mailbox, which
// is not empty; see chunks.lend.
func (m *mailbox[T]) lend(max int) (c *chunk[envelope[T]], from, to int) {
	return m.list.lend(max)
}

// front returns the task that has waited longest, or nil.
func (m *mailbox[T]) front() *envelope[T] {
	if m.bounded {
		return m.ring.front()
	}
	return m.list.front()
}

// A ring is a fixed-capacity FIFO over a circular buffer.
type ring[E any] struct {
	buf  []E
	head int // index of the front
	n    int // number of elements
}

func (r *ring[E]) push(e *E) {
	i := r.head + r.n
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	r.buf[i] = *e
	r.n++
}

func (r *ring[E]) pop(dst *E) {
	*dst = r.buf[r.head]
	var zero E
	r.buf[r.head] = zero // let the payload be collected
	r.head++
	if r.head == len(r.buf) {
		r.head = 0
	}
	r.n--
}

func (r *ring[E]) front() *E {
	if r.n == 0 {
		return nil
	}
	return &r.buf[r.head]
}

// chunkLen is the number of tasks per chunk of an unbounded mailbox: large
// enough that allocating a chunk is rare, small enough that an idle actor
// holds little.
const chunkLen = 64

type chunk[E any] struct {
	items [chunkLen]E
	next  *chunk[E]
	// lent counts the workers' hands holding slots of this chunk; while it
	// is not zero, the queue neither clears the chunk nor writes to it again.
	lent int
}

// chunks is an unbounded FIFO made of a linked list of chunks. It grows a
// chunk at a time and gives chunks back as it drains, keeping one spare so
// that a queue hovering around a chunk boundary does not allocate on every
// crossing.
//
// Popping does not clear the element it reads: a long queue is bound by
// memory traffic, and a drained chunk that is dropped needs no clearing.
// Elements are cleared in bulk instead, so that no payload is kept from the
// garbage collector for long: a chunk kept as the spare is cleared when it
// is kept, and the head chunk up to its write index when the queue empties.
// Until then at most a chunk's worth of popped payloads stays reachable.
type chunks[E any] struct {
	head, tail *chunk[E]
	r, w       int // next read index in head, next write index in tail
	n          int
	spare      *chunk[E]
}

func (q *chunks[E]) push(e *E) {
	if q.tail == nil || q.w == chunkLen {
		c := q.spare
		if c == nil {
			c = new(chunk[E])
		}
		q.spare = nil
		if q.tail == nil {
			q.head, q.r = c, 0
		} else {
			q.tail.next = c
		}
		q.tail, q.w = c, 0
	}
	q.tail.items[q.w] = *e
	q.w++
	q.n++
}

func (q *chunks[E]) pop(dst *E) {
	*dst = q.head.items[q.r]
	q.r++
	q.n--
	q.advance()
}

// advance moves past the head chunk when it is used up: when the queue is
// empty, the chunk is started over unless slots of it are lent; when its
// last slot has been read, it is dropped, or kept as the spare.
func (q *chunks[E]) advance() {
	switch {
	case q.n == 0 && q.head.lent > 0:
		// Empty, but hands still read slots of the chunk: leave it to
		// them, and start the next push on another chunk.
		q.head, q.tail, q.r, q.w = nil, nil, 0, 0
	case q.n == 0:
		// Empty, so head is tail: keep the chunk and start it over.
		clear(q.head.items[:q.w])
		q.r, q.w = 0, 0
	case q.r == chunkLen:
		old := q.head
		q.head, q.r = old.next, 0
		old.next = nil
		if q.spare == nil && old.lent == 0 {
			clear(old.items[:])
			q.spare = old
		}
	}
}

// lend takes up to max elements from the front, all in one chunk, and
// returns that chunk and the bounds of the slots taken, [from, to). The
// caller reads them in place and gives them back with giveBack; the queue is
// not empty.
func (q *chunks[E]) lend(max int) (c *chunk[E], from, to int) {
	c, from = q.head, q.r
	end := chunkLen
	if c == q.tail {
		end = q.w
	}
	k := min(max, end-from)
	q.r += k
	q.n -= k
	c.lent++
	q.advance()
	return c, from, from + k
}

// giveBack ends a loan of slots of c.
func (c *chunk[E]) giveBack() { c.lent-- }

func (q *chunks[E]) front() *E {
	if q.n == 0 {
		return nil
	}
	return &q.head.items[q.r]
}
