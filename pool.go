package actorpool

import (
	"context"
	"errors"
	"fmt"
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
	core
	factory Factory[T]
	objs    []T // the objects, by slot index
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
	p := &Pool[T]{factory: factory, objs: make([]T, cfg.MaxObjects)}
	p.core.init(cfg.withDefaults())
	p.validate = hasValidate(factory)
	p.validateSlot = func(s *slot) error { return p.validateObj(p.objs[s.idx]) }
	p.destroySlot = func(s *slot) { p.destroyObj(p.objs[s.idx]) }
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
// made for it failed, and a *WaitError when ctx ended first. While creates
// are failing, the ErrPoolExhausted and the *WaitError also wrap the latest
// *CreateError; see WaitError.
func (p *Pool[T]) Acquire(ctx context.Context) (Lease[T], error) {
	if p.withUsed.Load() {
		if l, ok := p.held(ctx); ok {
			return l, nil
		}
	}
	s, seq, err := p.acquire(ctx)
	if s == nil {
		return Lease[T]{}, err
	}
	return Lease[T]{p: p, t: p.lend(s), seq: seq}, nil
}

// TryAcquire takes an idle object if one is ready, and otherwise fails at
// once with ErrWouldBlock, which wraps the latest *CreateError too while
// creates are failing. When it fails and the pool has room, it asks for a
// new object, so that a later take finds one.
func (p *Pool[T]) TryAcquire() (Lease[T], error) {
	s, seq, err := p.tryAcquire()
	if s == nil {
		return Lease[T]{}, err
	}
	return Lease[T]{p: p, t: p.lend(s), seq: seq}, nil
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
	if !p.withUsed.Load() && !p.closed.Load() && ctx.Err() == nil {
		if s, seq := p.takeIdle(); s != nil {
			ch <- AcquireResult[T]{Lease: Lease[T]{p: p, t: p.lend(s), seq: seq}}
			return ch
		}
	}
	if !p.startAsync() {
		ch <- AcquireResult[T]{Err: ErrClosed}
		return ch
	}
	go func() {
		defer p.asyncTakes.Done()
		l, err := p.Acquire(ctx)
		ch <- AcquireResult[T]{Lease: l, Err: err}
	}()
	return ch
}

// Close stops the pool: takes fail with ErrClosed from now on, waiting
// takers fail with ErrClosed, idle objects are destroyed at once, and
// objects in use are destroyed when given back. Close waits until every
// object has been destroyed and the pool's goroutines have ended, or until
// ctx ends; then it stops the actor, objects still lent out are destroyed
// by whoever gives them back, and it returns an error that says how many
// are out, if any still are.
//
// Close may be called more than once and from many goroutines; every call
// waits as the first does. A call after one that gave up reports what is
// out at the time of that call: nil once everything has come back.
func (p *Pool[T]) Close(ctx context.Context) error { return p.core.close(ctx) }

// Reload retires every object the pool holds: idle objects are destroyed
// now, objects in use and objects being created are destroyed when they
// come back, and takes from now on get new objects. Use it when what the
// objects were made with has changed: rotated credentials, a server that
// failed over. The pool stays open. Reload returns once idle objects are
// retired, or when ctx ends.
func (p *Pool[T]) Reload(ctx context.Context) error { return p.core.reload(ctx) }

// Stats returns a snapshot of the pool's gauges and counters.
func (p *Pool[T]) Stats() Stats { return p.core.snapshot() }

func (p *Pool[T]) validateObj(obj T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = p.panicked("Validate", v)
		}
	}()
	return p.factory.Validate(obj)
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

func (p *core) panicked(method string, v any) error {
	e := &PanicError{Func: "Factory." + method, Value: v, Stack: stack()}
	p.log.Error("actorpool: Factory."+method+" panicked", "panic", v, "stack", string(e.Stack))
	return e
}

