"""The HIP backend against the installed libamdhip64 on a machine with no AMD
GPU (what CI has). It checks that:

  1. fikit resolves the real entry points of the installed runtime: every
     hooked name this libamdhip64 exports is found in it (never fikit's own
     wrapper), every one it lacks is reported missing and is not an error;
  2. every hooked entry point, reached through the program's link and through
     dlopen + dlsym of libamdhip64, is intercepted (dlsym answers fikit's
     wrapper) and passes the call through unchanged when the runtime reports
     no device: the same return code, error name, message and error state;
  3. an ordinary hipcc-built HIP program (legacy and per-thread default
     stream) fails under fikit-launch exactly as without it: same stdout,
     stderr and exit status, with fikitd running or not;
  4. fikitd saw no HIP device and no launch, and a program that never uses
     HIP does not get libamdhip64 loaded by fikit.

With an AMD GPU present the programs say so and this test is skipped (77):
the conformance suite (tests/conformance/hip) is the test for that machine."""
import ctypes
import os
import re
import subprocess
import sys

from harness import BUILD, Fikit, check, fail

HIP = os.path.join(BUILD, "tests", "hip")
LIBFIKIT = os.path.join(BUILD, "interpose", "libfikit.so")

# Every entry point libfikit.so hooks for HIP (backends/hip/hip_hooks.c).
HOOKED = [
    "hipLaunchKernel", "hipLaunchKernel_spt", "hipExtLaunchKernel",
    "hipLaunchCooperativeKernel", "hipLaunchCooperativeKernel_spt",
    "hipLaunchCooperativeKernelMultiDevice", "hipExtLaunchMultiKernelMultiDevice",
    "hipModuleLaunchKernel", "hipModuleLaunchCooperativeKernel",
    "hipModuleLaunchCooperativeKernelMultiDevice",
    "hipExtModuleLaunchKernel",
    "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j",
    "hipHccModuleLaunchKernel",
    "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_",
    "hipLaunchKernelExC", "hipDrvLaunchKernelEx",
    "hipLaunchByPtr", "hipConfigureCall",
    "hipGraphLaunch", "hipGraphLaunch_spt",
    "hipGetProcAddress", "hipGetProcAddress_spt", "hipGetDriverEntryPoint", "hipGetDriverEntryPoint_spt",
    "hipModuleUnload", "hipLibraryUnload",
    "hipStreamBeginCapture", "hipStreamBeginCapture_spt", "hipStreamBeginCaptureToGraph",
    "hipStreamEndCapture", "hipStreamEndCapture_spt",
    "hipStreamSynchronize", "hipStreamSynchronize_spt", "hipDeviceSynchronize", "hipEventSynchronize",
]
# Every ROCm with graphs (4.3 on) has these.
CORE = ["hipLaunchKernel", "hipModuleLaunchKernel", "hipLaunchCooperativeKernel", "hipGraphLaunch",
        "hipStreamBeginCapture", "hipStreamEndCapture", "hipModuleUnload", "hipStreamSynchronize",
        "hipDeviceSynchronize", "hipEventSynchronize"]
SKIPPED = 77


def plain(env, argv):
    """The program without fikit."""
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def skip_if_device(r):
    if r.returncode == SKIPPED:
        print(f"skip: {r.stdout.strip().splitlines()[-1]}")
        sys.exit(SKIPPED)


def without_where(out):
    return [l for l in out.splitlines() if not l.startswith("where: ")]


def where(out):
    return dict(re.findall(r"^where: (\S+): (\S+)$", out, re.M))


