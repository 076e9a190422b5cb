"""bench/evaluate's tables from its rows: a mode run more than once (--repeat)
is pooled into one row with each run's figures kept, a failed run is left out
and counted, a failed mode is a row of its own, and the ratios still come out
when a baseline failed. Rows are built here as the evaluation writes them."""
import importlib.machinery
import importlib.util
import os
import sys

sys.dont_write_bytecode = True
BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)
loader = importlib.machinery.SourceFileLoader("evaluate", os.path.join(BENCH, "evaluate"))
spec = importlib.util.spec_from_loader("evaluate", loader)
evaluate = importlib.util.module_from_spec(spec)
loader.exec_module(evaluate)

failures = 0


def check(cond, msg):
    global failures
    print(("ok: " if cond else "FAIL: ") + msg, flush=True)
    failures += not cond


def hp(lat):
    """The service's result as torch_workloads.py prints it (the fields used)."""
    s = sorted(lat)
    return {"latencies_ms": lat, "p50_ms": s[len(s) // 2], "p99_ms": s[-1], "mean_ms": sum(lat) / len(lat),
            "max_ms": s[-1], "service_each_ms": lat, "idle_before_ms": [0.5] * len(lat)}


# Pooling: two runs of one mode, a failed third; a mode run once is left as it is.
a1, a2 = [float(v) for v in range(1, 101)], [float(v) for v in range(101, 201)]
rows = [{"mode": "hp alone", "hp": hp(a1)},
        {"mode": "fill", "hp": hp(a1), "lp": {"per_second": 10.0}, "fikit": {"grants": 3}},
        {"mode": "fill", "failed": "RuntimeError: the high-priority task did not start"},
        {"mode": "fill", "hp": hp(a2), "lp": {"per_second": 20.0}, "fikit": {"grants": 5}}]
pooled = {r["mode"]: r for r in evaluate.pool(rows)}
f = pooled["fill"]
check(len(pooled) == 2 and pooled["hp alone"] is rows[0], "one row per mode; a mode run once is kept as it was")
check(f["runs"] == 2 and f["failed_runs"] == 1, f"two runs pooled, one failed run counted: {f.get('runs')}, "
      f"{f.get('failed_runs')}")
check(f["hp"]["requests"] == 200 and f["hp"]["latencies_ms"] == a1 + a2,
      "the service's requests of both runs, in run order")
check(f["hp"]["p50_ms"] == 101.0 and f["hp"]["p99_ms"] == 198.0 and f["hp"]["mean_ms"] == 100.5,
      f"quantiles of the pooled requests: p50 {f['hp']['p50_ms']}, p99 {f['hp']['p99_ms']}, "
      f"mean {f['hp']['mean_ms']}")
check(f["hp"]["p99_runs_ms"] == [100.0, 200.0] and f["lp"]["per_second_runs"] == [10.0, 20.0]
      and f["lp"]["per_second"] == 15.0, "each run's p99 and rate kept; the job's rate averaged")
check(f["fikit_runs"] == [{"grants": 3}, {"grants": 5}] and len(f["hp"]["service_each_ms"]) == 200,
      "the trace figures per run; per-request service times pooled")
one = {r["mode"]: r for r in evaluate.pool([{"mode": "x", "failed": "a"}, {"mode": "x", "failed": "b"}])}
check(one["x"] == {"mode": "x", "failed": "a"}, "a mode whose every run failed stays one failed row")

# The tables: a failed mode is a row saying so; with the first alone run of the
# service failed, the ratios are taken against the one that ran.
res = {"load": 0.5, "repeat": 2, "workloads": [{
    "workload": "resnet50", "rate": 90.0, "service_ms_alone": 5.0, "rows": evaluate.pool([
        {"mode": "hp alone", "failed": "RuntimeError: out of memory"},
        {"mode": "lp alone", "lp": {"per_second": 30.0}},
        {"mode": "fill", "hp": hp(a2), "lp": {"per_second": 15.0}, "budget": "its latency_budget 1.10: step 3"},
        {"mode": "beside", "failed": "RuntimeError: the low-priority task did not start: boom"},
        {"mode": "fill", "hp": hp(a2), "lp": {"per_second": 12.0}, "budget": "its latency_budget 1.10: step 1"},
        {"mode": "hp alone, again", "hp": hp(a1)}])}]}
md = evaluate.summarize(res)
print(md)
row = next(l for l in md.splitlines() if l.startswith("| fill |"))
cells = [c.strip() for c in row.strip("|").split("|")]
# Pooled fill: 101..200 twice, p50 151 and p99 199; the alone run: 1..100, p50 51, p99 100.
check(cells[2] == "2.961" and cells[4] == "1.990" and cells[7] == "0.450",
      f"fill against the alone run that ran: p50 x{cells[2]} (151/51), p99 x{cells[4]} (199/100), "
      f"lp x{cells[7]} (the mean of 15 and 12, over 30)")
check(any(l.startswith("| beside | failed: RuntimeError: the low-priority task did not start: boom |")
          and l.count("|") == 11 for l in md.splitlines()), "a failed mode is a row of the table's ten columns")
check("- fill: p99 200.00, 200.00 ms; lp 15.00, 12.00 /s" in md, "each run of a repeated mode is listed")
check("2 of the service, the first pooled with those between the passes of --repeat" not in md
      and "1 of the service, the first pooled" in md, "the note counts the alone runs that ran")
check("- fill: its latency_budget 1.10: step 3" in md and "- fill: its latency_budget 1.10: step 1" in md,
      "the budget's state that fikitd logged is listed for each run of a repeated mode")

# With --repeat and both alone rows there, the reference is every alone run
# pooled: they were interleaved with the modes, and the better single run is a
# pace the modes never had (the H100's service moved from 4.8 to 14.0 ms).
slow, fast = [float(v) for v in range(101, 201)], [float(v) for v in range(1, 101)]
res = {"load": 0.5, "repeat": 2, "workloads": [{
    "workload": "cuda", "rate": 300.0, "service_ms_alone": 1.7, "rows": evaluate.pool([
        {"mode": "hp alone", "hp": hp(slow)},
        {"mode": "lp alone", "lp": {"per_second": 30.0}},
        {"mode": "fill", "hp": hp(slow), "lp": {"per_second": 15.0}},
        {"mode": "hp alone", "hp": hp(slow)},
        {"mode": "fill", "hp": hp(slow), "lp": {"per_second": 15.0}},
        {"mode": "hp alone, again", "hp": hp(fast)}])}]}
md = evaluate.summarize(res)
cells = [c.strip() for c in next(l for l in md.splitlines() if l.startswith("| fill |")).strip("|").split("|")]
q = evaluate.trace_metrics.q
ref, got = q(slow + slow + fast, 0.99), q(slow + slow, 0.99)
check(cells[4] == f"{got / ref:.3f}" == "1.000" and "alone runs pooled (3 runs" in md,
      f"repeated: the p99 ratio is to the three alone runs pooled (x{cells[4]}, {got}/{ref}), not to the "
      f"fastest one (x1.990)")

# A run cut after its first modes (a lent GPU's time limit): the table of
# what ran so far, written after each mode, needs only the service alone.
res = {"load": 0.5, "repeat": 3, "workloads": [{
    "workload": "bert", "rate": 160.0, "service_ms_alone": 3.0, "partial": True, "rows": evaluate.pool([
        {"mode": "lp alone", "lp": {"per_second": 26.0}},
        {"mode": "hp alone", "hp": hp(slow)},
        {"mode": "mps", "hp": hp(slow), "lp": {"per_second": 24.0}}])}]}
md = evaluate.summarize(res)
check(any(l.startswith("| mps |") for l in md.splitlines()), "a partial workload's table has the modes that ran")

sys.exit(1 if failures else 0)
