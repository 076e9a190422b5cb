// An ordinary HIP program, built with hipcc, as it behaves on a machine with
// no AMD GPU: it reports each failing call with its code, name and message,
// and gives up with the runtime's message on stderr. Under fikit-launch it
// must fail exactly so (tests/integration/test_hip_nodevice.py). Built twice:
// as is, and with -fgpu-default-stream=per-thread (the _spt entry points).
#include <hip/hip_runtime.h>

#include <cstdio>

__global__ void nodev_scale(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= s;
}

static void report(const char *what, hipError_t e)
{
    printf("%s: %d %s: %s\n", what, (int)e, hipGetErrorName(e), hipGetErrorString(e));
}

int main()
{
    int n = -1;
    hipError_t e = hipGetDeviceCount(&n);
    report("hipGetDeviceCount", e);
    if (e == hipSuccess && n > 0) {
        printf("%d HIP devices: this test is for machines without one\n", n);
        return 77;
    }
    float *x = nullptr;
    float s = 2.0f;
    int count = 0;
    nodev_scale<<<1, 64>>>(x, s, count);
    report("<<<>>>", hipGetLastError());
    hipLaunchKernelGGL(nodev_scale, dim3(1), dim3(64), 0, 0, x, s, count);
    report("hipLaunchKernelGGL", hipGetLastError());
    void *args[] = {&x, &s, &count};
    report("hipLaunchKernel", hipLaunchKernel((const void *)nodev_scale, dim3(1), dim3(64), args, 0, 0));
    report("hipLaunchCooperativeKernel",
           hipLaunchCooperativeKernel((const void *)nodev_scale, dim3(1), dim3(64), args, 0, 0));
    hipStream_t st = nullptr;
    report("hipStreamCreate", hipStreamCreate(&st));
    report("hipStreamBeginCapture", hipStreamBeginCapture(st, hipStreamCaptureModeGlobal));
    hipGraph_t g = nullptr;
    report("hipStreamEndCapture", hipStreamEndCapture(st, &g));
    report("hipGraphLaunch", hipGraphLaunch(nullptr, st));
    e = hipMalloc(&x, 1024);
    report("hipMalloc", e);
    if (e != hipSuccess) {
        fprintf(stderr, "hip_nodevice_prog: cannot allocate device memory: %s (%s)\n",
                hipGetErrorString(e), hipGetErrorName(e));
        return 3;
    }
    return 0;
}
