ALTER TABLE {s}.tasks ADD COLUMN lease_until timestamptz; ALTER TABLE {s}.tasks SET (fillfactor = 70);
CREATE OR REPLACE FUNCTION {s}.fetch(p_actor text, p_limit integer, p_owner text, p_lease_us bigint)
RETURNS TABLE (task_id bigint, task_type text, task_payload bytea, task_enqueued timestamptz,
	task_attempt integer, task_runs integer, task_lost integer, task_canceled boolean, task_headers jsonb, task_due timestamptz)
LANGUAGE plpgsql VOLATILE SET enable_sort = off SET enable_hashjoin = off SET enable_mergejoin = off
	SET plan_cache_mode = force_generic_plan SET jit = off AS $$
DECLARE
	picked tid[];
	lost int;
BEGIN
	SELECT array_agg(p.ctid), count(p.owner) INTO picked, lost FROM (
		SELECT t.ctid, t.owner FROM {s}.tasks t
		WHERE t.actor = p_actor AND t.available_at <= now()
			AND (t.owner IS NULL OR t.lease_until <= now())
			AND NOT EXISTS (SELECT FROM {s}.actors a WHERE a.name = p_actor AND a.paused_at IS NOT NULL)
		ORDER BY t.priority DESC, t.available_at, t.id
		LIMIT p_limit
		FOR UPDATE OF t SKIP LOCKED) p;
	IF picked IS NULL THEN
		RETURN;
	END IF;
	IF lost > 0 THEN
		INSERT INTO {s}.counts (actor, lost) VALUES (p_actor, lost);
	END IF;
	RETURN QUERY
	UPDATE {s}.tasks t SET owner = p_owner, runs = t.runs + 1, attempt = t.attempt + 1,
		lost = t.lost + (t.owner IS NOT NULL)::int, started_at = now(),
		lease_until = now() + p_lease_us * interval '1 microsecond'
	FROM unnest(picked) p(ctid)
	WHERE t.ctid = p.ctid
	RETURNING t.id, t.type, t.payload, t.enqueued_at, t.attempt, t.runs, t.lost, t.canceled, t.headers, t.available_at;
END
$$;
