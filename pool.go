package actorpool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// A Pool holds up to Config.MaxObjects objects made by a Factory and lends
// them out through leases.
//
// One goroutine, the pool's actor, owns every object's lifecycle: it starts
// creates and tests on goroutines of their own, destroys objects, evicts
// idle and old ones, keeps MinIdle warm, and carries out Reload and Close.
// Taking an idle object and giving one back do not involve it: they are a
// few atomic operations on the object's slot, and a given-back object goes
// straight to the longest-waiting taker, if any.
//
// A Pool is safe for use by many goroutines. It must be closed with Close
// to destroy its objects and stop its goroutine.
type Pool[T any] struct {
	factory  Factory[T]
	cfg      Config
	log      *slog.Logger
	validate bool // whether factory.Validate can fail
	traced   bool // TraceAcquires or Observer: hand-outs record more
	epoch    time.Time
	slots    []slot[T]

	closed atomic.Bool
	gen    atomic.Uint64 // bumped by Reload
	now    atomic.Int64  // coarse clock, unix nanoseconds, kept by the actor
	inWith atomic.Int32  // With calls running: Acquire looks for a held lease only then

	_      [64]byte
	parked atomic.Uint64 // the last object given back; see park.go
	stack  idleStack[T]
	queue  idleQueue

	_       [64]byte
	waiting atomic.Int32 // p.nwait, readable without the lock

	mu         sync.Mutex // guards the wait queue
	head, tail *waiter
	nwait      int
	qclosed    bool // no new waiters: the pool is closing
	asyncTakes sync.WaitGroup
	waiters    waiterCache

	total    atomic.Int32 // objects alive or being created, kept by the actor
	demand   atomic.Bool  // a demand message is on its way to the actor
	mbox     mailbox[message[T]]
	done     chan struct{} // closed when the actor returns
	closeErr error         // set by the actor before done is closed

	stats counters
}

// New returns a pool of objects made by factory, configured by cfg, and
// starts its actor. It creates nothing until objects are asked for, except
// Config.MinIdle objects, which it creates at once, one at a time.
func New[T any](factory Factory[T], cfg Config) (*Pool[T], error) {
	if factory == nil {
		return nil, errors.New("actorpool: New: factory is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if f, ok := factory.(FactoryFuncs[T]); ok && f.CreateFunc == nil {
		return nil, errors.New("actorpool: New: " + errNoCreateFunc.Error())
	}
	cfg = cfg.withDefaults()
	p := &Pool[T]{
		factory:  factory,
		cfg:      cfg,
		log:      cfg.Logger.With("pool", cfg.Name),
		validate: hasValidate(factory),
		traced:   cfg.TraceAcquires || cfg.Observer != nil,
		epoch:    time.Now(),
		slots:    make([]slot[T], cfg.MaxObjects),
		done:     make(chan struct{}),
	}
	for i := range p.slots {
		p.slots[i].p = p
		p.slots[i].idx = int32(i)
	}
	p.stack.slots = p.slots
	if cfg.FIFO {
		p.queue.init(cfg.MaxObjects)
	}
	p.mbox.init()
	p.now.Store(time.Now().UnixNano())
	a := newLifecycle(p)
	go a.run()
	return p, nil
}

// Config returns the pool's configuration, with defaults filled in.
func (p *Pool[T]) Config() Config { return p.cfg }

// Acquire takes an object, waiting until one is idle, a new one is created,
// or ctx ends. Waiting takers are served first come, first served.
//
// Acquire on a context passed to a With callback returns the object that
// With holds, as a lease whose Release does nothing; see With.
//
// It fails with ErrClosed once the pool is closing, ErrPoolExhausted when
// Config.MaxQueueSize takers already wait, a *CreateError when the create
// made for it failed, and a *WaitError when ctx ended first.
func (p *Pool[T]) Acquire(ctx context.Context) (Lease[T], error) {
	if p.inWith.Load() != 0 {
		if l, ok := p.held(ctx); ok {
			return l, nil
		}
	}
	if p.closed.Load() {
		return Lease[T]{}, ErrClosed
	}
	if done := ctx.Done(); done != nil {
		select {
		case <-done:
			return Lease[T]{}, p.waitError(ctx, 0, p.stats.createErrors.Load())
		default:
		}
	}
	if s, seq := p.takeIdle(); s != nil {
		return p.lease(s, seq), nil
	}
	return p.acquireSlow(ctx)
}

// TryAcquire takes an idle object if one is ready, and otherwise fails at
// once with ErrWouldBlock. When it fails and the pool has room, it asks for
// a new object, so that a later take finds one.
func (p *Pool[T]) TryAcquire() (Lease[T], error) {
	if p.closed.Load() {
		return Lease[T]{}, ErrClosed
	}
	if s, seq := p.takeIdle(); s != nil {
		return p.lease(s, seq), nil
	}
	p.stats.emptyAcquires.Add(1)
	if int(p.total.Load()) < p.cfg.MaxObjects {
		p.post(message[T]{kind: msgWarm})
	}
	return Lease[T]{}, ErrWouldBlock
}

// An AcquireResult is what AcquireAsync delivers: a lease, or the error that
// ended the take.
type AcquireResult[T any] struct {
	Lease Lease[T]
	Err   error
}

// AcquireAsync starts a take and returns at once. The channel delivers
// exactly one result, when Acquire(ctx) would have returned; the caller
// owns the lease it carries and must give it back.
func (p *Pool[T]) AcquireAsync(ctx context.Context) <-chan AcquireResult[T] {
	ch := make(chan AcquireResult[T], 1)
	if p.inWith.Load() == 0 && !p.closed.Load() && ctx.Err() == nil {
		if s, seq := p.takeIdle(); s != nil {
			ch <- AcquireResult[T]{Lease: p.lease(s, seq)}
			return ch
		}
	}
	// Registering under the lock that Close takes to stop new waiters means
	// Close either sees this take, and waits for it, or it sees ErrClosed.
	p.mu.Lock()
	if p.qclosed {
		p.mu.Unlock()
		ch <- AcquireResult[T]{Err: ErrClosed}
		return ch
	}
	p.asyncTakes.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.asyncTakes.Done()
		l, err := p.Acquire(ctx)
		ch <- AcquireResult[T]{Lease: l, Err: err}
	}()
	return ch
}

