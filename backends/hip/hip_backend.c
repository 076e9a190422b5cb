#include "backends/hip/hip_backend.h"
#include "backends/capture.h"
#include "backends/event_pair.h"

#include "core/log.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------- runtime functions */

static struct {
    hipError_t (*GetDevice)(int *);
    hipError_t (*SetDevice)(int);
    int (*GetStreamDeviceId)(hipStream_t);
    hipError_t (*StreamGetDevice)(hipStream_t, hipDevice_t *);
    const char *(*KernelNameRef)(hipFunction_t);
    const char *(*KernelNameRefByPtr)(const void *, hipStream_t);
    hipError_t (*DeviceGetName)(char *, int, hipDevice_t);
    hipError_t (*DeviceGetUuid)(hipUUID *, hipDevice_t);
    hipError_t (*DeviceGetPCIBusId)(char *, int, int);
    hipError_t (*StreamIsCapturing)(hipStream_t, hipStreamCaptureStatus *);
    hipError_t (*EventCreateWithFlags)(hipEvent_t *, unsigned);
    hipError_t (*EventRecord)(hipEvent_t, hipStream_t);
    hipError_t (*EventQuery)(hipEvent_t);
    hipError_t (*EventElapsedTime)(float *, hipEvent_t, hipEvent_t);
    hipError_t (*EventDestroy)(hipEvent_t);
    hipError_t (*ThreadExchangeStreamCaptureMode)(hipStreamCaptureMode *);
} rt;

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int rt_state; /* 0: not tried, 1: ready, -1: unusable */
static void *rt_handle;
static char rt_path[512];

const char *const fikit_hip_sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                         "libamdhip64.so", NULL};

/* The libamdhip64 holding real_entry; else whichever one is loaded. The
 * handle keeps it loaded: fikit holds pointers into it. */
static void *find_runtime(void *real_entry)
{
    Dl_info info;
    if (real_entry && dladdr(real_entry, &info) && info.dli_fname) {
        void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            snprintf(rt_path, sizeof rt_path, "%s", info.dli_fname);
            return h;
        }
    }
    for (const char *const *n = fikit_hip_sonames; *n; n++) {
        void *h = dlopen(*n, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            snprintf(rt_path, sizeof rt_path, "%s", *n);
            return h;
        }
    }
    return NULL;
}

#define LOOKUP(field, name) (*(void **)&rt.field = sym(h, name))

int fikit_hip_runtime_init(void *real_entry, fikit_hip_sym_fn sym)
{
    int st = atomic_load_explicit(&rt_state, memory_order_acquire);
    if (st)
        return st > 0 ? 0 : -ENOENT;
    pthread_mutex_lock(&rt_lock);
    st = atomic_load(&rt_state);
    if (st) {
        pthread_mutex_unlock(&rt_lock);
        return st > 0 ? 0 : -ENOENT;
    }
    void *h = find_runtime(real_entry);
    if (h) {
        LOOKUP(GetDevice, "hipGetDevice");
        LOOKUP(SetDevice, "hipSetDevice");
        LOOKUP(GetStreamDeviceId, "hipGetStreamDeviceId");
        LOOKUP(StreamGetDevice, "hipStreamGetDevice");
        LOOKUP(KernelNameRef, "hipKernelNameRef");
        LOOKUP(KernelNameRefByPtr, "hipKernelNameRefByPtr");
        LOOKUP(DeviceGetName, "hipDeviceGetName");
        LOOKUP(DeviceGetUuid, "hipDeviceGetUuid");
        LOOKUP(DeviceGetPCIBusId, "hipDeviceGetPCIBusId");
        LOOKUP(StreamIsCapturing, "hipStreamIsCapturing");
        LOOKUP(EventCreateWithFlags, "hipEventCreateWithFlags");
        LOOKUP(EventRecord, "hipEventRecord");
        LOOKUP(EventQuery, "hipEventQuery");
        LOOKUP(EventElapsedTime, "hipEventElapsedTime");
        LOOKUP(EventDestroy, "hipEventDestroy");
        LOOKUP(ThreadExchangeStreamCaptureMode, "hipThreadExchangeStreamCaptureMode");
    }
    bool ok = h && rt.GetDevice && rt.SetDevice && (rt.GetStreamDeviceId || rt.StreamGetDevice) &&
              rt.KernelNameRef && rt.KernelNameRefByPtr && rt.DeviceGetName &&
              rt.EventCreateWithFlags && rt.EventRecord && rt.EventQuery && rt.EventElapsedTime;
    if (ok) {
        rt_handle = h;
        fikit_debug("hip: runtime %s", rt_path);
    } else if (h) {
        fikit_warn("the HIP runtime %s lacks functions fikit needs: HIP launches run unscheduled",
                   rt_path);
    } else {
        fikit_warn("no libamdhip64 is loaded: HIP launches run unscheduled");
    }
    atomic_store_explicit(&rt_state, ok ? 1 : -1, memory_order_release);
    pthread_mutex_unlock(&rt_lock);
    return ok ? 0 : -ENOENT;
}

