/* The replay tool's timeline reader and the policy behind it: any timeline is
 * parsed or rejected with file:line, and a small accepted one replays. */
#include "conf/config.h"
#include "core/replay.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return 0;
    struct fikit_replay_launch *l = NULL;
    size_t n = 0;
    struct fikit_err err;
    int rc = fikit_replay_parse(f, "fuzz", &l, &n, &err);
    fclose(f);
    if (rc != 0) {
        if (strncmp(err.msg, "fuzz", 4) != 0)
            abort();
        return 0;
    }
    /* The replay wakes at least every recheck period (1 ms) while anything
     * is held, so its run time grows with the simulated span: keep that to
     * 10 s here; the parser accepts up to 1e12 us. */
    uint64_t last = 0, work = 0;
    for (size_t i = 0; i < n; i++) {
        last = l[i].t_ns > last ? l[i].t_ns : last;
        work += l[i].dur_ns;
    }
    uint64_t span = last + work; /* an upper bound on the simulated end */
    if (n <= 64 && span <= 10ull * 1000 * 1000 * 1000) {
        struct fikit_sched_params p;
        fikit_sched_params_default(&p);
        p.substrate_cost_ns = 20000;
        struct fikit_replay_result res;
        fikit_replay_run(l, n, &p, NULL, &res, &err);
    }
    free(l);
    return 0;
}
