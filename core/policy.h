/* Owns: the policy's rules, shared by both halves of a decision: fikitd's
 * scheduler (core/sched.c) and the launch path's own admission
 * (core/admit.c) read activity, idleness, pauses and the room in a gap
 * through these, so the two never disagree. Also the parameter record
 * both are given. Pure: time is an argument. */
#ifndef FIKIT_CORE_POLICY_H
#define FIKIT_CORE_POLICY_H

#include "core/clock.h"
#include "core/gap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FIKIT_LEVELS 10

enum fikit_policy {
    FIKIT_POLICY_FILL = 0,  /* BestPrioFit gap filling */
    FIKIT_POLICY_STRICT,    /* lower levels wait until higher ones are idle */
    FIKIT_POLICY_PASSTHROUGH, /* observe only */
};

const char *fikit_policy_name(enum fikit_policy p);
int fikit_policy_parse(const char *name, enum fikit_policy *out);
#define FIKIT_POLICY_NAMES "fill, strict, passthrough"

/* The policy's parameters: one record, whose keys fikit.ini's table binds
 * field by field (conf/config.c: every default is its row's) and which
 * fikitd publishes to the clients (fikit_shm_publish_params). */
struct fikit_sched_params {
    enum fikit_policy policy;
    uint64_t substrate_cost_ns;  /* paid once per filled gap (context switch back) */
    uint64_t safety_margin_ns;   /* added to every fit test */
    double gap_confidence;       /* quantile of the remaining gap relied on */
    uint64_t idle_after_ns;      /* the idle threshold; 0 (idle_after_us = auto): learned
                                  * from each task's longest gap, at least idle_floor_ns */
    uint64_t idle_floor_ns;      /* a learned threshold's floor */
    bool pauses;                 /* when learned: short kernels go in a pause */
    uint64_t recheck_ns;         /* re-evaluation period of a gap that fits nothing */
    uint64_t starve_after_ns;    /* held this long: fitted at the median; 0: never */
    uint64_t max_queued_ns;      /* work a lower level keeps queued ahead while a higher
                                  * level has a task (the clients keep to it); 0: no bound */
    uint64_t max_wait_ns;        /* a held stream head goes at the next gap after this
                                  * long (at twice this at the latest), fitting or
                                  * not; 0: never */
    double beside_max_slowdown;  /* share = beside tasks share only gaps while the active
                                  * higher level's kernels run this much slower than in
                                  * its profile; 0: never (the clients keep to it) */
    bool switches_contexts;      /* the substrate switches contexts between tasks
                                  * (time-slicing; not MPS): from [scheduler] substrate,
                                  * no key of its own */
};

/* Since when nothing below a task may have run for its burst that started
 * at start_ns to be quiet (fikit_shm_quiet_since; the budget's pace, DESIGN.md
 * "The pace"): FIKIT_QUIET_MARGIN_NS before it began, for what lower work
 * leaves behind it (in fikit sim the CUDA C service's bursts that began
 * right after a long job kernel ended read 1.53x their reference without
 * it); and where the substrate switches contexts (switches), since the
 * task's previous burst ended (prev_end_ns; 0: none): there the burst's
 * first kernel pays the switch back to its context after any other
 * process's kernel, however long before it ran (121-130 us on an H100, and
 * the CUDA C service's quiet bursts read 1.31-1.42x their reference when
 * only the margin was asked). */
#define FIKIT_QUIET_MARGIN_NS (1 * FIKIT_NS_PER_MS)
static inline uint64_t fikit_quiet_since(uint64_t start_ns, uint64_t prev_end_ns, bool switches)
{
    uint64_t since = start_ns > FIKIT_QUIET_MARGIN_NS ? start_ns - FIKIT_QUIET_MARGIN_NS : 0;
    if (switches && prev_end_ns && prev_end_ns < since)
        since = prev_end_ns;
    return since;
}

/* The confidence a starving stream head is fitted at: the median. */
#define FIKIT_SCHED_STARVING_CONFIDENCE 0.5

/* Whether the idle threshold is learned (idle_after_us = auto), and its
 * floor then, or the configured threshold. */
static inline bool fikit_params_idle_learned(const struct fikit_sched_params *p)
{
    return p->idle_after_ns == 0;
}
static inline uint64_t fikit_params_idle_after(const struct fikit_sched_params *p)
{
    return p->idle_after_ns ? p->idle_after_ns : p->idle_floor_ns;
}

/* When a launch of dur_ns issued at now will have finished, given the work
 * already queued until busy_until_ns. */
static inline uint64_t fikit_busy_until(uint64_t busy_until_ns, uint64_t now, uint64_t dur_ns)
{
    return (busy_until_ns > now ? busy_until_ns : now) + dur_ns;
}

/* The idle threshold of a task whose longest learned gap is learned_ns (0:
 * none yet). With idle_after_us = auto (learned), twice that gap and never
 * less than idle_after_ns: a gap a little longer than any seen (a sleep that
 * overshot, a loaded host) must not turn the task idle, or lower levels
 * would run unchecked over its next work. A configured idle_after_us
 * applies as it is. Shared by the scheduler and the client's hold check. */
uint64_t fikit_idle_threshold(bool learned, uint64_t idle_after_ns, uint64_t learned_ns);

