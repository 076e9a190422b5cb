/* Owns: the launch path's view of a task's measurements: for each kernel
 * key its predicted duration, for each (previous, current) pair the
 * predicted gap after it. Read without locks on every launch; written by
 * the learner thread alone (fikit_predictor_update) from the measurement
 * store. Fixed capacity: an entry that does not fit is simply unknown. */
#ifndef FIKIT_CORE_PREDICT_H
#define FIKIT_CORE_PREDICT_H

#include "core/gap.h"
#include "core/measure.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define FIKIT_PRED_CAP 16384 /* power of two */

/* Which quantile of a kernel's duration is its prediction: high, so a
 * lower-priority kernel is rarely longer than the room it was given. */
#define FIKIT_DURATION_QUANTILE 0.9

struct fikit_pred_dur {
    _Atomic uint64_t key;
    _Atomic uint64_t dur_ns;
};

/* 52 bytes, padded to one cache line each: a lookup never straddles two. */
struct fikit_pred_gap {
    _Alignas(64) _Atomic uint64_t key;
    _Atomic uint64_t prev;
    _Atomic uint32_t seq; /* seqlock over q */
    _Atomic uint32_t q[FIKIT_GAP_POINTS];
};

struct fikit_predictor {
    struct fikit_pred_dur dur[FIKIT_PRED_CAP];
    struct fikit_pred_gap gap[FIKIT_PRED_CAP];
};

struct fikit_predictor *fikit_predictor_new(void);
void fikit_predictor_free(struct fikit_predictor *p);

/* 0 when the kernel was never measured. */
uint64_t fikit_predict_duration(const struct fikit_predictor *p, uint64_t key);
/* false (and *out unknown) when the pair was never measured. */
bool fikit_predict_gap(const struct fikit_predictor *p, uint64_t prev, uint64_t key,
                       struct fikit_gap_pred *out);

/* Writer side: one thread only. */
void fikit_predictor_set_duration(struct fikit_predictor *p, uint64_t key, uint64_t dur_ns);
void fikit_predictor_set_gap(struct fikit_predictor *p, uint64_t prev, uint64_t key,
                             const struct fikit_gap_pred *g);
/* Refreshes one kernel, one pair, or everything from a store. */
void fikit_predictor_update_kernel(struct fikit_predictor *p, const struct fikit_measure_store *st,
                                   uint64_t key);
void fikit_predictor_update_gap(struct fikit_predictor *p, const struct fikit_measure_store *st,
                                uint64_t prev, uint64_t key);
void fikit_predictor_load(struct fikit_predictor *p, const struct fikit_measure_store *st);

#endif
