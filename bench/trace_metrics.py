#!/usr/bin/env python3
"""Scheduling figures from a fikit trace (the JSON that `fikit trace dump` writes).

  grants            held launches of the low-priority task that fikitd granted,
                    and how many of them were fitted into a gap (reason "fit", or
                    "starved": fitted at the median after waiting starve_after_us)
  fills             its launches that filled a gap by themselves, without fikitd
  paces             its launches that waited for their queue to drain (max_queued_us);
                    guard waits: a beside task's waits while the level above ran
                    slower than beside_max_slowdown
                    beside an idle high-priority task, and how long in all
  grant latency     from fikitd's grant to the held launch going to the device,
                    p50 and p99 in microseconds: the release path (wake-up or
                    spin, then the launch); and the same apart for the grants
                    that found the held thread spinning and those that had to
                    wake it (trace "woken"), which tells what the p99 is made of;
                    and how long the granted launches were held (p50, p90)
  gap prediction    for the high-priority task's gaps with a prediction: how
                    often the gap seen was shorter than its predicted p10, and
                    the median relative error of the predicted p50
  bursts            the high-priority task's launches split into bursts (its
                    requests, as the device saw them) wherever it launched
                    nothing for --burst-gap-us (default 1000): how many; its
                    own pace inside them (launch to launch, p50 and p90: the
                    CPU side of a request, which no scheduler changes); how
                    many bursts began with lower work predicted in flight, and
                    how much of it (p50, p90: what a request waited for at its
                    start, at most about max_queued_us plus one kernel); and
                    how many lower launches went inside bursts rather than
                    between them (on time-slicing each costs a switch back)

Used by bench/evaluate and demo/run-demo; also runs by itself:

  bench/trace_metrics.py [--hp TASK] [--lp TASK] [--burst-gap-us US] TRACE.json
"""
import argparse
import bisect
import json
import sys

BURST_GAP_US = 1000.0  # between a batch-1 PyTorch service's requests; inside, its launches are ~25 us apart


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))] if v else float("nan")


def bursts(hp_launches, lp_launches, gap_us=BURST_GAP_US):
    """The burst figures (see above) from both tasks' launches, each a sorted
    list of (start us, predicted end of the task's queued work us)."""
    if not hp_launches:
        return {}
    # Only the stretch both tasks' events cover (the trace ring keeps the newest).
    t0 = lp_launches[0][0] if lp_launches else hp_launches[0][0]
    hp_launches = [x for x in hp_launches if x[0] >= t0] or hp_launches
    groups, cur = [], [hp_launches[0]]
    for x in hp_launches[1:]:
        if x[0] - cur[-1][0] > gap_us:
            groups.append(cur)
            cur = []
        cur.append(x)
    groups.append(cur)
    pace = [g[i + 1][0] - g[i][0] for g in groups for i in range(len(g) - 1)]
    starts = [t for t, _ in lp_launches]
    ends, m = [], 0.0
    for t, end in lp_launches:  # the latest predicted end of lower work so far
        m = max(m, end)
        ends.append(m)
    inside, ahead = 0, []
    for g in groups:
        i = bisect.bisect_left(starts, g[0][0])
        inside += bisect.bisect_right(starts, g[-1][0]) - i
        if i > 0 and ends[i - 1] > g[0][0]:
            ahead.append(ends[i - 1] - g[0][0])
    out = {"bursts": len(groups), "burst_gap_us": gap_us, "hp_launches": len(hp_launches),
           "lp_launches": len(lp_launches),
           "lp_in_bursts": inside, "bursts_lp_ahead": len(ahead) / len(groups)}
    if pace:
        out.update(hp_pace_p50_us=q(pace, 0.5), hp_pace_p90_us=q(pace, 0.9))
    if ahead:
        out.update(lp_ahead_p50_us=q(ahead, 0.5), lp_ahead_p90_us=q(ahead, 0.9))
    return out


