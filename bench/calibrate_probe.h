/* The switch-cost probe shared by the OpenCL and CUDA probes: a victim and an
 * intruder process, each with its own context (they fork before either touches
 * the device). Per round the victim times a tiny kernel (launch to completion)
 * once after the device sat idle, and once right after the intruder ran one.
 * Prints the device name and both medians; `fikit calibrate` runs it. */
#ifndef FIKIT_BENCH_CALIBRATE_PROBE_H
#define FIKIT_BENCH_CALIBRATE_PROBE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The device part, per backend. */
static int probe_open(char *name, size_t len);
static int probe_tiny_kernel(void); /* launch and wait for it; 0 on success */

static uint64_t probe_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int probe_main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    if (rounds < 5) {
        fprintf(stderr, "Usage: %s [ROUNDS>=5]\n", argv[0]);
        return 2;
    }
    int to_child[2], to_parent[2];
    if (pipe(to_child) || pipe(to_parent))
        return 1;
    pid_t pid = fork();
    if (pid == 0) { /* the intruder */
        char c, name[128];
        close(to_child[1]); /* so that the victim closing it ends the loop below */
        close(to_parent[0]);
        if (probe_open(name, sizeof name))
            _exit(1);
        while (read(to_child[0], &c, 1) == 1) {
            if (probe_tiny_kernel())
                _exit(1);
            if (write(to_parent[1], "k", 1) != 1)
                _exit(1);
        }
        _exit(0);
    }
    close(to_child[0]);
    close(to_parent[1]);
    char name[128] = "";
    if (probe_open(name, sizeof name))
        return 1;
    uint64_t *alone = (uint64_t *)malloc(rounds * sizeof *alone);
    uint64_t *after = (uint64_t *)malloc(rounds * sizeof *after);
    probe_tiny_kernel(); /* warm-up */
    for (int r = 0; r < rounds; r++) {
        struct timespec idle = {0, 3000000}; /* 3 ms: every other context long idle */
        nanosleep(&idle, NULL);
        uint64_t t0 = probe_now();
        if (probe_tiny_kernel())
            return 1;
        alone[r] = probe_now() - t0;
        char c;
        if (write(to_child[1], "g", 1) != 1 || read(to_parent[0], &c, 1) != 1)
            return 1;
        t0 = probe_now();
        if (probe_tiny_kernel())
            return 1;
        after[r] = probe_now() - t0;
    }
    close(to_child[1]);
    waitpid(pid, NULL, 0);
    qsort(alone, rounds, sizeof *alone, cmp_u64);
    qsort(after, rounds, sizeof *after, cmp_u64);
    printf("device %s\nalone_ns %llu\nafter_other_ns %llu\nrounds %d\n", name,
           (unsigned long long)alone[rounds / 2], (unsigned long long)after[rounds / 2], rounds);
    return 0;
}

#endif
