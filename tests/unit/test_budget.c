/* core/budget: the latency budget's controller, driven by scripted bursts. */
#include "core/budget.h"
#include "core/bursts.h"
#include "core/measure.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#define MS 1000000ull
#define US 1000ull
#define REF (5 * MS) /* the service's p99 burst alone */

static uint64_t now_ns;

/* One burst of len_ns starting 10 ms after the previous one ended. */
static enum fikit_budget_action burst(struct fikit_budget *b, uint64_t len_ns)
{
    now_ns += 10 * MS;
    uint64_t start = now_ns;
    now_ns += len_ns;
    return fikit_budget_note_burst(b, start, now_ns, REF, 0, 100000, false);
}

/* The same, quiet or not (nothing below the task had work in flight). */
static enum fikit_budget_action burst_q(struct fikit_budget *b, uint64_t len_ns, bool quiet)
{
    now_ns += 10 * MS;
    uint64_t start = now_ns;
    now_ns += len_ns;
    return fikit_budget_note_burst(b, start, now_ns, REF, 0, 100000, quiet);
}

/* A plant: the service's burst at the step the lower task is allowed, a
 * fraction `bad` of bursts (every 1/bad-th) slowed by `slow`, others at
 * 0.8 REF (well inside any budget). */
struct plant {
    int breaks_from;   /* steps at or above this slow one burst in `every` */
    uint64_t every;
    double slow;
    uint64_t n;
};

static uint64_t plant_len(struct plant *p, int step)
{
    p->n++;
    if (step >= p->breaks_from && p->n % p->every == 0)
        return (uint64_t)(REF * p->slow);
    return REF * 8 / 10;
}

Test(budget, ladder_runs_from_wait_to_beside)
{
    struct fikit_lower_knobs k;
    fikit_budget_step_knobs(0, 100000, 70, &k);
    cr_assert_eq(k.mode, FIKIT_LOWER_WAIT);
    fikit_budget_step_knobs(1, 100000, 70, &k);
    cr_assert_eq(k.mode, FIKIT_LOWER_GAPS);
    cr_assert_eq(k.inflight_ns, 0, "step 1: only the room a gap is near certain to leave");
    uint64_t last = 0;
    for (int s = 2; s <= FIKIT_BUDGET_GAPS_TOP; s++) {
        fikit_budget_step_knobs(s, 100000, 70, &k);
        cr_assert_eq(k.mode, FIKIT_LOWER_GAPS, "step %d", s);
        cr_assert_gt(k.inflight_ns, last, "each step lets more be queued");
        last = k.inflight_ns;
    }
    fikit_budget_step_knobs(4, 100000, 70, &k);
    cr_assert_eq(k.inflight_ns, 100000, "step 4 is what max_queued_us alone gives");
    uint32_t sm = 0;
    for (int s = FIKIT_BUDGET_GAPS_TOP + 1; s <= FIKIT_BUDGET_TOP; s++) {
        fikit_budget_step_knobs(s, 100000, 70, &k);
        cr_assert_eq(k.mode, FIKIT_LOWER_BESIDE, "step %d", s);
        cr_assert_geq(k.sm_pct, sm);
        cr_assert_leq(k.sm_pct, 70, "never above the configured share");
        sm = k.sm_pct;
    }
    cr_assert_eq(sm, 70, "the top step has the configured share");
    cr_assert_eq(k.inflight_ns, 8 * MS);
    fikit_budget_step_knobs(99, 100000, 0, &k);
    cr_assert_eq(k.sm_pct, 100, "clamped to the top, the whole device when none is configured");
    cr_assert_eq(fikit_budget_top_step(false), FIKIT_BUDGET_GAPS_TOP);
}

Test(budget, without_a_reference_it_does_nothing)
{
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, false, FIKIT_BUDGET_TOP);
    int start = b.step;
    for (int i = 0; i < 1000; i++) {
        now_ns += 10 * MS;
        cr_assert_eq(fikit_budget_note_burst(&b, now_ns, now_ns + 50 * REF, 0, 0, 100000, false), FIKIT_BUDGET_IGNORED);
    }
    cr_assert_eq(b.step, start);
    cr_assert_eq(b.bursts, 0);
}

Test(budget, the_reference_is_the_p99_alone_of_each_burst_size)
{
    /* 200 bursts of 10 launches from 1 to 2 ms, 50 of 300 launches at
     * 20 ms and one of 33 at 5 ms (too rare to judge). */
    uint32_t launches[251];
    uint64_t len[251];
    for (int i = 0; i < 200; i++)
        launches[i] = 10, len[i] = MS + (uint64_t)i * MS / 199;
    for (int i = 200; i < 250; i++)
        launches[i] = 300, len[i] = 20 * MS;
    launches[250] = 33, len[250] = 5 * MS;
    struct fikit_budget_ref ref;
    fikit_budget_ref_build(&ref, launches, len, 251);
    cr_assert_eq(ref.n, 2);
    cr_assert_eq(ref.launches[0], 10);
    cr_assert_eq(ref.launches[1], 300);
    cr_assert_eq(fikit_budget_ref_find(&ref, 10, NULL), MS + 197 * MS / 199, "the 198th of 200");
    uint64_t mean = 0;
    cr_assert_eq(fikit_budget_ref_find(&ref, 300, &mean), 20 * MS);
    cr_assert_eq(mean, 20 * MS);
    fikit_budget_ref_find(&ref, 10, &mean);
    cr_assert(mean >= 3 * MS / 2 - 1 && mean <= 3 * MS / 2 + 1, "the mean of 1 to 2 ms: %llu", (unsigned long long)mean);
    cr_assert_eq(fikit_budget_ref_find(&ref, 33, &mean), 0, "seen once: not judged");
    cr_assert_eq(mean, 0);
    cr_assert_eq(fikit_budget_ref_find(&ref, 11, NULL), 0);
    cr_assert_eq(ref.all_p99_ns, 20 * MS, "every burst together: the 249th of 251");
}

/* A size never seen alone that is requests joined (k of one size, or one
 * each of two) is judged against their sum: the means add, the p99s'
 * excesses over them in quadrature; anything else is not judged. */
