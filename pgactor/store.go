package pgactor

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/actorpool/actorpool/pgpool"
	"github.com/jackc/pgx/v5"
)

// A store runs every statement pgactor sends to PostgreSQL: each has its
// text, its arguments and the scanning of its rows in one method, here or
// in storeadmin.go. taskstates.go says which of them moves a task from
// which state to which, and what fences each move.
//
// Each statement that changes a task changes its state and the counters in
// one statement, so that it commits or fails whole, joins a caller's
// transaction as one step, and costs one round trip. Durations are passed
// in microseconds, as parameters whose names end in _us.
type store struct {
	pool    *pgpool.Pool
	schema  string
	actor   string // the actor whose tasks it moves
	owner   string // this instance, in the owner column of the leases it holds
	channel string // the schema's notification channel
}

// A statement is one of the store's statements: its text, with {s} for
// the schema and $1, $2… for its parameters, and the parameters' names in
// that order. The text is written with @name for each parameter (see
// prepare), so that it says what each one is; the method that runs it
// passes the arguments in the order of params, next to it.
type statement struct {
	text     string
	params   []string
	bySchema sync.Map // schema → text with the schema's quoted name
}

// statements are every statement prepare made, for TestStatements.
var statements []*statement

// prepare returns the statement whose text is text with each @name
// replaced by $n, n the position of name in params. A name the text uses
// that params does not list, or one params lists that the text does not
// use, is a bug in this package: prepare panics, when the package is
// initialised.
func prepare(text string, params ...string) *statement {
	var b strings.Builder
	used := make([]bool, len(params))
	for {
		at := strings.IndexByte(text, '@')
		if at < 0 {
			b.WriteString(text)
			break
		}
		b.WriteString(text[:at])
		end := at + 1
		for end < len(text) && (text[end] == '_' || 'a' <= text[end] && text[end] <= 'z') {
			end++
		}
		name := text[at+1 : end]
		n := slices.Index(params, name)
		if n < 0 {
			panic("pgactor: statement parameter @" + name + " is not in its list " + strings.Join(params, ", "))
		}
		used[n] = true
		b.WriteString("$" + strconv.Itoa(n+1))
		text = text[end:]
	}
	if n := slices.Index(used, false); n >= 0 {
		panic("pgactor: statement parameter " + params[n] + " is not used in " + b.String())
	}
	st := &statement{text: b.String(), params: params}
	statements = append(statements, st)
	return st
}

// in returns st's text for schema.
func (st *statement) in(schema string) string {
	if sql, ok := st.bySchema.Load(schema); ok {
		return sql.(string)
	}
	sql := expand(schema, st.text)
	st.bySchema.Store(schema, sql)
	return sql
}

// expand replaces {s} in sql with the schema's quoted name.
func expand(schema, sql string) string {
	return strings.ReplaceAll(sql, "{s}", pgx.Identifier{schema}.Sanitize())
}

// runBatch runs the statements queued on b, as one transaction.
func (s *store) runBatch(ctx context.Context, b *pgx.Batch) error {
	return s.pool.SendBatch(ctx, b).Close()
}

// collect returns what scan makes of each row of a query's rows, or the
// query's error.
func collect[E any](rows pgx.Rows, err error, scan pgx.RowToFunc[E]) ([]E, error) {
	if err != nil {
		return nil, err
	}
	return pgx.AppendRows([]E(nil), rows, scan)
}

