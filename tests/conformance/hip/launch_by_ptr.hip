// Path: the legacy launch: hipConfigureCall, hipSetupArgument, hipLaunchByPtr.
#include "common.h"
#include <cstddef>
int main()
{
    Vectors v(1 << 16);
    const int L = 50;
    float a = 0.25f;
    // The kernel's arguments at their offsets: float, pointer, pointer, int.
    struct Args {
        float a;
        const float *x;
        float *y;
        int n;
    };
    for (int i = 0; i < L; i++) {
        CK(hipConfigureCall(dim3((v.n + 255) / 256), dim3(256), 0, 0));
        CK(hipSetupArgument(&a, sizeof a, offsetof(Args, a)));
        CK(hipSetupArgument(&v.dx, sizeof v.dx, offsetof(Args, x)));
        CK(hipSetupArgument(&v.dy, sizeof v.dy, offsetof(Args, y)));
        CK(hipSetupArgument(&v.n, sizeof v.n, offsetof(Args, n)));
        CK(hipLaunchByPtr((const void *)conf_axpy));
    }
    CK(hipDeviceSynchronize());
    v.expect_axpy(0.25f, L);
    return finish(v.check(), L);
}
