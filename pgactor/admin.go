package pgactor

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/actorpool/actorpool/pgpool"
)

// An Admin operates the durable actors of one schema without knowing
// their payload types: what an operator's tool, or the console of
// cmd/actorpool, uses. It reads tasks as stored — their payloads encoded —
// moves waiting ones, cancels, replays and deletes, and pauses and resumes
// actors, for every process running them. It holds nothing but the pool
// and the schema's name, and is safe for concurrent use.
type Admin struct {
	pool   *pgpool.Pool
	schema string
}

// NewAdmin returns an Admin of the actors in schema (DefaultSchema when
// empty) on pool, after checking the schema's name, and that it has been
// migrated to SchemaVersion: otherwise the error wraps ErrNoSchema and
// says what to run. ctx bounds that check; the Admin does not keep it.
func NewAdmin(ctx context.Context, pool *pgpool.Pool, schema string) (*Admin, error) {
	if schema == "" {
		schema = DefaultSchema
	}
	if pool == nil {
		return nil, fmt.Errorf("pgactor.NewAdmin(%q): the pool is nil", schema)
	}
	if err := checkSchema(schema); err != nil {
		return nil, fmt.Errorf("pgactor.NewAdmin: %w", err)
	}
	if err := checkVersion(ctx, pool, schema); err != nil {
		return nil, fmt.Errorf("pgactor.NewAdmin(%q): %w", schema, err)
	}
	return &Admin{pool: pool, schema: schema}, nil
}

// Schema returns the schema of the actors' tables.
func (a *Admin) Schema() string { return a.schema }

// store returns a store for the statements on the actor's tasks.
func (a *Admin) store(actor string) *store {
	return &store{pool: a.pool, schema: a.schema, actor: actor, channel: channelName(a.schema)}
}

// err wraps an error of the named operation, turning a missing table into
// ErrNoSchema.
func (a *Admin) err(what string, err error) error {
	if isUndefined(err) {
		return fmt.Errorf("pgactor: admin of schema %q: %s: %w: %w", a.schema, what, ErrNoSchema, err)
	}
	return fmt.Errorf("pgactor: admin of schema %q: %s: %w", a.schema, what, err)
}

// Actors returns the actors registered in the schema, in the order of
// their names, each with whether it is paused and its Stats. Each
// actor's Stats is read from a snapshot of its own.
func (a *Admin) Actors(ctx context.Context) ([]ActorInfo, error) {
	infos, err := a.store("").actorInfos(ctx)
	if err != nil {
		return nil, a.err("list actors", err)
	}
	for i := range infos {
		if infos[i].Stats, err = a.Stats(ctx, infos[i].Name); err != nil {
			return nil, err
		}
	}
	return infos, nil
}

// Task returns the task with the given ID, live or a dead letter. It
// fails with ErrNoTask when there is none.
func (a *Admin) Task(ctx context.Context, id uint64) (TaskInfo, error) {
	return readTask(ctx, a.store(""), id, "", a.err)
}

// readTask reads task id, of actor only unless actor is "".
func readTask(ctx context.Context, s *store, id uint64, actor string, wrap func(string, error) error) (TaskInfo, error) {
	t, ok, err := s.taskInfo(ctx, id)
	switch {
	case err != nil:
		return TaskInfo{}, wrap(fmt.Sprintf("read task %d", id), err)
	case !ok || actor != "" && t.Actor != actor:
		return TaskInfo{}, wrap(fmt.Sprintf("read task %d", id), ErrNoTask)
	}
	return t, nil
}

// Tasks returns a page of the tasks f selects, live and dead, in the
// order of their IDs; pass the page's Next as the next filter's After to
// read the next. A page is read from one snapshot, but pages from
// different ones: a task that moves between two reads may show on both
// pages or on neither, never twice on one. Each page is read through
// indexes, in ID order, at a cost that does not grow with the tables. A
// filter with a Limit out of 0 to MaxTaskLimit, an unknown state, Since
// not before Until, or an After above math.MaxInt64 is refused with an
// error wrapping ErrBadFilter.
func (a *Admin) Tasks(ctx context.Context, f TaskFilter) (TaskPage, error) {
	return readTasks(ctx, a.store(""), f, a.err)
}

// readTasks reads the page f selects.
func readTasks(ctx context.Context, s *store, f TaskFilter, wrap func(string, error) error) (TaskPage, error) {
	if err := f.check(); err != nil {
		return TaskPage{}, err
	}
	limit := f.Limit
	if limit == 0 {
		limit = 100
	}
	// One more than the page, to know whether another follows.
	tasks, err := s.tasks(ctx, f, limit+1)
	if err != nil {
		return TaskPage{}, wrap("list tasks", err)
	}
	page := TaskPage{Tasks: tasks}
	if len(tasks) > limit {
		page.Tasks = tasks[:limit]
		page.Next = tasks[limit-1].ID
	}
	return page, nil
}

