// Path: the module API: a code object loaded at run time, hipModuleGetFunction,
// hipModuleLaunchKernel, and hipExtModuleLaunchKernel (its grid in work-items).
#include "common.h"
#include <hip/hip_ext.h>
static const char *co_path(int argc, char **argv) { return argc > 1 ? argv[1] : "module_kernel.co"; }
int main(int argc, char **argv)
{
    CK(hipInit(0));
    CK(hipSetDevice(0));
    hipModule_t mod;
    hipFunction_t fn;
    CK(hipModuleLoad(&mod, co_path(argc, argv)));
    CK(hipModuleGetFunction(&fn, mod, "module_scale"));
    const int N = 1 << 16, L = 50;
    std::vector<float> h(N, 1.0f);
    float *d;
    CK(hipMalloc(&d, N * sizeof(float)));
    CK(hipMemcpy(d, h.data(), N * sizeof(float), hipMemcpyHostToDevice));
    float s = 1.01f;
    int count = N;
    void *args[] = {&d, &s, &count};
    for (int i = 0; i < L; i++)
        CK(hipModuleLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    // hipExtModuleLaunchKernel takes its arguments packed in `extra` only.
    struct {
        float *x;
        float s;
        int n;
    } packed = {d, s, count};
    size_t size = sizeof packed;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     HIP_LAUNCH_PARAM_END};
    for (int i = 0; i < L; i++)
        CK(hipExtModuleLaunchKernel(fn, N, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra));
    CK(hipDeviceSynchronize());
    CK(hipMemcpy(h.data(), d, N * sizeof(float), hipMemcpyDeviceToHost));
    float want = std::pow(1.01f, (float)(2 * L));
    bool ok = true;
    for (int i = 0; i < N; i++)
        ok &= std::fabs(h[i] - want) < 1e-3f * want;
    CK(hipFree(d));
    CK(hipModuleUnload(mod));
    return finish(ok, 2 * L);
}
