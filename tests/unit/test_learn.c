/* The learner and the predictor (interpose/learn.c, core/predict.c), fed by
 * the gate (interpose/gate.c) from the fake backend's script
 * (tests/unit/fake_backend.h), in the test's own process: scripted
 * durations and gaps come out as the predictions; a marker that fails
 * (begin, end, duration, gap, as the fake injects by count) drops what it
 * timed and nothing else; a duration that is not ready yet (-EAGAIN) is
 * asked again later; a kernel or device the backend cannot identify. */
#include "core/predict.h"
#include "interpose/burst.h"
#include "interpose/learn.h"
#include "tests/unit/fake_client.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <unistd.h>

/* Kernel handles: any distinct pointers. */
static char kA, kB, kC, kD;

static struct fikit_client_device *D;

static void script(void)
{
    fake_backend_reset();
    fake_backend_kernel(&kA, "kA", 100 * US);
    fake_backend_kernel(&kB, "kB", 250 * US);
    fake_backend_kernel(&kC, "kC", 40 * US);
    fake_backend_kernel(&kD, "kD", 7 * US);
    fake_backend_gap("kA", "kB", 30 * US);
    fake_backend_gap("kB", "kC", 70 * US);
    fake_backend_gap("kC", "kD", 15 * US);
    fake_backend_gap("kC", "kA", 5 * US);
    fake_backend_default_gap(1 * US);
    D = fake_client(9, true, NULL);
}

static void drain(void) { fikit_learn_drain(&fikit_client.learner, false); }

/* The predicted gap after kernel key preceded by prev: its median and p99
 * must both be ns (a scripted gap is always the same); 0 when unknown. */
static uint64_t gap_after(uint64_t prev, uint64_t key)
{
    struct fikit_gap_pred g;
    if (!fikit_predict_gap(D->pred, prev, key, &g))
        return 0;
    cr_assert_eq(g.q_ns[2], g.q_ns[FIKIT_GAP_POINTS - 1], "a constant gap has one value at every point");
    return g.q_ns[2];
}

static bool gap_measured(uint64_t prev, uint64_t key) { return fikit_measure_gap(&D->store, prev, key) != NULL; }

static uint64_t predicted(const char *name) { return fikit_predict_duration(D->pred, fake_key(name)); }

Test(learn, scripted_durations_and_gaps_become_the_predictions, .init = script)
{
    for (int round = 0; round < 10; round++) {
        fake_launch(&kA, true);
        fake_launch(&kB, true);
        fake_launch(&kC, true);
    }
    drain();
    cr_assert_eq(fikit_learn_room(&fikit_client.learner), FIKIT_LEARN_QUEUE, "everything was learned");
    cr_assert_eq(predicted("kA"), 100 * US);
    cr_assert_eq(predicted("kB"), 250 * US);
    cr_assert_eq(predicted("kC"), 40 * US);
    cr_assert_eq(predicted("kD"), 0, "never launched: unknown");
    uint64_t a = fake_key("kA"), b = fake_key("kB"), c = fake_key("kC");
    cr_assert_eq(fikit_measure_kernel(&D->store, a)->duration.count, 10);
    /* The gap after a kernel is keyed by the kernel and the one before it. */
    cr_assert_eq(gap_after(FIKIT_KEY_NONE, a), 30 * US, "the first kA of the process, then kB");
    cr_assert_eq(gap_after(c, a), 30 * US);
    cr_assert_eq(gap_after(a, b), 70 * US);
    cr_assert_eq(gap_after(b, c), 5 * US, "kC then the next round's kA");
    cr_assert_eq(fikit_measure_gap(&D->store, b, c)->gap.count, 9, "the last kC has no successor yet");
    cr_assert_eq(atomic_load(&D->idle_after_ns), 70 * US, "the longest gap learned");
    cr_assert(D->dirty);
    /* Each marker is released once, except the last launch's, which the
     * learner keeps for the gap after it. */
    cr_assert_eq(fake_backend_calls(FAKE_MARKER_BEGIN), 30);
    cr_assert_eq(fake_backend_markers_live(), 1);
    cr_assert_eq(fake_backend_double_releases(), 0);
    cr_assert_eq(fake_backend_calls(FAKE_KERNEL_NAME), 3, "names are asked once per kernel handle");
}

