#include "conf/config.h"
#include "core/replay.h"
#include "core/shm.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fikit_replay_launch *L;
static size_t N;

static void load(const char *text)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    struct fikit_err err;
    cr_assert_eq(fikit_replay_parse(f, "t", &L, &N, &err), 0, "%s", err.msg);
    fclose(f);
}

static void run(enum fikit_policy policy, uint64_t cost, struct fikit_replay_result *res)
{
    struct fikit_sched_params p;
    fikit_sched_params_default(&p);
    p.policy = policy;
    p.substrate_cost_ns = cost;
    p.safety_margin_ns = 0;
    struct fikit_err err;
    cr_assert_eq(fikit_replay_run(L, N, &p, NULL, res, &err), 0, "%s", err.msg);
}

/* serve: kernel A (10 us) then a 300 us gap, then B (10 us), three times;
 * batch: four 200 us kernels it wants to run back to back. */
static const char *TIMELINE = "# t task prio kernel dur\n"
                              "0 serve 0 A 10\n"
                              "310 serve 0 B 10\n"
                              "620 serve 0 A 10\n"
                              "930 serve 0 B 10\n"
                              "5 batch 9 gemm 200\n"
                              "205 batch 9 gemm 200\n"
                              "405 batch 9 gemm 200\n"
                              "605 batch 9 gemm 200\n";

Test(replay, fill_keeps_serve_alone_and_uses_gaps)
{
    load(TIMELINE);
    struct fikit_replay_result res;
    run(FIKIT_POLICY_FILL, 0, &res);
    cr_assert_eq(res.ntasks, 2);
    const struct fikit_replay_task_result *serve = &res.tasks[0], *batch = &res.tasks[1];
    cr_assert_str_eq(serve->task, "serve");
    cr_assert_eq(serve->delay_ns, 0, "the high-priority task runs as if alone");
    cr_assert_gt(batch->granted_fit, 0, "the batch job filled gaps");
    /* Every batch kernel that was granted into a gap ended before the next
     * serve kernel began. */
    for (size_t i = 0; i < N; i++) {
        if (strcmp(L[i].task, "batch") || L[i].how != FIKIT_REPLAY_GRANTED ||
            L[i].reason != FIKIT_GRANT_FIT)
            continue;
        for (size_t j = 0; j < N; j++)
            if (!strcmp(L[j].task, "serve") && L[j].start_ns >= L[i].start_ns)
                cr_assert_leq(L[i].end_ns, L[j].start_ns);
    }
    free(L);
}

Test(replay, passthrough_delays_serve)
{
    load(TIMELINE);
    struct fikit_replay_result res;
    run(FIKIT_POLICY_PASSTHROUGH, 0, &res);
    cr_assert_gt(res.tasks[0].delay_ns, 0);
    free(L);
}

Test(replay, substrate_cost_closes_the_gaps)
{
    load(TIMELINE);
    struct fikit_replay_result res;
    run(FIKIT_POLICY_FILL, 250000, &res);
    cr_assert_eq(res.tasks[1].granted_fit, 0, "200 + 250 us fits no 300 us gap");
    cr_assert_eq(res.tasks[0].delay_ns, 0);
    free(L);
}

Test(replay, is_deterministic)
{
    load(TIMELINE);
    struct fikit_replay_result a, b;
    run(FIKIT_POLICY_FILL, 0, &a);
    uint64_t ends[16];
    for (size_t i = 0; i < N; i++)
        ends[i] = L[i].end_ns;
    run(FIKIT_POLICY_FILL, 0, &b);
    for (size_t i = 0; i < N; i++)
        cr_assert_eq(L[i].end_ns, ends[i]);
    free(L);
}

Test(replay, parse_errors_name_the_line)
{
    const char *bad[] = {"0 serve 0 A\n", "0 serve 12 A 5\n", "x serve 0 A 5\n"};
    const char *want[] = {"t:1: expected", "t:1: priority 12 out of range", "t:1: expected"};
    for (int i = 0; i < 3; i++) {
        FILE *f = fmemopen((void *)bad[i], strlen(bad[i]), "r");
        struct fikit_err err;
        cr_assert_lt(fikit_replay_parse(f, "t", &L, &N, &err), 0);
        cr_assert(strstr(err.msg, want[i]) == err.msg, "%s", err.msg);
        fclose(f);
    }
}

