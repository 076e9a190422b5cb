/* Owns: the latency budget inside fikitd, for one device: the budget
 * controllers of its tasks (core/budget.h, the same code fikit sim runs),
 * fed with the bursts each task reports in its slot (core/bursts.h)
 * against the reference it published there, and the knobs they set,
 * written into each task's owner entry (what clients obey) and into the
 * scheduler (what fikitd's grants obey). Everything here runs under the
 * device's lock. */
#ifndef FIKITD_STEER_H
#define FIKITD_STEER_H

#include "core/budget.h"

#include <stdint.h>

struct fikitd_device;

/* What fikitd knows of a task's budget and how it reads its bursts. */
struct fikitd_steer_slot {
    double budget;          /* its latency_budget (0: none) */
    bool of_requests;       /* latency_budget_of = requests */
    uint32_t sm_pct;        /* its configured SM share (MPS thread cap or confined launches; 0: all) */
    uint64_t burst_tail;    /* bursts read from its ring */
    uint64_t ref_seen;      /* the reference's sequence number last taken */
    uint32_t ref_sizes;     /* burst sizes in it (0: not steered) */
    uint64_t bursts, lost;  /* bursts read, and lost or refused */
};

/* A task joined slot s (its steer slot filled in) / left. */
void fikitd_steer_add(struct fikitd_device *dev, int s);
void fikitd_steer_drop(struct fikitd_device *dev, int s);
/* Takes new references and bursts from the slots into the controllers and
 * sets the knobs where a step changed: in every pass of the arbiter. */
void fikitd_steer_sync(struct fikitd_device *dev, uint64_t now);

/* What fikit status and the metrics show of the task in s. */
struct fikit_msg_status_task;
void fikitd_steer_status(const struct fikitd_device *dev, int s, struct fikit_msg_status_task *out);

#endif
