"""What a program can do to others through fikit's shared segment (issue 27,
item 2). Every task of a device maps the segment read-write; the attacker here
is an ordinary client (as root: a child that has become nobody, reaching the
socket through socket_group) that registers on the device of root's programs
and writes what only fikitd, or only another task, should write.

- The header and the slots' owners: what fikitd alone writes (daemon_state,
  policy, level_mask, trace_on, magic, a slot's level) is put back within
  fikitd's next check, and its log says so. Before, it stayed until fikitd
  restarted: scheduling off for everyone, later clients unscheduled.
- A lower task's own slot: its publication lock left taken, its busy time 50
  minutes ahead, every waiter taken. The task finishes, correct, after one
  line on stderr. Before, it spun in publish for good (or slept in pace, or
  looped for a waiter).
- The header's magic, while a program registers: it is told the segment
  cannot be used, and runs unscheduled. Before, without a word."""
import json
import mmap
import os
import socket
import struct
import subprocess
import time
from harness import (BATCH, BUILD, HDR, REG_OK, REGISTER_OK, ROOT, SERVICE, Fikit, attacker, check, register,
                     result, wait_child)

L = json.loads(subprocess.run([os.path.join(BUILD, "tests", "shm_layout")], stdout=subprocess.PIPE,
                              text=True, check=True).stdout)


def u32(seg, off):
    return struct.unpack_from("<I", seg, off)[0]


def u64(seg, off):
    return struct.unpack_from("<Q", seg, off)[0]


