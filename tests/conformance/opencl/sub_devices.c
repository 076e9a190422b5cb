/* Sub-devices (clCreateSubDevices, partitioned equally), where the device
 * can be partitioned: a context of two sub-devices, a queue on each,
 * launches on both, one ordered after the other by a wait list. fikit
 * schedules a sub-device's launches on its parent's scheduler. */
#include "common.h"

enum { N = 256, ROUNDS = 8 };

int main(int argc, char **argv)
{
    struct conf c;
    conf_pick(argc, argv, &c);
    cl_uint max_sub = 0, units = 0;
    CL(clGetDeviceInfo(c.device, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof max_sub, &max_sub, NULL));
    CL(clGetDeviceInfo(c.device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
    cl_device_partition_property types[8] = {0};
    size_t tsize = 0;
    CL(clGetDeviceInfo(c.device, CL_DEVICE_PARTITION_PROPERTIES, sizeof types, types, &tsize));
    bool equally = false;
    for (size_t i = 0; i < tsize / sizeof *types; i++)
        equally = equally || types[i] == CL_DEVICE_PARTITION_EQUALLY;
    if (max_sub < 2 || units < 2 || !equally)
        conf_skip("the device cannot be partitioned equally in two (max sub-devices %u, compute units %u)",
                  max_sub, units);
    cl_device_partition_property eq[] = {CL_DEVICE_PARTITION_EQUALLY, (cl_device_partition_property)(units / 2), 0};
    cl_device_id sub[64];
    cl_uint got = 0;
    cl_int err = clCreateSubDevices(c.device, eq, 64, sub, &got);
    if (err != CL_SUCCESS || got < 2)
        conf_skip("clCreateSubDevices(equally, %u) gave %d, %u sub-devices", units / 2, err, got);
    cl_device_id parent = NULL;
    CL(clGetDeviceInfo(sub[0], CL_DEVICE_PARENT_DEVICE, sizeof parent, &parent, NULL));
    CHECK(parent == c.device, "a sub-device names its parent");
    cl_context ctx = clCreateContext(NULL, 2, sub, NULL, NULL, &err);
    CLERR(err);
    cl_command_queue q[2];
    for (int d = 0; d < 2; d++) {
        q[d] = clCreateCommandQueue(ctx, sub[d], 0, &err);
        CLERR(err);
    }
    cl_program p = conf_build_for(ctx, 2, sub, CONF_SRC_STEPS);
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
    CHECK(conf_read_check(q[0], buf, want, N, "sub-devices"),
          "%d kernels alternating between two sub-devices ran in the order of their wait lists", ROUNDS);
    conf_release("mkkpqqc", buf, add1, twice, p, q[0], q[1], ctx);
    CL(clReleaseDevice(sub[0]));
    CL(clReleaseDevice(sub[1]));
    for (cl_uint i = 2; i < got; i++)
        CL(clReleaseDevice(sub[i]));
    return conf_finish(true);
}
