// Path: hipExtLaunchKernel (with the program's own events) and
// hipExtLaunchMultiKernelMultiDevice (on one device).
#include "common.h"
#include <hip/hip_ext.h>
int main()
{
    Vectors v(1 << 16);
    const int L = 50;
    float a = 1.5f;
    void *args[] = {&a, &v.dx, &v.dy, &v.n};
    hipEvent_t start, stop;
    CK(hipEventCreate(&start));
    CK(hipEventCreate(&stop));
    for (int i = 0; i < L; i++)
        CK(hipExtLaunchKernel((const void *)conf_axpy, dim3((v.n + 255) / 256), dim3(256), args, 0, 0,
                              start, stop, 0));
    hipStream_t s;
    CK(hipStreamCreate(&s));
    hipLaunchParams p = {};
    p.func = (void *)conf_axpy;
    p.gridDim = dim3((v.n + 255) / 256);
    p.blockDim = dim3(256);
    p.args = args;
    p.sharedMem = 0;
    p.stream = s;
    CK(hipDeviceSynchronize());
    for (int i = 0; i < L; i++)
        CK(hipExtLaunchMultiKernelMultiDevice(&p, 1, 0));
    CK(hipDeviceSynchronize());
    float ms = 0;
    CK(hipEventElapsedTime(&ms, start, stop));
    v.expect_axpy(1.5f, 2 * L);
    return finish(v.check(), 2 * L);
}
