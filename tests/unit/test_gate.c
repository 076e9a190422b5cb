/* The gate's mechanics (interpose/gate.c: fikit_gate_enter), in the test's
 * own process: a segment made here (fikit_shm_create, as fikitd makes it),
 * a registration of the fake backend's device (tests/unit/fake_client.h),
 * the other tasks' slots written by the test, and, for a held launch, the
 * test's own thread playing fikitd with the waiter calls fikitd makes
 * (core/shm.h). The gate reads the real clock: every state is set far from
 * any edge (gaps of seconds, busy for an hour), and what is waited for is
 * waited for on state, with generous time-outs. Checked: a launch at the
 * top level goes at once and is published; a lower launch beside a busy
 * higher level is held, its waiter posted, until fikitd grants it; a lower
 * launch into a gap takes it by compare-and-swap behind the fills already
 * there; a lower launch whose own queue is too long sleeps until it
 * drained. */
#include "core/clock.h"
#include "core/shm.h"
#include "interpose/burst.h"
#include "tests/unit/fake_client.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

static char kLow, kHigh;

static struct fikit_shm *shm;
static struct fikit_registration reg;
static struct fikit_client_device *D;

/* Our task in slot `mine` at level; a level-0 service in slot 0 (or, for a
 * task at level 0, a level-9 batch job in slot 1). Under policy fill, with
 * the idle threshold at 10 s (a task that launched within 10 s is active),
 * gap confidence 0.5, fill overhead 20 us and no bound on the queued work
 * unless a test sets one. */
static void segment(int level)
{
    fake_backend_reset();
    fake_backend_kernel(&kLow, "low", 100 * US);
    fake_backend_kernel(&kHigh, "high", 100 * US);
    cr_assert_eq(fikit_shm_local(&shm), 0);
    struct fikit_shm_header *h = shm->hdr;
    atomic_store(&h->params.policy, FIKIT_POLICY_FILL);
    atomic_store(&h->params.flags, 0);
    atomic_store(&h->params.idle_after_ns, 10000 * MS);
    atomic_store(&h->params.gap_confidence_ppm, 500000);
    atomic_store(&h->params.fill_overhead_ns, 20 * US);
    atomic_store(&h->params.max_queued_ns, 0);
    atomic_store(&h->params.spin_ns, 0);
    int mine = level == 0 ? 0 : 1, other = 1 - mine;
    int other_level = level == 0 ? 9 : 0;
    fikit_shm_local_register(shm, mine, level);
    fikit_shm_local_register(shm, other, other_level);
    reg = (struct fikit_registration){.shm = shm, .hdr = shm->hdr, .slot = shm->slots[mine], .slot_index = mine,
                                      .level = level, .generation = 1};
    D = fake_client(level, false, &reg);
    /* Both kernels measured: a fill needs a known duration. */
    fikit_predictor_set_duration(D->pred, fake_key("low"), 100 * US);
    fikit_predictor_set_duration(D->pred, fake_key("high"), 100 * US);
}

static void top_level(void) { segment(0); }
static void low_level(void) { segment(9); }

/* The level-0 service in slot 0 launched a kernel of dur at `at`, and
 * expects a gap of gap after it (0: unknown). */
static void service_launched(uint64_t at, uint64_t dur, uint64_t gap)
{
    struct fikit_gap_pred g = {{0}};
    if (gap)
        fikit_gap_pred_fixed(&g, gap);
    fikit_shm_publish_launch(shm->slots[0], at, dur, fake_key("service"), &g, 0);
}

static unsigned waiters_in(const struct fikit_shm_slot *s, uint32_t state)
{
    unsigned n = 0;
    for (int i = 0; i < FIKIT_SHM_WAITERS; i++)
        n += atomic_load(&s->waiters[i].state) == state;
    return n;
}

