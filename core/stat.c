#include "core/stat.h"

void fikit_stat_init(struct fikit_stat *st)
{
    st->count = 0;
    st->sum = 0;
    st->min = UINT64_MAX;
    st->max = 0;
    fikit_sketch_init(&st->sketch);
}

void fikit_stat_destroy(struct fikit_stat *st) { fikit_sketch_destroy(&st->sketch); }

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

int fikit_stat_add(struct fikit_stat *st, uint64_t v)
{
    int rc = fikit_sketch_add(&st->sketch, v);
    if (rc)
        return rc;
    st->count++;
    st->sum = sat_add(st->sum, v);
    if (v < st->min)
        st->min = v;
    if (v > st->max)
        st->max = v;
    return 0;
}

int fikit_stat_merge(struct fikit_stat *into, const struct fikit_stat *from)
{
    if (from->count == 0)
        return 0;
    int rc = fikit_sketch_merge(&into->sketch, &from->sketch);
    if (rc)
        return rc;
    into->count += from->count;
    into->sum = sat_add(into->sum, from->sum);
    if (from->min < into->min)
        into->min = from->min;
    if (from->max > into->max)
        into->max = from->max;
    return 0;
}

uint64_t fikit_stat_mean(const struct fikit_stat *st) { return st->count ? st->sum / st->count : 0; }

uint64_t fikit_stat_quantile(const struct fikit_stat *st, double q)
{
    if (st->count == 0)
        return 0;
    uint64_t v = fikit_sketch_quantile(&st->sketch, q);
    if (v < st->min)
        v = st->min;
    if (v > st->max)
        v = st->max;
    return v;
}
