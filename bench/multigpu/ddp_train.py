"""One rank of a PyTorch DDP training job (resnet50, random data, NCCL
all-reduce of the gradients), for bench/multigpu/multigpu.py. Started once per
rank with RANK, WORLD_SIZE and MASTER_PORT in the environment; rank r trains on
GPU r (torch.cuda.set_device), or on the GPU --device names.

  ddp_train.py --seconds S [--batch 64] [--device D] [--wait-go]

Builds the model, warms up 3 steps, prints "ready" and (with --wait-go) waits
for a line on stdin; then steps until S seconds have passed on rank 0 or it got
SIGTERM (rank 0 decides and broadcasts each step, so every rank runs the same
steps and the last collective is never left half done), synchronising each
step so that each step's time is its own. Prints one JSON line: rank, steps,
per_second, seconds, t0, t1 (time.monotonic(), which is CLOCK_MONOTONIC, the
clock of fikit's trace) and step_end (each step's end on that clock)."""
import argparse
import json
import math
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from torch_workloads import sgd_trainer  # noqa: E402  (bench/: the same training step)

stop = False


def main():
    global stop
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--wait-go", action="store_true")
    ap.add_argument("--device", type=int, default=None)
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: globals().__setitem__("stop", True))
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dev = rank if a.device is None else a.device
    torch.cuda.set_device(dev)
    init = dict(backend="nccl", init_method=f"tcp://127.0.0.1:{os.environ['MASTER_PORT']}", rank=rank,
                world_size=world)
    try:
        dist.init_process_group(**init, device_id=torch.device("cuda", dev))
    except TypeError:  # torch before 2.3
        dist.init_process_group(**init)
    torch.manual_seed(0)
    m = torchvision.models.resnet50(weights=None).cuda().train()
    m = nn.parallel.DistributedDataParallel(m, device_ids=[dev])
    flag = torch.zeros(1, device="cuda")
    step, loss = sgd_trainer(m, a.batch)
    dist.barrier()
    print("ready", flush=True)
    if a.wait_go:
        sys.stdin.readline()
    dist.barrier()
    t0 = time.monotonic()
    ends = []
    while True:
        flag.fill_(1.0 if rank == 0 and (stop or time.monotonic() - t0 >= a.seconds) else 0.0)
        dist.broadcast(flag, 0)
        if flag.item() > 0:
            break
        loss = step()
        torch.cuda.synchronize()
        ends.append(time.monotonic())
    t1 = ends[-1] if ends else time.monotonic()
    ok = math.isfinite(loss.item())
    print(json.dumps({"program": "ddp", "rank": rank, "steps": len(ends),
                      "per_second": len(ends) / max(1e-9, t1 - t0), "seconds": t1 - t0, "t0": t0, "t1": t1,
                      "step_end": [round(t, 6) for t in ends], "wrong": 0 if ok else 1}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
