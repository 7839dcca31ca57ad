package pgactor

import (
	"context"
	"errors"
	"sync/atomic"
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

// TestTxCommitFails checks that a run whose task transaction the server
// refuses to commit — here a deferred foreign key the handler's write
// breaks — is a failed attempt: reported to OnError, retried after the
// Backoff, dead-lettered with ReasonMaxAttempts once the attempts are
// spent, and not counted as a lost run.
func TestTxCommitFails(t *testing.T) {
	r := newRig(t)
	r.exec(`CREATE TABLE {s}.parents (id int PRIMARY KEY)`)
	r.exec(`CREATE TABLE {s}.children (parent int REFERENCES {s}.parents DEFERRABLE INITIALLY DEFERRED)`)
	var reports atomic.Int64
	a := start(r, "commitfails", func(ctx context.Context, task actor.Task[string]) error {
		tx, err := Tx(ctx)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, expand(r.schema, `INSERT INTO {s}.children VALUES (1)`))
		return err // nil: the foreign key is checked at commit
	}, Config[string]{
		Workers: 1, MaxAttempts: 2, MaxLost: 1, Lease: 300 * time.Millisecond,
		Backoff: actor.Backoff{Initial: time.Millisecond}, PollInterval: 20 * time.Millisecond,
		OnError: func(*actor.TaskError) { reports.Add(1) }, Logger: quiet(t),
	})
	if _, err := a.Send(t.Context(), "x"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the task dead-lettered", func() bool { return stats(t, a).DeadLettered == 1 })
	letters, err := a.DeadLetters(t.Context(), LetterFilter{})
	if err != nil {
		t.Fatal(err)
	}
	s := stats(t, a)
	if len(letters) != 1 || letters[0].Reason != ReasonMaxAttempts || letters[0].Lost != 0 || s.Lost != 0 || s.Failed != 2 || reports.Load() != 2 {
		t.Errorf("dead letters %+v, stats %+v, %d reports to OnError; want one letter of ReasonMaxAttempts, 2 failed attempts reported, none lost", letters, s, reports.Load())
	}
	if n := r.count(`SELECT count(*) FROM {s}.children`); n != 0 {
		t.Errorf("%d rows written by runs whose commit failed", n)
	}
}
