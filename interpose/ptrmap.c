#include "interpose/ptrmap.h"

#include <errno.h>

#define TOMBSTONE ((uintptr_t)1)

/* Fibonacci hashing: handles are aligned pointers, a multiply spreads them. */
static unsigned home(const void *key)
{
    return (unsigned)((((uint64_t)(uintptr_t)key >> 4) * 0x9e3779b97f4a7c15ull) >> 40) &
           (FIKIT_PTRMAP_CAP - 1);
}

void *fikit_ptrmap_get(struct fikit_ptrmap *m, const void *key)
{
    unsigned i = home(key);
    for (unsigned n = 0; n < FIKIT_PTRMAP_CAP; n++, i = (i + 1) & (FIKIT_PTRMAP_CAP - 1)) {
        uintptr_t k = atomic_load_explicit(&m->e[i].key, memory_order_acquire);
        if (k == (uintptr_t)key) {
            void *v = atomic_load_explicit(&m->e[i].value, memory_order_acquire);
            /* Removed (or cleared) and the slot given to another key between
             * the two loads: v may be that key's. Not found, then: the
             * caller looks it up the slow way. */
            if (atomic_load_explicit(&m->e[i].key, memory_order_acquire) != k)
                return NULL;
            return v;
        }
        if (k == 0)
            return NULL;
    }
    return NULL;
}

int fikit_ptrmap_put(struct fikit_ptrmap *m, const void *key, void *value)
{
    pthread_mutex_lock(&m->lock);
    unsigned i = home(key), tomb = FIKIT_PTRMAP_CAP;
    int rc = -ENOSPC;
    for (unsigned n = 0; n < FIKIT_PTRMAP_CAP; n++, i = (i + 1) & (FIKIT_PTRMAP_CAP - 1)) {
        uintptr_t k = atomic_load_explicit(&m->e[i].key, memory_order_relaxed);
        if (k == (uintptr_t)key) {
            atomic_store_explicit(&m->e[i].value, value, memory_order_release);
            rc = 0;
            break;
        }
        if (k == TOMBSTONE && tomb == FIKIT_PTRMAP_CAP)
            tomb = i;
        if (k == 0) {
            unsigned at = tomb != FIKIT_PTRMAP_CAP ? tomb : i;
            if (at == i && m->count * 4 >= FIKIT_PTRMAP_CAP * 3)
                break; /* keep probes short: refuse past 3/4 */
            /* Value first: a reader that sees the key sees the value. */
            atomic_store_explicit(&m->e[at].value, value, memory_order_release);
            atomic_store_explicit(&m->e[at].key, (uintptr_t)key, memory_order_release);
            if (at == i)
                m->count++;
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return rc;
}

void fikit_ptrmap_remove(struct fikit_ptrmap *m, const void *key)
{
    pthread_mutex_lock(&m->lock);
    unsigned i = home(key);
    for (unsigned n = 0; n < FIKIT_PTRMAP_CAP; n++, i = (i + 1) & (FIKIT_PTRMAP_CAP - 1)) {
        uintptr_t k = atomic_load_explicit(&m->e[i].key, memory_order_relaxed);
        if (k == (uintptr_t)key) {
            atomic_store_explicit(&m->e[i].key, TOMBSTONE, memory_order_release);
            break;
        }
        if (k == 0)
            break;
    }
    pthread_mutex_unlock(&m->lock);
}

void fikit_ptrmap_clear(struct fikit_ptrmap *m)
{
    pthread_mutex_lock(&m->lock);
    for (unsigned i = 0; i < FIKIT_PTRMAP_CAP; i++)
        atomic_store_explicit(&m->e[i].key, 0, memory_order_release);
    m->count = 0;
    pthread_mutex_unlock(&m->lock);
}
