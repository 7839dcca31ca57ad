#!/usr/bin/env python3
"""Medians of raw-queues.txt per cell and queue, as docs/benchmarks.md's
Issue 22 tables print them: python3 summary.py raw-queues.txt"""
import re, sys, statistics
from collections import defaultdict

vals = defaultdict(list)  # (cell, queue, param, unit) -> values
for line in open(sys.argv[1]):
    m = re.match(r'BenchmarkQueues/cell=(\w+)/queue=([\w-]+)/(\w+=\w+)-\d+\s+\d+\s+(.*)', line)
    if not m:
        continue
    cell, queue, param, rest = m.groups()
    for v, unit in re.findall(r'([\d.]+) (\S+)', rest):
        vals[(cell, queue, param, unit)].append(float(v))

queues = ['jetstream', 'jetstream-syncalways', 'jetstream-r3', 'pgactor', 'river', 'river-defaults']
for (cell, unit) in [('burndown', 'tasks/s'), ('sustained', 'tasks/s'), ('sustained', 'start-MB'), ('sustained', 'end-MB'),
                     ('latency', 'p50-ms'), ('latency', 'p99-ms'), ('recovery', 'recovery-s'), ('recovery', 'recovered')]:
    print(f'## {cell} {unit}')
    for q in queues:
        for (c, qq, p, u), xs in sorted(vals.items()):
            if c == cell and qq == q and u == unit:
                print(f'{q:22s} {p:16s} median {statistics.median(xs):12.2f}  runs {", ".join(f"{x:g}" for x in xs)}')
    print()
