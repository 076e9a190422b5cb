"""The programs of bench/bursty-pocl.py and bench/bursty-model.py, written once so that
the model is made from the very programs that are measured: the OpenCL demo service in
bursts (requests of KERNELS kernels back to back for ON ms, then OFF ms of idle:
fikit-demo-service --bursts) and the demo batch job. Import after FIKIT_BUILD is set
(tests/integration/harness.py finds the programs by it)."""
from harness import BATCH, SERVICE

KERNELS = 5


def service_argv(requests, on_ms, off_ms):
    """The service's command line: requests back to back, in bursts of on_ms (0: none)."""
    return [SERVICE, "--json", "-n", str(requests), "-r", "0", "-k", str(KERNELS), "-g", "200", "-w", "100"] + (
        ["--bursts", f"{on_ms:.3f}:{off_ms}"] if on_ms else [])


def job_argv(*options):
    """The batch job's command line with options (--progress, -t SECONDS)."""
    return [BATCH, "--json", *options, "-w", "200"]
