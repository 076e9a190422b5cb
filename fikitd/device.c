#include "fikitd/device.h"

#include "core/clock.h"
#include "core/log.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define TICKET(slot, w) ((uint32_t)(slot) * FIKIT_SHM_WAITERS + (uint32_t)(w))

static void trace_add(struct fikitd_device *dev, const struct fikit_trace_event *e)
{
    if (!dev->trace_cap)
        return;
    if (dev->trace_count == dev->trace_cap)
        fikit_warn("device %d: the trace holds its newest %zu events ([daemon] trace_events); older ones "
                   "are dropped from now on",
                   dev->index, dev->trace_cap);
    dev->trace[dev->trace_count % dev->trace_cap] = *e;
    dev->trace_count++;
}

static void update_masks(struct fikitd_device *dev)
{
    uint32_t levels = 0;
    uint64_t slots = 0;
    for (int i = 0; i < FIKIT_SHM_SLOTS; i++) {
        if (dev->slots[i].used) {
            levels |= 1u << dev->slots[i].level;
            slots |= 1ull << i;
        }
    }
    atomic_store(&dev->shm->hdr->slot_mask, slots);
    atomic_store(&dev->shm->hdr->level_mask, levels);
}

static void note_trace_lost(struct fikitd_device *dev, struct fikitd_slot_info *info, uint64_t lost)
{
    if (!info->trace_loss_warned)
        fikit_warn("device %d: task %s (pid %d) wrote trace events faster than fikitd read them; "
                   "%llu lost ('fikit status' counts them all)",
                   dev->index, info->name, (int)info->pid, (unsigned long long)lost);
    info->trace_loss_warned = true;
    dev->trace_lost += lost;
}

/* Reads a slot's trace ring in order up to the first event not yet written
 * (its writer will finish it, or a later writer overwrites it: lost). */
static void drain_trace_ring(struct fikitd_device *dev, int s)
{
    struct fikit_shm_slot *slot = dev->shm->slots[s];
    struct fikitd_slot_info *info = &dev->slots[s];
    uint64_t head = atomic_load(&slot->trace_head);
    if (head - info->trace_read > 2 * FIKIT_SHM_TRACE) {
        /* Far behind (writers gave up waiting): what is older than a ring is gone. */
        note_trace_lost(dev, info, head - FIKIT_SHM_TRACE - info->trace_read);
        info->trace_read = head - FIKIT_SHM_TRACE;
    }
    for (; info->trace_read < head; info->trace_read++) {
        struct fikit_trace_event e;
        int r = fikit_shm_trace_read(slot, info->trace_read, &e);
        if (r == FIKIT_TRACE_NOT_YET)
            break;
        if (r == FIKIT_TRACE_OVERWRITTEN) {
            note_trace_lost(dev, info, 1);
            continue;
        }
        e.slot = (uint16_t)s; /* never trust the client's idea of its slot */
        e.level = (uint16_t)info->level;
        if (e.type == FIKIT_TRACE_LAUNCH || e.type == FIKIT_TRACE_HOLD || e.type == FIKIT_TRACE_GAP ||
            e.type == FIKIT_TRACE_KERNEL || e.type == FIKIT_TRACE_FILL || e.type == FIKIT_TRACE_PACE)
            trace_add(dev, &e);
    }
    atomic_store_explicit(&slot->trace_tail, info->trace_read, memory_order_release);
}

/* Through fikit_sched_note_record, which ignores implausible records. */
void fikitd_device_sync_records(struct fikitd_device *dev, uint64_t now)
{
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
        struct fikitd_slot_info *info = &dev->slots[s];
        if (!info->used)
            continue;
        if (fikit_shm_take_record(dev->shm->slots[s], &dev->sched, (uint32_t)s, now, &info->launches) ==
                -EINVAL &&
            !info->warned) {
            info->warned = true;
            fikit_warn("device %d: task %s (pid %d) published an implausible launch record; "
                       "ignoring it", dev->index, info->name, (int)info->pid);
        }
    }
    fikitd_steer_sync(dev, now);
}

/* Brings the scheduler up to date with what clients published: their
 * launch records and the launches they hold. */
