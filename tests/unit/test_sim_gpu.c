/* fikit sim's device model (sim/gpu.c): time-slicing's switch cost, paid
 * also after the other context went idle, and its slice; MPS's waves, its
 * queue in launch order (a kernel that fills the device holds the next one
 * back), client priority, the thread cap and a confined kernel, the co-run
 * slowdown; device files and their errors. */
#include "sim/gpu.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

struct done {
    uint32_t ctx;
    uint64_t cookie, start, end;
};

static struct done log_[64];
static size_t nlog;

static void on_done(void *user, uint32_t ctx, uint64_t cookie, uint64_t start, uint64_t end)
{
    (void)user;
    cr_assert_lt(nlog, 64);
    log_[nlog++] = (struct done){ctx, cookie, start, end};
}

static const struct done *find(uint64_t cookie)
{
    for (size_t i = 0; i < nlog; i++)
        if (log_[i].cookie == cookie)
            return &log_[i];
    cr_assert_fail("kernel %llu never completed", (unsigned long long)cookie);
    return NULL;
}

/* 10 SMs of 1024 threads, 8 blocks each (128 threads a block at least). */
static const struct fikit_sim_device DEV = {.name = "t", .sms = 10, .threads_per_sm = 1024,
                                            .blocks_per_sm = 8, .launch_ns = 1000,
                                            .switch_ns = 100000, .slice_ns = 2000000};

struct launch {
    uint64_t at;
    uint32_t ctx;
    uint64_t cookie, dur;
    uint32_t blocks, threads;
    uint32_t sm_pct; /* confined to this share (fikit's green contexts); 0: not */
};

/* Runs the launches (in time order) to completion. */
static void run_on(const struct fikit_sim_device *d, enum fikit_sim_substrate s, bool prio, const int *prios,
                   const uint32_t *pct, const struct launch *l, size_t n)
{
    nlog = 0;
    struct fikit_sim_evq q;
    fikit_sim_evq_init(&q);
    struct fikit_sim_gpu *g = fikit_sim_gpu_new(d, s, prio, 2, &q, on_done, NULL);
    cr_assert_not_null(g);
    for (uint32_t c = 0; c < 2; c++)
        fikit_sim_gpu_context(g, c, prios ? prios[c] : 0, pct ? pct[c] : 100);
    size_t next = 0;
    struct fikit_sim_event e;
    for (;;) {
        /* Launches due before the next event go first. */
        if (next < n && (!q.n || l[next].at <= q.heap[0].t)) {
            cr_assert_eq(fikit_sim_gpu_launch(g, l[next].at, l[next].ctx, l[next].cookie, l[next].dur,
                                              l[next].blocks, l[next].threads, l[next].sm_pct),
                         0);
            next++;
            continue;
        }
        if (!fikit_sim_evq_pop(&q, &e))
            break;
        fikit_sim_gpu_event(g, &e);
    }
    cr_assert_eq(nlog, n, "every kernel completes");
    fikit_sim_gpu_free(g);
    fikit_sim_evq_free(&q);
}

static void run(enum fikit_sim_substrate s, bool prio, const int *prios, const uint32_t *pct,
                const struct launch *l, size_t n)
{
    run_on(&DEV, s, prio, prios, pct, l, n);
}

Test(sim_gpu, timeslice_one_context_runs_in_launch_order_without_a_switch)
{
    struct launch l[] = {{0, 0, 1, 50000, 10, 128, 0}, {0, 0, 2, 30000, 10, 128, 0}};
    run(FIKIT_SIM_TIMESLICE, false, NULL, NULL, l, 2);
    cr_assert_eq(find(1)->start, 1000, "visible launch_ns after its launch");
    cr_assert_eq(find(1)->end, 51000);
    cr_assert_eq(find(2)->start, 51000);
    cr_assert_eq(find(2)->end, 81000);
}

Test(sim_gpu, timeslice_switch_is_paid_even_after_the_other_context_went_idle)
{
    /* ctx 0 runs, goes idle; ctx 1 comes much later and still pays the
     * switch; then ctx 0 pays the switch back. */
    struct launch l[] = {{0, 0, 1, 10000, 1, 128, 0},
                         {5000000, 1, 2, 10000, 1, 128, 0},
                         {10000000, 0, 3, 10000, 1, 128, 0}};
    run(FIKIT_SIM_TIMESLICE, false, NULL, NULL, l, 3);
    cr_assert_eq(find(2)->start, 5000000 + 1000 + 100000);
    cr_assert_eq(find(3)->start, 10000000 + 1000 + 100000);
}

