/* Every way a program can launch through HIP, each checked numerically,
 * against tests/hip's runtime double (fake_hip.c): hipLaunchKernel and its
 * _spt variant, hipExtLaunchKernel, cooperative launches (single and
 * multi-device), hipModuleLaunchKernel, hipModuleLaunchCooperativeKernel,
 * hipExtModuleLaunchKernel, hipLaunchKernelExC, hipConfigureCall +
 * hipLaunchByPtr, hipGetProcAddress (legacy and per-thread), dlopen + dlsym
 * of libamdhip64, stream capture and hipGraphLaunch, a stream of the second
 * device, and many threads on many streams. Prints how many launches it
 * made that reached the device (captured ones do not; a graph launch counts
 * once). --spin SECONDS: keep launching, a high-priority task to yield to. */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/double/program.h"
#include "tests/hip/rocm_abi.h"

/* Entry points newer than some ROCm headers, declared here as the double
 * defines them. */
hipError_t hipLaunchKernel_spt(const void *, dim3, dim3, void **, size_t, hipStream_t);
hipError_t hipLaunchCooperativeKernel_spt(const void *, dim3, dim3, void **, unsigned, hipStream_t);
hipError_t hipGraphLaunch_spt(hipGraphExec_t, hipStream_t);
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t, unsigned, unsigned, unsigned, unsigned,
                                            unsigned, unsigned, unsigned, hipStream_t, void **);
hipError_t ext_module_launch(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                             uint32_t, size_t, hipStream_t, void **, void **, hipEvent_t, hipEvent_t,
                             uint32_t) __asm__("hipExtModuleLaunchKernel");
hipError_t launch_exc(const struct launch_config *, const void *, void **) __asm__("hipLaunchKernelExC");
hipError_t get_proc_address(const char *, void **, int, uint64_t, int *) __asm__("hipGetProcAddress");
/* The double's host stubs of its two kernels. */
void fakehip_vec_add(void);
void fakehip_scale(void);

#define N 256
#define CK(call) DBL_CHECK(hipError_t, hipSuccess, call)

static const void *scale_fn = (const void *)fakehip_scale;
static _Atomic long launched; /* counted from the worker threads too */
static _Atomic int failures;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

typedef hipError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, hipStream_t);

static void result(const char *path, int ok)
{
    pthread_mutex_lock(&lock);
    if (path || !ok)
        printf("%-4s %s\n", ok ? "ok" : "FAIL", path ? path : "a launch from a worker thread");
    failures += !ok;
    pthread_mutex_unlock(&lock);
}

/* x = 0, 1, 2...; x *= 3 through fn, `times` times; checks x. */
static void check_scale(const char *path, launch_fn fn, hipStream_t s, int times)
{
    float host[N], back[N], k = 3.0f;
    int n = N;
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    float *d;
    CK(hipMalloc((void **)&d, sizeof host));
    CK(hipMemcpy(d, host, sizeof host, hipMemcpyHostToDevice));
    void *params[] = {&d, &k, &n};
    dim3 g = {N / 64, 1, 1}, b = {64, 1, 1};
    for (int t = 0; t < times; t++)
        CK(fn(scale_fn, g, b, params, 0, s));
    pthread_mutex_lock(&lock);
    launched += times;
    pthread_mutex_unlock(&lock);
    CK(hipStreamSynchronize(s));
    CK(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= fabsf(back[i] - powf(3.0f, (float)times) * (float)i) < 1e-3f * (1.0f + (float)i);
    result(path, ok);
    CK(hipFree(d));
}

static hipError_t ext_launch(const void *f, dim3 g, dim3 b, void **a, size_t shmem, hipStream_t s)
{
    return hipExtLaunchKernel(f, g, b, a, shmem, s, NULL, NULL, 0);
}
static hipError_t coop(const void *f, dim3 g, dim3 b, void **a, size_t shmem, hipStream_t s)
{
    return hipLaunchCooperativeKernel(f, g, b, a, (unsigned)shmem, s);
}
static hipError_t coop_spt(const void *f, dim3 g, dim3 b, void **a, size_t shmem, hipStream_t s)
{
    return hipLaunchCooperativeKernel_spt(f, g, b, a, (unsigned)shmem, s);
}
static hipError_t exc(const void *f, dim3 g, dim3 b, void **a, size_t shmem, hipStream_t s)
{
    struct launch_config c = {g, b, shmem, s, NULL, 0};
    return launch_exc(&c, f, a);
}
static hipError_t by_ptr(const void *f, dim3 g, dim3 b, void **a, size_t shmem, hipStream_t s)
{
    CK(hipConfigureCall(g, b, shmem, s));
    CK(hipSetupArgument(a[0], sizeof(float *), 0));
    CK(hipSetupArgument(a[1], sizeof(float), 8));
    CK(hipSetupArgument(a[2], sizeof(int), 12));
    return hipLaunchByPtr(f);
}
static hipFunction_t module_scale;
static hipError_t module(const void *f, dim3 g, dim3 b, void **a, size_t shmem, hipStream_t s)
{
    (void)f;
    return hipModuleLaunchKernel(module_scale, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, s, a, NULL);
}
static hipError_t module_coop(const void *f, dim3 g, dim3 b, void **a, size_t shmem, hipStream_t s)
{
    (void)f;
    return hipModuleLaunchCooperativeKernel(module_scale, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem,
                                            s, a);
}
static hipError_t ext_module(const void *f, dim3 g, dim3 b, void **a, size_t shmem, hipStream_t s)
{
    (void)f;
    struct {
        float *x;
        float k;
        int n;
    } packed = {*(float **)a[0], *(float *)a[1], *(int *)a[2]};
    size_t size = sizeof packed;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     HIP_LAUNCH_PARAM_END};
    return ext_module_launch(module_scale, g.x * b.x, g.y * b.y, g.z * b.z, b.x, b.y, b.z, shmem, s,
                             NULL, extra, NULL, NULL, 0);
}

