#include "backends/cuda/cuda_confine.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/confine_pool.h"

#include "core/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------ driver functions */

static struct {
    CUresult (*CtxGetDevice)(CUdevice *);
    CUresult (*CtxPushCurrent)(CUcontext);
    CUresult (*CtxPopCurrent)(CUcontext *);
    CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*PrimaryCtxRelease)(CUdevice);
    CUresult (*DeviceGetDevResource)(CUdevice, CUdevResource *, CUdevResourceType);
    CUresult (*SmResourceSplitByCount)(CUdevResource *, unsigned *, const CUdevResource *, CUdevResource *,
                                       unsigned, unsigned);
    CUresult (*ResourceGenerateDesc)(CUdevResourceDesc *, CUdevResource *, unsigned);
    CUresult (*GreenCtxCreate)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned);
    CUresult (*CtxFromGreenCtx)(CUcontext *, CUgreenCtx);
    CUresult (*GreenCtxStreamCreate)(CUstream *, CUgreenCtx, unsigned, int);
    CUresult (*StreamGetGreenCtx)(CUstream, CUgreenCtx *);
    CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*GetErrorName)(CUresult, const char **);
} drv;

static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static bool drv_ok;

static void resolve(void)
{
#define GET(field, name, version) drv.field = fikit_cuda_driver_proc(name, version)
    GET(CtxGetDevice, "cuCtxGetDevice", 2000);
    GET(CtxPushCurrent, "cuCtxPushCurrent", 4000);
    GET(CtxPopCurrent, "cuCtxPopCurrent", 4000);
    GET(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000);
    GET(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000);
    GET(DeviceGetDevResource, "cuDeviceGetDevResource", 12040);
    GET(SmResourceSplitByCount, "cuDevSmResourceSplitByCount", 12040);
    GET(ResourceGenerateDesc, "cuDevResourceGenerateDesc", 12040);
    GET(GreenCtxCreate, "cuGreenCtxCreate", 12040);
    GET(CtxFromGreenCtx, "cuCtxFromGreenCtx", 12040);
    GET(GreenCtxStreamCreate, "cuGreenCtxStreamCreate", 12050);
    GET(StreamGetGreenCtx, "cuStreamGetGreenCtx", 12040);
    GET(StreamWaitEvent, "cuStreamWaitEvent", 3020);
    GET(StreamSynchronize, "cuStreamSynchronize", 2000);
    GET(EventCreate, "cuEventCreate", 2000);
    GET(EventRecord, "cuEventRecord", 2000);
    GET(GetErrorName, "cuGetErrorName", 6000);
#undef GET
    drv_ok = drv.CtxGetDevice && drv.CtxPushCurrent && drv.CtxPopCurrent && drv.PrimaryCtxRetain &&
             drv.PrimaryCtxRelease && drv.DeviceGetDevResource && drv.SmResourceSplitByCount &&
             drv.ResourceGenerateDesc && drv.GreenCtxCreate && drv.CtxFromGreenCtx && drv.GreenCtxStreamCreate &&
             drv.StreamGetGreenCtx && drv.StreamWaitEvent && drv.StreamSynchronize && drv.EventCreate &&
             drv.EventRecord;
}

/* "cuGreenCtxCreate: CUDA_ERROR_NOT_SUPPORTED", kept for the one message
 * the same thread prints. */
static _Thread_local char why_buf[160];
static const char *why(const char *call, CUresult r)
{
    const char *n = NULL;
    if (!drv.GetErrorName || drv.GetErrorName(r, &n) != CUDA_SUCCESS || !n)
        n = "an error";
    snprintf(why_buf, sizeof why_buf, "%s: %s (%d)", call, n, (int)r);
    return why_buf;
}

/* ------------------------------------------------------------- the pool */

/* Devices (primary contexts) a process confines on. */
#define CONTEXTS 8

/* What a primary context's device offers. */
struct context {
    CUcontext ctx;     /* NULL: free */
    bool primary;      /* a device's primary context: launches there may move */
    CUdevice dev;
    CUdevResource sm;  /* the device's SMs */
};

static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct context contexts[CONTEXTS];
/* Green contexts by primary context and SM count; lanes: a non-blocking
 * stream of the green context, an event made in the primary context
 * (recorded on the program's stream), one made in the green context
 * (recorded on the green stream). */
static struct fikit_confine_pool pool = FIKIT_CONFINE_POOL_INIT;
/* Whether a launch into a green stream needs the green context current:
 * 0 not known yet, 1 no, 2 yes (found by the first launch). */
