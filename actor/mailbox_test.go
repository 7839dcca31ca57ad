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
