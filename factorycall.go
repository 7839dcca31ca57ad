package actorpool

import (
	"context"
	"runtime"
)

// Create, Test and Destroy run confined to a goroutine of their own (see
// confined), each a slow call that a goroutine more costs nothing that
// counts; Validate, on the path that takes and gives back objects, runs
// on its caller's goroutine.

func (p *Pool[T]) createObj(ctx context.Context) (obj T, err error) {
	if exit := confined(func() { obj, err = p.createCaught(ctx) }); exit != nil {
		var zero T
		return zero, p.exited("Create", exit)
	}
	return obj, err
}

func (p *Pool[T]) createCaught(ctx context.Context) (obj T, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = p.panicked("Create", v)
		}
	}()
	return p.factory.Create(ctx)
}

func (p *Pool[T]) validateObj(obj T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = p.panicked("Validate", v)
		}
	}()
	return p.validator.Validate(obj)
}

// destroyObj calls Factory.Destroy, logging a panic or a runtime.Goexit
// instead of crashing or ending the pool's goroutine.
func (p *Pool[T]) destroyObj(obj T) {
	if exit := confined(func() { p.destroyCaught(obj) }); exit != nil {
		p.exited("Destroy", exit)
	}
}

func (p *Pool[T]) destroyCaught(obj T) {
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("actorpool: Factory.Destroy panicked", "panic", v, "stack", string(stack()))
		}
	}()
	p.factory.Destroy(obj)
}

func (p *Pool[T]) testObj(ctx context.Context, obj T) (err error) {
	if exit := confined(func() { err = p.testCaught(ctx, obj) }); exit != nil {
		return p.exited("Test", exit)
	}
	return err
}

func (p *Pool[T]) testCaught(ctx context.Context, obj T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = p.panicked("Test", v)
		}
	}()
	return p.tester.Test(ctx, obj)
}

// confined runs f on a goroutine of its own and returns that goroutine's
// stack if f called runtime.Goexit, or nil. Goexit cannot be recovered
// from: had f run on the pool's goroutine that reports its result — a
// t.FailNow in a test's factory is enough — that goroutine would end
// unreported, and the take or the keeper waiting for it would wait for
// ever, the pool stuck.
func confined(f func()) (exitStack []byte) {
	done := make(chan []byte, 1)
	go func() {
		returned := false
		defer func() {
			if returned {
				done <- nil
			} else {
				done <- stack()
			}
		}()
		f()
		returned = true
	}()
	return <-done
}

func (p *core) panicked(method string, v any) error {
	e := &PanicError{Func: "Factory." + method, Value: v, Stack: stack()}
	p.log.Error("actorpool: Factory."+method+" panicked", "panic", v, "stack", string(e.Stack))
	return e
}

// exited is panicked for a method that called runtime.Goexit, with the
// stack of the goroutine it ended.
func (p *core) exited(method string, stack []byte) error {
	e := &PanicError{Func: "Factory." + method, Goexit: true, Stack: stack}
	p.log.Error("actorpool: Factory."+method+" called runtime.Goexit", "stack", string(stack))
	return e
}

func stack() []byte {
	buf := make([]byte, 8<<10)
	return buf[:runtime.Stack(buf, false)]
}
