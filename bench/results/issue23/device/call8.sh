#!/usr/bin/env bash
# Issue 23 on the 16-core machine, call 8: the pool and the durable actor
# as they are on main after the homes change (a3b0722) and two sessions of
# reviews, in one call. Pack with call8-pack.sh, then, with .dev carried:
#
#   bash bench/results/issue23/device/call8.sh "$OUT" [PASSES] [BUDGET]   # 4 passes, 480 s
#
# Stages, each skipped (and said so in machine.txt) once what is left of
# BUDGET would not cover it; results.tgz is rewritten after each:
#
#   pool16.txt        BenchmarkContended at GOMAXPROCS 16, PASSES passes:
#                     before the homes change (a3b0722^, actorpool only,
#                     renamed pool=before) and main (actorpool,
#                     smartconnpool, chan), alternating
#   uncontended16.txt the uncontended take, both binaries, 10 counts
#   queues16.txt      pgactor at its defaults (2 rounds) and at 4 rounds:
#                     burn-down at 2,000 workers (2 runs each,
#                     alternating), sustained, producers, processes
#
# Compare with
#
#   benchstat -filter '.unit:(ops/s OR p99.9-ns)' -col '/pool@(actorpool before smartconnpool chan)' pool16.txt
set -u
dest=${1:?usage: call8.sh OUT [PASSES] [BUDGET]}; passes=${2:-4}; budget=${3:-480}
out=$(mktemp -d /tmp/call8.XXXXXX)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd); cd "$root"
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
note() {
	echo "$*" >> "$out/machine.txt"
	cp "$out/machine.txt" "$dest/machine.txt"
	tar -C "$out" -czf "$dest/results.tgz.new" . && mv "$dest/results.tgz.new" "$dest/results.tgz"
}
fits() { if [ $(( $(el) + $1 )) -le "$budget" ]; then return 0; fi; note "skipped at $(el)s: $2 (needs ~$1 s)"; return 1; }
mkdir -p "$dest"
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; echo "commit: $(cat .dev/bench.commit 2>/dev/null)"; echo "passes $passes, budget ${budget}s"; } > "$out/machine.txt"
for b in bench-before bench; do
	[ -x ".dev/$b.test" ] || xz -dkf ".dev/$b.test.xz" || { note "no .dev/$b.test"; exit 1; }
	chmod +x ".dev/$b.test"
done
cells='^BenchmarkContended$/.*/.*/.*/^pool=(actorpool|smartconnpool|chan)$'
for i in $(seq 1 "$passes"); do
	fits 45 "pool pass $i" || break
	GOMAXPROCS=16 .dev/bench-before.test -test.run '^$' -test.bench '^BenchmarkContended$/.*/.*/.*/^pool=actorpool$' -test.benchtime 60ms 2>&1 \
		| sed 's/pool=actorpool-16/pool=before-16/' >> "$out/pool16.txt"
	GOMAXPROCS=16 .dev/bench.test -test.run '^$' -test.bench "$cells" -test.benchtime 60ms >> "$out/pool16.txt" 2>&1
	note "pool pass $i done at $(el)s"
done
for b in bench-before bench; do
	GOMAXPROCS=16 ".dev/$b.test" -test.run '^$' -test.bench '^BenchmarkUncontendedDirect$/pool=actorpool$' \
		-test.benchtime 200ms -test.count 10 2>&1 | sed "s/pool=actorpool-16/pool=$b-16/" >> "$out/uncontended16.txt"
done
note "uncontended done at $(el)s"
source .dev/pg-start.sh >> "$out/machine.txt" 2>&1 || { note "PostgreSQL did not start"; exit 1; }
note "PostgreSQL up at $(el)s"
queue() { # cell-regexp seconds what
	fits "$2" "$3" || return 1
	ACTORPOOL_BENCH_QUEUES=1 GOMAXPROCS=16 .dev/bench.test -test.run '^$' -test.bench "BenchmarkQueues/cell=$1" \
		-test.benchtime 1x -test.timeout 5m 2>&1 | grep -E '^Benchmark|FAIL|panic' >> "$out/queues16.txt"
	note "$3 done at $(el)s"
}
for i in 1 2; do
	for q in pgactor pgactor-rounds4; do
		queue "burndown/queue=$q\$/workers=2000\$" 14 "burn-down $q, run $i"
	done
done
queue 'processes/queue=pgactor$/' 32 "processes pgactor"
queue 'sustained/queue=pgactor$/workers=2000$' 24 "sustained pgactor"
queue 'producers/queue=pgactor$/producers=16/workers=500$' 24 "producers pgactor"
for i in $(seq $((passes + 1)) $((passes + 2))); do
	fits 45 "extra pool pass $i" || break
	GOMAXPROCS=16 .dev/bench-before.test -test.run '^$' -test.bench '^BenchmarkContended$/.*/.*/.*/^pool=actorpool$' -test.benchtime 60ms 2>&1 \
		| sed 's/pool=actorpool-16/pool=before-16/' >> "$out/pool16.txt"
	GOMAXPROCS=16 .dev/bench.test -test.run '^$' -test.bench "$cells" -test.benchtime 60ms >> "$out/pool16.txt" 2>&1
	note "pool pass $i done at $(el)s"
done
note "end at $(el)s"
