#include "sim/experiment.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mode_names[FIKIT_SIM_MODES] = {"timeslice", "mps", "mps-prio",
                                                        "fikit-ts", "fikit-mps", "beside",
                                                        "fikit-alone", "fikit-alone-mps"};

const char *fikit_sim_mode_name(enum fikit_sim_mode m)
{
    return (unsigned)m < FIKIT_SIM_MODES ? mode_names[m] : "?";
}

int fikit_sim_mode_parse(const char *name, enum fikit_sim_mode *out)
{
    for (int i = 0; i < FIKIT_SIM_MODES; i++) {
        if (strcmp(name, mode_names[i]) == 0) {
            *out = (enum fikit_sim_mode)i;
            return 0;
        }
    }
    return -EINVAL;
}

struct fikit_sim_q fikit_sim_quantile(const uint64_t *v, size_t n, double q)
{
    struct fikit_sim_q r = {0, 0, 0};
    if (!n)
        return r;
    /* The rank of the quantile and, from the binomial's normal
     * approximation, the ranks between which it lies 95 % of the time. */
    double k = q * (double)(n - 1);
    double sd = 1.96 * sqrt((double)n * q * (1.0 - q));
    size_t at = (size_t)(k + 0.5);
    double lo = floor(k - sd), hi = ceil(k + sd);
    size_t ilo = lo < 0 ? 0 : (size_t)lo, ihi = hi > (double)(n - 1) ? n - 1 : (size_t)hi;
    r.v = (double)v[at] / 1e6;
    r.lo = (double)v[ilo] / 1e6;
    r.hi = (double)v[ihi] / 1e6;
    return r;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A service's p50 and p99, with their intervals. -ENOMEM, or 0. */
static int quantiles(const uint64_t *ns, size_t n, struct fikit_sim_q *p50, struct fikit_sim_q *p99)
{
    uint64_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    memcpy(v, ns, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_u64);
    *p50 = fikit_sim_quantile(v, n, 0.5);
    *p99 = fikit_sim_quantile(v, n, 0.99);
    free(v);
    return 0;
}

/* A service's requests, from arrival to end, and their bursts alone, from
 * the first launch to the end (what the budget judges; p99 only). */
static int latency_quantiles(const struct fikit_sim_task_result *t, struct fikit_sim_q *p50,
                             struct fikit_sim_q *p99, struct fikit_sim_q *burst_p99)
{
    struct fikit_sim_q burst_p50;
    int rc = quantiles(t->latency_ns, t->nlatency, p50, p99);
    return rc ? rc : quantiles(t->burst_ns, t->nlatency, &burst_p50, burst_p99);
}

/* The ratio of two quantiles, its interval from theirs (each independent:
 * the widest ratio the two intervals allow). */
static struct fikit_sim_q ratio(struct fikit_sim_q a, struct fikit_sim_q alone)
{
    struct fikit_sim_q r = {0, 0, 0};
    if (alone.v > 0 && alone.lo > 0 && alone.hi > 0) {
        r.v = a.v / alone.v;
        r.lo = a.lo / alone.hi;
        r.hi = a.hi / alone.lo;
    }
    return r;
}

static void base_setup(const struct fikit_sim_experiment *x, struct fikit_sim_setup *s)
{
    memset(s, 0, sizeof *s);
    s->dev = x->dev;
    s->substrate = FIKIT_SIM_TIMESLICE;
    s->sched = x->sched_ts;
    s->poll_ns = x->poll_ns;
    s->pickup_ns = x->pickup_ns;
    s->wake_ns = x->wake_ns;
    s->requests = x->requests;
    s->warmup = x->warmup;
    s->seed = x->seed;
}

/* Says what runs next, and starts its setup from the experiment's. */
static void step(const struct fikit_sim_experiment *x, struct fikit_sim_setup *s, const char *what,
                 void (*progress)(const char *what, void *user), void *user)
{
    if (progress)
        progress(what, user);
    base_setup(x, s);
}

/* Runs t alone under s, its kernels and gaps measured into prof (NULL: not
 * measured), and counts the run's events in out. */
static int run_alone(const struct fikit_sim_setup *s, struct fikit_sim_task *t,
                     struct fikit_measure_store *prof, struct fikit_sim_result *r,
                     struct fikit_sim_report *out, struct fikit_err *err)
{
    t->measure = prof;
    int rc = fikit_sim_run(s, t, 1, r, err);
    t->measure = NULL;
    if (rc == 0)
        out->events += r->events;
    return rc;
}

int fikit_sim_experiment_run(const struct fikit_sim_experiment *x, struct fikit_sim_report *out,
                             void (*progress)(const char *what, void *user), void *user,
                             struct fikit_err *err)
{
    memset(out, 0, sizeof *out);
    if (x->service->kind != FIKIT_SIM_SERVICE || x->loop->kind != FIKIT_SIM_LOOP)
        return fikit_err_set(err, -EINVAL, "a pair is a service (%s is a %s) and a loop (%s is a %s)",
                             x->service->name, x->service->kind == FIKIT_SIM_SERVICE ? "service" : "loop",
                             x->loop->name, x->loop->kind == FIKIT_SIM_SERVICE ? "service" : "loop");
    if (!(x->load > 0 && x->load < 1))
        return fikit_err_set(err, -EINVAL, "load %g: accepted: more than 0 and less than 1", x->load);
    struct fikit_measure_store sprof, lprof;
    int rc = fikit_measure_init(&sprof);
    if (rc)
        return fikit_err_set(err, rc, "out of memory");
    if ((rc = fikit_measure_init(&lprof)) != 0) {
        fikit_measure_destroy(&sprof);
        return fikit_err_set(err, rc, "out of memory");
    }
    struct fikit_sim_setup s;
    struct fikit_sim_result r;
    memset(&r, 0, sizeof r);
    struct fikit_sim_task svc = {.w = x->service, .level = 0};
    struct fikit_sim_task loop = {.w = x->loop, .level = 9};

