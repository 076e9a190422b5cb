#include "core/bursts.h"

#include "core/clock.h"

#include <string.h>

bool fikit_bursts_put(struct fikit_bursts *b, const struct fikit_burst *x)
{
    uint64_t h = atomic_load_explicit(&b->head, memory_order_relaxed);
    b->ring[h % FIKIT_BURSTS_RING] = *x;
    atomic_store_explicit(&b->head, h + 1, memory_order_release);
    /* Once as the unread part reaches half the ring, not at every burst. */
    return h + 1 - atomic_load_explicit(&b->read, memory_order_relaxed) == FIKIT_BURSTS_RING / 2;
}

void fikit_bursts_put_ref(struct fikit_bursts *b, const struct fikit_budget_ref *ref)
{
    uint64_t s = atomic_load_explicit(&b->ref_seq, memory_order_relaxed);
    atomic_store_explicit(&b->ref_seq, s | 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    memcpy(&b->ref, ref, sizeof b->ref);
    atomic_store_explicit(&b->ref_seq, (s | 1) + 1, memory_order_release);
}

static bool valid(const struct fikit_burst *x, uint64_t now)
{
    return x->launches && x->start_ns && x->start_ns < x->end_ns && x->end_ns - x->start_ns <= FIKIT_BURST_MAX_NS &&
           x->end_ns <= now + FIKIT_NS_PER_S;
}

unsigned fikit_bursts_take(struct fikit_bursts *b, uint64_t *tail, uint64_t now, struct fikit_burst *out,
                           unsigned max, uint64_t *lost)
{
    uint64_t head = atomic_load_explicit(&b->head, memory_order_acquire);
    uint64_t t = *tail;
    if (head < t) { /* a task that wrote its head back: start again from it */
        *tail = head;
        return 0;
    }
    if (head - t > FIKIT_BURSTS_RING) {
        *lost += head - t - FIKIT_BURSTS_RING;
        t = head - FIKIT_BURSTS_RING;
    }
    unsigned n = 0;
    for (; t < head && n < max; t++) {
        struct fikit_burst x;
        memcpy(&x, &b->ring[t % FIKIT_BURSTS_RING], sizeof x);
        atomic_thread_fence(memory_order_acquire);
        /* Overwritten while it was read: the writer is a whole ring ahead. */
        if (atomic_load_explicit(&b->head, memory_order_relaxed) - t > FIKIT_BURSTS_RING || !valid(&x, now)) {
            (*lost)++;
            continue;
        }
        out[n++] = x;
    }
    *tail = t;
    atomic_store_explicit(&b->read, t, memory_order_relaxed);
    return n;
}

bool fikit_bursts_take_ref(const struct fikit_bursts *b, uint64_t *seen, struct fikit_budget_ref *out)
{
    uint64_t s = atomic_load_explicit(&b->ref_seq, memory_order_acquire);
    if (s == *seen || (s & 1))
        return false;
    struct fikit_budget_ref r;
    memcpy(&r, &b->ref, sizeof r);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&b->ref_seq, memory_order_relaxed) != s)
        return false; /* torn: looked at again next time */
    *seen = s;
    if (r.n > FIKIT_BUDGET_REF_SIZES || r.all_p99_ns > FIKIT_BURST_MAX_NS)
        return false;
    for (uint32_t k = 0; k < r.n; k++)
        if (!r.launches[k] || (k && r.launches[k] <= r.launches[k - 1]) || !r.p99_ns[k] ||
            r.p99_ns[k] > FIKIT_BURST_MAX_NS || r.mean_ns[k] > FIKIT_BURST_MAX_NS)
            return false;
    *out = r;
    return true;
}
