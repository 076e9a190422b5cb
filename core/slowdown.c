#include "core/slowdown.h"

#include <errno.h>
#include <stdlib.h>

static size_t home(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

int fikit_slowdown_init(struct fikit_slowdown *s, const struct fikit_measure_store *st)
{
    *s = (struct fikit_slowdown){0};
    size_t n = 0;
    for (size_t i = 0; i < st->kernels.cap; i++) {
        const struct fikit_kernel_stats *ks = st->kernels.slots[i].value;
        n += ks && ks->duration.count && ks->key;
    }
    if (!n)
        return 0;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    s->keys = calloc(cap, sizeof *s->keys);
    s->ref_ns = calloc(cap, sizeof *s->ref_ns);
    if (!s->keys || !s->ref_ns) {
        fikit_slowdown_free(s);
        return -ENOMEM;
    }
    s->cap = cap;
    for (size_t i = 0; i < st->kernels.cap; i++) {
        const struct fikit_kernel_stats *ks = st->kernels.slots[i].value;
        if (!ks || !ks->duration.count || !ks->key)
            continue;
        size_t j = home(ks->key, cap);
        while (s->keys[j])
            j = (j + 1) & (cap - 1);
        s->keys[j] = ks->key;
        s->ref_ns[j] = fikit_stat_quantile(&ks->duration, 0.5);
    }
    return 0;
}

void fikit_slowdown_free(struct fikit_slowdown *s)
{
    free(s->keys);
    free(s->ref_ns);
    *s = (struct fikit_slowdown){0};
}

uint32_t fikit_slowdown_add(struct fikit_slowdown *s, uint64_t key, uint64_t dur_ns)
{
    if (!s->cap || !key)
        return 0;
    size_t j = home(key, s->cap);
    while (s->keys[j] && s->keys[j] != key)
        j = (j + 1) & (s->cap - 1);
    if (!s->keys[j] || !s->ref_ns[j])
        return 0;
    s->measured = s->measured * FIKIT_SLOWDOWN_DECAY + (double)dur_ns;
    s->reference = s->reference * FIKIT_SLOWDOWN_DECAY + (double)s->ref_ns[j];
    double r = s->measured / s->reference * 1e6;
    return r >= 4e9 ? 4000000000u : r < 1 ? 1 : (uint32_t)r;
}
