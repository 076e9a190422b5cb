#include "fikitd/steer.h"

#include "core/log.h"
#include "core/proto.h"
#include "fikitd/device.h"

/* Every task's knobs from the controllers' steps, where the task and the
 * scheduler read them. */
static void apply(struct fikitd_device *dev)
{
    uint64_t max_queued = atomic_load_explicit(&dev->shm->hdr->params.max_queued_ns, memory_order_relaxed);
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
        if (!dev->slots[s].used)
            continue;
        struct fikit_lower_knobs k;
        fikit_budget_set_knobs(&dev->budgets, s, max_queued, dev->slots[s].steer.sm_pct, &k);
        fikit_shm_set_knobs(dev->shm, s, &k);
        fikit_sched_set_knobs(&dev->sched, (uint32_t)s, &k);
    }
}

void fikitd_steer_add(struct fikitd_device *dev, int s)
{
    /* Steered once its reference comes (fikitd_steer_sync). */
    const struct fikitd_slot_info *info = &dev->slots[s];
    fikit_budget_set_add(&dev->budgets, s, info->level, info->beside, info->steer.budget, info->steer.of_requests,
                         NULL);
    apply(dev);
}

void fikitd_steer_drop(struct fikitd_device *dev, int s)
{
    /* Where its budget stood when it left: the record of a run in the log. */
    const struct fikitd_slot_info *info = &dev->slots[s];
    const struct fikit_budget *b = &dev->budgets.b[s];
    if (info->steer.budget > 0 && ((dev->budgets.steered >> s) & 1))
        fikit_info("device %d: task %s (pid %d) left; its latency_budget %.2f: step %d%s, %llu bursts of a size measured alone of "
                   "%llu read (%llu lost), %llu broke it, %llu cuts, %llu climbs, pace %.2fx (%llu quiet), of %s: "
                   "bursts %.3fx at most at load %.2f",
                   dev->index, info->name, (int)info->pid, info->steer.budget, b->step,
                   b->unmeetable ? " (unmeetable)" : "", (unsigned long long)b->bursts,
                   (unsigned long long)info->steer.bursts, (unsigned long long)info->steer.lost,
                   (unsigned long long)b->broken, (unsigned long long)b->cuts, (unsigned long long)b->climbs,
                   b->pace_ppm / 1e6, (unsigned long long)b->quiet, b->of_requests ? "requests" : "bursts",
                   b->burst_budget_ppm / 1e6, b->load_ppm / 1e6);
    else if (info->steer.budget > 0)
        fikit_info("device %d: task %s (pid %d) left; its latency_budget %.2f was not held: no burst size measured "
                   "alone (%llu bursts read)", dev->index, info->name, (int)info->pid, info->steer.budget,
                   (unsigned long long)info->steer.bursts);
    fikit_budget_set_drop(&dev->budgets, s);
    fikit_shm_set_knobs(dev->shm, s, &(struct fikit_lower_knobs){0});
    apply(dev);
}

#define BURSTS_PER_PASS FIKIT_BURSTS_RING

void fikitd_steer_sync(struct fikitd_device *dev, uint64_t now)
{
    bool changed = false;
    uint64_t max_queued = atomic_load_explicit(&dev->shm->hdr->params.max_queued_ns, memory_order_relaxed);
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
        struct fikitd_slot_info *info = &dev->slots[s];
        if (info->used && info->beside &&
            (atomic_load(&dev->shm->slots[s]->flags) & FIKIT_SLOT_GAPS_ONLY)) {
            /* Its launches could not be confined: it shares only gaps now,
             * and the budgets above it climb no further than gaps. */
            info->beside = false;
            fikit_budget_set_beside(&dev->budgets, s, false);
            changed = true;
            fikit_info("device %d: task %s (pid %d) shares only the gaps of higher levels: its launches could not "
                       "be confined", dev->index, info->name, (int)info->pid);
        }
        if (!info->used || info->steer.budget <= 0)
            continue; /* only a budgeted task's bursts are read */
        struct fikit_bursts *b = &dev->shm->slots[s]->bursts;
        struct fikit_budget_ref ref;
        if (fikit_bursts_take_ref(b, &info->steer.ref_seen, &ref)) {
            if (ref.n != info->steer.ref_sizes)
                fikit_info("device %d: task %s (pid %d) judges its bursts against %u sizes measured alone%s",
                           dev->index, info->name, (int)info->pid, ref.n,
                           ref.n ? "" : ": its latency_budget is not held until it has run alone");
            info->steer.ref_sizes = ref.n;
            /* The client publishes its reference again after each save of its
             * profile: a steered task keeps its controller's state. */
            fikit_budget_set_ref(&dev->budgets, s, info->steer.budget, info->steer.of_requests, &ref);
            changed = true;
        }
        struct fikit_burst x[BURSTS_PER_PASS];
        unsigned n = fikit_bursts_take(b, &info->steer.burst_tail, now, x, BURSTS_PER_PASS, &info->steer.lost);
        for (unsigned i = 0; i < n; i++) {
            info->steer.bursts++;
            enum fikit_budget_action a =
                fikit_budget_set_burst(&dev->budgets, s, x[i].start_ns, x[i].end_ns, x[i].launches, max_queued,
                                       (x[i].flags & FIKIT_BURST_QUIET) != 0);
            if (a == FIKIT_BUDGET_CUT || a == FIKIT_BUDGET_CLIMB) {
                changed = true;
                fikit_debug("device %d: task %s's budget: %s to step %d (burst of %u launches, %.2fx alone)",
                            dev->index, info->name, a == FIKIT_BUDGET_CUT ? "cut" : "climb",
                            dev->budgets.b[s].step, x[i].launches, dev->budgets.b[s].last_slowdown_ppm / 1e6);
            }
        }
    }
    if (changed)
        apply(dev);
}

void fikitd_steer_status(const struct fikitd_device *dev, int s, struct fikit_msg_status_task *out)
{
    const struct fikitd_steer_slot *st = &dev->slots[s].steer;
    const struct fikit_budget *b = &dev->budgets.b[s];
    bool steered = (dev->budgets.steered >> s) & 1;
    out->budget_ppm = st->budget > 0 ? (uint32_t)(st->budget * 1e6 + 0.5) : 0;
    out->budget_step = steered ? b->step : -1;
    out->budget_sizes = st->ref_sizes;
    out->budget_unmeetable = steered && b->unmeetable;
    out->burst_slowdown_ppm = steered ? b->last_slowdown_ppm : 0;
    out->budget_cuts = steered ? (uint32_t)b->cuts : 0;
    out->budget_climbs = steered ? (uint32_t)b->climbs : 0;
    out->budget_pace_ppm = steered ? b->pace_ppm : 0;
    out->budget_of_requests = st->of_requests;
    out->budget_load_ppm = steered ? b->load_ppm : 0;
    out->budget_bursts_ppm = steered ? b->burst_budget_ppm : 0;
    out->budget_body_ppm = steered ? b->body_ppm : 0;
    out->bursts = st->bursts;
    out->bursts_lost = st->lost;
    struct fikit_lower_knobs k;
    fikit_shm_get_knobs(dev->shm, s, &k);
    out->knob_mode = k.mode;
    out->knob_sm_pct = k.sm_pct;
    out->knob_inflight_ns = k.inflight_ns;
}
