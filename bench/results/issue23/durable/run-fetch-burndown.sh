#!/bin/bash
# usage: ab.sh out.txt N bin1 bin2 ... ; alternates binaries, burn-down pgactor 500 and 2000
source /work/notes/env.sh
out=$1; n=$2; shift 2
cd /work/main/bench
for i in $(seq 1 $n); do
  for b in "$@"; do
    name=$(basename $b .test)
    ACTORPOOL_BENCH_QUEUES=1 $b -test.run '^$' -test.bench "BenchmarkQueues/cell=burndown/queue=pgactor\$/workers=${W:-500}\$" -test.benchtime 1x 2>&1 | grep 'tasks/s' | sed "s/queue=pgactor/queue=pgactor-$name/" >> $out
  done
done
