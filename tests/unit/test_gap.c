#include "core/gap.h"

#include <criterion/criterion.h>

Test(gap, unknown_gives_no_room)
{
    struct fikit_gap_pred p;
    fikit_gap_pred_from_stat(&p, NULL);
    cr_assert_not(fikit_gap_pred_known(&p));
    cr_assert_eq(fikit_gap_remaining(&p, 0, 0.1), 0);
}

Test(gap, fixed_gap_counts_down)
{
    struct fikit_gap_pred p;
    fikit_gap_pred_fixed(&p, 1000);
    cr_assert_eq(fikit_gap_remaining(&p, 0, 0.1), 1000);
    cr_assert_eq(fikit_gap_remaining(&p, 400, 0.1), 600);
    cr_assert_eq(fikit_gap_remaining(&p, 1000, 0.1), 0);
    cr_assert_eq(fikit_gap_remaining(&p, 5000, 0.1), 0, "older than anything seen");
}

Test(gap, conservative_quantile_at_start)
{
    /* Gaps uniformly spread over 1000..2000 ns. */
    struct fikit_stat s;
    fikit_stat_init(&s);
    for (int i = 0; i <= 1000; i++)
        fikit_stat_add(&s, 1000 + (uint64_t)i);
    struct fikit_gap_pred p;
    fikit_gap_pred_from_stat(&p, &s);
    uint64_t r = fikit_gap_remaining(&p, 0, 0.1);
    /* p10 of the (capped at p99) distribution: about 1099 ns, 1 % bins. */
    cr_assert(r > 1070 && r < 1130, "remaining %lu", (unsigned long)r);
    /* Half-way through, the remaining time shrinks but stays positive. */
    uint64_t r2 = fikit_gap_remaining(&p, 1500, 0.1);
    cr_assert(r2 > 0 && r2 < 200, "remaining %lu", (unsigned long)r2);
}

Test(gap, long_tail_keeps_room_as_gap_ages)
{
    /* Most gaps are short (10 us), some long (10 ms): once a gap has outlived
     * the short ones, the estimate moves to the long mode. */
    struct fikit_stat s;
    fikit_stat_init(&s);
    for (int i = 0; i < 70; i++)
        fikit_stat_add(&s, 10000);
    for (int i = 0; i < 30; i++)
        fikit_stat_add(&s, 10000000);
    struct fikit_gap_pred p;
    fikit_gap_pred_from_stat(&p, &s);
    cr_assert_lt(fikit_gap_remaining(&p, 0, 0.1), 20000);
    cr_assert_gt(fikit_gap_remaining(&p, 2000000, 0.1), 1000000);
}
