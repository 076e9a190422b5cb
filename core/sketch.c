#include "core/sketch.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* gamma = (1 + a) / (1 - a); a bin covers (gamma^(i-1), gamma^i]. */
#define GAMMA ((1.0 + FIKIT_SKETCH_ACCURACY) / (1.0 - FIKIT_SKETCH_ACCURACY))
/* log_gamma(2^64) < 2230: indexes stay well inside int16. */
#define MAX_INDEX 2300

/* A constant the compiler folds (GAMMA is one). Not cached in a static:
 * fikitd's arbiters, one per device, call this at once. */
static double log_gamma(void) { return log(GAMMA); }

void fikit_sketch_init(struct fikit_sketch *s) { memset(s, 0, sizeof *s); }

void fikit_sketch_destroy(struct fikit_sketch *s)
{
    free(s->index);
    free(s->count);
    fikit_sketch_init(s);
}

static int reserve(struct fikit_sketch *s)
{
    if (s->nbins < s->cap)
        return 0;
    unsigned ncap = s->cap ? s->cap * 2u : 4u;
    if (ncap > FIKIT_SKETCH_MAX_BINS)
        ncap = FIKIT_SKETCH_MAX_BINS;
    int16_t *ni = realloc(s->index, ncap * sizeof *ni);
    if (!ni)
        return -ENOMEM;
    s->index = ni;
    uint32_t *nc = realloc(s->count, ncap * sizeof *nc);
    if (!nc)
        return -ENOMEM;
    s->count = nc;
    s->cap = (uint16_t)ncap;
    return 0;
}

int fikit_sketch_bin_of(uint64_t value)
{
    if (value <= 1)
        return 0;
    return (int)ceil(log((double)value) / log_gamma());
}

uint64_t fikit_sketch_bin_value(int index)
{
    if (index <= 0)
        return 1;
    /* The value whose relative distance to both bin edges is equal. */
    double v = 2.0 * pow(GAMMA, index) / (GAMMA + 1.0);
    if (v >= 1.8e19)
        return UINT64_MAX;
    return (uint64_t)llround(v);
}

static int find(const struct fikit_sketch *s, int index, int *found)
{
    int lo = 0, hi = s->nbins;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (s->index[mid] < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < s->nbins && s->index[lo] == index;
    return lo;
}

static void add_count(uint32_t *slot, uint64_t n)
{
    uint64_t v = (uint64_t)*slot + n;
    *slot = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static int insert_bin(struct fikit_sketch *s, int index, uint64_t n)
{
    int found;
    int pos = find(s, index, &found);
    if (found) {
        add_count(&s->count[pos], n);
        return 0;
    }
    if (s->nbins == FIKIT_SKETCH_MAX_BINS) {
        if (pos == 0) {
            /* Below every bin: fold into the lowest one. */
            add_count(&s->count[0], n);
            return 0;
        }
        /* Fold the lowest bin into the next one to make room. */
        add_count(&s->count[1], s->count[0]);
        memmove(&s->index[0], &s->index[1], (size_t)(s->nbins - 1) * sizeof s->index[0]);
        memmove(&s->count[0], &s->count[1], (size_t)(s->nbins - 1) * sizeof s->count[0]);
        s->nbins--;
        pos--;
    } else if (reserve(s)) {
        return -ENOMEM;
    }
    memmove(&s->index[pos + 1], &s->index[pos], (size_t)(s->nbins - pos) * sizeof s->index[0]);
    memmove(&s->count[pos + 1], &s->count[pos], (size_t)(s->nbins - pos) * sizeof s->count[0]);
    s->index[pos] = (int16_t)index;
    s->count[pos] = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    s->nbins++;
    return 0;
}

int fikit_sketch_add(struct fikit_sketch *s, uint64_t value)
{
    if (value == 0) {
        s->zero_count++;
        return 0;
    }
    return insert_bin(s, fikit_sketch_bin_of(value), 1);
}

int fikit_sketch_add_bin(struct fikit_sketch *s, int index, uint32_t count)
{
    if (index < 0 || index > MAX_INDEX)
        return -ERANGE;
    return insert_bin(s, index, count);
}

int fikit_sketch_merge(struct fikit_sketch *into, const struct fikit_sketch *from)
{
    into->zero_count += from->zero_count;
    for (int i = 0; i < from->nbins; i++) {
        int rc = insert_bin(into, from->index[i], from->count[i]);
        if (rc)
            return rc;
    }
    return 0;
}

uint64_t fikit_sketch_total(const struct fikit_sketch *s)
{
    uint64_t n = s->zero_count;
    for (int i = 0; i < s->nbins; i++)
        n += s->count[i];
    return n;
}

uint64_t fikit_sketch_quantile(const struct fikit_sketch *s, double q)
{
    uint64_t total = fikit_sketch_total(s);
    if (total == 0)
        return 0;
    if (q < 0)
        q = 0;
    if (q > 1)
        q = 1;
    /* The sample of rank floor(q * (n - 1)), counting from 0. */
    uint64_t rank = (uint64_t)(q * (double)(total - 1));
    if (rank < s->zero_count)
        return 0;
    uint64_t seen = s->zero_count;
    for (int i = 0; i < s->nbins; i++) {
        seen += s->count[i];
        if (rank < seen)
            return fikit_sketch_bin_value(s->index[i]);
    }
    return fikit_sketch_bin_value(s->index[s->nbins - 1]);
}

double fikit_sketch_cdf(const struct fikit_sketch *s, uint64_t value)
{
    uint64_t total = fikit_sketch_total(s);
    if (total == 0)
        return 0.0;
    uint64_t below = s->zero_count;
    if (value > 0) {
        int bin = fikit_sketch_bin_of(value);
        for (int i = 0; i < s->nbins && s->index[i] <= bin; i++)
            below += s->count[i];
    }
    return (double)below / (double)total;
}
