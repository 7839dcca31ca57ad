package pgactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
)

// TestRetry checks that a failing task runs again after the backoff, with
// its attempt number, that OnError hears of each failure, and the counters.
func TestRetry(t *testing.T) {
	r := newRig(t)
	var errs testenv.TaskErrors
	var mu sync.Mutex
	var at []time.Time
	const backoff = 100 * time.Millisecond
	a := start(r, "retry", func(ctx context.Context, task actor.Task[int]) error {
		mu.Lock()
		defer mu.Unlock()
		at = append(at, time.Now())
		if task.Attempt != len(at) {
			t.Errorf("attempt %d is run %d", task.Attempt, len(at))
		}
		if task.Attempt < 3 {
			return errors.New("not yet")
		}
		return nil
	}, Config[int]{MaxAttempts: 3, Backoff: actor.Backoff{Initial: backoff, Multiplier: 2}, OnError: errs.Add, PollInterval: time.Hour})
	if _, err := a.Send(t.Context(), 7); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "completed on the third attempt", func() bool { return stats(t, a).Completed == 1 })
	mu.Lock()
	defer mu.Unlock()
	// The backoff is 100ms then 200ms. With PollInterval an hour, only the
	// fetcher's own wake-up at the retry's time can have started them.
	for i, want := range []time.Duration{backoff, 2 * backoff} {
		if gap := at[i+1].Sub(at[i]); gap < want-10*time.Millisecond || gap > want+5*time.Second {
			t.Errorf("attempt %d ran %v after attempt %d, want about %v", i+2, gap, i+1, want)
		}
	}
	e := errs.All()
	if len(e) != 2 || e[0].Attempt != 1 || e[1].Attempt != 2 || e[0].Final || e[1].Final || e[0].Actor != "retry" || e[0].Err.Error() != "not yet" {
		t.Errorf("OnError got %v", e)
	}
	s := stats(t, a)
	if s.Failed != 2 || s.Retried != 2 || s.Completed != 1 || s.DeadLettered != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestRetryHoldsNoWorker checks that a task waiting for its backoff holds
