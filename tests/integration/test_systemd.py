"""fikitd under systemd: the units are valid, and fikitd serves the socket that
systemd hands it (socket activation, LISTEN_FDS), leaving the socket to systemd."""
import os
import shutil
import socket
import subprocess
import time
from harness import BATCH, BUILD, FIKITD, SOURCE, Fikit, check, fail, result

with Fikit() as fk:
    units = os.path.join(fk.dir, "units")
    os.makedirs(units)
    svc = open(os.path.join(SOURCE, "packaging", "systemd", "fikitd.service.in")).read()
    svc = svc.replace("@CMAKE_INSTALL_FULL_SBINDIR@/fikitd", FIKITD).replace("Documentation=man:fikitd(8)\n", "")
    open(os.path.join(units, "fikitd.service"), "w").write(svc)
    sock_unit = open(os.path.join(SOURCE, "packaging", "systemd", "fikitd.socket")).read()
    open(os.path.join(units, "fikitd.socket"), "w").write(sock_unit.replace("Documentation=man:fikitd(8)\n", ""))
    if shutil.which("systemd-analyze"):
        r = subprocess.run(["systemd-analyze", "verify", os.path.join(units, "fikitd.socket"),
                            os.path.join(units, "fikitd.service")], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        check(r.returncode == 0, f"systemd-analyze verify accepts fikitd.service and fikitd.socket {r.stdout.strip()}")
    else:
        print("skip: systemd-analyze is not installed")

    # Socket activation: the socket made here is fd 3 of fikitd, as systemd does it.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(fk.socket)
    s.listen(16)

    n = s.fileno()
    d = subprocess.Popen(["sh", "-c", f'exec 3<&{n} {n}<&-; LISTEN_PID=$$ LISTEN_FDS=1 exec "{FIKITD}" -f '
                                      f'-c "{fk.config}" -l info'],
                         stderr=open(fk.log, "a"), env=fk.env, pass_fds=(n,))
    fk.daemon = d
    time.sleep(0.3)
    r = fk.run("batch", [BATCH, "--json", "-c", "5", "-w", "100"])
    check(r.returncode == 0 and "fikitd" not in r.stderr, f"a client registered through the activated socket {r.stderr.strip()}")
    check("listening on " + fk.socket in open(fk.log).read(), "fikitd serves the socket it was handed")
    check(fk.stop() == 0, "fikitd stops cleanly")
    check(os.path.exists(fk.socket), "and leaves the socket to systemd (it owns it)")
    s.close()
