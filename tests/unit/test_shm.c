/* The shared segment's lock-free pieces that clients and fikitd meet on:
 * the gap-fill mark (fikit_shm_fill_commit against fikitd's lock) and the
 * trace rings (ordering, loss, the bell that asks fikitd to drain). The
 * segment here is ordinary memory of the real layout; no daemon runs. */
#include "conf/config.h"
#include "core/admit.h"
#include "core/sched.h"
#include "core/shm.h"

#include <criterion/criterion.h>
#include <stdlib.h>

#define US 1000ull
#define MS (1000 * US)

static struct fikit_shm *seg;

static void setup(void)
{
    cr_assert_eq(fikit_shm_local(&seg), 0);
    atomic_store(&seg->hdr->daemon_state, FIKIT_DAEMON_RUNNING);
}

static void teardown(void) { fikit_shm_unmap(seg); }

/* A gap with 100 us of room at the confidence, 10 us for sure, and a
 * 30 us bound on the lower work in flight. */
static struct fikit_fill_rooms rooms(void)
{
    return (struct fikit_fill_rooms){.room = 100 * US, .sure = 10 * US, .starving = 200 * US,
                                     .max_queued_ns = 30 * US};
}

TestSuite(shm, .init = setup, .fini = teardown);

/* A launch's fill as interpose/gate.c and fikit sim make it: the fill word
 * its view saw, where fikit_admit places the work (fikit_fill_place, with
 * no fill while fikitd holds the word), then fikit_shm_fill_commit. The
 * room it took, 0 if none. */
static uint64_t fill_take(uint64_t now, const struct fikit_fill_rooms *r, uint64_t overhead, uint64_t dur)
{
    uint64_t seen = atomic_load(&seg->com->fill_until_ns), until;
    if (seen & FIKIT_FILL_LOCK)
        return 0;
    uint64_t room = fikit_fill_place(now, r, overhead, dur, seen, atomic_load(&seg->hdr->granted_until_ns), &until);
    return room && fikit_shm_fill_commit(seg, seen, until) ? room : 0;
}

Test(shm, a_fill_from_a_stale_view_is_not_taken)
{
    uint64_t now = 1000 * US;
    uint64_t seen = atomic_load(&seg->com->fill_until_ns);
    cr_assert(fikit_shm_fill_commit(seg, seen, now + 40 * US), "nobody moved it: taken");
    cr_assert_not(fikit_shm_fill_commit(seg, seen, now + 20 * US), "another fill moved it since the view");
    cr_assert_eq(atomic_load(&seg->com->fill_until_ns), now + 40 * US, "the first fill stands");
    uint64_t before = atomic_load(&seg->com->fill_until_ns);
    fikit_shm_fill_lock(seg, now);
    cr_assert_not(fikit_shm_fill_commit(seg, atomic_load(&seg->com->fill_until_ns), now + 60 * US),
                  "fikitd is deciding");
    fikit_shm_fill_unlock(seg, now);
    cr_assert_not(fikit_shm_fill_commit(seg, before, now + 60 * US), "a view from before fikitd's decision");
}

Test(shm, fill_takes_room_behind_the_work_already_in_flight)
{
    struct fikit_fill_rooms r = rooms();
    uint64_t now = 1000 * US;
    cr_assert_eq(fill_take(now, &r, 10 * US, 50 * US), 100 * US,
                 "nothing in flight: the whole room");
    uint64_t mark = atomic_load(&seg->com->fill_until_ns);
    cr_assert(mark >= now + 50 * US && mark <= now + 50 * US + 1 && !(mark & 1),
              "the mark is the fill's predicted end, kept even (the low bit is fikitd's lock)");
    cr_assert_eq(fill_take(now, &r, 10 * US, 5 * US), 0,
                 "50 us in flight, more than max_queued: only the sure 10 us, less the overhead");
    uint64_t later = now + 25 * US; /* 25 us left in flight */
    uint64_t found = fill_take(later, &r, 10 * US, 40 * US);
    cr_assert(found >= 74 * US && found <= 75 * US,
              "within the bound again: the room after the queued work (%llu ns)",
              (unsigned long long)found);
    cr_assert_geq(atomic_load(&seg->com->fill_until_ns), now + 90 * US);
}

