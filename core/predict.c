#include "core/predict.h"

#include <sys/mman.h>

#define MASK (FIKIT_PRED_CAP - 1)
#define MAX_PROBE 64

/* Kernel keys are already well-mixed hashes: their low bits index the
 * tables directly, which keeps a lookup to a few instructions. */
static unsigned dur_home(uint64_t key) { return (unsigned)key & MASK; }
static unsigned gap_home(uint64_t prev, uint64_t key)
{
    return (unsigned)(key ^ (prev * 0x9e3779b97f4a7c15ull) >> 17) & MASK;
}

/* Mapped, not allocated: zeroed, aligned to the page (so to the cache
 * line), and only the pages that entries land in become resident. */
struct fikit_predictor *fikit_predictor_new(void)
{
    void *p = mmap(NULL, sizeof(struct fikit_predictor), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void fikit_predictor_free(struct fikit_predictor *p)
{
    if (p)
        munmap(p, sizeof *p);
}

uint64_t fikit_predict_duration(const struct fikit_predictor *p, uint64_t key)
{
    unsigned i = dur_home(key);
    for (int n = 0; n < MAX_PROBE; n++, i = (i + 1) & MASK) {
        uint64_t k = atomic_load_explicit(&p->dur[i].key, memory_order_acquire);
        if (k == key)
            return atomic_load_explicit(&p->dur[i].dur_ns, memory_order_relaxed);
        if (k == 0)
            return 0;
    }
    return 0;
}

void fikit_predictor_set_duration(struct fikit_predictor *p, uint64_t key, uint64_t dur_ns)
{
    unsigned i = dur_home(key);
    for (int n = 0; n < MAX_PROBE; n++, i = (i + 1) & MASK) {
        uint64_t k = atomic_load_explicit(&p->dur[i].key, memory_order_relaxed);
        if (k == key || k == 0) {
            atomic_store_explicit(&p->dur[i].dur_ns, dur_ns, memory_order_relaxed);
            if (k == 0)
                atomic_store_explicit(&p->dur[i].key, key, memory_order_release);
            return;
        }
    }
}

static const struct fikit_pred_gap *find_gap(const struct fikit_predictor *p, uint64_t prev,
                                             uint64_t key)
{
    unsigned i = gap_home(prev, key);
    for (int n = 0; n < MAX_PROBE; n++, i = (i + 1) & MASK) {
        uint64_t k = atomic_load_explicit(&p->gap[i].key, memory_order_acquire);
        if (k == 0)
            return NULL;
        if (k == key && atomic_load_explicit(&p->gap[i].prev, memory_order_relaxed) == prev)
            return &p->gap[i];
    }
    return NULL;
}

bool fikit_predict_gap(const struct fikit_predictor *p, uint64_t prev, uint64_t key,
                       struct fikit_gap_pred *out)
{
    const struct fikit_pred_gap *e = find_gap(p, prev, key);
    if (e) {
        for (int tries = 0; tries < 16; tries++) {
            uint32_t s1 = atomic_load_explicit(&e->seq, memory_order_acquire);
            if (s1 & 1)
                continue;
            for (int i = 0; i < FIKIT_GAP_POINTS; i++)
                out->q_ns[i] = atomic_load_explicit(&e->q[i], memory_order_relaxed);
            atomic_thread_fence(memory_order_acquire);
            if (atomic_load_explicit(&e->seq, memory_order_relaxed) == s1)
                return fikit_gap_pred_known(out);
        }
    }
    fikit_gap_pred_from_stat(out, NULL);
    return false;
}

void fikit_predictor_set_gap(struct fikit_predictor *p, uint64_t prev, uint64_t key,
                             const struct fikit_gap_pred *g)
{
    unsigned i = gap_home(prev, key);
    for (int n = 0; n < MAX_PROBE; n++, i = (i + 1) & MASK) {
        struct fikit_pred_gap *e = &p->gap[i];
        uint64_t k = atomic_load_explicit(&e->key, memory_order_relaxed);
        bool mine = k == key && atomic_load_explicit(&e->prev, memory_order_relaxed) == prev;
        if (!mine && k != 0)
            continue;
        uint32_t s = atomic_load_explicit(&e->seq, memory_order_relaxed);
        atomic_store_explicit(&e->seq, s + 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_release);
        for (int j = 0; j < FIKIT_GAP_POINTS; j++)
            atomic_store_explicit(&e->q[j], g->q_ns[j], memory_order_relaxed);
        atomic_store_explicit(&e->seq, s + 2, memory_order_release);
        if (!mine) {
            atomic_store_explicit(&e->prev, prev, memory_order_relaxed);
            atomic_store_explicit(&e->key, key, memory_order_release);
        }
        return;
    }
}

void fikit_predictor_update_kernel(struct fikit_predictor *p, const struct fikit_measure_store *st,
                                   uint64_t key)
{
    const struct fikit_kernel_stats *ks = fikit_measure_kernel(st, key);
    if (ks && ks->duration.count)
        fikit_predictor_set_duration(p, key,
                                     fikit_stat_quantile(&ks->duration, FIKIT_DURATION_QUANTILE));
}

void fikit_predictor_update_gap(struct fikit_predictor *p, const struct fikit_measure_store *st,
                                uint64_t prev, uint64_t key)
{
    const struct fikit_gap_stats *gs = fikit_measure_gap(st, prev, key);
    if (!gs || !gs->gap.count)
        return;
    struct fikit_gap_pred g;
    fikit_gap_pred_from_stat(&g, &gs->gap);
    fikit_predictor_set_gap(p, prev, key, &g);
}

void fikit_predictor_load(struct fikit_predictor *p, const struct fikit_measure_store *st)
{
    for (size_t i = 0; i < st->kernels.cap; i++) {
        const struct fikit_kernel_stats *ks = st->kernels.slots[i].value;
        if (ks)
            fikit_predictor_update_kernel(p, st, ks->key);
    }
    for (size_t i = 0; i < st->gaps.cap; i++) {
        const struct fikit_gap_stats *gs = st->gaps.slots[i].value;
        if (gs)
            fikit_predictor_update_gap(p, st, gs->prev, gs->key);
    }
}
