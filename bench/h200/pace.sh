#!/bin/bash
# On the lent GPU (issues 36 and 41, item 1): the budget's pace measured. The budget judged
# every burst against the service's reference alone, and on the H100 the service's own pace
# moved between runs more than any mode moved it, so the controller sat at step 0 and the
# job kept 2.5-3.8 % (bench/results/2026-12-07-h100-shares.md). Now only bursts with every
# lower level quiet set the pace the budget is judged against. In one call of under ten
# minutes, each part with its own limit:
#   1. bench/evaluate's CUDA pair on time-slicing at load 0.5, --repeat 3: time-slicing,
#      MPS, fikit fill with latency_budget 1.10 (the default), 1.25 and none
#      (CUDA_LIMIT, 270 s);
#   2. the resnet50 pair the same way, --repeat 2: time-slicing, fikit fill at 1.10 and
#      with no budget (TORCH_LIMIT, 280 s).
# Each evaluation prints fikitd's last budget line of each fikit run (step, cuts, pace).
#   bash bench/h200/pace.sh [BUILD]      BUILD: the carried build (default build)
source "$(dirname "$0")/env.sh" "$@"   # --help, BUILD_DIR
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F="fikit fill, time-slicing"
pair() {   # pair WORKLOAD REPEAT LIMIT MODES
    timeout "$3" python3 bench/evaluate --build "$BUILD_DIR" --workloads "$1" --load 0.5 --seconds 4 \
        --repeat "$2" --modes "$4" --variant budget125:latency_budget=1.25 \
        --variant nobudget:latency_budget=0 --out "$OUT/$1" >"$OUT/$1.log" 2>&1
    echo "evaluate $1: exit $?"
}
pair cuda 3 "${CUDA_LIMIT:-270}" "time-slicing;mps;$F;$F [budget125];$F [nobudget]"
pair resnet50 2 "${TORCH_LIMIT:-280}" "time-slicing;$F;$F [nobudget]"
echo
echo "== tables"
for w in cuda resnet50; do
    echo "-- $w"
    sed -n '/^| mode /,/^$/p' "$OUT/$w/results.md" 2>/dev/null | head -12 | cut -d'|' -f1-9
    grep -E "latency_budget" "$OUT/$w.log" | sed 's/^\[ *[0-9.]*s\] *//' | cut -c1-220 | tail -8
done
