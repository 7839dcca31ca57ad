#!/usr/bin/env bash
# Issue 23 on the 16-core machine, call 12: pgactor before this session's
# pump changes (.dev/bench-before.test.xz, the bench module at 677235f)
# and after them (.dev/bench.test.xz, at 793225d), alternating on one
# machine, since call 11 (after) burned down faster than call 8 (before)
# on another machine of the same kind. Pack as for call11.sh plus the
# before binary; then, with .dev carried:
#
#   bash bench/results/issue23/device/call12.sh "$OUT"    # about 100 s
set -u
dest=${1:?usage: call12.sh OUT}
cd "$(dirname "$0")/../../../.."
mkdir -p "$dest"
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; echo "after: $(cat .dev/bench.commit), before: 677235f"; } > "$dest/machine.txt"
for b in bench-before bench; do xz -dkf .dev/$b.test.xz && chmod +x .dev/$b.test || exit 1; done
source .dev/pg-start.sh >> "$dest/machine.txt" 2>&1 || { echo "PostgreSQL did not start" >> "$dest/machine.txt"; exit 1; }
queue() { # binary cell name
	ACTORPOOL_BENCH_QUEUES=1 GOMAXPROCS=16 ".dev/$1.test" -test.run '^$' -test.bench "BenchmarkQueues/cell=$2" \
		-test.benchtime 1x -test.timeout 5m 2>&1 | grep -E '^Benchmark|FAIL|panic' | sed "s/queue=pgactor/queue=$3/" >> "$dest/queues16.txt"
	echo "$3 $2 done at ${SECONDS}s" >> "$dest/machine.txt"
}
for i in 1 2 3; do
	queue bench-before 'burndown/queue=pgactor$/workers=2000$' before
	queue bench 'burndown/queue=pgactor$/workers=2000$' after
done
for b in bench-before:before bench:after; do queue "${b%%:*}" 'processes/queue=pgactor$/' "${b##*:}"; done
for b in bench-before:before bench:after; do queue "${b%%:*}" 'sustained/queue=pgactor$/workers=2000$' "${b##*:}"; done
