#!/bin/bash
# On the lent GPU (issues 37 and 41), after shares.sh: the confined job's frontier on the
# CUDA pair, and the long kernels' second round. In one call of under ten minutes:
#   1. bench/evaluate's CUDA pair on MPS at load 0.5, --repeat 3: MPS, beside at a 50 %
#      thread cap, and beside with its launches confined to 50 % (mps_lower_cap =
#      launches) at latency_budget 1.10 (the default), 1.25 and none (FRONTIER_LIMIT, 260 s);
#   2. bench/h200/long_kernels.py, two rounds (LONG_LIMIT, 200 s).
#   bash bench/h200/confine-frontier.sh [BUILD]   BUILD: the carried build (default build)
source "$(dirname "$0")/env.sh" "$@"   # --help, BUILD_DIR
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B="fikit beside, mps, lp capped 50%"
timeout "${FRONTIER_LIMIT:-260}" python3 bench/evaluate --build "$BUILD_DIR" --workloads cuda --load 0.5 \
    --seconds 4 --repeat 3 --beside-caps 50 \
    --modes "mps;$B;$B [confined];$B [confined125];$B [confinednobudget]" \
    --variant confined:mps_lower_cap=launches \
    --variant confined125:mps_lower_cap=launches,latency_budget=1.25 \
    --variant confinednobudget:mps_lower_cap=launches,latency_budget=0 \
    --out "$OUT/frontier" >"$OUT/frontier.log" 2>&1
echo "evaluate: exit $?"
timeout "${LONG_LIMIT:-200}" python3 bench/h200/long_kernels.py --build "$BUILD_DIR" --rounds 2 \
    --out "$OUT/long" >"$OUT/long.log" 2>&1
echo "long_kernels: exit $?"
echo
echo "== tables"
tail -14 "$OUT/long.log"
grep -E "latency_budget.*step" "$OUT/frontier.log" | sed 's/^\[ *[0-9.]*s\] *//' | cut -c1-160
sed -n '/^| mode /,/^$/p' "$OUT/frontier/results.md" 2>/dev/null | head -12 | cut -d'|' -f1-9
