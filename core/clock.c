#include "core/clock.h"

#include <time.h>

uint64_t fikit_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * FIKIT_NS_PER_S + (uint64_t)ts.tv_nsec;
}

uint64_t fikit_thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * FIKIT_NS_PER_S + (uint64_t)ts.tv_nsec;
}
