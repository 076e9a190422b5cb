#include "core/clock.h"

#include <time.h>

uint64_t fikit_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * FIKIT_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static uint64_t monotonic_now(struct fikit_clock *self)
{
    (void)self;
    return fikit_now_ns();
}

struct fikit_clock fikit_clock_monotonic = {.now = monotonic_now};

static uint64_t manual_now(struct fikit_clock *self) { return self->manual_ns; }

void fikit_clock_manual_init(struct fikit_clock *c, uint64_t start_ns)
{
    c->now = manual_now;
    c->manual_ns = start_ns;
}

void fikit_clock_manual_set(struct fikit_clock *c, uint64_t ns) { c->manual_ns = ns; }

void fikit_clock_manual_advance(struct fikit_clock *c, uint64_t delta_ns) { c->manual_ns += delta_ns; }