// acquire is Acquire after the check for a lease held by a With.
func (p *core) acquire(ctx context.Context) (*slot, uint32, error) {
	if p.closed.Load() {
		return nil, 0, ErrClosed
	}
	if done := ctx.Done(); done != nil {
		select {
		case <-done:
			return nil, 0, p.waitError(ctx, 0)
		default:
		}
	}
	if p.starving.Load() && p.waiting.Load() > 0 {
		// Bounded fairness, and a waiter has waited too long: queue
		// behind it rather than take an object ahead of it.
		return p.acquireSlow(ctx)
	}
	if s, seq := p.takeIdle(); s != nil {
		return s, seq, nil
	}
	return p.acquireSlow(ctx)
}

func (p *core) tryAcquire() (*slot, uint32, error) {
	if p.closed.Load() {
		return nil, 0, ErrClosed
	}
	if s, seq := p.takeIdle(); s != nil {
		return s, seq, nil
	}
	p.stats.emptyAcquires.Add(1)
	if int(p.total.Load()) < p.cfg.MaxObjects {
		p.post(message{kind: msgWarm})
	}
	return nil, 0, p.unserved(ErrWouldBlock)
}

// startAsync counts an asynchronous take in, unless the pool is closing.
// Doing so under the lock that Close takes to stop new waiters means Close
// either sees the take, and waits for it, or the take sees ErrClosed.
func (p *core) startAsync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.qclosed {
		return false
	}
	p.asyncTakes.Add(1)
	return true
}

// acquireSlow queues the caller as a waiter and blocks until it is served
// or ctx ends.
func (p *core) acquireSlow(ctx context.Context) (*slot, uint32, error) {
	w := p.waiters.get(ctx)
	p.mu.Lock()
	if p.qclosed {
		p.mu.Unlock()
		p.waiters.put(w)
		p.stats.emptyAcquires.Add(1)
		return nil, 0, ErrClosed
	}
	if p.cfg.MaxQueueSize > 0 && p.nwait >= p.cfg.MaxQueueSize {
		p.mu.Unlock()
		p.waiters.put(w)
		p.stats.emptyAcquires.Add(1)
		p.stats.exhausted.Add(1)
		return nil, 0, p.unserved(ErrPoolExhausted)
	}
	w.since = p.since()
	p.enqueueLocked(w)
	// An object may have gone idle between takeIdle and enqueueLocked.
	p.serveIdleLocked()
	p.mu.Unlock()

	if int(p.total.Load()) < p.cfg.MaxObjects && p.demand.CompareAndSwap(false, true) {
		p.post(message{kind: msgDemand})
	}

	for {
		var h handoff
		if w.done == nil {
			// A context that never ends: a plain receive is cheaper than a
			// select.
			h = <-w.ch
		} else {
			select {
			case h = <-w.ch:
			case <-w.done:
				return p.abandonWait(ctx, w)
			}
		}
		switch {
		case h.idx == wakeUp:
			if s, seq, ok := p.compete(w); ok {
				p.finishWait(w, nil)
				return s, seq, nil
			}
		case h.idx >= 0:
			p.finishWait(w, nil)
			s := &p.slots[h.idx]
			return s, s.load().seq(), nil
		case h.err != nil:
			return nil, 0, p.finishWait(w, h.err)
		default:
			return nil, 0, p.giveUp(ctx, w)
		}
	}
}