Test(shm, fill_waits_behind_granted_work)
{
    struct fikit_fill_rooms r = rooms();
    r.max_queued_ns = 0;
    uint64_t now = 1000 * US;
    atomic_store(&seg->hdr->granted_until_ns, now + 60 * US);
    cr_assert_eq(fill_take(now, &r, 10 * US, 40 * US), 0,
                 "fikitd's grant takes 60 us of the 100: 10 + 40 do not fit in 40");
    cr_assert_eq(fill_take(now, &r, 10 * US, 30 * US), 40 * US);
    cr_assert_geq(atomic_load(&seg->com->fill_until_ns), now + 90 * US);
}

Test(shm, no_fill_while_fikitd_decides)
{
    struct fikit_fill_rooms r = rooms();
    uint64_t now = 1000 * US;
    cr_assert_neq(fill_take(now, &r, 0, 20 * US), 0);
    uint64_t before = atomic_load(&seg->com->fill_until_ns);
    cr_assert_eq(fikit_shm_fill_lock(seg, now), before, "fikitd sees what clients filled");
    cr_assert_eq(fill_take(now + 30 * US, &r, 0, 5 * US), 0,
                 "locked: the client holds instead");
    fikit_shm_fill_unlock(seg, now + 80 * US);
    cr_assert_eq(atomic_load(&seg->hdr->granted_until_ns), now + 80 * US);
    cr_assert_eq(atomic_load(&seg->com->fill_until_ns), before + 2,
                 "given back moved on, so a compare-and-swap from before the lock fails");
    cr_assert_eq(fill_take(now + 30 * US, &r, 0, 5 * US), 0,
                 "50 us of fikitd's grant ahead, more than max_queued: only the sure room");
    cr_assert_eq(fill_take(now + 55 * US, &r, 0, 80 * US), 0,
                 "75 us of room behind fikitd's grant");
    cr_assert_eq(fill_take(now + 55 * US, &r, 0, 60 * US), 75 * US);
}

/* Whether a burst of a task at level that started at start was quiet, its
 * previous burst having ended at prev_end, on a substrate that switches
 * contexts or not: as interpose/burst.c asks it. */
static bool quiet(const struct fikit_shm_commons *com, int level, uint64_t start, uint64_t prev_end, bool switches)
{
    return fikit_shm_quiet_since(com, level, fikit_quiet_since(start, prev_end, switches));
}

Test(shm, a_burst_is_quiet_while_nothing_below_it_has_work)
{
    /* Levels 0 (a service), 4 and 9 (jobs): each launch below a level
     * writes when its level's queued work ends; a burst is quiet while
     * every level below it ended its work FIKIT_QUIET_MARGIN_NS before the
     * burst began. */
    static struct fikit_shm_commons com;
    memset(&com, 0, sizeof com);
    uint64_t t = 100 * FIKIT_QUIET_MARGIN_NS;
    cr_assert(quiet(&com, 0, t, 0, false), "nothing below has launched");
    fikit_shm_note_level_busy(&com, 9, t - 3 * FIKIT_QUIET_MARGIN_NS);
    cr_assert(quiet(&com, 0, t, 0, false), "level 9's work ended before the margin");
    cr_assert_not(quiet(&com, 0, t - 2 * FIKIT_QUIET_MARGIN_NS, 0, false), "but within it of an earlier burst");
    fikit_shm_note_level_busy(&com, 9, t - 5 * FIKIT_QUIET_MARGIN_NS);
    cr_assert_eq(atomic_load(&com.level_busy_until_ns[9]), t - 3 * FIKIT_QUIET_MARGIN_NS, "the word only grows");
    fikit_shm_note_level_busy(&com, 4, t + 1);
    cr_assert_not(quiet(&com, 0, t, 0, false), "level 4 launched during it");
    cr_assert_not(quiet(&com, 3, t, 0, false));
    cr_assert(quiet(&com, 4, t, 0, false), "a level is not below itself");
    cr_assert(quiet(&com, 9, t, 0, false), "nothing is below the lowest level");
    fikit_shm_note_level_busy(&com, FIKIT_LEVELS, UINT64_MAX); /* out of range: ignored */
    fikit_shm_note_level_busy(&com, -1, UINT64_MAX);
    cr_assert(quiet(&com, 4, t, 0, false));
}

