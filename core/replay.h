/* Owns: policy replay. It reads a text timeline of launches (when each task
 * issues which kernel, and how long that kernel runs), measures every task
 * alone on a simulated device exactly as `fikit-launch --measure` would,
 * then replays all tasks together through the scheduler (core/sched) and
 * prints each decision and the resulting device timeline. The simulated
 * device runs one kernel at a time, in submission order, and pays the
 * substrate cost whenever it switches from one task to another.
 *
 * Timeline format (docs/replay.md):
 *   # comment
 *   TIME_US TASK PRIORITY KERNEL DURATION_US [STREAM]
 * A task issues its launches in file order, each no earlier than TIME_US;
 * a launch that is held delays that task's later launches by as long. */
#ifndef FIKIT_CORE_REPLAY_H
#define FIKIT_CORE_REPLAY_H

#include "core/error.h"
#include "core/sched.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fikit_replay_launch {
    uint64_t t_ns;
    char task[64];
    int priority;
    char kernel[128];
    uint64_t dur_ns;
    uint64_t stream;
    int line;
    /* results */
    uint64_t issue_ns;   /* when the task issued it (after earlier holds) */
    uint64_t submit_ns;  /* when it reached the device (after its own hold) */
    uint64_t start_ns, end_ns;
    enum { FIKIT_REPLAY_RAN, FIKIT_REPLAY_GRANTED, FIKIT_REPLAY_FILLED } how;
    enum fikit_grant_reason reason;
};

struct fikit_replay_task_result {
    char task[64];
    int priority;
    size_t launches;
    size_t held;
    size_t granted_fit, granted_free;
    size_t filled;               /* launched into a gap by the client itself (fikit_admit) */
    uint64_t alone_makespan_ns;  /* first issue to last end, alone */
    uint64_t shared_makespan_ns; /* same, replayed together */
    uint64_t delay_ns;           /* sum over launches of (end - end alone) */
};

struct fikit_replay_result {
    struct fikit_replay_task_result tasks[FIKIT_MAX_TASKS];
    size_t ntasks;
};

/* Parses a timeline. *out is malloc'd. */
int fikit_replay_parse(FILE *in, const char *path, struct fikit_replay_launch **out, size_t *n,
                       struct fikit_err *err);

/* Replays launches (results written into them). log, if not NULL, gets the
 * decisions and the timeline as text. */
int fikit_replay_run(struct fikit_replay_launch *l, size_t n, const struct fikit_sched_params *p,
                     FILE *log, struct fikit_replay_result *res, struct fikit_err *err);

#endif