with Fikit(tasks=(("nodev", 0), ("low", 9))) as fk:
    text = open(fk.config).read().replace("backend = opencl", "backend = hip")
    open(fk.config, "w").write(text)
    fk.start("--trace")
    ref_env = dict(fk.env)  # no fikit: the reference runs

    linked = os.path.join(HIP, "hip_paths_linked")
    dlopened = os.path.join(HIP, "hip_paths_dlopen")
    ref = plain(ref_env, [linked])
    skip_if_device(ref)
    check(ref.returncode == 1 and "hipGetDeviceCount: 100 hipErrorNoDevice" in ref.stdout,
          "without fikit, the runtime reports no device (hipErrorNoDevice)")

    # 1. The real entry points of the installed runtime.
    fk.env["FIKIT_LOG"] = "debug"
    r = fk.run("nodev", [linked])
    del fk.env["FIKIT_LOG"]
    m = re.search(r"debug: hip: runtime (\S+)$", r.stderr, re.M)
    if not m:
        fail(f"fikit did not report which HIP runtime it resolved: {r.stderr[-2000:]}")
    runtime = m.group(1)
    check("libamdhip64" in os.path.basename(runtime), f"fikit found the program's runtime: {runtime}")
    lib = ctypes.CDLL(runtime)

    def exports(name):
        try:
            lib[name]
            return True
        except AttributeError:
            return False

    reported = dict(re.findall(r"debug: hip: entry point (\S+): (.*)$", r.stderr, re.M))
    check(sorted(reported) == sorted(HOOKED),
          f"fikit reported on each of the {len(HOOKED)} hooked HIP entry points")
    have, lack = [], []
    for name in HOOKED:
        said = reported.get(name, "")
        if exports(name):
            have.append(name)
            got = re.match(r"real in (\S+)$", said)
            if not got or os.path.realpath(got.group(1)) != os.path.realpath(runtime):
                fail(f"{name}: exported by {runtime}, but fikit resolved it as: {said!r}")
        else:
            lack.append(name)
            if not said.startswith("not exported by this runtime (not an error)"):
                fail(f"{name}: not in {runtime}, but fikit said: {said!r}")
    check(True, f"each exported one resolves to {os.path.basename(runtime)} itself: {', '.join(have)}")
    check(True, f"each missing one is reported, not an error: {', '.join(lack) or 'none'}")
    check(all(c in have for c in CORE), f"the core entry points are all there: {', '.join(CORE)}")
    check(not re.search(r"warning|error:", r.stderr.replace("Error", "")),
          "no warning or error from fikit about the runtime")

    # 2. Every entry point, through the link and through dlopen + dlsym.
    for prog in (linked, dlopened):
        name = os.path.basename(prog)
        ref = plain(ref_env, [prog])
        skip_if_device(ref)
        r = fk.run("nodev", [prog])
        check(r.returncode == ref.returncode and r.stderr == ref.stderr,
              f"{name}: same exit status ({r.returncode}) and stderr under fikit-launch")
        a, b = without_where(ref.stdout), without_where(r.stdout)
        if a != b:
            diff = [f"-{x}\n+{y}" for x, y in zip(a, b) if x != y][:5]
            fail(f"{name}: results differ under fikit:\n" + "\n".join(diff))
        calls = [l for l in a if re.match(r"^(direct )?\S+: -?\d+ ", l)]
        check(len(calls) >= len(have), f"{name}: {len(calls)} calls returned the same code, error name, "
              "message and error state as without fikit")
        w0, w1 = where(ref.stdout), where(r.stdout)
        for sym in HOOKED:
            if sym not in have:
                if w0.get(sym) != "absent" or w1.get(sym) != "absent":
                    fail(f"{name}: dlsym of {sym} (not in this runtime): {w0.get(sym)} without fikit, "
                         f"{w1.get(sym)} with it; expected absent in both")
            elif w0.get(sym, "").startswith("libamdhip64") and w1.get(sym) == "libfikit.so":
                continue
            elif sym.startswith("_") and w1.get(sym, "").startswith("libamdhip64"):
                # interpose/hooks.c answers dlsym only for names beginning with
                # c or h: the C++-mangled ROCm 5 names are intercepted when
                # linked, not when looked up with dlsym.
                print(f"note: {name}: dlsym({sym[:28]}...) is not answered with fikit's wrapper")
            else:
                fail(f"{name}: dlsym of {sym}: {w0.get(sym)} without fikit, {w1.get(sym)} with it")
        for sym in ("hipGetDevice",):
            if not (w0.get(sym, "").startswith("libamdhip64") and w1.get(sym, "").startswith("libamdhip64")):
                fail(f"{name}: {sym} is not hooked, yet dlsym gave {w1.get(sym)} under fikit")
        if prog == linked:
            refs = {k: v for k, v in w1.items() if k.startswith("&")}
            check(refs and all(v == "libfikit.so" for v in refs.values()),
                  f"{name}: the program's own references resolve to fikit: {refs}")
        check(True, f"{name}: dlsym answers fikit's wrapper for each hooked name the runtime has, "
              "nothing for the names it lacks, the runtime's own for the rest")

    # 3. An ordinary HIP program, built with hipcc.
    for prog in ("hip_nodevice_prog", "hip_nodevice_prog_spt"):
        path = os.path.join(HIP, prog)
        if not os.path.exists(path):
            print(f"skip: {prog} was not built (no hipcc)")
            continue
        ref = plain(ref_env, [path])
        skip_if_device(ref)
        check(ref.returncode == 3 and "hipErrorNoDevice" in ref.stdout and ref.stderr,
              f"{prog}: fails without fikit: exit {ref.returncode}, {ref.stderr.strip()!r}")
        for how, argv in (("priority 0", fk.cmd("nodev", [path])),
                          ("priority 0, --measure", fk.cmd("nodev", [path], measure=True)),
                          ("priority 9", fk.cmd("low", [path]))):
            r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=fk.env)
            if (r.returncode, r.stdout, r.stderr) != (ref.returncode, ref.stdout, ref.stderr):
                fail(f"{prog} ({how}) under fikit: exit {r.returncode}, stdout {r.stdout!r}, "
                     f"stderr {r.stderr!r}; without: exit {ref.returncode}, stdout {ref.stdout!r}, "
                     f"stderr {ref.stderr!r}")
        check(True, f"{prog}: fails exactly as without fikit (same codes, messages, exit status "
              f"{ref.returncode}) at priority 0, measuring, and at priority 9")

    # 4. fikitd saw nothing: no device was ever named, so nothing registered.
    status = fk.status()
    check(re.search(r", 0 devices$", status, re.M) and "hip:" not in status,
          "fikitd has no device: no program registered one (no device could be named)")
    launches = [e for e in fk.trace()["traceEvents"] if e.get("cat") == "launch"]
    check(not launches, "fikitd's trace holds no launch")

    r = fk.run("nodev", ["cat", "/proc/self/maps"])
    check(r.returncode == 0 and "libfikit.so" in r.stdout and "libamdhip64" not in r.stdout,
          "a program that never uses HIP runs with libfikit.so and without libamdhip64")
    dyn = subprocess.run(["readelf", "-d", LIBFIKIT], stdout=subprocess.PIPE, text=True)
    if dyn.returncode == 0:
        check("libamdhip64" not in dyn.stdout, "libfikit.so does not link libamdhip64")

    # 3, again with no fikitd: still the same failure, and no word from fikit.
    fk.stop()
    path = os.path.join(HIP, "hip_nodevice_prog")
    if os.path.exists(path):
        ref = plain(ref_env, [path])
        r = fk.run("nodev", [path])
        check((r.returncode, r.stdout, r.stderr) == (ref.returncode, ref.stdout, ref.stderr),
              "with no fikitd running, hip_nodevice_prog still fails exactly as without fikit")
