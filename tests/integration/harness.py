"""Shared by the integration tests: a private fikitd, fikit-launch, the demo
programs, and checks of a scheduling trace. Everything runs for real: real
processes, a real fikitd, OpenCL on the machine's device (PoCL without a GPU).

The build directory comes from $FIKIT_BUILD (ctest sets it)."""
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

BUILD = os.path.abspath(os.environ.get("FIKIT_BUILD", "build"))
SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIKITD = os.path.join(BUILD, "tools", "fikitd")
LAUNCH = os.path.join(BUILD, "tools", "fikit-launch")
FIKIT = os.path.join(BUILD, "tools", "fikit")
SERVICE = os.path.join(BUILD, "demo", "fikit-demo-service")
BATCH = os.path.join(BUILD, "demo", "fikit-demo-batch")

# A sanitized build (make check-sanitize, make check-tsan): programs that load the
# instrumented libfikit.so get the sanitizer's runtime first, as it requires, and
# fikitd's log is checked for reports when the daemon stops.
SANITIZER_RUNTIME = os.environ.get("FIKIT_SANITIZER_RUNTIME", "")
SANITIZER_REPORT = ("ERROR: AddressSanitizer", "runtime error:", "WARNING: ThreadSanitizer",
                    "ERROR: LeakSanitizer")


# fikitd's wire protocol, for tests that speak it raw (core/proto.h).
HDR = struct.Struct("<IHHII")
# The protocol version this tree speaks, from the header that defines it.
VERSION = int(re.search(r"#define FIKIT_PROTO_VERSION (\d+)",
                        open(os.path.join(SOURCE, "core", "proto.h")).read()).group(1))
MAGIC, REGISTER, REGISTER_OK, END, TRACE_DUMP, TRACE_EVENTS = 0x54494B46, 3, 4, 9, 11, 13
REG = struct.Struct("<64siIII128s128s")
REG_OK = struct.Struct("<IiiIQQQQ")
SLOT, SLOT_FD = 16, 17
SLOT_REQ = struct.Struct("<IIQ")
SLOT_FD_MSG = struct.Struct("<IIIIQQ")
PART_COMMONS, PART_OWN, PART_PEER = 1, 2, 3


def recv_registration(s):
    """After a REGISTER: (message, [header fd, commons fd, own slot fd]) on
    success (REGISTER_OK and its two SLOT_FD), else (message, fds of it)."""
    msg, fds, _, _ = socket.recv_fds(s, 16384, 4)
    if struct.unpack_from("<H", msg, 6)[0] != REGISTER_OK:
        return msg, fds
    for _ in range(2):
        _, more, _, _ = socket.recv_fds(s, 16384, 4)
        fds += more
    return msg, fds


def packet(type_, payload, magic=MAGIC, version=VERSION, length=None):
    return HDR.pack(magic, version, type_, len(payload) if length is None else length, 0) + payload


def register(task, level=9, backend=3, key=b"opencl:hostile", model=b"hostile", flags=0):
    return packet(REGISTER, REG.pack(task, level, flags, backend, 0, key, model))


