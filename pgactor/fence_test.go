package pgactor

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/jackc/pgx/v5"
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

// heldLeases sends n tasks through a and makes each of them leased to a's
// instance with fencing token 1, as a fetch would, without running them;
// it returns their leases in a shuffled order, as the heartbeat names
// them (from a map).
func heldLeases(r *rig, a *Actor[int], n int) []*lease {
	r.t.Helper()
	ids, err := a.SendBatch(context.Background(), make([]int, n))
	if err != nil {
		r.t.Fatal(err)
	}
	r.exec(`UPDATE {s}.tasks SET owner = $1, runs = 1, available_at = now() + interval '1 hour'`, a.store.owner)
	leases := make([]*lease, n)
	for i, id := range ids {
		leases[i] = &lease{id: int64(id), token: 1}
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { leases[i], leases[j] = leases[j], leases[i] })
	return leases
}

// fencedLeases makes the leases of a statement that settles many at once:
// 300 tasks held by a's instance, named in a shuffled order; every tenth
// passed to another worker's lease (token 2), returned in stolen; and one
// this instance lost and took again (token 3), again, named twice — the
// late worker's lease first, token 1, then the new one.
func fencedLeases(r *rig, a *Actor[int]) (named []*lease, stolen map[int64]bool, again int64) {
	leases := heldLeases(r, a, 300)
	stolen = make(map[int64]bool)
	for i, l := range leases {
		if i%10 == 0 {
			r.exec(`UPDATE {s}.tasks SET runs = 2 WHERE id = $1`, l.id)
			stolen[l.id] = true
		}
	}
	again = leases[1].id
	r.exec(`UPDATE {s}.tasks SET runs = 3 WHERE id = $1`, again)
	leases[1] = &lease{id: again, token: 3}
	return append([]*lease{{id: again, token: 1}}, leases...), stolen, again
}

// TestFenceComplete completes many leases at once, in any order, some
// fenced off and one named twice, and checks that it deletes exactly the
// rows whose lease it names, and records for each the token of the lease
// that completed it: the fence looks each row's token up by its id, not
// by its place among the leases the pump handed it.
func TestFenceComplete(t *testing.T) {
	r := newRig(t)
	a := start(r, "fence", nil, Config[int]{Logger: quiet(t)})
	named, stolen, again := fencedLeases(r, a)
	done := make(map[int64]int32)
	b := &pgx.Batch{}
	a.store.complete(b, named, done)
	if err := a.store.runBatch(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	for _, l := range named[1:] {
		want := map[bool]int32{true: 0, false: l.token}[stolen[l.id]]
		if got := done[l.id]; got != want {
			t.Errorf("task %d (stolen %v): completed by token %d, want %d", l.id, stolen[l.id], got, want)
		}
	}
	if done[again] != 3 {
		t.Errorf("the task taken again was completed by token %d, want 3", done[again])
	}
	if n := r.count(`SELECT count(*) FROM {s}.tasks`); n != len(stolen) {
		t.Errorf("%d tasks left, want the %d stolen", n, len(stolen))
	}
}

// TestFenceHeartbeat renews many leases at once, as TestFenceComplete
// completes them, and checks that it finds held exactly those it names.
func TestFenceHeartbeat(t *testing.T) {
	r := newRig(t)
	a := start(r, "fence", nil, Config[int]{Logger: quiet(t)})
	named, stolen, _ := fencedLeases(r, a)
	held := make(map[int64]bool) // the leases found, to whether the task was canceled
	b := &pgx.Batch{}
	a.store.heartbeat(b, named, time.Minute, held)
	if err := a.store.runBatch(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	for _, l := range named[1:] {
		if _, got := held[l.id]; got == stolen[l.id] {
			t.Errorf("task %d (stolen %v): found held %v", l.id, stolen[l.id], got)
		}
	}
	if want := len(named) - 1 - len(stolen); len(held) != want {
		t.Errorf("%d leases found held, want %d", len(held), want)
	}
	// heldLeases leased them for an hour, the heartbeat for a minute.
	if n := r.count(`SELECT count(*) FROM {s}.tasks WHERE runs = 2 AND available_at < now() + interval '30 minutes'`); n != 0 {
		t.Errorf("%d fenced-off leases renewed", n)
	}
	if n, want := r.count(`SELECT count(*) FROM {s}.tasks WHERE runs <> 2 AND available_at < now() + interval '30 minutes'`), len(held); n != want {
		t.Errorf("%d leases renewed, want %d", n, want)
	}
}
