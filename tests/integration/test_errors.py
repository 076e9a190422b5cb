"""Users' mistakes get errors that name the file, line, key and value."""
import os
import subprocess
from harness import FIKIT, FIKITD, LAUNCH, SERVICE, SOURCE, Fikit, check

with Fikit() as fk:
    bad = os.path.join(fk.dir, "bad.ini")
    with open(bad, "w") as f:
        f.write("[fikit]\nbackend = opencl\n[scheduler]\npolicy = fastest\n")
    want = f"{bad}:4: [scheduler] policy = fastest: unknown value (accepted: fill, strict, passthrough)"
    for name, cmd in (("fikit-launch", [LAUNCH, "-c", bad, "--", "true"]),
                      ("fikitd", [FIKITD, "-f", "-c", bad]),
                      ("fikitd --check-config", [FIKITD, "--check-config", "-c", bad]),
                      ("fikit config", [FIKIT, "config", "-c", bad]),
                      ("fikit status", [FIKIT, "status", "-c", bad])):
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=fk.env)
        check(r.returncode != 0 and want in r.stderr, f"{name} rejects a malformed fikit.ini: {r.stderr.strip()}")

    # The program sees a malformed FIKIT_CONFIG too: it runs unscheduled after one line.
    env = dict(fk.env, OPENCL_LAYERS=os.path.join(os.path.dirname(FIKIT), "..", "interpose", "libfikit.so"),
               FIKIT_CONFIG=bad)
    r = subprocess.run([SERVICE, "-n", "1", "-r", "0", "-w", "10", "-k", "1"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env)
    lines = [l for l in r.stderr.splitlines() if "fikit" in l]
    check(r.returncode == 0 and len(lines) == 1 and "policy = fastest" in lines[0] and "passthrough" in lines[0],
          f"a program given a malformed fikit.ini runs unscheduled after one line: {lines}")

    r = fk.run("nosuchtask", ["true"])
    check(r.returncode == 125 and f"task 'nosuchtask' is not in {fk.config} (known tasks: serve, batch)"
          in r.stderr, f"unknown task: {r.stderr.strip()}")
    r = fk.run("serve", ["/nonexistent/program"])
    check(r.returncode == 127 and "/nonexistent/program: command not found" in r.stderr,
          f"missing program: {r.stderr.strip()}")
    r = fk.run("serve", ["sh", "-c", "exit 3"])
    check(r.returncode == 3, "the program's exit status is kept")
    r = fk.run("serve", ["sh", "-c", "kill -TERM $$"])
    check(r.returncode == -15, "a program killed by a signal is seen as killed by it")

    fk.write_config("fill", tasks=(("serve", 0),))
    with open(fk.config, "a") as f:
        f.write("[client]\non_daemon_missing = fail\n")
    r = fk.run("serve", ["true"])
    check(r.returncode == 125 and f"cannot reach fikitd at {fk.socket}" in r.stderr and "fikitd -c" in r.stderr,
          f"on_daemon_missing = fail: {r.stderr.strip()}")
    fk.write_config("fill")
    r = fk.run("serve", [SERVICE, "-n", "2", "-r", "0", "-w", "10", "-k", "1"])
    lines = [l for l in r.stderr.splitlines() if "fikit" in l]
    check(r.returncode == 0 and len(lines) == 1 and f"cannot reach fikitd at {fk.socket}" in lines[0],
          f"no daemon: the program runs after one line: {lines}")
    for cmd in ([FIKITD, "--help"], [LAUNCH, "--help"], [FIKIT, "--help"], [FIKIT, "status", "--help"],
                [FIKIT, "trace", "--help"], [FIKIT, "profile", "--help"], [FIKIT, "replay", "--help"],
                [FIKIT, "config", "--help"], [SERVICE, "--help"]):
        r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        check(r.returncode == 0 and "Usage:" in r.stdout, f"{' '.join(os.path.basename(c) for c in cmd)} has usage text")

    # fikit config prints every key of every section, [limits] and
    # socket_group included (it left them out): each key the documented
    # example sets appears in what it prints.
    cfg = os.path.join(fk.dir, "every.ini")
    with open(cfg, "w") as f:
        f.write("[daemon]\nsocket_group = nogroup\n[limits]\ndefault = 3\nuser.root = 0\ngroup.students = 5\n")
    r = subprocess.run([FIKIT, "config", "-c", cfg], stdout=subprocess.PIPE, text=True, env=fk.env)
    keys = set()
    section = ""
    for line in open(os.path.join(SOURCE, "conf", "fikit.ini")):
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif " = " in line and not line.startswith(";") and not section.startswith("task.") and section != "limits":
            keys.add(line.split(" = ")[0])
    missing = [k for k in sorted(keys) if k not in r.stdout]
    check(r.returncode == 0 and len(keys) > 15 and not missing, f"fikit config prints every key (missing: {missing})")
    check("\nsocket_group = nogroup\n" in r.stdout and "\n[limits]\ndefault = 3\n" in r.stdout and
          "\nuser.root = 0\n" in r.stdout and "\ngroup.students = 5\n" in r.stdout,
          "fikit config prints socket_group and every [limits] rule")

# Two programs under one task name learn into one profile, each saving over
# the other's records: the second is told, and fikitd's log names both
# (nothing said it before).
import time
from harness import BATCH
with Fikit() as fk:
    fk.start()
    first = fk.popen("batch", [BATCH, "-t", "60", "-w", "100"])
    deadline = time.time() + 60
    while " batch " not in fk.status() and time.time() < deadline and first.poll() is None:
        time.sleep(0.02)
    check(" batch " in fk.status(), "the first program of task batch registered")
    second = fk.run("batch", [BATCH, "-c", "1", "-w", "100"])
    first.terminate()
    first.communicate(timeout=60)
    told = [l for l in second.stderr.splitlines() if "also runs in pid" in l]
    check(second.returncode == 0 and len(told) == 1 and f"task batch also runs in pid {first.pid}" in told[0]
          and "one profile" in told[0], f"the second program of task batch is told: {second.stderr.strip()}")
    log = open(fk.log).read()
    check(f"task batch runs in pid {first.pid} and pid " in log, "fikitd's log names both programs")