// acquireSlow queues the caller as a waiter and blocks until it is served
// or ctx ends.
func (p *Pool[T]) acquireSlow(ctx context.Context) (Lease[T], error) {
	p.stats.emptyAcquires.Add(1)
	w := p.waiters.get(ctx)
	p.mu.Lock()
	if p.qclosed {
		p.mu.Unlock()
		p.waiters.put(w)
		return Lease[T]{}, ErrClosed
	}
	if p.cfg.MaxQueueSize > 0 && p.nwait >= p.cfg.MaxQueueSize {
		p.mu.Unlock()
		p.waiters.put(w)
		p.stats.exhausted.Add(1)
		return Lease[T]{}, ErrPoolExhausted
	}
	w.since = time.Now()
	w.createErrs = p.stats.createErrors.Load()
	p.enqueueLocked(w)
	p.mu.Unlock()

	// An object may have gone idle between takeIdle and enqueueLocked.
	p.serveIdle()
	if int(p.total.Load()) < p.cfg.MaxObjects && p.demand.CompareAndSwap(false, true) {
		p.post(message[T]{kind: msgDemand})
	}

	var h handoff
	select {
	case h = <-w.ch:
	case <-w.done:
		p.mu.Lock()
		if w.queued {
			p.removeLocked(w)
			p.mu.Unlock()
			return Lease[T]{}, p.giveUp(ctx, w)
		}
		p.mu.Unlock()
		// Served, or passed over, as the context ended: the hand-off is
		// already in the channel.
		h = <-w.ch
		if h.idx >= 0 {
			p.stats.unlent.Add(1)
			s := &p.slots[h.idx]
			p.giveBack(s, s.load().seq())
		}
		if h.err != nil {
			return Lease[T]{}, p.finishWait(w, h.err)
		}
		return Lease[T]{}, p.giveUp(ctx, w)
	}
	if h.idx < 0 {
		if h.err != nil {
			return Lease[T]{}, p.finishWait(w, h.err)
		}
		return Lease[T]{}, p.giveUp(ctx, w)
	}
	p.finishWait(w, nil)
	s := &p.slots[h.idx]
	return p.lease(s, s.load().seq()), nil
}

