#!/bin/bash
source /work/notes/env.sh
cd /work/main/bench
for i in 1 2 3; do for r in 2 4 8; do
  PGACTOR_ROUNDS=$r ACTORPOOL_BENCH_QUEUES=1 /tmp/q-r.test -test.run '^$' -test.bench 'BenchmarkQueues/cell=(burndown|sustained)/queue=pgactor/workers=(500|2000)$' -test.benchtime 1x 2>&1 | grep '^Bench' | sed "s/queue=pgactor/queue=pgactor-r$r/"
done; done
