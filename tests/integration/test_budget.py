"""A service's latency budget, held by fikitd from the bursts the service
measures itself (docs/DESIGN.md "The budget"), with real OpenCL programs.

The priority-0 service ends each burst with a wait (clFinish after each of
its kernels, a blocking read after the last) and sleeps 1 ms before its next
kernel, more than FIKIT_BURST_JOIN_NS, so its client reports one burst per
kernel; a burst counts from the start of the CPU work before it (1b). Run
alone under fikit (not measuring), it records those bursts in its profile as
what it takes alone; `fikit profile show` lists them. Run again beside a
priority-9 job, it publishes that reference and reports every burst to
fikitd, whose controller then steers the job: `fikit status` shows the
service's budget, step and bursts read, and the job's knobs; the metrics
file has the same. Bursts run beside the job are not what the service takes
alone: its profile's burst counts stay as they were. What the controller
decides from the bursts (cuts, climbs) depends on this machine's speed and
is unit.budget's to test; here the path from the program's waits to the
job's knobs is."""
import re
import time
from harness import BATCH, SERVICE, Fikit, check, result

SVC = [SERVICE, "--json", "-n", "40", "-r", "0", "-k", "4", "-g", "1000", "-w", "100"]
JOB = [BATCH, "--json", "-c", "100000", "-w", "200"]


def burst_rows(fk, task="serve"):
    """{launches: (count, p50_us, p99_us)} of a task's bursts alone, from fikit profile show."""
    shown = fk.tool("profile", "show", "-c", fk.config, task).stdout
    part = shown.split("bursts alone", 1)
    if len(part) < 2:
        return {}
    return {int(a): (int(b), float(c), float(d))
            for a, b, c, d in re.findall(r"^\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+[\d.]+", part[1], re.M)}


def burst_counts(fk):
    """{launches: count} of the service's bursts alone."""
    return {k: v[0] for k, v in burst_rows(fk).items()}


