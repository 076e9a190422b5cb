#include "backends/confine_pool.h"

#include <stddef.h>

struct fikit_confine_part *fikit_confine_part(struct fikit_confine_pool *pool, uintptr_t owner, unsigned units,
                                              fikit_confine_make_fn make, void *arg, const char **failed)
{
    for (int i = 0; i < FIKIT_CONFINE_PARTS; i++) {
        struct fikit_confine_part *p = &pool->parts[i];
        int st = atomic_load_explicit(&p->state, memory_order_acquire);
        if (st && p->owner == owner && p->units == units)
            return st > 0 ? p : NULL;
    }
    pthread_mutex_lock(&pool->lock);
    struct fikit_confine_part *p = NULL;
    for (int i = 0; i < FIKIT_CONFINE_PARTS; i++) {
        struct fikit_confine_part *q = &pool->parts[i];
        int st = atomic_load_explicit(&q->state, memory_order_relaxed);
        if (st && q->owner == owner && q->units == units) {
            p = st > 0 ? q : NULL;
            goto out;
        }
        if (!st) {
            p = q;
            break;
        }
    }
    if (!p)
        goto out; /* every partition in use: this launch is not moved */
    p->owner = owner;
    p->units = units;
    for (int i = 0; i < FIKIT_CONFINE_LANES; i++)
        pthread_mutex_init(&p->lanes[i].lock, NULL);
    const char *why = make(p, arg);
    /* Last: a reader that finds the state without the lock reads the rest. */
    atomic_store_explicit(&p->state, why ? -1 : 1, memory_order_release);
    if (why) {
        *failed = why;
        p = NULL;
    }
out:
    pthread_mutex_unlock(&pool->lock);
    return p;
}

struct fikit_confine_lane *fikit_confine_lane(struct fikit_confine_part *p, const void *stream)
{
    uintptr_t h = (uintptr_t)stream;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15ull;
    return &p->lanes[(h >> 60) % FIKIT_CONFINE_LANES];
}

void fikit_confine_taken(struct fikit_confine_pool *pool)
{
    atomic_store_explicit(&pool->taken, true, memory_order_relaxed);
    atomic_store_explicit(&pool->strikes, 0, memory_order_relaxed);
}

bool fikit_confine_refused(struct fikit_confine_pool *pool)
{
    return atomic_fetch_add(&pool->strikes, 1) + 1 >= FIKIT_CONFINE_STRIKES &&
           !atomic_load_explicit(&pool->taken, memory_order_relaxed);
}