Test(learn, an_overlap_is_a_gap_of_zero, .init = script)
{
    fake_backend_gap("kA", "kD", -20 * (int64_t)US);
    fake_launch(&kA, true);
    fake_launch(&kD, true);
    drain();
    const struct fikit_gap_stats *g = fikit_measure_gap(&D->store, FIKIT_KEY_NONE, fake_key("kA"));
    cr_assert_not_null(g, "an overlap is measured");
    cr_assert_eq(g->gap.count, 1);
    cr_assert_eq(g->gap.max, 0, "as no idle time at all");
}

Test(learn, a_failed_duration_drops_its_sample_only, .init = script)
{
    fake_backend_fail(FAKE_MARKER_DURATION, 2, EIO, false); /* kB's */
    fake_launch(&kA, true);
    fake_launch(&kB, true);
    fake_launch(&kC, true);
    fake_launch(&kD, true);
    drain();
    cr_assert_eq(fake_backend_failures(FAKE_MARKER_DURATION), 1);
    cr_assert_eq(predicted("kA"), 100 * US);
    cr_assert_eq(predicted("kB"), 0, "its one sample was dropped");
    cr_assert_eq(predicted("kC"), 40 * US);
    cr_assert_eq(predicted("kD"), 7 * US);
    uint64_t a = fake_key("kA"), b = fake_key("kB"), c = fake_key("kC");
    /* The gap after kA ends at kB, whose start is unknown now, and kC does
     * not follow kA: neither is measured, nor mixed into another pair. */
    cr_assert_not(gap_measured(FIKIT_KEY_NONE, a));
    cr_assert_not(gap_measured(a, b));
    cr_assert_eq(fikit_measure_gap_count(&D->store), 1);
    cr_assert_eq(gap_after(b, c), 15 * US, "the pair after the dropped sample is learned as scripted");
    cr_assert_eq(fake_backend_markers_live(), 1, "the dropped marker was released");
    cr_assert_eq(fake_backend_double_releases(), 0);
}

Test(learn, a_failed_begin_or_end_is_not_learned, .init = script)
{
    fake_backend_fail(FAKE_MARKER_BEGIN, 1, ENOMEM, false); /* kA's */
    fake_backend_fail(FAKE_MARKER_END, 2, EINVAL, false);   /* kC's (kB's end is the first) */
    fake_launch(&kA, true);
    fake_launch(&kB, true);
    fake_launch(&kC, true);
    fake_launch(&kD, true);
    drain();
    cr_assert_eq(fake_backend_calls(FAKE_MARKER_END), 3, "no end for a launch whose begin failed");
    cr_assert_eq(predicted("kA"), 0);
    cr_assert_eq(predicted("kB"), 250 * US);
    cr_assert_eq(predicted("kC"), 0);
    cr_assert_eq(predicted("kD"), 7 * US);
    cr_assert_eq(fikit_measure_gap_count(&D->store), 0, "kB and kD are not consecutive");
    cr_assert_eq(fake_backend_markers_live(), 1, "kC's marker was released by the gate");
    cr_assert_eq(fake_backend_double_releases(), 0);
}

Test(learn, a_launch_that_failed_is_not_learned, .init = script)
{
    fake_launch(&kA, true);
    fake_launch(&kB, false); /* the real call failed */
    fake_launch(&kC, true);
    drain();
    cr_assert_eq(predicted("kB"), 0);
    cr_assert_eq(fake_backend_calls(FAKE_MARKER_END), 2);
    cr_assert_eq(fikit_measure_gap_count(&D->store), 0);
    cr_assert_eq(fake_backend_markers_live(), 1);
}

