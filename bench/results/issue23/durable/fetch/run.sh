#!/bin/bash
# run.sh ROWS PASSES VARIANT...: for each pass and variant, a fresh schema
# fx of ROWS tasks at SchemaVersion, its fetch replaced by VARIANT.sql
# (migration 5's own when VARIANT is v5), then pgbench: 2 clients, as the
# pump's 2 rounds in flight, running cycle() for 15 s. Prints tasks/s
# (transactions/s × 250) in benchstat's format.
cd "$(dirname "$0")"
rows=$1; passes=$2; shift 2
for p in $(seq 1 "$passes"); do
  for v in "$@"; do
    ./setup.sh fx "$rows" >/dev/null 2>&1
    # A name ending in -nojit is the file without it, the function then
    # set to jit = off.
    if [ "$v" != v5 ]; then
      sed "s/{s}/fx/g" "${v%-nojit}.sql" | psql -h 127.0.0.1 -U postgres -q -v ON_ERROR_STOP=1 >/dev/null || exit 1
    fi
    if [ "$v" != "${v%-nojit}" ]; then
      psql -h 127.0.0.1 -U postgres -q -c "ALTER FUNCTION fx.fetch(text, integer, text, bigint) SET jit = off" || exit 1
    fi
    tps=$(/usr/lib/postgresql/15/bin/pgbench -h 127.0.0.1 -U postgres -n -c 2 -j 2 -T 15 -f cycle.sql postgres 2>&1 | grep -oP 'tps = \K[0-9.]+')
    echo "BenchmarkFetchCycle/rows=$rows/fetch=$v 1 $(python3 -c "print(round($tps*250))") tasks/s"
  done
done
psql -h 127.0.0.1 -U postgres -q -c "DROP SCHEMA IF EXISTS fx CASCADE"
