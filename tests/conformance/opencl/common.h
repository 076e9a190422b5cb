/* Shared by the OpenCL conformance cases: picking the platform and device,
 * error checks, building programs, and the lines the suite runner reads.
 *
 * Every case checks its own results and prints, on standard output, only
 * what must be the same with and without fikit (the runner compares the
 * three runs line by line), then:
 *   kernel NAME N     launches of each kernel name that ran (a name ending
 *                     in '*' is a prefix: native kernels are named by symbol)
 *   launches N        every launch that ran (launches-at-least N where a
 *                     library decides how many)
 *   result ok         (or result WRONG; exit status 1)
 * A case the device cannot run prints "skip: REASON" and exits 77.
 * What may differ between runs (memory figures) goes to standard error as
 * "measure NAME VALUE" lines. */
#ifndef FIKIT_CONF_OPENCL_COMMON_H
#define FIKIT_CONF_OPENCL_COMMON_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include "demo/check.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONF_SKIP 77

#define CL(call) FIKIT_CHECK_CL(call)

/* For the calls that return an object and report through an out-argument. */
#define CLERR(err) CL(err)

static int conf_failures;

/* A check whose line is part of what the runs must agree on. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        bool ok_ = (cond);                                                                         \
        printf("%s ", ok_ ? "ok  " : "FAIL");                                                      \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        if (!ok_)                                                                                  \
            conf_failures++;                                                                       \
    } while (0)

static inline void conf_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("skip: ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    exit(CONF_SKIP);
}

struct conf {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue; /* in order, no properties */
    cl_uint platform_index, device_index;
};

/* --platform N --device N, else $FIKIT_CL_PLATFORM and $FIKIT_CL_DEVICE,
 * else 0 and 0. */
static inline void conf_pick(int argc, char **argv, struct conf *c)
{
    const char *p = getenv("FIKIT_CL_PLATFORM"), *d = getenv("FIKIT_CL_DEVICE");
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--platform"))
            p = argv[++i];
        else if (!strcmp(argv[i], "--device"))
            d = argv[++i];
    }
    c->platform_index = p ? (cl_uint)atoi(p) : 0;
    c->device_index = d ? (cl_uint)atoi(d) : 0;
    cl_platform_id plats[16];
    cl_uint np = 0;
    cl_int e = clGetPlatformIDs(16, plats, &np);
    if (e != CL_SUCCESS || np == 0)
        conf_skip("no OpenCL platform (clGetPlatformIDs: %d)", e);
    if (c->platform_index >= np)
        conf_skip("no platform %u (%u found)", c->platform_index, np);
    c->platform = plats[c->platform_index];
    cl_device_id devs[64];
    cl_uint nd = 0;
    e = clGetDeviceIDs(c->platform, CL_DEVICE_TYPE_ALL, 64, devs, &nd);
    if (e != CL_SUCCESS || nd == 0)
        conf_skip("platform %u has no device (clGetDeviceIDs: %d)", c->platform_index, e);
    if (c->device_index >= nd)
        conf_skip("platform %u has no device %u (%u found)", c->platform_index, c->device_index, nd);
    c->device = devs[c->device_index];
}

/* Picks the device, and makes a context and an in-order queue on it. */
static inline void conf_open(int argc, char **argv, struct conf *c)
{
    conf_pick(argc, argv, c);
    cl_int err;
    c->ctx = clCreateContext(NULL, 1, &c->device, NULL, NULL, &err);
    CLERR(err);
    c->queue = clCreateCommandQueue(c->ctx, c->device, 0, &err);
    CLERR(err);
}

/* Releases a case's objects in order, each checked: kinds says what each
 * argument is, one letter an object (m: memory, k: kernel, p: program,
 * q: queue, e: event, c: context), as in conf_release("mkp", buf, k, p). */
static inline void conf_release(const char *kinds, ...)
{
    va_list ap;
    va_start(ap, kinds);
    for (const char *t = kinds; *t; t++) {
        void *o = va_arg(ap, void *);
        switch (*t) {
        case 'm': CL(clReleaseMemObject((cl_mem)o)); break;
        case 'k': CL(clReleaseKernel((cl_kernel)o)); break;
        case 'p': CL(clReleaseProgram((cl_program)o)); break;
        case 'q': CL(clReleaseCommandQueue((cl_command_queue)o)); break;
        case 'e': CL(clReleaseEvent((cl_event)o)); break;
        case 'c': CL(clReleaseContext((cl_context)o)); break;
        default:
            fprintf(stderr, "conf_release: unknown kind '%c'\n", *t);
            exit(1);
        }
    }
    va_end(ap);
}

