"""Two OpenCL devices of this machine's PoCL (POCL_DEVICES="pthread pthread"
makes two devices of the host's CPU): fikitd schedules each apart, under the
key of its position in the platform. A priority-0 service runs on device 0;
a priority-9 batch job on device 1 makes all its launches with none held,
while the same job on device 0 is held behind the service (policy strict, a
long idle threshold: what is held stays held until the service ends). The
CUDA side of several devices is integration.multigpu."""
import re
import subprocess
from harness import BATCH, SERVICE, Fikit, check, fail, result, wait_for


def rows(fk, task):
    """[(device key, held, holds, launches)] of a task's registrations."""
    out, key, head = [], None, None
    for line in fk.status().splitlines():
        m = re.match(r"^device \d+: (.+)$", line)
        if m:
            key = m.group(1)
            continue
        f = line.split()
        if f[:3] == ["slot", "pid", "task"]:
            head = f
        elif head and len(f) == len(head) and f[2] == task:
            r = dict(zip(head, f))
            out.append((key, int(r["held"]), int(r["holds"]), int(r["launches"])))
    return out


with Fikit(policy="strict", extra="idle_after_us = 60000000", tasks=(("serve", 0), ("batch", 9))) as fk:
    fk.env["POCL_DEVICES"] = "pthread pthread"
    probe = subprocess.run([BATCH, "--json", "-c", "1", "-w", "1"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=dict(fk.env, FIKIT_DEMO_DEVICE="1"))
    if probe.returncode != 0:
        print(f"SKIP: this OpenCL offers no second device with POCL_DEVICES='pthread pthread': "
              f"{probe.stderr.strip()}")
        raise SystemExit(77)
    fk.start()

    def popen(task, argv, device):
        p = subprocess.Popen(fk.cmd(task, argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace", env=dict(fk.env, FIKIT_DEMO_DEVICE=str(device)))
        fk.children.append(p)
        return p

    svc = popen("serve", [SERVICE, "--json", "-n", "1000000", "-r", "0", "-k", "4", "-g", "500", "-w", "20"], 0)
    wait_for("the service on device 0", lambda: rows(fk, "serve"))
    held = popen("batch", [BATCH, "--json", "-c", "3", "-w", "20"], 0)
    wait_for("the batch job's launch on device 0 to be held",
             lambda: any(h == 1 for _, h, _, _ in rows(fk, "batch")))
    free = popen("batch", [BATCH, "--json", "-c", "40", "-w", "20"], 1)
    try:
        out, _ = free.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        fail("the batch job on device 1 was held behind the service on device 0")
    check(free.returncode == 0 and result(out)["wrong"] == 0 and result(out)["kernels"] == 40,
          "the batch job on device 1 ran its 40 kernels, all correct, beside the service on device 0")
    check(svc.poll() is None and held.poll() is None, "the service still ran, the job on device 0 still waited")
    st = fk.status()
    keys = re.findall(r"^device \d+: (.+)$", st, re.M)
    check(len(keys) == 2 and keys[0] != keys[1] and all("Portable Computing Language" in k for k in keys),
          f"two devices, one key each: {keys}")
    r = rows(fk, "batch")
    check(any(h == 1 for _, h, _, _ in r), f"the job on device 0 is held now: {r}")
    svc.terminate()
    out, _ = held.communicate(timeout=120)
    check(held.returncode == 0 and result(out)["wrong"] == 0, "once the service ended, the held job ran, correct")
    svc.communicate(timeout=60)
