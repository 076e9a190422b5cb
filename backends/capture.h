/* Owns: the count of stream captures (graph recording) a process has
 * open, kept by a backend's capture hooks, so that while there are none a
 * launch needs no capture query (struct fikit_backend_ops captures_open). */
#ifndef FIKIT_BACKENDS_CAPTURE_H
#define FIKIT_BACKENDS_CAPTURE_H

#include <stdatomic.h>
#include <stdbool.h>

struct fikit_captures {
    _Atomic int open;
};

/* A capture began successfully. */
static inline void fikit_captures_began(struct fikit_captures *c) { atomic_fetch_add(&c->open, 1); }

/* A capture ended, successfully or not; never below zero. */
static inline void fikit_captures_ended(struct fikit_captures *c)
{
    int n = atomic_load(&c->open);
    while (n > 0 && !atomic_compare_exchange_weak(&c->open, &n, n - 1))
        ;
}

/* A capture-beginning hook returns the real call's result, counting the
 * capture when it is the API's success (ok). */
#define FIKIT_CAPTURE_BEGAN(captures, status_t, ok, call)                                          \
    do {                                                                                           \
        status_t r_ = (call);                                                                      \
        if (r_ == (ok))                                                                            \
            fikit_captures_began(captures);                                                        \
        return r_;                                                                                 \
    } while (0)

static inline bool fikit_captures_any(struct fikit_captures *c)
{
    return atomic_load_explicit(&c->open, memory_order_relaxed) > 0;
}

#endif
