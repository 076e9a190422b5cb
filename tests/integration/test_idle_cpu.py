"""fikitd spends no CPU while nothing is held, even under spin_us = always,
and fikit status still counts the launches of a task that nothing holds.

spin_us = always (the default on hosts of 8 or more CPUs) makes fikitd's
arbiter spin while launches are held, for the lowest grant latency. Once
nothing is held there is no decision to come, and the arbiter must sleep
until a client rings (core/arbiter.c, fikit_arbiter_plan): before that rule
was a core function, the arbiter spun one core for as long as fikitd ran
after its first held launch. Here a service and a batch job share the
OpenCL device (the batch job's launches are held and granted), both end,
and fikitd's CPU time over the next two seconds must stay far below the two
seconds that a spinning thread takes. On a very busy machine a spinning
thread may get less than that, so the bound is loose: the test can miss a
spin under heavy load, never fail without one."""
import os
import time
from harness import BATCH, SERVICE, Fikit, check, status_column

SVC = [SERVICE, "--json", "-n", "40", "-r", "0", "-k", "4", "-g", "300", "-w", "200"]
LP = [BATCH, "--json", "-t", "1", "-w", "200"]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


with Fikit(extra="spin_us = always") as fk:
    fk.start()
    check(fk.run("batch", LP, measure=True).returncode == 0, "batch job measured")
    check(fk.run("serve", SVC, measure=True).returncode == 0, "service measured")
    # A lower task alone (no higher level registered: nothing is ever held,
    # so fikitd's arbiter makes no pass): fikit status still counts its
    # launches, taking the records when it reports.
    lone = fk.popen("batch", [BATCH, "--json", "-t", "1.5", "-w", "200"])
    deadline = time.time() + 30
    seen = 0
    while time.time() < deadline and lone.poll() is None and not seen:
        time.sleep(0.2)
        seen = sum(int(n) for n in status_column(fk.status(), "batch", "launches"))
    check(seen > 0, f"fikit status counts a lone lower task's launches ({seen})")
    check(lone.wait(timeout=60) == 0, "the lone batch job finished")
    svc = fk.popen("serve", SVC)
    time.sleep(0.2)
    lp = fk.popen("batch", LP)
    check(svc.wait(timeout=120) == 0, "the service finished")
    check(lp.wait(timeout=120) == 0, "the batch job finished")
    holds = fk.tool("status", "-c", fk.config).stdout
    print(holds)
    time.sleep(0.5)
    before = cpu_seconds(fk.daemon.pid)
    time.sleep(2.0)
    used = cpu_seconds(fk.daemon.pid) - before
    check(used < 0.5, f"fikitd used {used:.2f} s of CPU in 2 s with nothing held (spin_us = always)")
    check(fk.stop() == 0, "fikitd stops cleanly")
