/* Owns: the task's bursts as its program sees them, what its latency
 * budget is judged by. A burst runs from the first launch after the
 * program waited for its work (less the CPU time its thread spent since
 * that wait: the request's host work, fikit_thread_cpu_ns) to the return
 * of the next wait that found everything it had launched done (a stream,
 * context or event synchronize, a blocking copy back, clFinish,
 * clWaitForEvents; the backends' hooks report each wait). Each burst goes to fikitd through the
 * task's slot; a burst run while the task was alone on its device (no
 * other task registered there from its start to its end, and not
 * measuring: --measure times every launch, which lengthens bursts) goes
 * into its profile too, as what it takes alone. A wait ends the open
 * bursts of every device of the process: a wait names a stream, context or
 * event, and finding its device would cost a driver call. A launch within
 * FIKIT_BURST_JOIN_NS of the wait that ended a burst continues that burst:
 * a service that waits after each of its kernels (the CUDA C service of
 * bench/evaluate: 20-43 us of host work between them on an H100) has
 * bursts of a request, as fikit sim models them, not of one kernel, which
 * one lower kernel in flight makes several times longer while the request
 * around it grows by a fraction. So a burst is reported when the next one
 * opens. The launch path pays one load while a burst is open. The wait
 * that ends a burst also asks whether anything below the task ran during
 * it (core/shm.h fikit_shm_quiet_since): a quiet burst sets the budget's
 * pace (core/budget.h). */
#ifndef FIKIT_INTERPOSE_BURST_H
#define FIKIT_INTERPOSE_BURST_H

#include "core/bursts.h"
#include "interpose/client.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

bool fikit_burst_open(struct fikit_client_device *d, uint64_t seq);

/* A launch numbered seq (the process's launch_seq before it) on d: whether
 * it opened a burst (the program waited for its work before it, at least
 * FIKIT_BURST_JOIN_NS ago, so the time since its previous launch was idle
 * between bursts, not a gap). */
static inline bool fikit_burst_launched(struct fikit_client_device *d, uint64_t seq)
{
    if (!atomic_load_explicit(&d->burst_start_ns, memory_order_relaxed))
        return fikit_burst_open(d, seq);
    return false;
}

/* A wait hook, before the real wait: what it hands to fikit_burst_waited. */
static inline uint64_t fikit_burst_wait(void)
{
    return atomic_load_explicit(&fikit_client.launch_seq, memory_order_acquire);
}
/* The real wait returned (ok: it succeeded): with no launch since it began,
 * what was open is one burst. */
void fikit_burst_waited(uint64_t seq_before, bool ok);

/* A wait hook's body, the same for every API: the real wait, then what it
 * ended. `return`s the real wait's result. */
#define FIKIT_BURST_WAIT(status_t, ok, call)                                                        \
    do {                                                                                           \
        uint64_t seq_ = fikit_burst_wait();                                                        \
        status_t r_ = (call);                                                                      \
        fikit_burst_waited(seq_, r_ == (ok));                                                      \
        return r_;                                                                                 \
    } while (0)

/* The reference (the bursts alone in d's store) into the slot of r. */
void fikit_burst_publish_ref(struct fikit_client_device *d, struct fikit_registration *r);

#endif
