package actorpool

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// A bare pool is a pool whose keeper does not run, so that a test can call
// the keeper's functions itself and see each move on its own.
type bare struct {
	p *Pool[*int]
	k *keeper[*int]
}

func newBare(fifo bool) *bare {
	f := FactoryFuncs[*int]{CreateFunc: func(context.Context) (*int, error) { return new(int), nil }}
	p, k := assemble[*int](f, Config{MaxObjects: 4, FIFO: fifo, Logger: discardLogger()}.withDefaults())
	return &bare{p: p, k: k}
}

// installed installs a new object: a slot reserved for the keeper.
func (b *bare) installed() *slot {
	b.k.alive++
	return b.k.install(new(int), b.k.gen)
}

// idle installs a new object and makes it idle.
func (b *bare) idle() *slot {
	s := b.installed()
	b.k.putInService(s)
	return s
}

// lent installs a new object and hands it out.
func (b *bare) lent(t *testing.T) (*slot, uint32) {
	t.Helper()
	want := b.idle()
	s, seq := b.p.takeIdle()
	if s != want {
		t.Fatalf("acquireIdle = slot %v, want the idle one", s)
	}
	return s, seq
}

// waiter queues a waiter whose home is shard 0.
func (b *bare) waiter() *waiter { return b.waiterIn(0) }

// waiterIn queues a waiter whose home is shard h.
func (b *bare) waiterIn(h uint32) *waiter {
	w := b.p.waiters.get(context.Background())
	w.home = h
	b.p.mu.Lock()
	w.since = b.p.since()
	b.p.enqueueLocked(w)
	b.p.mu.Unlock()
	return w
}

// served checks that w was handed s.
func served(t *testing.T, w *waiter, s *slot) {
	t.Helper()
	if h := <-w.ch; h.idx != s.idx {
		t.Errorf("the waiter got %+v, want slot %d", h, s.idx)
	}
}

// moveDrivers drive each move of slotMoves through the function that makes
// it, by that function and the kind it moves from. A driver sets a slot up,
// with whatever moves that takes, and returns it with the move itself
// still to run.
var moveDrivers = map[string]struct {
	fifo  bool
	drive func(t *testing.T, b *bare) (s *slot, move func())
}{
	"install: free": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s := &b.p.slots[b.k.free[len(b.k.free)-1]]
		return s, func() { b.installed() }
	}},
	"putInService: reserved": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s := b.installed()
		return s, func() { b.k.putInService(s) }
	}},
	"serveLocked: reserved": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s := b.installed()
		w := b.waiter()
		return s, func() { b.k.putInService(s); served(t, w, s) }
	}},
	"settle: idle": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s := b.idle()
		return s, func() {
			if got, _ := b.p.takeIdle(); got != s {
				t.Errorf("acquireIdle = %v, want the idle slot", got)
			}
		}
	}},
	"acquireParked: in use": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s, seq := b.lent(t)
		b.p.release(s, seq) // parked
		return s, func() {
			if got, _ := b.p.takeIdle(); got != s {
				t.Errorf("acquireIdle = %v, want the parked slot", got)
			}
		}
	}},
	"settle: free": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s := b.idle()
		b.p.reserveIdle(s, s.load())
		b.k.destroyed(s.idx) // free, its index still listed
		return s, func() { b.p.takeIdle() }
	}},
	"settle: in use": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s := b.idle()
		b.p.reserveIdle(s, s.load())
		w := b.waiter()
		b.k.putInService(s) // to the waiter, its index still listed
		served(t, w, s)
		return s, func() { b.p.takeIdle() }
	}},
	"settle: reserved": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s := b.idle()
		b.p.reserveIdle(s, s.load()) // its index still listed
		return s, func() { b.p.takeIdle() }
	}},
	"serveLocked: in use": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s, seq := b.lent(t)
		w := b.waiter()
		return s, func() { b.p.release(s, seq); served(t, w, s) }
	}},
	"release: in use": {fifo: true, drive: func(t *testing.T, b *bare) (*slot, func()) {
		s, seq := b.lent(t)
		return s, func() { b.p.release(s, seq) }
	}},
	"parkFrom: in use": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s, seq := b.lent(t)
		o, oseq := b.lent(t)
		b.p.release(s, seq) // parked
		return s, func() { b.p.release(o, oseq) }
	}},
	"relist: in use": {fifo: true, drive: func(t *testing.T, b *bare) (*slot, func()) {
		s, seq := b.lent(t)
		return s, func() {
			b.p.mu.Lock()
			defer b.p.mu.Unlock()
			b.p.relist(s, seq)
		}
	}},
	"retire: in use": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s, seq := b.lent(t)
		s.doomed.Store(uint32(causeReload) + 1)
		return s, func() { b.p.release(s, seq) }
	}},
	"hijackLease: in use": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s, seq := b.lent(t)
		l := Lease[*int]{p: b.p, t: b.p.lend(s), seq: seq}
		return s, func() {
			if _, err := l.Hijack(); err != nil {
				t.Errorf("Hijack: %v", err)
			}
		}
	}},
	"reserveIdle: idle": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s := b.idle()
		return s, func() { b.p.reserveIdle(s, s.load()) }
	}},
	"unpark: in use": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s, seq := b.lent(t)
		b.p.release(s, seq) // parked
		return s, func() { b.p.reserveIdle(s, s.load()) }
	}},
	"reclaim: in use": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s, _ := b.lent(t)
		return s, func() { b.p.reclaim(leakNote{idx: s.idx, gen: s.ticketGen.Load()}) }
	}},
	"destroyed: reserved": {drive: func(t *testing.T, b *bare) (*slot, func()) {
		s := b.installed()
		return s, func() { b.k.destroyed(s.idx) }
	}},
}