Test(budget, joined_requests_are_judged_against_their_sum)
{
    struct fikit_budget_ref ref = {.n = 2, .launches = {10, 300}, .p99_ns = {3 * MS, 24 * MS},
                                   .mean_ns = {2 * MS, 20 * MS}};
    uint64_t mean = 0;
    /* Three of 10: mean 6 ms, excess sqrt(3) x 1 ms. */
    cr_assert_eq(fikit_budget_ref_find(&ref, 30, &mean), 6 * MS + (uint64_t)(sqrt(3.0) * MS + 0.5));
    cr_assert_eq(mean, 6 * MS);
    /* Two of 300 before thirty of 10: the fewest parts. */
    cr_assert_eq(fikit_budget_ref_find(&ref, 600, &mean), 40 * MS + (uint64_t)(sqrt(2.0) * 4 * MS + 0.5));
    cr_assert_eq(mean, 40 * MS);
    /* One of each: 22 ms, excess sqrt(1 + 16) ms. */
    cr_assert_eq(fikit_budget_ref_find(&ref, 310, &mean), 22 * MS + (uint64_t)(sqrt(17.0) * MS + 0.5));
    cr_assert_eq(mean, 22 * MS);
    /* More parts than FIKIT_BUDGET_JOINED_MAX, or no such sum: not judged. */
    cr_assert_eq(fikit_budget_ref_find(&ref, 10 * (FIKIT_BUDGET_JOINED_MAX + 1), &mean), 0);
    cr_assert_eq(mean, 0);
    cr_assert_eq(fikit_budget_ref_find(&ref, 25, NULL), 0);
    cr_assert_eq(fikit_budget_ref_find(&ref, 320, NULL), 0, "two of 10 and one of 300: three parts of two sizes");
    /* A part whose mean is not known (0) makes no sum. */
    ref.mean_ns[0] = 0;
    cr_assert_eq(fikit_budget_ref_find(&ref, 30, NULL), 0);
    cr_assert_eq(fikit_budget_ref_find(&ref, 310, NULL), 0);
}

/* A profile's burst records give the same reference, within the accuracy
 * of their statistics (1 %). */
Test(budget, the_reference_from_a_profile_is_the_same)
{
    enum { N = 3000 };
    static uint32_t launches[N];
    static uint64_t len[N];
    struct fikit_measure_store st;
    cr_assert_eq(fikit_measure_init(&st), 0);
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        launches[i] = i % 10 == 0 ? 7 : i % 3 == 0 ? 40 : 12;
        len[i] = launches[i] * 100000ull + (x >> 40) % 200000;
        cr_assert_eq(fikit_measure_add_burst(&st, launches[i], len[i]), 0);
    }
    fikit_measure_add_burst(&st, 99, 1); /* seen once: not judged */
    struct fikit_budget_ref a, b;
    fikit_budget_ref_build(&a, launches, len, N);
    fikit_budget_ref_from_store(&b, &st);
    cr_assert_eq(a.n, 3);
    cr_assert_eq(b.n, 3);
    for (uint32_t k = 0; k < 3; k++) {
        cr_assert_eq(a.launches[k], b.launches[k]);
        double r = (double)b.p99_ns[k] / (double)a.p99_ns[k];
        cr_assert(r > 0.99 && r < 1.01, "size %u: %llu against %llu", a.launches[k],
                  (unsigned long long)b.p99_ns[k], (unsigned long long)a.p99_ns[k]);
        double m = (double)b.mean_ns[k] / (double)a.mean_ns[k];
        cr_assert(m > 0.999 && m < 1.001, "size %u: mean %llu against %llu", a.launches[k],
                  (unsigned long long)b.mean_ns[k], (unsigned long long)a.mean_ns[k]);
    }
    cr_assert_eq(fikit_budget_ref_find(&b, 99, NULL), 0);
    double t = (double)b.all_p99_ns / (double)a.all_p99_ns;
    cr_assert(t > 0.99 && t < 1.01, "every size together: %llu against %llu", (unsigned long long)b.all_p99_ns,
              (unsigned long long)a.all_p99_ns);
    fikit_measure_destroy(&st);
}

Test(budget, a_breach_cuts_fast_and_only_once_per_settling)
{
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, false, FIKIT_BUDGET_TOP);
    cr_assert_eq(b.step, FIKIT_BUDGET_TOP, "a beside task starts as configured");
    for (int i = 1; i < FIKIT_BUDGET_CUT_BREAKS; i++)
        cr_assert_eq(burst(&b, REF * 2), FIKIT_BUDGET_KEEP, "%d breaks in the window may be the p99's own", i);
    cr_assert_eq(burst(&b, REF * 2), FIKIT_BUDGET_CUT, "%d cut", FIKIT_BUDGET_CUT_BREAKS);
    cr_assert_eq(b.step, FIKIT_BUDGET_TOP - 1, "from the top, one step: the whole device at rest goes first");
    now_ns += 9 * MS; /* the old step's queue drained */
    for (int i = 1; i < FIKIT_BUDGET_CUT_BREAKS; i++)
        burst(&b, REF * 2);
    cr_assert_eq(burst(&b, REF * 2), FIKIT_BUDGET_CUT);
    cr_assert_eq(b.step, (FIKIT_BUDGET_TOP - 1) / 2, "below the top, by half");
    /* A burst that started before the old step's queue (8 ms) drained is
     * not held against the new step. */
    uint64_t start = now_ns + MS;
    now_ns = start + REF * 3;
    cr_assert_eq(fikit_budget_note_burst(&b, start, now_ns, REF, 0, 100000, false), FIKIT_BUDGET_IGNORED);
    cr_assert_eq(b.step, (FIKIT_BUDGET_TOP - 1) / 2);
    /* Breaking on at the new step: down to waiting in a few bursts. */
    int cuts = 0;
    for (int i = 0; i < 20 * FIKIT_BUDGET_CUT_BREAKS && b.step > 0; i++)
        cuts += burst(&b, REF * 2) == FIKIT_BUDGET_CUT;
    cr_assert_eq(b.step, 0);
    cr_assert_leq(cuts, 4, "halving: log2 of the ladder");
}

Test(budget, recovery_climbs_one_step_per_window_well_inside)
{
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, false, FIKIT_BUDGET_TOP);
    for (int i = 0; i < FIKIT_BUDGET_CUT_BREAKS; i++)
        burst(&b, REF * 2);
    int after_cut = b.step;
    /* Well inside: one step per FIKIT_BUDGET_GROW bursts, doubled into the
     * step it was cut from. */
    uint64_t bursts = 0;
    while (b.step < FIKIT_BUDGET_TOP && bursts < 100000) {
        burst(&b, REF * 8 / 10);
        bursts++;
    }
    cr_assert_eq(b.step, FIKIT_BUDGET_TOP);
    uint64_t steps = FIKIT_BUDGET_TOP - after_cut;
    cr_assert_geq(bursts, steps * FIKIT_BUDGET_GROW + FIKIT_BUDGET_GROW, "slow: the cut step costs twice");
    cr_assert_leq(bursts, steps * FIKIT_BUDGET_GROW + FIKIT_BUDGET_GROW + steps,
                  "and no slower (a burst lost to settling per step at most)");
}

