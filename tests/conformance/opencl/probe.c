/* Not a case: names the platform and device the suite runs on, or says why
 * there is none (exit 77). */
#include "common.h"

int main(int argc, char **argv)
{
    struct conf c;
    conf_pick(argc, argv, &c);
    char pname[256] = "", pver[256] = "", dname[256] = "", dver[256] = "", drv[256] = "";
    cl_device_type type = 0;
    CL(clGetPlatformInfo(c.platform, CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL));
    CL(clGetPlatformInfo(c.platform, CL_PLATFORM_VERSION, sizeof pver - 1, pver, NULL));
    CL(clGetDeviceInfo(c.device, CL_DEVICE_NAME, sizeof dname - 1, dname, NULL));
    CL(clGetDeviceInfo(c.device, CL_DEVICE_VERSION, sizeof dver - 1, dver, NULL));
    CL(clGetDeviceInfo(c.device, CL_DRIVER_VERSION, sizeof drv - 1, drv, NULL));
    CL(clGetDeviceInfo(c.device, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    printf("platform %u: %s (%s); device %u: %s, %s, %s, driver %s\n", c.platform_index, pname, pver,
           c.device_index, dname, type & CL_DEVICE_TYPE_GPU ? "GPU" : type & CL_DEVICE_TYPE_CPU ? "CPU" : "other",
           dver, drv);
    return 0;
}
