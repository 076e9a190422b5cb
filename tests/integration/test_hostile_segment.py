"""What a program can do to others through fikit's shared memory (issue 27,
item 2). The attacker is an ordinary client (as root: a child that has become
nobody, reaching the socket through socket_group) registered on the device of
root's service and batch job. fikitd's header comes to it read-only, sealed
against writes; another task's slot only read-only, asked for with SLOT; its
own slot and the commons (bell, fill word) are all it can write. Each attack
tries to write what only fikitd, or only another task, writes, and must fail
with the kernel's refusal. On the tree before the split every one of them
succeeded: the segment was one memfd, mode 0777, mapped read-write.

With root, the attacker is another user and every attack runs; without it,
it is fikitd's own user, who may reopen what it owns: those attacks are
skipped and said so."""
import ctypes
import errno
import json
import mmap
import os
import socket
import struct
import subprocess
import time
from harness import (BATCH, BUILD, HDR, PART_PEER, REG_OK, REGISTER_OK, ROOT, SERVICE, SLOT, SLOT_FD, SLOT_FD_MSG,
                     SLOT_REQ, Fikit, attacker, check, packet, recv_registration, register, result, wait_child)

L = json.loads(subprocess.run([os.path.join(BUILD, "tests", "shm_layout")], stdout=subprocess.PIPE,
                              text=True, check=True).stdout)

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
PROT_READ, PROT_WRITE, MAP_SHARED, MAP_FAILED = 1, 2, 1, ctypes.c_void_p(-1).value


