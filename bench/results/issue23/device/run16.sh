#!/usr/bin/env bash
# Issue 23's measurements on a 16-core machine, in one call: run from the
# repository's root after pack.sh has filled .dev/ here and .dev travels
# with the call. Stages run most needed first; each is skipped, and said
# so in machine.txt, once what is left of BUDGET seconds would not cover
# it, so a call that runs short still brings back whole files.
#
#   bash bench/results/issue23/device/run16.sh "$OUT" [BUDGET]   # default 560 s
#
# The device returns at most 8 files from a call (call 5 lost its queue
# files to that), so the script works in a folder of its own and, after
# every stage, packs it into OUT/results.tgz, with machine.txt beside it
# to read at once. In results.tgz:
#
#   machine.txt      the machine, the commit, when each stage ended
#   pool16.txt       the contended cells at GOMAXPROCS 16, from the
#                    variants binary (build-variants.sh, base = the commit):
#                    actorpool, smartconnpool and the channel back to back
#                    in each cell, with waits/op, and the diagnostics
#                    base-warm (all objects idle before the cell starts)
#                    and base-create100us, chan-create100us (creates of
#                    100 µs instead of none); and, when pack.sh found
#                    part 1's candidate patch, f2m and f2m-warm
#   pool2.txt        the same pinned to 2 cores (GOMAXPROCS 2)
#   uncontended16.txt the uncontended take, the bench module's cells, and
#   uncontended16-variants.txt each version's in the variants binary
#   poolprof16-*     CPU (and mutex) profiles of 1-second runs of the pool
#   queues16.txt     the queue cells at GOMAXPROCS 16: burn-down (pgactor at
#                    2, 4, 8 and 16 rounds, River), then sustained,
#                    producers and processes for pgactor at 2 and 4 rounds,
#                    at the rounds that burned down fastest at 2,000
#                    workers if neither, and River
#   profile16.txt, waits16-<queue>.txt, cpu16-<queue>.prof, cpustat16.txt
#                    one burn-down each at 2 rounds and at the best rounds,
#                    slowed by the samplers beside it: what the server's
#                    backends waited on (durable/profile/waits.sql, every
#                    10 ms), the Go process's CPU profile, and the CPU the
#                    server and the Go process used
#
# Compare with benchstat, e.g.
#
#   benchstat -filter '.unit:(ops/s OR p99.9-sec)' -col '/pool@(base smartconnpool chan)' pool16.txt
#   benchstat -col /queue queues16.txt
#
# PROCS (default 16) and SCALE=quick (the bench module's quick scale, its
# 100 workers and 4 producers) let the script be tried on a small
# machine; RIVER=once runs River's burn-down in the first run only and
# leaves it out of the later cells (a call that has River's figures
# from an earlier one spends its seconds on pgactor); ACTORPOOL_POSTGRES, when set and reachable, is used instead of
# starting the packed PostgreSQL.
set -u
dest=${1:?usage: run16.sh OUT [BUDGET]}; budget=${2:-560}
out=$(mktemp -d /tmp/run16.XXXXXX)
procs=${PROCS:-16}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd); cd "$root"
start=$(date +%s)
el() { echo $(( $(date +%s) - start )); }
# note records a line in machine.txt and packs what is done so far.
note() {
	echo "$*" >> "$out/machine.txt"
	cp "$out/machine.txt" "$dest/machine.txt"
	tar -C "$out" -czf "$dest/results.tgz.new" . && mv "$dest/results.tgz.new" "$dest/results.tgz"
}
# fits S: whether a stage of about S seconds still fits the budget.
fits() { if [ $(( $(el) + $1 )) -le "$budget" ]; then return 0; fi; note "skipped at $(el)s: $2 (needs ~$1 s)"; return 1; }

mkdir -p "$dest"
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; uname -r; echo "commit: $(cat .dev/bench.commit 2>/dev/null)"; echo "GOMAXPROCS $procs, budget ${budget}s"; } > "$out/machine.txt"
B=.dev/bench.test V=.dev/v.test
for f in $B $V; do
	[ -x "$f" ] || xz -dkf "$f.xz" || { note "no $f"; exit 1; }
	chmod +x "$f"
