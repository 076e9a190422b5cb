/* Policy scenarios: each one sets up tasks and held kernels at exact times
 * and checks exactly what is granted, when, and why. */
#include "conf/config.h"
#include "core/sched.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull

static struct fikit_sched S;
static struct fikit_grant G[64];
static uint64_t wake;

static void setup_with(enum fikit_policy policy, uint64_t cost, uint64_t margin)
{
    struct fikit_sched_params p;
    fikit_sched_params_default(&p);
    p.policy = policy;
    p.substrate_cost_ns = cost;
    p.safety_margin_ns = margin;
    p.idle_after_ns = 0; /* learned, */
    p.idle_floor_ns = 10 * MS; /* at least 10 ms */
    fikit_sched_init(&S, &p);
}

/* Task id launches at now a kernel that the client predicts to run dur and
 * to be followed by a gap of exactly gap (0: unknown). */
static void launch(uint32_t id, uint64_t now, uint64_t dur, uint64_t gap)
{
    struct fikit_gap_pred gp;
    memset(&gp, 0, sizeof gp);
    if (gap)
        fikit_gap_pred_fixed(&gp, gap);
    struct fikit_task_state *t = fikit_sched_task(&S, id);
    cr_assert_not_null(t);
    fikit_sched_note_launch(&S, id, now, fikit_busy_until(t->busy_until_ns, now, dur), &gp);
}

static void hold(uint32_t task, uint32_t ticket, uint64_t stream, uint64_t dur, uint64_t now)
{
    struct fikit_request r = {.task_id = task, .ticket = ticket, .stream = stream,
                              .key = 100 + ticket, .dur_ns = dur, .posted_ns = now};
    cr_assert_eq(fikit_sched_post(&S, &r), 0);
}

static size_t decide(uint64_t now) { return fikit_sched_decide(&S, now, G, 64, &wake); }

/* The usual pair: task 1 "serve" at priority 0 and task 2 "batch" at
 * batch_level, no substrate cost and no margin. */
static void serve_and_batch(enum fikit_policy policy, int batch_level)
{
    setup_with(policy, 0, 0);
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", batch_level);
}

/* serve at level 0 (task 1) and two lower tasks: 2 (name a, level la) and
 * 3 (name b, level lb), under fill. */
static void serve_and_two(const char *a, int la, const char *b, int lb)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, a, la);
    fikit_sched_add_task(&S, 3, 300, b, lb);
}

/* What a launch at level sees of the scheduler's activity test: held while a
 * higher level is active, never under passthrough (fikit_admit's rule, over
 * the scheduler's own state). */
static bool must_hold(int level, uint64_t now)
{
    return S.p.policy != FIKIT_POLICY_PASSTHROUGH && fikit_sched_top_level(&S, now) < level;
}

Test(sched, best_fit_grants_longest_that_fits_in_one_level)
{
    serve_and_batch(FIKIT_POLICY_FILL, 5);
    launch(1, 0, 50 * US, 300 * US); /* busy until 50 us, then a 300 us gap */
    hold(2, 1, 1, 100 * US, 10 * US);
    hold(2, 2, 2, 250 * US, 10 * US);
    hold(2, 3, 3, 400 * US, 10 * US);
    cr_assert_eq(decide(10 * US), 0, "nothing while the kernel runs");
    cr_assert_eq(wake, 50 * US, "wakes when the gap begins");
    size_t n = decide(50 * US);
    cr_assert_eq(n, 1);
    cr_assert_eq(G[0].ticket, 2, "250 us is the longest that fits 300 us");
    cr_assert_eq(G[0].reason, FIKIT_GRANT_FIT);
    cr_assert_eq(G[0].room_ns, 300 * US);
    cr_assert_eq(G[0].at_ns, 50 * US);
    /* 50 us left: the 100 us kernel does not fit, the 400 us never will. */
    cr_assert_eq(S.nreq, 2);
}

Test(sched, repeats_while_room_remains)
{
    serve_and_batch(FIKIT_POLICY_FILL, 5);
    launch(1, 0, 10 * US, 500 * US);
    hold(2, 1, 1, 200 * US, 0);
    hold(2, 2, 2, 200 * US, 0);
    hold(2, 3, 3, 200 * US, 0);
    size_t n = decide(10 * US);
    cr_assert_eq(n, 2, "two of 200 us fit 500 us, a third does not");
    cr_assert_eq(fikit_sched_reserved_until(&S, 10 * US), 410 * US);
}

Test(sched, higher_level_fitting_kernel_beats_longer_lower_one)
{
    serve_and_two("etl", 3, "train", 8);
    launch(1, 0, 20 * US, 300 * US);
    hold(3, 1, 1, 280 * US, 0); /* longer, lower level */
    hold(2, 2, 1, 100 * US, 0); /* shorter, higher level */
    size_t n = decide(20 * US);
    cr_assert_geq(n, 1);
    cr_assert_eq(G[0].task_id, 2, "level 3 is scanned before level 8");
    cr_assert_eq(G[0].ticket, 2);
    /* 200 us remain: the 280 us kernel still does not fit. */
    cr_assert_eq(n, 1);
}

