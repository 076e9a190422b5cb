#!/usr/bin/env python3
"""docs/sim.md's table of the budget's frontier is what bench/sim-budget-frontier
prints: regenerates its rows of the CUDA pair (the quickest in the model, all
three loads and both substrates, the same requests and seeds as the file's
command) and fails, with the rows that differ, unless each is in the file as
printed. The model is deterministic for its arguments, so a difference is a
change: rerun the command the file names and paste its table.

    check_frontier.py FIKIT"""
import os
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    r = subprocess.run([sys.executable, os.path.join(SOURCE, "bench", "sim-budget-frontier"), "--fikit", sys.argv[1],
                        "--pairs", "cuda", "--requests", "20000", "--seeds", "3"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if r.returncode:
        sys.exit(f"check_frontier: bench/sim-budget-frontier failed (exit {r.returncode})")
    rows = [line for line in r.stdout.splitlines() if line.startswith("| cuda |")]
    with open(os.path.join(SOURCE, "docs", "sim.md")) as f:
        doc = f.read().splitlines()
    missing = [row for row in rows if row not in doc]
    if len(rows) != 6 or missing:
        print(f"check_frontier: {len(rows)} rows of the CUDA pair, {len(missing)} not in docs/sim.md as printed:")
        for row in missing:
            print("  " + row)
        sys.exit(1)
    print(f"check_frontier: docs/sim.md holds the {len(rows)} rows of the CUDA pair as the model prints them")


if __name__ == "__main__":
    main()
