"""The demo end to end at a small size: every mode runs with every output
checked (the programs exit non-zero otherwise), and the scheduling trace of
the gap-filling run obeys the policy."""
import json
import os
import shutil
import subprocess
import tempfile
from harness import BUILD, SOURCE, check, check_no_unfit_start_mid_burst, fail

# run-demo starts the service once the batch job writes "ready" (with
# --progress): every batch program it may start must write it. The CUDA one
# did not, and run-demo --backend cuda stopped after 120 s on the H200. Both
# batch programs say it through demo_batch_ready (demo/demo.h); the CUDA ones
# also run end to end on the doubles in integration.demo_cuda.
text = open(os.path.join(SOURCE, "demo", "demo.h")).read()
check('fputs("ready\\n", stderr)' in text and "if (o->progress)" in text,
      "demo/demo.h: demo_batch_ready writes ready with --progress, as run-demo waits for")
for src in ("batch.c", os.path.join("cuda", "batch.cu")):
    text = open(os.path.join(SOURCE, "demo", src)).read()
    check("demo_batch_ready(&o);" in text, f"demo/{src} says it is ready (demo_batch_ready)")

out = tempfile.mkdtemp(prefix="fikit-demo-test-")
try:
    r = subprocess.run([os.path.join(SOURCE, "demo", "run-demo"), "--build", BUILD, "--out", out,
                        "--requests", "25", "--runs", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout)
    check(r.returncode == 0, "the demo ran every mode with correct outputs")
    # Each demo keeps a folder of its own; latest points at the newest.
    out = os.path.join(out, "latest")
    res = json.load(open(os.path.join(out, "results.json")))
    check(set(res["rows"]) == {"alone", "plain", "strict", "fill"}, "the table has every mode")
    for m, runs in res["raw"].items():
        for s, b in runs:
            check(s["wrong"] == 0 and b["wrong"] == 0 and b["kernels"] > 0,
                  f"{m}: {s['requests']} requests and {b['kernels']} batch kernels, all correct")
    trace = json.load(open(os.path.join(out, "trace-fill.json")))
    ev = [e for e in trace["traceEvents"] if e.get("ph") != "M"]
    fits = [e for e in ev if e.get("cat") == "grant" and e["args"]["reason"] == "fit"]
    check(len(fits) > 0, f"the batch job filled {len(fits)} gaps")
    checked, mid = check_no_unfit_start_mid_burst(trace, "serve", "batch")
    check(checked > 0, f"no batch kernel started mid-burst without a predicted fit "
                       f"({checked} launches between service launches, {mid} in short gaps, all fits)")
    names = {e["name"] for e in ev if e.get("cat") == "launch"}
    check({"layer0", "layer1", "rounds"} <= names, f"kernels are named in the trace: {sorted(names)}")
    # The picture of the table, where matplotlib is installed (else the demo says so).
    try:
        import matplotlib  # noqa: F401
        have_mpl = True
    except ImportError:
        have_mpl = False
    png = os.path.join(out, "result.png")
    if have_mpl:
        with open(png, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", "the demo drew its picture (result.png)")
        again = os.path.join(out, "again.png")
        r = subprocess.run([os.path.join(SOURCE, "demo", "run-demo"), "--plot", os.path.join(out, "results.json"),
                            again], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        check(r.returncode == 0 and os.path.getsize(again) > 10000, "--plot draws it again from results.json")
    else:
        check(not os.path.exists(png) and "no picture: matplotlib is not installed" in r.stdout,
              "no matplotlib: no picture, and the demo says how to get one")
finally:
    shutil.rmtree(out, ignore_errors=True)
