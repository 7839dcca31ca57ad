package jsactor

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
)

// fastBackoff keeps retries quick in tests.
var fastBackoff = actor.Backoff{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}

// runs records each run a handler saw.
type runs struct {
	mu    sync.Mutex
	tasks []actor.Task[string]
}

func (r *runs) add(t actor.Task[string]) {
	r.mu.Lock()
	r.tasks = append(r.tasks, t)
	r.mu.Unlock()
}

func (r *runs) list() []actor.Task[string] {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]actor.Task[string](nil), r.tasks...)
}

func (r *runs) count() int { return len(r.list()) }

func TestRetryThenComplete(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	var errs testenv.TaskErrors
	a, err := New(ctx, nc, "retry", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		if task.Attempt < 3 {
			return errors.New("not yet")
		}
		return nil
	}, Config[string]{MaxAttempts: 3, Backoff: fastBackoff, FlushInterval: 20 * time.Millisecond,
		OnError: errs.Add})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	id, err := a.Send(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "three runs", func() bool { return seen.count() == 3 })
	for i, run := range seen.list() {
		if run.ID != id || run.Attempt != i+1 || run.Payload != "x" {
			t.Errorf("run %d = %+v, want ID %d attempt %d", i, run, id, i+1)
		}
	}
	eventually(t, 5*time.Second, "stats settle", func() bool {
		s, err := a.Stats(ctx)
		return err == nil && s.Completed == 1 && s.Failed == 2 && s.Retried == 2 && s.DeadLettered == 0 &&
			s.Retrying == 0 && s.Running == 0 && s.Lost == 0
	})
	failures := errs.All()
	if len(failures) != 2 || failures[0].Final || failures[1].Final || failures[1].Attempt != 2 || failures[0].ID != id {
		t.Errorf("OnError saw %v, want attempts 1 and 2 of task %d, neither final", failures, id)
	}
}

func TestDeadLetterReasons(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	a, err := New(ctx, nc, "dead", func(ctx context.Context, task actor.Task[string]) error {
		if task.Payload == "permanent" {
			return actor.Permanent(errors.New("bad request"))
		}
		return errors.New("still broken")
	}, Config[string]{MaxAttempts: 2, Backoff: fastBackoff, OnError: func(*actor.TaskError) {}})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	idFail, err := a.Send(ctx, "fails", WithType("job"), UniqueKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	idPerm, err := a.Send(ctx, "permanent")
	if err != nil {
		t.Fatal(err)
	}
	var letters []DeadLetter[string]
	eventually(t, 10*time.Second, "two dead letters", func() bool {
		letters, err = a.DeadLetters(ctx, LetterFilter{})
		return err == nil && len(letters) == 2
	})
	byTask := map[uint64]DeadLetter[string]{}
	for _, d := range letters {
		byTask[d.Task.ID] = d
	}
	f, p := byTask[idFail], byTask[idPerm]
	if f.Reason != ReasonMaxAttempts || f.Attempts != 2 || f.Err == nil || f.Err.Error() != "still broken" ||
		f.Task.Payload != "fails" || f.Task.Type != "job" || f.UniqueKey != "k1" || f.Started.IsZero() || f.Time.Before(f.Started) {
		t.Errorf("dead letter of the failing task = %+v", f)
	}
	if p.Reason != ReasonPermanent || p.Attempts != 1 || p.Err == nil {
		t.Errorf("dead letter of the permanent failure = %+v", p)
	}
	only, err := a.DeadLetters(ctx, LetterFilter{Reason: ReasonPermanent})
	if err != nil || len(only) != 1 || only[0].Task.ID != idPerm {
		t.Errorf("DeadLetters(ReasonPermanent) = %v, %v", only, err)
	}
	// The key is free once its task is dead-lettered.
	if _, err := a.Send(ctx, "again", UniqueKey("k1")); err != nil {
		t.Errorf("send with the key of a dead-lettered task: %v", err)
	}
}

func TestSnoozeNotCharged(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	var seen runs
	a, err := New(ctx, nc, "snooze", func(ctx context.Context, task actor.Task[string]) error {
		seen.add(task)
		if seen.count() == 1 {
			return Snooze(50 * time.Millisecond)
		}
		return nil
	}, Config[string]{MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	if _, err := a.Send(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "two runs", func() bool { return seen.count() == 2 })
	r := seen.list()
	if r[0].Attempt != 1 || r[1].Attempt != 1 || r[0].ID != r[1].ID || !r[0].Enqueued.Equal(r[1].Enqueued) {
		t.Errorf("runs = %+v, want the same task at attempt 1 twice", r)
	}
}

func TestPanicFailsAttempt(t *testing.T) {
	nc := rig(t)
	ctx := ctxT(t)
	errs := make(chan *actor.TaskError, 1)
	a, err := New(ctx, nc, "panics", func(ctx context.Context, task actor.Task[string]) error {
		panic("boom")
	}, Config[string]{OnError: func(err *actor.TaskError) { errs <- err }})
	if err != nil {
		t.Fatal(err)
	}
	closeT(t, a)
	if _, err := a.Send(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		var pe *actor.PanicError
		if !errors.As(err, &pe) || !err.Final {
			t.Errorf("OnError got %v, want a final *actor.PanicError", err)
		}
	case <-ctx.Done():
		t.Fatal("no error reported")
	}
}