Test(sched, nothing_granted_mid_burst)
{
    serve_and_batch(FIKIT_POLICY_FILL, 9);
    hold(2, 1, 1, 30 * US, 0);
    /* A burst: kernels back to back with 5 us gaps between them. */
    for (uint64_t t = 0; t < 1000 * US; t += 100 * US) {
        launch(1, t, 95 * US, 5 * US);
        cr_assert_eq(decide(t), 0, "the kernel is running");
        cr_assert_eq(decide(t + 96 * US), 0, "a 5 us gap fits no 30 us kernel");
    }
    cr_assert_eq(S.nreq, 1);
}

/* Two level-0 services with gaps of their own and a batch kernel of dur
 * held. */
static void two_serves_and_batch(uint64_t dur)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    fikit_sched_add_task(&S, 1, 100, "serve-a", 0);
    fikit_sched_add_task(&S, 2, 101, "serve-b", 0);
    fikit_sched_add_task(&S, 3, 200, "batch", 9);
    launch(1, 0, 10 * US, 1000 * US); /* a: long gap from 10 us */
    launch(2, 0, 100 * US, 50 * US);  /* b: busy until 100 us, then 50 us */
    hold(3, 1, 1, dur, 0);
}

Test(sched, two_top_level_tasks_are_both_protected)
{
    two_serves_and_batch(40 * US);
    cr_assert_eq(decide(20 * US), 0, "b is still running although a is idle");
    cr_assert_eq(decide(100 * US), 1, "both in a gap: the shared room is b's 50 us");
    cr_assert_eq(G[0].room_ns, 50 * US);

    two_serves_and_batch(60 * US);
    cr_assert_eq(decide(100 * US), 0, "60 us fits a's gap but not b's");
}

Test(sched, idle_detection_releases_held_kernels)
{
    serve_and_batch(FIKIT_POLICY_STRICT, 9);
    launch(1, 0, 1 * MS, 0);
    cr_assert(must_hold(9, 2 * MS));
    hold(2, 1, 1, 0, 2 * MS); /* not even measured */
    cr_assert_eq(decide(2 * MS), 0);
    cr_assert_eq(wake, 11 * MS, "idle 10 ms after its work ended at 1 ms");
    cr_assert_eq(decide(11 * MS - 1), 0);
    cr_assert_eq(decide(11 * MS), 1);
    cr_assert_eq(G[0].reason, FIKIT_GRANT_FREE);
    cr_assert_not(must_hold(9, 11 * MS));
}

Test(sched, learned_idle_threshold_is_twice_the_longest_gap)
{
    setup_with(FIKIT_POLICY_STRICT, 0, 0);
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_task(&S, 1)->idle_after_ns = 20 * MS;
    launch(1, 0, 1 * MS, 0);
    cr_assert(must_hold(9, 21 * MS), "a gap a little longer than any seen is no idleness");
    cr_assert(must_hold(9, 41 * MS - 1));
    cr_assert_not(must_hold(9, 41 * MS), "idle twice its longest gap after its work");
}

Test(sched, learned_idle_threshold_never_below_the_default)
{
    setup_with(FIKIT_POLICY_STRICT, 0, 0);
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_task(&S, 1)->idle_after_ns = 2 * MS;
    launch(1, 0, 1 * MS, 0);
    cr_assert(must_hold(9, 11 * MS - 1), "the 10 ms floor, not 2 x 2 ms");
    cr_assert_not(must_hold(9, 11 * MS));
}

Test(sched, configured_idle_threshold_applies_as_it_is)
{
    setup_with(FIKIT_POLICY_STRICT, 0, 0);
    S.p.idle_after_ns = 10 * MS; /* idle_after_us = 10000 */
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_task(&S, 1)->idle_after_ns = 20 * MS;
    launch(1, 0, 1 * MS, 0);
    cr_assert(must_hold(9, 11 * MS - 1));
    cr_assert_not(must_hold(9, 11 * MS), "the learned 20 ms gap is not used");
    cr_assert_eq(fikit_idle_threshold(false, 10 * MS, 20 * MS), 10 * MS);
    cr_assert_eq(fikit_idle_threshold(true, 10 * MS, 20 * MS), 40 * MS);
    cr_assert_eq(fikit_idle_threshold(true, 10 * MS, 0), 10 * MS, "nothing learned: the floor");
    cr_assert_eq(fikit_idle_threshold(true, 0, UINT64_MAX), UINT64_MAX, "saturates");
}

Test(sched, substrate_cost_turns_fit_into_miss)
{
    setup_with(FIKIT_POLICY_FILL, 0, 10 * US);
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    launch(1, 0, 10 * US, 300 * US);
    hold(2, 1, 1, 200 * US, 0);
    cr_assert_eq(decide(10 * US), 1, "200 + 0 + 10 <= 300");

    setup_with(FIKIT_POLICY_FILL, 250 * US, 10 * US);
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    launch(1, 0, 10 * US, 300 * US);
    hold(2, 1, 1, 200 * US, 0);
    cr_assert_eq(decide(10 * US), 0, "200 + 250 + 10 > 300");
}

