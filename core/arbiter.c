#include "core/arbiter.h"

uint64_t fikit_spin_auto_ns(long online_cpus, bool device_on_host)
{
    return online_cpus >= FIKIT_SPIN_AUTO_MIN_CPUS && !device_on_host ? FIKIT_SPIN_ALWAYS
                                                                      : FIKIT_SPIN_AUTO_FEW_CPUS_NS;
}

static uint64_t add_sat(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void fikit_arbiter_plan(uint64_t now, uint64_t wake_ns, bool queued, bool watch, bool tracing,
                        uint64_t spin_ns, uint64_t poll_ns, struct fikit_arbiter_plan *out)
{
    out->how = FIKIT_ARBITER_AGAIN;
    out->until_ns = now;
    out->timeout_ns = 0;
    uint64_t until_decision = wake_ns == UINT64_MAX ? UINT64_MAX : wake_ns > now ? wake_ns - now : 0;
    if (until_decision == 0)
        return; /* the decision is due: decide */
    if (spin_ns == FIKIT_SPIN_ALWAYS && queued) {
        /* While anything is held, poll without sleeping. */
        out->how = FIKIT_ARBITER_SPIN;
        out->until_ns = add_sat(now, watch && poll_ns < until_decision ? poll_ns : until_decision);
        return;
    }
    /* Only a decision that will come is worth spinning for: with none
     * (nothing held), spin_us = always would otherwise spin until a client
     * rings, a core for nothing. */
    if (until_decision != UINT64_MAX && until_decision <= spin_ns) {
        out->how = FIKIT_ARBITER_SPIN;
        out->until_ns = wake_ns;
        return;
    }
    uint64_t timeout = until_decision == UINT64_MAX ? UINT64_MAX : until_decision - spin_ns;
    if (watch && timeout > poll_ns)
        timeout = poll_ns;
    if (tracing && timeout > FIKIT_ARBITER_TRACE_DRAIN_NS)
        timeout = FIKIT_ARBITER_TRACE_DRAIN_NS;
    if (timeout == 0)
        return; /* poll_us = 0: pass again at once */
    out->how = FIKIT_ARBITER_SLEEP;
    out->timeout_ns = timeout;
}

bool fikit_arbiter_nudge_due(uint64_t sleep_until_ns, uint64_t decision_ns, uint64_t spin_ns)
{
    uint64_t spin_from = decision_ns > spin_ns ? decision_ns - spin_ns : 0;
    return sleep_until_ns > add_sat(spin_from, FIKIT_NUDGE_SLACK_NS);
}

void fikit_hold_plan(uint64_t now, uint64_t posted_ns, bool undecided, uint64_t spin_ns, uint64_t due_ns,
                     uint64_t slack_ns, struct fikit_hold_plan *out)
{
    *out = (struct fikit_hold_plan){.how = FIKIT_HOLD_TURN, .until_ns = now};
    if (spin_ns == FIKIT_SPIN_ALWAYS) {
        /* A core for the lowest grant latency: spin, looking every
         * FIKIT_HOLD_CHECK_NS whether fikitd is still there. */
        out->how = FIKIT_HOLD_SPIN;
        out->until_ns = add_sat(now, FIKIT_HOLD_CHECK_NS);
        out->check_daemon = true;
        return;
    }
    if (spin_ns && undecided && now < add_sat(posted_ns, FIKIT_DECISION_SPIN_NS))
        return; /* fikitd decides about it in the pass under way */
    uint64_t early = add_sat(spin_ns, slack_ns);
    if (spin_ns && due_ns && due_ns <= add_sat(now, early) && now <= add_sat(due_ns, spin_ns)) {
        /* Within the spin (and a timed sleep's lateness) of the decision;
         * a stale one, from a daemon that is gone, falls through to the
         * sleep that notices it. */
        out->how = FIKIT_HOLD_SPIN;
        out->until_ns = add_sat(due_ns, spin_ns);
        return;
    }
    out->how = FIKIT_HOLD_SLEEP;
    out->timeout_ns = FIKIT_HOLD_CHECK_NS;
    if (spin_ns && due_ns > add_sat(now, early) && due_ns - early - now < out->timeout_ns)
        out->timeout_ns = due_ns - early - now;
}
