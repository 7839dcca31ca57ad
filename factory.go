package actorpool

import "context"

// A Factory makes and disposes of the objects a Pool holds. A factory may
// also check them, by implementing Validator (a fast check each time an
// object is handed out or given back) or Tester (a thorough check of idle
// objects every Config.ValidationInterval), or both; a factory that
// implements neither costs nothing for them.
//
// The pool calls Create from goroutines of its own, never while it holds a
// lock, so it may do I/O and take as long as its context allows. Destroy is
// called exactly once for every object Create returned, from a goroutine
// of the pool, unless a holder took the object out of the pool with
// Lease.Hijack: that object is the holder's to destroy. A factory's methods run concurrently on different objects.
//
// On one object, the pool calls the methods one at a time, with one
// exception: Destroy may run while Test still runs. When Test outlives
// Config.TestTimeout, the pool destroys the object at the deadline without
// waiting for Test to return, since destroying it is what ends a Test
// stuck in I/O; it may even do so before Test has begun. Destroy must then
// do only what is safe beside Test — for a network connection, close its
// socket (net.Conn.Close is safe from any goroutine; under TLS, the
// socket under the tls.Conn, whose own Close sends a goodbye) — and leave
// the rest (a protocol's goodbye, the client library's Close, which is
// rarely safe beside the library's I/O) to Test's goroutine, to finish
// when Test returns. Destroy never runs before Create has returned obj: a
// Create that outlives Config.CreateTimeout fails the take waiting for it
// at the deadline, but the pool waits for it to return, and then keeps or
// destroys what it made.
//
// A panic in any method of a factory is recovered: in Create it fails the
// take that was waiting for the object, in Validate and Test it marks the
// object invalid, and in Destroy it is logged. So is a call to
// runtime.Goexit (t.FailNow in a test's factory) in Create, Test or
// Destroy, which run on goroutines of the pool's own; Validate runs on the
// goroutine taking or giving back the object, which Goexit ends.
type Factory[T any] interface {
	// Create makes a new object. The context ends after Config.CreateTimeout
	// or when the pool closes.
	Create(ctx context.Context) (T, error)
	// Destroy releases what obj holds. The pool never uses obj afterwards.
	// It may run while Test(obj) still runs; see above.
	Destroy(obj T)
}

// A Validator is a Factory that checks objects in memory. The pool calls
// Validate on the caller's goroutine each time an object is given back and
// each time an idle object is handed out, so it must be fast and must not
// do I/O: it is the place to check in-memory state such as "closed" or "in
// a transaction".
type Validator[T any] interface {
	// Validate reports whether obj may be used, without I/O, and without
	// taking or giving back the pool's objects: the pool may hold a lock
	// as it calls it. A non-nil error retires the object.
	Validate(obj T) error
}

// A Tester is a Factory that checks idle objects thoroughly. The pool calls
// Test from a goroutine of its own on objects idle and untested for
// Config.ValidationInterval, never while it holds a lock.
type Tester[T any] interface {
	// Test checks an idle object thoroughly, and may do I/O (a ping, a
	// "SELECT 1"). The context ends after Config.TestTimeout; then the
	// pool destroys obj, whether Test has returned or not, which is what
	// unblocks a Test stuck in I/O that ignores its context: Destroy may
	// run beside Test, and Test must finish the goodbye that Destroy left
	// it (see Factory). A non-nil error retires the object.
	Test(ctx context.Context, obj T) error
}

// FactoryFuncs builds a Factory from functions. Only CreateFunc is
// required; a nil DestroyFunc does nothing. FactoryFuncs is a Validator
// and a Tester only in effect: the pool calls Validate only when
// ValidateFunc is set, and Test only when TestFunc is set.
//
//	factory := actorpool.FactoryFuncs[net.Conn]{
//		CreateFunc:  func(ctx context.Context) (net.Conn, error) { return dialer.DialContext(ctx, "tcp", addr) },
//		DestroyFunc: func(c net.Conn) { c.Close() },
//	}
type FactoryFuncs[T any] struct {
	CreateFunc   func(ctx context.Context) (T, error)
	DestroyFunc  func(obj T)
	ValidateFunc func(obj T) error
	TestFunc     func(ctx context.Context, obj T) error
}

// Create calls f.CreateFunc.
func (f FactoryFuncs[T]) Create(ctx context.Context) (T, error) {
	if f.CreateFunc == nil {
		var zero T
		return zero, errNoCreateFunc
	}
	return f.CreateFunc(ctx)
}

// Destroy calls f.DestroyFunc, if set.
func (f FactoryFuncs[T]) Destroy(obj T) {
	if f.DestroyFunc != nil {
		f.DestroyFunc(obj)
	}
}

// Validate calls f.ValidateFunc, if set.
func (f FactoryFuncs[T]) Validate(obj T) error {
	if f.ValidateFunc == nil {
		return nil
	}
	return f.ValidateFunc(obj)
}

// Test calls f.TestFunc, if set.
func (f FactoryFuncs[T]) Test(ctx context.Context, obj T) error {
	if f.TestFunc == nil {
		return nil
	}
	return f.TestFunc(ctx, obj)
}

// hasValidate reports whether a factory has a Validate that can fail, so
// that the pool leaves Validate off the hot path when it has none.
func hasValidate[T any](f Factory[T]) bool {
	switch f := f.(type) {
	case FactoryFuncs[T]:
		return f.ValidateFunc != nil
	case *FactoryFuncs[T]:
		return f != nil && f.ValidateFunc != nil
	}
	_, ok := f.(Validator[T])
	return ok
}

// hasTest reports whether a factory has a Test that can fail, so that the
// keeper does not reserve idle objects for a test that does nothing.
func hasTest[T any](f Factory[T]) bool {
	switch f := f.(type) {
	case FactoryFuncs[T]:
		return f.TestFunc != nil
	case *FactoryFuncs[T]:
		return f != nil && f.TestFunc != nil
	}
	_, ok := f.(Tester[T])
	return ok
}