void *fikit_hip_runtime_handle(const char **path)
{
    if (atomic_load_explicit(&rt_state, memory_order_acquire) <= 0)
        return NULL;
    if (path)
        *path = rt_path;
    return rt_handle;
}

/* ------------------------------------------------------------ describing */

/* The device as a handle: its ordinal + 1, so that device 0 is not NULL. */
#define DEV_HANDLE(d) ((void *)(uintptr_t)((d) + 1))
#define DEV_ORDINAL(h) ((int)((uintptr_t)(h)-1))

/* This thread has made a HIP call that initialised it (hipGetDevice). The
 * runtime's hipGetStreamDeviceId may not be called before, nor with the
 * NULL stream while there is no device: ROCm 5.2 crashes then. */
static _Thread_local bool thread_ready;

bool fikit_hip_describe(struct fikit_launch_desc *l, enum fikit_hip_kernel_kind kind,
                        const void *k, hipStream_t s, bool spt, const unsigned grid[3],
                        const unsigned block[3], size_t shmem, const char *name)
{
    if (atomic_load_explicit(&rt_state, memory_order_acquire) <= 0)
        return false;
    /* The stream as the runtime will see it: NULL means the per-thread
     * stream for _spt entry points and the legacy null stream otherwise. */
    hipStream_t st = (!s && spt) ? hipStreamPerThread : s;
    int dev = -1;
    if ((uintptr_t)st <= 2) {
        /* The null, legacy (1, where a ROCm has it) and per-thread (2)
         * streams belong to the current device. */
        if (rt.GetDevice(&dev) != hipSuccess)
            return false;
        thread_ready = true;
    } else {
        if (!thread_ready) {
            int cur;
            if (rt.GetDevice(&cur) != hipSuccess)
                return false;
            thread_ready = true;
        }
        hipDevice_t d = -1;
        if (rt.GetStreamDeviceId)
            dev = rt.GetStreamDeviceId(st);
        else if (rt.StreamGetDevice(st, &d) == hipSuccess)
            dev = d;
    }
    if (dev < 0)
        return false;
    l->backend = FIKIT_BACKEND_HIP;
    l->device = DEV_HANDLE(dev);
    l->kernel = (void *)k;
    l->kernel_kind = (int)kind;
    l->stream = st;
    for (int i = 0; i < 3; i++) {
        l->grid[i] = grid ? grid[i] : 0;
        l->block[i] = block ? block[i] : 0;
    }
    l->shmem = shmem > UINT32_MAX ? UINT32_MAX : (uint32_t)shmem;
    l->name = kind == FIKIT_HIP_NAMED ? name : NULL;
    l->launch_event = NULL;
    return true;
}

/* ------------------------------------------------------------------ ops */

/* A host function and a hipFunction_t cannot be told apart from the
 * pointer: the launch's kernel_kind says which it is. */
