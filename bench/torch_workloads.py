"""PyTorch workloads for fikit's evaluation: random weights, no downloads.

  serve --model resnet50|bert --rate R --seconds S [--wait-go]
      batch-1 inference; requests arrive as a Poisson process at R per second for
      S seconds; prints JSON with latency percentiles (arrival to result) and the
      measured window t0, t1 (time.monotonic(), which is CLOCK_MONOTONIC).
      --rate 0 measures the service time back to back (capacity = 1 / mean).
  train --seconds S [--batch 64] [--wait-go]
      resnet50 training steps in a closed loop; prints JSON with steps per second
      and "progress": [CLOCK_MONOTONIC seconds, steps done] at every
      synchronisation (every 4 steps), so that bench/evaluate can take the
      throughput over the service's window. SIGTERM ends the run early, results
      printed.
Both print "ready" once warmed up; with --wait-go they then wait for a line on
stdin before the measured part starts, so that bench/evaluate can warm up both
tasks of a mode at once and start their measurements together.
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
    return m.cuda().eval(), x.cuda()


def ready(a):
    print("ready", flush=True)
    if a.wait_go:
        sys.stdin.readline()


def serve(a):
    torch.manual_seed(0)
    m, x = build(a.model)
    with torch.no_grad():
        for _ in range(20):
            m(x)
        torch.cuda.synchronize()
        ready(a)
        lat = []
        rnd = random.Random(a.seed)
        start = time.monotonic()
        arrival = start
        while True:
            if a.rate > 0:
                arrival += -math.log(1.0 - rnd.random()) / a.rate
                if arrival - start > a.seconds:
                    break
                while time.monotonic() < arrival:
                    time.sleep(max(0.0, arrival - time.monotonic() - 50e-6))
            else:
                arrival = time.monotonic()
                if arrival - start > a.seconds:
                    break
            m(x)
            torch.cuda.synchronize()
            lat.append((time.monotonic() - arrival) * 1e3)
    end = time.monotonic()
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * (len(lat) - 1) + 0.5))]
    print(json.dumps({"program": "serve", "model": a.model, "requests": len(lat),
                      "mean_ms": sum(lat) / len(lat), "p50_ms": q(0.5), "p99_ms": q(0.99),
                      "max_ms": lat[-1], "seconds": end - start, "t0": start, "t1": end,
                      "wrong": 0}), flush=True)


stop = False


def train(a):
    global stop
    signal.signal(signal.SIGTERM, lambda *_: globals().__setitem__("stop", True))
    torch.manual_seed(0)
    m = torchvision.models.resnet50(weights=None).cuda().train()
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(a.batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (a.batch,), device="cuda")
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
    ready(a)
    n, start = 0, time.monotonic()
    progress = [(start, 0)]
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
