#!/bin/bash
# ab-sus.sh out N bin...: sustained cell, pgactor at 500 and 2000 workers, alternating binaries
source /work/notes/env.sh
out=$1; n=$2; shift 2
cd /work/main/bench
for i in $(seq 1 $n); do
  for b in "$@"; do
    name=$(basename $b .test); name=${name#q-}
    ACTORPOOL_BENCH_QUEUES=1 $b -test.run '^$' -test.bench 'BenchmarkQueues/cell=sustained/queue=pgactor$/workers=(500|2000)$' -test.benchtime 1x 2>&1 | grep 'tasks/s' | sed "s/queue=pgactor/queue=pgactor-$name/" >> $out
    ACTORPOOL_BENCH_QUEUES=1 $b -test.run '^$' -test.bench 'BenchmarkQueues/cell=producers/queue=pgactor$/producers=16/workers=500$' -test.benchtime 1x 2>&1 | grep 'tasks/s' | sed "s/queue=pgactor/queue=pgactor-$name/" >> $out
  done
done
