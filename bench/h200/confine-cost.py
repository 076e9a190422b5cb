#!/usr/bin/env python3
"""On the lent GPU (issue 37/41): the host cost of a launch that fikit confines to part of the
SMs against one it lets go unconfined, side by side in one run. A priority-0 task keeps
launching (tests/conformance/cuda/spinner) so that a higher level is active throughout; the
launch loop (bench/cuda_launch_cost.cu, every launch timed by itself) runs at priority 9 as a
beside task, ROUNDS times alternately:

  beside, thread cap     mps_lower_cap = threads (its launches go as they are)
  beside, confined       mps_lower_cap = launches, 50 % of the SMs (each launch into a
                         green context's stream, between two events)
  priority 0             the loop as the top level (the high-priority path)

Prints, per mode, the median over rounds of each round's median ns per launch and of its
p99, and whether the confined runs said they made a green context.

  confine-cost.py [--build BUILD] [--rounds N] [-n LAUNCHES]"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("-n", type=int, default=500, help="launches a batch (31 batches a run)")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    tmp = tempfile.mkdtemp(prefix="fikit-confine-cost-")
    sock = os.path.join(tmp, "fikitd.sock")
    cfgs = {}
    for cap in ("threads", "launches"):
        cfgs[cap] = os.path.join(tmp, f"fikit-{cap}.ini")
        with open(cfgs[cap], "w") as f:
            f.write(f"[fikit]\nbackend = cuda\n[scheduler]\nsubstrate = mps\nmps_lower_cap = {cap}\n"
                    f"mps_lower_thread_percentage = 50\nlatency_budget = 0\n[daemon]\nsocket = {sock}\n"
                    f"state_dir = {tmp}/state\n[client]\nsample_rate = 0\n"
                    "[task.spin]\npriority = 0\n[task.loop]\npriority = 9\n[task.top]\npriority = 0\n")
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "FIKIT_CONFIG", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"):
        env.pop(k, None)
    tools = os.path.join(b, "tools")
    fikitd = subprocess.Popen([os.path.join(tools, "fikitd"), "-f", "-c", cfgs["threads"]],
                              stderr=open(os.path.join(tmp, "fikitd.log"), "w"), env=env)
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.02)
    launch = lambda cfg, task: [os.path.join(tools, "fikit-launch"), "-c", cfg, "-t", task, "--"]
    spin = subprocess.Popen(launch(cfgs["threads"], "spin") +
                            [os.path.join(b, "tests", "conformance", "cuda", "spinner"), "100000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    time.sleep(1.0)
    loop = [os.path.join(b, "bench", "fikit-bench-cuda-launch-cost"), str(a.n), "31", "1", "p99"]
    modes = [("beside, thread cap", "threads", "loop"), ("beside, confined", "launches", "loop"),
             ("priority 0", "threads", "top")]
    res = {m[0]: ([], []) for m in modes}
    green = []
    try:
        for r in range(a.rounds):
            for name, cap, task in modes:
                p = subprocess.run(launch(cfgs[cap], task) + loop, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=dict(env, FIKIT_LOG="debug"), timeout=120)
                lines = p.stdout.split()
                if p.returncode != 0 or len(lines) < 3:
                    print(f"{name}: exit {p.returncode}: {p.stderr.strip()[-300:]}", flush=True)
                    continue
                res[name][0].append(float(lines[0]))
                res[name][1].append(float(lines[2]))
                if cap == "launches":
                    said = [l for l in p.stderr.splitlines() if "confining launches" in l or "cannot confine" in l]
                    green.append(said[0] if said else "(nothing said: not confined)")
                print(f"round {r + 1} {name}: median {lines[0]} ns, p99 {lines[2]} ns", flush=True)
    finally:
        spin.terminate()
        spin.wait()
        fikitd.terminate()
        fikitd.wait()
    print("\nconfined runs said:", sorted(set(green)))
    print(f"\n| mode | median ns per launch | p99 ns | rounds |\n|---|---|---|---|")
    for name, _, _ in modes:
        m, p = res[name]
        if m:
            print(f"| {name} | {statistics.median(m):.0f} | {statistics.median(p):.0f} | {len(m)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
