#!/usr/bin/env python3
"""fikit's own cost to a service running alone, on PoCL: one build against another.

The OpenCL demo service alone (back to back, -k KERNELS short kernels a request
with clFinish after each, so each kernel is one burst), in ROUNDS rounds; each
round runs, in turn: without fikit, under fikit-launch with the NEW build's fikitd,
and under the BASE build's. Reports per configuration the median over rounds of
the run's mean and p99 request latency, and the ratio NEW/BASE of the means,
round by round (median, and the range over rounds): drift hits both alike, and a
ratio whose range spans 1.00 says the builds do not differ beyond the noise.

    python3 bench/own-cost-pocl.py NEW_BUILD BASE_BUILD [--rounds 8] [--requests 400]

Each build needs fikitd, fikit-launch, libfikit.so and demo/fikit-demo-service
(OpenCL). Speed depends on this machine: quote ratios measured side by side in
one run, never a single figure.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("new", help="the build under test")
    ap.add_argument("base", help="the build to compare against")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--requests", type=int, default=400)
    ap.add_argument("--kernels", type=int, default=5)
    ap.add_argument("--work", type=int, default=200)
    return ap.parse_args()


def daemon(build, work):
    ini = os.path.join(work, "fikit.ini")
    sock = os.path.join(work, "fikitd.sock")
    with open(ini, "w") as f:
        f.write(f"[fikit]\nbackend = opencl\n[scheduler]\npolicy = fill\n[daemon]\nsocket = {sock}\n"
                f"state_dir = {work}/state\n[task.serve]\npriority = 0\n")
    log = open(os.path.join(work, "fikitd.log"), "a")
    p = subprocess.Popen([os.path.join(build, "tools", "fikitd"), "-f", "-c", ini], stdout=log, stderr=log)
    for _ in range(200):
        if os.path.exists(sock):
            return p, ini
        time.sleep(0.02)
    sys.exit(f"fikitd of {build} did not start: see {work}/fikitd.log")


def service(build, ini, a):
    prog = [os.path.join(build, "demo", "fikit-demo-service"), "--json", "-n", str(a.requests), "-r", "0",
            "-k", str(a.kernels), "-g", "100", "-w", str(a.work)]
    argv = prog if ini is None else [os.path.join(build, "tools", "fikit-launch"), "-c", ini, "-t", "serve", "--"] + prog
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr[-500:]}")
    out = json.loads(r.stdout.strip().splitlines()[-1])
    if out.get("wrong"):
        sys.exit("wrong outputs")
    return out["mean_ms"], out["p99_ms"]


def main():
    a = parse()
    builds = {"new": os.path.abspath(a.new), "base": os.path.abspath(a.base)}
    work = {k: tempfile.mkdtemp(prefix=f"own-cost-{k}-") for k in builds}
    daemons = {k: daemon(builds[k], work[k]) for k in builds}
    runs = {"plain": [], "new": [], "base": []}
    try:
        for k in builds:  # a first run of each: its profile, its kernels compiled
            service(builds[k], daemons[k][1], a)
        for i in range(a.rounds):
            order = ["plain", "new", "base"] if i % 2 == 0 else ["base", "new", "plain"]
            for c in order:
                runs[c].append(service(builds["new"] if c == "plain" else builds[c],
                                       None if c == "plain" else daemons[c][1], a))
            print(f"round {i + 1}/{a.rounds}: " + ", ".join(f"{c} {runs[c][-1][0]:.3f} ms" for c in runs),
                  file=sys.stderr, flush=True)
    finally:
        for p, _ in daemons.values():
            p.terminate()
            p.wait()
    ratios = [n[0] / b[0] for n, b in zip(runs["new"], runs["base"])]
    print(f"\nservice alone on PoCL, {a.rounds} rounds of {a.requests} requests back to back, "
          f"{a.kernels} kernels each (clFinish after each)")
    print(f"{'config':<8} {'mean_ms':>9} {'p99_ms':>9}   (medians over rounds)")
    for c, r in runs.items():
        print(f"{c:<8} {statistics.median(x[0] for x in r):9.3f} {statistics.median(x[1] for x in r):9.3f}")
    print(f"new/base mean latency: median {statistics.median(ratios):.3f}, "
          f"range {min(ratios):.3f}..{max(ratios):.3f} over {len(ratios)} rounds")


if __name__ == "__main__":
    main()
