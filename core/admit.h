/* Owns: the client-side admission of a launch, as a pure function of a
 * snapshot of its device's segment and of time. Whether a launch goes at
 * once, fills the gap of the level above by itself, waits for its own queue
 * to drain (pacing), waits to look again (share = beside beside a slowed
 * level) or is held for fikitd: interpose/gate.c reads the snapshot and acts
 * on the answer; fikit replay and fikit sim call the same function with
 * snapshots of their own. The rules are those of docs/DESIGN.md "The
 * policy"; fikitd's half is core/sched.h. */
#ifndef FIKIT_CORE_ADMIT_H
#define FIKIT_CORE_ADMIT_H

#include "core/clock.h"
#include "core/budget.h"
#include "core/gap.h"
#include "core/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One other task of the device, as its slot shows it. */
struct fikit_admit_task {
    int level;
    bool unreadable;          /* its publication was being written: active, busy, gap unknown */
    uint64_t launches;
    uint64_t last_launch_ns;
    uint64_t busy_until_ns;
    uint64_t idle_after_ns;   /* its longest learned gap; 0: none */
    struct fikit_gap_pred gap;
    uint32_t slowdown_ppm;    /* against its profile; 0: unknown */
    uint64_t slowdown_ns;     /* when that was measured */
    uint64_t waited_ns;       /* when its program's wait last ended a burst; 0: never */
};

/* What a client reads of its device's segment before a launch. */
struct fikit_view {
    bool running;             /* fikitd runs and schedules this device */
    enum fikit_policy policy;
    uint32_t level_mask;      /* bit L: a registered task has level L */
    bool idle_learned;
    bool pauses;              /* short kernels go in a pause (fikit_pause_threshold) */
    uint64_t idle_after_ns;
    double gap_confidence;
    uint64_t max_queued_ns;
    uint64_t fill_overhead_ns;
    uint32_t beside_max_slowdown_ppm;
    uint32_t queued;          /* launches held in fikitd's queue */
    uint64_t fill_until_ns;   /* with its low bit: fikitd is deciding */
    uint64_t granted_until_ns;
    /* The tasks of higher levels than the launching one (others may be
     * left out; ntasks 0 when level_mask shows none above). */
    const struct fikit_admit_task *tasks;
    size_t ntasks;
    /* The launching task. */
    int level;
    bool beside;              /* share = beside, in force */
    uint32_t confine_pct;     /* a beside task whose launches fikit confines
                               * (mps_lower_cap = launches): its configured
                               * share of the SMs, percent; 0: capped by
                               * other means (MPS's thread cap) or not beside */
    uint64_t own_busy_until_ns;
    /* What the budget of a level above lets it do while that level is
     * active (fikitd's controller, core/budget.h); zero: as configured. */
    struct fikit_lower_knobs knobs;
};

enum fikit_admit_kind {
    FIKIT_ADMIT_GO = 0,       /* launch now */
    FIKIT_ADMIT_FILL,         /* launch now into the gap above: take it (fikit_fill_place) */
    FIKIT_ADMIT_PACE,         /* sleep until .until_ns (own queue drained), then look again */
    FIKIT_ADMIT_RECHECK,      /* beside a level running too slow: look again at .until_ns */
    FIKIT_ADMIT_HOLD,         /* post it to fikitd and wait for a grant */
};

const char *fikit_admit_kind_name(enum fikit_admit_kind k);

struct fikit_admit {
    enum fikit_admit_kind kind;
    uint64_t until_ns;               /* PACE, RECHECK */
    struct fikit_fill_rooms rooms;   /* FILL (and HOLD, for the record) */
    uint64_t room_ns;                /* FILL: the room it found (end - start) */
    uint64_t fill_until_ns;          /* FILL: the new end of the clients' fills */
    uint32_t sm_pct;                 /* GO: confine the launch to this share of the
                                      * SMs (percent, 1-99); 0: the whole device */
};

/* A slot's slowdown measured longer ago than this (its task went quiet or
 * stopped sampling) is neither acted on (fikit_admit) nor shown (fikit
 * status). */
#define FIKIT_SLOWDOWN_FRESH_NS FIKIT_NS_PER_S

/* How long a share = beside task beside a level running too slow waits
 * before it looks again (for room, or for the slowdown to fall back). */
#define FIKIT_BESIDE_RECHECK_NS (500 * FIKIT_NS_PER_US)

/* Whether no level above level has a task (level_mask: the segment's).
 * Then a launch goes at once, whatever else the segment says: the
 * high-priority path decides on this one load without a snapshot. */
static inline bool fikit_admit_nothing_above(uint32_t level_mask, int level)
{
    return level <= 0 || !(level_mask & ((1u << level) - 1u));
}

/* Decides for a launch of a kernel predicted to take dur_ns (0: never
 * measured) at now. */
void fikit_admit(const struct fikit_view *v, uint64_t now, uint64_t dur_ns, struct fikit_admit *out);

/* Where dur_ns of lower work goes into the gap that rooms describe, behind
 * the clients' fills (fill_until_ns, without its lock bit) and fikitd's
 * grants (granted_until_ns), after overhead_ns: returns the room found
 * (end - start) and sets *until to the new end of the fills, or 0 if it
 * does not fit. The fit test of fikitd's grants (fikit_fill_fits). */
uint64_t fikit_fill_place(uint64_t now, const struct fikit_fill_rooms *rooms, uint64_t overhead_ns,
                          uint64_t dur_ns, uint64_t fill_until_ns, uint64_t granted_until_ns,
                          uint64_t *until);

/* The low bit of fill_until_ns: fikitd is deciding. */
#define FIKIT_FILL_LOCK 1ull

#endif
