# The with/without-index check: the same bench binary built with and
# without migration 3's tasks_list index, run alternately.
set -eu
cells='BenchmarkQueues/cell=(burndown|sustained)/queue=pgactor/workers=(100|500)$'
run() { ACTORPOOL_BENCH_QUEUES=1 "$1" -test.run '^$' -test.bench "$cells" -test.benchtime 1x -test.count 1 >>"$2" 2>&1; }
for r in 1 2 3 4; do
  if [ $((r%2)) = 1 ]; then run /work/bin/bench-after.test /tmp/ab2/after.txt; run /work/bin/bench-noidx.test /tmp/ab2/noidx.txt
  else run /work/bin/bench-noidx.test /tmp/ab2/noidx.txt; run /work/bin/bench-after.test /tmp/ab2/after.txt; fi
  echo round $r $(date +%T)
done
