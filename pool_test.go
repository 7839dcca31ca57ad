package actorpool

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// 1. Capacity.

func TestNeverMoreThanMaxObjects(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{create: func(ctx context.Context, id int) error {
			time.Sleep(10 * time.Millisecond)
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 4})
		var wg sync.WaitGroup
		for range 64 {
			wg.Go(func() {
				for range 20 {
					l := acquire(t, p)
					l.Value().hold(t)
					time.Sleep(time.Millisecond)
					l.Value().unhold()
					release(t, l)
				}
			})
		}
		wg.Wait()
		if m := f.max(); m > 4 {
			t.Errorf("%d objects alive or being created at once, want at most 4", m)
		}
		if n := f.creates.Load(); n != 4 {
			t.Errorf("%d creates, want 4: objects are reused, not remade", n)
		}
	})
}

func TestAcquireAsync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, &factory{}, Config{MaxObjects: 1})
		first := <-p.AcquireAsync(context.Background())
		if first.Err != nil {
			t.Fatal(first.Err)
		}
		ch := p.AcquireAsync(context.Background())
		synctest.Wait()
		select {
		case r := <-ch:
			t.Fatalf("async take completed while the only object was out: %+v", r)
		default:
		}
		release(t, first.Lease)
		r := <-ch
		if r.Err != nil || r.Lease.Value() == nil {
			t.Fatalf("async take: %+v", r)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		timedOut := <-p.AcquireAsync(ctx)
		if !errors.Is(timedOut.Err, ErrTimeout) {
			t.Errorf("async take past its deadline: %v", timedOut.Err)
		}
		release(t, r.Lease)
	})
}

func TestAcquireAsyncDeliversErrClosed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p, err := New[*conn](f, Config{MaxObjects: 1, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		held := acquire(t, p)
		ch := p.AcquireAsync(context.Background())
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- p.Close(context.Background()) }()
		if r := <-ch; !errors.Is(r.Err, ErrClosed) {
			t.Errorf("pending async take on Close: %v, want ErrClosed", r.Err)
		}
		if r := <-p.AcquireAsync(context.Background()); !errors.Is(r.Err, ErrClosed) {
			t.Errorf("async take after Close: %v, want ErrClosed", r.Err)
		}
		release(t, held)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		f.checkAllDestroyed(t)
	})
}

func TestNewRejectsMissingFactory(t *testing.T) {
	if _, err := New[int](nil, Config{MaxObjects: 1}); err == nil {
		t.Error("New(nil factory) succeeded")
	}
	_, err := New(FactoryFuncs[int]{}, Config{MaxObjects: 1})
	if err == nil || !strings.Contains(err.Error(), "CreateFunc") {
		t.Errorf("New(FactoryFuncs without CreateFunc) = %v, want an error naming CreateFunc", err)
	}
}

// AcquireIdle takes what is idle and nothing else: it never creates, and
// never waits.
func TestAcquireIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p := newPool(t, f, Config{MaxObjects: 3})
		if _, ok := p.AcquireIdle(); ok {
			t.Fatal("AcquireIdle on an empty pool took something")
		}
		synctest.Wait()
		if n := f.creates.Load(); n != 0 {
			t.Fatalf("AcquireIdle asked for %d creates, want none", n)
		}
		a, b := acquire(t, p), acquire(t, p)
		release(t, a)
		release(t, b)
		var got []Lease[*conn]
		for {
			l, ok := p.AcquireIdle()
			if !ok {
				break
			}
			got = append(got, l)
		}
		synctest.Wait()
		if len(got) != 2 || f.creates.Load() != 2 {
			t.Fatalf("AcquireIdle took %d of 2 idle objects, with %d creates; want 2 and 2", len(got), f.creates.Load())
		}
		for _, l := range got {
			release(t, l)
		}
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, ok := p.AcquireIdle(); ok {
			t.Error("AcquireIdle took an object from a closed pool")
		}
	})
}
