"""Load: 64 client processes of 8 threads each launch at once through the CUDA
interposer (against the driver double of tests/fakecuda) for a bounded time,
spread over the ten priority levels, so most launches are held and granted.

What must hold: every client computes the right result (each thread's buffer
moved by exactly its launch count) and every launch reached the driver once;
nothing is held when they are gone; fikitd's memory does not grow while it
serves them (each lane of the 64 is three processes in turn, so slots and
registrations churn too). What is reported: launch rates, the arbiter's
latency figures (fikit status) under light load and under this load, the
clients' launch-call times, and fikitd's resident memory over time.

Scale with FIKIT_LOAD_CLIENTS, FIKIT_LOAD_THREADS, FIKIT_LOAD_SECONDS."""
import os
import re
import subprocess
import threading
import time
from harness import BUILD, SANITIZER_RUNTIME, Fikit, check, fail

CLIENTS = max(2, int(os.environ.get("FIKIT_LOAD_CLIENTS", "64")))
THREADS = int(os.environ.get("FIKIT_LOAD_THREADS", "8"))
SECONDS = float(os.environ.get("FIKIT_LOAD_SECONDS", "15"))
LIVES = 3                     # processes per lane, one after another
PAUSE_US = 2000               # between a thread's launches
RSS_SLACK_KIB = 1024          # growth allowed after warm-up (allocator noise)

prog = os.path.join(BUILD, "tests", "fakecuda", "load_client")
libdir = os.path.join(BUILD, "tests", "fakecuda", "lib")
tasks = [(f"c{i:02d}", i % 10) for i in range(CLIENTS)]
LINE = re.compile(r"launches (\d+) failures (\d+) call_p50_us ([\d.]+) call_p99_us ([\d.]+) "
                  r"call_max_us ([\d.]+)")


