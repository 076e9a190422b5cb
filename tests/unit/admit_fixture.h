/* The snapshot the admission tests start from (test_admit.c,
 * test_collective.c): a level-9 task beside one level-0 task whose kernel,
 * launched at last, runs until busy and then expects a gap of exactly gap
 * (0: unknown), with fikit.ini's default parameters. */
#ifndef FIKIT_TESTS_ADMIT_FIXTURE_H
#define FIKIT_TESTS_ADMIT_FIXTURE_H

#include "core/admit.h"

#include <string.h>

static inline void admit_fixture(struct fikit_view *v, struct fikit_admit_task *tasks, size_t ntasks,
                                 uint64_t last, uint64_t busy, uint64_t gap)
{
    memset(tasks, 0, ntasks * sizeof *tasks);
    memset(v, 0, sizeof *v);
    tasks[0].level = 0;
    tasks[0].launches = 10;
    tasks[0].last_launch_ns = last;
    tasks[0].busy_until_ns = busy;
    if (gap)
        fikit_gap_pred_fixed(&tasks[0].gap, gap);
    v->running = true;
    v->policy = FIKIT_POLICY_FILL;
    v->level_mask = 1u << 0 | 1u << 9;
    v->idle_learned = true;
    v->pauses = true;
    v->idle_after_ns = 20 * 1000 * 1000ull;
    v->gap_confidence = 0.3;
    v->max_queued_ns = 100 * 1000ull;
    v->fill_overhead_ns = 20 * 1000ull;
    v->tasks = tasks;
    v->ntasks = 1;
    v->level = 9;
}

#endif
