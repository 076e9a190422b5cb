#!/bin/bash
# On the lent GPU: where fikit's own cost to a service running alone comes from.
# The CUDA C service of bench/evaluate (-k 10 -g 20 -w 2000 -s 65536: ten short
# kernels a request, each followed by cudaStreamSynchronize) alone, in rounds;
# each round runs every configuration once, in turn, so drift hits them alike:
#   plain        without fikit
#   hooks        fikit-launch with no fikitd (the interposer in passthrough)
#   fikit        fikitd, policy fill on time-slicing, fikit.ini's defaults
#   nosample     the same with sample_rate = 0 (no event pairs, no learner work)
#   traced       the same as fikit, fikitd --trace and FIKIT_SELF_TIME (as
#                bench/evaluate's "hp alone under fikit" runs it)
# each at Poisson arrivals (OWN_COST_RATE/s, bench/evaluate's 50 % load) and back
# to back. Prints the table last (bench/own-cost-table); data in $OUT.
#   bash bench/h200/own-cost.sh [BUILD]     BUILD: the carried build (default build)
# OWN_COST_ROUNDS (6), OWN_COST_REQUESTS (1200), OWN_COST_RATE (258).
# OWN_COST_SERVICE=resnet50|bert: bench/torch_workloads.py's service instead,
# OWN_COST_SECONDS (6) a run, Poisson only. OWN_COST_CONFIGS: which configurations
# (default all five: "plain hooks fikit nosample traced").
source "$(dirname "$0")/env.sh" "$@"   # --help, BUILD_DIR
B=$(realpath "$BUILD_DIR")
ROUNDS=${OWN_COST_ROUNDS:-6} N=${OWN_COST_REQUESTS:-1200} RATE=${OWN_COST_RATE:-258}
SERVICE=${OWN_COST_SERVICE:-cuda} SECS=${OWN_COST_SECONDS:-6}
CONFIGS=" ${OWN_COST_CONFIGS:-plain hooks fikit nosample traced} "
PATTERNS="poisson b2b"; [ "$SERVICE" != cuda ] && PATTERNS=poisson
W=/tmp/own-cost; rm -rf "$W"; mkdir -p "$W/state"
ini() { # NAME SOCKET SAMPLE
    printf '[fikit]\nbackend = cuda\n[scheduler]\npolicy = fill\nsubstrate = timeslice\n[daemon]\nsocket = %s\nstate_dir = %s/state\n[client]\nsample_rate = %s\n[task.hp]\npriority = 0\n' \
        "$2" "$W" "$3" >"$W/$1.ini"
}
ini fikit "$W/d.sock" 0.02; ini nosample "$W/d.sock" 0; ini hooks "$W/none.sock" 0.02
daemon() { # [--trace]
    [ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
    "$B/tools/fikitd" -f -c "$W/fikit.ini" "$@" 2>>"$W/fikitd.log" & DPID=$!
    for _ in $(seq 100); do [ -S "$W/d.sock" ] && return; sleep 0.05; done
    echo "fikitd did not start"; tail -5 "$W/fikitd.log"; exit 1
}
svc() { # CONFIG ARRIVALS PREFIX...
    local cfg=$1 arr=$2; shift 2
    local rate=$RATE; [ "$arr" = b2b ] && rate=1000000
    [[ $CONFIGS == *" $cfg "* ]] || return 0
    local cmd=("$B/demo/fikit-demo-service-cuda" --json -n "$N" -r "$rate" -k 10 -g 20 -w 2000 -s 65536)
    [ "$SERVICE" != cuda ] && cmd=(python3 bench/torch_workloads.py serve --model "$SERVICE" --rate "$RATE" --seconds "$SECS")
    timeout 120 "$@" "${cmd[@]}" 2>>"$W/service.err" | tail -1 | sed "s/^{/{\"config\":\"$cfg\",\"arrivals\":\"$arr\",\"round\":$r,/" >>"$OUT/own-cost.jsonl"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); service $SERVICE; $ROUNDS rounds ($PATTERNS) of:$CONFIGS"
L="$B/tools/fikit-launch -t hp -c"
for r in $(seq "$ROUNDS"); do
    for arr in $PATTERNS; do
        svc plain "$arr"
        svc hooks "$arr" $L "$W/hooks.ini" --
        daemon; svc fikit "$arr" $L "$W/fikit.ini" --
        svc nosample "$arr" $L "$W/nosample.ini" --
        daemon --trace; svc traced "$arr" env FIKIT_SELF_TIME="$W/selftime" $L "$W/fikit.ini" --
    done
    echo "round $r done ($(date +%T))"
done
kill "$DPID" 2>/dev/null; wait
tail -3 "$W/service.err" "$W/fikitd.log" 2>/dev/null | cut -c1-200
python3 bench/own-cost-table "$OUT/own-cost.jsonl"