Test(shm, where_contexts_switch_a_burst_is_quiet_only_if_nothing_below_ran_since_the_previous_one)
{
    /* The previous burst ended at 50 margins, level 9's work at 90, this
     * burst began at 100: on MPS that is quiet (ended before the margin);
     * on time-slicing its first kernel paid the switch back after the job's,
     * so it is not. */
    static struct fikit_shm_commons com;
    memset(&com, 0, sizeof com);
    uint64_t m = FIKIT_QUIET_MARGIN_NS, t = 100 * m;
    fikit_shm_note_level_busy(&com, 9, 90 * m);
    cr_assert(quiet(&com, 0, t, 50 * m, false));
    cr_assert_not(quiet(&com, 0, t, 50 * m, true));
    cr_assert(quiet(&com, 0, t, 95 * m, true), "the job ran before the previous burst ended");
    cr_assert(quiet(&com, 0, t, 0, true), "no previous burst: the margin alone");
    cr_assert_eq(fikit_quiet_since(t, t - m / 2, true), t - m, "never later than the margin");
    cr_assert_eq(fikit_quiet_since(m / 2, 0, true), 0, "no wrap at the start of time");
}

Test(shm, fikitd_bounds_a_forged_fill_word)
{
    /* Every client of the device writes the commons: one an hour ahead
     * would keep lower tasks out of every gap. fikitd reads it as at most
     * FIKIT_FILL_AHEAD_MAX_NS ahead, and puts that back (locked). */
    uint64_t now = 1000 * US;
    atomic_store(&seg->com->fill_until_ns, now + 3600ull * 1000 * 1000 * 1000);
    uint64_t seen = fikit_shm_fill_lock(seg, now);
    cr_assert_eq(seen, (now + FIKIT_FILL_AHEAD_MAX_NS) & ~FIKIT_FILL_LOCK);
    cr_assert_eq(atomic_load(&seg->com->fill_until_ns), seen | FIKIT_FILL_LOCK, "put back, still locked");
    fikit_shm_fill_unlock(seg, now);
    cr_assert_eq(atomic_load(&seg->com->fill_until_ns), seen + 2);
    /* One within the bound is taken as it is. */
    atomic_store(&seg->com->fill_until_ns, now + 50 * US);
    cr_assert_eq(fikit_shm_fill_lock(seg, now), now + 50 * US);
}

static void write_event(struct fikit_shm_slot *slot, uint64_t key)
{
    struct fikit_trace_event e = {.t_ns = key, .key = key, .type = FIKIT_TRACE_LAUNCH};
    fikit_shm_trace(seg, slot, &e);
}

Test(shm, trace_ring_reads_in_order_and_knows_what_is_not_written)
{
    struct fikit_shm_slot *slot = seg->slots[0];
    write_event(slot, 7);
    atomic_store(&seg->hdr->trace_on, 1u);
    write_event(slot, 8);
    write_event(slot, 9);
    struct fikit_trace_event e;
    cr_assert_eq(atomic_load(&slot->trace_head), 2, "nothing is written while tracing is off");
    cr_assert_eq(fikit_shm_trace_read(slot, 0, &e), FIKIT_TRACE_READ);
    cr_assert_eq(e.key, 8);
    cr_assert_eq(fikit_shm_trace_read(slot, 1, &e), FIKIT_TRACE_READ);
    cr_assert_eq(e.key, 9);
    cr_assert_eq(fikit_shm_trace_read(slot, 2, &e), FIKIT_TRACE_NOT_YET);
}

