"""The OpenCL behaviour a program sees is the same with and without fikit,
even when fikit times every launch (--measure) and when its launches are held."""
import os
import subprocess
from harness import BUILD, Fikit, check, fail, result

prog = os.path.join(BUILD, "tests", "cl_semantics")
plain = subprocess.run([prog], stdout=subprocess.PIPE, text=True)
check(plain.returncode == 0, "cl_semantics passes without fikit")
# pauses = off: the measured program's short kernels would go whenever the
# busy task's gap outlasts its p99, and this test needs them held.
with Fikit(extra="pauses = off") as fk:
    fk.start("--trace")
    for measure in (False, True):
        r = fk.run("batch", [prog], measure=measure)
        if r.returncode != 0 or r.stdout != plain.stdout:
            print("plain run said:\n" + plain.stdout)
            fail(f"under fikit (measure={measure}) the program saw something else:\n{r.stdout}\n{r.stderr}")
        check(True, f"identical output under fikit-launch{' --measure' if measure else ''}")
    # Held launches: a busy priority-0 task makes the program's launches wait
    # for grants, until it ends by SIGTERM with its results (Fikit.run_held).
    # Again (3 runs at most) if none was held: on a loaded machine the busy
    # task's launches can stall past its idle threshold for the whole run
    # (once in a -j2 make check at load 15).
    for attempt in range(3):
        svc = fk.popen("serve", [os.path.join(BUILD, "demo", "fikit-demo-batch"), "--json", "-t", "600",
                                 "-w", "500"])
        out, held = fk.run_held(svc, "serve", "batch", [prog], linger=0.5)
        check(svc.returncode == 0 and result(out)["wrong"] == 0, "the priority-0 task's outputs were right")
        check(held.returncode == 0 and held.stdout == plain.stdout,
              "identical output while a priority-0 task is running and launches are held")
        holds = [e for e in fk.trace()["traceEvents"] if e.get("name") == "hold"]
        if holds:
            break
    check(len(holds) > 0, f"{len(holds)} launches of the program were held meanwhile")
