/* Owns: learning off the hot path. Timed launches are queued here; the
 * client's housekeeping thread (interpose/client.c) drains the queue: it
 * reads each launch's markers once the device finished it, adds durations
 * and gaps to the device's measurement store and refreshes the predictions.
 * The learner calls nothing of the client: the client calls it. */
#ifndef FIKIT_INTERPOSE_LEARN_H
#define FIKIT_INTERPOSE_LEARN_H

#include "interpose/backend.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct fikit_client_device; /* interpose/device.h */

struct fikit_sample {
    struct fikit_client_device *dev;
    uint64_t seq;   /* launch number in the process: consecutive = a gap */
    uint64_t key;
    uint64_t prev;
    bool burst_first; /* it opened a burst: the gap before it is idle between bursts */
    const char *name;
    uint32_t grid[3], block[3], shmem;
    struct fikit_marker marker;
};

#define FIKIT_LEARN_QUEUE 4096
#define FIKIT_LEARN_DEVICES 8

/* The queue and what the learner remembers (a part of struct fikit_client,
 * the process's state). Statically initialised with FIKIT_LEARNER_INIT. */
struct fikit_learner {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
    unsigned head, count;
    struct fikit_sample q[FIKIT_LEARN_QUEUE];
    /* The previous processed sample of each device, for gaps: the draining
     * thread's only. */
    int nlast;
    struct fikit_sample last[FIKIT_LEARN_DEVICES];
};

#define FIKIT_LEARNER_INIT {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER}

/* Queues a timed launch; false if the queue is full or stopped (the caller
 * then releases the markers). */
bool fikit_learn_submit(struct fikit_learner *L, const struct fikit_sample *s);
/* Free room in the queue, for deciding whether to time unknown kernels. */
unsigned fikit_learn_room(struct fikit_learner *L);
/* Waits for a sample (a while when the head is still running, longer when
 * the queue is empty). False once fikit_learn_stop was called. */
bool fikit_learn_wait(struct fikit_learner *L);
/* Learns what is complete at the head of the queue; final: everything
 * queued, releasing nothing that is still running. */
void fikit_learn_drain(struct fikit_learner *L, bool final);
/* No more samples; fikit_learn_wait returns false from now on. */
void fikit_learn_stop(struct fikit_learner *L);
/* In a forked child: an empty queue, nothing remembered. */
void fikit_learn_reset(struct fikit_learner *L);

#endif
