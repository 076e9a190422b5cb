/* A CUDA driver double for machines without a GPU (CI). It is not a GPU:
 * a "module" is a table of host functions, a launch runs the function at
 * once on the host with the launch's parameters, device memory is host
 * memory, events read the host clock. What it keeps honest is the part of
 * fikit that sits between a program and the driver: every entry point a
 * launch can take (exported names, _ptsz variants, cuGetProcAddress v1 and
 * v2 with stream flags, dlsym on this library), parameter passing, kernel
 * naming, stream capture and graph launches, and a node of several devices
 * as CUDA_VISIBLE_DEVICES shows them (below). It counts the launches that
 * reached it (FAKECUDA_COUNT) so tests can check nothing was lost. It is a
 * shim over the driver double of tests/double/ (kernels, streams, capture,
 * graphs, events, the count), as the HIP double is. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "tests/double/double.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define API __attribute__((visibility("default"))) CUresult CUDAAPI

/* ------------------------------------------------------------- kernels */

/* k_vec_add, k_scale: tests/host_kernels.h */


/* The last two scale like _Z5scalePffi: one named as NCCL names its
 * collectives, and one that only tests/fakecuda/fake_nccl.c (a libnccl.so.2)
 * launches, so fikit can know it only by who launched it. */
static const struct dbl_fn functions[] = {{"vec_add", NULL, k_vec_add, 4, {8, 8, 8, 4}},
                                      {"_Z5scalePffi", NULL, k_scale, 3, {8, 4, 4}},
                                      {"ncclDevKernel_AllReduce_Sum_f32_RING_LL", NULL, k_scale, 3, {8, 4, 4}},
                                      {"_Z9reduce_inPffi", NULL, k_scale, 3, {8, 4, 4}},
#define LAYER(l) {"_Z5layerILi" #l "EEvPjjj", NULL, k_layer, 3, {8, 4, 4}}
                                      /* the CUDA demo's kernels, through the runtime double */
                                      LAYER(0), LAYER(1), LAYER(2), LAYER(3), LAYER(4), LAYER(5),
                                      LAYER(6), LAYER(7), LAYER(8), LAYER(9), LAYER(10), LAYER(11),
                                      LAYER(12), LAYER(13), LAYER(14), LAYER(15)};
#undef LAYER

/* ------------------------------------------------------------- counting */

__attribute__((destructor)) static void report(void) { dbl_report("FAKECUDA_COUNT"); }

/* ------------------------------------------------------ device, context */

/* A node of FAKECUDA_DEVICES devices (default 2, 1 to 8), one model, each
 * with its own UUID: physical device p's bytes are all 0xab but the first
 * and the last, which are 0xab + p (device 0: the one UUID the double had
 * before it had several). The program sees them as the driver shows them
 * through CUDA_VISIBLE_DEVICES: unset, every device in order; set, a
 * comma-separated list of entries, each an index or a UUID written as
 * nvidia-smi prints it ("GPU-" then the digits with their dashes, or a prefix
 * of that naming one device alone), numbered from 0 in the list's order. The
 * first entry that names no device (or one already listed) ends the list:
 * "0,2,-1,1" shows devices 0 and 2. Set and empty, or with no valid first
 * entry, it shows none, and cuInit fails with CUDA_ERROR_NO_DEVICE. */
#define MAX_DEVICES 8

static int nphysical, nvisible, visible[MAX_DEVICES]; /* visible[ordinal] = physical device */
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static void physical_uuid(int p, unsigned char b[16])
{
    memset(b, 0xab, 16);
    b[0] = b[15] = (unsigned char)(0xab + p);
}

