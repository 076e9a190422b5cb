"""bash and zsh completion (packaging/completion/fikit.bash and _fikit): fikit's
commands, a command's options, fikit-launch's and fikitd's, and the values of options
that take a known set, all read from the programs' own --help at completion time. zsh's
are what its real completion system offers at a prompt (tests/unit/zsh_complete.zsh)."""
import os
import shutil
import subprocess
import sys

BUILD = os.path.abspath(os.environ.get("FIKIT_BUILD", "build"))
SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def complete(func, *words):
    script = (f"source {SRC}/packaging/completion/fikit.bash; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
              f"COMP_CWORD={len(words) - 1}; {func}; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    r = subprocess.run(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=dict(os.environ, PATH=os.path.join(BUILD, "tools") + ":" + os.environ["PATH"]))
    if r.returncode:
        print(f"FAIL: {func} {words}: {r.stderr}")
        sys.exit(1)
    return set(r.stdout.split())


def check(cond, msg):
    if not cond:
        print(f"FAIL: {msg}")
        sys.exit(1)
    print(f"ok: {msg}")


if shutil.which("bash") is None:
    print("skip: no bash")
    sys.exit(0)
got = complete("_fikit", "fikit", "")
check({"status", "stop", "sim", "config", "calibrate", "trace", "profile", "replay"} <= got,
      f"fikit's commands: {sorted(got)}")
got = complete("_fikit", "fikit", "status", "--")
check({"--json", "--watch", "--count", "--config", "--socket"} <= got, f"fikit status's options: {sorted(got)}")
got = complete("_fikit_launch", "fikit-launch", "--")
check({"--task", "--priority", "--measure", "--backend"} <= got, f"fikit-launch's options: {sorted(got)}")
got = complete("_fikit_launch", "fikit-launch", "-b", "")
check(got == {"auto", "cuda", "hip", "opencl"}, f"fikit-launch --backend's values: {sorted(got)}")
got = complete("_fikitd", "fikitd", "--l")
check(got == {"--log-level"}, f"fikitd's options: {sorted(got)}")


def zsh_complete(line):
    r = subprocess.run(["zsh", "-f", os.path.join(SRC, "tests", "unit", "zsh_complete.zsh"),
                        os.path.join(SRC, "packaging", "completion"), line], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60,
                       env=dict(os.environ, PATH=os.path.join(BUILD, "tools") + ":" + os.environ["PATH"]))
    if r.returncode:
        print(f"FAIL: zsh: {line!r}: {r.stderr}")
        sys.exit(1)
    return {w.strip() for w in r.stdout.split("\n") if w.strip()}


if shutil.which("zsh") is None:
    print("skip: no zsh (scripts/install-deps installs it)")
    sys.exit(0)
got = zsh_complete("fikit ")
check({"status", "stop", "sim", "config", "calibrate", "trace", "profile", "replay"} <= got,
      f"zsh: fikit's commands: {sorted(got)}")
got = zsh_complete("fikit status --")
check({"--json", "--watch", "--count", "--config", "--socket"} <= got, f"zsh: fikit status's options: {sorted(got)}")
got = zsh_complete("fikit-launch --")
check({"--task", "--priority", "--measure", "--backend", "--"} <= got, f"zsh: fikit-launch's options: {sorted(got)}")
got = zsh_complete("fikit-launch -b ")
check(got == {"auto", "cuda", "hip", "opencl"}, f"zsh: fikit-launch --backend's values: {sorted(got)}")
got = zsh_complete("fikitd --l")
check(got == {"--log-level"}, f"zsh: fikitd's options: {sorted(got)}")
got = zsh_complete("fikit-launch -p 0 -- ech")
check("echo" in got, f"zsh: after --, the program's name as a command: {sorted(got)}")
