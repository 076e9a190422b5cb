/* Every way a program can launch through the CUDA driver API, each checked
 * numerically: the exported entry points and their _ptsz variants,
 * cuLaunchKernelEx, cooperative launches, cuGetProcAddress (v1 and v2,
 * legacy and per-thread), dlopen + dlsym of libcuda, stream capture and
 * cuGraphLaunch, and many threads on many streams. Prints how many launches
 * it made that reached the device (captured ones do not; a graph launch
 * counts once). Runs against the real driver or tests/fakecuda's double. */
#include <cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/double/program.h"

/* The per-thread variants are declared by cuda.h only for per-thread builds;
 * this program calls both kinds, so it declares them itself. */
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, CUstream, void **, void **);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                                unsigned, unsigned, unsigned, CUstream, void **);

#define N 256
#define CK(call) DBL_CHECK(CUresult, CUDA_SUCCESS, call)
#include "tests/fakecuda/ramp.h"

static CUfunction add, scale;
static CUcontext ctx;
/* Counted from the worker threads too. */
static _Atomic long launched;
static _Atomic int failures;

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, CUstream, void **, void **);

/* x := x * s by kernel f through the given entry point, then checks it. */
static int check_scale_by(CUfunction f, const char *path, launch_fn fn, CUstream s)
{
    float k = 3.0f;
    int n = N;
    CUdeviceptr d = upload_ramp();
    void *params[] = {&d, &k, &n};
    CK(fn(f, N / 64, 1, 1, 64, 1, 1, 0, s, params, NULL));
    launched++;
    CK(cuCtxSynchronize());
    int ok = ramp_tripled(d);
    if (path || !ok)
        printf("%-4s %s\n", ok ? "ok" : "FAIL", path ? path : "a launch from a worker thread");
    failures += !ok;
    return ok;
}

static void check_scale(const char *path, launch_fn fn, CUstream s) { check_scale_by(scale, path, fn, s); }

static void *worker(void *arg)
{
    long id = (long)arg;
    CK(cuCtxSetCurrent(ctx));
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    for (int i = 0; i < 25; i++)
        check_scale(id == 0 && i == 0 ? "threads: 8 threads x 25 launches, each on its own stream" : NULL,
                    (launch_fn)cuLaunchKernel, s);
    return NULL;
}

/* A burst: many threads launching back to back on their own streams, with
 * one synchronisation at the end; the last launch of each scales by 3 and
 * the rest by 1, so the result checks that every launch ran once. Under
 * tracing this writes a slot's trace ring faster than fikitd's timer
 * drains it. */
#define BURST_THREADS 16
#define BURST_LAUNCHES 250
static void *burst(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(ctx));
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    int n = N;
    CUdeviceptr d = upload_ramp();
    float one = 1.0f, three = 3.0f;
    void *p1[] = {&d, &one, &n}, *p3[] = {&d, &three, &n};
    for (int i = 0; i < BURST_LAUNCHES; i++) {
        CK(cuLaunchKernel(scale, N / 64, 1, 1, 64, 1, 1, 0, s, i == BURST_LAUNCHES - 1 ? p3 : p1, NULL));
        launched++;
    }
    CK(cuStreamSynchronize(s));
    int ok = ramp_tripled(d);
    if (!ok)
        printf("FAIL a burst thread's result\n");
    failures += !ok;
    cuStreamDestroy(s);
    return NULL;
}

