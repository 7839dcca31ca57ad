#!/bin/sh
# The run of docs/benchmarks.md's "Issue 22" section, from bench/: three
# fresh processes of every BenchmarkQueues cell at the issue's scale, so
# that the queues alternate within each run.
set -e
. /work/notes/env.sh
go test -c -o /tmp/queues.test .
for i in 1 2 3; do
	uptime >&2
	ACTORPOOL_BENCH_QUEUES=1 /tmp/queues.test -test.run '^$' -test.bench BenchmarkQueues -test.benchtime 1x -test.timeout 2h
done > results/issue22/raw-queues.txt 2> results/issue22/run.log
uptime >&2
go tool benchstat -col /queue results/issue22/raw-queues.txt > results/issue22/benchstat-queues.txt
go tool benchstat -col '/queue@(jetstream jetstream-syncalways jetstream-r3 pgactor river)' results/issue22/raw-queues.txt > results/issue22/benchstat-queues-jetstream-base.txt
python3 results/issue22/summary.py results/issue22/raw-queues.txt > results/issue22/summary.txt

# The profile, run afterwards with the same binary, from results/issue22:
#   ACTORPOOL_BENCH_QUEUES=1 /tmp/queues.test -test.run '^$' -test.bench 'BenchmarkQueues/cell=burndown/queue=jetstream$/workers=500' -test.benchtime 1x -test.count 3 -test.cpuprofile cpu-jetstream-burndown-500.pprof > raw-profile-burndown.txt
#   go tool pprof -top -cum -nodecount=40 /tmp/queues.test cpu-jetstream-burndown-500.pprof > pprof-top-cum.txt
#   go tool pprof -top -cum -focus='actorpool/jsactor\.' -nodecount=40 /tmp/queues.test cpu-jetstream-burndown-500.pprof > pprof-top-cum-jsactor.txt
#   go tool pprof -top -nodecount=25 /tmp/queues.test cpu-jetstream-burndown-500.pprof > pprof-top-flat.txt
