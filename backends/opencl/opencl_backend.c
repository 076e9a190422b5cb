#include "backends/opencl/opencl_backend.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct _cl_icd_dispatch *next;

void fikit_opencl_set_target(const struct _cl_icd_dispatch *target) { next = target; }

const struct _cl_icd_dispatch *fikit_opencl_target(void) { return next; }

static int kernel_name(const struct fikit_launch_desc *l, char *buf, size_t len)
{
    size_t got = 0;
    if (next->clGetKernelInfo((cl_kernel)l->kernel, CL_KERNEL_FUNCTION_NAME, len, buf, &got) !=
        CL_SUCCESS)
        return -EINVAL;
    buf[len - 1] = '\0';
    return 0;
}

static int device_identity(const struct fikit_launch_desc *l, char *key, size_t keylen,
                           char *model, size_t modellen)
{
    cl_device_id dev = (cl_device_id)l->device, parent = NULL;
    /* A sub-device shares its parent's scheduler. */
    while (next->clGetDeviceInfo(dev, CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL) ==
               CL_SUCCESS && parent)
        dev = parent;
    cl_platform_id platform;
    char pname[128] = "", dname[128] = "";
    if (next->clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) != CL_SUCCESS ||
        next->clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL) != CL_SUCCESS)
        return -EINVAL;
    next->clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    pname[sizeof pname - 1] = dname[sizeof dname - 1] = '\0';
    /* The device's position in its platform is what two processes agree on. */
    cl_device_id ids[64];
    cl_uint n = 0;
    int index = 0;
    if (next->clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 64, ids, &n) == CL_SUCCESS)
        for (cl_uint i = 0; i < n && i < 64; i++)
            if (ids[i] == dev)
                index = (int)i;
    snprintf(key, keylen, "opencl:%s/%d:%s", pname, index, dname);
    snprintf(model, modellen, "%s", dname);
    return 0;
}

static bool device_on_host(const struct fikit_launch_desc *l)
{
    cl_device_type type = 0;
    return next->clGetDeviceInfo((cl_device_id)l->device, CL_DEVICE_TYPE, sizeof type, &type, NULL) ==
               CL_SUCCESS &&
           (type & CL_DEVICE_TYPE_CPU);
}

static int marker_begin(const struct fikit_launch_desc *l, struct fikit_marker *m)
{
    (void)l;
    memset(m, 0, sizeof *m);
    return 0; /* the launch's own event is the marker */
}

static int marker_end(const struct fikit_launch_desc *l, struct fikit_marker *m)
{
    if (!l->launch_event)
        return -EINVAL;
    m->a = l->launch_event; /* a reference the layer took for us */
    return 0;
}

static int read_times(cl_event ev, cl_ulong *start, cl_ulong *end)
{
    cl_int status;
    if (next->clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL) !=
        CL_SUCCESS || status < 0)
        return -EIO;
    if (status != CL_COMPLETE)
        return -EAGAIN;
    if (next->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof *start, start, NULL) !=
            CL_SUCCESS ||
        next->clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof *end, end, NULL) != CL_SUCCESS)
        return -ENOTSUP;
    return 0;
}

static int marker_duration(struct fikit_marker *m, uint64_t *ns)
{
    cl_ulong s, e;
    int rc = read_times((cl_event)m->a, &s, &e);
    if (rc)
        return rc;
    *ns = e > s ? e - s : 0;
    return 0;
}

static int marker_gap(struct fikit_marker *prev, struct fikit_marker *nxt, int64_t *ns)
{
    cl_ulong ps, pe, ns_, ne;
    int rc = read_times((cl_event)prev->a, &ps, &pe);
    if (!rc)
        rc = read_times((cl_event)nxt->a, &ns_, &ne);
    if (rc)
        return rc;
    *ns = (int64_t)ns_ - (int64_t)pe;
    return 0;
}

static void marker_release(struct fikit_marker *m)
{
    if (m->a)
        next->clReleaseEvent((cl_event)m->a);
    m->a = NULL;
}

const struct fikit_backend_ops fikit_opencl_ops = {
    .kind = FIKIT_BACKEND_OPENCL,
    .name = "opencl",
    .kernel_name = kernel_name,
    .device_identity = device_identity,
    .device_on_host = device_on_host,
    .marker_begin = marker_begin,
    .marker_end = marker_end,
    .marker_duration = marker_duration,
    .marker_gap = marker_gap,
    .marker_release = marker_release,
};
