"""scripts/check-atomics: this tree keeps one atomics idiom, and a GCC __atomic
builtin outside the files that keep them for what is copied whole is found,
with its file and line."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_check import SRC, check, checker, tree  # noqa: E402

run = checker("check-atomics")


rc, out = run(SRC)
check(rc == 0, "the source tree keeps one atomics idiom", out)

root = tree({
    "core/shm_publish.c": "x = __atomic_load_n(&p->launches, __ATOMIC_RELAXED);\n",
    "core/flag.c": "#include <stdatomic.h>\nstatic _Atomic int a;\nint get(void) { return atomic_load(&a); }\n",
    "fikitd/count.c": "static long n;\nvoid bump(void)\n{\n    __atomic_fetch_add(&n, 1, __ATOMIC_RELAXED);\n}\n",
})
rc, out = run(root)
check(rc != 0 and "fikitd/count.c:4:" in out, "a builtin on a plain counter is found with its file and line", out)
check("shm_publish.c" not in out and "flag.c" not in out, "the seqlock's file and C11 atomics pass", out)
