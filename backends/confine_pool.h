/* Owns: the bookkeeping every backend that confines launches shares
 * (backends/cuda/cuda_confine.c: green contexts; backends/hip/hip_confine.c:
 * CU masks): partitions made once per process, owner (a device or context)
 * and size, each with lanes that a program stream's launches go through
 * (its handle hashed), and the count of refused launches that says
 * confining does not work here. What a partition and a lane hold is the
 * backend's: opaque handles it makes in the make callbacks. */
#ifndef FIKIT_BACKENDS_CONFINE_POOL_H
#define FIKIT_BACKENDS_CONFINE_POOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Lanes per partition: streams that share a lane are ordered after each
 * other while confined (more order than the program asked, never less). */
#define FIKIT_CONFINE_LANES 16
/* Partitions a process makes: per owner and size of share. */
#define FIKIT_CONFINE_PARTS 16
/* Launches refused in a row, none ever taken, that say confining does not
 * work in this process. */
#define FIKIT_CONFINE_STRIKES 8

struct fikit_confine_lane {
    pthread_mutex_t lock; /* held from a launch's first record to its last wait */
    bool made;
    void *stream, *before, *after; /* the backend's: its stream, and the two events */
};

struct fikit_confine_part {
    _Atomic int state;     /* 0: not made, 1: made, -1: failed */
    uintptr_t owner;       /* the backend's: a context or a device */
    unsigned units;        /* SMs or CUs */
    void *res[2];          /* the backend's: e.g. a green context and its CUcontext */
    struct fikit_confine_lane lanes[FIKIT_CONFINE_LANES];
};

struct fikit_confine_pool {
    pthread_mutex_t lock;
    struct fikit_confine_part parts[FIKIT_CONFINE_PARTS];
    _Atomic unsigned strikes;
    _Atomic bool taken;
};

#define FIKIT_CONFINE_POOL_INIT {.lock = PTHREAD_MUTEX_INITIALIZER}

/* The partition of (owner, units), made the first time by make (under the
 * pool's lock; NULL, or why it failed, which is kept: a failed partition is
 * not tried again). NULL where it failed (*failed says why, the first time)
 * or every partition is in use. */
typedef const char *(*fikit_confine_make_fn)(struct fikit_confine_part *p, void *arg);
struct fikit_confine_part *fikit_confine_part(struct fikit_confine_pool *pool, uintptr_t owner, unsigned units,
                                              fikit_confine_make_fn make, void *arg, const char **failed);

/* The lane of a program stream's handle in p. */
struct fikit_confine_lane *fikit_confine_lane(struct fikit_confine_part *p, const void *stream);

/* A launch into a lane was taken, or refused: true when refusals have
 * reached FIKIT_CONFINE_STRIKES with none ever taken. */
void fikit_confine_taken(struct fikit_confine_pool *pool);
bool fikit_confine_refused(struct fikit_confine_pool *pool);

#endif
