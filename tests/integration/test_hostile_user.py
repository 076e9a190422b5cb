"""What an ordinary local user can do to fikitd and to other users' programs
(issue 27), one case per finding. As root, each attack runs in a child that
has become nobody (it reaches the socket through socket_group, as any user
of a shared node would); without root, as this user. Each attack is a
forked child, not a program started from this checkout, so it runs from a
checkout in a 0700 directory too."""
import grp as groups
import os
import pwd
import socket
import struct
import subprocess
import time
import traceback
from harness import HDR, REGISTER, REGISTER_OK, REG_OK, Fikit, check, fail, packet, register

HELLO, STATUS, ERROR = 1, 6, 5
ROOT = os.geteuid() == 0
nobody = pwd.getpwnam("nobody")


def become_nobody():
    if ROOT:
        os.setgroups([groups.getgrnam("nogroup").gr_gid])
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)


def attacker(fn, *args):
    """Runs fn(*args) in a child as nobody; returns its pid."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            become_nobody()
            fn(*args)
        except Exception:
            traceback.print_exc()
            code = 1
        os._exit(code)
    return pid


def wait_child(pid, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        p, st = os.waitpid(pid, os.WNOHANG)
        if p:
            return os.waitstatus_to_exitcode(st)
        time.sleep(0.02)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    return None


def fds_of(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def timed_status(fk):
    t = time.time()
    r = fk.tool("status", "-c", fk.config)
    return time.time() - t, r


def recv_type(s):
    msg, fds, _, _ = socket.recv_fds(s, 16384, 4)
    for fd in fds:
        os.close(fd)
    return struct.unpack_from("<H", msg, 6)[0], msg


with Fikit(daemon="socket_group = nogroup\n" if ROOT else "") as fk:
    if ROOT:
        with open(fk.config, "a") as f:
            f.write("[limits]\ndefault = 0\ngroup.nogroup = 5\n")
        os.chmod(fk.dir, 0o755)
    fk.start()
    pid = fk.daemon.pid

    # [limits] binds: the documented kind of rule, group.NAME = 5 beside
    # default = 0, caps a member who asks for 0 (it used to register at 0).
    if ROOT:
        def ask_for_zero(path):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            s.send(register(b"probe", level=0, key=b"opencl:limits"))
            t, msg = recv_type(s)
            if t != REGISTER_OK:
                raise SystemExit(f"not registered: type {t}")
            level = REG_OK.unpack_from(msg, HDR.size)[1]
            raise SystemExit(0 if level == 5 else 10 + level)
        rc = wait_child(attacker(ask_for_zero, fk.socket))
        check(rc == 0, f"group.nogroup = 5 caps nobody who asked for 0 (exit {rc}: 0 is level 5, 10+N level N)")
    else:
        print("skip: [limits] against another user needs root")

    # Descriptors passed with a message are closed: 300 messages carrying 3
    # each used to leave 900 open in fikitd.
    before = fds_of(pid)

    def pass_fds(path):
        for _ in range(300):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            devnull = [os.open("/dev/null", os.O_RDONLY) for _ in range(3)]
            socket.send_fds(s, [packet(HELLO, b"")], devnull)
            for fd in devnull:
                os.close(fd)
            s.settimeout(5)
            try:
                s.recv(16384)
            except OSError:
                pass
            s.close()
    check(wait_child(attacker(pass_fds, fk.socket)) == 0, "nobody sent 300 messages of 3 descriptors each")
    time.sleep(0.2)
    after = fds_of(pid)
    check(after <= before + 2, f"fikitd kept none of the 900 descriptors (open: {before} before, {after} after)")

    # One slow reader does not stall fikitd: a client that pipelines status
    # requests and never reads is dropped once its replies pass the bound,
    # and root's fikit status answers meanwhile (each send used to block 5 s).
    def pipeline_status(path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        s.send(register(b"slowreader", level=9, key=b"opencl:slowreader"))
        s.settimeout(30)
        try:
            for _ in range(200000):
                s.send(packet(STATUS, b""))
        except OSError:
            pass  # dropped: what it asked for is not read, and the connection is gone
        time.sleep(30)
    slow = attacker(pipeline_status, fk.socket)
    time.sleep(1.0)
    worst = 0
    for _ in range(5):
        dt, r = timed_status(fk)
        check(r.returncode == 0 and r.stdout.startswith("fikitd"), "root's fikit status answered")
        worst = max(worst, dt)
    deadline = time.time() + 30
    while "does not read its replies" not in open(fk.log).read() and time.time() < deadline:
        time.sleep(0.1)
    os.kill(slow, 9)
    os.waitpid(slow, 0)
    check("does not read its replies" in open(fk.log).read(),
          "fikitd dropped the client that does not read, and said why")
    check(worst < 3, f"root's fikit status took {worst:.2f} s at most beside the slow reader")
    check(" slowreader " not in fk.status(), "the dropped client's task is gone")
