#!/usr/bin/env bash
# Issue 23's seventh call on the 16-core machine: first the fetch with a
# bookmark (durable/fetch/v7-bookmark.sql) against migration 5's, on the
# server alone (durable/fetch/run-cpu.sh: pgbench clients as rounds, the
# backends' CPU per task and the index entries read per task), at 8
# clients (8 rounds in flight, where 16 cores top out) and at 2 (the
# default); then confirm16.sh's check of the pool as landed. Needs .dev
# from pack.sh and pgbench beside it (cp /usr/lib/postgresql/15/bin/pgbench
# .dev/; its libpq is in the packed PostgreSQL's libs).
#
#   bash bench/results/issue23/device/call7.sh "$OUT" [PASSES]   # default 2
#
# Writes OUT/results.tgz (machine.txt, fetch16.txt) and OUT/confirm/.
set -u
dest=${1:?usage: call7.sh OUT [PASSES]}; passes=${2:-2}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd); cd "$root"
out=$(mktemp -d /tmp/call7.XXXXXX)
start=$(date +%s)
note() {
	echo "$*" >> "$out/machine.txt"
	tar -C "$out" -czf "$dest/results.tgz.new" . && mv "$dest/results.tgz.new" "$dest/results.tgz"
}
mkdir -p "$dest"
{ echo "nproc: $(nproc)"; grep -m1 'model name' /proc/cpuinfo; echo "commit: $(git rev-parse HEAD 2>/dev/null || cat .dev/bench.commit)"; } > "$out/machine.txt"
chmod +x .dev/pgbench
source .dev/pg-start.sh >> "$out/machine.txt" 2>&1 || { note "PostgreSQL did not start"; exit 1; }
for c in 8 2; do
	(cd bench/results/issue23/durable/fetch && CLIENTS=$c PGBENCH=$root/.dev/pgbench ./run-cpu.sh 50000 1 "$passes" v5 v7-bookmark) >> "$out/fetch16.txt" 2>&1
	note "fetch at $c clients done at $(( $(date +%s) - start ))s"
done
PINNED=${PINNED:-0} bash "$here/confirm16.sh" "$dest/confirm" "${POOLPASSES:-3}"
note "end at $(( $(date +%s) - start ))s"
