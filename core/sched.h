/* Owns: the per-device scheduler state and the decision, at a given
 * instant, of which held launches may go (fikit_sched_decide, in named
 * phases); the rules it shares with the launch path are core/policy.h. It
 * is pure: every function
 * takes the state and the time explicitly, so any sequence of events can be
 * replayed (tools/replay, tests) and every decision checked. fikitd feeds it
 * from the shared segment; the replay tool from a text timeline.
 *
 * The policy (DESIGN.md "The policy"):
 *  - the highest priority level (0 highest) with an active task runs freely;
 *  - a task is active from its first launch until it has launched nothing
 *    for longer than its idle threshold after its work ended;
 *  - held kernels of lower levels are granted by BestPrioFit inside the
 *    predicted gaps of the top level: scan levels from highest to lowest; in
 *    the first level holding a kernel that fits, grant the longest that
 *    fits; repeat while room remains. Fits: duration + substrate cost +
 *    safety margin <= remaining gap. A kernel passed over for longer ones
 *    FIKIT_SCHED_MAX_PASSED_OVER times goes first when it next fits;
 *  - only the oldest held launch of each (task, stream) may be granted, so
 *    launch order within a stream never changes;
 *  - a stream head held for starve_after_ns fits at the median remaining
 *    gap instead of the gap_confidence quantile; one with no measurement
 *    (duration 0) otherwise runs only while no higher level is active, and
 *    after starve_after_ns takes the median remaining gap whole;
 *  - a task that paused (its gap outlasted its p99 and 1 ms) lets lower
 *    kernels predicted at most 2 ms run as if it were idle;
 *  - a stream head held max_wait_ns goes at the start of the next gap of
 *    the levels above (their launched work done), or once held twice that
 *    whatever they do, one at a time, whether it fits or not, under fill
 *    and strict alike;
 *  - strict never fills gaps; passthrough grants everything at once. */
#ifndef FIKIT_CORE_SCHED_H
#define FIKIT_CORE_SCHED_H

#include "core/budget.h"
#include "core/gap.h"
#include "core/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FIKIT_MAX_TASKS 64
#define FIKIT_MAX_REQUESTS 512

struct fikit_task_state {
    bool used;
    uint32_t id;
    int level;
    int32_t pid;
    char name[64];
    uint64_t last_launch_ns;  /* valid once launches > 0 */
    uint64_t busy_until_ns;   /* predicted end of its launched work */
    uint64_t idle_after_ns;   /* its longest learned gap; 0: none yet */
    struct fikit_gap_pred gap; /* the gap expected after its last launch */
    uint64_t launches, holds, grants;
    /* What the latency budget of a level above lets it do while that level
     * is active (core/budget.h): its fitting grants keep to it. Zero: as
     * configured. */
    struct fikit_lower_knobs knobs;
};

struct fikit_request {
    uint32_t task_id;
    uint32_t ticket;     /* the caller's handle for the waiting launch */
    uint64_t stream;     /* stream, queue: order is kept within one */
    uint64_t key;        /* kernel key, for traces */
    uint64_t dur_ns;     /* predicted duration; 0 = not measured */
    uint64_t posted_ns;
    uint64_t seq;        /* set by the scheduler: posting order */
    int level;           /* set by the scheduler from the task */
    uint32_t passed_over; /* set by the scheduler: fits that went to a longer kernel */
};

enum fikit_grant_reason {
    FIKIT_GRANT_FREE = 0,     /* no higher level is active */
    FIKIT_GRANT_FIT,          /* fits the predicted gap of the top level */
    FIKIT_GRANT_PASSTHROUGH,  /* policy passthrough */
    FIKIT_GRANT_RELEASE,      /* released without a decision (shutdown) */
    FIKIT_GRANT_STARVED,      /* held starve_after: fitted at the median remaining gap */
    FIKIT_GRANT_PAUSE,        /* a short kernel while the levels above have paused */
    FIKIT_GRANT_OVERDUE,      /* held max_wait: at the start of the next gap above */
};

