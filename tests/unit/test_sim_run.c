/* fikit sim's runs (sim/run.c, sim/experiment.c): the same seed gives the
 * same run; fikit's own admission and scheduler decide for the tasks that
 * fikit schedules (a lower task is held and granted only where fikit would,
 * and never when passthrough); the quantiles' intervals hold the value. */
#include "conf/config.h"
#include "sim/experiment.h"
#include "sim/fifo.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct fikit_sim_device DEV = {.name = "t", .sms = 10, .threads_per_sm = 1024,
                                            .blocks_per_sm = 8, .launch_ns = 2000,
                                            .switch_ns = 0, .slice_ns = 2000000};

/* A service: 20 kernels of 20 us, 30 us of host time between them, a sync. */
static const char SERVICE[] =
    "fikit-sim-workload 1\nname svc\nkind service\nseq\n"
    "L 10 20 4 128 a\nL 30 20 4 128 b\nL 30 20 4 128 a\nL 30 20 4 128 b\nL 30 20 4 128 a\n"
    "L 30 20 4 128 b\nL 30 20 4 128 a\nL 30 20 4 128 b\nL 30 20 4 128 a\nL 30 20 4 128 b\n"
    "L 30 20 4 128 a\nL 30 20 4 128 b\nL 30 20 4 128 a\nL 30 20 4 128 b\nL 30 20 4 128 a\n"
    "L 30 20 4 128 b\nL 30 20 4 128 a\nL 30 20 4 128 b\nL 30 20 4 128 a\nL 30 20 4 128 c\n"
    "S 5\nend\n";
/* A job: kernels of 300 us filling the device, a sync every four. */
static const char LOOP[] =
    "fikit-sim-workload 1\nname job\nkind loop\nseq\n"
    "L 5 300 400 256 k\nL 5 300 400 256 k\nL 5 300 400 256 k\nL 5 300 400 256 k\nS 5\nend\n";

static struct fikit_sim_workload svc, job;

static void setup(void)
{
    struct fikit_err err;
    cr_assert_eq(fikit_sim_workload_parse(SERVICE, strlen(SERVICE), "svc", &svc, &err), 0, "%s", err.msg);
    cr_assert_eq(fikit_sim_workload_parse(LOOP, strlen(LOOP), "job", &job, &err), 0, "%s", err.msg);
}

static void teardown(void)
{
    fikit_sim_workload_free(&svc);
    fikit_sim_workload_free(&job);
}

static void experiment(struct fikit_sim_experiment *x, enum fikit_policy policy)
{
    memset(x, 0, sizeof *x);
    x->dev = &DEV;
    x->service = &svc;
    x->loop = &job;
    fikit_sched_params_default(&x->sched_ts);
    x->sched_ts.policy = policy;
    x->sched_ts.substrate_cost_ns = 0;
    x->sched_mps = x->sched_ts;
    x->beside_thread_pct = 50;
    x->poll_ns = 50000;
    x->pickup_ns = 5000;
    x->wake_ns = 4000;
    x->load = 0.5;
    x->requests = 400;
    x->warmup = 20;
    x->seed = 7;
    x->modes = (1u << FIKIT_SIM_MODES) - 1;
}

TestSuite(sim_run, .init = setup, .fini = teardown);