Test(budget, near_the_budget_holds_the_step)
{
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, false, FIKIT_BUDGET_GAPS_TOP);
    int start = b.step;
    /* Within the budget but near it (1.08 > 1.05), now and then: it stays. */
    for (int i = 0; i < 20 * FIKIT_BUDGET_GROW; i++)
        cr_assert_neq(burst(&b, i % 50 == 0 ? REF * 108 / 100 : REF / 2), FIKIT_BUDGET_CLIMB);
    cr_assert_eq(b.step, start, "near the budget holds the step (hysteresis)");
    cr_assert_eq(b.cuts, 0);
    /* Rarer than the p99 (1 in 200): it climbs. */
    for (int i = 0; i < 4 * FIKIT_BUDGET_GROW; i++)
        burst(&b, i % 200 == 0 ? REF * 108 / 100 : REF / 2);
    cr_assert_gt(b.step, start);
}

Test(budget, oscillation_is_bounded_by_the_backoff)
{
    /* Steps 8 and up break the budget in 1 burst of 50 (2 %), below they
     * never do: the controller must settle under 8 and try 8 ever more
     * rarely. */
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, false, FIKIT_BUDGET_TOP);
    struct plant p = {.breaks_from = 8, .every = 50, .slow = 1.5};
    uint64_t n = 200000, at_or_above = 0, at[FIKIT_BUDGET_STEPS] = {0};
    for (uint64_t i = 0; i < n; i++) {
        at_or_above += b.step >= 8;
        at[b.step]++;
        burst(&b, plant_len(&p, b.step));
    }
    int most = 0;
    for (int s = 0; s < FIKIT_BUDGET_STEPS; s++)
        if (at[s] > at[most])
            most = s;
    /* Each return to 8 costs a cut; with the backoff capped at 64 windows of
     * FIKIT_BUDGET_GROW, at most n / (GROW << 6) returns after the first
     * few, each found in about 100 bursts (2 breaks at 2 %). */
    uint64_t bound = n / ((uint64_t)FIKIT_BUDGET_GROW << FIKIT_BUDGET_BACKOFF_MAX) + FIKIT_BUDGET_BACKOFF_MAX + 3;
    cr_assert_leq(b.cuts, bound, "%llu cuts, bound %llu", (unsigned long long)b.cuts, (unsigned long long)bound);
    cr_assert_lt(at_or_above, n / 20, "the breaking steps are a small part of the time (%llu)",
                 (unsigned long long)at_or_above);
    cr_assert_eq(most, 7, "it spends most bursts on the highest step that keeps the budget");
    cr_assert_gt(at[7], n * 3 / 4);
}

Test(budget, a_budget_the_device_cannot_give_leaves_the_job_waiting)
{
    /* Every burst breaks the budget whatever the lower task does (the
     * substrate's own cost): the controller goes to step 0, says so, and
     * goes no further. */
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, false, FIKIT_BUDGET_GAPS_TOP);
    cr_assert_eq(b.step, 4, "a gaps task starts at max_queued_us");
    for (int i = 0; i < 2000; i++)
        burst(&b, REF * 13 / 10);
    cr_assert_eq(b.step, 0);
    cr_assert(b.unmeetable);
    cr_assert_eq(b.climbs, 0);
    /* The device frees up: it climbs again and the flag goes. */
    for (int i = 0; i < 20 * FIKIT_BUDGET_GROW && b.step < 1; i++)
        burst(&b, REF / 2);
    cr_assert_eq(b.step, 1);
    cr_assert_not(b.unmeetable);
}

Test(budget, a_service_slower_than_its_reference_is_judged_by_its_quiet_bursts)
{
    /* The service runs 1.3x slower than when its reference was recorded,
     * whatever runs below it (on an H100 its p99 alone moved from 4.8 to
     * 14.0 ms between runs): every burst is 1.17 REF. Judged against the
     * reference alone, that is a budget the device cannot give; its quiet
     * bursts say it is the service's own pace, and the controller climbs
     * back once it knows. */
    struct fikit_budget blind, paced;
    fikit_budget_init(&blind, 1.10, false, FIKIT_BUDGET_TOP);
    fikit_budget_init(&paced, 1.10, false, FIKIT_BUDGET_TOP);
    cr_assert_eq(paced.pace_ppm, 1000000, "the pace is the reference's until quiet bursts say otherwise");
    for (int i = 0; i < 40 * FIKIT_BUDGET_GROW; i++) {
        burst_q(&blind, REF * 117 / 100, false);
        burst_q(&paced, REF * 117 / 100, true);
    }
    cr_assert_eq(blind.step, 0);
    cr_assert(blind.unmeetable, "without quiet bursts: unmeetable, the job waits");
    cr_assert_eq(paced.pace_ppm, 1170000, "the pace: the quiet bursts' p99 against the reference");
    cr_assert_eq(paced.step, FIKIT_BUDGET_TOP, "judged against its pace, the service keeps its budget: all the way up");
    cr_assert_not(paced.unmeetable);
    cr_assert_lt(paced.last_slowdown_ppm, 1010000, "a burst is reported against alone now: %u ppm",
                 paced.last_slowdown_ppm);
}

Test(budget, quiet_bursts_do_not_excuse_what_the_tasks_below_cost)
{
    /* Quiet bursts at 0.8 REF; one burst in 20, with work of the job in
     * flight, at 1.5 REF: they break the budget and cut, as against the
     * reference alone. */
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, false, FIKIT_BUDGET_TOP);
    for (int i = 0; i < 40 * FIKIT_BUDGET_GROW; i++)
        burst_q(&b, i % 20 == 0 ? REF * 3 / 2 : REF * 8 / 10, i % 20 != 0);
    cr_assert_eq(b.pace_ppm, 1000000, "faster than its reference: judged against the reference");
    cr_assert_eq(b.step, 0, "5 %% of bursts over the budget: down to waiting");
    /* A service now faster than its reference is held to the reference,
     * not more strictly: the budget is what the operator stated of it. */
    struct fikit_budget f;
    fikit_budget_init(&f, 1.10, false, FIKIT_BUDGET_TOP);
    for (int i = 0; i < 40 * FIKIT_BUDGET_GROW; i++)
        burst_q(&f, i % 20 == 0 ? REF * 9 / 10 : REF * 6 / 10, i % 20 != 0);
    cr_assert_eq(f.pace_ppm, 1000000);
    cr_assert_eq(f.step, FIKIT_BUDGET_TOP);
}

