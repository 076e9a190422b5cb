"""scripts/check-layering: this tree passes it, and it finds each kind of fault
in a scratch tree made to have it (an include up a layer, one between siblings,
headers in a cycle, two modules whose .c files include each other's header)."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from source_check import SRC, check, checker, tree  # noqa: E402

run = checker("check-layering")


rc, out = run(SRC)
check(rc == 0, "the source tree keeps its layers", out)

rc, out = run(tree({"core/a.c": '#include "core/a.h"\n#include "conf/config.h"\n', "core/a.h": "",
                    "conf/config.h": ""}))
check(rc == 1 and "core/a.c:2: core/ (layer 0) includes conf/config.h" in out, "an include up a layer", out)

rc, out = run(tree({"sim/run.c": '#include "interpose/gate.h"\n', "interpose/gate.h": ""}))
check(rc == 1 and "sim/run.c:1: sim/ includes interpose/gate.h: interpose/ is its sibling" in out,
      "an include between two folders of one layer", out)

rc, out = run(tree({"core/a.h": '#include "core/b.h"\n', "core/b.h": '\n#include "core/a.h"\n'}))
check(rc == 1 and "an include cycle: core/a.h -> core/b.h -> core/a.h" in out, "headers in a cycle", out)

rc, out = run(tree({"fikitd/metrics.c": '#include "fikitd/server.h"\n', "fikitd/metrics.h": "",
                    "fikitd/server.c": '#include "fikitd/metrics.h"\n', "fikitd/server.h": ""}))
check(rc == 1 and "the two modules need each other" in out and out.count("need each other") == 1,
      "two modules that include each other's header, said once", out)

rc, out = run(tree({"tools/x.c": '#include "core/a.h"\n#include "fikitd/d.h"\n#include <stdio.h>\n',
                    "core/a.h": "", "fikitd/d.h": '#include "conf/c.h"\n', "conf/c.h": ""}))
check(rc == 0, "includes down the layers pass", out)
