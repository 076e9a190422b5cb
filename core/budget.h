/* Owns: the latency budget's controller. A budgeted task (an inference
 * service) states how much slower than alone its bursts may be at the tail
 * (latency_budget); the controller measures each of its bursts against the
 * tail bursts of its size had alone and sets what the tasks below it may do while it is
 * active: run beside it or only in its gaps or wait, how much of their work
 * may be queued ahead, and their share of the SMs. Pure, with time as an
 * argument (docs/DESIGN.md "The budget").
 *
 * The knobs form one ladder, from "wait" (step 0) to "beside, 8 ms queued,
 * the configured SM share" (the top); a lower task climbs only as far as
 * its configuration allows (beside needs share = beside). The controller
 * keeps one step per budgeted task: it cuts the step by half when
 * FIKIT_BUDGET_CUT_BREAKS bursts in FIKIT_BUDGET_WINDOW break the budget
 * (the p99 is likely over it; from the top step, one step: the whole
 * device at rest goes first), and climbs one step after FIKIT_BUDGET_GROW bursts that kept
 * well inside it; each cut out of a step doubles the bursts needed to
 * climb back into it (up to 64 times), which bounds how often it can
 * oscillate. Bursts that started before a change had settled (the old
 * step's queue drained) are not counted for either. fikit sim runs it
 * on its modelled bursts, fikitd on the bursts its clients measure
 * (interpose/burst.h, fikitd/steer.c). */
#ifndef FIKIT_CORE_BUDGET_H
#define FIKIT_CORE_BUDGET_H

#include "core/clock.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a lower task may do while a budgeted task above it is active. */
enum fikit_lower_mode {
    FIKIT_LOWER_FREE = 0, /* no budget above: as configured (beside or gaps) */
    FIKIT_LOWER_WAIT,     /* nothing while the level above is active (its pauses and idle stay) */
    FIKIT_LOWER_GAPS,     /* only in the gaps above, inflight_ns queued ahead at most;
                           * 0: only where the gap is near certain to last */
    FIKIT_LOWER_BESIDE,   /* beside it (share = beside), inflight_ns queued ahead at most */
};

struct fikit_lower_knobs {
    uint32_t mode;        /* enum fikit_lower_mode */
    uint32_t sm_pct;      /* share of the SMs, percent; 0: as configured */
    uint64_t inflight_ns; /* its queued work ahead; with FREE, unused */
    uint32_t flags;       /* FIKIT_KNOB_* */
};

/* BESIDE: a task whose launches fikit confines (mps_lower_cap = launches)
 * has the whole device while the levels above rest (between their
 * requests); without it, its share then too. FREE always has it. */
#define FIKIT_KNOB_WHOLE_AT_REST 1u

/* The ladder. Steps 1 to FIKIT_BUDGET_GAPS_TOP share gaps (step 1 only the
 * room a gap is near certain to leave, its 1 % quantile); above, beside;
 * the top step alone lets a confined task have the whole device while the
 * budgeted level rests (FIKIT_KNOB_WHOLE_AT_REST). */
#define FIKIT_BUDGET_STEPS 14
#define FIKIT_BUDGET_GAPS_TOP 6
#define FIKIT_BUDGET_TOP (FIKIT_BUDGET_STEPS - 1)

/* The knobs of step (clamped to the ladder) for a lower task whose
 * configured queue bound is max_queued_ns (0: 100 us) and whose configured
 * SM share is sm_pct (0 or 100: the whole device). */
void fikit_budget_step_knobs(int step, uint64_t max_queued_ns, uint32_t sm_pct, struct fikit_lower_knobs *out);
/* The highest step a lower task may take: beside only where it shares so. */
static inline int fikit_budget_top_step(bool beside) { return beside ? FIKIT_BUDGET_TOP : FIKIT_BUDGET_GAPS_TOP; }
/* The step a task starts at: what its configuration alone would give it
 * (gaps at max_queued_us; beside, 8 ms queued at most). */
static inline int fikit_budget_start_step(bool beside) { return beside ? FIKIT_BUDGET_TOP : 4; }

/* Bursts judged at once, and how many of them breaking the budget cut the
 * step. The budget is on the p99, so 1 % of bursts may break it; alone, a
 * service breaks budget x its own p99 in about 0.5-1 % of its bursts (its
 * reference is the p99 of a sample, and tails are long). Two breaks in 256
 * (what the law was) then cut at step 0 itself: on an H100 the CUDA pair's
 * controller called 1.25 unmeetable while the service's latency p99 was
 * 1.007x alone. Six is a 1 % break rate's count exceeded in 4.5 % of
 * windows, 0.5 %'s in 0.4 %, and 3 %'s reached in 3 windows of 4. */
