/* Owns: one device inside fikitd: its shared segment, the scheduler state
 * for the tasks on it, the arbiter thread that turns what clients publish
 * into grants, and the device's trace buffer. */
#ifndef FIKITD_DEVICE_H
#define FIKITD_DEVICE_H

#include "core/clock.h"
#include "core/proto.h"
#include "core/sched.h"
#include "core/stat.h"
#include "core/shm.h"
#include "core/trace.h"
#include "fikitd/steer.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FIKITD_MAX_DEVICES 16

/* What fikitd knows of a slot's task: identity is never read back from
 * shared memory. */
struct fikitd_slot_info {
    bool used;
    int conn_id;
    uid_t uid;
    pid_t pid;
    int level;
    int requested_level;
    bool beside;         /* the client runs it beside higher levels (what it said) */
    char name[64];
    uint64_t trace_read; /* ring events consumed */
    bool trace_loss_warned; /* fikitd's log said this task's ring lost events */
    uint64_t launches;   /* the last publication taken: its seqlock number (fikit_shm_take_record) */
    bool warned;         /* a bad publication was logged */
    uint64_t held_warned_ns; /* when fikitd's log last named a long hold of this task */
    uint64_t gen;        /* its owner generation (the header's owner[s].gen) */
    struct fikitd_steer_slot steer; /* its budget, and its bursts as read */
};

struct fikitd_device {
    int index;
    char key[128];
    char model[128];
    int hdr_fd;          /* read-only: what clients get */
    int com_fd;
    int slot_fd[FIKIT_SHM_SLOTS]; /* each task's slot; -1: free */
    uint64_t next_gen;   /* the last owner generation given */
    struct fikit_shm *shm;
    uint64_t poll_ns;
    uint64_t spin_ns;
    uint64_t warn_held_ns; /* [daemon] warn_held_after_ms; 0: never */

    pthread_mutex_t lock; /* everything below */
    struct fikit_sched sched;
    struct fikit_budget_set budgets; /* the latency budgets' controllers (steer.h) */
    struct fikitd_slot_info slots[FIKIT_SHM_SLOTS];
    int next_slot;        /* rotating, so a slot is reused as late as possible */
    uint64_t grants[FIKIT_GRANT_COUNTS]; /* by enum fikit_grant_count */
    uint64_t nudges; /* held threads woken ahead of a decision */
    uint64_t passes; /* the arbiter's passes (the segment's pass_begun) */
    /* The arbiter's own latency: how long a posted launch waits before the
     * arbiter queues it (pickup), and how long one pass over the slots and
     * the scheduler holds the lock (pass). */
    struct fikit_stat pickup, pass;

    /* trace: a ring of the device's events, and who each slot was */
    struct fikit_trace_event *trace;
    size_t trace_cap;
    uint64_t trace_lost; /* events lost from the slots' rings since tracing started */
    uint64_t trace_count;
    struct fikit_trace_task trace_tasks[FIKIT_SHM_SLOTS];

    bool tracing;

    pthread_t arbiter;
    bool arbiter_running;
    bool stopping;
};

/* The longest the arbiter sleeps while idle. */
#define FIKITD_IDLE_WAKE_NS (100 * FIKIT_NS_PER_MS)

/* Creates the segment and starts the arbiter. */
int fikitd_device_open(struct fikitd_device **out, int index, const char *key, const char *model,
                       const struct fikit_sched_params *params, uint64_t poll_ns,
                       uint64_t spin_ns, uint64_t warn_held_ns, uint64_t generation,
                       size_t trace_events);
/* Releases every held launch (clients go on unscheduled), marks the segment
 * stopped, stops the arbiter and frees the device. */
void fikitd_device_close(struct fikitd_device *dev);

/* A task joins: returns its slot or -ENOSPC. beside: what the client said of
 * its share mode, shown by fikit status; budget: its latency_budget (0:
 * none), budget_of_requests its latency_budget_of, and sm_pct its
 * configured SM share (0: all), from fikitd's configuration. */
int fikitd_device_add_task(struct fikitd_device *dev, int conn_id, pid_t pid, uid_t uid,
                           const char *name, int level, int requested_level, bool beside, double budget,
                           bool budget_of_requests, uint32_t sm_pct);
/* A task left or died: its slot, held launches and reservations go at once. */
void fikitd_device_remove_task(struct fikitd_device *dev, int slot);

/* Takes the tasks' newest launch records into the scheduler, under dev->lock
 * held by the caller: the arbiter does it in every pass, and fikit status
 * before it reports, since with nothing held there may be no pass for a
 * long time (a lower task alone would show no launches). */
void fikitd_device_sync_records(struct fikitd_device *dev, uint64_t now);

void fikitd_device_set_trace(struct fikitd_device *dev, bool on);
/* Copies the trace (oldest first) into a malloc'd array. */
size_t fikitd_device_copy_trace(struct fikitd_device *dev, struct fikit_trace_event **out);

/* What `fikit status` shows of one device: its record and its tasks' (the
 * status request and the metrics both take this copy). Returns the tasks. */
int fikitd_status_device(struct fikitd_device *dev, uint64_t now, struct fikit_msg_status_device *md,
                         struct fikit_msg_status_task tasks[FIKIT_SHM_SLOTS]);

#endif
