#include "sim/run.h"

#include "core/clock.h"
#include "core/admit.h"
#include "core/arbiter.h"
#include "core/budget.h"
#include "core/predict.h"
#include "core/shm.h"
#include "sim/fifo.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { EV_STEP = 1, EV_ARRIVAL, EV_PASS, EV_GRANT, EV_WINDOW, EV_END };

/* Virtual time starts here, not at 0: 0 means "never" in fikit's records. */
#define T0 FIKIT_NS_PER_S

struct inflight {
    uint64_t key, prev;
    uint32_t kernel; /* index into the workload's kernels */
    bool opens_burst; /* launched after a wait, not within FIKIT_BURST_JOIN_NS of it */
};

struct trun {
    const struct fikit_sim_task *spec;
    const struct fikit_sim_workload *w;
    uint64_t *keys;            /* per step of w */
    bool service;
    bool busy;                 /* running a sequence */
    size_t seq, step;
    uint64_t req_arrival, req_start;
    uint64_t prev_req_end;     /* when its previous request ended; 0: none (fikit_quiet_since) */
    uint32_t req_launches;
    struct fikit_sim_fifo queue; /* arrival times (uint64_t) of waiting requests */
    uint64_t outstanding;
    bool wait_sync;
    /* As interpose/burst.h tells a burst's first launch: when the task's
     * last wait returned, and whether it launched since. */
    uint64_t waited_at;
    bool launched_since_wait;
    struct fikit_shm_own own;  /* what it publishes, in its own memory, as the client keeps it */
    uint64_t prev_key;         /* the launch path's last key */
    struct fikit_sim_fifo fl;  /* struct inflight: launched, not completed, in order */
    bool have_last;            /* measuring: the previous kernel's end */
    uint64_t last_end, last_key, last_prev;
    /* fikit */
    bool registered;
    struct fikit_predictor *pred;
    uint64_t idle_after_ns;
    uint64_t seen_launches;    /* fikitd's copy */
    bool held, queued;
    uint64_t held_key, held_dur, held_posted;
    uint64_t rng;
    size_t cap_lat, cap_burst, cap_burst_n;
};

struct sim {
    const struct fikit_sim_setup *s;
    struct fikit_sim_evq q;
    struct fikit_sim_gpu *gpu;
    struct trun t[FIKIT_SIM_MAX_TASKS];
    size_t n;
    struct fikit_shm *shm;
    struct fikit_sched sched;
    struct fikit_budget_set budgets; /* fikitd's budget controllers */
    uint64_t pass_at;
    int service;               /* index of the service task, -1 none */
    uint64_t completed;        /* service requests done */
    bool window, stop;
    uint64_t window_start, window_end;
    struct fikit_sim_result *r;
    int failed;                /* -ENOMEM seen */
    bool traced_any;           /* a trace event was written (the next needs a comma) */
};

/* s as the inside of a JSON string (at most 200 bytes of it). */
static void json_str(FILE *f, const char *s)
{
    for (const char *c = s; *c && c - s < 200; c++) {
        if (*c == '"' || *c == '\\')
            fputc('\\', f);
        if ((unsigned char)*c >= 0x20)
            fputc(*c, f);
    }
}

/* One Chrome trace event, if the run is traced and t_ns is in its window:
 * a span (dur_ns > 0 or span) or an instant. Names are JSON-escaped. */
static void trace_event(struct sim *m, const char *name, const char *cat, uint32_t tid, uint64_t t_ns,
                        uint64_t dur_ns, bool span)
{
    if (!m->s->trace || t_ns < T0 || t_ns - T0 >= m->s->trace_ns)
        return;
    FILE *f = m->s->trace;
    fprintf(f, "%s{\"name\":\"", m->traced_any ? ",\n" : "");
    json_str(f, name);
    if (span)
        fprintf(f, "\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f}", cat, tid,
                (double)(t_ns - T0) / 1e3, (double)dur_ns / 1e3);
    else
        fprintf(f, "\",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,\"tid\":%u,\"ts\":%.3f}", cat, tid,
                (double)(t_ns - T0) / 1e3);
    m->traced_any = true;
}

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double uniform01(uint64_t *x) { return (splitmix(x) >> 11) * (1.0 / 9007199254740992.0); }

