/* Owns: what a task tells fikitd of its own bursts, in its slot (struct
 * fikit_shm_slot): a ring of the bursts it measured (the client writes,
 * fikitd reads) and the reference they are judged against (what bursts of
 * each size took alone, from the task's profile). fikitd's budget
 * controller (core/budget.h) is fed from here; fikitd validates everything
 * it reads, since the task writes it. */
#ifndef FIKIT_CORE_BURSTS_H
#define FIKIT_CORE_BURSTS_H

#include "core/clock.h"
#include "core/budget.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Bursts a task may report before fikitd reads them. fikitd reads in every
 * arbiter pass, at least every 100 ms; a service that waits after each of
 * its kernels reports thousands a second, so a writer that finds the ring
 * half unread rings fikitd's bell (fikit_bursts_put's answer). */
#define FIKIT_BURSTS_RING 512
/* A burst longer than this is not a request: it is not judged. */
/* A launch within this of the wait that ended a burst continues it
 * (interpose/burst.h); no launch for this long after it, and the task is
 * between bursts (core/admit.c). */
#define FIKIT_BURST_JOIN_NS (200ull * 1000)
#define FIKIT_BURST_MAX_NS (60 * FIKIT_NS_PER_S)

struct fikit_burst {
    uint64_t start_ns; /* the first launch after a wait */
    uint64_t end_ns;   /* the return of the wait that found its launches done */
    uint32_t launches;
    uint32_t flags;    /* FIKIT_BURST_* */
};
/* Nothing below the task had work queued or running while it lasted
 * (core/shm.h fikit_shm_quiet_since): it sets the task's pace. */
#define FIKIT_BURST_QUIET 1u

struct fikit_bursts {
    _Atomic uint64_t head; /* bursts written; entry i is ring[i % RING] */
    _Atomic uint64_t read; /* how far fikitd has read (it writes this word) */
    struct fikit_burst ring[FIKIT_BURSTS_RING];
    /* The reference: odd seq while the client writes it. */
    _Atomic uint64_t ref_seq;
    struct fikit_budget_ref ref;
};

/* The client: one burst (a single writer per task: the caller serialises).
 * True when half the ring is unread: ring fikitd's bell. */
bool fikit_bursts_put(struct fikit_bursts *b, const struct fikit_burst *x);
/* The client: its reference, replacing the last. */
void fikit_bursts_put_ref(struct fikit_bursts *b, const struct fikit_budget_ref *ref);

/* fikitd: the bursts written since *tail (its own cursor), at most max,
 * oldest first, each checked (start before end, at most
 * FIKIT_BURST_MAX_NS, at least one launch, not after now + 1 s); *lost
 * counts those overwritten before they were read or invalid. Returns how
 * many went into out and moves *tail past what it read. */
unsigned fikit_bursts_take(struct fikit_bursts *b, uint64_t *tail, uint64_t now, struct fikit_burst *out,
                           unsigned max, uint64_t *lost);
/* fikitd: the reference if it changed since *seen (a sequence number it
 * keeps) and is whole and valid (sizes ascending and nonzero, lengths
 * within FIKIT_BURST_MAX_NS); true then, with *seen moved. A torn or
 * invalid one is not taken (false; an invalid one is not looked at again
 * until it changes). */
bool fikit_bursts_take_ref(const struct fikit_bursts *b, uint64_t *seen, struct fikit_budget_ref *out);

#endif
