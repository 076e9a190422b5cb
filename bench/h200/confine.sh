#!/bin/bash
# On the lent GPU (issues 37 and 41, item 2): the SM shares measured. In one call of under
# ten minutes, each part with its own limit:
#   1. the CUDA conformance suite, with its step that confines every case beside a busy
#      priority-0 task (CONF_LIMIT, 200 s);
#   2. the host cost of a confined launch against an unconfined one and the top level's,
#      median and p99 (bench/h200/confine-cost.py; COST_LIMIT, 60 s);
#   3. bench/evaluate's CUDA pair on MPS at load 0.5: MPS, MPS with the job's client
#      priority lowered, fikit beside at a 50 % thread cap, and fikit beside with its
#      launches confined to 50 % (mps_lower_cap = launches), --repeat 2 (PAIR_LIMIT, 240 s;
#      PAIR_WORKLOADS, default cuda).
#   bash bench/h200/confine.sh [BUILD]      BUILD: the carried build (default build)
# Build there: fikitd fikit fikit-launch fikit_interpose, the conformance cases (conf_*),
# fikit-bench-cuda-launch-cost, fikit-demo-service-cuda, fikit-demo-batch-cuda.
source "$(dirname "$0")/env.sh" "$@"   # --help, BUILD_DIR
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== conformance"
timeout "${CONF_LIMIT:-200}" python3 tests/conformance/cuda/run-suite --build "$BUILD_DIR" \
    --markdown "$OUT/conformance-cuda.md" >"$OUT/conformance.log" 2>&1
echo "run-suite: exit $?"
grep -E "^  [a-z_]+ +(PASS|FAIL)" "$OUT/conformance.log" | head -20
echo "== cost"
timeout "${COST_LIMIT:-60}" python3 bench/h200/confine-cost.py --build "$BUILD_DIR" --rounds 5 \
    >"$OUT/confine-cost.log" 2>&1
echo "confine-cost: exit $?"
echo "== pair"
MODES="mps;mps, lp client priority 1;fikit beside, mps, lp capped 50%;fikit beside, mps, lp capped 50% [confined]"
timeout "${PAIR_LIMIT:-240}" python3 bench/evaluate --build "$BUILD_DIR" --workloads "${PAIR_WORKLOADS:-cuda}" \
    --load 0.5 --seconds 4 --repeat 2 --modes "$MODES" --beside-caps 50 \
    --variant confined:mps_lower_cap=launches --out "$OUT/pair" >"$OUT/pair.log" 2>&1
echo "evaluate: exit $?"
echo
echo "== tables"
sed -n '/^| case /,/^$/p' "$OUT/conformance.log" | head -16
sed -n '/^confined runs said/,$p' "$OUT/confine-cost.log"
sed -n '/^| mode /,/^$/p' "$OUT/pair/results.md" 2>/dev/null | head -30