Test(sim_gpu, timeslice_preempts_a_long_kernel_at_the_end_of_its_slice)
{
    struct launch l[] = {{0, 0, 1, 10000000, 1, 128, 0}, {100000, 1, 2, 20000, 1, 128, 0}};
    run(FIKIT_SIM_TIMESLICE, false, NULL, NULL, l, 2);
    /* ctx 0 starts at 1 us, its slice ends 2 ms later, the switch takes
     * 100 us, ctx 1's kernel runs 20 us, the switch back 100 us, and ctx 0's
     * kernel finishes its remaining 8 ms. */
    cr_assert_eq(find(2)->start, 1000 + 2000000 + 100000);
    cr_assert_eq(find(1)->end, 1000 + 10000000 + 2 * 100000 + 20000);
}

Test(sim_gpu, mps_runs_small_kernels_of_two_contexts_at_once)
{
    struct launch l[] = {{0, 0, 1, 50000, 10, 128, 0}, {0, 1, 2, 50000, 10, 128, 0}};
    run(FIKIT_SIM_MPS, false, NULL, NULL, l, 2);
    cr_assert_eq(find(1)->start, 1000);
    cr_assert_eq(find(2)->start, 1000);
    cr_assert_eq(find(2)->end, 51000);
}

/* corun_slowdown: blocks placed beside another context's run longer by
 * the share of the threads it holds; a context's own blocks do not count,
 * and blocks placed once the other context's are gone run at their pace. */
Test(sim_gpu, mps_corun_slowdown_stretches_blocks_by_what_the_other_context_holds)
{
    struct fikit_sim_device d = DEV;
    d.corun_ppm = 2000000; /* 2: a block beside the whole device runs 3x */
    /* ctx 1: 40 blocks of 128 threads, half the device, 1 ms; then ctx 0
     * one block of 128 threads, 100 us, beside it; then ctx 0 again once
     * ctx 1 is done. */
    struct launch l[] = {{0, 1, 1, 1000000, 40, 128, 0},
                         {10000, 0, 2, 100000, 1, 128, 0},
                         {10000, 1, 3, 100000, 1, 128, 0},
                         {2000000, 0, 4, 100000, 1, 128, 0}};
    run_on(&d, FIKIT_SIM_MPS, false, NULL, NULL, l, 4);
    cr_assert_eq(find(1)->end, 1000 + 1000000, "placed alone: its own pace");
    cr_assert_eq(find(2)->start, 11000);
    cr_assert_eq(find(2)->end, 11000 + 100000 + 100000, "beside half the device: 1 + 2 x 0.5");
    /* ctx 1's second kernel waits behind its first (one stream); placed
     * once ctx 0's block finished, alone again. */
    cr_assert_eq(find(3)->start, find(1)->end);
    cr_assert_eq(find(3)->end - find(3)->start, 100000, "nothing of the other context's running then");
    cr_assert_eq(find(4)->end - find(4)->start, 100000);
}

Test(sim_gpu, mps_kernel_filling_the_device_holds_the_next_one_back_for_its_whole_run)
{
    /* 240 blocks of 256 threads: 40 fit at once (10 x 1024 / 256), so six
     * waves of 100 us. */
    struct launch l[] = {{0, 0, 1, 600000, 240, 256, 0}, {10000, 1, 2, 10000, 1, 128, 0}};
    run(FIKIT_SIM_MPS, false, NULL, NULL, l, 2);
    cr_assert_eq(find(1)->end, 601000, "alone, it takes its duration");
    cr_assert_geq(find(2)->start, find(1)->end, "the small kernel waited for every wave");
}

Test(sim_gpu, mps_client_priority_lets_the_high_client_in_after_one_wave)
{
    int prios[2] = {9, 0};
    struct launch l[] = {{0, 0, 1, 600000, 240, 256, 0}, {10000, 1, 2, 10000, 1, 128, 0}};
    run(FIKIT_SIM_MPS, true, prios, NULL, l, 2);
    cr_assert_eq(find(2)->start, 101000, "at the end of the first wave");
    cr_assert_gt(find(1)->end, 601000);
}

Test(sim_gpu, mps_thread_cap_keeps_room_for_the_other_client)
{
    uint32_t pct[2] = {50, 100};
    struct launch l[] = {{0, 0, 1, 600000, 240, 256, 0}, {10000, 1, 2, 10000, 1, 128, 0}};
    run(FIKIT_SIM_MPS, false, NULL, pct, l, 2);
    cr_assert_eq(find(2)->start, 11000, "beside the capped kernel at once");
    cr_assert_eq(find(1)->end, 1000 + 2 * 600000, "capped at half, it takes twice as long");
}