#define FIKIT_BUDGET_WINDOW 256
#define FIKIT_BUDGET_CUT_BREAKS 6
/* The task's pace now: a burst during which nothing below the task had
 * work queued or running is quiet, the task as good as alone now. The
 * p99 of the last FIKIT_BUDGET_QUIET quiet bursts' ratios to the
 * reference, once FIKIT_BUDGET_QUIET_MIN were seen and then every
 * FIKIT_BUDGET_QUIET_EVERY, is how much slower the task runs now than
 * when its reference was recorded, held within [1, FIKIT_BUDGET_PACE_MAX]
 * (a task now faster than its reference is held to the reference, what
 * the operator stated the budget against); every burst is judged against
 * reference x pace. It reads low rather than high: the longer bursts of a
 * size are the likelier to see work below start, so fewer are quiet. On an H100 the CUDA C service's p99
 * alone moved from 4.8 to 14.0 ms between runs of one call, and against a
 * reference recorded once it broke 1.10x in 3 % of its bursts with almost
 * nothing beside it: the law cut to step 0-1 and the job kept 0.03-0.35. */
#define FIKIT_BUDGET_QUIET 256
#define FIKIT_BUDGET_QUIET_MIN 128
#define FIKIT_BUDGET_QUIET_EVERY 32
#define FIKIT_BUDGET_PACE_MAX 2.0
/* The task's load: the fraction of the wall time its bursts kept it busy,
 * over its last FIKIT_BUDGET_LOAD_BURSTS to twice as many bursts (once
 * FIKIT_BUDGET_LOAD_MIN were seen; 0 before). A service's requests queue
 * behind its slower bursts, so its requests' latency grows more than its
 * bursts' length: with requests arriving independently of the replies (an
 * M/M/1 queue), bursts slower by s at a busy fraction u make the requests'
 * latency (s - u) / (1 - u) times what it was, its p99 too. Held to a
 * budget B on what the requests see, each burst may then be
 * 1 + (B - 1)(1 - u) times its reference: 1.05 for 1.10 at half load.
 * (bench/budget-of-requests: with fixed-size requests too, M/D/1, a
 * million requests at loads 0.25-0.75, that burst budget gives the
 * requests' p99 1.098-1.106x alone for 1.10.) A budget of bursts (fikit_budget_init's
 * of_requests false: a service whose clients wait for each reply, whose
 * requests never queue) judges each burst by B itself. */
#define FIKIT_BUDGET_LOAD_BURSTS 128
#define FIKIT_BUDGET_LOAD_MIN 16
/* The body: a queue of requests grows with the bursts' mean as much as with
 * their tail, and a slowdown of the middle of a wide distribution (bert's
 * requests of four sizes, 4-15 ms alone) breaks no burst's p99. So the
 * bursts judged since the last change are also judged together: the mean
 * of their ratios to what the same sizes took alone on average (x the
 * pace), over the last FIKIT_BUDGET_BODY_BURSTS to twice as many. Once
 * FIKIT_BUDGET_BODY_BURSTS were judged, a body over the burst budget by
 * more than FIKIT_BUDGET_BODY_SE of its standard errors cuts as six breaks
 * do (a mean of 128 bursts is itself uncertain by a percent or two, the
 * whole margin at a high load); a step climbs only with the body within
 * the hysteresis. */
#define FIKIT_BUDGET_BODY_BURSTS 128
#define FIKIT_BUDGET_BODY_SE 2.0
/* Queued or from rest: with the budget on the requests, what tightens a
 * burst's budget with the load is that the requests queued behind it wait
 * for its slowdown, each adding its own. A burst that starts from rest (no
 * burst of the task ended within FIKIT_BUDGET_QUEUED_NS before it: its
 * request arrived to an idle task) is the first of its busy period: its
 * slowdown reaches the requests behind it once, as a delay of its length,
 * not as a rate, and its own request waited for nothing. So its tail is
 * judged by what that delay may be (fikit_budget_of_heads); queued bursts'
 * by the burst budget. In fikit sim the CUDA pair on MPS (1.66 ms
 * requests) found a job kernel in flight at the start of a request from
 * rest, 3-7 % more at the bursts' median, while the requests' p99 did not
 * move: judged as queued, the tail cut the job from 0.82 (the best fixed
 * step within 1.10) to 0.30-0.48. A rare head's excess delays its busy
 * period once; heads slowed as a rule make every busy period longer, which
 * the queue pays at its rate: the body (the mean) holds every burst, and
 * is judged by the burst budget (on the H100, fill on time-slicing slowed
 * the median request 1.13x with no head over 1.25, and the p99 was 1.17x:
 * bench/results/2026-12-07-h100-requests.md). Bursts are at
 * least a join apart (FIKIT_BURST_JOIN_NS, 200 us; core/bursts.h, which
 * includes this file); a queued request's begins after the program's own
 * time between requests. */
