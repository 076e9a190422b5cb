// Green contexts on this driver (issue 23, item 4): can a program create one
// and launch into it, under time-slicing and as an MPS client, and what does
// a kernel capped to part of the SMs cost? Prints the device's SM resource
// (count, minimum partition, co-scheduling alignment), then for each cap a
// line: the split's result, the green context's creation, a launch into its
// stream, and the kernel's time against the same kernel on the whole device
// (primary context). Every CUDA call's result is printed, not assumed: where
// a step fails (an MPS client with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE below
// 100 is said not to allow green contexts) the line says which and why.
//
//   fikit-bench-green-ctx [--blocks N] [--rounds R] [--caps PCT,PCT,...]
//
// The kernel: N blocks of 256 threads, each spinning R dependent rounds, so
// that its time scales with the SMs it gets (N well above one wave).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

__global__ void spin(unsigned *out, unsigned rounds)
{
    unsigned x = threadIdx.x + blockIdx.x * blockDim.x;
    for (unsigned i = 0; i < rounds; i++)
        x = x * 1664525u + 1013904223u;
    if (x == 0x12345678u)
        out[0] = x; // never, but the compiler cannot know
}

static const char *err_name(CUresult r)
{
    const char *s = nullptr;
    cuGetErrorName(r, &s);
    return s ? s : "?";
}

#define TRY(what, call)                                                                            \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            printf("  %s: %s (%d)\n", what, err_name(r_), (int)r_);                                \
            return false;                                                                          \
        }                                                                                          \
    } while (0)

// The kernel's time on stream s (in context ctx, current), median of 5.
static bool time_kernel(CUstream s, CUfunction f, unsigned blocks, unsigned rounds, CUdeviceptr out,
                        float *ms)
{
    CUevent a, b;
    TRY("cuEventCreate", cuEventCreate(&a, CU_EVENT_DEFAULT));
    TRY("cuEventCreate", cuEventCreate(&b, CU_EVENT_DEFAULT));
    std::vector<float> t;
    for (int i = 0; i < 6; i++) {
        void *args[] = {&out, &rounds};
        TRY("cuEventRecord", cuEventRecord(a, s));
        TRY("cuLaunchKernel", cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, s, args, nullptr));
        TRY("cuEventRecord", cuEventRecord(b, s));
        TRY("cuEventSynchronize", cuEventSynchronize(b));
        float x;
        TRY("cuEventElapsedTime", cuEventElapsedTime(&x, a, b));
        if (i) // the first one warms up
            t.push_back(x);
    }
    cuEventDestroy(a);
    cuEventDestroy(b);
    std::sort(t.begin(), t.end());
    *ms = t[t.size() / 2];
    return true;
}

static bool probe(CUdevice dev, const CUdevResource &all, unsigned want_sms, CUfunction f, unsigned blocks,
                  unsigned rounds, float whole_ms)
{
    CUdevResource part, rest;
    unsigned groups = 1;
    TRY("cuDevSmResourceSplitByCount", cuDevSmResourceSplitByCount(&part, &groups, &all, &rest, 0, want_sms));
    printf("  split: %u group of %u SMs (asked %u), %u SMs left\n", groups, part.sm.smCount, want_sms,
           rest.sm.smCount);
    CUdevResourceDesc desc;
    TRY("cuDevResourceGenerateDesc", cuDevResourceGenerateDesc(&desc, &part, 1));
    CUgreenCtx g;
    TRY("cuGreenCtxCreate", cuGreenCtxCreate(&g, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CUcontext ctx;
    TRY("cuCtxFromGreenCtx", cuCtxFromGreenCtx(&ctx, g));
    TRY("cuCtxSetCurrent", cuCtxSetCurrent(ctx));
    CUstream s;
    TRY("cuGreenCtxStreamCreate", cuGreenCtxStreamCreate(&s, g, CU_STREAM_NON_BLOCKING, 0));
    CUdeviceptr out;
    TRY("cuMemAlloc", cuMemAlloc(&out, 4));
    float ms;
    bool ok = time_kernel(s, f, blocks, rounds, out, &ms);
    if (ok)
        printf("  launched in the green context: %.3f ms, %.2fx the whole device's %.3f ms on %u of %u SMs "
               "(%.2fx by the SM count)\n",
               ms, ms / whole_ms, whole_ms, part.sm.smCount, all.sm.smCount,
               (double)all.sm.smCount / part.sm.smCount);
    cuMemFree(out);
    cuStreamDestroy(s);
    cuGreenCtxDestroy(g);
    return ok;
}

int main(int argc, char **argv)
{
    unsigned blocks = 132 * 16, rounds = 200000;
    std::string caps = "10,25,50,70";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
            blocks = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--caps") && i + 1 < argc)
            caps = argv[++i];
        else {
            printf("usage: %s [--blocks N] [--rounds R] [--caps PCT,PCT,...]\n", argv[0]);
            return strcmp(argv[i], "-h") && strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    const char *mps = getenv("CUDA_MPS_PIPE_DIRECTORY");
    const char *pct = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    printf("green contexts: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%s, MPS pipe %s\n", pct ? pct : "(unset)",
           mps ? mps : "(default)");
    // The runtime makes the primary context current and loads the kernel;
    // cudaGetKernel gives a context-independent handle the driver launches
    // in any context, the green ones included.
    cudaError_t ce = cudaFree(nullptr);
    if (ce != cudaSuccess) {
        printf("  no CUDA device: %s\n", cudaGetErrorString(ce));
        return 1;
    }
    cudaKernel_t k;
    ce = cudaGetKernel(&k, (const void *)spin);
    if (ce != cudaSuccess) {
        printf("  cudaGetKernel: %s\n", cudaGetErrorString(ce));
        return 1;
    }
    CUfunction f = (CUfunction)k;
    CUdevice dev;
    CUcontext primary;
    if (cuCtxGetCurrent(&primary) != CUDA_SUCCESS || cuCtxGetDevice(&dev) != CUDA_SUCCESS) {
        printf("  no current context\n");
        return 1;
    }
    CUdevResource all;
    CUresult r = cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM);
    if (r != CUDA_SUCCESS) {
        printf("  cuDeviceGetDevResource: %s\n", err_name(r));
        return 1;
    }
    printf("  device SMs %u, minimum partition %u SMs, co-scheduled alignment %u SMs\n", all.sm.smCount,
           all.sm.minSmPartitionSize, all.sm.smCoscheduledAlignment);
    CUdeviceptr out;
    float whole = 0;
    if (cuMemAlloc(&out, 4) != CUDA_SUCCESS ||
        !time_kernel(nullptr, f, blocks, rounds, out, &whole)) {
        printf("  the kernel did not run on the whole device\n");
        return 1;
    }
    cuMemFree(out);
    printf("  whole device (primary context): %.3f ms for %u blocks of 256 threads\n", whole, blocks);
    int failed = 0;
    for (size_t p = 0; p < caps.size();) {
        size_t q = caps.find(',', p);
        unsigned c = (unsigned)atoi(caps.substr(p, q == std::string::npos ? q : q - p).c_str());
        p = q == std::string::npos ? caps.size() : q + 1;
        unsigned want = all.sm.smCount * c / 100;
        printf("cap %u %% (%u SMs):\n", c, want);
        if (!probe(dev, all, want ? want : 1, f, blocks, rounds, whole))
            failed++;
        cuCtxSetCurrent(primary);
    }
    printf("%d of the caps failed\n", failed);
    return failed ? 3 : 0;
}
