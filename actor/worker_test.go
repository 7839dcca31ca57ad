package actor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestElasticWorkers follows an elastic actor through a burst: it grows only
// while tasks wait and every worker is busy, never past MaxWorkers, and
// shrinks back to MinWorkers, and no further, once workers have idled for
// the keep-alive.
func TestElasticWorkers(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		const keepAlive = 10 * time.Second
		release := make(chan struct{})
		a := newActor(t, "elastic", func(ctx context.Context, task Task[int]) error {
			<-release
			return nil
		}, Config[int]{MinWorkers: 1, MaxWorkers: 3, KeepAlive: keepAlive})
		check := func(when string, workers, busy, idle, queued int) {
			t.Helper()
			synctest.Wait()
			s := a.Stats()
			if s.Workers != workers || s.Busy != busy || s.Idle != idle || s.Queued != queued {
				t.Fatalf("%s: %d workers, %d busy, %d idle, %d queued; want %d, %d, %d, %d",
					when, s.Workers, s.Busy, s.Idle, s.Queued, workers, busy, idle, queued)
			}
		}
		check("at start", 1, 0, 1, 0)
		for i := range 3 {
			a.Send(t.Context(), i)
			check(fmt.Sprintf("after task %d", i), i+1, i+1, 0, 0)
		}
		a.Send(t.Context(), 3)
		check("at MaxWorkers", 3, 3, 0, 1)

		close(release)
		check("after the burst", 3, 0, 3, 0)
		time.Sleep(keepAlive - time.Nanosecond)
		check("just before the keep-alive", 3, 0, 3, 0)
		time.Sleep(time.Nanosecond)
		check("at the keep-alive", 1, 0, 1, 0)
		time.Sleep(10 * keepAlive)
		check("long after", 1, 0, 1, 0)

		// An idle worker takes a new task: no growth.
		a.Send(t.Context(), 4)
		check("one task, one idle worker", 1, 0, 1, 0)
		if s := a.Stats(); s.Completed != 5 {
			t.Errorf("completed %d tasks, want 5", s.Completed)
		}
	})
}

// TestElasticFromZero shows an actor with MinWorkers 0 starting a worker for
// a task and ending it after the keep-alive.
func TestElasticFromZero(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var ran record[int]
		a := newActor(t, "scale-to-zero", func(_ context.Context, task Task[int]) error {
			ran.add(task.Payload)
			return nil
		}, Config[int]{MaxWorkers: 2, KeepAlive: time.Second})
		synctest.Wait()
		if s := a.Stats(); s.Workers != 0 {
			t.Fatalf("%d workers at start, want 0", s.Workers)
		}
		a.Send(t.Context(), 1)
		synctest.Wait()
		if s := a.Stats(); s.Workers != 1 || s.Completed != 1 {
			t.Fatalf("after a task: %+v, want 1 worker and 1 completed", s)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if s := a.Stats(); s.Workers != 0 {
			t.Fatalf("after the keep-alive: %d workers, want 0", s.Workers)
		}
		a.Send(t.Context(), 2)
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := ran.get(); !slices.Equal(got, []int{1, 2}) {
			t.Errorf("handled %v, want [1 2]", got)
		}
	})
}

// TestWorkerNames checks that workers are named "<actor>/<n>" in errors,
// in profiler labels and in the default logs.
func TestWorkerNames(t *testing.T) {
	noLeaks(t)
	inside := make(chan struct{})
	release := make(chan struct{})
	var logs bytes.Buffer
	a := newActor(t, "named", func(ctx context.Context, task Task[int]) error {
		if task.Payload == 0 {
			inside <- struct{}{}
			<-release
			return nil
		}
		return errors.New("boom")
	}, Config[int]{Workers: 2, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})

	a.Send(t.Context(), 0)
	<-inside
	// Both workers have started: one in the handler, the other parked.
	waitFor(t, func() bool { return a.Stats().Idle == 1 })
	var prof bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&prof, 1); err != nil {
		t.Fatal(err)
	}
	close(release)
	for _, want := range []string{`"actor":"named"`, `"worker":"named/1"`, `"worker":"named/2"`} {
		if !strings.Contains(prof.String(), want) {
			t.Errorf("the goroutine profile has no label %s", want)
		}
	}

	a.Send(t.Context(), 1)
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	var entry map[string]any // the first line: the failure
	if err := json.NewDecoder(&logs).Decode(&entry); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	if w, _ := entry["worker"].(string); !strings.HasPrefix(w, "named/") || entry["actor"] != "named" {
		t.Errorf("log entry %v: want attributes actor=named and worker=named/<n>", entry)
	}
}

