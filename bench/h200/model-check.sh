#!/bin/bash
# On the lent GPU (issue 23, part 2): the model against the GPU. The resnet50 pair
# (or the pair named by MODEL_CHECK_PAIR) in the baseline modes (alone, time-slicing,
# MPS, MPS with client priority) and fikit fill on both substrates, each fill mode
# twice between runs of the service alone (--repeat 2), so that a ratio is to an
# alone run minutes apart, not one distant run; about 2000 requests a fill mode.
# The model's prediction for the same settings: `fikit sim --pair PAIR` here, put
# beside these figures in docs/sim.md.
#   bash bench/h200/model-check.sh [BUILD]        BUILD: the carried build (default build)
# Build it here with the calibration probe, or fikitd runs on default switch costs
# (as in the calls of 2026-12-06): cmake --build BUILD --target fikitd fikit fikit-launch
#   fikit_interpose fikit-calibrate-cuda fikit-demo-service-cuda fikit-demo-batch-cuda
# MODEL_CHECK_SECONDS (default 9): the service's measurement per mode and pass.
# MODEL_CHECK_REPEAT (default 2): passes of the modes, each after a run alone.
# MODEL_CHECK_MODES: evaluate's modes (default: fill on both substrates and the
# policy the model proposes for MPS, the job beside the service capped at 70 %).
source "$(dirname "$0")/env.sh" "$@"   # --help, BUILD_DIR
PAIR=${MODEL_CHECK_PAIR:-resnet50}
SECS=${MODEL_CHECK_SECONDS:-9}
REPEAT=${MODEL_CHECK_REPEAT:-2}
MODES=${MODEL_CHECK_MODES:-fikit fill, time-slicing;fikit fill, mps;fikit beside, mps, lp capped 70%}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); pair $PAIR; $SECS s a mode and pass, $REPEAT passes"
timeout ${MODEL_CHECK_TIMEOUT:-570} python3 bench/evaluate --build "$BUILD_DIR" --out /tmp/model-check --workloads "$PAIR" \
  --seconds "$SECS" --repeat "$REPEAT" --beside-caps 70 --modes "$MODES" \
  >"$OUT/model-check.log" 2>&1
echo "evaluate exit $?"
cp /tmp/model-check/results.json "$OUT/model-check.json" 2>/dev/null
cp /tmp/model-check/results.md "$OUT/model-check.md" 2>/dev/null
grep -E '^#|^\| ' "$OUT/model-check.log" | tail -40
