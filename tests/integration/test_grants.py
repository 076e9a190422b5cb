"""Held launches are released without loss while fikitd moves its decisions.

A priority-0 service launches short kernels with 3 ms host gaps, request
after request; a priority-9 batch job of shorter kernels fills those gaps
behind it. A held batch thread sleeps until shortly before fikitd's next
decision (a granted kernel's predicted end, a recheck); a service kernel
then shows a sooner one (its own predicted end), so fikitd nudges the
sleeper awake ahead of it (fikit status counts those), and every held launch
is granted exactly once: grants and nudges both bump the waiter's futex word,
and a wake-up lost between a waiter's last look and its wait would leave the
batch job stuck here until the service ends."""
import os
import re
import sys
import time
from harness import BATCH, SERVICE, SOURCE, Fikit, check, result

# Batch kernels of about 1 ms in the service's 3.2 ms gaps: room for three
# times the predicted kernel (with 2 ms ones, 2.1 ms at p90 here, a CI machine
# once saw the first held launch never fit and wait out the whole service).
LP = [BATCH, "--json", "-t", "3", "-w", "100"]
SVC = [SERVICE, "--json", "-n", "60", "-r", "0", "-k", "6", "-g", "3000", "-w", "250"]

# pauses = off: this test is about grants into the service's gaps and the
# bursts they leave; on PoCL a batch kernel run in a pause takes the CPU
# cores the service computes on, which stretches its gaps.
with Fikit(extra="pauses = off") as fk:
    fk.start("--trace")
    # Long enough that the first kernels, slow while PoCL's threads and the
    # CPUs' clocks come up (up to 8 kernels of 2.7-3.8 ms against 1.9 here,
    # at -w 200), stay far out of the prediction (its p90): measured on 3, or
    # 40, the batch kernel was at times predicted longer than any gap and
    # held for the service's whole run, and the test then exercised one
    # grant. Timed rather than counted, so a faster machine does not measure
    # fewer seconds with the same slow start.
    # 20 requests: the first request's gaps can measure short (0.1-0.5 ms
    # here), and out of 5 they were a sixth of each pair's samples.
    # The pair runs again, both measured anew, (for at most 2 minutes in all)
    # until ten batch kernels were granted into the service's gaps: one run
    # gave 10-49 on a quiet machine, 5 beside two busy loops at load 15 on 2
    # cores (the batch job launched 111 kernels in its 3 s), five runs 9 at
    # load 20, and at load 50 a batch kernel measured longer than every gap
    # was held for each run's whole service, as it should.
    until = time.time() + 120
    while True:
        check(fk.run("batch", LP[:3] + ["1.5"] + LP[4:], measure=True).returncode == 0, "batch job measured")
        check(fk.run("serve", SVC[:3] + ["20"] + SVC[4:], measure=True).returncode == 0, "service measured")
        svc = fk.popen("serve", SVC)
        time.sleep(0.2)
        lp = fk.popen("batch", LP)
        out, _ = lp.communicate(timeout=120)
        check(lp.returncode == 0 and result(out)["wrong"] == 0,
              f"the batch job ran {result(out)['kernels']} kernels beside the service, all correct")
        out, _ = svc.communicate(timeout=120)
        check(svc.returncode == 0 and result(out)["wrong"] == 0, "the service's outputs were right")
        fits = re.search(r"granted: \d+ free, (\d+) fit", fk.status())
        if (fits and int(fits.group(1)) >= 10) or time.time() > until:
            break

    # PoCL computes on this machine's CPUs: whatever their number, spin_us =
    # auto must not have held threads spin through their holds beside it.
    m = re.search(r"held launches spin (\S+ ?\S*) \(spin_us = auto\) \((\d+) CPUs, the device computes on them\)",
                  open(fk.log).read())
    check(m is not None and m.group(1) == "50 us",
          f"fikitd knows the device computes on the host's CPUs and spins 50 us around decisions: "
          f"{m.group(0) if m else open(fk.log).read()[-400:]}")

    st = fk.status()
    m = re.search(r"held now (\d+); granted: (\d+) free, (\d+) fit, (\d+) starved, (\d+) pause, "
                  r"(\d+) overdue, (\d+) other; (\d+) held threads woken ahead of a decision", st)
    check(m is not None, "fikit status reports grants and nudges")
    held_now, nudges = int(m.group(1)), int(m.group(8))
    check(held_now == 0, "nothing is held at the end")
    check(nudges > 0, f"{nudges} sleeping held threads were woken ahead of a sooner decision")

    ev = fk.trace()["traceEvents"]
    batch = {e["tid"] for e in ev if e.get("name") == "thread_name" and e["args"]["name"].startswith("batch ")}
    holds = [e for e in ev if e.get("cat") == "hold" and e["tid"] in batch]
    grants = [e for e in ev if e.get("cat") == "grant" and e["tid"] in batch]
    check(len(holds) > 0, f"{len(holds)} batch launches were held behind the service")
    check(len(grants) == len(holds), f"each of them was granted once ({len(grants)} grants)")

    # How each grant reached its thread: by the store alone (spinning) or by
    # a futex wake-up; bench/trace_metrics.py splits the grant latency so.
    check(all(isinstance(g["args"].get("woken"), bool) and g["args"]["reason"] in ("free", "fit", "starved", "pause", "overdue")
              for g in grants), "every grant says its reason and whether its thread was asleep")
    sys.path.insert(0, os.path.join(SOURCE, "bench"))
    import trace_metrics
    m = trace_metrics.metrics(ev, "serve", "batch")
    profiles = lambda: "".join(fk.tool("profile", "show", "-c", fk.config, t).stdout for t in ("batch", "serve"))
    check(m["fits"] >= 10, f"{m['fits']} batch kernels were granted into the service's gaps"
          + ("" if m["fits"] >= 10 else f"; {trace_metrics.summary(m)}; what was measured:\n{profiles()}"))
    split = m.get("grants_spinning", 0) + m.get("grants_woken", 0)
    check(0 < split <= len(grants), f"{m.get('grants_spinning', 0)} grants found their thread spinning, "
          f"{m.get('grants_woken', 0)} asleep: {trace_metrics.summary(m)}")

    # Bursts: the service's kernels are 3 ms apart on the host (back-to-back
    # requests may bring two closer), so split at 1 ms nearly every launch is
    # a burst of its own; split at 20 ms, the back-to-back requests are one
    # burst with the batch kernels of its time inside it (more where the host
    # stalled the service past 20 ms: 4 and 12 at load 15 on 2 cores, 52 at
    # load 16 beside two busy loops; so the check is that they merge, not
    # into how many).
    fine = trace_metrics.metrics(ev, "serve", "batch", burst_gap_us=1000)
    coarse = trace_metrics.metrics(ev, "serve", "batch", burst_gap_us=20000)
    check(fine["bursts"] >= 0.8 * fine["hp_launches"] and 0 <= fine["bursts_lp_ahead"] <= 1,
          f"split at 1 ms: {fine['bursts']} bursts of {fine['hp_launches']} service launches; "
          f"{fine['bursts_lp_ahead']:.0%} of them began with batch work predicted in flight")
    # (Not by half either: beside two busy loops and another test, 356
    # bursts at 1 ms were still 234 at 20 ms.)
    check(coarse["bursts"] < fine["bursts"] and coarse["lp_in_bursts"] > fine["lp_in_bursts"],
          f"split at 20 ms: {coarse['bursts']} bursts, with {coarse['lp_in_bursts']} of the "
          f"{coarse['lp_launches']} batch launches inside them (at 1 ms: {fine['lp_in_bursts']})")