// neither a worker nor a lease: the only worker runs another task
// meanwhile, and the waiting one counts as Retrying.
func TestRetryHoldsNoWorker(t *testing.T) {
	r := newRig(t)
	ran := make(chan int, 10)
	a := start(r, "waiting", func(ctx context.Context, task actor.Task[int]) error {
		ran <- task.Payload
		if task.Payload == 1 {
			return errors.New("fail")
		}
		return nil
	}, Config[int]{Workers: 1, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Hour}})
	waiting, err := a.Send(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if p := <-ran; p != 1 {
		t.Fatalf("ran %d first", p)
	}
	eventually(t, 10*time.Second, "the failed task waits for its retry", func() bool { return stats(t, a).Retrying == 1 })
	if _, err := a.Send(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	if p := within(t, ran, 10*time.Second, "the only worker is held by a task waiting for its retry"); p != 2 {
		t.Fatalf("ran %d", p)
	}
	// Task 2's row may still be leased: its handler has not returned yet.
	var owner *string
	if err := r.pool.QueryRow(t.Context(), expand(r.schema, `SELECT owner FROM {s}.tasks WHERE id = $1`), int64(waiting)).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	if owner != nil {
		t.Errorf("a task waiting for its retry is leased to %s", *owner)
	}
}

// TestFinalFailures checks the dead letters of a permanent error, of
// attempts spent, of a timeout and of a panic.
func TestFinalFailures(t *testing.T) {
	r := newRig(t)
	var errs testenv.TaskErrors
	boom := errors.New("boom")
	a := start(r, "final", func(ctx context.Context, task actor.Task[string]) error {
		switch task.Payload {
		case "permanent":
			return actor.Permanent(boom)
		case "spent":
			return boom
		case "slow":
			<-ctx.Done()
			return ctx.Err()
		case "panic":
			panic("at the disco")
		}
		return nil
	}, Config[string]{Workers: 4, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Millisecond}, Timeout: 100 * time.Millisecond,
		OnError: errs.Add, PollInterval: 20 * time.Millisecond})
	ids := map[string]uint64{}
	for _, p := range []string{"permanent", "spent", "slow", "panic"} {
		id, err := a.Send(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		ids[p] = id
	}
	eventually(t, 20*time.Second, "all dead-lettered", func() bool { return stats(t, a).DeadLettered == 4 })
	letters, err := a.DeadLetters(t.Context(), LetterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]DeadLetter[string]{}
	for _, l := range letters {
		got[l.Task.Payload] = l
	}
	for _, tt := range []struct {
		payload  string
		reason   Reason
		attempts int
		err      string
	}{
		{"permanent", ReasonPermanent, 1, "boom"},
		{"spent", ReasonMaxAttempts, 2, "boom"},
		{"slow", ReasonMaxAttempts, 2, "context deadline exceeded"},
		{"panic", ReasonMaxAttempts, 2, "handler panicked: at the disco"},
	} {
		l, ok := got[tt.payload]
		switch {
		case !ok:
			t.Errorf("no dead letter for %q", tt.payload)
		case l.Reason != tt.reason || l.Attempts != tt.attempts || l.Err == nil || l.Err.Error() != tt.err ||
			l.Task.ID != ids[tt.payload] || l.Actor != "final" || l.Time.IsZero() || l.Started.IsZero() || l.Task.Type != "string":
			t.Errorf("dead letter of %q: %+v, want reason %v after %d attempts with %q", tt.payload, l, tt.reason, tt.attempts, tt.err)
		}
	}
	finals := 0
	for _, e := range errs.All() {
		if e.Final {
			finals++
		}
		if e.Err == nil {
			t.Errorf("OnError without an error: %+v", e)
		}
		if pe := (*actor.PanicError)(nil); errors.As(e.Err, &pe) && len(pe.Stack) == 0 {
			t.Errorf("panic reported without its stack")
		}
	}
	if finals != 4 {
		t.Errorf("%d final failures reported, want 4", finals)
	}
	if s := stats(t, a); s.Failed != 7 || s.Retried != 3 || s.DeadLetters != 4 {
		t.Errorf("stats %+v, want 7 failed attempts, 3 retries, 4 dead letters stored", s)
	}
}

// TestCancel checks canceling a waiting task and a running one.
func TestCancel(t *testing.T) {
	r := newRig(t)
	running := make(chan struct{})
	causes := make(chan error, 1)
	a := start(r, "cancel", func(ctx context.Context, task actor.Task[string]) error {
		close(running)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, Config[string]{Workers: 1, Lease: 600 * time.Millisecond, Heartbeat: 100 * time.Millisecond})
	busy, err := a.Send(t.Context(), "running")
	if err != nil {
		t.Fatal(err)
	}
	<-running
	waiting, err := a.Send(t.Context(), "waiting")
	if err != nil {
		t.Fatal(err)
	}
	n, err := a.Cancel(t.Context(), waiting, busy, 999999)
	if err != nil || n != 2 {
		t.Fatalf("Cancel: %d, %v; want 2 found", n, err)
	}
	if cause := within(t, causes, 10*time.Second, "the running handler was not canceled"); cause != ErrCanceled {
		t.Errorf("the running handler's context ended with %v, want ErrCanceled", cause)
	}
	eventually(t, 10*time.Second, "both dead-lettered", func() bool { return stats(t, a).DeadLettered == 2 })
	letters, err := a.DeadLetters(t.Context(), LetterFilter{Reason: ReasonCanceled})
	if err != nil || len(letters) != 2 {
		t.Fatalf("canceled letters: %v, %v", letters, err)
	}
	for _, l := range letters {
		if want := map[uint64]int{busy: 1, waiting: 0}[l.Task.ID]; l.Attempts != want {
			t.Errorf("canceled %q after %d attempts, want %d", l.Task.Payload, l.Attempts, want)
		}
	}
}

// TestCancelWhileTaskMoves checks that Cancel catches a task that moves
// from running to waiting while Cancel runs — its worker gave it back for a
// retry — in the state it reaches: dead-lettered as waiting, not missed
// both as a waiting task (it ran when looked at) and as a running one (it
// waited by the time it was marked).
func TestCancelWhileTaskMoves(t *testing.T) {
	r := newRig(t)
	a := start(r, "cancelmoves", func(ctx context.Context, task actor.Task[string]) error {
		t.Errorf("task %d ran; it is not due for an hour", task.ID)
		return nil
	}, Config[string]{Workers: 1})
	id, err := a.Send(t.Context(), "moves", After(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// The task runs, as far as Cancel can tell, on a worker of a process
	// that holds its row while it gives the task back.
	r.exec(`UPDATE {s}.tasks SET owner = 'elsewhere' WHERE id = $1`, int64(id))
	worker, err := r.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Rollback(context.Background())
	if _, err := worker.Exec(t.Context(), expand(r.schema, `UPDATE {s}.tasks SET owner = NULL WHERE id = $1`), int64(id)); err != nil {
		t.Fatal(err)
	}

	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := a.Cancel(context.Background(), id)
		done <- result{n, err}
	}()
	eventually(t, 10*time.Second, "Cancel did not wait for the task's row", func() bool {
		return r.lockWaits() > 0
	})
	if err := worker.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	res := within(t, done, 10*time.Second, "Cancel did not return")
	if res.err != nil || res.n != 1 {
		t.Fatalf("Cancel of a task given back while it ran: %d, %v; want 1 canceled", res.n, res.err)
	}
	letters, err := a.DeadLetters(t.Context(), LetterFilter{Reason: ReasonCanceled})
	if err != nil || len(letters) != 1 || letters[0].Task.ID != id {
		t.Errorf("canceled letters: %v, %v; want task %d", letters, err, id)
	}
}

// TestGoexit checks that a handler calling runtime.Goexit fails its
// attempt with an *actor.PanicError, and that a worker takes the place of
// the one it ended.
func TestGoexit(t *testing.T) {
	r := newRig(t)
	var errs testenv.TaskErrors
	var ran ledger[int]
	a := start(r, "goexit", func(ctx context.Context, task actor.Task[int]) error {
		ran.add(task.Attempt)
		if task.Attempt == 1 {
			runtime.Goexit()
		}
		return nil
	}, Config[int]{Workers: 1, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Millisecond}, OnError: errs.Add})
	if _, err := a.Send(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "completed on the second attempt", func() bool { return stats(t, a).Completed == 1 })
	e := errs.All()
	var pe *actor.PanicError
	if len(e) != 1 || !errors.As(e[0].Err, &pe) || !pe.Goexit || e[0].Final {
		t.Errorf("OnError got %v, want one retried Goexit", e)
	}
	if s := stats(t, a); s.Workers != 1 || ran.count() != 2 {
		t.Errorf("stats %+v after %d runs: want the worker replaced", s, ran.count())
	}
}

// TestErrorNotStorable checks that a handler's error whose message
// PostgreSQL cannot store as text — invalid UTF-8, a NUL byte — still
// retries and dead-letters its task, with the message made storable,
// rather than failing the statement that records it again and again while
// the heartbeat keeps the lease: the worker was stuck on the task for as
// long as the process ran, and the tasks behind it never ran.
func TestErrorNotStorable(t *testing.T) {
	r := newRig(t)
	ran := make(chan int, 10)
	a := start(r, "notstorable", func(ctx context.Context, task actor.Task[int]) error {
		ran <- task.Payload
		switch task.Payload {
		case 1:
			return errors.New("latin-1 \xe9t\xe9")
		case 2:
			return actor.Permanent(errors.New("nul \x00 byte"))
		}
		return nil
	}, Config[int]{Workers: 1, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Millisecond}, PollInterval: 20 * time.Millisecond,
		Logger: quiet(t)})
	for p := 1; p <= 3; p++ {
		if _, err := a.Send(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 15*time.Second, "the tasks failing with unstorable messages were not dead-lettered", func() bool {
		s := stats(t, a)
		return s.DeadLettered == 2 && s.Completed == 1
	})
	letters, err := a.DeadLetters(t.Context(), LetterFilter{})
	if err != nil || len(letters) != 2 {
		t.Fatalf("dead letters: %v, %v", letters, err)
	}
	for _, l := range letters {
		want := map[int]struct {
			reason Reason
			err    string
		}{1: {ReasonMaxAttempts, "latin-1 \ufffdt\ufffd"}, 2: {ReasonPermanent, "nul \ufffd byte"}}[l.Task.Payload]
		if l.Reason != want.reason || l.Err == nil || l.Err.Error() != want.err {
			t.Errorf("task %d dead-lettered for %v with %v, want %v with %q", l.Task.Payload, l.Reason, l.Err, want.reason, want.err)
		}
	}
}

// When Config.OnError panics, the log that says so carries the failure it
// was given: the task's ID and type, the attempt and its error, which for
// an attempt to be retried are recorded nowhere else.
func TestPanickingErrorHandlerLogsFailure(t *testing.T) {
	r := newRig(t)
	var mu sync.Mutex
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), nil))
	a := start(r, "onerror-panics", func(ctx context.Context, task actor.Task[string]) error {
		return errors.New("boom")
	}, Config[string]{Workers: 1, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Hour}, Logger: logger,
		OnError: func(*actor.TaskError) { panic("handler of handlers") }, PollInterval: 20 * time.Millisecond})
	id, err := a.Send(t.Context(), "fails")
	if err != nil {
		t.Fatal(err)
	}
	read := func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
	eventually(t, 10*time.Second, "the panic logged", func() bool { return strings.Contains(read(), "error handler panicked") })
	line := read()
	for _, want := range []string{fmt.Sprintf("task_id=%d", id), "task_type=string", "attempt=1", "boom", "handler of handlers"} {
		if !strings.Contains(line, want) {
			t.Errorf("the log of OnError's panic lacks %q:\n%s", want, line)
		}
	}
}

