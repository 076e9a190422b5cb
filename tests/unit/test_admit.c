/* The client's admission (core/admit.h): each rule of docs/DESIGN.md's
 * policy that a lower launch decides by itself, driven with explicit time
 * and snapshots: no higher level, activity and idle thresholds, self-fill
 * and its fit with substrate cost, what fikitd holds or decides, pacing
 * with max_queued_us, beside and its slowdown guard, strict. */
#include "core/admit.h"
#include "core/bursts.h"

#include "admit_fixture.h"

#include <criterion/criterion.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull

static struct fikit_admit_task T[4];
static struct fikit_view V;
static struct fikit_admit A;

/* A level-9 task beside one level-0 service whose kernel ran until busy and
 * then expects a gap of exactly gap. */
static void setup(uint64_t last, uint64_t busy, uint64_t gap)
{
    admit_fixture(&V, T, sizeof T / sizeof T[0], last, busy, gap);
}

static enum fikit_admit_kind admit(uint64_t now, uint64_t dur)
{
    fikit_admit(&V, now, dur, &A);
    return A.kind;
}

Test(admit, the_top_level_and_a_lone_task_go_at_once)
{
    setup(0, 50 * US, 300 * US);
    V.level = 0;
    cr_assert_eq(admit(10 * US, 100 * US), FIKIT_ADMIT_GO, "nothing is above level 0");
    V.level = 9;
    V.level_mask = 1u << 9;
    V.ntasks = 0;
    cr_assert_eq(admit(10 * US, 100 * US), FIKIT_ADMIT_GO, "no higher level has a task");
}

Test(admit, no_daemon_or_passthrough_goes)
{
    setup(0, 50 * US, 300 * US);
    V.running = false;
    cr_assert_eq(admit(10 * US, 100 * US), FIKIT_ADMIT_GO);
    V.running = true;
    V.policy = FIKIT_POLICY_PASSTHROUGH;
    cr_assert_eq(admit(10 * US, 100 * US), FIKIT_ADMIT_GO);
}

Test(admit, a_busy_higher_level_holds)
{
    setup(0, 50 * US, 300 * US);
    cr_assert_eq(admit(10 * US, 100 * US), FIKIT_ADMIT_HOLD, "no room while its kernel runs");
}

Test(admit, fills_a_gap_it_fits_with_the_overhead)
{
    setup(0, 50 * US, 300 * US);
    /* At 50 us the gap of 300 us begins: room 300 us (a fixed gap), minus
     * 20 us of overhead leaves 280 us. */
    cr_assert_eq(admit(50 * US, 280 * US), FIKIT_ADMIT_FILL);
    cr_assert_eq(A.room_ns, 300 * US);
    cr_assert_geq(A.fill_until_ns, 50 * US + 280 * US);
    cr_assert_eq(A.fill_until_ns & FIKIT_FILL_LOCK, 0, "the lock bit stays clear");
    cr_assert_eq(admit(50 * US, 281 * US), FIKIT_ADMIT_HOLD, "1 us too long: held for fikitd");
}

Test(admit, an_unmeasured_kernel_never_fills)
{
    setup(0, 50 * US, 300 * US);
    cr_assert_eq(admit(50 * US, 0), FIKIT_ADMIT_HOLD);
}

Test(admit, fills_queue_behind_fills_and_grants)
{
    setup(0, 50 * US, 300 * US);
    V.fill_until_ns = 150 * US; /* another client's fill */
    cr_assert_eq(admit(50 * US, 200 * US), FIKIT_ADMIT_HOLD, "100 us taken: 200 + 20 do not fit in 200");
    cr_assert_eq(admit(50 * US, 150 * US), FIKIT_ADMIT_FILL, "behind 100 us of fills, 180 us are left");
    cr_assert_eq(A.fill_until_ns, (150 * US + 150 * US + 1) & ~FIKIT_FILL_LOCK);
    V.fill_until_ns = 0;
    V.granted_until_ns = 120 * US;
    cr_assert_eq(admit(50 * US, 150 * US), FIKIT_ADMIT_FILL);
    cr_assert_eq(A.fill_until_ns, (120 * US + 150 * US + 1) & ~FIKIT_FILL_LOCK, "behind fikitd's grant");
}

