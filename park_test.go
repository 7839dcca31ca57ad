package actorpool

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

func TestParkedWordPacking(t *testing.T) {
	for _, idx := range []int32{0, 1, MaxObjectsLimit - 1} {
		for _, seq := range []uint32{0, 1, math.MaxUint32} {
			v := packParked(idx, seq)
			if v == 0 {
				t.Errorf("packParked(%d, %d) = 0, the word of no parked object", idx, seq)
			}
			if i, s := unpackParked(v); i != idx || s != seq {
				t.Errorf("unpackParked(packParked(%d, %d)) = %d, %d", idx, seq, i, s)
			}
		}
	}
}

// A parked object taken by a taker leaves the word as it was, naming a
// seq that has moved on. Nothing may claim the slot through that stale
// word, whatever becomes of the slot, and the next park replaces it
// without listing the slot, which is someone else's.
func TestStaleParkedWord(t *testing.T) {
	b := newBare(false)
	s, seq := b.lent(t)
	b.p.release(s, seq) // parked
	stale := b.p.parked.Load()
	got, nseq := b.p.acquireIdle()
	if got != s || nseq != seq+1 {
		t.Fatalf("acquireIdle = slot %v seq %d, want the parked slot at seq %d", got, nseq, seq+1)
	}
	if b.p.parked.Load() != stale {
		t.Fatal("a taker changed the parked word")
	}
	// The old lease sees its object given back, the new one sees it lent.
	if _, ok := current(s.ticket, seq); ok {
		t.Error("the lease that parked the object is still in force")
	}
	check := func(when string) {
		t.Helper()
		before := s.load()
		if o, _ := b.p.acquireParked(); o != nil {
			t.Errorf("%s: a stale parked word claimed slot %d", when, o.idx)
		}
		if b.p.unpark(s, seq) {
			t.Errorf("%s: the keeper unparked slot %d through a stale word", when, s.idx)
		}
		if b.p.isParked(s.idx, s.load().seq()) {
			t.Errorf("%s: slot %d counts as parked", when, s.idx)
		}
		if after := s.load(); after != before {
			t.Errorf("%s: the slot moved from %v to %v", when, before.kind(), after.kind())
		}
	}
	check("lent to its next holder")

	// Its next holder retires it; the keeper destroys it and installs a
	// new object in the slot, which a waiter takes.
	s.doomed.Store(uint32(causeDiscarded) + 1)
	b.p.release(s, nseq)
	check("retired")
	b.k.destroyed(s.idx)
	check("free")
	b.k.alive++
	if n := b.k.install(new(int), b.k.gen); n != s {
		t.Fatalf("installed in slot %d, want %d", n.idx, s.idx)
	}
	check("reserved")
	w := b.waiter()
	b.k.putInService(s)
	served(t, w, s)
	check("lent to a waiter")

	// The next park replaces the stale word and leaves the slot alone.
	o, oseq := b.lent(t)
	b.p.release(o, oseq)
	if b.p.parked.Load() != packParked(o.idx, oseq) {
		t.Error("park did not replace the stale word")
	}
	if st := s.load(); st.kind() != kindInUse || st.listed() {
		t.Errorf("parking over a stale word moved its slot to %v (listed %v)", st.kind(), st.listed())
	}
}

// Parking over a live parked object lists that object, so it stays
// idle: the next takes get the newly parked one, then it.
func TestParkOverParked(t *testing.T) {
	b := newBare(false)
	a, aseq := b.lent(t)
	c, cseq := b.lent(t)
	b.p.release(a, aseq)
	b.p.release(c, cseq)
	if st := a.load(); st.kind() != kindIdle || !st.listed() {
		t.Fatalf("the object parked first is %v (listed %v), want idle and listed", st.kind(), st.listed())
	}
	if got, _ := b.p.acquireIdle(); got != c {
		t.Errorf("first take got slot %v, want the parked %d", got.idx, c.idx)
	}
	if got, _ := b.p.acquireIdle(); got != a {
		t.Errorf("second take got slot %v, want the listed %d", got.idx, a.idx)
	}
	if got, _ := b.p.acquireIdle(); got != nil {
		t.Errorf("third take got slot %d from an empty pool", got.idx)
	}
}

// Takers and holders racing over the parked word and the idle stack never
// hand one object to two, and lose none.
func TestParkedWordConcurrent(t *testing.T) {
	const objects, goroutines, rounds = 2, 8, 5000
	b := newBare(false)
	for range objects {
		b.idle()
	}
	var held [objects]atomic.Int32
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range rounds {
				s, seq := b.p.acquireIdle()
				if s == nil {
					runtime.Gosched()
					continue
				}
				if held[s.idx].Add(1) != 1 {
					t.Errorf("slot %d handed out twice at once", s.idx)
					return
				}
				runtime.Gosched()
				held[s.idx].Add(-1)
				if !b.p.release(s, seq) {
					t.Errorf("release of slot %d at seq %d refused", s.idx, seq)
					return
				}
			}
		})
	}
	wg.Wait()
	if c := b.p.census(); c.idle != objects || c.inUse != 0 {
		t.Errorf("after the run %d objects idle and %d in use, want %d idle", c.idle, c.inUse, objects)
	}
}
