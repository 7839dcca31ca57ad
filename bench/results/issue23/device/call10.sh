#!/usr/bin/env bash
# Issue 23 on the 16-core machine, call 10: a giver that yields to the
# waiter it served only where the line can drain (the pool holds more
# objects than there are processors), against main, in the 8-object cells
# and two 64-object ones. .dev/bench.test.xz is the bench module at main,
# .dev/variant.test.xz the same with the variant (see docs/benchmarks.md,
# "call 10"). With .dev carried:
#
#   bash bench/results/issue23/device/call10.sh "$OUT" [PASSES]   # 6 passes
set -u
dest=${1:?usage: call10.sh OUT [PASSES]}; passes=${2:-6}
cd "$(dirname "$0")/../../../.."
mkdir -p "$dest"
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; } > "$dest/machine.txt"
for b in bench variant; do xz -dkf .dev/$b.test.xz && chmod +x .dev/$b.test || exit 1; done
# -test.bench splits its pattern at each slash: one run per shape.
run() { # binary pools rename
	for c in '^BenchmarkContended$/^size=8$/.*/.*' '^BenchmarkContended$/^size=64$/.*/^goroutines=256$'; do
		GOMAXPROCS=16 ".dev/$1.test" -test.run '^$' -test.bench "$c/^pool=($2)\$" -test.benchtime 60ms 2>&1 | sed "$3" >> "$dest/yield16.txt"
	done
}
for i in $(seq 1 "$passes"); do
	run variant actorpool 's/pool=actorpool-16/pool=variant-16/'
	run bench 'actorpool|smartconnpool' ''
	echo "pass $i done at ${SECONDS}s" >> "$dest/machine.txt"
done
