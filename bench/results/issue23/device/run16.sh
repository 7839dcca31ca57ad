#!/usr/bin/env bash
# Issue 23's measurements on a 16-core machine, in one call: run from the
# repository's root after pack.sh has filled .dev/ here and .dev travels
# with the call. Stages run most needed first; each is skipped, and said
# so in machine.txt, once what is left of BUDGET seconds would not cover
# it, so a call that runs short still brings back whole files.
#
#   bash bench/results/issue23/device/run16.sh "$OUT" [BUDGET]   # default 570 s
#
# Writes to OUT: machine.txt (the machine, the commit, when each stage
# ended), pool16.txt and pool2.txt (the contended cells, actorpool,
# smartconnpool and the channel back to back in each, at GOMAXPROCS 16
# and pinned to 2 cores), uncontended16.txt, and queues16.txt (the queue
# cells at GOMAXPROCS 16: burn-down, sustained, producers, processes),
# and for one burn-down each of pgactor at 2 and 4 rounds, profile16.txt
# (its result, slowed by the sampler beside it: on 2 cores, 23k tasks/s
# against 60-70k; the queue cells are the figures), waits16-<queue>.txt
# (what the server's backends waited on) and cpu16-<queue>.prof (the Go
# process; go tool pprof reads it without the binary).
# Compare with benchstat, e.g.
#
#   benchstat -filter '.unit:(ops/s OR p99.9-sec)' -col '/pool@(actorpool smartconnpool chan)' pool16.txt
#   benchstat -col /queue queues16.txt
#
# PROCS (default 16) and SCALE=quick (the bench module's quick scale, its
# 100 workers and 4 producers) let the script be tried on a small
# machine; ACTORPOOL_POSTGRES, when set and reachable, is used instead of
# starting the packed PostgreSQL.
set -u
out=${1:?usage: run16.sh OUT [BUDGET]}; budget=${2:-570}
procs=${PROCS:-16}
root=$(cd "$(dirname "$0")/../../../.." && pwd); cd "$root"
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
note() { echo "$*" >> "$out/machine.txt"; }
# fits S: whether a stage of about S seconds still fits the budget.
fits() { if [ $(( $(el) + $1 )) -le "$budget" ]; then return 0; fi; note "skipped at $(el)s: $2 (needs ~$1 s)"; return 1; }

mkdir -p "$out"
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; echo "commit: $(cat .dev/bench.commit 2>/dev/null)"; echo "GOMAXPROCS $procs, budget ${budget}s"; } > "$out/machine.txt"
B=.dev/bench.test
[ -x "$B" ] || xz -dkf .dev/bench.test.xz || { note "no bench binary"; exit 1; }
chmod +x "$B"

pools='^BenchmarkContended$/.*/.*/.*/^pool=(actorpool|smartconnpool|chan)$'
pool16() { GOMAXPROCS=$procs "$B" -test.run '^$' -test.bench "$pools" -test.benchtime 60ms >> "$out/pool16.txt" 2>&1; note "pool pass $1 at GOMAXPROCS $procs done at $(el)s"; }
pool2() { GOMAXPROCS=2 taskset -c 0,1 "$B" -test.run '^$' -test.bench "$pools" -test.benchtime 60ms >> "$out/pool2.txt" 2>&1; note "pool pass $1 pinned to 2 cores done at $(el)s"; }

# The pool: three passes first, so that even a short call brings a table.
for i in 1 2 3; do fits 25 "pool pass $i" && pool16 $i; done
GOMAXPROCS=$procs "$B" -test.run '^$' -test.bench '^BenchmarkUncontended(Direct)?$/pool=(actorpool|smartconnpool|chan)$' \
	-test.benchtime 200ms -test.count 6 > "$out/uncontended16.txt" 2>&1
note "uncontended done at $(el)s"

# PostgreSQL: the packed one, unless one is given and answers.
if [ -z "${ACTORPOOL_POSTGRES:-}" ] || ! timeout 2 bash -c '</dev/tcp/127.0.0.1/5432' 2>/dev/null; then
	source .dev/pg-start.sh >> "$out/machine.txt" 2>&1 || { note "PostgreSQL did not start"; exit 1; }
fi
full=1 workers='(500|2000)' many=2000 one=500 producers=16
[ "${SCALE:-}" = quick ] && full= workers=100 many=100 one=100 producers=4
queue() { # cell-regexp seconds what
	fits "$2" "$3" || return 1
	ACTORPOOL_BENCH_QUEUES=$full GOMAXPROCS=$procs "$B" -test.run '^$' -test.bench "BenchmarkQueues/cell=$1" \
		-test.benchtime 1x -test.timeout 10m 2>&1 | grep -E '^Benchmark|FAIL|panic' >> "$out/queues16.txt"
	note "$3 done at $(el)s"
}
# Three rounds, each queue once per round, so that the queues alternate.
for i in 1 2 3; do
	for q in pgactor pgactor-rounds4 pgactor-rounds8 river; do
		queue "burndown/queue=$q\$/workers=$workers\$" 20 "burn-down $q, run $i"
	done
done
# Where a burn-down's time goes at 2,000 workers, with 2 and 4 rounds in
# flight: what the server's backends wait on (durable/profile/waits.sql,
# sampled every 10 ms through the inserts and the burn-down) and the Go
# process's CPU profile.
profile() { # queue
	fits 25 "profile of $1" || return 1
	psql "$ACTORPOOL_POSTGRES" -X -q -v n=1000 -f "$(dirname "$0")/../durable/profile/waits.sql" > "$out/waits16-$1.txt" 2>&1 &
	ACTORPOOL_BENCH_QUEUES=$full GOMAXPROCS=$procs "$B" -test.run '^$' -test.bench "BenchmarkQueues/cell=burndown/queue=$1\$/workers=$many\$" \
		-test.benchtime 1x -test.cpuprofile "$out/cpu16-$1.prof" 2>&1 | grep -E '^Benchmark|FAIL|panic' >> "$out/profile16.txt"
	wait
	note "profile of $1 done at $(el)s"
}
profile pgactor
profile pgactor-rounds4
for i in 1 2; do
	for q in pgactor pgactor-rounds4 river; do
		queue "sustained/queue=$q\$/workers=$many\$" 25 "sustained $q, run $i"
	done
done
for q in pgactor pgactor-rounds4 river; do
	queue "producers/queue=$q\$/producers=$producers/workers=$one\$" 22 "producers $q"
done
for q in pgactor river; do
	queue "processes/queue=$q\$/" 30 "processes $q"
done

# More of the pool, as time allows.
for i in 4 5 6; do fits 25 "pool pass $i" && pool16 $i; done
for i in 1 2 3 4; do fits 25 "2-core pool pass $i" && pool2 $i; done
note "end at $(el)s"
