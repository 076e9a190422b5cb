"""The .deb (CPack, as `make package` makes it for /usr): made from this build tree,
unpacked into a scratch root (dpkg -x, so the machine stays untouched), it holds the
programs, libfikit.so, the systemd units naming fikitd where the package puts it (not
where the build tree was configured to), the group's sysusers file, the man pages,
the example configuration and the docs, a postinst that makes the group; `man`
finds fikitd(8) in it, and its fikitd checks its own example configuration."""
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

tmp = tempfile.mkdtemp(prefix="fikit-package-")
try:
    r = subprocess.run(["cpack", "-G", "DEB", "-B", tmp, "-D", "CPACK_PACKAGING_INSTALL_PREFIX=/usr",
                        "--config", os.path.join(BUILD, "CPackConfig.cmake")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=BUILD)
    print(r.stdout[-2000:], flush=True)
    debs = [f for f in os.listdir(tmp) if f.endswith(".deb")]
    check(r.returncode == 0 and len(debs) == 1, f"cpack made one .deb: {debs}")
    deb = os.path.join(tmp, debs[0])
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
            "usr/share/doc/fikit/DESIGN.md"]
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
finally:
    shutil.rmtree(tmp, ignore_errors=True)