// forEach calls fn for each row, and returns the first error, the rows'
// included.
func forEach(rows pgx.Rows, fn func() error) error {
	for rows.Next() {
		if err := fn(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// fence matches the rows of tasks t whose ids are in @ids, with the
// fencing token at the same position in @runs, leased to @owner: the
// leases of a statement that names many, so that a worker whose lease has
// passed to another changes nothing. The planner serves id = ANY(@ids)
// from the primary key even without statistics; a join with
// unnest(@ids, @runs) instead is planned, without statistics, as a nested
// loop that unnests the arrays again for every row — n² comparisons,
// which made the completion of 100 tasks cost more than their fetch. Each
// row finds its token by a binary search of @ids, which fenced sorts:
// width_bucket returns the position of the last element not above the
// row's id, which is the id itself. array_position, which this replaced,
// reads the array from the start for every row: n²/2 comparisons again,
// which a round of 1,000 completions or a heartbeat of thousands of
// leases pays in full — a heartbeat of 4,000 leases took 93 ms with it,
// 32 ms now, the cost per lease no longer growing with their number
// (BenchmarkHeartbeat).
const fence = `t.id = ANY(@ids::bigint[]) AND t.owner = @owner AND t.runs = (@runs::int[])[width_bucket(t.id, @ids::bigint[])]`

// fenced returns the ids and fencing tokens of leases, for fence: sorted
// by id, and with one token an id. An id named twice is a task this
// instance lost and took again, its late worker's lease handed in beside
// the new one; the later lease has the higher token, and is the only one
// whose token the row can hold.
func fenced(leases []*lease) (ids []int64, runs []int32) {
	sorted := slices.Clone(leases)
	slices.SortFunc(sorted, func(a, b *lease) int {
		return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.token, b.token))
	})
	ids, runs = make([]int64, 0, len(sorted)), make([]int32, 0, len(sorted))
	for _, l := range sorted {
		if n := len(ids); n > 0 && ids[n-1] == l.id {
			runs[n-1] = l.token
			continue
		}
		ids, runs = append(ids, l.id), append(runs, l.token)
	}
	return ids, runs
}

// Sending.

// sendOne inserts one task, unless a live task of the actor holds its
// unique key; sendNotify also wakes the listeners on @channel.
// PostgreSQL sends one notification per channel and payload per
// transaction, however many rows call pg_notify.
const sendOne = `WITH i AS (
	INSERT INTO {s}.tasks (actor, type, payload, priority, unique_key, available_at, headers)
	VALUES (@actor, @type, @payload, @priority, @key, coalesce(@at::timestamptz, statement_timestamp() + @delay_us::bigint * interval '1 microsecond'), @headers::jsonb)
	ON CONFLICT (actor, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
	RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, accepted) SELECT @actor, count(*) FROM i HAVING count(*) > 0
)
SELECT id`

var (
	stmtSend       = prepare(sendOne+` FROM i`, "actor", "type", "payload", "priority", "key", "at", "delay_us", "headers")
	stmtSendNotify = prepare(sendOne+`, pg_notify(@channel, @actor) FROM i`, "actor", "type", "payload", "priority", "key", "at", "delay_us", "headers", "channel")
)

// send inserts a task for payload on db, with o's type, priority, time
// and unique key, and returns its ID; 0 when the unique key is taken.
func (s *store) send(ctx context.Context, db Querier, payload []byte, o *sendOptions, notify bool) (uint64, error) {
	var key *string
	if o.hasKey {
		key = &o.key
	}
	args := []any{s.actor, o.typ, payload, o.priority, key, o.runAt(), o.delay.Microseconds(), o.headers}
	st := stmtSend
	if notify {
		st, args = stmtSendNotify, append(args, s.channel)
	}
	ids, err := s.scanIDs(db.Query(ctx, st.in(s.schema), args...))
	if len(ids) == 0 {
		return 0, err
	}
	return ids[0], err
}

// sendMany inserts tasks, one per payload, in order; sendManyNotify also
// wakes the listeners on @channel.
const sendMany = `WITH i AS (
	INSERT INTO {s}.tasks (actor, type, payload, priority, available_at, headers)
	SELECT @actor, @type, p, @priority, coalesce(@at::timestamptz, statement_timestamp() + @delay_us::bigint * interval '1 microsecond'), @headers::jsonb
	FROM unnest(@payloads::bytea[]) WITH ORDINALITY AS u(p, n) ORDER BY n
	RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, accepted) SELECT @actor, count(*) FROM i HAVING count(*) > 0
)
SELECT id`

var (
	stmtSendBatch       = prepare(sendMany+` FROM i`, "actor", "type", "payloads", "priority", "at", "delay_us", "headers")
	stmtSendBatchNotify = prepare(sendMany+`, pg_notify(@channel, @actor) FROM i`, "actor", "type", "payloads", "priority", "at", "delay_us", "headers", "channel")
)

// sendBatch inserts a task for each payload on db, in one statement, and
// returns their IDs in the order of payloads.
func (s *store) sendBatch(ctx context.Context, db Querier, payloads [][]byte, o *sendOptions, notify bool) ([]uint64, error) {
	args := []any{s.actor, o.typ, payloads, o.priority, o.runAt(), o.delay.Microseconds(), o.headers}
	st := stmtSendBatch
	if notify {
		st, args = stmtSendBatchNotify, append(args, s.channel)
	}
	ids, err := s.scanIDs(db.Query(ctx, st.in(s.schema), args...))
	// The ids were drawn in the order of the payloads.
	slices.Sort(ids)
	return ids, err
}

// scanIDs reads the ids a send returned, each with pg_notify's void when
// it notified.
func (s *store) scanIDs(rows pgx.Rows, err error) ([]uint64, error) {
	return collect(rows, err, func(row pgx.CollectableRow) (uint64, error) {
		var id int64
		dst := []any{&id}
		if len(row.FieldDescriptions()) == 2 {
			dst = append(dst, nil) // pg_notify's void
		}
		err := row.Scan(dst...)
		return uint64(id), err
	})
}

var stmtLiveKey = prepare(`SELECT id FROM {s}.tasks WHERE actor = @actor AND unique_key = @key`, "actor", "key")

// liveKey returns the ID of the live task that holds key.
func (s *store) liveKey(ctx context.Context, db Querier, key string) (uint64, error) {
	var id int64
	err := db.QueryRow(ctx, stmtLiveKey.in(s.schema), s.actor, key).Scan(&id)
	return uint64(id), err
}

// A pump's round: these statements are queued on its batch, and their
// rows read when it runs.

// stmtFetch takes up to @limit tasks of the actor that are due, or whose
// lease ran out, highest priority first, then by when they became
// available, then in the order sent; skips tasks another worker is
// taking; gives them a lease of @lease_us to @owner. A task taken while
// another owner's lease had run out counts as lost. It runs in the
// function {s}.fetch that migration 2 made (see migrationFiles), whose plan
// walks tasks_fetch in order and stops after @limit rows, whatever the
// planner's statistics say. Migration 3 made it take nothing of an actor
// that is paused, and return the task's headers too, and when the task
// became due: its available_at before the fetch moved it to the lease's
// end (lease.due). Migration 5 made it PL/pgSQL: planned once a
// connection, never compiled, and without the stored subqueries.
var stmtFetch = prepare(`SELECT * FROM {s}.fetch(@actor, @limit, @owner, @lease_us)`, "actor", "limit", "owner", "lease_us")

// fetch queues on b the fetch of up to limit tasks, each with a lease of
// d, and appends a lease for each to *into when b runs.
func (s *store) fetch(b *pgx.Batch, limit int, d time.Duration, into *[]*lease) {
	b.Queue(stmtFetch.in(s.schema), s.actor, limit, s.owner, d.Microseconds()).Query(func(rows pgx.Rows) error {
		return forEach(rows, func() error {
			l := &lease{}
			err := rows.Scan(&l.id, &l.typ, &l.payload, &l.enqueued, &l.attempt, &l.token, &l.lost, &l.canceled, &l.headers, &l.due)
			*into = append(*into, l)
			return err
		})
	})
}

// stmtHeartbeat extends by @lease_us the leases that @owner still holds,
// and returns them with whether each was canceled.
var stmtHeartbeat = prepare(`UPDATE {s}.tasks t SET available_at = now() + @lease_us::bigint * interval '1 microsecond'
WHERE `+fence+`
RETURNING t.id, t.canceled`, "ids", "runs", "owner", "lease_us")

// heartbeat queues on b the renewal of leases for d, and records in held,
// when b runs, the id of each lease still this instance's, with whether
// its task was canceled.
func (s *store) heartbeat(b *pgx.Batch, leases []*lease, d time.Duration, held map[int64]bool) {
	ids, runs := fenced(leases)
	b.Queue(stmtHeartbeat.in(s.schema), ids, runs, s.owner, d.Microseconds()).Query(func(rows pgx.Rows) error {
		return forEach(rows, func() error {
			var id int64
			var canceled bool
			err := rows.Scan(&id, &canceled)
			held[id] = canceled
			return err
		})
	})
}

// stmtComplete deletes the completed tasks still leased to @owner, counts
// them for @actor, and returns their ids and fencing tokens.
var stmtComplete = prepare(`WITH d AS (
	DELETE FROM {s}.tasks t WHERE `+fence+`
	RETURNING t.id, t.runs
), c AS (
	INSERT INTO {s}.counts (actor, completed) SELECT @actor, count(*) FROM d HAVING count(*) > 0
)
SELECT id, runs FROM d`, "ids", "runs", "owner", "actor")

// complete queues on b the completion of the tasks of leases, and records
// in completed, when b runs, the id of each whose lease was still this
// instance's, with the fencing token of that lease: a lease whose task is
// in completed under another token was refused (fenced).
func (s *store) complete(b *pgx.Batch, leases []*lease, completed map[int64]int32) {
	ids, runs := fenced(leases)
	b.Queue(stmtComplete.in(s.schema), ids, runs, s.owner, s.actor).Query(func(rows pgx.Rows) error {
		return forEach(rows, func() error {
			var id int64
			var token int32
			err := rows.Scan(&id, &token)
			completed[id] = token
			return err
		})
	})
}

// stmtGiveBack gives back leases of @owner: the tasks can be taken at
// once, and the attempt is not charged.
var stmtGiveBack = prepare(`UPDATE {s}.tasks t SET owner = NULL, available_at = now(), attempt = t.attempt - 1
WHERE `+fence, "ids", "runs", "owner")

// giveBack queues on b the give-back of leases.
func (s *store) giveBack(b *pgx.Batch, leases []*lease) {
	ids, runs := fenced(leases)
	b.Queue(stmtGiveBack.in(s.schema), ids, runs, s.owner)
}

// A worker's outcome: each statement settles one lease, and returns how
// many rows it matched: 0 when the lease was no longer this instance's.

// stmtCompleteOne is stmtComplete for one task, inside its handler's
// transaction.
var stmtCompleteOne = prepare(`WITH d AS (
	DELETE FROM {s}.tasks WHERE id = @id AND runs = @runs AND owner = @owner RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, completed) SELECT @actor, count(*) FROM d HAVING count(*) > 0
)
SELECT count(*) FROM d`, "id", "runs", "owner", "actor")

// completeOne completes l's task in tx, the handler's transaction.
func (s *store) completeOne(ctx context.Context, tx pgx.Tx, l *lease) (int, error) {
	var n int
	err := tx.QueryRow(ctx, stmtCompleteOne.in(s.schema), l.id, l.token, s.owner, s.actor).Scan(&n)
	return n, err
}

// stmtRetry makes a failed task due again after @delay_us, with the
// attempt's error.
var stmtRetry = prepare(`WITH u AS (
	UPDATE {s}.tasks SET owner = NULL, last_error = @error,
		available_at = now() + @delay_us::bigint * interval '1 microsecond'
	WHERE id = @id AND runs = @runs AND owner = @owner
	RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, failed, retried) SELECT @actor, 1, 1 FROM u
)
SELECT count(*) FROM u`, "id", "runs", "owner", "delay_us", "error", "actor")

// retry makes l's task due again after delay, recording msg as its last
// error.
func (s *store) retry(ctx context.Context, l *lease, delay time.Duration, msg string) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, stmtRetry.in(s.schema), l.id, l.token, s.owner, delay.Microseconds(), storableError(msg), s.actor).Scan(&n)
	return n, err
}