static void uuid_text(int p, char *out, size_t len)
{
    unsigned char b[16];
    physical_uuid(p, b);
    snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* The physical device one entry names, or -1. */
static int entry_device(const char *e, size_t len)
{
    if (len == 0)
        return -1;
    if (len > 4 && strncmp(e, "GPU-", 4) == 0) {
        int found = -1;
        for (int p = 0; p < nphysical; p++) {
            char u[64];
            uuid_text(p, u, sizeof u);
            if (len <= strlen(u) && strncasecmp(u, e, len) == 0) {
                if (found >= 0)
                    return -1; /* a prefix of two devices' UUIDs names neither */
                found = p;
            }
        }
        return found;
    }
    int v = 0;
    for (size_t i = 0; i < len; i++) {
        if (e[i] < '0' || e[i] > '9' || v > MAX_DEVICES)
            return -1;
        v = v * 10 + (e[i] - '0');
    }
    return v < nphysical ? v : -1;
}

static void devices_init(void)
{
    const char *n = getenv("FAKECUDA_DEVICES");
    nphysical = n && atoi(n) >= 1 ? atoi(n) : 2;
    if (nphysical > MAX_DEVICES)
        nphysical = MAX_DEVICES;
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    if (!cvd) {
        for (int p = 0; p < nphysical; p++)
            visible[nvisible++] = p;
        return;
    }
    for (const char *e = cvd; nvisible < MAX_DEVICES;) {
        size_t len = strcspn(e, ",");
        int p = entry_device(e, len);
        for (int i = 0; i < nvisible && p >= 0; i++)
            if (visible[i] == p)
                p = -1;
        if (p < 0)
            break;
        visible[nvisible++] = p;
        if (!e[len])
            break;
        e += len + 1;
    }
}

static int visible_count(void)
{
    pthread_once(&devices_once, devices_init);
    return nvisible;
}

/* A device's primary context, or a green context's (green: its SMs); a
 * context knows its device's ordinal. */
struct CUctx_st {
    int ordinal;
    unsigned green_sms; /* 0: a primary context */
};
static struct CUctx_st contexts[MAX_DEVICES];
static _Thread_local CUcontext current;
/* What cuCtxPushCurrent saved. */
static _Thread_local CUcontext pushed[8];
static _Thread_local int npushed;

API cuInit(unsigned flags) { (void)flags; return visible_count() ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE; }
API cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
API cuDeviceGet(CUdevice *d, int ordinal)
{
    *d = ordinal;
    return ordinal >= 0 && ordinal < visible_count() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}
API cuDeviceGetCount(int *n) { *n = visible_count(); return CUDA_SUCCESS; }
API cuDeviceGetName(char *name, int len, CUdevice d)
{
    if (d < 0 || d >= visible_count())
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "Fake CUDA Device");
    return CUDA_SUCCESS;
}
API cuDeviceGetUuid_v2(CUuuid *u, CUdevice d)
{
    if (d < 0 || d >= visible_count())
        return CUDA_ERROR_INVALID_DEVICE;
    physical_uuid(visible[d], (unsigned char *)u->bytes);
    return CUDA_SUCCESS;
}
API cuDeviceGetUuid(CUuuid *u, CUdevice d) { return cuDeviceGetUuid_v2(u, d); }
API cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    if (d < 0 || d >= visible_count())
        return CUDA_ERROR_INVALID_DEVICE;
    contexts[d].ordinal = d;
    *c = &contexts[d];
    return CUDA_SUCCESS;
}
API cuDevicePrimaryCtxRelease_v2(CUdevice d) { return d >= 0 && d < visible_count() ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE; }
API cuCtxSetCurrent(CUcontext c) { current = c; return CUDA_SUCCESS; }
API cuCtxPushCurrent_v2(CUcontext c)
{
    if (!c || npushed == 8)
        return CUDA_ERROR_INVALID_VALUE;
    pushed[npushed++] = current;
    current = c;
    return CUDA_SUCCESS;
}
API cuCtxPopCurrent_v2(CUcontext *c)
{
    if (!npushed)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (c)
        *c = current;
    current = pushed[--npushed];
    return CUDA_SUCCESS;
}
API cuCtxGetCurrent(CUcontext *c) { *c = current; return CUDA_SUCCESS; }
API cuCtxGetDevice(CUdevice *d)
{
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    *d = current->ordinal;
    return CUDA_SUCCESS;
}
/* A context's synchronisation waits for every stream's waits, as the
 * legacy stream does (tests/double/double.h). */
