#!/bin/bash
# 2026-12-04 evening (bench/results/2026-12-04-h200.md):
# 1. where the resnet50 service's overhead alone comes from: the service alone,
#    4 s at 90/s on CPUs 2-3, without fikit; under fikit-launch with no fikitd
#    (hooks only, passthrough); under fikit with its default sampling (0.02);
#    and with sample_rate = 0. Two rounds, alternating.
# 2. the new default max_queued_us = 100 against the old 300, resnet50.
source "$(dirname "$0")/env.sh"
mkdir -p /tmp/ov-state
for s in 0.02 0; do
  printf '[fikit]\nbackend = cuda\n[daemon]\nsocket = /tmp/ov.sock\nstate_dir = /tmp/ov-state\n[client]\nsample_rate = %s\n[task.hp]\npriority = 0\n' "$s" >"/tmp/ov-$s.ini"
done
sed 's|/tmp/ov.sock|/tmp/ov-none.sock|' /tmp/ov-0.02.ini >/tmp/ov-none.ini
taskset -c 4-15 build/tools/fikitd -f -c /tmp/ov-0.02.ini 2>/tmp/ov-fikitd.log &
serve() { timeout 60 taskset -c 2-3 "$@" python3 bench/torch_workloads.py serve --model resnet50 --rate 90 --seconds 4 2>/dev/null |
  tail -1 | python3 -c "import json,sys,statistics as s; r=json.loads(sys.stdin.read()); e=r['service_each_ms']
print(f\"service p50 {s.median(e):.2f} ms mean {s.mean(e):.2f} ms  latency p50 {r['p50_ms']:.2f} p99 {r['p99_ms']:.2f} ms\")"; }
L="build/tools/fikit-launch -t hp -c"
for i in 1 2; do
  echo "round $i  no fikit:              $(serve)"
  echo "round $i  hooks only (no fikitd): $(serve $L /tmp/ov-none.ini --)"
  echo "round $i  fikit, sample 0.02:     $(serve $L /tmp/ov-0.02.ini --)"
  echo "round $i  fikit, sample 0:        $(serve $L /tmp/ov-0.ini --)"
done 2>&1 | tee "$OUT/overhead.txt"
kill %1; wait
timeout 210 bench/evaluate --build build --out /tmp/q300 --workloads resnet50 --seconds 4 --cpus 2-3:0,1,4-15 \
  --variant q300:max_queued_us=300 \
  --modes "fikit fill, time-slicing;fikit fill, time-slicing [q300];fikit fill, mps;fikit fill, mps [q300]" \
  >"$OUT/q300.log" 2>&1
cp /tmp/q300/results.json "$OUT/q300.json"
grep -E '^\[|^\| (hp alone|lp alone|fikit fill)' "$OUT/q300.log" | tail -30; cat "$OUT/overhead.txt"
