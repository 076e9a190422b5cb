/* fikitd's arbiter between passes (core/arbiter.c): it sleeps until shortly
 * before the scheduler's next decision and spins the rest, polls while a
 * launch could open room sooner, spins throughout only while something is
 * held under spin_us = always, never spins with no decision to come, and
 * nudges a held thread only if it would wake too late by itself. And a held
 * launch's thread (fikit_hold_plan): it spins while fikitd decides about
 * the launch just posted, sleeps until shortly before the next decision
 * and spins through it, and looks for fikitd at least every 20 ms. */
#include "core/arbiter.h"

#include <criterion/criterion.h>

#define US 1000ull
#define MS (1000 * US)

static struct fikit_arbiter_plan plan(uint64_t now, uint64_t wake, bool queued, bool watch, bool tracing,
                                      uint64_t spin, uint64_t poll)
{
    struct fikit_arbiter_plan p;
    fikit_arbiter_plan(now, wake, queued, watch, tracing, spin, poll, &p);
    return p;
}

Test(arbiter, sleeps_until_spin_us_before_the_decision_then_spins)
{
    struct fikit_arbiter_plan p = plan(MS, 3 * MS, true, false, false, 50 * US, 50 * US);
    cr_assert_eq(p.how, FIKIT_ARBITER_SLEEP);
    cr_assert_eq(p.timeout_ns, 2 * MS - 50 * US);
    p = plan(MS, MS + 40 * US, true, false, false, 50 * US, 50 * US);
    cr_assert_eq(p.how, FIKIT_ARBITER_SPIN);
    cr_assert_eq(p.until_ns, MS + 40 * US);
}

Test(arbiter, a_due_decision_is_decided_at_once)
{
    cr_assert_eq(plan(MS, MS, true, false, false, 50 * US, 50 * US).how, FIKIT_ARBITER_AGAIN);
    cr_assert_eq(plan(MS, MS - 1, true, true, false, 0, 0).how, FIKIT_ARBITER_AGAIN);
}

Test(arbiter, watching_launches_polls_by_sleeping)
{
    struct fikit_arbiter_plan p = plan(MS, 10 * MS, true, true, false, 50 * US, 50 * US);
    cr_assert_eq(p.how, FIKIT_ARBITER_SLEEP);
    cr_assert_eq(p.timeout_ns, 50 * US);
    cr_assert_eq(plan(MS, 10 * MS, true, true, false, 50 * US, 0).how, FIKIT_ARBITER_AGAIN,
                 "poll_us = 0 passes again at once");
}

Test(arbiter, tracing_drains_the_rings_at_least_every_10_ms)
{
    struct fikit_arbiter_plan p = plan(MS, UINT64_MAX, false, false, true, 50 * US, 50 * US);
    cr_assert_eq(p.how, FIKIT_ARBITER_SLEEP);
    cr_assert_eq(p.timeout_ns, FIKIT_ARBITER_TRACE_DRAIN_NS);
}

Test(arbiter, spin_always_spins_while_held_and_sleeps_when_nothing_is)
{
    struct fikit_arbiter_plan p = plan(MS, 5 * MS, true, true, false, FIKIT_SPIN_ALWAYS, 50 * US);
    cr_assert_eq(p.how, FIKIT_ARBITER_SPIN);
    cr_assert_eq(p.until_ns, MS + 50 * US, "spins to the next poll");
    p = plan(MS, UINT64_MAX, true, false, false, FIKIT_SPIN_ALWAYS, 50 * US);
    cr_assert_eq(p.how, FIKIT_ARBITER_SPIN);
    cr_assert_eq(p.until_ns, UINT64_MAX, "no overflow past the end of time");
    p = plan(MS, UINT64_MAX, false, false, false, FIKIT_SPIN_ALWAYS, 50 * US);
    cr_assert_eq(p.how, FIKIT_ARBITER_SLEEP, "nothing held, no decision to come: no core spent");
    cr_assert_eq(p.timeout_ns, UINT64_MAX);
    p = plan(MS, UINT64_MAX, false, false, false, 50 * US, 50 * US);
    cr_assert_eq(p.how, FIKIT_ARBITER_SLEEP);
    cr_assert_eq(p.timeout_ns, UINT64_MAX);
}

