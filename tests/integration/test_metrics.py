#!/usr/bin/env python3
"""fikitd's Prometheus metrics, scraped by the real node-exporter: fikitd
writes its textfile ([daemon] metrics_file), prometheus-node-exporter's
textfile collector serves it over HTTP, and what the scrape says matches
`fikit status`: tasks and their priorities, pids, launches, holds, grants,
fills, the device's grants by kind and its switch cost. The service and the
batch job are stopped (SIGSTOP) before the comparison, so the counters hold
still; the file is rewritten every 200 ms until they agree. The file is
removed when fikitd stops.

Skips (exit 77) with the reason where prometheus-node-exporter is missing."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(__file__))
from harness import BATCH, SERVICE, Fikit, check, fail, status_column  # noqa: E402

EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')


def parse(text):
    """{(name, frozenset(labels)): value} of a text-format scrape."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        mt = SAMPLE.match(line)
        if not mt:
            fail(f"not a sample line: {line!r}")
        labels = frozenset(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', mt.group(3) or ""))
        out[(mt.group(1), labels)] = float(mt.group(4))
    return out


def value(samples, name, **labels):
    want = {(k, str(v)) for k, v in labels.items()}
    got = [v for (n, ls), v in samples.items() if n == name and want <= ls]
    return got[0] if len(got) == 1 else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


def compare(fk, port):
    """Differences between `fikit status` and the scrape (empty: none)."""
    st = fk.status()
    samples = parse(scrape(port))
    diffs = []
    if value(samples, "node_textfile_scrape_error") != 0:
        diffs.append("node-exporter could not read the file")
    dev = re.search(r"model .*; substrate cost (\d+) us", st)
    cost = value(samples, "fikit_device_substrate_cost_seconds", device=0)
    if not dev or cost is None or round(cost * 1e6) != int(dev.group(1)):
        diffs.append(f"substrate cost: status {dev and dev.group(1)} us, metrics {cost}")
    g = re.search(r"granted: (\d+) free, (\d+) fit, (\d+) starved, (\d+) pause, (\d+) overdue", st)
    for i, kind in enumerate(("free", "fit", "starved", "pause", "overdue")):
        mv = value(samples, "fikit_device_grants_total", device=0, kind=kind)
        if not g or mv is None or int(mv) != int(g.group(i + 1)):
            diffs.append(f"grants {kind}: status {g and g.group(i + 1)}, metrics {mv}")
    ntasks = value(samples, "fikit_device_tasks", device=0)
    if ntasks != 2:
        diffs.append(f"fikit_device_tasks {ntasks}, want 2")
    for task in ("serve", "batch"):
        pid = status_column(st, task, "pid")
        if len(pid) != 1:
            diffs.append(f"{task}: {len(pid)} rows in status")
            continue
        for col, metric in (("priority", "fikit_task_priority"), ("launches", "fikit_task_launches_total"),
                            ("holds", "fikit_task_holds_total"), ("grants", "fikit_task_grants_total"),
                            ("fills", "fikit_task_fills_total"), ("paces", "fikit_task_paces_total")):
            sv = status_column(st, task, col)[0]
            mv = value(samples, metric, task=task, pid=pid[0])
            if mv is None or str(int(mv)) != sv:
                diffs.append(f"{task} {col}: status {sv}, metrics {mv}")
    return diffs, st, samples


def main():
    if not EXPORTER:
        print("skip: prometheus-node-exporter is not installed (scripts/install-deps installs it)",
              flush=True)
        sys.exit(77)
    with Fikit() as fk:
        tdir = os.path.join(fk.dir, "textfile")
        os.makedirs(tdir)
        prom = os.path.join(tdir, "fikit.prom")
        fk.write_config("fill", daemon=f"metrics_file = {prom}\nmetrics_interval_ms = 200\n")
        fk.start()
        deadline = time.time() + 10
        while not os.path.exists(prom) and time.time() < deadline:
            time.sleep(0.02)
        check(os.path.exists(prom), "fikitd wrote its metrics file at start")
        port = free_port()
        log = open(os.path.join(fk.dir, "node-exporter.log"), "w")
        exp = subprocess.Popen([EXPORTER, f"--web.listen-address=127.0.0.1:{port}",
                                "--collector.disable-defaults", "--collector.textfile",
                                f"--collector.textfile.directory={tdir}"], stdout=log, stderr=log)
        fk.children.append(exp)
        text = ""
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                text = scrape(port)
                break
            except OSError:
                if exp.poll() is not None:
                    fail(f"node-exporter exited: {open(log.name).read()}")
                time.sleep(0.1)
        check("fikit_devices 0" in text and 'fikit_daemon_info{config="' in text,
              "node-exporter serves fikitd's metrics before any device is open")

        # The batch job first (registered: fikitd counts the launches of a
        # level only while a higher one is there), then the service.
        batch = fk.popen("batch", [BATCH, "--json", "-t", "60", "-w", "1500"])
        svc = None

        def launched(task, n):
            deadline = time.time() + 120
            while time.time() < deadline:
                got = [int(x) for x in status_column(fk.status(), task, "launches")]
                if got and got[0] >= n:
                    return got[0]
                if batch.poll() is not None or (svc and svc.poll() is not None):
                    fail(f"a program ended early: {batch.poll()} {svc and svc.poll()}")
                time.sleep(0.05)
            fail(f"{task} did not launch {n} kernels")
        check(launched("batch", 0) >= 0, "the batch job registered")
        svc = fk.popen("serve", [SERVICE, "--json", "-n", "100000", "-r", "0", "-k", "2", "-g", "3000",
                                 "-w", "500"])
        check(launched("serve", 5) >= 5, "the service launched kernels")
        for p in (svc, batch):
            os.kill(p.pid, signal.SIGSTOP)
        diffs = ["not compared"]
        deadline = time.time() + 30
        while diffs and time.time() < deadline:
            time.sleep(0.5)
            diffs, st, samples = compare(fk, port)
        check(not diffs, "the scrape agrees with fikit status on the switch cost, the grants by kind, "
                         "the tasks, and each task's priority, launches, holds, grants, fills and paces"
              + (f": {diffs}\n{st}" if diffs else ""))
        served = value(samples, "fikit_task_launches_total", task="serve")
        check(served is not None and served >= 5, f"fikit_task_launches_total of serve: {served}")
        buckets = sorted((float(dict(ls)["le"]), v) for (n, ls), v in samples.items()
                         if n == "fikit_decision_pass_seconds_bucket")
        check(len(buckets) > 2 and all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])),
              f"the histogram's buckets never decrease ({len(buckets)} buckets)")
        check(value(samples, "fikit_task_priority", task="serve") == 0 and
              value(samples, "fikit_task_priority", task="batch") == 9,
              "fikit_task_priority: serve 0, batch 9")
        count = value(samples, "fikit_decision_pass_seconds_count", device=0)
        inf = value(samples, "fikit_decision_pass_seconds_bucket", device=0, le="+Inf")
        st_passes = re.search(r"pass p50 .*\((\d+) passes\)", st)
        check(count is not None and count == inf and count > 0,
              f"the decision latency is a histogram: {count} passes, the +Inf bucket holds them all "
              f"(status: {st_passes.group(0) if st_passes else st})")
        for p in (svc, batch):
            os.kill(p.pid, signal.SIGCONT)
            p.terminate()
        fk.stop()
        check(not os.path.exists(prom), "the metrics file is gone once fikitd stopped")
        exp.terminate()
        exp.wait(timeout=20)


if __name__ == "__main__":
    main()
