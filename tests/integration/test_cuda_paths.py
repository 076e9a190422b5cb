"""The CUDA interposer on every driver-API launch path, against the driver
double of tests/fakecuda (no GPU here; the conformance suite runs the same
paths and more on a real GPU). Each path computes and checks its result;
fikit must see, name and publish every launch, lose none, leave captured
launches alone and gate a graph launch as one unit; as a low-priority task
behind a busy high-priority one, its launches are held and then granted."""
import os
from harness import BUILD, Fikit, check, check_held_paths, check_traced_launches, run_paths

prog = os.path.join(BUILD, "tests", "fakecuda", "driver_paths")
libdir = os.path.join(BUILD, "tests", "fakecuda", "lib")

# pauses = off: held launches must stay held while the busy task runs.
with Fikit(extra="pauses = off", tasks=(("paths", 0), ("low", 9), ("spin", 0))) as fk:
    text = open(fk.config).read().replace("backend = opencl", "backend = cuda")
    open(fk.config, "w").write(text)
    fk.env["LD_LIBRARY_PATH"] = libdir
    fk.start("--trace")

    r, want = run_paths(fk, prog, "FAKECUDA_COUNT", "driver")

    trace = fk.trace()
    launches = [e for e in trace["traceEvents"] if e.get("cat") == "launch"]
    check_traced_launches(fk, len(launches), want)
    names = {e["name"] for e in launches}
    check(names == {"_Z5scalePffi", "vec_add", "cuda-graph-1", "_Z9reduce_inPffi"},
          f"every launch was named (captured launches are not separate ones): {sorted(names)}")
    # The unloaded module's kernel ran once; the next module's kernel at the
    # same handle is _Z5scalePffi, not a second launch of the unloaded one.
    unloaded = sum(1 for e in launches if e["name"] == "_Z9reduce_inPffi")
    check("(handle reused)" in r.stdout and unloaded == 1,
          f"a kernel handle reused after cuModuleUnload is named as the new kernel: the unloaded one's "
          f"name on {unloaded} launch(es), 1 made")
    st = fk.tool("profile", "show", "-c", fk.config, "paths")
    check(st.returncode == 0 and "cuda-graph-1" in st.stdout and "_Z5scalePffi" in st.stdout,
          "the measured profile holds every kernel and the graph")

    # Held behind a busy priority-0 task, then granted: nothing lost.
    check_held_paths(fk, prog, "FAKECUDA_COUNT", "driver", want)