Test(budget, the_pace_is_bounded)
{
    /* A service 5x slower than its reference with nothing below it: fikit
     * takes no more than FIKIT_BUDGET_PACE_MAX from quiet bursts; beyond,
     * the budget is as unmeetable as before. */
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, false, FIKIT_BUDGET_TOP);
    for (int i = 0; i < 40 * FIKIT_BUDGET_GROW; i++)
        burst_q(&b, REF * 5, true);
    cr_assert_eq(b.pace_ppm, (uint32_t)(FIKIT_BUDGET_PACE_MAX * 1e6));
    cr_assert_eq(b.step, 0);
    cr_assert(b.unmeetable);
    struct fikit_budget fast;
    fikit_budget_init(&fast, 1.10, false, FIKIT_BUDGET_TOP);
    for (int i = 0; i < 40 * FIKIT_BUDGET_GROW; i++)
        burst_q(&fast, REF / 10, true);
    cr_assert_eq(fast.pace_ppm, 1000000, "never below the reference's");
}

Test(budget, a_gaps_task_never_climbs_to_beside)
{
    struct fikit_budget b;
    fikit_budget_init(&b, 1.25, false, fikit_budget_top_step(false));
    for (int i = 0; i < 100000; i++)
        burst(&b, REF / 2);
    cr_assert_eq(b.step, FIKIT_BUDGET_GAPS_TOP);
    cr_assert_eq(b.cuts, 0);
}

Test(budget, the_budget_is_judged_against_its_own_value)
{
    /* 1.2x alone breaks 1.10 and keeps 1.25. */
    struct fikit_budget tight, loose;
    fikit_budget_init(&tight, 1.10, false, FIKIT_BUDGET_TOP);
    fikit_budget_init(&loose, 1.25, false, FIKIT_BUDGET_TOP);
    for (int i = 0; i < 10; i++) {
        burst(&tight, REF * 12 / 10);
        burst(&loose, REF * 12 / 10);
    }
    cr_assert_lt(tight.step, FIKIT_BUDGET_TOP);
    cr_assert_eq(loose.step, FIKIT_BUDGET_TOP);
    cr_assert_eq(loose.last_slowdown_ppm, 1200000);
    cr_assert_eq(loose.broken, 0);
    cr_assert_eq(tight.broken, 10);
}

Test(budget, a_device_steers_each_task_by_the_budgets_above_it)
{
    struct fikit_budget_set set;
    fikit_budget_set_init(&set);
    struct fikit_lower_knobs k;
    struct fikit_budget_ref ref = {.n = 1, .launches = {20}, .p99_ns = {REF}};
    fikit_budget_set_add(&set, 0, 0, false, 1.10, false, &ref); /* the service: bursts of 20 launches */
    fikit_budget_set_add(&set, 1, 9, false, 0, false, NULL);   /* a job sharing gaps */
    fikit_budget_set_knobs(&set, 1, 100000, 0, &k);
    cr_assert_eq(k.mode, FIKIT_LOWER_GAPS);
    cr_assert_eq(k.inflight_ns, 100000, "as configured to start");
    cr_assert_eq(set.b[0].top, FIKIT_BUDGET_GAPS_TOP, "nothing below runs beside");
    fikit_budget_set_knobs(&set, 0, 100000, 0, &k);
    cr_assert_eq(k.mode, FIKIT_LOWER_FREE, "nothing budgeted above the service");

    /* A beside job registers: the service's controller may climb to beside. */
    fikit_budget_set_add(&set, 2, 9, true, 0, false, NULL);
    cr_assert_eq(set.b[0].top, FIKIT_BUDGET_TOP);
    fikit_budget_set_knobs(&set, 2, 100000, 70, &k);
    cr_assert_eq(k.mode, FIKIT_LOWER_BESIDE);
    cr_assert_eq(k.sm_pct, 70);
    cr_assert_eq(k.flags, FIKIT_KNOB_WHOLE_AT_REST, "at the top: the whole device while the service rests");
    fikit_budget_set_knobs(&set, 1, 100000, 0, &k);
    cr_assert_eq(k.mode, FIKIT_LOWER_GAPS, "a gaps task never goes beside");
    cr_assert_eq(k.inflight_ns, 400000, "at the gaps' top");
    /* Its launches cannot be confined: it shares gaps, the service's
     * controller climbs no higher than gaps; and back. */
    fikit_budget_set_beside(&set, 2, false);
    cr_assert_eq(set.b[0].top, FIKIT_BUDGET_GAPS_TOP);
    fikit_budget_set_knobs(&set, 2, 100000, 70, &k);
    cr_assert_eq(k.mode, FIKIT_LOWER_GAPS);
    fikit_budget_set_beside(&set, 2, true);
    cr_assert_eq(set.b[0].top, FIKIT_BUDGET_TOP);

    /* The service breaks its budget: both lower tasks are cut (the beside
     * one first loses the whole device at rest, then half its steps). */
    uint64_t t = 0;
    for (int cut = 0; cut < 2; cut++) {
        for (int i = 0; i < FIKIT_BUDGET_CUT_BREAKS; i++) {
            cr_assert_eq(fikit_budget_set_burst(&set, 0, t, t + 2 * REF, 21, 100000, false), FIKIT_BUDGET_IGNORED,
                         "a size never seen alone");
            fikit_budget_set_burst(&set, 0, t, t + 2 * REF, 20, 100000, false);
            t += 2 * REF;
        }
        t += 10 * MS; /* the step's queue drains */
    }
    fikit_budget_set_knobs(&set, 2, 100000, 70, &k);
    cr_assert_eq(k.mode, FIKIT_LOWER_GAPS);
    cr_assert_eq(k.inflight_ns, 400000);

    /* Its profile grew (the client publishes it again after each save): the
     * controller keeps its step and its record, and judges by the new p99. */
    int step = set.b[0].step;
    uint64_t cuts = set.b[0].cuts;
    struct fikit_budget_ref grown = {.n = 2, .launches = {20, 21}, .p99_ns = {2 * REF, REF}};
    fikit_budget_set_ref(&set, 0, 1.10, false, &grown);
    cr_assert_eq(set.b[0].step, step, "a new reference is no restart");
    cr_assert_eq(set.b[0].cuts, cuts);
    cr_assert_neq(fikit_budget_set_burst(&set, 0, t, t + 2 * REF, 21, 100000, false), FIKIT_BUDGET_IGNORED,
                  "a size in the new reference is judged");
    /* A task not steered yet starts with its first reference. */
    fikit_budget_set_add(&set, 4, 1, false, 1.2, false, NULL);
    fikit_budget_set_ref(&set, 4, 1.2, false, &grown);
    cr_assert(set.steered & (1ull << 4));
    fikit_budget_set_drop(&set, 4);

    /* A level-5 task with a budget of its own, never measured: nothing. */
    fikit_budget_set_add(&set, 3, 5, false, 1.5, false, NULL);
    cr_assert_eq(fikit_budget_set_burst(&set, 3, t, t + REF, 20, 100000, false), FIKIT_BUDGET_IGNORED);
    fikit_budget_set_knobs(&set, 3, 100000, 0, &k);
    cr_assert_eq(k.mode, FIKIT_LOWER_GAPS, "steered by the service above it");

    /* The service leaves: its lower tasks are free. */
    fikit_budget_set_drop(&set, 0);
    fikit_budget_set_knobs(&set, 2, 100000, 70, &k);
    cr_assert_eq(k.mode, FIKIT_LOWER_FREE);
}