Test(sim_run, the_same_seed_gives_the_same_run_and_another_seed_another)
{
    struct fikit_sim_experiment x;
    experiment(&x, FIKIT_POLICY_FILL);
    struct fikit_sim_report a, b, c;
    struct fikit_err err;
    cr_assert_eq(fikit_sim_experiment_run(&x, &a, NULL, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(fikit_sim_experiment_run(&x, &b, NULL, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(memcmp(&a, &b, sizeof a), 0, "two runs with one seed agree to the bit");
    x.seed = 8;
    cr_assert_eq(fikit_sim_experiment_run(&x, &c, NULL, NULL, &err), 0, "%s", err.msg);
    cr_assert_neq(a.alone_p99.v, c.alone_p99.v);
}

Test(sim_run, fikit_holds_and_grants_the_lower_task_and_passthrough_never_holds)
{
    struct fikit_sim_experiment x;
    experiment(&x, FIKIT_POLICY_FILL);
    struct fikit_sim_report r;
    struct fikit_err err;
    cr_assert_eq(fikit_sim_experiment_run(&x, &r, NULL, NULL, &err), 0, "%s", err.msg);
    for (int m = FIKIT_SIM_MODE_FIKIT_TS; m <= FIKIT_SIM_MODE_FIKIT_MPS; m++) {
        const struct fikit_sim_row *w = &r.row[m];
        cr_assert(w->done);
        cr_assert_gt(w->holds, 0, "%s: the job's kernels are held beside the active service",
                     fikit_sim_mode_name(m));
        cr_assert_geq(w->holds, w->grants);
        cr_assert_gt(w->grants + w->fills, 0, "%s: and some run in its gaps", fikit_sim_mode_name(m));
        cr_assert_gt(w->loop_ratio, 0);
    }
    for (int m = FIKIT_SIM_MODE_TIMESLICE; m <= FIKIT_SIM_MODE_MPS_PRIO; m++)
        cr_assert_eq(r.row[m].holds + r.row[m].grants + r.row[m].fills, 0, "no fikit in %s",
                     fikit_sim_mode_name(m));

    experiment(&x, FIKIT_POLICY_PASSTHROUGH);
    x.modes = 1u << FIKIT_SIM_MODE_FIKIT_MPS;
    cr_assert_eq(fikit_sim_experiment_run(&x, &r, NULL, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(r.row[FIKIT_SIM_MODE_FIKIT_MPS].holds, 0);
    cr_assert_eq(r.row[FIKIT_SIM_MODE_FIKIT_MPS].fills, 0);
}

Test(sim_run, strict_keeps_the_job_out_while_the_service_is_active)
{
    /* With the service busy at this load and its idle threshold learned
     * from its own gaps (the longest between requests), strict lets the job
     * run far less than filling does. */
    struct fikit_sim_experiment x;
    experiment(&x, FIKIT_POLICY_STRICT);
    x.modes = 1u << FIKIT_SIM_MODE_FIKIT_MPS;
    struct fikit_sim_report strict, fill;
    struct fikit_err err;
    cr_assert_eq(fikit_sim_experiment_run(&x, &strict, NULL, NULL, &err), 0, "%s", err.msg);
    experiment(&x, FIKIT_POLICY_FILL);
    x.modes = 1u << FIKIT_SIM_MODE_FIKIT_MPS;
    cr_assert_eq(fikit_sim_experiment_run(&x, &fill, NULL, NULL, &err), 0, "%s", err.msg);
    cr_assert_lt(strict.row[FIKIT_SIM_MODE_FIKIT_MPS].loop_ratio, fill.row[FIKIT_SIM_MODE_FIKIT_MPS].loop_ratio);
    cr_assert_eq(strict.row[FIKIT_SIM_MODE_FIKIT_MPS].fills, 0, "strict never fills");
}

Test(sim_run, a_confined_job_has_the_whole_device_while_the_service_is_idle)
{
    /* fikit-mps with the job beside the service at half the SMs, at MPS's
     * lower client priority (as fikit-launch starts it): held so by a thread
     * cap all the time, or confined per launch only while the service is in
     * a request (mps_lower_cap = launches; between requests its program has
     * waited for its work). The same share beside the service, the whole
     * device between its requests: the job gets more done, and the
     * service's p99 stays within 5 %. */
    struct fikit_sim_experiment x;
    experiment(&x, FIKIT_POLICY_FILL);
    x.modes = 1u << FIKIT_SIM_MODE_FIKIT_MPS;
    x.load = 0.2;
    x.fikit_mps_beside = true;
    x.fikit_mps_priority = true;
    x.fikit_mps_thread_pct = 50;
    struct fikit_sim_report capped, confined;
    struct fikit_err err;
    cr_assert_eq(fikit_sim_experiment_run(&x, &capped, NULL, NULL, &err), 0, "%s", err.msg);
    x.fikit_mps_thread_pct = 0;
    x.fikit_mps_confine_pct = 50;
    cr_assert_eq(fikit_sim_experiment_run(&x, &confined, NULL, NULL, &err), 0, "%s", err.msg);
    const struct fikit_sim_row *a = &capped.row[FIKIT_SIM_MODE_FIKIT_MPS], *b = &confined.row[FIKIT_SIM_MODE_FIKIT_MPS];
    cr_assert_eq(a->holds + b->holds, 0, "beside: never held");
    cr_assert_gt(b->loop_ratio, a->loop_ratio * 1.2, "confined per launch: %.3f, capped: %.3f", b->loop_ratio,
                 a->loop_ratio);
    cr_assert_leq(b->p99_ratio.v, a->p99_ratio.v * 1.05, "the service's p99: %.3f against %.3f", b->p99_ratio.v,
                  a->p99_ratio.v);
}

Test(sim_run, an_mps_client_pays_the_device_s_mps_launch_cost_on_its_host)
{
    /* The service's 20 launches are paced by its host (30 us between
     * 20 us kernels): 10 us more a launch as an MPS client is about 200 us
     * more a request, with almost no queueing at load 0.05. */
    struct fikit_sim_device d = DEV;
    d.mps_launch_ns = 10000;
    struct fikit_sim_experiment x;
    experiment(&x, FIKIT_POLICY_FILL);
    x.dev = &d;
    x.load = 0.05;
    x.modes = 1u << FIKIT_SIM_MODE_FIKIT_ALONE | 1u << FIKIT_SIM_MODE_FIKIT_ALONE_MPS;
    struct fikit_sim_report r;
    struct fikit_err err;
    cr_assert_eq(fikit_sim_experiment_run(&x, &r, NULL, NULL, &err), 0, "%s", err.msg);
    double ts = r.row[FIKIT_SIM_MODE_FIKIT_ALONE].p50.v, mps = r.row[FIKIT_SIM_MODE_FIKIT_ALONE_MPS].p50.v;
    cr_assert_gt(mps - ts, 0.150, "p50 %.3f ms as an MPS client, %.3f ms not", mps, ts);
    cr_assert_lt(mps - ts, 0.300, "p50 %.3f ms as an MPS client, %.3f ms not", mps, ts);
}

Test(sim_run, a_pinned_budget_step_is_a_fixed_setting_the_controller_never_moves)
{
    /* With a budget the service's controller steers the job; pinned at
     * step 0 the job waits while the service is active and gets less done
     * than pinned at the top of its ladder (gaps, step 6), and neither ever
     * cuts or climbs. */
    struct fikit_sim_experiment x;
    experiment(&x, FIKIT_POLICY_FILL);
    x.modes = 1u << FIKIT_SIM_MODE_FIKIT_TS;
    x.budget = 1.01; /* one the controller would cut for */
    struct fikit_sim_report lo, hi;
    struct fikit_err err;
    x.budget_step = 1; /* step 0 */
    cr_assert_eq(fikit_sim_experiment_run(&x, &lo, NULL, NULL, &err), 0, "%s", err.msg);
    x.budget_step = FIKIT_BUDGET_STEPS; /* the top: clamped to a gaps task's, 6 */
    cr_assert_eq(fikit_sim_experiment_run(&x, &hi, NULL, NULL, &err), 0, "%s", err.msg);
    const struct fikit_sim_row *a = &lo.row[FIKIT_SIM_MODE_FIKIT_TS], *b = &hi.row[FIKIT_SIM_MODE_FIKIT_TS];
    cr_assert(a->budgeted && b->budgeted);
    cr_assert_eq(a->budget_step, 0);
    cr_assert_eq(b->budget_step, FIKIT_BUDGET_GAPS_TOP);
    cr_assert_eq(a->budget_cuts + a->budget_climbs + b->budget_cuts + b->budget_climbs, 0);
    cr_assert_lt(a->loop_ratio, b->loop_ratio, "step 0: %.3f, step 6: %.3f", a->loop_ratio, b->loop_ratio);
    /* What the budget judges, the bursts' p99 (no queueing), is measured
     * too, and is shorter where the job waits. */
    cr_assert_gt(a->burst_p99_ratio.v, 0);
    cr_assert_lt(a->burst_p99_ratio.v, b->burst_p99_ratio.v, "bursts' p99 step 0: %.3f, step 6: %.3f",
                 a->burst_p99_ratio.v, b->burst_p99_ratio.v);
}

Test(sim_run, a_quantile_lies_inside_its_interval)
{
    uint64_t v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = (uint64_t)(i + 1) * 1000000;
    struct fikit_sim_q q = fikit_sim_quantile(v, 1000, 0.99);
    cr_assert_float_eq(q.v, 990, 1e-9);
    cr_assert_leq(q.lo, q.v);
    cr_assert_geq(q.hi, q.v);
    cr_assert_lt(q.lo, q.hi);
    q = fikit_sim_quantile(v, 1000, 0.5);
    cr_assert_float_eq(q.v, 501, 1e-9);
}

Test(sim_run, bad_setups_are_refused_with_a_reason)
{
    struct fikit_sim_experiment x;
    experiment(&x, FIKIT_POLICY_FILL);
    x.service = &job;
    struct fikit_sim_report r;
    struct fikit_err err;
    cr_assert_lt(fikit_sim_experiment_run(&x, &r, NULL, NULL, &err), 0);
    cr_assert(strstr(err.msg, "job is a loop"), "%s", err.msg);
    experiment(&x, FIKIT_POLICY_FILL);
    x.load = 1.0;
    cr_assert_lt(fikit_sim_experiment_run(&x, &r, NULL, NULL, &err), 0);
    cr_assert(strstr(err.msg, "load 1"), "%s", err.msg);
}

Test(sim_run, a_traced_run_writes_kernels_requests_and_holds)
{
    struct fikit_sim_experiment x;
    experiment(&x, FIKIT_POLICY_FILL);
    x.modes = 1u << FIKIT_SIM_MODE_FIKIT_MPS;
    char *buf = NULL;
    size_t len = 0;
    x.trace = open_memstream(&buf, &len);
    cr_assert_not_null(x.trace);
    x.trace_ns = 50ull * 1000 * 1000;
    struct fikit_sim_report r;
    struct fikit_err err;
    cr_assert_eq(fikit_sim_experiment_run(&x, &r, NULL, NULL, &err), 0, "%s", err.msg);
    fclose(x.trace);
    cr_assert(strstr(buf, "\"name\":\"svc: device\""), "the tracks are named");
    cr_assert(strstr(buf, "\"cat\":\"kernel\""));
    cr_assert(strstr(buf, "\"cat\":\"request\""));
    cr_assert(strstr(buf, "\"cat\":\"hold\""), "the job's holds are in it");
    /* Nothing after the window: no timestamp past 50 ms (50000 us). */
    for (const char *p = strstr(buf, "\"ts\":"); p; p = strstr(p + 1, "\"ts\":"))
        cr_assert_lt(strtod(p + 5, NULL), 50000.0, "%.40s", p);
    free(buf);
}

Test(sim_run, a_fifo_keeps_order_across_wraps_and_growth)
{
    struct fikit_sim_fifo f = {.size = sizeof(uint64_t)};
    uint64_t next_in = 0, next_out = 0;
    /* Interleaved pushes and pops wrap the ring; bursts make it grow while
     * wrapped. */
    for (int round = 0; round < 50; round++) {
        for (int k = 0; k < 7 + round * 3; k++) {
            cr_assert_eq(fikit_sim_fifo_push(&f, &next_in), 0);
            next_in++;
        }
        for (int k = 0; k < 5 + round * 3 && f.n; k++) {
            cr_assert_eq(*(uint64_t *)fikit_sim_fifo_front(&f), next_out);
            fikit_sim_fifo_pop(&f);
            next_out++;
        }
    }
    while (f.n) {
        cr_assert_eq(*(uint64_t *)fikit_sim_fifo_front(&f), next_out++);
        fikit_sim_fifo_pop(&f);
    }
    cr_assert_eq(next_out, next_in);
    cr_assert_null(fikit_sim_fifo_front(&f));
    fikit_sim_fifo_free(&f);
}
