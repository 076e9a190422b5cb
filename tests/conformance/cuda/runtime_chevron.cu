// Path: the runtime's <<<>>> launch.
#include "common.h"
int main()
{
    Vectors v(1 << 16);
    const int L = 200;
    for (int i = 0; i < L; i++)
        conf_axpy<<<(v.n + 255) / 256, 256>>>(0.5f, v.dx, v.dy, v.n);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    v.expect_axpy(0.5f, L);
    return finish(v.check(), L);
}
