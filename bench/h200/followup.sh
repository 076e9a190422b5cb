#!/bin/bash
# Two measurements after the first full evaluation (docs in bench/results):
# 1. does the MPS server outlive "quit" and slow the processes after it?
# 2. grant latency with held launches spinning for the whole hold (spin_us = always).
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}
export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" XDG_RUNTIME_DIR=/tmp/xdg
mkdir -p /tmp/xdg "$OUT"
serve() { python3 bench/torch_workloads.py serve --model resnet50 --rate 100 --seconds 3 2>/dev/null | tail -1 |
          python3 -c "import json,sys; r=json.loads(sys.stdin.read()); print(f\"p50 {r['p50_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms\")"; }
mps_server() { pgrep -f nvidia-cuda-mps-server >/dev/null && echo "running" || echo "gone"; }
echo "=== 1: resnet50 batch-1 alone, 100/s, 3 s each"
echo "before any MPS:                 $(serve)"
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d; sleep 0.5
python3 -c "import torch; torch.zeros(1).cuda(); torch.cuda.synchronize()"
echo quit | nvidia-cuda-mps-control; sleep 1
state=$(mps_server)
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
echo "1 s after quit (server $state): $(serve)"
for i in $(seq 1 150); do pgrep -f nvidia-cuda-mps-server >/dev/null || break; sleep 0.1; done
echo "server $(mps_server) after waiting $((i / 10)) s:      $(serve)"
echo "=== 2: grant latency, spin_us = always (CUDA C pair)"
timeout 150 bench/evaluate --build build --out "$OUT/spin-always" --workloads cuda --seconds 3 --spin-us always \
  --modes "fikit fill, time-slicing;fikit fill, mps" 2>&1 | grep -E "grant latency|fikit fill|hp alone|lp alone" | tail -8
