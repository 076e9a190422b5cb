/* Shared by the demo programs: OpenCL setup, the kernel, and its exact
 * check. The kernel applies rounds of a 32-bit linear congruential map to
 * every element; any number of rounds is again such a map (x -> A x + C),
 * so the host checks every output element exactly in O(n). */
#ifndef FIKIT_DEMO_CL_H
#define FIKIT_DEMO_CL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "demo/check.h"
#include "demo/demo.h"

/* The kernels: "rounds", and the DEMO_LAYERS layers, all alike. */
#define DEMO_KERNEL(n)                                                                             \
    "__kernel void " n "(__global uint *x, uint n) {\n"                                           \
    "    size_t i = get_global_id(0);\n"                                                          \
    "    uint v = x[i];\n"                                                                        \
    "    for (uint k = 0; k < n; k++)\n"                                                          \
    "        v = v * 1664525u + 1013904223u;\n"                                                   \
    "    x[i] = v;\n"                                                                             \
    "}\n"
static const char *demo_kernel_source =
    DEMO_KERNEL("rounds") DEMO_KERNEL("layer0") DEMO_KERNEL("layer1") DEMO_KERNEL("layer2")
    DEMO_KERNEL("layer3") DEMO_KERNEL("layer4") DEMO_KERNEL("layer5") DEMO_KERNEL("layer6")
    DEMO_KERNEL("layer7") DEMO_KERNEL("layer8") DEMO_KERNEL("layer9") DEMO_KERNEL("layer10")
    DEMO_KERNEL("layer11") DEMO_KERNEL("layer12") DEMO_KERNEL("layer13") DEMO_KERNEL("layer14")
    DEMO_KERNEL("layer15");

#define DEMO_CHECK(call) FIKIT_CHECK_CL(call)

struct demo_cl {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernel;               /* "rounds" */
    cl_kernel layer[DEMO_LAYERS];   /* "layer0".. */
    char device_name[128];
};

static inline void demo_cl_open(struct demo_cl *d)
{
    cl_uint n = 0;
    cl_int err;
    DEMO_CHECK(clGetPlatformIDs(1, &d->platform, &n));
    if (n == 0) {
        fprintf(stderr, "no OpenCL platform (install pocl-opencl-icd)\n");
        exit(1);
    }
    /* FIKIT_DEMO_DEVICE=N: the platform's device N (PoCL offers several with
     * POCL_DEVICES="pthread pthread"); else its default device. */
    const char *which = getenv("FIKIT_DEMO_DEVICE");
    if (which && *which) {
        cl_device_id ids[16];
        cl_uint nd = 0;
        int want = atoi(which);
        DEMO_CHECK(clGetDeviceIDs(d->platform, CL_DEVICE_TYPE_ALL, 16, ids, &nd));
        if (want < 0 || (cl_uint)want >= nd) {
            fprintf(stderr, "FIKIT_DEMO_DEVICE=%s: the platform has %u device%s\n", which, nd, nd == 1 ? "" : "s");
            exit(1);
        }
        d->device = ids[want];
    } else {
        DEMO_CHECK(clGetDeviceIDs(d->platform, CL_DEVICE_TYPE_DEFAULT, 1, &d->device, NULL));
    }
    clGetDeviceInfo(d->device, CL_DEVICE_NAME, sizeof d->device_name, d->device_name, NULL);
    d->ctx = clCreateContext(NULL, 1, &d->device, NULL, NULL, &err);
    DEMO_CHECK(err);
    d->queue = clCreateCommandQueue(d->ctx, d->device, 0, &err);
    DEMO_CHECK(err);
    d->program = clCreateProgramWithSource(d->ctx, 1, &demo_kernel_source, NULL, &err);
    DEMO_CHECK(err);
    if (clBuildProgram(d->program, 1, &d->device, "", NULL, NULL) != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(d->program, d->device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "kernel build failed:\n%s\n", log);
        exit(1);
    }
    d->kernel = clCreateKernel(d->program, "rounds", &err);
    DEMO_CHECK(err);
    for (int i = 0; i < DEMO_LAYERS; i++) {
        char name[16];
        snprintf(name, sizeof name, "layer%d", i);
        d->layer[i] = clCreateKernel(d->program, name, &err);
        DEMO_CHECK(err);
    }
}

/* A buffer of bytes on d's device. */
static inline cl_mem demo_cl_buffer(const struct demo_cl *d, size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    DEMO_CHECK(err);
    return m;
}

static inline void demo_cl_close(struct demo_cl *d)
{
    clReleaseKernel(d->kernel);
    for (int i = 0; i < DEMO_LAYERS; i++)
        clReleaseKernel(d->layer[i]);
    clReleaseProgram(d->program);
    clReleaseCommandQueue(d->queue);
    clReleaseContext(d->ctx);
}

static inline void demo_sleep_until(double t)
{
    double now = demo_now_s();
    if (t <= now)
        return;
    struct timespec ts = {.tv_sec = (time_t)(t - now), .tv_nsec = (long)(((t - now) - (double)(time_t)(t - now)) * 1e9)};
    nanosleep(&ts, NULL);
}

/* us microseconds of this thread's CPU time, spent computing: a request's
 * preparation, counted in CPU time so that a busy machine lengthens it in
 * wall time only. */
static inline void demo_cpu_work_us(long us)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    double until = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 + (double)us * 1e-6;
    volatile uint32_t x = 1;
    do {
        for (int i = 0; i < 1000; i++)
            x = x * 1664525u + 1013904223u;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    } while ((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9 < until);
}

#endif
