/* The switch-cost probe on OpenCL (see calibrate_probe.h). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "bench/calibrate_probe.h"

static cl_command_queue q;
static cl_kernel k;

static int probe_open(char *name, size_t len)
{
    static const char *src = "__kernel void tiny(__global int *x) { x[get_global_id(0)] += 1; }";
    cl_platform_id p;
    cl_device_id d;
    cl_int e;
    if (clGetPlatformIDs(1, &p, NULL) || clGetDeviceIDs(p, CL_DEVICE_TYPE_DEFAULT, 1, &d, NULL))
        return 1;
    clGetDeviceInfo(d, CL_DEVICE_NAME, len, name, NULL);
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    q = clCreateCommandQueue(ctx, d, 0, &e);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    if (clBuildProgram(prog, 1, &d, "", NULL, NULL))
        return 1;
    k = clCreateKernel(prog, "tiny", &e);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &e);
    clSetKernelArg(k, 0, sizeof m, &m);
    return e != CL_SUCCESS;
}

static int probe_tiny_kernel(void)
{
    size_t n = 64;
    return clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL) || clFinish(q);
}

int main(int argc, char **argv) { return probe_main(argc, argv); }