static void push(struct sim *m, uint64_t t, uint32_t type, uint32_t a, uint64_t b)
{
    if (fikit_sim_evq_push(&m->q, t, type, a, b) != 0)
        m->failed = -ENOMEM;
}

/* ------------------------------------------------------------ requests */

static void start_sequence(struct sim *m, size_t i, uint64_t now);

static void next_arrival(struct sim *m, size_t i, uint64_t now)
{
    struct trun *t = &m->t[i];
    if (!m->s->mean_interarrival_ns)
        return; /* back to back: the next starts when one ends */
    double u = uniform01(&t->rng);
    uint64_t gap = (uint64_t)(-log(1.0 - u) * (double)m->s->mean_interarrival_ns);
    push(m, now + gap, EV_ARRIVAL, (uint32_t)i, 0);
}

static void arrive(struct sim *m, size_t i, uint64_t now)
{
    struct trun *t = &m->t[i];
    if (!t->busy) {
        t->req_arrival = now;
        start_sequence(m, i, now);
    } else {
        if (fikit_sim_fifo_push(&t->queue, &now) != 0) {
            m->failed = -ENOMEM;
            return;
        }
    }
    next_arrival(m, i, now);
}

static const struct fikit_sim_step *cur_step(const struct trun *t)
{
    return &t->w->steps[t->w->seqs[t->seq].first + t->step];
}

static void start_sequence(struct sim *m, size_t i, uint64_t now)
{
    struct trun *t = &m->t[i];
    t->busy = true;
    t->step = 0;
    t->req_start = now;
    t->req_launches = 0;
    if (t->service)
        t->seq = t->w->nseqs > 1 ? (size_t)(splitmix(&t->rng) % t->w->nseqs) : 0;
    push(m, now + cur_step(t)->host_ns, EV_STEP, (uint32_t)i, 0);
}

/* What fikitd's controller sets for every task: the knobs in its owner's
 * words of the header and, with sm_shares on MPS, its cap. */
static void steer(struct sim *m)
{
    for (size_t j = 0; j < m->n; j++) {
        const struct fikit_sim_task *spec = m->t[j].spec;
        struct fikit_lower_knobs k;
        /* Its share, however kept: a thread cap or confined launches. */
        uint32_t share = spec->thread_pct ? spec->thread_pct : spec->confine_pct;
        fikit_budget_set_knobs(&m->budgets, (int)j, m->s->sched.max_queued_ns, share, &k);
        fikit_shm_set_knobs(m->shm, (int)j, &k);
        fikit_sched_set_knobs(&m->sched, (uint32_t)j, &k);
        if (m->s->sm_shares && m->s->substrate == FIKIT_SIM_MPS && spec->beside && !spec->confine_pct)
            fikit_sim_gpu_context(m->gpu, (uint32_t)j, spec->level, k.sm_pct ? k.sm_pct : spec->thread_pct);
    }
}

/* A budgeted task's burst: from the start of its request to its end, what
 * the client measures (first launch after idle to its last kernel's end). */
static void note_burst(struct sim *m, size_t i, uint64_t start, uint64_t end)
{
    if (m->t[i].spec->budget_step > 0)
        return; /* pinned: a fixed setting */
    /* As the client asks it (interpose/burst.c), from what fikitd published. */
    bool switches = atomic_load_explicit(&m->shm->hdr->params.flags, memory_order_relaxed) & FIKIT_SHM_SWITCHES;
    uint64_t since = fikit_quiet_since(start, m->t[i].prev_req_end, switches);
    m->t[i].prev_req_end = end;
    enum fikit_budget_action a =
        fikit_budget_set_burst(&m->budgets, (int)i, start, end, m->t[i].req_launches, m->s->sched.max_queued_ns,
                               fikit_shm_quiet_since(m->shm->com, m->t[i].spec->level, since));
    if (a == FIKIT_BUDGET_IGNORED || a == FIKIT_BUDGET_KEEP)
        return;
    if (m->window && !m->stop) {
        if (a == FIKIT_BUDGET_CUT)
            m->r->task[i].budget_cuts++;
        else
            m->r->task[i].budget_climbs++;
    }
    trace_event(m, a == FIKIT_BUDGET_CUT ? "budget: cut" : "budget: climb", "budget", 2 * (uint32_t)i + 1, end, 0,
                false);
    steer(m);
}