with Fikit() as fk:
    PROM = f"{fk.dir}/metrics.prom"
    fk.write_config("fill", "latency_budget = 1.25", daemon=f"metrics_file = {PROM}\nmetrics_interval_ms = 100",
                    tasks=(("serve", 0), ("batch", 9), ("prep", 0)))
    fk.start()
    cfg = fk.tool("config", "-c", fk.config).stdout
    check(re.search(r"latency_budget\s*=\s*1.25", cfg) is not None, "fikit config shows the budget")

    # 1. Alone: its bursts become its reference.
    r = fk.run("serve", SVC)
    check(r.returncode == 0 and result(r)["wrong"] == 0, "the service ran alone, every output right")
    alone = burst_counts(fk)
    check(alone.get(1, 0) >= 4 * 40 - 1,
          f"its profile holds its bursts alone, one per kernel (clFinish after each): {alone}")

    # 1b. A burst counts from the start of its request's CPU work (what a
    # request takes, which fikit sim models): each request prepares its input
    # for 20 ms of its thread's CPU time before its first kernel, and sleeps
    # 20 ms between its kernels. Of its 4 one-kernel bursts, the first holds
    # the 20 ms of work; the other three, after a sleep, hold no host time.
    prep = [SERVICE, "--json", "-n", "30", "-r", "0", "-k", "4", "-g", "20000", "-w", "100", "--prep-us", "20000"]
    r = fk.run("prep", prep)
    check(r.returncode == 0 and result(r)["wrong"] == 0, "the preparing service ran alone, every output right")
    rows = burst_rows(fk, "prep")
    count, p50, p99 = rows.get(1, (0, 0, 0))
    check(count >= 4 * 30 - 1 and p99 >= 20000 and p50 < 20000,
          f"a request's CPU work before its first launch is in its burst, a sleep as long is not: "
          f"{count} bursts, p50 {p50} us, p99 {p99} us")

    # 2. Beside the job: fikitd judges its bursts and steers the job.
    job = fk.popen("batch", JOB)
    deadline = time.time() + 60
    while " batch " not in fk.status() and time.time() < deadline:
        time.sleep(0.02)
    svc = fk.popen("serve", SVC[:3] + ["400"] + SVC[4:])
    seen_budget = seen_knobs = prom = ""
    bursts = 0
    at_most = []  # (what a burst may take, the load) as fikit status showed them
    while svc.poll() is None:
        st = fk.status()
        m = re.search(r"budget 1\.25x alone \(of requests\): step (\d+), pace [\d.]+x, bursts ([\d.]+)x at most "
                      r"at load ([\d.]+), body [\d.]+x.*?, (\d+) bursts \((\d+) lost\)", st)
        if m:
            seen_budget = m.group(0)
            bursts = max(bursts, int(m.group(4)))
            at_most.append((float(m.group(2)), float(m.group(3))))
        k = re.search(r"a budget above holds it: .*", st)
        if k:
            seen_knobs = k.group(0)
        try:
            with open(PROM) as f:
                text = f.read()
            if 'task="serve"' in text:  # its series end with it
                prom = text
        except FileNotFoundError:
            pass
        time.sleep(0.1)
    out, _ = svc.communicate(timeout=120)
    check(svc.returncode == 0 and result(out)["wrong"] == 0, "the service's outputs were right beside the job")
    check(seen_budget != "", "fikit status showed the service's budget held, with its step and bursts: "
          + (seen_budget or fk.status()))
    check(bursts > 0, f"fikitd read the service's bursts ({bursts})")
    # The budget is on its requests: the busier the service, the less each
    # burst may take (1 + 0.25 (1 - load); both printed rounded).
    check(at_most and all(abs(b - (1 + 0.25 * (1 - u))) < 0.004 and 1.0 <= b <= 1.25 for b, u in at_most),
          f"what a burst may take follows the service's load: {at_most[-3:]}")
    check(seen_knobs != "", f"fikit status showed what the budget lets the job do: {seen_knobs}")
    check(re.search(r'^fikit_task_latency_budget_ratio\{[^}]*task="serve"\} 1\.25', prom, re.M) is not None,
          "the metrics file has the service's budget")
    check(re.search(r'^fikit_task_budget_load_ratio\{[^}]*task="serve"\} [\d.]+', prom, re.M) is not None and
          re.search(r'^fikit_task_budget_bursts_ratio\{[^}]*task="serve"\} 1\.[\d]+', prom, re.M) is not None and
          re.search(r'^fikit_task_budget_body_ratio\{[^}]*task="serve"\} [\d.]+', prom, re.M) is not None,
          "the metrics file has the service's load, what its bursts may take and their body")
    check(re.search(r'^fikit_task_bursts_total\{[^}]*task="serve"\} [1-9]', prom, re.M) is not None,
          "and the bursts fikitd read")
    time.sleep(0.3)  # fikitd notices the service's end
    logged = re.findall(r"task serve \(pid \d+\) left; its latency_budget 1\.25: step \d+.*", open(fk.log).read())
    # (the run alone logs one too, held from its last bursts on: at its exit it
    # saved its profile and published the reference)
    check(len(logged) >= 1 and "0 lost" in logged[-1],
          f"fikitd's log says where the budget stood when the service left, no burst lost: {logged[-1:]}")
    job.kill()
    job.wait()

    # 3. Bursts beside another task are not what it takes alone.
    check(burst_counts(fk) == alone, f"the profile's bursts alone are unchanged by the run beside the job: "
          f"{burst_counts(fk)} against {alone}")

    # 4. Alone again, its reference known from the start: nothing below it
    # has work, so every burst judged is quiet and sets its pace (the job's
    # last work ended long before). Which bursts beside the job were quiet
    # depends on how often this machine let the job in: unit.shm and
    # unit.budget test that side.
    held = r"task serve \(pid \d+\) left; its latency_budget 1\.25: .*"
    before = len(re.findall(held, open(fk.log).read()))
    r = fk.run("serve", SVC[:3] + ["200"] + SVC[4:])
    check(r.returncode == 0 and result(r)["wrong"] == 0, "the service ran alone again, every output right")
    deadline = time.time() + 30  # until fikitd noticed its exit, on a busy machine too
    while len(lines := re.findall(held, open(fk.log).read())) <= before and time.time() < deadline:
        time.sleep(0.05)
    m = re.search(r"step \d+.*?, (\d+) bursts of a size measured alone of .*, pace ([\d.]+)x \((\d+) quiet\)",
                  lines[-1] if len(lines) > before else "")
    check(m is not None and int(m.group(1)) >= 100 and m.group(3) == m.group(1),
          f"alone, every burst judged was quiet (the client asked the levels below at each wait): "
          f"{lines[-1:] if len(lines) > before else 'no line'}")
    check(m is not None and float(m.group(2)) >= 1.0, "and the pace is at least the reference's")
