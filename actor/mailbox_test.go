package actor

import (
	"slices"
	"testing"
)

// TestRing checks the ring's order across many wrap-arounds against a slice.
func TestRing(t *testing.T) {
	noLeaks(t)
	r := ring[int]{buf: make([]int, 5)}
	var model []int
	next := 0
	for step := range 1000 {
		// Fill and drain in uneven bursts so that head visits every index.
		if step%7 < 4 && r.n < len(r.buf) {
			r.push(&next)
			model = append(model, next)
			next++
		} else if r.n > 0 {
			if got := *r.front(); got != model[0] {
				t.Fatalf("step %d: front = %d, want %d", step, got, model[0])
			}
			var got int
			if r.pop(&got); got != model[0] {
				t.Fatalf("step %d: pop = %d, want %d", step, got, model[0])
			}
			model = model[1:]
		}
		if r.n != len(model) {
			t.Fatalf("step %d: n = %d, want %d", step, r.n, len(model))
		}
	}
	if r.front() != nil && r.n == 0 {
		t.Error("front of an empty ring is not nil")
	}
}

// TestChunksGrowAndShrink checks order across chunks and that a drained queue
// keeps at most two chunks.
func TestChunksGrowAndShrink(t *testing.T) {
	noLeaks(t)
	var q chunks[*int]
	const n = 10*chunkLen + 3
	vals := make([]*int, n)
	for i := range vals {
		v := i
		vals[i] = &v
		q.push(&vals[i])
	}
	if got := countChunks(&q); got != 11 {
		t.Fatalf("%d tasks take %d chunks, want 11", n, got)
	}
	for i := range n {
		var got *int
		if q.pop(&got); *got != i {
			t.Fatalf("pop %d = %d", i, *got)
		}
	}
	if q.n != 0 || q.front() != nil {
		t.Fatalf("drained queue: n = %d, front = %v", q.n, q.front())
	}
	if got := countChunks(&q); got > 2 {
		t.Errorf("a drained queue holds %d chunks, want at most 2", got)
	}
	// The chunks it kept no longer reference the payloads.
	referenced := func(p *int) bool { return p != nil }
	if slices.ContainsFunc(q.head.items[:], referenced) {
		t.Error("a drained chunk still references payloads")
	}
	if q.spare != nil && slices.ContainsFunc(q.spare.items[:], referenced) {
		t.Error("the spare chunk still references payloads")
	}

	// Around a chunk boundary the queue reuses its spare and stops allocating.
	for range chunkLen - 1 {
		q.push(&vals[0])
	}
	allocs := testing.AllocsPerRun(100, func() {
		var got *int
		q.push(&vals[0])
		q.push(&vals[0])
		q.pop(&got)
		q.pop(&got)
	})
	if allocs != 0 {
		t.Errorf("crossing a chunk boundary allocates %v times", allocs)
	}
}

// TestChunksLend checks that slots lent out of a chunk are neither
// overwritten nor cleared by the queue, whether the loan empties the queue
// or the queue reads past the chunk, and that a lent chunk does not become
// the spare.
func TestChunksLend(t *testing.T) {
	noLeaks(t)
	vals := make([]*int, 2*chunkLen)
	for i := range vals {
		v := i
		vals[i] = &v
	}
	intact := func(c *chunk[*int], from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			if c.items[i] != vals[i] {
				t.Fatalf("lent slot %d holds %v", i, c.items[i])
			}
		}
	}

	// A loan that empties the queue: the next pushes go to another chunk.
	var q chunks[*int]
	for i := range 10 {
		q.push(&vals[i])
	}
	c, from, to := q.lend(100)
	if from != 0 || to != 10 || q.n != 0 {
		t.Fatalf("lend(100) of 10 = [%d, %d), %d left; want [0, 10), 0 left", from, to, q.n)
	}
	for i := 10; i < 20; i++ {
		q.push(&vals[i])
	}
	intact(c, from, to)
	if q.head == c {
		t.Error("the queue wrote again into a chunk whose slots are lent")
	}

	// A loan from a chunk the queue then reads to its end: the chunk is
	// dropped, not kept as the spare, and not cleared.
	var r chunks[*int]
	for i := range vals {
		r.push(&vals[i])
	}
	c, from, to = r.lend(5)
	var got *int
	for range chunkLen - 5 {
		r.pop(&got)
	}
	if r.spare == c {
		t.Error("a chunk with lent slots became the spare")
	}
	intact(c, from, to)
	c.giveBack()
	if c.lent != 0 {
		t.Errorf("after giveBack, lent = %d", c.lent)
	}
	if *got != chunkLen-1 || r.n != chunkLen {
		t.Errorf("after the loan and %d pops: last popped %d, %d left; want %d, %d", chunkLen-5, *got, r.n, chunkLen-1, chunkLen)
	}
}

func countChunks[E any](q *chunks[E]) int {
	n := 0
	for c := q.head; c != nil; c = c.next {
		n++
	}
	if q.spare != nil {
		n++
	}
	return n
}

func TestMailboxBounded(t *testing.T) {
	noLeaks(t)
	m := newMailbox[int](2)
	if m.full() || m.len() != 0 || m.front() != nil {
		t.Fatal("a new mailbox is not empty")
	}
	m.push(&envelope[int]{id: 1})
	m.push(&envelope[int]{id: 2})
	if !m.full() {
		t.Fatal("a bounded mailbox holding its capacity is not full")
	}
	var got envelope[int]
	if m.pop(&got); got.id != 1 {
		t.Errorf("pop = task %d, want 1", got.id)
	}
	u := newMailbox[int](0)
	for i := range 1000 {
		u.push(&envelope[int]{id: uint64(i)})
		if u.full() {
			t.Fatal("an unbounded mailbox is full")
		}
	}
	if u.len() != 1000 || u.front().id != 0 {
		t.Errorf("unbounded mailbox: len %d, front %d", u.len(), u.front().id)
	}
}