// TestPanicIsRecovered shows a handler's panic failing one attempt, with its
// stack, while the worker survives to run the next task.
func TestPanicIsRecovered(t *testing.T) {
	noLeaks(t)
	var failures record[*TaskError]
	sink := NewRingSink[int](10)
	a := newActor(t, "panicky", func(ctx context.Context, task Task[int]) error {
		if task.Payload == 1 {
			var m map[string]int
			m["nil map"]++ // a real bug, not a deliberate panic(value)
		}
		return nil
	}, Config[int]{DeadLetters: sink, OnError: failures.add})
	for i := range 3 {
		a.Send(t.Context(), i)
	}
	waitFor(t, func() bool { return a.Stats().Completed+a.Stats().DeadLettered == 3 })
	s := a.Stats()
	if s.Completed != 2 || s.Panicked != 1 || s.Failed != 1 || s.Workers != 1 {
		t.Errorf("Stats %+v: want 2 completed, 1 panicked, 1 worker", s)
	}
	fs := failures.get()
	if len(fs) != 1 {
		t.Fatalf("%d failures reported, want 1", len(fs))
	}
	var pe *PanicError
	if !errors.As(fs[0], &pe) || pe.Goexit || !strings.Contains(string(pe.Stack), "TestPanicIsRecovered") {
		t.Fatalf("failure %v: want a *PanicError whose stack shows the handler", fs[0])
	}
	var re runtime.Error
	if !errors.As(fs[0], &re) {
		t.Errorf("failure %v does not unwrap to the runtime.Error it panicked with", fs[0])
	}
	if fs[0].ID != 2 || fs[0].Attempt != 1 || fs[0].Worker != "panicky/1" || !fs[0].Final {
		t.Errorf("failure %+v: want task 2, attempt 1, worker panicky/1, final", fs[0])
	}
	if ls := letters(t, sink); len(ls) != 1 || ls[0].Reason != ReasonMaxAttempts || !errors.As(ls[0].Err, &pe) {
		t.Errorf("letters %+v: want task 1 with its panic", ls)
	}
}

// waitFor waits until cond holds, polling for at most 10s: for the
// tests that run on the real clock, outside a synctest bubble.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestGoexitReplacesWorker shows a handler that calls runtime.Goexit failing
// its attempt — which is retried — and its worker replaced by a new one.
func TestGoexitReplacesWorker(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var failures record[*TaskError]
		var ran record[string]
		a := newActor(t, "goexit", func(ctx context.Context, task Task[int]) error {
			if task.Payload == 1 && task.Attempt == 1 {
				runtime.Goexit()
			}
			ran.add(fmt.Sprintf("%d#%d", task.Payload, task.Attempt))
			return nil
		}, Config[int]{Workers: 2, MaxAttempts: 2, OnError: failures.add})
		a.Send(t.Context(), 1)
		time.Sleep(time.Minute) // past any backoff
		synctest.Wait()
		s := a.Stats()
		if s.Workers != 2 || s.Completed != 1 || s.Panicked != 1 || s.Retried != 1 {
			t.Errorf("Stats %+v: want 2 workers, the task completed on its retry", s)
		}
		fs := failures.get()
		var pe *PanicError
		if len(fs) != 1 || !errors.As(fs[0], &pe) || !pe.Goexit || fs[0].Final {
			t.Fatalf("failures %v: want one non-final Goexit", fs)
		}
		if !strings.Contains(string(pe.Stack), "runtime.Goexit") {
			t.Errorf("the Goexit's stack does not show runtime.Goexit:\n%s", pe.Stack)
		}
		if got := ran.get(); !slices.Equal(got, []string{"1#2"}) {
			t.Errorf("ran %v, want [1#2]", got)
		}
		// The replacement is a new worker with a new name.
		a.Send(t.Context(), 2)
		synctest.Wait()
		a.mu.Lock()
		var names []string
		for w := range a.workers {
			names = append(names, w.name)
		}
		a.mu.Unlock()
		slices.Sort(names)
		if !slices.Equal(names, []string{"goexit/2", "goexit/3"}) && !slices.Equal(names, []string{"goexit/1", "goexit/3"}) {
			t.Errorf("workers %v: want the survivor and goexit/3", names)
		}
	})
}