Test(shm, trace_ring_rings_the_bell_from_half_full)
{
    struct fikit_shm_slot *slot = seg->slots[3];
    atomic_store(&seg->hdr->trace_on, 1u);
    uint32_t bell = atomic_load(&seg->com->arbiter_futex);
    for (int i = 0; i < FIKIT_SHM_TRACE / 2 - 1; i++)
        write_event(slot, (uint64_t)i);
    cr_assert_eq(atomic_load(&seg->com->arbiter_futex), bell, "below half a ring: fikitd's timer will do");
    write_event(slot, 0);
    cr_assert_eq(atomic_load(&seg->com->arbiter_futex), bell + 1, "half full: fikitd is woken");
    for (int i = 0; i < FIKIT_SHM_TRACE / 8; i++)
        write_event(slot, 0);
    cr_assert_eq(atomic_load(&seg->com->arbiter_futex), bell + 2, "and again an eighth later");
    atomic_store(&slot->trace_tail, atomic_load(&slot->trace_head));
    for (int i = 0; i < FIKIT_SHM_TRACE / 8; i++)
        write_event(slot, 0);
    cr_assert_eq(atomic_load(&seg->com->arbiter_futex), bell + 2, "once read, quiet again");
}

Test(shm, trace_ring_overwrites_only_without_a_daemon_to_wait_for)
{
    struct fikit_shm_slot *slot = seg->slots[1];
    atomic_store(&seg->hdr->trace_on, 1u);
    atomic_store(&seg->hdr->daemon_state, FIKIT_DAEMON_STOPPED); /* nobody will read: no wait */
    for (uint64_t i = 0; i < FIKIT_SHM_TRACE + 3; i++)
        write_event(slot, 100 + i);
    struct fikit_trace_event e;
    cr_assert_eq(fikit_shm_trace_read(slot, 0, &e), FIKIT_TRACE_OVERWRITTEN);
    cr_assert_eq(fikit_shm_trace_read(slot, 2, &e), FIKIT_TRACE_OVERWRITTEN);
    cr_assert_eq(fikit_shm_trace_read(slot, 3, &e), FIKIT_TRACE_READ, "the oldest still there");
    cr_assert_eq(e.key, 103);
    cr_assert_eq(fikit_shm_trace_read(slot, FIKIT_SHM_TRACE + 2, &e), FIKIT_TRACE_READ);
    cr_assert_eq(e.key, 100 + FIKIT_SHM_TRACE + 2);
}

/* One writer per entry: the number says who is on it. A writer a lap behind
 * (descheduled between taking its index and writing) must not put back an
 * older event over a newer one, which fikitd would then wait on for good. */
