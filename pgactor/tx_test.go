package pgactor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// TestTxExactlyOnce checks that what a handler writes through Tx, and the
// tasks it sends on its context, commit with the task's completion and
// are rolled back with a failed attempt.
func TestTxExactlyOnce(t *testing.T) {
	r := newRig(t)
	r.exec(`CREATE TABLE {s}.effects (task bigint, attempt int)`)
	var followups ledger[string]
	var a *Actor[string]
	a = start(r, "effects", func(ctx context.Context, task actor.Task[string]) error {
		if task.Payload != "main" {
			followups.add(task.Payload)
			return nil
		}
		tx, err := Tx(ctx)
		if err != nil {
			return err
		}
		if again, err := Tx(ctx); err != nil || again == nil {
			t.Errorf("a second Tx: %v, %v", again, err)
		}
		if err := tx.Commit(ctx); !errors.Is(err, ErrTaskTx) {
			t.Errorf("Commit on the task's transaction: %v, want ErrTaskTx", err)
		}
		if err := tx.Rollback(ctx); !errors.Is(err, ErrTaskTx) {
			t.Errorf("Rollback on the task's transaction: %v, want ErrTaskTx", err)
		}
		if _, err := tx.Exec(ctx, expand(r.schema, `INSERT INTO {s}.effects VALUES ($1, $2)`), int64(task.ID), task.Attempt); err != nil {
			return err
		}
		if _, err := a.Send(ctx, "followup"); err != nil {
			return err
		}
		if task.Attempt < 3 {
			return errors.New("fail after writing")
		}
		return nil
	}, Config[string]{Workers: 2, MaxAttempts: 3, Backoff: actor.Backoff{Initial: time.Millisecond}, PollInterval: 20 * time.Millisecond})
	if _, err := a.Send(t.Context(), "main"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "main and its followup completed", func() bool { return stats(t, a).Completed == 2 })
	var attempt, n int
	if err := r.pool.QueryRow(t.Context(), expand(r.schema, `SELECT count(*), max(attempt) FROM {s}.effects`)).Scan(&n, &attempt); err != nil {
		t.Fatal(err)
	}
	if n != 1 || attempt != 3 {
		t.Errorf("%d effects, the last of attempt %d; want one, of the attempt that succeeded", n, attempt)
	}
	if followups.count() != 1 || stats(t, a).Accepted != 2 {
		t.Errorf("followups ran %d times, %d accepted; want the one sent by the successful attempt", followups.count(), stats(t, a).Accepted)
	}
	if _, err := Tx(t.Context()); !errors.Is(err, ErrNotInTask) {
		t.Errorf("Tx outside a handler: %v, want ErrNotInTask", err)
	}
}