def metrics(events, hp, lp, burst_gap_us=BURST_GAP_US):
    """The figures of task lp's grants and task hp's gaps and bursts, as a dict."""
    names = {e["tid"]: e["args"]["name"].split(" ")[0] for e in events if e.get("name") == "thread_name"}
    tid = {v: k for k, v in names.items()}
    out = {}
    if lp in tid:
        mine = [e for e in events if e.get("tid") == tid[lp]]
        grants = sorted((e["ts"] + e["dur"], bool(e["args"].get("woken")))
                        for e in mine if e.get("cat") == "grant")
        launches = sorted(e["ts"] for e in mine if e.get("cat") == "launch")
        # Each grant's launch is the first launch of the task at or after it.
        lat, by_wait, j = [], {False: [], True: []}, 0
        for g, woken in grants:
            while j < len(launches) and launches[j] < g - 0.5:
                j += 1
            if j < len(launches):
                lat.append(launches[j] - g)
                by_wait[woken].append(launches[j] - g)
        held = [e["dur"] for e in mine if e.get("cat") == "grant"]
        if held:
            out.update(held_p50_us=q(held, 0.5), held_p90_us=q(held, 0.9))
        for woken, name in ((False, "spinning"), (True, "woken")):
            if by_wait[woken]:
                out.update({f"grants_{name}": len(by_wait[woken]),
                            f"grant_latency_{name}_p50_us": q(by_wait[woken], 0.5),
                            f"grant_latency_{name}_p99_us": q(by_wait[woken], 0.99)})
        reasons = [e["args"]["reason"] for e in mine if e.get("cat") == "grant"]
        paces = [e["dur"] for e in mine if e.get("cat") == "pace" and not e["args"].get("guard")]
        guard = [e["dur"] for e in mine if e.get("cat") == "pace" and e["args"].get("guard")]
        if guard:
            out.update(guard_waits=len(guard), guard_waited_ms=sum(guard) / 1e3)
        out.update(grants=len(grants), grant_latency_p50_us=q(lat, 0.5), grant_latency_p99_us=q(lat, 0.99),
                   fits=reasons.count("fit"), starved=reasons.count("starved"),
                   fills=sum(1 for e in mine if e.get("cat") == "fill"),
                   paces=len(paces), paced_ms=sum(paces) / 1e3)
    if hp in tid:
        own = lambda task: sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                                  if e.get("cat") == "launch" and e.get("tid") == tid.get(task))
        out.update(bursts(own(hp), own(lp) if lp in tid else [], burst_gap_us))
        gaps = [e["args"] for e in events if e.get("name") == "gap seen" and e["tid"] == tid[hp]
                and e["args"]["predicted_us"] > 0]
        if gaps:
            out["gaps_measured"] = len(gaps)
            out["gap_below_p10"] = sum(g["seen_us"] < g["predicted_us"] for g in gaps) / len(gaps)
            out["gap_p50_rel_error"] = q([abs(g["seen_us"] - g["predicted_p50_us"]) / max(g["seen_us"], 1.0)
                                          for g in gaps], 0.5)
    return out


def summary(m):
    """One line of text for a metrics() dict."""
    lat = (f", grant latency p50 {m['grant_latency_p50_us']:.1f} us, p99 {m['grant_latency_p99_us']:.1f} us"
           if m.get("grants") and "grant_latency_p50_us" in m else "")
    if "held_p50_us" in m:
        lat += f" (held p50 {m['held_p50_us']:.0f} us, p90 {m['held_p90_us']:.0f} us)"
    for name in ("spinning", "woken"):
        if m.get(f"grants_{name}"):
            lat += (f"; {m[f'grants_{name}']} found {'asleep' if name == 'woken' else 'spinning'}: "
                    f"p50 {m[f'grant_latency_{name}_p50_us']:.1f} us, p99 {m[f'grant_latency_{name}_p99_us']:.1f} us")
    return (f"{m.get('fills', 0)} launches filled gaps by themselves; {m.get('grants', 0)} grants "
            f"({m.get('fits', 0)} into gaps, {m.get('starved', 0)} starved){lat}; "
            f"{m.get('paces', 0)} waits for the queue to drain ({m.get('paced_ms', 0):.0f} ms); "
            + (f"{m['guard_waits']} waits beside a level above running too slow ({m['guard_waited_ms']:.0f} ms); "
               if m.get("guard_waits") else "")
            + (f"{m['gaps_measured']} gaps measured: {m['gap_below_p10']:.0%} shorter than their predicted "
               f"p10, median error of the predicted p50 {m['gap_p50_rel_error']:.0%}."
               if "gaps_measured" in m else "no gaps measured.")
            + (f" {m['bursts']} bursts of the high-priority task (split at {m['burst_gap_us']:.0f} us)"
               + (f", launching every {m['hp_pace_p50_us']:.1f} us at the median (p90 {m['hp_pace_p90_us']:.1f})"
                  if "hp_pace_p50_us" in m else "")
               + f"; {m['bursts_lp_ahead']:.0%} began with lower work in flight"
               + (f" (p50 {m['lp_ahead_p50_us']:.0f} us, p90 {m['lp_ahead_p90_us']:.0f} us of it)"
                  if "lp_ahead_p50_us" in m else "")
               + f"; {m['lp_in_bursts']} of {m['lp_launches']} lower launches went inside bursts."
               if "bursts" in m else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hp", default="hp", help="the high-priority task's name (default hp)")
    ap.add_argument("--lp", default="lp", help="the low-priority task's name (default lp)")
    ap.add_argument("--burst-gap-us", type=float, default=BURST_GAP_US,
                    help="split the high-priority task's launches into bursts where it launched nothing "
                         f"for this long (default {BURST_GAP_US:.0f})")
    ap.add_argument("trace", help="a trace written by `fikit trace dump`")
    a = ap.parse_args()
    try:
        with open(a.trace) as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit(f"trace_metrics.py: {a.trace}: not a fikit trace ({e})")
    m = metrics(events, a.hp, a.lp, a.burst_gap_us)
    if not m:
        sys.exit(f"trace_metrics.py: {a.trace}: no task named {a.hp} or {a.lp} "
                 f"(the tasks are named in the trace's thread names)")
    print(summary(m))


if __name__ == "__main__":
    main()