Test(shm, trace_entry_is_taken_by_one_writer_and_never_by_a_lap_behind)
{
    struct fikit_shm_slot *slot = seg->slots[2];
    atomic_store(&seg->hdr->trace_on, 1u);
    struct fikit_trace_event *e = &slot->trace[5];
    struct fikit_trace_event got;

    /* Event 5 being written: not yet there; event 5 - ring's turn is gone. */
    __atomic_store_n(&e->seq, 6 | FIKIT_TRACE_BUSY, __ATOMIC_RELAXED);
    cr_assert_eq(fikit_shm_trace_read(slot, 5, &got), FIKIT_TRACE_NOT_YET, "its writer is on it");
    __atomic_store_n(&e->seq, (6 + FIKIT_SHM_TRACE) | FIKIT_TRACE_BUSY, __ATOMIC_RELAXED);
    cr_assert_eq(fikit_shm_trace_read(slot, 5, &got), FIKIT_TRACE_OVERWRITTEN,
                 "a later lap's writer is on it: event 5 is gone");

    /* The entry holds the next lap's event; the writer of event 5 comes late. */
    __atomic_store_n(&e->seq, 6 + FIKIT_SHM_TRACE, __ATOMIC_RELAXED);
    e->key = 42;
    atomic_store(&slot->trace_head, 5);
    atomic_store(&slot->trace_tail, 5);
    write_event(slot, 9);
    cr_assert_eq(__atomic_load_n(&e->seq, __ATOMIC_RELAXED), 6 + FIKIT_SHM_TRACE,
                 "the late writer dropped its event");
    cr_assert_eq(e->key, 42, "and left the newer one as it was");
    cr_assert_eq(fikit_shm_trace_read(slot, 5 + FIKIT_SHM_TRACE, &got), FIKIT_TRACE_READ);
    cr_assert_eq(fikit_shm_trace_read(slot, 5, &got), FIKIT_TRACE_OVERWRITTEN, "counted lost");

    /* An entry left busy for good (a scribbled slot): the writer gives up
     * after its bounded wait instead of hanging the launch. */
    struct fikit_trace_event *f = &slot->trace[6];
    __atomic_store_n(&f->seq, 1 | FIKIT_TRACE_BUSY, __ATOMIC_RELAXED);
    atomic_store(&slot->trace_head, 6);
    write_event(slot, 10);
    cr_assert_eq(__atomic_load_n(&f->seq, __ATOMIC_RELAXED), 1 | FIKIT_TRACE_BUSY);
    cr_assert_eq(atomic_load(&slot->trace_head), 7, "the writer went on");
}

/* A launch the runtime refused (issue 38): the task takes it back. Its count
 * and its predicted work come off, the record before it is published again
 * under a new seqlock number, which fikitd takes (the count one less is
 * plausible), so nothing waits on work that never ran; a launch counted
 * only in the task's record is taken back there; only the latest update
 * can be taken back, and only once. */
Test(shm, a_wait_that_found_the_work_done_empties_the_own_queue)
{
    /* Two launches predicted 5 ms each from t: the task's queue ends at
     * t + 10 ms, and its pacing would wait for that. Its program waited at
     * t + 3 ms and found its work done (kernels shorter than predicted):
     * the queue it knows of is empty; what it published stays until its
     * next launch, which counts from now. */
    struct fikit_shm *shm;
    cr_assert_eq(fikit_shm_local(&shm), 0);
    static struct fikit_shm_own own;
    memset(&own, 0, sizeof own);
    struct fikit_gap_pred gap = {0};
    uint64_t t = 1000 * MS;
    fikit_shm_publish_own(shm->slots[0], &own, t, 5 * MS, 1, &gap, 0, NULL);
    cr_assert_eq(fikit_shm_publish_own(shm->slots[0], &own, t, 5 * MS, 1, &gap, 0, NULL), t + 10 * MS);
    fikit_shm_own_drained(&own, t + 3 * MS);
    cr_assert_eq(fikit_shm_own_busy_until(&own), t + 3 * MS);
    cr_assert_eq(shm->slots[0]->pub.busy_until_ns, t + 10 * MS, "the others see what it published");
    fikit_shm_own_drained(&own, t + 4 * MS);
    cr_assert_eq(fikit_shm_own_busy_until(&own), t + 3 * MS, "never later than it was");
    cr_assert_eq(fikit_shm_publish_own(shm->slots[0], &own, t + 5 * MS, MS, 1, &gap, 0, NULL), t + 6 * MS);
    cr_assert_eq(shm->slots[0]->pub.busy_until_ns, t + 6 * MS);
    fikit_shm_unmap(shm);
}