Test(sim_gpu, mps_confined_kernel_keeps_room_while_the_next_kernel_has_the_whole_device)
{
    /* The same kernel twice from an uncapped client, the first confined to
     * half the device (a launch while a higher level is active), the second
     * not (launched once it was idle): only the first leaves room. */
    struct launch l[] = {{0, 0, 1, 600000, 240, 256, 50}, {10000, 1, 2, 10000, 1, 128, 0},
                         {1300000, 0, 3, 600000, 240, 256, 0}, {1310000, 1, 4, 10000, 1, 128, 0}};
    run(FIKIT_SIM_MPS, false, NULL, NULL, l, 4);
    cr_assert_eq(find(2)->start, 11000, "beside the confined kernel at once");
    cr_assert_eq(find(1)->end, 1000 + 2 * 600000, "confined to half, it takes twice as long");
    cr_assert_eq(find(3)->end, 1301000 + 600000, "unconfined, its own duration");
    cr_assert_geq(find(4)->start, find(3)->end, "and the next kernel waits for every wave");
}

Test(sim_gpu, device_file_reads_and_errors_name_file_line_and_value)
{
    struct fikit_sim_device d;
    struct fikit_err err;
    const char *good = "# c\n[device]\nname = x\nsms = 4\nthreads_per_sm = 2048\nblocks_per_sm = 32\n"
                       "launch_us = 4.5\nswitch_us = 125\nslice_us = 2000\nfikit_launch_us = 0.66\n";
    cr_assert_eq(fikit_sim_device_parse(good, "d.ini", &d, &err), 0, "%s", err.msg);
    cr_assert_eq(d.sms, 4);
    cr_assert_eq(d.launch_ns, 4500);
    cr_assert_eq(d.switch_ns, 125000);
    cr_assert_eq(d.fikit_launch_ns, 660);
    cr_assert_str_eq(d.name, "x");
    cr_assert_eq(d.mps_launch_ns, 0, "optional keys: 0 when absent");
    cr_assert_eq(d.corun_ppm, 0);
    char more[512];
    snprintf(more, sizeof more, "%smps_launch_us = 1.5\ncorun_slowdown = 2.5\n", good);
    cr_assert_eq(fikit_sim_device_parse(more, "d.ini", &d, &err), 0, "%s", err.msg);
    cr_assert_eq(d.mps_launch_ns, 1500);
    cr_assert_eq(d.corun_ppm, 2500000);
    snprintf(more, sizeof more, "%scorun_slowdown = -1\n", good);
    cr_assert_lt(fikit_sim_device_parse(more, "d.ini", &d, &err), 0);
    cr_assert(strstr(err.msg, "d.ini:11: corun_slowdown = '-1': accepted: a ratio from 0 to 100"), "%s", err.msg);

    cr_assert_lt(fikit_sim_device_parse("[device]\nname = x\nsms = 0\n", "d.ini", &d, &err), 0);
    cr_assert(strstr(err.msg, "d.ini:3: sms = '0'"), "%s", err.msg);
    cr_assert_lt(fikit_sim_device_parse("[device]\nname = x\nsmz = 3\n", "d.ini", &d, &err), 0);
    cr_assert(strstr(err.msg, "d.ini:3: unknown key 'smz'"), "%s", err.msg);
    cr_assert_lt(fikit_sim_device_parse("[gpu]\n", "d.ini", &d, &err), 0);
    cr_assert(strstr(err.msg, "d.ini:1: section [gpu]"), "%s", err.msg);
    cr_assert_lt(fikit_sim_device_parse("[device]\nname = x\n", "d.ini", &d, &err), 0);
    cr_assert(strstr(err.msg, "no 'sms'"), "%s", err.msg);
    cr_assert_eq(d.sms, 0, "nothing of a rejected file is kept");
}

Test(sim_gpu, shipped_device_files_load)
{
    const char *names[] = {"h200", "pocl-cpu"};
    for (size_t i = 0; i < 2; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/sim/devices/%s.ini", FIKIT_SOURCE_DIR, names[i]);
        struct fikit_sim_device d;
        struct fikit_err err;
        cr_assert_eq(fikit_sim_device_load(path, &d, &err), 0, "%s", err.msg);
        cr_assert_str_eq(d.name, names[i]);
    }
}