def join_segment(path, key):
    """Registers as a task of its own on device key; returns (socket, segment)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    s.send(register(b"scribbler", level=9, key=key))
    msg, fds, _, _ = socket.recv_fds(s, 16384, 1)
    if struct.unpack_from("<H", msg, 6)[0] != REGISTER_OK or len(fds) != 1:
        raise SystemExit("not registered")
    size = REG_OK.unpack_from(msg, HDR.size)[5]
    return s, mmap.mmap(fds[0], size)


def slot_of(seg, pid):
    for i in range(64):
        base = L["slots"] + i * L["slot.size"]
        if u32(seg, base + L["slot.state"]) == 1 and struct.unpack_from("<i", seg, base + L["slot.pid"])[0] == pid:
            return base
    return None


with Fikit(daemon="socket_group = nogroup\n" if ROOT else "") as fk:
    if ROOT:
        os.chmod(fk.dir, 0o755)
    fk.start()
    # Root's service, busy back to back, and a batch job below it.
    svc = fk.popen("serve", [SERVICE, "--json", "-n", "100000", "-r", "0", "-w", "250", "-k", "3", "-g", "500"])
    deadline = time.time() + 60
    while "device 0: " not in (st := fk.status()) and time.time() < deadline:
        time.sleep(0.05)
    check("device 0: " in st, "the service's device appears in fikit status")
    key = st.split("device 0: ")[1].split("\n")[0].encode()

    # 1. The header and a slot's owner, written over and over for 2 s: put
    # back by fikitd, and the service keeps its registration (daemon_state =
    # STOPPED made it drop it, as if fikitd had gone: unscheduled, and its
    # slot freed).
    def scribble_header(path, key, svc_pid):
        s, seg = join_segment(path, key)
        base = slot_of(seg, svc_pid)
        if base is None:
            raise SystemExit("the service's slot was not found")
        end = time.time() + 2
        while time.time() < end:
            struct.pack_into("<I", seg, L["hdr.daemon_state"], L["stopped"])
            struct.pack_into("<I", seg, L["hdr.policy"], L["passthrough"])
            struct.pack_into("<I", seg, L["hdr.level_mask"], 0)
            struct.pack_into("<I", seg, L["hdr.trace_on"], 1)
            struct.pack_into("<Q", seg, L["hdr.spin_ns"], L["spin_always"])
            struct.pack_into("<Q", seg, L["hdr.magic"], 0)
            struct.pack_into("<i", seg, base + L["slot.level"], 9)
            time.sleep(0.002)
        deadline = time.time() + 10
        while time.time() < deadline:
            back = (u32(seg, L["hdr.daemon_state"]) == L["running"] and u32(seg, L["hdr.policy"]) != L["passthrough"]
                    and u32(seg, L["hdr.level_mask"]) & 1 and u32(seg, L["hdr.trace_on"]) == 0
                    and u64(seg, L["hdr.spin_ns"]) != L["spin_always"] and u64(seg, L["hdr.magic"]) == L["magic"]
                    and struct.unpack_from("<i", seg, base + L["slot.level"])[0] == 0)
            if back:
                raise SystemExit(0)
            time.sleep(0.01)
        raise SystemExit(3)
    t0 = time.time()
    rc = wait_child(attacker(scribble_header, fk.socket, key, svc.pid))
    check(rc == 0, f"daemon_state, policy, level_mask, trace_on, spin_ns, magic and the service's level, "
                   f"written by another program for 2 s, were put back by fikitd, the service in its slot "
                   f"(exit {rc}, {time.time() - t0:.2f} s in all)")
    check("another program wrote it; put back" in open(fk.log).read(), "fikitd's log says what it put back")
    check(f"(pid {svc.pid}) gone" not in open(fk.log).read(), "the service kept its registration")

    # 2. A lower task's own slot, written over and over: it finishes anyway.
    victim = fk.popen("batch", [BATCH, "--json", "-c", "300", "-w", "100"])
    deadline = time.time() + 60
    while f" batch " not in fk.status() and time.time() < deadline and victim.poll() is None:
        time.sleep(0.01)
    check(" batch " in fk.status(), "the batch job registered")

    def scribble_slot(path, key, pid, seconds):
        s, seg = join_segment(path, key)
        base = slot_of(seg, pid)
        if base is None:
            raise SystemExit("the batch job's slot was not found")
        end = time.time() + seconds
        while time.time() < end:
            struct.pack_into("<I", seg, base + L["slot.pub_lock"], 1)
            struct.pack_into("<Q", seg, base + L["slot.pub.busy_until_ns"], time.monotonic_ns() + 50 * 60 * 10**9)
            for w in range(L["waiters"]):
                struct.pack_into("<I", seg, base + L["slot.waiters"] + w * L["waiter.size"] + L["waiter.state"],
                                 L["claimed"])
            time.sleep(0.002)
        raise SystemExit(0)
    writer = attacker(scribble_slot, fk.socket, key, victim.pid, 4.0)
    try:
        out, err = victim.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        victim.kill()
        out, err = victim.communicate()
        check(False, "the batch job whose slot another program wrote finished (it hung)")
    check(wait_child(writer) == 0, "the other program wrote the batch job's slot for 4 s")
    told = [l for l in err.splitlines() if "goes unscheduled rather than wait" in l]
    check(victim.returncode == 0 and result(out)["wrong"] == 0 and result(out)["kernels"] == 300,
          f"the batch job finished its 300 kernels correctly: {err.strip()[-300:]}")
    check(len(told) == 1 and "another program wrote the segment" in told[0],
          f"it said so once on stderr: {told}")
    # 3. The header's magic written over and over while a program registers:
    # the segment it is given is unusable, and it says so (it ran
    # unscheduled without a word). fikitd puts the magic back every 10 ms,
    # so the program may come in between: it runs again, 3 times at most.
    def scribble_magic(path, key, seconds):
        s, seg = join_segment(path, key)
        end = time.time() + seconds
        while time.time() < end:
            for _ in range(1000):
                struct.pack_into("<Q", seg, L["hdr.magic"], 0)
        raise SystemExit(0)
    told = []
    for attempt in range(3):
        writer = attacker(scribble_magic, fk.socket, key, 5.0)
        time.sleep(0.5)
        late = fk.run("batch", [BATCH, "--json", "-c", "5", "-w", "100"])
        check(wait_child(writer) == 0, "the other program wrote the header's magic for 5 s")
        told = [l for l in late.stderr.splitlines() if "shared segment fikitd gave task batch" in l]
        check(late.returncode == 0 and result(late.stdout)["wrong"] == 0, "a program registering meanwhile ran correctly")
        if told:
            break
    check(len(told) == 1 and "runs unscheduled there" in told[0],
          f"it said once that the segment it was given cannot be used: {told}")
    svc.terminate()
    out, _ = svc.communicate(timeout=60)
    check(svc.returncode in (0, -15), "the service ran on")
