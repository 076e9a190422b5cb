/* Owns: fault injection for the reliability tests. With FIKIT_FAULT=die:STEP
 * in the environment, the client kills itself with SIGKILL when it reaches
 * STEP: register (request sent, answer not read), hold (launch posted,
 * waiting), granted (grant seen, not launched yet), launch (published, the
 * real launch not made). Without the variable a fault point is one load. */
#ifndef FIKIT_INTERPOSE_FAULT_H
#define FIKIT_INTERPOSE_FAULT_H

#include "interpose/client.h"

enum fikit_fault_step {
    FIKIT_FAULT_NONE = 0,
    FIKIT_FAULT_REGISTER,
    FIKIT_FAULT_HOLD,
    FIKIT_FAULT_GRANTED,
    FIKIT_FAULT_LAUNCH,
};

void fikit_fault_die(void);

/* The step is kept in fikit_client's first cache line (client.h), which
 * every launch reads anyway. */
static inline void fikit_fault_point(enum fikit_fault_step step)
{
    if (__builtin_expect(fikit_client.fault_at == step && step != FIKIT_FAULT_NONE, 0))
        fikit_fault_die();
}

#endif
