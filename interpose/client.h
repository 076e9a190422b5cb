/* Owns: what a program under fikit knows about itself: its task, priority
 * and configuration, its connection to fikitd, and per device its
 * registration (slot in the shared segment), its measurements and its
 * predictions. Registration happens at the first launch on a device; a
 * lost daemon turns the device unscheduled until a new one is reached. */
#ifndef FIKIT_INTERPOSE_CLIENT_H
#define FIKIT_INTERPOSE_CLIENT_H

#include "backends/backend.h"
#include "conf/config.h"
#include "core/measure.h"
#include "core/shm.h"
#include "interpose/predict.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define FIKIT_CLIENT_MAX_DEVICES 8

/* One registration with one fikitd; replaced, never freed, when the client
 * rejoins a restarted daemon (launch paths may still be reading it). */
struct fikit_registration {
    struct fikit_shm *shm;
    struct fikit_shm_slot *slot;
    int slot_index;
    int level;
    uint64_t generation;
};

struct fikit_client_device {
    const struct fikit_backend_ops *ops;
    void *handle;
    char key[128];
    char model[128];
    _Atomic(struct fikit_registration *) reg; /* NULL: unscheduled */
    int level;                                /* configured (or allowed) priority */

    pthread_mutex_t store_lock;               /* store */
    struct fikit_measure_store store;
    struct fikit_predictor *pred;
    _Atomic uint64_t idle_after_ns;           /* learned longest gap */
    bool dirty;                               /* learned since the last save */
    uint64_t saved_ns;
    char profile_path[PATH_MAX];
};

#define FIKIT_CLIENT_WANTS_KNOWN (1u << 31)

struct fikit_client {
    _Atomic uint32_t wants; /* bit per enum fikit_backend_kind; KNOWN once initialised */
    pthread_mutex_t lock;   /* registration and the fields below it */
    bool disabled;        /* configuration unusable: plain passthrough */
    struct fikit_config cfg;
    char task[64];
    int priority;
    bool measure;
    enum fikit_backend_choice backend;
    uint32_t sample_period; /* 0: never sample (outside measure mode) */
    char socket_path[PATH_MAX];

    int sock;            /* -1: not connected */
    bool warned_missing; /* the one stderr line was printed */
    _Atomic bool daemon_lost;

    struct fikit_client_device *devs[FIKIT_CLIENT_MAX_DEVICES];
    _Atomic int ndevs;

    _Atomic uint64_t launch_seq;
    _Atomic uint64_t last_key;
    _Atomic uint32_t sample_countdown;
};

extern struct fikit_client fikit_client;

/* Reads the environment and fikit.ini once; safe from any thread. */
void fikit_client_init(void);
/* Whether launches are ever timed (measuring, or sample_rate > 0). */
bool fikit_client_learns(void);
/* Whether launches of this API are to be scheduled (fikit.ini backend). */
bool fikit_client_wants(enum fikit_backend_kind kind);
/* The device of a launch, registering it on first use; NULL if the client
 * is disabled or the device cannot be identified. */
struct fikit_client_device *fikit_client_device(const struct fikit_backend_ops *ops,
                                                const struct fikit_launch_desc *l);
/* Learner thread: notices a lost daemon and rejoins a new one. */
void fikit_client_check_daemon(void);
/* Saves the profile of every device that learned something. */
void fikit_client_save_profiles(bool force);

#endif
