#include "interpose/gate.h"

#include "core/admit.h"
#include "core/collective.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/sched.h"
#include "interpose/fault.h"
#include "interpose/burst.h"
#include "interpose/learn.h"
#include "interpose/ptrmap.h"

#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <execinfo.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* --------------------------------------------------------- kernel names */

struct kernel_name {
    struct kernel_name *next; /* in its bucket of the interned names */
    int backend;
    uint64_t hash;   /* fikit_kernel_name_hash(backend, name) */
    bool collective; /* fikit_collective_kernel, or launched from libnccl */
    char name[];
};

/* Whether the launch in progress comes from a collective library's code
 * (fikit_collective_library): asked once per kernel handle. */
static bool launched_by_collective_library(void)
{
    void *frames[32];
    int n = backtrace(frames, 32);
    for (int i = 1; i < n; i++) {
        Dl_info info;
        if (dladdr(frames[i], &info) && fikit_collective_library(info.dli_fname))
            return true;
    }
    return false;
}

/* Each distinct (backend, name, collective) gets one record for the life of
 * the process, shared by every handle that names it: a program that
 * creates and releases the same kernels over and over (PyOpenCL makes a new
 * kernel object at each attribute lookup) allocates nothing after the first
 * time, and a record is never freed while a launch or the learner may still
 * read it. The number of records is that of the program's kernel names. */
#define INTERNED_BUCKETS 1024
static struct kernel_name *interned[INTERNED_BUCKETS];
static pthread_mutex_t interned_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct kernel_name *intern(int backend, const char *name, uint64_t hash, bool collective)
{
    struct kernel_name **b = &interned[hash % INTERNED_BUCKETS];
    pthread_mutex_lock(&interned_lock);
    struct kernel_name *e = *b;
    while (e && !(e->backend == backend && e->hash == hash && e->collective == collective &&
                  strcmp(e->name, name) == 0))
        e = e->next;
    if (!e) {
        size_t len = strlen(name);
        e = malloc(sizeof *e + len + 1);
        if (e) {
            e->backend = backend;
            e->hash = hash;
            e->collective = collective;
            memcpy(e->name, name, len + 1);
            e->next = *b;
            *b = e;
        }
    }
    pthread_mutex_unlock(&interned_lock);
    return e;
}

/* Handle -> record: a cache in front of the backend's name lookup. */
static struct fikit_ptrmap names = FIKIT_PTRMAP_INIT;

static const struct kernel_name *name_of(const struct fikit_backend_ops *ops,
                                         const struct fikit_launch_desc *l)
{
    const struct kernel_name *kn = fikit_ptrmap_get(&names, l->kernel);
    if (kn)
        return kn;
    char buf[1024];
    if (!l->kernel || ops->kernel_name(l, buf, sizeof buf) != 0)
        snprintf(buf, sizeof buf, "unnamed");
    /* NCCL and RCCL launch through CUDA and HIP only: an OpenCL program
     * (which may create kernels by the thousand) never pays the backtrace. */
    bool collective = fikit_collective_kernel(buf) ||
                      (ops->kind != FIKIT_BACKEND_OPENCL && launched_by_collective_library());
    kn = intern(ops->kind, buf, fikit_kernel_name_hash(ops->kind, buf), collective);
    if (!kn)
        return NULL;
    /* A full cache (handles past 3/4 of it, live or released) starts over:
     * the handles in use are named again from the backend at their next
     * launch, each to the record it had. */
    if (fikit_ptrmap_put(&names, l->kernel, (void *)kn) != 0) {
        fikit_ptrmap_clear(&names);
        (void)fikit_ptrmap_put(&names, l->kernel, (void *)kn);
    }
    return kn;
}

void fikit_gate_forget_kernel(const void *kernel) { fikit_ptrmap_remove(&names, kernel); }

void fikit_gate_forget_all_kernels(void) { fikit_ptrmap_clear(&names); }

void fikit_gate_after_fork_child(void)
{
    /* A thread of the parent may have held it at the fork. */
    pthread_mutex_init(&interned_lock, NULL);
    pthread_mutex_init(&names.lock, NULL);
}

/* ------------------------------------------------------------- holding */

static void trace(const struct fikit_registration *r, uint16_t type, uint64_t key, uint64_t a,
                  uint64_t b)
{
    if (!atomic_load_explicit(&r->hdr->trace_on, memory_order_relaxed))
        return;
    struct fikit_trace_event e = {.t_ns = fikit_now_ns(), .key = key, .a = a, .b = b, .type = type,
                                  .slot = (uint16_t)r->slot_index, .level = (uint16_t)r->level};
    fikit_shm_trace(r->shm, r->slot, &e);
}

