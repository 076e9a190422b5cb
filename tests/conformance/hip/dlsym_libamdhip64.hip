// Path: the program dlopens libamdhip64 itself and dlsyms hipLaunchKernel and
// hipModuleLaunchKernel (as PyTorch and Triton do with their runtimes).
#include "common.h"
#include <dlfcn.h>
typedef hipError_t (*launch_t)(const void *, dim3, dim3, void **, size_t, hipStream_t);
int main()
{
    Vectors v(1 << 16);
    void *lib = nullptr;
    for (const char *name : {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"})
        if (!lib)
            lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen libamdhip64: %s\n", dlerror());
        return 1;
    }
    launch_t launch = (launch_t)dlsym(lib, "hipLaunchKernel");
    if (!launch) {
        fprintf(stderr, "dlsym hipLaunchKernel: %s\n", dlerror());
        return 1;
    }
    float a = 3.0f;
    void *args[] = {&a, &v.dx, &v.dy, &v.n};
    const int L = 100;
    for (int i = 0; i < L; i++)
        CK(launch((const void *)conf_axpy, dim3((v.n + 255) / 256), dim3(256), args, 0, nullptr));
    CK(hipDeviceSynchronize());
    v.expect_axpy(3.0f, L);
    return finish(v.check(), L);
}
