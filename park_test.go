package actorpool

import (
	"context"
	"math"
	"runtime"
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
	got, nseq := b.p.takeIdle()
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
		for h := range b.p.parkMask + 1 {
			if o, _ := b.p.acquireParked(h, h); o != nil {
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
	if got, _ := b.p.takeIdle(); got != c {
		t.Errorf("first take got slot %v, want the parked %d", got.idx, c.idx)
	}
	if got, _ := b.p.takeIdle(); got != a {
		t.Errorf("second take got slot %v, want the listed %d", got.idx, a.idx)
	}
	if got, _ := b.p.takeIdle(); got != nil {
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
				s, seq := b.p.takeIdle()
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

// takeIdle is acquireIdle for the calling goroutine, in its home shard.
func (p *core) takeIdle() (*slot, uint32) { return p.acquireIdle(p.home()) }

// twoShards returns a bare LIFO pool with at least two parked words, or
// skips the test.
func twoShards(t *testing.T) *bare {
	t.Helper()
	b := newBare(false)
	if b.p.parkMask == 0 {
		t.Skip("one parked word: GOMAXPROCS is 1 and the pool tiny")
	}
	return b
}

// Each taker takes first from its own shard's word, and an object is
// parked, when given back, in the word of the shard it was taken in: a
// taker that takes and gives back an object takes that object again,
// although a taker of another shard has given one back since. With one
// word for the pool it would take the other's, and on many cores every
// take would move both objects' cache lines between processors.
func TestParkedPerShard(t *testing.T) {
	b := twoShards(t)
	b.idle()
	b.idle()
	a, aseq := b.p.acquireIdle(0)
	b.p.release(a, aseq)
	if b.p.parkedWord(a) != &b.p.parked[0].Uint64 {
		t.Fatalf("parked in shard %d, want its taker's shard 0", a.load().shard())
	}
	o, oseq := b.p.acquireIdle(1)
	if o == nil || o == a {
		t.Fatalf("the taker of shard 1 took slot %v, want the idle one, not %d", o, a.idx)
	}
	b.p.release(o, oseq)
	if again, seq := b.p.acquireIdle(1); again != o {
		t.Errorf("the taker of shard 1 took slot %v again, want its own %d", again, o.idx)
	} else {
		b.p.release(again, seq)
	}
	if b.p.parkedWord(o) != &b.p.parked[1].Uint64 {
		t.Errorf("parked in shard %d, want its taker's shard 1", o.load().shard())
	}
	if got, _ := b.p.acquireIdle(0); got != a {
		t.Errorf("the taker of shard 0 took slot %v, want %d, the one it parked", got, a.idx)
	}
}

// An object given back is parked in the shard of its taker, whichever
// goroutine gives it back and however deep in its stack: where the taker
// will look first. A give-back that parked in the giver's own shard would,
// where a take and its give-back hash to different shards (a lease passed
// on, or the two at depths in different blocks of a larger stack), leave
// every take to look through the other shards.
func TestParkedInTakersShard(t *testing.T) {
	b := twoShards(t)
	b.idle()
	for h := range uint32(2) {
		s, seq := b.p.acquireIdle(h)
		var wg sync.WaitGroup
		wg.Go(func() { deepRelease(64, b, s, seq) })
		wg.Wait()
		if !b.p.isParked(s.idx, seq) || b.p.parkedWord(s) != &b.p.parked[h].Uint64 {
			t.Errorf("given back by another goroutine, 64 frames down: parked in shard %d (parked %v), want its taker's shard %d", s.load().shard(), b.p.isParked(s.idx, seq), h)
		}
	}

	// A goroutine's takes at one call site, with the give-back deeper,
	// take the object they gave back, through their home word.
	s, seq := b.p.takeIdle()
	b.p.release(s, seq)
	for i := range 10 {
		got, seq := b.p.takeIdle()
		if got != s {
			t.Fatalf("took slot %v, want %d, given back by this call site", got, s.idx)
		}
		// The first give-back grows the stack, which moves it, and this
		// call site's home with it.
		if w := b.p.parkedWord(s); i > 1 && w.Load() != packParked(s.idx, seq-1) {
			t.Fatalf("took slot %d through another word than its home's", s.idx)
		}
		deepRelease(64, b, s, seq)
	}
}

// deepRelease gives s back n frames below its caller.
//
//go:noinline
func deepRelease(n int, b *bare, s *slot, seq uint32) {
	var pad [64]byte
	if n > 0 {
		deepRelease(n-1, b, s, seq)
		return
	}
	b.p.release(s, seq+uint32(pad[0]))
}

// Goroutines started together, a server's workers say, start on stacks
// side by side in memory, and each should mostly have a shard of its own.
// Hashing the 8 KiB block of the stack, as home once did, put four 2 KiB
// stacks in each shard.
func TestHomesOfGoroutinesStartedTogether(t *testing.T) {
	const n = 16
	b := newBare(false)
	// As many shards as the most processors give, whatever this machine
	// has, so that the spread is the hash's and not the shard count's.
	b.p.parkMask = maxParkShards - 1
	homes := make([]uint32, n)
	var ready, done sync.WaitGroup
	hold := make(chan struct{})
	ready.Add(n)
	for i := range n {
		done.Go(func() {
			homes[i] = b.p.home()
			ready.Done()
			<-hold // alive at once: no goroutine reuses another's stack
		})
	}
	ready.Wait()
	close(hold)
	done.Wait()
	per := map[uint32]int{}
	most := 0
	for _, h := range homes {
		per[h]++
		most = max(most, per[h])
	}
	t.Logf("%d goroutines started together: %d homes among %d shards, at most %d in one", n, len(per), maxParkShards, most)
	// 16 goroutines hashed at random into 64 shards have 14 homes on
	// average, fewer than 9 about once in 10^5; four of a block share one
	// always, and have 4 or 5. (Stacks reused from goroutines that have
	// ended lie anywhere: that is the random case.)
	if len(per) < n/2+1 {
		t.Errorf("%d goroutines started together have %d homes, up to %d in one shard; want at least %d", n, len(per), most, n/2+1)
	}
}

// A taker whose own word is empty, with the idle list empty too, takes an
// object parked in another shard's word, and clears that word; a word it
// finds stale there it clears too, so that the next look passes over it
// without reading the slot.
func TestTakeParkedInOtherShard(t *testing.T) {
	b := twoShards(t)
	o := b.idle()
	_, seq := b.p.acquireIdle(1)
	b.p.release(o, seq) // parked in shard 1
	word := &b.p.parked[1]
	got, seq := b.p.acquireIdle(0)
	if got != o {
		t.Fatalf("took slot %v, want %d, parked in another shard", got, o.idx)
	}
	if w := word.Load(); w != 0 {
		t.Errorf("the other shard's word is %#x after the take, want it cleared", w)
	}
	if sh := o.load().shard(); sh != 0 {
		t.Errorf("the take left the object in shard %d, want its own, 0", sh)
	}

	// Taken by the taker of shard 1, parked there again, and taken by it
	// again, which leaves its word stale.
	b.p.release(o, seq)
	got, seq = b.p.acquireIdle(1)
	b.p.release(got, seq)
	stale := word.Load()
	if got, seq = b.p.acquireIdle(1); got != o || word.Load() != stale {
		t.Fatalf("a claim through the home word got %v and left the word at %#x, want slot %d and %#x", got, word.Load(), o.idx, stale)
	}
	if got, _ := b.p.acquireIdle(0); got != nil {
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
	b := twoShards(t)
	o := b.idle()
	_, oseq := b.p.acquireIdle(1)
	w := b.waiterIn(0) // serveIdle claims in shard 0 for it
	b.p.park(o, oseq)  // in shard 1
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
	if p.parkMask == 0 {
		t.Skip("one parked word: GOMAXPROCS is 1")
	}
	// Each object taken and given back by a goroutine of its own, all
	// alive and holding at once, so that their stacks, and mostly their
	// home shards, differ.
	var taken, given, done sync.WaitGroup
	hold, stop := make(chan struct{}), make(chan struct{})
	taken.Add(n)
	given.Add(n)
	for range n {
		done.Go(func() {
			l := acquire(t, p)
			taken.Done()
			<-hold
			release(t, l)
			given.Done()
			<-stop
		})
	}
	taken.Wait()
	close(hold)
	given.Wait()
	words := map[*atomic.Uint64]bool{}
	for i := range p.slots {
		s := &p.slots[i]
		w := p.parkedWord(s)
		if st := s.load(); st.kind() == kindInUse && w.Load() == packParked(s.idx, st.seq()) {
			words[w] = true
		}
	}
	close(stop)
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
// nothing and report false, from whichever goroutine: had it parked the
// object, or moved the slot's shard, the object parked under the next seq
// would be lost to everything that finds it through its shard — Close,
// the keeper, Stats — and that lease would read as in force again.
func TestStaleGiveBackKeepsShard(t *testing.T) {
	b := twoShards(t)
	s := b.idle()
	_, n := b.p.acquireIdle(0)
	if _, ok := current(s.ticket, n); !ok { // the second give-back's check
		t.Fatal("the lease is not in force")
	}
	b.p.release(s, n)
	got, n1 := b.p.acquireIdle(0)
	if got != s {
		t.Fatalf("took slot %v, want %d", got, s.idx)
	}
	b.p.release(s, n1)
	var stale bool
	var wg sync.WaitGroup
	wg.Go(func() { stale = b.p.release(s, n) })
	wg.Wait()
	if stale {
		t.Errorf("a give-back of seq %d, with the slot at %d, was taken", n, n1)
	}
	if sh := s.load().shard(); sh != 0 || !b.p.isParked(s.idx, n1) {
		t.Errorf("the object parked under seq %d is in shard %d (parked %v), want parked in shard 0", n1, sh, b.p.isParked(s.idx, n1))
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
// word stale. When a later claim moves the object to another shard, the
// word it leaves must be cleared: left naming the slot, it would outlive
// the slot's seq coming round again (2^32 hand-outs), and a taker looking
// through the shards would then claim the object from its holder. Here
// the object's holder retires it, and the new object in its slot is
// taken from the idle list by the taker of another shard.
func TestLeftShardWordCleared(t *testing.T) {
	b := twoShards(t)
	s := b.idle()
	_, n := b.p.acquireIdle(1)
	b.p.release(s, n)
	got, n1 := b.p.acquireIdle(1)
	if got != s {
		t.Fatalf("the taker of shard 1 took slot %v, want its own %d back", got, s.idx)
	}
	if v := b.p.parked[1].Load(); v != packParked(s.idx, n) {
		t.Fatalf("shard 1's word holds %x, want the stale (slot %d, seq %d)", v, s.idx, n)
	}
	s.doomed.Store(uint32(causeDiscarded) + 1)
	b.p.release(s, n1) // retired
	b.k.destroyed(s.idx)
	b.k.alive++
	if o := b.k.install(new(int), b.k.gen); o != s {
		t.Fatalf("installed in slot %d, want %d", o.idx, s.idx)
	}
	b.k.putInService(s)
	got, n2 := b.p.acquireIdle(0)
	if got != s {
		t.Fatalf("took slot %v, want %d", got, s.idx)
	}
	if v := b.p.parked[1].Load(); v != 0 {
		idx, seq := unpackParked(v)
		t.Errorf("the shard the object left still names slot %d, seq %d", idx, seq)
	}
	// As after 2^32 hand-outs: lent under seq n again.
	setSeq(s, n)
	if o, _ := b.p.acquireIdle(0); o == s {
		t.Errorf("slot %d, lent, was handed out again through a stale word (seq %d, taken as %d)", s.idx, n, n2)
	}
}

// An object handed to a waiter, by the keeper or by a holder giving it
// back, is handed out in the waiter's home shard, and parked there when
// the waiter gives it back: where the waiter's next take looks first.
func TestWaiterHandedOutInItsShard(t *testing.T) {
	for _, by := range []string{"the keeper", "a holder"} {
		t.Run(by, func(t *testing.T) {
			b := twoShards(t)
			var s *slot
			var seq uint32
			w := b.waiterIn(1)
			if by == "the keeper" {
				s = b.installed()
				b.k.putInService(s)
			} else {
				s = b.idle()
				b.p.mu.Lock()
				b.p.removeLocked(w) // queued after the take below
				b.p.mu.Unlock()
				_, seq = b.p.acquireIdle(0)
				b.p.mu.Lock()
				b.p.enqueueLocked(w)
				b.p.mu.Unlock()
				b.p.release(s, seq)
			}
			served(t, w, s)
			st := s.load()
			if st.shard() != 1 {
				t.Fatalf("handed to a waiter of shard 1 in shard %d", st.shard())
			}
			b.p.release(s, st.seq())
			if !b.p.isParked(s.idx, st.seq()) || b.p.parkedWord(s) != &b.p.parked[1].Uint64 {
				t.Errorf("given back by the waiter: parked %v in shard %d, want parked in shard 1", b.p.isParked(s.idx, st.seq()), s.load().shard())
			}
		})
	}
}

// An object that serveIdle finds idle for a waiter, one given back as the
// waiter queued, is claimed in the oldest waiter's home shard, whichever
// goroutine serves it.
func TestServeIdleInWaitersShard(t *testing.T) {
	b := twoShards(t)
	o := b.idle()
	for h := range b.p.parkMask + 1 {
		s, seq := b.p.takeIdle()
		if s != o {
			t.Fatalf("took %v, want slot %d", s, o.idx)
		}
		w := b.waiterIn(h)
		b.p.park(o, seq) // its giver saw no waiter
		b.p.serveIdle()
		served(t, w, o)
		if sh := o.load().shard(); sh != h {
			t.Errorf("a waiter of shard %d was handed the object in shard %d", h, sh)
		}
		b.p.release(o, o.load().seq())
	}
}

// A second give-back of a lease that found it in force before the first
// parked the object finds the object parked under its seq, and is
// refused: the object stays parked, once.
func TestSecondGiveBackOfParkedRefused(t *testing.T) {
	b := newBare(false)
	s, seq := b.lent(t)
	l := Lease[*int]{p: b.p, t: b.p.lend(s), seq: seq}
	if _, ok := current(l.t, l.seq); !ok { // the second give-back's check
		t.Fatal("the lease is not in force")
	}
	if err := l.Release(); err != nil {
		t.Fatalf("first Release: %v", err)
	}
	if b.p.releaseLease(s, l.t, l.seq) { // the rest of the second
		t.Error("a second give-back of a parked lease was accepted")
	}
	if st := s.load(); st.kind() != kindInUse || st.listed() || !b.p.isParked(s.idx, seq) {
		t.Errorf("after the second give-back the slot is %v (listed %v, parked %v), want parked once", st.kind(), st.listed(), b.p.isParked(s.idx, seq))
	}
}

// A second give-back racing a taker of another shard, which claims what
// the first parked and clears the word of the shard it takes it from:
// the second give-back, past its check of the state, may find that word
// cleared and park there. It must not leave the word naming the slot
// under its old seq in a shard the object has left, where no later claim
// would clear it.
func TestSecondGiveBackLeavesNoWordBehind(t *testing.T) {
	b := twoShards(t)
	s := b.idle()
	_, n := b.p.acquireIdle(1)
	b.p.release(s, n)   // the first give-back: parked in shard 1
	checked := s.load() // the second give-back's check of the state
	got, _ := b.p.acquireIdle(0)
	if got != s || b.p.parked[1].Load() != 0 {
		t.Fatalf("the taker of shard 0 got %v and left shard 1's word at %#x, want slot %d and the word cleared", got, b.p.parked[1].Load(), s.idx)
	}
	b.p.parkFrom(s, checked, n) // the rest of the second give-back
	if v := b.p.parked[1].Load(); v != 0 {
		idx, seq := unpackParked(v)
		t.Errorf("shard 1's word names slot %d under seq %d, with the slot at seq %d in shard %d", idx, seq, s.load().seq(), s.load().shard())
	}
}

// A claim through a taker's own home word leaves the word stale; if the
// object then keeps that shard without being parked again (handed from
// holder to waiter in the same shard, as in a pool that stays busy), the
// hand-off clears the word. Left, it would name the holder's seq again
// after 2^32 hand-offs: the holder's lease would read as given back, and a
// taker would claim the object from its holder.
func TestStaleHomeWordClearedByHandOff(t *testing.T) {
	b := twoShards(t)
	s := b.idle()
	_, n := b.p.acquireIdle(1)
	b.p.release(s, n) // parked in shard 1 under n
	got, n1 := b.p.acquireIdle(1)
	if got != s {
		t.Fatalf("took %v, want slot %d", got, s.idx)
	}
	w := b.waiterIn(1)
	b.p.release(s, n1) // to a waiter of shard 1: the same shard, not parked
	served(t, w, s)
	if v := b.p.parked[1].Load(); v != 0 {
		idx, seq := unpackParked(v)
		t.Errorf("after the hand-off shard 1's word names slot %d, seq %d", idx, seq)
	}
	// As after 2^32 hand-offs: lent under seq n again.
	setSeq(s, n)
	if _, ok := current(s.ticket, n); !ok {
		t.Errorf("the holder's lease (seq %d), in force, reads as given back", n)
	}
	if c := b.p.census(); c.inUse != 1 {
		t.Errorf("census: %+v, want 1 in use", c)
	}
	if o, _ := b.p.acquireIdle(0); o == s {
		t.Errorf("slot %d, lent, was handed out again through a stale word", s.idx)
	}
}

// A word claims only a slot whose state names the word's shard: a word
// naming a held object under its current seq, in a shard the object is
// not in, however it came to be there, claims nothing.
func TestWordOfAnotherShardClaimsNothing(t *testing.T) {
	b := twoShards(t)
	s := b.idle()
	_, n := b.p.acquireIdle(0)
	b.p.parked[1].Store(packParked(s.idx, n))
	if o, _ := b.p.acquireIdle(1); o == s {
		t.Errorf("slot %d, held in shard 0, was claimed through shard 1's word", s.idx)
	}
}

// A slot can be in use with its listed bit set and its index still in the
// idle stack: the keeper reserved it while it was idle and listed (to
// test or evict it), then handed it to a waiter. When the waiter gives it
// back, a taker popping that index clears the bit (settle) between park's
// read of the state and its word's CAS. That claims nothing: the object
// stays parked, idle, found by takers and by Close, and the lease given
// back stays given back.
func TestListedBitClearedWhileParking(t *testing.T) {
	b := twoShards(t)
	s := b.servedListed(t)
	tk := b.p.lend(s)
	st := s.load()
	n := st.seq()
	if st.kind() != kindInUse || !st.listed() {
		t.Fatalf("the slot is %v (listed %v), want in use and listed", st.kind(), st.listed())
	}
	s.ticket = tk                             // the waiter gives it back: park reads st,
	if o, _ := b.p.acquireIdle(0); o != nil { // a taker pops the stale index,
		t.Fatalf("the taker got slot %d, want nothing", o.idx)
	}
	if !b.p.parkFrom(s, st, n) { // and park goes on from st
		t.Fatal("park refused")
	}
	if !b.p.isParked(s.idx, n) {
		t.Errorf("the object given back under seq %d is not parked: word %#x", n, b.p.parked[1].Load())
	}
	if _, ok := current(tk, n); ok {
		t.Errorf("the lease given back (seq %d) reads as in force", n)
	}
	if c := b.p.census(); c.idle != 1 || c.inUse != 0 {
		t.Errorf("census %+v, want 1 idle", c)
	}
	b.k.retireIdle(causeClose)
	if k := s.load().kind(); k != kindReserved {
		t.Errorf("after Close's retireIdle the object is %v, want reserved, on its way to be destroyed", k)
	}
}

// A giver making room in its word lists the object the word names only if
// that object's state names the word's shard: a word naming a held object
// under its current seq, in a shard the object is not in, however it came
// to be there, makes the give-back list nothing.
func TestGiverListsNothingOfAnotherShard(t *testing.T) {
	b := twoShards(t)
	s := b.idle()
	if got, _ := b.p.acquireIdle(0); got != s {
		t.Fatalf("took %v, want slot %d", got, s.idx)
	}
	n := s.load().seq()
	o := b.idle()
	if got, _ := b.p.acquireIdle(1); got != o {
		t.Fatalf("the taker of shard 1 got %v, want slot %d", got, o.idx)
	}
	b.p.parked[1].Store(packParked(s.idx, n))
	b.p.release(o, o.load().seq()) // parks in shard 1, over that word
	if st := s.load(); st.kind() != kindInUse || st.seq() != n {
		t.Errorf("slot %d, held in shard 0 under seq %d, is %v (seq %d) after a give-back in shard 1", s.idx, n, st.kind(), st.seq())
	}
	if again, _ := b.p.acquireIdle(0); again == s {
		t.Errorf("slot %d, lent, was handed out again", s.idx)
	}
}

// setSeq puts slot s at seq n, keeping the rest of its state, as 2^32
// hand-outs would.
func setSeq(s *slot, n uint32) {
	s.state.Store(uint64(s.load()&^(state(0xFFFFFFFF)<<seqShift) | state(uint64(n)<<seqShift)))
}

// A claim through a word whose CAS fails only because a taker cleared the
// slot's stale listed bit tries again: that taker claimed nothing, and a
// claim given up then (serveIdle's, say) would leave the object parked
// while a waiter sleeps. The test reads the parked slot's state, lets a
// taker pop the stale index, then claims from the state it read.
func TestClaimParkedRetriesAfterListedBitCleared(t *testing.T) {
	b := twoShards(t)
	s := b.servedListed(t)
	b.p.lend(s)
	n := s.load().seq()
	if !b.p.release(s, n) {
		t.Fatal("release refused")
	}
	st := s.load()
	if st.kind() != kindInUse || !st.listed() || !b.p.isParked(s.idx, n) {
		t.Fatalf("the slot is %v (listed %v, parked %v), want parked and listed", st.kind(), st.listed(), b.p.isParked(s.idx, n))
	}
	if o, _ := b.p.acquireListed(0); o != nil { // a taker pops the stale index
		t.Fatalf("the taker got slot %d from the idle list, want nothing", o.idx)
	}
	if s.load().listed() {
		t.Fatal("the stale listed bit is still set")
	}
	nst, ok := acquireParked(s, st, n, 1, 0)
	if !ok {
		t.Fatalf("the claim of the parked object gave up after the listed bit was cleared; the slot is %v, seq %d", s.load().kind(), s.load().seq())
	}
	if nst.seq() != n+1 || nst.shard() != 0 || nst.kind() != kindInUse || nst != s.load() {
		t.Errorf("claimed state %#x (seq %d, shard %d), slot %#x; want seq %d, shard 0, in use", uint64(nst), nst.seq(), nst.shard(), uint64(s.load()), n+1)
	}
}

// acquireParked runs the claim of core.acquireParked from a state the test
// read, under the name slotMoves lists for that move.
func acquireParked(s *slot, st state, seq, i, h uint32) (state, bool) {
	return s.claimParked(st, seq, i, h)
}

// servedListed returns a slot in use by a waiter of shard 1, handed to it
// by the keeper after a test, with its index still in the idle list: in
// use and listed at once.
func (b *bare) servedListed(t *testing.T) *slot {
	t.Helper()
	s := b.idle()
	if !b.p.reserveIdle(s, s.load()) { // the keeper, to test it
		t.Fatal("reserveIdle failed")
	}
	w := b.waiterIn(1)
	b.k.putInService(s) // to the waiter, its index still listed
	served(t, w, s)
	return s
}