Test(sched, stream_order_holds_when_later_kernel_fits_better)
{
    serve_and_batch(FIKIT_POLICY_FILL, 9);
    launch(1, 0, 10 * US, 100 * US);
    hold(2, 1, 7, 500 * US, 0); /* head of stream 7: does not fit */
    hold(2, 2, 7, 90 * US, 0);  /* behind it: would fit */
    cr_assert_eq(decide(10 * US), 0, "the later kernel must not overtake the head");
    /* On another stream the same kernel may go. */
    hold(2, 3, 8, 90 * US, 0);
    cr_assert_eq(decide(10 * US), 1);
    cr_assert_eq(G[0].ticket, 3);
}

/* At t, serve (task 1) launches a 10 us kernel followed by a 150 us gap and
 * task 2 posts a dur-long kernel (none for dur 0); the decision at the
 * gap's start must grant exactly one kernel. Returns whose it is. */
static uint32_t one_grant_in_next_gap(uint64_t t, uint32_t ticket, uint64_t dur)
{
    launch(1, t, 10 * US, 150 * US);
    if (dur)
        hold(2, ticket, 1, dur, t);
    cr_assert_eq(decide(t + 10 * US), 1, "one kernel per gap at %llu us", (unsigned long long)(t / US));
    cr_assert_eq(G[0].reason, FIKIT_GRANT_FIT);
    return G[0].task_id;
}

Test(sched, a_slightly_shorter_kernel_is_not_starved)
{
    /* Two batch jobs of one level, kernels of 110 and 100 us; every gap has
     * room for one. Best fit picks the 110 us one each time, until the
     * 100 us one has been passed over FIKIT_SCHED_MAX_PASSED_OVER times. */
    serve_and_two("batch-long", 9, "batch-short", 9);
    hold(3, 1, 1, 100 * US, 0);
    uint64_t t = 0;
    for (uint32_t i = 0; i < FIKIT_SCHED_MAX_PASSED_OVER; i++, t += 200 * US)
        cr_assert_eq(one_grant_in_next_gap(t, 10 + i, 110 * US), 2, "gap %u: the longest that fits", i);
    cr_assert_eq(one_grant_in_next_gap(t, 20, 110 * US), 3, "passed over %d times: it goes first",
                 FIKIT_SCHED_MAX_PASSED_OVER);
    t += 200 * US;
    cr_assert_eq(one_grant_in_next_gap(t, 0, 0), 2, "then best fit again");
}

Test(sched, passed_over_counts_only_kernels_that_fitted)
{
    /* A kernel too long for every gap is not 'passed over': it does not
     * jump the queue once a gap is finally long enough for both. */
    serve_and_two("small", 9, "big", 9);
    hold(3, 1, 1, 300 * US, 0);
    uint64_t t = 0;
    for (uint32_t i = 0; i < 2 * FIKIT_SCHED_MAX_PASSED_OVER; i++, t += 200 * US)
        cr_assert_eq(one_grant_in_next_gap(t, 10 + i, 100 * US), 2, "gap %u: only the small one fits", i);
    launch(1, t, 10 * US, 500 * US);
    hold(2, 30, 1, 100 * US, t);
    cr_assert_eq(decide(t + 10 * US), 2, "room for both");
    cr_assert_eq(G[0].task_id, 3, "the longest first, as best fit says");
    cr_assert_eq(G[1].task_id, 2);
}

Test(sched, unmeasured_kernel_waits_until_no_higher_level_is_active)
{
    serve_and_batch(FIKIT_POLICY_FILL, 9);
    launch(1, 0, 10 * US, 5 * MS);
    hold(2, 1, 1, 0, 0);
    cr_assert_eq(decide(10 * US), 0, "a huge gap, but the duration is unknown");
    cr_assert_eq(decide(10 * MS + 10 * US), 1, "serve turned idle");
    cr_assert_eq(G[0].reason, FIKIT_GRANT_FREE);
}

Test(sched, strict_never_fills_gaps)
{
    serve_and_batch(FIKIT_POLICY_STRICT, 9);
    launch(1, 0, 10 * US, 5 * MS);
    hold(2, 1, 1, 10 * US, 0);
    cr_assert_eq(decide(100 * US), 0);
    cr_assert_eq(decide(3 * MS), 0);
}

Test(sched, passthrough_grants_everything_and_never_holds)
{
    serve_and_batch(FIKIT_POLICY_PASSTHROUGH, 9);
    launch(1, 0, 10 * MS, 0);
    cr_assert_not(must_hold(9, 1 * MS));
    hold(2, 1, 1, 10 * US, 0);
    hold(2, 2, 1, 10 * US, 0);
    cr_assert_eq(decide(1 * MS), 2);
    cr_assert_eq(G[0].reason, FIKIT_GRANT_PASSTHROUGH);
}

Test(sched, top_level_itself_is_never_held)
{
    serve_and_two("etl", 4, "train", 9);
    launch(2, 0, 1 * MS, 0);
    cr_assert_not(must_hold(0, 10 * US));
    cr_assert_not(must_hold(4, 10 * US), "same level as the top active one");
    cr_assert(must_hold(9, 10 * US));
    cr_assert_eq(fikit_sched_top_level(&S, 10 * US), 4);
}