/* Replay decides a lower launch as a program does (fikit_admit): one that
 * finds the top level in a gap with room fills it by itself, without
 * fikitd, and still ends before the top level's next kernel; under strict
 * nothing is filled. */
Test(replay, a_launch_in_a_gap_fills_it_by_itself_as_in_a_program)
{
    load("0 serve 0 A 10\n"
         "310 serve 0 B 10\n"
         "620 serve 0 A 10\n"
         "930 serve 0 B 10\n"
         "15 batch 9 gemm 200\n"
         "325 batch 9 gemm 200\n");
    struct fikit_replay_result res;
    run(FIKIT_POLICY_FILL, 0, &res);
    const struct fikit_replay_task_result *serve = &res.tasks[0], *batch = &res.tasks[1];
    cr_assert_eq(batch->filled, 2, "both launches filled a gap by themselves (%zu)", batch->filled);
    cr_assert_eq(batch->granted_fit + batch->granted_free, 0, "fikitd had nothing to grant");
    cr_assert_eq(serve->delay_ns, 0);
    for (size_t i = 0; i < N; i++)
        if (!strcmp(L[i].task, "batch"))
            cr_assert_eq(L[i].how, FIKIT_REPLAY_FILLED);
    free(L);

    load("0 serve 0 A 10\n"
         "310 serve 0 B 10\n"
         "15 batch 9 gemm 200\n");
    run(FIKIT_POLICY_STRICT, 0, &res);
    cr_assert_eq(res.tasks[1].filled, 0, "strict never fills");
    cr_assert_eq(res.tasks[1].held, 1);
    free(L);
}

/* The same launch decided the way interpose/gate.c decides it: a real
 * segment, the service's launch published with fikit_shm_publish_launch,
 * the snapshot read with fikit_shm_view, fikit_admit asked. It must agree
 * with what replay decided for that launch. */
static enum fikit_admit_kind gate_decides(uint64_t now, uint64_t batch_dur)
{
    struct fikit_shm *shm;
    cr_assert_eq(fikit_shm_local(&shm), 0);
    struct fikit_sched_params p;
    fikit_sched_params_default(&p);
    p.substrate_cost_ns = 0;
    p.safety_margin_ns = 0;
    fikit_shm_publish_params(&shm->hdr->params, &p, 0);
    fikit_shm_local_register(shm, 0, 0);
    fikit_shm_local_register(shm, 1, 9);
    /* serve's kernel A at 0, 10 us, followed (as measured alone) by 300 us. */
    struct fikit_gap_pred gap;
    fikit_gap_pred_fixed(&gap, 300 * 1000);
    fikit_shm_publish_launch(shm->slots[0], 0, 10 * 1000, 1, &gap, 300 * 1000);
    struct fikit_admit_task tasks[FIKIT_SHM_SLOTS];
    struct fikit_view v;
    struct fikit_admit a;
    fikit_shm_view(shm, 1, 9, false, &v, tasks, NULL);
    fikit_admit(&v, now, batch_dur, &a);
    fikit_shm_unmap(shm);
    return a.kind;
}

Test(replay, agrees_with_the_admission_as_gate_c_calls_it)
{
    struct fikit_replay_result res;
    load("0 serve 0 A 10\n310 serve 0 B 10\n15 batch 9 gemm 200\n");
    run(FIKIT_POLICY_FILL, 0, &res);
    cr_assert_eq(L[2].how, FIKIT_REPLAY_FILLED);
    cr_assert_eq(gate_decides(15 * 1000, 200 * 1000), FIKIT_ADMIT_FILL);
    free(L);

    load("0 serve 0 A 10\n310 serve 0 B 10\n5 batch 9 gemm 200\n");
    run(FIKIT_POLICY_FILL, 0, &res);
    cr_assert_neq(L[2].issue_ns, L[2].submit_ns, "replay held it while A ran");
    cr_assert_eq(gate_decides(5 * 1000, 200 * 1000), FIKIT_ADMIT_HOLD);
    free(L);

    /* 200 us does not fit what is left of the gap at 150 us: held too. */
    load("0 serve 0 A 10\n310 serve 0 B 10\n150 batch 9 gemm 200\n");
    run(FIKIT_POLICY_FILL, 0, &res);
    cr_assert_neq(L[2].how, FIKIT_REPLAY_FILLED);
    cr_assert_eq(gate_decides(150 * 1000, 200 * 1000), FIKIT_ADMIT_HOLD);
    free(L);
}