def tries(fd, size):
    """Every way to write through fd: a writable shared mapping, a read-only
    one made writable, write(2), a read-write reopen through /proc. Returns
    {attack: result}, each result an errno name, or "WROTE"."""
    out = {}
    p = libc.mmap(None, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
    out["mmap(PROT_WRITE, MAP_SHARED)"] = "WROTE" if p != MAP_FAILED else errno.errorcode[ctypes.get_errno()]
    p = libc.mmap(None, size, PROT_READ, MAP_SHARED, fd, 0)
    if p == MAP_FAILED:
        out["mmap(PROT_READ)"] = errno.errorcode[ctypes.get_errno()]
    else:
        rc = libc.mprotect(p, size, PROT_READ | PROT_WRITE)
        out["mprotect(PROT_WRITE)"] = "WROTE" if rc == 0 else errno.errorcode[ctypes.get_errno()]
    try:
        os.pwrite(fd, b"\0" * 8, 0)
        out["pwrite"] = "WROTE"
    except OSError as e:
        out["pwrite"] = errno.errorcode[e.errno]
    if ROOT:
        try:
            os.close(os.open(f"/proc/self/fd/{fd}", os.O_RDWR))
            out["open(/proc/self/fd/N, O_RDWR)"] = "WROTE"
        except OSError as e:
            out["open(/proc/self/fd/N, O_RDWR)"] = errno.errorcode[e.errno]
    return out


def join(path, key):
    """Registers as a task of its own on device key: (socket, fds, REGISTER_OK)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.send(register(b"scribbler", level=9, key=key))
    msg, fds = recv_registration(s)
    if struct.unpack_from("<H", msg, 6)[0] != REGISTER_OK or len(fds) != 3:
        raise SystemExit("not registered")
    return s, fds, REG_OK.unpack_from(msg, HDR.size)


def owner_of(hdr, pid):
    """(slot, gen) of the task of pid, from fikitd's header."""
    for i in range(64):
        base = L["hdr.owner"] + i * L["owner.size"]
        if (struct.unpack_from("<I", hdr, base + L["owner.state"])[0] == 1
                and struct.unpack_from("<i", hdr, base + L["owner.pid"])[0] == pid):
            return i, struct.unpack_from("<Q", hdr, base + L["owner.gen"])[0]
    return None, None


def attack(path, key, svc_pid, batch_pid, report):
    s, fds, ok = join(path, key)
    dev = ok[3]
    res = {"header": tries(fds[0], L["hdr.size"])}
    hdr = mmap.mmap(fds[0], L["hdr.size"], prot=mmap.PROT_READ)
    for name, pid in (("service", svc_pid), ("batch", batch_pid)):
        slot, gen = owner_of(hdr, pid)
        if slot is None:
            raise SystemExit(f"the {name}'s slot was not found in the header")
        s.send(packet(SLOT, SLOT_REQ.pack(dev, slot, gen)))
        msg, got, _, _ = socket.recv_fds(s, 16384, 4)
        t = struct.unpack_from("<H", msg, 6)[0]
        part = SLOT_FD_MSG.unpack_from(msg, HDR.size)[2] if t == SLOT_FD else None
        if t != SLOT_FD or part != PART_PEER or len(got) != 1:
            raise SystemExit(f"no read-only fd of the {name}'s slot (message {t})")
        res[name + " slot"] = tries(got[0], L["slot.size"])
        # What it may do: read the publication (its admission does).
        ro = mmap.mmap(got[0], L["slot.size"], prot=mmap.PROT_READ)
        res[name + " slot"]["read"] = "read" if len(ro[:64]) == 64 else "short"
    # A slot of a generation that is not its owner's now is refused.
    s.send(packet(SLOT, SLOT_REQ.pack(dev, owner_of(hdr, svc_pid)[0], 999999)))
    msg, got, _, _ = socket.recv_fds(s, 16384, 4)
    res["stale slot"] = {"SLOT of another generation": "refused" if struct.unpack_from("<H", msg, 6)[0] != SLOT_FD
                         and not got else "GIVEN"}
    with open(report, "w") as f:
        json.dump(res, f)
    # Stay registered a while: the programs run on beside it.
    time.sleep(1.0)


with Fikit(daemon="socket_group = nogroup\n" if ROOT else "") as fk:
    if ROOT:
        os.chmod(fk.dir, 0o755)
    fk.start()
    svc = fk.popen("serve", [SERVICE, "--json", "-n", "100000", "-r", "0", "-w", "250", "-k", "3", "-g", "500"])
    deadline = time.time() + 60
    while "device 0: " not in (st := fk.status()) and time.time() < deadline:
        time.sleep(0.05)
    check("device 0: " in st, "the service's device appears in fikit status")
    key = st.split("device 0: ")[1].split("\n")[0].encode()
    victim = fk.popen("batch", [BATCH, "--json", "-c", "30", "-w", "100"])
    deadline = time.time() + 60
    while " batch " not in fk.status() and time.time() < deadline and victim.poll() is None:
        time.sleep(0.01)
    check(" batch " in fk.status(), "the batch job registered")

    report = os.path.join(fk.dir, "attacks.json")
    if ROOT:
        os.chmod(fk.dir, 0o777)
    rc = wait_child(attacker(attack, fk.socket, key, svc.pid, victim.pid, report))
    check(rc == 0, f"the attacker registered and got read-only fds of both slots (exit {rc})")
    res = json.load(open(report))
    for what, attacks in res.items():
        for how, got in attacks.items():
            print(f"  {what}: {how}: {got}")
    wrote = [f"{w}: {h}" for w, a in res.items() for h, g in a.items() if g in ("WROTE", "GIVEN")]
    check(not wrote, f"no attack wrote fikitd's header or another task's slot: {wrote}")
    check(res["header"]["mmap(PROT_WRITE, MAP_SHARED)"] in ("EACCES", "EPERM"),
          "a writable mapping of fikitd's header is refused")
    check(res["header"]["mprotect(PROT_WRITE)"] == "EACCES", "a read-only mapping of it cannot be made writable")
    for name in ("service", "batch"):
        check(res[f"{name} slot"]["mmap(PROT_WRITE, MAP_SHARED)"] == "EACCES"
              and res[f"{name} slot"]["mprotect(PROT_WRITE)"] == "EACCES"
              and res[f"{name} slot"]["read"] == "read",
              f"the {name}'s slot is readable and not writable")
    if ROOT:
        check(res["header"]["open(/proc/self/fd/N, O_RDWR)"] == "EACCES"
              and res["service slot"]["open(/proc/self/fd/N, O_RDWR)"] == "EACCES",
              "nor reopened read-write through /proc")
    else:
        print("skip: reopening read-write as another user needs root (fikitd's own user may)")
    check(res["stale slot"]["SLOT of another generation"] == "refused", "a slot of another generation is refused")

    out, err = victim.communicate(timeout=120)
    check(victim.returncode == 0 and result(out)["wrong"] == 0 and result(out)["kernels"] == 30,
          f"the batch job finished its 30 kernels correctly: {err.strip()[-300:]}")
    check("unscheduled" not in err, f"and never went unscheduled: {err.strip()[-300:]}")
    check(f"(pid {svc.pid}) gone" not in open(fk.log).read(), "the service kept its registration")
    svc.terminate()
    out, _ = svc.communicate(timeout=60)
    check(svc.returncode in (0, -15), "the service ran on")
