#!/bin/bash
# On the lent H200 (see docs/conformance/cuda-h200.md): the CUDA conformance suite,
# resnet50 under fikit, the added cost per launch, and the demo on CUDA.
# Expects the build carried in build/ and libinih in .carry/lib.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$PWD/.carry/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for d in $(python3 -c "import nvidia, os; print(' '.join(os.path.join(p, s, 'lib') for p in nvidia.__path__ for s in os.listdir(p)))" 2>/dev/null); do
  [ -d "$d" ] && LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
done
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p $XDG_RUNTIME_DIR
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
step() { echo; echo "=== $* ($(date +%T))"; }
step conformance
timeout 300 tests/conformance/cuda/run-suite --build build --markdown "$OUT/cuda-h200.md" --json "$OUT/conf.json" 2>&1 | tail -20
step launch cost
timeout 120 bench/launch-cost --build build --backend cuda --repeats 5 2>&1 | tail -6
step resnet50
timeout 240 tests/conformance/cuda/run-resnet50 --build build 2>&1 | tail -16
step demo
timeout 240 demo/run-demo --build build --backend cuda --out "$OUT/demo" 2>&1 | tail -9
cp build/demo-out/results.json "$OUT/demo-results.json" 2>/dev/null
step profiles
for t in serve batch; do build/tools/fikit profile show -c "$OUT/demo/fikit-fill.ini" -n 6 $t 2>&1 | head -14; done
