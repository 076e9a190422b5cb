"""A trace becomes a workload file of fikit sim, for real: the OpenCL demo service
runs under fikit-launch --measure while fikitd records its trace;
bench/sim-workload-from-trace converts the trace with the task's profile, and fikit
sim's own loader (sim/workload.c, through unit.sim_workload's env_file test) reads
the result. The file holds every request the trace saw, each its four kernels with
the durations fikit measured and a sync after each (the service waits for each
kernel), and the request time the service measured."""
import glob
import json
import os
import subprocess
import sys
from harness import BUILD, SERVICE, SOURCE, Fikit, check, fail, result

CONVERT = os.path.join(SOURCE, "bench", "sim-workload-from-trace")
LOADER = os.path.join(BUILD, "tests", "test_sim_workload")
N, K = 30, 4
# Kernels of milliseconds (-w 5000: 10-40 ms on PoCL), so that --sync auto's
# evidence of a wait, the device busy for most of the host's gap, holds when
# the host wakes late from it: beside two busy loops, 1 ms kernels (-w 500)
# left 76-86 of the 88 waits found, the host's wake-up being longer than the
# kernel. 1 request in 2 s, so that requests seldom queue and most follow
# an idle gap, which --split first-key needs: at 10 a second it once found
# 30 of them, not 29, and at 4 a second, beside two busy loops and another
# make check, the kernels took 41 ms, a request 190 ms, and only 5 of 29
# requests followed a gap. Since at 1 a second beside two busy loops and a
# make check, the kernels took 104 ms, a request 438 ms alone, and 16 of 29
# followed a gap: one every 2 s.
SVC = [SERVICE, "--json", "-n", str(N), "-r", "0.5", "-k", str(K), "-g", "300", "-w", "5000", "-s", "4096"]

r = subprocess.run([sys.executable, CONVERT, "--help"], stdout=subprocess.PIPE, text=True)
check(r.returncode == 0 and "--split-kernel" in r.stdout, "the converter has --help")

with Fikit(tasks=(("serve", 0),)) as fk:
    fk.start("--trace")
    p = fk.run("serve", SVC, measure=True)
    check(p.returncode == 0, f"the service ran under --measure: {p.stderr.strip()[-300:]}")
    svc = result(p)
    trace_path = os.path.join(fk.dir, "trace.json")
    fk.trace()  # writes trace_path
    profiles = glob.glob(os.path.join(fk.state, "profiles", "serve", "*.profile"))
    check(len(profiles) == 1, f"the service's profile was written: {profiles}")
    wl = os.path.join(fk.dir, "demo-serve.wl")
    summary = os.path.join(fk.dir, "summary.json")
    # A request begins with layer0 (the warm-up before the first request too:
    # dropped as the first sequence, as the last one is by default).
    r = subprocess.run([sys.executable, CONVERT, trace_path, profiles[0], "-o", wl, "--name", "demo-serve",
                        "--task", "serve", "--sync", "each", "--split-kernel", "layer0",
                        "--request-ms", str(svc["service_ms"]), "--summary", summary],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    print(r.stderr.strip())
    check(r.returncode == 0, "the converter wrote a workload file")
    s = json.load(open(summary))
    check(s["launches_traced"] == K * (N + 1), f"every launch was in the trace: {s['launches_traced']} "
                                              f"of {K * (N + 1)} (warm-up included)")
    check(s["sequences"] == N - 1, f"{s['sequences']} requests kept of {N} (the last one dropped)")
    check(s["kernels_per_seq"] == K, f"each request is its {K} kernels")
    check(s["syncs_assumed"] == K * (N + 1) - 1, "a sync after each launch")
    check(s["durations_from_profile"] <= K * (N + 1) // 20,
          f"{K * (N + 1) - s['durations_from_profile']} launches got their own measured duration")
    check(s["kernels_not_in_profile"] == 0, "every kernel's grid and block came from the profile")
    # The converter adds host time before a request's first launch until a
    # request alone takes what the service measured; where the traced
    # requests already take longer (host gaps stretched by --measure, or on a
    # loaded machine: seen beside other checkouts' make check), it scales the
    # host gaps down instead and says so. Only where the kernels alone take
    # longer than the service measured can the request stay longer.
    added = s["pre_us"] > 0 and abs(s["seq_ms_alone"] - svc["service_ms"]) < 0.01
    scaled = s["pre_us"] == 0 and "host gaps are scaled by" in r.stderr and \
        (abs(s["seq_ms_alone"] - svc["service_ms"]) < 0.01 or s["seq_ms_alone"] > svc["service_ms"])
    check(s["kernel_p50_us"] > 0 and (added or scaled),
          f"kernel p50 {s['kernel_p50_us']:.1f} us; a request alone {s['seq_ms_alone']:.3f} ms, as the "
          f"service measured ({svc['service_ms']:.3f} ms), by host time added before the first launch "
          f"(pre {s['pre_us']} us) or host gaps scaled down")
    text = open(wl).read()
    check(all(f"layer{k}" in text for k in range(K)) and "kind service" in text, "kernels named")
    env = dict(os.environ, FIKIT_SIM_WORKLOAD_FILE=wl)
    r = subprocess.run([LOADER, "--filter", "sim_workload/env_file", "--verbose"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, env=env)
    print(r.stdout.strip())
    check(r.returncode == 0 and "Passing: 1" in r.stdout and f"{N - 1} sequences" in r.stdout,
          "fikit sim's loader reads the converted file")
    # Without being told: syncs assumed where the host waited for the device,
    # and requests begun by the kernel that follows the long gaps. A long gap
    # is well over a kernel (launch to launch, a request's own are a kernel
    # and a host gap): beside two busy loops the kernels took 24 ms each,
    # over a fixed 5 ms, and every launch followed a "long" gap.
    split_gap_us = max(5000, int(1.5 * s["kernel_p50_us"]) + 5000)
    r = subprocess.run([sys.executable, CONVERT, trace_path, profiles[0], "-o", wl, "--name", "demo-serve",
                        "--split", "first-key", "--split-gap-us", str(split_gap_us), "--summary", summary],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    print(r.stderr.strip())
    s = json.load(open(summary))
    check(r.returncode == 0 and "requests begin with kernel" in r.stderr and "(layer0)" in r.stderr and
          s["sequences"] == N - 1 and s["kernels_per_seq"] == K,
          f"--split first-key found layer0 and {s['sequences']} requests of {s['kernels_per_seq']} kernels")
    # (and one at the end of a request that the next one queued behind)
    check(3 * N - 2 <= s["syncs_assumed"] <= 4 * N + 4,
          f"--sync auto found the {K - 1} waits inside each request: {s['syncs_assumed']} for {N} requests")
    # A bad option is refused with a reason, nothing written.
    r = subprocess.run([sys.executable, CONVERT, trace_path, profiles[0], "-o", wl + "2", "--name", "x",
                        "--task", "nobody"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(r.returncode == 1 and "no launches of task nobody" in r.stderr and not os.path.exists(wl + "2"),
          f"an unknown task is refused: {r.stderr.strip()}")
