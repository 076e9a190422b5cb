// Path: the runtime's <<<>>> launch and hipLaunchKernelGGL (hipLaunchKernel underneath).
#include "common.h"
int main()
{
    Vectors v(1 << 16);
    const int L = 100;
    for (int i = 0; i < L; i++)
        conf_axpy<<<(v.n + 255) / 256, 256>>>(0.5f, v.dx, v.dy, v.n);
    for (int i = 0; i < L; i++)
        hipLaunchKernelGGL(conf_axpy, dim3((v.n + 255) / 256), dim3(256), 0, 0, 0.5f, v.dx, v.dy, v.n);
    CK(hipGetLastError());
    CK(hipDeviceSynchronize());
    v.expect_axpy(0.5f, 2 * L);
    return finish(v.check(), 2 * L);
}
