"""The CUDA demo end to end without a GPU: demo/run-demo --backend cuda runs the
CUDA service and batch programs (demo/cuda, built against the shared runtime)
on the runtime and driver doubles of tests/fakecuda, through fikit-launch and
fikitd as on a GPU. On the H200 it once stopped after 120 s because the CUDA
batch job never said it was ready; nothing in make check ran it then."""
import json
import os
import shutil
import subprocess
import tempfile
from harness import BUILD, SOURCE, check

fake = os.path.join(BUILD, "tests", "fakecuda")
work = tempfile.mkdtemp(prefix="fikit-demo-cuda-test-")
try:
    # A build tree whose demo programs are the ones linked against the shared
    # runtime (nvcc's default static runtime cannot run on the double); the
    # rest of it is the build's own.
    tree = os.path.join(work, "build")
    os.makedirs(os.path.join(tree, "demo"))
    for name in os.listdir(BUILD):
        if name != "demo":
            os.symlink(os.path.join(BUILD, name), os.path.join(tree, name))
    for p in ("service", "batch"):
        os.symlink(os.path.join(fake, "demo", f"fikit-demo-{p}-cuda"),
                   os.path.join(tree, "demo", f"fikit-demo-{p}-cuda"))
    out = os.path.join(work, "out")
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(fake, "lib"))
    # Kernels run on the host in the double: few rounds each.
    r = subprocess.run([os.path.join(SOURCE, "demo", "run-demo"), "--backend", "cuda", "--build", tree,
                        "--out", out, "--requests", "20", "--service-work", "10", "--batch-work", "2"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=540)
    print(r.stdout)
    check(r.returncode == 0, "run-demo --backend cuda ran every mode")
    out = os.path.join(out, "latest")  # each demo's folder; latest: the newest
    res = json.load(open(os.path.join(out, "results.json")))
    check(res["device"].startswith("Fake CUDA Device"), f"on the double: {res['device']}")
    check(set(res["rows"]) == {"alone", "plain", "strict", "fill"}, "the table has every mode")
    for m, runs in res["raw"].items():
        for s, b in runs:
            check(s["wrong"] == 0 and s["requests"] == 20 and b["wrong"] == 0 and b["kernels"] > 0,
                  f"{m}: {s['requests']} requests and {b['kernels']} batch kernels, all correct")
    trace = json.load(open(os.path.join(out, "trace-fill.json")))
    ev = [e for e in trace["traceEvents"] if e.get("ph") != "M"]
    names = {e["name"] for e in ev if e.get("cat") == "launch"}
    want = {f"_Z5layerILi{k}EEvPjjj" for k in (0, 1, 2, 3, 4, 15)}
    check(names == want, f"every launch of both programs reached fikit, named as the module names it: "
                         f"{sorted(names)}")
finally:
    shutil.rmtree(work, ignore_errors=True)
