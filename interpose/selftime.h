/* Owns: fikit's measurement of its own cost. With FIKIT_SELF_TIME=FILE in
 * the environment, every hook times what it adds to a launch (everything but
 * the real call) and, at exit, writes the count and the median and p99 in
 * nanoseconds to FILE, with the cost of the clock reads themselves. Off, it
 * costs one predictable branch per launch. bench/launch-cost reads it. */
#ifndef FIKIT_INTERPOSE_SELFTIME_H
#define FIKIT_INTERPOSE_SELFTIME_H

#include "core/clock.h"
#include "interpose/client.h"

#include <stdbool.h>
#include <stdint.h>

/* The switch is fikit_client.selftime_on, in the client's first cache line
 * (client.h), which every launch reads anyway. */

/* Records one launch: entry, just before the real call, just after it, exit. */
void fikit_selftime_record(uint64_t t0, uint64_t t1, uint64_t t2, uint64_t t3);

static inline uint64_t fikit_selftime_now(void) { return fikit_client.selftime_on ? fikit_now_ns() : 0; }

#endif
