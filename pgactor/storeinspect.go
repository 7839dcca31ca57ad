package pgactor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The store's statements that read tasks as an operator sees them, and
// those that move waiting tasks or pause an actor on an operator's
// request: the Admin's, and the Actor methods that share them.

// taskStateOf is a live task's TaskState, as taskstates.go tells the
// states apart; a lease that ran out shows as running.
const taskStateOf = `CASE WHEN owner IS NOT NULL AND canceled THEN 'canceling'
	WHEN owner IS NOT NULL THEN 'running'
	WHEN available_at <= now() THEN 'queued'
	WHEN attempt = 0 THEN 'scheduled'
	ELSE 'retrying' END`

// liveColumns and deadColumns are a TaskInfo's columns, read from tasks
// and from dead_letters, in the order scanTaskInfo reads them.
const (
	liveColumns = `id, actor, type, ` + taskStateOf + ` AS state, payload, priority, unique_key, enqueued_at,
	available_at AS run_at, started_at, attempt, runs, lost, owner, last_error, NULL::text AS reason, NULL::timestamptz AS dead_at, headers`
	deadColumns = `id, actor, type, 'dead'::text, payload, priority, unique_key, enqueued_at,
	NULL::timestamptz, started_at, attempts, runs, lost, NULL::text, last_error, reason, dead_at, headers`
)

// scanTaskInfo reads a row of liveColumns or deadColumns.
func scanTaskInfo(row pgx.CollectableRow) (TaskInfo, error) {
	var (
		t                           TaskInfo
		id                          int64
		state                       string
		key, owner, lastErr, reason *string
		runAt, started, deadAt      *time.Time
	)
	err := row.Scan(&id, &t.Actor, &t.Type, &state, &t.Payload, &t.Priority, &key, &t.Enqueued,
		&runAt, &started, &t.Attempt, &t.Runs, &t.Lost, &owner, &lastErr, &reason, &deadAt, &t.Headers)
	t.ID, t.State = uint64(id), TaskState(state)
	for _, f := range []struct {
		dst *string
		src *string
	}{{&t.Key, key}, {&t.Owner, owner}, {&t.LastError, lastErr}, {&t.Reason, reason}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	for _, f := range []struct {
		dst *time.Time
		src *time.Time
	}{{&t.RunAt, runAt}, {&t.Started, started}, {&t.DeadAt, deadAt}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return t, err
}

// stmtTaskInfo reads task @id, live or dead.
var stmtTaskInfo = prepare(`SELECT `+liveColumns+` FROM {s}.tasks WHERE id = @id
UNION ALL SELECT `+deadColumns+` FROM {s}.dead_letters WHERE id = @id`, "id")

// taskInfo reads task id, live or dead: ok is false when there is none.
func (s *store) taskInfo(ctx context.Context, id uint64) (t TaskInfo, ok bool, err error) {
	rows, err := s.pool.Query(ctx, stmtTaskInfo.in(s.schema), int64(id))
	tasks, err := collect(rows, err, scanTaskInfo)
	if len(tasks) == 0 {
		return TaskInfo{}, false, err
	}
	return tasks[0], true, err
}

// The listing of tasks: the live tasks and the dead letters that match,
// merged in id order. Each part is read in id order from an index — the
// primary key, or dead_letters_actor — and stops at the page's end, and
// the merge sorts nothing, so that a page costs what it returns and the
// rows its filters skip, however long the tables are
// (TestTasksUseIndexes). For an actor with few live tasks among many, the
// planner reads that actor's rows from the fetch's index, tasks_fetch,
// and sorts them instead. No index on tasks (actor, id) serves the
// listing: it would cost every fetch, heartbeat and retry a write
// (migrate.go). A filter left empty is passed as NULL
// (an empty array for the states), which makes its condition true.
//
// One actor's listing and every actor's are different statements, since
// a generic plan for "actor = @actor OR @actor IS NULL" could not use
// an index on the actor; so are those with a unique key, whose live part
// looks the key up in tasks_unique_key, once per registered actor (every
// actor registers itself before it sends), and sorts what it finds: at
// most a row per actor. Dead letters have no index on their key: their
// part walks them in id order until the page is full.
const (
	listFilter = `id > @after
	AND (@since::timestamptz IS NULL OR enqueued_at >= @since) AND (@until::timestamptz IS NULL OR enqueued_at < @until)`
	anyState = `cardinality(@states::text[]) = 0 OR `
)

// listTasks returns a listing statement's text, with live and dead the
// conditions on the actor and the key of each part.
func listTasks(live, dead string) string {
	return `(SELECT ` + liveColumns + ` FROM {s}.tasks WHERE ` + live + ` AND ` + listFilter + `
	AND (` + anyState + taskStateOf + ` = ANY(@states::text[]))
	ORDER BY id LIMIT @limit)
UNION ALL
(SELECT ` + deadColumns + ` FROM {s}.dead_letters WHERE ` + dead + ` AND ` + listFilter + `
	AND (` + anyState + `'dead' = ANY(@states::text[]))
	ORDER BY id LIMIT @limit)
ORDER BY id LIMIT @limit`
}

var (
	stmtListActor    = prepare(listTasks(`actor = @actor`, `actor = @actor`), "actor", "after", "since", "until", "states", "limit")
	stmtListAll      = prepare(listTasks(`true`, `true`), "after", "since", "until", "states", "limit")
	stmtListActorKey = prepare(listTasks(`actor = @actor AND unique_key = @key`, `actor = @actor AND unique_key = @key`),
		"actor", "key", "after", "since", "until", "states", "limit")
	stmtListAllKey = prepare(listTasks(`actor IN (SELECT name FROM {s}.actors) AND unique_key = @key`, `unique_key = @key`),
		"key", "after", "since", "until", "states", "limit")
)

// stmtListPlan sets, for the listing's transaction, what the planner may
// do: without statistics, or with a filter it takes for selective, it
// would read all the rows of an actor, or the whole table, and sort them,
// where walking an index in id order stops at the page's end.
var stmtListPlan = prepare(`SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true)`)

// listStatement returns the listing statement for f and its arguments,
// reading up to limit rows.
func listStatement(f TaskFilter, limit int) (*statement, []any) {
	var since, until *time.Time
	if !f.Since.IsZero() {
		since = &f.Since
	}
	if !f.Until.IsZero() {
		until = &f.Until
	}
	states := make([]string, len(f.States))
	for i, st := range f.States {
		states[i] = string(st)
	}
	args := []any{int64(f.After), since, until, states, limit}
	switch {
	case f.Actor == "" && f.Key == "":
		return stmtListAll, args
	case f.Actor == "":
		return stmtListAllKey, append([]any{f.Key}, args...)
	case f.Key == "":
		return stmtListActor, append([]any{f.Actor}, args...)
	}
	return stmtListActorKey, append([]any{f.Actor, f.Key}, args...)
}

// tasks reads up to limit tasks that f, checked, selects, in id order.
func (s *store) tasks(ctx context.Context, f TaskFilter, limit int) (tasks []TaskInfo, err error) {
	st, args := listStatement(f, limit)
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, stmtListPlan.text); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, st.in(s.schema), args...)
		tasks, err = collect(rows, err, scanTaskInfo)
		return err
	})
	return tasks, err
}

