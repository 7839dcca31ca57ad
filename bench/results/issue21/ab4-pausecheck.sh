# The pause-check check: the final bench binary and one built without the
# fetch's NOT EXISTS on actors.paused_at, run alternately.
set -eu
cells='BenchmarkQueues/cell=(latency|burndown)/queue=pgactor/(rate=1000|workers=500)$'
run() { ACTORPOOL_BENCH_QUEUES=1 "$1" -test.run '^$' -test.bench "$cells" -test.benchtime 1x -test.count 1 >>"$2" 2>&1; }
for r in 1 2 3 4 5 6 7 8; do
  if [ $((r%2)) = 1 ]; then run /work/bin/bench-final.test /tmp/ab4/final.txt; run /work/bin/bench-nopause.test /tmp/ab4/nopause.txt
  else run /work/bin/bench-nopause.test /tmp/ab4/nopause.txt; run /work/bin/bench-final.test /tmp/ab4/final.txt; fi
  echo round $r $(date +%T)
done