// TestErrorHandlerGetsIdentity checks what the error handler receives.
func TestErrorHandlerGetsIdentity(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var failures record[*TaskError]
		cause := errors.New("smtp: 451 try again later")
		a := newActor(t, "mailer", func(ctx context.Context, task Task[string]) error {
			return cause
		}, Config[string]{MaxAttempts: 3, OnError: failures.add, DeadLetters: NewRingSink[string](1)})
		a.Send(t.Context(), "hello@example.com", WithType("welcome mail"))
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		fs := failures.get()
		if len(fs) != 3 {
			t.Fatalf("%d failures reported, want 3", len(fs))
		}
		for i, f := range fs {
			want := TaskError{Actor: "mailer", Worker: "mailer/1", ID: 1, Type: "welcome mail", Attempt: i + 1, Final: i == 2, Err: cause}
			if *f != want {
				t.Errorf("failure %d = %+v, want %+v", i, *f, want)
			}
		}
		if want := `actor "mailer": task 1 (welcome mail) attempt 3 on mailer/1: smtp: 451 try again later`; fs[2].Error() != want {
			t.Errorf("Error() = %q, want %q", fs[2].Error(), want)
		}
	})
}

// TestDefaultErrorHandlerLogs checks the default error handler: a warning
// for a failure that will be retried, an error for the last, with the task's
// identity and, for a panic, the stack.
func TestDefaultErrorHandlerLogs(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		a := newActor(t, "logged", func(ctx context.Context, task Task[int]) error {
			panic("bad row")
		}, Config[int]{MaxAttempts: 2, Logger: slog.New(slog.NewJSONHandler(&logs, nil)), DeadLetters: NewRingSink[int](1)})
		a.Send(t.Context(), 7, WithType("audit"))
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(&logs)
		for i, level := range []string{"WARN", "ERROR"} {
			var e map[string]any
			if err := dec.Decode(&e); err != nil {
				t.Fatalf("log line %d: %v", i, err)
			}
			if e["level"] != level || e["actor"] != "logged" || e["worker"] != "logged/1" || e["task_id"] != 1.0 ||
				e["task_type"] != "audit" || e["attempt"] != float64(i+1) || e["error"] != "handler panicked: bad row" ||
				!strings.Contains(fmt.Sprint(e["stack"]), "TestDefaultErrorHandlerLogs") {
				t.Errorf("log line %d = %v", i, e)
			}
		}
	})
}

