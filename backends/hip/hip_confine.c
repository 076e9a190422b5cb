#include "backends/hip/hip_confine.h"
#include "backends/hip/hip_backend.h"

#include "core/log.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* ----------------------------------------------------- runtime functions */

static struct {
    hipError_t (*DeviceGetAttribute)(int *, hipDeviceAttribute_t, int);
    hipError_t (*StreamCreateWithCUMask)(hipStream_t *, uint32_t, const uint32_t *);
    hipError_t (*StreamWaitEvent)(hipStream_t, hipEvent_t, unsigned);
    hipError_t (*StreamSynchronize)(hipStream_t);
    hipError_t (*EventCreateWithFlags)(hipEvent_t *, unsigned);
    hipError_t (*EventRecord)(hipEvent_t, hipStream_t);
    const char *(*GetErrorName)(hipError_t);
} rt;

static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static bool rt_ok;

static void resolve(void)
{
    void *h = fikit_hip_runtime_handle(NULL);
    if (!h)
        return;
#define GET(field, name) (*(void **)&rt.field = dlsym(h, name))
    GET(DeviceGetAttribute, "hipDeviceGetAttribute");
    GET(StreamCreateWithCUMask, "hipExtStreamCreateWithCUMask");
    GET(StreamWaitEvent, "hipStreamWaitEvent");
    GET(StreamSynchronize, "hipStreamSynchronize");
    GET(EventCreateWithFlags, "hipEventCreateWithFlags");
    GET(EventRecord, "hipEventRecord");
    GET(GetErrorName, "hipGetErrorName");
#undef GET
    rt_ok = rt.DeviceGetAttribute && rt.StreamCreateWithCUMask && rt.StreamWaitEvent && rt.StreamSynchronize &&
            rt.EventCreateWithFlags && rt.EventRecord;
}

/* "hipExtStreamCreateWithCUMask: hipErrorNotSupported", for the one message
 * the same thread prints. */
static _Thread_local char why_buf[160];
static const char *why(const char *call, hipError_t e)
{
    const char *n = rt.GetErrorName ? rt.GetErrorName(e) : NULL;
    snprintf(why_buf, sizeof why_buf, "%s: %s (%d)", call, n ? n : "an error", (int)e);
    return why_buf;
}

/* ------------------------------------------------------------- the pool */

#define LANES 16
#define PARTITIONS 16
/* A mask's words: 32 CUs each; 1024 CUs at most. */
#define MASK_WORDS 32

struct fikit_hip_lane {
    pthread_mutex_t lock;
    bool made;
    hipStream_t masked;
    hipEvent_t before, after;
};

