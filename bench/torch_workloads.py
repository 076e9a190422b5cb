"""PyTorch workloads for fikit's evaluation: random weights, no downloads.

  serve --model resnet50|bert --rate R --seconds S [--wait-go]
      batch-1 inference; requests arrive as a Poisson process at R per second for
      S seconds; prints JSON with latency percentiles (arrival to result), every
      latency (latencies_ms, sorted), each request's service time and the idle
      time before it (service_each_ms, idle_before_ms, in arrival order) and
      the measured window t0, t1
      (time.monotonic(), which is CLOCK_MONOTONIC).
      --rate 0 measures the service time back to back (capacity = 1 / mean);
      with --probe-load L, 30 % of the time back to back, the rest Poisson at L of
      that capacity: its service_ms (from when a request could start to its
      result) is the service time that Poisson requests see.
  train --seconds S [--batch 64] [--wait-go]
      resnet50 training steps in a closed loop; prints JSON with steps per second
      and "progress": [CLOCK_MONOTONIC seconds, steps done] at every
      synchronisation (every 4 steps), so that bench/evaluate can take the
      throughput over the service's window. SIGTERM ends the run early, results
      printed.
With --wait-go both print "loaded" once the model is built on the CPU and wait
for a line on stdin before touching the GPU, then print "ready" once warmed up
and wait for another line before the measured part starts (train then prints
"started" once its first progress mark is taken): bench/evaluate
starts the next mode's programs while the last one ends, then warms up both
tasks of a mode at once and starts their measurements together.
"""
import argparse
import json
import math
import random
import signal
import sys
import time

import torch
import torch.nn as nn
import torchvision


def build(model):
    if model == "resnet50":
        m = torchvision.models.resnet50(weights=None)
        x = torch.randn(1, 3, 224, 224)
    elif model == "bert":
        # bert-base's encoder shape: 12 layers, hidden 768, 12 heads, FFN 3072; sequence 128.
        layer = nn.TransformerEncoderLayer(768, 12, 3072, batch_first=True, activation="gelu")
        m = nn.TransformerEncoder(layer, 12, enable_nested_tensor=False)
        x = torch.randn(1, 128, 768)
    else:
        sys.exit(f"unknown model {model}")
    return m.eval(), x


def loaded(a):
    """Built on the CPU, nothing on the GPU yet: with --wait-go, say so and
    wait, so that bench/evaluate can start the next mode's programs while the
    last one ends and let them on the GPU only once it has."""
    if a.wait_go:
        print("loaded", flush=True)
        sys.stdin.readline()


def ready(a):
    print("ready", flush=True)
    if a.wait_go:
        sys.stdin.readline()


def requests(m, x, rate, seconds, rnd):
    """Serves for `seconds`: Poisson arrivals at `rate`, or back to back at 0.
    Returns (latencies ms, mean service ms, start, end, each): latency from
    arrival to result, service from when a request could start (its arrival,
    or the end of the one before) to its result; each = per request, in
    order, (service ms, ms the service sat idle before it): how long a
    request takes after a pause shows what a cold GPU costs it."""
    lat, busy, each = [], 0.0, []
    start = time.monotonic()
    arrival = start
    last_done = start
    while True:
        if rate > 0:
            arrival += -math.log(1.0 - rnd.random()) / rate
            if arrival - start > seconds:
                break
            while time.monotonic() < arrival:
                time.sleep(max(0.0, arrival - time.monotonic() - 50e-6))
        else:
            arrival = time.monotonic()
            if arrival - start > seconds:
                break
        begun = time.monotonic()
        m(x)
        torch.cuda.synchronize()
        done = time.monotonic()
        lat.append((done - arrival) * 1e3)
        busy += done - begun
        each.append((round((done - begun) * 1e3, 4), round(max(0.0, begun - last_done) * 1e3, 4)))
        last_done = done
    return lat, busy * 1e3 / max(1, len(lat)), start, time.monotonic(), each


