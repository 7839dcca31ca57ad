package actorpool

import (
	"context"
	"errors"
	"runtime"
)

// A Pool holds up to Config.MaxObjects objects made by a Factory and lends
// them out through leases.
//
// One goroutine, the pool's keeper, owns every object's lifecycle: it starts
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
	factory   Factory[T]
	validator Validator[T] // nil when the factory has no Validate that can fail
	tester    Tester[T]    // nil when the factory has no Test that can fail
	objs      []T          // the objects, by slot index
}

// New returns a pool of objects made by factory, configured by cfg, and
// starts its keeper. It creates nothing until objects are asked for, except
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
	p, k := assemble(factory, cfg.withDefaults())
	go k.run()
	return p, nil
}

// assemble builds a pool and its keeper, not yet running.
func assemble[T any](factory Factory[T], cfg Config) (*Pool[T], *keeper[T]) {
	p := &Pool[T]{factory: factory, objs: make([]T, cfg.MaxObjects)}
	p.core.init(cfg)
	if hasValidate(factory) {
		p.validator = factory.(Validator[T])
		p.validate = true
	}
	if hasTest(factory) {
		p.tester = factory.(Tester[T])
	}
	p.validateSlot = func(s *slot) error { return p.validateObj(p.objs[s.idx]) }
	p.destroySlot = func(s *slot) { p.destroyObj(p.objs[s.idx]) }
	return p, newKeeper(p)
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

// AcquireIdle takes an idle object if one is ready and reports whether it
// did. Unlike TryAcquire it never asks for a new object: it is for
// sweeping every idle object at once, to keep connections alive or to run
// a statement on each, without growing the pool.
func (p *Pool[T]) AcquireIdle() (Lease[T], bool) {
	if p.closed.Load() {
		return Lease[T]{}, false
	}
	s, seq := p.acquireIdle(p.home())
	if s == nil {
		return Lease[T]{}, false
	}
	return Lease[T]{p: p, t: p.lend(s), seq: seq}, true
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
		if s, seq := p.acquireIdle(p.home()); s != nil {
			ch <- AcquireResult[T]{Lease: Lease[T]{p: p, t: p.lend(s), seq: seq}}
			return ch
		}
	}
	if !p.startAsync() {
		ch <- AcquireResult[T]{Err: ErrClosed}
		return ch
	}
	var tr *acquireTrace
	if p.cfg.TraceAcquires {
		// The take runs on a goroutine of its own, whose stack says
		// nothing of who asked for it: record the caller's.
		pcs := make([]uintptr, 32)
		tr = &acquireTrace{pcs: pcs[:runtime.Callers(2, pcs)]}
	}
	go func() {
		defer p.asyncTakes.Done()
		l, err := p.Acquire(ctx)
		if tr != nil && err == nil && !l.nested {
			l.t.s.trace.Store(tr)
		}
		ch <- AcquireResult[T]{Lease: l, Err: err}
	}()
	return ch
}

// Close stops the pool: takes fail with ErrClosed from now on, waiting
// takers fail with ErrClosed, idle objects are destroyed at once, and
// objects in use are destroyed when given back. Close waits until every
// object has been destroyed and the pool's goroutines have ended, or until
// ctx ends; then it stops the keeper, objects still lent out are destroyed
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