static int kernel_name(const struct fikit_launch_desc *l, char *buf, size_t len)
{
    const char *n = NULL;
    /* The null, legacy and per-thread streams are on the current device:
     * naming through NULL does not create the per-thread stream early. */
    hipStream_t s = (uintptr_t)l->stream <= 2 ? NULL : (hipStream_t)l->stream;
    if (l->kernel_kind == FIKIT_HIP_FUNCTION)
        n = rt.KernelNameRef((hipFunction_t)l->kernel);
    else if (l->kernel_kind == FIKIT_HIP_HOST_FUNCTION)
        n = rt.KernelNameRefByPtr(l->kernel, s);
    if (!n || !*n)
        return -ENOENT;
    snprintf(buf, len, "%s", n);
    return 0;
}

static bool hex16(const char b[16])
{
    for (int i = 0; i < 16; i++) {
        char c = b[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return false;
    }
    return true;
}

static int device_identity(const struct fikit_launch_desc *l, char *key, size_t keylen,
                           char *model, size_t modellen)
{
    int dev = DEV_ORDINAL(l->device);
    char name[256] = "";
    if (rt.DeviceGetName(name, (int)sizeof name, dev) != hipSuccess)
        return -ENODEV;
    name[sizeof name - 1] = '\0';
    /* Ordinals depend on HIP_VISIBLE_DEVICES and friends: two programs on
     * one GPU must get one key, so the key is the GPU's unique id (what
     * rocminfo prints as GPU-<16 hex digits>), else its PCI address. */
    hipUUID u;
    char bus[64] = "";
    if (rt.DeviceGetUuid && rt.DeviceGetUuid(&u, dev) == hipSuccess && hex16(u.bytes))
        snprintf(key, keylen, "hip:GPU-%.16s", u.bytes);
    else if (rt.DeviceGetPCIBusId && rt.DeviceGetPCIBusId(bus, (int)sizeof bus, dev) == hipSuccess &&
             bus[0])
        snprintf(key, keylen, "hip:pci-%.*s", (int)sizeof bus, bus);
    else
        snprintf(key, keylen, "hip:%d:%s", dev, name);
    snprintf(model, modellen, "%s", name[0] ? name : "AMD GPU");
    return 0;
}

FIKIT_CAPTURES_OVER(rt, fikit_hip_captures, hipStream_t, hipStreamCaptureStatus, hipSuccess,
                    hipStreamCaptureStatusNone)

/* ---------------------------------------------------------------- events */

/* An event belongs to the device that was current when it was made. */
static void *event_create(void *dev)
{
    hipEvent_t ev = NULL;
    int want = DEV_ORDINAL(dev), cur = -1;
    if (rt.GetDevice(&cur) != hipSuccess)
        return NULL;
    if (cur != want && rt.SetDevice(want) != hipSuccess)
        return NULL;
    if (rt.EventCreateWithFlags(&ev, hipEventDefault) != hipSuccess)
        ev = NULL;
    if (cur != want)
        rt.SetDevice(cur); /* the program's current device, as it was */
    return ev;
}

/* The learner thread reads events in relaxed capture mode, so that it can
 * never invalidate a graph capture that another thread of the program runs
 * in global mode. (HIP events carry their device: no device to select.) */
static _Thread_local bool reader_relaxed;

static void reader_setup(void *dev)
{
    (void)dev;
    if (!reader_relaxed && rt.ThreadExchangeStreamCaptureMode) {
        hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
        rt.ThreadExchangeStreamCaptureMode(&mode);
        reader_relaxed = true;
    }
}

FIKIT_EVENT_PAIR_OVER(rt, hipEvent_t, hipStream_t, hipSuccess, hipErrorNotReady, event_create, reader_setup)

const struct fikit_backend_ops fikit_hip_ops = {
    .kind = FIKIT_BACKEND_HIP,
    .confines = true,
    .name = "hip",
    .kernel_name = kernel_name,
    .device_identity = device_identity,
    FIKIT_CAPTURES_OPS,
    FIKIT_EVENT_PAIR_OPS,
};
