#!/bin/bash
source /work/notes/env.sh
cd /work/main/bench
for i in 1 2 3; do for v in base head; do
  ACTORPOOL_BENCH_QUEUES=1 /tmp/p-$v.test -test.run '^$' -test.bench 'BenchmarkQueues/cell=producers/queue=pgactor/producers=16/workers=500$' -test.benchtime 1x 2>&1 | grep '^Bench' | sed "s/queue=pgactor/queue=pgactor-$v/"
done
ACTORPOOL_BENCH_QUEUES=1 /tmp/p-head.test -test.run '^$' -test.bench 'BenchmarkQueues/cell=producers/queue=river/producers=16/workers=500$' -test.benchtime 1x 2>&1 | grep '^Bench'
done