// finishWait records a wait that ended with err (nil when it was served),
// recycles w and returns err.
func (p *Pool[T]) finishWait(w *waiter, err error) error {
	d := time.Since(w.since)
	p.stats.waits.Add(1)
	p.stats.waitNanos.Add(int64(d))
	if o := p.cfg.Observer; o != nil {
		o.ObserveWait(d, err)
	}
	p.waiters.put(w)
	return err
}

// giveUp ends a wait whose context ended, with a WaitError.
func (p *Pool[T]) giveUp(ctx context.Context, w *waiter) error {
	err := p.waitError(ctx, time.Since(w.since), w.createErrs)
	if errors.Is(err, ErrTimeout) {
		p.stats.timeouts.Add(1)
	} else {
		p.stats.canceled.Add(1)
	}
	return p.finishWait(w, err)
}

func (p *Pool[T]) waitError(ctx context.Context, waited time.Duration, createErrs int64) error {
	c := p.census()
	e := &WaitError{
		Waited:  waited,
		Idle:    c.idle,
		InUse:   c.inUse,
		Max:     p.cfg.MaxObjects,
		Waiting: int(p.waiting.Load()) + 1,
		Err:     ctx.Err(),
	}
	if p.stats.createErrors.Load() != createErrs {
		if le := p.stats.lastCreateErr.Load(); le != nil {
			e.LastCreateErr = *le
		}
	}
	return e
}

// takeIdle pops idle objects until it gets one it can hand out, and returns
// its slot moved to in use with seq, or nil when none is idle.
func (p *Pool[T]) takeIdle() (*slot[T], uint32) {
	for {
		s, seq := p.popIdle()
		if s == nil {
			return nil, 0
		}
		cause, bad := p.unusable(s)
		if !bad {
			return s, seq
		}
		p.stats.unlent.Add(1)
		p.retire(s, seq, kindInUse, cause)
	}
}

// popIdle claims the parked object, or else the first idle one the idle
// list yields, and returns its slot moved to in use with seq.
func (p *Pool[T]) popIdle() (*slot[T], uint32) {
	if !p.cfg.FIFO {
		if s, seq := p.takeParked(); s != nil {
			return s, seq
		}
	}
	for {
		var i int32
		var ok bool
		if p.cfg.FIFO {
			i, ok = p.queue.pop()
		} else {
			i, ok = p.stack.pop()
		}
		if !ok {
			return nil, 0
		}
		s := &p.slots[i]
		if got, seq := settle(s); got {
			return s, seq
		}
	}
}

// settle resolves a slot index just popped from the idle list: it hands the
// object out to the caller if it is idle, returning the new seq, and
// otherwise clears the listed bit of what is a stale entry (the actor
// reserved or replaced the object after it was listed), so the slot's next
// owner lists it again.
func settle[T any](s *slot[T]) (got bool, seq uint32) {
	for {
		st := s.load()
		if st.kind() == kindIdle {
			nst := st.handedOut() &^ listedBit
			if s.cas(st, nst) {
				return true, nst.seq()
			}
		} else if s.cas(st, st&^listedBit) {
			return false, 0
		}
	}
}

// unusable reports why the object in s, held by the caller, must not be
// handed out or kept.
func (p *Pool[T]) unusable(s *slot[T]) (destroyCause, bool) {
	if s.gen != p.gen.Load() {
		return causeReload, true
	}
	if s.expiresAt != 0 && p.now.Load() >= s.expiresAt {
		return causeLifetime, true
	}
	if p.validate && p.validateObj(s.obj) != nil {
		return causeInvalid, true
	}
	return 0, false
}

func (p *Pool[T]) validateObj(obj T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = p.panicked("Validate", v)
		}
	}()
	return p.factory.Validate(obj)
}

// giveBack returns a slot that the caller holds in use with seq: to the
// oldest waiter if there is one, else to the idle objects. It reports false
// if the slot was not the caller's to give: a stale lease.
func (p *Pool[T]) giveBack(s *slot[T], seq uint32) bool {
	if p.closed.Load() {
		return p.retire(s, seq, kindInUse, causeClose)
	}
	if cause, bad := p.unusable(s); bad {
		return p.retire(s, seq, kindInUse, cause)
	}
	if p.waiting.Load() > 0 {
		p.mu.Lock()
		served, ok := p.serveLocked(s, kindInUse, seq)
		p.mu.Unlock()
		if !ok {
			return false
		}
		if served {
			return true
		}
	}
	if p.cfg.FIFO {
		if !p.list(s, kindInUse, seq) {
			return false
		}
	} else {
		p.park(s, seq)
	}
	// A waiter may have queued, or Close begun, between the checks above
	// and the object going idle; each of them looks at the idle objects
	// after its own step, and this looks at them after ours.
	if p.waiting.Load() > 0 {
		p.serveIdle()
	}
	if p.closed.Load() {
		p.post(message[T]{kind: msgSweep})
	}
	return true
}