Test(sched, middle_level_fills_before_it_runs_freely)
{
    /* Level 0 active, level 4 and 9 hold: level 4 fills level 0's gaps
     * first; once level 0 is idle, level 4 runs freely and 9 waits on it. */
    serve_and_two("etl", 4, "train", 9);
    S.p.idle_floor_ns = 1 * MS;                       /* the floor */
    fikit_sched_task(&S, 1)->idle_after_ns = 1 * MS;  /* serve: idle 2 ms after its work */
    fikit_sched_task(&S, 2)->idle_after_ns = 5 * MS;  /* etl: 10 ms */
    launch(1, 0, 10 * US, 100 * US);
    hold(3, 1, 1, 80 * US, 0);
    hold(2, 2, 1, 50 * US, 0);
    cr_assert_eq(decide(10 * US), 1);
    cr_assert_eq(G[0].task_id, 2);
    launch(2, 10 * US, 50 * US, 5 * MS);
    cr_assert_eq(decide(2 * MS), 0, "serve is still active: 2 x its 1 ms gap has not passed");
    cr_assert_eq(decide(2 * MS + 10 * US), 1, "serve idle: etl is now the top level and in a gap");
    cr_assert_eq(G[0].task_id, 3);
    cr_assert_eq(G[0].reason, FIKIT_GRANT_FIT);
}

Test(sched, removed_task_drops_its_requests_and_protection)
{
    serve_and_two("batch", 9, "batch2", 9);
    launch(1, 0, 10 * MS, 0);
    hold(2, 1, 1, 10 * US, 0);
    hold(3, 2, 1, 10 * US, 0);
    cr_assert_eq(fikit_sched_remove_task(&S, 2), 1);
    cr_assert_eq(S.nreq, 1);
    cr_assert_eq(decide(1 * MS), 0);
    fikit_sched_remove_task(&S, 1); /* the high-priority task died */
    cr_assert_eq(decide(1 * MS), 1, "held work goes at once, no time-out");
    cr_assert_eq(G[0].task_id, 3);
}

Test(sched, reservation_carries_into_the_next_gap)
{
    serve_and_batch(FIKIT_POLICY_FILL, 9);
    launch(1, 0, 10 * US, 100 * US);
    hold(2, 1, 1, 90 * US, 0);
    cr_assert_eq(decide(10 * US), 1);
    /* The high-priority task comes back early; its next gap starts while
     * the granted 90 us kernel is still predicted to run (until 100 us). */
    launch(1, 20 * US, 10 * US, 200 * US); /* busy until 30 us, gap until 230 us */
    hold(2, 2, 1, 60 * US, 30 * US);
    cr_assert_eq(decide(30 * US), 1, "130 us remain after the reservation ends at 100 us");
    cr_assert_eq(fikit_sched_reserved_until(&S, 30 * US), 160 * US);
    hold(2, 3, 1, 80 * US, 30 * US);
    cr_assert_eq(decide(30 * US), 0, "only 70 us are left");
}

Test(sched, rejects_bad_levels_and_unknown_tasks)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    cr_assert_eq(fikit_sched_add_task(&S, 1, 1, "x", 10), -EINVAL);
    cr_assert_eq(fikit_sched_add_task(&S, 1, 1, "x", -1), -EINVAL);
    cr_assert_eq(fikit_sched_add_task(&S, 1, 1, "x", 3), 0);
    cr_assert_eq(fikit_sched_add_task(&S, 1, 1, "x", 3), -EEXIST);
    struct fikit_request r = {.task_id = 42};
    cr_assert_eq(fikit_sched_post(&S, &r), -ENOENT);
}

Test(sched, release_all_empties_the_queue)
{
    serve_and_batch(FIKIT_POLICY_STRICT, 9);
    launch(1, 0, 10 * MS, 0);
    hold(2, 1, 1, 10 * US, 0);
    hold(2, 2, 2, 10 * US, 0);
    cr_assert_eq(fikit_sched_release_all(&S, 1 * MS, G, 64), 2);
    cr_assert_eq(G[1].reason, FIKIT_GRANT_RELEASE);
    cr_assert_eq(S.nreq, 0);
}

Test(sched, dead_grantee_frees_its_reservation_at_once)
{
    serve_and_two("batch", 9, "batch2", 9);
    launch(1, 0, 10 * US, 300 * US);
    hold(2, 1, 1, 250 * US, 0);
    hold(3, 2, 1, 200 * US, 0);
    cr_assert_eq(decide(10 * US), 1);
    cr_assert_eq(G[0].task_id, 2, "the longer one that fits");
    cr_assert_eq(decide(20 * US), 0, "the gap is taken until 260 us");
    fikit_sched_remove_task(&S, 2); /* killed while holding the grant */
    cr_assert_eq(decide(20 * US), 1, "its room is free again at once");
    cr_assert_eq(G[0].task_id, 3);
}

