// Can an interposer move an unmodified program's launch into a green context
// (issue 37)? The program's kernel handle was made in its primary context and
// its stream belongs there; fikit would launch the same handle into a stream
// of a green context, ordered by two events: one recorded on the program's
// stream that the green stream waits on, one recorded on the green stream that
// the program's stream waits on. Prints, each step's result written out:
//
//   1. which handle a green stream takes: the runtime's context-bound
//      CUfunction (cudaGetFuncBySymbol, what cudart hands the driver) and its
//      CUkernel (cudaGetKernel), with the primary context current and with
//      the green one pushed;
//   2. order: a chain of dependent updates alternating between the program's
//      stream and the green one, checked against the host (a program stream
//      of its own and the legacy default stream);
//   3. the host cost of a redirected launch against a plain one: median and
//      p99 of each call, measured alternately in one run.
//
//   fikit-bench-green-redirect [--sms N] [--launches N]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void step(unsigned *x, unsigned tag) { x[0] = x[0] * 3u + tag; }

static const char *name(CUresult r)
{
    const char *s = nullptr;
    cuGetErrorName(r, &s);
    return s ? s : "?";
}

#define SAY(what, call)                                                                            \
    ({                                                                                             \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS)                                                                    \
            printf("  %s: %s (%d)\n", what, name(r_), (int)r_);                                    \
        r_;                                                                                        \
    })

struct redirect {
    CUstream g;
    CUevent before, after; // before: on the program's stream; after: on g
    CUcontext gctx;
    bool push;
};

static CUresult launch_on(CUfunction f, CUstream s, unsigned *x, unsigned tag)
{
    void *args[] = {&x, &tag};
    return cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr);
}

static CUresult launch_redirected(const redirect &d, CUfunction f, CUstream s, unsigned *x, unsigned tag)
{
    CUresult r;
    if ((r = cuEventRecord(d.before, s)) != CUDA_SUCCESS || (r = cuStreamWaitEvent(d.g, d.before, 0)) != CUDA_SUCCESS)
        return r;
    if (d.push)
        cuCtxPushCurrent(d.gctx);
    r = launch_on(f, d.g, x, tag);
    if (d.push) {
        CUcontext c;
        cuCtxPopCurrent(&c);
    }
    if (r != CUDA_SUCCESS)
        return r;
    if ((r = cuEventRecord(d.after, d.g)) != CUDA_SUCCESS)
        return r;
    return cuStreamWaitEvent(s, d.after, 0);
}

static bool chain(const redirect &d, CUfunction f, CUstream s, unsigned *x, int n)
{
    unsigned want = 1, got = 0;
    cuMemcpyHtoD((CUdeviceptr)x, &want, 4);
    for (int i = 0; i < n; i++) {
        CUresult r = i % 2 ? launch_redirected(d, f, s, x, (unsigned)i) : launch_on(f, s, x, (unsigned)i);
        if (r != CUDA_SUCCESS) {
            printf("  launch %d: %s\n", i, name(r));
            return false;
        }
        want = want * 3u + (unsigned)i;
    }
    // The program's own wait: its stream, nothing of fikit's.
    cuStreamSynchronize(s);
    cuMemcpyDtoH(&got, (CUdeviceptr)x, 4);
    printf("  %d launches, every other one redirected: %s (0x%08x, host 0x%08x)\n", n,
           got == want ? "in order" : "OUT OF ORDER", got, want);
    return got == want;
}

static double ns_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t).count();
}

static void pct(std::vector<double> &v, double *p50, double *p99)
{
    std::sort(v.begin(), v.end());
    *p50 = v[v.size() / 2];
    *p99 = v[v.size() * 99 / 100];
}

