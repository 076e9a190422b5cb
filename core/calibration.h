/* Owns: the calibration file, STATE_DIR/calibration: per (substrate, device
 * model) the measured cost of switching back to a high-priority context after
 * another one ran. `fikit calibrate` writes it; fikitd reads it when it opens a
 * device, for substrate_cost_us = auto. Lines:
 *   fikit-calibration 1
 *   SUBSTRATE MODEL COST_NS WHEN      (MODEL with %XX escapes, like profiles) */
#ifndef FIKIT_CORE_CALIBRATION_H
#define FIKIT_CORE_CALIBRATION_H

#include "core/error.h"

#include <stdint.h>

/* The cost for (substrate, model): 0 and *cost_ns, or -ENOENT. */
int fikit_calibration_get(const char *state_dir, const char *substrate, const char *model,
                          int64_t *cost_ns);
/* Records it, replacing an earlier one, atomically. */
int fikit_calibration_put(const char *state_dir, const char *substrate, const char *model,
                          int64_t cost_ns, struct fikit_err *err);

#endif
