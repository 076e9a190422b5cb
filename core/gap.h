/* Owns: the prediction of an idle gap. A client publishes, with each launch,
 * the distribution of the gap that followed the same (previous, current)
 * kernel pair before, as a few quantile points. The scheduler asks how much
 * of the gap is left after some of it has passed: the conditional quantile
 * of the remaining time, so a long gap keeps being filled while it lasts and
 * a gap already older than anything seen is never relied on. */
#ifndef FIKIT_CORE_GAP_H
#define FIKIT_CORE_GAP_H

#include "core/stat.h"

#include <stdbool.h>
#include <stdint.h>

#define FIKIT_GAP_POINTS 8

/* The quantiles the points stand for: min, p5, p10, p25, p50, p75, p90, p99. */
extern const double fikit_gap_quantiles[FIKIT_GAP_POINTS];

struct fikit_gap_pred {
    uint32_t q_ns[FIKIT_GAP_POINTS]; /* non-decreasing; all 0 = nothing known */
};

/* Fills the points from a statistic; an empty statistic gives "unknown".
 * Values are capped at UINT32_MAX ns (4.29 s): a longer gap is an idle task. */
void fikit_gap_pred_from_stat(struct fikit_gap_pred *p, const struct fikit_stat *s);
/* A gap of exactly ns every time (tests, replay). */
void fikit_gap_pred_fixed(struct fikit_gap_pred *p, uint64_t ns);
bool fikit_gap_pred_known(const struct fikit_gap_pred *p);

/* The predicted remaining length of a gap that began elapsed_ns ago: the
 * `confidence` quantile (e.g. 0.1: nine times in ten the gap lasts at least
 * this long) of the remaining time, given the gap is still going on.
 * 0 when nothing is known or the gap has outlasted p99. */
uint64_t fikit_gap_remaining(const struct fikit_gap_pred *p, uint64_t elapsed_ns,
                             double confidence);

#endif