Test(admit, holds_while_fikitd_holds_or_decides)
{
    setup(0, 50 * US, 300 * US);
    V.queued = 1;
    cr_assert_eq(admit(50 * US, 100 * US), FIKIT_ADMIT_HOLD, "what fikitd holds goes first");
    V.queued = 0;
    V.fill_until_ns = 40 * US | FIKIT_FILL_LOCK;
    cr_assert_eq(admit(50 * US, 100 * US), FIKIT_ADMIT_HOLD, "fikitd is deciding about the gap");
}

Test(admit, strict_never_fills)
{
    setup(0, 50 * US, 300 * US);
    V.policy = FIKIT_POLICY_STRICT;
    cr_assert_eq(admit(50 * US, 100 * US), FIKIT_ADMIT_HOLD);
}

Test(admit, an_idle_higher_level_lets_it_go_paced)
{
    /* The service's longest gap is 1 ms: with auto its threshold is the
     * 20 ms floor. A kernel of 3 ms, longer than a pause lets in. */
    setup(0, 50 * US, 300 * US);
    T[0].idle_after_ns = 1 * MS;
    cr_assert_eq(admit(50 * US + 20 * MS - 1, 3 * MS), FIKIT_ADMIT_HOLD,
                 "still active, and past the longest gap it knows: no room relied on");
    cr_assert_eq(admit(50 * US + 20 * MS, 3 * MS), FIKIT_ADMIT_GO, "idle: runs freely");
    /* With 500 us of its own work queued, it sleeps until 100 us are left. */
    V.own_busy_until_ns = 30 * MS + 500 * US;
    cr_assert_eq(admit(30 * MS, 100 * US), FIKIT_ADMIT_PACE);
    cr_assert_eq(A.until_ns, 30 * MS + 400 * US);
    V.max_queued_ns = 0;
    cr_assert_eq(admit(30 * MS, 100 * US), FIKIT_ADMIT_GO, "max_queued_us = 0: no bound");
}

Test(admit, a_learned_long_gap_keeps_the_level_active_twice_as_long)
{
    setup(0, 50 * US, 300 * US);
    T[0].idle_after_ns = 15 * MS;
    cr_assert_neq(admit(50 * US + 29 * MS, 3 * MS), FIKIT_ADMIT_GO, "twice 15 ms: active at 29 ms");
    cr_assert_eq(admit(50 * US + 30 * MS, 3 * MS), FIKIT_ADMIT_GO);
    V.idle_learned = false;
    V.idle_after_ns = 5 * MS;
    cr_assert_eq(admit(50 * US + 5 * MS, 3 * MS), FIKIT_ADMIT_GO, "a configured threshold applies as it is");
}

/* A pause (DESIGN.md "The policy"): the service's current gap has outlasted
 * its p99 and 1 ms; lower kernels of at most 2 ms go as if it were idle. */
Test(admit, a_pause_lets_short_kernels_go)
{
    setup(0, 50 * US, 300 * US); /* a fixed gap: its p99 is 300 us, below the 1 ms floor */
    T[0].idle_after_ns = 5 * MS;  /* idle only after 20 ms */
    uint64_t pause = 50 * US + FIKIT_PAUSE_FLOOR_NS;
    cr_assert_eq(admit(pause - 1, 1 * MS), FIKIT_ADMIT_HOLD, "not yet a pause, and no room left");
    cr_assert_eq(admit(pause, 1 * MS), FIKIT_ADMIT_GO, "a pause: a 1 ms kernel goes");
    cr_assert_eq(admit(pause, FIKIT_PAUSE_KERNEL_NS), FIKIT_ADMIT_GO, "2 ms is the bound");
    cr_assert_eq(admit(pause, FIKIT_PAUSE_KERNEL_NS + 1), FIKIT_ADMIT_HOLD, "longer waits for idle");
    cr_assert_eq(admit(pause, 0), FIKIT_ADMIT_HOLD, "an unmeasured kernel waits for idle");
    /* Its queue stays within max_queued_us, as when the level above is idle. */
    V.own_busy_until_ns = pause + 500 * US;
    cr_assert_eq(admit(pause, 1 * MS), FIKIT_ADMIT_PACE);
    cr_assert_eq(A.until_ns, pause + 400 * US);
}

