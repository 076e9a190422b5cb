"""README's quick start, exactly as written: the lines between its quickstart markers run
in one bash, from the source tree, in a fresh home (no configuration, no fikitd, no
calibration), on this machine's device (PoCL without a GPU). Two things only are
adapted: `make` and `build/` name this test's build directory (the sanitizer builds are
elsewhere). As root, fikit's paths are /run/fikit and /var/lib/fikit: they are fresh
tmpfs mounts in a mount namespace of the test's own, so the machine's stay untouched.

Checks: every line succeeds; fikitd says where it is; calibrate stores the cost and says
a running fikitd takes it for devices it opens later; both programs' outputs are right;
fikit status shows the batch job (still running) at its priority; fikit stop stops
fikitd."""
import os
import re
import subprocess
import sys
import tempfile
from harness import BUILD, SANITIZER_RUNTIME, check, fail

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = 77

readme = open(os.path.join(SRC, "README.md"), encoding="utf-8").read()
m = re.search(r"<!-- quickstart -->\n(.*?)<!-- /quickstart -->", readme, re.S)
check(m is not None, "README.md has a quick start between its markers")
lines = [l[4:] for l in m.group(1).splitlines() if l.startswith("    ")]
check(lines and lines[0].split()[0] == "make", f"{len(lines)} lines, the first builds")

build = os.path.abspath(BUILD)
script = []
for l in lines:
    if l.split()[0] == "make":
        l = l.replace("make", f"make BUILD={build}", 1)
    script.append(l.replace("$PWD/build/", build + "/"))
home = tempfile.mkdtemp(prefix="fikit-quickstart-")
run = os.path.join(home, "run")
os.mkdir(run, 0o700)
body = "set -e\n" + "\n".join(script) + "\n"
env = {k: v for k, v in os.environ.items() if not k.startswith(("FIKIT_", "XDG_")) and k not in ("LD_PRELOAD",
                                                                                                  "OPENCL_LAYERS")}
env.update(HOME=home, XDG_RUNTIME_DIR=run)
if SANITIZER_RUNTIME:
    env["LD_PRELOAD"] = SANITIZER_RUNTIME
argv = ["bash", "-c", body]
if os.geteuid() == 0:
    wrap = ("mkdir -p /run/fikit /var/lib/fikit && mount -t tmpfs -o mode=0755 fikit-run /run/fikit && "
            "mount -t tmpfs -o mode=0755 fikit-state /var/lib/fikit && exec bash -c \"$0\"")
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    if probe.returncode != 0:
        print("skip: as root the quick start uses /run/fikit and /var/lib/fikit, and no mount namespace can "
              "be made here to keep them apart (unshare --mount)")
        sys.exit(SKIP)
    argv = ["unshare", "--mount", "--propagation", "private", "bash", "-c", wrap, body]
# The mount points are made on the machine's file system if missing (empty,
# and taken away again after).
made = [d for d in ("/run/fikit", "/var/lib/fikit") if os.geteuid() == 0 and not os.path.exists(d)]
try:
    p = subprocess.run(argv, cwd=SRC, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", timeout=600)
finally:
    for d in made:
        try:
            os.rmdir(d)
        except OSError:
            pass
out = p.stdout
print("\n".join("  | " + l for l in out.splitlines()[-40:]), flush=True)
if p.returncode != 0:
    fail(f"the quick start failed (exit {p.returncode})")
check(re.search(r"fikitd: running as pid \d+, listening on \S+", out) is not None,
      "fikitd said where it runs")
check("stored in " in out and "fikitd uses it" in out and re.search(r"fikitd \(pid \d+\) runs: it uses the new "
                                                                 r"cost", out) is not None,
      "fikit calibrate stored the cost and said when the running fikitd takes it")
check(re.search(r"^batch: \d+ kernels .*all outputs correct", out, re.M) is not None,
      "the batch job's outputs were right")
check(re.search(r"^service: 30 requests .*all outputs correct", out, re.M) is not None,
      "the service's 30 requests were right")
# The batch job runs 40 s; on a busy machine the service may take longer,
# and then the job has ended before fikit status looks.
check(re.search(r"^device 0: \S+", out, re.M) is not None, "fikit status showed fikitd's device")
rows = {f[2]: f for f in (l.split() for l in out.splitlines()) if len(f) > 4 and f[0].isdigit()}
check("train" not in rows or rows["train"][3] == "9",
      "fikit status showed the batch job at priority 9" if "train" in rows
      else "the batch job had ended before fikit status looked (a busy machine)")
check(re.search(r"^fikitd \(pid \d+\) stopped", out, re.M) is not None, "fikit stop stopped fikitd")