// stmtActorsOf reads the actor of each of the tasks @ids, live or dead.
var stmtActorsOf = prepare(`SELECT id, actor FROM {s}.tasks WHERE id = ANY(@ids::bigint[])
UNION ALL SELECT id, actor FROM {s}.dead_letters WHERE id = ANY(@ids::bigint[])`, "ids")

// actorsOf returns the tasks ids that exist, live or dead, grouped by
// their actor. A task never changes actor, so the groups stay true.
func (s *store) actorsOf(ctx context.Context, ids []uint64) (map[string][]uint64, error) {
	rows, err := s.pool.Query(ctx, stmtActorsOf.in(s.schema), toInt64s(ids))
	if err != nil {
		return nil, err
	}
	by := map[string][]uint64{}
	var id int64
	var name string
	_, err = pgx.ForEachRow(rows, []any{&id, &name}, func() error {
		by[name] = append(by[name], uint64(id))
		return nil
	})
	return by, err
}

// stmtRunNow makes the actor's waiting tasks @ids due now — those due
// already keep their place — and returns their ids, waking the actor's
// listeners. A running task is not moved. The rows are locked in id
// order, so that overlapping requests wait rather than deadlock, and the
// owner is checked again once locked; a row a fetch took meanwhile stays
// locked all the same, which can deadlock with a round of the pump
// (runAgain).
var stmtRunNow = prepare(`WITH picked AS (
	SELECT id FROM {s}.tasks WHERE actor = @actor AND id = ANY(@ids::bigint[]) AND owner IS NULL ORDER BY id FOR UPDATE
), u AS (
	UPDATE {s}.tasks t SET available_at = least(t.available_at, now()) FROM picked WHERE t.id = picked.id RETURNING t.id
)
SELECT id, pg_notify(@channel, @actor) FROM u`, "actor", "ids", "channel")

// runNow makes the actor's waiting tasks among ids due now, and returns
// those it found waiting, in order.
func (s *store) runNow(ctx context.Context, ids []uint64) ([]uint64, error) {
	moved, err := runAgain(ctx, func() ([]uint64, error) {
		return s.scanIDs(s.pool.Query(ctx, stmtRunNow.in(s.schema), s.actor, toInt64s(ids), s.channel))
	})
	slices.Sort(moved)
	return moved, err
}