static inline void conf_close(struct conf *c)
{
    CL(clReleaseCommandQueue(c->queue));
    CL(clReleaseContext(c->ctx));
}

/* Builds SRC for the devices of CTX (all of them when NDEV is 0). */
static inline cl_program conf_build_for(cl_context ctx, cl_uint ndev, const cl_device_id *devs,
                                        const char *src)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CLERR(err);
    err = clBuildProgram(p, ndev, ndev ? devs : NULL, "", NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[8192] = "";
        clGetProgramBuildInfo(p, devs ? devs[0] : NULL, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "clBuildProgram: OpenCL error %d\n%s\n", err, log);
        exit(1);
    }
    return p;
}

static inline cl_program conf_build(const struct conf *c, const char *src)
{
    return conf_build_for(c->ctx, 1, &c->device, src);
}

static inline cl_kernel conf_kernel(cl_program p, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "clCreateKernel(%s): OpenCL error %d\n", name, err);
        exit(1);
    }
    return k;
}

static inline cl_mem conf_buffer(cl_context ctx, size_t bytes, const void *init)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                              (void *)init, &err);
    CLERR(err);
    return m;
}

static inline void conf_arg_mem(cl_kernel k, cl_uint i, cl_mem m) { CL(clSetKernelArg(k, i, sizeof m, &m)); }

/* OpenCL version of the device as major * 10 + minor (CL_DEVICE_VERSION is
 * "OpenCL M.m vendor"). */
static inline int conf_device_version(cl_device_id d)
{
    char v[256] = "";
    clGetDeviceInfo(d, CL_DEVICE_VERSION, sizeof v - 1, v, NULL);
    int major = 0, minor = 0;
    if (sscanf(v, "OpenCL %d.%d", &major, &minor) != 2)
        return 0;
    return major * 10 + minor;
}

/* ------------------------------------------------- counting launches */

#define CONF_MAX_NAMES 32
static struct {
    pthread_mutex_t lock;
    int n;
    char name[CONF_MAX_NAMES][64];
    long count[CONF_MAX_NAMES];
} conf_launched = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Counts one launch of NAME that ran (call it after the enqueue succeeded). */
static inline void conf_count(const char *name, long n)
{
    pthread_mutex_lock(&conf_launched.lock);
    int i = 0;
    while (i < conf_launched.n && strcmp(conf_launched.name[i], name))
        i++;
    if (i == conf_launched.n && i < CONF_MAX_NAMES) {
        snprintf(conf_launched.name[i], sizeof conf_launched.name[i], "%s", name);
        conf_launched.count[i] = 0;
        conf_launched.n++;
    }
    if (i < CONF_MAX_NAMES)
        conf_launched.count[i] += n;
    pthread_mutex_unlock(&conf_launched.lock);
}

/* Enqueues an NDRange and counts it under the kernel's name. */
static inline void conf_ndrange(cl_command_queue q, cl_kernel k, const char *name, cl_uint dim,
                                const size_t *off, const size_t *gws, const size_t *lws,
                                cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    cl_int e = clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nwait, wait, ev);
    if (e != CL_SUCCESS) {
        fprintf(stderr, "clEnqueueNDRangeKernel(%s): OpenCL error %d\n", name, e);
        exit(1);
    }
    conf_count(name, 1);
}

static inline void conf_ndrange1(cl_command_queue q, cl_kernel k, const char *name, size_t n,
                                 cl_uint nwait, const cl_event *wait, cl_event *ev)
{
    conf_ndrange(q, k, name, 1, NULL, &n, NULL, nwait, wait, ev);
}

/* Prints the launch lines and the verdict; the exit status of main. */
static inline int conf_finish(bool ok)
{
    /* By name: threads launch in any order, the lines must not. */
    for (int i = 1; i < conf_launched.n; i++)
        for (int j = i; j > 0 && strcmp(conf_launched.name[j - 1], conf_launched.name[j]) > 0; j--) {
            char name[64];
            long n = conf_launched.count[j];
            memcpy(name, conf_launched.name[j], sizeof name);
            memcpy(conf_launched.name[j], conf_launched.name[j - 1], sizeof name);
            memcpy(conf_launched.name[j - 1], name, sizeof name);
            conf_launched.count[j] = conf_launched.count[j - 1];
            conf_launched.count[j - 1] = n;
        }
    long total = 0;
    for (int i = 0; i < conf_launched.n; i++) {
        printf("kernel %s %ld\n", conf_launched.name[i], conf_launched.count[i]);
        total += conf_launched.count[i];
    }
    printf("launches %ld\n", total);
    ok = ok && conf_failures == 0;
    printf("%s\n", ok ? "result ok" : "result WRONG");
    fflush(stdout);
    return ok ? 0 : 1;
}

