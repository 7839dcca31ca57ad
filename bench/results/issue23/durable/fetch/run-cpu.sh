#!/bin/bash
# run-cpu.sh ROWS K PASSES VARIANT...: as run-held.sh, and also the CPU
# time that pgbench's two backends spent per task (utime+stime from
# /proc, over seconds 3 to 13 of the run, against the tasks sent then):
# the server's work per task, which other work on a shared machine moves
# less than it moves tasks/s. Needs to read the backends' /proc entries.
# Also the entries that scans of tasks_fetch returned to be checked in the
# heap, per task fetched (idx_tup_read over n_tup_upd, the whole run).
# CLIENTS (2) sets pgbench's clients: more of them, more transactions in
# flight, as more rounds and processes have.
cd "$(dirname "$0")"
rows=$1; k=$2; passes=$3; shift 3
P="psql -h 127.0.0.1 -U postgres -q -v ON_ERROR_STOP=1"
snap() { # prints: the last task id, then pid:ticks of each pgbench backend
  local p
  echo -n "$($P -At -c "SELECT last_value FROM fx.tasks_id_seq")"
  for p in $($P -At -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench'"); do
    echo -n " $p:$(awk '{print $14 + $15}' /proc/$p/stat 2>/dev/null)"
  done
  echo
}
for p in $(seq 1 "$passes"); do
  for v in "$@"; do
    ./setup.sh fx "$rows" >/dev/null 2>&1
    if [ "$v" != v5 ]; then sed "s/{s}/fx/g" "$v.sql" | $P >/dev/null || exit 1; fi
    ./held.sh fx "$k" >/dev/null
    ( for i in $(seq 1 15); do sleep 1; $P -c "VACUUM (TRUNCATE false) fx.tasks" 2>/dev/null; done ) &
    vac=$!
    /usr/lib/postgresql/15/bin/pgbench -h 127.0.0.1 -U postgres -n -c ${CLIENTS:-2} -j ${CLIENTS:-2} -T 15 -f cycle2.sql postgres > /tmp/pgb.$$ 2>&1 &
    pgb=$!
    sleep 3; a=$(snap); sleep 10; b=$(snap)
    wait $pgb; wait $vac
    tps=$(grep -oP 'tps = \K[0-9.]+' /tmp/pgb.$$)
    # Over the backends in both snapshots, the ticks (10 ms) per task sent.
    cpu=$(python3 -c "
a, b = '$a'.split(), '$b'.split()
ta = dict(x.split(':') for x in a[1:]); tb = dict(x.split(':') for x in b[1:])
t = sum(int(tb[p]) - int(ta[p]) for p in ta if p in tb and ta[p] and tb[p])
print(round(t * 10000 / (int(b[0]) - int(a[0])), 2))")
    sleep 1
    ent=$($P -At -c "SELECT round(i.idx_tup_read::numeric / t.n_tup_upd, 2) FROM pg_stat_user_indexes i, pg_stat_user_tables t WHERE i.indexrelname = 'tasks_fetch' AND i.schemaname = 'fx' AND t.relid = i.relid")
    echo "BenchmarkFetchCycle/rows=$rows/clients=${CLIENTS:-2}/held=$((${CLIENTS:-2}*k*250))/fetch=$v 1 $(python3 -c "print(round($tps*250))") tasks/s $cpu backend-us/task $ent entries/task"
  done
done
rm -f /tmp/pgb.$$
psql -h 127.0.0.1 -U postgres -q -c "DROP SCHEMA IF EXISTS fx CASCADE" 2>/dev/null
