"""fikitd at its descriptor limit refuses a registration with the reason
(issue 38): each task's slot is a descriptor in fikitd, and before, a slot that
could not be made was answered with "device ... already has 64 tasks". With
fikitd's limit lowered to one above what it holds (the new connection's
socket fits, its slot does not), the program says why it runs unscheduled,
fikitd logs it, and once the limit is back the next program registers."""
import os
import resource
import time
from harness import SERVICE, Fikit, check, result

SVC = [SERVICE, "--json", "-n", "3", "-r", "0", "-k", "1", "-g", "0", "-w", "10"]


def one_free(pid):
    """A descriptor limit under which the process can open one more: the
    limit bounds the numbers of new descriptors, which take the lowest free."""
    used = {int(f) for f in os.listdir(f"/proc/{pid}/fd")}
    free = [n for n in range(max(used) + 3) if n not in used]
    return free[1]


with Fikit() as fk:
    fk.start()
    pid = fk.daemon.pid
    r = fk.run("serve", SVC)
    check(r.returncode == 0 and result(r)["wrong"] == 0 and "refused" not in r.stderr, "a program registers")
    time.sleep(0.3)  # its connection and slot closed
    old = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (one_free(pid), old[1]))
    try:
        r = fk.run("serve", SVC)
    finally:
        resource.prlimit(pid, resource.RLIMIT_NOFILE, old)
    check(r.returncode == 0 and result(r)["wrong"] == 0, "at fikitd's limit the program still runs, unscheduled")
    check("cannot make the task's slot" in r.stderr and "descriptor limit" in r.stderr,
          f"and says why: {r.stderr.strip()[-300:]}")
    time.sleep(0.2)
    check("cannot make a slot for task serve" in open(fk.log).read(), "fikitd's log says so too")
    r = fk.run("serve", SVC)
    check(r.returncode == 0 and "refused" not in r.stderr and "cannot" not in r.stderr,
          "with the limit back, the next program registers")