def serve(a):
    torch.manual_seed(0)
    m, x = build(a.model)
    loaded(a)
    m, x = m.cuda(), x.cuda()
    with torch.no_grad():
        for _ in range(20):
            m(x)
        torch.cuda.synchronize()
        ready(a)
        rnd = random.Random(a.seed)
        extra = {}
        rate = a.rate
        if a.probe_load:
            # Capacity as Poisson requests see it: a request after a pause may
            # find the GPU's clocks and caches cold, so the back-to-back time
            # (first part) understates it; the rest runs at probe_load of that.
            b2b, b2b_ms, _, _, _ = requests(m, x, 0, a.seconds * 0.3, rnd)
            rate = a.probe_load / (b2b_ms / 1e3)
            extra = {"backtoback_ms": b2b_ms, "probe_rate": rate}
        lat, service_ms, start, end, each = requests(m, x, rate, a.seconds * (0.7 if a.probe_load else 1), rnd)
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * (len(lat) - 1) + 0.5))]
    print(json.dumps(dict({"program": "serve", "model": a.model, "requests": len(lat),
                           "mean_ms": sum(lat) / len(lat), "service_ms": service_ms, "p50_ms": q(0.5),
                           "p99_ms": q(0.99), "max_ms": lat[-1], "seconds": end - start, "t0": start,
                           "t1": end, "wrong": 0, "latencies_ms": [round(v, 4) for v in lat],
                           "service_each_ms": [e[0] for e in each], "idle_before_ms": [e[1] for e in each]},
                          **extra)),
          flush=True)


stop = False


def sgd_trainer(m, batch):
    """The training step of this train and of multigpu/ddp_train.py: SGD
    with momentum on one random batch of ImageNet-sized images, cross-entropy
    loss. Warms up with three steps and synchronizes; returns the step and
    the last warm-up step's loss."""
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(m(x), y)
        loss.backward()
        opt.step()
        return loss

    for _ in range(3):
        loss = step()
    torch.cuda.synchronize()
    return step, loss


def train(a):
    global stop
    signal.signal(signal.SIGTERM, lambda *_: globals().__setitem__("stop", True))
    torch.manual_seed(0)
    m = torchvision.models.resnet50(weights=None)
    loaded(a)
    m = m.cuda().train()
    step, loss = sgd_trainer(m, a.batch)
    ready(a)
    n, start = 0, time.monotonic()
    progress = [(start, 0)]
    if a.wait_go:  # the service starts its window after this, inside the job's
        print("started", flush=True)
    while not stop and time.monotonic() - start < a.seconds:
        loss = step()
        n += 1
        if n % 4 == 0:
            torch.cuda.synchronize()
            progress.append((time.monotonic(), n))
    torch.cuda.synchronize()
    el = time.monotonic() - start
    if progress[-1][1] != n:
        progress.append((start + el, n))
    ok = math.isfinite(loss.item())
    print(json.dumps({"program": "train", "kernels": n, "per_second": n / el, "seconds": el,
                      "progress": [[round(t, 6), k] for t, k in progress], "wrong": 0 if ok else 1}),
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--model", default="resnet50")
    s.add_argument("--rate", type=float, default=0)
    s.add_argument("--seconds", type=float, default=8)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--probe-load", type=float, default=0,
                   help="with --rate 0: serve back to back for 30%% of the time, then Poisson at "
                        "this fraction of that capacity (prints service_ms of the second part)")
    s.add_argument("--wait-go", action="store_true")
    t = sub.add_parser("train")
    t.add_argument("--seconds", type=float, default=3600)
    t.add_argument("--batch", type=int, default=64)
    t.add_argument("--wait-go", action="store_true")
    a = ap.parse_args()
    torch.backends.cudnn.benchmark = False
    serve(a) if a.cmd == "serve" else train(a)


if __name__ == "__main__":
    main()