Test(gate, a_top_level_launch_goes_at_once_and_is_published, .init = top_level)
{
    service_launched(fikit_now_ns(), 3600000 * MS, 0); /* the level-9 job: busy for an hour */
    uint64_t t0 = fikit_now_ns();
    fake_launch(&kHigh, true);
    uint64_t t1 = fikit_now_ns();
    struct fikit_shm_launch pub;
    cr_assert(fikit_shm_read_launch(reg.slot, &pub));
    cr_assert_eq(pub.launches, 1, "published: a lower level reads it");
    cr_assert_eq(pub.last_key, fake_key("high"));
    cr_assert(pub.last_launch_ns >= t0 && pub.last_launch_ns <= t1);
    cr_assert_eq(pub.busy_until_ns, pub.last_launch_ns + 100 * US, "busy for its predicted duration");
    cr_assert_eq(atomic_load(&reg.slot->holds), 0);
    cr_assert_eq(atomic_load(&reg.slot->fills), 0);
    cr_assert_eq(atomic_load(&reg.slot->paces), 0);
    cr_assert_eq(waiters_in(reg.slot, FIKIT_WAITER_FREE), FIKIT_SHM_WAITERS, "nothing posted");
    cr_assert_eq(fikit_shm_own_busy_until(&reg.own), pub.busy_until_ns, "its own record agrees");
}

Test(gate, a_lower_launch_with_no_active_level_above_goes, .init = low_level)
{
    /* The service is registered but never launched: not active. */
    fake_launch(&kLow, true);
    cr_assert_eq(atomic_load(&reg.slot->holds), 0);
    cr_assert_eq(atomic_load(&reg.slot->fills), 0);
    cr_assert_eq(reg.own.launches, 1);
}

static atomic_bool gone;

static void *launcher(void *arg)
{
    (void)arg;
    fake_launch(&kLow, true);
    atomic_store(&gone, true);
    return NULL;
}

/* Waits (60 s at most) for a waiter of s in state; NULL if none came. */
static struct fikit_shm_waiter *wait_for_waiter(struct fikit_shm_slot *s, uint32_t state)
{
    for (int tries = 0; tries < 600000; tries++) {
        for (int i = 0; i < FIKIT_SHM_WAITERS; i++)
            if (atomic_load(&s->waiters[i].state) == state)
                return &s->waiters[i];
        usleep(100);
    }
    return NULL;
}

Test(gate, a_lower_launch_beside_a_busy_level_is_held_until_granted, .init = low_level, .timeout = 120)
{
    service_launched(fikit_now_ns(), 3600000 * MS, 0); /* busy for an hour, no gap known */
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, launcher, NULL), 0);

    /* fikitd's half: take the posted launch into the queue. */
    struct fikit_shm_waiter *w = wait_for_waiter(reg.slot, FIKIT_WAITER_POSTED);
    cr_assert_not_null(w, "the launch was posted for fikitd");
    struct fikit_shm_posted p;
    cr_assert(fikit_shm_waiter_posted(w, &p));
    cr_assert_eq(p.key, fake_key("low"));
    cr_assert_eq(p.dur_ns, 100 * US, "with its predicted duration");
    cr_assert_eq(atomic_load(&reg.slot->holds), 1);
    cr_assert(fikit_shm_waiter_queue(w));
    /* Held: whatever time passes, it does not go before the grant. */
    usleep(50 * 1000);
    cr_assert_not(atomic_load(&gone), "held until fikitd grants it");
    cr_assert_eq(__atomic_load_n(&reg.own.launches, __ATOMIC_RELAXED), 0, "not counted while held");

    uint64_t at = fikit_now_ns();
    if (fikit_shm_waiter_grant(w, FIKIT_GRANT_FIT, at))
        fikit_shm_waiter_wake(w);
    cr_assert_eq(pthread_join(t, NULL), 0);
    cr_assert(atomic_load(&gone));
    cr_assert_eq(atomic_load(&reg.slot->grants), 1);
    cr_assert_eq(atomic_load(&w->state), FIKIT_WAITER_FREE, "the waiter was given back");
    cr_assert_eq(atomic_load(&reg.holding), 0);
    cr_assert_eq(reg.own.launches, 1, "then it went");
    cr_assert_eq(atomic_load(&reg.slot->fills), 0);
}