Test(sched, watches_launches_only_when_one_could_open_room)
{
    serve_and_batch(FIKIT_POLICY_FILL, 9);
    launch(1, 0, 100 * US, 50 * US);
    hold(2, 1, 1, 80 * US, 0);
    cr_assert_eq(decide(10 * US), 0);
    cr_assert_not(S.watch_launches, "mid-kernel: a launch only extends the busy time");
    cr_assert_eq(wake, 100 * US);
    cr_assert_eq(decide(100 * US), 0);
    cr_assert(S.watch_launches, "in a gap that fits nothing: the next launch may open room");

    serve_and_batch(FIKIT_POLICY_STRICT, 9);
    launch(1, 0, 100 * US, 50 * US);
    hold(2, 1, 1, 80 * US, 0);
    cr_assert_eq(decide(200 * US), 0);
    cr_assert_not(S.watch_launches, "strict waits for idleness only");
    cr_assert_eq(wake, 100 * US + 10 * MS);
}

/* A gap with no predictable end, like the wait for a request that arrives at
 * random: roughly exponential with a 1 ms mean. */
static void launch_uncertain(uint32_t id, uint64_t now, uint64_t dur)
{
    static const uint32_t q_us[FIKIT_GAP_POINTS] = {0, 50, 100, 290, 690, 1390, 2300, 4600};
    struct fikit_gap_pred gp;
    for (int i = 0; i < FIKIT_GAP_POINTS; i++)
        gp.q_ns[i] = q_us[i] * (uint32_t)US;
    struct fikit_task_state *t = fikit_sched_task(&S, id);
    fikit_sched_note_launch(&S, id, now, fikit_busy_until(t->busy_until_ns, now, dur), &gp);
}

Test(sched, uncertain_gap_is_filled_on_at_most_max_queued_ahead)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    S.p.max_queued_ns = 60 * US;
    S.p.gap_confidence = 0.1;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    launch_uncertain(1, 0, 10 * US);
    /* 400 us into the gap, nine times in ten it lasts 100 us more, but its
     * end is never sure. */
    struct fikit_fill_rooms rooms;
    fikit_fill_rooms_init(&rooms, 60 * US);
    struct fikit_task_state *t = fikit_sched_task(&S, 1);
    fikit_fill_rooms_add(&rooms, &t->gap, t->busy_until_ns, 410 * US, 0.1);
    fikit_fill_rooms_done(&rooms);
    cr_assert_gt(rooms.room, 100 * US);
    cr_assert_lt(rooms.room, 110 * US);
    cr_assert_lt(rooms.sure, 20 * US);
    cr_assert_eq(fikit_fill_end(&rooms, 410 * US, 0), 410 * US + rooms.room, "nothing in flight: the p10 room");
    cr_assert_eq(fikit_fill_end(&rooms, 410 * US, 470 * US), 410 * US + rooms.room,
                 "max_queued_ns in flight: still the p10 room");
    cr_assert_eq(fikit_fill_end(&rooms, 410 * US, 471 * US), 410 * US + rooms.sure,
                 "more in flight: only what the gap is sure to leave");
    /* Two kernels longer than the bound. */
    hold(2, 1, 1, 90 * US, 400 * US);
    hold(2, 2, 2, 80 * US, 400 * US);
    cr_assert_eq(decide(410 * US), 1);
    cr_assert_eq(G[0].ticket, 1, "the longest that fits the p10 room");
    cr_assert_eq(G[0].room_ns, rooms.room);
    /* Whatever is in flight when the request comes delays it. */
    cr_assert_eq(decide(430 * US), 0, "70 us in flight, more than max_queued_us");
    cr_assert_eq(decide(450 * US), 0, "50 us in flight, but 80 us more would outlast the p10 room");
    uint64_t at = 0;
    for (uint64_t now = 450 * US; now <= 500 * US && !at; now += 5 * US)
        if (decide(now) == 1)
            at = now;
    cr_assert(at > 450 * US && at < 500 * US,
              "longer than max_queued_us, it goes once the queue ahead has drained enough (%llu us)",
              (unsigned long long)(at / US));
    cr_assert_eq(G[0].ticket, 2);

    /* A gap sure to last (host work of a fixed length) is not bounded. */
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    S.p.max_queued_ns = 150 * US;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    launch(1, 0, 10 * US, 1 * MS);
    hold(2, 1, 1, 400 * US, 0);
    hold(2, 2, 2, 400 * US, 0);
    cr_assert_eq(decide(10 * US), 2, "800 us of a sure 1 ms gap");
}

