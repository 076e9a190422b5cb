/* Checks the OpenCL behaviour a program can observe, so that running it
 * under fikit's layer (which enables profiling on every queue and swaps in
 * its own events) can be compared with running it without: every line this
 * prints must be the same either way. Exits 1 if a check fails. */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (cond) {                                                                                \
            printf("ok   ");                                                                       \
        } else {                                                                                   \
            printf("FAIL ");                                                                       \
            failures++;                                                                            \
        }                                                                                          \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
    } while (0)

#define CL(call)                                                                                   \
    do {                                                                                           \
        cl_int e_ = (call);                                                                        \
        if (e_ != CL_SUCCESS) {                                                                    \
            printf("FAIL %s = %d (line %d)\n", #call, e_, __LINE__);                               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static const char *src = "__kernel void add1(__global int *x) { x[get_global_id(0)] += 1; }\n"
                         "__kernel void twice(__global int *x) { x[get_global_id(0)] *= 2; }\n"
                         "__kernel void single(__global int *x) { x[0] = 42; }\n";

static int callbacks;
static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    (void)user;
    if (status == CL_COMPLETE)
        __atomic_fetch_add(&callbacks, 1, __ATOMIC_SEQ_CST);
}

static void native_fn(void *args)
{
    int **p = args;
    (*p)[0] = 7;
}

#define N 1024

int main(void)
{
    cl_platform_id plat;
    cl_device_id dev;
    cl_int err;
    CL(clGetPlatformIDs(1, &plat, NULL));
    CL(clGetDeviceIDs(plat, CL_DEVICE_TYPE_DEFAULT, 1, &dev, NULL));
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CL(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CL(err);
    CL(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel add1 = clCreateKernel(prog, "add1", &err), twice = clCreateKernel(prog, "twice", &err),
              single = clCreateKernel(prog, "single", &err);
    int host[N];
    for (int i = 0; i < N; i++)
        host[i] = i;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    CL(err);
    CL(clSetKernelArg(add1, 0, sizeof buf, &buf));
    CL(clSetKernelArg(twice, 0, sizeof buf, &buf));
    CL(clSetKernelArg(single, 0, sizeof buf, &buf));
    size_t gws = N;

    /* 1. A queue without profiling: no profiling is visible. */
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CL(err);
    cl_command_queue_properties props = 99;
    CL(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    CHECK(props == 0, "queue created without flags reports properties %#lx", (unsigned long)props);
    cl_event ev;
    CL(clEnqueueNDRangeKernel(q, add1, 1, NULL, &gws, NULL, 0, NULL, &ev));
    CL(clWaitForEvents(1, &ev));
    cl_int status;
    CL(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    CHECK(status == CL_COMPLETE, "clWaitForEvents returns with the kernel complete");
    cl_ulong t;
    err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL);
    CHECK(err == CL_PROFILING_INFO_NOT_AVAILABLE, "profiling info not available without profiling (%d)", err);
    cl_command_queue evq;
    CL(clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof evq, &evq, NULL));
    CHECK(evq == q, "the event belongs to the program's queue");
    cl_uint refs;
    CL(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    CHECK(refs >= 1, "the program holds its event");
    CL(clReleaseEvent(ev));

    /* 2. Many launches without events, then clFinish: all done, in order. */
    for (int i = 0; i < 50; i++) {
        CL(clEnqueueNDRangeKernel(q, add1, 1, NULL, &gws, NULL, 0, NULL, NULL));
        CL(clEnqueueNDRangeKernel(q, twice, 1, NULL, &gws, NULL, 0, NULL, NULL));
    }
    CL(clFinish(q));
    CL(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    int good = 1;
    for (int i = 0; i < N && good; i++) {
        long v = i + 1; /* after step 1 */
        for (int k = 0; k < 50; k++)
            v = (v + 1) * 2;
        good = (int)v == host[i];
    }
    CHECK(good, "100 in-order launches then clFinish: every element as computed in order");

    /* 3. A queue with profiling the program asked for: it works. */
    cl_command_queue qp = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    CL(err);
    CL(clGetCommandQueueInfo(qp, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    CHECK(props == CL_QUEUE_PROFILING_ENABLE, "profiling queue reports profiling");
    CL(clEnqueueNDRangeKernel(qp, add1, 1, NULL, &gws, NULL, 0, NULL, &ev));
    CL(clWaitForEvents(1, &ev));
    cl_ulong s, e;
    CL(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL));
    CL(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL));
    CHECK(e >= s, "profiling start <= end on the program's profiling queue");
    CL(clReleaseEvent(ev));

    /* 4. Properties arrays come back exactly as given. */
    cl_queue_properties arr[] = {CL_QUEUE_PROPERTIES, 0, 0};
    cl_command_queue qa = clCreateCommandQueueWithProperties(ctx, dev, arr, &err);
    CL(err);
    cl_queue_properties back[8];
    size_t got = 0;
    CL(clGetCommandQueueInfo(qa, CL_QUEUE_PROPERTIES_ARRAY, sizeof back, back, &got));
    CHECK(got == sizeof arr && !memcmp(back, arr, sizeof arr),
          "CL_QUEUE_PROPERTIES_ARRAY is the program's (%zu bytes)", got);
    CL(clGetCommandQueueInfo(qa, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    CHECK(props == 0, "queue with properties {PROPERTIES, 0} reports %#lx", (unsigned long)props);

    /* 5. An event callback runs once, with CL_COMPLETE. */
    CL(clEnqueueNDRangeKernel(qa, add1, 1, NULL, &gws, NULL, 0, NULL, &ev));
    CL(clSetEventCallback(ev, CL_COMPLETE, on_complete, NULL));
    CL(clFinish(qa));
    CL(clReleaseEvent(ev));
    /* Callbacks may run on another thread shortly after completion. */
    for (int i = 0; i < 1000 && __atomic_load_n(&callbacks, __ATOMIC_SEQ_CST) == 0; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    CHECK(__atomic_load_n(&callbacks, __ATOMIC_SEQ_CST) == 1, "the completion callback ran once");

    /* 6. An out-of-order queue with a dependency through events. */
    cl_command_queue qo = clCreateCommandQueue(ctx, dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    if (err == CL_SUCCESS) {
        int zero[N] = {0};
        CL(clEnqueueWriteBuffer(qo, buf, CL_TRUE, 0, sizeof zero, zero, 0, NULL, NULL));
        cl_event first;
        CL(clEnqueueNDRangeKernel(qo, add1, 1, NULL, &gws, NULL, 0, NULL, &first));
        CL(clEnqueueNDRangeKernel(qo, twice, 1, NULL, &gws, NULL, 1, &first, &ev));
        CL(clWaitForEvents(1, &ev));
        CL(clEnqueueReadBuffer(qo, buf, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
        good = 1;
        for (int i = 0; i < N; i++)
            good &= host[i] == 2;
        CHECK(good, "out-of-order queue: a wait list orders two kernels");
        CL(clGetCommandQueueInfo(qo, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
        CHECK(props == CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, "out-of-order queue reports %#lx",
              (unsigned long)props);
        clReleaseEvent(first);
        clReleaseEvent(ev);
        clReleaseCommandQueue(qo);
    } else {
        CHECK(1, "out-of-order queues not supported by this device");
    }

    /* 7. clEnqueueTask. */
    CL(clEnqueueTask(q, single, 0, NULL, NULL));
    CL(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof(int), host, 0, NULL, NULL));
    CHECK(host[0] == 42, "clEnqueueTask ran its kernel");

    /* 8. A native kernel, where the device runs them. */
    cl_device_exec_capabilities caps = 0;
    clGetDeviceInfo(dev, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL);
    if (caps & CL_EXEC_NATIVE_KERNEL) {
        int *target = calloc(1, sizeof(int));
        CL(clEnqueueNativeKernel(q, native_fn, &target, sizeof target, 0, NULL, NULL, 0, NULL, NULL));
        CL(clFinish(q));
        CHECK(*target == 7, "clEnqueueNativeKernel ran its function");
        free(target);
    } else {
        CHECK(1, "native kernels not supported by this device");
    }

    /* 9. Releasing and recreating kernels: handles may be reused. */
    for (int i = 0; i < 20; i++) {
        cl_kernel k = clCreateKernel(prog, i % 2 ? "twice" : "add1", &err);
        CL(err);
        CL(clSetKernelArg(k, 0, sizeof buf, &buf));
        CL(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
        CL(clReleaseKernel(k));
    }
    CL(clFinish(q));
    CHECK(1, "20 kernels created, launched and released");

    clReleaseCommandQueue(q);
    clReleaseCommandQueue(qp);
    clReleaseCommandQueue(qa);
    clReleaseMemObject(buf);
    clReleaseKernel(add1);
    clReleaseKernel(twice);
    clReleaseKernel(single);
    clReleaseProgram(prog);
    clReleaseContext(ctx);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