int main(int argc, char **argv)
{
    unsigned sms = 16;
    int launches = 20000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sms") && i + 1 < argc)
            sms = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--launches") && i + 1 < argc)
            launches = atoi(argv[++i]);
        else {
            printf("usage: %s [--sms N] [--launches N]\n", argv[0]);
            return strcmp(argv[i], "-h") && strcmp(argv[i], "--help") ? 2 : 0;
        }
    }
    if (cudaFree(nullptr) != cudaSuccess) {
        printf("no CUDA device\n");
        return 1;
    }
    CUcontext primary;
    CUdevice dev;
    cuCtxGetCurrent(&primary);
    cuCtxGetDevice(&dev);
    cudaFunction_t fn_rt;
    cudaKernel_t kern;
    if (cudaGetFuncBySymbol(&fn_rt, (const void *)step) != cudaSuccess ||
        cudaGetKernel(&kern, (const void *)step) != cudaSuccess) {
        printf("cudaGetFuncBySymbol / cudaGetKernel failed\n");
        return 1;
    }
    CUfunction bound = (CUfunction)fn_rt, independent = (CUfunction)kern;

    CUdevResource all, part, rest;
    unsigned groups = 1;
    if (SAY("cuDeviceGetDevResource", cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM)) ||
        SAY("cuDevSmResourceSplitByCount", cuDevSmResourceSplitByCount(&part, &groups, &all, &rest, 0, sms)))
        return 1;
    CUdevResourceDesc desc;
    CUgreenCtx green;
    redirect d{};
    if (SAY("cuDevResourceGenerateDesc", cuDevResourceGenerateDesc(&desc, &part, 1)) ||
        SAY("cuGreenCtxCreate", cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM)) ||
        SAY("cuCtxFromGreenCtx", cuCtxFromGreenCtx(&d.gctx, green)) ||
        SAY("cuGreenCtxStreamCreate", cuGreenCtxStreamCreate(&d.g, green, CU_STREAM_NON_BLOCKING, 0)))
        return 1;
    printf("green context of %u SMs (of %u), stream %p\n", part.sm.smCount, all.sm.smCount, (void *)d.g);
    // The event the program's stream records: made in the primary context;
    // the one the green stream records: made in the green context.
    SAY("cuEventCreate (primary)", cuEventCreate(&d.before, CU_EVENT_DISABLE_TIMING));
    cuCtxPushCurrent(d.gctx);
    SAY("cuEventCreate (green)", cuEventCreate(&d.after, CU_EVENT_DISABLE_TIMING));
    CUcontext popped;
    cuCtxPopCurrent(&popped);
    CUevent after_primary;
    SAY("cuEventCreate (primary, for the green stream)", cuEventCreate(&after_primary, CU_EVENT_DISABLE_TIMING));
    CUresult rec = cuEventRecord(after_primary, d.g);
    printf("recording a primary context's event on the green stream: %s\n", name(rec));
    cuStreamSynchronize(d.g);

    unsigned *x;
    cudaMalloc(&x, 4);
    printf("1. which handle a green stream takes (one launch each):\n");
    const struct {
        const char *what;
        CUfunction f;
    } handles[] = {{"context-bound CUfunction (cudaGetFuncBySymbol)", bound},
                   {"CUkernel (cudaGetKernel)", independent}};
    bool works[2][2] = {};
    for (int h = 0; h < 2; h++)
        for (int push = 0; push < 2; push++) {
            if (push)
                cuCtxPushCurrent(d.gctx);
            CUresult r = launch_on(handles[h].f, d.g, x, 1);
            if (push)
                cuCtxPopCurrent(&popped);
            CUresult s = cuStreamSynchronize(d.g);
            works[h][push] = r == CUDA_SUCCESS && s == CUDA_SUCCESS;
            printf("  %s, %s current: launch %s, sync %s\n", handles[h].what, push ? "green" : "primary",
                   name(r), name(s));
        }
    unsigned one = 1;
    void *rt_args[] = {&x, &one};
    cudaError_t rt = cudaLaunchKernel((const void *)step, dim3(1), dim3(1), rt_args, 0, (cudaStream_t)d.g);
    printf("  cudaLaunchKernel into the green stream, primary current: %s\n", cudaGetErrorName(rt));
    cudaStreamSynchronize((cudaStream_t)d.g);

    int ok_h = works[0][0] || works[0][1] ? 0 : 1;
    d.push = !works[ok_h][0];
    CUfunction f = handles[ok_h].f;
    printf("2. order, with the %s, %s current:\n", handles[ok_h].what, d.push ? "green pushed" : "primary");
    CUstream own;
    cuStreamCreate(&own, CU_STREAM_DEFAULT);
    printf(" program's stream:\n");
    bool ordered = chain(d, f, own, x, 2000);
    printf(" legacy default stream:\n");
    ordered = chain(d, f, nullptr, x, 2000) && ordered;

    printf("3. host cost per launch, plain and redirected alternately, %d each:\n", launches);
    std::vector<double> plain, redir;
    plain.reserve(launches);
    redir.reserve(launches);
    for (int i = 0; i < launches; i++) {
        if (i % 256 == 0)
            cuStreamSynchronize(own);
        auto t = std::chrono::steady_clock::now();
        launch_on(f, own, x, 1);
        plain.push_back(ns_since(t));
        t = std::chrono::steady_clock::now();
        launch_redirected(d, f, own, x, 1);
        redir.push_back(ns_since(t));
    }
    cuStreamSynchronize(own);
    double p50a, p99a, p50b, p99b;
    pct(plain, &p50a, &p99a);
    pct(redir, &p50b, &p99b);
    printf("\n| launch | median us | p99 us |\n|---|---|---|\n");
    printf("| plain (program's stream) | %.2f | %.2f |\n", p50a / 1e3, p99a / 1e3);
    printf("| redirected (two events, two waits) | %.2f | %.2f |\n", p50b / 1e3, p99b / 1e3);
    printf("handles: bound %s/%s, kernel %s/%s (primary/green current); order %s\n",
           works[0][0] ? "yes" : "no", works[0][1] ? "yes" : "no", works[1][0] ? "yes" : "no",
           works[1][1] ? "yes" : "no", ordered ? "kept" : "BROKEN");
    return ordered ? 0 : 3;
}
