/* Owns: one statistic of nanosecond samples: count, mean, min, max (exact)
 * and any quantile (from the sketch). Mergeable. */
#ifndef FIKIT_CORE_STAT_H
#define FIKIT_CORE_STAT_H

#include "core/sketch.h"

#include <stdint.h>

struct fikit_stat {
    uint64_t count;
    uint64_t sum;   /* saturates at UINT64_MAX */
    uint64_t min;
    uint64_t max;
    struct fikit_sketch sketch;
};

void fikit_stat_init(struct fikit_stat *st);
void fikit_stat_destroy(struct fikit_stat *st);
/* Both return 0 or -ENOMEM; on failure the statistic is unchanged by the
 * sample (add) or holds part of from (merge). */
int fikit_stat_add(struct fikit_stat *st, uint64_t value_ns);
int fikit_stat_merge(struct fikit_stat *into, const struct fikit_stat *from);
uint64_t fikit_stat_mean(const struct fikit_stat *st);
/* A quantile from the sketch, clamped to the exact [min, max]. */
uint64_t fikit_stat_quantile(const struct fikit_stat *st, double q);

#endif