// abandonWait ends the wait of a taker whose context ended: it leaves the
// queue, or, if it was served or passed over as the context ended, takes
// what it was handed and passes an object on.
func (p *core) abandonWait(ctx context.Context, w *waiter) (*slot, uint32, error) {
	p.mu.Lock()
	if w.queued {
		woken := w.woken
		p.removeLocked(w)
		if woken {
			// It was woken to compete, and leaves: drop the wake-up, and
			// pass it on to the next waiter.
			<-w.ch
			w.woken = false
			p.serveIdleLocked()
		}
		p.mu.Unlock()
		if woken && p.waiting.Load() > 0 && !p.handingOff() {
			p.wakeOne()
		}
		return nil, 0, p.giveUp(ctx, w)
	}
	p.mu.Unlock()
	// Served, or passed over, as the context ended: the hand-off is
	// already in the channel, maybe behind a wake-up.
	h := <-w.ch
	if h.idx == wakeUp {
		p.mu.Lock()
		w.woken = false
		p.mu.Unlock()
		h = <-w.ch
	}
	if h.idx >= 0 {
		p.stats.unlent.Add(1)
		s := &p.slots[h.idx]
		p.giveBack(s, s.load().seq())
	}
	if h.err != nil {
		return nil, 0, p.finishWait(w, h.err)
	}
	return nil, 0, p.giveUp(ctx, w)
}

// finishWait records a wait that ended with err (nil when it was served),
// recycles w and returns err.
func (p *core) finishWait(w *waiter, err error) error {
	d := time.Duration(p.since() - w.since)
	p.stats.waits.Add(1)
	p.stats.waitNanos.Add(int64(d))
	if o := p.cfg.Observer; o != nil {
		o.ObserveWait(d, err)
	}
	p.waiters.put(w)
	return err
}

// giveUp ends a wait whose context ended, with a WaitError.
func (p *core) giveUp(ctx context.Context, w *waiter) error {
	err := p.waitError(ctx, time.Duration(p.since()-w.since))
	if errors.Is(err, ErrTimeout) {
		p.stats.timeouts.Add(1)
	} else {
		p.stats.canceled.Add(1)
	}
	return p.finishWait(w, err)
}

func (p *core) waitError(ctx context.Context, waited time.Duration) error {
	c := p.census()
	e := &WaitError{
		Waited:  waited,
		Idle:    c.idle,
		InUse:   c.inUse,
		Max:     p.cfg.MaxObjects,
		Waiting: int(p.waiting.Load()) + 1,
		Err:     ctx.Err(),
	}
	if ce := p.createErr.Load(); ce != nil {
		e.LastCreateErr = ce
	}
	return e
}

// unserved returns err, why a take ends without an object, wrapping the
// latest create error while creates are failing: a full queue or no idle
// object is then a symptom, and the create error its cause.
func (p *core) unserved(err error) error {
	if ce := p.createErr.Load(); ce != nil {
		return fmt.Errorf("%w; last create error: %w", err, ce)
	}
	return err
}

func (p *core) close(ctx context.Context) error {
	if p.closed.CompareAndSwap(false, true) {
		p.post(message{kind: msgClose})
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		p.post(message{kind: msgAbandon, err: ctx.Err()})
		<-p.done
	}
	p.asyncTakes.Wait()
	return p.closeError()
}

// closeError reports what is still out when Close returns: nothing, unless
// the actor gave up waiting, and then whatever has not come back since.
func (p *core) closeError() error {
	if p.abandonErr == nil {
		return nil
	}
	objs, tests := p.total.Load(), p.testing.Load()
	switch {
	case objs > 0 && tests > 0:
		return fmt.Errorf("actorpool: close: %w: %d objects still out (lent, being created, tested or destroyed) are destroyed when they come back, and %d Factory.Test calls have not returned", p.abandonErr, objs, tests)
	case objs > 0:
		return fmt.Errorf("actorpool: close: %w: %d objects still out (lent, being created, tested or destroyed) are destroyed when they come back", p.abandonErr, objs)
	case tests > 0:
		return fmt.Errorf("actorpool: close: %w: %d Factory.Test calls have not returned (their objects are destroyed)", p.abandonErr, tests)
	}
	return nil
}

func (p *core) reload(ctx context.Context) error {
	if p.closed.Load() {
		return ErrClosed
	}
	reply := make(chan struct{})
	if !p.post(message{kind: msgReload, reply: reply}) {
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