const char *fikit_grant_reason_name(enum fikit_grant_reason r);

/* Grants as fikitd counts them for `fikit status` and the metrics, one
 * array indexed by these: passthrough and release are "other". */
enum fikit_grant_count {
    FIKIT_GRANT_COUNT_FREE = 0,
    FIKIT_GRANT_COUNT_FIT,
    FIKIT_GRANT_COUNT_STARVED,
    FIKIT_GRANT_COUNT_PAUSE,
    FIKIT_GRANT_COUNT_OVERDUE,
    FIKIT_GRANT_COUNT_OTHER,
    FIKIT_GRANT_COUNTS
};
enum fikit_grant_count fikit_grant_count_of(enum fikit_grant_reason r);
/* "free", "fit", "starved", "pause", "overdue", "other". */
const char *fikit_grant_count_name(enum fikit_grant_count c);

struct fikit_grant {
    uint32_t task_id;
    uint32_t ticket;
    enum fikit_grant_reason reason;
    uint64_t key;
    uint64_t dur_ns;
    uint64_t room_ns;   /* FIT: the predicted remaining gap it was fitted into */
    uint64_t posted_ns;
    uint64_t at_ns;
};

/* A held kernel that fitted but lost to a longer one of its level this many
 * times is granted first (the oldest such) the next time it fits: best fit
 * alone would starve a task whose kernels are a little shorter than its
 * neighbour's for as long as both keep launching. */
#define FIKIT_SCHED_MAX_PASSED_OVER 3

/* Device time promised to a gap-filling grant: until its predicted end, the
 * gap's room is taken. Dropped at once when the grantee's task goes. */
struct fikit_reservation {
    uint32_t task_id;
    uint64_t end_ns;
};

#define FIKIT_MAX_RESERVATIONS 128

struct fikit_sched {
    struct fikit_sched_params p;
    struct fikit_task_state tasks[FIKIT_MAX_TASKS];
    struct fikit_request req[FIKIT_MAX_REQUESTS]; /* in posting order */
    size_t nreq;
    uint64_t next_seq;
    struct fikit_reservation resv[FIKIT_MAX_RESERVATIONS];
    size_t nresv;
    bool knobbed;  /* some task has budget knobs (fikit_sched_set_knobs): fits look them up */
    /* Lower-level work that clients put into a gap by themselves (the
     * segment's fill_until_ns): predicted to run until then. */
    uint64_t client_fill_until_ns;
    /* Set by decide: whether a new launch of the top level could allow a
     * grant before wake_ns. False while a top task is still busy (a launch
     * only extends that) and under strict (only idleness matters), so an
     * arbiter need not watch launches then and may sleep until wake_ns. */
    bool watch_launches;
};

/* The predicted end of granted lower-level work still running at now
 * (expired reservations are dropped), the clients' own fills included; now
 * if there is none. */
uint64_t fikit_sched_reserved_until(struct fikit_sched *s, uint64_t now);
/* The predicted end of the work this scheduler granted into gaps whose
 * grantees still live (0: none), clients' fills not included. */
uint64_t fikit_sched_granted_until(const struct fikit_sched *s);

void fikit_sched_init(struct fikit_sched *s, const struct fikit_sched_params *p);

/* -EINVAL for a level outside 0..9, -EEXIST, -ENOSPC. */
int fikit_sched_add_task(struct fikit_sched *s, uint32_t id, int32_t pid, const char *name,
                         int level);
/* Forgets the task, drops its held requests (returns how many) and frees
 * the device time reserved for its granted kernels. */
int fikit_sched_remove_task(struct fikit_sched *s, uint32_t id);
struct fikit_task_state *fikit_sched_task(struct fikit_sched *s, uint32_t id);
/* What the budget's controller lets task id do (core/budget.h): a held
 * launch of it is granted into gaps only as its knobs allow (WAIT: not at
 * all; GAPS: within its queue bound). Free, pause and overdue grants are
 * unchanged. */