// storableError returns an attempt's error message as a text column can
// hold it: invalid UTF-8 and NUL bytes, which PostgreSQL refuses, each
// replaced by U+FFFD. A handler's error may carry any bytes, and a
// statement refused for them would be refused at every try, while the
// heartbeat kept the lease and the worker on the task.
func storableError(msg string) string {
	if storableText(msg) {
		return msg
	}
	return strings.ReplaceAll(strings.ToValidUTF8(msg, "\uFFFD"), "\x00", "\uFFFD")
}

// stmtDeadLetter moves a task to the dead letters with @reason and @error
// (NULL keeps the last one); @failed is 1 when the task failed an
// attempt, @not_run is 1 when this run never reached the handler, so does
// not count as an attempt.
var stmtDeadLetter = prepare(`WITH d AS (
	DELETE FROM {s}.tasks WHERE id = @id AND runs = @runs AND owner = @owner RETURNING *
), i AS (
	INSERT INTO {s}.dead_letters (id, actor, type, payload, priority, unique_key, enqueued_at, runs, attempts, lost, reason, last_error, started_at, headers)
	SELECT id, actor, type, payload, priority, unique_key, enqueued_at, runs, attempt - @not_run, lost, @reason, coalesce(@error, last_error), started_at, headers FROM d
), c AS (
	INSERT INTO {s}.counts (actor, dead_lettered, failed) SELECT actor, 1, @failed FROM d
)
SELECT count(*) FROM d`, "id", "runs", "owner", "reason", "error", "failed", "not_run")

