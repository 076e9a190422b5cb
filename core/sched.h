/* Owns: the per-device scheduler state and the policy that decides, at a
 * given instant, which held launches may go. It is pure: every function
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FIKIT_LEVELS 10
#define FIKIT_MAX_TASKS 64
#define FIKIT_MAX_REQUESTS 512

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
 * fikitd publishes to the clients (fikit_shm_set_params). */
struct fikit_sched_params {
    enum fikit_policy policy;
    uint64_t substrate_cost_ns;  /* paid once per filled gap (context switch back) */
    uint64_t safety_margin_ns;   /* added to every fit test */
    double gap_confidence;       /* quantile of the remaining gap relied on */
    uint64_t idle_after_ns;      /* the idle threshold; 0 (idle_after_us = auto): learned
                                  * from each task's longest gap, at least idle_floor_ns */
    uint64_t idle_floor_ns;      /* a learned threshold's floor (no key: FIKIT_IDLE_FLOOR_NS) */
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
};

/* The confidence a starving stream head is fitted at: the median. */
#define FIKIT_SCHED_STARVING_CONFIDENCE 0.5

/* A learned idle threshold is never below this (20 ms): a task that pauses
 * between requests must not turn idle in a gap that is only long for it. */
#define FIKIT_IDLE_FLOOR_NS (20ull * 1000 * 1000)

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
#define FIKIT_PAUSE_FLOOR_NS (1000 * 1000ull)
/* The longest kernel a pause lets in: the time slice after which the
 * driver's time-slicing preempts a kernel anyway (about 2 ms, docs/sim.md),
 * and longer than every resnet50 training kernel (30 us to 1.2 ms). */
#define FIKIT_PAUSE_KERNEL_NS (2000 * 1000ull)

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
