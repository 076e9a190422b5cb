/* The collective rule (core/collective.h, docs/DESIGN.md "Collectives"),
 * with explicit time and snapshots: which launches belong to a collective,
 * and that one is never held, paced or made to look again while the same
 * launch of any other kernel would be; where it fits a gap it fills. */
#include "core/collective.h"

#include "admit_fixture.h"

#include <criterion/criterion.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull

static struct fikit_admit_task T[2];
static struct fikit_view V;
static struct fikit_admit A;

/* A level-9 rank beside a level-0 service on its device, whose kernel ran
 * until busy and then expects a gap of gap. */
static void setup(uint64_t busy, uint64_t gap)
{
    admit_fixture(&V, T, sizeof T / sizeof T[0], 0, busy, gap);
}

static enum fikit_admit_kind admit(uint64_t now, uint64_t dur, bool collective)
{
    fikit_collective_admit(&V, now, dur, collective, &A);
    return A.kind;
}

/* is says yes to each name of yes and no to each of no and to NULL (both
 * lists end with NULL). */
static void classifies(bool (*is)(const char *), const char *const *yes, const char *const *no)
{
    for (; *yes; yes++)
        cr_expect(is(*yes), "%s: not recognised", *yes);
    for (; *no; no++)
        cr_expect_not(is(*no), "%s: recognised", *no);
    cr_expect_not(is(NULL), "NULL: recognised");
}

Test(collective, named_by_nccl_in_any_case)
{
    const char *const yes[] = {"ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                               "_Z29ncclKernel_AllGather_RING_LLP11ncclDevComm",
                               "rcclGenericKernel_NCCL_SendRecv", NULL};
    const char *const no[] = {"_Z5scalePffi", "ncc", "", NULL};
    classifies(fikit_collective_kernel, yes, no);
}

Test(collective, launched_from_nccl_or_rccl)
{
    const char *const yes[] = {"/usr/lib/x86_64-linux-gnu/libnccl.so.2",
                               "/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2",
                               "/opt/rocm/lib/librccl.so.1", "libnccl-net.so", NULL};
    /* The file's name decides, not its folder (libtorch_cuda.so). */
    const char *const no[] = {"/usr/lib/libcudart.so.12", "/opt/libnccl/lib/libtorch_cuda.so", NULL};
    classifies(fikit_collective_library, yes, no);
}

Test(collective, never_held_behind_a_busy_level)
{
    setup(50 * US, 300 * US);
    cr_assert_eq(admit(10 * US, 100 * US, false), FIKIT_ADMIT_HOLD, "any other kernel is held");
    cr_assert_eq(admit(10 * US, 100 * US, true), FIKIT_ADMIT_GO, "the collective goes");
    cr_assert_eq(admit(10 * US, 0, true), FIKIT_ADMIT_GO, "measured or not");
    V.queued = 3;
    cr_assert_eq(admit(60 * US, 100 * US, true), FIKIT_ADMIT_GO, "not behind what fikitd holds either");
    V.policy = FIKIT_POLICY_STRICT;
    cr_assert_eq(admit(60 * US, 100 * US, false), FIKIT_ADMIT_HOLD);
    cr_assert_eq(admit(60 * US, 100 * US, true), FIKIT_ADMIT_GO, "nor under strict");
}

Test(collective, fills_a_gap_it_fits)
{
    setup(50 * US, 300 * US);
    cr_assert_eq(admit(50 * US, 200 * US, true), FIKIT_ADMIT_FILL,
                 "it takes its room, so other lower work does not stack on it");
    cr_assert_eq(A.room_ns, 300 * US);
    cr_assert_eq(A.fill_until_ns, (50 * US + 200 * US + 1) & ~FIKIT_FILL_LOCK);
    cr_assert_eq(admit(50 * US, 290 * US, true), FIKIT_ADMIT_GO, "too long for the room: it goes anyway");
}

Test(collective, never_paced_or_rechecked)
{
    setup(50 * US, 300 * US);
    /* The service went idle (its last launch 30 ms ago): lower work goes,
     * paced to max_queued_us. */
    V.own_busy_until_ns = 31 * MS;
    cr_assert_eq(admit(30 * MS, 100 * US, false), FIKIT_ADMIT_PACE);
    cr_assert_eq(admit(30 * MS, 100 * US, true), FIKIT_ADMIT_GO);
    cr_assert_eq(A.until_ns, 0);
    /* share = beside, beside a level running too slow. */
    setup(50 * US, 300 * US);
    V.beside = true;
    V.beside_max_slowdown_ppm = 1100000;
    T[0].slowdown_ppm = 1500000;
    T[0].slowdown_ns = 5 * US;
    cr_assert_eq(admit(10 * US, 100 * US, false), FIKIT_ADMIT_RECHECK);
    cr_assert_eq(admit(10 * US, 100 * US, true), FIKIT_ADMIT_GO);
}

Test(collective, never_confined_to_part_of_the_sms)
{
    /* A beside task whose launches fikit confines: its other kernels go
     * into its share while the service is active, a collective's never. */
    setup(50 * US, 300 * US);
    V.beside = true;
    V.confine_pct = 50;
    cr_assert_eq(admit(10 * US, 100 * US, false), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 50);
    cr_assert_eq(admit(10 * US, 100 * US, true), FIKIT_ADMIT_GO);
    cr_assert_eq(A.sm_pct, 0, "a collective has the whole device");
}

Test(collective, the_same_answer_for_any_other_launch)
{
    /* Over a range of instants and durations, a launch that is not a
     * collective gets fikit_admit's answer unchanged. */
    setup(50 * US, 300 * US);
    for (uint64_t now = 0; now < 40 * MS; now += 97 * US)
        for (uint64_t dur = 0; dur < 400 * US; dur += 50 * US) {
            struct fikit_admit plain;
            fikit_admit(&V, now, dur, &plain);
            fikit_collective_admit(&V, now, dur, false, &A);
            cr_assert_eq(memcmp(&plain, &A, sizeof A), 0, "at %llu ns, %llu ns", (unsigned long long)now,
                         (unsigned long long)dur);
        }
}
