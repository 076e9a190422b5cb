/* Owns: learning off the hot path. Timed launches are queued here; one
 * thread per process reads their markers once the device finished them,
 * adds durations and gaps to the device's measurement store, refreshes the
 * predictions, watches the daemon connection, and saves profiles
 * periodically and at exit. */
#ifndef FIKIT_INTERPOSE_LEARN_H
#define FIKIT_INTERPOSE_LEARN_H

#include "backends/backend.h"
#include "interpose/client.h"

#include <stdbool.h>
#include <stdint.h>

struct fikit_sample {
    struct fikit_client_device *dev;
    uint64_t seq;   /* launch number in the process: consecutive = a gap */
    uint64_t key;
    uint64_t prev;
    const char *name;
    uint32_t grid[3], block[3], shmem;
    struct fikit_marker marker;
};

/* Starts the thread (once). */
void fikit_learn_start(void);
/* Queues a timed launch; false if the queue is full (the markers are then
 * released by the caller). */
bool fikit_learn_submit(const struct fikit_sample *s);
/* Free room in the queue, for deciding whether to time unknown kernels. */
unsigned fikit_learn_room(void);
void fikit_learn_after_fork(void);

#endif
