#!/usr/bin/env bash
# Issue 23's check of the pool as landed, on the 16-core machine: the bench
# module's own contended cells (BenchmarkContended, actorpool at its
# defaults beside smartconnpool and the buffered channel, back to back in
# each cell) and its uncontended take, from the bench binary that pack.sh
# (or `go test -c` in bench/, xz-packed into .dev/bench.test.xz) built at
# the commit in .dev/bench.commit. Run from the repository's root with
# .dev carried; everything is packed into OUT/results.tgz after each stage.
#
#   bash bench/results/issue23/device/confirm16.sh "$OUT" [PASSES]   # default 6
#
# In results.tgz: machine.txt; contended16.txt (PASSES passes at
# GOMAXPROCS 16); contended2.txt (PINNED passes, default 4, pinned to 2
# of its cores);
# uncontended16.txt (10 counts). Compare with
#
#   benchstat -filter '.unit:(ops/s OR p99.9-sec)' -col '/pool@(actorpool smartconnpool chan)' contended16.txt
set -u
dest=${1:?usage: confirm16.sh OUT [PASSES]}; passes=${2:-6}
out=$(mktemp -d /tmp/confirm16.XXXXXX)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd); cd "$root"
start=$(date +%s)
note() {
	echo "$*" >> "$out/machine.txt"
	cp "$out/machine.txt" "$dest/machine.txt"
	tar -C "$out" -czf "$dest/results.tgz.new" . && mv "$dest/results.tgz.new" "$dest/results.tgz"
}
mkdir -p "$dest"
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; echo "commit: $(cat .dev/bench.commit 2>/dev/null)"; } > "$out/machine.txt"
B=.dev/bench.test
[ -x "$B" ] || xz -dkf "$B.xz" || { note "no $B"; exit 1; }
chmod +x "$B"
cells='^BenchmarkContended$/.*/.*/.*/^pool=(actorpool|smartconnpool|chan)$'
for i in $(seq 1 "$passes"); do
	GOMAXPROCS=16 "$B" -test.run '^$' -test.bench "$cells" -test.benchtime 60ms >> "$out/contended16.txt" 2>&1
	note "pass $i at GOMAXPROCS 16 done at $(( $(date +%s) - start ))s"
done
GOMAXPROCS=16 "$B" -test.run '^$' -test.bench '^BenchmarkUncontended(Direct)?$/pool=(actorpool|smartconnpool|chan)$' \
	-test.benchtime 200ms -test.count 10 > "$out/uncontended16.txt" 2>&1
note "uncontended done at $(( $(date +%s) - start ))s"
for i in $(seq 1 "${PINNED:-4}"); do
	GOMAXPROCS=2 taskset -c 0,1 "$B" -test.run '^$' -test.bench "$cells" -test.benchtime 60ms >> "$out/contended2.txt" 2>&1
	note "pass $i pinned to 2 cores done at $(( $(date +%s) - start ))s"
done
note "end at $(( $(date +%s) - start ))s"
