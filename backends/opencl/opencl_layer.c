/* The OpenCL entry into fikit: an OpenCL layer (cl_layer.h) that the
 * ocl-icd loader stacks between the program and the driver when
 * OPENCL_LAYERS names libfikit.so. It gates every call that enqueues a
 * kernel, enables profiling on every queue so launches can be timed, and
 * hides that from the program: queue properties and event profiling look
 * exactly as the program asked for them. */
#define CL_TARGET_OPENCL_VERSION 300
#include "backends/opencl/opencl_backend.h"
#include "core/log.h"
#include "interpose/burst.h"
#include "interpose/hooks.h"
#include "interpose/launch.h"

#include <CL/cl_layer.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

/* What the program asked for when it created a queue. */
struct queue_info {
    cl_device_id device;
    bool app_profiling;            /* the program enabled profiling itself */
    size_t props_size;             /* CL_QUEUE_PROPERTIES_ARRAY as given, bytes */
    cl_queue_properties props[];
};

static struct _cl_icd_dispatch layer;       /* what the loader calls */
/* Profiling is added to the program's queues only when launches are timed:
 * it costs the driver a few timestamps per command. */
static cl_command_queue_properties add_profiling;
static const struct _cl_icd_dispatch *next; /* what we call */
static struct fikit_ptrmap queues = FIKIT_PTRMAP_INIT;

static void remember_queue(cl_command_queue q, cl_device_id dev, bool app_profiling,
                           const cl_queue_properties *props)
{
    size_t n = 0;
    if (props)
        while (props[n])
            n += 2;
    size_t bytes = props ? (n + 1) * sizeof *props : 0;
    struct queue_info *qi = malloc(sizeof *qi + bytes);
    if (!qi)
        return;
    qi->device = dev;
    qi->app_profiling = app_profiling;
    qi->props_size = bytes;
    if (bytes)
        memcpy(qi->props, props, bytes);
    fikit_ptrmap_put(&queues, q, qi);
}

static const struct queue_info *queue_of(cl_command_queue q)
{
    const struct queue_info *qi = fikit_ptrmap_get(&queues, q);
    if (qi)
        return qi;
    /* A queue we did not see created: ask, and assume the program's view. */
    cl_device_id dev;
    cl_command_queue_properties p = 0;
    if (next->clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL) != CL_SUCCESS)
        return NULL;
    next->clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof p, &p, NULL);
    remember_queue(q, dev, (p & CL_QUEUE_PROFILING_ENABLE) != 0, NULL);
    return fikit_ptrmap_get(&queues, q);
}

/* ------------------------------------------------------------ queues */

static cl_command_queue CL_API_CALL fikit_clCreateCommandQueue(cl_context ctx, cl_device_id dev,
                                                               cl_command_queue_properties props,
                                                               cl_int *err)
{
    cl_command_queue q = next->clCreateCommandQueue(ctx, dev, props | add_profiling, err);
    if (q)
        remember_queue(q, dev, (props & CL_QUEUE_PROFILING_ENABLE) != 0, NULL);
    return q;
}

