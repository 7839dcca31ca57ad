#!/bin/bash
# Issue 23, device call 2: the variants in v2.test (see
# bench/results/issue23/build-variants.sh) at GOMAXPROCS 16, every
# contended cell, pools back to back per cell; CPU profiles; the
# uncontended take; and base/sol/smartconnpool/chan pinned to 2 cores.
# Usage: run2.sh OUTDIR BENCHTIME PASSES BUDGET_S PROFTIME PASSES2
set -u
out=$1; bt=${2:-60ms}; passes=${3:-6}; budget=${4:-170}; pt=${5:-1s}; passes2=${6:-3}
B=$(dirname "$0")/v2.test
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; echo "benchtime=$bt"; command -v taskset; } > "$out/machine.txt"
pools='(base|s|so|sl|sol|soln|smartconnpool|chan)'
pass() { GOMAXPROCS=16 "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/.*/.*/.*/^pool=$pools\$" -test.benchtime "$bt" >> "$out/raw16.txt" 2>&1; echo "pass $1 done at $(el)s" >> "$out/machine.txt"; }
pass 1
pass 2
mkdir -p /tmp/prof
prof() { # pool cell
	n="$1-$(echo "$2" | sed 's/size=//;s/hold=//;s/goroutines=//;s#/#-#g')"
	GOMAXPROCS=16 "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/$2\$/pool=$1\$" -test.benchtime "$pt" -test.cpuprofile "/tmp/prof/$n.prof" > "/tmp/prof/$n.txt" 2>&1
}
for c in size=64/hold=0/goroutines=256 size=64/hold=1us/goroutines=256 size=8/hold=1us/goroutines=16 size=8/hold=0/goroutines=256 size=64/hold=0/goroutines=1024; do
	prof sol $c
done
prof so size=64/hold=0/goroutines=1024
tar czf "$out/profiles.tgz" -C /tmp/prof .
echo "profiles done at $(el)s" >> "$out/machine.txt"
GOMAXPROCS=16 "$B" -test.run '^$' -test.bench "^BenchmarkVariantsUncontended\$" -test.benchtime 200ms -test.count 4 > "$out/uncontended16.txt" 2>&1
echo "uncontended done at $(el)s" >> "$out/machine.txt"
for i in $(seq 3 "$passes"); do
	if [ "$(el)" -gt "$budget" ]; then echo "stopped before pass $i at $(el)s" >> "$out/machine.txt"; break; fi
	pass $i
done
pin=""; command -v taskset >/dev/null && pin="taskset -c 0,1"
for i in $(seq 1 "$passes2"); do
	if [ "$(el)" -gt $((budget + 40)) ]; then echo "stopped before 2-core pass $i at $(el)s" >> "$out/machine.txt"; break; fi
	GOMAXPROCS=2 $pin "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/.*/.*/.*/^pool=(base|sol|smartconnpool|chan)\$" -test.benchtime "$bt" >> "$out/raw2.txt" 2>&1
	echo "2-core pass $i done at $(el)s ($pin)" >> "$out/machine.txt"
done
echo "end at $(el)s" >> "$out/machine.txt"
