#!/usr/bin/env bash
# Issue 23 on the 16-core machine, call 9: the tail of a take beside the
# scheduler's in the cells whose p99.9 trails smartconnpool's (call 8).
# BenchmarkContended now reports sched-p99.9-ns: the 99.9th percentile of
# the time goroutines spent runnable before they ran, while the cell ran.
# Build .dev/bench.test.xz from the bench module (go test -c, xz), then,
# with .dev carried:
#
#   bash bench/results/issue23/device/call9.sh "$OUT" [PASSES]   # 6 passes, about 10 s each
set -u
dest=${1:?usage: call9.sh OUT [PASSES]}; passes=${2:-6}
cd "$(dirname "$0")/../../../.."
mkdir -p "$dest"
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; } > "$dest/machine.txt"
xz -dkf .dev/bench.test.xz && chmod +x .dev/bench.test || exit 1
cells='^BenchmarkContended$/size=(8|64)/hold=(0|1us)/goroutines=(16|64|256)$/^pool=(actorpool|smartconnpool|chan)$'
for i in $(seq 1 "$passes"); do
	GOMAXPROCS=16 .dev/bench.test -test.run '^$' -test.bench "$cells" -test.benchtime 60ms >> "$dest/sched16.txt" 2>&1
	echo "pass $i done at ${SECONDS}s" >> "$dest/machine.txt"
done
