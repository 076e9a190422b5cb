/* clCloneKernel (OpenCL 2.1): a clone keeps the original's arguments and
 * name, is launched beside it with one argument changed, and outlives the
 * original. Skipped where the device is older than 2.1 or the call is not
 * supported. */
#include "common.h"

enum { N = 128 };

static const char *src = "__kernel void scaled_add(__global int *x, int k) { x[get_global_id(0)] += k; }\n";

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    if (conf_device_version(c.device) < 21)
        conf_skip("the device is OpenCL %d.%d; clCloneKernel needs 2.1", conf_device_version(c.device) / 10,
                  conf_device_version(c.device) % 10);
    cl_program p = conf_build(&c, src);
    cl_kernel k = conf_kernel(p, "scaled_add");
    int zero[N] = {0}, want[N];
    cl_mem a = conf_buffer(c.ctx, sizeof zero, zero), b = conf_buffer(c.ctx, sizeof zero, zero);
    int one = 1, ten = 10;
    conf_arg_mem(k, 0, a);
    CL(clSetKernelArg(k, 1, sizeof one, &one));
    cl_int err;
    cl_kernel clone = clCloneKernel(k, &err);
    if (err == CL_INVALID_OPERATION || !clone)
        conf_skip("clCloneKernel is not supported here (%d)", err);
    CLERR(err);
    char name[64] = "";
    CL(clGetKernelInfo(clone, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL));
    CHECK(!strcmp(name, "scaled_add"), "the clone has the original's name (%s)", name);
    /* The clone keeps buffer a and k = 1 until told otherwise. */
    conf_ndrange1(c.queue, clone, "scaled_add", N, 0, NULL, NULL);
    CL(clSetKernelArg(clone, 1, sizeof ten, &ten));
    conf_arg_mem(clone, 0, b);
    for (int r = 0; r < 5; r++) {
        conf_ndrange1(c.queue, k, "scaled_add", N, 0, NULL, NULL);
        conf_ndrange1(c.queue, clone, "scaled_add", N, 0, NULL, NULL);
    }
    CL(clReleaseKernel(k));
    conf_ndrange1(c.queue, clone, "scaled_add", N, 0, NULL, NULL);
    for (int i = 0; i < N; i++)
        want[i] = 1 + 5;
    CHECK(conf_read_check(c.queue, a, want, N, "original"), "the original and the clone's first launch wrote a");
    for (int i = 0; i < N; i++)
        want[i] = 60;
    CHECK(conf_read_check(c.queue, b, want, N, "clone"), "the clone with its own arguments wrote b, also after the original was released");
    conf_release("kmmp", clone, a, b, p);
    conf_close(&c);
    return conf_finish(true);
}