static _Atomic int push_mode;
/* One green context current on one thread at a time: the launches that
 * push it are serialised. */
static pthread_mutex_t push_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct context *context_of(CUcontext ctx, const char **failed)
{
    for (int i = 0; i < CONTEXTS; i++) {
        CUcontext c = __atomic_load_n(&contexts[i].ctx, __ATOMIC_ACQUIRE);
        if (c == ctx)
            return &contexts[i];
        if (!c)
            break;
    }
    pthread_mutex_lock(&contexts_lock);
    struct context *found = NULL;
    for (int i = 0; i < CONTEXTS && !found; i++) {
        struct context *c = &contexts[i];
        if (c->ctx == ctx) {
            found = c;
        } else if (!c->ctx) {
            CUcontext primary = NULL;
            CUresult r;
            c->primary = false;
            if (drv.CtxGetDevice(&c->dev) == CUDA_SUCCESS && drv.PrimaryCtxRetain(&primary, c->dev) == CUDA_SUCCESS) {
                c->primary = primary == ctx;
                drv.PrimaryCtxRelease(c->dev);
            }
            if (c->primary && (r = drv.DeviceGetDevResource(c->dev, &c->sm, CU_DEV_RESOURCE_TYPE_SM)) != CUDA_SUCCESS) {
                *failed = why("cuDeviceGetDevResource", r);
                c->primary = false;
            }
            /* Last: a reader that finds ctx without the lock reads the rest. */
            __atomic_store_n(&c->ctx, ctx, __ATOMIC_RELEASE);
            found = c;
        }
    }
    pthread_mutex_unlock(&contexts_lock);
    return found;
}

/* The SMs a share of pct % asks for: at least the device's smallest
 * partition, a multiple of its alignment; 0 where that is the device. */
static unsigned sms_for(const CUdevResource *sm, uint32_t pct)
{
    unsigned total = sm->sm.smCount, step = sm->sm.smCoscheduledAlignment;
    unsigned want = (unsigned)(((uint64_t)total * pct + 99) / 100);
    if (want < sm->sm.minSmPartitionSize)
        want = sm->sm.minSmPartitionSize;
    if (step > 1)
        want = (want + step - 1) / step * step;
    return want >= total ? 0 : want;
}

/* A partition's green context (fikit_confine_make_fn): res[0] the green
 * context, res[1] its CUcontext. */
static const char *make_green(struct fikit_confine_part *p, void *arg)
{
    const struct context *c = arg;
    CUdevResource part, rest, all = c->sm;
    unsigned groups = 1;
    CUdevResourceDesc desc;
    CUgreenCtx green;
    CUcontext gctx;
    CUresult r;
    if ((r = drv.SmResourceSplitByCount(&part, &groups, &all, &rest, 0, p->units)) != CUDA_SUCCESS)
        return why("cuDevSmResourceSplitByCount", r);
    if ((r = drv.ResourceGenerateDesc(&desc, &part, 1)) != CUDA_SUCCESS)
        return why("cuDevResourceGenerateDesc", r);
    if ((r = drv.GreenCtxCreate(&green, desc, c->dev, CU_GREEN_CTX_DEFAULT_STREAM)) != CUDA_SUCCESS)
        return why("cuGreenCtxCreate", r);
    if ((r = drv.CtxFromGreenCtx(&gctx, green)) != CUDA_SUCCESS)
        return why("cuCtxFromGreenCtx", r);
    p->res[0] = green;
    p->res[1] = gctx;
    fikit_debug("confining launches: a green context of %u of the device's %u SMs", part.sm.smCount,
                c->sm.sm.smCount);
    return NULL;
}