#define FIKIT_BUDGET_QUEUED_NS (2 * 200 * FIKIT_NS_PER_US)
/* A queued burst's tail, too, is judged as a head's while the task's load
 * is at most this and its body (below) is surely inside the climbing line
 * (its mean plus FIKIT_BUDGET_BODY_SE standard errors): the queue's rate is
 * then not what a slow burst breaks, and in busy periods of 1 / (1 - load)
 * requests on average (1.7 at 0.4) its excess reaches the few behind it
 * once, as a head's does. Busier, the periods are long and queued bursts'
 * excesses add up in the requests at the tail. In fikit sim (100 000
 * requests, seeds 1-3) the CUDA pair on MPS at load 0.25, whose queued
 * bursts find a job kernel in flight (4 % over the burst budget of 1.074
 * where the requests' p99 is 1.04x alone), kept 0.36-0.39 of its job
 * judged as queued and keeps 0.82-0.85 now (the best fixed step 0.87); at
 * load 0.75 judging them so broke the budget (p99 1.06-1.09x, intervals to
 * 1.12), and with 0.5 for this bound one seed of 20 000 requests at load
 * 0.5 reached 1.13. */
#define FIKIT_BUDGET_QUEUED_AS_HEAD_LOAD 0.4
/* Bursts within the hysteresis needed to climb a step (before backoff). */
#define FIKIT_BUDGET_GROW 128
/* A burst is "near" the budget above ref * (1 + FIKIT_BUDGET_HYSTERESIS *
 * (budget - 1)); more than FIKIT_BUDGET_NEAR_MAX of them among the last
 * FIKIT_BUDGET_WINDOW keep the step where it is. */
#define FIKIT_BUDGET_HYSTERESIS 0.5
#define FIKIT_BUDGET_NEAR_MAX 2
/* Backoff exponent cap: a step cut out of k times needs GROW << min(k, 6). */
#define FIKIT_BUDGET_BACKOFF_MAX 6
/* The least settling time after a change: the old step's queue bound, but
 * at least this (WAIT and the sure-room step bound no queue). */
#define FIKIT_BUDGET_SETTLE_MIN_NS FIKIT_NS_PER_MS

/* What a task's bursts took alone, by size: the p99 of the bursts of each
 * launch count (a request of one kind launches the same kernels), the
 * reference a burst of that size is judged against. A burst of a size
 * never seen alone is judged only as joined parts of sizes seen alone
 * (fikit_budget_ref_find). */
#define FIKIT_BUDGET_REF_SIZES 32
struct fikit_budget_ref {
    uint32_t n;
    uint32_t launches[FIKIT_BUDGET_REF_SIZES]; /* ascending */
    uint64_t p99_ns[FIKIT_BUDGET_REF_SIZES];
    uint64_t mean_ns[FIKIT_BUDGET_REF_SIZES];  /* their mean (the body); 0: not known */
    uint64_t all_p99_ns; /* the p99 of its bursts alone, every size together (the tail of
                          * its requests; fikit_budget_of_heads); 0: not known */
};

/* The reference from n bursts alone (launch count, length): the sizes seen
 * at least FIKIT_BUDGET_REF_MIN times, the most frequent if more than fit
 * (nothing if memory runs out). */
#define FIKIT_BUDGET_REF_MIN 10
void fikit_budget_ref_build(struct fikit_budget_ref *ref, const uint32_t *launches, const uint64_t *len_ns, size_t n);
/* The same from a profile's burst records (fikit-launch --measure's),
 * each size's p99 from its statistic. */