/* How late this thread's timed sleeps may wake (its timer slack, 50 us by
 * default): a held thread wakes that much earlier than it means to spin.
 * Read once per thread, not changed: the slack is the program's. */
static uint64_t timer_slack_ns(void)
{
    static _Thread_local uint64_t slack = UINT64_MAX;
    if (slack == UINT64_MAX) {
        int v = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        slack = v > 0 ? (uint64_t)v : 0;
    }
    return slack;
}

/* Says once per process, on the program's own stderr, why a launch has
 * been held for warn_held_after_ms: a kernel longer than every gap of the
 * levels above waits for them to pause or turn idle, or for max_wait_ms;
 * fikitd's log and `fikit status` are not where a user looks first. */
static void say_why_held(const struct fikit_registration *r, const char *name, uint64_t dur,
                         uint64_t waited)
{
    static atomic_bool said;
    if (atomic_exchange(&said, true))
        return;
    /* fikitd's bound, not this process's fikit.ini: fikitd enforces its own. */
    uint64_t max_wait = atomic_load_explicit(&r->hdr->params.max_wait_ns, memory_order_relaxed);
    char bound[128];
    if (max_wait)
        snprintf(bound, sizeof bound, "it goes at their next gap once held %.0f ms, and once held %.0f ms at "
                 "the latest (max_wait_ms)", (double)max_wait / 1e6, 2 * (double)max_wait / 1e6);
    else
        snprintf(bound, sizeof bound, "max_wait_ms = 0: it waits for as long as they stay active");
    char pred[48];
    if (dur)
        snprintf(pred, sizeof pred, "predicted %.3f ms", (double)dur / 1e6);
    else
        snprintf(pred, sizeof pred, "never measured");
    fikit_warn("task %s (priority %d): kernel %s (%s) has waited %.1f s for higher-priority work to "
               "leave a gap it fits, pause or turn idle; %s (said once; `fikit status` shows each wait)",
               fikit_client.task, r->level, name ? name : "?", pred, (double)waited / 1e9, bound);
}

/* A wait that what another program wrote into the segment would make
 * endless ends, and the launch goes unscheduled: said once per process. */
static void unscheduled_because(const struct fikit_registration *r, const char *why)
{
    static atomic_bool said;
    if (!atomic_exchange(&said, true))
        fikit_warn("task %s, slot %d: %s; such a launch goes unscheduled rather than wait (said once)",
                   fikit_client.task, r->slot_index, why);
}

/* fikitd freed the task's slot (or gave it to another owner). */
static bool slot_gone(const struct fikit_registration *r)
{
    const struct fikit_shm_owner *o = &r->hdr->owner[r->slot_index];
    return atomic_load(&o->state) != FIKIT_SLOT_ACTIVE ||
           atomic_load(&o->gen) != atomic_load_explicit(&r->slot->gen, memory_order_relaxed);
}

/* Posts the launch into a waiter of our slot and sleeps until fikitd grants
 * it, or until fikitd is gone (the launch then goes unscheduled). Every
 * wait is bounded against what another program may write into the slot:
 * waiters taken by none of the task's threads, a held launch's state
 * changed to one neither side gives it, or a launch fikitd does not take
 * within FIKIT_PICKUP_WAIT_NS. */
