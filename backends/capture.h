/* Owns: the count of stream captures (graph recording) a process has
 * open, kept by a backend's capture hooks, so that while there are none a
 * launch needs no capture query (struct fikit_backend_ops captures_open). */
#ifndef FIKIT_BACKENDS_CAPTURE_H
#define FIKIT_BACKENDS_CAPTURE_H

#include "interpose/backend.h"

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

/* For an API that reports a stream's capture status through an out
 * argument, as CUDA's driver and HIP's runtime do: api is the backend's
 * table (StreamIsCapturing, which may be NULL), ok its success status and
 * none the status of a stream not capturing. Defines the count
 * `captures` (the capture hooks keep it) and the ops captures_open and
 * stream_capturing over them, once for both. */
#define FIKIT_CAPTURES_OVER(api, captures, stream_t, status_t, ok, none)                          \
    struct fikit_captures captures;                                                                \
    static bool captures_open(void) { return fikit_captures_any(&(captures)); }                    \
    static bool stream_capturing(const struct fikit_launch_desc *l)                                \
    {                                                                                              \
        status_t st = (none);                                                                      \
        if (!api.StreamIsCapturing || api.StreamIsCapturing((stream_t)l->stream, &st) != (ok))     \
            return false;                                                                          \
        return st != (none);                                                                       \
    }

#define FIKIT_CAPTURES_OPS .captures_open = captures_open, .stream_capturing = stream_capturing

#endif
