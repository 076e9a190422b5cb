#!/bin/bash
# On the lent H200 (issue 23, part 1): each workload of bench/evaluate alone under
# fikit-launch --measure (every launch timed) while `fikit trace record` records it,
# converted by bench/sim-workload-from-trace into fikit sim's workload files:
#   cuda-service    demo/cuda service as evaluate runs it (-k 10 -g 20 -w 2000 -s 65536)
#   cuda-batch      demo/cuda batch job (-w 20000 -s 1048576)
#   resnet50-serve  bench/torch_workloads.py serve --model resnet50 (batch 1)
#   bert-serve      bench/torch_workloads.py serve --model bert (batch 1)
#   resnet50-train  bench/torch_workloads.py train (batch 64); bench/evaluate pairs both
#                   PyTorch services with it, so there is no bert training to record
# then the services once more without fikit (their request time alone, for the table).
# Writes $OUT/NAME.wl (5 files), $OUT/summaries.json, $OUT/profiles.tar.xz and
# $OUT/sim-traces.log (8 files at most come back); prints a table last. About 3 minutes.
#
#   bash bench/h200/sim-traces.sh [BUILD]        BUILD: the carried build (default build)
#
# SIM_TRACES_SECONDS (default 4): how long each workload runs after its warm-up.
# SIM_TRACES_BACKEND=opencl: a dry run without a GPU, the OpenCL demo programs (PoCL)
# standing in for the CUDA C pair; the PyTorch workloads run only where torch imports.
# SIM_TRACES_ONLY="NAME ...": record and convert only these workloads.
# Expects libinih in .carry/lib, as the other scripts here (env.sh).
source "$(dirname "$0")/env.sh" "$@"   # --help, BUILD_DIR
B=$(realpath "$BUILD_DIR")
BACKEND=${SIM_TRACES_BACKEND:-cuda}
SECS=${SIM_TRACES_SECONDS:-4}
W=/tmp/sim-traces
CONVERT="python3 bench/sim-workload-from-trace"
rm -rf "$W"
mkdir -p "$W/state"
exec > >(tee "$OUT/sim-traces.log") 2>&1
step() { echo; echo "=== $* ($(date +%T))"; }
for f in "$B/tools/fikitd" "$B/tools/fikit" "$B/tools/fikit-launch"; do
  [ -x "$f" ] || { echo "sim-traces: $f is missing: build fikit into $BUILD_DIR first" >&2; exit 1; }
done
GPU=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
[ -n "$GPU" ] || GPU="no GPU ($BACKEND dry run on $(hostname))"
echo "$GPU; build $B; commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>/dev/null

if [ "$BACKEND" = cuda ]; then
  SVC=("$B/demo/fikit-demo-service-cuda" --json -n $((SECS * 150)) -r 150 -k 10 -g 20 -w 2000 -s 65536)
  BATCH=("$B/demo/fikit-demo-batch-cuda" --json -t "$SECS" -w 20000 -s $((1 << 20)))
  FIRST=_Z5layerILi0EEvPjjj
else
  SVC=("$B/demo/fikit-demo-service" --json -n $((SECS * 20)) -r 20 -k 4 -g 300 -w 500 -s 4096)
  BATCH=("$B/demo/fikit-demo-batch" --json -t "$SECS" -w 500)
  FIRST=layer0
fi
TASKS="cuda-service cuda-batch resnet50-serve bert-serve resnet50-train"
{
  printf '[fikit]\nbackend = %s\n[daemon]\nsocket = %s/fikitd.sock\nstate_dir = %s/state\n' "$BACKEND" "$W" "$W"
  printf 'trace_events = 4194304\n'   # the newest are kept: room for a PyTorch workload's seconds
  for t in $TASKS; do printf '[task.%s]\npriority = 0\n' "$t"; done
} >"$W/fikit.ini"
CFG=$W/fikit.ini
"$B/tools/fikitd" -f -c "$CFG" 2>"$W/fikitd.log" &
FIKITD=$!
REC=
trap 'kill $REC $FIKITD 2>/dev/null' EXIT
for _ in $(seq 100); do [ -S "$W/fikitd.sock" ] && break; sleep 0.05; done
[ -S "$W/fikitd.sock" ] || { echo "sim-traces: fikitd did not start:"; cat "$W/fikitd.log"; exit 1; }
HAVE_TORCH=0
python3 -c "import torch, torchvision; assert torch.cuda.is_available()" 2>/dev/null && HAVE_TORCH=1

