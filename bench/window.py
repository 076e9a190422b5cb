"""A low-priority job's throughput over exactly the high-priority task's window.

The job starts before the service and is stopped after it, and neither its
head start nor its tail (the service's process start and exit, when the job
has the device to itself) may count as throughput under sharing. The job
prints "progress": [CLOCK_MONOTONIC seconds, units done] pairs (the demo's
batch programs with --progress, bench/torch_workloads.py train); the service
prints its measured window "t0", "t1" on the same clock. Used by
bench/evaluate and demo/run-demo.
"""


def done_at(progress, t):
    """Units done at time t, linear between the job's progress marks."""
    if not progress or t <= progress[0][0]:
        return 0.0
    for (ta, na), (tb, nb) in zip(progress, progress[1:]):
        if t <= tb:
            return na + (nb - na) * (t - ta) / (tb - ta) if tb > ta else nb
    return float(progress[-1][1])


def rate_within(job, service):
    """The job's units per second inside the service's [t0, t1], and whether
    its marks covered the whole window (False: the job started late or
    stopped early, and the rate counts only what it covered)."""
    prog, t0, t1 = job["progress"], service["t0"], service["t1"]
    covered = bool(prog) and prog[0][0] <= t0 and prog[-1][0] >= t1
    return (done_at(prog, t1) - done_at(prog, t0)) / (t1 - t0), covered
