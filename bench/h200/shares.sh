#!/bin/bash
# On the lent GPU (issues 37 and 41, item 2), after confine.sh: the SM shares beside the
# PyTorch services, and the CUDA pair again with more requests. In one call of under ten
# minutes, each part with its own limit:
#   1. one conformance case, step 4 only's words if it fails (SUITE_LIMIT, 40 s): the
#      first full run said "not moved" for every case without saying why;
#   2. bench/evaluate's CUDA pair on MPS at load 0.5: MPS, MPS with the job's client
#      priority lowered, beside at a 50 % thread cap, beside with its launches confined
#      to 50 % (mps_lower_cap = launches), --repeat 3 (CUDA_LIMIT, 150 s);
#   3. the resnet50 and then the bert pair: MPS, beside at a 50 % thread cap, beside
#      confined, --repeat 2 (TORCH_LIMIT, 180 s each).
# The service holds fikit.ini's default latency_budget (1.10) in every fikit mode, so the
# confined job's share moves at run time; the thread cap is fixed at start.
#   bash bench/h200/shares.sh [BUILD]      BUILD: the carried build (default build)
source "$(dirname "$0")/env.sh" "$@"   # --help, BUILD_DIR
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== one conformance case"
timeout "${SUITE_LIMIT:-40}" python3 tests/conformance/cuda/run-suite --build "$BUILD_DIR" \
    --only runtime_chevron >"$OUT/conformance.log" 2>&1
echo "run-suite: exit $?"
tail -5 "$OUT/conformance.log" | cut -c1-600
pair() {   # pair WORKLOAD REPEAT LIMIT MODES
    timeout "$3" python3 bench/evaluate --build "$BUILD_DIR" --workloads "$1" --load 0.5 --seconds 4 \
        --repeat "$2" --modes "$4" --beside-caps 50 --variant confined:mps_lower_cap=launches \
        --out "$OUT/$1" >"$OUT/$1.log" 2>&1
    echo "evaluate $1: exit $?"
}
CONF="fikit beside, mps, lp capped 50%;fikit beside, mps, lp capped 50% [confined]"
pair cuda 3 "${CUDA_LIMIT:-150}" "mps;mps, lp client priority 1;$CONF"
pair resnet50 2 "${TORCH_LIMIT:-180}" "mps;$CONF"
pair bert 2 "${TORCH_LIMIT:-180}" "mps;$CONF"
echo
echo "== tables"
for w in cuda resnet50 bert; do
    echo "-- $w"
    sed -n '/^| mode /,/^$/p' "$OUT/$w/results.md" 2>/dev/null | head -12 | cut -d'|' -f1-9
    grep -E "latency_budget.*step" "$OUT/$w.log" | sed 's/^\[ *[0-9.]*s\] *//' | cut -c1-150 | tail -4
done
