package actor

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestWorkerMoves drives a worker through every move of workerMoves —
// a task that completes, one that fails, one whose handler calls
// runtime.Goexit, a keep-alive that passes, a handler that outlives Close's
// grace — and checks that each move the table lists was made. A move the
// table does not list panics in moveLocked, failing the test.
func TestWorkerMoves(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		a, err := New("moves", func(ctx context.Context, task Task[int]) error {
			switch task.Payload {
			case 2:
				return errors.New("fails")
			case 3:
				runtime.Goexit()
			case 4:
				<-release // ignores its context, past the grace
			}
			return nil
		}, Config[int]{MaxWorkers: 1, KeepAlive: time.Second, Grace: time.Second, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}

		// Complete, fail, Goexit, and then a worker in the Goexit's place
		// to idle past its keep-alive.
		for _, p := range []int{1, 2, 3, 1} {
			a.Send(t.Context(), p)
			synctest.Wait()
		}
		time.Sleep(2 * time.Second) // past the keep-alive
		synctest.Wait()
		a.Send(t.Context(), 4)
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		var de *DrainError
		if err := a.Close(ctx); !errors.As(err, &de) || de.Abandoned != 1 {
			t.Errorf("Close = %v, want a DrainError with one handler abandoned", err)
		}
		close(release)
		synctest.Wait()

		a.mu.Lock()
		defer a.mu.Unlock()
		for from := range workerStates {
			for to := range workerStates {
				listed := workerMoves[from]&(1<<to) != 0
				if n := a.moves[from][to]; listed && n == 0 {
					t.Errorf("no worker moved %v → %v, which the table lists", from, to)
				} else if !listed && n > 0 {
					t.Errorf("a worker moved %v → %v, which the table does not list", from, to)
				}
			}
		}
		if a.inState[workerGone] != a.nextWorker || len(a.workers) != 0 {
			t.Errorf("%d of %d workers gone, %d left", a.inState[workerGone], a.nextWorker, len(a.workers))
		}
	})
}

// TestWorkerMoveNotListedPanics checks that moveLocked refuses a move that
// the table does not list.
func TestWorkerMoveNotListedPanics(t *testing.T) {
	a := &Actor[int]{}
	w := &worker[int]{name: "x/1", state: workerIdle}
	a.inState[workerIdle] = 1
	defer func() {
		v := recover()
		if err, ok := v.(error); !ok || !strings.Contains(err.Error(), "worker x/1 cannot move from idle to failed") {
			t.Errorf("moveLocked(idle → failed) panicked with %v, want a refusal", v)
		}
		if w.state != workerIdle || a.inState[workerIdle] != 1 {
			t.Errorf("a refused move changed the state to %v, counts %v", w.state, a.inState)
		}
	}()
	a.moveLocked(w, workerFailed)
}
