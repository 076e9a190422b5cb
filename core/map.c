#include "core/map.h"

#include "core/hash.h"

#include <errno.h>
#include <stdlib.h>

void fikit_map_init(struct fikit_map *m)
{
    m->slots = NULL;
    m->cap = 0;
    m->count = 0;
}

void fikit_map_destroy(struct fikit_map *m)
{
    free(m->slots);
    fikit_map_init(m);
}

static size_t find_slot(const struct fikit_map_entry *slots, size_t cap, uint64_t a, uint64_t b)
{
    size_t mask = cap - 1;
    size_t i = (size_t)fikit_mix64(a, b) & mask;
    while (slots[i].value && !(slots[i].a == a && slots[i].b == b))
        i = (i + 1) & mask;
    return i;
}

void *fikit_map_get(const struct fikit_map *m, uint64_t a, uint64_t b)
{
    if (m->cap == 0)
        return NULL;
    return m->slots[find_slot(m->slots, m->cap, a, b)].value;
}

static int grow(struct fikit_map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 16;
    struct fikit_map_entry *ns = calloc(ncap, sizeof *ns);
    if (!ns)
        return -ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].value)
            ns[find_slot(ns, ncap, m->slots[i].a, m->slots[i].b)] = m->slots[i];
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return 0;
}

int fikit_map_put(struct fikit_map *m, uint64_t a, uint64_t b, void *value)
{
    /* Keep the load under 3/4 so probes stay short. */
    if ((m->count + 1) * 4 > m->cap * 3) {
        int rc = grow(m);
        if (rc)
            return rc;
    }
    size_t i = find_slot(m->slots, m->cap, a, b);
    if (!m->slots[i].value)
        m->count++;
    m->slots[i] = (struct fikit_map_entry){.a = a, .b = b, .value = value};
    return 0;
}