Test(sched, starving_kernel_fits_the_median_after_starve_after)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    S.p.max_queued_ns = 0;
    S.p.starve_after_ns = 5 * MS;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    launch_uncertain(1, 0, 10 * US);
    struct fikit_task_state *t = fikit_sched_task(&S, 1);
    uint64_t tenth = fikit_task_room(&t->gap, t->busy_until_ns, 1 * MS, 0.1);
    uint64_t median = fikit_task_room(&t->gap, t->busy_until_ns, 1 * MS, 0.5);
    uint64_t dur = (tenth + median) / 2; /* longer than the p10 room, within the median */
    hold(2, 1, 1, dur, 0);
    cr_assert_eq(decide(1 * MS), 0, "too long for the gap_confidence room");
    cr_assert_eq(wake, 2 * MS, "the recheck comes before starve_after");
    cr_assert_eq(decide(2 * MS), 0);
    /* Relaunch so the gap is as young at 5 ms as it was at 1 ms. */
    launch_uncertain(1, 4 * MS, 10 * US);
    cr_assert_eq(decide(5 * MS), 1, "held 5 ms: fitted at the median");
    cr_assert_eq(G[0].reason, FIKIT_GRANT_STARVED);
    cr_assert_eq(G[0].room_ns, median);
    cr_assert_eq(fikit_sched_reserved_until(&S, 5 * MS), 5 * MS + dur);
}

Test(sched, starving_kernel_waits_for_the_queue_ahead_too)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    S.p.max_queued_ns = 50 * US;
    S.p.starve_after_ns = 1 * MS;
    S.p.gap_confidence = 0.1;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    launch_uncertain(1, 1 * MS, 10 * US);
    S.client_fill_until_ns = 1 * MS + 200 * US; /* 190 us of lower work in flight */
    struct fikit_task_state *t = fikit_sched_task(&S, 1);
    uint64_t tenth = fikit_task_room(&t->gap, t->busy_until_ns, 1 * MS + 160 * US, 0.1);
    uint64_t median = fikit_task_room(&t->gap, t->busy_until_ns, 1 * MS + 160 * US, 0.5);
    /* Behind the 40 us still queued at 1.16 ms: too long for the p10 room, within the median. */
    hold(2, 1, 1, (tenth + median) / 2 - 40 * US, 0);
    cr_assert_eq(decide(1 * MS + 10 * US), 0, "starving, and it would fit the median, but 190 us "
                 "are queued ahead, more than max_queued_us");
    cr_assert_eq(decide(1 * MS + 160 * US), 1, "40 us queued: it goes");
    cr_assert_eq(G[0].reason, FIKIT_GRANT_STARVED);
}

Test(sched, starving_wake_comes_at_starve_after)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    S.p.starve_after_ns = 500 * US;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    launch_uncertain(1, 0, 10 * US);
    hold(2, 1, 1, 0, 100 * US);
    cr_assert_eq(decide(100 * US), 0, "never measured: not before it starves");
    cr_assert_eq(wake, 600 * US, "posted at 100 us, starving at 600 us");
}

Test(sched, starving_unmeasured_kernel_takes_the_median_room_whole)
{
    setup_with(FIKIT_POLICY_FILL, 0, 5 * US);
    S.p.starve_after_ns = 5 * MS;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    hold(2, 1, 1, 0, 0);
    launch_uncertain(1, 5 * MS, 10 * US);
    struct fikit_task_state *t = fikit_sched_task(&S, 1);
    uint64_t median = fikit_task_room(&t->gap, t->busy_until_ns, 5 * MS + 100 * US, 0.5);
    cr_assert_eq(decide(5 * MS), 0, "the service is busy");
    cr_assert_eq(decide(5 * MS + 100 * US), 1);
    cr_assert_eq(G[0].reason, FIKIT_GRANT_STARVED);
    cr_assert_eq(fikit_sched_reserved_until(&S, 5 * MS + 100 * US), 5 * MS + 100 * US + median - 5 * US,
                 "its unknown length is given the median room, less the margin");
    hold(2, 2, 1, 10 * US, 5 * MS + 100 * US);
    cr_assert_eq(decide(5 * MS + 110 * US), 0, "nothing fits behind it");
}

Test(sched, what_clients_filled_is_taken)
{
    serve_and_batch(FIKIT_POLICY_FILL, 9);
    launch(1, 0, 10 * US, 300 * US);
    S.client_fill_until_ns = 200 * US; /* a client put 190 us of work into the gap itself */
    hold(2, 1, 1, 150 * US, 0);
    hold(2, 2, 2, 100 * US, 0);
    cr_assert_eq(decide(10 * US), 1);
    cr_assert_eq(G[0].ticket, 2, "110 us were left after the client's fill");
    cr_assert_eq(G[0].room_ns, 110 * US);
    cr_assert_eq(fikit_sched_reserved_until(&S, 10 * US), 300 * US);
}

Test(sched, strict_never_fills_even_a_starving_kernel)
{
    setup_with(FIKIT_POLICY_STRICT, 0, 0);
    S.p.starve_after_ns = 1 * MS;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    launch(1, 0, 10 * US, 50 * MS);
    hold(2, 1, 1, 10 * US, 0);
    cr_assert_eq(decide(5 * MS), 0);
}

/* A pause (DESIGN.md "The policy"): the top level's gap has outlasted its
 * p99 and FIKIT_PAUSE_FLOOR_NS; a held kernel of at most
 * FIKIT_PAUSE_KERNEL_NS goes then, a longer one waits for idleness. */
