#!/bin/bash
# Issue 23, device call 4 (final): v4.test (bench/results/issue23/build-variants.sh:
# base=22fd247 so=be1cb9d7972d f1=6ab1edc77e0e f2=13ab1527e96d) at
# GOMAXPROCS 16, every contended cell, pools back to back per cell; CPU
# profiles of f1; the uncontended take; then the same pinned to 2 cores.
# Usage: run4.sh OUTDIR BENCHTIME PASSES BUDGET16_S BUDGET2_S
set -u
out=$1; bt=${2:-60ms}; passes=${3:-6}; b16=${4:-110}; b2=${5:-185}
B=$(dirname "$0")/v4.test
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; echo "benchtime=$bt"; } > "$out/machine.txt"
pass16() { GOMAXPROCS=16 "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/.*/.*/.*/^pool=(base|so|f1|f2|smartconnpool|chan)\$" -test.benchtime "$bt" >> "$out/raw16.txt" 2>&1; echo "16-core pass $1 done at $(el)s" >> "$out/machine.txt"; }
pass2() { GOMAXPROCS=2 taskset -c 0,1 "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/.*/.*/.*/^pool=(base|f1|f2|smartconnpool|chan)\$" -test.benchtime "$bt" >> "$out/raw2.txt" 2>&1; echo "2-core pass $1 done at $(el)s" >> "$out/machine.txt"; }
unc() { # procs pin
	GOMAXPROCS=$1 $2 "$B" -test.run '^$' -test.bench "^BenchmarkVariantsUncontended\$" -test.benchtime 200ms -test.count 6 > "$out/uncontended$1.txt" 2>&1
	echo "uncontended $1 done at $(el)s" >> "$out/machine.txt"
}
pass16 1
pass16 2
mkdir -p /tmp/prof
prof() { # pool cell
	n="$1-$(echo "$2" | sed 's/size=//;s/hold=//;s/goroutines=//;s#/#-#g')"
	GOMAXPROCS=16 "$B" -test.run '^$' -test.bench "^BenchmarkVariants\$/$2\$/pool=$1\$" -test.benchtime 1s -test.cpuprofile "/tmp/prof/$n.prof" > "/tmp/prof/$n.txt" 2>&1
}
for c in size=64/hold=0/goroutines=256 size=64/hold=1us/goroutines=256 size=8/hold=0/goroutines=1024 size=64/hold=0/goroutines=1024; do prof f1 $c; done
prof base size=8/hold=0/goroutines=1024
tar czf "$out/profiles.tgz" -C /tmp/prof .
echo "profiles done at $(el)s" >> "$out/machine.txt"
unc 16 ""
for i in $(seq 3 "$passes"); do
	if [ "$(el)" -gt "$b16" ]; then echo "stopped before 16-core pass $i at $(el)s" >> "$out/machine.txt"; break; fi
	pass16 $i
done
unc 2 "taskset -c 0,1"
for i in $(seq 1 "$passes"); do
	if [ "$(el)" -gt "$b2" ]; then echo "stopped before 2-core pass $i at $(el)s" >> "$out/machine.txt"; break; fi
	pass2 $i
done
echo "end at $(el)s" >> "$out/machine.txt"