// TestFailingCallbacks checks that an error handler or a sink that panics,
// and a sink that fails, cost neither a worker nor a letter: the letter goes
// to the log.
func TestFailingCallbacks(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		a := newActor(t, "fragile", func(ctx context.Context, task Task[int]) error {
			return Permanent(errors.New("no"))
		}, Config[int]{
			Logger:      slog.New(slog.NewTextHandler(&logs, nil)),
			OnError:     func(*TaskError) { panic("error handler bug") },
			DeadLetters: sinkFunc[int](func(l DeadLetter[int]) error { panic("sink bug") }),
		})
		a.Send(t.Context(), 1)
		a.Send(t.Context(), 2)
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if s := a.Stats(); s.DeadLettered != 2 {
			t.Errorf("Stats %+v, want 2 dead-lettered", s)
		}
		out := logs.String()
		if strings.Count(out, "error handler panicked") != 2 || strings.Count(out, "dead-letter sink failed") != 2 || !strings.Contains(out, "payload=2") {
			t.Errorf("logs do not report both callbacks' failures with the payload:\n%s", out)
		}
	})
}

type sinkFunc[T any] func(DeadLetter[T]) error

func (f sinkFunc[T]) Put(l DeadLetter[T]) error { return f(l) }

// TestGrowthCountsStartingWorkers checks the growth rule on the actor's
// state: a task waiting while a started worker is on its way to take it does
// not start another.
func TestGrowthCountsStartingWorkers(t *testing.T) {
	noLeaks(t)
	a := newActor(t, "starting", func(context.Context, Task[int]) error { return nil }, Config[int]{MaxWorkers: 8})
	a.mu.Lock()
	for i := range 3 {
		a.box.push(&envelope[int]{id: uint64(i + 1)})
		a.growLocked()
	}
	a.growLocked() // three tasks, three workers starting: no fourth
	workers := len(a.workers)
	a.mu.Unlock()
	if workers != 3 {
		t.Errorf("%d workers started for 3 tasks, want 3", workers)
	}
	if err := a.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.Completed != 3 {
		t.Errorf("completed %d of the 3 tasks", s.Completed)
	}
}

// TestElasticGrowsForBlockedSends shows an elastic actor with a bounded
// mailbox growing while every worker is busy and tasks wait, when those
// tasks came in from sends that had waited for room: a worker that takes a
// task makes room for the oldest such send, whose task then waits as one
// sent into room would.
func TestElasticGrowsForBlockedSends(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		a := newActor(t, "elastic-bounded", func(ctx context.Context, task Task[int]) error {
			<-release
			return nil
		}, Config[int]{MinWorkers: 1, MaxWorkers: 4, Capacity: 1})
		// Sent at once: all but the first two wait for room before the
		// second worker has started.
		for i := range 6 {
			go a.Send(t.Context(), i)
		}
		synctest.Wait()
		// Four tasks run, one waits in the mailbox, one send waits for room.
		s := a.Stats()
		if s.Workers != 4 || s.Running != 4 || s.Queued != 1 || s.Blocked != 1 {
			t.Errorf("six tasks sent into a mailbox of one: %d workers, %d running, %d queued, %d blocked; want 4, 4, 1, 1",
				s.Workers, s.Running, s.Queued, s.Blocked)
		}
		close(release)
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// nilCauseError is an error type whose methods read its fields, as most
// do: a nil *nilCauseError returned as an error panics when unwrapped.
type nilCauseError struct{ cause error }

func (e *nilCauseError) Error() string { return "failed: " + e.cause.Error() }
func (e *nilCauseError) Unwrap() error { return e.cause }

// TestNilErrorPointerFailsAttempt shows a handler that returns a nil
// pointer as its error — the classic typed nil, whose Unwrap panics —
// failing that attempt with a *PanicError, not taking down the process
// when the actor asks the error whether it is permanent.
func TestNilErrorPointerFailsAttempt(t *testing.T) {
	noLeaks(t)
	var failures record[*TaskError]
	a := newActor(t, "typed-nil", func(ctx context.Context, task Task[int]) error {
		if task.Payload == 1 {
			var err *nilCauseError
			return err
		}
		return nil
	}, Config[int]{OnError: failures.add})
	err := a.Ask(t.Context(), 1)
	var te *TaskError
	var pe *PanicError
	if !errors.As(err, &te) || !te.Final || !errors.As(te.Err, &pe) {
		t.Fatalf("Ask = %v, want a final *TaskError holding the *PanicError of the error's Unwrap", err)
	}
	if err := a.Ask(t.Context(), 2); err != nil {
		t.Fatalf("the next task: %v", err)
	}
	if s := a.Stats(); s.Failed != 1 || s.Completed != 1 || s.DeadLettered != 1 || s.Workers != 1 {
		t.Errorf("Stats %+v: want 1 failed and dead-lettered, 1 completed, 1 worker", s)
	}
	if fs := failures.get(); len(fs) != 1 || fs[0].ID != 1 {
		t.Errorf("failures %v, want task 1's", fs)
	}
}

// TestPanickingErrorHandlerKeepsFailure: when Config.OnError panics, the
// failure it was given — a retried attempt, which no dead letter records —
// is still logged with the task's identity, beside the handler's panic.
func TestPanickingErrorHandlerKeepsFailure(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		a := newActor(t, "fragile", func(ctx context.Context, task Task[int]) error {
			if task.Attempt == 1 {
				return errors.New("flaky network")
			}
			return nil
		}, Config[int]{
			Logger:      slog.New(slog.NewTextHandler(&logs, nil)),
			MaxAttempts: 2,
			OnError:     func(*TaskError) { panic("error handler bug") },
		})
		a.Send(t.Context(), 7, WithType("sync"))
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		out := logs.String()
		for _, want := range []string{"error handler panicked", "error handler bug", "task_id=1", "task_type=sync", "attempt=1", "flaky network"} {
			if !strings.Contains(out, want) {
				t.Errorf("the log lacks %q:\n%s", want, out)
			}
		}
	})
}

