#include "backends/cuda/cuda_backend.h"
#include "backends/capture.h"
#include "backends/event_pair.h"

#include "core/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ driver functions */

static struct {
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxGetDevice)(CUdevice *);
    CUresult (*DeviceGetUuid)(CUuuid *, CUdevice);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*FuncGetName)(const char **, CUfunction);
    CUresult (*KernelGetName)(const char **, CUkernel);
    CUresult (*StreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventQuery)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*ThreadExchangeStreamCaptureMode)(CUstreamCaptureMode *);
} drv;

/* Set by the first launching thread, possibly several at once: atomic. */
static _Atomic(fikit_cu_get_proc_fn) get_proc;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static bool drv_ok;

void fikit_cuda_set_get_proc(fikit_cu_get_proc_fn fn)
{
    fikit_cu_get_proc_fn none = NULL;
    atomic_compare_exchange_strong(&get_proc, &none, fn);
}

static void *lookup(const char *name, int version)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    fikit_cu_get_proc_fn gpa = atomic_load_explicit(&get_proc, memory_order_acquire);
    if (gpa(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st) != CUDA_SUCCESS)
        return NULL;
    return p;
}

static void resolve(void)
{
    if (!atomic_load_explicit(&get_proc, memory_order_acquire))
        return;
    /* Ask for the ABI this file was written against. */
    drv.CtxGetCurrent = lookup("cuCtxGetCurrent", 4000);
    drv.CtxSetCurrent = lookup("cuCtxSetCurrent", 4000);
    drv.CtxGetDevice = lookup("cuCtxGetDevice", 2000);
    drv.DeviceGetUuid = lookup("cuDeviceGetUuid", 11040);
    drv.DeviceGetName = lookup("cuDeviceGetName", 2000);
    drv.FuncGetName = lookup("cuFuncGetName", 12030);
    drv.KernelGetName = lookup("cuKernelGetName", 12030);
    drv.StreamIsCapturing = lookup("cuStreamIsCapturing", 10000);
    drv.EventCreate = lookup("cuEventCreate", 2000);
    drv.EventRecord = lookup("cuEventRecord", 2000);
    drv.EventQuery = lookup("cuEventQuery", 2000);
    drv.EventElapsedTime = lookup("cuEventElapsedTime", 2000);
    if (!drv.EventElapsedTime) /* same signature; the driver may keep only the newer one */
        drv.EventElapsedTime = lookup("cuEventElapsedTime", 12080);
    drv.EventDestroy = lookup("cuEventDestroy", 4000);
    drv.ThreadExchangeStreamCaptureMode = lookup("cuThreadExchangeStreamCaptureMode", 10010);
    drv_ok = drv.CtxGetCurrent && drv.CtxGetDevice && drv.DeviceGetName && drv.EventCreate &&
             drv.EventRecord && drv.EventQuery && drv.EventElapsedTime;
    if (!drv_ok)
        fikit_warn("the CUDA driver lacks functions fikit needs: CUDA launches run unscheduled");
}

static bool ready(void)
{
    pthread_once(&drv_once, resolve);
    return drv_ok;
}

void *fikit_cuda_driver_proc(const char *name, int version)
{
    return ready() ? lookup(name, version) : NULL;
}

/* ------------------------------------------------------------ describing */

bool fikit_cuda_describe(struct fikit_launch_desc *l, void *f, CUstream s, bool ptsz,
                         const unsigned grid[3], const unsigned block[3], unsigned shmem,
                         const char *name)
{
    CUcontext ctx = NULL;
    if (!ready() || drv.CtxGetCurrent(&ctx) != CUDA_SUCCESS || !ctx)
        return false;
    l->backend = FIKIT_BACKEND_CUDA;
    l->device = ctx;
    l->kernel = f;
    /* The stream as the driver will see it: NULL means the per-thread
     * stream for _ptsz entry points and the legacy stream otherwise. */
    l->stream = (!s && ptsz) ? FIKIT_CU_STREAM_PER_THREAD : s;
    for (int i = 0; i < 3; i++) {
        l->grid[i] = grid ? grid[i] : 0;
        l->block[i] = block ? block[i] : 0;
    }
    l->shmem = shmem;
    l->kernel_kind = 0;
    l->name = name;
    l->launch_event = NULL;
    return true;
}

/* ------------------------------------------------------------------ ops */

static int kernel_name(const struct fikit_launch_desc *l, char *buf, size_t len)
{
    void *kernel = l->kernel;
    const char *n = NULL;
    /* cudart passes CUkernel handles where a CUfunction is expected: try both. */
    if (drv.FuncGetName && drv.FuncGetName(&n, (CUfunction)kernel) == CUDA_SUCCESS && n) {
        snprintf(buf, len, "%s", n);
        return 0;
    }
    if (drv.KernelGetName && drv.KernelGetName(&n, (CUkernel)kernel) == CUDA_SUCCESS && n) {
        snprintf(buf, len, "%s", n);
        return 0;
    }
    return -ENOENT;
}

static int device_identity(const struct fikit_launch_desc *l, char *key, size_t keylen,
                           char *model, size_t modellen)
{
    (void)l; /* the launch's context is current */
    CUdevice dev;
    char name[256] = "";
    if (drv.CtxGetDevice(&dev) != CUDA_SUCCESS || drv.DeviceGetName(name, sizeof name, dev) != CUDA_SUCCESS)
        return -ENODEV;
    CUuuid u;
    if (drv.DeviceGetUuid && drv.DeviceGetUuid(&u, dev) == CUDA_SUCCESS) {
        const unsigned char *b = (const unsigned char *)u.bytes;
        snprintf(key, keylen,
                 "cuda:GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
    } else {
        snprintf(key, keylen, "cuda:%d:%s", (int)dev, name);
    }
    snprintf(model, modellen, "%s", name);
    return 0;
}

FIKIT_CAPTURES_OVER(drv, fikit_cuda_captures, CUstream, CUstreamCaptureStatus, CUDA_SUCCESS,
                    CU_STREAM_CAPTURE_STATUS_NONE)

/* ---------------------------------------------------------------- events */

static void *event_create(void *ctx)
{
    (void)ctx; /* the launch's context is current */
    CUevent ev;
    return drv.EventCreate(&ev, CU_EVENT_DEFAULT) == CUDA_SUCCESS ? ev : NULL;
}

/* The learner thread reads events: with the event's context current, and
 * in relaxed capture mode so that it can never invalidate a graph capture
 * that another thread of the program runs in global mode. */
static _Thread_local CUcontext reader_ctx;
static _Thread_local bool reader_relaxed;

static void reader_setup(void *ctx)
{
    if (!reader_relaxed && drv.ThreadExchangeStreamCaptureMode) {
        CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
        drv.ThreadExchangeStreamCaptureMode(&mode);
        reader_relaxed = true;
    }
    if (reader_ctx != ctx && drv.CtxSetCurrent((CUcontext)ctx) == CUDA_SUCCESS)
        reader_ctx = ctx;
}

FIKIT_EVENT_PAIR_OVER(drv, CUevent, CUstream, CUDA_SUCCESS, CUDA_ERROR_NOT_READY, event_create, reader_setup)

const struct fikit_backend_ops fikit_cuda_ops = {
    .kind = FIKIT_BACKEND_CUDA,
    .confines = true,
    .name = "cuda",
    .kernel_name = kernel_name,
    .device_identity = device_identity,
    FIKIT_CAPTURES_OPS,
    FIKIT_EVENT_PAIR_OPS,
};
