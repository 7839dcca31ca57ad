
CREATE OR REPLACE FUNCTION {s}.fetch(p_actor text, p_limit integer, p_owner text, p_lease_us bigint)
RETURNS TABLE (task_id bigint, task_type text, task_payload bytea, task_enqueued timestamptz,
	task_attempt integer, task_runs integer, task_lost integer, task_canceled boolean, task_headers jsonb, task_due timestamptz)
LANGUAGE plpgsql VOLATILE SET enable_sort = off SET enable_hashjoin = off SET enable_mergejoin = off
	SET plan_cache_mode = force_generic_plan SET jit = off AS $$
BEGIN
	RETURN QUERY
	WITH picked AS (
		SELECT t.ctid, t.owner IS NOT NULL AS was_lost, t.available_at AS due FROM {s}.tasks t
		WHERE t.actor = p_actor AND t.available_at <= now()
			AND NOT EXISTS (SELECT FROM {s}.actors a WHERE a.name = p_actor AND a.paused_at IS NOT NULL)
		ORDER BY t.priority DESC, t.available_at, t.id
		LIMIT p_limit
		FOR UPDATE OF t SKIP LOCKED
	), upd AS (
		UPDATE {s}.tasks t SET owner = p_owner, runs = t.runs + 1, attempt = t.attempt + 1,
			lost = t.lost + picked.was_lost::int, started_at = now(),
			available_at = now() + p_lease_us * interval '1 microsecond'
		FROM picked WHERE t.ctid = picked.ctid
		RETURNING t.id, t.type, t.payload, t.enqueued_at, t.attempt, t.runs, t.lost, t.canceled, t.headers, picked.was_lost, picked.due
	), c AS (
		INSERT INTO {s}.counts (actor, lost) SELECT p_actor, count(*) FROM upd WHERE upd.was_lost HAVING count(*) > 0
	)
	SELECT upd.id, upd.type, upd.payload, upd.enqueued_at, upd.attempt, upd.runs, upd.lost, upd.canceled, upd.headers, upd.due FROM upd;
END
$$;
