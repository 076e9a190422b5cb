/* core/shm.h's meeting of the policy and the segment: the parameters
 * fikitd publishes, the view a launch takes of the segment for its
 * admission (core/admit.h), the budget's knobs, the fill word that clients
 * and fikitd take gaps through, and fikitd's decision around it. */
#include "core/shm.h"

#include <string.h>

void fikit_shm_publish_params(struct fikit_shm_params *pub, const struct fikit_sched_params *p,
                              uint64_t spin_ns)
{
    atomic_store(&pub->policy, p->policy);
    atomic_store(&pub->idle_after_ns, fikit_params_idle_after(p));
    atomic_store(&pub->flags, (fikit_params_idle_learned(p) ? FIKIT_SHM_IDLE_LEARNED : 0u) |
                                  (p->pauses ? FIKIT_SHM_IDLE_PAUSES : 0u) |
                                  (p->switches_contexts ? FIKIT_SHM_SWITCHES : 0u));
    atomic_store(&pub->spin_ns, spin_ns);
    atomic_store(&pub->fill_overhead_ns, p->substrate_cost_ns + p->safety_margin_ns);
    atomic_store(&pub->gap_confidence_ppm, (uint32_t)(p->gap_confidence * 1e6 + 0.5));
    atomic_store(&pub->max_queued_ns, p->max_queued_ns);
    atomic_store(&pub->beside_max_slowdown_ppm, (uint32_t)(p->beside_max_slowdown * 1e6 + 0.5));
    atomic_store(&pub->max_wait_ns, p->max_wait_ns);
}

void fikit_view_take_params(struct fikit_view *v, const struct fikit_shm_params *pub)
{
    uint32_t flags = atomic_load_explicit(&pub->flags, memory_order_relaxed);
    v->idle_learned = flags & FIKIT_SHM_IDLE_LEARNED;
    v->pauses = flags & FIKIT_SHM_IDLE_PAUSES;
    v->idle_after_ns = atomic_load_explicit(&pub->idle_after_ns, memory_order_relaxed);
    v->gap_confidence = atomic_load_explicit(&pub->gap_confidence_ppm, memory_order_relaxed) / 1e6;
    v->max_queued_ns = atomic_load_explicit(&pub->max_queued_ns, memory_order_relaxed);
    v->fill_overhead_ns = atomic_load_explicit(&pub->fill_overhead_ns, memory_order_relaxed);
    v->beside_max_slowdown_ppm = atomic_load_explicit(&pub->beside_max_slowdown_ppm, memory_order_relaxed);
}

void fikit_shm_view(const struct fikit_shm *shm, int slot_index, int level, bool beside,
                    struct fikit_view *v, struct fikit_admit_task *tasks, uint64_t *unmapped)
{
    const struct fikit_shm_header *h = shm->hdr;
    memset(v, 0, sizeof *v);
    v->level = level;
    v->running = atomic_load_explicit(&h->daemon_state, memory_order_relaxed) == FIKIT_DAEMON_RUNNING;
    v->policy = (enum fikit_policy)atomic_load_explicit(&h->params.policy, memory_order_relaxed);
    v->level_mask = atomic_load_explicit(&h->level_mask, memory_order_relaxed);
    v->tasks = tasks;
    if (!v->running || v->policy == FIKIT_POLICY_PASSTHROUGH || level <= 0 ||
        !(v->level_mask & ((1u << level) - 1u)))
        return;
    fikit_view_take_params(v, &h->params);
    v->beside = beside;
    v->queued = atomic_load_explicit(&h->queued, memory_order_relaxed);
    v->fill_until_ns = atomic_load(&shm->com->fill_until_ns);
    v->granted_until_ns = atomic_load(&h->granted_until_ns);
    const struct fikit_shm_slot *own = shm->slots[slot_index];
    v->own_busy_until_ns = __atomic_load_n(&own->pub.busy_until_ns, __ATOMIC_RELAXED);
    fikit_shm_get_knobs(shm, slot_index, &v->knobs);
    uint64_t slots = atomic_load_explicit(&h->slot_mask, memory_order_acquire) & ~(1ull << slot_index);
    for (; slots; slots &= slots - 1) {
        int s = __builtin_ctzll(slots);
        const struct fikit_shm_owner *o = &h->owner[s];
        const struct fikit_shm_slot *sl = shm->slots[s];
        int olevel = o->level;
        if (olevel >= level || atomic_load_explicit(&o->state, memory_order_acquire) != FIKIT_SLOT_ACTIVE)
            continue;
        struct fikit_admit_task *t = &tasks[v->ntasks++];
        memset(t, 0, sizeof *t);
        struct fikit_shm_launch pub;
        t->level = olevel;
        /* Read only through a mapping of its owner's generation, before
         * and after (the mapping may be replaced meanwhile). */
        uint64_t gen = atomic_load_explicit(&o->gen, memory_order_acquire);
        bool current = gen && atomic_load_explicit(&shm->mapped[s], memory_order_acquire) == gen;
        t->unreadable = !current || !fikit_shm_read_launch(sl, &pub);
        if (current && beside) {
            t->slowdown_ppm = atomic_load_explicit(&sl->slowdown_ppm, memory_order_relaxed);
            t->slowdown_ns = atomic_load_explicit(&sl->slowdown_ns, memory_order_relaxed);
            t->waited_ns = atomic_load_explicit(&sl->waited_ns, memory_order_relaxed);
        }
        if (current) {
            atomic_thread_fence(memory_order_acquire);
            if (atomic_load_explicit(&shm->mapped[s], memory_order_relaxed) != gen)
                t->unreadable = true, t->slowdown_ppm = 0;
        } else if (unmapped) {
            *unmapped |= 1ull << s;
        }
        if (!t->unreadable) {
            t->launches = pub.launches;
            t->last_launch_ns = pub.last_launch_ns;
            t->busy_until_ns = pub.busy_until_ns;
            t->idle_after_ns = pub.idle_after_ns;
            t->gap = pub.gap;
        }
    }
}

