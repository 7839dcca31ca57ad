package actorpool

import "context"

// With takes an object, calls fn with it, and gives it back, even when fn
// panics (the panic goes on after) or calls runtime.Goexit. An error from fn
// is returned as is and does not destroy the object; to throw away an
// object fn found broken, call Destroy on the lease that
// p.Acquire(ctx) returns inside fn. That marks the object, which fn may
// go on using until it returns, and With destroys it instead of giving it
// back; see Lease.Destroy.
//
// The context fn receives carries the lease: a With or Acquire on this pool
// with that context, however deeply nested, reuses the same object instead
// of taking a second one (which could deadlock a pool of one), and only the
// outermost With gives it back. This is Ruby connection_pool's per-thread
// reentrancy, carried by the context.
//
// A goroutine that fn starts must not share the object; it takes its own
// with a context that carries no lease:
//
//	go func() {
//		_ = p.With(actorpool.Detach(ctx), work)
//	}()
func (p *Pool[T]) With(ctx context.Context, fn func(ctx context.Context, obj T) error) error {
	if !p.withUsed.Load() {
		// Set once and never cleared, so that it stays a read-mostly word:
		// a counter of running With calls would be written twice per call.
		p.withUsed.Store(true)
	} else if l, ok := p.held(ctx); ok {
		return fn(ctx, l.Value())
	}
	s, seq, err := p.acquire(ctx)
	if s == nil {
		return err
	}
	l := Lease[T]{p: p, t: p.lend(s), seq: seq}
	defer func() {
		// An object that fn destroyed through a nested lease is marked,
		// and Release destroys it.
		_ = l.Release()
	}()
	return fn(&leaseContext{Context: ctx, pool: p, lease: l.t, seq: l.seq}, l.Value())
}

// Do is With for a callback that returns a value.
func Do[T, R any](ctx context.Context, p *Pool[T], fn func(ctx context.Context, obj T) (R, error)) (R, error) {
	var r R
	err := p.With(ctx, func(ctx context.Context, obj T) error {
		var err error
		r, err = fn(ctx, obj)
		return err
	})
	return r, err
}

// Detach returns a context like ctx that carries no lease, so that With and
// Acquire on it take objects of their own. Use it for goroutines started
// inside a With callback.
func Detach(ctx context.Context) context.Context {
	return context.WithValue(ctx, leaseKey{}, nil)
}

type leaseKey struct{}

// A leaseContext is the context a With callback receives. It is its own
// value for leaseKey, and a lookup for a pool walks out through enclosing
// leaseContexts, so nested With calls on different pools each find their
// own lease.
type leaseContext struct {
	context.Context
	pool  any // *Pool[T]
	lease *ticket
	seq   uint32
}

func (c *leaseContext) Value(key any) any {
	if key == (leaseKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// held returns a nested lease for the object a With on ctx holds from p,
// if it still holds one.
func (p *Pool[T]) held(ctx context.Context) (Lease[T], bool) {
	for c, _ := ctx.Value(leaseKey{}).(*leaseContext); c != nil; c, _ = c.Context.Value(leaseKey{}).(*leaseContext) {
		if c.pool != any(p) {
			continue
		}
		if c.lease != nil {
			if _, ok := current(c.lease, c.seq); ok {
				return Lease[T]{p: p, t: c.lease, seq: c.seq, nested: true}, true
			}
		}
		return Lease[T]{}, false
	}
	return Lease[T]{}, false
}