static void sync_slots(struct fikitd_device *dev, uint64_t now)
{
    fikitd_device_sync_records(dev, now);
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
        if (!dev->slots[s].used)
            continue;
        struct fikit_shm_slot *slot = dev->shm->slots[s];
        for (int w = 0; w < FIKIT_SHM_WAITERS; w++) {
            struct fikit_shm_waiter *wt = &slot->waiters[w];
            struct fikit_shm_posted p;
            if (!fikit_shm_waiter_posted(wt, &p))
                continue;
            struct fikit_request r = {.task_id = (uint32_t)s,
                                      .ticket = TICKET(s, w),
                                      .stream = p.stream,
                                      .key = p.key,
                                      .dur_ns = p.dur_ns > FIKIT_NS_PER_S * 3600 ? 0 : p.dur_ns,
                                      /* Not ahead of now, nor older than a client
                                       * waits to be taken (so not starving at once). */
                                      .posted_ns = p.posted_ns > now || now - p.posted_ns > FIKIT_PICKUP_WAIT_NS
                                                       ? now : p.posted_ns};
            /* Queued first, so a client that takes its launch back at
             * this moment (it waited too long) finds it taken, not lost. */
            if (!fikit_shm_waiter_queue(wt))
                continue;
            if (fikit_sched_post(&dev->sched, &r) == 0) {
                (void)fikit_stat_add(&dev->pickup, now - r.posted_ns);
            } else {
                uint32_t queued = FIKIT_WAITER_QUEUED; /* the queue is full: next pass */
                atomic_compare_exchange_strong(&wt->state, &queued, FIKIT_WAITER_POSTED);
            }
        }
    }
}

/* The clients' trace rings into the daemon's trace: after the decisions,
 * so tracing does not delay a grant. */
static void drain_trace_rings(struct fikitd_device *dev)
{
    if (!dev->tracing)
        return;
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++)
        if (dev->slots[s].used)
            drain_trace_ring(dev, s);
}

static struct fikit_shm_waiter *waiter_of(struct fikitd_device *dev, const struct fikit_grant *g)
{
    uint32_t s = g->ticket / FIKIT_SHM_WAITERS, w = g->ticket % FIKIT_SHM_WAITERS;
    return s < FIKIT_SHM_SLOTS ? &dev->shm->slots[s]->waiters[w] : NULL;
}

/* Grants are applied in two steps: every granted waiter is marked first,
 * so a spinning one goes at once, and only then are the sleeping ones
 * woken, each wake-up a system call that would otherwise delay the grants
 * after it. */
static void mark_granted(struct fikitd_device *dev, const struct fikit_grant *g)
{
    struct fikit_shm_waiter *wt = waiter_of(dev, g);
    if (!wt)
        return;
    uint32_t s = g->ticket / FIKIT_SHM_WAITERS;
    /* Whether it sleeps (apply_grants then wakes it), for the trace. */
    bool asleep = fikit_shm_waiter_grant(wt, g->reason, g->at_ns);
    dev->grants[fikit_grant_count_of(g->reason)]++;
    if (dev->tracing) {
        struct fikit_trace_event e = {.t_ns = g->at_ns, .key = g->key, .a = g->room_ns,
                                      .b = g->dur_ns, .c = g->posted_ns,
                                      .type = FIKIT_TRACE_GRANT, .slot = (uint16_t)s,
                                      .reason = (uint16_t)(g->reason |
                                                           (asleep ? FIKIT_TRACE_GRANT_WOKEN : 0)),
                                      .level = (uint16_t)dev->slots[s].level};
        trace_add(dev, &e);
    }
}

static void apply_grants(void *user, const struct fikit_grant *g, size_t n)
{
    struct fikitd_device *dev = user;
    for (size_t i = 0; i < n; i++)
        mark_granted(dev, &g[i]);
    for (size_t i = 0; i < n; i++) {
        struct fikit_shm_waiter *wt = waiter_of(dev, &g[i]);
        if (wt)
            fikit_shm_waiter_wake(wt);
    }
}

/* A held thread asleep until later than the next decision (it went to sleep
 * before fikitd knew of it, when a high-priority launch had not yet shown
 * the gap) is woken now, so it is spinning when the decision comes: the
 * wake-up's tens of microseconds are paid ahead of the grant, not after. */
static void nudge_sleepers(struct fikitd_device *dev, uint64_t decision_ns)
{
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
        if (!dev->slots[s].used)
            continue;
        for (int w = 0; w < FIKIT_SHM_WAITERS; w++) {
            struct fikit_shm_waiter *wt = &dev->shm->slots[s]->waiters[w];
            if (atomic_load_explicit(&wt->state, memory_order_relaxed) != FIKIT_WAITER_QUEUED ||
                !atomic_load(&wt->sleeping) ||
                !fikit_arbiter_nudge_due(atomic_load_explicit(&wt->sleep_until_ns, memory_order_relaxed),
                                         decision_ns, dev->spin_ns))
                continue;
            fikit_shm_waiter_nudge(wt);
            dev->nudges++;
        }
    }
}

