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