// RunNow makes the waiting tasks among ids — queued, scheduled or
// retrying — due now, and returns their IDs, in order; tasks queued
// already keep their place in the queue. Each process running their actor
// is notified, and takes them at once. A running task, a dead letter and
// an unknown ID are left out. The tasks of one actor move in one
// transaction; those of several actors in one each.
func (a *Admin) RunNow(ctx context.Context, ids ...uint64) ([]uint64, error) {
	return a.eachActor(ctx, "run now", ids, (*store).runNow)
}

// Delete deletes the waiting tasks and the dead letters among ids, and
// returns their IDs, in order. A running task is not deleted, since its
// handler runs on regardless: cancel it (Cancel) instead. A deleted
// waiting task counts in Stats.DeadLettered, as a task dead-lettered and
// deleted at once, so that Stats' identity holds.
func (a *Admin) Delete(ctx context.Context, ids ...uint64) ([]uint64, error) {
	return a.eachActor(ctx, "delete", ids, (*store).deleteTasks)
}

// Replay moves the dead letters among ids back to the queue, due at once,
// and returns the IDs it moved, in order, as Actor.Replay does.
func (a *Admin) Replay(ctx context.Context, ids ...uint64) ([]uint64, error) {
	return a.eachActor(ctx, "replay", ids, (*store).replay)
}

// eachActor runs move on the ids of each actor's tasks among ids, and
// returns what it returned, in order.
func (a *Admin) eachActor(ctx context.Context, what string, ids []uint64, move func(*store, context.Context, []uint64) ([]uint64, error)) ([]uint64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	by, err := a.store("").actorsOf(ctx, ids)
	if err != nil {
		return nil, a.err(what, err)
	}
	var out []uint64
	for _, name := range slices.Sorted(maps.Keys(by)) {
		moved, err := move(a.store(name), ctx, by[name])
		if err != nil {
			return out, a.err(what, err)
		}
		out = append(out, moved...)
	}
	slices.Sort(out)
	return out, nil
}

// Cancel cancels the tasks with the given IDs, as Actor.Cancel does, and
// returns how many it canceled.
func (a *Admin) Cancel(ctx context.Context, ids ...uint64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	by, err := a.store("").actorsOf(ctx, ids)
	if err != nil {
		return 0, a.err("cancel", err)
	}
	found := 0
	for _, name := range slices.Sorted(maps.Keys(by)) {
		n, err := cancelTasks(ctx, a.store(name), by[name])
		found += n
		if err != nil {
			return found, a.err("cancel", err)
		}
	}
	return found, nil
}

// cancelTasks cancels the actor's tasks ids: dead-letters those that
// wait, marks those that run.
func cancelTasks(ctx context.Context, s *store, ids []uint64) (int, error) {
	found := 0
	for _, id := range ids {
		n, err := s.cancel(ctx, id)
		if err != nil {
			return found, err
		}
		found += n
	}
	return found, nil
}

// Pause pauses the actor named name, in every process running it: none
// takes its tasks until Resume, and tasks sent meanwhile wait. Running
// tasks run on, and so do those of a fetch that began before Pause
// committed: Pause does not wait for fetches in flight, which read the
// flag without a lock so as not to serialize every fetch on one row. It
// fails with ErrUnknownActor, changing nothing, when no New
// has registered the name in the schema. Pausing a paused actor keeps the
// time it was first paused.
func (a *Admin) Pause(ctx context.Context, name string) error {
	return pause(ctx, a.store(name), a.err)
}

// Resume resumes the actor named name, paused by Pause, and notifies every
// process running it, which takes its due tasks at once. It fails with
// ErrUnknownActor, changing nothing, when no New has registered the name.
func (a *Admin) Resume(ctx context.Context, name string) error {
	return resume(ctx, a.store(name), a.err)
}

func pause(ctx context.Context, s *store, wrap func(string, error) error) error {
	ok, err := s.pause(ctx)
	switch {
	case err != nil:
		return wrap(fmt.Sprintf("pause %q", s.actor), err)
	case !ok:
		return wrap(fmt.Sprintf("pause %q", s.actor), ErrUnknownActor)
	}
	return nil
}

func resume(ctx context.Context, s *store, wrap func(string, error) error) error {
	ok, err := s.resume(ctx)
	switch {
	case err != nil:
		return wrap(fmt.Sprintf("resume %q", s.actor), err)
	case !ok:
		return wrap(fmt.Sprintf("resume %q", s.actor), ErrUnknownActor)
	}
	return nil
}

// Stats reads the counters and gauges of the actor named name, as
// ReadStats does; Workers, Busy and Idle are zero. It fails with
// ErrUnknownActor when no New has registered the name.
func (a *Admin) Stats(ctx context.Context, name string) (Stats, error) {
	return ReadStats(ctx, a.pool, a.schema, name)
}
