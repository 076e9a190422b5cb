/* A CUDA driver double for machines without a GPU (CI). It is not a GPU:
 * a "module" is a table of host functions, a launch runs the function at
 * once on the host with the launch's parameters, device memory is host
 * memory, events read the host clock. What it keeps honest is the part of
 * fikit that sits between a program and the driver: every entry point a
 * launch can take (exported names, _ptsz variants, cuGetProcAddress v1 and
 * v2 with stream flags, dlsym on this library), parameter passing, kernel
 * naming, stream capture and graph launches. It counts the launches that
 * reached it (FAKECUDA_COUNT) so tests can check nothing was lost. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "tests/host_kernels.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default"))) CUresult CUDAAPI

/* ------------------------------------------------------------- kernels */

/* k_vec_add, k_scale: tests/host_kernels.h */

struct fn {
    const char *name;
    host_kernel run;
    int nparams;      /* kernelParams is not terminated: the signature says how many */
    size_t size[8];   /* and how big each is */
};

static const struct fn functions[] = {{"vec_add", k_vec_add, 4, {8, 8, 8, 4}},
                                      {"_Z5scalePffi", k_scale, 3, {8, 4, 4}}};

/* ------------------------------------------------------------- counting */

static _Atomic long launches;

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("FAKECUDA_COUNT");
    if (!path)
        return;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%ld\n", atomic_load(&launches));
        fclose(f);
    }
}

/* ------------------------------------------------------ device, context */

static int fake_ctx_storage;
static _Thread_local CUcontext current;

API cuInit(unsigned flags) { (void)flags; return CUDA_SUCCESS; }
API cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
API cuDeviceGet(CUdevice *d, int ordinal) { *d = ordinal; return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
API cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
API cuDeviceGetName(char *name, int len, CUdevice d) { (void)d; snprintf(name, (size_t)len, "Fake CUDA Device"); return CUDA_SUCCESS; }
API cuDeviceGetUuid_v2(CUuuid *u, CUdevice d) { (void)d; memset(u->bytes, 0xab, sizeof u->bytes); return CUDA_SUCCESS; }
API cuDeviceGetUuid(CUuuid *u, CUdevice d) { return cuDeviceGetUuid_v2(u, d); }
API cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = (CUcontext)&fake_ctx_storage; return CUDA_SUCCESS; }
API cuCtxSetCurrent(CUcontext c) { current = c; return CUDA_SUCCESS; }
API cuCtxGetCurrent(CUcontext *c) { *c = current; return CUDA_SUCCESS; }
API cuCtxGetDevice(CUdevice *d) { if (!current) return CUDA_ERROR_INVALID_CONTEXT; *d = 0; return CUDA_SUCCESS; }
API cuCtxSynchronize(void) { return CUDA_SUCCESS; }

/* --------------------------------------------------------------- memory */

API cuMemAlloc_v2(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)(uintptr_t)calloc(1, n); return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY; }
API cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return CUDA_SUCCESS; }
API cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { memcpy((void *)(uintptr_t)d, s, n); return CUDA_SUCCESS; }
API cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { memcpy(d, (void *)(uintptr_t)s, n); return CUDA_SUCCESS; }

/* ------------------------------------------------------ modules, naming */

