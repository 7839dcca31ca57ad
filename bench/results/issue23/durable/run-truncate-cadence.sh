#!/bin/bash
source /work/notes/env.sh
cd /work/main/bench
for i in 1 2 3; do for v in base a b; do
  echo "# v=$v i=$i"
  ACTORPOOL_BENCH_QUEUES=1 /tmp/q-$v.test -test.run '^$' -test.bench 'BenchmarkQueues/cell=(burndown|sustained)/queue=pgactor/workers=(500|2000)$' -test.benchtime 1x 2>&1 | grep '^Bench' | sed "s/queue=pgactor/queue=pgactor-$v/"
done; done
