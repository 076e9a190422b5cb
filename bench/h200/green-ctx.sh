#!/bin/bash
# On the lent GPU (issue 23, item 4): whether green contexts can be created and
# launched into on this driver and CUDA, by a program under time-slicing and by an
# MPS client with and without a thread cap, and what a kernel capped to part of
# the SMs costs against the whole device. One call of about a minute.
#   bash bench/h200/green-ctx.sh [BUILD]      BUILD: the carried build (default build)
# Build it here: cmake --build BUILD --target fikit-bench-green-ctx
source "$(dirname "$0")/env.sh" "$@"   # --help, BUILD_DIR
PROBE="$BUILD_DIR/bench/fikit-bench-green-ctx"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
run() { # NAME ENV...
    local name=$1; shift
    echo "== $name"
    env "$@" timeout 120 "$PROBE" >"$OUT/$name.txt" 2>&1
    echo "exit $?" >>"$OUT/$name.txt"
    cat "$OUT/$name.txt"
}
run timeslice
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
nvidia-cuda-mps-control -d && sleep 0.5
run mps-client
run mps-client-cap70 CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=70
run mps-client-cap100 CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100
echo quit | nvidia-cuda-mps-control
echo
echo "| run | caps that worked | whole device ms | first failure |"
echo "|---|---|---|---|"
for f in timeslice mps-client mps-client-cap70 mps-client-cap100; do
    ok=$(grep -c "launched in the green context" "$OUT/$f.txt")
    whole=$(grep -o "whole device (primary context): [0-9.]*" "$OUT/$f.txt" | grep -o "[0-9.]*$")
    fail=$(grep -m1 -E "^  cu[A-Za-z]+: |no CUDA device" "$OUT/$f.txt" | sed 's/|/\//g')
    echo "| $f | $ok | ${whole:--} | ${fail:--} |"
done