// TestSlotMoves drives every move that slotMoves lists through the
// function it names and checks that the slot moves as listed. Under the
// race detector, where every move is checked against the table, it also
// checks that each move is caught once the table lacks it: so a move the
// code makes and the table does not list fails every test that makes it.
func TestSlotMoves(t *testing.T) {
	listed := map[string]bool{}
	for _, m := range slotMoves {
		name, key := m.String(), fmt.Sprintf("%s: %v", m.fn, m.from)
		if listed[key] {
			t.Errorf("slotMoves lists two moves by %s", key)
		}
		listed[key] = true
		t.Run(name, func(t *testing.T) {
			d, ok := moveDrivers[key]
			if !ok {
				t.Fatalf("no driver for %s", key)
			}
			s, move := d.drive(t, newBare(d.fifo))
			before := s.load()
			move()
			after := s.load()
			if before.kind() != m.from || after.kind() != m.to || (after.seq() != before.seq()) != m.lent {
				t.Errorf("%s moved slot %d from %v (seq %d) to %v (seq %d)", m.fn, s.idx, before.kind(), before.seq(), after.kind(), after.seq())
			}
			if after.shard() != before.shard() && after.seq() == before.seq() {
				t.Errorf("%s moved slot %d from shard %d to %d under seq %d", m.fn, s.idx, before.shard(), after.shard(), after.seq())
			}
			if !checkMoves {
				return
			}
			s, move = d.drive(t, newBare(d.fifo))
			if err := unlisted(m, move); err == nil {
				t.Errorf("%s made with the move unlisted: not caught", name)
			} else if !err.move.is(m) {
				t.Errorf("%s made with the move unlisted: caught %v", name, err)
			}
		})
	}
	for key := range moveDrivers {
		if !listed[key] {
			t.Errorf("a driver for %s, a move slotMoves does not list", key)
		}
	}
}

// unlisted runs move with m treated as missing from slotMoves, and returns
// the unlisted move it made, if any.
func unlisted(m slotMove, move func()) (err *unlistedMove) {
	unlisting.Store(&m)
	defer unlisting.Store(nil)
	defer func() {
		if v := recover(); v != nil {
			if !errors.As(v.(error), &err) {
				panic(v)
			}
		}
	}()
	move()
	return nil
}

// The shard in a slot's state changes only with its seq (park.go): under
// the race detector, a CAS that moves it otherwise panics, whoever makes
// it.
func TestShardMovesOnlyWithSeq(t *testing.T) {
	if !checkMoves {
		t.Skip("slot moves are checked only under the race detector")
	}
	b := newBare(false)
	s, _ := b.lent(t)
	st := s.load()
	err := unlisted(slotMove{}, func() { s.cas(st, st.withShard(st.shard()+1)) })
	if err == nil || err.why == "" {
		t.Fatalf("a holder's CAS moving its slot's shard: caught %v, want a panic naming the rule", err)
	}
}