// deadLetter moves l's task to the dead letters with reason and msg (nil
// keeps its last error); ran says whether this run reached the handler,
// which then counts as a failed attempt.
func (s *store) deadLetter(ctx context.Context, l *lease, reason Reason, msg *string, ran bool) (int, error) {
	failed, notRun := 1, 0
	if !ran {
		failed, notRun = 0, 1
	}
	if msg != nil {
		m := storableError(*msg)
		msg = &m
	}
	var n int
	err := s.pool.QueryRow(ctx, stmtDeadLetter.in(s.schema), l.id, l.token, s.owner, reason.String(), msg, failed, notRun).Scan(&n)
	return n, err
}

// Managing tasks and dead letters.

// stmtCancelWaiting moves the actor's task @id to the dead letters with
// @reason if it is waiting (not running).
var stmtCancelWaiting = prepare(`WITH d AS (
	DELETE FROM {s}.tasks WHERE actor = @actor AND id = @id AND owner IS NULL RETURNING *
), i AS (
	INSERT INTO {s}.dead_letters (id, actor, type, payload, priority, unique_key, enqueued_at, runs, attempts, lost, reason, last_error, started_at, headers)
	SELECT id, actor, type, payload, priority, unique_key, enqueued_at, runs, attempt, lost, @reason, last_error, started_at, headers FROM d
), c AS (
	INSERT INTO {s}.counts (actor, dead_lettered) SELECT actor, 1 FROM d
)
SELECT count(*) FROM d`, "actor", "id", "reason")