def rss_kib(pid):
    """fikitd's private resident memory (its heap and stacks). The shared
    segments are left out: their pages are the slots', touched as slots are
    first used, and fixed in size."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return 0


def arbiter(status):
    m = re.search(r"arbiter: pickup p50 ([\d.]+) us, p99 ([\d.]+) us, max ([\d.]+) us \((\d+) "
                  r"launches\); pass p50 ([\d.]+) us, p99 ([\d.]+) us, max ([\d.]+) us", status)
    if not m:
        fail(f"fikit status shows no arbiter figures:\n{status}")
    return [float(x) for x in m.groups()]


def grants(status):
    m = re.search(r"held now (\d+); granted: (\d+) free, (\d+) fit, (\d+) starved, (\d+) pause, "
                  r"(\d+) overdue, (\d+) other", status)
    held, free, fit, starved, pause, overdue, other = (int(x) for x in m.groups())
    return held, free + pause, fit + starved, other + overdue


class Lane(threading.Thread):
    """One of the 64 clients: LIVES processes in turn, each checked."""

    def __init__(self, fk, idx, seconds, threads, lives, measure=False):
        super().__init__()
        self.fk, self.idx, self.seconds, self.threads = fk, idx, seconds, threads
        self.lives, self.measure = lives, measure
        self.launches = 0
        self.calls = []     # (p50, p99, max) per process
        self.errors = []
        self.no_slot = 0

    def run(self):
        try:
            self.lives_in_turn()
        except Exception as e:  # reported by the main thread
            self.errors.append(f"{tasks[self.idx][0]}: {e!r}")

    def lives_in_turn(self):
        name = tasks[self.idx][0]
        for life in range(self.lives):
            env = dict(self.fk.env)
            count = os.path.join(self.fk.dir, f"count-{name}-{life}-{int(self.measure)}")
            env["FAKECUDA_COUNT"] = count
            argv = [prog, "--threads", str(self.threads), "--seconds", str(self.seconds),
                    "--pause-us", str(PAUSE_US)]
            p = subprocess.run(self.fk.cmd(name, argv, self.measure), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, errors="replace", env=env)
            m = LINE.search(p.stdout)
            if p.returncode != 0 or not m:
                # A sanitizer's report starts at its WARNING/ERROR line: keep
                # that part (its first frames say where), not just the tail.
                at = max(p.stderr.find("WARNING: ThreadSanitizer"), p.stderr.find("ERROR: AddressSanitizer"))
                self.errors.append(f"{name} life {life}: exit {p.returncode}: "
                                   + (p.stderr[at:at + 2500] if at >= 0 else p.stderr[-500:]))
                continue
            n = int(m.group(1))
            got = int(open(count).read()) if os.path.exists(count) else -1
            if got != n:
                self.errors.append(f"{name} life {life}: launched {n}, the driver saw {got}")
            self.launches += n
            self.calls.append(tuple(float(x) for x in m.groups()[2:]))
            self.no_slot += "fikitd refused" in p.stderr


def run_lanes(fk, n, seconds, threads, lives, measure=False, sample=None):
    lanes = [Lane(fk, i, seconds, threads, lives, measure) for i in range(n)]
    t0 = time.monotonic()
    for lane in lanes:
        lane.start()
    while any(l.is_alive() for l in lanes):
        if sample:
            sample(time.monotonic() - t0)
        time.sleep(0.25)
    for lane in lanes:
        lane.join()
    wall = time.monotonic() - t0
    errors = [e for l in lanes for e in l.errors]
    if errors:
        fail(f"{len(errors)} client processes failed; first: {errors[0]}")
    return lanes, wall


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else 0.0


rows = []


def row(phase, lanes, wall, status):
    a = arbiter(status)
    held, free, fit, other = grants(status)
    launches = sum(l.launches for l in lanes)
    calls = [c for l in lanes for c in l.calls]
    top = [c for l in lanes if tasks[l.idx][1] == 0 for c in l.calls]
    rows.append((phase, launches, launches / wall, free + fit + other, a[0], a[1], a[2], a[4], a[5],
                 median([c[0] for c in top]), median([c[1] for c in calls])))
    return held


# The driver double switches between tasks for free: a small substrate cost
# lets lower levels fit into the gaps of 8-thread tasks, so the load exercises
# fit grants as well as holds that last until the top level goes idle.
with Fikit(tasks=tasks, extra="substrate_cost_us = 20") as fk:
    text = open(fk.config).read().replace("backend = opencl", "backend = cuda")
    open(fk.config, "w").write(text)
    fk.env["LD_LIBRARY_PATH"] = libdir

    # Profiles first, so held launches have predictions (measure mode, also under load).
    fk.start()
    lanes, wall = run_lanes(fk, CLIENTS, 2, THREADS, 1, measure=True)
    check(True, f"measured {CLIENTS} clients x {THREADS} threads at once: "
                f"{sum(l.launches for l in lanes)} launches in {wall:.1f} s")
    fk.stop()

    # Light load: the first client (level 0) and the last (level 9 with 64
    # clients) alone.
    fk.start()
    light = [Lane(fk, 0, 3, THREADS, 1), Lane(fk, CLIENTS - 1, 3, THREADS, 1)]
    t0 = time.monotonic()
    for l in light:
        l.start()
    for l in light:
        l.join()
    if any(l.errors for l in light):
        fail(f"light-load client failed: {[e for l in light for e in l.errors]}")
    row(f"light (2 x {THREADS})", light, time.monotonic() - t0, fk.status())
    fk.stop()

    # Full load, with the daemon's memory sampled throughout.
    fk.start()
    pid = fk.daemon.pid
    samples = []
    lanes, wall = run_lanes(fk, CLIENTS, SECONDS / LIVES, THREADS, LIVES,
                            sample=lambda t: samples.append((t, rss_kib(pid))))
    st = fk.status()
    held = row(f"load ({CLIENTS} x {THREADS})", lanes, wall, st)
    check(fk.daemon.poll() is None, "fikitd served the whole load and is still running")
    check(held == 0, "nothing is held once every client is gone")
    check(not re.search(r"^\s+\d+\s+\d+\s+c\d\d", st, re.M), "every client's slot was given back")
    no_slot = sum(l.no_slot for l in lanes)
    check(no_slot == 0, f"no client was turned away for want of a slot ({no_slot})")
    procs = CLIENTS * LIVES
    check(True, f"{procs} client processes: every thread's result right and every launch "
                f"reached the driver once ({sum(l.launches for l in lanes)} launches)")
    fk.stop()

    # Memory: after the first third (warm-up: sketches, slots, the allocator's
    # arenas), the daemon's resident set must stay where it was.
    third = [r for t, r in samples if t <= wall / 3]
    rest = [r for t, r in samples if t > wall / 3]
    if not third or not rest:
        fail(f"too few memory samples ({len(samples)})")
    base, peak = max(third), max(rest)
    figures = (f"{base} KiB after warm-up, {peak} KiB at most later, {samples[-1][1]} KiB at "
               f"the end ({len(samples)} samples)")
    if SANITIZER_RUNTIME:  # its runtime keeps a growing history of its own
        print(f"memory not checked under a sanitizer: {figures}")
    else:
        check(peak - base <= RSS_SLACK_KIB, f"fikitd's memory did not grow under load: {figures}")

print()
print(f"{'phase':<16} {'launches':>9} {'per s':>8} {'grants':>8} {'pickup p50':>10} "
      f"{'p99':>8} {'max':>8} {'pass p50':>8} {'p99':>7} {'call p50 (lvl 0)':>16} {'call p99':>9}")
for r in rows:
    print(f"{r[0]:<16} {r[1]:>9} {r[2]:>8.0f} {r[3]:>8} {r[4]:>8.1f}us {r[5]:>6.1f}us "
          f"{r[6]:>6.0f}us {r[7]:>6.1f}us {r[8]:>5.1f}us {r[9]:>14.1f}us {r[10]:>7.1f}us")
print(f"fikitd resident memory: {samples[0][1]} KiB at the start, {base} KiB after warm-up, "
      f"{peak} KiB peak later, {samples[-1][1]} KiB at the end")
