package console

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/actorpool/actorpool/pgactor"
)

// Postgres adapts a, the Admin of one schema's actors on PostgreSQL, to
// the console. Its task IDs are unique across the schema, so its keys
// name an ID alone; it offers every state, the canceling one included.
func Postgres(a *pgactor.Admin) Admin { return pgAdmin{a} }

// pgAdmin is the console's Admin over a pgactor.Admin.
type pgAdmin struct{ a *pgactor.Admin }

// pgStates are the states that a filter may name, in the order the page
// offers them.
var pgStates = []TaskState{TaskQueued, TaskScheduled, TaskRetrying, TaskRunning, TaskCanceling, TaskDead}

func (p pgAdmin) Backend() Backend {
	return Backend{Scope: "schema", Name: p.a.Schema(), Package: "pgactor", States: pgStates, Priorities: true, Owners: true}
}

// pgErr marks pgactor's errors of an actor or task that is not there.
func pgErr(err error) error {
	if errors.Is(err, pgactor.ErrUnknownActor) || errors.Is(err, pgactor.ErrNoTask) {
		return NotFound(err)
	}
	return err
}

func (p pgAdmin) Actors(ctx context.Context) ([]ActorInfo, error) {
	actors, err := p.a.Actors(ctx)
	out := make([]ActorInfo, len(actors))
	for i, a := range actors {
		s := a.Stats
		out[i] = ActorInfo{Name: a.Name, Paused: a.Paused, PausedAt: a.PausedAt, Stats: Stats{
			Accepted: s.Accepted, Completed: s.Completed, DeadLettered: s.DeadLettered, Failed: s.Failed,
			Retried: s.Retried, Lost: s.Lost, Replayed: s.Replayed,
			Queued: s.Queued, Scheduled: s.Scheduled, Retrying: s.Retrying, Running: s.Running,
			DeadLetters: s.DeadLetters, OldestQueued: s.OldestQueued,
		}}
	}
	return out, pgErr(err)
}

// pgKey checks that k names a task of a schema: by its ID alone.
func pgKey(k TaskKey) error {
	if k.Actor != "" || k.Dead {
		return NotFound(fmt.Errorf("task %s: %w: tasks in PostgreSQL are named by their id alone, such as %d", k, pgactor.ErrNoTask, k.ID))
	}
	return nil
}

func pgTask(t pgactor.TaskInfo) TaskInfo {
	return TaskInfo{
		Ref: TaskKey{ID: t.ID}, ID: t.ID, Actor: t.Actor, State: TaskState(t.State), Reason: t.Reason,
		Type: t.Type, Priority: int(t.Priority), Key: t.Key, Enqueued: t.Enqueued, RunAt: t.RunAt,
		Started: t.Started, Attempt: t.Attempt, Runs: t.Runs, Lost: t.Lost, Owner: t.Owner,
		LastError: t.LastError, DeadAt: t.DeadAt, Payload: t.Payload,
	}
}

func (p pgAdmin) Task(ctx context.Context, key TaskKey) (TaskInfo, error) {
	if err := pgKey(key); err != nil {
		return TaskInfo{}, err
	}
	t, err := p.a.Task(ctx, key.ID)
	if err != nil {
		return TaskInfo{}, pgErr(err)
	}
	return pgTask(t), nil
}

// storable reports whether PostgreSQL can hold s as text, as pgactor
// requires of every name and key it stores: one that is not matches
// nothing, and the database would refuse it as an error.
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// unknownActor is the error of an actor name that pgactor could not have
// stored.
func unknownActor(name string) error {
	return NotFound(fmt.Errorf("actor %q: %w: an actor's name is UTF-8 text without NUL", name, pgactor.ErrUnknownActor))
}

func (p pgAdmin) Tasks(ctx context.Context, f TaskFilter) (TaskPage, error) {
	if err := pgKey(f.After); err != nil && !f.After.IsZero() {
		return TaskPage{}, err
	}
	if !storable(f.Actor) || !storable(f.Key) || f.After.ID > math.MaxInt64 {
		// No task has that actor or key, nor an ID past MaxInt64.
		return TaskPage{}, nil
	}
	pf := pgactor.TaskFilter{Actor: f.Actor, Key: f.Key, Since: f.Since, Until: f.Until, After: f.After.ID, Limit: f.Limit}
	for _, s := range f.States {
		pf.States = append(pf.States, pgactor.TaskState(s))
	}
	page, err := p.a.Tasks(ctx, pf)
	if err != nil {
		return TaskPage{}, pgErr(err)
	}
	out := TaskPage{Tasks: make([]TaskInfo, len(page.Tasks))}
	for i, t := range page.Tasks {
		out.Tasks[i] = pgTask(t)
	}
	if page.Next != 0 {
		out.Next = TaskKey{ID: page.Next}
	}
	return out, nil
}

func (p pgAdmin) Replay(ctx context.Context, key TaskKey) (TaskKey, bool, error) {
	if err := pgKey(key); err != nil {
		return TaskKey{}, false, err
	}
	moved, err := p.a.Replay(ctx, key.ID)
	if err != nil || len(moved) == 0 {
		return TaskKey{}, false, pgErr(err)
	}
	return TaskKey{ID: moved[0]}, true, nil
}

func (p pgAdmin) Delete(ctx context.Context, key TaskKey) (bool, error) {
	if err := pgKey(key); err != nil {
		return false, err
	}
	deleted, err := p.a.Delete(ctx, key.ID)
	return len(deleted) > 0, pgErr(err)
}

func (p pgAdmin) Pause(ctx context.Context, actor string) error {
	if !storable(actor) {
		return unknownActor(actor)
	}
	return pgErr(p.a.Pause(ctx, actor))
}

func (p pgAdmin) Resume(ctx context.Context, actor string) error {
	if !storable(actor) {
		return unknownActor(actor)
	}
	return pgErr(p.a.Resume(ctx, actor))
}