done

pools='^BenchmarkVariants$/.*/.*/.*/^pool=(base|base-warm|base-create100us|f2m|f2m-warm|smartconnpool|chan|chan-create100us)$'
pool16() { GOMAXPROCS=$procs "$V" -test.run '^$' -test.bench "$pools" -test.benchtime 60ms >> "$out/pool16.txt" 2>&1; note "pool pass $1 at GOMAXPROCS $procs done at $(el)s"; }
pool2() { GOMAXPROCS=2 taskset -c 0,1 "$V" -test.run '^$' -test.bench "$pools" -test.benchtime 60ms >> "$out/pool2.txt" 2>&1; note "pool pass $1 pinned to 2 cores done at $(el)s"; }

# The pool: three passes first, so that even a short call brings a table.
for i in 1 2 3; do fits 30 "pool pass $i" && pool16 $i; done
GOMAXPROCS=$procs "$B" -test.run '^$' -test.bench '^BenchmarkUncontended(Direct)?$/pool=(actorpool|smartconnpool|chan)$' \
	-test.benchtime 200ms -test.count 6 > "$out/uncontended16.txt" 2>&1
# Each version of the pool in the variants binary, through the interface
# and through Acquire/Release: what a candidate costs the uncontended take.
GOMAXPROCS=$procs "$V" -test.run '^$' -test.bench '^BenchmarkVariantsUncontended$' \
	-test.benchtime 200ms -test.count 6 > "$out/uncontended16-variants.txt" 2>&1
note "uncontended done at $(el)s"
# Where a take's time goes: the line at 256/64/0, as it forms and with
# the pool warm, and the uncontended-looking 4/8/0.
poolprof() { # cell pool name
	GOMAXPROCS=$procs "$V" -test.run '^$' -test.bench "^BenchmarkVariants\$/$1/^pool=$2\$" -test.benchtime 1s \
		-test.cpuprofile "$out/poolprof16-$3.cpu" -test.mutexprofile "$out/poolprof16-$3.mutex" \
		-test.outputdir "$out" >> "$out/poolprof16.txt" 2>&1
}
if fits 15 "pool profiles"; then
	poolprof 'size=64/hold=0/goroutines=256' base base-64-0-256
	poolprof 'size=64/hold=0/goroutines=256' base-warm warm-64-0-256
	poolprof 'size=8/hold=0/goroutines=4' base base-8-0-4
	# Part 1's candidate where the default lost most (the no-line cells
	# on 64 objects); nothing runs when the binary has no f2m.
	poolprof 'size=64/hold=0/goroutines=16' f2m f2m-64-0-16
	poolprof 'size=64/hold=0/goroutines=16' base base-64-0-16
	note "pool profiles done at $(el)s"
fi

# PostgreSQL: the packed one, unless one is given and answers.
if [ -z "${ACTORPOOL_POSTGRES:-}" ] || ! timeout 2 bash -c '</dev/tcp/127.0.0.1/5432' 2>/dev/null; then
	source .dev/pg-start.sh >> "$out/machine.txt" 2>&1 || { note "PostgreSQL did not start"; PGFAILED=1; }
