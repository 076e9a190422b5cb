#include "interpose/burst.h"

#include "core/clock.h"

/* Whether the task in r is the only one registered on its device. */
static bool alone(const struct fikit_registration *r)
{
    return r && atomic_load_explicit(&r->hdr->slot_mask, memory_order_acquire) == 1ull << r->slot_index;
}

static void report(struct fikit_client_device *d, const struct fikit_burst_done *done);

/* The host work of the burst opening at now: the CPU time its thread spent
 * since it ended the burst before (done), which is the request's own work
 * before its first launch (and the one before's after its end), not time
 * it waited for the request. A request is slowed only in its device part,
 * so with it in the burst a budget on the requests is judged on what they
 * take, as fikit sim's bursts are (from the start of a request). Another
 * thread's CPU time does not compare: then none, and the burst is judged
 * as the device part alone, the stricter. At most the wall time between. */
static uint64_t host_before(const struct fikit_burst_done *done, uint64_t now)
{
    if (!done->end_ns || !done->cpu_ns || !pthread_equal(done->thread, pthread_self()))
        return 0;
    uint64_t cpu = fikit_thread_cpu_ns();
    uint64_t host = cpu > done->cpu_ns ? cpu - done->cpu_ns : 0;
    return host < now - done->end_ns ? host : now - done->end_ns;
}

bool fikit_burst_open(struct fikit_client_device *d, uint64_t seq)
{
    uint64_t now = fikit_now_ns();
    bool was_alone = alone(atomic_load_explicit(&d->reg, memory_order_acquire));
    pthread_mutex_lock(&d->burst_lock);
    if (atomic_load_explicit(&d->burst_start_ns, memory_order_relaxed)) {
        pthread_mutex_unlock(&d->burst_lock); /* another thread opened it */
        return false;
    }
    /* Soon after the wait that ended the last one: the same burst goes on
     * (a program that waits after each of its kernels). */
    struct fikit_burst_done done = d->burst_done;
    bool joined = done.end_ns && now - done.end_ns < FIKIT_BURST_JOIN_NS;
    d->burst_done.end_ns = 0;
    if (!joined)
        d->burst_prev_end_ns = done.end_ns;
    d->burst_base = joined ? done.launches : 0;
    d->burst_host_ns = joined ? done.host_ns : host_before(&done, now);
    atomic_store_explicit(&d->burst_seq, seq, memory_order_relaxed);
    atomic_store_explicit(&d->burst_alone, joined ? done.alone && was_alone : was_alone, memory_order_relaxed);
    atomic_store_explicit(&d->burst_start_ns, joined ? done.start_ns : now, memory_order_release);
    pthread_mutex_unlock(&d->burst_lock);
    if (!joined && done.end_ns)
        report(d, &done);
    return !joined;
}

static void report(struct fikit_client_device *d, const struct fikit_burst_done *done)
{
    struct fikit_client *c = &fikit_client;
    struct fikit_registration *r = atomic_load_explicit(&d->reg, memory_order_acquire);
    /* From the start of its host work: what its request took. */
    uint64_t start = done->start_ns - done->host_ns, end = done->end_ns, launches = done->launches;
    bool was_alone = done->alone;
    if (!launches || launches > UINT32_MAX)
        return;
    if (r) {
        struct fikit_burst x = {.start_ns = start, .end_ns = end, .launches = (uint32_t)launches,
                                .flags = done->quiet ? FIKIT_BURST_QUIET : 0};
        pthread_mutex_lock(&d->burst_lock); /* one writer of the ring */
        bool bell = fikit_bursts_put(&r->slot->bursts, &x);
        pthread_mutex_unlock(&d->burst_lock);
        if (bell)
            fikit_shm_ring_arbiter(r->shm);
    }
    /* A burst longer than a request can be (a program that seldom waits)
     * says nothing of what a request takes alone. */
    if (!c->measure && end - start <= FIKIT_BURST_MAX_NS && was_alone) {
        pthread_mutex_lock(&d->store_lock);
        if (fikit_measure_add_burst(&d->store, (uint32_t)launches, end - start) == 0)
            d->dirty = true;
        pthread_mutex_unlock(&d->store_lock);
    }
}

void fikit_burst_waited(uint64_t seq_before, bool ok)
{
    struct fikit_client *c = &fikit_client;
    if (!ok)
        return;
    uint64_t now = fikit_now_ns();
    /* A launch since the wait began (another thread): the burst goes on. */
    if (atomic_load_explicit(&c->launch_seq, memory_order_acquire) != seq_before)
        return;
    int n = atomic_load_explicit(&c->ndevs, memory_order_acquire);
    uint64_t cpu = 0; /* this thread's CPU time, read once, as now, and only if a burst ends */
    for (int i = 0; i < n; i++) {
        struct fikit_client_device *d = c->devs[i];
        uint64_t start = atomic_load_explicit(&d->burst_start_ns, memory_order_acquire);
        if (!start || start > now)
            continue;
        pthread_mutex_lock(&d->burst_lock);
        if (!atomic_compare_exchange_strong(&d->burst_start_ns, &start, 0)) {
            pthread_mutex_unlock(&d->burst_lock);
            continue; /* another wait took it */
        }
        /* Reported when the next one opens, unless that joins it. */
        if (!cpu)
            cpu = fikit_thread_cpu_ns();
        uint64_t seq = atomic_load_explicit(&d->burst_seq, memory_order_relaxed);
        struct fikit_registration *r = atomic_load_explicit(&d->reg, memory_order_acquire);
        bool switches = r && (atomic_load_explicit(&r->hdr->params.flags, memory_order_relaxed) &
                              FIKIT_SHM_SWITCHES);
        d->burst_done = (struct fikit_burst_done){
            .start_ns = start, .end_ns = now, .launches = d->burst_base + (seq_before - seq),
            .host_ns = d->burst_host_ns, .cpu_ns = cpu, .thread = pthread_self(),
            .alone = atomic_load_explicit(&d->burst_alone, memory_order_relaxed) && alone(r),
            /* Asked now, not when it is reported (at the next burst's
             * first launch): the levels below have launched since. From
             * the start of a joined burst's first part, so it covers all. */
            .quiet = r && fikit_shm_quiet_since(r->shm->com, r->level,
                                                fikit_quiet_since(start, d->burst_prev_end_ns, switches))};
        pthread_mutex_unlock(&d->burst_lock);
        /* For the confined tasks below: between bursts from now on. And
         * its own queue is empty, whatever its kernels were predicted. */
        if (r) {
            atomic_store_explicit(&r->slot->waited_ns, now, memory_order_relaxed);
            fikit_shm_own_drained(&r->own, now);
        }
    }
}

void fikit_burst_publish_ref(struct fikit_client_device *d, struct fikit_registration *r)
{
    struct fikit_budget_ref ref;
    pthread_mutex_lock(&d->store_lock);
    fikit_budget_ref_from_store(&ref, &d->store);
    pthread_mutex_unlock(&d->store_lock);
    pthread_mutex_lock(&d->burst_lock);
    fikit_bursts_put_ref(&r->slot->bursts, &ref);
    pthread_mutex_unlock(&d->burst_lock);
}
