/* Two devices of one platform in one context: a queue on each, one program
 * built for both, launches on both interleaved, a wait list from one
 * device's kernel to the other's. Skipped where the platform has one
 * device. (--device names the first; the second is the next one.) */
#include "common.h"

enum { ROUNDS = 8 };

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
    conf_alternate(two, ROUNDS, "two devices");
    return conf_finish(true);
}
