#!/bin/bash
# max_queued_us = 100 against the default 300, side by side, in all three
# pairs, with the service on CPUs 2-3 and the job and fikitd on the others
# (2026-12-04 evening; bench/results/2026-12-04-h200.md).
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
timeout 560 bench/evaluate --build build --out /tmp/queue --seconds 5 --cpus 2-3:0,1,4-15 \
  --variant q100:max_queued_us=100 \
  --modes "fikit fill, time-slicing;fikit fill, time-slicing [q100];fikit fill, mps;fikit fill, mps [q100]" \
  >"$OUT/queue.log" 2>&1
cp /tmp/queue/results.json "$OUT/queue.json"
grep -E '^\[|^\| (hp alone|lp alone|fikit fill)' "$OUT/queue.log" | tail -60
