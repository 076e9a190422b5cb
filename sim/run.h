/* Owns: one simulated run of fikit sim: tasks that replay their workloads
 * on the modelled GPU (sim/gpu.h), a service's Poisson requests, a loop's
 * back-to-back sequences, and, where fikit schedules, fikit's own policy:
 * every launch of a registered task goes through the same core calls as in
 * a program (fikit_shm_view, fikit_admit, fikit_shm_publish_launch on a
 * segment of its own) and fikitd's side through the same calls as
 * fikitd/device.c (fikit_sched_note_record, fikit_sched_post, the
 * fill lock, fikit_sched_decide). Deterministic for a seed. What it leaves
 * out of fikit: docs/sim.md. */
#ifndef FIKIT_SIM_RUN_H
#define FIKIT_SIM_RUN_H

#include "core/budget.h"
#include "core/error.h"
#include "core/measure.h"
#include "core/sched.h"
#include "sim/gpu.h"
#include "sim/workload.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FIKIT_SIM_MAX_TASKS 8

struct fikit_sim_task {
    const struct fikit_sim_workload *w;
    int level;                 /* 0 highest; the MPS client priority too */
    uint32_t thread_pct;       /* MPS: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; 0 or 100: none */
    bool beside;               /* share = beside */
    uint32_t confine_pct;      /* MPS, mps_lower_cap = launches: its share, kept per launch by
                                * fikit_admit's sm_pct while a higher level is active; 0: none */
    /* What was measured of it (fikit-launch --measure): predictions and its
     * idle threshold. NULL: nothing, as a task never measured. */
    const struct fikit_measure_store *profile;
    /* Where set, every kernel's duration and the gap after it go here, as
     * under --measure. */
    struct fikit_measure_store *measure;
    /* Its latency budget and its p99 burst (request) times alone: with both
     * and fikit, the budget's controller (core/budget.h) steers the tasks
     * below it, as fikitd's does. 0: none. */
    double budget;
    bool budget_of_requests;   /* latency_budget_of = requests */
    const struct fikit_budget_ref *budget_ref;
    /* 1..FIKIT_BUDGET_STEPS: the controller pinned at step budget_step - 1,
     * never cutting or climbing (a fixed setting, to compare it with);
     * 0: it decides. */
    int budget_step;
    double pace;               /* its kernels take this many times as long; 0: 1 */
};

struct fikit_sim_setup {
    const struct fikit_sim_device *dev;
    enum fikit_sim_substrate substrate;
    bool mps_priority;              /* MPS with client priority */
    bool fikit;                     /* the tasks run under fikit, fikitd schedules */
    struct fikit_sched_params sched;
    uint64_t poll_ns;               /* fikitd's poll period while a launch could open room */
    uint64_t pickup_ns;             /* from a held launch's post to the pass that sees it */
    uint64_t wake_ns;               /* from a grant to the held launch going */
    uint64_t mean_interarrival_ns;  /* a service's Poisson arrivals; 0: back to back */
    uint64_t requests;              /* service requests counted ... */
    uint64_t warmup;                /* ... after this many */
    uint64_t loop_ns;               /* with no service: how long loops run (the first tenth is warm-up) */
    uint64_t seed;
    /* Where set, the run's first trace_ns of simulated time as Chrome trace
     * events (Perfetto reads them), comma-separated, for the caller to wrap
     * in {"traceEvents": [...]}: each kernel on its task's device track, each
     * request, each hold until its grant, each fill. */
    FILE *trace;
    uint64_t trace_ns;
    /* MPS: the budget's SM share of a beside task is applied to its cap, as
     * a per-launch SM share would (not yet in fikit on a GPU). */
    bool sm_shares;
};

struct fikit_sim_task_result {
    uint64_t *latency_ns;   /* a service: each counted request, arrival to result */
    size_t nlatency;
    uint64_t *burst_ns;     /* ... its burst: from its start to its result */
    uint32_t *burst_launches; /* ... and how many launches it made */
    uint64_t busy_ns;       /* a service: sum of request times from their start (no queueing) */
    uint64_t sequences;     /* completed in the window */
    uint64_t launches, holds, grants, fills, paces;
    uint64_t held_ns;       /* summed over holds, post to grant */
    /* a budgeted task: its controller's cuts and climbs, the step it ended
     * on, whether it found its budget unmeetable */
    uint64_t budget_cuts, budget_climbs;
    int budget_step;
    uint32_t budget_pace_ppm;
    uint32_t budget_load_ppm;  /* its busy fraction as the controller measured it */
    uint32_t budget_burst_ppm; /* what each of its bursts was judged by at the end */
    uint32_t budget_body_ppm;  /* its judged bursts' mean against alone's at the end; 0: not judged */
    bool budget_unmeetable;
};

struct fikit_sim_result {
    uint64_t window_ns;     /* what was counted: warm-up end to the last counted request */
    size_t ntasks;
    struct fikit_sim_task_result task[FIKIT_SIM_MAX_TASKS];
    uint64_t switches, preemptions, passes;
    uint64_t events;
};

/* 0, or a negative errno with err saying why. r must be freed
 * (fikit_sim_result_free) either way. */
int fikit_sim_run(const struct fikit_sim_setup *s, const struct fikit_sim_task *tasks, size_t ntasks,
                  struct fikit_sim_result *r, struct fikit_err *err);
void fikit_sim_result_free(struct fikit_sim_result *r);

#endif