/* A pause: with idle_after_us = auto, a task whose current gap is known and
 * has outlasted its learned p99, and at least FIKIT_PAUSE_FLOOR_NS since its
 * work ended, has paused. While it has, lower levels may launch kernels
 * predicted to take at most FIKIT_PAUSE_KERNEL_NS (their queue kept within
 * max_queued_us as always), so its return waits at most about one such
 * kernel; longer kernels and unmeasured ones still wait for it to turn idle
 * (fikit_idle_threshold), for a gap they fit, or for max_wait_ms.
 * The floor is longer than the host gaps inside the traced services'
 * requests (resnet50: 18-28 us at the median), and short enough that a
 * bursty service's pauses reach lower tasks within about a millisecond
 * (docs/DESIGN.md "The policy"). */
#define FIKIT_PAUSE_FLOOR_NS (1 * FIKIT_NS_PER_MS)
/* The longest kernel a pause lets in: the time slice after which the
 * driver's time-slicing preempts a kernel anyway (about 2 ms, docs/sim.md),
 * and longer than every resnet50 training kernel (30 us to 1.2 ms). */
#define FIKIT_PAUSE_KERNEL_NS (2 * FIKIT_NS_PER_MS)

/* When a task's current gap counts as a pause (see above): its p99, never
 * less than FIKIT_PAUSE_FLOOR_NS; UINT64_MAX (never) when its gap is not
 * known or pauses are off (`pauses = off`, or idle_after_us configured:
 * on is idle_learned && pauses). */
uint64_t fikit_pause_threshold(bool on, const struct fikit_gap_pred *gap);

/* Whether a launch predicted to take dur_ns may go while the levels above
 * have only paused: measured, and no longer than FIKIT_PAUSE_KERNEL_NS. */
static inline bool fikit_fits_pause(uint64_t dur_ns)
{
    return dur_ns && dur_ns <= FIKIT_PAUSE_KERNEL_NS;
}

/* Whether a task that launched `launches` kernels, the last at last_ns with
 * work predicted to end at busy_until_ns, is active at now under an idle
 * threshold of idle_after_ns. Shared by the scheduler and the client's
 * own hold check, so both read activity the same way. */
bool fikit_task_is_active(uint64_t launches, uint64_t last_ns, uint64_t busy_until_ns,
                          uint64_t idle_after_ns, uint64_t now);

/* The predicted room left at now in the gap of one task of the top level
 * whose work is predicted to end at busy_until_ns and whose next gap is
 * gap, at the given confidence: 0 while it is busy or its gap is unknown. */
uint64_t fikit_task_room(const struct fikit_gap_pred *gap, uint64_t busy_until_ns, uint64_t now,
                         double confidence);

/* The quantile of the remaining gap that counts as certain. */
#define FIKIT_SURE_CONFIDENCE 0.01

/* What lower levels may put into the gap that the top level is in, at now;
 * the scheduler and the client's own gap filling (interpose/gate.c) share
 * it. A fill may take what the gap_confidence quantile of the remaining gap
 * allows while the lower work already in flight ahead of it is within
 * max_queued_ns; beyond that, only what the gap is near certain
 * (FIKIT_SURE_CONFIDENCE) to leave. Filled on and on, a gap whose end nobody
 * can predict (a request arriving at random) ends with lower work in
 * flight, which the high-priority launch then waits for: the bound keeps
 * that wait within max_queued_ns plus one kernel, and a kernel longer than
 * max_queued_ns still goes once the queue ahead has drained. 0 everywhere
 * while a top task is busy or its gap is unknown. */
struct fikit_fill_rooms {
    uint64_t room;          /* at gap_confidence */
    uint64_t sure;          /* at FIKIT_SURE_CONFIDENCE */
    uint64_t starving;      /* the median remaining gap (starve_after_ns; bounded alike) */
    uint64_t max_queued_ns; /* 0: no bound */
};

void fikit_fill_rooms_init(struct fikit_fill_rooms *r, uint64_t max_queued_ns);
/* One task of the top level, whose work is predicted to end at busy_until_ns
 * and be followed by gap: the rooms become the smaller of theirs and its. */
void fikit_fill_rooms_add(struct fikit_fill_rooms *r, const struct fikit_gap_pred *gap,
                          uint64_t busy_until_ns, uint64_t now, double confidence);
/* After the last add: no task, no room. */
void fikit_fill_rooms_done(struct fikit_fill_rooms *r);

/* Where a room for more lower work ends, when the lower work already put
 * into the device is predicted to end at filled_until_ns: room (one of r's)
 * while that is within the bound, else only what the gap is sure to leave. */
static inline uint64_t fikit_fill_end_of(const struct fikit_fill_rooms *r, uint64_t now,
                                         uint64_t filled_until_ns, uint64_t room)
{
    uint64_t queued = filled_until_ns > now ? filled_until_ns - now : 0;
    if (!r->max_queued_ns || queued <= r->max_queued_ns || r->sure >= room)
        return now + room;
    return now + r->sure;
}

/* The same at gap_confidence: what fills and fikitd's fitting grants use. */
static inline uint64_t fikit_fill_end(const struct fikit_fill_rooms *r, uint64_t now,
                                      uint64_t filled_until_ns)
{
    return fikit_fill_end_of(r, now, filled_until_ns, r->room);
}

/* Whether lower-level work of dur_ns, queued behind work predicted to end
 * at start_ns, fits a gap predicted to end at end_ns after paying
 * overhead_ns (substrate cost and safety margin). */
static inline bool fikit_fill_fits(uint64_t start_ns, uint64_t end_ns, uint64_t overhead_ns,
                                   uint64_t dur_ns)
{
    return dur_ns != 0 && end_ns > start_ns && end_ns - start_ns >= overhead_ns &&
           end_ns - start_ns - overhead_ns >= dur_ns;
}

#endif
