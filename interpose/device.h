/* Owns: what a program under fikit keeps per device, in two structs: its
 * registration with fikitd (slot in the shared segment, what it publishes)
 * and the device's record (the backend's ops, its bursts, measurements,
 * predictions and profile). interpose/client.h holds the program's set of
 * them; the learner and the launch path take one device at a time. */
#ifndef FIKIT_INTERPOSE_DEVICE_H
#define FIKIT_INTERPOSE_DEVICE_H

#include "core/measure.h"
#include "core/predict.h"
#include "core/shm.h"
#include "core/slowdown.h"
#include "interpose/backend.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One registration with one fikitd; replaced, never freed, when the client
 * rejoins a restarted daemon (launch paths may still be reading it). */
struct fikit_registration {
    _Alignas(64) struct fikit_shm *shm; /* one cache line: read on every launch */
    struct fikit_shm_slot *slot;
    int slot_index;
    int level;
    /* shm->hdr, here on the launch path's line: no load of the view. */
    const struct fikit_shm_header *hdr;
    /* The task's own: what it publishes, kept here (the slot shows a copy),
     * and how many of its threads hold a waiter of the slot. */
    struct fikit_shm_own own;
    _Atomic uint32_t holding;
    uint32_t device_index;                 /* fikitd's, for FIKIT_MSG_SLOT */
    uint64_t generation;                   /* fikitd's (its start time) */
    uint64_t asked[FIKIT_SHM_SLOTS];       /* owner generation last asked for (under the client's lock) */
};

struct fikit_client_device {
    /* What every launch reads, on the first cache line (the struct is
     * allocated 64-byte aligned): a launch that finds its caches cold pays
     * one miss here, not four. */
    _Alignas(64) const struct fikit_backend_ops *ops;
    void *handle;
    _Atomic(struct fikit_registration *) reg; /* NULL: unscheduled */
    struct fikit_predictor *pred;
    _Atomic uint64_t idle_after_ns;           /* learned longest gap */
    int level;                                /* configured (or allowed) priority */
    _Atomic uint64_t burst_start_ns;          /* the open burst's first launch; 0: none (burst.h) */
    /* The rest of the open burst, read only when it opens or ends. */
    _Atomic uint64_t burst_seq;               /* its launch number */
    _Atomic bool burst_alone;                 /* the task was alone on the device at its start */
    pthread_mutex_t burst_lock;               /* opening and ending bursts; writers of the slot's bursts */
    uint64_t burst_base;                      /* launches of the open burst before its last wait */
    uint64_t burst_host_ns;                   /* the open burst's host work before its first launch */
    struct fikit_burst_done {                 /* the last burst ended, not yet reported */
        uint64_t start_ns, end_ns, launches;  /* end_ns 0: none */
        uint64_t host_ns;                     /* its host work before its first launch */
        uint64_t cpu_ns;                      /* the ending thread's CPU time at its end */
        pthread_t thread;                     /* that thread */
        bool alone;
        bool quiet;                           /* nothing below ran during it (fikit_quiet_since) */
    } burst_done;
    uint64_t burst_prev_end_ns;               /* when the burst before the open one ended; 0: none */

    char key[128];
    char model[128];
    bool on_host; /* the device computes on this host's CPUs (ops->device_on_host) */
    pthread_mutex_t store_lock;               /* store */
    struct fikit_measure_store store;
    _Atomic bool dirty;                       /* learned since the last save (the learner, and a burst alone from any thread) */
    uint64_t saved_ns;
    char profile_path[PATH_MAX];
    struct fikit_slowdown slow; /* against the profile loaded; the learner thread's */
};

_Static_assert(offsetof(struct fikit_client_device, burst_start_ns) + sizeof(uint64_t) <= 64,
               "what every launch reads of its device is on its first cache line");

#endif
