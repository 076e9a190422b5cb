#!/usr/bin/env python3
"""A bursty service beside a steady job on PoCL, with and without fikit (issue 42).

The OpenCL demo service in bursts of K kernels (requests of 5 kernels back to back
for as long as K kernels take, then OFF ms of idle: fikit-demo-service --bursts), the
priority-9 demo batch job beside it all along; for each K in --bursts-of, run once
without fikit (the OS shares the CPU cores PoCL runs on) and once under fikit's
defaults, one after the other. Prints, per K and mode: the service's request latency
(p50, p99) against the service alone, and the job's throughput over the service's
window against the job alone (both alone runs made here first, under fikit).

    python3 bench/bursty-pocl.py [--build build] [--bursts-of 5,20,100] [--off-ms 1000] [--periods 4]

Speed depends on this machine: the ratios are side by side in one run; quote them,
not the milliseconds.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "integration"))


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build", default="build")
    ap.add_argument("--bursts-of", default="5,20,100", help="kernels a burst (multiples of 5)")
    ap.add_argument("--off-ms", type=float, default=1000.0)
    ap.add_argument("--periods", type=int, default=4, help="bursts a run")
    return ap.parse_args()


A = parse()
os.environ["FIKIT_BUILD"] = os.path.abspath(A.build)
import harness  # noqa: E402  (needs FIKIT_BUILD first)
from harness import Fikit, result  # noqa: E402
from bursty_programs import KERNELS, job_argv, service_argv  # noqa: E402


def svc_argv(requests, on_ms):
    return service_argv(requests, on_ms, A.off_ms)


def job_rate_within(jout, t0, t1):
    marks = json.loads(jout.strip().splitlines()[-1]).get("progress", [])
    inside = [n for t, n in marks if t0 <= t <= t1]
    return (max(inside) - min(inside)) / (t1 - t0) if len(inside) > 1 else 0.0


def pair(fk, requests, on_ms, under_fikit):
    """The service in bursts beside the job: (service result, job rate over its window)."""
    import subprocess
    import time
    env = fk.env
    jargv = job_argv("--progress", "-t", "600")
    job = fk.popen("batch", jargv) if under_fikit else subprocess.Popen(
        jargv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(1.0)
    argv = svc_argv(requests, on_ms)
    r = fk.run("serve", argv) if under_fikit else subprocess.run(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    job.terminate()
    jout, _ = job.communicate(timeout=120)
    s = result(r)
    if s["wrong"] or result(jout)["wrong"]:
        sys.exit("wrong outputs")
    return s, job_rate_within(jout, s["t0"], s["t1"])


def main():
    sizes = [int(k) for k in A.bursts_of.split(",")]
    rows = []
    with Fikit() as fk:
        fk.start()
        r = fk.run("serve", svc_argv(200, 0), measure=True)
        per_request_ms = result(r)["service_ms"]
        fk.run("batch", job_argv("--progress", "-t", "2"), measure=True)
        jr = result(fk.run("batch", job_argv("--progress", "-t", "3")))
        job_alone = jr["kernels"] / jr["seconds"]
        for k in sizes:
            per_burst = max(1, k // KERNELS)
            on_ms = per_burst * per_request_ms
            requests = per_burst * A.periods
            alone = result(fk.run("serve", svc_argv(requests, on_ms)))
            for under in (False, True):
                s, rate = pair(fk, requests, on_ms, under)
                rows.append((k, "fikit" if under else "no fikit", s["p50_ms"] / alone["p50_ms"],
                             s["p99_ms"] / alone["p99_ms"], rate / job_alone))
                print(f"bursts of {k}: {rows[-1][1]}: service p50 x{rows[-1][2]:.2f}, p99 x{rows[-1][3]:.2f}; "
                      f"job x{rows[-1][4]:.2f}", file=sys.stderr, flush=True)
    print(f"\nbursty service (requests of {KERNELS} kernels back to back in bursts, {A.off_ms:.0f} ms idle "
          f"between) beside the job, PoCL; ratios to each alone")
    print(f"{'burst':>6} {'mode':<9} {'svc p50 x':>9} {'svc p99 x':>9} {'job x':>6}")
    for k, mode, p50, p99, job in rows:
        print(f"{k:>6} {mode:<9} {p50:9.2f} {p99:9.2f} {job:6.2f}")


if __name__ == "__main__":
    main()
