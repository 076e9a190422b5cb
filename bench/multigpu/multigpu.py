#!/usr/bin/env python3
"""fikit on a node of several GPUs (issue 28), in one call of under 10 minutes.

  cross        a service on GPU 0 at priority 0 (resnet50 batch-1 inference,
               Poisson requests at half its capacity) and a priority-9 training
               job on GPU 1 (resnet50, batch 64): the job's throughput beside the
               service under fikit against the job alone (with and without
               fikit); fikit must not cross devices, so the ratio is 1 within
               noise and the job's launches on GPU 1 are never held, paced or
               made to fill (fikit status, taken while it runs).
  ddp          the same service beside a two-GPU PyTorch DDP job (NCCL
               all-reduce; rank r on GPU r) at priority 9 spanning GPUs 0 and 1:
               the service's p50/p99 and the job's steps per second, each
               alone, on time-slicing (no fikit) and under fikit; per step, how
               much longer rank 1's step (GPU 1, no service there) took than
               alone, against how long some launch of rank 0 was held on GPU 0
               in that step (fikit's trace): rank 1 must not stall for longer
               than GPU 0's holds. Also how many collective (nccl) launches
               were held: none, by the collective rule (docs/DESIGN.md).
  conformance  the CUDA conformance suite (tests/conformance/cuda/run-suite)
               with CUDA_VISIBLE_DEVICES=1.

Writes OUT/multigpu.json (every row and the raw measurements), the trace of the
fikit DDP mode (OUT/ddp-trace.json.xz) and the suite's table
(OUT/conformance-cvd1.md); prints a short table last.

--double: a dry run without a GPU, against the CUDA driver double of
tests/fakecuda (two devices): tests/fakecuda/multi_dev stands in for the
service (a launch every 200 us on device 0), the job (N launches on device 1:
launches per second) and the ranks (collective launches named nccl..., and
plain ones, with CUDA_VISIBLE_DEVICES=r); no latency or step times there. The
conformance suite runs as it does anywhere (it skips every case, saying why,
without a usable GPU).

Usage: multigpu.py --build DIR --out DIR [--seconds S] [--parts cross,ddp,conformance] [--double]"""
import argparse
import json
import lzma
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
TORCH = [sys.executable, os.path.join(SOURCE, "bench", "torch_workloads.py")]
DDP = [sys.executable, os.path.join(HERE, "ddp_train.py")]


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))] if v else None


