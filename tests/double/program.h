/* Shared by the programs that run on the driver doubles (tests/fakecuda,
 * tests/hip): the check of an API call, and --spin. */
#ifndef FIKIT_TESTS_DOUBLE_PROGRAM_H
#define FIKIT_TESTS_DOUBLE_PROGRAM_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* call must return ok (of the API's status_t), else the program says which
 * call failed, where and with what, and exits 1. */
#define DBL_CHECK(status_t, ok, call)                                                              \
    do {                                                                                           \
        status_t r_ = (call);                                                                      \
        if (r_ != (ok)) {                                                                          \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)r_);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* --spin SECONDS keeps launching, one launch every 200 us, as a busy
 * high-priority task for another to be held behind, then prints how many
 * launches it made ("launches N", as the paths programs end). */
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
