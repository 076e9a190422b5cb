#include "backends/hip/hip_confine.h"
#include "backends/hip/hip_backend.h"
#include "backends/confine_pool.h"

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

/* A mask's words: 32 CUs each; 1024 CUs at most. */
#define MASK_WORDS 32

/* By device and CU count; lanes: a masked stream and two events. */
static struct fikit_confine_pool pool = FIKIT_CONFINE_POOL_INIT;

static unsigned cus_for(int total, uint32_t pct)
{
    unsigned want = (unsigned)(((uint64_t)total * pct + 99) / 100);
    if (want < 1)
        want = 1;
    return want >= (unsigned)total || want > MASK_WORDS * 32 ? 0 : want;
}

/* A partition needs nothing of its own: its lanes' streams hold the mask. */
static const char *make_nothing(struct fikit_confine_part *p, void *arg)
{
    (void)arg;
    fikit_debug("confining launches: a CU mask of %u CUs on device %d", p->units, (int)p->owner);
    return NULL;
}

/* A lane's stream and events (its lock held; the launch's device current). */
static const char *lane_make(struct fikit_confine_part *p, struct fikit_confine_lane *l)
{
    uint32_t mask[MASK_WORDS] = {0};
    for (unsigned c = 0; c < p->units; c++)
        mask[c / 32] |= 1u << (c % 32);
    hipStream_t masked;
    hipEvent_t before, after;
    hipError_t e;
    if ((e = rt.StreamCreateWithCUMask(&masked, (p->units + 31) / 32, mask)) != hipSuccess)
        return why("hipExtStreamCreateWithCUMask", e);
    if ((e = rt.EventCreateWithFlags(&before, hipEventDisableTiming)) != hipSuccess ||
        (e = rt.EventCreateWithFlags(&after, hipEventDisableTiming)) != hipSuccess)
        return why("hipEventCreateWithFlags", e);
    l->stream = masked;
    l->before = before;
    l->after = after;
    l->made = true;
    return NULL;
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
    struct fikit_confine_part *p = fikit_confine_part(&pool, (uintptr_t)device, cus, make_nothing, NULL, &r->failed);
    if (!p)
        return false;
    hipStream_t s = (hipStream_t)l->stream;
    struct fikit_confine_lane *lane = fikit_confine_lane(p, s);
    pthread_mutex_lock(&lane->lock);
    if (!lane->made && (r->failed = lane_make(p, lane)) != NULL) {
        pthread_mutex_unlock(&lane->lock);
        return false;
    }
    if (rt.EventRecord((hipEvent_t)lane->before, s) != hipSuccess ||
        rt.StreamWaitEvent((hipStream_t)lane->stream, (hipEvent_t)lane->before, 0) != hipSuccess) {
        pthread_mutex_unlock(&lane->lock);
        return false;
    }
    r->lane = lane;
    r->stream = (hipStream_t)lane->stream;
    r->program = s;
    return true;
}

bool fikit_hip_confine_end(struct fikit_hip_redirect *r, hipError_t result)
{
    struct fikit_confine_lane *lane = r->lane;
    if (result != hipSuccess) {
        pthread_mutex_unlock(&lane->lock);
        if (fikit_confine_refused(&pool))
            r->failed = why("a launch into a CU-masked stream", result);
        return false;
    }
    fikit_confine_taken(&pool);
    if (rt.EventRecord((hipEvent_t)lane->after, (hipStream_t)lane->stream) != hipSuccess ||
        rt.StreamWaitEvent(r->program, (hipEvent_t)lane->after, 0) != hipSuccess)
        rt.StreamSynchronize((hipStream_t)lane->stream);
    pthread_mutex_unlock(&lane->lock);
    return true;
}
