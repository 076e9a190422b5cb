#!/bin/bash
# On a lent machine with two GPUs or more (issue 28), one call of under 10 minutes:
# bench/multigpu/multigpu.py's three parts, on GPUs 0 and 1:
#   cross        a resnet50 service on GPU 0 at priority 0 beside a priority-9
#                resnet50 training job on GPU 1: the job's throughput against alone
#                (fikit must not cross devices: 1.0x, and its launches never held)
#   ddp          the same service beside a two-GPU PyTorch DDP job (NCCL all-reduce)
#                at priority 9 on GPUs 0 and 1: the service's p99 and the job's
#                steps per second, alone, on time-slicing and under fikit; rank 1's
#                stall per step against the holds of rank 0 on GPU 0 (fikit's trace);
#                collective launches held (none, by the collective rule)
#   conformance  the CUDA conformance suite with CUDA_VISIBLE_DEVICES=1
# Writes $OUT/multigpu.json, $OUT/multigpu.log, $OUT/table.txt, $OUT/ddp-trace.json.xz
# and $OUT/conformance-cvd1.md; prints the machine and a short table last.
#
#   bash bench/multigpu/run.sh [BUILD]     BUILD: the carried build (default build-h200)
#
# Build BUILD with CUDA (nvcc: the conformance programs) and carry it with .carry
# (libinih in .carry/lib, as bench/h200/env.sh expects); torch and torchvision
# must import on the machine. MULTIGPU_SECONDS (default 10): each measured mode.
# MULTIGPU_PARTS (default cross,ddp,conformance). MULTIGPU_DOUBLE=1: a dry run
# without a GPU against the CUDA driver double of tests/fakecuda (BUILD's
# tests/fakecuda/multi_dev and lib/ stand in for the programs and the driver).
set -u
case ${1:-} in -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
BUILD_DIR=${1:-build-h200}
source "$(dirname "$0")/../h200/env.sh"
B=$(realpath "$BUILD_DIR")
for f in "$B/tools/fikitd" "$B/tools/fikit" "$B/tools/fikit-launch" "$B/interpose/libfikit.so"; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "multigpu: $f is missing: build fikit into $BUILD_DIR first" >&2; exit 1; }
done
DOUBLE=
if [ "${MULTIGPU_DOUBLE:-0}" = 1 ]; then
  DOUBLE=--double
  [ -x "$B/tests/fakecuda/multi_dev" ] || { echo "multigpu: no $B/tests/fakecuda/multi_dev for the dry run" >&2; exit 1; }
else
  n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  [ "$n" -ge 2 ] || { echo "multigpu: $n GPU(s) here; this needs two (MULTIGPU_DOUBLE=1 for a dry run)" >&2; exit 1; }
fi
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); build $B; $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,temperature.gpu --format=csv 2>/dev/null
timeout 570 python3 bench/multigpu/multigpu.py --build "$B" --out "$OUT" --seconds "${MULTIGPU_SECONDS:-10}" \
  --parts "${MULTIGPU_PARTS:-cross,ddp,conformance}" $DOUBLE >"$OUT/multigpu.log" 2>&1
rc=$?
grep -E '^\[' "$OUT/multigpu.log" | tail -30
echo "multigpu.py exit $rc"
cat "$OUT/table.txt" 2>/dev/null || tail -20 "$OUT/multigpu.log"
