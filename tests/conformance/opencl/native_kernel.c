/* clEnqueueNativeKernel, where the device runs host functions: the
 * function receives its buffer through the memory list, and runs in order
 * with NDRange kernels on the same queue. */
#include "common.h"

enum { N = 256 };

struct native_args {
    int *data; /* replaced by the runtime with the buffer's host address */
    int add;
};

/* Not static: fikit names a native kernel by its symbol where it has one. */
void conf_native_add(void *p);
void conf_native_add(void *p)
{
    struct native_args *a = p;
    for (int i = 0; i < N; i++)
        a->data[i] += a->add;
}

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    cl_device_exec_capabilities caps = 0;
    CL(clGetDeviceInfo(c.device, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof caps, &caps, NULL));
    if (!(caps & CL_EXEC_NATIVE_KERNEL))
        conf_skip("the device does not run native kernels (CL_EXEC_NATIVE_KERNEL)");
    cl_program p = conf_build(&c, CONF_SRC_STEPS);
    cl_kernel twice = conf_kernel(p, "twice");
    int want[N];
    for (int i = 0; i < N; i++)
        want[i] = i;
    cl_mem buf = conf_buffer(c.ctx, sizeof want, want);
    conf_arg_mem(twice, 0, buf);
    for (int r = 0; r < 8; r++) {
        struct native_args a = {NULL, r + 1};
        const void *loc = &a.data;
        cl_event ev;
        CL(clEnqueueNativeKernel(c.queue, conf_native_add, &a, sizeof a, 1, &buf, &loc, 0, NULL,
                                 r % 2 ? &ev : NULL));
        conf_count("native:*", 1);
        if (r % 2) {
            cl_command_type t;
            CL(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof t, &t, NULL));
            CHECK(t == CL_COMMAND_NATIVE_KERNEL, "native kernel %d: its event is CL_COMMAND_NATIVE_KERNEL", r);
            CL(clReleaseEvent(ev));
        }
        conf_ndrange1(c.queue, twice, "twice", N, 0, NULL, NULL);
        for (int i = 0; i < N; i++)
            want[i] = (want[i] + r + 1) * 2;
    }
    CHECK(conf_read_check(c.queue, buf, want, N, "native"),
          "8 native kernels and 8 NDRanges ran in order with the right arguments");
    conf_release("mkp", buf, twice, p);
    conf_close(&c);
    return conf_finish(true);
}
