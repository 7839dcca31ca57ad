package actorpool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestFactoryFuncs(t *testing.T) {
	var destroyed []int
	f := FactoryFuncs[int]{
		CreateFunc:  func(context.Context) (int, error) { return 7, nil },
		DestroyFunc: func(v int) { destroyed = append(destroyed, v) },
	}
	if v, err := f.Create(context.Background()); v != 7 || err != nil {
		t.Errorf("Create = %v, %v", v, err)
	}
	if f.Validate(7) != nil || f.Test(context.Background(), 7) != nil {
		t.Error("nil ValidateFunc or TestFunc reported an error")
	}
	f.Destroy(7)
	if len(destroyed) != 1 {
		t.Error("DestroyFunc not called")
	}
	if hasValidate[int](f) || hasTest[int](f) {
		t.Error("a FactoryFuncs without ValidateFunc/TestFunc claims to have them")
	}
	boom := errors.New("boom")
	f.ValidateFunc = func(int) error { return boom }
	f.TestFunc = func(context.Context, int) error { return boom }
	if !errors.Is(f.Validate(1), boom) || !errors.Is(f.Test(context.Background(), 1), boom) {
		t.Error("ValidateFunc/TestFunc not called")
	}
	if !hasValidate[int](&f) || !hasTest[int](&f) {
		t.Error("hasValidate/hasTest missed the funcs")
	}
}

// plainFactory has only what Factory requires; validatingFactory adds a
// Validate, and testingFactory a Test.
type plainFactory struct{ destroyed atomic.Int64 }

func (f *plainFactory) Create(context.Context) (*int, error) { return new(int), nil }
func (f *plainFactory) Destroy(*int)                         { f.destroyed.Add(1) }

type validatingFactory struct {
	plainFactory
	validates atomic.Int64
}

func (f *validatingFactory) Validate(*int) error { f.validates.Add(1); return nil }

type testingFactory struct {
	plainFactory
	tests atomic.Int64
}

func (f *testingFactory) Test(context.Context, *int) error { f.tests.Add(1); return nil }

// Validate and Test are optional abilities, found by interface whatever
// the factory's type: a factory without them is never asked for them, and
// one with them is.
func TestOptionalFactoryAbilities(t *testing.T) {
	cfg := Config{MaxObjects: 2, ValidationInterval: 10 * time.Millisecond, Logger: discardLogger()}
	run := func(t *testing.T, f Factory[*int]) *Pool[*int] {
		t.Helper()
		p := newPoolOf(t, f, cfg)
		l, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		l, err = p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
		// Idle past ValidationInterval: tested, if the factory can be.
		time.Sleep(50 * time.Millisecond)
		return p
	}
	t.Run("neither", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &plainFactory{}
			p := run(t, f)
			if p.validate || p.validator != nil || p.tester != nil {
				t.Errorf("a factory without Validate or Test has validate %v, validator %v, tester %v", p.validate, p.validator, p.tester)
			}
			if n := p.Stats().Tests; n != 0 {
				t.Errorf("%d tests of a factory without Test", n)
			}
		})
	})
	t.Run("Validator", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &validatingFactory{}
			p := run(t, f)
			// The new object, two give-backs and one hand-out of an idle
			// object.
			if n := f.validates.Load(); n != 4 {
				t.Errorf("Validate called %d times, want 4", n)
			}
			if p.tester != nil {
				t.Error("a factory without Test has a tester")
			}
		})
	})
	t.Run("Tester", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := &testingFactory{}
			p := run(t, f)
			if f.tests.Load() == 0 || p.Stats().Tests == 0 {
				t.Error("an idle object of a factory with Test was never tested")
			}
			if p.validate {
				t.Error("a factory without Validate is validated")
			}
		})
	})
}

// newPoolOf is newPool for any factory: a pool closed, and checked for
// goroutines left over, when the test ends.
func newPoolOf[T any](t testing.TB, f Factory[T], cfg Config) *Pool[T] {
	t.Helper()
	p, err := New(f, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}