static void end_sequence(struct sim *m, size_t i, uint64_t now)
{
    struct trun *t = &m->t[i];
    struct fikit_sim_task_result *tr = &m->r->task[i];
    t->busy = false;
    if (t->service) {
        if (t->registered)
            note_burst(m, i, t->req_start, now);
        trace_event(m, "request", "request", 2 * (uint32_t)i + 1, t->req_arrival, now - t->req_arrival, true);
        m->completed++;
        if (m->window && !m->stop) {
            if (fikit_sim_grow((void **)&tr->latency_ns, &t->cap_lat, tr->nlatency + 1, sizeof(uint64_t)) ||
                fikit_sim_grow((void **)&tr->burst_ns, &t->cap_burst, tr->nlatency + 1, sizeof(uint64_t)) ||
                fikit_sim_grow((void **)&tr->burst_launches, &t->cap_burst_n, tr->nlatency + 1, sizeof(uint32_t))) {
                m->failed = -ENOMEM;
                return;
            }
            tr->burst_ns[tr->nlatency] = now - t->req_start;
            tr->burst_launches[tr->nlatency] = t->req_launches;
            tr->latency_ns[tr->nlatency++] = now - t->req_arrival;
            tr->busy_ns += now - t->req_start;
            tr->sequences++;
        }
        if (m->completed == m->s->warmup) {
            m->window = true;
            m->window_start = now;
        }
        if (m->completed == m->s->warmup + m->s->requests) {
            m->stop = true;
            m->window_end = now;
            return;
        }
        if (t->queue.n) {
            t->req_arrival = *(const uint64_t *)fikit_sim_fifo_front(&t->queue);
            fikit_sim_fifo_pop(&t->queue);
            start_sequence(m, i, now);
        } else if (!m->s->mean_interarrival_ns) {
            t->req_arrival = now;
            start_sequence(m, i, now);
        }
        return;
    }
    if (m->window && !m->stop)
        tr->sequences++;
    t->seq = (t->seq + 1) % t->w->nseqs;
    start_sequence(m, i, now);
}

static void advance(struct sim *m, size_t i, uint64_t now)
{
    struct trun *t = &m->t[i];
    t->step++;
    if (t->step < t->w->seqs[t->seq].n)
        push(m, now + cur_step(t)->host_ns, EV_STEP, (uint32_t)i, 0);
    else
        end_sequence(m, i, now);
}

/* ------------------------------------------------------------- launches */

/* dur: the launch's predicted duration, as its admission used it. */
static void launch_now(struct sim *m, size_t i, uint64_t now, uint64_t dur, uint32_t sm_pct)
{
    struct trun *t = &m->t[i];
    const struct fikit_sim_step *st = cur_step(t);
    uint64_t key = t->keys[t->w->seqs[t->seq].first + t->step];
    uint64_t prev = t->prev_key;
    t->prev_key = key;
    if (t->registered) {
        struct fikit_gap_pred gap;
        memset(&gap, 0, sizeof gap);
        if (t->pred)
            fikit_predict_gap(t->pred, prev, key, &gap);
        uint64_t busy =
            fikit_shm_publish_own(m->shm->slots[i], &t->own, now, dur, key, &gap, t->idle_after_ns, NULL);
        /* As interpose/gate.c: below a level, its queued work tells the
         * bursts above whether they ran quiet. */
        if (!fikit_admit_nothing_above(atomic_load(&m->shm->hdr->level_mask), t->spec->level))
            fikit_shm_note_level_busy(m->shm->com, t->spec->level, busy);
    }
    struct inflight f = {key, prev, st->kernel,
                         !t->launched_since_wait && (!t->waited_at || now - t->waited_at >= FIKIT_BURST_JOIN_NS)};
    t->launched_since_wait = true;
    if (fikit_sim_fifo_push(&t->fl, &f) != 0)
        m->failed = -ENOMEM;
    uint64_t kernel_ns = t->spec->pace > 0 ? (uint64_t)((double)st->dur_ns * t->spec->pace) : st->dur_ns;
    if (fikit_sim_gpu_launch(m->gpu, now, (uint32_t)i, key, kernel_ns, st->blocks, st->threads, sm_pct))
        m->failed = -ENOMEM;
    t->outstanding++;
    t->req_launches++;
    m->r->task[i].launches++;
    /* fikit's own time in the launch call (the interposer, admission,
     * publishing), and an MPS client's path through the server: the
     * program's host thread carries on that much later. */
    uint64_t host_ns = t->registered ? m->s->dev->fikit_launch_ns : 0;
    if (m->s->substrate == FIKIT_SIM_MPS)
        host_ns += m->s->dev->mps_launch_ns;
    advance(m, i, now + host_ns);
}