struct fikit_measure_store;
void fikit_budget_ref_from_store(struct fikit_budget_ref *ref, const struct fikit_measure_store *st);
/* The p99 alone of bursts of launches, and their mean into *mean_ns (may
 * be NULL); 0: none seen. A size never seen alone may be requests whose
 * bursts joined (a queue with less host work between them than
 * FIKIT_BURST_JOIN_NS: on an H100, 11-18 % of resnet50's bursts beside a
 * job, the queue's own, went unjudged): k of one size seen alone (2 to
 * FIKIT_BUDGET_JOINED_MAX) or one each of two are judged against their
 * sum, the means added and the p99s' excesses over them in quadrature. */
#define FIKIT_BUDGET_JOINED_MAX 8
uint64_t fikit_budget_ref_find(const struct fikit_budget_ref *ref, uint32_t launches, uint64_t *mean_ns);

/* The last bucket to twice as many values of two sums, in two buckets:
 * [0] the whole one before, [1] the one filling (n values so far), each
 * with when its first value came. The load and the body keep one each. */
struct fikit_budget_window {
    uint64_t start_ns[2];
    double sum[2][2];
    uint32_t n;
    bool full; /* [0] holds a whole bucket */
};

/* One budgeted task's controller. */
struct fikit_budget {
    uint32_t budget_ppm;     /* 1.10 = 1100000 */
    bool of_requests;        /* the budget is on the requests' latency (the load tightens it) */
    uint32_t burst_budget_ppm; /* what each queued burst is judged by now */
    uint32_t head_budget_ppm;  /* what each burst from rest is judged by now; at the
                                * tail the excess of either is counted against the
                                * larger of its size's p99 and tail_ns */
    uint64_t tail_ns;          /* its bursts' p99 alone, every size (the reference's
                                * all_p99_ns); 0: each size's own */
    uint32_t load_ppm;       /* its busy fraction now */
    /* The load: every burst's length (sum 0), FIKIT_BUDGET_LOAD_BURSTS a
     * bucket. */
    struct fikit_budget_window load;
    /* The body of the bursts judged since the last change: their
     * ratios to alone's mean (sum 0) and its squares (sum 1),
     * FIKIT_BUDGET_BODY_BURSTS a bucket. */
    struct fikit_budget_window body;
    uint32_t body_ppm;       /* their mean ratio, x the pace; 0: not judged yet */
    uint32_t body_se_ppm;    /* its standard error */
    int top;                 /* the highest step its lower tasks can take */
    int step;
    uint64_t settled_ns;     /* bursts that started before this saw an older step */
    /* The bursts judged since the last change, the last WINDOW of them as
     * bits: broke the budget, came near it. */
    uint64_t broke[FIKIT_BUDGET_WINDOW / 64], came_near[FIKIT_BUDGET_WINDOW / 64];
    uint64_t judged;         /* bursts judged since the last change */
    uint32_t breaks, near;   /* set bits in broke, came_near */
    uint32_t cuts_from[FIKIT_BUDGET_STEPS];
    bool unmeetable;         /* step 0 broke it: the device cannot give this budget */
    uint32_t pace_ppm;       /* 1000000 until quiet bursts say otherwise */
    uint64_t quiet;          /* quiet bursts seen; the last FIKIT_BUDGET_QUIET of their
                              * ratios to the reference (ppm) in quiet_ppm */
    uint32_t quiet_ppm[FIKIT_BUDGET_QUIET];
    /* what it saw (fikit sim prints cuts and climbs) */
    uint64_t bursts, broken, cuts, climbs;
    uint32_t last_slowdown_ppm; /* the last burst judged against its reference */
    uint64_t last_end_ns;    /* the end of its last burst (queued or from rest) */
};

/* A controller for a task with budget (1.0 < budget <= 10) on its
 * requests' latency (of_requests) or on each of its bursts, whose lower
 * tasks reach top at most. */
void fikit_budget_init(struct fikit_budget *b, double budget, bool of_requests, int top);
/* What each burst may take against its reference at a busy fraction
 * load (0..1) for a budget on the requests' latency. At the tail its
 * excess is counted against the p99 of every size, as a head's is (below):
 * a queued short request slowed by what a long one may take delays the
 * requests behind it by no more than that one would. */