struct partition {
    _Atomic int state; /* 0: not made, 1: made, -1: failed */
    int device;
    unsigned cus;      /* the CUs it may use: the first cus of the device's */
    struct fikit_hip_lane lanes[LANES];
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct partition partitions[PARTITIONS];
static _Atomic unsigned strikes; /* masked launches refused since the last taken */
static _Atomic bool taken_once;

static unsigned cus_for(int total, uint32_t pct)
{
    unsigned want = (unsigned)(((uint64_t)total * pct + 99) / 100);
    if (want < 1)
        want = 1;
    return want >= (unsigned)total || want > MASK_WORDS * 32 ? 0 : want;
}

static struct partition *partition_of(int device, unsigned cus, const char **failed)
{
    for (int i = 0; i < PARTITIONS; i++) {
        struct partition *p = &partitions[i];
        int st = atomic_load_explicit(&p->state, memory_order_acquire);
        if (st && p->device == device && p->cus == cus)
            return st > 0 ? p : NULL;
    }
    pthread_mutex_lock(&pool_lock);
    struct partition *p = NULL;
    for (int i = 0; i < PARTITIONS; i++) {
        struct partition *q = &partitions[i];
        int st = atomic_load_explicit(&q->state, memory_order_relaxed);
        if (st && q->device == device && q->cus == cus) {
            p = st > 0 ? q : NULL;
            goto out;
        }
        if (!st) {
            p = q;
            break;
        }
    }
    if (!p)
        goto out; /* every partition in use: this launch is not moved */
    p->device = device;
    p->cus = cus;
    for (int i = 0; i < LANES; i++)
        pthread_mutex_init(&p->lanes[i].lock, NULL);
    fikit_debug("confining launches: a CU mask of %u CUs on device %d", cus, device);
    atomic_store_explicit(&p->state, 1, memory_order_release);
out:
    pthread_mutex_unlock(&pool_lock);
    (void)failed;
    return p;
}

/* A lane's stream and events (its lock held; the launch's device current). */
static const char *lane_make(struct partition *p, struct fikit_hip_lane *l)
{
    uint32_t mask[MASK_WORDS] = {0};
    for (unsigned c = 0; c < p->cus; c++)
        mask[c / 32] |= 1u << (c % 32);
    hipError_t e;
    if ((e = rt.StreamCreateWithCUMask(&l->masked, (p->cus + 31) / 32, mask)) != hipSuccess)
        return why("hipExtStreamCreateWithCUMask", e);
    if ((e = rt.EventCreateWithFlags(&l->before, hipEventDisableTiming)) != hipSuccess ||
        (e = rt.EventCreateWithFlags(&l->after, hipEventDisableTiming)) != hipSuccess)
        return why("hipEventCreateWithFlags", e);
    l->made = true;
    return NULL;
}

static size_t lane_index(hipStream_t s)
{
    uintptr_t h = (uintptr_t)s;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 60) % LANES;
}

/* ------------------------------------------------------------ a launch */

bool fikit_hip_confine_begin(const struct fikit_launch_desc *l, uint32_t pct, struct fikit_hip_redirect *r)
{
    memset(r, 0, sizeof *r);
    pthread_once(&rt_once, resolve);
    if (!rt_ok) {
        r->failed = "the HIP runtime has no hipExtStreamCreateWithCUMask";
        return false;
    }
    int device = (int)((uintptr_t)l->device - 1); /* hip_backend.c's handle: ordinal + 1 */
    int total = 0;
    hipError_t e = rt.DeviceGetAttribute(&total, hipDeviceAttributeMultiprocessorCount, device);
    if (e != hipSuccess || total <= 0) {
        r->failed = why("hipDeviceGetAttribute(multiprocessor count)", e);
        return false;
    }
    unsigned cus = cus_for(total, pct);
    if (!cus)
        return false; /* its share is the whole device */
    struct partition *p = partition_of(device, cus, &r->failed);
    if (!p)
        return false;
    hipStream_t s = (hipStream_t)l->stream;
    struct fikit_hip_lane *lane = &p->lanes[lane_index(s)];
    pthread_mutex_lock(&lane->lock);
    if (!lane->made && (r->failed = lane_make(p, lane)) != NULL) {
        pthread_mutex_unlock(&lane->lock);
        return false;
    }
    if (rt.EventRecord(lane->before, s) != hipSuccess || rt.StreamWaitEvent(lane->masked, lane->before, 0) != hipSuccess) {
        pthread_mutex_unlock(&lane->lock);
        return false;
    }
    r->lane = lane;
    r->stream = lane->masked;
    r->program = s;
    return true;
}

bool fikit_hip_confine_end(struct fikit_hip_redirect *r, hipError_t result)
{
    struct fikit_hip_lane *lane = r->lane;
    if (result != hipSuccess) {
        pthread_mutex_unlock(&lane->lock);
        if (atomic_fetch_add(&strikes, 1) + 1 >= 8 && !atomic_load(&taken_once))
            r->failed = why("a launch into a CU-masked stream", result);
        return false;
    }
    atomic_store_explicit(&taken_once, true, memory_order_relaxed);
    atomic_store_explicit(&strikes, 0, memory_order_relaxed);
    if (rt.EventRecord(lane->after, lane->masked) != hipSuccess ||
        rt.StreamWaitEvent(r->program, lane->after, 0) != hipSuccess)
        rt.StreamSynchronize(lane->masked);
    pthread_mutex_unlock(&lane->lock);
    return true;
}