def reachable_by_others(path):
    """Whether a user other than the owner can reach path: every directory
    above it lets others through (o+x)."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if not os.stat(d).st_mode & 0o001:
            return False
        if d == "/":
            return True
        d = os.path.dirname(d)


def programs_for_others(dest):
    """fikit-launch, libfikit.so and the demo batch program where another
    user can run them: as they are if the build is reachable, else copied
    into dest (a checkout in a 0700 directory is not reachable). Returns
    (launch, batch)."""
    if reachable_by_others(LAUNCH) and reachable_by_others(BATCH):
        return LAUNCH, BATCH
    print(f"the build is not reachable by other users: copying what they run to {dest}", flush=True)
    for rel in (("tools", "fikit-launch"), ("interpose", "libfikit.so"), ("demo", "fikit-demo-batch")):
        os.makedirs(os.path.join(dest, rel[0]), exist_ok=True)
        shutil.copy2(os.path.join(BUILD, *rel), os.path.join(dest, *rel))
    os.chmod(dest, 0o755)
    for sub in ("tools", "interpose", "demo"):
        os.chmod(os.path.join(dest, sub), 0o755)
    return os.path.join(dest, "tools", "fikit-launch"), os.path.join(dest, "demo", "fikit-demo-batch")


# An ordinary local user, for the tests of what one can do to others: as
# root, a forked child that has become nobody (it reaches fikitd's socket
# through socket_group); without root, this user.
ROOT = os.geteuid() == 0


def become_nobody():
    if ROOT:
        import grp
        import pwd
        nobody = pwd.getpwnam("nobody")
        os.setgroups([grp.getgrnam("nogroup").gr_gid])
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)


def attacker(fn, *args):
    """Runs fn(*args) in a child as nobody; returns its pid. The child's exit
    status is fn's SystemExit code (0 if it returns, 1 if it raises), and it
    leaves by os._exit, never through the parent's cleanup."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            become_nobody()
            fn(*args)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
            if not isinstance(e.code, int) and e.code is not None:
                print(e.code, flush=True)
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
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


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def wait_for(what, cond, timeout=120):
    """cond()'s first true value, looked at every 20 ms; fails the test after
    timeout seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.02)
    fail(f"timed out waiting for {what}")


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg}", flush=True)


class Fikit:
    """A fikitd of our own, with its own socket, state and configuration."""

    def __init__(self, policy="fill", extra="", tasks=(("serve", 0), ("batch", 9)), daemon=""):
        self.dir = tempfile.mkdtemp(prefix="fikit-it-")
        self.socket = os.path.join(self.dir, "fikitd.sock")
        self.state = os.path.join(self.dir, "state")
        self.log = os.path.join(self.dir, "fikitd.log")
        self.daemon = None
        self.children = []  # what popen started: killed at cleanup, even after a failure
        self.env = dict(os.environ)
        for k in ("FIKIT_CONFIG", "OPENCL_LAYERS", "LD_PRELOAD", "FIKIT_TASK", "FIKIT_PRIORITY"):
            self.env.pop(k, None)
        if SANITIZER_RUNTIME:
            self.env["LD_PRELOAD"] = SANITIZER_RUNTIME
        self.write_config(policy, extra, tasks, daemon)

    def write_config(self, policy, extra="", tasks=(("serve", 0), ("batch", 9)), daemon=""):
        """extra: lines for [scheduler]; daemon: more lines for [daemon]."""
        self.config = os.path.join(self.dir, "fikit.ini")
        with open(self.config, "w") as f:
            f.write(f"[fikit]\nbackend = opencl\n[scheduler]\npolicy = {policy}\n{extra}\n"
                    f"[daemon]\nsocket = {self.socket}\nstate_dir = {self.state}\n{daemon}\n")
            for name, prio in tasks:
                f.write(f"[task.{name}]\npriority = {prio}\n")

    def start(self, *args):
        logf = open(self.log, "a")
        self.daemon = subprocess.Popen([FIKITD, "-f", "-c", self.config, "-l", "info", *args],
                                       stdout=logf, stderr=logf, env=self.env)
        for _ in range(200):
            if os.path.exists(self.socket):
                return self
            if self.daemon.poll() is not None:
                fail(f"fikitd exited: {open(self.log).read()}")
            time.sleep(0.02)
        fail("fikitd did not create its socket")

    def stop(self, sig=signal.SIGTERM):
        if self.daemon and self.daemon.poll() is None:
            self.daemon.send_signal(sig)
            self.daemon.wait(timeout=20)
        if SANITIZER_RUNTIME and os.path.exists(self.log):
            bad = [l for l in open(self.log, errors="replace") if any(m in l for m in SANITIZER_REPORT)]
            if bad:
                fail(f"fikitd's sanitizer reported: {bad[0].strip()} (see {self.log})")
        return self.daemon.returncode if self.daemon else None

    def cleanup(self):
        for p in self.children:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.stop()
        if os.environ.get("FIKIT_TEST_KEEP"):
            print(f"kept (FIKIT_TEST_KEEP): {self.dir}", flush=True)
            return
        if not (SANITIZER_RUNTIME and os.path.exists(self.log) and
                any(m in open(self.log, errors="replace").read() for m in SANITIZER_REPORT)):
            shutil.rmtree(self.dir, ignore_errors=True)

    def cmd(self, task, argv, measure=False):
        return [LAUNCH, "-c", self.config, "-t", task] + (["--measure"] if measure else []) + ["--"] + argv

    def run(self, task, argv, measure=False, **kw):
        return subprocess.run(self.cmd(task, argv, measure), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, errors="replace", env=self.env, **kw)

    def popen(self, task, argv, measure=False):
        p = subprocess.Popen(self.cmd(task, argv, measure), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, errors="replace", env=self.env)
        self.children.append(p)
        return p

    def run_held(self, busy, busy_task, task, argv, linger=0.2):
        """Runs a program as TASK while BUSY, a running program of the
        higher-priority task BUSY_TASK, keeps its launches held: waits for
        BUSY to register, starts the program, and once one of its launches
        has been held (and LINGER seconds more) ends BUSY with SIGTERM. The
        rest of the program's launches then go freely, so a slow start of
        either cannot miss the window and a long one cannot stall the test.
        Returns (BUSY's stdout, the program's CompletedProcess)."""
        deadline = time.time() + 60
        while f" {busy_task} " not in self.status() and time.time() < deadline:
            time.sleep(0.01)
        check(f" {busy_task} " in self.status(), "the busy higher-priority task registered")
        p = self.popen(task, argv)
        deadline = time.time() + 120
        while p.poll() is None and time.time() < deadline:
            if sum(int(n) for n in status_column(self.status(), task, "holds")) > 0:
                time.sleep(linger)
                break
            time.sleep(0.01)
        busy.terminate()
        busy_out, _ = busy.communicate(timeout=120)
        out, err = p.communicate(timeout=240)
        return busy_out, subprocess.CompletedProcess(p.args, p.returncode, out, err)

    def tool(self, *args):
        return subprocess.run([FIKIT, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, errors="replace", env=self.env)

    def status(self):
        return self.tool("status", "-c", self.config).stdout

    def trace(self):
        out = os.path.join(self.dir, "trace.json")
        r = self.tool("trace", "dump", "-c", self.config, "-o", out)
        if r.returncode != 0:
            fail(f"fikit trace dump: {r.stderr}")
        with open(out) as f:
            return json.load(f)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()


def result(proc_or_out):
    """The JSON line a demo program printed last."""
    out = proc_or_out if isinstance(proc_or_out, str) else proc_or_out.stdout
    return json.loads(out.strip().splitlines()[-1])


def status_column(status, task, name):
    """One column of a task's rows in `fikit status` output, found by its
    heading (so a new column does not shift what a test reads)."""
    lines = status.splitlines()
    heads = [l.split() for l in lines if l.split()[:3] == ["slot", "pid", "task"]]
    if not heads:
        return []
    i = heads[0].index(name)
    return [f[i] for f in (l.split() for l in lines) if len(f) == len(heads[0]) and f[2] == task]


def trace_events_lost(status):
    """Trace events lost on every device, as `fikit status` counts them."""
    return sum(int(n) for n in re.findall(r"\((\d+) events lost\)", status))


def check_traced_launches(fk, traced, want):
    """Every launch is in the trace once. Under a sanitizer fikitd may drain
    a ring later than the writers' bounded wait (10 ms): there a launch may be
    missing, but only as one of the events that `fikit status` counts lost."""
    lost = trace_events_lost(fk.status())
    if SANITIZER_RUNTIME and lost:
        check(want - lost <= traced <= want,
              f"fikit published every launch once: {traced} of {want} in the trace, and {lost} "
              f"trace events counted lost (fikitd drained late under the sanitizer)")
    else:
        check(traced == want, f"fikit published every launch once: {traced} of {want} "
                              f"({lost} trace events counted lost)")


def run_paths(fk, prog, count_env, double):
    """Runs a driver double's paths program (every launch path, each checking
    its result) measured as task "paths": every path right, and every launch
    reached the double once (count_env: where the double writes its count).
    Returns the run and the launches it made."""
    count = os.path.join(fk.dir, "count")
    fk.env[count_env] = count
    r = fk.run("paths", [prog], measure=True)
    print(r.stdout)
    if r.returncode != 0:
        fail(f"{os.path.basename(prog)} failed under fikit: {r.stderr}")
    check(re.search(r"^0 failures$", r.stdout, re.M), "every path computed the right result under fikit")
    want = int(re.search(r"^launches (\d+)", r.stdout, re.M).group(1))
    got = int(open(count).read())
    check(got == want, f"all {want} launches reached the {double}, none lost or repeated ({got})")
    return r, want


def check_held_paths(fk, prog, count_env, double, want):
    """The paths program again as task "low" (priority 9) behind a busy
    priority-0 "spin" (the program with --spin): right results, all its want
    launches reached the double, and they were held, each granted."""
    count = os.path.join(fk.dir, "count")
    fk.tool("trace", "start", "-c", fk.config)
    fk.env[count_env] = os.path.join(fk.dir, "count-spin")
    # The spin runs until the low task has been held (Fikit.run_held). Not
    # until a count of holds: how soon a held launch is granted behind the
    # unmeasured spin varies; under ThreadSanitizer one of hip_paths' waited
    # for the spin to end.
    spin = fk.popen("spin", [prog, "--spin", "300"])
    fk.env[count_env] = count
    _, r = fk.run_held(spin, "spin", "low", [prog])
    if r.returncode != 0:
        print(f"held run: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    check(r.returncode == 0 and re.search(r"^0 failures$", r.stdout, re.M),
          "correct results as a held low-priority task")
    got = int(open(count).read())
    check(got == want, f"all {want} launches of the held task reached the {double} ({got})")
    ev = fk.trace()["traceEvents"]
    # A task is one thread per device in the trace (pid: the device).
    low = {(e["pid"], e["tid"]) for e in ev
           if e.get("name") == "thread_name" and e["args"]["name"].split(" ")[0] == "low"}
    holds = [e for e in ev if e.get("name") == "hold" and (e.get("pid"), e.get("tid")) in low]
    grants = [e for e in ev if e.get("cat") == "grant" and (e.get("pid"), e.get("tid")) in low]
    # Every held launch was granted: the program finished with all its launches
    # run. A hold is the client's event, from its ring, and may be lost (only
    # as fikit status counts); a grant is fikitd's own.
    lost = trace_events_lost(fk.status())
    check(len(holds) > 0 and len(holds) <= len(grants) <= len(holds) + lost,
          f"the low-priority task's launches were held ({len(holds)} in the trace) and granted "
          f"({len(grants)})")


def threads(trace):
    """{tid: task name} of the first device."""
    names = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = e["args"]["name"].split(" ")[0]
    return names


# How long a lower launch's admission may precede its launch record: one
# snapshot read, the decision and the publication, on a loaded 2-core host.
ADMIT_RACE_US = 5.0


def check_no_unfit_start_mid_burst(trace, hp, lp):
    """No low-priority kernel started while the high-priority task was
    mid-burst unless it was admitted by a predicted fit.

    Mid-burst at t: between two launches of the high-priority task whose
    actual gap (from the first one's predicted end to the second launch) was
    shorter than the low-priority kernel's predicted duration. A kernel that
    started there must have been admitted, after the task's launch before
    it, by a gap fill of its own (a 'fill' event) or by fikitd's grant with
    reason 'fit' or 'starved' (a fit against the median room), whose room
    was at least its predicted duration. Returns (checked, mid_burst)
    counts."""
    names = threads(trace)
    tid = {v: k for k, v in names.items()}
    ev = [e for e in trace["traceEvents"] if e.get("ph") != "M"]
    hp_launch = sorted((e for e in ev if e.get("cat") == "launch" and e["tid"] == tid[hp]),
                       key=lambda e: e["ts"])
    lp_launch = sorted((e for e in ev if e.get("cat") == "launch" and e["tid"] == tid[lp]),
                       key=lambda e: e["ts"])
    # Each admission at the moment the launch could go: a grant when fikitd
    # gave it, a fill when the client took the room.
    admissions = sorted([(e["ts"] + e["dur"], e["args"]["reason"], e) for e in ev
                         if e.get("cat") == "grant" and e["tid"] == tid[lp]] +
                        [(e["ts"], "fill", e) for e in ev if e.get("cat") == "fill" and e["tid"] == tid[lp]],
                        key=lambda a: a[0])
    checked = mid = 0
    ai = 0
    last = None  # the latest admission, for the kernel's predicted duration
    prev_lp = float("-inf")
    for L in lp_launch:
        t = L["ts"]
        own = None
        while ai < len(admissions) and admissions[ai][0] <= t + 1:
            last = admissions[ai]
            if admissions[ai][0] > prev_lp:
                own = admissions[ai]
            ai += 1
        prev_lp = t
        # the high-priority launches around t
        prev = next_ = None
        for h in hp_launch:
            if h["ts"] <= t:
                prev = h
            else:
                next_ = h
                break
        if prev is None or next_ is None:
            continue
        if t - prev["ts"] < ADMIT_RACE_US:
            # Recorded within a few microseconds of a high-priority launch: the
            # client decided it from a snapshot taken before that launch was
            # published (the demo's trace of 2026-12-07 21:56: 0.14 us apart,
            # the lower task at rest), which lock-free admission allows and
            # max_queued_us bounds; it says nothing of a fit mid-burst.
            continue
        checked += 1
        busy_end = prev["ts"] + prev["dur"]
        lp_dur = (own or last or (0, "", {}))[2].get("args", {}).get("predicted_us", 0)
        if next_["ts"] - busy_end >= max(lp_dur, 1):
            continue
        mid += 1
        if not own or own[1] not in ("fill", "fit", "starved") or \
                own[2]["args"]["room_us"] < own[2]["args"]["predicted_us"]:
            fail(f"low-priority launch at {t:.0f} us started mid-burst of {hp} "
                 f"(between launches at {prev['ts']:.0f} and {next_['ts']:.0f} us) without a "
                 f"fill or grant that predicted a fit: {own and own[2]}")
    return checked, mid


def run_confined(fk, prog, rounds, count_env, **env):
    """Runs a confined-launch program (tests/fakecuda/confined.c,
    tests/hip/confined_hip.c) as task "job" with env added; returns (the run,
    the kernels its double ran in confined streams, the launches it made)."""
    count = os.path.join(fk.dir, "confined-count")
    if os.path.exists(count):
        os.unlink(count)
    saved = dict(fk.env)
    fk.env.update(env, **{count_env: count})
    try:
        p = fk.run("job", [prog, str(rounds)], timeout=300)
    finally:
        fk.env = saved
    print(p.stdout + p.stderr, flush=True)
    made = int(next(l.split()[1] for l in p.stdout.splitlines() if l.startswith("launches ")))
    with open(count) as f:
        return p, int(f.read()), made