/* Makes a lane's stream and events (its lock held). */
static const char *lane_make(struct fikit_confine_part *p, struct fikit_confine_lane *l)
{
    CUresult r;
    CUcontext popped;
    CUevent before, after;
    CUstream green;
    if ((r = drv.EventCreate(&before, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
        return why("cuEventCreate", r);
    if ((r = drv.GreenCtxStreamCreate(&green, (CUgreenCtx)p->res[0], CU_STREAM_NON_BLOCKING, 0)) != CUDA_SUCCESS)
        return why("cuGreenCtxStreamCreate", r);
    if ((r = drv.CtxPushCurrent((CUcontext)p->res[1])) != CUDA_SUCCESS)
        return why("cuCtxPushCurrent", r);
    r = drv.EventCreate(&after, CU_EVENT_DISABLE_TIMING);
    drv.CtxPopCurrent(&popped);
    if (r != CUDA_SUCCESS)
        return why("cuEventCreate in the green context", r);
    l->stream = green;
    l->before = before;
    l->after = after;
    l->made = true;
    return NULL;
}

/* ------------------------------------------------------------ a launch */

static void push(struct fikit_cuda_redirect *r)
{
    pthread_mutex_lock(&push_lock);
    if (drv.CtxPushCurrent((CUcontext)r->part->res[1]) == CUDA_SUCCESS) {
        r->pushed = true;
        return;
    }
    pthread_mutex_unlock(&push_lock);
}

static void pop(struct fikit_cuda_redirect *r)
{
    if (!r->pushed)
        return;
    CUcontext c;
    drv.CtxPopCurrent(&c);
    r->pushed = false;
    pthread_mutex_unlock(&push_lock);
}

bool fikit_cuda_confine_begin(const struct fikit_launch_desc *l, uint32_t pct, struct fikit_cuda_redirect *r)
{
    memset(r, 0, sizeof *r);
    pthread_once(&drv_once, resolve);
    if (!drv_ok) {
        r->failed = "the driver has no green contexts (CUDA 12.5 or later)";
        return false;
    }
    const struct context *c = context_of((CUcontext)l->device, &r->failed);
    if (!c || !c->primary)
        return false; /* a context the program made itself: left alone */
    unsigned sms = sms_for(&c->sm, pct);
    if (!sms)
        return false; /* its share is the whole device */
    CUstream s = (CUstream)l->stream;
    CUgreenCtx own = NULL;
    if (drv.StreamGetGreenCtx(s, &own) == CUDA_SUCCESS && own)
        return false; /* the program's own green context */
    struct fikit_confine_part *p = fikit_confine_part(&pool, (uintptr_t)c->ctx, sms, make_green, (void *)c, &r->failed);
    if (!p)
        return false;
    struct fikit_confine_lane *lane = fikit_confine_lane(p, s);
    pthread_mutex_lock(&lane->lock);
    if (!lane->made && (r->failed = lane_make(p, lane)) != NULL) {
        pthread_mutex_unlock(&lane->lock);
        return false;
    }
    /* The green stream waits for everything the program's stream holds. */
    if (drv.EventRecord((CUevent)lane->before, s) != CUDA_SUCCESS ||
        drv.StreamWaitEvent((CUstream)lane->stream, (CUevent)lane->before, 0) != CUDA_SUCCESS) {
        pthread_mutex_unlock(&lane->lock);
        return false;
    }
    r->lane = lane;
    r->part = p;
    r->stream = (CUstream)lane->stream;
    r->program = s;
    if (atomic_load_explicit(&push_mode, memory_order_relaxed) == 2)
        push(r);
    return true;
}

bool fikit_cuda_confine_retry(struct fikit_cuda_redirect *r, CUresult result)
{
    if (result == CUDA_SUCCESS || r->pushed || atomic_load_explicit(&push_mode, memory_order_relaxed) == 1 ||
        (result != CUDA_ERROR_INVALID_CONTEXT && result != CUDA_ERROR_INVALID_HANDLE &&
         result != CUDA_ERROR_CONTEXT_IS_DESTROYED))
        return false;
    push(r);
    return r->pushed;
}

bool fikit_cuda_confine_end(struct fikit_cuda_redirect *r, CUresult result)
{
    struct fikit_confine_lane *lane = r->lane;
    bool pushed = r->pushed;
    pop(r);
    if (result != CUDA_SUCCESS) {
        pthread_mutex_unlock(&lane->lock);
        if (fikit_confine_refused(&pool))
            r->failed = why("a launch into a green context", result);
        return false;
    }
    int known = 0;
    atomic_compare_exchange_strong(&push_mode, &known, pushed ? 2 : 1);
    fikit_confine_taken(&pool);
    /* The program's stream waits for the launch; where that cannot be
     * said, the launch is waited for here, so that order is never lost. */
    if (drv.EventRecord((CUevent)lane->after, (CUstream)lane->stream) != CUDA_SUCCESS ||
        drv.StreamWaitEvent(r->program, (CUevent)lane->after, 0) != CUDA_SUCCESS)
        drv.StreamSynchronize((CUstream)lane->stream);
    pthread_mutex_unlock(&lane->lock);
    return true;
}