/* A launch held warn_held_ns is logged, once a minute per task at most: a
 * kernel predicted longer than every gap of the levels above waits for as
 * long as they stay active, and nothing else would tell its user why. */
#define HELD_WARN_EVERY_NS (60 * FIKIT_NS_PER_S)

static void warn_long_holds(struct fikitd_device *dev, uint64_t now)
{
    const struct fikit_sched *s = &dev->sched;
    /* req[] is in posting order: if the first has not waited long, none has. */
    if (!dev->warn_held_ns || s->nreq == 0 || now - s->req[0].posted_ns < dev->warn_held_ns)
        return;
    int top = -1;
    char above[160] = "";
    for (size_t i = 0; i < s->nreq && now - s->req[i].posted_ns >= dev->warn_held_ns; i++) {
        const struct fikit_request *r = &s->req[i];
        struct fikitd_slot_info *info = &dev->slots[r->task_id];
        if (!info->used || (info->held_warned_ns && now - info->held_warned_ns < HELD_WARN_EVERY_NS))
            continue;
        info->held_warned_ns = now;
        if (top < 0) { /* who it waits behind: only once a warning is due, not on every pass */
            top = fikit_sched_top_level(s, now);
            size_t len = 0;
            for (int k = 0; k < FIKIT_MAX_TASKS && len < sizeof above; k++) {
                const struct fikit_task_state *t = &s->tasks[k]; /* t->id is its slot */
                if (t->used && t->level == top && fikit_sched_task_active(s, t, now))
                    len += (size_t)snprintf(above + len, sizeof above - len, "%stask %s, pid %d",
                                            len ? "; " : "", dev->slots[t->id].name,
                                            (int)dev->slots[t->id].pid);
            }
        }
        char pred[64];
        if (r->dur_ns)
            snprintf(pred, sizeof pred, "predicted to take %.3f ms", r->dur_ns / 1e6);
        else
            snprintf(pred, sizeof pred, "never measured");
        fikit_warn("device %d: task %s (pid %d, priority %d) has waited %.1f s to launch kernel %016llx "
                   "(%s): the gaps of priority %d (%s) have had no room for it. It runs when that level "
                   "goes idle. If the prediction is wrong (a measuring run that started slowly), "
                   "see `fikit profile show %s` and measure again with fikit-launch --measure "
                   "(logged at most once a minute per task; [daemon] warn_held_after_ms)",
                   dev->index, info->name, (int)info->pid, info->level, (now - r->posted_ns) / 1e9,
                   (unsigned long long)r->key, pred, top, above[0] ? above : "no task active now",
                   info->name);
    }
}

static void *arbiter_main(void *arg)
{
    struct fikitd_device *dev = arg;
    /* Timer slack decides how late a timed sleep wakes: keep it tight. */
    prctl(PR_SET_TIMERSLACK, 1000UL);
    _Atomic uint32_t *bell = &dev->shm->com->arbiter_futex;
    for (;;) {
        uint32_t seen = atomic_load(bell);
        pthread_mutex_lock(&dev->lock);
        if (dev->stopping) {
            pthread_mutex_unlock(&dev->lock);
            break;
        }
        /* Held launches spin until the pass that queued them is done. */
        atomic_store(&dev->shm->hdr->pass_begun, ++dev->passes);
        uint64_t now = fikit_now_ns(), wake;
        sync_slots(dev, now);
        /* With launches to decide about, the gap is fikitd's: clients that
         * would fill it by themselves hold instead, and what they filled
         * before is taken. What fikitd grants, they see taken after. */
        fikit_shm_decide(dev->shm, &dev->sched, now, apply_grants, dev, &wake);
        (void)fikit_stat_add(&dev->pass, fikit_now_ns() - now);
        warn_long_holds(dev, now);
        drain_trace_rings(dev);
        bool watch = dev->sched.watch_launches;
        bool tracing = dev->tracing;
        /* Held launches spin shortly before this instant (spin_us). */
        bool held = dev->sched.nreq != 0; /* read under the lock: a task that leaves drops its requests */
        uint64_t decision = held && wake != UINT64_MAX ? wake : 0;
        atomic_store(&dev->shm->hdr->next_decision_ns, decision);
        atomic_store(&dev->shm->hdr->pass_done, dev->passes);
        if (decision && dev->spin_ns && dev->spin_ns != FIKIT_SPIN_ALWAYS)
            nudge_sleepers(dev, decision);
        pthread_mutex_unlock(&dev->lock);

        /* Sleep until the scheduler's next decision point, spinning for its
         * last spin_us (a timed sleep wakes tens of microseconds late). High-
         * priority launches arrive without a system call, so while one of
         * them could open room earlier (the top level sits in a gap), look at
         * the slots every poll period: by sleeping, never by spinning. A
         * client that posts wakes us at once. (fikit_arbiter_plan) */
        struct fikit_arbiter_plan plan;
        fikit_arbiter_plan(now, wake, held, watch, tracing, dev->spin_ns, dev->poll_ns,
                           &plan);
        if (plan.how == FIKIT_ARBITER_AGAIN)
            continue;
        if (plan.how == FIKIT_ARBITER_SPIN) {
            while (fikit_now_ns() < plan.until_ns && atomic_load_explicit(bell, memory_order_relaxed) == seen)
                fikit_cpu_relax();
            continue;
        }
        uint64_t timeout = plan.timeout_ns < FIKITD_IDLE_WAKE_NS ? plan.timeout_ns : FIKITD_IDLE_WAKE_NS;
        fikit_futex_wait(bell, seen, timeout);
    }
    return NULL;
}

