#include "core/measure.h"

#include <errno.h>
#include <stdlib.h>

int fikit_measure_init(struct fikit_measure_store *st)
{
    st->names = fikit_kernel_table_new();
    if (!st->names)
        return -ENOMEM;
    fikit_map_init(&st->kernels);
    fikit_map_init(&st->gaps);
    fikit_map_init(&st->bursts);
    st->inner_gap_max_ns = 0;
    st->between_gaps = 0;
    return 0;
}

void fikit_measure_destroy(struct fikit_measure_store *st)
{
    for (size_t i = 0; i < st->kernels.cap; i++) {
        struct fikit_kernel_stats *ks = st->kernels.slots[i].value;
        if (ks) {
            fikit_stat_destroy(&ks->duration);
            free(ks);
        }
    }
    for (size_t i = 0; i < st->gaps.cap; i++) {
        struct fikit_gap_stats *gs = st->gaps.slots[i].value;
        if (gs) {
            fikit_stat_destroy(&gs->gap);
            free(gs);
        }
    }
    for (size_t i = 0; i < st->bursts.cap; i++) {
        struct fikit_burst_stats *bs = st->bursts.slots[i].value;
        if (bs) {
            fikit_stat_destroy(&bs->len);
            free(bs);
        }
    }
    fikit_map_destroy(&st->kernels);
    fikit_map_destroy(&st->gaps);
    fikit_map_destroy(&st->bursts);
    fikit_kernel_table_free(st->names);
    st->names = NULL;
}

int fikit_measure_add_kernel(struct fikit_measure_store *st, uint64_t key,
                             const struct fikit_kernel_desc *desc)
{
    int rc = fikit_kernel_table_add(st->names, key, desc);
    if (rc)
        return rc;
    if (fikit_map_get(&st->kernels, key, 0))
        return 0;
    struct fikit_kernel_stats *ks = malloc(sizeof *ks);
    if (!ks)
        return -ENOMEM;
    ks->key = key;
    fikit_stat_init(&ks->duration);
    rc = fikit_map_put(&st->kernels, key, 0, ks);
    if (rc)
        free(ks);
    return rc;
}

static struct fikit_kernel_stats *kernel_entry(struct fikit_measure_store *st, uint64_t key)
{
    return fikit_map_get(&st->kernels, key, 0);
}

int fikit_measure_add_duration(struct fikit_measure_store *st, uint64_t key, uint64_t ns)
{
    struct fikit_kernel_stats *ks = kernel_entry(st, key);
    if (!ks)
        return -ENOENT;
    return fikit_stat_add(&ks->duration, ns);
}

int fikit_measure_merge_duration(struct fikit_measure_store *st, uint64_t key,
                                 const struct fikit_stat *s)
{
    struct fikit_kernel_stats *ks = kernel_entry(st, key);
    if (!ks)
        return -ENOENT;
    return fikit_stat_merge(&ks->duration, s);
}

static struct fikit_gap_stats *gap_entry(struct fikit_measure_store *st, uint64_t prev,
                                         uint64_t key, int create)
{
    struct fikit_gap_stats *gs = fikit_map_get(&st->gaps, prev, key);
    if (gs || !create)
        return gs;
    gs = malloc(sizeof *gs);
    if (!gs)
        return NULL;
    gs->prev = prev;
    gs->key = key;
    fikit_stat_init(&gs->gap);
    if (fikit_map_put(&st->gaps, prev, key, gs)) {
        free(gs);
        return NULL;
    }
    return gs;
}

int fikit_measure_add_gap(struct fikit_measure_store *st, uint64_t prev, uint64_t key,
                          uint64_t ns)
{
    struct fikit_gap_stats *gs = gap_entry(st, prev, key, 1);
    if (!gs)
        return -ENOMEM;
    return fikit_stat_add(&gs->gap, ns);
}

int fikit_measure_merge_gap(struct fikit_measure_store *st, uint64_t prev, uint64_t key,
                            const struct fikit_stat *s)
{
    struct fikit_gap_stats *gs = gap_entry(st, prev, key, 1);
    if (!gs)
        return -ENOMEM;
    return fikit_stat_merge(&gs->gap, s);
}

static struct fikit_burst_stats *burst_entry(struct fikit_measure_store *st, uint32_t launches)
{
    if (!launches)
        return NULL;
    struct fikit_burst_stats *bs = fikit_map_get(&st->bursts, launches, 0);
    if (bs)
        return bs;
    bs = malloc(sizeof *bs);
    if (!bs)
        return NULL;
    bs->launches = launches;
    fikit_stat_init(&bs->len);
    if (fikit_map_put(&st->bursts, launches, 0, bs)) {
        free(bs);
        return NULL;
    }
    return bs;
}

int fikit_measure_add_burst(struct fikit_measure_store *st, uint32_t launches, uint64_t ns)
{
    struct fikit_burst_stats *bs = burst_entry(st, launches);
    if (!bs)
        return launches ? -ENOMEM : -EINVAL;
    return fikit_stat_add(&bs->len, ns);
}

int fikit_measure_merge_burst(struct fikit_measure_store *st, uint32_t launches, const struct fikit_stat *s)
{
    struct fikit_burst_stats *bs = burst_entry(st, launches);
    if (!bs)
        return launches ? -ENOMEM : -EINVAL;
    return fikit_stat_merge(&bs->len, s);
}

const struct fikit_kernel_stats *fikit_measure_kernel(const struct fikit_measure_store *st,
                                                      uint64_t key)
{
    return fikit_map_get(&st->kernels, key, 0);
}

const struct fikit_kernel_desc *fikit_measure_desc(const struct fikit_measure_store *st,
                                                   uint64_t key)
{
    return fikit_kernel_table_get(st->names, key);
}

