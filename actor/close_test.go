package actor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestCloseDrains shows Close running every queued task before it returns.
func TestCloseDrains(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var ran record[int]
		a := newActor(t, "drain", func(ctx context.Context, task Task[int]) error {
			time.Sleep(time.Second)
			ran.add(task.Payload)
			return nil
		}, Config[int]{Workers: 2})
		for i := range 10 {
			a.Send(t.Context(), i)
		}
		start := time.Now()
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 5*time.Second {
			t.Errorf("Close took %v, want 5s: ten 1s tasks on two workers", took)
		}
		if got := ran.get(); len(got) != 10 {
			t.Errorf("ran %v, want all ten", got)
		}
		s := a.Stats()
		if s.Completed != 10 || s.Workers != 0 || s.Queued+s.Running+s.Busy+s.Idle != 0 {
			t.Errorf("Stats after Close %+v", s)
		}
	})
}

// TestCloseDeadline checks that Close, when its context ends, cancels the
// running tasks, waits at most the grace, dead-letters what is left and says
// how many were queued and in flight — and so returns no later than the
// deadline plus the grace.
func TestCloseDeadline(t *testing.T) {
	noLeaks(t)
	const deadline, grace = 5 * time.Second, 3 * time.Second
	tests := []struct {
		name      string
		handler   func(ctx context.Context) error
		took      time.Duration
		completed int
		inFlight  int
		abandoned int
	}{
		{
			name:     "handlers return when cancelled",
			handler:  func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
			took:     deadline,
			inFlight: 2,
		},
		{
			name:      "handlers ignore their context",
			handler:   func(ctx context.Context) error { time.Sleep(time.Hour); return nil },
			took:      deadline + grace,
			inFlight:  2,
			abandoned: 2,
		},
		{
			name: "handlers finish within the grace",
			handler: func(ctx context.Context) error {
				<-ctx.Done()
				time.Sleep(grace / 2) // cleaning up
				return nil
			},
			took:      deadline + grace/2,
			completed: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sink := NewRingSink[int](10)
				a := newActor(t, "deadline", func(ctx context.Context, task Task[int]) error {
					return tt.handler(ctx)
				}, Config[int]{Workers: 2, Grace: grace, DeadLetters: sink, OnError: func(*TaskError) {}})
				for i := range 5 {
					a.Send(t.Context(), i)
				}
				start := time.Now()
				ctx, cancel := context.WithTimeout(t.Context(), deadline)
				defer cancel()
				err := a.Close(ctx)
				if took := time.Since(start); took != tt.took {
					t.Errorf("Close took %v, want %v", took, tt.took)
				}
				var de *DrainError
				if !errors.As(err, &de) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Close = %v, want a *DrainError wrapping DeadlineExceeded", err)
				}
				want := DrainError{Actor: "deadline", Reason: ReasonDrainDeadline, Queued: 3, InFlight: tt.inFlight, Abandoned: tt.abandoned, Err: context.DeadlineExceeded}
				if *de != want {
					t.Errorf("Close = %+v, want %+v", *de, want)
				}
				ls := letters(t, sink)
				if len(ls) != 3+tt.inFlight {
					t.Fatalf("%d letters, want %d", len(ls), 3+tt.inFlight)
				}
				for _, l := range ls {
					if l.Reason != ReasonDrainDeadline {
						t.Errorf("letter %+v, want reason drain deadline", l)
					}
					queued := l.Task.Payload >= 2
					if queued && (l.Attempts != 0 || l.Err != nil) {
						t.Errorf("letter of a queued task %+v: want 0 attempts, no error", l)
					}
					if !queued && (l.Attempts != 1 || errors.Is(l.Err, ErrAbandoned) != (tt.abandoned > 0)) {
						t.Errorf("letter of a running task %+v: want 1 attempt, abandoned %v", l, tt.abandoned > 0)
					}
				}
				s := a.Stats()
				if s.Completed != uint64(tt.completed) || s.Running != 0 || s.Queued != 0 || s.Busy != tt.abandoned {
					t.Errorf("Stats %+v", s)
				}
				conserved(t, s)
				if s.Submitted != s.Completed+s.DeadLettered+s.Rejected {
					t.Errorf("after Close, Submitted %d != Completed + DeadLettered + Rejected", s.Submitted)
				}
				// Let abandoned handlers end: the bubble's clock stops with
				// this function.
				time.Sleep(time.Hour)
				synctest.Wait()
				if s := a.Stats(); s.Workers != 0 || s.Completed != uint64(tt.completed) {
					t.Errorf("after the abandoned handlers returned: %+v", s)
				}
			})
		})
	}
}

