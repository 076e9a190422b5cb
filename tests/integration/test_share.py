"""share = beside: a capped task runs while a higher level is active, never held.

On MPS a task whose threads are capped (mps_thread_percentage) cannot take
the SMs the higher levels need, so `share = beside` lets it run beside them
instead of only in their gaps. Here (OpenCL on the CPU, where the cap means
nothing to the device) what is tested is fikit's side: with the cap in the
task's environment, none of its launches is held, filled into a gap or paced
while the service is active; without the cap in its environment, it warns and
shares only the gaps again, held like any lower task. With
beside_max_slowdown set, it also shares only gaps while the service's
kernels run slower than in its profile."""
import time
from harness import BATCH, SERVICE, Fikit, check, result, status_column, threads

SVC = [SERVICE, "--json", "-n", "50", "-r", "0", "-k", "6", "-g", "3000", "-w", "250"]
LP = [BATCH, "--json", "-t", "4", "-w", "200"]


def slowdowns(status, task):
    """The slowdown column of a task's rows in `fikit status` (None: '-')."""
    return [float(v.rstrip("x")) if v != "-" else None for v in status_column(status, task, "slowdown")]


def beside_service(fk, lp_argv):
    """Runs a service while the batch job runs; returns (batch stderr, the
    batch task's trace events inside the service's run, the service's
    slowdowns that `fikit status` showed meanwhile, and the batch task's
    share column there)."""
    fk.start("--trace")
    lp = fk.popen("batch", lp_argv)
    time.sleep(1.5)  # past the job's start-up (PoCL builds its program)
    svc = fk.popen("serve", SVC)
    seen, share = [], set()
    while svc.poll() is None:
        st = fk.status()
        seen += slowdowns(st, "serve")
        share |= set(status_column(st, "batch", "share"))
        time.sleep(0.2)
    out, _ = svc.communicate(timeout=120)
    check(svc.returncode == 0 and result(out)["wrong"] == 0, "the service's outputs were right")
    out, err = lp.communicate(timeout=120)
    check(lp.returncode == 0 and result(out)["wrong"] == 0,
          f"the batch job ran {result(out)['kernels']} kernels, all correct")
    tr = fk.trace()
    fk.stop()
    names = threads(tr)
    svc_launches = [e["ts"] for e in tr["traceEvents"]
                    if e.get("cat") == "launch" and names.get(e["tid"]) == "serve"]
    lo, hi = min(svc_launches), max(svc_launches)
    mine = [e for e in tr["traceEvents"] if names.get(e.get("tid")) == "batch" and lo < e.get("ts", -1) < hi]
    return err, mine, seen, share


def configure(fk, guard=0):
    # No latency budget: a service that outlasts the batch job runs bursts
    # alone, and with ten of a size its budget would steer the job (paces of
    # its own), which is not what this test is about (integration.budget is).
    fk.write_config("fill", f"substrate = mps\nbeside_max_slowdown = {guard}\nlatency_budget = 0", tasks=())
    with open(fk.config, "a") as f:
        f.write("[client]\nsample_rate = 0.5\n[task.serve]\npriority = 0\n"
                "[task.batch]\npriority = 9\nmps_thread_percentage = 50\nshare = beside\n")


with Fikit() as fk:
    configure(fk)
    fk.start()
    # Measured as integration.grants measures: the batch for a time, not a
    # count of kernels, and the service on 20 requests, so that warm-up
    # launches do not set the profile the guard's slowdown is read against.
    check(fk.run("batch", LP[:2] + ["-t", "1.5"] + LP[4:], measure=True).returncode == 0, "batch job measured")
    check(fk.run("serve", SVC[:3] + ["20"] + SVC[4:], measure=True).returncode == 0, "service measured")
    fk.stop()
    cfg = fk.tool("config", "-c", fk.config).stdout
    check("\nshare = beside\n" in cfg, "fikit config shows the task's share")

    err, ev, _, share = beside_service(fk, LP)
    check(share == {"beside"}, f"fikit status shows the job sharing beside the service: {sorted(share)}")
    kinds = lambda cat: [e for e in ev if e.get("cat") == cat]
    beside_launches = len(kinds("launch"))
    check(len(kinds("launch")) > 50,
          f"beside: {len(kinds('launch'))} batch launches while the service was active")
    check(not kinds("hold") and not kinds("fill") and not kinds("pace"),
          f"none held, filled or paced ({len(kinds('hold'))}, {len(kinds('fill'))}, {len(kinds('pace'))})")
    check("share = beside" not in err, "no warning with the cap in force")

    # The same task with the cap taken out of its environment: gaps only.
    err, ev, _, share = beside_service(fk, ["env", "-u", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] + LP)
    check(share == {"gaps"}, f"fikit status shows it sharing gaps only: {sorted(share)}")
    check("share = beside, but CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is not set" in err,
          "without the cap the task says why it shares only gaps")
    gated = [e for e in ev if e.get("cat") in ("hold", "fill", "pace")]
    launches = sum(e.get("cat") == "launch" for e in ev)
    # Into gaps only: each launch while the service ran was a fill of its own
    # or granted by fikitd (one launch may be granted just before the window).
    admitted = sum(e.get("cat") in ("fill", "grant") for e in ev)
    check(gated and launches <= admitted + 1,
          f"without the cap the job was held, filled or paced ({len(gated)} times) and each of its "
          f"{launches} launches in the service's run filled a gap or was granted one ({admitted}), "
          f"against {beside_launches} launches beside it")

    # With beside_max_slowdown: on this CPU device the job's kernels beside
    # the service take cores from it, its sampled kernels run slower than in
    # its profile (measured alone above), and the job falls back to its gaps.
    # The two runs are compared: where the machine's load changed between
    # them (beside two busy loops: 317 launches with the guard against 156
    # without), the run without the guard and the one with it go again, each
    # pair back to back, 3 times at most.
    for attempt in range(3):
        configure(fk, guard=1.05)
        err, ev, seen, _ = beside_service(fk, LP)
        waits = sum(e.get("cat") in ("hold", "pace") for e in ev)
        launches = sum(e.get("cat") == "launch" for e in ev)
        if waits > 0 and launches < beside_launches or attempt == 2:
            break
        configure(fk)
        _, ev0, _, _ = beside_service(fk, LP)
        beside_launches = sum(e.get("cat") == "launch" for e in ev0)
    check("share = beside" not in err, "the cap is in force: no warning")
    guard_waits = [e for e in ev if e.get("cat") == "pace" and e["args"].get("guard")]
    check(guard_waits and all(e["name"] == "beside guard" and e["args"]["queued_us"] == 0 for e in guard_waits),
          f"the trace names {len(guard_waits)} of the job's waits as the guard's, apart from queue drains")
    known = [x for x in seen if x is not None]
    check(known and max(known) > 1.05, f"fikit status showed the service's slowdown against its profile: "
                                       f"{', '.join(f'{x:.2f}x' for x in known[:8])}")
    check(waits > 0 and launches < beside_launches,
          f"with beside_max_slowdown = 1.05 the job waited for gaps or for the service to speed up {waits} "
          f"times and launched {launches} kernels in the service's run, against {beside_launches} without it")