Test(admit, a_pause_starts_after_the_gaps_p99)
{
    setup(0, 50 * US, 0);
    /* Gaps of its kind: up to 4 ms at p99. */
    for (int i = 0; i < FIKIT_GAP_POINTS; i++)
        T[0].gap.q_ns[i] = (uint32_t)((i + 1) * 500 * US);
    T[0].idle_after_ns = 50 * MS;
    cr_assert_eq(admit(50 * US + 4 * MS - 1, 1 * MS), FIKIT_ADMIT_HOLD, "within its p99: no pause");
    cr_assert_eq(admit(50 * US + 4 * MS, 1 * MS), FIKIT_ADMIT_GO, "past it: a pause");
}

Test(admit, no_pause_when_pauses_are_off)
{
    setup(0, 50 * US, 300 * US);
    T[0].idle_after_ns = 5 * MS;
    V.pauses = false;
    cr_assert_eq(admit(50 * US + 5 * MS, 1 * MS), FIKIT_ADMIT_HOLD, "pauses = off: only idle counts");
}

Test(admit, no_pause_without_a_known_gap_or_with_a_configured_threshold)
{
    setup(0, 50 * US, 0); /* its gap never measured */
    T[0].idle_after_ns = 5 * MS;
    cr_assert_eq(admit(50 * US + 5 * MS, 1 * MS), FIKIT_ADMIT_HOLD, "unknown gap: only idle counts");
    setup(0, 50 * US, 300 * US);
    V.idle_learned = false;
    V.idle_after_ns = 10 * MS;
    cr_assert_eq(admit(50 * US + 5 * MS, 1 * MS), FIKIT_ADMIT_HOLD, "idle_after_us set: no pauses");
}

Test(admit, a_publication_being_written_counts_as_busy)
{
    setup(0, 0, 0);
    T[0].unreadable = true;
    T[0].launches = 0;
    cr_assert_eq(admit(50 * US, 10 * US), FIKIT_ADMIT_HOLD);
}

Test(admit, the_highest_active_level_decides_the_rooms)
{
    setup(0, 50 * US, 300 * US);
    V.level_mask |= 1u << 3;
    V.ntasks = 2;
    T[1].level = 3;
    T[1].launches = 5;
    T[1].last_launch_ns = 0;
    T[1].busy_until_ns = 50 * US;
    fikit_gap_pred_fixed(&T[1].gap, 30 * US);
    /* Level 3 sits in a 30 us gap, level 0 in a 300 us one: level 0's room. */
    cr_assert_eq(admit(50 * US, 200 * US), FIKIT_ADMIT_FILL);
    V.level = 2;
    V.level_mask |= 1u << 2;
    cr_assert_eq(admit(50 * US, 200 * US), FIKIT_ADMIT_FILL, "level 3 is below a level-2 task");
}

Test(admit, beside_goes_unless_the_level_above_runs_too_slow)
{
    setup(0, 50 * US, 300 * US);
    V.beside = true;
    cr_assert_eq(admit(10 * US, 1 * MS), FIKIT_ADMIT_GO, "the thread cap keeps it apart");
    V.beside_max_slowdown_ppm = 1100000;
    T[0].slowdown_ppm = 1200000;
    T[0].slowdown_ns = 5 * US;
    cr_assert_eq(admit(10 * US, 1 * MS), FIKIT_ADMIT_RECHECK, "too slow, no room");
    cr_assert_eq(A.until_ns, 10 * US + FIKIT_BESIDE_RECHECK_NS);
    cr_assert_eq(admit(50 * US, 100 * US), FIKIT_ADMIT_FILL, "too slow: shares the gaps");
    cr_assert_eq(admit(5 * US + FIKIT_SLOWDOWN_FRESH_NS, 1 * MS), FIKIT_ADMIT_GO,
                 "a slowdown a second old is not acted on");
    V.own_busy_until_ns = 100 * MS;
    T[0].idle_after_ns = 0;
    cr_assert_eq(admit(50 * MS, 1 * MS), FIKIT_ADMIT_GO, "beside is never paced");
}

/* Where fikit confines a beside task's launches itself (green contexts),
 * the answer says into what share: the budget's step, else the configured
 * share (a fill of the service's gap too), and the whole device while the
 * level above idles. */