int fikitd_device_open(struct fikitd_device **out, int index, const char *key, const char *model,
                       const struct fikit_sched_params *params, uint64_t poll_ns,
                       uint64_t spin_ns, uint64_t warn_held_ns, uint64_t generation,
                       size_t trace_events)
{
    struct fikitd_device *dev = calloc(1, sizeof *dev);
    if (!dev)
        return -ENOMEM;
    dev->index = index;
    snprintf(dev->key, sizeof dev->key, "%s", key);
    snprintf(dev->model, sizeof dev->model, "%s", model);
    dev->poll_ns = poll_ns;
    dev->spin_ns = spin_ns;
    dev->warn_held_ns = warn_held_ns;
    dev->trace_cap = trace_events;
    dev->trace = calloc(trace_events ? trace_events : 1, sizeof *dev->trace);
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++)
        dev->slot_fd[s] = -1;
    int rc = dev->trace ? fikit_shm_create(key, model, generation, &dev->hdr_fd, &dev->com_fd, &dev->shm)
                        : -ENOMEM;
    if (rc) {
        free(dev->trace);
        free(dev);
        return rc;
    }
    fikit_shm_publish_params(&dev->shm->hdr->params, params, spin_ns);
    fikit_sched_init(&dev->sched, params);
    fikit_budget_set_init(&dev->budgets);
    fikit_stat_init(&dev->pickup);
    fikit_stat_init(&dev->pass);
    pthread_mutex_init(&dev->lock, NULL);
    rc = pthread_create(&dev->arbiter, NULL, arbiter_main, dev);
    if (rc) {
        fikit_shm_unmap(dev->shm);
        close(dev->hdr_fd);
        close(dev->com_fd);
        free(dev->trace);
        free(dev);
        return -rc;
    }
    dev->arbiter_running = true;
    *out = dev;
    return 0;
}

void fikitd_device_close(struct fikitd_device *dev)
{
    struct fikit_grant grants[64];
    pthread_mutex_lock(&dev->lock);
    atomic_store(&dev->shm->hdr->daemon_state, FIKIT_DAEMON_STOPPED);
    /* Queued and not yet queued launches alike: let them all go. */
    sync_slots(dev, fikit_now_ns());
    size_t n;
    while ((n = fikit_sched_release_all(&dev->sched, fikit_now_ns(), grants, 64)) > 0)
        apply_grants(dev, grants, n);
    dev->stopping = true;
    pthread_mutex_unlock(&dev->lock);
    fikit_shm_ring_arbiter(dev->shm);
    if (dev->arbiter_running)
        pthread_join(dev->arbiter, NULL);
    fikit_shm_unmap(dev->shm);
    close(dev->hdr_fd);
    close(dev->com_fd);
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++)
        if (dev->slot_fd[s] >= 0)
            close(dev->slot_fd[s]);
    pthread_mutex_destroy(&dev->lock);
    fikit_stat_destroy(&dev->pickup);
    fikit_stat_destroy(&dev->pass);
    free(dev->trace);
    free(dev);
}

