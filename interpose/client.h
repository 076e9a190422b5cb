/* Owns: what a program under fikit knows about itself, in one struct
 * (fikit_client) with one fork handler: its task, priority and
 * configuration, its connection to fikitd, its devices (each one's
 * registration and record: interpose/device.h), the learner's queue, and the housekeeping thread that drains that queue,
 * watches the daemon and saves profiles. Registration happens at the first
 * launch on a device; a lost daemon turns the device unscheduled until a new
 * one is reached. */
#ifndef FIKIT_INTERPOSE_CLIENT_H
#define FIKIT_INTERPOSE_CLIENT_H

#include "conf/config.h"
#include "interpose/backend.h"
#include "interpose/device.h"
#include "interpose/learn.h"

#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#define FIKIT_CLIENT_MAX_DEVICES 8
#define FIKIT_CLIENT_WANTS_KNOWN (1u << 31)

/* Devices on the client's first cache line; the rest follow it. */
#define FIKIT_CLIENT_HOT_DEVICES 6

struct fikit_client {
    /* Read on every launch, written once when a device appears: one cache
     * line, shared clean between the threads. */
    _Alignas(64) _Atomic uint32_t wants; /* bit per enum fikit_backend_kind; KNOWN once initialised */
    _Atomic int ndevs;
    uint32_t sample_period; /* 0: never sample (outside measure mode) */
    bool measure;
    bool beside; /* share = beside, kept to its share (MPS thread cap, or confine_pct): never held */
    /* Owned by selftime.c and fault.c (set by their constructors), read on
     * every launch: kept in this line, where a launch that finds the
     * process's data out of cache pays one miss for all of them. */
    bool selftime_on;
    uint8_t fault_at; /* enum fikit_fault_step */
    struct fikit_client_device *devs[FIKIT_CLIENT_MAX_DEVICES];

    /* Written on every launch: a line of their own, so the writes do not
     * take the line above away from the other threads. */
    _Alignas(64) _Atomic uint64_t launch_seq;
    _Atomic uint64_t last_key;
    _Atomic uint32_t sample_countdown;

    _Alignas(64) pthread_mutex_t lock; /* registration and the fields below it */
    bool disabled;        /* configuration unusable: plain passthrough */
    struct fikit_config cfg;
    char task[64];
    int priority;
    enum fikit_backend_choice backend;
    char socket_path[PATH_MAX];

    int sock;            /* -1: not connected */
    bool warned_missing; /* the one stderr line was printed */
    atomic_bool warned_register; /* a registration answered unusably was said (once) */
    _Atomic bool daemon_lost;
    pthread_t housekeeper;
    bool housekeeping;   /* the thread runs */
    bool exiting;        /* the exit handler ran: no thread starts again */
    bool exit_handler;   /* registered */
    /* Not under the lock: mps_lower_cap = launches, the share of the SMs
     * its launches are confined to while a higher level is active (0:
     * none; set once, before KNOWN), and whether confining failed once
     * (then it shares only gaps, as without a cap). Read by launches of a
     * task with a level above only. */
    uint32_t confine_pct;
    _Atomic bool confine_failed;

    /* Timed launches, until the housekeeping thread learns from them. */
    _Alignas(64) struct fikit_learner learner;
};

_Static_assert(FIKIT_LEARN_DEVICES >= FIKIT_CLIENT_MAX_DEVICES, "the learner remembers every device");
_Static_assert(offsetof(struct fikit_client, devs) + FIKIT_CLIENT_HOT_DEVICES * sizeof(void *) <= 64,
               "the first devices share the launch path's cache line");

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
/* Maps, read-only, the slots of other tasks in want (bits) that this
 * registration has no mapping of for their owners' generation, asking
 * fikitd for each (FIKIT_MSG_SLOT): a lower-level launch that found them
 * unreadable. Does nothing if the client's lock is taken. Whether it
 * mapped any. */
bool fikit_client_fetch_slots(struct fikit_registration *r, uint64_t want);
/* Whether this task runs beside higher levels on a launch of ops's API,
 * and the share of the SMs fikit confines such a launch to (*confine_pct,
 * 0: none): where its share is kept by confining launches, only an API
 * whose backend can (ops->confines) and until confining failed. */
static inline bool fikit_client_beside(const struct fikit_backend_ops *ops, uint32_t *confine_pct)
{
    const struct fikit_client *c = &fikit_client;
    *confine_pct = 0;
    if (!c->beside)
        return false;
    if (!c->confine_pct)
        return true;
    if (!ops->confines || atomic_load_explicit(&c->confine_failed, memory_order_relaxed))
        return false;
    *confine_pct = c->confine_pct;
    return true;
}
/* Confining a launch failed for a reason that will not pass (no green
 * contexts on this driver): says so once on stderr, and the task shares
 * only gaps from now on. */
void fikit_client_confine_failed(const char *why);

/* Notices a lost daemon and rejoins a new one (the housekeeping thread, and
 * a held launch that waits long). */
void fikit_client_check_daemon(void);

#endif
