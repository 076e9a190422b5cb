#!/bin/bash
# Does pinning the service to its own CPUs take the run-to-run noise out of its
# service time (2026-12-04 evening; bench/results/2026-12-04-h200.md)?
# 1. the resnet50 service alone, 4 s at 90/s, three times unpinned and three
#    times on its own core, alternating;
# 2. resnet50 gap filling, pinned, with max_queued_us = 100 beside the default
#    300, and without starving grants on time-slicing.
source "$(dirname "$0")/env.sh"
lscpu | grep -E '^(CPU\(s\)|Thread|Core|Socket|Model name|NUMA node)'
# The service gets CPU 2 and its SMT siblings; the job and fikitd the rest.
HP=$(cat /sys/devices/system/cpu/cpu2/topology/thread_siblings_list)
LP=$(python3 -c "
import os
hp = set()
for part in '$HP'.split(','):
    a, _, b = part.partition('-'); hp.update(range(int(a), int(b or a) + 1))
print(','.join(str(c) for c in sorted(os.sched_getaffinity(0) - hp)))")
echo "service CPUs $HP, job and fikitd CPUs $LP"
serve() { $1 python3 bench/torch_workloads.py serve --model resnet50 --rate 90 --seconds 4 2>/dev/null | tail -1 |
  python3 -c "import json,sys,statistics as s; r=json.loads(sys.stdin.read()); e=r['service_each_ms']
print(f\"service p50 {s.median(e):.2f} ms mean {s.mean(e):.2f} ms  latency p50 {r['p50_ms']:.2f} p99 {r['p99_ms']:.2f} ms\")"; }
for i in 1 2 3; do
  echo "unpinned $i: $(serve '')"
  echo "pinned   $i: $(serve "taskset -c $HP")"
done 2>&1 | tee "$OUT/noise.txt"
timeout 330 bench/evaluate --build build --out /tmp/pin --workloads resnet50 --seconds 5 --cpus "$HP:$LP" \
  --variant q100:max_queued_us=100 --variant q100ns:max_queued_us=100,starve_after_us=0 \
  --modes "fikit fill, time-slicing;fikit fill, time-slicing [q100];fikit fill, time-slicing [q100ns];fikit fill, mps;fikit fill, mps [q100]" \
  >"$OUT/pin.log" 2>&1
cp /tmp/pin/results.json "$OUT/pin.json"
tail -45 "$OUT/pin.log"; cat "$OUT/noise.txt"
