"""resnet50 batch-1 inference with random weights (no downloads), deterministic.

Prints a SHA-256 of the outputs of ITER inferences, so a run under fikit can be
compared bit for bit with a run without it. Usage: resnet50.py [ITER]"""
import hashlib
import os
import sys

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch
import torchvision

torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
torch.use_deterministic_algorithms(True)
torch.manual_seed(0)
iters = int(sys.argv[1]) if len(sys.argv) > 1 else 20
model = torchvision.models.resnet50(weights=None).cuda().eval()
x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1)).cuda()
outs = []
with torch.no_grad():
    for _ in range(iters):
        outs.append(model(x))
torch.cuda.synchronize()
print("digest", hashlib.sha256(torch.stack(outs).cpu().numpy().tobytes()).hexdigest())
print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, "cuda", torch.version.cuda)