Test(learn, a_duration_not_ready_is_asked_again, .init = script)
{
    fake_backend_fail(FAKE_MARKER_DURATION, 2, EAGAIN, false); /* kB still running */
    fake_launch(&kA, true);
    fake_launch(&kB, true);
    fake_launch(&kC, true);
    drain();
    cr_assert_eq(predicted("kA"), 100 * US);
    cr_assert_eq(predicted("kB"), 0, "still running: not learned yet");
    cr_assert_eq(predicted("kC"), 0, "behind it in the queue");
    cr_assert_eq(fikit_learn_room(&fikit_client.learner), FIKIT_LEARN_QUEUE - 2, "kB and kC wait");
    drain();
    cr_assert_eq(fake_backend_calls(FAKE_MARKER_DURATION), 4, "kB's duration asked twice");
    cr_assert_eq(predicted("kB"), 250 * US);
    cr_assert_eq(predicted("kC"), 40 * US);
    uint64_t a = fake_key("kA"), b = fake_key("kB");
    cr_assert_eq(gap_after(FIKIT_KEY_NONE, a), 30 * US, "nothing lost by the wait");
    cr_assert_eq(gap_after(a, b), 70 * US);
    cr_assert_eq(fake_backend_markers_live(), 1);
}

Test(learn, a_failed_gap_keeps_the_durations, .init = script)
{
    fake_backend_fail(FAKE_MARKER_GAP, 1, EIO, false); /* kA -> kB */
    fake_launch(&kA, true);
    fake_launch(&kB, true);
    fake_launch(&kC, true);
    drain();
    cr_assert_eq(predicted("kA"), 100 * US);
    cr_assert_eq(predicted("kB"), 250 * US);
    cr_assert_eq(predicted("kC"), 40 * US);
    cr_assert_not(gap_measured(FIKIT_KEY_NONE, fake_key("kA")));
    cr_assert_eq(gap_after(fake_key("kA"), fake_key("kB")), 70 * US);
    cr_assert_eq(fake_backend_markers_live(), 1);
    cr_assert_eq(fake_backend_double_releases(), 0);
}

Test(learn, a_kernel_the_backend_cannot_name_is_learned_as_unnamed, .init = script)
{
    fake_backend_fail(FAKE_KERNEL_NAME, 1, ENOENT, false);
    fake_launch(&kA, true);
    fake_launch(&kA, true);
    drain();
    cr_assert_eq(fake_backend_calls(FAKE_KERNEL_NAME), 1, "the fallback name is cached for the handle");
    cr_assert_eq(predicted("unnamed"), 100 * US);
    cr_assert_eq(predicted("kA"), 0);
}

Test(learn, a_device_the_backend_cannot_identify_is_left_alone)
{
    fake_backend_reset();
    fake_backend_kernel(&kA, "kA", 100 * US);
    fake_backend_fail(FAKE_DEVICE_IDENTITY, 1, ENODEV, true);
    atomic_store(&fikit_client.wants, FIKIT_CLIENT_WANTS_KNOWN | 1u << fake_backend_ops.kind);
    fikit_client.measure = true;
    struct fikit_launch_desc l = fake_desc(&kA);
    struct fikit_gate g;
    fikit_gate_enter(&g, &fake_backend_ops, &l);
    cr_assert_null(g.dev, "not scheduled, not timed");
    fikit_gate_exit(&g, &l, true);
    cr_assert_eq(fake_backend_calls(FAKE_DEVICE_IDENTITY), 1);
    cr_assert_eq(fake_backend_calls(FAKE_MARKER_BEGIN), 0);
    cr_assert_eq(atomic_load(&fikit_client.ndevs), 0);
}

Test(learn, a_sampling_client_times_pairs_and_unknown_kernels, .init = script)
{
    /* sample_rate 0.25: every fourth pair of launches is timed, and a
     * kernel never measured is timed whenever the queue has room. */
    fikit_client.measure = false;
    fikit_client.sample_period = 4;
    atomic_store(&fikit_client.sample_countdown, 4);
    fikit_predictor_set_duration(D->pred, fake_key("kA"), 100 * US);
    fikit_predictor_set_duration(D->pred, fake_key("kB"), 250 * US);
    for (int i = 0; i < 4; i++) {
        fake_launch(&kA, true);
        fake_launch(&kB, true);
    }
    cr_assert_eq(fake_backend_calls(FAKE_MARKER_BEGIN), 4, "two pairs of eight known launches");
    fake_launch(&kC, true);
    cr_assert_eq(fake_backend_calls(FAKE_MARKER_BEGIN), 5, "kC was never measured");
    drain();
    cr_assert_eq(predicted("kC"), 40 * US);
}

