#!/usr/bin/env python3
"""fikit under Slurm, for real: a one-node cluster of its own (munged,
slurmctld and slurmd started here as root, a minimal slurm.conf with a gpu
GRES and shards of it, the SPANK plugin in plugstack.conf) and a fikitd of
its own. Checks:

- srun --help shows the plugin's options; an out-of-range --gpu-priority is
  refused before the job is submitted, with the reason;
- a service job at --gpu-priority=0 and a batch job at 9 share the OpenCL
  device at the same time, each at its level as `fikit status` shows it, and
  their outputs are right; the service job is a batch script whose own srun
  is not a task of fikit's, the batch job's GPU program runs in the batch
  step itself;
- a job in the capped partition that asks for 0 runs at the partition's
  ceiling, even when it sets FIKIT_PRIORITY=0 and another task name in its
  own environment: fikitd takes the plugin's record over the client's claim;
- exit codes come back through srun and sbatch --wait.
- without fikitd a task runs unscheduled after one line, or with on_daemon_missing =
  fail is not started, saying why.

Skips (exit 77) with the reason where Slurm or munge is not installed, the
plugin was not built, or the test is not root (slurmd must be)."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import BATCH, BUILD, SERVICE, Fikit, check, fail, status_column  # noqa: E402

SPANK = os.path.join(BUILD, "cluster", "slurm", "fikit_spank.so")
LIBFIKIT = os.path.join(BUILD, "interpose", "libfikit.so")
SBIN = ("slurmctld", "slurmd", "munged")
BIN = ("srun", "sbatch", "scontrol", "sinfo")
PACKAGES = "slurm-wlm slurmctld slurmd munge libslurm-dev slurm-wlm-basic-plugins-dev"


def skip(why):
    print(f"skip: {why}", flush=True)
    sys.exit(77)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """munged, slurmctld and slurmd of our own, in a directory of our own."""

    def __init__(self, root, fk, ceiling):
        self.root = root
        self.fk = fk
        self.procs = []
        self.node = socket.gethostname().split(".")[0]
        self.conf = os.path.join(root, "slurm.conf")
        self.env = dict(fk.env)
        self.env["SLURM_CONF"] = self.conf
        for k in list(self.env):
            if k.startswith(("SLURM_", "SPANK_", "SBATCH_", "SRUN_", "SALLOC_")) and k != "SLURM_CONF":
                del self.env[k]
        for d in ("state", "spool", "log", "munge"):
            os.makedirs(os.path.join(root, d), mode=0o700, exist_ok=True)
        # What the GRES names: slurmd wants a character device; task/none fences nothing.
        gpu = os.path.join(root, "gpu0")
        try:
            os.mknod(gpu, 0o600 | __import__("stat").S_IFCHR, os.makedev(1, 3))
        except OSError:
            gpu = "/dev/null"
        self.munge_socket = os.path.join(root, "munge", "munge.socket")
        with open(os.path.join(root, "gres.conf"), "w") as f:
            f.write(f"Name=gpu File={gpu}\nName=shard Count=4 File={gpu}\n")
        with open(os.path.join(root, "plugstack.conf"), "w") as f:
            f.write(f"required {SPANK} default=9 max=0 ceiling={ceiling} library={LIBFIKIT} "
                    f"config={fk.config}\n")
        ctld_port, d_port = free_port(), free_port()
        L = lambda n: os.path.join(root, "log", n)  # noqa: E731
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=fikit
SlurmctldHost={self.node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket}
CredType=cred/munge
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={L("slurmctld.log")}
SlurmdLogFile={L("slurmd.log")}
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig={root}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu,shard
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MinJobAge=600
MailProg=/bin/true
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={max(2, os.cpu_count() or 2)} Gres=gpu:1,shard:4 State=UNKNOWN
PartitionName=open Nodes={self.node} Default=YES OverSubscribe=YES MaxTime=INFINITE State=UP
PartitionName=capped Nodes={self.node} OverSubscribe=YES MaxTime=INFINITE State=UP
""")
        self.logs = {n: L(n) for n in ("munged.log", "slurmctld.log", "slurmd.log")}

    def start(self):
        key = os.path.join(self.root, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        r = subprocess.run(["munged", "--force", f"--socket={self.munge_socket}", f"--key-file={key}",
                            f"--pid-file={self.root}/munge/munged.pid",
                            f"--log-file={self.logs['munged.log']}",
                            f"--seed-file={self.root}/munge/munge.seed"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            fail(f"munged did not start: {r.stdout}")
        self.munged_pid = int(open(f"{self.root}/munge/munged.pid").read())
        for prog, args in (("slurmctld", ["-D", "-i", "-f", self.conf]),
                           ("slurmd", ["-D", "-f", self.conf, "-N", self.node])):
            out = open(os.path.join(self.root, "log", prog + ".out"), "w")
            self.procs.append(subprocess.Popen([prog, *args], stdout=out, stderr=subprocess.STDOUT,
                                               env=self.env))
        deadline = time.time() + 60
        while time.time() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    fail(f"{p.args[0]} exited with {p.returncode}: {self.tail()}")
            r = self.run(["sinfo", "-h", "-N", "-o", "%T"])
            states = set(r.stdout.split())
            if r.returncode == 0 and states and states <= {"idle", "mixed"}:
                return
            time.sleep(0.2)
        fail(f"the node did not come up: {self.run(['sinfo', '-N']).stdout} {self.tail()}")

    def tail(self):
        out = []
        for name in ("slurmctld.log", "slurmd.log", "slurmctld.out", "slurmd.out", "munged.log"):
            p = os.path.join(self.root, "log", name)
            if os.path.exists(p):
                out.append(f"--- {name}:\n" + "".join(open(p, errors="replace").readlines()[-25:]))
        return "\n".join(out)

    def run(self, argv, env=None, **kw):
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              errors="replace", env=env or self.env, cwd=self.root, **kw)

    def popen(self, argv):
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace", env=self.env, cwd=self.root)
        self.fk.children.append(p)
        return p

    def submit(self, args):
        """sbatch ARGS; returns the job id."""
        r = self.run(["sbatch", "--parsable", *args])
        if r.returncode != 0:
            fail(f"sbatch {' '.join(args)}: exit {r.returncode}: {r.stderr}")
        return r.stdout.strip().split(";")[0]

    def job(self, job):
        r = self.run(["scontrol", "-o", "show", "job", job])
        return dict(f.split("=", 1) for f in r.stdout.split() if "=" in f)

    ENDED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
             "NODE_FAIL", "OUT_OF_MEMORY")

    def ended(self, job):
        return self.job(job).get("JobState") in self.ENDED

    def wait_job(self, job, seconds=300):
        """Waits for the job to end; returns its state and exit code (as
        scontrol shows them: "3:0" is exit status 3, no signal)."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            info = self.job(job)
            if info.get("JobState") in self.ENDED:
                return info.get("JobState"), info.get("ExitCode")
            time.sleep(0.1)
        fail(f"job {job} did not end in {seconds} s: {self.job(job)}")

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if getattr(self, "munged_pid", None):
            try:
                os.kill(self.munged_pid, 15)
            except ProcessLookupError:
                pass


def wait_rows(fk, want, ended, seconds=120):
    """Polls `fikit status` until every task in want shows up at once (or
    ended() says a job ended first); returns {task: priority column} and
    that status."""
    deadline = time.time() + seconds
    seen = {}
    while time.time() < deadline:
        st = fk.status()
        seen = {t: status_column(st, t, "priority") for t in want}
        if all(seen[t] for t in want):
            return seen, st
        if ended():
            break
        time.sleep(0.05)
    return seen, fk.status()


def main():
    if os.geteuid() != 0:
        skip("needs root: slurmd and munged run here as root (run make check as root)")
    missing = [b for b in SBIN + BIN if not shutil.which(b, path=os.environ.get("PATH", "") + ":/usr/sbin")]
    if missing:
        skip(f"Slurm is not installed here (no {', '.join(missing)}): scripts/install-deps installs "
             f"{PACKAGES}")
    if not os.path.exists(SPANK):
        skip(f"the SPANK plugin was not built ({SPANK}: spank.h not found at configure time; install "
             f"libslurm-dev slurm-wlm-basic-plugins-dev and configure again)")
    os.environ["PATH"] += ":/usr/sbin"

    with Fikit(tasks=(("serve", 0), ("batch", 9))) as fk:
        fk.env["PATH"] = os.environ["PATH"]
        fk.start()
        cl = Cluster(os.path.join(fk.dir, "slurm"), fk, "capped:5")
        try:
            cl.start()
            check(True, f"a one-node cluster ({cl.node}) is up: munged, slurmctld, slurmd")
            body(fk, cl)
        except SystemExit:
            print(cl.tail(), flush=True)
            raise
        finally:
            cl.stop()


def body(fk, cl):
    r = cl.run(["srun", "--help"])
    check("--gpu-priority=N" in r.stdout and "--fikit-task=NAME" in r.stdout,
          "srun --help shows --gpu-priority=N and --fikit-task=NAME")
    r = cl.run(["srun", "--gpu-priority=12", "true"])
    check(r.returncode != 0 and "--gpu-priority=12: not a priority (accepted: 0 (highest) to 9 (lowest))"
          in r.stderr, f"srun --gpu-priority=12 is refused with the reason (exit {r.returncode})")
    r = cl.run(["sbatch", "--gpu-priority=x", "--wrap", "true"])
    check(r.returncode != 0 and "--gpu-priority=x: not a priority" in r.stderr,
          f"sbatch --gpu-priority=x is refused with the reason (exit {r.returncode})")

    # A bad plugin argument stops srun with the argument and the accepted form.
    bad = os.path.join(cl.root, "bad")
    os.makedirs(bad)
    with open(os.path.join(bad, "plugstack.conf"), "w") as f:
        f.write(f"required {SPANK} ceiling=capped:x\n")
    with open(os.path.join(bad, "slurm.conf"), "w") as f:
        f.write(re.sub(r"PlugStackConfig=\S+", f"PlugStackConfig={bad}/plugstack.conf", open(cl.conf).read()))
    r = cl.run(["srun", "true"], env={**cl.env, "SLURM_CONF": os.path.join(bad, "slurm.conf")})
    check(r.returncode != 0 and "fikit: plugstack.conf: ceiling=capped:x: 'capped:x' is not PARTITION:N "
          "with N from 0 to 9" in r.stderr, f"a bad plugin argument is named on srun's stderr (exit {r.returncode})")

    # Exit codes, through srun and through sbatch --wait.
    r = cl.run(["srun", "-p", "open", "sh", "-c", "exit 3"])
    check(r.returncode == 3, f"srun gives back the task's exit status 3 (got {r.returncode}: {r.stderr.strip()})")
    r = cl.run(["sbatch", "--wait", "-o", "/dev/null", "-p", "open", "--wrap", "exit 5"])
    check(r.returncode == 5, f"sbatch --wait gives back the job's exit status 5 (got {r.returncode})")

    # The service (0) and the batch job (9) on the OpenCL device together.
    out = lambda n: os.path.join(cl.root, n)  # noqa: E731
    # The service starts once the batch job runs under fikit (the file go), so
    # the two overlap however slowly a busy machine starts either.
    go = out("go")
    lp = cl.submit(["-p", "open", "--gres=shard:1", "--gpu-priority=9", "--fikit-task=batch",
                    "-o", out("batch.out"), "-e", out("batch.err"),
                    "--wrap", f"{BATCH} --json -t 8 -w 1500"])
    svc = cl.submit(["-p", "open", "--gres=shard:1", "--gpu-priority=0", "--fikit-task=serve",
                     "-o", out("serve.out"), "-e", out("serve.err"),
                     "--wrap", f"while [ ! -e {go} ]; do sleep 0.05; done; "
                               f"srun {SERVICE} --json -n 150 -r 0 -k 2 -g 3000 -w 500"])
    seen, _ = wait_rows(fk, ("batch",), lambda: cl.ended(lp))
    check(seen["batch"] == ["9"], f"the batch job runs under fikit at priority 9 (saw {seen})")
    open(go, "w").close()
    seen, st = wait_rows(fk, ("serve", "batch"), lambda: cl.ended(lp) or cl.ended(svc))
    check(seen["serve"] == ["0"] and seen["batch"] == ["9"],
          f"fikit status shows both jobs at once, serve at 0 and batch at 9 (saw {seen})")
    check(len(status_column(st, "serve", "pid")) == 1,
          "the service job is one task: the batch script's own srun did not register")
    for name, job in (("serve", svc), ("batch", lp)):
        state, code = cl.wait_job(job)
        err = open(out(f"{name}.err"), errors="replace").read()
        check(state == "COMPLETED" and code == "0:0",
              f"the {name} job completed with exit code 0:0 ({state}, {code}; stderr: {err[-400:]})")
        lines = [l for l in open(out(f"{name}.out")).read().splitlines() if l.startswith("{")]
        res = json.loads(lines[-1]) if lines else {}
        check(res.get("wrong") == 0, f"the {name} job's output is right: {lines[-1][:200] if lines else 'none'}")
        check("passthrough" not in err, f"the {name} job ran scheduled, not in passthrough")
    log = open(fk.log).read()
    check(re.search(r"is task serve, priority 0, at most 0: slurm job \d+ step 0, partition open", log)
          and re.search(r"is task batch, priority 9, at most 0: slurm job \d+ batch, partition open", log),
          "fikitd logged the plugin's records: serve from the step, batch from the batch step")

    # The capped partition: asks for 0, runs at its ceiling 5, whatever its environment says.
    cap = cl.popen(["srun", "-p", "capped", "--gres=shard:1", "--gpu-priority=0", "--fikit-task=capjob",
                    "env", "FIKIT_PRIORITY=0", "FIKIT_TASK=mine", BATCH, "--json", "-t", "3", "-w", "3000"])
    seen, st = wait_rows(fk, ("capjob",), lambda: cap.poll() is not None)
    check(seen["capjob"] == ["5(<-0)"] and not status_column(st, "mine", "pid"),
          f"the capped partition's job asking for 0 runs at its ceiling 5 under its Slurm name "
          f"(priority {seen['capjob']})")
    o, e = cap.communicate(timeout=300)
    check(cap.returncode == 0 and json.loads(o.strip().splitlines()[-1])["wrong"] == 0,
          f"the capped job exited 0 with right outputs ({cap.returncode}: {e[-300:]})")
    check("asked for priority 0; fikitd allows it 5 at most" in e,
          "the capped job was told, on its stderr, that it runs at 5")

    # No fikitd: the task runs unscheduled after a line, or, with on_daemon_missing =
    # fail, is not started, and says why.
    fk.stop()
    r = cl.run(["srun", "-p", "open", "--gpu-priority=0", BATCH, "--json", "-c", "2", "-w", "100"])
    lines = [l for l in r.stderr.splitlines() if "fikit" in l]
    check(r.returncode == 0 and len(lines) == 1 and "runs unscheduled (passthrough)" in lines[0],
          f"without fikitd the job runs unscheduled after one line (exit {r.returncode}: {lines})")
    with open(fk.config, "a") as f:
        f.write("[client]\non_daemon_missing = fail\n")
    r = cl.run(["srun", "-p", "open", "--gpu-priority=0", "sh", "-c", "echo started"])
    check(r.returncode != 0 and "started" not in r.stdout and
          "(on_daemon_missing = fail in " in r.stderr,
          f"with on_daemon_missing = fail the task is not started, and says why (exit {r.returncode}: "
          f"{r.stderr.strip()[-300:]})")


if __name__ == "__main__":
    main()