/* ------------------------------------------------------ small kernels */

/* Order-sensitive steps on ints: add1 then twice differs from twice then
 * add1, so a result shows the order the kernels ran in. */
#define CONF_SRC_STEPS                                                                             \
    "__kernel void add1(__global int *x) { x[get_global_id(0)] += 1; }\n"                         \
    "__kernel void twice(__global int *x) { x[get_global_id(0)] *= 2; }\n"                        \
    "__kernel void sum2(__global int *x, __global const int *y) {\n"                              \
    "    size_t i = get_global_id(0); x[i] += y[i]; }\n"

static inline int conf_step(int v, char op) { return op == 'a' ? v + 1 : v * 2; }

/* Reads N ints of BUF and compares them with WANT; prints the first
 * difference to stderr. */
static inline bool conf_read_check(cl_command_queue q, cl_mem buf, const int *want, size_t n,
                                   const char *what)
{
    int *got = malloc(n * sizeof *got);
    if (!got) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    CL(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, n * sizeof *got, got, 0, NULL, NULL));
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++)
        if (got[i] != want[i]) {
            fprintf(stderr, "%s: element %zu is %d, expected %d\n", what, i, got[i], want[i]);
            ok = false;
        }
    free(got);
    return ok;
}

/* The steps kernels' buffer on ctx: n ints, init[i] = i % mod (mod 0: i),
 * also into want where it is not NULL, set as add1's and twice's argument. */
static inline cl_mem conf_steps_buffer(cl_context ctx, cl_kernel add1, cl_kernel twice, int *init, int *want,
                                       int n, int mod)
{
    for (int i = 0; i < n; i++) {
        init[i] = mod ? i % mod : i;
        if (want)
            want[i] = init[i];
    }
    cl_mem buf = conf_buffer(ctx, (size_t)n * sizeof *init, init);
    conf_arg_mem(add1, 0, buf);
    conf_arg_mem(twice, 0, buf);
    return buf;
}

/* Two devices in one context, a queue on each, one program built for both:
 * rounds kernels alternate between the devices, each waiting for the one
 * before through its wait list, and the result shows they ran in that
 * order. what names the pair in the messages ("two devices"). */
static inline void conf_alternate(const cl_device_id two[2], int rounds, const char *what)
{
    enum { N = 256 };
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 2, two, NULL, NULL, &err);
    CLERR(err);
    cl_command_queue q[2];
    for (int d = 0; d < 2; d++) {
        q[d] = clCreateCommandQueue(ctx, two[d], 0, &err);
        CLERR(err);
    }
    cl_program p = conf_build_for(ctx, 2, two, CONF_SRC_STEPS);
    cl_kernel add1 = conf_kernel(p, "add1"), twice = conf_kernel(p, "twice");
    int init[N], want[N];
    cl_mem buf = conf_steps_buffer(ctx, add1, twice, init, want, N, 13);
    cl_event prev = NULL;
    for (int r = 0; r < rounds; r++) {
        cl_event ev;
        bool add = r % 3 != 1;
        conf_ndrange1(q[r % 2], add ? add1 : twice, add ? "add1" : "twice", N, prev ? 1 : 0, prev ? &prev : NULL, &ev);
        CL(clFlush(q[r % 2]));
        if (prev)
            CL(clReleaseEvent(prev));
        prev = ev;
        for (int i = 0; i < N; i++)
            want[i] = add ? want[i] + 1 : want[i] * 2;
    }
    CL(clWaitForEvents(1, &prev));
    CL(clReleaseEvent(prev));
    CHECK(conf_read_check(q[0], buf, want, N, what),
          "%d kernels alternating between %s ran in the order of their wait lists", rounds, what);
    conf_release("mkkpqqc", buf, add1, twice, p, q[0], q[1], ctx);
}

/* An event's execution status: CL_QUEUED ... CL_COMPLETE, or an error. */
static inline cl_int conf_status(cl_event e)
{
    cl_int st;
    CL(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    return st;
}

/* The program of CONF_SRC_STEPS on c's device, p, and its kernels add1 and
 * twice, declared in the case. */
#define CONF_STEPS(c, p, add1, twice)                                                              \
    cl_program p = conf_build((c), CONF_SRC_STEPS);                                               \
    cl_kernel add1 = conf_kernel(p, "add1"), twice = conf_kernel(p, "twice")

#endif