static void schedule_pass(struct sim *m, uint64_t at)
{
    if (at >= m->pass_at)
        return;
    m->pass_at = at;
    push(m, at, EV_PASS, 0, at);
}

/* A launch asks fikit_admit, as interpose/gate.c does, and does what it
 * says. */
static void issue_launch(struct sim *m, size_t i, uint64_t now)
{
    struct trun *t = &m->t[i];
    if (!t->registered) {
        launch_now(m, i, now, 0, 0);
        return;
    }
    uint64_t key = t->keys[t->w->seqs[t->seq].first + t->step];
    uint64_t dur = t->pred ? fikit_predict_duration(t->pred, key) : 0;
    struct fikit_admit_task tasks[FIKIT_SHM_SLOTS];
    struct fikit_view v;
    struct fikit_admit a;
    fikit_shm_view(m->shm, (int)i, t->spec->level, t->spec->beside, &v, tasks, NULL);
    /* Its own queue as it knows it, not as the slot shows it (gate.c). */
    v.own_busy_until_ns = fikit_shm_own_busy_until(&t->own);
    if (m->s->substrate == FIKIT_SIM_MPS)
        v.confine_pct = t->spec->confine_pct;
    fikit_admit(&v, now, dur, &a);
    switch (a.kind) {
    case FIKIT_ADMIT_GO:
        launch_now(m, i, now, dur, a.sm_pct);
        return;
    case FIKIT_ADMIT_FILL:
        /* As gate.c takes it; one thread at a time here, so it succeeds. */
        if (!fikit_shm_fill_commit(m->shm, v.fill_until_ns, a.fill_until_ns))
            abort();
        m->r->task[i].fills++;
        trace_event(m, "filled a gap", "fill", 2 * (uint32_t)i + 1, now, 0, false);
        launch_now(m, i, now, dur, a.sm_pct);
        return;
    case FIKIT_ADMIT_PACE:
    case FIKIT_ADMIT_RECHECK:
        m->r->task[i].paces++;
        push(m, a.until_ns > now ? a.until_ns : now + 1000, EV_STEP, (uint32_t)i, 0);
        return;
    case FIKIT_ADMIT_HOLD:
        t->held = true;
        t->queued = false;
        t->held_key = key;
        t->held_dur = dur;
        t->held_posted = now;
        m->r->task[i].holds++;
        schedule_pass(m, now + m->s->pickup_ns);
        return;
    }
}

/* The task's program waited and found its work done: its burst ended, as
 * interpose/burst.c publishes it (fikit_admit reads it). */
static void waited(struct sim *m, size_t i, uint64_t now)
{
    m->t[i].waited_at = now;
    m->t[i].launched_since_wait = false;
    /* As interpose/burst.c: the wait found its work done. */
    fikit_shm_own_drained(&m->t[i].own, now);
    if (m->t[i].registered)
        atomic_store_explicit(&m->shm->slots[i]->waited_ns, now, memory_order_relaxed);
}

static void step(struct sim *m, size_t i, uint64_t now)
{
    struct trun *t = &m->t[i];
    const struct fikit_sim_step *st = cur_step(t);
    if (st->op == FIKIT_SIM_LAUNCH) {
        issue_launch(m, i, now);
    } else if (t->outstanding) {
        t->wait_sync = true;
    } else {
        waited(m, i, now);
        advance(m, i, now);
    }
}