// TestCloseIgnoresLateOutcome shows that a handler returning after its task
// was abandoned does not complete the task a second time.
func TestCloseIgnoresLateOutcome(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		for _, outcome := range []error{nil, errors.New("late failure")} {
			sink := NewRingSink[int](10)
			var failures record[*TaskError]
			var logs bytes.Buffer
			a := newActor(t, "late", func(ctx context.Context, task Task[int]) error {
				time.Sleep(time.Hour)
				return outcome
			}, Config[int]{Grace: time.Second, DeadLetters: sink, OnError: failures.add, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			a.Send(t.Context(), 1)
			synctest.Wait()
			a.Stop()
			time.Sleep(2 * time.Hour)
			synctest.Wait()
			s := a.Stats()
			if s.Completed != 0 || s.Failed != 0 || s.DeadLettered != 1 || s.Workers != 0 || s.Busy != 0 || sink.Len() != 1 || len(failures.get()) != 0 {
				t.Errorf("outcome %v after abandonment: %+v, %d letters, failures %v", outcome, s, sink.Len(), failures.get())
			}
			want := "outcome=completed"
			if outcome != nil {
				want = "outcome=failed"
			}
			if !strings.Contains(logs.String(), "abandoned handler returned") || !strings.Contains(logs.String(), want) {
				t.Errorf("the late outcome is not logged with %s:\n%s", want, logs.String())
			}
		}
	})
}

// TestStop shows Stop cancelling running tasks with ErrClosed as the cause
// and dead-lettering the queued ones with ReasonClosed, at once.
func TestStop(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		sink := NewRingSink[int](10)
		var causes record[error]
		a := newActor(t, "stop", func(ctx context.Context, task Task[int]) error {
			<-ctx.Done()
			causes.add(context.Cause(ctx))
			return ctx.Err()
		}, Config[int]{DeadLetters: sink, OnError: func(*TaskError) {}})
		for i := range 4 {
			a.Send(t.Context(), i)
		}
		synctest.Wait()
		start := time.Now()
		err := a.Stop()
		if took := time.Since(start); took != 0 {
			t.Errorf("Stop took %v, want no time", took)
		}
		var de *DrainError
		if !errors.As(err, &de) || de.Reason != ReasonClosed || de.Queued != 3 || de.InFlight != 1 || !errors.Is(err, ErrClosed) {
			t.Fatalf("Stop = %v, want a DrainError for 3 queued and 1 in flight", err)
		}
		if got := causes.get(); len(got) != 1 || !errors.Is(got[0], ErrClosed) {
			t.Errorf("the running task's context ended with cause %v, want ErrClosed", got)
		}
		ls := letters(t, sink)
		var ps []int
		for _, l := range ls {
			ps = append(ps, l.Task.Payload)
			if l.Reason != ReasonClosed {
				t.Errorf("letter %+v, want reason closed", l)
			}
		}
		slices.Sort(ps)
		if !slices.Equal(ps, []int{0, 1, 2, 3}) {
			t.Errorf("dead-lettered %v, want all four", ps)
		}
		if err2 := a.Stop(); err2 != err {
			t.Errorf("second Stop = %v, want the first's result", err2)
		}
	})
}

// TestStopIdleActor checks that stopping an actor with nothing to do is not
// an error.
func TestStopIdleActor(t *testing.T) {
	noLeaks(t)
	a := newActor(t, "idle", func(ctx context.Context, task Task[int]) error { return nil }, Config[int]{Workers: 4})
	a.Send(t.Context(), 1)
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := a.Stop(); err != nil {
		t.Errorf("Stop after a clean Close = %v, want nil", err)
	}
}

