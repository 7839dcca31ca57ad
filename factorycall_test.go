package actorpool

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

func TestCreatePanicIsAnError(t *testing.T) {
	var n atomic.Int32
	p := newPool(t, &factory{create: func(context.Context, int) error {
		if n.Add(1) == 1 {
			panic("driver bug")
		}
		return nil
	}}, Config{MaxObjects: 1})
	_, err := p.Acquire(context.Background())
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Func != "Factory.Create" || !strings.Contains(err.Error(), "driver bug") {
		t.Fatalf("Acquire after a panicking Create = %v, want a *PanicError", err)
	}
	// The pool is not stuck: the next take gets an object (after the
	// backoff that the failure started).
	l := acquire(t, p)
	release(t, l)
}

func TestValidatePanicRetiresObject(t *testing.T) {
	f := &factory{validate: func(c *conn) error {
		if c.broken.Load() {
			panic("nil pointer in driver")
		}
		return nil
	}}
	p := newPool(t, f, Config{MaxObjects: 1})
	l := acquire(t, p)
	l.Value().broken.Store(true)
	release(t, l)
	waitFor(t, "the destroy", func() bool { return f.destroys.Load() == 1 })
}
