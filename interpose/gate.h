/* Owns: the launch path, the same for every API. A hook describes a launch
 * and calls fikit_gate_enter() before the real launch and
 * fikit_gate_exit() after it. Enter identifies the kernel, holds the
 * launch if a higher priority level is active until fikitd grants it,
 * publishes it into the shared segment (no system call), and decides
 * whether to time it. Exit hands the timing markers to the learner. A
 * high-priority launch never waits. */
#ifndef FIKIT_INTERPOSE_GATE_H
#define FIKIT_INTERPOSE_GATE_H

#include "interpose/backend.h"
#include "interpose/client.h"

#include <stdbool.h>
#include <stdint.h>

struct fikit_gate {
    struct fikit_client_device *dev; /* NULL: not scheduled, not timed */
    const struct fikit_backend_ops *ops;
    const char *name;                /* cached, immutable */
    uint64_t key, prev, seq;
    bool sample;
    bool burst_first;                /* it opened a burst: the program waited before it */
    uint32_t sm_pct;                 /* confine it to this share of the SMs (percent);
                                      * 0: the whole device (struct fikit_admit) */
    struct fikit_registration *reg;  /* where it was published or counted; NULL: neither */
    uint64_t ticket;                 /* that update (fikit_shm_withdraw_own) */
    struct fikit_trace_event launch_event; /* traced once launched; type 0: not traced */
    bool marker_ok;
    struct fikit_marker marker;
};

void fikit_gate_enter(struct fikit_gate *g, const struct fikit_backend_ops *ops,
                      struct fikit_launch_desc *l);
/* launched: whether the real call succeeded. */
void fikit_gate_exit(struct fikit_gate *g, struct fikit_launch_desc *l, bool launched);

/* Forgets the cached name of a kernel handle that is going away. */
void fikit_gate_forget_kernel(const void *kernel);
/* Forgets every cached name (code was unloaded: handles may be reused). */
void fikit_gate_forget_all_kernels(void);
/* In a forked child: the name tables' locks, which a parent's thread may
 * have held at the fork. */
void fikit_gate_after_fork_child(void);

#endif