void fikit_shm_set_knobs(struct fikit_shm *shm, int s, const struct fikit_lower_knobs *k)
{
    struct fikit_shm_owner *o = &shm->hdr->owner[s];
    atomic_store_explicit(&o->knob_inflight_ns, k->inflight_ns, memory_order_relaxed);
    atomic_store_explicit(&o->knob_sm_pct, k->sm_pct, memory_order_relaxed);
    atomic_store_explicit(&o->knob_flags, k->flags, memory_order_relaxed);
    atomic_store_explicit(&o->knob_mode, k->mode, memory_order_relaxed);
}

void fikit_shm_get_knobs(const struct fikit_shm *shm, int s, struct fikit_lower_knobs *k)
{
    const struct fikit_shm_owner *o = &shm->hdr->owner[s];
    k->mode = atomic_load_explicit(&o->knob_mode, memory_order_relaxed);
    k->sm_pct = atomic_load_explicit(&o->knob_sm_pct, memory_order_relaxed);
    k->flags = atomic_load_explicit(&o->knob_flags, memory_order_relaxed);
    k->inflight_ns = atomic_load_explicit(&o->knob_inflight_ns, memory_order_relaxed);
}

uint64_t fikit_shm_fill_lock(struct fikit_shm *shm, uint64_t now)
{
    uint64_t v = atomic_fetch_or(&shm->com->fill_until_ns, FIKIT_FILL_LOCK) & ~FIKIT_FILL_LOCK;
    /* Any client of the device may have written it: no further out than a
     * fill could reach, and put back so (even: the lock bit stays clear). */
    if (v > now + FIKIT_FILL_AHEAD_MAX_NS) {
        v = (now + FIKIT_FILL_AHEAD_MAX_NS) & ~FIKIT_FILL_LOCK;
        atomic_store(&shm->com->fill_until_ns, v | FIKIT_FILL_LOCK);
    }
    return v;
}

void fikit_shm_fill_unlock(struct fikit_shm *shm, uint64_t granted_until)
{
    atomic_store(&shm->hdr->granted_until_ns, granted_until);
    /* Given back 2 ns later than taken: a client that read granted_until_ns
     * before the lock cannot then take the room with the value it saw. */
    uint64_t held = atomic_load(&shm->com->fill_until_ns) & ~FIKIT_FILL_LOCK;
    atomic_store(&shm->com->fill_until_ns, held + 2);
}

void fikit_shm_decide(struct fikit_shm *shm, struct fikit_sched *s, uint64_t now,
                      void (*apply)(void *user, const struct fikit_grant *g, size_t n), void *user,
                      uint64_t *wake_ns)
{
    struct fikit_grant grants[64];
    bool deciding = s->nreq != 0;
    if (deciding)
        s->client_fill_until_ns = fikit_shm_fill_lock(shm, now);
    size_t n;
    do {
        n = fikit_sched_decide(s, now, grants, 64, wake_ns);
        if (deciding && n < 64)
            fikit_shm_fill_unlock(shm, fikit_sched_granted_until(s));
        apply(user, grants, n);
    } while (n == 64);
    atomic_store(&shm->hdr->queued, (uint32_t)s->nreq);
}
