/* Two devices of one platform in one context: a queue on each, one program
 * built for both, launches on both interleaved, a wait list from one
 * device's kernel to the other's. Skipped where the platform has one
 * device. (--device names the first; the second is the next one.) */
#include "common.h"

enum { N = 256, ROUNDS = 8 };

int main(int argc, char **argv)
{
    struct conf c;
    conf_pick(argc, argv, &c);
    cl_device_id devs[64];
    cl_uint nd = 0;
    CL(clGetDeviceIDs(c.platform, CL_DEVICE_TYPE_ALL, 64, devs, &nd));
    if (nd < 2)
        conf_skip("platform %u has %u device", c.platform_index, nd);
    cl_device_id two[2] = {c.device, devs[(c.device_index + 1) % nd]};
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 2, two, NULL, NULL, &err);
    CLERR(err);
    cl_command_queue q[2];
    for (int d = 0; d < 2; d++) {
        q[d] = clCreateCommandQueue(ctx, two[d], 0, &err);
        CLERR(err);
    }
    cl_program p = conf_build_for(ctx, 2, two, CONF_SRC_STEPS);
    cl_kernel add1 = conf_kernel(p, "add1"), twice = conf_kernel(p, "twice");
    int init[N], want[N];
    for (int i = 0; i < N; i++)
        init[i] = want[i] = i % 13;
    cl_mem buf = conf_buffer(ctx, sizeof init, init);
    conf_arg_mem(add1, 0, buf);
    conf_arg_mem(twice, 0, buf);
    cl_event prev = NULL;
    for (int r = 0; r < ROUNDS; r++) {
        cl_event ev;
        bool add = r % 3 != 1;
        conf_ndrange1(q[r % 2], add ? add1 : twice, add ? "add1" : "twice", N, prev ? 1 : 0, prev ? &prev : NULL, &ev);
        CL(clFlush(q[r % 2]));
        if (prev)
            CL(clReleaseEvent(prev));
        prev = ev;
        for (int i = 0; i < N; i++)
            want[i] = add ? want[i] + 1 : want[i] * 2;
    }
    CL(clWaitForEvents(1, &prev));
    CL(clReleaseEvent(prev));
    CHECK(conf_read_check(q[0], buf, want, N, "two devices"),
          "%d kernels alternating between two devices ran in the order of their wait lists", ROUNDS);
    conf_release("mkkpqqc", buf, add1, twice, p, q[0], q[1], ctx);
    return conf_finish(true);
}
