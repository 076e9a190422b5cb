#include "core/gap.h"

#include <string.h>

const double fikit_gap_quantiles[FIKIT_GAP_POINTS] = {0.0, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.99};

static uint32_t cap32(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

void fikit_gap_pred_from_stat(struct fikit_gap_pred *p, const struct fikit_stat *s)
{
    memset(p, 0, sizeof *p);
    if (!s || s->count == 0)
        return;
    uint32_t last = 0;
    for (int i = 0; i < FIKIT_GAP_POINTS; i++) {
        uint32_t v = cap32(i == 0 ? s->min : fikit_stat_quantile(s, fikit_gap_quantiles[i]));
        p->q_ns[i] = v < last ? last : v;
        last = p->q_ns[i];
    }
}

void fikit_gap_pred_fixed(struct fikit_gap_pred *p, uint64_t ns)
{
    for (int i = 0; i < FIKIT_GAP_POINTS; i++)
        p->q_ns[i] = cap32(ns);
}

bool fikit_gap_pred_known(const struct fikit_gap_pred *p) { return p->q_ns[FIKIT_GAP_POINTS - 1] != 0; }

/* Cumulative probability at x, linear between the points. */
static double cdf(const struct fikit_gap_pred *p, uint64_t x)
{
    if (x < p->q_ns[0])
        return 0.0;
    for (int i = 1; i < FIKIT_GAP_POINTS; i++) {
        if (x < p->q_ns[i]) {
            double lo = p->q_ns[i - 1], hi = p->q_ns[i];
            double f = ((double)x - lo) / (hi - lo);
            return fikit_gap_quantiles[i - 1] + f * (fikit_gap_quantiles[i] - fikit_gap_quantiles[i - 1]);
        }
    }
    return fikit_gap_quantiles[FIKIT_GAP_POINTS - 1];
}

/* Inverse of cdf, for q within [0, p99]. */
static double quantile(const struct fikit_gap_pred *p, double q)
{
    for (int i = 1; i < FIKIT_GAP_POINTS; i++) {
        if (q <= fikit_gap_quantiles[i]) {
            double qlo = fikit_gap_quantiles[i - 1], qhi = fikit_gap_quantiles[i];
            double f = (q - qlo) / (qhi - qlo);
            return p->q_ns[i - 1] + f * ((double)p->q_ns[i] - p->q_ns[i - 1]);
        }
    }
    return p->q_ns[FIKIT_GAP_POINTS - 1];
}

uint64_t fikit_gap_remaining(const struct fikit_gap_pred *p, uint64_t elapsed_ns,
                             double confidence)
{
    if (!fikit_gap_pred_known(p) || elapsed_ns >= p->q_ns[FIKIT_GAP_POINTS - 1])
        return 0;
    double top = fikit_gap_quantiles[FIKIT_GAP_POINTS - 1];
    double f = cdf(p, elapsed_ns);
    /* Rescale: the remaining distribution is what lies above f, up to p99. */
    double target = f + confidence * (top - f);
    double end = quantile(p, target);
    return end > (double)elapsed_ns ? (uint64_t)(end - (double)elapsed_ns) : 0;
}
