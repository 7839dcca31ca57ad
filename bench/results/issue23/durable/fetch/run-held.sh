#!/bin/bash
# run-held.sh ROWS K PASSES VARIANT...: as run.sh, but each client holds its
# last K fetches as running tasks (held.sh, cycle2.sql) while VACUUM runs
# every second, as maintenance does; prints tasks/s and the tasks table's
# size at the end, and in a comment its HOT updates over all its updates.
cd "$(dirname "$0")"
rows=$1; k=$2; passes=$3; shift 3
P="psql -h 127.0.0.1 -U postgres -q -v ON_ERROR_STOP=1"
for p in $(seq 1 "$passes"); do
  for v in "$@"; do
    ./setup.sh fx "$rows" >/dev/null 2>&1
    # A name ending in -ff70 is the file without it, and the table's
    # fillfactor 70, its pages rewritten to leave that room.
    if [ "$v" != v5 ]; then sed "s/{s}/fx/g" "${v%-ff70}.sql" | $P >/dev/null || exit 1; fi
    if [ "$v" != "${v%-ff70}" ]; then $P -c "ALTER TABLE fx.tasks SET (fillfactor = 70)" -c "VACUUM FULL fx.tasks"; fi
    ./held.sh fx "$k" >/dev/null
    ( for i in $(seq 1 15); do sleep 1; $P -c "VACUUM (TRUNCATE false) fx.tasks" 2>/dev/null; done ) &
    vac=$!
    out=$(/usr/lib/postgresql/15/bin/pgbench -h 127.0.0.1 -U postgres -n -c 2 -j 2 -T 15 -f cycle2.sql postgres 2>&1)
    wait $vac
    tps=$(echo "$out" | grep -oP 'tps = \K[0-9.]+')
    size=$($P -At -c "SELECT pg_total_relation_size('fx.tasks')")
    hot=$($P -At -c "SELECT n_tup_hot_upd||'/'||n_tup_upd FROM pg_stat_user_tables WHERE schemaname='fx' AND relname='tasks'")
    echo "BenchmarkFetchCycle/rows=$rows/held=$((2*k*250))/fetch=$v 1 $(python3 -c "print(round($tps*250))") tasks/s $((size/1024)) tasks-kB  # hot/upd $hot"
  done
done
psql -h 127.0.0.1 -U postgres -q -c "DROP SCHEMA IF EXISTS fx CASCADE" 2>/dev/null