static void hold(struct fikit_registration *r, void *stream, uint64_t key, const char *name, uint64_t dur,
                 uint64_t now)
{
    struct fikit_shm_slot *slot = r->slot;
    struct fikit_shm_waiter *w;
    for (int tries = 0;; tries++) {
        uint32_t mine = atomic_fetch_add(&r->holding, 1);
        if ((w = fikit_shm_waiter_post(slot, (uint64_t)(uintptr_t)stream, key, dur, now)))
            break;
        atomic_fetch_sub(&r->holding, 1);
        if (atomic_load(&r->hdr->daemon_state) != FIKIT_DAEMON_RUNNING ||
            atomic_load(&fikit_client.daemon_lost))
            return;
        /* Every waiter is taken: by other threads of this task, which
         * free theirs, unless fewer of them hold one than there are. */
        if (mine < FIKIT_SHM_WAITERS && tries >= 20) {
            unscheduled_because(r, "its waiters in fikit's shared segment are taken, not by its own "
                                   "threads (something in this process wrote its slot)");
            return;
        }
        usleep(100);
    }
    atomic_fetch_add(&slot->holds, 1);
    trace(r, FIKIT_TRACE_HOLD, key, dur, 0);
    fikit_shm_ring_arbiter(r->shm);
    fikit_fault_point(FIKIT_FAULT_HOLD);

    uint64_t spin = atomic_load_explicit(&r->hdr->params.spin_ns, memory_order_relaxed);
    uint64_t queued_in = 0; /* the arbiter's pass that queued us (pass_begun when first seen) */
    /* When to say why it waits: never again once past (a spinning loop
     * would otherwise touch the process-wide flag on every turn). */
    uint64_t warn_at = fikit_client.cfg.warn_held_ns ? now + fikit_client.cfg.warn_held_ns : UINT64_MAX;
    for (;;) {
        /* Read before anything is decided: a grant or a nudge after this
         * makes the futex wait below return at once. */
        uint32_t bumps = atomic_load(&w->futex);
        uint32_t st = atomic_load_explicit(&w->state, memory_order_acquire);
        if (st == FIKIT_WAITER_GRANTED)
            break;
        uint64_t t = fikit_now_ns();
        if (st != FIKIT_WAITER_POSTED && st != FIKIT_WAITER_QUEUED) {
            unscheduled_because(r, "its held launch's state in fikit's shared segment was changed "
                                   "(another program wrote the segment)");
            break;
        }
        if (st == FIKIT_WAITER_POSTED && t - now > FIKIT_PICKUP_WAIT_NS) {
            /* Taken back, unless fikitd takes it at this moment. */
            uint32_t posted = FIKIT_WAITER_POSTED;
            if (atomic_compare_exchange_strong(&w->state, &posted, FIKIT_WAITER_CLAIMED)) {
                unscheduled_because(r, "fikitd did not take a held launch within 2 s (its queue full, "
                                       "stopped, or the segment written by another program)");
                break;
            }
            continue;
        }
        if (t >= warn_at) {
            warn_at = UINT64_MAX;
            say_why_held(r, name, dur, t - now);
        }
        /* Undecided: not taken yet, or queued by a pass not finished. */
        if (st == FIKIT_WAITER_QUEUED && !queued_in)
            queued_in = atomic_load(&r->hdr->pass_begun);
        bool undecided = st == FIKIT_WAITER_POSTED ||
                         (queued_in && atomic_load(&r->hdr->pass_done) < queued_in);
        uint64_t due = atomic_load(&r->hdr->next_decision_ns);
        struct fikit_hold_plan plan;
        fikit_hold_plan(t, now, undecided, spin, due, timer_slack_ns(), &plan);
        if (plan.how == FIKIT_HOLD_TURN) {
            fikit_cpu_relax();
            continue;
        }
        if (plan.how == FIKIT_HOLD_SPIN) {
            while (!fikit_shm_waiter_granted(w) && fikit_now_ns() < plan.until_ns)
                fikit_cpu_relax();
            if (fikit_shm_waiter_granted(w) || !plan.check_daemon)
                continue;
            if (atomic_load(&r->hdr->daemon_state) != FIKIT_DAEMON_RUNNING ||
                atomic_load(&fikit_client.daemon_lost) || slot_gone(r))
                break; /* no daemon to grant it: go unscheduled */
            fikit_client_check_daemon();
            continue;
        }
        uint64_t timeout = plan.timeout_ns;
        atomic_store_explicit(&w->sleep_until_ns, t + timeout, memory_order_relaxed);
        /* Say we sleep, then look once more (all sequentially consistent):
         * fikitd stores a grant or a sooner decision, then reads this flag,
         * so either we see the grant or the new decision here, or fikitd
         * sees us asleep and bumps the futex and wakes us. */
        atomic_store(&w->sleeping, 1);
        if (atomic_load(&w->state) == FIKIT_WAITER_GRANTED) {
            atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
            break;
        }
        if (atomic_load(&r->hdr->next_decision_ns) != due) {
            atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
            continue;
        }
        int rc = fikit_futex_wait(&w->futex, bumps, timeout);
        atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
        if (rc == -ETIMEDOUT &&
            (atomic_load(&r->hdr->daemon_state) != FIKIT_DAEMON_RUNNING ||
             atomic_load(&fikit_client.daemon_lost) || slot_gone(r)))
            break; /* no daemon to grant it: go unscheduled */
        if (rc == -ETIMEDOUT)
            fikit_client_check_daemon();
    }
    fikit_fault_point(FIKIT_FAULT_GRANTED);
    atomic_fetch_add(&slot->grants, 1);
    fikit_shm_waiter_free(w);
    atomic_fetch_sub(&r->holding, 1);
}

