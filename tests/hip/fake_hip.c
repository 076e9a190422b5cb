/* A HIP runtime double (libamdhip64.so.5) for machines without an AMD GPU.
 * It is not a GPU: a kernel is a host function run at once on the host with
 * the launch's arguments, device memory is host memory, events read the
 * host clock. It has two devices, each stream and event belongs to one, and
 * an event recorded on another device's stream is refused, as in ROCm.
 *
 * What it keeps honest is the part of fikit that only runs where a device
 * exists, which the installed libamdhip64 cannot reach here: describing a
 * launch (device, stream, per-thread stream), naming kernels by host
 * function and by hipFunction_t, timing with events, capture and graph
 * launches, holding and granting. It exports the entry points of a recent
 * ROCm (hipGetProcAddress, hipModuleLaunchCooperativeKernel,
 * hipExtModuleLaunchKernel under its C name, hipLaunchKernelExC, _spt
 * variants), answers hipGetProcAddress with dlsym on itself as ROCm's clr
 * does, and, like ROCm 5.2, calls hipModuleLaunchKernel through its own PLT
 * from hipLaunchByPtr. It counts the launches that reached it
 * (FAKEHIP_COUNT) so tests can check nothing was lost or doubled. It is a
 * shim over the driver double of tests/double/ (kernels, streams, capture,
 * graphs, events, the count), as the CUDA double is. */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include "tests/double/double.h"
#include "tests/hip/rocm_abi.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default"))) hipError_t
#define NDEV 2

/* ------------------------------------------------------------- kernels */

/* k_vec_add, k_scale: tests/host_kernels.h */

/* The program's kernels, as the host stubs hipcc would register. */
__attribute__((visibility("default"))) void fakehip_vec_add(void) {}
__attribute__((visibility("default"))) void fakehip_scale(void) {}

static const struct dbl_fn functions[] = {
    {"vec_add", (const void *)fakehip_vec_add, k_vec_add, 4, {8, 8, 8, 4}, {0, 8, 16, 24}},
    {"_Z5scalePffi", (const void *)fakehip_scale, k_scale, 3, {8, 4, 4}, {0, 8, 12}},
    /* scales too; only a module's, by name (the unload case of hip_sched_paths) */
    {"_Z9reduce_inPffi", NULL, k_scale, 3, {8, 4, 4}, {0, 8, 12}},
};
#define NFN (sizeof functions / sizeof functions[0])

static const struct dbl_fn *by_host(const void *host) { return dbl_fn_by_host(functions, NFN, host); }

/* ------------------------------------------------------------- counting */

__attribute__((destructor)) static void report(void) { dbl_report("FAKEHIP_COUNT"); }

/* -------------------------------------------------------------- devices */

static _Thread_local int current;

API hipInit(unsigned flags) { (void)flags; return hipSuccess; }
API hipGetDeviceCount(int *n) { *n = NDEV; return hipSuccess; }
API hipGetDevice(int *d) { *d = current; return hipSuccess; }
API hipSetDevice(int d)
{
    if (d < 0 || d >= NDEV)
        return hipErrorInvalidDevice;
    current = d;
    return hipSuccess;
}
API hipDeviceGetName(char *name, int len, hipDevice_t d)
{
    snprintf(name, (size_t)len, "Fake AMD GPU %d", d);
    return hipSuccess;
}
API hipDeviceGetUuid(hipUUID *u, hipDevice_t d)
{
    memcpy(u->bytes, "00fa4ea3d0000000", 16);
    u->bytes[15] = (char)('0' + d);
    return hipSuccess;
}
API hipDeviceGetPCIBusId(char *bus, int len, int d)
{
    snprintf(bus, (size_t)len, "0000:%02x:00.0", 0x40 + d);
    return hipSuccess;
}
API hipDeviceSynchronize(void) { dbl_drain(NULL); return hipSuccess; }
/* 120 compute units a device. */
#define CU_COUNT 120
API hipDeviceGetAttribute(int *v, hipDeviceAttribute_t attr, int d)
{
    if (d < 0 || d >= NDEV)
        return hipErrorInvalidDevice;
    if (attr != hipDeviceAttributeMultiprocessorCount)
        return hipErrorInvalidValue;
    *v = CU_COUNT;
    return hipSuccess;
}
__attribute__((visibility("default"))) const char *hipGetErrorName(hipError_t e)
{
    return e == hipSuccess ? "hipSuccess" : "hipErrorFake";
}

/* --------------------------------------------------------------- memory */

API hipMalloc(void **p, size_t n) { *p = calloc(1, n); return *p ? hipSuccess : hipErrorOutOfMemory; }
API hipFree(void *p) { free(p); return hipSuccess; }
/* On the null stream: after every stream's waits. */
API hipMemcpy(void *d, const void *s, size_t n, hipMemcpyKind k) { (void)k; dbl_drain(NULL); memcpy(d, s, n); return hipSuccess; }

