package pgactor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// takeOver does by hand what another worker's fetch does to a task whose
// lease ran out: it takes the lease, with the next fencing token.
func (r *rig) takeOver(id uint64) {
	r.t.Helper()
	r.exec(`UPDATE {s}.tasks SET owner = 'thief', runs = runs + 1, available_at = now() + interval '1 hour' WHERE id = $1`, int64(id))
}

// TestFencing checks that a worker whose lease passed to another can
// neither complete, retry, dead-letter nor commit a task's transaction:
// the database refuses its late result. Its heartbeats are far apart, so
// that it has not noticed the loss when the result comes.
func TestFencing(t *testing.T) {
	for _, outcome := range []string{"complete", "retry", "dead-letter", "commit"} {
		t.Run(outcome, func(t *testing.T) {
			r := newRig(t)
			r.exec(`CREATE TABLE {s}.effects (task bigint)`)
			started := make(chan uint64)
			proceed := make(chan struct{})
			a := start(r, "fenced", func(ctx context.Context, task actor.Task[int]) error {
				if outcome == "commit" {
					tx, err := Tx(ctx)
					if err != nil {
						return err
					}
					if _, err := tx.Exec(ctx, expand(r.schema, `INSERT INTO {s}.effects VALUES ($1)`), int64(task.ID)); err != nil {
						return err
					}
				}
				started <- task.ID
				<-proceed
				switch outcome {
				case "retry":
					return errors.New("late failure")
				case "dead-letter":
					return actor.Permanent(errors.New("late permanent failure"))
				}
				return nil
			}, Config[int]{Lease: time.Minute, Heartbeat: 30 * time.Second, MaxAttempts: 3, Logger: quiet(t)})
			id, err := a.Send(t.Context(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := <-started; got != id {
				t.Fatalf("started %d, sent %d", got, id)
			}
			r.takeOver(id)
			close(proceed)
			eventually(t, 10*time.Second, "the worker let the task go", func() bool { return a.running() == 0 })
			var owner string
			var runs, attempt int
			var lastErr *string
			if err := r.pool.QueryRow(t.Context(), expand(r.schema, `SELECT owner, runs, attempt, last_error FROM {s}.tasks WHERE id = $1`), int64(id)).Scan(&owner, &runs, &attempt, &lastErr); err != nil {
				t.Fatalf("the task's row: %v", err)
			}
			if owner != "thief" || runs != 2 || attempt != 1 || lastErr != nil {
				t.Errorf("the late %s changed the row: owner %s, runs %d, attempt %d, last error %v", outcome, owner, runs, attempt, lastErr)
			}
			if n := r.count(`SELECT count(*) FROM {s}.effects`); n != 0 {
				t.Errorf("the late commit left %d effects", n)
			}
			if s := stats(t, a); s.Completed != 0 || s.DeadLettered != 0 || s.Failed != 0 {
				t.Errorf("the late %s was counted: %+v", outcome, s)
			}
		})
	}
}

// TestLeaseLostCancels checks that the heartbeat finds a lease that
// passed to another worker and cancels the handler's context with
// ErrLeaseLost, and that the handler's failure then is not recorded.
func TestLeaseLostCancels(t *testing.T) {
	r := newRig(t)
	started := make(chan uint64)
	causes := make(chan error, 1)
	a := start(r, "lost", func(ctx context.Context, task actor.Task[int]) error {
		started <- task.ID
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, Config[int]{Lease: 500 * time.Millisecond, Heartbeat: 100 * time.Millisecond, MaxAttempts: 2, Logger: quiet(t)})
	id, err := a.Send(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	r.takeOver(id)
	if cause := within(t, causes, 10*time.Second, "the handler of a lost lease was not cancelled"); cause != ErrLeaseLost {
		t.Errorf("the handler's context ended with %v, want ErrLeaseLost", cause)
	}
	eventually(t, 10*time.Second, "the worker let the task go", func() bool { return a.running() == 0 })
	if s := stats(t, a); s.Failed != 0 || s.Running != 1 {
		t.Errorf("stats %+v: the thief's run goes on, and the lost one's failure is not recorded", s)
	}
}

// TestDeadWorker checks that the task of a worker cut off from the
// database runs again on another instance within the lease and a poll,
// counted as lost, and that the cut-off worker's handler learns it.
func TestDeadWorker(t *testing.T) {
	r := newRig(t)
	doomedPool, proxy := r.poolThroughProxy()

	const lease = time.Second
	started := make(chan struct{})
	causes := make(chan error, 1)
	doomed, err := New(t.Context(), doomedPool, "dying", func(ctx context.Context, task actor.Task[int]) error {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return ctx.Err()
	}, Config[int]{Schema: r.schema, Lease: lease, Heartbeat: lease / 4, Logger: quiet(t)})
	if err != nil {
		t.Fatal(err)
	}
	id, err := doomed.Send(t.Context(), 42)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	cut := time.Now()
	proxy.Close() // the worker is cut off: its heartbeats fail from now on

	reran := make(chan actor.Task[int], 1)
	heir := start(r, "dying", func(ctx context.Context, task actor.Task[int]) error {
		reran <- task
		return nil
	}, Config[int]{PollInterval: 100 * time.Millisecond})
	task := within(t, reran, 20*time.Second, "the task of a cut-off worker never ran again")
	if task.ID != id || task.Attempt != 2 || task.Payload != 42 {
		t.Errorf("ran again as %+v", task)
	}
	// The lease had up to one heartbeat's worth left when the cut came.
	if d := time.Since(cut); d < lease/2 || d > lease+5*time.Second {
		t.Errorf("ran again %v after the cut, want about the lease (%v)", d, lease)
	}
	if cause := within(t, causes, 10*time.Second, "the cut-off handler was never cancelled"); cause != ErrLeaseLost {
		t.Errorf("the cut-off handler's context ended with %v, want ErrLeaseLost", cause)
	}
	eventually(t, 10*time.Second, "completed", func() bool { return stats(t, heir).Completed == 1 })
	if s := stats(t, heir); s.Lost != 1 || s.Accepted != 1 {
		t.Errorf("stats %+v, want 1 lost run", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	doomed.Close(ctx) // fails to give back what it no longer holds: no matter
}

// TestLostTooOften checks that a task whose workers are lost more than
// MaxLost times is dead-lettered with ReasonLost, not run again.
func TestLostTooOften(t *testing.T) {
	r := newRig(t)
	sender := start(r, "lossy", nil, Config[int]{})
	id, err := sender.Send(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	// Two runs lost already, and a third whose lease ran out.
	r.exec(`UPDATE {s}.tasks SET owner = 'dead', runs = 3, attempt = 3, lost = 2, available_at = now() - interval '1 second' WHERE id = $1`, int64(id))
	ran := make(chan struct{}, 1)
	var errs errorLog
	a := start(r, "lossy", func(ctx context.Context, task actor.Task[int]) error {
		ran <- struct{}{}
		return nil
	}, Config[int]{MaxLost: 2, OnError: errs.add})
	eventually(t, 10*time.Second, "dead-lettered", func() bool { return stats(t, a).DeadLettered == 1 })
	letters, err := a.DeadLetters(t.Context(), LetterFilter{})
	if err != nil || len(letters) != 1 || letters[0].Reason != ReasonLost || letters[0].Lost != 3 || letters[0].Attempts != 3 {
		t.Fatalf("dead letters %+v, %v; want one, lost 3 times", letters, err)
	}
	if len(ran) != 0 {
		t.Error("the handler ran a task lost too often")
	}
	if e := errs.all(); len(e) != 1 || !e[0].Final {
		t.Errorf("OnError got %v", e)
	}
	if s := stats(t, a); s.Lost != 1 {
		t.Errorf("stats %+v: the take-over should count one lost run", s)
	}
}

// TestCloseGivesBack checks that Close lets a handler that ends in time
// complete, and gives back, uncharged, the task of one that does not.
func TestCloseGivesBack(t *testing.T) {
	r := newRig(t)
	started := make(chan int, 2)
	a, err := New(t.Context(), r.pool, "closing", func(ctx context.Context, task actor.Task[int]) error {
		started <- task.Payload
		if task.Payload == 1 {
			time.Sleep(100 * time.Millisecond)
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}, Config[int]{Schema: r.schema, Workers: 2, OnError: func(*actor.TaskError) { t.Error("a task failed") }})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int{1, 2} {
		if _, err := a.Send(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := ReadStats(t.Context(), r.pool, r.schema, "closing")
	if err != nil {
		t.Fatal(err)
	}
	checkIdentity(t, s)
	if s.Completed != 1 || s.Queued != 1 || s.DeadLettered != 0 || s.Running != 0 || s.Failed != 0 {
		t.Errorf("after Close: %+v, want one completed and one queued again", s)
	}
	var attempt int
	var owner *string
	if err := r.pool.QueryRow(t.Context(), expand(r.schema, `SELECT attempt, owner FROM {s}.tasks`)).Scan(&attempt, &owner); err != nil {
		t.Fatal(err)
	}
	if attempt != 0 || owner != nil {
		t.Errorf("the given-back task: attempt %d, owner %v; want 0, none", attempt, owner)
	}
	reran := make(chan actor.Task[int], 1)
	start(r, "closing", func(ctx context.Context, task actor.Task[int]) error {
		reran <- task
		return nil
	}, Config[int]{PollInterval: time.Hour})
	if task := within(t, reran, 10*time.Second, "the given-back task did not run at once"); task.Payload != 2 || task.Attempt != 1 {
		t.Errorf("ran again as %+v, want payload 2, attempt 1", task)
	}
}

// TestCloseAbandons checks that Close returns after the grace period when
// a handler ignores its context, with the task given back, and that the
// handler's late success is not recorded.
func TestCloseAbandons(t *testing.T) {
	r := newRig(t)
	started := make(chan struct{})
	release := make(chan struct{})
	returned := make(chan struct{})
	a, err := New(t.Context(), r.pool, "stubborn", func(ctx context.Context, task actor.Task[int]) error {
		defer close(returned)
		close(started)
		<-release
		return nil
	}, Config[int]{Schema: r.schema, Grace: 50 * time.Millisecond, Logger: quiet(t)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Send(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	close(release)
	<-returned
	time.Sleep(50 * time.Millisecond) // the late completion, were it recorded
	s, err := ReadStats(t.Context(), r.pool, r.schema, "stubborn")
	if err != nil {
		t.Fatal(err)
	}
	if s.Queued != 1 || s.Completed != 0 {
		t.Errorf("after Close abandoned the handler: %+v, want the task queued again", s)
	}
}
