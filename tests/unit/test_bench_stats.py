"""bench/stats.py: the order-statistic intervals of quantiles and of their
ratios, checked against exact binomial coverage and hand-worked ranks."""
import math
import os
import random
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import stats  # noqa: E402

failures = 0


def check(cond, msg):
    global failures
    print(("ok: " if cond else "FAIL: ") + msg, flush=True)
    failures += not cond


def binom_cdf(k, n, p):
    """P(X <= k) for X ~ Binomial(n, p)."""
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(0, k + 1))


# Ranks by hand: n = 1000, median: 500 -/+ 2.2414 * sqrt(250) = 464.56 .. 535.44,
# rounded outward to ranks 464 and 536; the values 1..1000 are their own ranks.
lo, hi = stats.quantile_interval(list(range(1000, 0, -1)), 0.5)
check((lo, hi) == (464, 536), f"median of 1..1000 (shuffled order): ranks 464 and 536, got {lo}, {hi}")

# The interval [X(l), X(u)] covers the population quantile exactly when at
# least l and fewer than u samples fall below it: its coverage is binomial.
for n, q in ((1000, 0.5), (830, 0.99), (300, 0.5)):
    centre, half = n * q, stats.Z_975 * math.sqrt(n * q * (1 - q))
    l, u = math.floor(centre - half), math.ceil(centre + half)
    coverage = binom_cdf(u - 1, n, q) - binom_cdf(l - 1, n, q)
    check(coverage >= 0.965, f"n={n}, q={q}: ranks {l}..{u} cover the quantile with {coverage:.4f} "
                             "(normal approximation of 0.975)")

# A p99 of 300 requests cannot be bounded above; of 830 it can.
check(stats.quantile_interval(range(300), 0.99)[1] is None, "p99 of 300: no upper bound")
check(stats.quantile_interval(range(830), 0.99)[1] is not None, "p99 of 830: an upper bound")
check(stats.quantile_interval([], 0.5) == (None, None), "no samples: no interval")

# Ratio: of a sample and itself scaled by 2, the interval holds 2; an
# unbounded side of either quantile leaves that side of the ratio open.
rnd = random.Random(7)
a = [rnd.expovariate(1.0) for _ in range(2000)]
lo, hi = stats.ratio_interval([2 * x for x in a], a, 0.9)
check(lo < 2 < hi, f"2x the same sample: the p90 ratio's interval {lo:.3f}..{hi:.3f} holds 2")
lo, hi = stats.ratio_interval(a[:300], a, 0.99)
check(hi is None and lo is not None, "a p99 of 300 over one of 2000: open above only")
check(stats.fmt_interval(0.951, None) == "0.95-?", "formatting: '?' for an open side")

# Coverage by simulation: two samples of one distribution, the ratio's
# interval holds 1 in at least 95 % of trials (Bonferroni of two 97.5 %).
held = sum(lo <= 1 <= hi for lo, hi in
           (stats.ratio_interval([rnd.expovariate(1.0) for _ in range(900)],
                                 [rnd.expovariate(1.0) for _ in range(900)], 0.99) for _ in range(300)))
check(held >= 0.95 * 300 - 8, f"same distribution, p99 of 900 each: the interval held 1 in {held} of 300 trials")
sys.exit(1 if failures else 0)
