#!/bin/bash
# On the lent GPU (issue 41, item 1; and item 3): the service's latency budget held by
# fikitd, measured. bench/evaluate's pairs (BUDGET_WORKLOADS, default cuda) at load 0.5 on time-slicing,
# fikit fill with the default budget (1.10), with 1.25 and with none, against
# time-slicing, MPS and MPS with the job's client priority lowered, --repeat 2 (each
# mode's runs between runs of the service alone), BUDGET_SECONDS (4) of requests a run;
# then bench/h200/long_kernels.py (20 kernels of 50 ms beside a service that never
# pauses) in what is left of the call. Prints each part's table last.
#   bash bench/h200/budget.sh [BUILD]     BUILD: the carried build (default build)
# BUDGET_SECONDS, BUDGET_REPEAT (2), BUDGET_WORKLOADS (cuda; cuda,bert,resnet50 need PyTorch),
# BUDGET_LIMIT (the evaluation's limit, 330 s), LONG_SECONDS (the long-kernel part's, 240 s;
# 0 leaves the part out).
set -u
case ${1:-} in -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
BUILD_DIR=${1:-build}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
MODES="time-slicing;mps;mps, lp client priority 1;fikit fill, time-slicing"
MODES+=";fikit fill, time-slicing [budget125];fikit fill, time-slicing [nobudget]"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== the budget, ${BUDGET_WORKLOADS:-cuda}"
timeout "${BUDGET_LIMIT:-330}" python3 "$SRC/bench/evaluate" --build "$BUILD_DIR" --workloads "${BUDGET_WORKLOADS:-cuda}" --load 0.5 \
    --seconds "${BUDGET_SECONDS:-4}" --repeat "${BUDGET_REPEAT:-2}" --modes "$MODES" \
    --variant budget125:latency_budget=1.25 --variant nobudget:latency_budget=0 \
    --out "$OUT/budget" >"$OUT/budget.log" 2>&1
echo "evaluate: exit $?"
grep -E "latency_budget|FAILED" "$OUT/budget.log" | tail -12
sed -n '/^| mode /,/^$/p' "$OUT/budget/results.md" 2>/dev/null | head -40
grep -E "^- .*latency_budget" "$OUT/budget/results.md" 2>/dev/null | head -12
[ "${LONG_SECONDS:-240}" = 0 ] && exit 0   # timeout 0 would mean no limit
echo "== long kernels"
timeout "${LONG_SECONDS:-240}" python3 "$SRC/bench/h200/long_kernels.py" --build "$BUILD_DIR" --rounds 2 \
    --out "$OUT/long" 2>&1 | tail -30