/* What a task reports in its slot: fikitd reads each burst once, in order,
 * counts what the ring overwrote before it read it and what is not a burst,
 * and takes a reference only whole and valid. */
Test(bursts, the_ring_is_read_once_in_order_and_checked)
{
    static struct fikit_bursts b;
    memset(&b, 0, sizeof b);
    uint64_t tail = 0, lost = 0, now = 1000 * MS;
    struct fikit_burst out[FIKIT_BURSTS_RING];
    for (uint32_t i = 1; i <= 10; i++)
        fikit_bursts_put(&b, &(struct fikit_burst){.start_ns = i * MS, .end_ns = i * MS + 500000, .launches = i});
    cr_assert_eq(fikit_bursts_take(&b, &tail, now, out, 4, &lost), 4, "at most max at once");
    cr_assert_eq(out[0].launches, 1);
    cr_assert_eq(out[3].launches, 4);
    cr_assert_eq(fikit_bursts_take(&b, &tail, now, out, FIKIT_BURSTS_RING, &lost), 6);
    cr_assert_eq(out[5].launches, 10);
    /* Quiet or not, as the client wrote it. */
    fikit_bursts_put(&b, &(struct fikit_burst){.start_ns = MS, .end_ns = 2 * MS, .launches = 2,
                                                .flags = FIKIT_BURST_QUIET});
    cr_assert_eq(fikit_bursts_take(&b, &tail, now, out, FIKIT_BURSTS_RING, &lost), 1);
    cr_assert_eq(out[0].flags, FIKIT_BURST_QUIET);
    cr_assert_eq(fikit_bursts_take(&b, &tail, now, out, FIKIT_BURSTS_RING, &lost), 0, "each once");
    cr_assert_eq(lost, 0);
    cr_assert_eq(atomic_load(&b.read), 11, "fikitd says how far it read");
    /* Not bursts: no launches, an end before the start, a minute and more,
     * an end far ahead of now. */
    fikit_bursts_put(&b, &(struct fikit_burst){.start_ns = MS, .end_ns = 2 * MS, .launches = 0});
    fikit_bursts_put(&b, &(struct fikit_burst){.start_ns = 3 * MS, .end_ns = 2 * MS, .launches = 1});
    fikit_bursts_put(&b, &(struct fikit_burst){.start_ns = 1, .end_ns = FIKIT_BURST_MAX_NS + 2, .launches = 1});
    fikit_bursts_put(&b, &(struct fikit_burst){.start_ns = now, .end_ns = now + 2000 * MS, .launches = 1});
    fikit_bursts_put(&b, &(struct fikit_burst){.start_ns = now - MS, .end_ns = now, .launches = 3});
    cr_assert_eq(fikit_bursts_take(&b, &tail, now, out, FIKIT_BURSTS_RING, &lost), 1);
    cr_assert_eq(out[0].launches, 3);
    cr_assert_eq(lost, 4);
    /* A reader a ring and more behind: the overwritten ones are lost. */
    for (uint32_t i = 0; i < FIKIT_BURSTS_RING + 10; i++)
        fikit_bursts_put(&b, &(struct fikit_burst){.start_ns = MS, .end_ns = 2 * MS, .launches = 100 + i});
    lost = 0;
    cr_assert_eq(fikit_bursts_take(&b, &tail, now, out, FIKIT_BURSTS_RING, &lost), FIKIT_BURSTS_RING);
    cr_assert_eq(lost, 10);
    cr_assert_eq(out[0].launches, 110, "the oldest still in the ring first");
    /* The writer is told to ring fikitd's bell once, as half the ring goes unread. */
    int bells = 0;
    for (uint32_t i = 0; i < FIKIT_BURSTS_RING; i++)
        bells += fikit_bursts_put(&b, &(struct fikit_burst){.start_ns = MS, .end_ns = 2 * MS, .launches = 1});
    cr_assert_eq(bells, 1);
    fikit_bursts_take(&b, &tail, now, out, FIKIT_BURSTS_RING, &lost);
    /* A head written back by a task: read again from there, nothing invented. */
    atomic_store(&b.head, 3);
    cr_assert_eq(fikit_bursts_take(&b, &tail, now, out, FIKIT_BURSTS_RING, &lost), 0);
    cr_assert_eq(tail, 3);
}

