// Path: the program asks the driver for cuLaunchKernel itself: cuGetProcAddress and
// cudaGetDriverEntryPointByVersion, legacy and per-thread.
#include "common.h"
typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
int main()
{
    Vectors v(1 << 16);
    cudaFunction_t rf;
    CK(cudaGetFuncBySymbol(&rf, (const void *)conf_axpy));
    void *p1 = nullptr, *p2 = nullptr, *p3 = nullptr;
    CUdriverProcAddressQueryResult st;
    CU(cuGetProcAddress("cuLaunchKernel", &p1, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
    CU(cuGetProcAddress("cuLaunchKernel", &p2, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    cudaDriverEntryPointQueryResult q;
    CK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &p3, 12000, cudaEnableDefault, &q));
    float a = 0.75f;
    void *args[] = {&a, &v.dx, &v.dy, &v.n};
    const int L = 40;
    for (void *p : {p1, p2, p3})
        for (int i = 0; i < L; i++)
            if (((launch_t)p)((CUfunction)rf, (v.n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args,
                              nullptr) != CUDA_SUCCESS)
                return 1;
    CK(cudaDeviceSynchronize());
    v.expect_axpy(0.75f, 3 * L);
    return finish(v.check(), 3 * L);
}
