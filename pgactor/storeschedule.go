package pgactor

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// The store's statements on schedules and periods: registering and
// listing schedules, the scheduler's, UniqueFor's send, and the deletion
// of periods that have ended.

var stmtNow = prepare(`SELECT statement_timestamp()`)

// now returns the database's time: the scheduler's clock, so that the
// processes' clocks do not matter.
func (s *store) now(ctx context.Context) (time.Time, error) {
	var t time.Time
	err := s.pool.QueryRow(ctx, stmtNow.text).Scan(&t)
	return t.UTC(), err
}

// A storedSchedule is what putSchedule stores.
type storedSchedule struct {
	name, spec, typ string
	payload         []byte
	priority        int16
	missed          Missed
	next            time.Time
}

// stmtPutSchedule registers a schedule of @actor, if the actor is
// registered, or replaces it; a replacement with the same spec keeps its
// next fire time.
var stmtPutSchedule = prepare(`INSERT INTO {s}.schedules AS s (actor, name, spec, type, payload, priority, on_missed, next_at)
SELECT @actor, @name, @spec, @type, @payload, @priority, @on_missed, @next_at
WHERE EXISTS (SELECT FROM {s}.actors WHERE name = @actor)
ON CONFLICT (actor, name) DO UPDATE SET spec = excluded.spec, type = excluded.type, payload = excluded.payload,
	priority = excluded.priority, on_missed = excluded.on_missed,
	next_at = CASE WHEN s.spec = excluded.spec THEN s.next_at ELSE excluded.next_at END
RETURNING 1`, "actor", "name", "spec", "type", "payload", "priority", "on_missed", "next_at")

