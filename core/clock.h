/* Owns: time. Everything that decides by time takes a struct fikit_clock so
 * tests and the replay tool can drive time by hand; the real clock is
 * CLOCK_MONOTONIC in nanoseconds, which all processes on a node share. */
#ifndef FIKIT_CORE_CLOCK_H
#define FIKIT_CORE_CLOCK_H

#include <stdint.h>

struct fikit_clock {
    uint64_t (*now)(struct fikit_clock *self);
    uint64_t manual_ns; /* used by the manual clock only */
};

/* CLOCK_MONOTONIC in ns; a vDSO call, no system call on Linux. */
uint64_t fikit_now_ns(void);

/* The real clock. */
extern struct fikit_clock fikit_clock_monotonic;

/* A clock that only moves when told to. */
void fikit_clock_manual_init(struct fikit_clock *c, uint64_t start_ns);
void fikit_clock_manual_set(struct fikit_clock *c, uint64_t ns);
void fikit_clock_manual_advance(struct fikit_clock *c, uint64_t delta_ns);

static inline uint64_t fikit_clock_now(struct fikit_clock *c) { return c->now(c); }

#define FIKIT_NS_PER_US 1000ull
#define FIKIT_NS_PER_MS 1000000ull
#define FIKIT_NS_PER_S 1000000000ull

#endif
