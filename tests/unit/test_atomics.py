"""scripts/check-atomics: this tree keeps one atomics idiom, and a GCC __atomic
builtin outside the files that keep them for what is copied whole is found,
with its file and line."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(SRC, "scripts", "check-atomics")


def run(root):
    r = subprocess.run([sys.executable, CHECK, "--root", root], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    return r.returncode, r.stdout


def check(cond, msg, out=""):
    if not cond:
        print(f"FAIL: {msg}\n{out}")
        sys.exit(1)
    print(f"ok: {msg}")


rc, out = run(SRC)
check(rc == 0, "the source tree keeps one atomics idiom", out)

root = tempfile.mkdtemp(prefix="fikit-atomics-")
atexit.register(shutil.rmtree, root, True)
for path, text in {
    "core/shm_publish.c": "x = __atomic_load_n(&p->launches, __ATOMIC_RELAXED);\n",
    "core/flag.c": "#include <stdatomic.h>\nstatic _Atomic int a;\nint get(void) { return atomic_load(&a); }\n",
    "fikitd/count.c": "static long n;\nvoid bump(void)\n{\n    __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED);\n}\n",
}.items():
    os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
    with open(os.path.join(root, path), "w") as f:
        f.write(text)
rc, out = run(root)
check(rc != 0 and "fikitd/count.c:4:" in out, "a builtin on a plain counter is found with its file and line", out)
check("shm_publish.c" not in out and "flag.c" not in out, "the seqlock's file and C11 atomics pass", out)
