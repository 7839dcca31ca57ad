package pgactor

// The statements, with {s} for the schema. Each changes a task's state and
// the counters in one statement, so that it commits or fails whole, joins
// a caller's transaction as one step, and costs one round trip. Durations
// are passed in microseconds.
//
// Every statement that ends or changes a running task matches its lease —
// id, runs (the fencing token) and owner — so that a worker whose lease
// has passed to another changes nothing: its statement matches no row.
// Those that name many tasks say id = ANY($1), which the planner serves
// from the primary key even without statistics, and find each task's runs
// in $2 at the position of its id in $1 (leased, below): a join with
// unnest($1, $2) instead is planned, without statistics, as a nested loop
// that unnests the arrays again for every row — n² comparisons, which made
// the completion of 100 tasks cost more than their fetch.

const (
	// sqlSend inserts one task. $1 actor, $2 type, $3 payload, $4 priority,
	// $5 unique key or NULL, $6 run time or NULL, $7 delay in µs.
	sqlSend = `WITH i AS (
	INSERT INTO {s}.tasks (actor, type, payload, priority, unique_key, available_at)
	VALUES ($1, $2, $3, $4, $5, coalesce($6::timestamptz, statement_timestamp() + $7::bigint * interval '1 microsecond'))
	ON CONFLICT (actor, unique_key) WHERE unique_key IS NOT NULL DO NOTHING
	RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, accepted) SELECT $1, count(*) FROM i HAVING count(*) > 0
)
SELECT id`

	// sqlSendBatch inserts tasks, one per payload, in order. $1 actor, $2
	// type, $3 payloads, $4 priority, $5 run time or NULL, $6 delay in µs.
	sqlSendBatch = `WITH i AS (
	INSERT INTO {s}.tasks (actor, type, payload, priority, available_at)
	SELECT $1, $2, p, $4, coalesce($5::timestamptz, statement_timestamp() + $6::bigint * interval '1 microsecond')
	FROM unnest($3::bytea[]) WITH ORDINALITY AS u(p, n) ORDER BY n
	RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, accepted) SELECT $1, count(*) FROM i HAVING count(*) > 0
)
SELECT id`

	// The select lists that end sqlSend and sqlSendBatch: with or without
	// waking the listeners on the channel passed as the last parameter.
	// PostgreSQL sends one notification per channel and payload per
	// transaction, however many rows call pg_notify.
	sqlSendTail       = ` FROM i`
	sqlSendNotifyTail = `, pg_notify($%d, $1) FROM i`

	// sqlLiveKey finds the live task holding a unique key.
	sqlLiveKey = `SELECT id FROM {s}.tasks WHERE actor = $1 AND unique_key = $2`

	// sqlFetch takes up to $2 tasks of actor $1 that are due, or whose
	// lease ran out, highest priority first, then by when they became
	// available, then in the order sent; skips tasks another worker is
	// taking; gives them lease $4 µs to owner $3. A task taken while
	// another owner's lease had run out counts as lost. It runs in the
	// function migration 2 made (see migrationFiles), whose plan walks
	// tasks_fetch in order and stops after $2 rows, whatever the
	// planner's statistics say.
	sqlFetch = `SELECT * FROM {s}.fetch($1, $2, $3, $4)`

	// sqlComplete deletes the completed tasks ($1 ids, $2 runs) still
	// leased to owner $3, counts them for actor $4, and returns their ids.
	sqlComplete = `WITH d AS (
	DELETE FROM {s}.tasks t WHERE ` + leased + `
	RETURNING t.id
), c AS (
	INSERT INTO {s}.counts (actor, completed) SELECT $4, count(*) FROM d HAVING count(*) > 0
)
SELECT id FROM d`

	// sqlCompleteOne is sqlComplete for one task, inside its handler's
	// transaction: $1 id, $2 runs, $3 owner, $4 actor.
	sqlCompleteOne = `WITH d AS (
	DELETE FROM {s}.tasks WHERE id = $1 AND runs = $2 AND owner = $3 RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, completed) SELECT $4, count(*) FROM d HAVING count(*) > 0
)
SELECT count(*) FROM d`

	// sqlRetry releases a failed task ($1 id, $2 runs, $3 owner) to run
	// again in $4 µs, with the attempt's error $5, counted for actor $6.
	sqlRetry = `WITH u AS (
	UPDATE {s}.tasks SET owner = NULL, last_error = $5,
		available_at = now() + $4::bigint * interval '1 microsecond'
	WHERE id = $1 AND runs = $2 AND owner = $3
	RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, failed, retried) SELECT $6, 1, 1 FROM u
)
SELECT count(*) FROM u`

	// sqlDeadLetter moves a task ($1 id, $2 runs, $3 owner) to the dead
	// letters with reason $4 and error $5 (NULL keeps the last one); $6 is
	// 1 when the task failed an attempt, $7 is 1 when this run never
	// reached the handler, so does not count as an attempt.
	sqlDeadLetter = `WITH d AS (
	DELETE FROM {s}.tasks WHERE id = $1 AND runs = $2 AND owner = $3 RETURNING *
), i AS (
	INSERT INTO {s}.dead_letters (id, actor, type, payload, priority, unique_key, enqueued_at, runs, attempts, lost, reason, last_error, started_at)
	SELECT id, actor, type, payload, priority, unique_key, enqueued_at, runs, attempt - $7, lost, $4, coalesce($5, last_error), started_at FROM d
), c AS (
	INSERT INTO {s}.counts (actor, dead_lettered, failed) SELECT actor, 1, $6 FROM d
)
SELECT count(*) FROM d`

	// sqlHeartbeat extends by $4 µs the leases ($1 ids, $2 runs) that owner
	// $3 still holds, and returns them with whether each was canceled.
	sqlHeartbeat = `UPDATE {s}.tasks t SET available_at = now() + $4::bigint * interval '1 microsecond'
WHERE ` + leased + `
RETURNING t.id, t.canceled`

	// sqlGiveBack releases the leases ($1 ids, $2 runs) of owner $3 so that
	// the tasks can be taken at once, without charging the attempt.
	sqlGiveBack = `UPDATE {s}.tasks t SET owner = NULL, available_at = now(), attempt = t.attempt - 1
WHERE ` + leased

	// sqlNotify wakes the listeners of actor $2 on channel $1.
	sqlNotify = `SELECT pg_notify($1, $2)`

	// leased matches the rows of tasks t whose ids are in $1, with the runs
	// at the same position in $2, leased to owner $3.
	leased = `t.id = ANY($1::bigint[]) AND t.owner = $3 AND t.runs = ($2::int[])[array_position($1::bigint[], t.id)]`

	// sqlRegister records the actor's name.
	sqlRegister = `INSERT INTO {s}.actors (name) VALUES ($1) ON CONFLICT DO NOTHING`

	// sqlStats reads the counters and gauges of actor $1 from one snapshot.
	sqlStats = `SELECT
	EXISTS (SELECT 1 FROM {s}.actors WHERE name = $1),
	c.accepted, c.completed, c.dead_lettered, c.failed, c.retried, c.lost, c.replayed,
	t.queued, t.scheduled, t.running, t.retrying,
	coalesce((extract(epoch FROM now() - t.oldest) * 1e6)::bigint, 0),
	(SELECT count(*) FROM {s}.dead_letters WHERE actor = $1)
FROM (
	SELECT coalesce(sum(accepted), 0)::bigint AS accepted, coalesce(sum(completed), 0)::bigint AS completed,
		coalesce(sum(dead_lettered), 0)::bigint AS dead_lettered, coalesce(sum(failed), 0)::bigint AS failed,
		coalesce(sum(retried), 0)::bigint AS retried, coalesce(sum(lost), 0)::bigint AS lost,
		coalesce(sum(replayed), 0)::bigint AS replayed
	FROM {s}.counts WHERE actor = $1
) c, (
	SELECT count(*) FILTER (WHERE owner IS NULL AND available_at <= now()) AS queued,
		count(*) FILTER (WHERE owner IS NULL AND available_at > now() AND attempt = 0) AS scheduled,
		count(*) FILTER (WHERE owner IS NOT NULL) AS running,
		count(*) FILTER (WHERE owner IS NULL AND available_at > now() AND attempt > 0) AS retrying,
		min(available_at) FILTER (WHERE owner IS NULL AND available_at <= now()) AS oldest
	FROM {s}.tasks WHERE actor = $1
) t`

	// sqlActors lists the registered actors.
	sqlActors = `SELECT name FROM {s}.actors ORDER BY name`

	// sqlDeadLetters reads a page of actor $1's dead letters after ID $2,
	// of reason $3 and type $4 when not empty, at most $5.
	sqlDeadLetters = `SELECT id, type, payload, priority, unique_key, enqueued_at, attempts, lost, reason, last_error, started_at, dead_at
FROM {s}.dead_letters
WHERE actor = $1 AND id > $2 AND ($3 = '' OR reason = $3) AND ($4 = '' OR type = $4)
ORDER BY id LIMIT $5`

	// sqlReplay moves actor $1's dead letters $2 back to the queue, due at
	// once, except those whose unique key a live task holds, and returns
	// their ids. The rows are locked in id order, so that concurrent
	// replays and deletes of overlapping sets wait rather than deadlock;
	// the second of two replays of one letter finds it gone.
	sqlReplay = `WITH picked AS (
	SELECT id FROM {s}.dead_letters d
	WHERE actor = $1 AND id = ANY($2::bigint[])
		AND (unique_key IS NULL OR NOT EXISTS (SELECT 1 FROM {s}.tasks t WHERE t.actor = d.actor AND t.unique_key = d.unique_key))
	ORDER BY id FOR UPDATE
), d AS (
	DELETE FROM {s}.dead_letters x USING picked WHERE x.id = picked.id RETURNING x.*
), i AS (
	INSERT INTO {s}.tasks (id, actor, type, payload, priority, unique_key, available_at, runs)
	SELECT id, actor, type, payload, priority, unique_key, statement_timestamp(), runs FROM d
	RETURNING id
), c AS (
	INSERT INTO {s}.counts (actor, accepted, replayed) SELECT $1, count(*), count(*) FROM i HAVING count(*) > 0
)
SELECT id, pg_notify($3, $1) FROM i`

	// sqlDeleteDeadLetters deletes actor $1's dead letters $2.
	sqlDeleteDeadLetters = `DELETE FROM {s}.dead_letters WHERE id IN (
	SELECT id FROM {s}.dead_letters WHERE actor = $1 AND id = ANY($2::bigint[]) ORDER BY id FOR UPDATE
) RETURNING id`

	// sqlCancelWaiting moves actor $1's task $2 to the dead letters with
	// ReasonCanceled if it is waiting (not running).
	sqlCancelWaiting = `WITH d AS (
	DELETE FROM {s}.tasks WHERE actor = $1 AND id = $2 AND owner IS NULL RETURNING *
), i AS (
	INSERT INTO {s}.dead_letters (id, actor, type, payload, priority, unique_key, enqueued_at, runs, attempts, lost, reason, last_error, started_at)
	SELECT id, actor, type, payload, priority, unique_key, enqueued_at, runs, attempt, lost, $3, last_error, started_at FROM d
), c AS (
	INSERT INTO {s}.counts (actor, dead_lettered) SELECT actor, 1 FROM d
)
SELECT count(*) FROM d`

	// sqlCancelRunning marks actor $1's running task $2 canceled, for its
	// worker's next heartbeat to see.
	sqlCancelRunning = `UPDATE {s}.tasks SET canceled = true WHERE actor = $1 AND id = $2 AND owner IS NOT NULL AND NOT canceled`

	// sqlMaintainElect makes this process the one that maintains the
	// schema, for at most $2 µs, unless one is doing it, or did less than
	// $1 µs ago: the row lock makes a second process wait, then see the
	// new times. A process that dies maintaining holds the election until
	// busy_until.
	sqlMaintainElect = `UPDATE {s}.maintenance SET last_run = now(), busy_until = now() + $2::bigint * interval '1 microsecond'
WHERE id = 1 AND last_run < now() - $1::bigint * interval '1 microsecond' AND busy_until < now() RETURNING 1`

	// sqlMaintainDone ends this process's turn at maintenance.
	sqlMaintainDone = `UPDATE {s}.maintenance SET busy_until = '-infinity' WHERE id = 1`

	// sqlFold folds the counters' increments into one row per actor. Rows
	// inserted after the statement began are left for the next fold; a
	// concurrent fold deletes disjoint rows, so no increment is counted
	// twice or lost.
	sqlFold = `WITH d AS (DELETE FROM {s}.counts RETURNING *)
INSERT INTO {s}.counts (actor, accepted, completed, dead_lettered, failed, retried, lost, replayed)
SELECT actor, sum(accepted), sum(completed), sum(dead_lettered), sum(failed), sum(retried), sum(lost), sum(replayed)
FROM d GROUP BY actor`

	// sqlDeadTuples lists the schema's tables with their dead and live
	// rows and their changes since their last analysis, as the statistics
	// collector last counted them, and the seconds since that analysis
	// (by anyone, autovacuum included; infinity if none).
	sqlDeadTuples = `SELECT relname, n_dead_tup, n_live_tup, n_mod_since_analyze,
		coalesce(extract(epoch FROM now() - greatest(last_analyze, last_autoanalyze))::float8, 'infinity')
		FROM pg_stat_user_tables WHERE schemaname = $1`
)
