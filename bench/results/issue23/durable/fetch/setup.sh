#!/bin/bash
# setup.sh SCHEMA ROWS: pgactor's tables at SchemaVersion in SCHEMA (dropped
# first), ROWS due tasks of actor 'a', and SCHEMA.cycle(owner): one round of
# a queue at a steady size — fetch 250 tasks, complete them with the
# pump's statement, send 250 more — in one transaction.
set -e
S=$1; N=$2
P="psql -h 127.0.0.1 -U postgres -q -v ON_ERROR_STOP=1"
$P -c "DROP SCHEMA IF EXISTS $S CASCADE" 2>/dev/null
for f in "$(dirname "$0")"/../../../../../pgactor/migrations/0*.sql; do sed "s/{s}/$S/g" "$f"; done | $P
$P <<SQL
INSERT INTO $S.actors (name) VALUES ('a');
INSERT INTO $S.tasks (actor, type, payload, available_at) SELECT 'a', 'int', '1', now() FROM generate_series(1, $N);
VACUUM ANALYZE $S.tasks;
CREATE FUNCTION $S.cycle(p_owner text) RETURNS int LANGUAGE plpgsql AS \$\$
DECLARE ids bigint[]; rs int[]; n int;
BEGIN
  SELECT array_agg(task_id), array_agg(task_runs) INTO ids, rs FROM $S.fetch('a', 250, p_owner, 30000000);
  WITH d AS (DELETE FROM $S.tasks t WHERE t.id = ANY(ids) AND t.owner = p_owner AND t.runs = (rs)[array_position(ids, t.id)] RETURNING t.id)
  SELECT count(*) INTO n FROM d;
  INSERT INTO $S.tasks (actor, type, payload, available_at) SELECT 'a', 'int', '1', now() FROM generate_series(1, 250);
  RETURN n;
END \$\$;
SQL
