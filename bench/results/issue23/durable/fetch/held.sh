#!/bin/bash
# held.sh SCHEMA K: adds to a schema set up by setup.sh a per-client ring of
# K held batches, and cycle2(owner): complete the batch fetched K rounds ago
# by this client, fetch 250 into its place, send 250 — so that K*250 tasks
# per client are running between rounds, as workers hold them.
set -e
S=$1; K=$2
P="psql -h 127.0.0.1 -U postgres -q -v ON_ERROR_STOP=1"
$P <<SQL
CREATE TABLE $S.held (owner text, slot int, ids bigint[], runs int[], PRIMARY KEY (owner, slot));
CREATE TABLE $S.ring (owner text PRIMARY KEY, next int NOT NULL);
CREATE FUNCTION $S.cycle2(p_owner text) RETURNS int LANGUAGE plpgsql AS \$\$
DECLARE ids bigint[]; rs int[]; n int; sl int;
BEGIN
  INSERT INTO $S.ring VALUES (p_owner, 0) ON CONFLICT (owner) DO UPDATE SET next = ($S.ring.next + 1) % $K RETURNING next INTO sl;
  SELECT h.ids, h.runs INTO ids, rs FROM $S.held h WHERE h.owner = p_owner AND h.slot = sl;
  IF ids IS NOT NULL THEN
    WITH d AS (DELETE FROM $S.tasks t WHERE t.id = ANY(ids) AND t.owner = p_owner AND t.runs = (rs)[array_position(ids, t.id)] RETURNING t.id)
    SELECT count(*) INTO n FROM d;
  END IF;
  SELECT array_agg(task_id), array_agg(task_runs) INTO ids, rs FROM $S.fetch('a', 250, p_owner, 30000000);
  INSERT INTO $S.held VALUES (p_owner, sl, ids, rs) ON CONFLICT (owner, slot) DO UPDATE SET ids = EXCLUDED.ids, runs = EXCLUDED.runs;
  INSERT INTO $S.tasks (actor, type, payload, available_at) SELECT 'a', 'int', '1', now() FROM generate_series(1, 250);
  RETURN coalesce(n, 0);
END \$\$;
SQL
