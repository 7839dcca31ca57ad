#!/bin/bash
# run-cpu.sh ROWS K PASSES VARIANT...: as run-held.sh, and also the CPU
# time the machine spent busy per task, less pgbench's own (/proc/stat and
# pgbench's /proc entry, over seconds 3 to 13 of the run, against the
# tasks sent then): the server's work per task — its backends, the
# vacuums, its background processes — on a machine where nothing else
# runs, as on the 16-core one; on a shared machine, an upper bound.
# (Until issue 23's seventh call it read pgbench's backends alone, found
# in pg_stat_activity, and at 8 clients some of them read empty.)
# Also the entries that scans of tasks_fetch returned to be checked in the
# heap, per task fetched (idx_tup_read over n_tup_upd, the whole run).
# CLIENTS (2) sets pgbench's clients: more of them, more transactions in
# flight, as more rounds and processes have. PGBENCH names pgbench where
# it is not Debian's (the 16-core machine: device16.sh). Needs no Python.
cd "$(dirname "$0")"
rows=$1; k=$2; passes=$3; shift 3
P="psql -h 127.0.0.1 -U postgres -q -v ON_ERROR_STOP=1"
snap() { # PGBENCH_PID: prints the last task id, then the CPU ticks (10 ms) the machine has been busy, less pgbench's own
  local busy own
  echo -n "$($P -At -c "SELECT last_value FROM fx.tasks_id_seq") "
  busy=$(awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat)
  own=$(awk '{print $14 + $15}' /proc/$1/stat 2>/dev/null || echo 0)
  echo $(( busy - own ))
}
for p in $(seq 1 "$passes"); do
  for v in "$@"; do
    ./setup.sh fx "$rows" >/dev/null 2>&1
    if [ "$v" != v5 ]; then sed "s/{s}/fx/g" "$v.sql" | $P >/dev/null || exit 1; fi
    ./held.sh fx "$k" >/dev/null
    ( for i in $(seq 1 15); do sleep 1; $P -c "VACUUM (TRUNCATE false) fx.tasks" 2>/dev/null; done ) &
    vac=$!
    ${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench} -h 127.0.0.1 -U postgres -n -c ${CLIENTS:-2} -j ${CLIENTS:-2} -T 15 -f cycle2.sql postgres > /tmp/pgb.$$ 2>&1 &
    pgb=$!
    sleep 3; a=$(snap $pgb); sleep 10; b=$(snap $pgb)
    wait $pgb; wait $vac
    tps=$(grep -oP 'tps = \K[0-9.]+' /tmp/pgb.$$)
    # Over the backends in both snapshots, the ticks (10 ms) per task sent.
    cpu=$(echo "$a $b" | awk '{ printf "%.2f", ($4 - $2) * 10000 / ($3 - $1) }')
    sleep 1
    ent=$($P -At -c "SELECT round(i.idx_tup_read::numeric / t.n_tup_upd, 2) FROM pg_stat_user_indexes i, pg_stat_user_tables t WHERE i.indexrelname = 'tasks_fetch' AND i.schemaname = 'fx' AND t.relid = i.relid")
    echo "BenchmarkFetchCycle/rows=$rows/clients=${CLIENTS:-2}/held=$((${CLIENTS:-2}*k*250))/fetch=$v 1 $(awk -v t="$tps" 'BEGIN { printf "%d", t * 250 + 0.5 }') tasks/s $cpu server-us/task $ent entries/task"
  done
done
rm -f /tmp/pgb.$$
psql -h 127.0.0.1 -U postgres -q -c "DROP SCHEMA IF EXISTS fx CASCADE" 2>/dev/null
