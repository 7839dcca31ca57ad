#!/usr/bin/env bash
# The command of call 5's second run (queues16.txt), on the same warm
# 16-core machine right after run16.sh, whose queue files had not come
# back: the device returns at most 8 files from a call. .dev as pack.sh
# made it at c117989 travelled with the call.
pkill -x postgres; sleep 1; B=.dev/bench.test; [ -x $B ] || xz -dkf $B.xz; chmod +x $B; source .dev/pg-start.sh > $OUT/q.log 2>&1; s=$(date +%s); t() { echo $(( $(date +%s)-s )); }
q() { [ $(t) -gt $2 ] && { echo "skip $1" >> $OUT/q.log; return; }; ACTORPOOL_BENCH_QUEUES=1 GOMAXPROCS=16 $B -test.run '^$' -test.bench "BenchmarkQueues/cell=$1" -test.benchtime 1x -test.timeout 5m 2>&1 | grep -E '^Benchmark|FAIL|panic' >> $OUT/queues16.txt; echo "$1 at $(t)" >> $OUT/q.log; }
for i in 1 2 3; do for k in pgactor pgactor-rounds4 pgactor-rounds8 pgactor-rounds16 river; do q "burndown/queue=$k\$/workers=(500|2000)\$" 140; done; done
for k in pgactor pgactor-rounds8 river; do q "sustained/queue=$k\$/workers=2000\$" 180; done
for k in pgactor pgactor-rounds8 river; do q "producers/queue=$k\$/producers=16/workers=500\$" 225; done
for k in pgactor pgactor-rounds8 river; do q "processes/queue=$k\$/" 250; done
for k in pgactor pgactor-rounds8 river; do q "sustained/queue=$k\$/workers=2000\$" 250; done
echo end $(t) >> $OUT/q.log
