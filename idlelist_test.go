package actorpool

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// An idleList is the idle stack or the idle queue, for tests that hold of
// both.
type idleList interface {
	push(i int32)
	pop() (int32, bool)
}

func newIdleStack(n int) *idleStack { return &idleStack{slots: make([]slot, n)} }

func newIdleQueue(n int) *idleQueue {
	q := &idleQueue{}
	q.init(n)
	return q
}

// popAll pops l until it is empty, or it has popped more than it can
// hold: a broken list may pop forever.
func popAll(l idleList) []int32 {
	var got []int32
	for len(got) <= maxListed {
		i, ok := l.pop()
		if !ok {
			break
		}
		got = append(got, i)
	}
	return got
}

// maxListed bounds the indexes the tests list at once.
const maxListed = 1 << 12

// The stack's head names a slot index plus one in stackIdxBits bits: every
// index of the largest pool must fit, and the largest must come back.
func TestIdleStackCapacity(t *testing.T) {
	if MaxObjectsLimit > stackIdxMask {
		t.Fatalf("MaxObjectsLimit %d does not fit the stack head's %d index bits", MaxObjectsLimit, stackIdxBits)
	}
	const n = 1 << 12
	st := newIdleStack(n)
	for i := range int32(n) {
		st.push(i)
	}
	got := popAll(st)
	if len(got) != n || got[0] != n-1 || got[n-1] != 0 {
		t.Fatalf("popped %d indexes, from %d to %d; want %d, from %d to 0", len(got), got[0], got[len(got)-1], n, n-1)
	}
}

// A pop reads the head, then the top's link, then swaps the head. If, in
// between, other goroutines pop the top and the one below it and push the
// top back, the head names the same top again but its link has changed: a
// swap that compared the top alone would succeed and put a popped slot
// back on the stack (the ABA problem). The head's tag must make it fail.
func TestIdleStackABA(t *testing.T) {
	st := newIdleStack(3)
	st.push(0)
	st.push(1)
	st.push(2)
	stale := st.head.Load() // a pop reads top 2, link 1, and is descheduled
	a, _ := st.pop()        // 2
	b, _ := st.pop()        // 1, now held by its taker
	st.push(a)              // 2 again on top, its link now 0
	if st.head.Load() == stale {
		t.Fatalf("after popping %d and %d and pushing %d back, the head is what it was: a stale pop would succeed and hand out %d twice", a, b, a, b)
	}
	if got := popAll(st); !slices.Equal(got, []int32{2, 0}) {
		t.Fatalf("popped %v, want [2 0]", got)
	}
}

// The stack pops the index pushed last, the queue the one pushed first,
// down to empty and back.
func TestIdleListOrder(t *testing.T) {
	tests := []struct {
		name string
		l    idleList
		all  []int32 // popped after pushing 0 to 7
		next int32   // popped after pushing 3 and 5
		rest []int32 // popped after that and pushing 0
	}{
		{"stack", newIdleStack(8), []int32{7, 6, 5, 4, 3, 2, 1, 0}, 5, []int32{0, 3}},
		{"queue", newIdleQueue(8), []int32{0, 1, 2, 3, 4, 5, 6, 7}, 3, []int32{5, 0}},
	}
	for _, tt := range tests {
		if i, ok := tt.l.pop(); ok {
			t.Fatalf("pop of an empty %s = %d", tt.name, i)
		}
		for i := range int32(8) {
			tt.l.push(i)
		}
		if got := popAll(tt.l); !slices.Equal(got, tt.all) {
			t.Errorf("%s: popped %v, want %v", tt.name, got, tt.all)
		}
		tt.l.push(3)
		tt.l.push(5)
		if i, _ := tt.l.pop(); i != tt.next {
			t.Errorf("%s: pop = %d, want %d", tt.name, i, tt.next)
		}
		tt.l.push(0)
		if got := popAll(tt.l); !slices.Equal(got, tt.rest) {
			t.Errorf("%s: popped %v, want %v", tt.name, got, tt.rest)
		}
	}
}

// The queue holds at least the capacity it is made for, and keeps its
// order lap after lap around its cells.
func TestIdleQueueCapacityAndLaps(t *testing.T) {
	for _, capacity := range []int{1, 3, 8, 100} {
		q := newIdleQueue(capacity)
		if len(q.cells) < capacity {
			t.Fatalf("a queue for %d has %d cells", capacity, len(q.cells))
		}
		next := int32(0)
		for lap := range 5 * len(q.cells) / capacity {
			for i := range int32(capacity) {
				q.push(next + i)
			}
			got := popAll(q)
			if len(got) != capacity {
				t.Fatalf("capacity %d, lap %d: popped %d of %d", capacity, lap, len(got), capacity)
			}
			for i, v := range got {
				if v != next+int32(i) {
					t.Fatalf("capacity %d, lap %d: popped %v, want %d up in order", capacity, lap, got, next)
				}
			}
			next += int32(capacity)
		}
	}
}

// Many goroutines popping and pushing the indexes of a few slots, as takers
// and holders do: no index is ever popped by two at once, and none is lost
// or made up.
func TestIdleListsConcurrent(t *testing.T) {
	const n, goroutines, rounds = 4, 16, 5000
	for name, l := range map[string]idleList{"stack": newIdleStack(n), "queue": newIdleQueue(n)} {
		t.Run(name, func(t *testing.T) {
			for i := range int32(n) {
				l.push(i)
			}
			var held [n]atomic.Int32
			var wg sync.WaitGroup
			for range goroutines {
				wg.Go(func() {
					for range rounds {
						i, ok := l.pop()
						if !ok {
							runtime.Gosched()
							continue
						}
						if i < 0 || i >= n {
							t.Errorf("popped %d, which was never pushed", i)
							return
						}
						if held[i].Add(1) != 1 {
							t.Errorf("index %d popped twice at once", i)
							return
						}
						runtime.Gosched()
						held[i].Add(-1)
						l.push(i)
					}
				})
			}
			wg.Wait()
			got := popAll(l)
			seen := map[int32]bool{}
			for _, i := range got {
				seen[i] = true
			}
			if len(got) != n || len(seen) != n {
				t.Errorf("after the run the list holds %v, want each of the %d indexes once", got, n)
			}
		})
	}
}
