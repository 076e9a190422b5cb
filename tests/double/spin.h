/* Shared by the paths programs of the driver doubles (tests/fakecuda,
 * tests/hip): --spin SECONDS keeps launching, one launch every 200 us, as a
 * busy high-priority task for another to be held behind, then prints how many
 * launches it made ("launches N", as the paths programs end). */
#ifndef FIKIT_TESTS_DOUBLE_SPIN_H
#define FIKIT_TESTS_DOUBLE_SPIN_H

#include <stdio.h>
#include <time.h>

static inline int dbl_spin(double seconds, void (*launch)(void *arg), void *arg)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long count = 0;
    do {
        launch(arg);
        count++;
        struct timespec pause = {0, 200000};
        nanosleep(&pause, NULL);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
    printf("launches %ld\n", count);
    return 0;
}

#endif
