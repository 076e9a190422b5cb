"""Bad input to fikitd: malformed and out-of-range messages, and a client that
scribbles over its slot of the shared segment. fikitd rejects them, keeps
serving everyone else, and says what it rejected."""
import mmap
import random
import socket
import struct
import time
from harness import BATCH, SERVICE, Fikit, check, fail, result
from harness import (END, HDR, REG, REG_OK, REGISTER, REGISTER_OK, TRACE_DUMP, TRACE_EVENTS, VERSION, packet,
                     recv_registration, register)


with Fikit() as fk:
    fk.start("--trace")
    bad = {
        "shorter than a header": b"\x01\x02",
        "wrong magic": packet(REGISTER, REG.pack(b"x", 1, 0, 3, 0, b"k", b"m"), magic=0xDEADBEEF),
        "other protocol version": packet(REGISTER, REG.pack(b"x", 1, 0, 3, 0, b"k", b"m"), version=VERSION + 1),
        "unknown message type": packet(99, b""),
        "size not the type's": packet(REGISTER, b"\0" * 12),
        "declared length not the packet's": packet(REGISTER, REG.pack(b"x", 1, 0, 3, 0, b"k", b"m"), length=5),
        "priority out of range": register(b"x", level=10),
        "negative priority": register(b"x", level=-3),
        "unknown backend": register(b"x", backend=9),
        "unknown register flags": register(b"x", flags=1 << 7),
        "unterminated task name": register(b"y" * 64),
        "empty device": register(b"x", key=b""),
        "a packet larger than any message": packet(REGISTER, b"\0" * 9000),
        "a daemon's message sent to the daemon": packet(REGISTER_OK, REG_OK.pack(0, 0, 0, 0, 0, 1, 1, 1)),
    }
    for what, data in bad.items():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(fk.socket)
        s.send(data)
        s.settimeout(5)
        try:
            reply = s.recv(16384)
        except (ConnectionResetError, socket.timeout):
            reply = b""
        s.close()
        check(reply == b"" or struct.unpack_from("<H", reply, 6)[0] == 5,
              f"{what}: rejected (connection closed or an error returned)")
    st = fk.status()
    check(st.startswith("fikitd"), "fikitd still answers after every bad message")
    log = open(fk.log).read()
    check("malformed message" in log, "fikitd's log names the malformed messages")

    # A registered client that writes garbage into its own slot, again and again,
    # while real clients of the same device work next to it: a priority-0
    # service and a batch job whose launches it holds, so that fikitd reads
    # every slot (and drains every trace ring) at each decision.
    svc = fk.popen("serve", [SERVICE, "--json", "-n", "30", "-r", "10", "-w", "250", "-k", "3"])
    witness = fk.popen("batch", [BATCH, "--json", "-t", "3", "-w", "500"])
    # The witness's device, once a program has launched on it (PoCL starts
    # slowly under the sanitizers): the hostile client joins the same segment.
    deadline = time.time() + 30
    while "device 0: " not in (st := fk.status()) and time.time() < deadline:
        time.sleep(0.05)
    check("device 0: " in st, "the programs' device appears in fikit status")
    dev_key = st.split("device 0: ")[1].split("\n")[0].encode()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(fk.socket)
    s.send(register(b"hostile", level=9, key=dev_key))
    msg, fds = recv_registration(s)
    check(struct.unpack_from("<H", msg, 6)[0] == REGISTER_OK and len(fds) == 3, "the hostile client registered")
    slot, level, req, dev, gen, size, slot_gen, slot_size = REG_OK.unpack_from(msg, HDR.size)
    # Its own slot is all it can write: the rest of the device's memory is
    # fikitd's (read-only) or other tasks' (not given to it).
    seg = mmap.mmap(fds[2], slot_size)
    rnd = random.Random(7)
    t_end = time.time() + 2.0
    writes = 0
    while time.time() < t_end:
        seg[:slot_size] = rnd.randbytes(slot_size)  # its gen too: it only loses its own reads
        writes += 1
        time.sleep(0.01)
    check(fk.status().startswith("fikitd"), f"fikitd survived {writes} random rewrites of a slot")
    out, err = witness.communicate(timeout=60)
    check(witness.returncode == 0 and result(out)["wrong"] == 0, "the batch job finished correctly meanwhile")
    out, err = svc.communicate(timeout=60)
    check(svc.returncode == 0 and result(out)["wrong"] == 0, "the service finished correctly meanwhile")
    s.close()
    seg.close()
    time.sleep(0.3)
    check(" hostile " not in fk.status(), "the hostile client's slot was freed when it went")
    check("implausible launch record" in open(fk.log).read(), "fikitd logged that it ignored the garbage")

    # A tool that reads slowly: a reply of many messages (a trace dump here)
    # fills the socket buffer (some 45 chunks) and keeps it full to the end,
    # and still arrives whole, END last (fikitd queues what does not fit and
    # makes more of the dump as the reader drains it, never waiting on it).
    r = fk.run("batch", [BATCH, "--json", "-c", "6000", "-w", "1"])
    check(r.returncode == 0, "a batch job of 6000 short kernels ran under the trace")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(fk.socket)
    s.send(packet(TRACE_DUMP, b""))
    s.settimeout(10)
    kinds = []
    try:
        while not kinds or kinds[-1] != END:
            time.sleep(0.005)  # slower than fikitd writes, to the last message
            kinds.append(struct.unpack_from("<H", s.recv(16384), 6)[0])
    except socket.timeout:
        pass
    s.close()
    chunks = kinds.count(TRACE_EVENTS)
    check(chunks > 50 and kinds[-1:] == [END],
          f"a slow reader got the whole trace dump: {len(kinds)} messages, {chunks} of events, END last")
    check(fk.status().startswith("fikitd"), "fikitd answers after the slow reader")
