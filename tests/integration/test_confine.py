"""Per-launch SM shares (mps_lower_cap = launches), against the CUDA driver
double (tests/fakecuda), whose green contexts run their streams on threads of
their own, so that a launch moved into one is seen out of order unless fikit
keeps the program's order:

- fikit-launch starts a beside task as an uncapped MPS client (no
  CUDA_MPS_ACTIVE_THREAD_PERCENTAGE), at MPS's lower client priority;
- while a priority-0 task is active, the beside task's launches go into a
  green context, and every case of tests/fakecuda/confined.c (its own
  stream, the legacy and per-thread streams, events across streams,
  cuEventSynchronize, cuLaunchKernelEx, a graph between confined launches,
  four threads) reads its results right;
- with the priority-0 task gone, none is moved (the whole device);
- where green contexts cannot be made (an old driver), the task says so in
  one line on stderr, shares only gaps, and its results are still right;
  fikit status then shows it sharing gaps."""
import json
import os
from harness import BUILD, Fikit, check, run_confined, status_column, wait_for

fake = os.path.join(BUILD, "tests", "fakecuda")
confined = os.path.join(fake, "confined")
spinner = os.path.join(fake, "multi_dev")


# pauses = off: the busy task stalls on a busy machine, and a stall past its
# gaps' p99 is a pause, in which the job has the whole device (core/admit.c);
# without pauses it rests only when idle (20 ms), so nearly every launch of
# the job is confined and the order checks see them all.
with Fikit(policy="fill", extra="substrate = mps\nmps_lower_cap = launches\nlatency_budget = 0\n"
                                "max_wait_ms = 200\npauses = off", tasks=(("svc", 0), ("job", 9))) as fk:
    text = open(fk.config).read().replace("backend = opencl", "backend = cuda")
    open(fk.config, "w").write(text)
    fk.env["LD_LIBRARY_PATH"] = os.path.join(fake, "lib")
    fk.env["FAKECUDA_DEVICES"] = "1"
    fk.env.pop("CUDA_VISIBLE_DEVICES", None)
    fk.env.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)
    fk.env.pop("CUDA_MPS_CLIENT_PRIORITY", None)

    env = fk.run("job", ["env"]).stdout
    check("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE" not in env and "CUDA_MPS_CLIENT_PRIORITY=1" in env,
          "fikit-launch starts the beside task uncapped, at MPS's lower client priority")

    fk.start()
    svc = fk.popen("svc", [spinner, "--spin", "600"])
    wait_for("the busy priority-0 task", lambda: status_column(fk.status(), "svc", "launches"))

    p, green, n = run_confined(fk, confined, 8, "FAKECUDA_GREEN_COUNT")
    check(p.returncode == 0 and "0 failures" in p.stdout,
          "every case read its results right with its launches confined")
    # Every launch but the graph launches (one a round, never moved) went
    # into the green context while the priority-0 task was active, which a
    # stall of 20 ms on a busy machine may interrupt for a few.
    check(green >= 0.9 * (n - 8),
          f"{green} of its {n} launches ran in a green context beside the busy task")
    check("cannot confine" not in p.stderr, "no warning: green contexts work here")

    # fikit status --json and --watch, while the busy task runs.
    doc = json.loads(fk.tool("status", "-c", fk.config, "--json").stdout)
    tasks = [t for d in doc["devices"] for t in d["tasks"]]
    svc_row = [t for t in tasks if t["task"] == "svc"]
    check(doc["fikitd"]["pid"] > 0 and len(doc["devices"]) == 1 and svc_row and svc_row[0]["priority"] == 0
          and svc_row[0]["launches"] > 0 and doc["devices"][0]["active_level"] == 0,
          f"fikit status --json: one device, the busy task at priority 0 with {svc_row[0]['launches']} launches")
    w = fk.tool("status", "-c", fk.config, "--json", "--watch", "0.1", "--count", "3")
    looks = [json.loads(l) for l in w.stdout.splitlines()]
    check(w.returncode == 0 and len(looks) == 3 and
          looks[2]["devices"][0]["tasks"][0]["launches"] >= looks[0]["devices"][0]["tasks"][0]["launches"],
          "fikit status --json --watch 0.1 --count 3: three documents, a line each, launches growing")

    svc.terminate()
    svc.communicate(timeout=60)
    wait_for("the priority-0 task to leave", lambda: not status_column(fk.status(), "svc", "launches"))
    p, green, n = run_confined(fk, confined, 2, "FAKECUDA_GREEN_COUNT")
    check(p.returncode == 0 and green == 0,
          f"with no higher level, none of its {n} launches was moved (the whole device)")

    svc = fk.popen("svc", [spinner, "--spin", "600"])
    wait_for("the busy priority-0 task again", lambda: status_column(fk.status(), "svc", "launches"))
    p, green, n = run_confined(fk, confined, 1, "FAKECUDA_GREEN_COUNT", FAKECUDA_GREEN="unsupported")
    lines = [l for l in p.stderr.splitlines() if "cannot confine" in l]
    check(p.returncode == 0 and "0 failures" in p.stdout and green == 0,
          "without green contexts the program runs, its results right, nothing moved")
    check(len(lines) == 1 and "cuGreenCtxCreate" in lines[0] and "shares only the gaps" in lines[0],
          f"it says once why, and what it does instead: {lines}")
    # And fikit status says so: a task registered beside shows as sharing gaps
    # once its launches could not be confined (the flag in its slot).
    saved = dict(fk.env)
    fk.env["FAKECUDA_GREEN"] = "unsupported"
    try:
        job = fk.popen("job", [spinner, "--spin", "600"])
    finally:
        fk.env = saved
    shares = []

    def gaps_shown():
        shares.extend(status_column(fk.status(), "job", "share"))
        return shares and shares[-1] == "gaps"
    wait_for("the unconfined job shown as sharing gaps", gaps_shown)
    # fikitd takes it as sharing gaps too (the budgets above it climb no
    # further than gaps), and says so in its log.
    wait_for("fikitd's line on the unconfined job",
             lambda: "task job (pid" in open(fk.log).read() and "its launches could not be confined" in open(fk.log).read())
    job.kill()
    _, err = job.communicate(timeout=60)
    check(shares and shares[-1] == "gaps" and "cannot confine" in err,
          f"fikit status shows it as it runs: sharing gaps ({shares[-3:]})")
    svc.terminate()
    svc.communicate(timeout=60)
