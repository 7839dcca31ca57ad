#!/bin/bash
source /work/notes/env.sh
cd /work/main/bench
for i in 1 2 3 4 5; do for v in a head; do
  ACTORPOOL_BENCH_QUEUES=1 /tmp/p-$v.test -test.run '^$' -test.bench 'BenchmarkQueues/cell=burndown/queue=pgactor/workers=500$' -test.benchtime 1x 2>&1 | grep '^Bench' | sed "s/queue=pgactor/queue=pgactor-$v/"
done; done
