"""Unmodified OpenCL programs from Debian compute the same under fikit."""
import os
import shutil
import subprocess
from harness import Fikit, check

with Fikit() as fk:
    fk.start()
    ref = subprocess.run(["clinfo"], stdout=subprocess.PIPE, text=True, env=fk.env)
    r = fk.run("serve", ["clinfo"])
    check(ref.returncode == 0 and r.returncode == 0 and r.stdout == ref.stdout,
          "clinfo prints the same under fikit-launch")
    if shutil.which("hashcat"):
        # md5("1234"), found by brute force over four digits. A session of its
        # own: hashcat refuses to start while another run of the default
        # session is alive (another checkout's make check on the machine).
        args = ["hashcat", "-m", "0", "-a", "3", "--potfile-disable", "--quiet", "-D", "1",
                f"--session=fikit-test-{os.getpid()}",
                "81dc9bdb52d04dc20036dbd8313ed055", "?d?d?d?d"]
        ref = subprocess.run(args, stdout=subprocess.PIPE, text=True, env=fk.env, cwd=fk.dir)
        r = fk.run("serve", args, measure=True, cwd=fk.dir)
        check(ref.returncode == 0 and "81dc9bdb52d04dc20036dbd8313ed055:1234" in ref.stdout,
              "hashcat cracks the hash without fikit")
        check(r.returncode == 0 and r.stdout == ref.stdout, "hashcat prints the same under fikit-launch --measure")
        st = fk.tool("profile", "show", "-c", fk.config, "serve")
        check(st.returncode == 0 and "kernel" in st.stdout and "m00000" in st.stdout,
              "hashcat's kernels were identified by name and measured")
    else:
        print("skip: hashcat is not installed (apt-get install hashcat)")
