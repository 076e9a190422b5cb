"""What an ordinary local user can do to fikitd and to other users' programs
(issue 27), one case per finding. As root, each attack runs in a child that
has become nobody (it reaches the socket through socket_group, as any user
of a shared node would); without root, as this user. Each attack is a
forked child, not a program started from this checkout, so it runs from a
checkout in a 0700 directory too."""
import os
import socket
import struct
import time
from harness import (HDR, REGISTER, REGISTER_OK, REG_OK, ROOT, Fikit, attacker, check, fail, packet, register,
                     wait_child)

HELLO, STATUS, ERROR, ATTEST = 1, 6, 5, 15


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

        # Only root says who a process is (the Slurm plugin's task record): nobody
        # who writes one for itself with ceiling 0 is refused and stays at 5.
        def attest_self(path):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            s.send(packet(ATTEST, struct.pack("<iiiI64s128s", os.getpid(), 0, 0, 0, b"serve", b"me")))
            t, msg = recv_type(s)
            if t != ERROR or b"only root" not in msg:
                raise SystemExit(f"the record was not refused: type {t}")
            s.send(register(b"probe", level=0, key=b"opencl:limits"))
            t, msg = recv_type(s)
            if t != REGISTER_OK:
                raise SystemExit(f"not registered: type {t}")
            level = REG_OK.unpack_from(msg, HDR.size)[1]
            raise SystemExit(0 if level == 5 else 10 + level)
        rc = wait_child(attacker(attest_self, fk.socket))
        check(rc == 0, f"nobody's own task record is refused and it stays at 5 (exit {rc})")
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

    # A task name is checked where fikitd reads it: a newline in it forged
    # a line of fikitd's log.
    def forge(path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        s.send(register(b"x\nfikit[1]: FORGED line", key=b"opencl:forge"))
        s.settimeout(5)
        try:
            s.recv(16384)
        except OSError:
            pass
    check(wait_child(attacker(forge, fk.socket)) == 0, "nobody registered a task whose name holds a newline")
    time.sleep(0.2)
    log = open(fk.log).read()
    check("FORGED" not in log and "malformed message" in log,
          "fikitd refused the name as malformed and logged no line of it")

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

    # One user cannot use up what all share: connections, a device's slots,
    # device keys. What it may not have is refused with the reason, and root
    # still connects, registers and opens a device.
    def run_as_nobody(fn, *args):
        r, w = os.pipe()
        def body():
            os.close(r)
            os.write(w, repr(fn(*args)).encode())
        pid = attacker(body)
        os.close(w)
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        os.close(r)
        rc = wait_child(pid)
        if rc != 0:
            fail(f"the attack failed to run (exit {rc})")
        return eval(data.decode())

    def reply_to(s, data):
        s.settimeout(5)
        try:
            s.send(data)
        except BrokenPipeError:
            pass  # refused before it sent: the reason waits to be read
        try:
            msg, fds, _, _ = socket.recv_fds(s, 16384, 1)
        except ConnectionResetError:
            return ERROR, "(reset)"
        for fd in fds:
            os.close(fd)
        t = struct.unpack_from("<H", msg, 6)[0]
        if t == REGISTER_OK:  # the commons' and its slot's fds follow
            for _ in range(2):
                for fd in socket.recv_fds(s, 16384, 1)[1]:
                    os.close(fd)
        text = msg[HDR.size + 8:].split(b"\0")[0].decode() if t == ERROR else ""
        return t, text

    def flood_conns(path):
        held, refused, why = [], 0, ""
        for _ in range(200):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            t, text = reply_to(s, packet(HELLO, b""))
            if t == ERROR:
                refused += 1
                why = text
                s.close()
            else:
                held.append(s)
        return len(held), refused, why

    if ROOT:
        held, refused, why = run_as_nobody(flood_conns, fk.socket)
        check(held == 128 and refused == 72 and "the most one user may have" in why,
              f"nobody held 128 connections and was refused 72 more with the reason ({held}, {refused}: {why})")

        def take_slots(path):
            socks, ok, refused, why = [], 0, 0, ""
            for i in range(6):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                s.connect(path)
                socks.append(s)
                for j in range(8):
                    t, text = reply_to(s, register(f"hog{i}x{j}".encode(), key=b"opencl:quota"))
                    if t == REGISTER_OK:
                        ok += 1
                    else:
                        refused += 1
                        why = text
            keys_ok, keys_why = 0, ""
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            socks.append(s)
            for k in range(8):
                t, text = reply_to(s, register(b"keys", key=f"opencl:bogus{k}".encode()))
                keys_ok += t == REGISTER_OK
                keys_why = text or keys_why
            return ok, refused, why, keys_ok, keys_why

        ok, refused, why, keys_ok, keys_why = run_as_nobody(take_slots, fk.socket)
        check(ok == 32 and refused == 16 and "at most 32 a user" in why,
              f"nobody took 32 of a device's 64 slots and was refused the rest with the reason ({ok}, {refused}: {why})")
        # nobody had opened opencl:limits, opencl:slowreader and opencl:quota already.
        check(keys_ok == 5 and "may open 8 devices" in keys_why,
              f"nobody opened 8 device keys in all and was refused more with the reason ({keys_ok}: {keys_why})")
    else:
        print("skip: quotas against another user need root")

    # Root is not locked out: while nobody holds 128 connections and tries
    # for every slot of a device and every device key (the slots went to
    # ENOSPC, and bogus keys refused every later device until a restart),
    # root registers on that device and opens a new one.
    def hold_and_wait(path, ready_w, go_r):
        socks = []
        for _ in range(128):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            socks.append(s)
        for i in range(8):  # all 64 slots of the device, if it may
            for j in range(8):
                socks[i].send(register(f"hold{i}x{j}".encode(), key=b"opencl:quota"))
        for k in range(16):  # and every device key fikitd has
            socks[8 + k // 8].send(register(b"more", key=f"opencl:hoard{k}".encode()))
        time.sleep(0.5)
        os.write(ready_w, b"y")
        os.read(go_r, 1)
    if ROOT:
        ready_r, ready_w = os.pipe()
        go_r, go_w = os.pipe()
        holder = attacker(hold_and_wait, fk.socket, ready_w, go_r)
        os.read(ready_r, 1)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(fk.socket)
        t1, _ = reply_to(s, register(b"rootsvc", level=0, key=b"opencl:quota"))
        t2, _ = reply_to(s, register(b"rootsvc", level=0, key=b"opencl:rootonly"))
        st = fk.status()
        s.close()
        os.write(go_w, b"g")
        wait_child(holder)
        check(t1 == REGISTER_OK and t2 == REGISTER_OK and " rootsvc " in st,
              f"root registered on the shared device and opened a new one beside nobody's hoard ({t1}, {t2})")

    # At its descriptor limit fikitd accepts and drops what it cannot hold
    # (a spare descriptor), rather than spin on a listening socket that
    # stays readable (93 % of a CPU before).
    import resource
    time.sleep(0.3)
    old = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (fds_of(pid) + 8, old[1]))

    def flood_open(path, ready_w, go_r):
        socks = []
        for _ in range(40):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(path)
            socks.append(s)
        os.write(ready_w, b"y")
        os.read(go_r, 1)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    flooder = attacker(flood_open, fk.socket, ready_w, go_r)
    os.read(ready_r, 1)
    time.sleep(0.3)

    def cpu_s():
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    c0, t0 = cpu_s(), time.time()
    time.sleep(2.0)
    busy = (cpu_s() - c0) / (time.time() - t0)
    os.write(go_w, b"g")
    wait_child(flooder)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, old)
    time.sleep(0.3)
    check("out of descriptors" in open(fk.log).read(), "fikitd said it ran out of descriptors")
    check(busy < 0.2, f"fikitd used {busy * 100:.0f} % of a CPU at its descriptor limit")
    check(fk.status().startswith("fikitd"), "fikitd answers once descriptors are free again")
