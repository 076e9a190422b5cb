#!/bin/bash
# On the lent GPU (issue 37): whether fikit can move an unmodified program's launch into
# a green context, with the program's handle and stream order kept, and what the
# redirection costs on the host (bench/green_redirect_probe.cu), under time-slicing and as
# an uncapped MPS client. About half a minute.
#   bash bench/h200/green-redirect.sh [BUILD]   BUILD: the carried build (default build)
# Build it here: cmake --build BUILD --target fikit-bench-green-redirect
source "$(dirname "$0")/env.sh" "$@"   # --help, BUILD_DIR
PROBE="$BUILD_DIR/bench/fikit-bench-green-redirect"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for sub in timeslice mps; do
    if [ $sub = mps ]; then
        export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
        mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
        nvidia-cuda-mps-control -d && sleep 0.5
    fi
    echo "== $sub"
    timeout 120 "$PROBE" --sms 16 --launches 20000 >"$OUT/redirect-$sub.txt" 2>&1
    echo "exit $?" >>"$OUT/redirect-$sub.txt"
    cat "$OUT/redirect-$sub.txt"
done
echo quit | nvidia-cuda-mps-control
