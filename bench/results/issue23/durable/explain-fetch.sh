#!/bin/bash
# sample the fetch's index scan during a burn-down
sleep 4
for i in $(seq 1 12); do
S=$(psql -h 127.0.0.1 -U postgres -Atc "select nspname from pg_namespace where nspname like 'bench_queues_pgactor%' limit 1")
[ -z "$S" ] && { sleep 0.5; continue; }
psql -h 127.0.0.1 -U postgres -At <<SQL 2>&1 | grep -E "Buffers|Index Scan|actual time|Rows Removed|Execution" | head -6
BEGIN;
EXPLAIN (ANALYZE, BUFFERS, COSTS off) SELECT ctid FROM $S.tasks WHERE actor = 'bench' AND available_at <= now() ORDER BY priority DESC, available_at, id LIMIT 250 FOR UPDATE SKIP LOCKED;
ROLLBACK;
SQL
echo ---
sleep 0.7
done