// TestCallbackGoexitReplacesWorker: an error handler or a sink that calls
// runtime.Goexit on a worker, as t.FailNow does, ends that worker only: the
// failure it was reporting is settled all the same — retried, or
// dead-lettered with its Ask answered — a worker takes the dead one's
// place, and Close returns.
func TestCallbackGoexitReplacesWorker(t *testing.T) {
	noLeaks(t)
	synctest.Test(t, func(t *testing.T) {
		var ran record[string]
		var letters record[int]
		a := newActor(t, "callback-goexit", func(ctx context.Context, task Task[int]) error {
			ran.add(fmt.Sprintf("%d#%d", task.Payload, task.Attempt))
			switch {
			case task.Payload == 1 && task.Attempt == 1:
				return errors.New("retry me")
			case task.Payload == 2:
				return Permanent(errors.New("no"))
			}
			return nil
		}, Config[int]{
			MaxAttempts: 2,
			OnError: func(te *TaskError) {
				if te.ID == 1 {
					runtime.Goexit()
				}
			},
			DeadLetters: sinkFunc[int](func(l DeadLetter[int]) error {
				letters.add(l.Task.Payload)
				runtime.Goexit()
				return nil
			}),
		})
		if err := a.Ask(t.Context(), 1); err != nil {
			t.Errorf("Ask(1) = %v, want its retry to succeed", err)
		}
		if err := a.Ask(t.Context(), 2); !errors.Is(err, ErrPermanent) {
			t.Errorf("Ask(2) = %v, want its permanent failure", err)
		}
		if err := a.Ask(t.Context(), 3); err != nil {
			t.Errorf("Ask(3) = %v", err)
		}
		if err := a.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := ran.get(); !slices.Equal(got, []string{"1#1", "1#2", "2#1", "3#1"}) {
			t.Errorf("ran %v", got)
		}
		if got := letters.get(); !slices.Equal(got, []int{2}) {
			t.Errorf("letters %v, want [2]", got)
		}
		s := a.Stats()
		conserved(t, s)
		if s.Completed != 2 || s.DeadLettered != 1 || s.Workers != 0 {
			t.Errorf("Stats %+v: want 2 completed, 1 dead-lettered, no worker left", s)
		}
	})
}
