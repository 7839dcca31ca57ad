package jsactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
)

// TestPanickingErrorHandlerFailsOnlyAttempt: a Config.OnError that panics
// neither takes the process down nor changes what happens to the task —
// it is retried and completes — and the log that reports the panic names
// the failure it was given.
func TestPanickingErrorHandlerFailsOnlyAttempt(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var logs testenv.LockedBuffer
	var seen runs
	a, err := New(ctx, nc, "onerror-panic", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		if task.Attempt == 1 {
			return errors.New("flaky network")
		}
		return nil
	}, Config[string]{MaxAttempts: 2, Backoff: fastBackoff, FlushInterval: 20 * time.Millisecond,
		Logger:  slog.New(slog.NewTextHandler(&logs, nil)),
		OnError: func(*actor.TaskError) { panic("error handler bug") }})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	id, err := a.Send(ctx, "x", WithType("sync"))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the task completes", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.Completed == 1 && s.Retried == 1 && s.Busy == 0
	})
	if r := seen.list(); len(r) != 2 || r[0].Attempt != 1 || r[1].Attempt != 2 {
		t.Errorf("runs %+v, want attempts 1 and 2", r)
	}
	out := logs.String()
	for _, want := range []string{"error handler bug", fmt.Sprintf("task_id=%d", id), "task_type=sync", "attempt=1", "flaky network"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q:\n%s", want, out)
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
	nc := rig(t)
	ctx := ctxT(t)
	var errs testenv.TaskErrors
	a, err := New(ctx, nc, "typed-nil", func(ctx context.Context, task actor.Task[string]) error {
		if task.Payload == "nil" {
			var err *nilCauseError
			return err
		}
		return nil
	}, Config[string]{Workers: 1, FlushInterval: 20 * time.Millisecond, OnError: errs.Add})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	for _, p := range []string{"nil", "fine"} {
		if _, err := a.Send(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 20*time.Second, "one dead-lettered, one completed", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.DeadLettered == 1 && s.Completed == 1
	})
	e := errs.All()
	var pe *actor.PanicError
	if len(e) != 1 || !e[0].Final || !errors.As(e[0].Err, &pe) || pe.Func != "the handler's error" {
		t.Errorf("OnError got %v, want one final *actor.PanicError of the handler's error", e)
	}
	letters, err := a.DeadLetters(ctx, LetterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(letters) != 1 || string(letters[0].Raw) != `"nil"` || letters[0].Reason != ReasonMaxAttempts || letters[0].Err == nil ||
		!strings.Contains(letters[0].Err.Error(), "the handler's error panicked") {
		t.Errorf("dead letters %+v, want task nil's, with the panic of its error", letters)
	}
	if s, err := a.Stats(ctx); err != nil || s.Workers != 1 || s.Idle != 1 {
		t.Errorf("Stats = %+v, %v: want the one worker still there, idle", s, err)
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
// was given is retried or dead-lettered all the same, on the spot — not
// left to run again as a lost run, nor held by this process until Close —
// the busy count stays true, and Close returns.
func TestErrorHandlerGoexitSettlesTask(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	a, err := New(ctx, nc, "onerror-goexit", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		switch {
		case task.Payload == "permanent":
			return actor.Permanent(errors.New("bad request"))
		case task.Payload == "retry" && task.Attempt == 1:
			return errors.New("not yet")
		}
		return nil
	}, Config[string]{Workers: 2, MaxAttempts: 2, Backoff: fastBackoff, Lease: 500 * time.Millisecond,
		FlushInterval: 20 * time.Millisecond, Codec: failingCodec{},
		OnError: func(*actor.TaskError) { runtime.Goexit() }})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"permanent", "retry", "undecodable", "fine"} {
		if _, err := a.Send(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "two completed, two dead-lettered", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.Completed == 2 && s.DeadLettered == 2 && s.DeadLetters == 2
	})
	// Long enough for a task left unsettled to come back as a lost run.
	time.Sleep(1500 * time.Millisecond)
	letters, err := a.DeadLetters(ctx, LetterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]Reason{}
	for _, d := range letters {
		reasons[string(d.Raw)] = d.Reason
	}
	if len(letters) != 2 || reasons[`"permanent"`] != ReasonPermanent || reasons[`"undecodable"`] != ReasonUndecodable {
		t.Errorf("dead letters %+v, want permanent and undecodable", reasons)
	}
	ran := map[string][]int{}
	for _, r := range seen.list() {
		ran[r.Payload] = append(ran[r.Payload], r.Attempt)
	}
	if fmt.Sprint(ran) != "map[fine:[1] permanent:[1] retry:[1 2]]" {
		t.Errorf("attempts run %v, want permanent and fine once, retry twice", ran)
	}
	s, err := a.Stats(ctx)
	if err != nil || s.Busy != 0 || s.Idle != 2 || s.Lost != 0 || s.Running != 0 {
		t.Errorf("Stats = %+v, %v: want no task busy, running or lost", s, err)
	}
	done, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := a.Close(done); err != nil {
		t.Errorf("Close: %v", err)
	}
}
