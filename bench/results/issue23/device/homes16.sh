#!/usr/bin/env bash
# Issue 23's check of homes recorded by the take (a3b0722) on the 16-core
# machine: the bench module's contended cells, actorpool at its defaults
# beside smartconnpool, from two bench binaries, the pool before the change
# (.dev/bench-before.test.xz) and after it (.dev/bench.test.xz), the two
# alternating pass by pass. Pack both with homes16-pack.sh, then run it in
# one call with .dev carried:
#
#   bash bench/results/issue23/device/homes16.sh "$OUT" [PASSES]   # default 6, about 40 s each
#
# In results.tgz: machine.txt, before16.txt and after16.txt (GOMAXPROCS
# 16), uncontended16.txt (both, 10 counts). Compare with
#
#   benchstat -filter '.unit:(ops/s OR p99.9-sec) /pool:actorpool' before16.txt after16.txt
set -u
dest=${1:?usage: homes16.sh OUT [PASSES]}; passes=${2:-6}
out=$(mktemp -d /tmp/homes16.XXXXXX)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd); cd "$root"
start=$(date +%s)
note() {
	echo "$*" >> "$out/machine.txt"
	tar -C "$out" -czf "$dest/results.tgz.new" . && mv "$dest/results.tgz.new" "$dest/results.tgz"
}
mkdir -p "$dest"
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; } > "$out/machine.txt"
for b in bench-before bench; do
	[ -x ".dev/$b.test" ] || xz -dkf ".dev/$b.test.xz" || { note "no .dev/$b.test"; exit 1; }
	chmod +x ".dev/$b.test"
done
cells='^BenchmarkContended$/.*/.*/.*/^pool=(actorpool|smartconnpool)$'
for i in $(seq 1 "$passes"); do
	GOMAXPROCS=16 .dev/bench-before.test -test.run '^$' -test.bench "$cells" -test.benchtime 60ms >> "$out/before16.txt" 2>&1
	GOMAXPROCS=16 .dev/bench.test -test.run '^$' -test.bench "$cells" -test.benchtime 60ms >> "$out/after16.txt" 2>&1
	note "pass $i done at $(( $(date +%s) - start ))s"
done
for b in bench-before bench; do
	GOMAXPROCS=16 ".dev/$b.test" -test.run '^$' -test.bench '^BenchmarkUncontendedDirect$/pool=actorpool$' \
		-test.benchtime 200ms -test.count 10 | sed "s/^Benchmark/Benchmark$b-/" >> "$out/uncontended16.txt" 2>&1
done
note "end at $(( $(date +%s) - start ))s"