    /* 1. Capacity: the service back to back, alone. */
    step(x, &s, "service alone, back to back (its capacity)", progress, user);
    s.requests = x->requests < 1000 ? x->requests : 1000;
    s.warmup = 20;
    if ((rc = run_alone(&s, &svc, NULL, &r, out, err)) != 0)
        goto out;
    double mean_ns = r.task[0].nlatency ? (double)r.task[0].busy_ns / (double)r.task[0].nlatency : 0;
    /* The budget's reference: the p99 of each size of request alone, as
     * --measure records it. */
    struct fikit_budget_ref ref;
    fikit_budget_ref_build(&ref, r.task[0].burst_launches, r.task[0].burst_ns, r.task[0].nlatency);
    out->burst_sizes = ref.n;
    fikit_sim_result_free(&r);
    if (mean_ns <= 0) {
        rc = fikit_err_set(err, -EINVAL, "service %s: no request completed alone", x->service->name);
        goto out;
    }
    out->capacity_rps = 1e9 / mean_ns;
    out->rate_rps = out->capacity_rps * x->load;

    /* From here on at its pace (--service-pace): the reference above was
     * measured at another. */
    svc.pace = x->service_pace;
    /* 2. The service alone at the load, measured (its profile). */
    step(x, &s, "service alone at the load, measured", progress, user);
    s.mean_interarrival_ns = (uint64_t)(mean_ns / x->load);
    if ((rc = run_alone(&s, &svc, &sprof, &r, out, err)) != 0)
        goto out;
    uint64_t window = r.window_ns;
    if (latency_quantiles(&r.task[0], &out->alone_p50, &out->alone_p99, &out->alone_burst_p99)) {
        rc = fikit_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    fikit_sim_result_free(&r);

    /* 3. The loop alone, measured, as long as the service's window. */
    step(x, &s, "loop alone, measured", progress, user);
    s.loop_ns = window > 200000000ull ? window : 200000000ull;
    if ((rc = run_alone(&s, &loop, &lprof, &r, out, err)) != 0)
        goto out;
    out->loop_alone_per_s = r.window_ns ? (double)r.task[0].sequences * 1e9 / (double)r.window_ns : 0;
    fikit_sim_result_free(&r);

    /* 4. The pair in each mode. */
    svc.profile = &sprof;
    loop.profile = &lprof;
    svc.budget = x->budget;
    svc.budget_of_requests = x->budget_of_requests;
    svc.budget_ref = &ref;
    svc.budget_step = x->budget_step;
    for (int mode = 0; mode < FIKIT_SIM_MODES; mode++) {
        if (!(x->modes & (1u << mode)))
            continue;
        char what[192];
        snprintf(what, sizeof what, "%s beside %s: %s", x->service->name, x->loop->name,
                 fikit_sim_mode_name((enum fikit_sim_mode)mode));
        step(x, &s, what, progress, user);
        s.mean_interarrival_ns = (uint64_t)(mean_ns / x->load);
        s.trace = x->trace;
        s.trace_ns = x->trace_ns;
        s.sm_shares = x->sm_shares;
        struct fikit_sim_task pair[2] = {svc, loop};
        switch (mode) {
        case FIKIT_SIM_MODE_TIMESLICE: break;
        case FIKIT_SIM_MODE_MPS: s.substrate = FIKIT_SIM_MPS; break;
        case FIKIT_SIM_MODE_MPS_PRIO:
            s.substrate = FIKIT_SIM_MPS;
            s.mps_priority = true;
            break;
        case FIKIT_SIM_MODE_FIKIT_TS: s.fikit = true; break;
        case FIKIT_SIM_MODE_FIKIT_MPS:
            s.substrate = FIKIT_SIM_MPS;
            s.mps_priority = x->fikit_mps_priority;
            s.sched = x->sched_mps;
            s.fikit = true;
            pair[1].beside = x->fikit_mps_beside;
            pair[1].thread_pct = x->fikit_mps_thread_pct;
            pair[1].confine_pct = x->fikit_mps_confine_pct;
            break;
        case FIKIT_SIM_MODE_BESIDE:
            s.substrate = FIKIT_SIM_MPS;
            s.mps_priority = x->fikit_mps_priority;
            s.sched = x->sched_mps;
            s.fikit = true;
            pair[1].beside = true;
            pair[1].thread_pct = x->beside_thread_pct;
            break;
        case FIKIT_SIM_MODE_FIKIT_ALONE: s.fikit = true; break;
        case FIKIT_SIM_MODE_FIKIT_ALONE_MPS:
            s.substrate = FIKIT_SIM_MPS;
            s.fikit = true;
            break;
        }
        size_t ntasks = mode == FIKIT_SIM_MODE_FIKIT_ALONE || mode == FIKIT_SIM_MODE_FIKIT_ALONE_MPS ? 1 : 2;
        if ((rc = fikit_sim_run(&s, pair, ntasks, &r, err)) != 0) {
            if (err) {
                char why[sizeof err->msg];
                snprintf(why, sizeof why, "%s", err->msg);
                fikit_err_set(err, rc, "%s: %s", what, why);
            }
            goto out;
        }
        out->events += r.events;
        struct fikit_sim_row *row = &out->row[mode];
        if (latency_quantiles(&r.task[0], &row->p50, &row->p99, &row->burst_p99)) {
            rc = fikit_err_set(err, -ENOMEM, "out of memory");
            goto out;
        }
        row->done = true;
        row->p50_ratio = ratio(row->p50, out->alone_p50);
        row->p99_ratio = ratio(row->p99, out->alone_p99);
        row->burst_p99_ratio = ratio(row->burst_p99, out->alone_burst_p99);
        row->loop_per_s = ntasks > 1 && r.window_ns ? (double)r.task[1].sequences * 1e9 / (double)r.window_ns : 0;
        row->loop_ratio = out->loop_alone_per_s > 0 ? row->loop_per_s / out->loop_alone_per_s : 0;
        row->holds = r.task[1].holds;
        row->grants = r.task[1].grants;
        row->fills = r.task[1].fills;
        row->paces = r.task[1].paces;
        row->held_ms = r.task[1].grants ? (double)r.task[1].held_ns / (double)r.task[1].grants / 1e6 : 0;
        row->switches = r.switches;
        row->budgeted = s.fikit && ntasks > 1 && x->budget > 0;
        row->budget_cuts = r.task[0].budget_cuts;
        row->budget_climbs = r.task[0].budget_climbs;
        row->budget_step = r.task[0].budget_step;
        row->budget_pace = r.task[0].budget_pace_ppm / 1e6;
        row->budget_load = r.task[0].budget_load_ppm / 1e6;
        row->budget_bursts = r.task[0].budget_burst_ppm / 1e6;
        row->budget_body = r.task[0].budget_body_ppm / 1e6;
        row->budget_unmeetable = r.task[0].budget_unmeetable;
        fikit_sim_result_free(&r);
    }
out:
    fikit_sim_result_free(&r);
    fikit_measure_destroy(&sprof);
    fikit_measure_destroy(&lprof);
    return rc;
}