// nilCauseError is an error type whose methods read its fields, as most
// do: a nil *nilCauseError returned as an error panics when its message
// is read or it is unwrapped.
type nilCauseError struct{ cause error }

func (e *nilCauseError) Error() string { return "failed: " + e.cause.Error() }
func (e *nilCauseError) Unwrap() error { return e.cause }

// TestNilErrorPointerFailsAttempt shows a handler that returns a nil
// pointer as its error — the classic typed nil, whose methods panic —
// failing that attempt with an *actor.PanicError, as package actor's
// does, where it took down the process when the actor read the error's
// message or asked whether it was permanent.
func TestNilErrorPointerFailsAttempt(t *testing.T) {
	r := newRig(t)
	var errs testenv.TaskErrors
	a := start(r, "typed-nil", func(ctx context.Context, task actor.Task[int]) error {
		if task.Payload == 1 {
			var err *nilCauseError
			return err
		}
		return nil
	}, Config[int]{Workers: 1, PollInterval: 10 * time.Millisecond, OnError: errs.Add})
	for p := 1; p <= 2; p++ {
		if _, err := a.Send(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "one dead-lettered, one completed", func() bool {
		s := stats(t, a)
		return s.DeadLettered == 1 && s.Completed == 1
	})
	e := errs.All()
	var pe *actor.PanicError
	if len(e) != 1 || !e[0].Final || !errors.As(e[0].Err, &pe) || pe.Func != "the handler's error" {
		t.Errorf("OnError got %v, want one final *actor.PanicError of the handler's error", e)
	}
	letters, err := a.DeadLetters(t.Context(), LetterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(letters) != 1 || letters[0].Task.Payload != 1 || letters[0].Reason != ReasonMaxAttempts || letters[0].Err == nil ||
		!strings.Contains(letters[0].Err.Error(), "the handler's error panicked") {
		t.Errorf("dead letters %+v, want task 1's, with the panic of its error", letters)
	}
	if s := stats(t, a); s.Workers != 1 {
		t.Errorf("stats %+v: want the one worker still there", s)
	}
}

// failingCodec is JSON, except that the payload "undecodable" does not
// decode.
type failingCodec struct{ JSON[string] }

func (c failingCodec) Decode(data []byte) (string, error) {
	s, err := c.JSON.Decode(data)
	if err == nil && s == "undecodable" {
		return "", errors.New("no decoder for it")
	}
	return s, err
}

// TestErrorHandlerGoexitSettlesTask: a Config.OnError that calls
// runtime.Goexit, as t.FailNow does, ends its worker only: the failure it
// was given is retried or dead-lettered all the same, on the spot, and a
// worker takes the place of the one it ended. It used to leave the task
// held, its lease renewed until Close, and to end the worker that took
// the first one's place too, so that the actor's one worker was gone and
// the tasks behind never ran.
func TestErrorHandlerGoexitSettlesTask(t *testing.T) {
	r := newRig(t)
	var ran ledger[string]
	a := start(r, "onerror-goexit", func(ctx context.Context, task actor.Task[string]) error {
		ran.add(fmt.Sprint(task.Payload, task.Attempt))
		switch {
		case task.Payload == "permanent":
			return actor.Permanent(errors.New("bad request"))
		case task.Payload == "retry" && task.Attempt == 1:
			return errors.New("not yet")
		}
		return nil
	}, Config[string]{Workers: 1, MaxAttempts: 2, Backoff: actor.Backoff{Initial: time.Millisecond}, PollInterval: 10 * time.Millisecond,
		Codec: failingCodec{}, Logger: quiet(t), OnError: func(*actor.TaskError) { runtime.Goexit() }})
	for _, p := range []string{"permanent", "retry", "undecodable", "fine"} {
		if _, err := a.Send(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "two completed, two dead-lettered", func() bool {
		s := stats(t, a)
		return s.Completed == 2 && s.DeadLettered == 2
	})
	letters, err := a.DeadLetters(t.Context(), LetterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]Reason{}
	for _, d := range letters {
		reasons[string(d.Raw)] = d.Reason
	}
	if len(letters) != 2 || reasons[`"permanent"`] != ReasonPermanent || reasons[`"undecodable"`] != ReasonUndecodable {
		t.Errorf("dead letters %v, want permanent and undecodable", reasons)
	}
	for _, run := range []string{"permanent1", "retry1", "retry2", "fine1"} {
		if ran.times(run) != 1 {
			t.Errorf("%s ran %d times, want once", run, ran.times(run))
		}
	}
	if n := ran.count(); n != 4 {
		t.Errorf("the handler ran %d times, want 4", n)
	}
	if s := stats(t, a); s.Workers != 1 || s.Busy != 0 || s.Running != 0 || s.Lost != 0 {
		t.Errorf("stats %+v: want the one worker idle, no task running or lost", s)
	}
}

// writerFunc is an io.Writer made of a function.
type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
