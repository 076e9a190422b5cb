#!/bin/bash
# On the lent H200, after a change to the policy or the launch path: the CUDA
# conformance suite, fikit's added cost per launch with warm and with cold
# caches, the CUDA C pair of the evaluation, and the demo on CUDA. Each part
# prints what matters last. Expects the build carried in build/ and
# libinih in .carry/lib (dpkg -x of Debian's libinih1), as issue4.sh does.
#
#   bash bench/h200/recheck.sh [quick|eval|all]
#
# quick: conformance, launch cost and the demo (about 5 minutes); eval: the
# evaluation's CUDA C pair (about 4 minutes); all (default): both, which can
# pass a device call's 10-minute limit, so give each its own call there.
# RECHECK_BASELINE=BUILD puts a build from before the change beside it in the
# warm launch cost (bench/launch-cost --baseline).
set -u
PART=${1:-all}
case $PART in
  quick|eval|all) ;;
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "usage: recheck.sh [quick|eval|all] (--help says more)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.carry/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_RUNTIME_DIR=/tmp/xdg PYTHONUNBUFFERED=1
mkdir -p $XDG_RUNTIME_DIR
step() { echo; echo "=== $* ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
if [ "$PART" != eval ]; then
step conformance
timeout 240 tests/conformance/cuda/run-suite --build build --markdown "$OUT/cuda-h200.md" \
  --json "$OUT/conf.json" > "$OUT/conformance.log" 2>&1
tail -16 "$OUT/conformance.log"
step launch cost, warm and cold
# RECHECK_BASELINE=BUILD: the fikit modes also with that build, in the same rounds.
timeout 150 bench/launch-cost --build build --backend cuda --repeats 5 \
  ${RECHECK_BASELINE:+--baseline "$RECHECK_BASELINE"} > "$OUT/launch-warm.txt" 2>&1
timeout 150 bench/launch-cost --build build --backend cuda --repeats 5 -n 300 --cold-kb 8192 \
  > "$OUT/launch-cold.txt" 2>&1
step demo on CUDA
timeout 150 demo/run-demo --build build --backend cuda --out "$OUT/demo" > "$OUT/demo.log" 2>&1
fi
if [ "$PART" != quick ]; then
step evaluation, CUDA C pair
timeout 300 bench/evaluate --build build --out "$OUT/eval" --workloads cuda --seconds 4 \
  > "$OUT/evaluate.log" 2>&1
cp "$OUT/eval/results.md" "$OUT/eval-results.md" 2>/dev/null
cp "$OUT/eval/results.json" "$OUT/eval-results.json" 2>/dev/null
fi
echo
echo "=== summary"
if [ "$PART" != eval ]; then
  tail -14 "$OUT/conformance.log" | cut -c1-120
  tail -8 "$OUT/launch-warm.txt"
  tail -8 "$OUT/launch-cold.txt"
  tail -10 "$OUT/demo.log"
fi
if [ "$PART" != quick ]; then
  grep -E "^\| (mode|hp|lp|time|mps|fikit)|Overhead|grant latency|Switch cost" "$OUT/eval/results.md" | cut -c1-200
fi