API cuCtxSynchronize(void) { dbl_drain(NULL); return CUDA_SUCCESS; }

/* --------------------------------------------------------------- memory */

API cuMemAlloc_v2(CUdeviceptr *p, size_t n) { *p = (CUdeviceptr)(uintptr_t)calloc(1, n); return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY; }
API cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return CUDA_SUCCESS; }
/* Copies are on the legacy stream: after everything the streams wait for. */
API cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { dbl_drain(NULL); memcpy((void *)(uintptr_t)d, s, n); return CUDA_SUCCESS; }
API cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { dbl_drain(NULL); memcpy(d, (void *)(uintptr_t)s, n); return CUDA_SUCCESS; }

/* ------------------------------------------------------ modules, naming */

/* A module is the double's (tests/double/double.h): an unloaded one's
 * memory goes to the next load, so kernel handles are reused. */
API cuModuleLoadData(CUmodule *m, const void *image)
{
    (void)image;
    *m = (CUmodule)dbl_module_load();
    return *m ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
API cuModuleUnload(CUmodule m)
{
    if (!m)
        return CUDA_ERROR_INVALID_HANDLE;
    dbl_module_unload((struct dbl_module *)m);
    return CUDA_SUCCESS;
}
API cuLibraryUnload(CUlibrary l) { (void)l; return CUDA_SUCCESS; }
API cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    int missing = 1;
    *f = m ? (CUfunction)dbl_module_function((struct dbl_module *)m, functions,
                                             sizeof functions / sizeof functions[0], name, &missing)
           : NULL;
    return *f ? CUDA_SUCCESS : missing ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_OUT_OF_MEMORY;
}
API cuFuncGetName(const char **name, CUfunction f) { *name = ((const struct dbl_fn *)f)->name; return CUDA_SUCCESS; }
API cuKernelGetName(const char **name, CUkernel k) { *name = ((const struct dbl_fn *)k)->name; return CUDA_SUCCESS; }

/* ---------------------------------------------------- streams, capture */


/* The legacy and per-thread streams; a stream has no device here (-1). */
static struct dbl_stream legacy = {.device = -1, .legacy = 1}, per_thread_storage = {.device = -1};

static struct dbl_stream *S(CUstream s)
{
    if (!s)
        return &legacy;
    if (s == (CUstream)0x2)
        return &per_thread_storage;
    return (struct dbl_stream *)s;
}

API cuStreamCreate(CUstream *s, unsigned flags) { (void)flags; *s = (CUstream)dbl_stream_new(-1); return *s ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY; }
API cuStreamDestroy_v2(CUstream s) { free(s); return CUDA_SUCCESS; }
API cuStreamSynchronize(CUstream s)
{
    struct dbl_stream *st = S(s);
    if (st->async)
        dbl_astream_sync(st);
    else
        dbl_drain(st);
    return CUDA_SUCCESS;
}
API cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode m) { (void)m; dbl_capture_begin(S(s)); return CUDA_SUCCESS; }
API cuStreamEndCapture(CUstream s, CUgraph *g) { *g = (CUgraph)dbl_capture_end(S(s)); return CUDA_SUCCESS; }
API cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st) { *st = S(s)->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE; return CUDA_SUCCESS; }
API cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *st) { return cuStreamIsCapturing(s ? s : (CUstream)0x2, st); }
API cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m) { (void)m; return CUDA_SUCCESS; }
API cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags) { (void)flags; *e = (CUgraphExec)g; return CUDA_SUCCESS; }
API cuGraphExecDestroy(CUgraphExec e) { (void)e; return CUDA_SUCCESS; }
API cuGraphDestroy(CUgraph g) { dbl_graph_free((struct dbl_graph *)g); return CUDA_SUCCESS; }

/* ------------------------------------------------------ green contexts */