/* ---------------------------------------------------- streams, capture */


/* Each device's null and per-thread streams (a stream of the double knows
 * its device). */
static struct dbl_stream legacy[NDEV] = {{.device = 0, .legacy = 1}, {.device = 1, .legacy = 1}};
static _Thread_local struct dbl_stream per_thread[NDEV] = {{.device = 0}, {.device = 1}};

static struct dbl_stream *S(hipStream_t s)
{
    if (!s)
        return &legacy[current];
    if (s == hipStreamPerThread)
        return &per_thread[current];
    return (struct dbl_stream *)s;
}

API hipStreamCreate(hipStream_t *s)
{
    *s = (hipStream_t)dbl_stream_new(current);
    return *s ? hipSuccess : hipErrorOutOfMemory;
}
API hipStreamDestroy(hipStream_t s) { free(s); return hipSuccess; }
API hipStreamSynchronize(hipStream_t s)
{
    struct dbl_stream *st = S(s);
    if (st->async)
        dbl_astream_sync(st);
    else
        dbl_drain(st);
    return hipSuccess;
}
/* A stream confined to the CUs of its mask: one of the driver double's
 * asynchronous streams (tests/double/double.h), whose kernels run late on
 * a thread of their own, so that a test sees whether fikit, moving a
 * program's launches into one, keeps the program's stream order.
 * FAKEHIP_CUMASK=unsupported refuses it as a runtime without it would;
 * FAKEHIP_MASKED_COUNT names a file that gets the number of kernels run in
 * masked streams. */
API hipExtStreamCreateWithCUMask(hipStream_t *s, uint32_t words, const uint32_t *mask)
{
    const char *mode = getenv("FAKEHIP_CUMASK");
    if (mode && !strcmp(mode, "unsupported"))
        return hipErrorNotSupported;
    unsigned cus = 0;
    for (uint32_t i = 0; i < words; i++)
        cus += (unsigned)__builtin_popcount(mask[i]);
    if (!cus || cus > CU_COUNT)
        return hipErrorInvalidValue;
    *s = (hipStream_t)dbl_astream_new(current, cus);
    return *s ? hipSuccess : hipErrorOutOfMemory;
}
API hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned flags)
{
    (void)flags;
    return dbl_wait(S(s), (struct dbl_event *)e) ? hipErrorOutOfMemory : hipSuccess;
}
__attribute__((destructor)) static void report_masked(void)
{
    const char *path = getenv("FAKEHIP_MASKED_COUNT");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%ld\n", dbl_async_kernels());
        fclose(f);
    }
}
__attribute__((visibility("default"))) int hipGetStreamDeviceId(hipStream_t s) { return S(s)->device; }
API hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode m)
{
    (void)m;
    dbl_capture_begin(S(s));
    return hipSuccess;
}
API hipStreamBeginCapture_spt(hipStream_t s, hipStreamCaptureMode m)
{
    return hipStreamBeginCapture(s ? s : hipStreamPerThread, m);
}
API hipStreamEndCapture(hipStream_t s, hipGraph_t *g)
{
    *g = (hipGraph_t)dbl_capture_end(S(s));
    return hipSuccess;
}
API hipStreamEndCapture_spt(hipStream_t s, hipGraph_t *g) { return hipStreamEndCapture(s ? s : hipStreamPerThread, g); }
API hipStreamIsCapturing(hipStream_t s, hipStreamCaptureStatus *st)
{
    *st = S(s)->capturing ? hipStreamCaptureStatusActive : hipStreamCaptureStatusNone;
    return hipSuccess;
}
API hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *m) { (void)m; return hipSuccess; }
API hipGraphInstantiate(hipGraphExec_t *e, hipGraph_t g, hipGraphNode_t *n, char *log, size_t len)
{
    (void)n, (void)log, (void)len;
    *e = (hipGraphExec_t)g;
    return hipSuccess;
}
API hipGraphDestroy(hipGraph_t g) { dbl_graph_free((struct dbl_graph *)g); return hipSuccess; }

/* ------------------------------------------------------ modules, naming */

/* A module is the double's (tests/double/double.h): an unloaded one's
 * memory goes to the next load, so function handles are reused. */