static cl_command_queue CL_API_CALL
fikit_clCreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
                                         const cl_queue_properties *props, cl_int *err)
{
    /* Copy the list with CL_QUEUE_PROFILING_ENABLE added. */
    size_t n = 0;
    bool app_profiling = false, has_flags = false;
    if (props)
        while (props[n])
            n += 2;
    cl_queue_properties *mine = malloc((n + 3) * sizeof *mine);
    if (!mine)
        return next->clCreateCommandQueueWithProperties(ctx, dev, props, err);
    for (size_t i = 0; i < n; i += 2) {
        mine[i] = props[i];
        mine[i + 1] = props[i + 1];
        if (props[i] == CL_QUEUE_PROPERTIES) {
            has_flags = true;
            app_profiling = (props[i + 1] & CL_QUEUE_PROFILING_ENABLE) != 0;
            mine[i + 1] |= add_profiling;
        }
    }
    if (!has_flags && add_profiling) {
        mine[n++] = CL_QUEUE_PROPERTIES;
        mine[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    mine[n] = 0;
    cl_command_queue q = next->clCreateCommandQueueWithProperties(ctx, dev, mine, err);
    free(mine);
    if (q)
        remember_queue(q, dev, app_profiling, props);
    return q;
}

static cl_int CL_API_CALL fikit_clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info param,
                                                      size_t size, void *value, size_t *size_ret)
{
    const struct queue_info *qi = fikit_ptrmap_get(&queues, q);
    if (qi && param == CL_QUEUE_PROPERTIES_ARRAY) {
        if (size_ret)
            *size_ret = qi->props_size;
        if (value) {
            if (size < qi->props_size)
                return CL_INVALID_VALUE;
            memcpy(value, qi->props, qi->props_size);
        }
        return CL_SUCCESS;
    }
    cl_int rc = next->clGetCommandQueueInfo(q, param, size, value, size_ret);
    if (rc == CL_SUCCESS && qi && param == CL_QUEUE_PROPERTIES && value && !qi->app_profiling)
        *(cl_command_queue_properties *)value &= ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
    return rc;
}

static cl_int CL_API_CALL fikit_clReleaseCommandQueue(cl_command_queue q)
{
    cl_uint refs = 0;
    next->clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    cl_int rc = next->clReleaseCommandQueue(q);
    if (rc == CL_SUCCESS && refs == 1)
        fikit_ptrmap_remove(&queues, q); /* the handle may be reused */
    return rc;
}

static cl_int CL_API_CALL fikit_clGetEventProfilingInfo(cl_event ev, cl_profiling_info param,
                                                        size_t size, void *value, size_t *size_ret)
{
    cl_command_queue q = NULL;
    if (next->clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL) == CL_SUCCESS && q) {
        const struct queue_info *qi = fikit_ptrmap_get(&queues, q);
        if (qi && !qi->app_profiling)
            return CL_PROFILING_INFO_NOT_AVAILABLE;
    }
    return next->clGetEventProfilingInfo(ev, param, size, value, size_ret);
}

/* A kernel created is a new kernel, whatever address it got: the runtime
 * may give it that of one the program released while its launch was
 * pending (the runtime held it until then), whose cached name must not
 * carry over. */
static cl_kernel CL_API_CALL fikit_clCreateKernel(cl_program p, const char *name, cl_int *err)
{
    cl_kernel k = next->clCreateKernel(p, name, err);
    if (k)
        fikit_gate_forget_kernel(k);
    return k;
}

static cl_int CL_API_CALL fikit_clCreateKernelsInProgram(cl_program p, cl_uint n, cl_kernel *out, cl_uint *n_ret)
{
    cl_uint made = 0;
    cl_int rc = next->clCreateKernelsInProgram(p, n, out, &made);
    if (n_ret && rc == CL_SUCCESS)
        *n_ret = made;
    for (cl_uint i = 0; rc == CL_SUCCESS && out && i < n && i < made; i++)
        fikit_gate_forget_kernel(out[i]);
    return rc;
}

static cl_kernel CL_API_CALL fikit_clCloneKernel(cl_kernel src, cl_int *err)
{
    cl_kernel k = next->clCloneKernel(src, err);
    if (k)
        fikit_gate_forget_kernel(k);
    return k;
}

static cl_int CL_API_CALL fikit_clReleaseKernel(cl_kernel k)
{
    cl_uint refs = 0;
    next->clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, NULL);
    cl_int rc = next->clReleaseKernel(k);
    if (rc == CL_SUCCESS && refs == 1)
        fikit_gate_forget_kernel(k);
    return rc;
}

/* ----------------------------------------------------------- launches */