Test(bursts, a_reference_is_taken_when_it_changed_and_only_if_valid)
{
    static struct fikit_bursts b;
    memset(&b, 0, sizeof b);
    struct fikit_budget_ref ref = {
        .n = 2, .launches = {4, 9}, .p99_ns = {MS, 3 * MS}, .mean_ns = {MS / 2, 0}, .all_p99_ns = 3 * MS}, got;
    uint64_t seen = 0;
    cr_assert_not(fikit_bursts_take_ref(&b, &seen, &got), "none published");
    fikit_bursts_put_ref(&b, &ref);
    cr_assert(fikit_bursts_take_ref(&b, &seen, &got));
    cr_assert_eq(got.n, 2);
    cr_assert_eq(got.p99_ns[1], 3 * MS);
    cr_assert_eq(got.mean_ns[0], MS / 2, "the mean comes with it");
    cr_assert_eq(got.all_p99_ns, 3 * MS, "and the tail of every size");
    cr_assert_not(fikit_bursts_take_ref(&b, &seen, &got), "unchanged: not taken again");
    struct fikit_budget_ref bad[] = {
        {.n = FIKIT_BUDGET_REF_SIZES + 1},
        {.n = 2, .launches = {9, 4}, .p99_ns = {MS, MS}},       /* not ascending */
        {.n = 1, .launches = {0}, .p99_ns = {MS}},              /* no launches */
        {.n = 1, .launches = {4}, .p99_ns = {0}},               /* no length */
        {.n = 1, .launches = {4}, .p99_ns = {FIKIT_BURST_MAX_NS + 1}},
        {.n = 1, .launches = {4}, .p99_ns = {MS}, .mean_ns = {FIKIT_BURST_MAX_NS + 1}}, /* a mean no burst has */
        {.n = 1, .launches = {4}, .p99_ns = {MS}, .all_p99_ns = FIKIT_BURST_MAX_NS + 1},  /* nor a tail */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fikit_bursts_put_ref(&b, &bad[i]);
        cr_assert_not(fikit_bursts_take_ref(&b, &seen, &got), "invalid reference %zu taken", i);
    }
    /* Being written (odd sequence): not taken until whole. */
    atomic_store(&b.ref_seq, atomic_load(&b.ref_seq) + 1);
    cr_assert_not(fikit_bursts_take_ref(&b, &seen, &got));
    fikit_bursts_put_ref(&b, &ref);
    cr_assert(fikit_bursts_take_ref(&b, &seen, &got));
}

/* A burst of len_ns after an idle gap of gap_ns. */
static enum fikit_budget_action burst_after(struct fikit_budget *b, uint64_t gap_ns, uint64_t len_ns)
{
    now_ns += gap_ns;
    uint64_t start = now_ns;
    now_ns += len_ns;
    return fikit_budget_note_burst(b, start, now_ns, REF, 0, 100000, false);
}

Test(budget, a_budget_on_requests_leaves_bursts_less_the_busier_the_task)
{
    /* Requests queue behind slower bursts: at a busy fraction u a burst may
     * take 1 + (B - 1)(1 - u) of its reference. */
    cr_assert_float_eq(fikit_budget_of_bursts(1.10, 0.0), 1.10, 1e-9);
    cr_assert_float_eq(fikit_budget_of_bursts(1.10, 0.5), 1.05, 1e-9);
    cr_assert_float_eq(fikit_budget_of_bursts(1.10, 0.75), 1.025, 1e-9);
    cr_assert_float_eq(fikit_budget_of_bursts(1.10, 1.0), 1.0, 1e-9);
    cr_assert_float_eq(fikit_budget_of_bursts(1.10, 1.5), 1.0, 1e-9, "a load is at most 1");
    cr_assert_float_eq(fikit_budget_of_bursts(1.25, -1), 1.25, 1e-9);

    /* Bursts 1.08x their reference at half load, in pairs whose second
     * request waited for the first (it starts 100 us after the first's
     * end): within 1.10 as bursts, over it as requests; at a tenth of the
     * load, within it either way. */
    struct fikit_budget busy, bursts, light;
    fikit_budget_init(&busy, 1.10, true, FIKIT_BUDGET_TOP);
    fikit_budget_init(&bursts, 1.10, false, FIKIT_BUDGET_TOP);
    fikit_budget_init(&light, 1.10, true, FIKIT_BUDGET_TOP);
    uint64_t len = REF * 108 / 100;
    for (int i = 0; i < FIKIT_BUDGET_LOAD_MIN - 1; i++) {
        burst_after(&busy, i % 2 ? 100 * US : 2 * len, len);
        cr_assert_eq(busy.burst_budget_ppm, 1100000, "burst %d: too few bursts for a load: the budget as stated", i);
    }
    for (int i = 0; i < 3 * FIKIT_BUDGET_LOAD_BURSTS; i++)
        burst_after(&busy, i % 2 ? 2 * len : 100 * US, len);
    for (int i = 0; i < 3 * FIKIT_BUDGET_LOAD_BURSTS; i++)
        burst_after(&bursts, i % 2 ? 2 * len : 100 * US, len);
    for (int i = 0; i < 3 * FIKIT_BUDGET_LOAD_BURSTS; i++)
        burst_after(&light, 9 * len, len);
    cr_assert(busy.load_ppm > 495000 && busy.load_ppm < 505000, "load %u ppm", busy.load_ppm);
    cr_assert(busy.burst_budget_ppm > 1049000 && busy.burst_budget_ppm < 1051000, "%u", busy.burst_budget_ppm);
    cr_assert_lt(busy.step, FIKIT_BUDGET_TOP, "1.08x breaks 1.05: cut");
    cr_assert_gt(busy.broken, 0);
    cr_assert_eq(bursts.burst_budget_ppm, 1100000, "a budget of bursts does not move with the load");
    cr_assert_eq(bursts.broken, 0);
    cr_assert(light.load_ppm > 95000 && light.load_ppm < 105000, "load %u ppm", light.load_ppm);
    cr_assert_eq(light.broken, 0, "1.08x within 1.09");
    cr_assert_eq(light.step, FIKIT_BUDGET_TOP);

    /* The same load with every request from rest (each burst starts a
     * burst's length after the last ended): no request waited behind a
     * slower one, so each is judged by what its delay to the requests
     * behind may be, 1 + 0.1 / (1 - 0.5), and the body (queued bursts
     * only) is empty. */
    cr_assert_float_eq(fikit_budget_of_heads(1.10, 0.0), 1.10, 1e-9);
    cr_assert_float_eq(fikit_budget_of_heads(1.10, 0.5), 1.20, 1e-9);
    cr_assert_float_eq(fikit_budget_of_heads(1.10, 0.75), 1.40, 1e-9);
    cr_assert_float_eq(fikit_budget_of_heads(1.10, 0.95), 1.40, 1e-9, "the load counted up to 0.75");
    struct fikit_budget rest;
    fikit_budget_init(&rest, 1.10, true, FIKIT_BUDGET_TOP);
    for (int i = 0; i < 3 * FIKIT_BUDGET_LOAD_BURSTS; i++)
        burst_after(&rest, len, len);
    cr_assert(rest.load_ppm > 495000 && rest.load_ppm < 505000, "load %u ppm", rest.load_ppm);
    cr_assert(rest.head_budget_ppm > 1198000 && rest.head_budget_ppm < 1202000, "%u", rest.head_budget_ppm);
    cr_assert_eq(rest.broken, 0, "1.08x from rest: within 1.20");
    cr_assert_eq(rest.step, FIKIT_BUDGET_TOP);
    cr_assert_eq(rest.body_ppm, 0, "nothing queued: no body");
}