class Node:
    """A fikitd of its own (cuda backend, fill policy) and the programs of one
    measurement, with their environments."""

    def __init__(self, a):
        self.a = a
        self.build = os.path.abspath(a.build)
        self.dir = tempfile.mkdtemp(prefix="fikit-multigpu-")
        self.cfg = os.path.join(self.dir, "fikit.ini")
        self.sock = os.path.join(self.dir, "fikitd.sock")
        with open(self.cfg, "w") as f:
            f.write(f"[fikit]\nbackend = cuda\n[scheduler]\npolicy = fill\n[daemon]\nsocket = {self.sock}\n"
                    f"state_dir = {self.dir}/state\n[task.svc]\npriority = 0\n[task.job]\npriority = 9\n"
                    f"[task.ddp]\npriority = 9\n")
        self.env = dict(os.environ)
        for k in ("LD_PRELOAD", "FIKIT_CONFIG", "FIKIT_TASK", "FIKIT_PRIORITY", "CUDA_VISIBLE_DEVICES"):
            self.env.pop(k, None)
        if a.double:
            lib = os.path.join(self.build, "tests", "fakecuda", "lib")
            self.env["LD_LIBRARY_PATH"] = lib + (":" + self.env["LD_LIBRARY_PATH"] if self.env.get("LD_LIBRARY_PATH") else "")
            self.env["FAKECUDA_DEVICES"] = "2"
        self.daemon = None
        self.procs = []

    def tool(self, name):
        return os.path.join(self.build, "tools", name)

    def start(self, trace=False):
        self.log = open(os.path.join(self.dir, "fikitd.log"), "a")
        self.daemon = subprocess.Popen([self.tool("fikitd"), "-f", "-c", self.cfg] + (["--trace"] if trace else []),
                                       stdout=self.log, stderr=self.log, env=self.env)
        for _ in range(500):
            if os.path.exists(self.sock):
                return
            time.sleep(0.02)
        raise RuntimeError("fikitd did not start: " + open(os.path.join(self.dir, "fikitd.log")).read())

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.procs = []
        if self.daemon and self.daemon.poll() is None:
            self.daemon.terminate()
            self.daemon.wait(timeout=30)
        self.daemon = None
        if os.path.exists(self.sock):
            os.unlink(self.sock)

    def popen(self, argv, task=None, cvd=None, extra=None):
        env = dict(self.env, **(extra or {}))
        if cvd is not None:
            env["CUDA_VISIBLE_DEVICES"] = cvd
        cmd = ([self.tool("fikit-launch"), "-c", self.cfg, "-t", task, "--"] if task else []) + argv
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, errors="replace", env=env)
        self.procs.append(p)
        return p

    def status(self):
        return subprocess.run([self.tool("fikit"), "status", "-c", self.cfg], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=self.env).stdout

    def trace(self, out):
        subprocess.run([self.tool("fikit"), "trace", "dump", "-c", self.cfg, "-o", out], env=self.env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        with open(out) as f:
            return json.load(f)


def wait_line(procs, word, timeout=180):
    """Waits until every process printed a line that is word."""
    left = set(range(len(procs)))
    deadline = time.time() + timeout
    while left and time.time() < deadline:
        for i in list(left):
            p = procs[i]
            r, _, _ = select.select([p.stdout], [], [], 0.05)
            if r:
                line = p.stdout.readline()
                if not line:
                    raise RuntimeError(f"{p.args} ended before '{word}': {p.stderr.read()[-2000:]}")
                if line.strip() == word:
                    left.discard(i)
    if left:
        raise RuntimeError(f"no '{word}' from {[procs[i].args for i in left]}")


def go(procs):
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()


def last_json(p, timeout=300):
    out, err = p.communicate(timeout=timeout)
    lines = [l for l in out.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"{p.args} exit {p.returncode}: {err[-2000:]}")
    return json.loads(lines[-1])


def devices(status):
    """{key: [row dicts]} from `fikit status`."""
    out, key, head = {}, None, None
    for line in status.splitlines():
        m = re.match(r"^device \d+: (\S+)", line)
        if m:
            key = m.group(1)
            out[key] = []
            continue
        f = line.split()
        if f[:3] == ["slot", "pid", "task"]:
            head = f
        elif key and head and len(f) == len(head) and f[0].isdigit():
            out[key].append(dict(zip(head, f)))
    return out


def rate_in(progress, t0, t1):
    """Steps per second of a train run's progress marks over [t0, t1]."""
    def at(t):
        prev = progress[0]
        for p in progress:
            if p[0] >= t:
                if p[0] == prev[0]:
                    return p[1]
                return prev[1] + (p[1] - prev[1]) * (t - prev[0]) / (p[0] - prev[0])
            prev = p
        return progress[-1][1]
    return (at(t1) - at(t0)) / max(1e-9, t1 - t0)


# ----------------------------------------------------------------- the GPU


def svc_cmd(a, rate):
    return TORCH + ["serve", "--model", "resnet50", "--rate", f"{rate:.3f}", "--seconds", str(a.seconds), "--wait-go"]


def run_pair(svc, job):
    """Takes torch_workloads.py programs (either may be None) through their
    --wait-go handshakes: both loaded, both warmed up, then measured together."""
    ps = [p for p in (svc, job) if p]
    wait_line(ps, "loaded")
    go(ps)
    wait_line(ps, "ready")
    go(ps)


def part_cross(a, node, res):
    log("cross: the service's capacity on GPU 0 (back to back, then Poisson at 0.5 of it)")
    p = node.popen(TORCH + ["serve", "--model", "resnet50", "--rate", "0", "--probe-load", "0.5", "--seconds", "6"], cvd=a.g0)
    rate = last_json(p)["probe_rate"]
    res["service_rate"] = rate
    job = lambda task=None: node.popen(TORCH + ["train", "--seconds", str(a.seconds), "--wait-go"], task=task, cvd=a.g1)
    rows = {}
    for mode, fikit in (("job alone", False), ("job alone under fikit", True)):
        log(f"cross: {mode}")
        if fikit:
            node.start()
        j = job("job" if fikit else None)
        run_pair(None, j)
        r = last_json(j)
        rows[mode] = {"job_per_s": r["per_second"]}
        node.stop()
    log("cross: service on GPU 0 (priority 0) + job on GPU 1 (priority 9), fikit")
    node.start()
    s, j = node.popen(svc_cmd(a, rate), task="svc", cvd=a.g0), job("job")
    run_pair(s, j)
    time.sleep(a.seconds * 0.7)
    st = node.status()
    rs, rj = last_json(s), last_json(j)
    node.stop()
    devs = devices(st)
    where = {t: [k for k, rows_ in devs.items() for r in rows_ if r["task"] == t] for t in ("svc", "job")}
    jrow = [r for rows_ in devs.values() for r in rows_ if r["task"] == "job"]
    rows["service + job, fikit"] = {
        "job_per_s": rate_in(rj["progress"], rs["t0"], rs["t1"]), "svc_p50_ms": rs["p50_ms"], "svc_p99_ms": rs["p99_ms"],
        "job_device": where["job"], "svc_device": where["svc"],
        "job_holds": sum(int(r["holds"]) for r in jrow), "job_fills": sum(int(r["fills"]) for r in jrow),
        "job_paces": sum(int(r["paces"]) for r in jrow), "status": st}
    res["cross"] = rows


def ddp_ranks(node, a, fikit, seconds):
    port = str(29500 + int(time.time()) % 1000)
    return [node.popen(DDP + ["--seconds", str(seconds), "--device", g, "--wait-go"], task="ddp" if fikit else None,
                       extra={"RANK": str(r), "WORLD_SIZE": "2", "MASTER_PORT": port}) for r, g in enumerate((a.g0, a.g1))]


def step_times(r):
    ends = [r["t0"]] + r["step_end"]
    return [(ends[i], ends[i + 1]) for i in range(len(ends) - 1)]


def union_within(intervals, lo, hi):
    """Length of the union of intervals clipped to [lo, hi]."""
    iv = sorted((max(lo, s), min(hi, e)) for s, e in intervals if e > lo and s < hi)
    total, cur_s, cur_e = 0.0, None, None
    for s, e in iv:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def part_ddp(a, node, res):
    rate = res.get("service_rate")
    if not rate:
        log("ddp: the service's capacity on GPU 0")
        p = node.popen(TORCH + ["serve", "--model", "resnet50", "--rate", "0", "--probe-load", "0.5", "--seconds", "6"], cvd=a.g0)
        rate = res["service_rate"] = last_json(p)["probe_rate"]
    rows = {}
    log("ddp: service alone on GPU 0")
    s = node.popen(svc_cmd(a, rate), cvd=a.g0)
    run_pair(s, None)
    alone = last_json(s)
    rows["service alone"] = {"svc_p50_ms": alone["p50_ms"], "svc_p99_ms": alone["p99_ms"]}
    log("ddp: the DDP job alone on GPUs 0 and 1")
    ranks = ddp_ranks(node, a, False, a.seconds)
    wait_line(ranks, "ready")
    go(ranks)
    rr = [last_json(p) for p in ranks]
    base = [statistics.median([e - s for s, e in step_times(r)]) for r in rr]
    rows["ddp alone"] = {"job_per_s": rr[0]["per_second"], "step_ms_median": [b * 1e3 for b in base]}
    for mode, fikit in (("service + ddp, time-slicing", False), ("service + ddp, fikit", True)):
        log(f"ddp: {mode}")
        if fikit:
            node.start(trace=True)
        ranks = ddp_ranks(node, a, fikit, a.seconds + 3)
        s = node.popen(svc_cmd(a, rate), task="svc" if fikit else None, cvd=a.g0)
        wait_line([s], "loaded")
        go([s])
        wait_line(ranks + [s], "ready")
        go(ranks)
        time.sleep(1.0)
        go([s])
        rs = last_json(s)
        rr = [last_json(p) for p in ranks]
        steps = [(lo, hi) for lo, hi in step_times(rr[1]) if lo >= rs["t0"] and hi <= rs["t1"]]
        row = {"svc_p50_ms": rs["p50_ms"], "svc_p99_ms": rs["p99_ms"],
               "job_per_s": sum(1 for t in rr[0]["step_end"] if rs["t0"] <= t <= rs["t1"]) / (rs["t1"] - rs["t0"]),
               "rank1_excess_ms": [max(0.0, (hi - lo - base[1]) * 1e3) for lo, hi in steps]}
        if fikit:
            tr = node.trace(os.path.join(node.dir, "trace.json"))
            st = node.status()
            node.stop()
            with lzma.open(os.path.join(a.out, "ddp-trace.json.xz"), "wt") as f:
                json.dump(tr, f)
            ev = tr["traceEvents"]
            names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
            procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
            devs = devices(st)
            keys = list(devs)
            # Rank 0 is the ddp task on the service's device.
            svc_pid = {e["pid"] for e in ev if e.get("cat") == "launch" and names.get((e["pid"], e["tid"]), "").startswith("svc ")}
            holds = [(e["ts"] / 1e6, (e["ts"] + e["dur"]) / 1e6, e) for e in ev if e.get("cat") == "grant"
                     and e.get("pid") in svc_pid and names.get((e["pid"], e["tid"]), "").startswith("ddp ")]
            other = [e for e in ev if e.get("cat") == "grant" and e.get("pid") not in svc_pid
                     and names.get((e["pid"], e["tid"]), "").startswith("ddp ")]
            row["gpu0_held_ms"] = [union_within([(s_, e_) for s_, e_, _ in holds], lo, hi) * 1e3 for lo, hi in steps]
            row["stall_beyond_holds_ms"] = [max(0.0, x - h) for x, h in zip(row["rank1_excess_ms"], row["gpu0_held_ms"])]
            # A grant names its kernel by key; the launches name the keys.
            nccl = {e["args"]["key"] for e in ev if e.get("cat") == "launch" and "nccl" in e["name"].lower()}
            row["nccl_launches"] = sum(1 for e in ev if e.get("cat") == "launch" and e["args"]["key"] in nccl
                                       and names.get((e["pid"], e["tid"]), "").startswith("ddp "))
            row["nccl_holds"] = sum(1 for e in other + [h[2] for h in holds] if e["args"]["key"] in nccl)
            row["holds_gpu0"] = len(holds)
            row["holds_other_gpu"] = len(other)
            row["devices"] = keys
            row["trace_processes"] = procs
            row["status"] = st
            row["trace_lost"] = sum(int(n) for n in re.findall(r"\((\d+) events lost\)", st))
        rows[mode] = row
    res["ddp"] = rows


def part_conformance(a, node, res):
    log(f"conformance: the CUDA suite with CUDA_VISIBLE_DEVICES={a.g1}")
    md = os.path.join(a.out, "conformance-cvd1.md")
    env = dict(node.env, CUDA_VISIBLE_DEVICES=a.g1)
    p = subprocess.run([sys.executable, os.path.join(SOURCE, "tests", "conformance", "cuda", "run-suite"),
                        "--build", node.build, "--markdown", md], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=env, timeout=max(60, a.deadline - time.time() - 10))
    print(p.stdout[-3000:], flush=True)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    res["conformance"] = {"exit": p.returncode, "summary": lines[-1] if lines else "no output",
                          "rows": [l for l in lines if l.startswith("| ")], "tail": p.stdout[-4000:]}


# -------------------------------------------------------------- the double


def dry_cross(a, node, res):
    prog = os.path.join(node.build, "tests", "fakecuda", "multi_dev")
    n = 400000  # seconds of launches: the process's start is a small part
    rows = {}

    def job(task=None):
        t = time.monotonic()
        p = node.popen([prog, f"0:{n}"], task=task, cvd=a.g1)
        out, err = p.communicate(timeout=120)
        if p.returncode:
            raise RuntimeError(err)
        return n / (time.monotonic() - t)
    log("cross (double): job alone, device 1")
    rows["job alone"] = {"job_per_s": job()}
    node.start()
    log("cross (double): job alone under fikit, device 1")
    rows["job alone under fikit"] = {"job_per_s": job("job")}
    log("cross (double): service on device 0 + job on device 1, fikit")
    s = node.popen([prog, "-d", "0", "--spin", "600"], task="svc", cvd=a.g0)
    while "svc" not in node.status():
        time.sleep(0.05)
    # Its launches, timed to its last one (the line it prints), and fikit
    # status while it is still registered (it waits for a line to end).
    t = time.monotonic()
    p = node.popen([prog, "--after-line", f"0:{n}", "0:1"], task="job", cvd=a.g1)
    p.stdout.readline()
    per_s = n / (time.monotonic() - t)
    st = node.status()
    go([p])
    out, _ = p.communicate(timeout=120)
    s.terminate()
    s.communicate(timeout=30)
    node.stop()
    devs = devices(st)
    jrow = [r for rows_ in devs.values() for r in rows_ if r["task"] == "job"]
    rows["service + job, fikit"] = {
        "job_per_s": per_s, "job_device": [k for k, r_ in devs.items() if any(r["task"] == "job" for r in r_)],
        "svc_device": [k for k, r_ in devs.items() if any(r["task"] == "svc" for r in r_)],
        "job_holds": sum(int(r["holds"]) for r in jrow), "job_fills": sum(int(r["fills"]) for r in jrow),
        "job_paces": sum(int(r["paces"]) for r in jrow), "status": st}
    res["cross"] = rows


def dry_ddp(a, node, res):
    prog = os.path.join(node.build, "tests", "fakecuda", "multi_dev")
    log("ddp (double): service on device 0; ranks on devices 0 and 1 (200 collective and 20 plain launches each)")
    node.start(trace=True)
    s = node.popen([prog, "-d", "0", "--spin", "600"], task="svc", cvd=a.g0)
    while "svc" not in node.status():
        time.sleep(0.05)
    ranks = [node.popen([prog, "0:200:nccl", "0:20"], task="ddp", cvd=g) for g in (a.g0, a.g1)]
    deadline = time.time() + 20
    while time.time() < deadline and any(p.poll() is None for p in ranks):
        time.sleep(0.1)
    st = node.status()
    s.terminate()
    s.communicate(timeout=30)
    for p in ranks:
        p.communicate(timeout=120)
    tr = node.trace(os.path.join(node.dir, "trace.json"))
    node.stop()
    with lzma.open(os.path.join(a.out, "ddp-trace.json.xz"), "wt") as f:
        json.dump(tr, f)
    ev = tr["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    svc_pid = {e["pid"] for e in ev if e.get("cat") == "launch" and names.get((e["pid"], e["tid"]), "").startswith("svc ")}
    grants = [e for e in ev if e.get("cat") == "grant" and names.get((e["pid"], e["tid"]), "").startswith("ddp ")]
    launches = [e for e in ev if e.get("cat") == "launch" and names.get((e["pid"], e["tid"]), "").startswith("ddp ")]
    nccl_keys = {e["args"]["key"] for e in launches if "nccl" in e["name"].lower()}
    res["ddp"] = {"service + ranks, fikit (double)": {
        "holds_gpu0": sum(1 for e in grants if e["pid"] in svc_pid),
        "holds_other_gpu": sum(1 for e in grants if e["pid"] not in svc_pid),
        "nccl_holds": sum(1 for e in grants if e["args"]["key"] in nccl_keys),
        "nccl_launches": sum(1 for e in launches if e["args"]["key"] in nccl_keys),
        "devices": list(devices(st)), "status": st}}


# ------------------------------------------------------------------ table


def fmt(v, f="{:.2f}"):
    return "-" if v is None else f.format(v)


def table(res):
    out = []
    c = res.get("cross")
    if c:
        alone = c["job alone"]["job_per_s"]
        falone = c.get("job alone under fikit", {}).get("job_per_s")
        out.append(f"cross: service on GPU {res['gpus'][0]} (prio 0), job on GPU {res['gpus'][1]} (prio 9)")
        out.append(f"  {'mode':34} {'job/s':>10} {'x alone':>8} {'x fikit alone':>13} {'svc p99 ms':>10} "
                   f"{'job held/filled/paced':>21}")
        for mode, r in c.items():
            hfp = f"{r['job_holds']}/{r['job_fills']}/{r['job_paces']}" if "job_holds" in r else "-"
            out.append(f"  {mode:34} {r['job_per_s']:10.2f} {r['job_per_s'] / alone:8.3f} "
                       f"{fmt(r['job_per_s'] / falone if falone else None, '{:.3f}'):>13} "
                       f"{fmt(r.get('svc_p99_ms')):>10} {hfp:>21}")
            if "job_device" in r:
                out.append(f"    service on {', '.join(r['svc_device'])}; job on {', '.join(r['job_device'])}")
    d = res.get("ddp")
    if d:
        out.append(f"ddp: service on GPU {res['gpus'][0]} (prio 0) beside a DDP job on GPUs {res['gpus'][0]} and "
                   f"{res['gpus'][1]} (prio 9, NCCL)")
        sa, ja = d.get("service alone", {}).get("svc_p99_ms"), d.get("ddp alone", {}).get("job_per_s")
        out.append(f"  {'mode':30} {'svc p99':>8} {'x alone':>8} {'steps/s':>8} {'x alone':>8} "
                   f"{'rank1 excess p99/max ms':>24} {'GPU0 held p99/max ms':>21} {'stall>holds max':>15} {'nccl held':>9}")
        for mode, r in d.items():
            ex, hd, sb = r.get("rank1_excess_ms"), r.get("gpu0_held_ms"), r.get("stall_beyond_holds_ms")
            pm = lambda v: f"{quantile(v, 0.99):.1f}/{max(v):.1f}" if v else "-"
            out.append(f"  {mode:30} {fmt(r.get('svc_p99_ms')):>8} "
                       f"{fmt(r['svc_p99_ms'] / sa if sa and r.get('svc_p99_ms') else None):>8} "
                       f"{fmt(r.get('job_per_s')):>8} {fmt(r['job_per_s'] / ja if ja and r.get('job_per_s') else None):>8} "
                       f"{pm(ex):>24} {pm(hd):>21} {fmt(max(sb) if sb else None, '{:.1f}'):>15} "
                       f"{r.get('nccl_holds', '-')!s:>9}")
            if "holds_gpu0" in r:
                out.append(f"    the job's launches held: {r['holds_gpu0']} on the service's GPU, {r['holds_other_gpu']} on the other; "
                           f"of its {r.get('nccl_launches', '?')} collective launches: {r['nccl_holds']}")
                out.append(f"    devices: {', '.join(r['devices'])}"
                           + (f"; trace events lost: {r['trace_lost']}" if r.get("trace_lost") else ""))
    k = res.get("conformance")
    if k:
        out.append(f"conformance, CUDA_VISIBLE_DEVICES={res['gpus'][1]}: exit {k['exit']}; {k['summary']}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/out"))
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--parts", default="cross,ddp,conformance")
    ap.add_argument("--double", action="store_true")
    ap.add_argument("--gpus", default="0,1", help="the service's GPU and the job's (CUDA indices); the DDP "
                    "ranks run on both, the conformance suite on the second")
    ap.add_argument("--budget", type=float, default=540, help="seconds for everything (the conformance suite gets what is left)")
    a = ap.parse_args()
    a.deadline = time.time() + a.budget
    a.g0, a.g1 = a.gpus.split(",")
    os.makedirs(a.out, exist_ok=True)
    res = {"double": a.double, "seconds": a.seconds, "gpus": [a.g0, a.g1], "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,uuid,driver_version", "--format=csv,noheader"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True) if shutil.which("nvidia-smi") else None
    res["machine"] = smi.stdout.strip() if smi and smi.returncode == 0 else "no nvidia-smi"
    log(f"machine: {res['machine']}")
    node = Node(a)
    parts = a.parts.split(",")
    todo = [("cross", dry_cross if a.double else part_cross), ("ddp", dry_ddp if a.double else part_ddp),
            ("conformance", part_conformance)]
    try:
        for name, fn in todo:
            if name not in parts:
                continue
            try:
                fn(a, node, res)
            except Exception as e:  # one part failing leaves the others' rows
                log(f"{name} failed: {e}")
                res.setdefault("failed", {})[name] = str(e)
            finally:
                node.stop()
    finally:
        node.stop()
        with open(os.path.join(a.out, "multigpu.json"), "w") as f:
            json.dump(res, f, indent=1)
    t = table(res) + "".join(f"\n{name}: FAILED: {why[:300]}" for name, why in res.get("failed", {}).items())
    with open(os.path.join(a.out, "table.txt"), "w") as f:
        f.write(t + "\n")
    print()
    print(t)
    return 1 if res.get("failed") else 0


if __name__ == "__main__":
    sys.exit(main())
