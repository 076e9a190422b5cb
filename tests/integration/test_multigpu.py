"""A node of several GPUs, against the CUDA driver double (tests/fakecuda:
three devices of one model with their own UUIDs, CUDA_VISIBLE_DEVICES as the
driver honours it). fikitd keeps one scheduler per device, keyed by UUID:

- the double numbers devices as the driver does (the list's order, UUIDs and
  their prefixes, an invalid entry ends the list, an empty one shows none);
- a launch held on one device never delays a launch on another, even of the
  same process: a program's device-1 thread makes all its launches, none held,
  while its device-0 thread stays held behind a busy priority-0 task there;
- a program launching on two devices registers once per device, under the
  UUID key of each; `fikit status` and the trace show the devices apart;
- processes that number the devices differently (CUDA_VISIBLE_DEVICES) meet
  on the same scheduler when they use the same GPU;
- the collective rule (docs/DESIGN.md, "Collectives"): a rank's collective
  kernels (named nccl..., or launched from libnccl) are never held behind the
  busy task, while a plain launch of the same device and level stays held.

Under policy = strict (a held launch waits for the busy task to go idle), a
long idle threshold and max_wait_ms = 0 (no bound on a wait), so what is held
stays held until the test ends the busy task, however slow the machine."""
import os
import re
import select
import subprocess
import time
from harness import BUILD, Fikit, check, fail, wait_for

prog = os.path.join(BUILD, "tests", "fakecuda", "multi_dev")
libdir = os.path.join(BUILD, "tests", "fakecuda", "lib")


def devices(status):
    """{index: (key, [rows as dicts by heading])} from `fikit status`."""
    out, cur, head = {}, None, None
    for line in status.splitlines():
        m = re.match(r"^device (\d+): (\S+)", line)
        if m:
            cur = int(m.group(1))
            out[cur] = (m.group(2), [])
            continue
        f = line.split()
        if f[:3] == ["slot", "pid", "task"]:
            head = f
        elif cur is not None and head and len(f) == len(head) and f[0].isdigit():
            out[cur][1].append(dict(zip(head, f)))
    return out


def rows(fk, task):
    """[(device key, row)] of a task's registrations."""
    return [(key, r) for key, rs in devices(fk.status()).values() for r in rs if r["task"] == task]