fi
full=1 workers='(500|2000)' many=2000 one=500 producers=16
[ "${SCALE:-}" = quick ] && full= workers=100 many=100 one=100 producers=4
queue() { # cell-regexp seconds what
	fits "$2" "$3" || return 1
	ACTORPOOL_BENCH_QUEUES=$full GOMAXPROCS=$procs "$B" -test.run '^$' -test.bench "BenchmarkQueues/cell=$1" \
		-test.benchtime 1x -test.timeout 10m 2>&1 | grep -E '^Benchmark|FAIL|panic' >> "$out/queues16.txt"
	note "$3 done at $(el)s"
}
# pgcpu: the CPU seconds (ticks) the server's processes have used, those
# that ended included (the postmaster's children's times).
pgcpu() {
	local pm t=0
	pm=$(pgrep -o -x postgres) || { echo 0; return; }
	t=$(awk '{print $14+$15+$16+$17}' "/proc/$pm/stat")
	for p in $(pgrep -x postgres); do
		[ "$p" = "$pm" ] && continue
		t=$(( t + $(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0) ))
	done
	echo "$t"
}
if [ -z "${PGFAILED:-}" ]; then
	# Three rounds, each queue once per round, so that the queues alternate.
	for i in 1 2 3; do
		for q in pgactor pgactor-rounds4 pgactor-rounds8 pgactor-rounds16; do
			queue "burndown/queue=$q\$/workers=$workers\$" 12 "burn-down $q, run $i"
		done
		[ "${RIVER:-}" = once ] && [ "$i" != 1 ] && continue
		queue "burndown/queue=river\$/workers=$workers\$" 25 "burn-down river, run $i"
	done
	# The rounds that burned down fastest at the most workers, by the mean.
	best=$(awk -v w="workers=$many-" '$1 ~ /cell=burndown\/queue=pgactor/ && index($1, w) { split($1, a, "queue="); split(a[2], b, "/"); s[b[1]] += $3; n[b[1]]++ }
		END { for (k in s) if (s[k]/n[k] > m) { m = s[k]/n[k]; best = k }; print best }' "$out/queues16.txt")
	[ -n "$best" ] || best=pgactor-rounds4
	note "best rounds at $many workers: $best"
	# The default, 4 rounds (the candidate a default scaled by the cores
	# would give 16 of them), the fastest if neither, and River.
	kinds="pgactor pgactor-rounds4"
	case $best in pgactor | pgactor-rounds4) ;; *) kinds="$kinds $best" ;; esac
	[ "${RIVER:-}" = once ] || kinds="$kinds river"
	# Where a burn-down's time goes at the most workers, at 2 rounds and at
	# the best: what the server's backends wait on and the Go process's CPU
	# profile, and the CPU each used (ticks of 1/100 s).
	profile() { # queue
		fits 20 "profile of $1" || return 1
		psql "$ACTORPOOL_POSTGRES" -X -q -v n=1000 -f "$here/../durable/profile/waits.sql" > "$out/waits16-$1.txt" 2>&1 &
		local c0 p0 c1 p1
		c0=$(awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat); p0=$(pgcpu)
		times > "$out/.times0"
		ACTORPOOL_BENCH_QUEUES=$full GOMAXPROCS=$procs "$B" -test.run '^$' -test.bench "BenchmarkQueues/cell=burndown/queue=$1\$/workers=$many\$" \
			-test.benchtime 1x -test.cpuprofile "$out/cpu16-$1.prof" 2>&1 | grep -E '^Benchmark|FAIL|panic' >> "$out/profile16.txt"
		c1=$(awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat); p1=$(pgcpu)
		wait
		times > "$out/.times1"
		echo "$1: machine busy ticks $((c1 - c0)), server ticks $((p1 - p0)); this script's children's user and sys before [$(sed -n 2p "$out/.times0")] and after [$(sed -n 2p "$out/.times1")], psql's included" >> "$out/cpustat16.txt"
		rm -f "$out/.times0" "$out/.times1"
		note "profile of $1 done at $(el)s"
	}
	profile pgactor
	[ "$best" != pgactor ] && profile "$best"
	for i in 1 2; do
		for q in $kinds; do
			queue "sustained/queue=$q\$/workers=$many\$" 22 "sustained $q, run $i"
		done
	done
	for q in $kinds; do
		queue "producers/queue=$q\$/producers=$producers/workers=$one\$" 22 "producers $q"
	done
	for q in $kinds; do
		queue "processes/queue=$q\$/" 30 "processes $q"
	done
fi

# More of the pool, as time allows.
for i in 4 5 6; do fits 30 "pool pass $i" && pool16 $i; done
for i in 1 2 3 4; do fits 30 "2-core pool pass $i" && pool2 $i; done
note "end at $(el)s"