// list moves a slot from kind from with seq to idle, and puts its index in
// the idle list unless it is listed already. It reports false if the slot
// was not in kind from with seq.
func (p *Pool[T]) list(s *slot[T], from slotKind, seq uint32) bool {
	for {
		st := s.load()
		if st.kind() != from || st.seq() != seq {
			return false
		}
		if !s.cas(st, st.with(kindIdle)|listedBit) {
			continue
		}
		if !st.listed() {
			if p.cfg.FIFO {
				p.queue.push(s.idx)
			} else {
				p.stack.push(s.idx)
			}
		}
		return true
	}
}

// retire takes a slot that the caller holds in kind from with seq out of
// service and has the actor destroy its object. It reports false if the
// slot was not in kind from with seq.
func (p *Pool[T]) retire(s *slot[T], seq uint32, from slotKind, cause destroyCause) bool {
	if _, ok := s.move(from, seq, kindReserved); !ok {
		return false
	}
	if !p.post(message[T]{kind: msgRetire, idx: s.idx, cause: cause}) {
		// The actor is gone: Close gave up waiting for this object, so
		// its holder destroys it.
		p.destroyInline(s, cause)
	}
	return true
}

// destroyInline destroys a reserved slot's object on the calling goroutine,
// for objects given back after the actor has stopped.
func (p *Pool[T]) destroyInline(s *slot[T], cause destroyCause) {
	p.destroyObj(s.obj)
	p.stats.destroyed[cause].Add(1)
}

// destroyObj calls Factory.Destroy, logging a panic instead of crashing.
func (p *Pool[T]) destroyObj(obj T) {
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("actorpool: Factory.Destroy panicked", "panic", v, "stack", string(stack()))
		}
	}()
	p.factory.Destroy(obj)
}

func (p *Pool[T]) panicked(method string, v any) error {
	e := &PanicError{Method: method, Value: v, Stack: stack()}
	p.log.Error("actorpool: Factory."+method+" panicked", "panic", v, "stack", string(e.Stack))
	return e
}

func stack() []byte {
	buf := make([]byte, 8<<10)
	return buf[:runtime.Stack(buf, false)]
}

// post sends a message to the actor, and reports false when the actor has
// stopped.
func (p *Pool[T]) post(m message[T]) bool { return p.mbox.post(m) }

// Close stops the pool: takes fail with ErrClosed from now on, waiting
// takers fail with ErrClosed, idle objects are destroyed at once, and
// objects in use are destroyed when given back. Close waits until every
// object has been destroyed and the pool's goroutines have ended, or until
// ctx ends; then it stops the actor, objects still lent out are destroyed
// by whoever gives them back, and it returns an error that says how many
// are out.
//
// Close may be called more than once and from many goroutines; every call
// waits as the first does.
func (p *Pool[T]) Close(ctx context.Context) error {
	if p.closed.CompareAndSwap(false, true) {
		p.post(message[T]{kind: msgClose})
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.post(message[T]{kind: msgAbandon, err: ctx.Err()})
		<-p.done
	}
	p.asyncTakes.Wait()
	return p.closeErr
}

// Reload retires every object the pool holds: idle objects are destroyed
// now, objects in use and objects being created are destroyed when they
// come back, and takes from now on get new objects. Use it when what the
// objects were made with has changed: rotated credentials, a server that
// failed over. The pool stays open. Reload returns once idle objects are
// retired, or when ctx ends.
func (p *Pool[T]) Reload(ctx context.Context) error {
	if p.closed.Load() {
		return ErrClosed
	}
	reply := make(chan struct{})
	if !p.post(message[T]{kind: msgReload, reply: reply}) {
		return ErrClosed
	}
	select {
	case <-reply:
		return nil
	case <-p.done:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("actorpool: reload: %w", ctx.Err())
	}
}
