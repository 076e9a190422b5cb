#include "core/collective.h"

#include <string.h>
#include <strings.h>

bool fikit_collective_kernel(const char *name)
{
    if (!name)
        return false;
    for (const char *p = name; *p; p++)
        if (strncasecmp(p, "nccl", 4) == 0)
            return true;
    return false;
}

bool fikit_collective_library(const char *path)
{
    if (!path)
        return false;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "libnccl", 7) == 0 || strncmp(base, "librccl", 7) == 0;
}

void fikit_collective_admit(const struct fikit_view *v, uint64_t now, uint64_t dur_ns, bool collective,
                            struct fikit_admit *out)
{
    fikit_admit(v, now, dur_ns, out);
    if (!collective)
        return;
    /* Never confined to part of the SMs: a collective's blocks wait for
     * their peers, and on fewer SMs its peers on other devices would. */
    out->sm_pct = 0;
    if (out->kind == FIKIT_ADMIT_GO || out->kind == FIKIT_ADMIT_FILL)
        return;
    /* Its peers on other devices may already wait in it: never make them
     * wait longer. The rooms stay, for the record. */
    out->kind = FIKIT_ADMIT_GO;
    out->until_ns = 0;
}
