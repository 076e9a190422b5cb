"""Per-launch CU shares on HIP (mps_lower_cap = launches), against tests/hip's runtime
double, whose CU-masked streams run on threads of their own, so that a launch moved
into one is seen out of order unless fikit keeps the program's order (the HIP twin
of integration.confine):

- while a priority-0 task is active, the beside task's hipLaunchKernel(_spt) and
  hipModuleLaunchKernel launches go into a stream of hipExtStreamCreateWithCUMask,
  and every case of tests/hip/confined_hip.c (its own stream, the null and
  per-thread streams, events across streams, hipEventSynchronize,
  hipModuleLaunchKernel, four threads) reads its results right;
- with the priority-0 task gone, none is moved;
- where the runtime refuses a CU mask, the task says so in one line on stderr,
  shares only gaps, and its results are still right.

The substrate is written as mps because that is where fikit has beside tasks; on AMD
GPUs kernels of several processes run side by side as they do on MPS."""
import os
from harness import BUILD, Fikit, check, run_confined, status_column, wait_for

hip = os.path.join(BUILD, "tests", "hip")
confined = os.path.join(hip, "confined_hip")
spinner = os.path.join(hip, "hip_sched_paths")


# pauses = off: see integration.confine.
with Fikit(policy="fill", extra="substrate = mps\nmps_lower_cap = launches\nlatency_budget = 0\n"
                                "max_wait_ms = 200\npauses = off", tasks=(("spin", 0), ("job", 9))) as fk:
    text = open(fk.config).read().replace("backend = opencl", "backend = hip")
    open(fk.config, "w").write(text)
    fk.env.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)
    fk.start()
    svc = fk.popen("spin", [spinner, "--spin", "600"])
    wait_for("the busy priority-0 task", lambda: status_column(fk.status(), "spin", "launches"))

    p, masked, n = run_confined(fk, confined, 8, "FAKEHIP_MASKED_COUNT")
    check(p.returncode == 0 and "0 failures" in p.stdout,
          "every case read its results right with its launches confined")
    check(masked >= 0.9 * n, f"{masked} of its {n} launches ran in a CU-masked stream beside the busy task")
    check("cannot confine" not in p.stderr, "no warning: CU masks work here")

    svc.terminate()
    svc.communicate(timeout=60)
    wait_for("the priority-0 task to leave", lambda: not status_column(fk.status(), "spin", "launches"))
    p, masked, n = run_confined(fk, confined, 2, "FAKEHIP_MASKED_COUNT")
    check(p.returncode == 0 and masked == 0,
          f"with no higher level, none of its {n} launches was moved (the whole device)")

    svc = fk.popen("spin", [spinner, "--spin", "600"])
    wait_for("the busy priority-0 task again", lambda: status_column(fk.status(), "spin", "launches"))
    p, masked, n = run_confined(fk, confined, 1, "FAKEHIP_MASKED_COUNT", FAKEHIP_CUMASK="unsupported")
    lines = [l for l in p.stderr.splitlines() if "cannot confine" in l]
    check(p.returncode == 0 and "0 failures" in p.stdout and masked == 0,
          "without CU masks the program runs, its results right, nothing moved")
    check(len(lines) == 1 and "hipExtStreamCreateWithCUMask" in lines[0] and "shares only the gaps" in lines[0],
          f"it says once why, and what it does instead: {lines}")
    svc.terminate()
    svc.communicate(timeout=60)