API cuModuleLoadData(CUmodule *m, const void *image) { (void)image; *m = (CUmodule)functions; return CUDA_SUCCESS; }
API cuModuleUnload(CUmodule m) { (void)m; return CUDA_SUCCESS; }
API cuLibraryUnload(CUlibrary l) { (void)l; return CUDA_SUCCESS; }
API cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m;
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++)
        if (strcmp(functions[i].name, name) == 0) {
            *f = (CUfunction)&functions[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}
API cuFuncGetName(const char **name, CUfunction f) { *name = ((const struct fn *)f)->name; return CUDA_SUCCESS; }
API cuKernelGetName(const char **name, CUkernel k) { *name = ((const struct fn *)k)->name; return CUDA_SUCCESS; }

/* ---------------------------------------------------- streams, capture */

struct rec {
    const struct fn *f;
    unsigned grid[3], block[3];
    void *params[8];
    char storage[8][16];
};

struct graph {
    struct rec recs[64];
    int n;
};

struct stream {
    int capturing;
    struct graph *g;
};

static struct stream legacy, per_thread_storage;

static struct stream *S(CUstream s)
{
    if (!s)
        return &legacy;
    if (s == (CUstream)0x2)
        return &per_thread_storage;
    return (struct stream *)s;
}

API cuStreamCreate(CUstream *s, unsigned flags) { (void)flags; *s = calloc(1, sizeof(struct stream)); return CUDA_SUCCESS; }
API cuStreamDestroy_v2(CUstream s) { free(s); return CUDA_SUCCESS; }
API cuStreamSynchronize(CUstream s) { (void)s; return CUDA_SUCCESS; }
API cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode m) { (void)m; S(s)->capturing = 1; S(s)->g = calloc(1, sizeof(struct graph)); return CUDA_SUCCESS; }
API cuStreamEndCapture(CUstream s, CUgraph *g) { S(s)->capturing = 0; *g = (CUgraph)S(s)->g; S(s)->g = NULL; return CUDA_SUCCESS; }
API cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) { *st = S(s)->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE; return CUDA_SUCCESS; }
API cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st) { return cuStreamIsCapturing(s ? s : (CUstream)0x2, st); }
API cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m) { (void)m; return CUDA_SUCCESS; }
API cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags) { (void)flags; *e = (CUgraphExec)g; return CUDA_SUCCESS; }
API cuGraphExecDestroy(CUgraphExec e) { (void)e; return CUDA_SUCCESS; }
API cuGraphDestroy(CUgraph g) { free(g); return CUDA_SUCCESS; }

/* ------------------------------------------------------------- launches */


static CUresult run(CUfunction f, const unsigned g[3], const unsigned b[3], CUstream s, void **params)
{
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    const struct fn *fn = (const struct fn *)f;
    struct stream *st = S(s);
    if (st->capturing) {
        struct rec *r = &st->g->recs[st->g->n++];
        r->f = fn;
        memcpy(r->grid, g, sizeof r->grid);
        memcpy(r->block, b, sizeof r->block);
        for (int i = 0; i < fn->nparams; i++) {
            memcpy(r->storage[i], params[i], fn->size[i]);
            r->params[i] = r->storage[i];
        }
        return CUDA_SUCCESS; /* recorded, not run */
    }
    atomic_fetch_add(&launches, 1);
    fn->run(params, g, b);
    return CUDA_SUCCESS;
}

#define LAUNCH_ARGS CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params, void **extra
#define LAUNCH_RUN                                                                                 \
    (void)shmem;                                                                                   \
    (void)extra;                                                                                   \
    const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};

API cuLaunchKernel(LAUNCH_ARGS) { LAUNCH_RUN return run(f, g, b, s, params); }
API cuLaunchKernel_ptsz(LAUNCH_ARGS) { LAUNCH_RUN return run(f, g, b, s ? s : (CUstream)0x2, params); }

API cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    (void)extra;
    const unsigned g[3] = {c->gridDimX, c->gridDimY, c->gridDimZ}, b[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
    return run(f, g, b, c->hStream, params);
}
API cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    CUlaunchConfig c2 = *c;
    if (!c2.hStream)
        c2.hStream = (CUstream)0x2;
    return cuLaunchKernelEx(&c2, f, params, extra);
}
API cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
    (void)shmem;
    const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    return run(f, g, b, s, params);
}
API cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                   unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
    return cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, shmem, s ? s : (CUstream)0x2, params);
}
API cuGraphLaunch(CUgraphExec e, CUstream s)
{
    (void)s;
    struct graph *g = (struct graph *)e;
    atomic_fetch_add(&launches, 1);
    for (int i = 0; i < g->n; i++)
        g->recs[i].f->run(g->recs[i].params, g->recs[i].grid, g->recs[i].block);
    return CUDA_SUCCESS;
}
API cuGraphLaunch_ptsz(CUgraphExec e, CUstream s) { return cuGraphLaunch(e, s); }