Test(admit, a_confined_beside_launch_gets_its_share_only_while_the_level_above_is_active)
{
    setup(0, 50 * US, 300 * US);
    V.beside = true;
    cr_assert_eq(admit(10 * US, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 0, "capped by MPS's threads: nothing for fikit to confine");
    V.confine_pct = 70;
    cr_assert_eq(admit(10 * US, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 70, "the service is active: the configured share");
    fikit_budget_step_knobs(FIKIT_BUDGET_GAPS_TOP + 1, 100 * US, 70, &V.knobs);
    V.own_busy_until_ns = 0;
    cr_assert_eq(admit(10 * US, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 35, "the budget's lowest beside step: half the configured share");
    fikit_budget_step_knobs(FIKIT_BUDGET_TOP, 100 * US, 0, &V.knobs);
    cr_assert_eq(admit(10 * US, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 0, "a share of 100 % is the whole device");
    memset(&V.knobs, 0, sizeof V.knobs);
    V.beside_max_slowdown_ppm = 1100000;
    T[0].slowdown_ppm = 1200000;
    T[0].slowdown_ns = 5 * US;
    cr_assert_eq(admit(50 * US, 100 * US), FIKIT_ADMIT_FILL, "too slow: shares the gaps");
    cr_assert_eq(A.sm_pct, 70, "a fill of the service's gap is confined too");
    fikit_budget_step_knobs(FIKIT_BUDGET_GAPS_TOP, 100 * US, 70, &V.knobs);
    cr_assert_eq(admit(50 * US, 100 * US), FIKIT_ADMIT_FILL, "the budget keeps it to gaps");
    cr_assert_eq(A.sm_pct, 70, "confined in them");
    memset(&V.knobs, 0, sizeof V.knobs);
    T[0].slowdown_ppm = 0;
    T[0].idle_after_ns = 0;
    cr_assert_eq(admit(50 * MS, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 0, "the level above idle: the whole device");
}

/* A confined beside task has the whole device while the levels above are
 * between requests: their program waited for its work, found it done, and
 * has launched nothing since for longer than a burst's join. */
Test(admit, a_confined_launch_has_the_whole_device_while_the_level_above_is_between_bursts)
{
    setup(0, 50 * US, 300 * US);
    V.beside = true;
    V.confine_pct = 50;
    cr_assert_eq(admit(60 * US, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 50, "in a burst");
    T[0].waited_ns = 55 * US;
    cr_assert_eq(admit(60 * US, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 50, "it waited 5 us ago: a launch may still continue the burst");
    cr_assert_eq(admit(55 * US + FIKIT_BURST_JOIN_NS, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 0, "between bursts: the whole device");
    fikit_budget_step_knobs(FIKIT_BUDGET_TOP, 100 * US, 50, &V.knobs);
    cr_assert_eq(admit(55 * US + FIKIT_BURST_JOIN_NS, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 0, "the budget's top step: the whole device at rest");
    fikit_budget_step_knobs(FIKIT_BUDGET_TOP - 1, 100 * US, 50, &V.knobs);
    cr_assert_eq(admit(55 * US + FIKIT_BURST_JOIN_NS, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 50, "one step below: its share at rest too, as under a thread cap");
    T[0].idle_after_ns = 0;
    cr_assert_eq(admit(50 * MS, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 50, "and while the level above idles");
    memset(&V.knobs, 0, sizeof V.knobs);
    T[0].last_launch_ns = 56 * US;
    cr_assert_eq(admit(55 * US + FIKIT_BURST_JOIN_NS, 1 * MS), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 50, "it launched again after its wait: a new burst");
}

/* A beside task's queue at rest: unbounded while nothing holds it back (the
 * thread cap keeps it apart), bounded once a budget above holds it below its
 * top step: what it queues while the service rests is what the service's
 * next request finds beside it. */
Test(admit, a_beside_task_held_by_a_budget_keeps_its_queue_short_at_rest_too)
{
    setup(0, 50 * US, 300 * US);
    V.beside = true;
    V.max_queued_ns = 100 * US;
    T[0].idle_after_ns = 0;
    uint64_t now = 50 * MS;
    V.own_busy_until_ns = now + 30 * MS;
    cr_assert_eq(admit(now, 1 * MS), FIKIT_ADMIT_GO, "no budget: beside, never paced at rest");
    fikit_budget_step_knobs(FIKIT_BUDGET_TOP, 100 * US, 70, &V.knobs);
    cr_assert_eq(admit(now, 1 * MS), FIKIT_ADMIT_GO, "the top step: the whole device at rest, unpaced");
    fikit_budget_step_knobs(FIKIT_BUDGET_TOP - 1, 100 * US, 70, &V.knobs);
    cr_assert_eq(admit(now, 1 * MS), FIKIT_ADMIT_PACE, "below the top: the step's queue bound");
    cr_assert_eq(A.until_ns, V.own_busy_until_ns - V.knobs.inflight_ns);
    fikit_budget_step_knobs(0, 100 * US, 70, &V.knobs);
    cr_assert_eq(V.knobs.mode, FIKIT_LOWER_WAIT);
    cr_assert_eq(admit(now, 1 * MS), FIKIT_ADMIT_PACE, "waiting while the service is active");
    cr_assert_eq(A.until_ns, now + 30 * MS - 100 * US, "and within max_queued_us at rest");
    fikit_budget_step_knobs(3, 100 * US, 70, &V.knobs);
    cr_assert_eq(V.knobs.mode, FIKIT_LOWER_GAPS);
    cr_assert_eq(admit(now, 1 * MS), FIKIT_ADMIT_PACE, "in gaps: as a gaps task at rest");
    cr_assert_eq(A.until_ns, now + 30 * MS - 100 * US);
    V.own_busy_until_ns = now + 50 * US;
    cr_assert_eq(admit(now, 1 * MS), FIKIT_ADMIT_GO, "within the bound: go");
}

Test(admit, beyond_max_queued_only_the_sure_room)
{
    /* A gap of spread length: p1 (sure) far below p30 (gap_confidence). */
    setup(0, 50 * US, 0);
    struct fikit_gap_pred g = {.q_ns = {10 * US, 20 * US, 40 * US, 100 * US, 400 * US, 800 * US, 1600 * US, 3200 * US}};
    T[0].gap = g;
    cr_assert_eq(admit(50 * US, 50 * US), FIKIT_ADMIT_FILL, "nothing queued: the p30 room");
    V.fill_until_ns = 50 * US + 150 * US; /* 150 us queued: past the 100 us bound */
    cr_assert_eq(admit(50 * US, 50 * US), FIKIT_ADMIT_HOLD, "past the bound only the sure room, used up");
}

Test(admit, place_is_the_fit_test_of_grants)
{
    struct fikit_fill_rooms r;
    fikit_fill_rooms_init(&r, 0);
    struct fikit_gap_pred g;
    fikit_gap_pred_fixed(&g, 100 * US);
    fikit_fill_rooms_add(&r, &g, 0, 0, 0.3);
    fikit_fill_rooms_done(&r);
    uint64_t until = 0;
    cr_assert_eq(fikit_fill_place(0, &r, 10 * US, 90 * US, 0, 0, &until), 100 * US);
    cr_assert_eq(until, 90 * US);
    cr_assert_eq(fikit_fill_place(0, &r, 10 * US, 91 * US, 0, 0, &until), 0);
    cr_assert_eq(fikit_fill_place(0, &r, 10 * US, 0, 0, 0, &until), 0, "an unmeasured kernel never fits");
    cr_assert_eq(fikit_fill_place(0, &r, 0, 40 * US, 60 * US | FIKIT_FILL_LOCK, 0, &until), 40 * US,
                 "the lock bit is not time");
}

/* The latency budget's knobs (core/budget.h), as fikitd's controller sets
 * them for the launching task: they bind while a level above is active. */
Test(admit, the_budget_bounds_a_beside_tasks_queue)
{
    setup(0, 50 * US, 300 * US);
    V.beside = true;
    fikit_budget_step_knobs(FIKIT_BUDGET_GAPS_TOP + 1, 100 * US, 70, &V.knobs); /* beside, 250 us */
    V.own_busy_until_ns = 10 * US + 200 * US;
    cr_assert_eq(admit(10 * US, 1 * MS), FIKIT_ADMIT_GO, "200 us queued: within 250 us");
    V.own_busy_until_ns = 10 * US + 900 * US;
    cr_assert_eq(admit(10 * US, 1 * MS), FIKIT_ADMIT_PACE, "900 us queued: past the budget's bound");
    cr_assert_eq(A.until_ns, 10 * US + 900 * US - 250 * US, "until the queue is down to the bound");
    /* The level above idle: beside is never paced, the budget binds only
     * while the budgeted level is active. */
    T[0].idle_after_ns = 0;
    cr_assert_eq(admit(50 * MS, 1 * MS), FIKIT_ADMIT_GO);
}

Test(admit, the_budget_keeps_a_beside_task_to_gaps)
{
    setup(0, 50 * US, 300 * US);
    V.beside = true;
    fikit_budget_step_knobs(FIKIT_BUDGET_GAPS_TOP, 100 * US, 70, &V.knobs); /* gaps, 400 us */
    cr_assert_eq(V.knobs.mode, FIKIT_LOWER_GAPS);
    cr_assert_eq(admit(10 * US, 100 * US), FIKIT_ADMIT_RECHECK, "the service's kernel runs: no room");
    cr_assert_eq(A.until_ns, 10 * US + FIKIT_BESIDE_RECHECK_NS, "looks again, not held at fikitd");
    cr_assert_eq(admit(50 * US, 100 * US), FIKIT_ADMIT_FILL, "its gap: filled");
}

Test(admit, the_budgets_queue_bound_replaces_max_queued_for_fills)
{
    setup(0, 50 * US, 0);
    struct fikit_gap_pred g = {.q_ns = {10 * US, 20 * US, 40 * US, 100 * US, 400 * US, 800 * US, 1600 * US, 3200 * US}};
    T[0].gap = g;
    V.fill_until_ns = 50 * US + 60 * US; /* 60 us queued */
    cr_assert_eq(admit(50 * US, 20 * US), FIKIT_ADMIT_FILL, "within max_queued_us (100 us)");
    fikit_budget_step_knobs(3, 100 * US, 0, &V.knobs); /* gaps, 50 us */
    cr_assert_eq(V.knobs.inflight_ns, 50 * US);
    cr_assert_eq(admit(50 * US, 20 * US), FIKIT_ADMIT_HOLD, "past the budget's 50 us: only the sure room");
    fikit_budget_step_knobs(5, 100 * US, 0, &V.knobs); /* gaps, 200 us */
    V.fill_until_ns = 50 * US + 105 * US; /* 105 us queued */
    cr_assert_eq(admit(50 * US, 5 * US), FIKIT_ADMIT_FILL, "within the budget's 200 us: the p30 room");
    V.knobs.mode = FIKIT_LOWER_FREE;
    cr_assert_eq(admit(50 * US, 5 * US), FIKIT_ADMIT_HOLD, "as configured: past 100 us");
    fikit_budget_step_knobs(1, 100 * US, 0, &V.knobs); /* gaps, the sure room only */
    V.fill_until_ns = 0;
    cr_assert_eq(admit(50 * US, 20 * US), FIKIT_ADMIT_HOLD, "nothing queued, but 20 us + 20 us is past the sure room");
    V.knobs.mode = FIKIT_LOWER_FREE;
    cr_assert_eq(admit(50 * US, 20 * US), FIKIT_ADMIT_FILL, "as configured, the p30 room takes it");
    fikit_budget_step_knobs(1, 100 * US, 0, &V.knobs);
    V.fill_overhead_ns = 0;
    cr_assert_eq(admit(50 * US, 10 * US), FIKIT_ADMIT_FILL, "10 us fits the sure room");
}

Test(admit, a_budget_that_leaves_nothing_waits_but_pauses_and_idle_stay)
{
    setup(0, 50 * US, 300 * US);
    fikit_budget_step_knobs(0, 100 * US, 0, &V.knobs);
    cr_assert_eq(admit(50 * US, 100 * US), FIKIT_ADMIT_HOLD,
                 "a gap it would fit: held at fikitd (which fits it nowhere, but max_wait_ms binds)");
    V.beside = true;
    cr_assert_eq(admit(50 * US, 100 * US), FIKIT_ADMIT_RECHECK, "a beside task is never held: it looks again");
    cr_assert_eq(A.until_ns, 50 * US + FIKIT_BESIDE_RECHECK_NS);
    V.beside = false;
    T[0].idle_after_ns = 0;
    cr_assert_eq(admit(50 * MS, 100 * US), FIKIT_ADMIT_GO, "the level above went idle");
}
