package actorpool

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// 8. Close.

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p, err := New[*conn](f, Config{MaxObjects: 3, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		idle, held, other := acquire(t, p), acquire(t, p), acquire(t, p)
		release(t, idle)
		release(t, other)
		// One waiter, on a full pool.
		full := acquire(t, p)
		full2 := acquire(t, p)
		waiter := make(chan error)
		go func() {
			_, err := p.Acquire(context.Background())
			waiter <- err
		}()
		synctest.Wait()

		closed := make(chan error)
		go func() { closed <- p.Close(context.Background()) }()
		if err := <-waiter; !errors.Is(err, ErrClosed) {
			t.Errorf("waiter on Close: %v, want ErrClosed", err)
		}
		synctest.Wait()
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) with objects still lent out", err)
		default:
		}
		if f.live() != 3 {
			t.Errorf("%d objects alive, want the 3 lent out", f.live())
		}
		if _, err := p.Acquire(context.Background()); !errors.Is(err, ErrClosed) {
			t.Errorf("Acquire after Close: %v", err)
		}
		if _, err := p.TryAcquire(); !errors.Is(err, ErrClosed) {
			t.Errorf("TryAcquire after Close: %v", err)
		}
		if err := p.Reload(context.Background()); !errors.Is(err, ErrClosed) {
			t.Errorf("Reload after Close: %v", err)
		}
		release(t, held)
		release(t, full)
		release(t, full2)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		f.checkAllDestroyed(t)
		if s := p.Stats(); s.DestroyedBy.Closed != 3 || s.Total != 0 {
			t.Errorf("stats after Close: %+v", s)
		}
	})
}

func TestCloseIdempotent(t *testing.T) {
	f := &factory{}
	p, err := New[*conn](f, Config{MaxObjects: 4, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	var leases []Lease[*conn]
	for range 4 {
		leases = append(leases, acquire(t, p))
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if err := p.Close(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	for _, l := range leases {
		release(t, l)
	}
	wg.Wait()
	if err := p.Close(context.Background()); err != nil {
		t.Errorf("Close after Close: %v", err)
	}
	f.checkAllDestroyed(t)
	checkNoGoroutines(t)
}

func TestCloseFailsTakeWaitingOnCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{create: func(ctx context.Context, id int) error {
			<-ctx.Done() // a connect that Close cancels
			return ctx.Err()
		}}
		p, err := New[*conn](f, Config{MaxObjects: 1, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		taken := make(chan error)
		go func() {
			_, err := p.Acquire(context.Background())
			taken <- err
		}()
		synctest.Wait()
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := <-taken; !errors.Is(err, ErrClosed) {
			t.Errorf("take waiting on a create: %v, want ErrClosed", err)
		}
	})
}

func TestCloseDestroysObjectCreatedLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		finish := make(chan struct{})
		f := &factory{create: func(ctx context.Context, id int) error {
			<-finish // ignores its context
			return nil
		}}
		p, err := New[*conn](f, Config{MaxObjects: 1, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		go p.Acquire(context.Background())
		synctest.Wait()
		closed := make(chan error)
		go func() { closed <- p.Close(context.Background()) }()
		synctest.Wait()
		close(finish)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		f.checkAllDestroyed(t)
		if f.creates.Load() != 1 {
			t.Errorf("%d creates", f.creates.Load())
		}
	})
}

func TestNothingCreatedAfterClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{create: func(ctx context.Context, id int) error {
			time.Sleep(time.Second)
			return nil
		}}
		p, err := New[*conn](f, Config{MaxObjects: 8, MinIdle: 8, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2500 * time.Millisecond) // two of eight made
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		n := f.creates.Load()
		time.Sleep(time.Hour)
		if f.creates.Load() != n || n > 3 {
			t.Errorf("creates went on after Close: %d, then %d", n, f.creates.Load())
		}
		f.checkAllDestroyed(t)
	})
}

func TestCloseGivesUpAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &factory{}
		p, err := New[*conn](f, Config{MaxObjects: 2, Logger: discardLogger()})
		if err != nil {
			t.Fatal(err)
		}
		l := acquire(t, p)
		release(t, acquire(t, p)) // the other one idle
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		start := time.Now()
		err = p.Close(ctx)
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("Close returned after %v, want its 5s deadline", d)
		}
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "1 objects still out") {
			t.Fatalf("Close = %v, want a deadline error counting 1 object out", err)
		}
		if err2 := p.Close(context.Background()); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("second Close = %v, want the same error", err2)
		}
		// The holder gives it back after Close gave up: it is destroyed
		// then, by the holder, exactly once.
		release(t, l)
		f.checkAllDestroyed(t)
	})
}

func TestCloseReportsLeakedObjectAfterAbandon(t *testing.T) {
	// After Close gives up, releases and leaks are still destroyed once.
	f := &factory{}
	p, err := New[*conn](f, Config{MaxObjects: 2, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	leakOne(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Close(ctx); err == nil {
		t.Fatal("Close with a leaked lease and a canceled context succeeded")
	}
	checkNoGoroutines(t)
	waitFor(t, "the leak to be reclaimed", func() bool {
		runtime.GC()
		return f.destroys.Load() == 1
	})
	f.checkAllDestroyed(t)
}

// 9. Reload.

func TestReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		finish := make(chan struct{})
		f := &factory{create: func(ctx context.Context, id int) error {
			if id == 3 {
				<-finish
			}
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 4})
		idle, held := acquire(t, p), acquire(t, p)
		if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) { // starts create 3
			t.Fatal(err)
		}
		release(t, idle)
		synctest.Wait()

		if err := p.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Reloaded != 1 {
			t.Fatalf("idle object not destroyed at once by Reload: %+v", s.DestroyedBy)
		}
		// A new take gets a new object.
		fresh := acquire(t, p)
		if fresh.Value().id != 4 {
			t.Errorf("take after Reload got conn %d, want a new conn 4", fresh.Value().id)
		}
		// The object in use is destroyed when it comes back.
		release(t, held)
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Reloaded != 2 {
			t.Errorf("object in use kept after Reload: %+v", s.DestroyedBy)
		}
		// The create in flight is destroyed when it comes back.
		close(finish)
		synctest.Wait()
		if s := p.Stats(); s.DestroyedBy.Reloaded != 3 || s.Total != 1 {
			t.Errorf("create in flight at Reload kept: %+v", s)
		}
		release(t, fresh)
	})
}

func TestReloadServesWaiterOfStaleCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		finish := make(chan struct{})
		f := &factory{create: func(ctx context.Context, id int) error {
			if id == 1 {
				<-finish
			}
			return nil
		}}
		p := newPool(t, f, Config{MaxObjects: 1})
		got := make(chan Lease[*conn])
		go func() { got <- acquire(t, p) }() // waits on create 1
		synctest.Wait()
		if err := p.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		close(finish)
		l := <-got
		if l.Value().id != 2 {
			t.Errorf("waiter got conn %d, made before Reload; want conn 2", l.Value().id)
		}
		release(t, l)
	})
}
