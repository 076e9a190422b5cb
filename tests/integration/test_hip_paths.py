"""The HIP interposer on every launch path with a device to schedule on:
against the runtime double of tests/hip (two fake AMD GPUs; no GPU here; the
conformance suite runs the same paths on a real one). Each path computes and
checks its result; fikit must see, name and publish every launch on the right
device, lose and double none (ROCm's own calls from one entry point into
another included), leave captured launches alone and gate a graph launch as
one unit, time launches with events of the right device, and leave the
program's current device as it was; as a low-priority task behind a busy
high-priority one, its launches are held and then granted."""
import os
import re
from harness import BUILD, Fikit, check, check_held_paths, check_traced_launches, run_paths

prog = os.path.join(BUILD, "tests", "hip", "hip_sched_paths")

# pauses = off: held launches must stay held while the busy task runs.
with Fikit(extra="pauses = off", tasks=(("paths", 0), ("low", 9), ("spin", 0))) as fk:
    text = open(fk.config).read().replace("backend = opencl", "backend = hip")
    open(fk.config, "w").write(text)
    fk.start("--trace")

    r, want = run_paths(fk, prog, "FAKEHIP_COUNT", "runtime")
    check("warning" not in r.stderr, f"fikit had nothing to warn about: {r.stderr.strip()!r}")

    trace = fk.trace()
    launches = [e for e in trace["traceEvents"] if e.get("cat") == "launch"]
    # The runtime's own nested calls are not launches of their own.
    check_traced_launches(fk, len(launches), want)
    names = {e["name"] for e in launches}
    check(names == {"_Z5scalePffi", "vec_add", "hip-graph-1", "_Z9reduce_inPffi"},
          f"every launch was named, by host function and by hipFunction_t alike; the graph as one "
          f"unit (captured launches are not separate ones): {sorted(names)}")
    # The unloaded module's kernel ran once; the next module's kernel at the
    # same handle is _Z5scalePffi, not a second launch of the unloaded one.
    unloaded = sum(1 for e in launches if e["name"] == "_Z9reduce_inPffi")
    check("(handle reused)" in r.stdout and unloaded == 1,
          f"a function handle reused after hipModuleUnload is named as the new kernel: the unloaded one's "
          f"name on {unloaded} launch(es), 1 made")
    status = fk.status()
    keys = sorted(set(re.findall(r"^device \d+: (hip:\S+)", status, re.M)))
    check(keys == ["hip:GPU-00fa4ea3d0000000", "hip:GPU-00fa4ea3d0000001"],
          f"both devices were identified by their unique ids: {keys}")
    st = fk.tool("profile", "show", "-c", fk.config, "paths")
    print(st.stdout)
    check(st.returncode == 0 and "hip-graph-1" in st.stdout and "_Z5scalePffi" in st.stdout
          and "vec_add" in st.stdout, "the measured profile holds every kernel and the graph")
    check("Fake AMD GPU 1" in st.stdout and "Fake AMD GPU 0" in st.stdout,
          "launches were timed on both devices (events made on the stream's device)")

    # Held behind a busy priority-0 task, then granted: nothing lost.
    check_held_paths(fk, prog, "FAKEHIP_COUNT", "runtime", want)
