/* Owns: a cache of timing-marker handles (CUDA and HIP events) for reuse,
 * since making one costs microseconds. Each handle belongs to the context or
 * device it was made on (its owner) and is only handed out for that owner. */
#ifndef FIKIT_BACKENDS_MARKER_POOL_H
#define FIKIT_BACKENDS_MARKER_POOL_H

#include <pthread.h>
#include <stdbool.h>

#define FIKIT_MARKER_POOL_MAX 512

struct fikit_marker_pool {
    pthread_mutex_t lock;
    int n;
    struct {
        void *owner;
        void *handle;
    } e[FIKIT_MARKER_POOL_MAX];
};

#define FIKIT_MARKER_POOL_INIT {.lock = PTHREAD_MUTEX_INITIALIZER}

/* A cached handle of this owner, or NULL: the caller then makes one. */
void *fikit_marker_pool_take(struct fikit_marker_pool *p, void *owner);
/* Keeps the handle for reuse; false when the pool is full (the caller then
 * destroys it). */
bool fikit_marker_pool_give(struct fikit_marker_pool *p, void *owner, void *handle);

#endif
