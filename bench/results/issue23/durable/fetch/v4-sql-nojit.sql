CREATE OR REPLACE FUNCTION {s}.fetch(p_actor text, p_limit integer, p_owner text, p_lease_us bigint)
RETURNS TABLE (task_id bigint, task_type text, task_payload bytea, task_enqueued timestamptz,
	task_attempt integer, task_runs integer, task_lost integer, task_canceled boolean, task_headers jsonb, task_due timestamptz)
LANGUAGE sql VOLATILE SET enable_sort = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
WITH picked AS (
	SELECT ctid, owner IS NOT NULL AS was_lost, available_at AS due FROM {s}.tasks
	WHERE actor = $1 AND available_at <= now()
		AND NOT EXISTS (SELECT FROM {s}.actors a WHERE a.name = $1 AND a.paused_at IS NOT NULL)
	ORDER BY priority DESC, available_at, id
	LIMIT $2
	FOR UPDATE SKIP LOCKED
), upd AS (
	UPDATE {s}.tasks t SET owner = $3, runs = t.runs + 1, attempt = t.attempt + 1,
		lost = t.lost + picked.was_lost::int, started_at = now(),
		available_at = now() + $4 * interval '1 microsecond'
	FROM picked WHERE t.ctid = picked.ctid
	RETURNING t.id, t.type, t.payload, t.enqueued_at, t.attempt, t.runs, t.lost, t.canceled, t.headers, picked.was_lost, picked.due
), c AS (
	INSERT INTO {s}.counts (actor, lost) SELECT $1, count(*) FROM upd WHERE was_lost HAVING count(*) > 0
)
SELECT id, type, payload, enqueued_at, attempt, runs, lost, canceled, headers, due FROM upd
$$;