# record NAME WAITGO -- PROGRAM...: runs PROGRAM as task NAME under --measure and records it.
# WAITGO=1: the program prints "loaded" and "ready" and waits for a line after each
# (torch_workloads.py --wait-go), so the recording leaves out its start and warm-up.
record() {
  local name=$1 waitgo=$2
  shift 3
  step "$name: $*"
  local start_rec='"$B/tools/fikit" trace record -c "$CFG" -o "$W/$name.json" -t 3600 2>>"$W/trace.log" & REC=$!'
  if [ "$waitgo" = 1 ]; then
    coproc PROG { exec timeout 240 "$B/tools/fikit-launch" -c "$CFG" -t "$name" --measure -- "$@" 2>"$W/$name.err"; }
    local pid=$PROG_PID line   # bash unsets PROG_PID once the program ends
    while IFS= read -r line <&"${PROG[0]}"; do
      [ "$line" = loaded ] && echo go >&"${PROG[1]}"
      [ "$line" = ready ] && break
    done
    eval "$start_rec"
    sleep 1
    echo go >&"${PROG[1]}"
    cat <&"${PROG[0]}" >"$W/$name.out"
    wait "$pid"
  else
    eval "$start_rec"
    sleep 1
    timeout 240 "$B/tools/fikit-launch" -c "$CFG" -t "$name" --measure -- "$@" >"$W/$name.out" 2>"$W/$name.err"
  fi
  local rc=$?
  sleep 0.3   # the learner's last samples reach fikitd's trace
  kill -INT "$REC"
  wait "$REC"
  REC=
  [ $rc = 0 ] || { echo "$name: exit status $rc"; tail -5 "$W/$name.err"; }
  "$B/tools/fikit" status -c "$CFG" 2>/dev/null | grep -o "([0-9]* events lost)" | sed "s/^/$name: trace /"
  tail -1 "$W/$name.out" | cut -c1-300
}

# convert NAME KIND [options]: the trace and the profile into $OUT/NAME.wl.
convert() {
  local name=$1 kind=$2
  shift 2
  local prof
  prof=$(ls "$W/state/profiles/$name/"*.profile 2>/dev/null | head -1)
  [ -n "$prof" ] && [ -s "$W/$name.json" ] || { echo "$name: no trace or no profile, not converted"; return; }
  $CONVERT "$W/$name.json" "$prof" -o "$OUT/$name.wl" --name "$name" --task "$name" --kind "$kind" \
    --summary "$W/$name.summary.json" --max-seqs 400 \
    --source "traced: $GPU, $(date +%F), bench/h200/sim-traces.sh (fikit-launch --measure), converted by bench/sim-workload-from-trace $*" \
    "$@" || echo "$name: conversion failed"
}

# service_ms of a program's JSON result line
service_ms() { tail -1 "$1" 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read())['service_ms'])" 2>/dev/null; }

# SIM_TRACES_ONLY="a b": only these workloads (a retry of the ones that failed).
want() { [ -z "${SIM_TRACES_ONLY:-}" ] || [[ " $SIM_TRACES_ONLY " == *" $1 "* ]]; }
if want cuda-service; then
  record cuda-service 0 -- "${SVC[@]}"
  convert cuda-service service --sync each --split-kernel "$FIRST" --request-ms "$(service_ms "$W/cuda-service.out")"
fi
if want cuda-batch; then
  record cuda-batch 0 -- "${BATCH[@]}"
  # The batch job waits for each kernel (its result is copied out and checked):
  # with --sync auto the H100 trace of 2026-12-06 split into 2 sequences only.
  convert cuda-batch loop --sync each --split sync
fi
if [ $HAVE_TORCH = 1 ]; then
  if want resnet50-serve; then
    record resnet50-serve 1 -- python3 bench/torch_workloads.py serve --model resnet50 --rate 40 --seconds "$SECS" --wait-go
    convert resnet50-serve service --sync auto --split first-key --request-ms "$(service_ms "$W/resnet50-serve.out")"
  fi
  if want bert-serve; then
    record bert-serve 1 -- python3 bench/torch_workloads.py serve --model bert --rate 50 --seconds "$SECS" --wait-go
    # bert's first kernel also runs inside requests (first-key refused it on
    # the H100): requests are told apart by the idle gap before them.
    convert bert-serve service --sync auto --split gap --request-ms "$(service_ms "$W/bert-serve.out")"
  fi
  if want resnet50-train; then
    record resnet50-train 1 -- python3 bench/torch_workloads.py train --seconds "$SECS" --wait-go
    convert resnet50-train loop --sync auto --split sync
  fi