Test(sched, a_pause_grants_short_kernels_only)
{
    serve_and_batch(FIKIT_POLICY_FILL, 9);
    fikit_sched_add_task(&S, 3, 300, "long", 9);
    launch(1, 0, 100 * US, 50 * US); /* busy until 100 us, then gaps of 50 us */
    hold(2, 1, 1, 1 * MS, 0);
    hold(3, 2, 1, 3 * MS, 0);
    uint64_t pause = 100 * US + FIKIT_PAUSE_FLOOR_NS;
    cr_assert_eq(decide(pause - 1), 0, "no room in a gap of 50 us, and not yet a pause");
    cr_assert_eq(wake, pause, "it looks again when the pause begins");
    cr_assert_eq(decide(pause), 1);
    cr_assert_eq(G[0].task_id, 2);
    cr_assert_eq(G[0].reason, FIKIT_GRANT_PAUSE);
    cr_assert_str_eq(fikit_grant_reason_name(G[0].reason), "pause");
    cr_assert_eq(decide(pause + 1 * MS), 0, "3 ms is longer than a pause lets in");
    cr_assert_eq(decide(100 * US + 10 * MS), 1, "idle: it goes");
    cr_assert_eq(G[0].reason, FIKIT_GRANT_FREE);
}

Test(sched, strict_has_no_pauses)
{
    serve_and_batch(FIKIT_POLICY_STRICT, 9);
    launch(1, 0, 100 * US, 50 * US);
    hold(2, 1, 1, 1 * MS, 0);
    cr_assert_eq(decide(100 * US + 5 * MS), 0);
    cr_assert_eq(wake, 100 * US + 10 * MS, "only idleness");
}

/* max_wait: a stream head held that long goes at the start of the next gap
 * above, fitting or not, one at a time. */
Test(sched, an_overdue_kernel_goes_at_the_next_gap_one_at_a_time)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    S.p.max_wait_ns = 5 * MS;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    fikit_sched_add_task(&S, 3, 300, "other", 9);
    hold(2, 1, 1, 50 * MS, 0);
    hold(3, 2, 1, 40 * MS, 1 * MS);
    /* The service keeps the device busy with gaps of 20 us, too short for
     * anything, and never pauses. */
    for (uint64_t t = 0; t < 5 * MS; t += 500 * US) {
        launch(1, t, 480 * US, 20 * US);
        cr_assert_eq(decide(t + 10 * US), 0);
        cr_assert_leq(wake, 5 * MS, "it looks again when the first turns overdue");
    }
    launch(1, 5 * MS, 480 * US, 20 * US);
    cr_assert_eq(decide(5 * MS + 10 * US), 0, "overdue, but the service's kernel runs");
    cr_assert_eq(decide(5 * MS + 480 * US), 1, "its kernel ended: the gap begins");
    cr_assert_eq(G[0].task_id, 2);
    cr_assert_eq(G[0].reason, FIKIT_GRANT_OVERDUE);
    cr_assert_str_eq(fikit_grant_reason_name(G[0].reason), "overdue");
    launch(1, 6 * MS, 480 * US, 20 * US);
    cr_assert_eq(decide(6 * MS + 480 * US), 0, "the other is overdue too, but one at a time");
    launch(1, 55 * MS, 480 * US, 20 * US);
    cr_assert_eq(decide(55 * MS + 480 * US), 1, "the first's 50 ms are over: the next goes");
    cr_assert_eq(G[0].task_id, 3);
}

Test(sched, an_overdue_kernel_goes_at_twice_max_wait_whatever_the_level_above_does)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    S.p.max_wait_ns = 5 * MS;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    hold(2, 1, 1, 50 * MS, 0);
    /* Its predicted work always ends after its next launch: never a gap. */
    for (uint64_t t = 0; t < 10 * MS; t += 500 * US) {
        launch(1, t, 600 * US, 20 * US);
        cr_assert_eq(decide(t + 10 * US), 0);
    }
    cr_assert_eq(wake, 10 * MS, "it looks again at twice max_wait");
    launch(1, 10 * MS, 600 * US, 20 * US);
    cr_assert_eq(decide(10 * MS + 10 * US), 1);
    cr_assert_eq(G[0].reason, FIKIT_GRANT_OVERDUE);
}

Test(sched, max_wait_zero_waits_without_bound)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    S.p.max_wait_ns = 0;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    hold(2, 1, 1, 50 * MS, 0);
    for (uint64_t t = 0; t < 60 * MS; t += 500 * US) {
        launch(1, t, 480 * US, 20 * US);
        cr_assert_eq(decide(t + 480 * US), 0);
    }
}

Test(sched, pauses_off_waits_for_idleness)
{
    setup_with(FIKIT_POLICY_FILL, 0, 0);
    S.p.pauses = false;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    launch(1, 0, 100 * US, 50 * US);
    hold(2, 1, 1, 1 * MS, 0);
    cr_assert_eq(decide(100 * US + 5 * MS), 0, "no pause: a 1 ms kernel waits");
    cr_assert_eq(decide(100 * US + 10 * MS - 1), 0, "until the idle threshold");
    cr_assert_eq(decide(100 * US + 10 * MS), 1);
    cr_assert_eq(G[0].reason, FIKIT_GRANT_FREE);
}

/* What fikit status reads of the scheduler: through fikit_sched_status and
 * fikit_sched_task_status, not its fields. */
