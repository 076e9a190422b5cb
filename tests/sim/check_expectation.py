#!/usr/bin/env python3
"""fikit sim with the default fikit.ini on the pairs of bench/evaluate, against the
committed expectation (sim/expected/default.txt): a change to the policy, its
defaults or the model that moves a service's latency or a job's throughput shows
here and in review. The model is deterministic for a seed, so any difference is
a change, not noise.

    check_expectation.py FIKIT [--update]

--update rewrites the expectation; commit it with a message that says why the
numbers moved.

Beside the pairs, the two cases of issue 22 that programs this project did not
write hit on the H200 run in the model too (sim/workloads, bench/sim-workloads-synth),
and what the policy promises of them is checked whatever the expectation says:
  - a bursty service (busy 0.5 s, idle about 1 s): its pauses reach the
    training job beside it, which keeps at least 0.3 of its throughput alone
    under fikit on either substrate (it kept 0.00 under the old policy);
  - a service that never pauses beside a job whose kernels (9 to 170 ms) are
    longer than every gap: the job's wait is bounded (max_wait_ms), so it
    makes progress (it kept 0.00, its first launch held for good)."""
import difflib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
EXPECTED = os.path.join(SOURCE, "sim", "expected", "default.txt")
CONF = ["-c", os.path.join(SOURCE, "conf", "fikit.ini"), "--quiet", "--seed", "1"]
WL = os.path.join(SOURCE, "sim", "workloads")
RUNS = [
    ["sim", "--pair", "all", "--requests", "3000", "--warmup", "100"] + CONF,
    ["sim", "--service", os.path.join(WL, "bursty-service.wl"), "--loop", os.path.join(WL, "resnet50-train.wl"),
     "--load", "0.33", "--requests", "100", "--warmup", "5", "--modes", "timeslice,fikit-ts,fikit-mps"] + CONF,
    ["sim", "--service", os.path.join(WL, "steady-service.wl"), "--loop", os.path.join(WL, "long-kernel-loop.wl"),
     "--load", "0.75", "--requests", "3000", "--warmup", "100", "--modes", "timeslice,fikit-ts,fikit-mps"] + CONF,
]
ARGS = RUNS[0]


def train_x(text, service, mode):
    """The job's throughput ratio of MODE in the run of SERVICE."""
    block = text.split(f": {service} beside ", 1)[1]
    for line in block.splitlines():
        f = line.split()
        if f and f[0] == mode:
            return float(f[7])
    raise ValueError(f"no {mode} row for {service}")


def promises(text):
    """What the policy promises of issue 22's two cases; [] when kept."""
    broken = []
    for mode in ("fikit-ts", "fikit-mps"):
        x = train_x(text, "bursty-service", mode)
        if x < 0.3:
            broken.append(f"bursty service, {mode}: the job kept {x:.2f} of its throughput (promised >= 0.3)")
        x = train_x(text, "steady-service", mode)
        if x <= 0:
            broken.append(f"long kernels beside a service that never pauses, {mode}: the job made no progress")
    return broken


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    fikit = sys.argv[1]
    env = dict(os.environ, FIKIT_SIM_DIR=os.path.join(SOURCE, "sim"))
    got = ""
    for args in RUNS:
        r = subprocess.run([fikit] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        if r.returncode != 0:
            print(f"fikit {' '.join(args)} failed ({r.returncode}):\n{r.stderr}")
            return 1
        # Paths differ between checkouts: the file names are what matter.
        got += r.stdout.replace(WL + os.sep, "")
    broken = promises(got)
    for b in broken:
        print(f"broken promise: {b}")
    if broken:
        return 1
    if "--update" in sys.argv[2:]:
        with open(EXPECTED + ".tmp", "w") as f:
            f.write(got)
        os.replace(EXPECTED + ".tmp", EXPECTED)
        print(f"wrote {EXPECTED}")
        return 0
    with open(EXPECTED) as f:
        want = f.read()
    if got == want:
        print(f"fikit sim agrees with {os.path.relpath(EXPECTED, SOURCE)}")
        return 0
    sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                               "sim/expected/default.txt", "fikit sim now"))
    print(f"\nfikit sim's predictions moved (above). If the change is meant, run\n"
          f"  {sys.argv[0]} {fikit} --update\n"
          f"and say in the commit why the service's latency or the job's throughput moved.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
