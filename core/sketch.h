/* Owns: the streaming quantile estimator behind every duration and gap
 * statistic. It is a DDSketch-style log histogram: a value v > 0 falls in
 * bin ceil(log_gamma(v)), so every quantile it reports is within
 * FIKIT_SKETCH_ACCURACY (relative) of a true sample, whatever the range.
 * Bins are stored sparsely (only those holding samples), so a narrow kernel
 * duration costs a few bytes. Memory is bounded: at most
 * FIKIT_SKETCH_MAX_BINS bins, which at 1 % covers a range of 7e8 (1 us to
 * 12 min): only a wider distribution folds its lowest bins together, and
 * the quantiles above the fold stay exact to the guarantee.
 * Two sketches merge bin by bin. */
#ifndef FIKIT_CORE_SKETCH_H
#define FIKIT_CORE_SKETCH_H

#include <stdint.h>

#define FIKIT_SKETCH_ACCURACY 0.01
#define FIKIT_SKETCH_MAX_BINS 1024

struct fikit_sketch {
    uint64_t zero_count; /* samples equal to 0 */
    uint16_t nbins, cap;
    int16_t *index;      /* ascending; NULL while empty */
    uint32_t *count;
};

void fikit_sketch_init(struct fikit_sketch *s);
void fikit_sketch_destroy(struct fikit_sketch *s);
/* Returns 0 or -ENOMEM (the sample is then dropped, never misplaced). */
int fikit_sketch_add(struct fikit_sketch *s, uint64_t value);
int fikit_sketch_merge(struct fikit_sketch *into, const struct fikit_sketch *from);
uint64_t fikit_sketch_total(const struct fikit_sketch *s);
/* The q-quantile (0 <= q <= 1) of the samples; 0 for an empty sketch. */
uint64_t fikit_sketch_quantile(const struct fikit_sketch *s, double q);
/* Fraction of samples <= value, in [0,1]; 0 for an empty sketch. */
double fikit_sketch_cdf(const struct fikit_sketch *s, uint64_t value);

/* Bin arithmetic, exposed for the profile format and tests. */
int fikit_sketch_bin_of(uint64_t value);
uint64_t fikit_sketch_bin_value(int index);
/* Adds count samples to one bin (used when loading a profile). Returns 0,
 * -ERANGE for an index outside what any 64-bit value maps to, -ENOMEM. */
int fikit_sketch_add_bin(struct fikit_sketch *s, int index, uint32_t count);

#endif