static void *worker(void *arg)
{
    long id = (long)arg;
    hipStream_t s;
    CK(hipStreamCreate(&s));
    for (int i = 0; i < 25; i++)
        check_scale(id == 0 && i == 0 ? "threads: 8 threads x 25 launches, each on its own stream" : NULL,
                    hipLaunchKernel, s, 1);
    return NULL;
}

struct spin_args {
    void **params;
    dim3 g, b;
};

static void spin_launch(void *arg)
{
    struct spin_args *a = arg;
    CK(hipLaunchKernel(scale_fn, a->g, a->b, a->params, 0, NULL));
}

static int spin(double seconds)
{
    float x[N];
    int n = N;
    float k = 1.0f;
    float *d;
    CK(hipMalloc((void **)&d, sizeof x));
    void *params[] = {&d, &k, &n};
    struct spin_args a = {params, {N / 64, 1, 1}, {64, 1, 1}};
    return dbl_spin(seconds, spin_launch, &a);
}

int main(int argc, char **argv)
{
    CK(hipInit(0));
    CK(hipSetDevice(0));
    if (argc == 3 && strcmp(argv[1], "--spin") == 0)
        return spin(atof(argv[2]));
    hipModule_t mod;
    CK(hipModuleLoad(&mod, "fake.co"));
    CK(hipModuleGetFunction(&module_scale, mod, "_Z5scalePffi"));

    check_scale("hipLaunchKernel, linked", hipLaunchKernel, NULL, 2);
    check_scale("hipLaunchKernel_spt, linked", hipLaunchKernel_spt, NULL, 2);
    check_scale("hipExtLaunchKernel", ext_launch, NULL, 1);
    check_scale("hipLaunchCooperativeKernel", coop, NULL, 1);
    check_scale("hipLaunchCooperativeKernel_spt", coop_spt, NULL, 1);
    check_scale("hipModuleLaunchKernel", module, NULL, 2);
    check_scale("hipModuleLaunchCooperativeKernel", module_coop, NULL, 1);
    check_scale("hipExtModuleLaunchKernel (grid in work-items)", ext_module, NULL, 1);
    check_scale("hipLaunchKernelExC", exc, NULL, 1);
    check_scale("hipConfigureCall + hipSetupArgument + hipLaunchByPtr", by_ptr, NULL, 2);

    /* A module unloaded, then the next module's kernel at the unloaded
     * one's handle (the double reuses the memory; a runtime may): its
     * launches are the new kernel's, and fikit must name them so. */
    {
        hipModule_t gone, next;
        hipFunction_t before, after, kept = module_scale;
        int failed = failures;
        CK(hipModuleLoad(&gone, "fake.co"));
        CK(hipModuleGetFunction(&before, gone, "_Z9reduce_inPffi"));
        module_scale = before;
        check_scale(NULL, module, NULL, 1);
        CK(hipModuleUnload(gone));
        CK(hipModuleLoad(&next, "fake.co"));
        CK(hipModuleGetFunction(&after, next, "_Z5scalePffi"));
        module_scale = after;
        check_scale(NULL, module, NULL, 1);
        CK(hipModuleUnload(next));
        module_scale = kept;
        printf("%-4s hipModuleUnload, then another module's kernel (handle %s)\n",
               failures == failed ? "ok" : "FAIL", after == before ? "reused" : "not reused");
    }

    void *fn = NULL;
    int st;
    CK(get_proc_address("hipLaunchKernel", &fn, 600, 0, &st));
    check_scale("hipGetProcAddress(hipLaunchKernel)", (launch_fn)fn, NULL, 1);
    CK(get_proc_address("hipLaunchKernel", &fn, 600, 2, &st));
    check_scale("hipGetProcAddress(hipLaunchKernel, per-thread)", (launch_fn)fn, NULL, 1);

    void *lib = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen libamdhip64.so.5: %s\n", dlerror());
        return 1;
    }
    check_scale("dlopen + dlsym(hipLaunchKernel)", (launch_fn)dlsym(lib, "hipLaunchKernel"), NULL, 1);
    hipError_t (*gpa)(const char *, void **, int, uint64_t, int *) =
        (hipError_t(*)(const char *, void **, int, uint64_t, int *))dlsym(lib, "hipGetProcAddress");
    CK(gpa("hipLaunchKernel", &fn, 600, 0, &st));
    check_scale("dlsym(hipGetProcAddress) then hipLaunchKernel", (launch_fn)fn, NULL, 1);

    /* Multi-device launches: vec_add on one device, then on both at once. */
    {
        float a[N], b[N], c0[N], c1[N];
        int n = N;
        for (int i = 0; i < N; i++)
            a[i] = (float)i, b[i] = 1.0f;
        float *da, *db, *dc0, *dc1;
        CK(hipMalloc((void **)&da, sizeof a));
        CK(hipMalloc((void **)&db, sizeof b));
        CK(hipMalloc((void **)&dc0, sizeof c0));
        CK(hipMalloc((void **)&dc1, sizeof c1));
        CK(hipMemcpy(da, a, sizeof a, hipMemcpyHostToDevice));
        CK(hipMemcpy(db, b, sizeof b, hipMemcpyHostToDevice));
        void *p0[] = {&da, &db, &dc0, &n}, *p1[] = {&da, &db, &dc1, &n};
        hipStream_t s0, s1;
        CK(hipStreamCreate(&s0));
        CK(hipSetDevice(1));
        CK(hipStreamCreate(&s1));
        CK(hipSetDevice(0));
        hipLaunchParams lp[2];
        memset(lp, 0, sizeof lp);
        for (int i = 0; i < 2; i++) {
            lp[i].func = (void *)fakehip_vec_add;
            lp[i].gridDim = (dim3){N / 64, 1, 1};
            lp[i].blockDim = (dim3){64, 1, 1};
            lp[i].args = i ? p1 : p0;
            lp[i].stream = i ? s1 : s0;
        }
        CK(hipLaunchCooperativeKernelMultiDevice(lp, 1, 0));
        CK(hipExtLaunchMultiKernelMultiDevice(lp, 2, 0));
        launched += 3;
        CK(hipMemcpy(c0, dc0, sizeof c0, hipMemcpyDeviceToHost));
        CK(hipMemcpy(c1, dc1, sizeof c1, hipMemcpyDeviceToHost));
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= c0[i] == (float)i + 1.0f && c1[i] == (float)i + 1.0f;
        result("hipLaunchCooperativeKernelMultiDevice, hipExtLaunchMultiKernelMultiDevice on 2 devices", ok);
        /* A stream of device 1 while device 0 is current: fikit's events
         * must be made on device 1. */
        check_scale("hipLaunchKernel on device 1's stream, device 0 current", hipLaunchKernel, s1, 3);
        int cur = -1;
        CK(hipGetDevice(&cur));
        result("the program's current device is left as it was", cur == 0);
    }

    /* Stream capture: three launches recorded, then the graph launched twice. */
    {
        float host[N], back[N], k = 2.0f;
        int n = N;
        for (int i = 0; i < N; i++)
            host[i] = 1.0f;
        float *d;
        CK(hipMalloc((void **)&d, sizeof host));
        CK(hipMemcpy(d, host, sizeof host, hipMemcpyHostToDevice));
        hipStream_t s;
        CK(hipStreamCreate(&s));
        void *params[] = {&d, &k, &n};
        hipGraph_t g;
        hipGraphExec_t e;
        dim3 gd = {N / 64, 1, 1}, bd = {64, 1, 1};
        CK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
        for (int i = 0; i < 3; i++)
            CK(hipLaunchKernel(scale_fn, gd, bd, params, 0, s));
        CK(hipStreamEndCapture(s, &g));
        CK(hipGraphInstantiate(&e, g, NULL, NULL, 0));
        CK(hipGraphLaunch(e, s));
        CK(hipGraphLaunch_spt(e, s));
        launched += 2;
        CK(hipStreamSynchronize(s));
        CK(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= back[i] == 64.0f; /* 2^6 */
        result("stream capture of 3 launches, hipGraphLaunch and hipGraphLaunch_spt", ok);
    }

    pthread_t t[8];
    for (long i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 8; i++)
        pthread_join(t[i], NULL);
    CK(hipModuleUnload(mod));

    printf("launches %ld\n", launched);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