elif [ "$BACKEND" = opencl ]; then
  # The dry run: the --wait-go handshake and first-key split, with the OpenCL
  # service behind a stand-in for torch_workloads.py.
  step "dry run: torch with a GPU does not import here; the OpenCL service behind --wait-go stands in"
  STANDIN='import subprocess, sys
print("loaded", flush=True); input(); print("ready", flush=True); input()
sys.exit(subprocess.run(sys.argv[1:]).returncode)'
  record resnet50-serve 1 -- python3 -c "$STANDIN" "${SVC[@]}"
  convert resnet50-serve service --sync auto --split first-key --split-gap-us 5000 \
    --request-ms "$(service_ms "$W/resnet50-serve.out")"
else
  step "PyTorch workloads skipped: torch with a GPU does not import here"
fi
kill "$FIKITD"; wait "$FIKITD" 2>/dev/null
REC= FIKITD=

step "the services alone without fikit (their own request time, for the table)"
timeout 60 "${SVC[@]}" >"$W/cuda-service.plain" 2>&1
if [ $HAVE_TORCH = 1 ]; then
  for m in resnet50 bert; do
    timeout 90 python3 bench/torch_workloads.py serve --model $m --rate $([ $m = bert ] && echo 50 || echo 40) \
      --seconds "$SECS" >"$W/$m-serve.plain" 2>/dev/null
  done
fi

(cd "$W/state" && tar cf - profiles) | xz -T4 >"$OUT/profiles.tar.xz"
python3 - "$W" "$OUT" <<'EOF'
import json, os, sys
W, OUT = sys.argv[1:]
rows, all_ = [], {}
def res(path):
    try:
        return json.loads(open(path).read().strip().splitlines()[-1])
    except Exception:
        return {}
for name in ("cuda-service", "cuda-batch", "resnet50-serve", "bert-serve", "resnet50-train"):
    p = os.path.join(W, name + ".summary.json")
    if not os.path.exists(p):
        rows.append(f"{name:<15} {'not recorded':>10}")
        continue
    s = json.load(open(p))
    run, plain = res(os.path.join(W, name + ".out")), res(os.path.join(W, name + ".plain"))
    s["program_measured"], s["program_plain"] = {k: v for k, v in run.items() if not isinstance(v, list)}, \
        {k: v for k, v in plain.items() if not isinstance(v, list)}
    all_[name] = s
    if s["kind"] == "service":
        got = f"{s['seq_ms_alone']:.3f} ms"
        meas = f"{run.get('service_ms', 0):.3f} / {plain.get('service_ms', 0):.3f} ms"
    else:
        per = 4 if name == "resnet50-train" else 1  # train syncs every 4 steps: a sequence is 4
        got = f"{per * 1e3 / s['seq_ms_alone']:.1f} /s"
        meas = f"{run.get('per_second', 0):.1f} /s"
    rows.append(f"{name:<15} {s['sequences']:>5} {s['kernels_per_seq']:>9.1f} {s['kernel_p50_us']:>9.1f} "
                f"{s['host_gap_p50_us']:>9.1f} {s['device_gap_p50_us']:>8.1f} {s['idle'] * 100:>5.0f}% "
                f"{s['syncs_assumed']:>6} {got:>11} {meas:>22}")
json.dump(all_, open(os.path.join(OUT, "summaries.json"), "w"), indent=1)
print("\n=== workload files (sim/workloads/*.wl from this call): what each holds, replayed alone")
print(f"{'workload':<15} {'seqs':>5} {'kern/seq':>9} {'kern p50':>9} {'host p50':>9} {'dev gap':>8} {'idle':>6} "
      f"{'syncs':>6} {'req | iter':>11} {'program: measure / plain':>22}")
print("\n".join(rows))
print("us: kernel p50 (fikit's measured durations), host p50 (CPU time between launches in a sequence), "
      "dev gap (device idle between kernels, replayed); req | iter: a request's time alone (services, set "
      "to the program's own under --measure) or steps per second (loops); plain: the service without fikit")
EOF
ls -la "$OUT"
