// Path: the driver API: a module loaded from PTX text, cuModuleGetFunction, cuLaunchKernel.
#include "common.h"
#include <cstring>
static const char *ptx_path(int argc, char **argv) { return argc > 1 ? argv[1] : "driver_kernel.ptx"; }
int main(int argc, char **argv)
{
    CU(cuInit(0));
    CUdevice dev;
    CUcontext ctx;
    CU(cuDeviceGet(&dev, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));
    FILE *f = fopen(ptx_path(argc, argv), "rb");
    if (!f) {
        perror(ptx_path(argc, argv));
        return 1;
    }
    std::vector<char> ptx(1 << 20);
    size_t n = fread(ptx.data(), 1, ptx.size() - 1, f);
    ptx[n] = 0;
    fclose(f);
    CUmodule mod;
    CUfunction fn;
    CU(cuModuleLoadData(&mod, ptx.data()));
    CU(cuModuleGetFunction(&fn, mod, "driver_scale"));
    const int N = 1 << 16, L = 100;
    std::vector<float> h(N, 1.0f);
    CUdeviceptr d;
    CU(cuMemAlloc(&d, N * sizeof(float)));
    CU(cuMemcpyHtoD(d, h.data(), N * sizeof(float)));
    float s = 1.01f;
    int count = N;
    void *args[] = {&d, &s, &count};
    for (int i = 0; i < L; i++)
        CU(cuLaunchKernel(fn, N / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    CU(cuCtxSynchronize());
    CU(cuMemcpyDtoH(h.data(), d, N * sizeof(float)));
    float want = std::pow(1.01f, (float)L);
    bool ok = true;
    for (int i = 0; i < N; i++)
        ok &= std::fabs(h[i] - want) < 1e-3f * want;
    CU(cuModuleUnload(mod));
    return finish(ok, L);
}
