"""fikit calibrate measures a switch cost, stores it per substrate and device model,
and fikitd uses it for substrate_cost_us = auto."""
import os
import re
from harness import BATCH, Fikit, check

with Fikit() as fk:
    r = fk.tool("calibrate", "-c", fk.config, "-b", "opencl", "-r", "10")
    check(r.returncode == 0 and "switch cost" in r.stdout, f"fikit calibrate ran: {r.stdout.strip()}")
    model = re.match(r"(.*) \(opencl, timeslice\)", r.stdout).group(1)
    text = open(os.path.join(fk.state, "calibration")).read()
    check(text.startswith("fikit-calibration 1\n") and "timeslice " + model.replace(" ", "%20") in text,
          "stored under the substrate and the device model")
    r2 = fk.tool("calibrate", "-c", fk.config, "-b", "opencl", "-r", "10")
    check(open(os.path.join(fk.state, "calibration")).read().count("timeslice ") == 1,
          "a second calibration replaces the first")
    fk.start()
    fk.run("batch", [BATCH, "-c", "2", "-w", "10"])
    cost = float(re.search(r"switch cost ([\d.]+) us", r2.stdout).group(1))
    # fikitd logs whole microseconds (truncated), the tool a tenth (rounded):
    # 12.96 us is "13.0" from the one and "12" from the other, so the tool's
    # figure is within [logged - 0.05, logged + 1.05).
    logged = re.search(r"calibrated switch cost (\d+) us", open(fk.log).read())
    check(logged is not None and -0.05 <= cost - int(logged.group(1)) < 1.05,
          f"fikitd uses the calibrated cost for the device ({logged and logged.group(1)} us logged, {cost} us measured)")
    r = fk.tool("calibrate", "--rounds", "2")
    check(r.returncode == 2, "a bad option is a usage error")
