#!/bin/bash
# Issue 23, device call 1: every contended cell at GOMAXPROCS 16, the
# actorpool versions in v1.test (see bench/results/issue23/build-variants.sh)
# back to back with smartconnpool and the channel; CPU profiles of the
# worst cells. Usage: run1.sh OUTDIR BENCHTIME PASSES BUDGET_S PROFTIME
set -u
out=$1; bt=${2:-80ms}; passes=${3:-6}; budget=${4:-250}; pt=${5:-1s}
B=$(dirname "$0")/v1.test
P=${PROCS:-16}
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; echo "GOMAXPROCS=$P benchtime=$bt"; } > "$out/machine.txt"
pools='(base|s|w|n|sw|swn|smartconnpool|chan)'
pass() { GOMAXPROCS=$P "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/.*/.*/.*/^pool=$pools\$" -test.benchtime "$bt" >> "$out/raw16.txt" 2>&1; echo "pass $1 done at $(el)s" >> "$out/machine.txt"; }
pass 1
pass 2
mkdir -p /tmp/prof
prof() { # pool cell
	n="$1-$(echo "$2" | sed 's/size=//;s/hold=//;s/goroutines=//;s#/#-#g')"
	GOMAXPROCS=$P "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/$2\$/pool=$1\$" -test.benchtime "$pt" -test.cpuprofile "/tmp/prof/$n.prof" > "/tmp/prof/$n.txt" 2>&1
}
for c in size=64/hold=0/goroutines=256 size=64/hold=1us/goroutines=256 size=8/hold=1us/goroutines=16 size=8/hold=0/goroutines=4; do
	prof base $c; prof sw $c
done
prof swn size=64/hold=0/goroutines=256
GOMAXPROCS=$P "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/size=64/hold=0/goroutines=256\$/pool=base\$" -test.benchtime "$pt" -test.mutexprofile /tmp/prof/base-64-0-256.mutex > /tmp/prof/base-64-0-256.mutex.txt 2>&1
tar czf "$out/profiles.tgz" -C /tmp/prof .
echo "profiles done at $(el)s" >> "$out/machine.txt"
GOMAXPROCS=$P "$B" -test.run '^$' -test.bench "^BenchmarkVariantsUncontended\$/(direct/)?pool=(base|s|w|n|sw|swn)\$" -test.benchtime 200ms -test.count 3 > "$out/uncontended16.txt" 2>&1
echo "uncontended done at $(el)s" >> "$out/machine.txt"
for i in $(seq 3 "$passes"); do
	if [ "$(el)" -gt "$budget" ]; then echo "stopped before pass $i at $(el)s" >> "$out/machine.txt"; break; fi
	pass $i
done
echo "end at $(el)s" >> "$out/machine.txt"