/* A device's SMs as the driver describes them: 132, partitions of at least
 * 8, in groups of 8 (an H100's). A green context has a share of them; its
 * streams are the driver double's asynchronous ones (tests/double/double.h),
 * whose kernels run late on a thread of their own: what lets a test see
 * whether fikit, moving a program's launches into a green context, keeps the
 * program's stream order. FAKECUDA_GREEN=unsupported makes cuGreenCtxCreate
 * fail as an old driver's would; FAKECUDA_GREEN_COUNT names a file that
 * gets the number of kernels run in green contexts. */
#define SM_COUNT 132
#define SM_GROUP 8

struct CUdevResourceDesc_st {
    unsigned sms;
};
struct CUgreenCtx_st {
    struct CUctx_st ctx;
};

/* Green streams and the green context each belongs to. */
static pthread_mutex_t green_lock = PTHREAD_MUTEX_INITIALIZER;
static struct green_stream {
    CUstream s;
    CUgreenCtx owner;
} green_streams[256];
static int ngreen;

static CUgreenCtx green_owner(CUstream s)
{
    CUgreenCtx g = NULL;
    pthread_mutex_lock(&green_lock);
    for (int i = 0; i < ngreen && !g; i++)
        if (green_streams[i].s == s)
            g = green_streams[i].owner;
    pthread_mutex_unlock(&green_lock);
    return g;
}

__attribute__((destructor)) static void report_green(void)
{
    const char *path = getenv("FAKECUDA_GREEN_COUNT");
    FILE *f = path && *path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%ld\n", dbl_async_kernels());
        fclose(f);
    }
}

