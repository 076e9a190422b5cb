#include "interpose/burst.h"

#include "core/clock.h"

/* Whether the task in r is the only one registered on its device. */
static bool alone(const struct fikit_registration *r)
{
    return r && atomic_load_explicit(&r->hdr->slot_mask, memory_order_acquire) == 1ull << r->slot_index;
}

bool fikit_burst_open(struct fikit_client_device *d, uint64_t seq)
{
    uint64_t none = 0, now = fikit_now_ns();
    atomic_store_explicit(&d->burst_seq, seq, memory_order_relaxed);
    atomic_store_explicit(&d->burst_alone, alone(atomic_load_explicit(&d->reg, memory_order_acquire)),
                          memory_order_relaxed);
    return atomic_compare_exchange_strong_explicit(&d->burst_start_ns, &none, now, memory_order_release,
                                                   memory_order_relaxed);
}

static void report(struct fikit_client_device *d, uint64_t start, uint64_t end, uint64_t launches)
{
    struct fikit_client *c = &fikit_client;
    struct fikit_registration *r = atomic_load_explicit(&d->reg, memory_order_acquire);
    if (!launches || launches > UINT32_MAX)
        return;
    if (r) {
        struct fikit_burst x = {.start_ns = start, .end_ns = end, .launches = (uint32_t)launches};
        pthread_mutex_lock(&d->burst_lock); /* one writer of the ring */
        bool bell = fikit_bursts_put(&r->slot->bursts, &x);
        pthread_mutex_unlock(&d->burst_lock);
        if (bell)
            fikit_shm_ring_arbiter(r->shm);
    }
    /* A burst longer than a request can be (a program that seldom waits)
     * says nothing of what a request takes alone. */
    if (!c->measure && end - start <= FIKIT_BURST_MAX_NS &&
        atomic_load_explicit(&d->burst_alone, memory_order_relaxed) && alone(r)) {
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
    for (int i = 0; i < n; i++) {
        struct fikit_client_device *d = c->devs[i];
        uint64_t start = atomic_load_explicit(&d->burst_start_ns, memory_order_acquire);
        if (!start || start > now)
            continue;
        uint64_t seq = atomic_load_explicit(&d->burst_seq, memory_order_relaxed);
        if (!atomic_compare_exchange_strong(&d->burst_start_ns, &start, 0))
            continue; /* another wait took it */
        report(d, start, now, seq_before - seq);
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