static void spin_launch(void *params)
{
    CK(cuLaunchKernel(scale, N / 64, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
}

/* --spin SECONDS: keep launching (a high-priority task for others to yield to). */
static int spin(double seconds)
{
    float x[N];
    int n = N;
    float k = 1.0f;
    CUdeviceptr d;
    CK(cuMemAlloc(&d, sizeof x));
    void *params[] = {&d, &k, &n};
    return dbl_spin(seconds, spin_launch, params);
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUmodule mod;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, "fake module"));
    CK(cuModuleGetFunction(&add, mod, "vec_add"));
    CK(cuModuleGetFunction(&scale, mod, "_Z5scalePffi"));
    if (argc == 3 && strcmp(argv[1], "--spin") == 0)
        return spin(atof(argv[2]));

    check_scale("cuLaunchKernel, linked", cuLaunchKernel, NULL);
    check_scale("cuLaunchKernel_ptsz, linked", cuLaunchKernel_ptsz, NULL);

    void *fn = NULL;
    CUdriverProcAddressQueryResult st;
    CK(cuGetProcAddress_v2("cuLaunchKernel", &fn, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st));
    check_scale("cuGetProcAddress_v2(cuLaunchKernel, legacy)", (launch_fn)fn, NULL);
    CK(cuGetProcAddress_v2("cuLaunchKernel", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    check_scale("cuGetProcAddress_v2(cuLaunchKernel, per-thread)", (launch_fn)fn, NULL);
    CUresult (*gpa_v1)(const char *, void **, int, cuuint64_t) = NULL;
    CK(cuGetProcAddress_v2("cuGetProcAddress", (void **)&gpa_v1, 11030, 0, &st));
    CK(gpa_v1("cuLaunchKernel", &fn, 11030, 0));
    check_scale("cuGetProcAddress v1, from cuGetProcAddress_v2", (launch_fn)fn, NULL);

    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    check_scale("dlopen + dlsym(cuLaunchKernel)", (launch_fn)dlsym(lib, "cuLaunchKernel"), NULL);
    CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
        (void *)dlsym(lib, "cuGetProcAddress_v2");
    CK(gpa("cuLaunchKernel", &fn, 12000, 0, &st));
    check_scale("dlsym(cuGetProcAddress_v2) then cuLaunchKernel", (launch_fn)fn, NULL);

    /* cuLaunchKernelEx with an attribute, and cooperative launches. */
    {
        float a[N], b[N], c[N];
        int n = N;
        for (int i = 0; i < N; i++)
            a[i] = (float)i, b[i] = 1.0f;
        CUdeviceptr da, db, dc;
        CK(cuMemAlloc(&da, sizeof a));
        CK(cuMemAlloc(&db, sizeof b));
        CK(cuMemAlloc(&dc, sizeof c));
        CK(cuMemcpyHtoD(da, a, sizeof a));
        CK(cuMemcpyHtoD(db, b, sizeof b));
        void *params[] = {&da, &db, &dc, &n};
        CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PRIORITY};
        attr.value.priority = 0;
        CUlaunchConfig cfg = {.gridDimX = N / 64, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64,
                              .blockDimY = 1, .blockDimZ = 1, .attrs = &attr, .numAttrs = 1};
        CK(cuLaunchKernelEx(&cfg, add, params, NULL));
        launched++;
        CK(cuCtxSynchronize());
        CK(cuMemcpyDtoH(c, dc, sizeof c));
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= c[i] == (float)i + 1.0f;
        printf("%-4s cuLaunchKernelEx with a launch attribute\n", ok ? "ok" : "FAIL");
        failures += !ok;
        CK(cuLaunchKernelEx_ptsz(&cfg, add, params, NULL));
        launched++;
        printf("ok   cuLaunchKernelEx_ptsz\n");
        CK(cuLaunchCooperativeKernel(add, N / 64, 1, 1, 64, 1, 1, 0, NULL, params));
        CK(cuLaunchCooperativeKernel_ptsz(add, N / 64, 1, 1, 64, 1, 1, 0, NULL, params));
        launched += 2;
        CK(cuMemcpyDtoH(c, dc, sizeof c));
        ok = 1;
        for (int i = 0; i < N; i++)
            ok &= c[i] == (float)i + 1.0f;
        printf("%-4s cuLaunchCooperativeKernel and _ptsz\n", ok ? "ok" : "FAIL");
        failures += !ok;
    }

    /* Stream capture: three launches recorded, then the graph launched twice. */
    {
        float host[N], back[N], k = 2.0f;
        int n = N;
        for (int i = 0; i < N; i++)
            host[i] = 1.0f;
        CUdeviceptr d;
        CK(cuMemAlloc(&d, sizeof host));
        CK(cuMemcpyHtoD(d, host, sizeof host));
        CUstream s;
        CK(cuStreamCreate(&s, 0));
        void *params[] = {&d, &k, &n};
        CUgraph g;
        CUgraphExec e;
        CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        for (int i = 0; i < 3; i++)
            CK(cuLaunchKernel(scale, N / 64, 1, 1, 64, 1, 1, 0, s, params, NULL));
        CK(cuStreamEndCapture(s, &g));
        CK(cuGraphInstantiate(&e, g, 0));
        CK(cuGraphLaunch(e, s));
        CK(cuGraphLaunch(e, s));
        launched += 2;
        CK(cuStreamSynchronize(s));
        CK(cuMemcpyDtoH(back, d, sizeof back));
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= back[i] == 64.0f; /* 2^6 */
        printf("%-4s stream capture of 3 launches, cuGraphLaunch twice\n", ok ? "ok" : "FAIL");
        failures += !ok;
    }

    /* A module unloaded, then the next module's kernel at the unloaded
     * one's handle (the double reuses the memory; a driver may): its
     * launches are the new kernel's, and fikit must name them so. */
    {
        CUmodule gone, next;
        CUfunction before, after;
        CK(cuModuleLoadData(&gone, "fake module"));
        CK(cuModuleGetFunction(&before, gone, "_Z9reduce_inPffi"));
        int ok = check_scale_by(before, NULL, cuLaunchKernel, NULL);
        CK(cuModuleUnload(gone));
        CK(cuModuleLoadData(&next, "fake module"));
        CK(cuModuleGetFunction(&after, next, "_Z5scalePffi"));
        ok &= check_scale_by(after, NULL, cuLaunchKernel, NULL);
        CK(cuModuleUnload(next));
        printf("%-4s cuModuleUnload, then another module's kernel (handle %s)\n", ok ? "ok" : "FAIL",
               after == before ? "reused" : "not reused");
    }

    pthread_t t[8];
    for (long i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);

    int before = failures;
    pthread_t b[BURST_THREADS];
    for (long i = 0; i < BURST_THREADS; i++)
        pthread_create(&b[i], NULL, burst, (void *)i);
    for (int i = 0; i < BURST_THREADS; i++)
        pthread_join(b[i], NULL);
    printf("%-4s burst: %d threads x %d launches back to back, each on its own stream\n",
           failures == before ? "ok" : "FAIL", BURST_THREADS, BURST_LAUNCHES);

    printf("launches %ld\n", launched);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
