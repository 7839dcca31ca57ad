package console

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/actorpool/actorpool/actor"
	"github.com/actorpool/actorpool/internal/testenv"
	"github.com/actorpool/actorpool/pgactor"
)

// TestPostgres checks the adapter of pgactor.Admin against a schema of
// its own: the types carried over, keys by ID alone, and the errors of
// what is not there marked NotFound.
func TestPostgres(t *testing.T) {
	dsn := testenv.Postgres(t)
	testenv.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	pool := newPool(t, dsn)
	schema := newSchema(t, pool)
	quiet := slog.New(slog.DiscardHandler)
	fail := func(ctx context.Context, task actor.Task[mail]) error {
		return actor.Permanent(errors.New("smtp: 550 " + task.Payload.To))
	}
	bounce, err := pgactor.New(ctx, pool, "bounce", fail, pgactor.Config[mail]{Schema: schema, Workers: 1, MaxAttempts: 1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 10*time.Second, bounce.Close)
	queue, err := pgactor.New[mail](ctx, pool, "queue", nil, pgactor.Config[mail]{Schema: schema, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	testenv.CloseAtEnd(t, 10*time.Second, queue.Close)
	dead, err := bounce.Send(ctx, mail{To: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := queue.Send(ctx, mail{To: "bob"}, pgactor.UniqueKey("k1"))
	if err != nil {
		t.Fatal(err)
	}
	pa, err := pgactor.NewAdmin(ctx, pool, schema)
	if err != nil {
		t.Fatal(err)
	}
	ad := Postgres(pa)
	for end := time.Now().Add(30 * time.Second); ; {
		if s, err := bounce.Stats(ctx); err == nil && s.DeadLetters == 1 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("no dead letter after 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}

	if b := ad.Backend(); b.Scope != "schema" || b.Name != schema || b.Package != "pgactor" || !slices.Equal(b.States, pgStates) || !b.Priorities || !b.Owners {
		t.Errorf("Backend() = %+v", b)
	}
	if err := ad.Pause(ctx, "queue"); err != nil {
		t.Fatal(err)
	}
	actors, err := ad.Actors(ctx)
	if err != nil || len(actors) != 2 || actors[0].Name != "bounce" || actors[0].Stats.DeadLetters != 1 ||
		!actors[1].Paused || actors[1].PausedAt.IsZero() || actors[1].Stats.Queued != 1 {
		t.Errorf("Actors() = %+v, %v; want bounce with a dead letter, queue paused with one queued", actors, err)
	}
	page, err := ad.Tasks(ctx, TaskFilter{Key: "k1", Limit: 10})
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].Ref != (TaskKey{ID: waiting}) || page.Tasks[0].State != TaskQueued || !page.Next.IsZero() {
		t.Errorf("Tasks(key k1) = %+v, %v; want task %d queued", page, err, waiting)
	}
	page, err = ad.Tasks(ctx, TaskFilter{Limit: 1})
	if err != nil || len(page.Tasks) != 1 || page.Next != page.Tasks[0].Ref {
		t.Errorf("Tasks(limit 1) = %+v, %v; want one task, and a Next of its key", page, err)
	}
	got, err := ad.Task(ctx, TaskKey{ID: dead})
	if err != nil || got.State != TaskDead || got.Reason == "" || got.LastError != "smtp: 550 ann" || got.Actor != "bounce" {
		t.Errorf("Task(%d) = %+v, %v; want a dead letter of bounce", dead, got, err)
	}
	if _, ok, err := ad.Replay(ctx, TaskKey{ID: waiting}); ok || err != nil {
		t.Errorf("Replay of a queued task: %v, %v; want false, nil", ok, err)
	}
	if k, ok, err := ad.Replay(ctx, TaskKey{ID: dead}); !ok || err != nil || k.IsZero() {
		t.Errorf("Replay(%d) = %v, %v, %v; want the replayed task's key", dead, k, ok, err)
	}
	if ok, err := ad.Delete(ctx, TaskKey{ID: waiting}); !ok || err != nil {
		t.Errorf("Delete(%d) = %v, %v; want true", waiting, ok, err)
	}
	if ok, err := ad.Delete(ctx, TaskKey{ID: waiting}); ok || err != nil {
		t.Errorf("Delete(%d) again = %v, %v; want false, nil", waiting, ok, err)
	}
	if err := ad.Resume(ctx, "queue"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"Task of no task", func() error { _, err := ad.Task(ctx, TaskKey{ID: 1 << 40}); return err }()},
		{"Task of an actor's key", func() error { _, err := ad.Task(ctx, TaskKey{Actor: "queue", ID: waiting}); return err }()},
		{"Tasks after an actor's key", func() error {
			_, err := ad.Tasks(ctx, TaskFilter{After: TaskKey{Actor: "queue", ID: 1}, Limit: 1})
			return err
		}()},
		{"Replay of a dead key", func() error { _, _, err := ad.Replay(ctx, TaskKey{Actor: "bounce", Dead: true, ID: dead}); return err }()},
		{"Delete of an actor's key", func() error { _, err := ad.Delete(ctx, TaskKey{Actor: "queue", ID: 1}); return err }()},
		{"Pause of no actor", ad.Pause(ctx, "nobody")},
		{"Resume of no actor", ad.Resume(ctx, "nobody")},
	} {
		if !IsNotFound(tt.err) {
			t.Errorf("%s: %v; want an error marked NotFound", tt.name, tt.err)
		}
	}
}
