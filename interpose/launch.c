#include "interpose/launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *fikit_graph_name(struct fikit_graph_names *g, const void *exec)
{
    const char *n = fikit_ptrmap_get(&g->map, exec);
    if (n)
        return n;
    char buf[40];
    snprintf(buf, sizeof buf, "%s-%u", g->prefix, atomic_fetch_add(&g->count, 1) + 1);
    char *copy = strdup(buf);
    if (copy && fikit_ptrmap_put(&g->map, exec, copy) != 0)
        return copy; /* uncached, still named */
    return copy ? copy : g->prefix;
}
