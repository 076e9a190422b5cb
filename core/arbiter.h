/* Owns: how fikitd's arbiter waits between two passes and whom it nudges,
 * as pure functions of the time and the scheduler's answer, and what
 * spin_us = auto means. fikitd/device.c does the waiting (spinning,
 * futex) that these plan; the rules are DESIGN.md "The hot path". */
#ifndef FIKIT_CORE_ARBITER_H
#define FIKIT_CORE_ARBITER_H

#include "core/clock.h"

#include <stdbool.h>
#include <stdint.h>

/* spin_ns meaning "spin for the whole hold" ([scheduler] spin_us = always). */
#define FIKIT_SPIN_ALWAYS UINT64_MAX

/* spin_us = auto: a held launch spins for its whole hold (FIKIT_SPIN_ALWAYS)
 * on a machine with at least FIKIT_SPIN_AUTO_MIN_CPUS online CPUs, and for
 * FIKIT_SPIN_AUTO_FEW_CPUS_NS around each predicted decision on a smaller
 * one or where the device computes on the host's CPUs (an OpenCL CPU
 * device), whose cores a spinning thread would take. On the H200's 16-core
 * host, spinning took the grant latency's p99 from 35 us-1.2 ms to 3-5 us
 * side by side (with 50, 70-89 % of grants found their thread asleep, and a
 * wake-up took 8-19 us at the median); on a 2-core machine a spinning core
 * slowed the service it was meant to serve. */
#define FIKIT_SPIN_AUTO_MIN_CPUS 8
#define FIKIT_SPIN_AUTO_FEW_CPUS_NS (50 * 1000ULL)
uint64_t fikit_spin_auto_ns(long online_cpus, bool device_on_host);

/* While tracing, the arbiter drains the clients' trace rings at least this
 * often. */
#define FIKIT_ARBITER_TRACE_DRAIN_NS (10 * FIKIT_NS_PER_MS)

/* The models' pass (fikit sim, fikit replay): a pass of the arbiter takes
 * fikitd about a microsecond (fikit status: pass), so the next comes no
 * sooner. Without it a model's fikitd, deciding in no time, would chase the
 * fill word that its own unlock moved on (fikit_shm_fill_unlock). */
#define FIKIT_MODEL_PASS_NS FIKIT_NS_PER_US

enum fikit_arbiter_wait {
    FIKIT_ARBITER_AGAIN = 0, /* pass again at once */
    FIKIT_ARBITER_SPIN,      /* spin until .until_ns (or a client rings) */
    FIKIT_ARBITER_SLEEP,     /* sleep .timeout_ns (UINT64_MAX: until rung) */
};

struct fikit_arbiter_plan {
    enum fikit_arbiter_wait how;
    uint64_t until_ns;
    uint64_t timeout_ns;
};

/* After a pass at now: the scheduler's next decision point wake_ns
 * (UINT64_MAX: none), whether launches are held (queued), whether a new
 * top-level launch could open room sooner (watch: poll the slots every
 * poll_ns, by sleeping), whether tracing is on, and the spin in force
 * (spin_ns: spin its last spin_ns before a decision; FIKIT_SPIN_ALWAYS: spin
 * while anything is held). A timed sleep wakes tens of microseconds late,
 * so the last spin_ns before a decision are spun. */
void fikit_arbiter_plan(uint64_t now, uint64_t wake_ns, bool queued, bool watch, bool tracing,
                        uint64_t spin_ns, uint64_t poll_ns, struct fikit_arbiter_plan *out);

/* fikitd nudges a sleeping held thread only if it would wake by itself more
 * than this after it should start spinning for the next decision. */
#define FIKIT_NUDGE_SLACK_NS (5 * FIKIT_NS_PER_US)

/* Whether a held thread that sleeps until sleep_until_ns must be woken now
 * to be spinning spin_ns before the decision at decision_ns. */
bool fikit_arbiter_nudge_due(uint64_t sleep_until_ns, uint64_t decision_ns, uint64_t spin_ns);

/* A held launch's side (interpose/gate.c's hold() carries it out). */

/* While fikitd has yet to decide about a posted launch (it was rung and
 * decides in its next pass, usually within microseconds, often by granting
 * it), its thread spins for at most this long after posting it: a sleeping
 * thread's wake-up costs tens of microseconds. */
#define FIKIT_DECISION_SPIN_NS (500 * FIKIT_NS_PER_US)

/* How long a held thread sleeps or spins at most before it looks whether
 * fikitd is still there. */
#define FIKIT_HOLD_CHECK_NS (20 * FIKIT_NS_PER_MS)

enum fikit_hold_wait {
    FIKIT_HOLD_TURN = 0, /* spin one turn, then look again */
    FIKIT_HOLD_SPIN,     /* spin until granted or .until_ns, then look again */
    FIKIT_HOLD_SLEEP,    /* sleep until granted, nudged or .timeout_ns */
};

struct fikit_hold_plan {
    enum fikit_hold_wait how;
    uint64_t until_ns;
    uint64_t timeout_ns;
    bool check_daemon;   /* a spin that ends ungranted then looks whether fikitd is there */
};

/* How a launch held since posted_ns waits at now: undecided, fikitd has
 * yet to decide about it (not taken yet, or queued by a pass not finished);
 * spin_ns the spin in force (FIKIT_SPIN_ALWAYS: spin for the whole hold);
 * due_ns when fikitd next decides (0: none said); slack_ns how late a timed
 * sleep wakes. It sleeps until shortly before the decision, then spins, so
 * the grant is seen at once rather than after a wake-up (tens to hundreds
 * of microseconds on a busy machine). */
void fikit_hold_plan(uint64_t now, uint64_t posted_ns, bool undecided, uint64_t spin_ns, uint64_t due_ns,
                     uint64_t slack_ns, struct fikit_hold_plan *out);

#endif