void fikit_sched_set_knobs(struct fikit_sched *s, uint32_t id, const struct fikit_lower_knobs *k);

/* The task launched a kernel at now that keeps its device busy until
 * busy_until_ns, and then expects the gap described by gap. */
void fikit_sched_note_launch(struct fikit_sched *s, uint32_t id, uint64_t now,
                             uint64_t busy_until_ns, const struct fikit_gap_pred *gap);

/* What a task publishes about its launches (its slot's record in the
 * segment, which the task writes and anyone could): fikitd's only way to
 * learn of high-priority launches, which make no round trip. */
struct fikit_launch_record {
    uint64_t launches;        /* how many so far */
    uint64_t last_launch_ns;
    uint64_t busy_until_ns;   /* predicted end of its launched work */
    uint64_t idle_after_ns;   /* its longest learned gap; 0: unknown */
    struct fikit_gap_pred gap; /* the gap expected after its last launch */
};

/* Whether a record is plausible at now after prev_launches were seen: counts
 * never go back, times are not far in the future, gap quantiles ascend. A
 * corrupt or hostile client then confuses the schedule of nobody but
 * itself, and only within bounds. */
bool fikit_launch_record_plausible(const struct fikit_launch_record *r, uint64_t prev_launches,
                                   uint64_t now);

/* fikitd's half of a launch: takes a task's newest record into its state if
 * it is plausible. 0 when taken (or nothing new), -EINVAL when implausible
 * (ignored), -ENOENT for an unknown task. */
int fikit_sched_note_record(struct fikit_sched *s, uint32_t id, uint64_t now,
                            const struct fikit_launch_record *r);

bool fikit_sched_task_active(const struct fikit_sched *s, const struct fikit_task_state *t,
                             uint64_t now);
/* The highest-priority active level, or FIKIT_LEVELS when none is active. */
int fikit_sched_top_level(const struct fikit_sched *s, uint64_t now);

/* What `fikit status` shows of the scheduler, read through these rather
 * than its fields. */
struct fikit_sched_status {
    int top_level;                /* fikit_sched_top_level */
    enum fikit_policy policy;
    uint64_t substrate_cost_ns;
    uint64_t safety_margin_ns;
    uint32_t held_now;            /* requests waiting */
};
void fikit_sched_status(const struct fikit_sched *s, uint64_t now, struct fikit_sched_status *out);

struct fikit_sched_task_status {
    bool active;
    uint64_t launches;
    uint32_t held_now;            /* its requests waiting */
    uint64_t held_longest_ns;     /* how long the first of them has waited (>= 1) */
    uint64_t held_longest_dur_ns; /* and its predicted duration */
    uint64_t idle_after_ns;       /* its idle threshold in force */
};
/* Task id's status at now; all zero (but its idle threshold) if the
 * scheduler does not know it. */
void fikit_sched_task_status(const struct fikit_sched *s, uint32_t id, uint64_t now,
                             struct fikit_sched_task_status *out);

/* Queues a held launch (seq and level are filled in). -ENOENT for an
 * unknown task, -ENOSPC when full. */
int fikit_sched_post(struct fikit_sched *s, const struct fikit_request *r);

/* Decides at now. Writes up to max grants (removing them from the queue),
 * returns how many, and sets *wake_ns to when a decision may next change
 * without a new event (UINT64_MAX: only an event can change it). */
size_t fikit_sched_decide(struct fikit_sched *s, uint64_t now, struct fikit_grant *out,
                          size_t max, uint64_t *wake_ns);

/* Releases every held request (shutdown); returns how many were written. */
size_t fikit_sched_release_all(struct fikit_sched *s, uint64_t now, struct fikit_grant *out,
                               size_t max);

#endif
