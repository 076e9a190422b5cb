"""Stopping fikitd mid-run (SIGTERM) lets both programs finish, correctly, in passthrough."""
import time
from harness import BATCH, SERVICE, Fikit, check, result

with Fikit() as fk:
    fk.start()
    svc = fk.popen("serve", [SERVICE, "--json", "-n", "40", "-r", "20", "-w", "250", "-k", "4", "-g", "2000"])
    bat = fk.popen("batch", [BATCH, "--json", "-t", "4", "-w", "500"])
    deadline = time.time() + 30
    while time.time() < deadline and not (" serve " in (st := fk.status()) and " batch " in st):
        time.sleep(0.05)
    check(" serve " in st and " batch " in st, "both tasks registered before the stop")
    check(fk.stop() == 0, "fikitd exits 0 on SIGTERM")
    out_s, err_s = svc.communicate(timeout=120)
    out_b, err_b = bat.communicate(timeout=120)
    check(svc.returncode == 0 and result(out_s)["wrong"] == 0, "the service finished with correct outputs")
    check(bat.returncode == 0 and result(out_b)["wrong"] == 0, "the batch job finished with correct outputs")
    check("fikitd went away" in err_b and "passthrough" in err_b,
          f"the batch job said once that it runs unscheduled: {err_b.strip()}")

# Detached (no -f), fikitd says where it is once ready, writes its pid file,
# and removes it when it stops.
import os
import re
import signal
import subprocess
from harness import FIKITD

with Fikit() as fk:
    r = subprocess.run([FIKITD, "-c", fk.config], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=fk.env, timeout=60)
    m = re.search(r"running as pid (\d+), listening on (\S+); log (\S+), pid file (\S+); stop it with kill \1",
                  r.stdout)
    check(r.returncode == 0 and m is not None, f"detached, fikitd said its pid, socket, log and pid file: {r.stdout!r}")
    pid = int(m.group(1))
    pidfile = m.group(4)
    check(m.group(2) == fk.socket and pidfile == os.path.join(fk.state, "fikitd.pid"),
          "the configured socket, and the pid file in the state directory")
    check(open(pidfile).read().strip() == str(pid), "the pid file holds its pid")
    check(fk.status().startswith("fikitd"), "it answers on its socket")
    r2 = subprocess.run([FIKITD, "-f", "-c", fk.config], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                        env=fk.env, timeout=60)
    check(r2.returncode != 0 and f"another fikitd is already listening on {fk.socket}: pid {pid}" in r2.stderr,
          f"a second fikitd is refused and names the first one's pid: {r2.stderr.strip()[-300:]}")
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + 20
    while os.path.exists(f"/proc/{pid}") and time.time() < deadline:
        time.sleep(0.05)
    check(not os.path.exists(f"/proc/{pid}") or "zombie" in open(f"/proc/{pid}/status").read().lower(),
          "SIGTERM stopped it")
    check(not os.path.exists(pidfile), "and its pid file went with it")
