package actor

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// TestGaugesReturnToZero sends a burst of tasks that fail, panic, exit, time
// out and retry, then checks that once they have ended every gauge is back
// to zero, every worker is idle, and the actor takes new work.
func TestGaugesReturnToZero(t *testing.T) {
	noLeaks(t)
	for _, cfg := range []Config[int]{
		{Workers: 4, Capacity: 16},
		{MinWorkers: 1, MaxWorkers: 8, KeepAlive: time.Hour},
		{Workers: 2, Capacity: 8, Overflow: OverflowDropOldest},
	} {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg.MaxAttempts = 3
				cfg.Timeout = time.Second
				cfg.DeadLetters = NewRingSink[int](1000)
				cfg.OnError = func(*TaskError) {}
				a := newActor(t, "burst", func(ctx context.Context, task Task[int]) error {
					switch task.Payload % 6 {
					case 0:
						return nil
					case 1:
						return errors.New("fails")
					case 2:
						panic("panics")
					case 3:
						if task.Attempt == 1 {
							runtime.Goexit()
						}
						return nil
					case 4:
						<-ctx.Done() // times out
						return ctx.Err()
					}
					return Permanent(errors.New("no"))
				}, cfg)
				for i := range 300 {
					if err := a.Send(t.Context(), i); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(time.Hour) // past every timeout and backoff
				synctest.Wait()
				s := a.Stats()
				if s.Queued != 0 || s.Retrying != 0 || s.Running != 0 || s.Blocked != 0 || s.Busy != 0 || s.Idle != s.Workers || s.OldestQueued != 0 {
					t.Fatalf("after the burst: %+v", s)
				}
				if s.Completed+s.DeadLettered != 300 || s.Failed == 0 || s.Panicked == 0 || s.Retried == 0 {
					t.Fatalf("after the burst: %+v", s)
				}
				conserved(t, s)
				if err := a.Ask(t.Context(), 6); err != nil {
					t.Fatalf("Ask after the burst = %v", err)
				}
			})
		})
	}
}

func TestOldestQueued(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		a := newActor(t, "ages", func(ctx context.Context, task Task[int]) error {
			<-release
			return nil
		}, Config[int]{})
		a.Send(t.Context(), 0) // taken by the worker at once
		synctest.Wait()
		if age := a.Stats().OldestQueued; age != 0 {
			t.Errorf("OldestQueued = %v with nothing queued", age)
		}
		a.Send(t.Context(), 1)
		time.Sleep(3 * time.Second)
		a.Send(t.Context(), 2)
		time.Sleep(time.Second)
		if age := a.Stats().OldestQueued; age != 4*time.Second {
			t.Errorf("OldestQueued = %v, want 4s", age)
		}
		release <- struct{}{} // task 0 ends; the worker takes 1
		synctest.Wait()
		if age := a.Stats().OldestQueued; age != time.Second {
			t.Errorf("OldestQueued = %v, want 1s", age)
		}
		close(release)
	})
}
