package actorpool

import "context"

// A Factory makes, checks and disposes of the objects a Pool holds.
//
// The pool calls Create and Test from goroutines of its own, never while it
// holds a lock, so either may do I/O and take as long as its context allows.
// Validate runs on the caller's goroutine each time an object is given back
// and each time an idle object is handed out, so it must be fast and must not
// do I/O: it is the place to check in-memory state such as "closed" or "in a
// transaction". Destroy is called exactly once for every object Create
// returned, from a goroutine of the pool.
//
// A panic in any of these methods is recovered: in Create it fails the take
// that was waiting for the object, in Validate and Test it marks the object
// invalid, and in Destroy it is logged.
type Factory[T any] interface {
	// Create makes a new object. The context ends after Config.CreateTimeout
	// or when the pool closes.
	Create(ctx context.Context) (T, error)
	// Destroy releases what obj holds. The pool never uses obj afterwards.
	Destroy(obj T)
	// Validate reports whether obj may be used, without I/O. A non-nil
	// error retires the object.
	Validate(obj T) error
	// Test checks an idle object thoroughly, and may do I/O (a ping, a
	// "SELECT 1"). The context ends after Config.TestTimeout; then the
	// pool destroys obj, whether Test has returned or not, which is what
	// unblocks a Test stuck in I/O that ignores its context. A non-nil
	// error retires the object.
	Test(ctx context.Context, obj T) error
}

// FactoryFuncs builds a Factory from functions. Only CreateFunc is
// required; a nil DestroyFunc does nothing, and a nil ValidateFunc or
// TestFunc reports every object healthy.
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

// hasValidate reports whether a Validate call can ever fail, so the pool can
// leave it off the hot path when it cannot.
func hasValidate[T any](f Factory[T]) bool {
	switch f := f.(type) {
	case FactoryFuncs[T]:
		return f.ValidateFunc != nil
	case *FactoryFuncs[T]:
		return f != nil && f.ValidateFunc != nil
	}
	return true
}

// hasTest reports whether a Test call can ever fail, so the actor can skip
// reserving idle objects for a test that does nothing.
func hasTest[T any](f Factory[T]) bool {
	switch f := f.(type) {
	case FactoryFuncs[T]:
		return f.TestFunc != nil
	case *FactoryFuncs[T]:
		return f != nil && f.TestFunc != nil
	}
	return true
}