int fikitd_device_add_task(struct fikitd_device *dev, int conn_id, pid_t pid, uid_t uid,
                           const char *name, int level, int requested_level, bool beside, double budget,
                           bool budget_of_requests, uint32_t sm_pct)
{
    pthread_mutex_lock(&dev->lock);
    int s = -1;
    for (int k = 0; k < FIKIT_SHM_SLOTS; k++) {
        int cand = (dev->next_slot + k) % FIKIT_SHM_SLOTS;
        if (!dev->slots[cand].used) {
            s = cand;
            break;
        }
    }
    if (s < 0) {
        pthread_mutex_unlock(&dev->lock);
        return -ENOSPC;
    }
    /* A memfd of its own: nothing of its previous owner survives, and no
     * other task can write it. */
    uint64_t gen = ++dev->next_gen;
    int fd;
    int rc = fikit_shm_slot_create(dev->shm, s, gen, &fd);
    if (rc) {
        pthread_mutex_unlock(&dev->lock);
        return rc;
    }
    dev->slot_fd[s] = fd;
    dev->next_slot = (s + 1) % FIKIT_SHM_SLOTS;
    struct fikit_shm_owner *o = &dev->shm->hdr->owner[s];
    o->level = level;
    o->pid = pid;
    snprintf(o->name, sizeof o->name, "%s", name);
    atomic_store(&o->gen, gen);
    atomic_store(&o->state, FIKIT_SLOT_ACTIVE);
    dev->slots[s] = (struct fikitd_slot_info){.used = true, .conn_id = conn_id, .uid = uid, .pid = pid,
                                              .gen = gen, .level = level, .requested_level = requested_level,
                                              .beside = beside,
                                              .steer = {.budget = budget, .of_requests = budget_of_requests,
                                                        .sm_pct = sm_pct}};
    snprintf(dev->slots[s].name, sizeof dev->slots[s].name, "%s", name);
    fikit_sched_add_task(&dev->sched, (uint32_t)s, pid, name, level);
    dev->trace_tasks[s] = (struct fikit_trace_task){.slot = s, .level = level, .pid = pid};
    snprintf(dev->trace_tasks[s].name, sizeof dev->trace_tasks[s].name, "%s", name);
    update_masks(dev);
    fikitd_steer_add(dev, s);
    pthread_mutex_unlock(&dev->lock);
    return s;
}

void fikitd_device_remove_task(struct fikitd_device *dev, int s)
{
    if (s < 0 || s >= FIKIT_SHM_SLOTS)
        return;
    pthread_mutex_lock(&dev->lock);
    if (!dev->slots[s].used) {
        pthread_mutex_unlock(&dev->lock);
        return;
    }
    if (dev->tracing)
        drain_trace_ring(dev, s);
    fikit_sched_remove_task(&dev->sched, (uint32_t)s);
    fikitd_steer_drop(dev, s);
    /* Its grants' device time is free at once, for the clients too. */
    atomic_store(&dev->shm->hdr->granted_until_ns, fikit_sched_granted_until(&dev->sched));
    /* A free slot's launches count as nobody's activity; its memfd goes
     * (the client's and readers' mappings keep it until they unmap it). */
    atomic_store(&dev->shm->hdr->owner[s].state, FIKIT_SLOT_FREE);
    atomic_store(&dev->shm->hdr->owner[s].gen, 0);
    fikit_shm_slot_drop(dev->shm, s);
    close(dev->slot_fd[s]);
    dev->slot_fd[s] = -1;
    dev->slots[s].used = false;
    update_masks(dev);
    pthread_mutex_unlock(&dev->lock);
    /* Held work of others may go now. */
    fikit_shm_ring_arbiter(dev->shm);
}

void fikitd_device_set_trace(struct fikitd_device *dev, bool on)
{
    pthread_mutex_lock(&dev->lock);
    if (on) {
        dev->trace_count = 0;
        dev->trace_lost = 0;
        for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
            if (!dev->slots[s].used)
                continue;
            dev->slots[s].trace_read = atomic_load(&dev->shm->slots[s]->trace_head);
            dev->slots[s].trace_loss_warned = false;
            atomic_store(&dev->shm->slots[s]->trace_tail, dev->slots[s].trace_read);
        }
    } else {
        for (int s = 0; s < FIKIT_SHM_SLOTS; s++)
            if (dev->slots[s].used)
                drain_trace_ring(dev, s);
    }
    dev->tracing = on;
    atomic_store(&dev->shm->hdr->trace_on, on ? 1u : 0u);
    pthread_mutex_unlock(&dev->lock);
    fikit_shm_ring_arbiter(dev->shm);
}