API cuDeviceGetDevResource(CUdevice d, CUdevResource *r, CUdevResourceType type)
{
    if (d < 0 || d >= visible_count())
        return CUDA_ERROR_INVALID_DEVICE;
    if (type != CU_DEV_RESOURCE_TYPE_SM)
        return CUDA_ERROR_INVALID_VALUE;
    memset(r, 0, sizeof *r);
    r->type = CU_DEV_RESOURCE_TYPE_SM;
    r->sm.smCount = SM_COUNT;
    r->sm.minSmPartitionSize = SM_GROUP;
    r->sm.smCoscheduledAlignment = SM_GROUP;
    return CUDA_SUCCESS;
}
API cuDevSmResourceSplitByCount(CUdevResource *result, unsigned *groups, const CUdevResource *in,
                                CUdevResource *rest, unsigned flags, unsigned min_count)
{
    (void)flags;
    unsigned n = (min_count + SM_GROUP - 1) / SM_GROUP * SM_GROUP;
    if (!groups || !*groups || !result || n == 0 || n > in->sm.smCount)
        return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    *result = *in;
    result->sm.smCount = n;
    if (rest) {
        *rest = *in;
        rest->sm.smCount = in->sm.smCount - n;
    }
    *groups = 1;
    return CUDA_SUCCESS;
}
API cuDevResourceGenerateDesc(CUdevResourceDesc *desc, CUdevResource *r, unsigned n)
{
    if (n != 1 || r->type != CU_DEV_RESOURCE_TYPE_SM)
        return CUDA_ERROR_INVALID_VALUE;
    *desc = malloc(sizeof **desc);
    if (!*desc)
        return CUDA_ERROR_OUT_OF_MEMORY;
    (*desc)->sms = r->sm.smCount;
    return CUDA_SUCCESS;
}
API cuGreenCtxCreate(CUgreenCtx *g, CUdevResourceDesc desc, CUdevice d, unsigned flags)
{
    (void)flags;
    const char *mode = getenv("FAKECUDA_GREEN");
    if (mode && !strcmp(mode, "unsupported"))
        return CUDA_ERROR_NOT_SUPPORTED;
    if (d < 0 || d >= visible_count())
        return CUDA_ERROR_INVALID_DEVICE;
    *g = calloc(1, sizeof **g);
    if (!*g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    (*g)->ctx.ordinal = d;
    (*g)->ctx.green_sms = desc->sms;
    return CUDA_SUCCESS;
}
API cuCtxFromGreenCtx(CUcontext *c, CUgreenCtx g) { *c = &g->ctx; return CUDA_SUCCESS; }
API cuGreenCtxStreamCreate(CUstream *s, CUgreenCtx owner, unsigned flags, int priority)
{
    (void)flags;
    (void)priority;
    pthread_mutex_lock(&green_lock);
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    struct dbl_stream *st = ngreen < 256 ? dbl_astream_new(owner->ctx.ordinal, owner->ctx.green_sms) : NULL;
    if (st) {
        green_streams[ngreen++] = (struct green_stream){(CUstream)st, owner};
        *s = (CUstream)st;
        r = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&green_lock);
    return r;
}
API cuStreamGetGreenCtx(CUstream s, CUgreenCtx *out)
{
    CUgreenCtx g = green_owner(s);
    *out = g ? g : (current && current->green_sms && (!s || s == (CUstream)0x2) ? (CUgreenCtx)current : NULL);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------- launches */


static CUresult run(CUfunction f, const unsigned g[3], const unsigned b[3], CUstream s, void **params)
{
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    dbl_run((const struct dbl_fn *)f, g, b, S(s), params);
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
    dbl_drain(S(s));
    dbl_graph_launch((struct dbl_graph *)e);
    return CUDA_SUCCESS;
}
API cuGraphLaunch_ptsz(CUgraphExec e, CUstream s) { return cuGraphLaunch(e, s); }

/* --------------------------------------------------------------- events */

API cuEventCreate(CUevent *e, unsigned flags) { (void)flags; *e = (CUevent)dbl_event_new(-1); return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY; }
API cuEventDestroy_v2(CUevent e) { free(e); return CUDA_SUCCESS; }
API cuEventRecord(CUevent e, CUstream s)
{
    if (dbl_event_record((struct dbl_event *)e, S(s)))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED; /* fikit must never do this */
    return CUDA_SUCCESS;
}
API cuEventRecord_ptsz(CUevent e, CUstream s) { return cuEventRecord(e, s ? s : (CUstream)0x2); }
API cuEventQuery(CUevent e) { return dbl_event_done((struct dbl_event *)e) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY; }
API cuEventSynchronize(CUevent e) { dbl_event_sync((struct dbl_event *)e); return CUDA_SUCCESS; }
API cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags)
{
    (void)flags;
    return dbl_wait(S(s), (struct dbl_event *)e) ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
}
API cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned flags) { return cuStreamWaitEvent(s ? s : (CUstream)0x2, e, flags); }
API cuGetErrorName(CUresult r, const char **s)
{
    *s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : r == CUDA_ERROR_NOT_SUPPORTED ? "CUDA_ERROR_NOT_SUPPORTED" : "CUDA_ERROR_UNKNOWN";
    return CUDA_SUCCESS;
}
API cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    return dbl_event_elapsed((const struct dbl_event *)a, (const struct dbl_event *)b, ms) ? CUDA_ERROR_INVALID_HANDLE
                                                                                           : CUDA_SUCCESS;
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
    SYM(cuStreamSynchronize), SYM(cuGetErrorName), SYMP(cuStreamWaitEvent),
    {"cuDevicePrimaryCtxRelease", (void *)cuDevicePrimaryCtxRelease_v2, (void *)cuDevicePrimaryCtxRelease_v2},
    {"cuCtxPushCurrent", (void *)cuCtxPushCurrent_v2, (void *)cuCtxPushCurrent_v2},
    {"cuCtxPopCurrent", (void *)cuCtxPopCurrent_v2, (void *)cuCtxPopCurrent_v2},
    SYM(cuDeviceGetDevResource), SYM(cuDevSmResourceSplitByCount), SYM(cuDevResourceGenerateDesc),
    SYM(cuGreenCtxCreate), SYM(cuCtxFromGreenCtx), SYM(cuGreenCtxStreamCreate), SYM(cuStreamGetGreenCtx),
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
