/* Owns: how much slower a task's kernels run now than in its profile. The
 * profile was measured alone, so its median duration per kernel is frozen
 * at load as the reference: the learner's own predictions follow what it
 * measures, and against them a slowed task would soon look normal. Each
 * measured kernel with a reference adds to two decayed sums, of measured
 * and of reference time; their ratio weighs long kernels by their length.
 * One writer (the learner thread); what it computes is published in the
 * task's slot (core/shm.h) for share = beside tasks below it. */
#ifndef FIKIT_CORE_SLOWDOWN_H
#define FIKIT_CORE_SLOWDOWN_H

#include "core/measure.h"

#include <stddef.h>
#include <stdint.h>

/* Per sample, the sums keep this much of what they held: about the last
 * twenty kernels count. */
#define FIKIT_SLOWDOWN_DECAY 0.95

struct fikit_slowdown {
    uint64_t *keys; /* open addressing, 0 = empty */
    uint64_t *ref_ns;
    size_t cap;     /* power of two, or 0: no references */
    double measured, reference;
};

/* References from every kernel of a store (the profile just loaded);
 * 0 or -ENOMEM. An empty store leaves the tracker without references. */
int fikit_slowdown_init(struct fikit_slowdown *s, const struct fikit_measure_store *st);
void fikit_slowdown_free(struct fikit_slowdown *s);
/* A measured kernel: the current slowdown in parts per million (1000000 =
 * as fast as alone), or 0 when the kernel has no reference. */
uint32_t fikit_slowdown_add(struct fikit_slowdown *s, uint64_t key, uint64_t dur_ns);

#endif