// stmtCancelRunning marks the actor's running task @id canceled, for its
// worker's next heartbeat to see.
var stmtCancelRunning = prepare(`UPDATE {s}.tasks SET canceled = true WHERE actor = @actor AND id = @id AND owner IS NOT NULL AND NOT canceled`, "actor", "id")

// stmtLockTask locks the actor's task @id and says whether it waits.
var stmtLockTask = prepare(`SELECT owner IS NULL FROM {s}.tasks WHERE actor = @actor AND id = @id FOR UPDATE`, "actor", "id")

// cancel dead-letters task id with ReasonCanceled if it waits, or marks
// it canceled if it runs and is not marked yet, and returns how many it
// canceled. The task's row is locked first: a task that moved between
// running and waiting while two statements looked at it in turn would be
// missed by both.
func (s *store) cancel(ctx context.Context, id uint64) (n int, err error) {
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var waiting bool
		switch err := tx.QueryRow(ctx, stmtLockTask.in(s.schema), s.actor, int64(id)).Scan(&waiting); {
		case errors.Is(err, pgx.ErrNoRows):
			return nil // ended, or never was
		case err != nil:
			return err
		case waiting:
			return tx.QueryRow(ctx, stmtCancelWaiting.in(s.schema), s.actor, int64(id), ReasonCanceled.String()).Scan(&n)
		}
		tag, err := tx.Exec(ctx, stmtCancelRunning.in(s.schema), s.actor, int64(id))
		n = int(tag.RowsAffected())
		return err
	})
	return n, err
}