Test(shm, a_refused_launch_is_taken_back, .timeout = 10)
{
    struct fikit_shm_slot *slot = seg->slots[3];
    struct fikit_shm_own own = {0};
    struct fikit_gap_pred gap = {0};
    struct fikit_sched s;
    struct fikit_sched_params p;
    fikit_sched_params_default(&p);
    fikit_sched_init(&s, &p);
    cr_assert_eq(fikit_sched_add_task(&s, 3, 1234, "serve", 0), 0);
    uint64_t now = 1000 * US, seen = 0, t1, t2;
    fikit_shm_publish_own(slot, &own, now, 50 * US, 7, &gap, 0, &t1);
    fikit_shm_publish_own(slot, &own, now + 10 * US, 20 * US, 8, &gap, 0, &t2);
    cr_assert_eq(fikit_shm_take_record(slot, &s, 3, now + 11 * US, &seen), 0);
    cr_assert_eq(fikit_sched_task(&s, 3)->launches, 2, "fikitd saw the second launch");
    cr_assert_not(fikit_shm_withdraw_own(slot, &own, t1, now + 12 * US), "not the latest update");
    cr_assert(fikit_shm_withdraw_own(slot, &own, t2, now + 12 * US));
    cr_assert_not(fikit_shm_withdraw_own(slot, &own, t2, now + 12 * US), "taken back once");
    struct fikit_shm_launch pub;
    cr_assert(fikit_shm_read_launch(slot, &pub));
    cr_assert_eq(pub.launches, 1);
    cr_assert_eq(pub.last_key, 7, "the record before it");
    cr_assert_eq(pub.busy_until_ns, now + 50 * US, "its work as before the refused launch");
    cr_assert_eq(fikit_shm_own_busy_until(&own), now + 50 * US);
    cr_assert_eq(fikit_shm_take_record(slot, &s, 3, now + 13 * US, &seen), 0, "a new record, one launch less");
    cr_assert_eq(fikit_sched_task(&s, 3)->launches, 1);
    cr_assert_eq(fikit_sched_task(&s, 3)->busy_until_ns, now + 50 * US, "fikitd waits on no refused work");
    /* Counted only in its record (nobody watched it): taken back there. */
    uint64_t t3;
    fikit_shm_own_count(&own, now + 20 * US, 500 * US, &t3);
    cr_assert(fikit_shm_withdraw_own(slot, &own, t3, now + 21 * US));
    cr_assert_eq(own.launches, 1);
    cr_assert_eq(fikit_shm_own_busy_until(&own), now + 50 * US);
    cr_assert(fikit_shm_read_launch(slot, &pub));
    cr_assert_eq(pub.launches, 1, "the slot was not written for it");
}

/* Another program wrote the task's slot: its publication lock left taken,
 * the seqlock's number left odd, a busy time an hour ahead, the count put
 * back. The task publishes from its own record: at once (fikit_shm_publish_
 * launch would spin on the lock for good), a readable record, its own busy
 * time and count. */
Test(shm, a_task_publishes_from_its_own_record_whatever_its_slot_says, .timeout = 10)
{
    struct fikit_shm_slot *slot = seg->slots[3];
    struct fikit_shm_own own = {0};
    struct fikit_gap_pred gap = {0};
    uint64_t now = 1000 * US;
    cr_assert_eq(fikit_shm_publish_own(slot, &own, now, 50 * US, 7, &gap, 0, NULL), now + 50 * US);
    atomic_store(&slot->pub_lock, 1);
    atomic_store(&slot->pub_seq, 41);
    slot->pub.busy_until_ns = now + 3600ull * 1000 * 1000 * 1000;
    slot->pub.launches = 0;
    uint64_t busy = fikit_shm_publish_own(slot, &own, now + 10 * US, 20 * US, 8, &gap, 0, NULL);
    cr_assert_eq(busy, now + 70 * US, "its own queue: 50 us, then 20 us more");
    cr_assert_eq(fikit_shm_own_busy_until(&own), now + 70 * US);
    struct fikit_shm_launch pub;
    cr_assert(fikit_shm_read_launch(slot, &pub), "the record is readable again");
    cr_assert_eq(pub.launches, 2);
    cr_assert_eq(pub.busy_until_ns, now + 70 * US);
    cr_assert_eq(pub.last_key, 8);
}
