package actorpool

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// core is the part of a pool that does not depend on the object type: the
// slots' states, the idle list, the parked words, the wait queue, the
// counters, the keeper's inbox. Keeping the hot path of taking and giving
// back in methods without a type parameter lets the compiler inline it;
// Pool[T] adds the objects and the factory around it.
type core struct {
	cfg      Config
	log      *slog.Logger
	validate bool // whether Factory.Validate can fail
	traced   bool // TraceAcquires or Observer: hand-outs record more
	epoch    time.Time
	slots    []slot

	// Typed work the core asks of Pool[T].
	validateSlot func(s *slot) error // Factory.Validate on the slot's object
	destroySlot  func(s *slot)       // Factory.Destroy on the slot's object, now

	closed   atomic.Bool
	starving atomic.Bool // HandoffAfter > 0 and a waiter has waited past it: hand objects straight to waiters
	withUsed atomic.Bool // With has run: from then on Acquire looks for a lease in its context
	parkMask uint32      // the shards in use, less one: parked[:parkMask+1]

	// The parked words, per shard the object given back there last (see
	// park.go), each alone on its cache line, and apart from the fields
	// above, read on every take, and the idle list's head below, written
	// by every push and pop. In the core rather than behind a slice: a
	// take and a give-back each reach their word by one load less, 2-4% of
	// the uncontended cycle on 2 cores (docs/benchmarks.md, "Issue 23 on 2
	// cores"), for 4 KiB a pool.
	_      [64]byte
	parked [maxParkShards]parkedWord
	_      [64]byte
	stack  idleStack
	queue  idleQueue

	_         [64]byte
	waiting   atomic.Int32  // nwait, readable without the lock
	headSince atomic.Int64  // the oldest waiter's since, readable without the lock
	headHome  atomic.Uint32 // the oldest waiter's home shard, for serveIdle to claim in
	wakeOut   atomic.Bool   // HandoffAfter > 0: a waiter is awake to compete for an object; wake no other

	mu         sync.Mutex // guards the wait queue
	head, tail *waiter
	woken      *waiter // the waiter woken to compete, if any
	nwait      int
	qclosed    bool // no new waiters: the pool is closing
	asyncTakes sync.WaitGroup
	waiters    waiterCache

	total      atomic.Int32 // objects alive or being created, kept by the keeper; once it has abandoned, those still out
	testing    atomic.Int32 // Factory.Test calls running, those past TestTimeout included
	demand     atomic.Bool  // a demand message is on its way to the keeper
	inbox      inbox
	done       chan struct{} // closed when the keeper returns
	abandonErr error         // Close's context error if the keeper gave up waiting; set before done is closed

	// createErr is the error of the latest create while creates are
	// failing: the keeper sets it when a create fails and clears it when
	// one succeeds. Every take that ends without an object meanwhile
	// wraps it, so that the caller learns why none was free.
	createErr atomic.Pointer[CreateError]

	stats counters
}

func (p *core) init(cfg Config) {
	p.cfg = cfg
	p.log = cfg.Logger.With("pool", cfg.Name)
	p.traced = cfg.TraceAcquires || cfg.Observer != nil
	p.epoch = time.Now()
	p.slots = make([]slot, cfg.MaxObjects)
	for i := range p.slots {
		p.slots[i].c = p
		p.slots[i].idx = int32(i)
	}
	p.stack.slots = p.slots
	p.initParked()
	if cfg.FIFO {
		p.queue.init(cfg.MaxObjects)
	}
	p.inbox.init()
	p.done = make(chan struct{})
}

// since is the pool's monotonic clock, for wait and hold times: one read of
// the monotonic clock, where time.Now reads the wall clock too.
func (p *core) since() int64 { return int64(time.Since(p.epoch)) }

// post sends a message to the keeper, and reports false when the keeper has
// stopped.
func (p *core) post(m message) bool { return p.inbox.post(m) }
