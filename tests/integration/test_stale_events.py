"""An event of a closed connection never acts on the next one of the same id.

fikitd handles a batch of epoll events at a time. Here one batch holds, in
order: a registered client's exit (its pidfd), which closes its connection;
a new connection, which the accept gives the freed id; and the old socket's
hang-up, which comes only then because a child of the client kept the socket
open. fikitd is stopped (SIGSTOP) while the three happen, so they meet in one
batch. The new client must stay registered: the stale hang-up is not its own."""
import os
import signal
import socket
import struct
import time
from harness import REGISTER_OK, Fikit, check, register

KEY = b"opencl:stale-events"


def registered(sock):
    msg = sock.recv(16384)
    return len(msg) >= 8 and struct.unpack_from("<H", msg, 6)[0] == REGISTER_OK


with Fikit(tasks=(("old", 9), ("new", 9))) as fk:
    fk.start()
    go_r, go_w = os.pipe()        # to the client: exit now
    done_r, done_w = os.pipe()    # to its child: close the socket now
    ready_r, ready_w = os.pipe()  # from the client: registered
    client = os.fork()
    if client == 0:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(fk.socket)
        s.send(register(b"old", key=KEY))
        os.write(ready_w, b"1" if registered(s) else b"0")
        os.read(go_r, 1)
        if os.fork() == 0:  # the child keeps the socket open past its parent's exit
            os.read(done_r, 1)
            os._exit(0)
        os._exit(0)
    check(os.read(ready_r, 1) == b"1", "the first client registered")
    check(" old " in fk.status(), "fikit status lists it")

    fk.daemon.send_signal(signal.SIGSTOP)
    try:
        os.write(go_w, b"1")
        os.waitpid(client, 0)  # exited: its pidfd is ready
        new = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        new.connect(fk.socket)  # the listening socket is ready
        new.send(register(b"new", key=KEY))
        os.write(done_w, b"1")  # the child exits: the old socket hangs up
        time.sleep(0.3)
    finally:
        fk.daemon.send_signal(signal.SIGCONT)
    new.settimeout(10)
    check(registered(new), "the new client registered")
    time.sleep(0.3)
    st = fk.status()
    check(" new " in st and " old " not in st,
          f"the old client is gone and the new one still registered:\n{st}")
    log = open(fk.log).read()
    check("gone: disconnected" not in log.split("task new")[-1],
          "fikitd did not close the new connection for the old one's hang-up")
    new.close()
