"""Permissions: the socket is never world-writable; [limits] caps the priority a
user may claim (checked against the socket's peer credentials); fikit-launch
refuses set-user-ID programs. And profile writes that fail (a directory the user
may not write, a full disk) keep the previous profile and say why."""
import grp as groups
import os
import pwd
import re
import shutil
import stat
import subprocess
import time
from harness import BATCH, LAUNCH, Fikit, check, fail, programs_for_others, result

if os.geteuid() != 0:
    print("skip: these checks switch users and need root (CI runs as root)")
    raise SystemExit(0)

nobody = pwd.getpwnam("nobody")


def as_nobody():
    # nobody reaches the socket through the socket group, whatever its own group is.
    os.setgroups([groups.getgrnam("nogroup").gr_gid])
    os.setgid(nobody.pw_gid)
    os.setuid(nobody.pw_uid)


with Fikit(tasks=(("serve", 0), ("batch", 9))) as fk:
    fk.start()
    mode = stat.S_IMODE(os.stat(fk.socket).st_mode)
    check(not mode & 0o007, f"the socket is closed to other users (mode {oct(mode)})")
    fk.stop()

    # A group that may connect, and limits: root may claim 0, everyone else 5.
    grp = "nogroup"
    with open(fk.config, "a") as f:
        f.write(f"[limits]\ndefault = 5\nuser.root = 0\n")
    text = open(fk.config).read().replace("[daemon]\n", f"[daemon]\nsocket_group = {grp}\n")
    open(fk.config, "w").write(text)
    os.chmod(fk.dir, 0o755)
    fk.start()
    st = os.stat(fk.socket)
    want_gid = groups.getgrnam(grp).gr_gid
    check(stat.S_IMODE(st.st_mode) == 0o660 and st.st_gid == want_gid,
          f"socket_group = {grp}: mode 0660, group {grp} ({want_gid}), still not world-writable "
          f"(seen: mode {oct(stat.S_IMODE(st.st_mode))}, gid {st.st_gid})")

    # Root measures the batch job: its profile is written.
    r = fk.run("batch", [BATCH, "--json", "-c", "20", "-w", "100"], measure=True)
    check(r.returncode == 0, "root measured the batch job")
    prof = os.path.join(fk.state, "profiles", "batch")
    files = os.listdir(prof)
    path = os.path.join(prof, files[0])
    before = open(path, "rb").read()

    # nobody asks for priority 0 and gets 5; its profile write is refused.
    # What nobody runs must be reachable by it (not so from a checkout in a
    # 0700 directory: then a copy in the test's directory).
    launch_nb, batch_nb = programs_for_others(os.path.join(fk.dir, "for-others"))
    home = os.path.join(fk.dir, "nobody-home")
    os.makedirs(home)
    os.chmod(home, 0o777)
    env = dict(fk.env, HOME=home, POCL_CACHE_DIR=home)
    p = subprocess.Popen([launch_nb, "-c", fk.config, "-t", "batch", "--priority", "0", "--measure", "--",
                          batch_nb, "--json", "-c", "1000", "-w", "100"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, preexec_fn=as_nobody)
    seen = ""
    for _ in range(300):
        seen = fk.status()
        if " batch " in seen:
            break
        time.sleep(0.01)
    out, err = p.communicate(timeout=120)
    check(p.returncode == 0 and result(out)["wrong"] == 0, "nobody's program ran correctly")
    check("5(<-0)" in seen, "fikit status showed nobody's task at priority 5, not the 0 it asked for")
    log = open(fk.log).read()
    check(re.search(r"task batch \(pid \d+\) registered in slot \d+ at priority 5", log) and
          re.search(r"task batch \(pid \d+, uid \d+\) asked for priority 0; \[limits\] allows 5 at most", log),
          "fikitd registered it at priority 5 and logged why")
    check("asked for priority 0; fikitd allows it 5 at most (fikit.ini [limits], or a cluster partition's ceiling): running at 5" in err,
          "nobody's program was told, once, why it runs at 5")
    check(f"cannot write {path}: Permission denied; the previous profile is kept" in err,
          "the profile write in a directory nobody may not write failed with a reason")
    check(open(path, "rb").read() == before, "the previous profile is intact")

    # nobody outside the socket's group: its program runs unscheduled and is
    # told what admits it (issue 40: the message named neither the group nor
    # the key).
    other_gid = next(g.gr_gid for g in groups.getgrall() if g.gr_gid not in (0, want_gid))

    def as_nobody_alone():  # nobody's own group is nogroup, the socket's: another one
        os.setgroups([])
        os.setgid(other_gid)
        os.setuid(nobody.pw_uid)
    p = subprocess.run([launch_nb, "-c", fk.config, "-t", "batch", "--", batch_nb, "--json", "-c", "20", "-w",
                        "100"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       preexec_fn=as_nobody_alone)
    check(p.returncode == 0 and result(p.stdout)["wrong"] == 0, "outside the group, nobody's program still ran")
    check("Permission denied" in p.stderr and "socket_group" in p.stderr,
          f"and says which key admits it: {p.stderr.strip()[-300:]}")

    # A full disk: profiles on a small tmpfs, filled up after the first save.
    tiny = os.path.join(fk.dir, "tinyfs")
    os.makedirs(tiny)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", tiny]).returncode != 0:
        fail("cannot mount a tmpfs for the full-disk case (root without CAP_SYS_ADMIN?)")
    try:
        cfg = fk.config + ".tiny"
        open(cfg, "w").write(open(fk.config).read().replace("[client]\n", "") +
                             f"[client]\nprofile_dir = {tiny}\n")
        run = lambda: subprocess.run([LAUNCH, "-c", cfg, "-t", "batch", "--measure", "--", BATCH, "--json",
                                      "-c", "20", "-w", "100"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=fk.env)
        check(run().returncode == 0, "a profile was written to the small filesystem")
        tpath = os.path.join(tiny, "batch", os.listdir(os.path.join(tiny, "batch"))[0])
        tbefore = open(tpath, "rb").read()
        fd = os.open(os.path.join(tiny, "filler"), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 512):
                pass
        except OSError:
            pass  # full
        os.close(fd)
        p = run()
        check(p.returncode == 0, "with the disk full the program itself is unaffected")
        check(f"cannot write {tpath}: No space left on device; the previous profile is kept" in p.stderr,
              f"a full disk fails the profile write with a reason: {p.stderr.strip()[-160:]}")
        check(open(tpath, "rb").read() == tbefore, "the previous profile is intact")
        check(len(os.listdir(os.path.join(tiny, "batch"))) == 1, "no temporary file is left behind")
    finally:
        subprocess.run(["umount", tiny])

    # A set-user-ID program: the loader would ignore fikit, so fikit-launch refuses it.
    suid = os.path.join(fk.dir, "suid-true")
    shutil.copy("/bin/true", suid)
    os.chmod(suid, 0o4755)
    r = fk.run("serve", [suid])
    check(r.returncode == 125 and "is set-user-ID or set-group-ID" in r.stderr,
          f"fikit-launch refuses a set-user-ID program: {r.stderr.strip()}")