static void kernel_done(void *user, uint32_t ctx, uint64_t cookie, uint64_t start_ns, uint64_t end_ns)
{
    (void)cookie;
    struct sim *m = user;
    struct trun *t = &m->t[ctx];
    struct inflight f = *(const struct inflight *)fikit_sim_fifo_front(&t->fl);
    trace_event(m, t->w->kernels[f.kernel], "kernel", 2 * ctx, start_ns, end_ns - start_ns, true);
    fikit_sim_fifo_pop(&t->fl);
    if (t->spec->measure) {
        struct fikit_measure_store *st = t->spec->measure;
        if (!fikit_measure_kernel(st, f.key)) {
            struct fikit_kernel_desc d = {.backend = FIKIT_BACKEND_CUDA, .name = "sim"};
            (void)fikit_measure_add_kernel(st, f.key, &d);
        }
        (void)fikit_measure_add_duration(st, f.key, end_ns - start_ns);
        /* A gap before a burst's first launch is idle between bursts, as
         * the client learns it (interpose/learn.c): not what the idle
         * threshold is built on. */
        if (t->have_last)
            (void)fikit_measure_add_gap_at(st, t->last_prev, t->last_key,
                                           start_ns > t->last_end ? start_ns - t->last_end : 0, f.opens_burst);
        t->have_last = true;
        t->last_end = end_ns;
        t->last_key = f.key;
        t->last_prev = f.prev;
    }
    t->outstanding--;
    if (t->wait_sync && !t->outstanding) {
        t->wait_sync = false;
        waited(m, ctx, end_ns);
        advance(m, ctx, end_ns);
    }
}

/* --------------------------------------------------------------- fikitd */

/* The held threads see their grants wake_ns later. */
static void deliver_grants(void *user, const struct fikit_grant *g, size_t n)
{
    struct sim *m = user;
    for (size_t k = 0; k < n; k++)
        push(m, g[k].at_ns + m->s->wake_ns, EV_GRANT, g[k].task_id, 0);
}

/* One pass of fikitd's arbiter (fikitd/device.c arbiter_main). */
static void daemon_pass(struct sim *m, uint64_t now)
{
    m->r->passes++;
    for (size_t i = 0; i < m->n; i++) {
        struct trun *t = &m->t[i];
        if (!t->registered)
            continue;
        (void)fikit_shm_take_record(m->shm->slots[i], &m->sched, (uint32_t)i, now, &t->seen_launches);
        if (t->held && !t->queued) {
            struct fikit_request r = {.task_id = (uint32_t)i, .ticket = (uint32_t)i, .stream = 0,
                                      .key = t->held_key, .dur_ns = t->held_dur,
                                      .posted_ns = t->held_posted};
            if (fikit_sched_post(&m->sched, &r) == 0)
                t->queued = true;
        }
    }
    uint64_t wake = UINT64_MAX;
    fikit_shm_decide(m->shm, &m->sched, now, deliver_grants, m, &wake);
    uint64_t next = UINT64_MAX;
    if (m->sched.nreq) {
        next = wake;
        if (m->sched.watch_launches && now + m->s->poll_ns < next)
            next = now + m->s->poll_ns;
    }
    /* A pass takes fikitd microseconds of its own (fikit status: pass), so
     * the next one comes no sooner. */
    if (next != UINT64_MAX)
        schedule_pass(m, next > now + FIKIT_MODEL_PASS_NS ? next : now + FIKIT_MODEL_PASS_NS);
}

static void grant(struct sim *m, size_t i, uint64_t now)
{
    struct trun *t = &m->t[i];
    if (!t->held)
        return;
    t->held = false;
    t->queued = false;
    m->r->task[i].grants++;
    m->r->task[i].held_ns += now - t->held_posted;
    trace_event(m, "held until granted", "hold", 2 * (uint32_t)i + 1, t->held_posted, now - t->held_posted, true);
    launch_now(m, i, now, t->held_dur, 0);
}

/* ------------------------------------------------------------------ run */

