// Path: the program dlopens libcuda itself and dlsyms cuLaunchKernel (as Triton and PyTorch do).
#include "common.h"
#include <dlfcn.h>
typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
int main()
{
    Vectors v(1 << 16);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    launch_t launch = (launch_t)dlsym(lib, "cuLaunchKernel");
    cudaFunction_t rf;
    CK(cudaGetFuncBySymbol(&rf, (const void *)conf_axpy));
    float a = 3.0f;
    void *args[] = {&a, &v.dx, &v.dy, &v.n};
    const int L = 100;
    for (int i = 0; i < L; i++)
        if (launch((CUfunction)rf, (v.n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr) !=
            CUDA_SUCCESS)
            return 1;
    CK(cudaDeviceSynchronize());
    v.expect_axpy(3.0f, L);
    return finish(v.check(), L);
}
