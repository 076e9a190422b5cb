#include "core/clock.h"

#include <time.h>

uint64_t fikit_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * FIKIT_NS_PER_S + (uint64_t)ts.tv_nsec;
}