Test(arbiter, nudges_only_threads_that_would_wake_too_late)
{
    uint64_t decision = 10 * MS, spin = 50 * US;
    cr_assert(fikit_arbiter_nudge_due(20 * MS, decision, spin));
    cr_assert_not(fikit_arbiter_nudge_due(decision - spin, decision, spin));
    cr_assert_not(fikit_arbiter_nudge_due(decision - spin + FIKIT_NUDGE_SLACK_NS, decision, spin));
    cr_assert(fikit_arbiter_nudge_due(decision - spin + FIKIT_NUDGE_SLACK_NS + 1, decision, spin));
    cr_assert_not(fikit_arbiter_nudge_due(UINT64_MAX, UINT64_MAX, 0), "no overflow");
}

Test(arbiter, spin_auto_spins_on_big_hosts_but_not_on_small_ones_or_cpu_devices)
{
    cr_assert_eq(fikit_spin_auto_ns(FIKIT_SPIN_AUTO_MIN_CPUS, false), FIKIT_SPIN_ALWAYS);
    cr_assert_eq(fikit_spin_auto_ns(FIKIT_SPIN_AUTO_MIN_CPUS - 1, false), FIKIT_SPIN_AUTO_FEW_CPUS_NS);
    cr_assert_eq(fikit_spin_auto_ns(64, true), FIKIT_SPIN_AUTO_FEW_CPUS_NS);
}

static struct fikit_hold_plan hold(uint64_t now, uint64_t posted, bool undecided, uint64_t spin, uint64_t due)
{
    struct fikit_hold_plan p;
    fikit_hold_plan(now, posted, undecided, spin, due, 60 * US, &p);
    return p;
}

Test(hold, spins_while_fikitd_decides_about_the_launch_just_posted)
{
    cr_assert_eq(hold(MS + 100 * US, MS, true, 50 * US, 0).how, FIKIT_HOLD_TURN);
    struct fikit_hold_plan p = hold(MS + FIKIT_DECISION_SPIN_NS, MS, true, 50 * US, 0);
    cr_assert_eq(p.how, FIKIT_HOLD_SLEEP, "no longer than FIKIT_DECISION_SPIN_NS");
    cr_assert_eq(p.timeout_ns, FIKIT_HOLD_CHECK_NS, "with no decision said: until it looks for fikitd");
    cr_assert_eq(hold(MS + 100 * US, MS, false, 50 * US, 0).how, FIKIT_HOLD_SLEEP, "decided: held");
    cr_assert_eq(hold(MS + 100 * US, MS, true, 0, 0).how, FIKIT_HOLD_SLEEP, "spin_us = 0 never spins");
}

Test(hold, sleeps_until_the_spin_and_a_sleeps_lateness_before_the_decision_then_spins_through_it)
{
    /* The decision at 10 ms, spin 50 us, a timed sleep 60 us late. */
    struct fikit_hold_plan p = hold(2 * MS, MS, false, 50 * US, 10 * MS);
    cr_assert_eq(p.how, FIKIT_HOLD_SLEEP);
    cr_assert_eq(p.timeout_ns, 8 * MS - 110 * US);
    p = hold(10 * MS - 100 * US, MS, false, 50 * US, 10 * MS);
    cr_assert_eq(p.how, FIKIT_HOLD_SPIN);
    cr_assert_eq(p.until_ns, 10 * MS + 50 * US, "through the decision, by the spin");
    cr_assert(!p.check_daemon);
    p = hold(10 * MS + 51 * US, MS, false, 50 * US, 10 * MS);
    cr_assert_eq(p.how, FIKIT_HOLD_SLEEP, "a decision long past (its daemon gone) is slept on");
    cr_assert_eq(p.timeout_ns, FIKIT_HOLD_CHECK_NS);
    p = hold(2 * MS, MS, false, 50 * US, 100 * MS);
    cr_assert_eq(p.timeout_ns, FIKIT_HOLD_CHECK_NS, "a far decision: it looks for fikitd meanwhile");
}

Test(hold, spin_always_spins_the_whole_hold_looking_for_fikitd_every_20_ms)
{
    struct fikit_hold_plan p = hold(2 * MS, MS, false, FIKIT_SPIN_ALWAYS, 0);
    cr_assert_eq(p.how, FIKIT_HOLD_SPIN);
    cr_assert_eq(p.until_ns, 2 * MS + FIKIT_HOLD_CHECK_NS);
    cr_assert(p.check_daemon);
    p = hold(UINT64_MAX - 1, MS, true, FIKIT_SPIN_ALWAYS, 0);
    cr_assert_eq(p.until_ns, UINT64_MAX, "no overflow past the end of time");
}
