/* Host cost of one kernel enqueue: times ROUNDS batches of N enqueues of a
 * one-work-item kernel (the device work is drained between batches, untimed)
 * and prints the median nanoseconds per enqueue. Run it with and without
 * fikit to get fikit's added cost per launch (bench/launch-cost). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

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
    if (n < 1 || rounds < 1 || (argc > 1 && argv[1][0] == '-')) {
        fprintf(stderr, "Usage: fikit-bench-cl-launch-cost [N [ROUNDS]]\n"
                        "Prints the median host time of one clEnqueueNDRangeKernel, in ns.\n");
        return 2;
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
        double t0 = now_ns();
        for (int i = 0; i < n; i++)
            if (clEnqueueNDRangeKernel(q, k, 1, NULL, &one, NULL, 0, NULL, NULL) != CL_SUCCESS)
                return 1;
        double t1 = now_ns();
        clFinish(q);
        if (r >= 0)
            per[r] = (t1 - t0) / n;
    }
    qsort(per, rounds, sizeof *per, cmp);
    printf("%.1f\n", per[rounds / 2]);
    return 0;
}