static uint32_t clamp32(size_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

/* A host function run by the device is named by its symbol, which is the
 * same in every run, unlike its address. The name is kept per function for
 * the life of the process: a timed launch's name is read later by the
 * learner thread, long after the enqueue returned. */
static struct fikit_ptrmap native_names = FIKIT_PTRMAP_INIT;

static const char *native_name(void (CL_CALLBACK *fn)(void *))
{
    void *sym = NULL;
    memcpy(&sym, &fn, sizeof sym);
    const char *cached = fikit_ptrmap_get(&native_names, sym);
    if (cached)
        return cached;
    char buf[160];
    Dl_info info = {0};
    if (!dladdr(sym, &info))
        snprintf(buf, sizeof buf, "native:unknown");
    else if (info.dli_sname)
        snprintf(buf, sizeof buf, "native:%s", info.dli_sname);
    else /* a static function: its offset in its object is stable */
        snprintf(buf, sizeof buf, "native:%s+%#lx", info.dli_fname ? info.dli_fname : "?",
                 (unsigned long)((char *)sym - (char *)info.dli_fbase));
    char *name = strdup(buf);
    if (!name)
        return "native";
    /* With the cache full the name is still kept: it is never freed. */
    (void)fikit_ptrmap_put(&native_names, sym, name);
    return name;
}

/* Describes an enqueue into x and enters the gate; false if the queue is
 * unknown to the driver (the real call then reports the error). native: the
 * host function of a native kernel, which names the launch. */
static bool begin(struct fikit_launch *x, cl_command_queue q, void *kernel, cl_uint dim,
                  const size_t *gws, const size_t *lws, void(CL_CALLBACK *native)(void *))
{
    fikit_launch_start(x);
    struct fikit_launch_desc *l = &x->desc;
    memset(l, 0, sizeof *l);
    const struct queue_info *qi = queue_of(q);
    if (!qi)
        return false;
    l->backend = FIKIT_BACKEND_OPENCL;
    l->device = qi->device;
    l->kernel = kernel;
    l->stream = q;
    for (cl_uint i = 0; i < 3; i++) {
        l->grid[i] = i < dim && gws ? clamp32(gws[i]) : 1;
        l->block[i] = i < dim && lws ? clamp32(lws[i]) : 0;
    }
    if (native)
        l->name = native_name(native);
    fikit_launch_begin(x, &fikit_opencl_ops);
    return true;
}

/* The event the enqueue is to produce: the program's, or one of fikit's
 * own when the launch is timed and the program asked for none. */
static cl_event *event_for(struct fikit_launch *x, cl_event *event, cl_event *own)
{
    return event || !x->gate.marker_ok ? event : own;
}

/* After the enqueue: a timed launch's event is the marker; the program's
 * own event is retained for as long as fikit reads it. */
static cl_int end(struct fikit_launch *x, cl_int rc, cl_event *event, cl_event *evp)
{
    fikit_launch_returned(x);
    if (rc == CL_SUCCESS && x->gate.marker_ok) {
        x->desc.launch_event = *evp;
        if (evp == event)
            next->clRetainEvent(*evp);
    }
    fikit_launch_end(x, rc == CL_SUCCESS);
    return rc;
}

static cl_int CL_API_CALL fikit_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                                                       const size_t *off, const size_t *gws,
                                                       const size_t *lws, cl_uint nwait,
                                                       const cl_event *wait, cl_event *event)
{
    struct fikit_launch x;
    if (!begin(&x, q, k, dim, gws, lws, NULL))
        return next->clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nwait, wait, event);
    cl_event own = NULL, *evp = event_for(&x, event, &own);
    return end(&x, next->clEnqueueNDRangeKernel(q, k, dim, off, gws, lws, nwait, wait, evp), event, evp);
}

static cl_int CL_API_CALL fikit_clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nwait,
                                              const cl_event *wait, cl_event *event)
{
    struct fikit_launch x;
    size_t one = 1;
    if (!begin(&x, q, k, 1, &one, &one, NULL))
        return next->clEnqueueTask(q, k, nwait, wait, event);
    cl_event own = NULL, *evp = event_for(&x, event, &own);
    return end(&x, next->clEnqueueTask(q, k, nwait, wait, evp), event, evp);
}

static cl_int CL_API_CALL fikit_clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK *fn)(void *),
                                                      void *args, size_t cb_args, cl_uint nmem,
                                                      const cl_mem *mems, const void **locs,
                                                      cl_uint nwait, const cl_event *wait,
                                                      cl_event *event)
{
    struct fikit_launch x;
    size_t one = 1;
    if (!begin(&x, q, NULL, 1, &one, &one, fn))
        return next->clEnqueueNativeKernel(q, fn, args, cb_args, nmem, mems, locs, nwait, wait, event);
    cl_event own = NULL, *evp = event_for(&x, event, &own);
    return end(&x, next->clEnqueueNativeKernel(q, fn, args, cb_args, nmem, mems, locs, nwait, wait, evp),
               event, evp);
}

/* ------------------------------------------------------ layer entry */

/* OpenCL as the interposer sees it: it enters through the layer entry
 * points below, which the loader finds itself, so nothing is hooked. */
FIKIT_BACKEND_DEFINE(opencl, .ops = &fikit_opencl_ops, .hooks = NULL, .symbol_starts = "", .libraries = NULL)

