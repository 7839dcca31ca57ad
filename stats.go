package actorpool

import (
	"sync"
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a pool's gauges and counters. Counters count from
// New. Reading them never blocks a take: gauges are read from the slots'
// atomic states, and no counter is written on the path that takes an idle
// object and gives it back. A counter never goes down from one Stats to
// the next; Acquires may count, until the next take, a take that was
// finding its object unusable while Stats read it.
type Stats struct {
	MaxObjects int // Config.MaxObjects
	Total      int // objects alive or being created
	Idle       int // objects ready to be taken
	InUse      int // objects lent out
	Creating   int // creates in flight
	Reserved   int // objects held by the pool: under test, or being destroyed
	Destroying int // of Reserved, objects being destroyed or taken out by Lease.Hijack
	Waiting    int // takers waiting for an object

	Acquires          int64         // takes that got an object
	EmptyAcquires     int64         // takes that found no idle object
	Waits             int64         // takes that queued for an object
	WaitDuration      time.Duration // total time takes spent queued
	CanceledAcquires  int64         // queued takes whose context was canceled
	TimedOutAcquires  int64         // queued takes whose context's deadline passed
	ExhaustedAcquires int64         // takes refused because the queue was full

	CreateAttempts int64 // Factory.Create calls started
	Created        int64 // objects created
	CreateErrors   int64 // creates that failed, panicked or timed out
	CreateTimeouts int64 // creates that outlived Config.CreateTimeout
	Tests          int64 // Factory.Test calls that returned
	Destroyed      int64 // objects destroyed, the sum of DestroyedBy
	DestroyedBy    DestroyCounts
	Hijacked       int64 // objects taken out of the pool by Lease.Hijack, never destroyed by it
	Leaks          int64 // leases found dropped by the garbage collector
	SuspectedLeaks int64 // leases held past Config.LeakThreshold
}

// DestroyCounts counts destroyed objects by why they were destroyed.
type DestroyCounts struct {
	Invalid     int64 // failed Factory.Validate
	Idle        int64 // idle longer than Config.MaxIdleTime
	Lifetime    int64 // older than Config.MaxLifetime
	TestFailed  int64 // failed Factory.Test
	TestTimeout int64 // outlived Config.TestTimeout in Factory.Test
	Leaked      int64 // their lease was dropped without being given back
	Reloaded    int64 // retired by Reload
	Closed      int64 // destroyed by Close
	Discarded   int64 // destroyed through Lease.Destroy
}

type destroyCause uint8

const (
	causeInvalid destroyCause = iota
	causeIdle
	causeLifetime
	causeTestFailed
	causeTestTimeout
	causeLeak
	causeReload
	causeClose
	causeDiscarded
	numCauses
)

var causeNames = [numCauses]string{"invalid", "idle", "lifetime", "test failed", "test timeout", "leaked", "reload", "close", "discarded"}

func (c destroyCause) String() string { return causeNames[c] }

// counters are the pool's cumulative counts. Those written outside the
// keeper are written only on slow paths: waiting, failing, destroying.
type counters struct {
	emptyAcquires atomic.Int64 // takes that found nothing and did not queue; those that did are waits
	waits         atomic.Int64
	waitNanos     atomic.Int64
	canceled      atomic.Int64
	timeouts      atomic.Int64
	exhausted     atomic.Int64

	createAttempts atomic.Int64
	created        atomic.Int64
	createErrors   atomic.Int64
	createTimeouts atomic.Int64
	tests          atomic.Int64
	destroyed      [numCauses]atomic.Int64
	leaks          atomic.Int64
	suspected      atomic.Int64
	hijacked       atomic.Int64

	creating atomic.Int32

	// Acquires are counted by the slots' seqs, which every hand-out bumps;
	// the keeper folds them into acquired before a 32-bit seq could wrap.
	// unlent counts seq bumps that lent nothing: an object found unusable
	// on its way out, or handed to a waiter that had given up.
	foldMu   sync.Mutex
	acquired int64
	unlent   atomic.Int64
	reported int64 // the largest Acquires a snapshot returned, under foldMu
}

// snapshot reads the gauges and counters for Stats.
func (p *core) snapshot() Stats {
	c := p.census()
	st := Stats{
		MaxObjects: p.cfg.MaxObjects,
		Total:      int(p.total.Load()),
		Idle:       c.idle,
		InUse:      c.inUse,
		Creating:   int(p.stats.creating.Load()),
		Reserved:   c.reserved,
		Destroying: c.leaving,
		Waiting:    int(p.waiting.Load()),

		Acquires:          p.acquires(),
		EmptyAcquires:     p.stats.emptyAcquires.Load() + p.stats.waits.Load(),
		Waits:             p.stats.waits.Load(),
		WaitDuration:      time.Duration(p.stats.waitNanos.Load()),
		CanceledAcquires:  p.stats.canceled.Load(),
		TimedOutAcquires:  p.stats.timeouts.Load(),
		ExhaustedAcquires: p.stats.exhausted.Load(),

		CreateAttempts: p.stats.createAttempts.Load(),
		Created:        p.stats.created.Load(),
		CreateErrors:   p.stats.createErrors.Load(),
		CreateTimeouts: p.stats.createTimeouts.Load(),
		Tests:          p.stats.tests.Load(),
		Leaks:          p.stats.leaks.Load(),
		SuspectedLeaks: p.stats.suspected.Load(),
		Hijacked:       p.stats.hijacked.Load(),
	}
	d := &p.stats.destroyed
	st.DestroyedBy = DestroyCounts{
		Invalid:     d[causeInvalid].Load(),
		Idle:        d[causeIdle].Load(),
		Lifetime:    d[causeLifetime].Load(),
		TestFailed:  d[causeTestFailed].Load(),
		TestTimeout: d[causeTestTimeout].Load(),
		Leaked:      d[causeLeak].Load(),
		Reloaded:    d[causeReload].Load(),
		Closed:      d[causeClose].Load(),
		Discarded:   d[causeDiscarded].Load(),
	}
	for i := range d {
		st.Destroyed += d[i].Load()
	}
	return st
}

// acquires sums the folded count and the hand-outs since the last fold.
func (p *core) acquires() int64 {
	p.stats.foldMu.Lock()
	defer p.stats.foldMu.Unlock()
	n := p.stats.acquired
	for i := range p.slots {
		s := &p.slots[i]
		n += int64(s.load().seq() - s.foldedSeq)
	}
	n -= p.stats.unlent.Load()
	// A seq bump is counted before its unlent, if it lends nothing: a
	// snapshot between the two counts it, and the next one would not.
	// A counter never goes down — Prometheus reads a drop as a restart,
	// and its rate as all the takes since New at once — so a snapshot
	// returns at least what an earlier one did, and the count catches up
	// with the next take.
	if n < p.stats.reported {
		return p.stats.reported
	}
	p.stats.reported = n
	return n
}

// fold moves the hand-outs counted in the slots' seqs into the pool's
// total, so that no seq wraps uncounted. Only the keeper calls it.
func (p *core) fold() {
	p.stats.foldMu.Lock()
	for i := range p.slots {
		s := &p.slots[i]
		seq := s.load().seq()
		p.stats.acquired += int64(seq - s.foldedSeq)
		s.foldedSeq = seq
	}
	p.stats.foldMu.Unlock()
}

// census counts the slots in each kind, and the reserved ones whose
// objects are leaving the pool.
type census struct{ idle, inUse, reserved, leaving int }

func (p *core) census() census {
	var c census
	for i := range p.slots {
		st := p.slots[i].load()
		switch st.kind() {
		case kindIdle:
			c.idle++
		case kindInUse:
			if p.isParked(int32(i), st.seq()) {
				c.idle++
			} else {
				c.inUse++
			}
		case kindReserved:
			c.reserved++
			if p.slots[i].leaving.Load() {
				c.leaving++
			}
		}
	}
	return c
}
