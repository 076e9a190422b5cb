"""A bursty service's idle time reaches the lower tasks (issue 42), with real
OpenCL programs on PoCL under fikit's defaults (fill, idle_after_us = auto,
pauses on).

The priority-0 service works in bursts: requests back to back for 500 ms,
then none for 1000 ms (fikit-demo-service --bursts 500:1000), each of its
kernels followed by clFinish. The idle between its bursts follows a wait
that ended a burst, so it is not a gap its idle threshold is built on: the
threshold stays at the 20 ms floor (or twice its longest gap inside a
burst), far under the 1 s of idle, where before it grew to twice the idle
itself (2001 ms) and the job beside it kept 19.6 % of its throughput. So
the priority-9 job runs in the service's idle: checked by what `fikit
status` shows of the service's idle threshold, and by the job's kernels
done while the service ran, against its rate alone measured here just
before (at least 40 %: the service is idle two thirds of the time)."""
import json
import time
from harness import BATCH, SERVICE, Fikit, check, result, status_column

ON_MS, OFF_MS = 500, 1000
JOB = [BATCH, "--json", "--progress", "-w", "200"]


def svc_argv(requests):
    return [SERVICE, "--json", "-n", str(requests), "-r", "0", "-k", "5", "-g", "200", "-w", "100",
            "--bursts", f"{ON_MS}:{OFF_MS}"]


with Fikit() as fk:
    fk.start()
    # Profiles, as a user makes them: each measured alone.
    r = fk.run("serve", svc_argv(300), measure=True)
    check(r.returncode == 0 and result(r)["wrong"] == 0, "the service measured alone, outputs right")
    per_request_s = result(r)["service_ms"] / 1e3
    check(fk.run("batch", JOB[:3] + ["-t", "2"] + JOB[3:], measure=True).returncode == 0, "the job measured alone")

    # The job alone under fikit: its rate, the reference.
    r = fk.run("batch", JOB[:3] + ["-t", "3"] + JOB[3:])
    check(r.returncode == 0 and result(r)["wrong"] == 0, "the job ran alone")
    alone = result(r)
    alone_rate = alone["kernels"] / alone["seconds"]

    # Four of the service's periods (on and off), the job beside it all along.
    requests = max(20, int(4 * ON_MS / 1e3 / per_request_s))
    job = fk.popen("batch", JOB[:3] + ["-t", "600"] + JOB[3:])
    time.sleep(1.0)  # past the job's start-up
    svc = fk.popen("serve", svc_argv(requests))
    idle_ms = []
    while svc.poll() is None:
        idle_ms += [float(v) for v in status_column(fk.status(), "serve", "idle_ms") if v != "-"]
        time.sleep(0.1)
    out, _ = svc.communicate(timeout=300)
    job.terminate()
    jout, _ = job.communicate(timeout=120)
    check(svc.returncode == 0 and result(out)["wrong"] == 0, "the service's outputs were right beside the job")
    check(job.returncode == 0 and result(jout)["wrong"] == 0, "the job's outputs were right")
    check(idle_ms and max(idle_ms) < OFF_MS / 2,
          f"the service's idle threshold stays under its idle between bursts: at most {max(idle_ms or [0]):.1f} ms "
          f"in {len(idle_ms)} looks (the idle is {OFF_MS} ms)")
    s = result(out)
    t0, t1 = s["t0"], s["t1"]
    marks = json.loads(jout.strip().splitlines()[-1]).get("progress", [])
    inside = [n for t, n in marks if t0 <= t <= t1]
    done = (max(inside) - min(inside)) if len(inside) > 1 else 0
    share = done / (t1 - t0) / alone_rate
    check(share >= 0.40, f"the job kept {share:.2f} of its rate alone while the bursty service ran "
                         f"({done} kernels in {t1 - t0:.1f} s, {alone_rate:.1f}/s alone; at least 0.40)")
