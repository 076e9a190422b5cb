/* Owns: timing a launch with a pair of device events, written once for
 * every API that has them (CUDA events, HIP events): one event recorded on
 * the launch's stream before the real call and one after; the duration is
 * the time between the two, the gap to the next timed launch the time from
 * this one's second event to that one's first. A backend gives a small
 * event vtable (create, record, query, elapsed time, destroy) and gets the
 * five marker ops of struct fikit_backend_ops from it. Events are reused:
 * making one costs microseconds; each belongs to the context or device it
 * was made on (its owner, the marker's ctx) and is only reused there. */
#ifndef FIKIT_BACKENDS_EVENT_PAIR_H
#define FIKIT_BACKENDS_EVENT_PAIR_H

#include "interpose/backend.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>

#define FIKIT_EVENT_POOL_MAX 512

struct fikit_event_ops {
    /* A new event of owner (the launch's device handle), or NULL. */
    void *(*create)(void *owner);
    /* Destroys an event the pool has no room for. */
    void (*destroy)(void *ev);
    /* Records ev on stream; false on failure. */
    bool (*record)(void *ev, void *stream);
    /* 0 once ev completed, -EAGAIN before, -EIO on an error. */
    int (*query)(void *ev);
    /* The time from a to b in milliseconds; false on failure. */
    bool (*elapsed_ms)(float *ms, void *a, void *b);
    /* Prepares the reading thread (the learner) for events of owner. */
    void (*reader_setup)(void *owner);
};

struct fikit_event_pair {
    const struct fikit_event_ops *ops;
    pthread_mutex_t lock;
    int n;
    struct {
        void *owner;
        void *event;
    } pool[FIKIT_EVENT_POOL_MAX];
};

#define FIKIT_EVENT_PAIR_INIT(event_ops) {.ops = (event_ops), .lock = PTHREAD_MUTEX_INITIALIZER}

int fikit_event_pair_begin(struct fikit_event_pair *p, const struct fikit_launch_desc *l,
                           struct fikit_marker *m);
int fikit_event_pair_end(struct fikit_event_pair *p, const struct fikit_launch_desc *l,
                         struct fikit_marker *m);
int fikit_event_pair_duration(struct fikit_event_pair *p, struct fikit_marker *m, uint64_t *ns);
int fikit_event_pair_gap(struct fikit_event_pair *p, struct fikit_marker *prev,
                         struct fikit_marker *next, int64_t *ns);
void fikit_event_pair_release(struct fikit_event_pair *p, struct fikit_marker *m);

/* Defines the static marker ops event_marker_begin, event_marker_end,
 * event_marker_duration, event_marker_gap and event_marker_release over
 * the backend's pair, for its struct fikit_backend_ops. */
#define FIKIT_EVENT_PAIR_MARKERS(pair)                                                             \
    static int event_marker_begin(const struct fikit_launch_desc *l, struct fikit_marker *m)       \
    {                                                                                              \
        return fikit_event_pair_begin(&(pair), l, m);                                              \
    }                                                                                              \
    static int event_marker_end(const struct fikit_launch_desc *l, struct fikit_marker *m)         \
    {                                                                                              \
        return fikit_event_pair_end(&(pair), l, m);                                                \
    }                                                                                              \
    static int event_marker_duration(struct fikit_marker *m, uint64_t *ns)                         \
    {                                                                                              \
        return fikit_event_pair_duration(&(pair), m, ns);                                          \
    }                                                                                              \
    static int event_marker_gap(struct fikit_marker *prev, struct fikit_marker *next, int64_t *ns) \
    {                                                                                              \
        return fikit_event_pair_gap(&(pair), prev, next, ns);                                      \
    }                                                                                              \
    static void event_marker_release(struct fikit_marker *m) { fikit_event_pair_release(&(pair), m); }

/* For an API whose event calls return a status over typed handles, as
 * CUDA's driver and HIP's runtime do: api is the backend's table of them
 * (EventDestroy, EventRecord, EventQuery, EventElapsedTime, the same
 * arguments in both), ok and not_ready its status values. Defines destroy,
 * record, query and elapsed over them once, the event ops with the backend's
 * own create and reader_setup (which differ: a context or a device to
 * select), the pair `events` and its markers (FIKIT_EVENT_PAIR_MARKERS). */
#define FIKIT_EVENT_PAIR_OVER(api, event_t, stream_t, ok, not_ready, create_fn, reader_setup_fn)   \
    static void event_destroy(void *ev)                                                            \
    {                                                                                              \
        if (api.EventDestroy)                                                                      \
            api.EventDestroy((event_t)ev);                                                         \
    }                                                                                              \
    static bool event_record(void *ev, void *stream)                                               \
    {                                                                                              \
        return api.EventRecord((event_t)ev, (stream_t)stream) == (ok);                             \
    }                                                                                              \
    static int event_query(void *ev)                                                               \
    {                                                                                              \
        long r = (long)api.EventQuery((event_t)ev);                                                \
        return r == (long)(ok) ? 0 : r == (long)(not_ready) ? -EAGAIN : -EIO;                     \
    }                                                                                              \
    static bool event_elapsed(float *ms, void *a, void *b)                                         \
    {                                                                                              \
        return api.EventElapsedTime(ms, (event_t)a, (event_t)b) == (ok);                           \
    }                                                                                              \
    static const struct fikit_event_ops event_ops = {                                              \
        .create = (create_fn), .destroy = event_destroy, .record = event_record,                   \
        .query = event_query, .elapsed_ms = event_elapsed, .reader_setup = (reader_setup_fn),      \
    };                                                                                             \
    static struct fikit_event_pair events = FIKIT_EVENT_PAIR_INIT(&event_ops);                     \
    FIKIT_EVENT_PAIR_MARKERS(events)

#define FIKIT_EVENT_PAIR_OPS                                                                       \
    .marker_begin = event_marker_begin, .marker_end = event_marker_end,                            \
    .marker_duration = event_marker_duration, .marker_gap = event_marker_gap,                      \
    .marker_release = event_marker_release

#endif
