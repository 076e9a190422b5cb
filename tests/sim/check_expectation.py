#!/usr/bin/env python3
"""fikit sim with the default fikit.ini on the pairs of bench/evaluate, against the
committed expectation (sim/expected/default.txt): a change to the policy, its
defaults or the model that moves a service's latency or a job's throughput shows
here and in review. The model is deterministic for a seed, so any difference is
a change, not noise.

    check_expectation.py FIKIT [--update]

--update rewrites the expectation; commit it with a message that says why the
numbers moved."""
import difflib
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
EXPECTED = os.path.join(SOURCE, "sim", "expected", "default.txt")
ARGS = ["sim", "--pair", "all", "--requests", "3000", "--warmup", "100", "--seed", "1",
        "-c", os.path.join(SOURCE, "conf", "fikit.ini"), "--quiet"]


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    fikit = sys.argv[1]
    env = dict(os.environ, FIKIT_SIM_DIR=os.path.join(SOURCE, "sim"))
    r = subprocess.run([fikit] + ARGS, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        print(f"fikit {' '.join(ARGS)} failed ({r.returncode}):\n{r.stderr}")
        return 1
    got = r.stdout
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