static int setup_task(struct sim *m, size_t i, const struct fikit_sim_task *spec, struct fikit_err *err)
{
    struct trun *t = &m->t[i];
    t->spec = spec;
    t->w = spec->w;
    t->queue.size = sizeof(uint64_t);
    t->fl.size = sizeof(struct inflight);
    t->service = spec->w->kind == FIKIT_SIM_SERVICE;
    t->rng = m->s->seed * 0x100000001b3ull + i * 0x9e3779b97f4a7c15ull + 1;
    t->keys = calloc(t->w->nsteps ? t->w->nsteps : 1, sizeof *t->keys);
    uint64_t *hash = calloc(t->w->nkernels ? t->w->nkernels : 1, sizeof *hash);
    if (!t->keys || !hash) {
        free(hash);
        return fikit_err_set(err, -ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < t->w->nkernels; k++)
        hash[k] = fikit_kernel_name_hash(FIKIT_BACKEND_CUDA, t->w->kernels[k]);
    for (size_t k = 0; k < t->w->nsteps; k++) {
        const struct fikit_sim_step *st = &t->w->steps[k];
        if (st->op != FIKIT_SIM_LAUNCH)
            continue;
        uint32_t grid[3] = {st->blocks, 1, 1}, block[3] = {st->threads, 1, 1};
        t->keys[k] = fikit_kernel_key_from_hash(hash[st->kernel], grid, block, 0);
    }
    free(hash);
    if (m->s->fikit) {
        t->registered = true;
        if (spec->profile) {
            t->pred = fikit_predictor_new();
            if (!t->pred)
                return fikit_err_set(err, -ENOMEM, "out of memory");
            fikit_predictor_load(t->pred, spec->profile);
            t->idle_after_ns = fikit_measure_idle_gap(spec->profile);
        }
        fikit_budget_set_add(&m->budgets, (int)i, spec->level, spec->beside, spec->budget, spec->budget_of_requests,
                             spec->budget_ref);
        fikit_shm_local_register(m->shm, (int)i, spec->level);
        int rc = fikit_sched_add_task(&m->sched, (uint32_t)i, (int32_t)i + 1, spec->w->name, spec->level);
        if (rc)
            return fikit_err_set(err, rc, "task %s: priority %d refused by the scheduler", spec->w->name,
                                 spec->level);
    }
    fikit_sim_gpu_context(m->gpu, (uint32_t)i, spec->level, spec->thread_pct);
    return 0;
}

int fikit_sim_run(const struct fikit_sim_setup *s, const struct fikit_sim_task *tasks, size_t ntasks,
                  struct fikit_sim_result *r, struct fikit_err *err)
{
    memset(r, 0, sizeof *r);
    if (!ntasks || ntasks > FIKIT_SIM_MAX_TASKS)
        return fikit_err_set(err, -EINVAL, "%zu tasks: accepted: 1 to %d", ntasks, FIKIT_SIM_MAX_TASKS);
    struct sim *m = calloc(1, sizeof *m);
    if (!m)
        return fikit_err_set(err, -ENOMEM, "out of memory");
    m->s = s;
    m->r = r;
    m->n = ntasks;
    m->pass_at = UINT64_MAX;
    m->service = -1;
    fikit_budget_set_init(&m->budgets);
    r->ntasks = ntasks;
    fikit_sim_evq_init(&m->q);
    int rc = 0;
    m->gpu = fikit_sim_gpu_new(s->dev, s->substrate, s->mps_priority, (uint32_t)ntasks, &m->q,
                               kernel_done, m);
    if (s->fikit && fikit_shm_local(&m->shm) != 0)
        m->shm = NULL;
    if (!m->gpu || (s->fikit && !m->shm)) {
        rc = fikit_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    if (s->fikit) {
        /* As fikit_config_sched_params says of the substrate. */
        struct fikit_sched_params p = s->sched;
        p.switches_contexts = s->substrate == FIKIT_SIM_TIMESLICE;
        fikit_sched_init(&m->sched, &p);
        fikit_shm_publish_params(&m->shm->hdr->params, &p, 0);
        /* Each task's slot, level and fikitd's state: setup_task, as fikitd
         * registers a program (fikit_shm_local_register). */
    }
    for (size_t i = 0; i < ntasks; i++) {
        if (tasks[i].w->kind == FIKIT_SIM_SERVICE) {
            if (m->service >= 0) {
                rc = fikit_err_set(err, -EINVAL, "two services (%s, %s): the model runs one", tasks[m->service].w->name,
                                   tasks[i].w->name);
                goto out;
            }
            m->service = (int)i;
        }
        if (tasks[i].level < 0 || tasks[i].level >= FIKIT_LEVELS) {
            rc = fikit_err_set(err, -EINVAL, "task %s: priority %d: accepted: 0 to 9", tasks[i].w->name,
                               tasks[i].level);
            goto out;
        }
        if ((rc = setup_task(m, i, &tasks[i], err)) != 0)
            goto out;
    }
    if (s->fikit) {
        /* A fixed setting: pinned, within the ladder its lower tasks reach
         * (known once every task is added: a beside task below raises it). */
        for (size_t i = 0; i < ntasks; i++) {
            struct fikit_budget *b = &m->budgets.b[i];
            if (tasks[i].budget_step > 0 && (m->budgets.steered & (1ull << i)))
                b->step = tasks[i].budget_step - 1 < b->top ? tasks[i].budget_step - 1 : b->top;
        }
        steer(m);
    }
    if (m->service < 0 && !s->loop_ns) {
        rc = fikit_err_set(err, -EINVAL, "no service and no run length: nothing would end the run");
        goto out;
    }
    if (s->trace) {
        for (size_t i = 0; i < ntasks; i++) {
            for (int host = 0; host < 2; host++) {
                fprintf(s->trace, "%s{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%zu,"
                                  "\"args\":{\"name\":\"", m->traced_any ? ",\n" : "", 2 * i + (size_t)host);
                json_str(s->trace, tasks[i].w->name);
                fprintf(s->trace, ": %s\"}}", host ? "host" : "device");
                m->traced_any = true;
            }
        }
    }
    for (size_t i = 0; i < ntasks; i++) {
        if ((int)i == m->service) {
            m->t[i].req_arrival = T0;
            start_sequence(m, i, T0);
            next_arrival(m, i, T0);
        } else {
            start_sequence(m, i, T0);
        }
    }
    if (m->service < 0) {
        push(m, T0 + s->loop_ns / 10, EV_WINDOW, 0, 0);
        push(m, T0 + s->loop_ns, EV_END, 0, 0);
    } else if (!s->warmup) {
        m->window = true;
        m->window_start = T0;
    }
    struct fikit_sim_event e;
    while (!m->stop && !m->failed && fikit_sim_evq_pop(&m->q, &e)) {
        r->events++;
        if (e.type >= FIKIT_SIM_GPU_EVENTS) {
            fikit_sim_gpu_event(m->gpu, &e);
            continue;
        }
        switch (e.type) {
        case EV_STEP: step(m, e.a, e.t); break;
        case EV_ARRIVAL: arrive(m, e.a, e.t); break;
        case EV_PASS:
            if (e.b == m->pass_at) {
                m->pass_at = UINT64_MAX;
                daemon_pass(m, e.t);
            }
            break;
        case EV_GRANT: grant(m, e.a, e.t); break;
        case EV_WINDOW:
            m->window = true;
            m->window_start = e.t;
            break;
        case EV_END:
            m->stop = true;
            m->window_end = e.t;
            break;
        }
    }
    if (m->failed) {
        rc = fikit_err_set(err, m->failed, "out of memory");
    } else if (!m->stop) {
        rc = fikit_err_set(err, -EDEADLK, "the run ran out of events before its end (%llu requests done)",
                           (unsigned long long)m->completed);
    }
    r->window_ns = m->window_end > m->window_start ? m->window_end - m->window_start : 0;
    r->switches = fikit_sim_gpu_switches(m->gpu);
    for (size_t i = 0; i < ntasks; i++) {
        if (m->budgets.steered & (1ull << i)) {
            r->task[i].budget_step = m->budgets.b[i].step;
            r->task[i].budget_pace_ppm = m->budgets.b[i].pace_ppm;
            r->task[i].budget_load_ppm = m->budgets.b[i].load_ppm;
            r->task[i].budget_burst_ppm = m->budgets.b[i].burst_budget_ppm;
            r->task[i].budget_body_ppm = m->budgets.b[i].body_ppm;
            r->task[i].budget_unmeetable = m->budgets.b[i].unmeetable;
        }
    }
    r->preemptions = fikit_sim_gpu_preemptions(m->gpu);
out:
    for (size_t i = 0; i < ntasks; i++) {
        free(m->t[i].keys);
        fikit_sim_fifo_free(&m->t[i].queue);
        fikit_sim_fifo_free(&m->t[i].fl);
        fikit_predictor_free(m->t[i].pred);
    }
    fikit_sim_gpu_free(m->gpu);
    fikit_sim_evq_free(&m->q);
    fikit_shm_unmap(m->shm);
    free(m);
    return rc;
}

void fikit_sim_result_free(struct fikit_sim_result *r)
{
    for (size_t i = 0; i < FIKIT_SIM_MAX_TASKS; i++) {
        free(r->task[i].latency_ns);
        free(r->task[i].burst_ns);
        free(r->task[i].burst_launches);
    }
    memset(r, 0, sizeof *r);
}