Test(sched, status_reports_top_level_holds_and_activity)
{
    setup_with(FIKIT_POLICY_FILL, 30 * US, 5 * US);
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    launch(1, 0, 50 * US, 300 * US);
    hold(2, 1, 1, 400 * US, 10 * US);
    hold(2, 2, 2, 100 * US, 20 * US);
    struct fikit_sched_status st;
    fikit_sched_status(&S, 40 * US, &st);
    cr_assert_eq(st.top_level, 0);
    cr_assert_eq(st.policy, FIKIT_POLICY_FILL);
    cr_assert_eq(st.substrate_cost_ns, 30 * US);
    cr_assert_eq(st.safety_margin_ns, 5 * US);
    cr_assert_eq(st.held_now, 2);
    struct fikit_sched_task_status ts;
    fikit_sched_task_status(&S, 2, 40 * US, &ts);
    cr_assert_not(ts.active, "batch has launched nothing");
    cr_assert_eq(ts.held_now, 2);
    cr_assert_eq(ts.held_longest_ns, 30 * US, "the first posted waited longest: since 10 us");
    cr_assert_eq(ts.held_longest_dur_ns, 400 * US);
    fikit_sched_task_status(&S, 1, 40 * US, &ts);
    cr_assert(ts.active);
    cr_assert_eq(ts.launches, 1);
    cr_assert_eq(ts.held_now, 0);
    cr_assert_eq(ts.idle_after_ns, 10 * MS, "idle_after_ns as set, nothing learned");
    fikit_sched_task_status(&S, 7, 40 * US, &ts);
    cr_assert_not(ts.active, "an unknown task");
    cr_assert_eq(ts.launches, 0);
    fikit_sched_status(&S, 100 * MS, &st);
    cr_assert_eq(st.top_level, FIKIT_LEVELS, "serve idle long after its last launch");
}

/* Under strict too, and the next overdue one is looked at when the one
 * before it ends, not left to the next event. */
Test(sched, strict_overdue_kernels_go_one_after_another)
{
    setup_with(FIKIT_POLICY_STRICT, 0, 0);
    S.p.max_wait_ns = 5 * MS;
    fikit_sched_add_task(&S, 1, 100, "serve", 0);
    fikit_sched_add_task(&S, 2, 200, "batch", 9);
    fikit_sched_add_task(&S, 3, 300, "other", 9);
    hold(2, 1, 1, 8 * MS, 0);
    hold(3, 2, 1, 8 * MS, 0);
    launch(1, 0, 100 * US, 50 * US);
    cr_assert_eq(decide(1 * MS), 0);
    cr_assert_eq(wake, 5 * MS, "it looks again when they turn overdue");
    launch(1, 5 * MS - 200 * US, 100 * US, 50 * US);
    cr_assert_eq(decide(5 * MS), 1, "overdue, between the service's kernels");
    cr_assert_eq(G[0].reason, FIKIT_GRANT_OVERDUE);
    cr_assert_eq(wake, 10 * MS, "the other's twice max_wait comes first");
    cr_assert_eq(decide(10 * MS), 0, "the first's kernel is still predicted to run");
    cr_assert_eq(wake, 13 * MS, "the next when the first's 8 ms are over");
    launch(1, 12 * MS, 100 * US, 50 * US);
    cr_assert_eq(decide(13 * MS), 1);
    cr_assert_eq(G[0].reason, FIKIT_GRANT_OVERDUE);
}

/* The latency budget's knobs (core/budget.h): fitting grants keep to the
 * lower task's step; free grants do not change. The batch (task 2) at the
 * budget's step holds a 100 us kernel behind the service's 50 us one, which
 * a fixed 300 us gap follows. */
static void held_at_step(int step)
{
    serve_and_batch(FIKIT_POLICY_FILL, 9);
    struct fikit_lower_knobs k;
    fikit_budget_step_knobs(step, 100 * US, 0, &k);
    fikit_sched_set_knobs(&S, 2, &k);
    launch(1, 0, 50 * US, 300 * US);
    hold(2, 1, 1, 100 * US, 10 * US);
}

Test(sched, the_budgets_knobs_bind_fitting_grants)
{
    held_at_step(0); /* wait */
    cr_assert_eq(decide(50 * US), 0, "waiting: no fit in the service's gap");
    struct fikit_lower_knobs k;
    fikit_budget_step_knobs(4, 100 * US, 0, &k); /* gaps, max_queued_us */
    fikit_sched_set_knobs(&S, 2, &k);
    cr_assert_eq(decide(50 * US), 1, "as configured: the 300 us gap takes it");
    cr_assert_eq(G[0].reason, FIKIT_GRANT_FIT);

    /* Step 1: only the room the gap is near certain to leave (a fixed gap:
     * all of it), whatever is queued. */
    held_at_step(1);
    cr_assert_eq(decide(50 * US), 1);

    /* Idle above: free, whatever the knobs. */
    held_at_step(0);
    cr_assert_eq(decide(50 * MS), 1);
    cr_assert_eq(G[0].reason, FIKIT_GRANT_FREE);
}
