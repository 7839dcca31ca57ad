#!/bin/bash
# Issue 23, device call 3: the variants in v3.test at GOMAXPROCS 16, every
# contended cell, pools back to back per cell, and CPU profiles of sop.
# Usage: run3.sh OUTDIR BENCHTIME PASSES BUDGET_S PROFTIME
set -u
out=$1; bt=${2:-60ms}; passes=${3:-5}; budget=${4:-90}; pt=${5:-1s}
B=$(dirname "$0")/v3.test
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; echo "benchtime=$bt"; } > "$out/machine.txt"
pools='(base|so|sop|sop4|sopn|smartconnpool|chan)'
pass() { GOMAXPROCS=16 "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/.*/.*/.*/^pool=$pools\$" -test.benchtime "$bt" >> "$out/raw16.txt" 2>&1; echo "pass $1 done at $(el)s" >> "$out/machine.txt"; }
pass 1
pass 2
mkdir -p /tmp/prof
prof() { # pool cell
	n="$1-$(echo "$2" | sed 's/size=//;s/hold=//;s/goroutines=//;s#/#-#g')"
	GOMAXPROCS=16 "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/$2\$/pool=$1\$" -test.benchtime "$pt" -test.cpuprofile "/tmp/prof/$n.prof" > "/tmp/prof/$n.txt" 2>&1
}
for c in size=64/hold=0/goroutines=256 size=64/hold=0/goroutines=1024 size=8/hold=1us/goroutines=16 size=8/hold=0/goroutines=256; do
	prof sop $c
done
tar czf "$out/profiles.tgz" -C /tmp/prof .
echo "profiles done at $(el)s" >> "$out/machine.txt"
for i in $(seq 3 "$passes"); do
	if [ "$(el)" -gt "$budget" ]; then echo "stopped before pass $i at $(el)s" >> "$out/machine.txt"; break; fi
	pass $i
done
echo "end at $(el)s" >> "$out/machine.txt"