// TestCloseConcurrently calls Close and Stop from many goroutines at once:
// none panics or blocks, all return the same result, and the shortest
// deadline governs.
func TestCloseConcurrently(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		a := newActor(t, "many-closers", func(ctx context.Context, task Task[int]) error {
			<-ctx.Done()
			return ctx.Err()
		}, Config[int]{Workers: 3, DeadLetters: NewRingSink[int](100), OnError: func(*TaskError) {}})
		for i := range 10 {
			a.Send(t.Context(), i)
		}
		start := time.Now()
		var wg sync.WaitGroup
		errs := make([]error, 64)
		took := make([]time.Duration, 64)
		for i := range errs {
			wg.Go(func() {
				switch {
				case i == 63:
					ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
					defer cancel()
					errs[i] = a.Close(ctx)
				case i%2 == 0:
					errs[i] = a.Close(t.Context()) // no deadline of its own
				default:
					ctx, cancel := context.WithTimeout(t.Context(), time.Duration(i)*time.Hour)
					defer cancel()
					errs[i] = a.Close(ctx)
				}
				took[i] = time.Since(start)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != errs[0] {
				t.Errorf("Close %d = %v, Close 0 = %v: want the same", i, err, errs[0])
			}
			if took[i] != time.Minute {
				t.Errorf("Close %d returned after %v, want 1m: the shortest deadline", i, took[i])
			}
		}
		var de *DrainError
		if !errors.As(errs[0], &de) || de.Queued != 7 || de.InFlight != 3 {
			t.Errorf("Close = %v, want 7 queued and 3 in flight", errs[0])
		}
		if err := a.Close(t.Context()); err != errs[0] {
			t.Errorf("a later Close = %v, want %v", err, errs[0])
		}
	})
}

// TestStopHastensClose shows Stop cutting short a Close that is draining.
func TestStopHastensClose(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		a := newActor(t, "hasten", func(ctx context.Context, task Task[int]) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Hour):
				return nil
			}
		}, Config[int]{DeadLetters: NewRingSink[int](10), OnError: func(*TaskError) {}})
		a.Send(t.Context(), 1)
		a.Send(t.Context(), 2)
		start := time.Now()
		closed := make(chan error)
		go func() { closed <- a.Close(context.Background()) }()
		time.Sleep(time.Minute)
		stopErr := a.Stop()
		closeErr := <-closed
		if took := time.Since(start); took != time.Minute {
			t.Errorf("Close returned after %v, want 1m, when Stop was called", took)
		}
		var de *DrainError
		if !errors.As(closeErr, &de) || de.Reason != ReasonClosed || stopErr != closeErr {
			t.Errorf("Close = %v, Stop = %v; want the same DrainError with reason closed", closeErr, stopErr)
		}
	})
}

// TestCloseWaitsForRetries shows the drain including tasks waiting for a
// retry, and idle workers leaving once the last retry is done.
func TestCloseWaitsForRetries(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var ran record[string]
		a := newActor(t, "retry-drain", func(ctx context.Context, task Task[int]) error {
			ran.add(fmt.Sprintf("%d#%d", task.Payload, task.Attempt))
			if task.Attempt < 3 {
				return errors.New("again")
			}
			return nil
		}, Config[int]{Workers: 4, MaxAttempts: 3, Backoff: Backoff{Initial: time.Minute, Max: time.Hour}, OnError: func(*TaskError) {}})
		a.Send(t.Context(), 1)
		synctest.Wait()
		start := time.Now()
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took != 3*time.Minute {
			t.Errorf("Close took %v, want 3m: the two backoffs", took)
		}
		if got := ran.get(); !slices.Equal(got, []string{"1#1", "1#2", "1#3"}) {
			t.Errorf("ran %v", got)
		}
	})
}

// TestCloseDeadLettersWaitingRetries checks the attempts and last error a
// waiting retry's letter carries.
func TestCloseDeadLettersWaitingRetries(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		sink := NewRingSink[int](10)
		cause := errors.New("connection refused")
		a := newActor(t, "retry-stop", func(ctx context.Context, task Task[int]) error {
			return cause
		}, Config[int]{MaxAttempts: 5, Backoff: Backoff{Initial: time.Hour}, DeadLetters: sink, OnError: func(*TaskError) {}})
		a.Send(t.Context(), 1)
		time.Sleep(90 * time.Minute) // the second attempt has failed too
		err := a.Stop()
		var de *DrainError
		if !errors.As(err, &de) || de.Queued != 1 || de.InFlight != 0 {
			t.Fatalf("Stop = %v, want 1 queued", err)
		}
		ls := letters(t, sink)
		if len(ls) != 1 || ls[0].Attempts != 2 || ls[0].Task.Attempt != 2 || !errors.Is(ls[0].Err, cause) || ls[0].Reason != ReasonClosed {
			t.Errorf("letters %+v: want one after 2 attempts with the last error", ls)
		}
	})
}

// TestCloseEmpty closes actors with nothing to do, including one with no
// worker at all.
func TestCloseEmpty(t *testing.T) {
	noLeaks(t)
	for _, cfg := range []Config[int]{{}, {Workers: 8}, {MaxWorkers: 4}} {
		a := newActor(t, "empty", func(ctx context.Context, task Task[int]) error { return nil }, cfg)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		if err := a.Close(ctx); err != nil {
			t.Errorf("Close of an idle actor = %v", err)
		}
		cancel()
	}
}
