#!/bin/bash
# ABBA of pgactor's queue cells: the bench binary built at main before
# issue 21 (ef4a7e3) and after it, run alternately on one machine.
#   bash abba.sh BASE.test AFTER.test OUTDIR ROUNDS
set -eu
base=$1 after=$2 out=$3 rounds=${4:-5}
mkdir -p "$out"
cells='BenchmarkQueues/cell=(burndown|sustained|latency)/queue=pgactor'
run() { ACTORPOOL_BENCH_QUEUES=1 "$1" -test.run '^$' -test.bench "$cells" -test.benchtime 1x -test.count 1 >>"$2" 2>&1; }
for r in $(seq "$rounds"); do
	if [ $((r % 2)) = 1 ]; then run "$base" "$out/before.txt"; run "$after" "$out/after.txt"
	else run "$after" "$out/after.txt"; run "$base" "$out/before.txt"; fi
	echo "round $r done $(date +%T)"
done
