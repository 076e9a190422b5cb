"""The CUDA interposer on every driver-API launch path, against the driver
double of tests/fakecuda (no GPU here; the conformance suite runs the same
paths and more on a real GPU). Each path computes and checks its result;
fikit must see, name and publish every launch, lose none, leave captured
launches alone and gate a graph launch as one unit; as a low-priority task
behind a busy high-priority one, its launches are held and then granted."""
import os
import re
from harness import BUILD, Fikit, check, check_traced_launches, fail

prog = os.path.join(BUILD, "tests", "fakecuda", "driver_paths")
libdir = os.path.join(BUILD, "tests", "fakecuda", "lib")

# pauses = off: held launches must stay held while the busy task runs.
with Fikit(extra="pauses = off", tasks=(("paths", 0), ("low", 9), ("spin", 0))) as fk:
    text = open(fk.config).read().replace("backend = opencl", "backend = cuda")
    open(fk.config, "w").write(text)
    fk.env["LD_LIBRARY_PATH"] = libdir
    fk.start("--trace")

    count = os.path.join(fk.dir, "count")
    fk.env["FAKECUDA_COUNT"] = count
    r = fk.run("paths", [prog], measure=True)
    print(r.stdout)
    if r.returncode != 0:
        fail(f"driver_paths failed under fikit: {r.stderr}")
    check(re.search(r"^0 failures$", r.stdout, re.M), "every path computed the right result under fikit")
    want = int(re.search(r"launches (\d+)", r.stdout).group(1))
    got = int(open(count).read())
    check(got == want, f"all {want} launches reached the driver, none lost or repeated ({got})")

    trace = fk.trace()
    launches = [e for e in trace["traceEvents"] if e.get("cat") == "launch"]
    check_traced_launches(fk, len(launches), want)
    names = {e["name"] for e in launches}
    check(names == {"_Z5scalePffi", "vec_add", "cuda-graph-1"},
          f"every launch was named (captured launches are not separate ones): {sorted(names)}")
    st = fk.tool("profile", "show", "-c", fk.config, "paths")
    check(st.returncode == 0 and "cuda-graph-1" in st.stdout and "_Z5scalePffi" in st.stdout,
          "the measured profile holds every kernel and the graph")

    # Held behind a busy priority-0 task, then granted: nothing lost.
    fk.tool("trace", "start", "-c", fk.config)
    fk.env["FAKECUDA_COUNT"] = os.path.join(fk.dir, "count-spin")
    # The spin runs until the low task has been held (Fikit.run_held). Not
    # until a count of holds: how soon a held launch is granted behind the
    # unmeasured spin varies; under ThreadSanitizer one of hip_paths' waited
    # for the spin to end.
    spin = fk.popen("spin", [prog, "--spin", "300"])
    fk.env["FAKECUDA_COUNT"] = count
    _, r = fk.run_held(spin, "spin", "low", [prog])
    if r.returncode != 0:
        print(f"held run: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    check(r.returncode == 0 and re.search(r"^0 failures$", r.stdout, re.M),
          "correct results as a held low-priority task")
    got = int(open(count).read())
    check(got == want, f"all {want} launches of the held task reached the driver ({got})")
    ev = fk.trace()["traceEvents"]
    tid = {e["args"]["name"].split(" ")[0]: e["tid"] for e in ev if e.get("name") == "thread_name"}
    holds = [e for e in ev if e.get("name") == "hold" and e["tid"] == tid["low"]]
    grants = [e for e in ev if e.get("cat") == "grant" and e["tid"] == tid["low"]]
    check(len(holds) > 0 and len(grants) == len(holds),
          f"the low-priority task's launches were held ({len(holds)}) and each was granted ({len(grants)})")