/* The predictor alone, with explicit data: what a store holds, it answers. */
/* A bursty program (issue 42): bursts of n kernels with gaps of 30 to 70 us
 * inside, each ended by a wait, and 500 ms of idle between them. The idle
 * threshold is built on the gaps inside the bursts, whatever the idle
 * between them; that idle is still learned as the gap after the burst's
 * last kernel (what fills it predict from). */
static void bursty(int n, bool waits)
{
    fake_backend_gap("kA", "kB", 30 * US);
    fake_backend_gap("kB", "kB", 50 * US);
    fake_backend_gap("kB", "kD", 70 * US);
    fake_backend_gap("kD", "kA", 500 * MS);
    for (int burst = 0; burst < 3; burst++) {
        fake_launch(&kA, true);
        for (int i = 0; i < n - 2; i++)
            fake_launch(&kB, true);
        fake_launch(&kD, true);
        if (waits) {
            fikit_burst_waited(fikit_burst_wait(), true);
            usleep(3 * FIKIT_BURST_JOIN_NS / 1000); /* the idle: the next launch opens a burst */
        }
        drain();
    }
    fake_launch(&kA, true); /* the next burst begins: the gap before it is known */
    drain();
}

Test(learn, the_idle_threshold_of_a_bursty_program_is_its_gaps_inside_bursts, .init = script)
{
    static const int sizes[] = {5, 20, 100, 1000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        script();
        bursty(sizes[k], true);
        cr_assert_eq(atomic_load(&D->idle_after_ns), 70 * US,
                     "bursts of %d: the longest gap inside a burst, not the 500 ms between them", sizes[k]);
        cr_assert_eq(D->store.between_gaps, 3, "bursts of %d: three gaps after a wait", sizes[k]);
        cr_assert_eq(gap_after(fake_key("kB"), fake_key("kD")), 500 * MS,
                     "the idle after a burst's last kernel is still its gap to predict from");
    }
}

Test(learn, a_program_that_never_waits_keeps_the_longest_gap, .init = script)
{
    bursty(20, false);
    cr_assert_eq(D->store.between_gaps, 0);
    cr_assert_eq(atomic_load(&D->idle_after_ns), 500 * MS, "no wait ends its bursts: every gap is one");
}

Test(predict, answers_what_the_store_holds)
{
    struct fikit_measure_store st;
    cr_assert_eq(fikit_measure_init(&st), 0);
    struct fikit_kernel_desc desc = {.backend = FIKIT_BACKEND_OPENCL, .name = "k", .grid = {1, 1, 1}};
    cr_assert_eq(fikit_measure_add_kernel(&st, 42, &desc), 0);
    for (uint64_t i = 1; i <= 10; i++)
        cr_assert_eq(fikit_measure_add_duration(&st, 42, 5 * US), 0);
    cr_assert_eq(fikit_measure_add_gap(&st, 7, 42, 80 * US), 0);
    struct fikit_predictor *p = fikit_predictor_new();
    cr_assert_not_null(p);
    cr_assert_eq(fikit_predict_duration(p, 42), 0, "empty");
    struct fikit_gap_pred g;
    cr_assert_not(fikit_predict_gap(p, 7, 42, &g));
    fikit_predictor_load(p, &st);
    cr_assert_eq(fikit_predict_duration(p, 42), 5 * US);
    cr_assert(fikit_predict_gap(p, 7, 42, &g));
    cr_assert_eq(g.q_ns[0], 80 * US);
    cr_assert_eq(g.q_ns[FIKIT_GAP_POINTS - 1], 80 * US);
    cr_assert_not(fikit_predict_gap(p, 8, 42, &g), "another predecessor is another pair");
    cr_assert_eq(fikit_predict_duration(p, 43), 0);
    fikit_predictor_set_duration(p, 42, 9 * US);
    cr_assert_eq(fikit_predict_duration(p, 42), 9 * US, "the writer's update replaces it");
    fikit_predictor_free(p);
    fikit_measure_destroy(&st);
}