CL_API_ENTRY cl_int CL_API_CALL clGetLayerInfo(cl_layer_info param, size_t size, void *value,
                                               size_t *size_ret)
{
    switch (param) {
    case CL_LAYER_API_VERSION: {
        cl_layer_api_version v = CL_LAYER_API_VERSION_100;
        if (size_ret)
            *size_ret = sizeof v;
        if (value) {
            if (size < sizeof v)
                return CL_INVALID_VALUE;
            memcpy(value, &v, sizeof v);
        }
        return CL_SUCCESS;
    }
    case CL_LAYER_NAME: {
        static const char name[] = "fikit: priority scheduling of kernels (FIKIT)";
        if (size_ret)
            *size_ret = sizeof name;
        if (value) {
            if (size < sizeof name)
                return CL_INVALID_VALUE;
            memcpy(value, name, sizeof name);
        }
        return CL_SUCCESS;
    }
    default:
        return CL_INVALID_VALUE;
    }
}

/* The waits by which a program learns its work is done: each ends the
 * task's open burst when nothing was launched while it waited
 * (interpose/burst.h). Polling an event's status is not one. */
static cl_int CL_API_CALL fikit_clFinish(cl_command_queue q)
{
    FIKIT_BURST_WAIT(cl_int, CL_SUCCESS, next->clFinish(q));
}

static cl_int CL_API_CALL fikit_clWaitForEvents(cl_uint n, const cl_event *events)
{
    FIKIT_BURST_WAIT(cl_int, CL_SUCCESS, next->clWaitForEvents(n, events));
}

static cl_int CL_API_CALL fikit_clEnqueueReadBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking, size_t off,
                                                    size_t size, void *ptr, cl_uint nwait, const cl_event *wait,
                                                    cl_event *event)
{
    if (!blocking)
        return next->clEnqueueReadBuffer(q, buf, blocking, off, size, ptr, nwait, wait, event);
    FIKIT_BURST_WAIT(cl_int, CL_SUCCESS,
                     next->clEnqueueReadBuffer(q, buf, blocking, off, size, ptr, nwait, wait, event));
}

CL_API_ENTRY cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch *target,
                                            cl_uint *num_entries_ret,
                                            const cl_icd_dispatch **layer_ret)
{
    const cl_uint ours = sizeof(struct _cl_icd_dispatch) / sizeof(void *);
    if (!target || !num_entries_ret || !layer_ret)
        return CL_INVALID_VALUE;
    /* A loader with a shorter table: keep only what it has. */
    memset(&layer, 0, sizeof layer);
    memcpy(&layer, target, (num_entries < ours ? num_entries : ours) * sizeof(void *));
    next = target;
    fikit_opencl_set_target(target);
    if (!fikit_client_wants(FIKIT_BACKEND_OPENCL)) {
        *num_entries_ret = num_entries < ours ? num_entries : ours;
        *layer_ret = &layer; /* a transparent layer */
        return CL_SUCCESS;
    }
    add_profiling = fikit_client_learns() ? CL_QUEUE_PROFILING_ENABLE : 0;
    layer.clCreateCommandQueue = fikit_clCreateCommandQueue;
    layer.clCreateCommandQueueWithProperties = fikit_clCreateCommandQueueWithProperties;
    layer.clGetCommandQueueInfo = fikit_clGetCommandQueueInfo;
    layer.clReleaseCommandQueue = fikit_clReleaseCommandQueue;
    layer.clGetEventProfilingInfo = fikit_clGetEventProfilingInfo;
    layer.clReleaseKernel = fikit_clReleaseKernel;
    layer.clCreateKernel = fikit_clCreateKernel;
    layer.clCreateKernelsInProgram = fikit_clCreateKernelsInProgram;
    if (layer.clCloneKernel) /* OpenCL 2.1: a shorter table has none */
        layer.clCloneKernel = fikit_clCloneKernel;
    layer.clEnqueueNDRangeKernel = fikit_clEnqueueNDRangeKernel;
    layer.clEnqueueTask = fikit_clEnqueueTask;
    layer.clEnqueueNativeKernel = fikit_clEnqueueNativeKernel;
    layer.clFinish = fikit_clFinish;
    layer.clWaitForEvents = fikit_clWaitForEvents;
    layer.clEnqueueReadBuffer = fikit_clEnqueueReadBuffer;
    *num_entries_ret = num_entries < ours ? num_entries : ours;
    *layer_ret = &layer;
    fikit_debug("OpenCL layer active (%u dispatch entries)", *num_entries_ret);
    return CL_SUCCESS;
}