def read_line(p, pattern, timeout=120):
    """The first line of p's stdout that matches pattern."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        r, _, _ = select.select([p.stdout], [], [], 0.5)
        if r:
            line = p.stdout.readline()
            if not line:
                break
            print(f"  | {line.rstrip()}", flush=True)
            if re.search(pattern, line):
                return line
    fail(f"no line matching {pattern!r} from {p.args}")


with Fikit(policy="strict", extra="idle_after_us = 60000000\nmax_wait_ms = 0",
           tasks=(("svc", 0), ("job", 9), ("a", 5), ("b", 5), ("c", 5), ("d", 5), ("e", 5),
                  ("rank0", 9), ("rank1", 9), ("ncclib", 9))) as fk:
    text = open(fk.config).read().replace("backend = opencl", "backend = cuda")
    open(fk.config, "w").write(text)
    fk.env["LD_LIBRARY_PATH"] = libdir
    fk.env["FAKECUDA_DEVICES"] = "3"
    fk.env.pop("CUDA_VISIBLE_DEVICES", None)

    def env_with(cvd):
        e = dict(fk.env)
        if cvd is not None:
            e["CUDA_VISIBLE_DEVICES"] = cvd
        return e

    def listed(cvd):
        r = subprocess.run([prog, "--list"], stdout=subprocess.PIPE, text=True, env=env_with(cvd), check=True)
        return re.findall(r"^device \d+ (\S+)$", r.stdout, re.M)

    # The double, as the driver numbers devices (no fikit involved).
    u = listed(None)
    check(len(u) == 3 and len(set(u)) == 3, f"three devices with distinct UUIDs: {u}")
    check(listed("2,1") == [u[2], u[1]], "CUDA_VISIBLE_DEVICES=2,1: device 2 becomes 0, device 1 becomes 1")
    check(listed("0,2,-1,1") == [u[0], u[2]], "an invalid entry ends the list: 0,2,-1,1 shows 0 and 2")
    check(listed(u[1][:8]) == [u[1]] and listed(f"{u[2]},0") == [u[2], u[0]],
          f"UUID entries, whole or a unique prefix ({u[1][:8]})")
    check(listed("") == [] and listed("7") == [], "an empty list, or no valid first entry, shows no device")

    fk.start("--trace")

    def popen(task, argv, cvd=None, stdin=None):
        p = subprocess.Popen(fk.cmd(task, argv), stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, errors="replace", env=env_with(cvd))
        fk.children.append(p)
        return p

    # --- A hold on device 0 never delays device 1, even in one process.
    svc = popen("svc", [prog, "-d", "0", "--spin", "600"])
    wait_for("the busy task on device 0", lambda: rows(fk, "svc"))
    job = popen("job", [prog, "--after-line", "0:1", "1:200"], stdin=subprocess.PIPE)
    wait_for("the job's device-0 launch to be held",
             lambda: any(k == "cuda:" + u[0] and r["held"] == "1" for k, r in rows(fk, "job")))
    job.stdin.write("go\n")
    job.stdin.flush()
    line = read_line(job, r"^device 1 ")
    check(f"device 1 {u[1]}: 200 launches, ok" in line,
          f"the job's device-1 thread made its 200 launches on {u[1]}, all correct")
    reg = rows(fk, "job")
    by_key = {k: r for k, r in reg}
    check(len(reg) == 2 and set(by_key) == {"cuda:" + u[0], "cuda:" + u[1]},
          f"the job registered once per device, under each device's UUID: {[k for k, _ in reg]}")
    check(len({r["pid"] for _, r in reg}) == 1, "both registrations are the one process")
    d0, d1 = by_key["cuda:" + u[0]], by_key["cuda:" + u[1]]
    check(d0["held"] == "1" and d0["launches"] == "0",
          "its device-0 launch was still held when the device-1 thread had finished")
    check(d1["launches"] == "200" and d1["holds"] == "0" and d1["paces"] == "0" and d1["fills"] == "0",
          f"none of its 200 device-1 launches was held, paced or made to fill a gap: {d1}")
    st = fk.status()
    devs = devices(st)
    idx = {key: i for i, (key, _) in devs.items()}
    check(re.search(r"^fikitd .*, 2 devices$", st, re.M) is not None and len(idx) == 2,
          f"fikitd schedules two devices: {sorted(idx)}")
    check([r["task"] for r in devs[idx["cuda:" + u[1]]][1]] == ["job"],
          "the busy task is not on device 1's scheduler")
    svc.terminate()
    out, err = job.communicate(timeout=120)
    check(job.returncode == 0 and f"device 0 {u[0]}: 1 launches, ok" in out and "0 failures" in out,
          "once the busy task ended, the device-0 launch went, with the right result")
    svc.communicate(timeout=60)

    ev = fk.trace()["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    check(set(procs) == set(idx.values()), f"the trace has one process per device: {procs}")
    name = {(e["pid"], e["tid"]): e["args"]["name"].split(" ")[0] for e in ev if e.get("name") == "thread_name"}

    def events(cat, task, key):
        return [e for e in ev if e.get("cat") == cat and e.get("pid") == idx[key]
                and name.get((e["pid"], e["tid"])) == task]

    k0, k1 = "cuda:" + u[0], "cuda:" + u[1]
    check(len(events("launch", "job", k1)) == 200 and not events("hold", "job", k1),
          "the trace shows the job's 200 launches on device 1, none held")
    check(len(events("hold", "job", k0)) == 1 and len(events("grant", "job", k0)) == 1
          and len(events("launch", "job", k0)) == 1,
          "and its one launch on device 0, held, then granted")
    check(events("launch", "svc", k0) and not events("launch", "svc", k1),
          "the busy task's launches are on device 0 only")

    # --- Processes that number the devices differently agree on which is which.
    spins = {"a": (None, "1"), "b": ("1,0", "0"), "c": (u[1][:8], "0"), "d": ("2,0,1", "2"), "e": ("1,0", "1")}
    ps = [popen(t, [prog, "-d", d, "--spin", "600"], cvd) for t, (cvd, d) in spins.items()]
    wait_for("the five spinning tasks", lambda: all(rows(fk, t) for t in spins))
    where = {t: [k for k, _ in rows(fk, t)] for t in spins}
    check(all(where[t] == [k1] for t in "abcd"),
          f"physical device 1 as ordinal 1, as 0 of 1,0, by UUID prefix and as 2 of 2,0,1: one scheduler, "
          f"one key: {where}")
    check(where["e"] == [k0], f"ordinal 1 of 1,0 is physical device 0: {where['e']}")
    for p in ps:
        p.terminate()
    for p in ps:
        p.communicate(timeout=60)

    # --- Collectives are never held: ranks of a job on devices 0 and 1 (one
    # process each, as DDP runs them) beside the busy task on device 0.
    fk.tool("trace", "start", "-c", fk.config)
    svc = popen("svc", [prog, "-d", "0", "--spin", "600"])
    wait_for("the busy task on device 0", lambda: rows(fk, "svc"))
    job = popen("job", [prog, "0:1"], cvd="0")
    wait_for("a plain launch of the job to be held on device 0",
             lambda: any(k == k0 and r["held"] == "1" for k, r in rows(fk, "job")))
    ranks = {"rank0 (device 0, kernels named nccl...)": popen("rank0", [prog, "0:50:nccl"], cvd="0"),
             "rank1 (device 1, kernels named nccl...)": popen("rank1", [prog, "0:50:nccl"], cvd="1"),
             "ncclib (device 0, launched from libnccl)": popen("ncclib", [prog, "0:50:lib"], cvd="0")}
    for what, p in ranks.items():
        try:
            out, err = p.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            fail(f"{what} was held behind the busy task: a collective waited")
        check(p.returncode == 0 and "0 failures" in out and "50 launches, ok" in out,
              f"{what}: 50 collective launches ran, correct, while the busy task ran")
    check(svc.poll() is None, "the busy task still ran")
    check(any(k == k0 and r["held"] == "1" for k, r in rows(fk, "job")),
          "and the plain launch of the same level on device 0 was still held")
    svc.terminate()
    out, _ = job.communicate(timeout=120)
    check(job.returncode == 0 and "0 failures" in out, "the plain launch went once the busy task ended")
    svc.communicate(timeout=60)
    ev = fk.trace()["traceEvents"]
    name = {(e["pid"], e["tid"]): e["args"]["name"].split(" ")[0] for e in ev if e.get("name") == "thread_name"}
    for task, key in (("rank0", k0), ("rank1", k1), ("ncclib", k0)):
        check(len(events("launch", task, key)) == 50 and not events("hold", task, key),
              f"{task}: 50 launches on {key}, none held")
    check(len(events("hold", "job", k0)) == 1, "the job's plain launch was the one held")
