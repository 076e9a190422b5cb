"""The .deb and the .rpm (CPack, as `make package` makes them for /usr): made from this build tree,
unpacked into a scratch root (dpkg -x, so the machine stays untouched), it holds the
programs, libfikit.so, the systemd units naming fikitd where the package puts it (not
where the build tree was configured to), the group's sysusers file, the man pages,
the example configuration and the docs, a postinst that makes the group; `man`
finds fikitd(8) in it, and its fikitd checks its own example configuration. The .rpm,
where rpmbuild is installed, unpacked the same way (rpm2cpio | cpio): the same files,
a %post that makes the group, no claim on the folders other packages own."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from harness import BUILD, check, fail

SKIP = 77
for tool in ("cpack", "dpkg-deb", "dpkg-shlibdeps"):
    if shutil.which(tool) is None:
        print(f"skip: {tool} is not installed (cmake, dpkg-dev)")
        sys.exit(SKIP)


def make_package(generator, suffix):
    """cpack's package of this build tree for /usr, in tmp: its path."""
    r = subprocess.run(["cpack", "-G", generator, "-B", tmp, "-D", "CPACK_PACKAGING_INSTALL_PREFIX=/usr",
                        "--config", os.path.join(BUILD, "CPackConfig.cmake")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=BUILD)
    print(r.stdout[-2000:], flush=True)
    made = [f for f in os.listdir(tmp) if f.endswith(suffix)]
    check(r.returncode == 0 and len(made) == 1, f"cpack made one {suffix}: {made}")
    return os.path.join(tmp, made[0])


tmp = tempfile.mkdtemp(prefix="fikit-package-")
try:
    deb = make_package("DEB", ".deb")
    info = subprocess.run(["dpkg-deb", "--info", deb], stdout=subprocess.PIPE, text=True, check=True).stdout
    check(re.search(r"^ Package: fikit$", info, re.M) and "postinst" in info,
          "the package is fikit, with a postinst")
    depends = re.search(r"^ Depends: (.*)$", info, re.M)
    check(depends and "libinih" in depends.group(1), f"it depends on what it links: {depends and depends.group(1)}")
    root = os.path.join(tmp, "root")
    subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
    want = ["usr/sbin/fikitd", "usr/bin/fikit", "usr/bin/fikit-launch", "usr/lib/systemd/system/fikitd.service",
            "usr/lib/systemd/system/fikitd.socket", "usr/lib/sysusers.d/fikit.conf", "usr/share/man/man8/fikitd.8",
            "usr/share/man/man1/fikit.1", "usr/share/man/man5/fikit.ini.5", "usr/share/fikit/fikit.ini.example",
            "usr/share/doc/fikit/DESIGN.md", "usr/share/bash-completion/completions/fikit",
            "usr/share/zsh/vendor-completions/_fikit"]
    # The library directory is the platform's (lib, lib64, lib/<triplet>).
    libs = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(root, "usr")) for f in fs if f == "libfikit.so"]
    missing = [w for w in want if not os.path.exists(os.path.join(root, w))]
    check(not missing and libs, f"it holds the programs, libfikit.so, units, group, man pages, example "
                                f"configuration and docs{': missing ' + str(missing) if missing else ''}")
    unit = open(os.path.join(root, "usr/lib/systemd/system/fikitd.service")).read()
    check("ExecStart=/usr/sbin/fikitd --foreground" in unit,
          "the unit starts fikitd where the package puts it (/usr/sbin), not the build tree's prefix")
    if shutil.which("man"):
        m = subprocess.run(["man", "-M", os.path.join(root, "usr/share/man"), "-P", "cat", "fikitd"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, MANWIDTH="80"))
        check(m.returncode == 0 and "fikitd - the fikit GPU scheduler daemon" in m.stdout,
              "man finds fikitd(8) in the package")
    c = subprocess.run([os.path.join(root, "usr/sbin/fikitd"), "--check-config", "-c",
                        os.path.join(root, "usr/share/fikit/fikit.ini.example")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(c.returncode == 0, f"its fikitd checks its example configuration: {c.stdout.strip().splitlines()[-1:]}")

    if not all(shutil.which(t) for t in ("rpmbuild", "rpm", "rpm2cpio", "cpio")):
        print("skip: the .rpm: rpmbuild, rpm2cpio or cpio is not installed (scripts/install-deps installs them)")
        sys.exit(0)
    rpm = make_package("RPM", ".rpm")
    q = lambda *a: subprocess.run(["rpm", "-qp", *a, rpm], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                  text=True, check=True).stdout
    check(q("--qf", "%{NAME}").strip() == "fikit" and "groupadd --system fikit" in q("--scripts"),
          "the .rpm is fikit, with a %post that makes the group")
    listed = set(q("--list").split())
    owned = listed & {"/usr/sbin", "/usr/libexec", "/usr/lib/systemd", "/usr/lib/systemd/system", "/usr/share/man",
                      "/usr/share/bash-completion", "/usr/share/zsh", "/usr/share/doc"}
    check(not owned, f"it claims none of the folders other packages own: {sorted(owned)}")
    check(re.search(r"^libinih\.so\.\d+\(\)\(64bit\)$", q("--requires"), re.M), "it requires what it links (libinih)")
    root = os.path.join(tmp, "rpmroot")
    os.makedirs(root)
    subprocess.run(f"rpm2cpio '{rpm}' | cpio -idm --quiet", shell=True, cwd=root, check=True)
    missing = [w for w in want if not os.path.exists(os.path.join(root, w))]
    check(not missing, f"the .rpm holds the same files{': missing ' + str(missing) if missing else ''}")
    c = subprocess.run([os.path.join(root, "usr/sbin/fikitd"), "--check-config", "-c",
                        os.path.join(root, "usr/share/fikit/fikit.ini.example")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    check(c.returncode == 0, f"the .rpm's fikitd checks its example configuration: {c.stdout.strip().splitlines()[-1:]}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