Test(gate, a_lower_launch_fills_a_gap_behind_the_fills_there, .init = low_level)
{
    uint64_t now = fikit_now_ns();
    /* The service ran 1 ms until 1 ms ago, and pauses 4 s after it. */
    service_launched(now - 2 * MS, 1 * MS, 4000 * MS);
    /* Another client filled the gap until 300 ms from now. */
    uint64_t filled = (now + 300 * MS) & ~FIKIT_FILL_LOCK;
    atomic_store(&shm->com->fill_until_ns, filled);
    fake_launch(&kLow, true);
    cr_assert_eq(atomic_load(&reg.slot->fills), 1, "it filled the gap by itself");
    cr_assert_eq(atomic_load(&reg.slot->holds), 0, "without fikitd");
    cr_assert_eq(atomic_load(&shm->com->fill_until_ns), (filled + 100 * US + 1) & ~FIKIT_FILL_LOCK,
                 "its 100 us go behind the fill already there");
    cr_assert_eq(reg.own.launches, 1);
    /* The next one goes behind it in turn. */
    fake_launch(&kLow, true);
    cr_assert_eq(atomic_load(&reg.slot->fills), 2);
    cr_assert_eq(atomic_load(&shm->com->fill_until_ns), (filled + 200 * US + 1) & ~FIKIT_FILL_LOCK);
}

Test(gate, a_lower_launch_is_held_while_fikitd_decides, .init = low_level, .timeout = 120)
{
    /* The same gap, but fikitd holds fill_until_ns (its lock bit): the
     * compare-and-swap is not tried, the launch goes to fikitd. */
    uint64_t now = fikit_now_ns();
    service_launched(now - 2 * MS, 1 * MS, 4000 * MS);
    atomic_store(&shm->com->fill_until_ns, now | FIKIT_FILL_LOCK);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, launcher, NULL), 0);
    struct fikit_shm_waiter *w = wait_for_waiter(reg.slot, FIKIT_WAITER_POSTED);
    cr_assert_not_null(w);
    cr_assert(fikit_shm_waiter_queue(w));
    if (fikit_shm_waiter_grant(w, FIKIT_GRANT_FIT, fikit_now_ns()))
        fikit_shm_waiter_wake(w);
    cr_assert_eq(pthread_join(t, NULL), 0);
    cr_assert_eq(atomic_load(&reg.slot->fills), 0);
    cr_assert_eq(atomic_load(&reg.slot->grants), 1);
    cr_assert_eq(atomic_load(&shm->com->fill_until_ns), now | FIKIT_FILL_LOCK, "fikitd's word untouched");
}

Test(gate, pacing_sleeps_until_its_own_queue_drained, .init = low_level)
{
    /* No active level above (the service never launched), max_queued 2 ms,
     * and the task's own work queued until 40 ms from now. */
    atomic_store(&shm->hdr->params.max_queued_ns, 2 * MS);
    uint64_t now = fikit_now_ns();
    uint64_t busy = fikit_shm_own_count(&reg.own, now, 40 * MS, NULL);
    cr_assert_eq(busy, now + 40 * MS);
    fake_launch(&kLow, true);
    uint64_t after = fikit_now_ns();
    cr_assert_geq(after, busy - 2 * MS, "it went only once no more than max_queued was ahead of it");
    cr_assert_geq(atomic_load(&reg.slot->paces), 1);
    cr_assert_eq(atomic_load(&reg.slot->holds), 0);
    cr_assert_eq(atomic_load(&reg.slot->fills), 0);
    cr_assert_eq(reg.own.launches, 2, "then it was counted");
}

/* The task's bursts (interpose/burst.h): a wait that found nothing launched
 * since it began ends the open burst, which goes into the task's slot with
 * its launch count when the next one opens; a launch during the wait
 * (another thread) leaves it open, a failed wait ends nothing, a launch
 * soon after the wait continues the burst, and only a burst run while the
 * task was alone on its device goes into its profile's store. */
static void after_join(void) { usleep(3 * FIKIT_BURST_JOIN_NS / 1000); }

