/* core/slowdown: the slowdown against a profile's frozen medians. */
#include "core/slowdown.h"

#include <criterion/criterion.h>
#include <stdlib.h>

static struct fikit_measure_store store;
static uint64_t short_key, long_key;
static struct fikit_slowdown S; /* over store */

/* A profile of two kernels: one of 10 us, one of 1000 us (medians). */
static void setup(void)
{
    cr_assert_eq(fikit_measure_init(&store), 0);
    struct fikit_kernel_desc a = {.backend = FIKIT_BACKEND_CUDA, .name = "short_kernel", .grid = {1, 1, 1}};
    struct fikit_kernel_desc b = {.backend = FIKIT_BACKEND_CUDA, .name = "long_kernel", .grid = {1, 1, 1}};
    short_key = fikit_kernel_key(&a);
    long_key = fikit_kernel_key(&b);
    cr_assert_eq(fikit_measure_add_kernel(&store, short_key, &a), 0);
    cr_assert_eq(fikit_measure_add_kernel(&store, long_key, &b), 0);
    for (int i = 0; i < 101; i++) {
        cr_assert_eq(fikit_measure_add_duration(&store, short_key, 9000 + 20 * (uint64_t)i), 0);
        cr_assert_eq(fikit_measure_add_duration(&store, long_key, 990000 + 200 * (uint64_t)i), 0);
    }
    cr_assert_eq(fikit_slowdown_init(&S, &store), 0);
}

static void teardown(void)
{
    fikit_slowdown_free(&S);
    fikit_measure_destroy(&store);
}

TestSuite(slowdown, .init = setup, .fini = teardown);

static double ratio(uint32_t ppm) { return ppm / 1e6; }

/* n measured kernels: the long one and the short one in turn, or only the
 * short one when long_ns is 0; the slowdown after the last, as a ratio. */
static double feed(struct fikit_slowdown *s, int n, uint64_t short_ns, uint64_t long_ns)
{
    uint32_t ppm = 0;
    for (int i = 0; i < n; i++)
        ppm = long_ns && i % 2 == 0 ? fikit_slowdown_add(s, long_key, long_ns)
                                    : fikit_slowdown_add(s, short_key, short_ns);
    return ratio(ppm);
}

Test(slowdown, as_fast_as_the_profile_is_one)
{
    double r = feed(&S, 50, 10000, 1000000);
    cr_assert_float_eq(r, 1.0, 0.05, "the medians are the reference: %f", r);
}

Test(slowdown, twice_as_slow_is_two_and_recovers)
{
    double r = feed(&S, 200, 20000, 0);
    cr_assert_float_eq(r, 2.0, 0.05, "%f", r);
    /* Back to the profile's speed: about the last twenty kernels count. */
    r = feed(&S, 20, 10000, 0);
    cr_assert_lt(r, 1.5, "recovering after 20 kernels: %f", r);
    r = feed(&S, 100, 10000, 0);
    cr_assert_float_eq(r, 1.0, 0.02, "recovered: %f", r);
}

Test(slowdown, long_kernels_weigh_by_their_length)
{
    /* The short kernel 3x slower, the long one as in the profile: time
     * measured against time expected is (30 + 1000) / (10 + 1000), near 1. */
    double r = feed(&S, 200, 30000, 1000000);
    cr_assert_float_eq(r, 1030.0 / 1010.0, 0.01, "%f", r);
}

Test(slowdown, unknown_kernels_and_no_profile_say_nothing)
{
    cr_assert_eq(fikit_slowdown_add(&S, 12345, 10000), 0, "a kernel the profile does not have");
    cr_assert_eq(fikit_slowdown_add(&S, 0, 10000), 0, "key 0 names no kernel");

    struct fikit_slowdown s;
    struct fikit_measure_store empty;
    cr_assert_eq(fikit_measure_init(&empty), 0);
    cr_assert_eq(fikit_slowdown_init(&s, &empty), 0);
    cr_assert_eq(fikit_slowdown_add(&s, short_key, 10000), 0, "no profile: no references");
    fikit_slowdown_free(&s);
    fikit_measure_destroy(&empty);
}
