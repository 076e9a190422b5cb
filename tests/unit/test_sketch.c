#include "core/sketch.h"
#include "core/stat.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t exact_quantile(uint64_t *v, size_t n, double q)
{
    return v[(size_t)(q * (double)(n - 1))];
}

static void check_accuracy(uint64_t *v, size_t n)
{
    struct fikit_sketch s;
    fikit_sketch_init(&s);
    for (size_t i = 0; i < n; i++)
        fikit_sketch_add(&s, v[i]);
    qsort(v, n, sizeof *v, cmp_u64);
    const double qs[] = {0.5, 0.9, 0.99};
    for (int i = 0; i < 3; i++) {
        double want = (double)exact_quantile(v, n, qs[i]);
        double got = (double)fikit_sketch_quantile(&s, qs[i]);
        cr_assert(fabs(got - want) <= want * FIKIT_SKETCH_ACCURACY * 1.01 + 1,
                  "q%.2f: got %.0f want %.0f", qs[i], got, want);
    }
    cr_assert_leq(s.nbins, FIKIT_SKETCH_MAX_BINS);
}

Test(sketch, quantiles_within_one_percent)
{
    srand(1);
    size_t n = 20000;
    uint64_t *v = malloc(n * sizeof *v);
    /* Kernel-like durations: 20..60 us. */
    for (size_t i = 0; i < n; i++)
        v[i] = 20000 + (uint64_t)(rand() % 40000);
    check_accuracy(v, n);
    /* Log-normal-ish gaps over three decades: still exact for p50..p99
     * although the lowest bins are folded. */
    for (size_t i = 0; i < n; i++)
        v[i] = (uint64_t)(1000.0 * exp((rand() % 7000) / 1000.0));
    check_accuracy(v, n);
    free(v);
}

Test(sketch, memory_is_bounded)
{
    struct fikit_sketch s;
    fikit_sketch_init(&s);
    /* One sample in each bin from 1 ns to 1e13 ns would need ~1500 bins. */
    for (int i = 0; i < 1500; i++)
        fikit_sketch_add(&s, fikit_sketch_bin_value(i));
    cr_assert_eq(s.nbins, FIKIT_SKETCH_MAX_BINS);
    /* The top is still right. */
    uint64_t top = fikit_sketch_bin_value(1499);
    cr_assert_eq(fikit_sketch_quantile(&s, 1.0), top);
    fikit_sketch_destroy(&s);
}

Test(sketch, zeros_and_empty)
{
    struct fikit_sketch s;
    fikit_sketch_init(&s);
    cr_assert_eq(fikit_sketch_quantile(&s, 0.5), 0);
    cr_assert_eq(fikit_sketch_cdf(&s, 100), 0.0);
    fikit_sketch_add(&s, 0);
    fikit_sketch_add(&s, 0);
    fikit_sketch_add(&s, 1000);
    cr_assert_eq(fikit_sketch_quantile(&s, 0.5), 0);
    cr_assert_eq(fikit_sketch_total(&s), 3);
    cr_assert_float_eq(fikit_sketch_cdf(&s, 0), 2.0 / 3.0, 1e-9);
    cr_assert_float_eq(fikit_sketch_cdf(&s, 1000), 1.0, 1e-9);
}

Test(sketch, merge_equals_adding_everything_to_one)
{
    struct fikit_sketch a, b, all;
    fikit_sketch_init(&a);
    fikit_sketch_init(&b);
    fikit_sketch_init(&all);
    srand(7);
    for (int i = 0; i < 5000; i++) {
        uint64_t v = 1000 + (uint64_t)(rand() % 100000);
        fikit_sketch_add(i % 3 ? &a : &b, v);
        fikit_sketch_add(&all, v);
    }
    fikit_sketch_merge(&a, &b);
    cr_assert_eq(a.nbins, all.nbins);
    for (int i = 0; i < a.nbins; i++) {
        cr_assert_eq(a.index[i], all.index[i]);
        cr_assert_eq(a.count[i], all.count[i]);
    }
}

Test(stat, exact_moments_and_clamped_quantiles)
{
    struct fikit_stat s, t;
    fikit_stat_init(&s);
    fikit_stat_init(&t);
    cr_assert_eq(fikit_stat_mean(&s), 0);
    cr_assert_eq(fikit_stat_quantile(&s, 0.5), 0);
    for (uint64_t v = 1; v <= 100; v++)
        fikit_stat_add(v <= 50 ? &s : &t, v * 1000);
    fikit_stat_merge(&s, &t);
    cr_assert_eq(s.count, 100);
    cr_assert_eq(s.min, 1000);
    cr_assert_eq(s.max, 100000);
    cr_assert_eq(fikit_stat_mean(&s), 50500);
    cr_assert_leq(fikit_stat_quantile(&s, 1.0), 100000, "never above the exact max");
    cr_assert_geq(fikit_stat_quantile(&s, 0.0), 1000, "never below the exact min");
    uint64_t p50 = fikit_stat_quantile(&s, 0.5);
    cr_assert(p50 >= 49000 && p50 <= 51500, "p50 %lu", (unsigned long)p50);
}
