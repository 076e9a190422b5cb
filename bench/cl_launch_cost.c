/* Host cost of one kernel enqueue: times ROUNDS batches of N enqueues of a
 * one-work-item kernel (the device work is drained between batches, untimed)
 * and prints the median nanoseconds per enqueue. Run it with and without
 * fikit to get fikit's added cost per launch (bench/launch-cost).
 *
 * With COLD_KB > 0, every enqueue is timed by itself and followed, untimed,
 * by a pass over COLD_KB kilobytes of other memory: what a framework's work
 * between two launches does to the caches, so the launch path runs cold. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *src = "__kernel void nop(__global int *x) { if (get_global_id(0) == 0) x[0]++; }\n";

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000, rounds = argc > 2 ? atoi(argv[2]) : 31;
    long cold_kb = argc > 3 ? atol(argv[3]) : 0;
    if (n < 1 || rounds < 1 || cold_kb < 0 || (argc > 1 && argv[1][0] == '-')) {
        fprintf(stderr, "Usage: fikit-bench-cl-launch-cost [N [ROUNDS [COLD_KB]]]\n"
                        "Prints the median host time of one clEnqueueNDRangeKernel, in ns.\n"
                        "COLD_KB > 0: a pass over that much other memory between enqueues.\n");
        return 2;
    }
    size_t cold_words = (size_t)cold_kb * 1024 / sizeof(uint64_t);
    uint64_t *cold = cold_words ? calloc(cold_words, sizeof *cold) : NULL;
    if (cold_words && !cold) {
        fprintf(stderr, "fikit-bench-cl-launch-cost: cannot allocate COLD_KB = %ld KB\n", cold_kb);
        return 1;
    }
    cl_platform_id p;
    cl_device_id d;
    cl_int err;
    if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_DEFAULT, 1, &d, NULL))
        return 1;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (clBuildProgram(prog, 1, &d, "", NULL, NULL))
        return 1;
    cl_kernel k = clCreateKernel(prog, "nop", &err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof(int), NULL, &err);
    clSetKernelArg(k, 0, sizeof buf, &buf);
    size_t one = 1;
    double *per = malloc(rounds * sizeof *per);
    for (int r = -3; r < rounds; r++) { /* three warm-up rounds */
        double t0 = now_ns(), spent = 0;
        for (int i = 0; i < n; i++) {
            double a = cold ? now_ns() : 0;
            if (clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, NULL) != CL_SUCCESS)
                return 1;
            if (cold) {
                spent += now_ns() - a;
                for (size_t w = 0; w < cold_words; w += 8) /* one word per cache line */
                    cold[w] += (uint64_t)i;
            }
        }
        double t1 = now_ns();
        clFinish(q);
        if (r >= 0)
            per[r] = (cold ? spent : t1 - t0) / n;
    }
    qsort(per, rounds, sizeof *per, cmp);
    printf("%.1f\n", per[rounds / 2]);
    return 0;
}