Test(budget, the_load_is_the_last_bursts_busy_fraction)
{
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, true, FIKIT_BUDGET_TOP);
    for (int i = 0; i < 4 * FIKIT_BUDGET_LOAD_BURSTS; i++)
        burst_after(&b, REF, REF);
    cr_assert(b.load_ppm > 495000 && b.load_ppm < 505000, "load %u ppm", b.load_ppm);
    /* The service goes quiet for a while: within two buckets of bursts the
     * load is the new one; the pause itself counts as idle meanwhile. */
    for (int i = 0; i < 2 * FIKIT_BUDGET_LOAD_BURSTS; i++)
        burst_after(&b, 3 * REF, REF);
    cr_assert(b.load_ppm > 245000 && b.load_ppm < 255000, "load %u ppm", b.load_ppm);
    now_ns += 1000 * REF;
    burst_after(&b, 3 * REF, REF);
    cr_assert_lt(b.load_ppm, 200000, "a long pause counts: load %u ppm", b.load_ppm);
    /* A burst that ends before it starts is ignored, its load unchanged. */
    uint32_t load = b.load_ppm;
    cr_assert_eq(fikit_budget_note_burst(&b, now_ns, now_ns - 1, REF, 0, 100000, false), FIKIT_BUDGET_IGNORED);
    cr_assert_eq(b.load_ppm, load);
}

/* A burst of len_ns judged against REF at the tail and mean_ns on average. */
static enum fikit_budget_action burst_m(struct fikit_budget *b, uint64_t len_ns, uint64_t mean_ns)
{
    now_ns += 10 * MS;
    uint64_t start = now_ns;
    now_ns += len_ns;
    return fikit_budget_note_burst(b, start, now_ns, REF, mean_ns, 100000, false);
}

Test(budget, a_slower_body_cuts_though_no_burst_breaks_the_tail)
{
    /* Bursts of 2 ms alone on average (a wide distribution: its p99 REF is
     * 5 ms) now take 2.4 ms: 1.2x in the middle, no burst near the tail. */
    struct fikit_budget b, tail_only;
    fikit_budget_init(&b, 1.10, false, FIKIT_BUDGET_TOP);
    fikit_budget_init(&tail_only, 1.10, false, FIKIT_BUDGET_TOP);
    for (int i = 0; i < FIKIT_BUDGET_BODY_BURSTS - 1; i++) {
        cr_assert_eq(burst_m(&b, 2400000, 2 * MS), FIKIT_BUDGET_KEEP, "burst %d: too few for a mean", i);
        burst_m(&tail_only, 2400000, 0);
    }
    cr_assert_eq(b.body_ppm, 0);
    cr_assert_eq(burst_m(&b, 2400000, 2 * MS), FIKIT_BUDGET_CUT, "the body at 1.2x breaks 1.10");
    cr_assert_eq(b.broken, 0, "no burst broke it at the tail");
    for (int i = 0; i < 4 * FIKIT_BUDGET_GROW; i++)
        burst_m(&tail_only, 2400000, 0);
    cr_assert_eq(tail_only.step, FIKIT_BUDGET_TOP, "without the mean, nothing is seen");
    cr_assert_eq(tail_only.cuts, 0);

    /* A body within the hysteresis (1.02x) climbs back; one at 1.07x, within
     * the budget but not well inside it, holds the step. */
    struct fikit_budget ok, near;
    fikit_budget_init(&ok, 1.10, false, FIKIT_BUDGET_GAPS_TOP);
    fikit_budget_init(&near, 1.10, false, FIKIT_BUDGET_GAPS_TOP);
    ok.step = near.step = 2;
    for (int i = 0; i < 2 * FIKIT_BUDGET_GROW; i++) {
        burst_m(&ok, 2040000, 2 * MS);
        burst_m(&near, 2140000, 2 * MS);
    }
    cr_assert_gt(ok.step, 2);
    cr_assert_eq(near.step, 2);
    cr_assert_eq(near.cuts, 0);
    cr_assert(near.body_ppm > 1065000 && near.body_ppm < 1075000, "%u", near.body_ppm);
}

/* Heads slowed as a rule: every request arrives to an idle service (each
 * burst starts its own length after the last ended, load 0.5) and takes
 * 1.15x alone's mean, far inside what a head may take at the tail (2.3 ms
 * against a p99 of 5 ms, x 1.20). Each busy period grows, which the queue
 * pays at its rate: the body holds heads too, and 1.15x is over what a
 * queued burst may take (1.05), so it cuts; 1.03x does not. */
Test(budget, heads_slowed_as_a_rule_cut_through_the_body)
{
    struct fikit_budget slow, fine;
    fikit_budget_init(&slow, 1.10, true, FIKIT_BUDGET_TOP);
    fikit_budget_init(&fine, 1.10, true, FIKIT_BUDGET_TOP);
    struct fikit_budget *each[2] = {&slow, &fine};
    const uint64_t len[2] = {2300 * US, 2060 * US};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3 * FIKIT_BUDGET_BODY_BURSTS; i++) {
            now_ns += len[k];
            uint64_t start = now_ns;
            now_ns += len[k];
            fikit_budget_note_burst(each[k], start, now_ns, REF, 2 * MS, 100000, false);
        }
    cr_assert(slow.load_ppm > 495000 && slow.load_ppm < 505000, "load %u ppm", slow.load_ppm);
    cr_assert_eq(slow.broken, 0, "no head broke its tail budget");
    cr_assert_gt(slow.cuts, 0, "the body at 1.15x breaks 1.05");
    cr_assert_lt(slow.step, FIKIT_BUDGET_TOP);
    cr_assert_eq(fine.broken, 0);
    cr_assert_eq(fine.cuts, 0, "the body at 1.03x is within 1.05");
    cr_assert(fine.body_ppm > 1025000 && fine.body_ppm < 1035000, "%u", fine.body_ppm);
}

/* Pairs of requests, the second queued behind the first (it starts 100 us
 * after the first ends), an idle gap after each pair for the load; bursts
 * of 2.9 ms against a mean alone of 3 ms, every 32nd (the queued one of
 * every 16th pair) of 5.5 ms:
 * 1.10x the p99 alone (REF), over what a queued burst may take at load 0.25
 * (1.075) and within a head's (1.133), in 3 % of the bursts. */
