"""The man pages (tools/gen-man.py, built as the man target): each renders with no roff
warning; each names every option of its program's --help (and fikit(1) every command's
options); fikit.ini(5) names every key that `fikit config` prints; and installed under a
prefix, `man -M PREFIX/share/man fikitd` finds and shows fikitd(8)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

BUILD = os.path.abspath(os.environ.get("FIKIT_BUILD", "build"))
MAN = os.path.join(BUILD, "man")
TOOLS = os.path.join(BUILD, "tools")


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg}", flush=True)


def helptext(*argv):
    return subprocess.run(list(argv) + ["--help"], stdout=subprocess.PIPE, text=True, check=True).stdout


def rendered(page):
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-P-cbou", os.path.join(MAN, page)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
    check(r.stderr.strip() == "", f"{page} renders with no roff warning{': ' + r.stderr[:200] if r.stderr else ''}")
    # Undo the hyphenation at line ends so that option names are whole.
    return re.sub(r"[\u2010-]\n\s*", "-", r.stdout)


def options(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", text))


if shutil.which("groff") is None:
    print("skip: groff is not installed (apt-get install groff-base)")
    sys.exit(0)

for page, prog, section in (("fikitd.8", "fikitd", 8), ("fikit-launch.1", "fikit-launch", 1), ("fikit.1", "fikit", 1)):
    text = rendered(page)
    want = options(helptext(os.path.join(TOOLS, prog)))
    if prog == "fikit":
        for cmd in re.findall(r"^  ([a-z]+) ", helptext(os.path.join(TOOLS, prog)), re.M):
            want |= options(helptext(os.path.join(TOOLS, prog), cmd))
            check(f"fikit {cmd}" in text, f"fikit(1) has a part for 'fikit {cmd}'")
    missing = sorted(want - options(text))
    check(want and not missing, f"{page} names the {len(want)} options of {prog}'s --help"
          + (f"; missing {missing}" if missing else ""))
    check(re.search(r"^SEE ALSO", text, re.M) is not None, f"{page} points to the other pages")

text = rendered("fikit.ini.5")
empty = tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False)
empty.close()
cfg = subprocess.run([os.path.join(TOOLS, "fikit"), "config", "-c", empty.name], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
os.unlink(empty.name)
keys = set(re.findall(r"^([a-z_]+) = ", cfg.stdout, re.M))
missing = sorted(k for k in keys if not re.search(rf"\b{k} = ", text))
check(len(keys) > 20 and not missing, f"fikit.ini(5) documents the {len(keys)} keys fikit config prints"
      + (f"; missing {missing}" if missing else ""))

if shutil.which("man") is None:
    print("skip: man is not installed (apt-get install man-db)")
    sys.exit(0)
prefix = tempfile.mkdtemp(prefix="fikit-man-")
try:
    r = subprocess.run(["cmake", "--install", BUILD, "--prefix", prefix, "--component", "Unspecified"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(r.returncode == 0, "installed under a scratch prefix")
    mandir = os.path.join(prefix, "share", "man")
    for sec, page in (("man8", "fikitd.8"), ("man1", "fikit.1"), ("man1", "fikit-launch.1"), ("man5", "fikit.ini.5")):
        check(os.path.exists(os.path.join(mandir, sec, page)), f"{sec}/{page} installed")
    r = subprocess.run(["man", "-M", mandir, "-P", "cat", "fikitd"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=dict(os.environ, MANWIDTH="80"))
    check(r.returncode == 0 and "fikitd - the fikit GPU scheduler daemon" in r.stdout,
          f"man -M PREFIX/share/man fikitd shows fikitd(8){': ' + r.stderr.strip() if r.returncode else ''}")
finally:
    shutil.rmtree(prefix, ignore_errors=True)