const struct fikit_gap_stats *fikit_measure_gap(const struct fikit_measure_store *st,
                                                uint64_t prev, uint64_t key)
{
    return fikit_map_get(&st->gaps, prev, key);
}

int fikit_measure_merge(struct fikit_measure_store *into, const struct fikit_measure_store *from)
{
    int skipped = 0;
    /* Keys that collide in into: their gaps must not be merged either. */
    struct fikit_map bad;
    fikit_map_init(&bad);
    for (size_t i = 0; i < from->kernels.cap; i++) {
        const struct fikit_kernel_stats *ks = from->kernels.slots[i].value;
        if (!ks)
            continue;
        const struct fikit_kernel_desc *d = fikit_kernel_table_get(from->names, ks->key);
        int rc = fikit_measure_add_kernel(into, ks->key, d);
        if (rc == -ENOTUNIQ) {
            skipped++;
            if (fikit_map_put(&bad, ks->key, 0, (void *)ks)) {
                fikit_map_destroy(&bad);
                return -ENOMEM;
            }
            continue;
        }
        if (rc) {
            fikit_map_destroy(&bad);
            return rc;
        }
        if ((rc = fikit_measure_merge_duration(into, ks->key, &ks->duration))) {
            fikit_map_destroy(&bad);
            return rc;
        }
    }
    for (size_t i = 0; i < from->gaps.cap; i++) {
        const struct fikit_gap_stats *gs = from->gaps.slots[i].value;
        if (!gs || fikit_map_get(&bad, gs->key, 0) ||
            (gs->prev != FIKIT_KEY_NONE && fikit_map_get(&bad, gs->prev, 0)))
            continue;
        int rc = fikit_measure_merge_gap(into, gs->prev, gs->key, &gs->gap);
        if (rc) {
            fikit_map_destroy(&bad);
            return rc;
        }
    }
    fikit_map_destroy(&bad);
    for (size_t i = 0; i < from->bursts.cap; i++) {
        const struct fikit_burst_stats *bs = from->bursts.slots[i].value;
        int rc = bs ? fikit_measure_merge_burst(into, bs->launches, &bs->len) : 0;
        if (rc)
            return rc;
    }
    if (from->inner_gap_max_ns > into->inner_gap_max_ns)
        into->inner_gap_max_ns = from->inner_gap_max_ns;
    into->between_gaps += from->between_gaps;
    return skipped;
}

int fikit_measure_add_gap_at(struct fikit_measure_store *st, uint64_t prev, uint64_t key, uint64_t ns,
                             bool between)
{
    int rc = fikit_measure_add_gap(st, prev, key, ns);
    if (rc)
        return rc;
    if (between)
        st->between_gaps++;
    else if (ns > st->inner_gap_max_ns)
        st->inner_gap_max_ns = ns;
    return 0;
}

uint64_t fikit_measure_idle_gap(const struct fikit_measure_store *st)
{
    return st->between_gaps ? st->inner_gap_max_ns : fikit_measure_max_gap(st);
}

uint64_t fikit_measure_max_gap(const struct fikit_measure_store *st)
{
    uint64_t m = 0;
    for (size_t i = 0; i < st->gaps.cap; i++) {
        const struct fikit_gap_stats *gs = st->gaps.slots[i].value;
        if (gs && gs->gap.count && gs->gap.max > m)
            m = gs->gap.max;
    }
    return m;
}

size_t fikit_measure_kernel_count(const struct fikit_measure_store *st) { return st->kernels.count; }

size_t fikit_measure_gap_count(const struct fikit_measure_store *st) { return st->gaps.count; }

size_t fikit_measure_burst_count(const struct fikit_measure_store *st) { return st->bursts.count; }

static int cmp_kernel(const void *a, const void *b)
{
    const struct fikit_kernel_stats *x = *(const struct fikit_kernel_stats *const *)a;
    const struct fikit_kernel_stats *y = *(const struct fikit_kernel_stats *const *)b;
    return (x->key > y->key) - (x->key < y->key);
}

static int cmp_gap(const void *a, const void *b)
{
    const struct fikit_gap_stats *x = *(const struct fikit_gap_stats *const *)a;
    const struct fikit_gap_stats *y = *(const struct fikit_gap_stats *const *)b;
    if (x->prev != y->prev)
        return (x->prev > y->prev) - (x->prev < y->prev);
    return (x->key > y->key) - (x->key < y->key);
}

static int cmp_burst(const void *a, const void *b)
{
    const struct fikit_burst_stats *x = *(const struct fikit_burst_stats *const *)a;
    const struct fikit_burst_stats *y = *(const struct fikit_burst_stats *const *)b;
    return (x->launches > y->launches) - (x->launches < y->launches);
}

static const void **collect(const struct fikit_map *m, size_t *n,
                            int (*cmp)(const void *, const void *))
{
    const void **arr = malloc((m->count ? m->count : 1) * sizeof *arr);
    size_t k = 0;
    if (!arr) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].value)
            arr[k++] = m->slots[i].value;
    qsort(arr, k, sizeof *arr, cmp);
    *n = k;
    return arr;
}

const struct fikit_kernel_stats **fikit_measure_sorted_kernels(const struct fikit_measure_store *st,
                                                               size_t *n)
{
    return (const struct fikit_kernel_stats **)collect(&st->kernels, n, cmp_kernel);
}

const struct fikit_gap_stats **fikit_measure_sorted_gaps(const struct fikit_measure_store *st,
                                                         size_t *n)
{
    return (const struct fikit_gap_stats **)collect(&st->gaps, n, cmp_gap);
}

const struct fikit_burst_stats **fikit_measure_sorted_bursts(const struct fikit_measure_store *st, size_t *n)
{
    return (const struct fikit_burst_stats **)collect(&st->bursts, n, cmp_burst);
}