static void queued_pairs(struct fikit_budget *b, uint64_t idle_ns)
{
    for (int i = 0; i < 4 * FIKIT_BUDGET_WINDOW; i++) {
        bool slow = i % 16 == 15;
        now_ns += idle_ns;
        uint64_t start = now_ns;
        now_ns += 2900 * US;
        fikit_budget_note_burst(b, start, now_ns, REF, 3 * MS, 100000, false);
        now_ns += 100 * US;
        start = now_ns;
        now_ns += slow ? 5500 * US : 2900 * US;
        fikit_budget_note_burst(b, start, now_ns, REF, 3 * MS, 100000, false);
    }
}

Test(budget, a_queued_burst_is_judged_as_a_head_where_busy_periods_are_short)
{
    struct fikit_budget light, busy;
    fikit_budget_init(&light, 1.10, true, FIKIT_BUDGET_TOP);
    fikit_budget_init(&busy, 1.10, true, FIKIT_BUDGET_TOP);
    queued_pairs(&light, 17300 * US); /* load 0.25 */
    queued_pairs(&busy, 1850 * US);   /* load 0.75 */
    cr_assert(light.load_ppm > 240000 && light.load_ppm < 270000, "load %u ppm", light.load_ppm);
    cr_assert(light.body_ppm > 985000 && light.body_ppm < 1005000, "the body well inside: %u", light.body_ppm);
    cr_assert_eq(light.cuts, 0, "1.10x within a head's 1.13 at load 0.25");
    cr_assert_leq(light.broken, 4, "only before the body was known (128 bursts): %llu",
                  (unsigned long long)light.broken);
    cr_assert_eq(light.step, FIKIT_BUDGET_TOP);
    cr_assert(busy.load_ppm > 730000 && busy.load_ppm < 770000, "load %u ppm", busy.load_ppm);
    cr_assert_gt(busy.cuts, 0, "at load 0.75 busy periods are long: judged as queued (1.025), 3 %% break it");
    cr_assert_lt(busy.step, FIKIT_BUDGET_TOP);

    /* At load 0.25 with a body not surely inside the climbing line (every
     * burst 1.05x alone's mean): queued bursts are judged as queued. */
    struct fikit_budget wide;
    fikit_budget_init(&wide, 1.10, true, FIKIT_BUDGET_TOP);
    for (int i = 0; i < 4 * FIKIT_BUDGET_WINDOW; i++) {
        now_ns += 17300 * US;
        uint64_t start = now_ns;
        now_ns += 3150 * US;
        fikit_budget_note_burst(&wide, start, now_ns, REF, 3 * MS, 100000, false);
        now_ns += 100 * US;
        start = now_ns;
        now_ns += i % 16 == 15 ? 5500 * US : 3150 * US;
        fikit_budget_note_burst(&wide, start, now_ns, REF, 3 * MS, 100000, false);
    }
    cr_assert_gt(wide.cuts, 0, "a body of 1.05x: the queued bursts' 1.10x breaks 1.075");
}

/* Requests from rest at load 0.5, each of a short size whose p99 alone is
 * REF (5 ms), every 32nd slow_ns long; the service's p99 of every size is
 * tail_ns. */
static struct fikit_budget short_heads(uint64_t tail_ns, uint64_t slow_ns)
{
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, true, FIKIT_BUDGET_TOP);
    b.tail_ns = tail_ns;
    for (int i = 0; i < 4 * FIKIT_BUDGET_WINDOW; i++) {
        uint64_t len = i % 32 == 31 ? slow_ns : 2 * MS;
        now_ns += len;
        uint64_t start = now_ns;
        now_ns += len;
        fikit_budget_note_burst(&b, start, now_ns, REF, 0, 100000, false);
    }
    return b;
}

/* A head's excess is held to a share of the requests' p99, the tail of
 * every size: a short request from rest may be delayed by as much as a long
 * one. At load 0.5 that share is 0.2 (fikit_budget_of_heads): against a
 * tail of 20 ms a short head may take 4 ms more than its own p99 of 5 ms. */
Test(budget, a_short_head_may_take_the_excess_of_the_services_tail)
{
    struct fikit_budget wide = short_heads(20 * MS, 8 * MS), own = short_heads(0, 8 * MS),
                        over = short_heads(20 * MS, 10 * MS);
    cr_assert(wide.load_ppm > 490000 && wide.load_ppm < 510000, "load %u ppm", wide.load_ppm);
    cr_assert_eq(wide.broken, 0, "8 ms: 3 ms over its p99, within 4");
    cr_assert_eq(wide.step, FIKIT_BUDGET_TOP);
    cr_assert_gt(own.cuts, 0, "judged against its own p99 alone: 1.6x breaks 1.20 in 3 %% of bursts");
    cr_assert_gt(over.cuts, 0, "10 ms: 5 ms over, more than 4");
}

/* The same for a queued burst, at load 0.6 (judged as queued: 1.04): in
 * pairs whose second request waited for the first, the second of every 16th
 * pair 5.5 ms, 1.10x its own size's p99 of 5 ms but 0.5 ms over it, within
 * 0.04 of a tail of 20 ms. */
static struct fikit_budget short_queued(uint64_t tail_ns)
{
    struct fikit_budget b;
    fikit_budget_init(&b, 1.10, true, FIKIT_BUDGET_TOP);
    b.tail_ns = tail_ns;
    for (int i = 0; i < 4 * FIKIT_BUDGET_WINDOW; i++) {
        now_ns += 2600 * US;
        uint64_t start = now_ns;
        now_ns += 2 * MS;
        fikit_budget_note_burst(&b, start, now_ns, REF, 0, 100000, false);
        now_ns += 100 * US;
        start = now_ns;
        now_ns += i % 16 == 15 ? 5500 * US : 2 * MS;
        fikit_budget_note_burst(&b, start, now_ns, REF, 0, 100000, false);
    }
    return b;
}

Test(budget, a_short_queued_burst_is_judged_against_the_services_tail_too)
{
    struct fikit_budget wide = short_queued(20 * MS), own = short_queued(0);
    cr_assert(wide.load_ppm > 560000 && wide.load_ppm < 640000, "load %u ppm", wide.load_ppm);
    cr_assert_eq(wide.broken, 0, "0.5 ms over: within 0.04 of 20 ms");
    cr_assert_eq(wide.step, FIKIT_BUDGET_TOP);
    cr_assert_gt(own.cuts, 0, "against its own p99: 1.10x breaks 1.04 in 3 %% of bursts");
}
