-- v7-bookmark: migration 5's fetch, but its scan starts after a bookmark,
-- the key (priority, available_at, id) of the last task this connection
-- fetched, so that a B-tree seek skips the head of tasks_fetch, full of
-- the entries of rows that died moments ago. The harness calls fetch with
-- migration 5's arguments, so the bookmark lives in the session (a
-- setting, fx.bm = 'fetches|priority|available_at|id'), as a pump would
-- carry it in its own memory and pass it. A fetch scans from the head, as
-- migration 5 does, when it has no bookmark, every 16th fetch (so that
-- tasks that sort before the bookmark — a higher priority, a past RunAt,
-- an expired lease, a give-back — wait at most that many fetches), and for
-- what the bookmark's scan left short of the limit.
CREATE OR REPLACE FUNCTION {s}.fetch(p_actor text, p_limit integer, p_owner text, p_lease_us bigint)
RETURNS TABLE (task_id bigint, task_type text, task_payload bytea, task_enqueued timestamptz,
	task_attempt integer, task_runs integer, task_lost integer, task_canceled boolean, task_headers jsonb, task_due timestamptz)
LANGUAGE plpgsql VOLATILE SET enable_sort = off SET enable_hashjoin = off SET enable_mergejoin = off
	SET plan_cache_mode = force_generic_plan SET jit = off AS $$
DECLARE
	bm text[] := string_to_array(nullif(current_setting('fx.bm', true), ''), '|');
	n bigint := coalesce(bm[1]::bigint, 0);
	picked tid[];
	dues timestamptz[];
	pris smallint[];
	ids bigint[];
	lost int;
	got int := 0;
BEGIN
	IF bm IS NOT NULL AND n % 16 <> 0 THEN
		SELECT array_agg(p.ctid), array_agg(p.available_at), array_agg(p.priority), array_agg(p.id), count(p.owner)
			INTO picked, dues, pris, ids, lost FROM (
			SELECT t.ctid, t.available_at, t.priority, t.id, t.owner FROM {s}.tasks t
			WHERE t.actor = p_actor AND t.priority = bm[2]::smallint
				AND (t.available_at, t.id) > (bm[3]::timestamptz, bm[4]::bigint)
				AND t.available_at <= now()
				AND NOT EXISTS (SELECT FROM {s}.actors a WHERE a.name = p_actor AND a.paused_at IS NOT NULL)
			ORDER BY t.priority DESC, t.available_at, t.id
			LIMIT p_limit
			FOR UPDATE OF t SKIP LOCKED) p;
		IF picked IS NOT NULL THEN
			got := cardinality(picked);
			IF lost > 0 THEN
				INSERT INTO {s}.counts (actor, lost) VALUES (p_actor, lost);
			END IF;
			RETURN QUERY
			UPDATE {s}.tasks t SET owner = p_owner, runs = t.runs + 1, attempt = t.attempt + 1,
				lost = t.lost + (t.owner IS NOT NULL)::int, started_at = now(),
				available_at = now() + p_lease_us * interval '1 microsecond'
			FROM unnest(picked, dues) p(ctid, due)
			WHERE t.ctid = p.ctid
			RETURNING t.id, t.type, t.payload, t.enqueued_at, t.attempt, t.runs, t.lost, t.canceled, t.headers, p.due;
			bm := ARRAY[n::text, pris[got]::text, dues[got]::text, ids[got]::text];
		END IF;
	END IF;
	IF got < p_limit THEN
		-- From the head: the tasks the fetches above just took are no
		-- longer due, so this takes the rest.
		SELECT array_agg(p.ctid), array_agg(p.available_at), array_agg(p.priority), array_agg(p.id), count(p.owner)
			INTO picked, dues, pris, ids, lost FROM (
			SELECT t.ctid, t.available_at, t.priority, t.id, t.owner FROM {s}.tasks t
			WHERE t.actor = p_actor AND t.available_at <= now()
				AND NOT EXISTS (SELECT FROM {s}.actors a WHERE a.name = p_actor AND a.paused_at IS NOT NULL)
			ORDER BY t.priority DESC, t.available_at, t.id
			LIMIT p_limit - got
			FOR UPDATE OF t SKIP LOCKED) p;
		IF picked IS NOT NULL THEN
			IF lost > 0 THEN
				INSERT INTO {s}.counts (actor, lost) VALUES (p_actor, lost);
			END IF;
			RETURN QUERY
			UPDATE {s}.tasks t SET owner = p_owner, runs = t.runs + 1, attempt = t.attempt + 1,
				lost = t.lost + (t.owner IS NOT NULL)::int, started_at = now(),
				available_at = now() + p_lease_us * interval '1 microsecond'
			FROM unnest(picked, dues) p(ctid, due)
			WHERE t.ctid = p.ctid
			RETURNING t.id, t.type, t.payload, t.enqueued_at, t.attempt, t.runs, t.lost, t.canceled, t.headers, p.due;
			-- The last of these is the furthest key taken only when the
			-- bookmark's scan took none.
			IF got = 0 THEN
				got := cardinality(picked);
				bm := ARRAY[n::text, pris[got]::text, dues[got]::text, ids[got]::text];
			END IF;
		END IF;
	END IF;
	IF bm IS NOT NULL THEN
		bm[1] := (n + 1)::text;
		PERFORM set_config('fx.bm', array_to_string(bm, '|'), false);
	END IF;
END
$$;
