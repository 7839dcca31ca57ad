#!/bin/bash
# explain-bookmark.sh K VARIANT: as one pass of run-held.sh ROWS=50000, and
# 8 s into it, EXPLAIN (ANALYZE, BUFFERS) of the fetch's scan from the head
# (migration 5's) and from a bookmark (v7-bookmark's), each in a
# transaction rolled back. The bookmark is taken as the key just before the
# first task never fetched (owner null, by id), as a pump's would be after
# its last fetch.
cd "$(dirname "$0")"
k=$1; v=$2
P="psql -h 127.0.0.1 -U postgres -q -v ON_ERROR_STOP=1"
./setup.sh fx 50000 >/dev/null 2>&1
if [ "$v" != v5 ]; then sed "s/{s}/fx/g" "$v.sql" | $P >/dev/null || exit 1; fi
./held.sh fx "$k" >/dev/null
( for i in $(seq 1 15); do sleep 1; $P -c "VACUUM (TRUNCATE false) fx.tasks" 2>/dev/null; done ) &
vac=$!
/usr/lib/postgresql/15/bin/pgbench -h 127.0.0.1 -U postgres -n -c 2 -j 2 -T 15 -f cycle2.sql postgres > /dev/null 2>&1 &
pgb=$!
for s in 6 9 12; do
  sleep 3
  echo "== $v held=$((2*k*250)) at ${s}s"
  $P <<'SQL'
BEGIN;
SELECT available_at AS bm_at, id - 1 AS bm_id FROM fx.tasks WHERE actor = 'a' AND owner IS NULL AND available_at <= now() ORDER BY id LIMIT 1 \gset
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT t.ctid FROM fx.tasks t WHERE t.actor = 'a' AND t.available_at <= now()
	ORDER BY t.priority DESC, t.available_at, t.id LIMIT 250 FOR UPDATE OF t SKIP LOCKED;
ROLLBACK;
BEGIN;
EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT t.ctid FROM fx.tasks t WHERE t.actor = 'a' AND t.priority = 0::smallint
	AND (t.available_at, t.id) > (:'bm_at'::timestamptz, :bm_id::bigint) AND t.available_at <= now()
	ORDER BY t.priority DESC, t.available_at, t.id LIMIT 250 FOR UPDATE OF t SKIP LOCKED;
ROLLBACK;
SQL
done
wait $pgb; wait $vac
