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
from harness import BUILD, Fikit, check, check_traced_launches, fail, trace_events_lost

prog = os.path.join(BUILD, "tests", "hip", "hip_sched_paths")

# pauses = off: held launches must stay held while the busy task runs.
with Fikit(extra="pauses = off", tasks=(("paths", 0), ("low", 9), ("spin", 0))) as fk:
    text = open(fk.config).read().replace("backend = opencl", "backend = hip")
    open(fk.config, "w").write(text)
    fk.start("--trace")

    count = os.path.join(fk.dir, "count")
    fk.env["FAKEHIP_COUNT"] = count
    r = fk.run("paths", [prog], measure=True)
    print(r.stdout)
    if r.returncode != 0:
        fail(f"hip_sched_paths failed under fikit: {r.stderr}")
    check(re.search(r"^0 failures$", r.stdout, re.M), "every path computed the right result under fikit")
    check("warning" not in r.stderr, f"fikit had nothing to warn about: {r.stderr.strip()!r}")
    want = int(re.search(r"^launches (\d+)", r.stdout, re.M).group(1))
    got = int(open(count).read())
    check(got == want, f"all {want} launches reached the runtime, none lost or repeated ({got})")

    trace = fk.trace()
    launches = [e for e in trace["traceEvents"] if e.get("cat") == "launch"]
    # The runtime's own nested calls are not launches of their own.
    check_traced_launches(fk, len(launches), want)
    names = {e["name"] for e in launches}
    check(names == {"_Z5scalePffi", "vec_add", "hip-graph-1"},
          f"every launch was named, by host function and by hipFunction_t alike; the graph as one "
          f"unit (captured launches are not separate ones): {sorted(names)}")
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
    fk.tool("trace", "start", "-c", fk.config)
    fk.env["FAKEHIP_COUNT"] = os.path.join(fk.dir, "count-spin")
    # The spin runs until the low task has been held (Fikit.run_held). Not
    # until a count of holds: how soon a held launch is granted behind the
    # unmeasured spin varies; under ThreadSanitizer one of hip_paths' waited
    # for the spin to end.
    spin = fk.popen("spin", [prog, "--spin", "300"])
    fk.env["FAKEHIP_COUNT"] = count
    _, r = fk.run_held(spin, "spin", "low", [prog])
    if r.returncode != 0:
        print(f"held run: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    check(r.returncode == 0 and re.search(r"^0 failures$", r.stdout, re.M),
          "correct results as a held low-priority task")
    got = int(open(count).read())
    check(got == want, f"all {want} launches of the held task reached the runtime ({got})")
    ev = fk.trace()["traceEvents"]
    # A task is one thread per device in the trace (pid: the device).
    low = {(e["pid"], e["tid"]) for e in ev
           if e.get("name") == "thread_name" and e["args"]["name"].split(" ")[0] == "low"}
    holds = [e for e in ev if e.get("name") == "hold" and (e.get("pid"), e.get("tid")) in low]
    grants = [e for e in ev if e.get("cat") == "grant" and (e.get("pid"), e.get("tid")) in low]
    # Every held launch was granted: the program finished with all its launches
    # run. A hold is the client's event, from its ring, and may be lost (only
    # as fikit status counts); a grant is fikitd's own.
    lost = trace_events_lost(fk.status())
    check(len(holds) > 0 and len(holds) <= len(grants) <= len(holds) + lost,
          f"the low-priority task's launches were held ({len(holds)} in the trace) and granted "
          f"({len(grants)})")
