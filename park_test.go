package actorpool

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// A taker that takes the object parked in its own home word leaves the
// word as it was, naming a seq that has moved on. Nothing may claim the
// slot through that stale word, whatever becomes of the slot, and the next
// park replaces it without listing the slot, which is someone else's.
func TestStaleParkedWord(t *testing.T) {
	b := newBare(false)
	s, seq := b.lent(t)
	b.p.release(s, seq) // parked
	word := b.p.parkedWord(s)
	stale := word.Load()
	got, nseq := b.p.acquireIdle()
	if got != s || nseq != seq+1 {
		t.Fatalf("acquireIdle = slot %v seq %d, want the parked slot at seq %d", got, nseq, seq+1)
	}
	if word.Load() != stale {
		t.Fatal("a taker changed its home word")
	}
	// The old lease sees its object given back, the new one sees it lent.
	if _, ok := current(s.ticket, seq); ok {
		t.Error("the lease that parked the object is still in force")
	}
	check := func(when string) {
		t.Helper()
		before := s.load()
		for h := range b.p.parked {
			if o, _ := b.p.acquireParked(uint32(h), false); o != nil {
				t.Errorf("%s: a stale parked word claimed slot %d", when, o.idx)
			}
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
	if b.p.parkedWord(o).Load() != packParked(o.idx, oseq) {
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

// onOtherShard runs f on a goroutine whose home shard is not mine, and
// reports that shard. Its candidates live at once, since a goroutine
// started after another has ended may run on that one's stack. A home is
// where a goroutine's stack is, which moves when the stack grows or the
// garbage collector shrinks it: each candidate grows its stack before it
// reads its home, so that f does not grow it (under the race detector it
// did, in about one run in a hundred), and no collection runs meanwhile.
func onOtherShard(t *testing.T, p *core, mine uint32, f func()) uint32 {
	t.Helper()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const n = 64
	homes := make([]uint32, n)
	var ready sync.WaitGroup
	var done sync.WaitGroup
	start := make(chan struct{})
	chosen := -1
	for i := range n {
		ready.Add(1)
		done.Go(func() {
			growStack(32)
			homes[i] = p.home()
			ready.Done()
			<-start
			if i == chosen {
				f()
				if h := p.home(); h != homes[i] {
					t.Errorf("the goroutine's home moved from shard %d to %d", homes[i], h)
				}
			}
		})
	}
	ready.Wait()
	for i, h := range homes {
		if h != mine {
			chosen = i
			break
		}
	}
	close(start)
	done.Wait()
	if chosen < 0 {
		t.Fatalf("all %d goroutines had the test's home shard, %d", n, mine)
	}
	return homes[chosen]
}

// growStack uses some n KiB of stack, so that the calling goroutine's
// stack is at least that large when it returns.
//
//go:noinline
func growStack(n int) byte {
	var buf [1024]byte
	buf[n%len(buf)] = byte(n)
	if n > 0 {
		return growStack(n-1) + buf[(n+1)%len(buf)]
	}
	return buf[0]
}

// Each goroutine parks in, and takes first from, its own shard's word: a
// goroutine that gives an object back takes that object again, although
// another goroutine has given one back since. With one word for the pool
// it would take the other's, and on many cores every take would move
// both objects' cache lines between processors.
func TestParkedPerShard(t *testing.T) {
	b := newBare(false)
	if len(b.p.parked) < 2 {
		t.Skip("one parked word: GOMAXPROCS is 1 and the pool tiny")
	}
	a, aseq := b.lent(t)
	o, oseq := b.lent(t)
	b.p.release(a, aseq)
	mine := b.p.home()
	if b.p.parkedWord(a) != &b.p.parked[mine].Uint64 {
		t.Fatalf("parked outside the home shard %d", mine)
	}
	var theirs *slot
	other := onOtherShard(t, &b.p.core, mine, func() {
		b.p.release(o, oseq)
		theirs, _ = b.p.acquireIdle()
		b.p.release(theirs, oseq+1)
	})
	if theirs != o {
		t.Errorf("the other goroutine took slot %v, want its own %d", theirs, o.idx)
	}
	if b.p.parkedWord(o) != &b.p.parked[other].Uint64 {
		t.Errorf("the other goroutine parked outside its home shard %d", other)
	}
	if got, _ := b.p.acquireIdle(); got != a {
		t.Errorf("took slot %v, want %d, the one this goroutine parked", got, a.idx)
	}
}

// A taker whose own word is empty, with the idle list empty too, takes an
// object parked in another shard's word, and clears that word; a word it
// finds stale there it clears too, so that the next look passes over it
// without reading the slot.
func TestTakeParkedInOtherShard(t *testing.T) {
	b := newBare(false)
	if len(b.p.parked) < 2 {
		t.Skip("one parked word: GOMAXPROCS is 1 and the pool tiny")
	}
	o, seq := b.lent(t)
	onOtherShard(t, &b.p.core, b.p.home(), func() { b.p.release(o, seq) })
	word := b.p.parkedWord(o)
	got, seq := b.p.acquireIdle()
	if got != o {
		t.Fatalf("took slot %v, want %d, parked in another shard", got, o.idx)
	}
	if w := word.Load(); w != 0 {
		t.Errorf("the other shard's word is %#x after the take, want it cleared", w)
	}

	// Parked there again, and taken by that shard's own goroutine, which
	// leaves its word stale.
	onOtherShard(t, &b.p.core, b.p.home(), func() { b.p.release(o, seq) })
	word = b.p.parkedWord(o)
	stale := word.Load()
	got, seq = b.p.acquireParked(o.load().shard(), false)
	if got != o || word.Load() != stale {
		t.Fatalf("a claim through the home word got %v and left the word at %#x, want slot %d and %#x", got, word.Load(), o.idx, stale)
	}
	if got, _ := b.p.acquireIdle(); got != nil {
		t.Errorf("took slot %d from a pool with nothing idle", got.idx)
	}
	if w := word.Load(); w != 0 {
		t.Errorf("the stale word is %#x after a look through the shards, want it cleared", w)
	}
	b.p.release(o, seq)
}

// An object parked in another shard's word while a waiter sleeps, as when
// its giver looked for waiters just before the waiter queued, is handed
// to the waiter by the next look at the idle objects (serveIdle): no
// object sits idle while a taker waits, whichever word it is in.
func TestWaiterServedFromOtherShard(t *testing.T) {
	b := newBare(false)
	if len(b.p.parked) < 2 {
		t.Skip("one parked word: GOMAXPROCS is 1 and the pool tiny")
	}
	o, oseq := b.lent(t)
	w := b.waiter()
	onOtherShard(t, &b.p.core, b.p.home(), func() { b.p.park(o, oseq) })
	b.p.serveIdle()
	select {
	case h := <-w.ch:
		if h.idx != o.idx {
			t.Errorf("the waiter got %+v, want slot %d", h, o.idx)
		}
	default:
		t.Errorf("the waiter was not served the object parked in another shard")
	}
}

// Objects parked in many shards' words at once are all idle to Stats,
// and Close destroys each exactly once: whatever looks at the idle
// objects through their slots (the census, the keeper's sweeps, Close)
// finds a parked object in whichever word it is.
func TestParkedInManyShards(t *testing.T) {
	checkGoroutinesOnce(t)
	const n = 16
	f := &factory{}
	p, err := New[*conn](f, Config{MaxObjects: n, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.parked) < 2 {
		t.Skip("one parked word: GOMAXPROCS is 1")
	}
	leases := make([]Lease[*conn], n)
	for i := range leases {
		leases[i] = acquire(t, p)
	}
	// Each lease given back by a goroutine of its own, all alive at once,
	// so that their stacks, and mostly their home shards, differ.
	var given, done sync.WaitGroup
	hold := make(chan struct{})
	for _, l := range leases {
		given.Add(1)
		done.Go(func() {
			release(t, l)
			given.Done()
			<-hold
		})
	}
	given.Wait()
	words := map[*atomic.Uint64]bool{}
	for i := range p.slots {
		s := &p.slots[i]
		w := p.parkedWord(s)
		if st := s.load(); st.kind() == kindInUse && w.Load() == packParked(s.idx, st.seq()) {
			words[w] = true
		}
	}
	close(hold)
	done.Wait()
	if len(words) < 2 {
		// Not what the test is for, but no reason to leave the pool open.
		t.Logf("the %d objects were parked in %d word(s) only", n, len(words))
	}
	if st := p.Stats(); st.Idle != n || st.InUse != 0 {
		t.Errorf("Stats: %d idle and %d in use, with objects parked in %d words and the rest listed; want %d idle", st.Idle, st.InUse, len(words), n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	f.checkAllDestroyed(t)
	if c, d := f.creates.Load(), f.destroys.Load(); c != n || d != n {
		t.Errorf("%d objects created and %d destroyed, want %d of each", c, d, n)
	}
}

// A second give-back of a lease, racing the first, may find the lease in
// force before the first parks the object, and reach park after the
// object was taken again and given back under the next seq. It must park
// nothing and report false: if it moved the slot's shard to its own,
// the object parked under the next seq would be lost to everything that
// finds it through its shard — Close, the keeper, Stats — and that
// lease would read as in force again.
func TestStaleGiveBackKeepsShard(t *testing.T) {
	b := newBare(false)
	if len(b.p.parked) < 2 {
		t.Skip("one parked word: GOMAXPROCS is 1 and the pool tiny")
	}
	s, n := b.lent(t)
	if _, ok := current(s.ticket, n); !ok { // the second give-back's check
		t.Fatal("the lease is not in force")
	}
	b.p.release(s, n)
	got, n1 := b.p.acquireIdle()
	if got != s {
		t.Fatalf("took slot %v, want %d", got, s.idx)
	}
	b.p.release(s, n1)
	var stale bool
	onOtherShard(t, &b.p.core, b.p.home(), func() { stale = b.p.release(s, n) })
	if stale {
		t.Errorf("a give-back of seq %d, with the slot at %d, was taken", n, n1)
	}
	if !b.p.isParked(s.idx, n1) {
		t.Errorf("the object parked under seq %d is no longer seen as parked", n1)
	}
	if _, ok := current(s.ticket, n1); ok {
		t.Errorf("lease %d, given back, is in force again", n1)
	}
	if c := b.p.census(); c.idle != 1 || c.inUse != 0 {
		t.Errorf("census: %d idle, %d in use; want 1 idle", c.idle, c.inUse)
	}
	if !b.p.reserveIdle(s, s.load()) {
		t.Errorf("the keeper cannot reserve the parked object")
	}
}

// A taker that takes the object parked in its own home word leaves the
// word stale. When the object is next parked in another shard, the word
// it leaves must be cleared: left naming the slot, it would outlive the
// slot's seq coming round again (2^32 hand-outs), and a taker looking
// through the shards would then claim the object from its holder.
func TestLeftShardWordCleared(t *testing.T) {
	b := newBare(false)
	if len(b.p.parked) < 2 {
		t.Skip("one parked word: GOMAXPROCS is 1 and the pool tiny")
	}
	s, n := b.lent(t)
	var n1 uint32
	c := onOtherShard(t, &b.p.core, b.p.home(), func() {
		b.p.release(s, n)
		if got, q := b.p.acquireIdle(); got == s {
			n1 = q
		}
	})
	if n1 == 0 {
		t.Fatal("the other goroutine did not take its own object back")
	}
	if v := b.p.parked[c].Load(); v != packParked(s.idx, n) {
		t.Fatalf("the other shard's word holds %x, want the stale (slot %d, seq %d)", v, s.idx, n)
	}
	b.p.release(s, n1) // parked in this goroutine's shard
	if v := b.p.parked[c].Load(); v != 0 {
		idx, seq := unpackParked(v)
		t.Errorf("the shard the object left still names slot %d, seq %d", idx, seq)
	}
	got, n2 := b.p.acquireIdle()
	if got != s {
		t.Fatalf("took slot %v, want %d", got, s.idx)
	}
	// As after 2^32 hand-outs: lent under seq n again.
	s.state.Store(uint64(s.load()&^(state(0xFFFFFFFF)<<seqShift) | state(uint64(n)<<seqShift)))
	if o, _ := b.p.acquireIdle(); o == s {
		t.Errorf("slot %d, lent, was handed out again through a stale word (seq %d, taken as %d)", s.idx, n, n2)
	}
}