API hipModuleLoad(hipModule_t *m, const char *path)
{
    (void)path;
    *m = (hipModule_t)dbl_module_load();
    return *m ? hipSuccess : hipErrorOutOfMemory;
}
API hipModuleUnload(hipModule_t m)
{
    if (!m)
        return hipErrorInvalidHandle;
    dbl_module_unload((struct dbl_module *)m);
    return hipSuccess;
}
API hipModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name)
{
    int missing = 1;
    *f = m ? (hipFunction_t)dbl_module_function((struct dbl_module *)m, functions, NFN, name, &missing) : NULL;
    return *f ? hipSuccess : missing ? hipErrorNotFound : hipErrorOutOfMemory;
}
__attribute__((visibility("default"))) const char *hipKernelNameRef(const hipFunction_t f)
{
    return f ? ((const struct dbl_fn *)f)->name : NULL;
}
__attribute__((visibility("default"))) const char *hipKernelNameRefByPtr(const void *host, hipStream_t s)
{
    (void)s;
    const struct dbl_fn *f = by_host(host);
    return f ? f->name : NULL;
}

/* ------------------------------------------------------------- launches */

static hipError_t run(const struct dbl_fn *fn, const unsigned g[3], const unsigned b[3], hipStream_t s,
                      void **params)
{
    if (!fn)
        return hipErrorInvalidDeviceFunction;
    dbl_run(fn, g, b, S(s), params);
    return hipSuccess;
}

/* Arguments packed in one buffer (extra, hipSetupArgument). */
static hipError_t run_packed(const struct dbl_fn *fn, const unsigned g[3], const unsigned b[3],
                             hipStream_t s, char *buf)
{
    if (!fn)
        return hipErrorInvalidDeviceFunction;
    dbl_run_packed(fn, g, b, S(s), buf);
    return hipSuccess;
}

static hipError_t run_module(hipFunction_t f, const unsigned g[3], const unsigned b[3], hipStream_t s,
                             void **params, void **extra)
{
    if (params)
        return run((const struct dbl_fn *)f, g, b, s, params);
    if (extra && extra[0] == HIP_LAUNCH_PARAM_BUFFER_POINTER)
        return run_packed((const struct dbl_fn *)f, g, b, s, (char *)extra[1]);
    return hipErrorInvalidValue;
}

#define D3(d) {(d).x, (d).y, (d).z}

API hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem, hipStream_t s)
{
    (void)shmem;
    const unsigned gg[3] = D3(g), bb[3] = D3(b);
    return run(by_host(f), gg, bb, s, args);
}
API hipLaunchKernel_spt(const void *f, dim3 g, dim3 b, void **args, size_t shmem, hipStream_t s)
{
    return hipLaunchKernel(f, g, b, args, shmem, s ? s : hipStreamPerThread);
}
API hipExtLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem, hipStream_t s,
                       hipEvent_t start, hipEvent_t stop, int flags)
{
    (void)start, (void)stop, (void)flags;
    return hipLaunchKernel(f, g, b, args, shmem, s);
}
API hipLaunchCooperativeKernel(const void *f, dim3 g, dim3 b, void **args, unsigned shmem, hipStream_t s)
{
    return hipLaunchKernel(f, g, b, args, shmem, s);
}
API hipLaunchCooperativeKernel_spt(const void *f, dim3 g, dim3 b, void **args, unsigned shmem,
                                   hipStream_t s)
{
    return hipLaunchKernel(f, g, b, args, shmem, s ? s : hipStreamPerThread);
}
API hipLaunchCooperativeKernelMultiDevice(hipLaunchParams *p, int n, unsigned flags)
{
    (void)flags;
    for (int i = 0; i < n; i++) {
        hipError_t r = hipLaunchKernel(p[i].func, p[i].gridDim, p[i].blockDim, p[i].args, p[i].sharedMem,
                                       p[i].stream);
        if (r != hipSuccess)
            return r;
    }
    return hipSuccess;
}
API hipExtLaunchMultiKernelMultiDevice(hipLaunchParams *p, int n, unsigned flags)
{
    return hipLaunchCooperativeKernelMultiDevice(p, n, flags);
}
API hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shmem, hipStream_t s, void **params,
                          void **extra)
{
    (void)shmem;
    const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    return run_module(f, g, b, s, params, extra);
}
API hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                     unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                     hipStream_t s, void **params)
{
    (void)shmem;
    const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    return run_module(f, g, b, s, params, NULL);
}
/* The C name of recent ROCm: the grid in work-items. (Entry points whose
 * declarations differ between ROCm releases get their names by asm label.) */
API fake_ext_module_launch(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                           size_t, hipStream_t, void **, void **, hipEvent_t, hipEvent_t, uint32_t)
    __asm__("hipExtModuleLaunchKernel");