// stmtDeleteTasks deletes the actor's waiting tasks and dead letters
// @ids, and returns their ids. A deleted waiting task is counted
// dead-lettered — as moved to the dead letters and deleted there at once
// — so that Stats' identity holds and no counter goes down. A running
// task is not deleted. The rows are locked as stmtRunNow locks them.
var stmtDeleteTasks = prepare(`WITH pt AS (
	SELECT id FROM {s}.tasks WHERE actor = @actor AND id = ANY(@ids::bigint[]) AND owner IS NULL ORDER BY id FOR UPDATE
), dt AS (
	DELETE FROM {s}.tasks t USING pt WHERE t.id = pt.id RETURNING t.id
), pd AS (
	SELECT id FROM {s}.dead_letters WHERE actor = @actor AND id = ANY(@ids::bigint[]) ORDER BY id FOR UPDATE
), dd AS (
	DELETE FROM {s}.dead_letters d USING pd WHERE d.id = pd.id RETURNING d.id
), c AS (
	INSERT INTO {s}.counts (actor, dead_lettered) SELECT @actor, count(*) FROM dt HAVING count(*) > 0
)
SELECT id FROM dt UNION ALL SELECT id FROM dd`, "actor", "ids")

// deleteTasks deletes the actor's waiting tasks and dead letters among
// ids, and returns those it deleted, in order.
func (s *store) deleteTasks(ctx context.Context, ids []uint64) ([]uint64, error) {
	deleted, err := runAgain(ctx, func() ([]uint64, error) {
		return s.scanIDs(s.pool.Query(ctx, stmtDeleteTasks.in(s.schema), s.actor, toInt64s(ids)))
	})
	slices.Sort(deleted)
	return deleted, err
}

// runTries bounds how many times runAgain runs a statement.
const runTries = 5

// runAgain runs try, a statement that is a transaction of its own, and
// runs it again, up to runTries times in all, while PostgreSQL aborts it
// to break a deadlock (40P01) or for a serialization failure (40001). An
// aborted statement changed nothing, and the next try reads the tables
// anew: it does and returns what the statement run alone then would.
//
// An operator's RunNow or Delete meets both in a benign race with the
// workers: a task it found waiting, but that a fetch took before the
// statement locked its row, is left out. At READ COMMITTED its row stays
// locked until the statement ends, and a round of the pump that settles
// the task waits for it, while the statement may wait for a row the round
// holds (TestAdminRacesRound); at a default isolation of REPEATABLE READ
// the statement fails instead (TestAdminRacesFetch). Of a deadlock,
// PostgreSQL aborts one side: the statement, run again here, or the round,
// run again as any failed round is (pump.go). Rounds that locked their
// rows in id order would close no such cycle, but at the cost of a write
// for every completion.
func runAgain[T any](ctx context.Context, try func() (T, error)) (T, error) {
	for n := 1; ; n++ {
		v, err := try()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "40P01" && pe.Code != "40001" || ctx.Err() != nil {
			return v, err
		}
		if n == runTries {
			return v, fmt.Errorf("aborted %d times: %w", n, err)
		}
	}
}

// stmtPause marks @actor paused, keeping the time of an earlier pause,
// and returns when it was paused; no row when the actor is not
// registered. The fetch of every process reads paused_at.
var stmtPause = prepare(`UPDATE {s}.actors SET paused_at = coalesce(paused_at, now()) WHERE name = @actor RETURNING paused_at`, "actor")

// pause pauses the actor; ok is false when it is not registered.
func (s *store) pause(ctx context.Context) (ok bool, err error) {
	var at time.Time
	err = s.pool.QueryRow(ctx, stmtPause.in(s.schema), s.actor).Scan(&at)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

// stmtResume clears @actor's pause and wakes the listeners of every
// process, so that they fetch at once rather than at their next poll; no
// row when the actor is not registered.
var stmtResume = prepare(`WITH u AS (
	UPDATE {s}.actors SET paused_at = NULL WHERE name = @actor RETURNING name
)
SELECT name, pg_notify(@channel, name) FROM u`, "actor", "channel")

// resume resumes the actor; ok is false when it is not registered.
func (s *store) resume(ctx context.Context) (ok bool, err error) {
	rows, err := s.pool.Query(ctx, stmtResume.in(s.schema), s.actor, s.channel)
	if err != nil {
		return false, err
	}
	var name string
	_, err = pgx.ForEachRow(rows, []any{&name, nil}, func() error {
		ok = true
		return nil
	})
	return ok, err
}

var stmtActorInfos = prepare(`SELECT name, paused_at FROM {s}.actors ORDER BY name`)

// actorInfos lists the schema's actors with when each was paused (nil if
// it is not).
func (s *store) actorInfos(ctx context.Context) ([]ActorInfo, error) {
	rows, err := s.pool.Query(ctx, stmtActorInfos.in(s.schema))
	return collect(rows, err, func(row pgx.CollectableRow) (a ActorInfo, err error) {
		var at *time.Time
		err = row.Scan(&a.Name, &at)
		if at != nil {
			a.Paused, a.PausedAt = true, *at
		}
		return a, err
	})
}