double fikit_budget_of_bursts(double budget, double load);
/* What a burst from rest may take (FIKIT_BUDGET_QUEUED_NS): its slowdown
 * delays the requests of its busy period once, so its excess over its
 * reference is held to (budget - 1) of the requests' p99 alone, which is
 * at least the bursts' p99 / (1 - load) (M/M/1 equals it, a narrower
 * distribution of sizes waits longer): 1 + (budget - 1) / (1 - load),
 * the load counted up to FIKIT_BUDGET_HEAD_LOAD_MAX. The bursts' p99 is
 * that of every size together (tail_ns), not the burst's own size's: a
 * short request's excess counts against the requests' p99 as a long one's
 * does, so a burst whose reference is ref may take 1 + (this - 1) x
 * tail_ns / ref where its tail_ns is the larger (a queued one likewise
 * 1 + (fikit_budget_of_bursts - 1) x tail_ns / ref). */
#define FIKIT_BUDGET_HEAD_LOAD_MAX 0.75
double fikit_budget_of_heads(double budget, double load);

/* What the controller does with one burst. */
enum fikit_budget_action {
    FIKIT_BUDGET_KEEP = 0,
    FIKIT_BUDGET_CUT,     /* the step went down */
    FIKIT_BUDGET_CLIMB,   /* the step went up */
    FIKIT_BUDGET_IGNORED, /* before the last change settled, or no reference */
};

/* A burst of the budgeted task that started at start_ns and whose last
 * kernel completed at end_ns, against ref_ns, what such a burst took alone
 * at the p99 (0: not judged), and ref_mean_ns, on average (0: its body is
 * not judged), given to the controller in order of their
 * ends; max_queued_ns is the lower tasks' configured bound (for the
 * settling time of the step it leaves); quiet: nothing below the task had
 * work queued or running while it lasted (it sets the pace). */
enum fikit_budget_action fikit_budget_note_burst(struct fikit_budget *b, uint64_t start_ns, uint64_t end_ns,
                                                 uint64_t ref_ns, uint64_t ref_mean_ns, uint64_t max_queued_ns,
                                                 bool quiet);

/* A device's controllers, one per budgeted task, by slot: what fikitd and
 * fikit sim keep, so both decide with the same code. */
#define FIKIT_BUDGET_SLOTS 64
struct fikit_budget_set {
    uint64_t used;    /* bit per slot: a task is there */
    uint64_t steered; /* bit per slot: it has a budget and a reference */
    int level[FIKIT_BUDGET_SLOTS];
    bool beside[FIKIT_BUDGET_SLOTS];
    struct fikit_budget b[FIKIT_BUDGET_SLOTS];
    struct fikit_budget_ref ref[FIKIT_BUDGET_SLOTS];
};

void fikit_budget_set_init(struct fikit_budget_set *set);
/* The task in slot (below FIKIT_BUDGET_SLOTS) at level: budget 0 or no
 * reference (NULL or empty) steers nothing for it; beside says whether it
 * may run beside the levels above (share = beside), which sets how far the
 * controllers of budgeted tasks above it may climb. */
void fikit_budget_set_add(struct fikit_budget_set *set, int slot, int level, bool beside, double budget,
                          bool of_requests, const struct fikit_budget_ref *ref);
void fikit_budget_set_drop(struct fikit_budget_set *set, int slot);
/* The task in slot runs beside the levels above or no longer does (its
 * launches could not be confined): how far the budgets above it climb. */
void fikit_budget_set_beside(struct fikit_budget_set *set, int slot, bool beside);
/* A newer reference for the task in slot (its profile grew): a task
 * already steered keeps its controller's state (step, window, backoff) and
 * judges by ref from now on; one not yet steered starts as set_add does;
 * an empty ref stops steering for it. */
void fikit_budget_set_ref(struct fikit_budget_set *set, int slot, double budget, bool of_requests,
                          const struct fikit_budget_ref *ref);
/* A burst of launches launches of the task in slot (fikit_budget_note_burst
 * against its reference for that size); IGNORED for a task not steered for. */
enum fikit_budget_action fikit_budget_set_burst(struct fikit_budget_set *set, int slot, uint64_t start_ns,
                                                uint64_t end_ns, uint32_t launches, uint64_t max_queued_ns,
                                                bool quiet);
/* What the task in slot may do: the lowest step of the steered tasks at
 * levels above it, as knobs for its max_queued_ns and SM share; FREE where
 * none is above. */
void fikit_budget_set_knobs(const struct fikit_budget_set *set, int slot, uint64_t max_queued_ns, uint32_t sm_pct,
                            struct fikit_lower_knobs *out);

#endif
