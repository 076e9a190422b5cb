#!/usr/bin/env python3
"""fikit sim's bursty service made from a trace of the real one, against the real one (issue 42).

In one run on this machine's PoCL:
  1. the OpenCL demo service in bursts (requests of 5 kernels back to back for as long as
     K kernels take, then OFF ms of idle: fikit-demo-service --bursts) runs alone under
     fikit-launch --measure while fikitd records its trace, and the demo batch job does
     the same for a few seconds;
  2. bench/sim-workload-from-trace turns each trace into a workload file of fikit sim: the
     service's sequences are its bursts (a gap of more than OFF/2 ms begins one; the
     service waits after each kernel), the job's its kernels (a blocking read after each);
  3. fikit sim runs the pair on the pocl-cpu device at the load the bursts make (a burst's
     time over a burst and its idle), in mode mps (PoCL runs both processes' kernels on
     the cores at once, as MPS does on SMs) and fikit-ts (fikit's defaults, which are
     gaps on time-slicing, as the real run's fikit.ini);
  4. bench/bursty-pocl.py measures the real pair for the same K, without fikit and under
     fikit's defaults.
It prints one table: the job's throughput against alone, measured and modelled, side by
side, and the service's p50 against alone (the programs': a request's; the model's: a
burst's, its requests back to back).

    python3 bench/bursty-model.py [--build build] [--bursts-of 20] [--off-ms 1000] [--periods 6]
                                  [--out DIR]

The model's bursts arrive as a Poisson process at that load, the programs' every OFF ms:
the idle between bursts is the same on average, not each time. Speed depends on this
machine: quote the ratios.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build", default="build")
    ap.add_argument("--bursts-of", default="20", help="kernels a burst (multiples of 5), comma-separated")
    ap.add_argument("--off-ms", type=float, default=1000.0)
    ap.add_argument("--periods", type=int, default=6, help="bursts traced, and bursts a measured run")
    ap.add_argument("--out", help="keep the traces and workload files here")
    return ap.parse_args()


A = parse()
os.environ["FIKIT_BUILD"] = os.path.abspath(A.build)
import harness  # noqa: E402  (needs FIKIT_BUILD first)
from harness import Fikit, result  # noqa: E402
from bursty_programs import KERNELS, job_argv, service_argv  # noqa: E402

CONVERT = os.path.join(HERE, "sim-workload-from-trace")
FIKIT = os.path.join(os.path.abspath(A.build), "tools", "fikit")


def svc_argv(requests, on_ms):
    """As bench/bursty-pocl.py runs the service."""
    return service_argv(requests, on_ms, A.off_ms)


def traced(task, argv, out_dir, name, kind, extra):
    """Runs argv as task alone under --measure with fikitd tracing, and converts its trace."""
    with Fikit(tasks=((task, 0),)) as fk:
        fk.start("--trace")
        r = fk.run(task, argv, measure=True)
        if r.returncode != 0:
            sys.exit(f"{name}: {r.stderr.strip()[-300:]}")
        fk.trace()
        trace = os.path.join(out_dir, f"{name}.trace.json")
        os.replace(os.path.join(fk.dir, "trace.json"), trace)
        profiles = glob.glob(os.path.join(fk.state, "profiles", task, "*.profile"))
        if len(profiles) != 1:
            sys.exit(f"{name}: no profile written")
        wl, summary = os.path.join(out_dir, f"{name}.wl"), os.path.join(out_dir, f"{name}.summary.json")
        c = subprocess.run([sys.executable, CONVERT, trace, profiles[0], "-o", wl, "--name", name, "--task", task,
                            "--kind", kind, "--summary", summary,
                            "--source", f"a trace of {' '.join(os.path.basename(a) for a in argv[:1])} "
                                        f"{' '.join(argv[1:])} on this machine's PoCL"] + extra,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if c.returncode != 0:
            sys.exit(f"{name}: sim-workload-from-trace: {c.stderr.strip()[-500:]}")
        return wl, json.load(open(summary)), result(r)


def model(svc_wl, job_wl, load, requests):
    """fikit sim's mps and fikit-ts rows: {mode: (service p50 x alone, job x alone)}."""
    r = subprocess.run([FIKIT, "sim", "-q", "--service", svc_wl, "--loop", job_wl, "-d", "pocl-cpu",
                        "-m", "mps,fikit-ts", "-l", f"{load:.4f}", "-n", str(requests), "-w", "5"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"fikit sim: {r.stderr.strip()[-500:]}")
    rows = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if f and f[0] in ("mps", "fikit-ts"):
            rows[f[0]] = (float(f[3]), float(f[7]))  # p50_x, train_x (the p99's interval is two fields)
    return rows, r.stdout


def measured(k):
    """bench/bursty-pocl.py's rows for bursts of k: {mode: (service p50 x alone, job x alone)}."""
    r = subprocess.run([sys.executable, os.path.join(HERE, "bursty-pocl.py"), "--build", A.build, "--bursts-of",
                        str(k), "--off-ms", str(A.off_ms), "--periods", str(A.periods)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"bursty-pocl.py: {r.stderr.strip()[-500:]}")
    rows = {}
    for m in re.finditer(r"^\s*\d+ (no fikit|fikit)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)$", r.stdout, re.M):
        rows[m.group(1)] = (float(m.group(2)), float(m.group(4)))
    return rows


def main():
    out = A.out or tempfile.mkdtemp(prefix="fikit-bursty-model-")
    os.makedirs(out, exist_ok=True)
    job_wl, job_s, _ = traced("batch", job_argv("-t", "3"), out, "pocl-demo-batch", "loop",
                              ["--sync", "each", "--split", "sync"])
    lines = []
    for k in (int(x) for x in A.bursts_of.split(",")):
        per_burst = max(1, k // KERNELS)
        with Fikit(tasks=(("serve", 0),)) as fk:  # the time of a request alone, as bursty-pocl.py takes it
            fk.start()
            per_request_ms = result(fk.run("serve", svc_argv(200, 0), measure=True))["service_ms"]
        on_ms = per_burst * per_request_ms
        svc_wl, svc_s, _ = traced("serve", svc_argv(per_burst * (A.periods + 1), on_ms), out,
                                  f"pocl-bursty-{k}", "service",
                                  ["--sync", "each", "--split", "gap", "--split-gap-us", str(A.off_ms * 500),
                                   "--drop-first", "0"])
        burst_ms = svc_s["seq_ms_alone"]
        load = burst_ms / (burst_ms + A.off_ms)
        mod, text = model(svc_wl, job_wl, load, 200)
        print(text, file=sys.stderr)
        real = measured(k)
        lines.append((k, burst_ms, load, svc_s["sequences"], real, mod))
    print(f"\nA bursty service (requests of {KERNELS} kernels back to back for a burst, {A.off_ms:.0f} ms idle) "
          f"beside the demo batch job on this machine's PoCL: measured (bench/bursty-pocl.py, one run) and "
          f"modelled (fikit sim on pocl-cpu, 200 bursts, from traces of the same programs alone)")
    print(f"{'burst':>5} {'burst ms':>8} {'load':>5}  {'mode':<22} {'svc p50 x':>9} {'job x':>6}"
          "   (svc p50: measured a request's, modelled a burst's)")
    for k, burst_ms, load, seqs, real, mod in lines:
        for label, got in (("measured, no fikit", real.get("no fikit")), ("model, mps", mod.get("mps")),
                           ("measured, fikit", real.get("fikit")), ("model, fikit-ts", mod.get("fikit-ts"))):
            p50, job = got if got else (float("nan"), float("nan"))
            print(f"{k:>5} {burst_ms:8.1f} {load:5.3f}  {label:<22} {p50:9.2f} {job:6.2f}")
    print(f"(traces and workload files: {out})")


if __name__ == "__main__":
    main()
