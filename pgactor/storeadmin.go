package pgactor

import (
	"context"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// The store's statements that read, or look after the schema, rather than
// move a task: registration, stats, dead letters read, notifications,
// maintenance, migrations.

var stmtRegister = prepare(`INSERT INTO {s}.actors (name) VALUES (@actor) ON CONFLICT DO NOTHING`, "actor")

// register records the actor's name.
func (s *store) register(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, stmtRegister.in(s.schema), s.actor)
	return err
}

// stmtStats reads the counters and gauges of @actor from one snapshot,
// and whether it is registered and paused.
var stmtStats = prepare(`SELECT
	EXISTS (SELECT 1 FROM {s}.actors WHERE name = @actor),
	EXISTS (SELECT 1 FROM {s}.actors WHERE name = @actor AND paused_at IS NOT NULL),
	c.accepted, c.completed, c.dead_lettered, c.failed, c.retried, c.lost, c.replayed,
	t.queued, t.scheduled, t.running, t.retrying,
	coalesce((extract(epoch FROM now() - t.oldest) * 1e6)::bigint, 0),
	(SELECT count(*) FROM {s}.dead_letters WHERE actor = @actor)
FROM (
	SELECT coalesce(sum(accepted), 0)::bigint AS accepted, coalesce(sum(completed), 0)::bigint AS completed,
		coalesce(sum(dead_lettered), 0)::bigint AS dead_lettered, coalesce(sum(failed), 0)::bigint AS failed,
		coalesce(sum(retried), 0)::bigint AS retried, coalesce(sum(lost), 0)::bigint AS lost,
		coalesce(sum(replayed), 0)::bigint AS replayed
	FROM {s}.counts WHERE actor = @actor
) c, (
	SELECT count(*) FILTER (WHERE owner IS NULL AND available_at <= now()) AS queued,
		count(*) FILTER (WHERE owner IS NULL AND available_at > now() AND attempt = 0) AS scheduled,
		count(*) FILTER (WHERE owner IS NOT NULL) AS running,
		count(*) FILTER (WHERE owner IS NULL AND available_at > now() AND attempt > 0) AS retrying,
		min(available_at) FILTER (WHERE owner IS NULL AND available_at <= now()) AS oldest
	FROM {s}.tasks WHERE actor = @actor
) t`, "actor")

// stats reads the actor's counters and gauges on db, and whether any New
// registered it.
func (s *store) stats(ctx context.Context, db Querier) (st Stats, known bool, err error) {
	var accepted, completed, dead, failed, retried, lost, replayed, wait int64
	err = db.QueryRow(ctx, stmtStats.in(s.schema), s.actor).Scan(&known, &st.Paused,
		&accepted, &completed, &dead, &failed, &retried, &lost, &replayed,
		&st.Queued, &st.Scheduled, &st.Running, &st.Retrying, &wait, &st.DeadLetters)
	st.Accepted, st.Completed, st.DeadLettered = uint64(accepted), uint64(completed), uint64(dead)
	st.Failed, st.Retried, st.Lost, st.Replayed = uint64(failed), uint64(retried), uint64(lost), uint64(replayed)
	st.OldestQueued = time.Duration(wait) * time.Microsecond
	return st, known, err
}

var stmtActors = prepare(`SELECT name FROM {s}.actors ORDER BY name`)

// actors lists the actors registered in the schema, on db.
func (s *store) actors(ctx context.Context, db Querier) ([]string, error) {
	rows, err := db.Query(ctx, stmtActors.in(s.schema))
	return collect(rows, err, pgx.RowTo[string])
}

// stmtDeadLetters reads a page of @actor's dead letters after ID @after,
// of @reason and @type when not empty, at most @limit.
var stmtDeadLetters = prepare(`SELECT id, type, payload, priority, unique_key, enqueued_at, attempts, lost, reason, last_error, started_at, dead_at
FROM {s}.dead_letters
WHERE actor = @actor AND id > @after AND (@reason = '' OR reason = @reason) AND (@type = '' OR type = @type)
ORDER BY id LIMIT @limit`, "actor", "after", "reason", "type", "limit")

// A storedLetter is a dead letter's row.
type storedLetter struct {
	id            int64
	typ           string
	payload       []byte
	priority      int16
	key, lastErr  *string
	enqueued      time.Time
	attempts      int
	lost          int
	reason        string
	started, dead *time.Time
}

// deadLetters reads the dead letters f selects.
func (s *store) deadLetters(ctx context.Context, f LetterFilter) ([]storedLetter, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	reason := ""
	if f.Reason != 0 {
		reason = f.Reason.String()
	}
	// IDs are PostgreSQL bigints: no letter is after a larger cursor,
	// which int64 would make negative.
	after := int64(min(f.AfterID, math.MaxInt64))
	rows, err := s.pool.Query(ctx, stmtDeadLetters.in(s.schema), s.actor, after, reason, f.Type, limit)
	return collect(rows, err, func(row pgx.CollectableRow) (l storedLetter, err error) {
		err = row.Scan(&l.id, &l.typ, &l.payload, &l.priority, &l.key, &l.enqueued, &l.attempts, &l.lost,
			&l.reason, &l.lastErr, &l.started, &l.dead)
		return l, err
	})
}

var stmtNotify = prepare(`SELECT pg_notify(@channel, @actor)`, "channel", "actor")

// notify wakes the listeners of the actor.
func (s *store) notify(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, stmtNotify.text, s.channel, s.actor)
	return err
}

// listen has conn LISTEN on the schema's channel.
func (s *store) listen(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize())
	return err
}

// Maintenance.

