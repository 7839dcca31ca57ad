#!/usr/bin/env bash
# Issue 23 on the 16-core machine, call 11: pgactor's queue cells after
# this session's pump changes (a lease handed in while the heartbeat in
# flight renews it waits for a round after it, 6e62f25 and its review),
# to compare with call 8's queues16.txt. Pack .dev/ with the bench
# module's test binary (go test -c, xz) and ../shared/device/pg-pack.sh,
# then, with .dev carried:
#
#   bash bench/results/issue23/device/call11.sh "$OUT"    # about 70 s
set -u
dest=${1:?usage: call11.sh OUT}
cd "$(dirname "$0")/../../../.."
mkdir -p "$dest"
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; echo "commit: $(cat .dev/bench.commit)"; } > "$dest/machine.txt"
xz -dkf .dev/bench.test.xz && chmod +x .dev/bench.test || exit 1
source .dev/pg-start.sh >> "$dest/machine.txt" 2>&1 || { echo "PostgreSQL did not start" >> "$dest/machine.txt"; exit 1; }
queue() {
	ACTORPOOL_BENCH_QUEUES=1 GOMAXPROCS=16 .dev/bench.test -test.run '^$' -test.bench "BenchmarkQueues/cell=$1" \
		-test.benchtime 1x -test.timeout 5m 2>&1 | grep -E '^Benchmark|FAIL|panic' >> "$dest/queues16.txt"
	echo "$1 done at ${SECONDS}s" >> "$dest/machine.txt"
}
for i in 1 2 3; do queue 'burndown/queue=pgactor$/workers=2000$'; done
queue 'processes/queue=pgactor$/'
queue 'sustained/queue=pgactor$/workers=2000$'
queue 'producers/queue=pgactor$/producers=16/workers=500$'