// stmtReplay moves the actor's dead letters @ids back to the queue, due at
// once, except those whose unique key a live task holds, and returns their
// ids. A replayed task keeps its headers, so that its attempts continue
// its send's trace, and a scheduled task's handler still finds its period
// (ScheduledFor). The rows are locked in id order, so that concurrent
// replays and deletes of overlapping sets wait rather than deadlock; the
// second of two replays of one letter finds it gone. The insert skips a
// letter whose key is taken — by a live task, by a send that commits
// meanwhile, or by a letter before it in the same replay, of which the
// first by id moves — and only the letters inserted leave the dead
// letters: a check of the keys beforehand missed the last two, and the
// whole replay failed with the unique violation.
var stmtReplay = prepare(`WITH picked AS (
	SELECT * FROM {s}.dead_letters
	WHERE actor = @actor AND id = ANY(@ids::bigint[])
	ORDER BY id FOR UPDATE
), i AS (
	INSERT INTO {s}.tasks (id, actor, type, payload, priority, unique_key, available_at, runs, headers)
	SELECT id, actor, type, payload, priority, unique_key, statement_timestamp(), runs, headers FROM picked ORDER BY id
	ON CONFLICT (actor, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
	RETURNING id
), d AS (
	DELETE FROM {s}.dead_letters x USING i WHERE x.id = i.id
), c AS (
	INSERT INTO {s}.counts (actor, accepted, replayed) SELECT @actor, count(*), count(*) FROM i HAVING count(*) > 0
)
SELECT id, pg_notify(@channel, @actor) FROM i`, "actor", "ids", "channel")

// replay moves the dead letters ids back to the queue, and returns those
// it moved.
func (s *store) replay(ctx context.Context, ids []uint64) ([]uint64, error) {
	return s.scanIDs(s.pool.Query(ctx, stmtReplay.in(s.schema), s.actor, toInt64s(ids), s.channel))
}

// stmtDeleteDeadLetters deletes the actor's dead letters @ids.
var stmtDeleteDeadLetters = prepare(`DELETE FROM {s}.dead_letters WHERE id IN (
	SELECT id FROM {s}.dead_letters WHERE actor = @actor AND id = ANY(@ids::bigint[]) ORDER BY id FOR UPDATE
) RETURNING id`, "actor", "ids")

// deleteDeadLetters deletes the dead letters ids, and returns how many it
// deleted.
func (s *store) deleteDeadLetters(ctx context.Context, ids []uint64) (int, error) {
	tag, err := s.pool.Exec(ctx, stmtDeleteDeadLetters.in(s.schema), s.actor, toInt64s(ids))
	return int(tag.RowsAffected()), err
}

func toInt64s(ids []uint64) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = int64(id)
	}
	return out
}
