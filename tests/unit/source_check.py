"""What the tests of scripts/check-* share: run a check on a tree, say each
finding, and make scratch trees with the faults to find."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def checker(script):
    """A function of a tree's root: (exit status, output) of scripts/SCRIPT --root ROOT."""
    return lambda root: run(script, root)


def run(script, root):
    r = subprocess.run([sys.executable, os.path.join(SRC, "scripts", script), "--root", root],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def check(cond, msg, out=""):
    if not cond:
        print(f"FAIL: {msg}\n{out}")
        sys.exit(1)
    print(f"ok: {msg}")


def tree(files):
    """A scratch source tree holding files (path: text), removed at exit."""
    root = tempfile.mkdtemp(prefix="fikit-source-check-")
    atexit.register(shutil.rmtree, root, True)
    for path, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)
    return root