// stmtMaintainElect makes this process the one that maintains the schema,
// for at most @busy_us, unless one is doing it, or did less than @every_us
// ago: the row lock makes a second process wait, then see the new times. A
// process that dies maintaining holds the election until busy_until.
var stmtMaintainElect = prepare(`UPDATE {s}.maintenance SET last_run = now(), busy_until = now() + @busy_us::bigint * interval '1 microsecond'
WHERE id = 1 AND last_run < now() - @every_us::bigint * interval '1 microsecond' AND busy_until < now() RETURNING 1`, "every_us", "busy_us")

// electMaintainer reports whether this process won the election to
// maintain the schema, for at most busy, unless it was done less than
// every ago.
func (s *store) electMaintainer(ctx context.Context, every, busy time.Duration) (bool, error) {
	var won int
	err := s.pool.QueryRow(ctx, stmtMaintainElect.in(s.schema), every.Microseconds(), busy.Microseconds()).Scan(&won)
	if err == pgx.ErrNoRows {
		return false, nil
	}
	return err == nil, err
}

var stmtMaintainDone = prepare(`UPDATE {s}.maintenance SET busy_until = '-infinity' WHERE id = 1`)

// maintainDone ends this process's turn at maintenance.
func (s *store) maintainDone(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, stmtMaintainDone.in(s.schema))
	return err
}

// stmtFold folds the counters' increments into one row per actor. Rows
// inserted after the statement began are left for the next fold; a
// concurrent fold deletes disjoint rows, so no increment is counted twice
// or lost.
var stmtFold = prepare(`WITH d AS (DELETE FROM {s}.counts RETURNING *)
INSERT INTO {s}.counts (actor, accepted, completed, dead_lettered, failed, retried, lost, replayed)
SELECT actor, sum(accepted), sum(completed), sum(dead_lettered), sum(failed), sum(retried), sum(lost), sum(replayed)
FROM d GROUP BY actor`)

// fold folds the counters.
func (s *store) fold(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, stmtFold.in(s.schema))
	return err
}

// stmtDeadTuples lists the schema's tables with their dead and live rows
// and their changes since their last analysis, as the statistics collector
// last counted them, and the seconds since that analysis (by anyone,
// autovacuum included; infinity if none).
var stmtDeadTuples = prepare(`SELECT relname, n_dead_tup, n_live_tup, n_mod_since_analyze,
		coalesce(extract(epoch FROM now() - greatest(last_analyze, last_autoanalyze))::float8, 'infinity')
		FROM pg_stat_user_tables WHERE schemaname = @schema`, "schema")

// A tableStat is what the statistics collector counts of a table.
type tableStat struct {
	name                string
	dead, live, changed int64
	sinceAnalyze        time.Duration
}

// tableStats reads the schema's tables' statistics.
func (s *store) tableStats(ctx context.Context) ([]tableStat, error) {
	rows, err := s.pool.Query(ctx, stmtDeadTuples.text, s.schema)
	return collect(rows, err, func(row pgx.CollectableRow) (t tableStat, err error) {
		var since float64 // seconds, or +Inf if never analyzed
		err = row.Scan(&t.name, &t.dead, &t.live, &t.changed, &since)
		t.sinceAnalyze = time.Duration(min(since, 1e6) * float64(time.Second))
		return t, err
	})
}

// care runs VACUUM, VACUUM (ANALYZE) or ANALYZE on the schema's table, and
// returns the command it ran. VACUUM cannot run in a transaction: on its
// own, it runs in none. It leaves the table's empty end pages to the rows
// to come (TRUNCATE false): cutting them off takes the table's exclusive
// lock, which a busy queue's statements keep VACUUM waiting for, up to
// five seconds, and which holds them up once VACUUM has it.
func (s *store) care(ctx context.Context, table string, vacuum, analyze bool) (string, error) {
	command := "ANALYZE "
	switch {
	case vacuum && analyze:
		command = "VACUUM (ANALYZE, TRUNCATE false) "
	case vacuum:
		command = "VACUUM (TRUNCATE false) "
	}
	command += pgx.Identifier{s.schema, table}.Sanitize()
	_, err := s.pool.Exec(ctx, command)
	return command, err
}

// Migrations.

// stmtMigrateLock takes the lock that migrations of @schema hold for their
// transaction.
var stmtMigrateLock = prepare(`SELECT pg_advisory_xact_lock(hashtext('pgactor.migrate.' || @schema))`, "schema")

// lockMigrations takes the schema's migration lock in tx.
func (s *store) lockMigrations(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, stmtMigrateLock.text, s.schema)
	return err
}

var (
	stmtVersionTable = prepare(`SELECT to_regclass(@table) IS NOT NULL`, "table")
	stmtVersion      = prepare(`SELECT coalesce(max(version), 0) FROM {s}.schema_version`)
)

// version returns the version of the schema's tables on db: 0 when the
// schema or its tables do not exist.
func (s *store) version(ctx context.Context, db Querier) (int, error) {
	var exists bool
	if err := db.QueryRow(ctx, stmtVersionTable.text, pgx.Identifier{s.schema, "schema_version"}.Sanitize()).Scan(&exists); err != nil || !exists {
		return 0, err
	}
	var v int
	err := db.QueryRow(ctx, stmtVersion.in(s.schema)).Scan(&v)
	return v, err
}

// migrate runs migration v in tx.
func (s *store) migrate(ctx context.Context, tx pgx.Tx, v int) error {
	_, err := tx.Exec(ctx, expand(s.schema, migrations[v]))
	return err
}

var stmtRecordVersion = prepare(`INSERT INTO {s}.schema_version (version) VALUES (@version)`, "version")

// recordVersion records in tx that the schema is at version v.
func (s *store) recordVersion(ctx context.Context, tx pgx.Tx, v int) error {
	_, err := tx.Exec(ctx, stmtRecordVersion.in(s.schema), v)
	return err
}
