// Path: hipLaunchKernel with a function pointer.
#include "common.h"
int main()
{
    Vectors v(1 << 16);
    const int L = 100;
    float a = 2.0f;
    void *args[] = {&a, &v.dx, &v.dy, &v.n};
    for (int i = 0; i < L; i++)
        CK(hipLaunchKernel((const void *)conf_axpy, dim3((v.n + 255) / 256), dim3(256), args, 0, 0));
    CK(hipDeviceSynchronize());
    v.expect_axpy(2.0f, L);
    return finish(v.check(), L);
}
