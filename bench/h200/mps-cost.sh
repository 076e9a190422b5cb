#!/bin/bash
# On the lent GPU (issue 41 item 1's open question): is bert's 1.19x as an MPS client with no
# other client MPS's own cost? On 2026-12-06 bert beside a training job capped at 30 % read
# 0.91x of alone and bert alone as an MPS client 1.19x in the same call. Here the two
# interleaved with bert alone, three passes (bench/evaluate --repeat 3), the beside mode
# without a budget as then (MPSCOST_LIMIT, 280 s).
#   bash bench/h200/mps-cost.sh [BUILD]      BUILD: the carried build (default build)
source "$(dirname "$0")/env.sh" "$@"   # --help, BUILD_DIR
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout "${MPSCOST_LIMIT:-280}" python3 bench/evaluate --build "$BUILD_DIR" --workloads bert --load 0.5 \
    --seconds 4 --repeat 3 --beside-caps 30 --variant nobudget:latency_budget=0 \
    --modes "hp alone, mps;fikit beside, mps, lp capped 30% [nobudget]" \
    --out "$OUT/mps-cost" >"$OUT/mps-cost.log" 2>&1
echo "evaluate: exit $?"
grep -E "^\[" "$OUT/mps-cost.log" | sed 's/^\[ *[0-9.]*s\] *//' | grep -E "hp |lp " | cut -c1-120
sed -n '/^| mode /,/^$/p' "$OUT/mps-cost/results.md" 2>/dev/null | cut -d'|' -f1-9
