"""The OpenCL behaviour a program sees is the same with and without fikit,
even when fikit times every launch (--measure) and when its launches are held."""
import os
import subprocess
import time
from harness import BUILD, Fikit, check, fail

prog = os.path.join(BUILD, "tests", "cl_semantics")
plain = subprocess.run([prog], stdout=subprocess.PIPE, text=True)
check(plain.returncode == 0, "cl_semantics passes without fikit")
with Fikit() as fk:
    fk.start("--trace")
    for measure in (False, True):
        r = fk.run("batch", [prog], measure=measure)
        if r.returncode != 0 or r.stdout != plain.stdout:
            print("plain run said:\n" + plain.stdout)
            fail(f"under fikit (measure={measure}) the program saw something else:\n{r.stdout}\n{r.stderr}")
        check(True, f"identical output under fikit-launch{' --measure' if measure else ''}")
    # Held launches: a priority-0 task busy for 3 s makes the program's launches wait for grants.
    svc = fk.popen("serve", [os.path.join(BUILD, "demo", "fikit-demo-batch"), "--json", "-t", "3",
                             "-w", "500"])
    for _ in range(500):
        if " serve " in fk.status():
            break
        time.sleep(0.01)
    r = fk.run("batch", [prog])
    svc.communicate(timeout=120)
    check(r.returncode == 0 and r.stdout == plain.stdout,
          "identical output while a priority-0 task is running and launches are held")
    check(svc.returncode == 0, "the priority-0 task's outputs were right")
    holds = [e for e in fk.trace()["traceEvents"] if e.get("name") == "hold"]
    check(len(holds) > 0, f"{len(holds)} launches of the program were held meanwhile")
