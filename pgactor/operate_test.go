package pgactor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
)

// TestPauseAcrossProcesses runs one actor in two "processes" — two
// instances on two pools, each with a listener of its own — pauses it
// from one, and checks that no fetch takes the tasks sent meanwhile;
// then resumes it from the other, and checks that every task runs, on
// both: each instance's single worker holds its first task until the
// other instance has taken one.
func TestPauseAcrossProcesses(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	var ran ledger[int]
	var mu sync.Mutex
	started := map[string]bool{}
	both := make(chan struct{})
	handler := func(instance string) actor.Handler[int] {
		return func(ctx context.Context, task actor.Task[int]) error {
			mu.Lock()
			first := !started[instance]
			started[instance] = true
			if len(started) == 2 && first {
				close(both)
			}
			mu.Unlock()
			if first {
				select {
				case <-both:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			ran.add(task.Payload)
			return nil
		}
	}
	cfg := Config[int]{Workers: 1, PollInterval: 10 * time.Millisecond}
	one := startOn(r, r.pool, "shared", handler("one"), cfg)
	two := startOn(r, newPool(t, r.dsn, 8), "shared", handler("two"), cfg)

	if err := one.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 20
	for i := range n {
		if _, err := two.Send(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	// Every process takes tasks through the fetch function: while the
	// actor is paused, a fetch of the 20 tasks, rolled back, takes none
	// (without the pause it would take those the instances have not).
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var taken int
	err = tx.QueryRow(ctx, expand(r.schema, "SELECT count(*) FROM {s}.fetch('shared', $1, 'probe', 60000000)"), n).Scan(&taken)
	tx.Rollback(ctx)
	if err != nil || taken != 0 {
		t.Fatalf("a fetch while the actor was paused took %d tasks (%v), want none", taken, err)
	}
	if got := ran.count(); got != 0 {
		t.Fatalf("%d tasks ran while the actor was paused", got)
	}
	if s := stats(t, one); s.Queued != n || !s.Paused {
		t.Errorf("stats while paused: %+v, want %d queued and Paused", s, n)
	}

	if err := two.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "every task run after Resume, on both instances", func() bool { return ran.count() == n })
	for i := range n {
		if ran.times(i) != 1 {
			t.Errorf("task %d ran %d times", i, ran.times(i))
		}
	}
	if s := stats(t, two); s.Paused {
		t.Errorf("stats after Resume: %+v, want not Paused", s)
	}
}

// TestResumeAndRunNowNotify checks that an Admin's Resume and RunNow, on
// a pool of their own, wake an instance that polls once an hour: the
// tasks they make due are inserted by hand, which notifies no one, so
// that without their notifications the tasks would wait for the next
// poll.
func TestResumeAndRunNowNotify(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	other := newPool(t, r.dsn, 2)
	admin, err := NewAdmin(t.Context(), other, r.schema)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan int, 10)
	a := start(r, "woken", forward(ran), Config[int]{Workers: 2, PollInterval: time.Hour})
	// A task sent from elsewhere and run shows the instance listening, and
	// leaves no wake-up pending once its completion is counted.
	sender := startOn[int](r, other, "woken", nil, Config[int]{})
	if _, err := sender.Send(ctx, 0); err != nil {
		t.Fatal(err)
	}
	within(t, ran, 30*time.Second, "the instance took no task sent from another pool")
	eventually(t, 10*time.Second, "the completion counted", func() bool { return stats(t, a).Completed == 1 })
	insert := func(payload int, due string) uint64 {
		var id int64
		if err := r.pool.QueryRow(ctx, expand(r.schema, `WITH i AS (
				INSERT INTO {s}.tasks (actor, type, payload, available_at) VALUES ('woken', 'int', $1, now() + $2::interval) RETURNING id
			), c AS (INSERT INTO {s}.counts (actor, accepted) VALUES ('woken', 1))
			SELECT id FROM i`), []byte{'0' + byte(payload)}, due).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return uint64(id)
	}

	// A task due in an hour, made due now.
	id := insert(1, "1 hour")
	if moved, err := admin.RunNow(ctx, id); err != nil || len(moved) != 1 {
		t.Fatalf("RunNow = %v, %v", moved, err)
	}
	if got := within(t, ran, 30*time.Second, "the task made due by RunNow did not run"); got != 1 {
		t.Errorf("ran %d, want 1", got)
	}
	eventually(t, 10*time.Second, "the completion counted", func() bool { return stats(t, a).Completed == 2 })

	// A task due now, held by a pause, let go by Resume.
	if err := admin.Pause(ctx, "woken"); err != nil {
		t.Fatal(err)
	}
	insert(2, "0")
	if err := admin.Resume(ctx, "woken"); err != nil {
		t.Fatal(err)
	}
	if got := within(t, ran, 30*time.Second, "the task held by the pause did not run after Resume"); got != 2 {
		t.Errorf("ran %d, want 2", got)
	}
}
