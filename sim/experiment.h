/* Owns: what `fikit sim` measures of a pair, as bench/evaluate does on a
 * GPU: the service and the loop (training) each alone, both measured as
 * under fikit-launch --measure (their profiles), the service's request rate
 * set from its time per request alone at the chosen load, then the pair in
 * each mode; the service's p50 and p99 and their ratios to alone with 95 %
 * intervals, the loop's throughput against alone. */
#ifndef FIKIT_SIM_EXPERIMENT_H
#define FIKIT_SIM_EXPERIMENT_H

#include "sim/run.h"

enum fikit_sim_mode {
    FIKIT_SIM_MODE_TIMESLICE = 0, /* both, no fikit, time-slicing */
    FIKIT_SIM_MODE_MPS,           /* both, no fikit, MPS */
    FIKIT_SIM_MODE_MPS_PRIO,      /* MPS with client priority */
    FIKIT_SIM_MODE_FIKIT_TS,      /* fikit (the configured policy) on time-slicing */
    FIKIT_SIM_MODE_FIKIT_MPS,     /* fikit on MPS */
    FIKIT_SIM_MODE_BESIDE,        /* fikit on MPS, the loop share = beside under a thread cap */
    FIKIT_SIM_MODE_FIKIT_ALONE,   /* the service alone under fikit: what fikit itself costs it */
    FIKIT_SIM_MODE_FIKIT_ALONE_MPS, /* the same as an MPS client: what fikit and MPS cost it */
    FIKIT_SIM_MODES
};

const char *fikit_sim_mode_name(enum fikit_sim_mode m);
/* -EINVAL for an unknown name. */
int fikit_sim_mode_parse(const char *name, enum fikit_sim_mode *out);
#define FIKIT_SIM_MODE_NAMES "timeslice, mps, mps-prio, fikit-ts, fikit-mps, beside, fikit-alone, fikit-alone-mps"

struct fikit_sim_experiment {
    const struct fikit_sim_device *dev;
    const struct fikit_sim_workload *service, *loop;
    /* fikit's policy, from fikit.ini, on each substrate (they differ in
     * the substrate cost). */
    struct fikit_sched_params sched_ts, sched_mps;
    uint32_t beside_thread_pct;       /* the loop's cap in beside */
    bool fikit_mps_priority;          /* fikit's MPS modes with client priority for the loop */
    /* How fikit.ini has the loop (priority 9) share an MPS device in
     * fikit-mps (fikit_config_task_sharing): beside at this thread cap
     * (0: in the gaps), at MPS's lower client priority or not. */
    uint32_t fikit_mps_thread_pct;
    uint32_t fikit_mps_confine_pct;   /* mps_lower_cap = launches: its share, per launch */
    bool fikit_mps_beside;
    uint64_t poll_ns, pickup_ns, wake_ns;
    double load;                      /* the service's share of its capacity, 0 < load < 1 */
    uint64_t requests, warmup;
    uint64_t seed;
    uint32_t modes;                   /* bit per fikit_sim_mode */
    /* The service's latency budget in fikit's modes (its reference, the
     * p99 of each size of request alone back to back, measured here as
     * --measure would); 0: none.
     * sm_shares: fikit_sim_setup.sm_shares. */
    double budget;
    bool budget_of_requests; /* latency_budget_of = requests */
    /* 1..FIKIT_BUDGET_STEPS: the budget's steps fixed at budget_step - 1
     * (fikit_sim_task.budget_step); 0: the controller decides. */
    int budget_step;
    bool sm_shares;
    /* The service's kernels take this many times as long in every run
     * after its reference's (0: 1): a pace that moved since its profile. */
    double service_pace;
    FILE *trace;                      /* the pair's runs traced (fikit_sim_setup.trace) */
    uint64_t trace_ns;
};

/* A quantile with its 95 % interval (order statistics). */
struct fikit_sim_q {
    double v, lo, hi;
};

struct fikit_sim_row {
    bool done;
    struct fikit_sim_q p50, p99;              /* ms */
    struct fikit_sim_q p50_ratio, p99_ratio;  /* against alone */
    /* The p99 of its bursts (first launch to end, no queueing: what the
     * budget judges), ms and against alone. */
    struct fikit_sim_q burst_p99, burst_p99_ratio;
    double loop_per_s, loop_ratio;            /* sequences per second, against alone */
    uint64_t holds, grants, fills, paces;     /* the loop's */
    double held_ms;                           /* the loop's mean hold */
    uint64_t switches;
    /* the service's budget controller, where it ran */
    bool budgeted;
    uint64_t budget_cuts, budget_climbs;
    int budget_step;
    double budget_pace; /* the service's pace against its reference, from its quiet bursts */
    double budget_load;   /* its busy fraction, as its controller measured it */
    double budget_bursts; /* what its bursts were judged by at the end (the budget less the load's queueing) */
    double budget_body;   /* its judged bursts' mean against alone's at the end; 0: not judged */
    bool budget_unmeetable;
};

struct fikit_sim_report {
    double capacity_rps;      /* the service back to back, requests per second */
    double rate_rps;          /* the Poisson rate used */
    struct fikit_sim_q alone_p50, alone_p99, alone_burst_p99;
    uint32_t burst_sizes;     /* the sizes of request (launches) the budget's reference holds */
    double loop_alone_per_s;
    struct fikit_sim_row row[FIKIT_SIM_MODES];
    uint64_t events;
};

/* progress: called before each run with what it is (may be NULL). */
int fikit_sim_experiment_run(const struct fikit_sim_experiment *x, struct fikit_sim_report *out,
                             void (*progress)(const char *what, void *user), void *user,
                             struct fikit_err *err);

/* The q quantile of n sorted values, with its 95 % interval. */
struct fikit_sim_q fikit_sim_quantile(const uint64_t *sorted, size_t n, double q);

#endif
