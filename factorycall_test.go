package actorpool

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
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

// TestFactoryGoexit checks that a factory method that calls
// runtime.Goexit, as t.FailNow in a test's factory does, fails its one
// take or retires its one object, and leaves no take, no keeper and no
// Close waiting for a report that never comes.
func TestFactoryGoexit(t *testing.T) {
	t.Run("Create", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var n atomic.Int32
			p := newPool(t, &factory{create: func(context.Context, int) error {
				if n.Add(1) == 1 {
					runtime.Goexit()
				}
				return nil
			}}, Config{MaxObjects: 1})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := p.Acquire(ctx)
			var pe *PanicError
			if !errors.As(err, &pe) || !pe.Goexit || pe.Func != "Factory.Create" {
				t.Fatalf("Acquire after Create called Goexit = %v, want a *PanicError with Goexit", err)
			}
			release(t, acquire(t, p))
		})
	})
	t.Run("Test", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &factory{test: func(context.Context, *conn) error {
				runtime.Goexit()
				return nil
			}}
			p := newPool(t, f, Config{MaxObjects: 1, ValidationInterval: time.Second})
			release(t, acquire(t, p))
			time.Sleep(2 * time.Second)
			synctest.Wait()
			if s := p.Stats(); s.DestroyedBy.TestFailed != 1 {
				t.Fatalf("after Test called Goexit: %+v, want its object destroyed as failing its test", s)
			}
			release(t, acquire(t, p))
		})
	})
	t.Run("Destroy", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var n atomic.Int32
			f := &factory{destroy: func(*conn) {
				if n.Add(1) == 1 {
					runtime.Goexit()
				}
			}}
			p := newPool(t, f, Config{MaxObjects: 1})
			if err := acquire(t, p).Destroy(); err != nil {
				t.Fatal(err)
			}
			// The slot is freed as after any Destroy: the pool's one place
			// takes a new object.
			release(t, acquire(t, p))
		})
	})
}
