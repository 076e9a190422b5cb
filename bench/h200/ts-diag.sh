#!/bin/bash
# Why resnet50 under gap filling on time-slicing missed its p99 in the late
# afternoon of 2026-12-04 (bench/results/2026-12-04-h200.md), and the guard
# between 1.1 and off:
# 1. resnet50 fill on time-slicing and on MPS, each twice in the same call (the
#    variant "again" changes nothing), traces kept for bench/trace_metrics.py;
# 2. beside at a 70 % cap, without the guard and with beside_max_slowdown = 1.3.
source "$(dirname "$0")/env.sh"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
timeout 240 bench/evaluate --build build --out /tmp/diag --workloads resnet50 --seconds 5 --keep \
  --variant again:spin_us=auto \
  --modes "fikit fill, time-slicing;fikit fill, time-slicing [again];fikit fill, mps;fikit fill, mps [again]" \
  >"$OUT/diag.log" 2>&1
cp /tmp/diag/results.json "$OUT/diag.json"
# One file each: a tar of all four (320 MB of JSON) was over the 16 MiB a file may bring back.
for f in /tmp/diag/raw/trace-*.json; do xz -T8 -6 -c "$f" >"$OUT/$(basename "$f").xz"; done
timeout 320 bench/evaluate --build build --out /tmp/guard --workloads resnet50,bert --seconds 8 --beside-caps 70 \
  --variant g13:beside_max_slowdown=1.3 \
  --modes "fikit beside, mps, lp capped 70%;fikit beside, mps, lp capped 70% [g13]" \
  >"$OUT/guard.log" 2>&1
cp /tmp/guard/results.json "$OUT/guard.json"
tail -40 "$OUT/diag.log"; tail -40 "$OUT/guard.log"
