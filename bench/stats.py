"""Confidence intervals for latency quantiles and their ratios, free of any
assumption about the latency distribution.

The q-quantile of the population lies between two order statistics of a sample
of n with a probability given by the binomial distribution of how many samples
fall below it; with the normal approximation the ranks are
n*q -/+ z*sqrt(n*q*(1-q)) (rounded outward, 1-based). A p99 from 300 requests
cannot be bounded above that way at all: its upper rank falls past the largest
sample, which is what "?" means in bench/evaluate's tables.

Each quantile is taken at 97.5 % so that the two of a ratio hold together with
at least 95 % (Bonferroni); the ratio's interval is then
[lo(a) / hi(b), hi(a) / lo(b)]."""
import math

Z_975 = 2.2414  # two-sided 97.5 %


def quantile_interval(values, q, z=Z_975):
    """(lo, hi) for the q-quantile; None for a side the sample cannot bound."""
    v = sorted(values)
    n = len(v)
    if not n or not 0 < q < 1:
        return None, None
    centre, half = n * q, z * math.sqrt(n * q * (1 - q))
    lo_rank, hi_rank = math.floor(centre - half), math.ceil(centre + half)
    return (v[lo_rank - 1] if lo_rank >= 1 else None,
            v[hi_rank - 1] if hi_rank <= n else None)


def ratio_interval(a, b, q):
    """(lo, hi) for quantile q of sample a over that of sample b; None for
    an unbounded side."""
    alo, ahi = quantile_interval(a, q)
    blo, bhi = quantile_interval(b, q)
    lo = alo / bhi if alo is not None and bhi else None
    hi = ahi / blo if ahi is not None and blo else None
    return lo, hi


def fmt_interval(lo, hi):
    """'0.95-1.40', with '?' for an unbounded side."""
    return (f"{lo:.2f}" if lo is not None else "?") + "-" + (f"{hi:.2f}" if hi is not None else "?")
