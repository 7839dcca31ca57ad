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
