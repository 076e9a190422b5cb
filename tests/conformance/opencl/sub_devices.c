/* Sub-devices (clCreateSubDevices, partitioned equally), where the device
 * can be partitioned: a context of two sub-devices, a queue on each,
 * launches on both, one ordered after the other by a wait list. fikit
 * schedules a sub-device's launches on its parent's scheduler. */
#include "common.h"

enum { ROUNDS = 8 };

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
    conf_alternate(sub, ROUNDS, "two sub-devices");
    CL(clReleaseDevice(sub[0]));
    CL(clReleaseDevice(sub[1]));
    for (cl_uint i = 2; i < got; i++)
        CL(clReleaseDevice(sub[i]));
    return conf_finish(true);
}
