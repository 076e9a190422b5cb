"""Faults: clients killed at each step of the protocol, fikitd killed and
restarted under running clients. Nothing stays held, no other client stalls,
every output stays correct, and clients rejoin a new daemon."""
import os
import signal
import subprocess
import time
from harness import BATCH, SERVICE, Fikit, check, fail, result

SVC = [SERVICE, "--json", "-n", "40", "-r", "10", "-w", "250", "-k", "3", "-g", "2000"]


def pid_listed(fk, pid):
    return any(l.split()[1:2] == [str(pid)] for l in fk.status().splitlines() if l.startswith("  "))


def finish(p, what, limit):
    try:
        out, err = p.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill()
        fail(f"{what} stalled (still running after {limit} s)")
    if p.returncode != 0 or result(out)["wrong"] != 0:
        fail(f"{what} failed ({p.returncode}): {err[-800:]}")
    return out, err


# pauses = off, as in the other tests that need launches held: the victims
# of "hold" and "granted" must be held, and under pauses their kernels go
# whenever the service's gap outlasts its p99, which on a loaded machine is
# often (beside two busy loops the "hold" victim ran its 4 s unheld).
with Fikit(extra="pauses = off") as fk:
    fk.start()
    # A client killed at each step; the victim is low priority except for
    # "launch", where it is the high-priority task that just published a launch.
    for step in ("register", "hold", "granted", "launch"):
        hp_victim = step == "launch"
        env = dict(fk.env)
        svc = subprocess.Popen(fk.cmd("serve", SVC), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=dict(env, FIKIT_FAULT="die:launch") if hp_victim else env)
        time.sleep(0.5)
        victim = None if hp_victim else subprocess.Popen(
            fk.cmd("batch", [BATCH, "--json", "-t", "4", "-w", "500"]), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, env=dict(env, FIKIT_FAULT=f"die:{step}"))
        witness = subprocess.Popen(fk.cmd("batch", [BATCH, "--json", "-t", "3", "-w", "500"]),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        fk.children += [p for p in (svc, victim, witness) if p]
        dead = svc if hp_victim else victim
        dead.wait(timeout=30)
        check(dead.returncode == -signal.SIGKILL, f"{step}: the victim was killed at that step")
        time.sleep(0.2)
        check(not pid_listed(fk, dead.pid), f"{step}: fikitd dropped the dead task at once (nothing of it held)")
        finish(witness, f"{step}: the other low-priority task", 60)
        check(True, f"{step}: the other low-priority task finished with correct outputs, not stalled")
        if not hp_victim:
            finish(svc, f"{step}: the service", 60)
            check(True, f"{step}: the service finished with correct outputs")
    st = fk.status()
    check("held now 0" in st, "nothing is held at the end")

    # fikitd killed with SIGKILL and restarted while clients run.
    # Both run long enough to outlive their start, the kill and the rejoin,
    # however slowly they start (under the sanitizers, seconds).
    svc = fk.popen("serve", SVC[:3] + ["100"] + SVC[4:])
    bat = fk.popen("batch", [BATCH, "--json", "-t", "10", "-w", "500"])
    deadline = time.time() + 30
    while time.time() < deadline and not (" serve " in (st := fk.status()) and " batch " in st):
        time.sleep(0.05)
    check(" serve " in st and " batch " in st, "both registered before the kill")
    fk.daemon.kill()
    fk.daemon.wait()
    time.sleep(1.0)
    check(svc.poll() is None and bat.poll() is None, "both keep running without fikitd")
    fk.start()
    deadline = time.time() + 5
    while time.time() < deadline and not (" serve " in fk.status() and " batch " in fk.status()):
        time.sleep(0.1)
    st = fk.status()
    check(" serve " in st and " batch " in st, "both rejoined the new fikitd")
    _, err_s = finish(svc, "the service", 120)
    _, err_b = finish(bat, "the batch job", 120)
    check("fikitd went away" in err_b and "fikitd is back" in err_b,
          "the batch job said it ran unscheduled, then scheduled again")