// putSchedule stores sc, and reports false if the actor is not
// registered.
func (s *store) putSchedule(ctx context.Context, sc storedSchedule) (bool, error) {
	var one int
	err := s.pool.QueryRow(ctx, stmtPutSchedule.in(s.schema), s.actor, sc.name, sc.spec, sc.typ, sc.payload, sc.priority, sc.missed.String(), sc.next).Scan(&one)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

var stmtDeleteSchedule = prepare(`DELETE FROM {s}.schedules WHERE actor = @actor AND name = @name RETURNING 1`, "actor", "name")

// deleteSchedule deletes the schedule name, and reports whether there was
// one.
func (s *store) deleteSchedule(ctx context.Context, db Querier, name string) (bool, error) {
	var one int
	err := db.QueryRow(ctx, stmtDeleteSchedule.in(s.schema), s.actor, name).Scan(&one)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

var stmtSchedules = prepare(`SELECT name, spec, type, payload, priority, on_missed,
	CASE WHEN next_at = 'infinity' THEN NULL ELSE next_at END, last_period, last_task, created_at
FROM {s}.schedules WHERE actor = @actor ORDER BY name`, "actor")

// schedules reads the actor's schedules.
func (s *store) schedules(ctx context.Context, db Querier) ([]ScheduleInfo, error) {
	rows, err := db.Query(ctx, stmtSchedules.in(s.schema), s.actor)
	return collect(rows, err, func(row pgx.CollectableRow) (ScheduleInfo, error) {
		in := ScheduleInfo{Actor: s.actor}
		var missed string
		var next, last *time.Time
		var task *int64
		err := row.Scan(&in.Name, &in.Spec, &in.Type, &in.Payload, &in.Priority, &missed, &next, &last, &task, &in.CreatedAt)
		in.OnMissed = parseMissed(missed)
		if next != nil {
			in.NextAt = next.UTC()
		}
		if last != nil {
			in.LastPeriod = last.UTC()
		}
		if task != nil {
			in.LastTaskID = uint64(*task)
		}
		in.CreatedAt = in.CreatedAt.UTC()
		return in, err
	})
}

var stmtActorExists = prepare(`SELECT EXISTS (SELECT FROM {s}.actors WHERE name = @actor)`, "actor")

// actorExists reports whether the actor is registered.
func (s *store) actorExists(ctx context.Context, db Querier) (bool, error) {
	var ok bool
	err := db.QueryRow(ctx, stmtActorExists.in(s.schema), s.actor).Scan(&ok)
	return ok, err
}

// The scheduler's transaction: dueSchedules locks the due schedules, then
// fire sends each one's task and moves it on, and wait reads how long
// until the next one is due.

// stmtDueSchedules locks the actor's schedules that are due, at most
// @limit, skipping those another process's scheduler holds, and returns
// them with the transaction's time.
var stmtDueSchedules = prepare(`SELECT name, spec, on_missed, next_at, now() FROM {s}.schedules
WHERE actor = @actor AND next_at <= now()
ORDER BY next_at LIMIT @limit
FOR UPDATE SKIP LOCKED`, "actor", "limit")

// A dueSchedule is a schedule whose fire time has come.
type dueSchedule struct {
	name, spec string
	missed     Missed
	due, now   time.Time
}

// dueSchedules locks, in tx, up to limit of the actor's due schedules.
func (s *store) dueSchedules(ctx context.Context, tx pgx.Tx, limit int) ([]dueSchedule, error) {
	rows, err := tx.Query(ctx, stmtDueSchedules.in(s.schema), s.actor, limit)
	return collect(rows, err, func(row pgx.CollectableRow) (dueSchedule, error) {
		var d dueSchedule
		var missed string
		err := row.Scan(&d.name, &d.spec, &missed, &d.due, &d.now)
		d.missed, d.due, d.now = parseMissed(missed), d.due.UTC(), d.now.UTC()
		return d, err
	})
}

// stmtFire sends the task of schedule @name for the period starting at
// @period and ending at @until, unless @period is NULL or that period's
// task was sent already — its row in unique_periods says so — and moves
// the schedule's next fire time to @next_at (NULL: never). The task takes
// its id from the tasks' sequence before it is inserted, so that the
// period's row can name it; its headers say which schedule and period it
// is for.
var stmtFire = prepare(`WITH n AS (
	SELECT nextval(pg_get_serial_sequence('{s}.tasks', 'id')) AS id WHERE @period::timestamptz IS NOT NULL
), g AS (
	INSERT INTO {s}.unique_periods (actor, kind, key, period_start, until, task_id)
	SELECT @actor, 'schedule', @name, @period, coalesce(@until::timestamptz, 'infinity'), n.id FROM n
	ON CONFLICT DO NOTHING
	RETURNING task_id
), i AS (
	INSERT INTO {s}.tasks (id, actor, type, payload, priority, available_at, headers)
	SELECT g.task_id, s.actor, s.type, s.payload, s.priority, statement_timestamp(), @headers::jsonb
	FROM g, {s}.schedules s WHERE s.actor = @actor AND s.name = @name
	RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, accepted) SELECT @actor, count(*) FROM i HAVING count(*) > 0
), u AS (
	UPDATE {s}.schedules SET next_at = coalesce(@next_at::timestamptz, 'infinity'),
		last_period = coalesce((SELECT @period FROM i), last_period),
		last_task = coalesce((SELECT id FROM i), last_task)
	WHERE actor = @actor AND name = @name
)
SELECT id, pg_notify(@channel, @actor) FROM i`, "actor", "name", "period", "until", "headers", "next_at", "channel")

// fire runs stmtFire in tx for the schedule name: a task for period
// (ending at until) unless period is zero, and next as its next fire time
// (zero: never). It returns the task's ID, 0 when it sent none.
func (s *store) fire(ctx context.Context, tx pgx.Tx, name string, period, until, next time.Time) (uint64, error) {
	var p, u, n *time.Time
	var headers *string
	if !period.IsZero() {
		p = &period
		h := periodHeaders(name, period)
		headers = &h
	}
	if !until.IsZero() {
		u = &until
	}
	if !next.IsZero() {
		n = &next
	}
	ids, err := s.scanIDs(tx.Query(ctx, stmtFire.in(s.schema), s.actor, name, p, u, headers, n, s.channel))
	if len(ids) == 0 {
		return 0, err
	}
	return ids[0], err
}

var stmtNextSchedule = prepare(`SELECT coalesce((extract(epoch FROM min(next_at) - clock_timestamp()) * 1e6)::bigint, -1)
FROM {s}.schedules WHERE actor = @actor AND next_at < 'infinity'`, "actor")

// untilNext returns how long until the actor's earliest schedule is due,
// by the database's clock; negative when it has none.
func (s *store) untilNext(ctx context.Context) (time.Duration, error) {
	var us int64
	err := s.pool.QueryRow(ctx, stmtNextSchedule.in(s.schema), s.actor).Scan(&us)
	if us == -1 {
		return -1, err
	}
	return time.Duration(max(us, 0)) * time.Microsecond, err
}

// Uniqueness for a period.

// sendFor inserts a task unless one with the same key was sent in the
// same period: the period is the bin of @period_us, counted from the Unix
// epoch, that the send's time falls in, and its row in unique_periods
// holds the key until the period ends. The row takes the task's id from
// the sequence before the task is inserted; on a conflict the row is
// updated in place, to return the first task's id and lock the row
// against a concurrent send. sendForNotify also wakes the listeners.
const sendFor = `WITH n AS (
	SELECT nextval(pg_get_serial_sequence('{s}.tasks', 'id')) AS id
), b AS (
	SELECT date_bin(@period_us::bigint * interval '1 microsecond', statement_timestamp(), timestamptz 'epoch') AS start
), g AS (
	INSERT INTO {s}.unique_periods AS p (actor, kind, key, period_start, until, task_id)
	SELECT @actor, 'key', @key, b.start, b.start + @period_us::bigint * interval '1 microsecond', n.id FROM n, b
	ON CONFLICT (actor, kind, key, period_start) DO UPDATE SET until = p.until
	RETURNING task_id
), i AS (
	INSERT INTO {s}.tasks (id, actor, type, payload, priority, available_at, headers)
	SELECT g.task_id, @actor, @type, @payload, @priority,
		coalesce(@at::timestamptz, statement_timestamp() + @delay_us::bigint * interval '1 microsecond'), @headers::jsonb
	FROM g, n WHERE g.task_id = n.id
	RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, accepted) SELECT @actor, count(*) FROM i HAVING count(*) > 0
)
SELECT g.task_id, EXISTS (SELECT FROM i)`

var (
	stmtSendFor       = prepare(sendFor+` FROM g`, "period_us", "actor", "key", "type", "payload", "priority", "at", "delay_us", "headers")
	stmtSendForNotify = prepare(sendFor+`, (SELECT count(*) FROM (SELECT pg_notify(@channel, @actor) FROM i) x) FROM g`,
		"period_us", "actor", "key", "type", "payload", "priority", "at", "delay_us", "headers", "channel")
)

// sendFor inserts a task for payload on db, with o's type, priority, time,
// headers, and its UniqueFor key and period, and returns its ID and true; or the
// ID of the task sent in the same period with that key, and false.
func (s *store) sendFor(ctx context.Context, db Querier, payload []byte, o *sendOptions, notify bool) (uint64, bool, error) {
	args := []any{o.period.Microseconds(), s.actor, o.periodKey, o.typ, payload, o.priority, o.runAt(), o.delay.Microseconds(), o.headers}
	st := stmtSendFor
	if notify {
		st, args = stmtSendForNotify, append(args, s.channel)
	}
	var id int64
	var fresh bool
	dst := []any{&id, &fresh}
	if notify {
		dst = append(dst, nil)
	}
	err := db.QueryRow(ctx, st.in(s.schema), args...).Scan(dst...)
	return uint64(id), fresh, err
}

var stmtDropEndedPeriods = prepare(`DELETE FROM {s}.unique_periods WHERE until < now()`)

// dropEndedPeriods deletes the rows of unique_periods whose period has
// ended, and returns how many.
func (s *store) dropEndedPeriods(ctx context.Context) (int, error) {
	tag, err := s.pool.Exec(ctx, stmtDropEndedPeriods.in(s.schema))
	return int(tag.RowsAffected()), err
}