API fake_ext_module_launch(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
                             uint32_t ly, uint32_t lz, size_t shmem, hipStream_t s, void **params,
                             void **extra, hipEvent_t start, hipEvent_t stop, uint32_t flags)
{
    (void)shmem, (void)start, (void)stop, (void)flags;
    const unsigned g[3] = {gx / lx, gy / ly, gz / lz}, b[3] = {lx, ly, lz};
    return run_module(f, g, b, s, params, extra);
}
API fake_launch_exc(const struct launch_config *c, const void *f, void **args) __asm__("hipLaunchKernelExC");
API fake_launch_exc(const struct launch_config *c, const void *f, void **args)
{
    return hipLaunchKernel(f, c->grid, c->block, args, c->shmem, c->stream);
}
API hipGraphLaunch(hipGraphExec_t e, hipStream_t s)
{
    (void)s;
    dbl_graph_launch((struct dbl_graph *)e);
    return hipSuccess;
}
API hipGraphLaunch_spt(hipGraphExec_t e, hipStream_t s) { return hipGraphLaunch(e, s ? s : hipStreamPerThread); }

/* The legacy launch: a per-thread stack of configurations and an argument
 * buffer; hipLaunchByPtr pops one and, as ROCm 5.2 does, launches through
 * hipModuleLaunchKernel by way of this library's PLT (LD_PRELOAD reaches it). */
static _Thread_local struct {
    dim3 g, b;
    size_t shmem;
    hipStream_t s;
    char args[64];
} configs[8];
static _Thread_local int nconfigs;

API hipConfigureCall(dim3 g, dim3 b, size_t shmem, hipStream_t s)
{
    if (nconfigs == 8)
        return hipErrorInvalidConfiguration;
    configs[nconfigs].g = g;
    configs[nconfigs].b = b;
    configs[nconfigs].shmem = shmem;
    configs[nconfigs].s = s;
    nconfigs++;
    return hipSuccess;
}
API hipSetupArgument(const void *arg, size_t size, size_t offset)
{
    if (!nconfigs || offset + size > sizeof configs[0].args)
        return hipErrorInvalidValue;
    memcpy(configs[nconfigs - 1].args + offset, arg, size);
    return hipSuccess;
}
API hipLaunchByPtr(const void *host)
{
    if (!nconfigs)
        return hipErrorMissingConfiguration;
    nconfigs--;
    const struct dbl_fn *f = by_host(host);
    size_t size = sizeof configs[nconfigs].args;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, configs[nconfigs].args,
                     HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
    dim3 g = configs[nconfigs].g, b = configs[nconfigs].b;
    return hipModuleLaunchKernel((hipFunction_t)f, g.x, g.y, g.z, b.x, b.y, b.z,
                                 (unsigned)configs[nconfigs].shmem, configs[nconfigs].s, NULL, extra);
}

/* --------------------------------------------------------------- events */

API hipEventCreateWithFlags(hipEvent_t *e, unsigned flags)
{
    (void)flags;
    *e = (hipEvent_t)dbl_event_new(current);
    return *e ? hipSuccess : hipErrorOutOfMemory;
}
API hipEventCreate(hipEvent_t *e) { return hipEventCreateWithFlags(e, 0); }
API hipEventDestroy(hipEvent_t e) { free(e); return hipSuccess; }
API hipEventRecord(hipEvent_t e, hipStream_t s)
{
    int r = dbl_event_record((struct dbl_event *)e, S(s));
    return r == DBL_CAPTURING ? hipErrorStreamCaptureUnsupported /* fikit must never do this */
           : r ? hipErrorInvalidHandle                           /* an event of another device, as in ROCm */
               : hipSuccess;
}
API hipEventQuery(hipEvent_t e) { return dbl_event_done((struct dbl_event *)e) ? hipSuccess : hipErrorNotReady; }
API hipEventSynchronize(hipEvent_t e) { dbl_event_sync((struct dbl_event *)e); return hipSuccess; }
API hipEventElapsedTime(float *ms, hipEvent_t a, hipEvent_t b)
{
    return dbl_event_elapsed((const struct dbl_event *)a, (const struct dbl_event *)b, ms) ? hipErrorInvalidHandle
                                                                                           : hipSuccess;
}

/* ---------------------------------------------------- hipGetProcAddress */

/* As ROCm's clr: dlsym on this library, "_spt" appended for per-thread. */
API fake_get_proc_address(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
    __asm__("hipGetProcAddress");
API fake_get_proc_address(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
    (void)version;
    Dl_info info;
    if (!symbol || !pfn || !dladdr((void *)fake_get_proc_address, &info))
        return hipErrorInvalidValue;
    void *self = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    char name[128];
    snprintf(name, sizeof name, "%s%s", symbol, flags == 2 ? "_spt" : "");
    *pfn = self ? dlsym(self, name) : NULL;
    if (!*pfn && self && flags == 2)
        *pfn = dlsym(self, symbol);
    if (self)
        dlclose(self);
    if (status)
        *status = *pfn ? 0 : 1;
    return *pfn ? hipSuccess : hipErrorInvalidValue;
}