Test(gate, a_wait_ends_the_open_burst_and_reports_it, .init = top_level)
{
    struct fikit_bursts *b = &reg.slot->bursts;
    uint64_t t0 = fikit_now_ns();
    for (int i = 0; i < 3; i++)
        fake_launch(&kHigh, true);
    cr_assert_eq(atomic_load(&reg.slot->waited_ns), 0, "in a burst");
    fikit_burst_waited(fikit_burst_wait(), true);
    uint64_t t1 = fikit_now_ns();
    uint64_t waited = atomic_load(&reg.slot->waited_ns);
    cr_assert(waited >= t0 && waited <= t1, "the slot says when the burst ended, for the tasks below");
    fikit_burst_waited(fikit_burst_wait(), true); /* nothing launched since: ends nothing */
    cr_assert_eq(atomic_load(&reg.slot->waited_ns), waited);
    cr_assert_eq(atomic_load(&b->head), 0, "reported when the next burst opens");
    after_join();
    fake_launch(&kHigh, true);
    cr_assert_eq(atomic_load(&b->head), 1, "one burst");
    cr_assert_eq(b->ring[0].launches, 3);
    cr_assert(b->ring[0].start_ns >= t0 && b->ring[0].start_ns <= b->ring[0].end_ns && b->ring[0].end_ns <= t1);

    uint64_t seq = fikit_burst_wait();
    fake_launch(&kHigh, true); /* another thread launches while this one waits */
    fikit_burst_waited(seq, true);
    fikit_burst_waited(fikit_burst_wait(), false); /* a failed wait ends nothing */
    fikit_burst_waited(fikit_burst_wait(), true);
    uint64_t ended = fikit_now_ns();
    fake_launch(&kHigh, true);
    bool soon = fikit_now_ns() - ended < FIKIT_BURST_JOIN_NS / 2; /* a busy machine may stall us */
    fikit_burst_waited(fikit_burst_wait(), true);
    after_join();
    fake_launch(&kHigh, true);
    if (soon) {
        cr_assert_eq(atomic_load(&b->head), 2, "a launch right after the wait continued the burst");
        cr_assert_eq(b->ring[1].launches, 3, "2 launches, a wait, 1 more");
    } else {
        cr_assert_eq(atomic_load(&b->head), 3);
        cr_assert_eq(b->ring[1].launches, 2, "a launch during the wait kept the burst open");
    }
    cr_assert_eq(fikit_measure_burst_count(&D->store), 0, "beside another task: not what it takes alone");

    /* Alone on the device from the burst's start to its end: recorded. */
    fikit_burst_waited(fikit_burst_wait(), true);
    after_join();
    atomic_store(&shm->hdr->slot_mask, 1ull << reg.slot_index);
    uint64_t head = atomic_load(&b->head);
    for (int i = 0; i < 4; i++)
        fake_launch(&kHigh, true);
    fikit_burst_waited(fikit_burst_wait(), true);
    after_join();
    fake_launch(&kHigh, true);
    cr_assert_eq(atomic_load(&b->head), head + 2);
    size_t n;
    const struct fikit_burst_stats **bs = fikit_measure_sorted_bursts(&D->store, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(bs[0]->launches, 4);
    cr_assert_eq(bs[0]->len.count, 1);
    free(bs);
}

/* A launch the runtime refused (issue 38) is no launch: taken back from the
 * task's record and never traced, so neither fikitd nor a lower task waits
 * on it and fikit status does not count it. */
Test(gate, a_refused_launch_is_not_published_counted_or_traced, .init = top_level)
{
    atomic_store(&shm->hdr->trace_on, 1);
    fake_launch(&kHigh, true);
    struct fikit_shm_launch pub;
    cr_assert(fikit_shm_read_launch(reg.slot, &pub));
    cr_assert_eq(pub.launches, 1);
    uint64_t busy = pub.busy_until_ns;
    cr_assert_eq(atomic_load(&reg.slot->trace_head), 1, "the launch is traced");
    fake_launch(&kLow, false); /* the runtime refused it */
    cr_assert(fikit_shm_read_launch(reg.slot, &pub));
    cr_assert_eq(pub.launches, 1, "not counted");
    cr_assert_eq(pub.last_key, fake_key("high"), "the record is the one before it");
    cr_assert_eq(pub.busy_until_ns, busy, "no work of it predicted");
    cr_assert_eq(fikit_shm_own_busy_until(&reg.own), busy);
    cr_assert_eq(atomic_load(&reg.slot->trace_head), 1, "not traced");
    fake_launch(&kHigh, true);
    cr_assert(fikit_shm_read_launch(reg.slot, &pub));
    cr_assert_eq(pub.launches, 2);
    cr_assert_eq(atomic_load(&reg.slot->trace_head), 2);
}
