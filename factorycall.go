package actorpool

import (
	"context"
	"runtime"
)

func (p *Pool[T]) createObj(ctx context.Context) (obj T, err error) {
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

// destroyObj calls Factory.Destroy, logging a panic instead of crashing.
func (p *Pool[T]) destroyObj(obj T) {
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("actorpool: Factory.Destroy panicked", "panic", v, "stack", string(stack()))
		}
	}()
	p.factory.Destroy(obj)
}

func (p *Pool[T]) testObj(ctx context.Context, obj T) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = p.panicked("Test", v)
		}
	}()
	return p.tester.Test(ctx, obj)
}

func (p *core) panicked(method string, v any) error {
	e := &PanicError{Func: "Factory." + method, Value: v, Stack: stack()}
	p.log.Error("actorpool: Factory."+method+" panicked", "panic", v, "stack", string(e.Stack))
	return e
}

func stack() []byte {
	buf := make([]byte, 8<<10)
	return buf[:runtime.Stack(buf, false)]
}