/* Sleeps until an absolute instant (EINTR: looked at again sooner). */
static void sleep_until(uint64_t until)
{
    struct timespec ts = {.tv_sec = (time_t)(until / FIKIT_NS_PER_S), .tv_nsec = (long)(until % FIKIT_NS_PER_S)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* Asks fikit_admit whether the launch goes now, fills a gap by itself,
 * waits for its queue to drain or to look again, or is held for fikitd,
 * and does what it says: returns when the launch may go. */
static uint64_t admit(struct fikit_registration *r, const struct fikit_backend_ops *ops, void *stream,
                      uint64_t key, const char *name, uint64_t dur, bool collective, uint64_t now,
                      uint32_t *sm_pct)
{
    if (fikit_admit_nothing_above(atomic_load_explicit(&r->hdr->level_mask, memory_order_relaxed),
                                  r->level))
        return now; /* the high-priority path: one load, no snapshot */
    struct fikit_admit_task tasks[FIKIT_SHM_SLOTS];
    for (;;) {
        struct fikit_view v;
        struct fikit_admit a;
        uint64_t unmapped = 0;
        uint32_t confine_pct;
        bool beside = fikit_client_beside(ops, &confine_pct);
        fikit_shm_view(r->shm, r->slot_index, r->level, beside, &v, tasks, &unmapped);
        /* A task above that this process has no mapping of yet (it
         * registered since): ask fikitd for it once, and look again if
         * that mapped it (else it stays unreadable: the launch holds). */
        if (unmapped && fikit_client_fetch_slots(r, unmapped))
            fikit_shm_view(r->shm, r->slot_index, r->level, beside, &v, tasks, NULL);
        v.confine_pct = confine_pct;
        /* Its own queue as it knows it, not as the slot shows it: a pace
         * lasts at most what the task itself launched. */
        v.own_busy_until_ns = fikit_shm_own_busy_until(&r->own);
        fikit_collective_admit(&v, now, dur, collective, &a);
        switch (a.kind) {
        case FIKIT_ADMIT_GO:
            *sm_pct = a.sm_pct;
            return now;
        case FIKIT_ADMIT_FILL: {
            /* Another client or fikitd may have moved the fills since the
             * snapshot; then look again. */
            if (!fikit_shm_fill_commit(r->shm, v.fill_until_ns, a.fill_until_ns))
                break;
            atomic_fetch_add_explicit(&r->slot->fills, 1, memory_order_relaxed);
            trace(r, FIKIT_TRACE_FILL, key, a.room_ns, dur);
            return now;
        }
        case FIKIT_ADMIT_PACE: {
            uint64_t queued = v.own_busy_until_ns - now;
            sleep_until(a.until_ns);
            atomic_fetch_add_explicit(&r->slot->paces, 1, memory_order_relaxed);
            trace(r, FIKIT_TRACE_PACE, 0, queued, fikit_now_ns() - now);
            break;
        }
        case FIKIT_ADMIT_RECHECK:
            sleep_until(a.until_ns);
            atomic_fetch_add_explicit(&r->slot->paces, 1, memory_order_relaxed);
            trace(r, FIKIT_TRACE_PACE, key, 0, fikit_now_ns() - now);
            break;
        case FIKIT_ADMIT_HOLD:
            hold(r, stream, key, name, dur, now);
            return fikit_now_ns();
        }
        now = fikit_now_ns();
    }
}

/* ------------------------------------------------------------ the gate */


void fikit_gate_enter(struct fikit_gate *g, const struct fikit_backend_ops *ops,
                      struct fikit_launch_desc *l)
{
    memset(g, 0, sizeof *g);
    if (!fikit_client_wants(ops->kind))
        return;
    /* A launch into a stream being captured into a graph is recorded, not
     * run: fikit leaves it alone and gates the graph's launch instead. The
     * driver is asked only while a capture is open in this process. */
    if (ops->captures_open && ops->captures_open() && ops->stream_capturing(l))
        return;
    struct fikit_client_device *d = fikit_client_device(ops, l);
    if (!d)
        return;
    struct fikit_client *c = &fikit_client;
    uint64_t name_hash;
    bool collective = false; /* hook-named launches: graphs, OpenCL native kernels */
    if (l->name) {
        g->name = l->name;
        name_hash = fikit_kernel_name_hash(ops->kind, l->name);
    } else {
        const struct kernel_name *kn = name_of(ops, l);
        if (!kn)
            return;
        g->name = kn->name;
        name_hash = kn->hash;
        collective = kn->collective;
    }
    g->dev = d;
    g->ops = ops;
    g->key = fikit_kernel_key_from_hash(name_hash, l->grid, l->block, l->shmem);
    g->prev = atomic_exchange_explicit(&c->last_key, g->key, memory_order_relaxed);
    g->seq = atomic_fetch_add_explicit(&c->launch_seq, 1, memory_order_relaxed);
    g->burst_first = fikit_burst_launched(d, g->seq);
    uint64_t dur = fikit_predict_duration(d->pred, g->key);

    struct fikit_registration *r = atomic_load_explicit(&d->reg, memory_order_acquire);
    if (r) {
        uint64_t now = admit(r, ops, l->stream, g->key, g->name, dur, collective, fikit_now_ns(), &g->sm_pct);
        /* The publication is for the levels below, which fill its gaps
         * (and for the trace): with none registered, the launch is only
         * counted, and the slot written once a millisecond for status. */
        uint32_t mask = atomic_load_explicit(&r->hdr->level_mask, memory_order_relaxed);
        bool watched = (mask >> (r->level + 1)) != 0 ||
                       atomic_load_explicit(&r->hdr->trace_on, memory_order_relaxed);
        uint64_t busy; /* the predicted end of its queued work, this launch's included */
        if (watched || now - fikit_shm_own_published(&r->own) >= FIKIT_SHM_UNWATCHED_PUBLISH_NS) {
            struct fikit_gap_pred gap;
            fikit_predict_gap(d->pred, g->prev, g->key, &gap);
            busy = fikit_shm_publish_own(r->slot, &r->own, now, dur, g->key, &gap,
                                                  atomic_load_explicit(&d->idle_after_ns,
                                                                       memory_order_relaxed),
                                                  &g->ticket);
            /* Into the trace once the runtime took it (fikit_gate_exit). */
            if (atomic_load_explicit(&r->hdr->trace_on, memory_order_relaxed))
                g->launch_event = (struct fikit_trace_event){
                    .t_ns = fikit_now_ns(), .key = g->key, .a = busy, .b = gap.q_ns[2],
                    .type = FIKIT_TRACE_LAUNCH, .slot = (uint16_t)r->slot_index, .level = (uint16_t)r->level};
        } else {
            busy = fikit_shm_own_count(&r->own, now, dur, &g->ticket);
        }
        /* Below a level, its queued work tells the bursts above whether
         * they ran quiet (what their budget's pace is measured by). */
        if (!fikit_admit_nothing_above(mask, r->level))
            fikit_shm_note_level_busy(r->shm->com, r->level, busy);
        g->reg = r;
        fikit_fault_point(FIKIT_FAULT_LAUNCH);
    }

    /* Timing: every launch while measuring; otherwise pairs of consecutive
     * launches every sample period (a pair gives a gap), and kernels never
     * measured, which may not run beside higher levels until they are. */
    if (c->measure) {
        g->sample = true;
    } else if (c->sample_period) {
        uint32_t left = atomic_fetch_sub_explicit(&c->sample_countdown, 1, memory_order_relaxed);
        if (left <= 2) {
            g->sample = true;
            if (left <= 1)
                atomic_store_explicit(&c->sample_countdown, c->sample_period, memory_order_relaxed);
        } else if (dur == 0 && fikit_learn_room(&c->learner) > 64) {
            g->sample = true;
        }
    }
    if (g->sample)
        g->marker_ok = ops->marker_begin(l, &g->marker) == 0;
}

void fikit_gate_exit(struct fikit_gate *g, struct fikit_launch_desc *l, bool launched)
{
    /* A launch the runtime refused is no launch: taken back from what the
     * task published (nobody waits on it), never traced, never timed. */
    if (g->reg) {
        if (!launched)
            fikit_shm_withdraw_own(g->reg->slot, &g->reg->own, g->ticket, fikit_now_ns());
        else if (g->launch_event.type)
            fikit_shm_trace(g->reg->shm, g->reg->slot, &g->launch_event);
    }
    if (!g->dev || !g->marker_ok)
        return;
    if (!launched || g->ops->marker_end(l, &g->marker) != 0) {
        g->ops->marker_release(&g->marker);
        return;
    }
    struct fikit_sample s = {.dev = g->dev, .seq = g->seq, .key = g->key, .prev = g->prev,
                             .burst_first = g->burst_first,
                             .name = g->name, .shmem = l->shmem, .marker = g->marker};
    memcpy(s.grid, l->grid, sizeof s.grid);
    memcpy(s.block, l->block, sizeof s.block);
    if (!fikit_learn_submit(&fikit_client.learner, &s))
        g->ops->marker_release(&g->marker);
}
