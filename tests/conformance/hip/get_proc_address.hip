// Path: the program asks the runtime for hipLaunchKernel itself: hipGetProcAddress,
// legacy and per-thread (ROCm 6.1 and later; the suite skips it where the headers lack it).
#include "common.h"
typedef hipError_t (*launch_t)(const void *, dim3, dim3, void **, size_t, hipStream_t);
int main()
{
    Vectors v(1 << 16);
    void *p1 = nullptr, *p2 = nullptr;
    hipDriverProcAddressQueryResult st;
    int version = HIP_VERSION_MAJOR * 100 + HIP_VERSION_MINOR;
    CK(hipGetProcAddress("hipLaunchKernel", &p1, version, HIP_GET_PROC_ADDRESS_DEFAULT, &st));
    CK(hipGetProcAddress("hipLaunchKernel", &p2, version, HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                         &st));
    float a = 0.75f;
    void *args[] = {&a, &v.dx, &v.dy, &v.n};
    const int L = 40;
    for (void *p : {p1, p2}) {
        for (int i = 0; i < L; i++)
            CK(((launch_t)p)((const void *)conf_axpy, dim3((v.n + 255) / 256), dim3(256), args, 0,
                             nullptr));
        CK(hipDeviceSynchronize());
    }
    v.expect_axpy(0.75f, 2 * L);
    return finish(v.check(), 2 * L);
}