static int by_time(const void *a, const void *b)
{
    const struct fikit_trace_event *x = a, *y = b;
    return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
}

size_t fikitd_device_copy_trace(struct fikitd_device *dev, struct fikit_trace_event **out)
{
    pthread_mutex_lock(&dev->lock);
    drain_trace_rings(dev);
    size_t n = dev->trace_count < dev->trace_cap ? dev->trace_count : dev->trace_cap;
    struct fikit_trace_event *copy = malloc((n ? n : 1) * sizeof *copy);
    if (copy) {
        uint64_t first = dev->trace_count - n;
        for (size_t i = 0; i < n; i++)
            copy[i] = dev->trace[(first + i) % dev->trace_cap];
        qsort(copy, n, sizeof *copy, by_time);
    } else {
        n = 0;
    }
    pthread_mutex_unlock(&dev->lock);
    *out = copy;
    return n;
}

int fikitd_status_device(struct fikitd_device *dev, uint64_t now, struct fikit_msg_status_device *md,
                         struct fikit_msg_status_task tasks[FIKIT_SHM_SLOTS])
{
    memset(md, 0, sizeof *md);
    md->index = (uint32_t)dev->index;
    int nt = 0;
    pthread_mutex_lock(&dev->lock);
    fikitd_device_sync_records(dev, now);
    struct fikit_sched_status ss;
    fikit_sched_status(&dev->sched, now, &ss);
    md->top_level = ss.top_level;
    md->policy = ss.policy;
    md->substrate_cost_ns = ss.substrate_cost_ns;
    md->safety_margin_ns = ss.safety_margin_ns;
    md->held_now = ss.held_now;
    memcpy(md->grants, dev->grants, sizeof md->grants);
    md->nudges = dev->nudges;
    md->pickups = dev->pickup.count;
    md->pickup_p50_ns = fikit_stat_quantile(&dev->pickup, 0.5);
    md->pickup_p99_ns = fikit_stat_quantile(&dev->pickup, 0.99);
    md->pickup_max_ns = dev->pickup.count ? dev->pickup.max : 0;
    md->passes = dev->pass.count;
    md->pass_p50_ns = fikit_stat_quantile(&dev->pass, 0.5);
    md->pass_p99_ns = fikit_stat_quantile(&dev->pass, 0.99);
    md->pass_max_ns = dev->pass.count ? dev->pass.max : 0;
    md->trace_on = atomic_load(&dev->shm->hdr->trace_on);
    md->trace_lost = dev->trace_lost;
    snprintf(md->key, sizeof md->key, "%s", dev->key);
    snprintf(md->model, sizeof md->model, "%s", dev->model);
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
        if (!dev->slots[s].used)
            continue;
        const struct fikit_shm_slot *sl = dev->shm->slots[s];
        const struct fikitd_slot_info *info = &dev->slots[s];
        struct fikit_sched_task_status ts;
        fikit_sched_task_status(&dev->sched, (uint32_t)s, now, &ts);
        struct fikit_msg_status_task *mt = &tasks[nt++];
        memset(mt, 0, sizeof *mt);
        mt->device_index = (uint32_t)dev->index;
        mt->slot = (uint32_t)s;
        mt->pid = (int32_t)info->pid;
        mt->level = info->level;
        mt->requested_level = info->requested_level;
        mt->uid = info->uid;
        mt->active = ts.active;
        mt->launches = ts.launches;
        mt->holds = atomic_load(&sl->holds);
        mt->grants = atomic_load(&sl->grants);
        mt->fills = atomic_load(&sl->fills);
        mt->paces = atomic_load(&sl->paces);
        if (atomic_load(&sl->slowdown_ns) + FIKIT_SLOWDOWN_FRESH_NS > now)
            mt->slowdown_ppm = atomic_load(&sl->slowdown_ppm);
        mt->held_now = ts.held_now;
        mt->held_longest_ns = ts.held_longest_ns;
        mt->held_longest_dur_ns = ts.held_longest_dur_ns;
        /* Beside as registered, unless it says it shares only gaps now. */
        mt->beside = info->beside && !(atomic_load(&sl->flags) & FIKIT_SLOT_GAPS_ONLY);
        mt->idle_after_ns = ts.idle_after_ns;
        fikitd_steer_status(dev, s, mt);
        snprintf(mt->name, sizeof mt->name, "%s", info->name);
    }
    md->ntasks = (uint32_t)nt;
    pthread_mutex_unlock(&dev->lock);
    return nt;
}