/* --------------------------------------------------------------- events */

struct event {
    uint64_t t;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

API cuEventCreate(CUevent *e, unsigned flags) { (void)flags; *e = calloc(1, sizeof(struct event)); return CUDA_SUCCESS; }
API cuEventDestroy_v2(CUevent e) { free(e); return CUDA_SUCCESS; }
API cuEventRecord(CUevent e, CUstream s)
{
    if (S(s)->capturing)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* fikit must never do this */
    ((struct event *)e)->t = now_ns();
    return CUDA_SUCCESS;
}
API cuEventRecord_ptsz(CUevent e, CUstream s) { return cuEventRecord(e, s ? s : (CUstream)0x2); }
API cuEventQuery(CUevent e) { return ((struct event *)e)->t ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY; }
API cuEventSynchronize(CUevent e) { (void)e; return CUDA_SUCCESS; }
API cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    *ms = (float)((double)((int64_t)((struct event *)b)->t - (int64_t)((struct event *)a)->t) / 1e6);
    return CUDA_SUCCESS;
}

/* ----------------------------------------------------- cuGetProcAddress */

struct sym {
    const char *name;
    void *legacy, *per_thread;
};

static const struct sym syms[];

static CUresult get_proc(const char *symbol, void **pfn, int version, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *status);

API cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                        CUdriverProcAddressQueryResult *status)
{
    return get_proc(symbol, pfn, version, flags, status);
}
API cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    return get_proc(symbol, pfn, version, flags, NULL);
}

#define SYM(n) {#n, (void *)n, (void *)n}
#define SYMP(n) {#n, (void *)n, (void *)n##_ptsz}
static const struct sym syms[] = {
    SYM(cuInit), SYM(cuDriverGetVersion), SYM(cuDeviceGet), SYM(cuDeviceGetCount), SYM(cuDeviceGetName),
    {"cuDeviceGetUuid", (void *)cuDeviceGetUuid_v2, (void *)cuDeviceGetUuid_v2},
    SYM(cuDevicePrimaryCtxRetain), SYM(cuCtxSetCurrent), SYM(cuCtxGetCurrent), SYM(cuCtxGetDevice),
    SYM(cuCtxSynchronize), SYM(cuModuleLoadData), SYM(cuModuleUnload), SYM(cuLibraryUnload),
    SYM(cuModuleGetFunction), SYM(cuFuncGetName), SYM(cuKernelGetName), SYM(cuStreamCreate),
    SYMP(cuStreamIsCapturing), SYM(cuThreadExchangeStreamCaptureMode), SYM(cuEventCreate),
    {"cuEventDestroy", (void *)cuEventDestroy_v2, (void *)cuEventDestroy_v2},
    SYMP(cuEventRecord), SYM(cuEventQuery), SYM(cuEventSynchronize), SYM(cuEventElapsedTime),
    SYMP(cuLaunchKernel), SYMP(cuLaunchKernelEx), SYMP(cuLaunchCooperativeKernel), SYMP(cuGraphLaunch),
    {"cuGetProcAddress", (void *)cuGetProcAddress_v2, (void *)cuGetProcAddress_v2},
    {"cuStreamBeginCapture", (void *)cuStreamBeginCapture_v2, (void *)cuStreamBeginCapture_v2},
    SYM(cuStreamEndCapture), SYM(cuGraphInstantiateWithFlags), SYM(cuMemAlloc_v2),
    {NULL, NULL, NULL}};

static CUresult get_proc(const char *symbol, void **pfn, int version, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *status)
{
    for (const struct sym *s = syms; s->name; s++) {
        if (strcmp(s->name, symbol) != 0)
            continue;
        if (!strcmp(symbol, "cuGetProcAddress") && version < 12000)
            *pfn = (void *)cuGetProcAddress;
        else
            *pfn = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ? s->per_thread : s->legacy;
        if (status)
            *status = CU_GET_PROC_ADDRESS_SUCCESS;
        return CUDA_SUCCESS;
    }
    *pfn = NULL;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
}
