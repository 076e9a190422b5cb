/* A program whose launches fikit confines to part of the SMs (a beside task
 * with mps_lower_cap = launches, beside a busy higher level), against the
 * CUDA driver double, where a green context's streams run asynchronously:
 * every case reads its result the way a program may (its stream's
 * synchronisation, an event, the legacy stream's copy, another stream that
 * waits on an event), so a launch moved without the program's order kept is
 * read before it ran and the case fails.
 *
 *   confined [ROUNDS]      each case ROUNDS times (default 8)
 *
 * Cases: a stream of its own, the legacy stream, the per-thread stream,
 * events across two streams, cuEventSynchronize, cuLaunchKernelEx, a graph
 * captured and launched between confined launches, four threads. Prints
 * "ok NAME" or "FAILED NAME: ..." per case, then "launches N" and
 * "F failures"; exits 1 if any failed. Device memory is host memory in the
 * double, so results are read through the device pointer itself after the
 * program's own synchronisation, not by a copy (which waits for everything). */
#include <cuda.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/double/program.h"

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, unsigned, CUstream, void **, void **);

#define N 64
#define CK(call) DBL_CHECK(CUresult, CUDA_SUCCESS, call)

static CUfunction add, scale;
static CUcontext ctx;
static _Atomic long launched;
static _Atomic int failures;

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, CUstream, void **, void **);

/* A buffer of N floats: x, and a row of ones to add. */
struct buf {
    CUdeviceptr x, ones;
};

static struct buf buf_new(float v)
{
    struct buf b;
    float h[N];
    CK(cuMemAlloc(&b.x, sizeof h));
    CK(cuMemAlloc(&b.ones, sizeof h));
    for (int i = 0; i < N; i++)
        h[i] = v;
    CK(cuMemcpyHtoD(b.x, h, sizeof h));
    for (int i = 0; i < N; i++)
        h[i] = 1.0f;
    CK(cuMemcpyHtoD(b.ones, h, sizeof h));
    return b;
}

/* The buffer as the program sees it now, read in place. */
static const float *now(CUdeviceptr d) { return (const float *)(uintptr_t)d; }

/* x := (x + 1) * 2 on s: two kernels whose order shows in the result. */
static void step(launch_fn fn, struct buf *b, CUstream s)
{
    int n = N;
    float two = 2.0f;
    void *pa[] = {&b->x, &b->ones, &b->x, &n};
    void *ps[] = {&b->x, &two, &n};
    CK(fn(add, 1, 1, 1, N, 1, 1, 0, s, pa, NULL));
    CK(fn(scale, 1, 1, 1, N, 1, 1, 0, s, ps, NULL));
    launched += 2;
}

static float stepped(float v, int rounds)
{
    while (rounds--)
        v = (v + 1.0f) * 2.0f;
    return v;
}

static int expect(const char *name, CUdeviceptr d, float want)
{
    const float *x = now(d);
    for (int i = 0; i < N; i++)
        if (x[i] != want) {
            printf("FAILED %s: element %d is %g, want %g\n", name, i, (double)x[i], (double)want);
            failures++;
            return 0;
        }
    return 1;
}

static void done(const char *name, int ok)
{
    if (ok)
        printf("ok %s\n", name);
    fflush(stdout);
}

static void case_own_stream(int rounds)
{
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf b = buf_new(0);
        for (int i = 0; i < 4; i++)
            step(cuLaunchKernel, &b, s);
        CK(cuStreamSynchronize(s));
        ok = expect("own stream", b.x, stepped(0, 4));
    }
    done("own stream", ok);
}

static void case_legacy(int rounds)
{
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf b = buf_new(1);
        for (int i = 0; i < 4; i++)
            step(cuLaunchKernel, &b, NULL);
        CK(cuCtxSynchronize());
        ok = expect("legacy stream, cuCtxSynchronize", b.x, stepped(1, 4));
        /* And read by a copy on the legacy stream. */
        float h[N];
        step(cuLaunchKernel, &b, NULL);
        CK(cuMemcpyDtoH(h, b.x, sizeof h));
        if (ok && h[0] != stepped(1, 5)) {
            printf("FAILED legacy stream, cuMemcpyDtoH: %g, want %g\n", (double)h[0], (double)stepped(1, 5));
            failures++;
            ok = 0;
        }
    }
    done("legacy stream", ok);
}

static void case_per_thread(int rounds)
{
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf b = buf_new(2);
        for (int i = 0; i < 4; i++)
            step(cuLaunchKernel_ptsz, &b, NULL);
        CK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
        ok = expect("per-thread stream", b.x, stepped(2, 4));
    }
    done("per-thread stream", ok);
}

/* y := x + y on stream b after x was stepped on stream a, ordered by an
 * event a records and b waits on. */
static void case_events(int rounds)
{
    CUstream a, b;
    CUevent ev;
    CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf x = buf_new(0), y = buf_new(5);
        for (int i = 0; i < 3; i++)
            step(cuLaunchKernel, &x, a);
        CK(cuEventRecord(ev, a));
        CK(cuStreamWaitEvent(b, ev, 0));
        int n = N;
        void *p[] = {&x.x, &y.x, &y.x, &n};
        CK(cuLaunchKernel(add, 1, 1, 1, N, 1, 1, 0, b, p, NULL));
        launched++;
        CK(cuStreamSynchronize(b));
        ok = expect("events across streams", y.x, stepped(0, 3) + 5.0f);
    }
    done("events across streams", ok);
}

static void case_event_sync(int rounds)
{
    CUstream s;
    CUevent ev;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CK(cuEventCreate(&ev, CU_EVENT_DEFAULT));
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf b = buf_new(3);
        for (int i = 0; i < 3; i++)
            step(cuLaunchKernel, &b, s);
        CK(cuEventRecord(ev, s));
        CK(cuEventSynchronize(ev));
        ok = expect("cuEventSynchronize", b.x, stepped(3, 3));
        while (ok && cuEventQuery(ev) != CUDA_SUCCESS)
            ;
    }
    done("cuEventSynchronize", ok);
}

static void case_launch_ex(int rounds)
{
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf b = buf_new(0);
        int n = N;
        float two = 2.0f;
        void *pa[] = {&b.x, &b.ones, &b.x, &n};
        void *ps[] = {&b.x, &two, &n};
        CUlaunchAttribute prio = {.id = CU_LAUNCH_ATTRIBUTE_PRIORITY, .value.priority = 0};
        CUlaunchConfig c = {.gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = N, .blockDimY = 1,
                            .blockDimZ = 1, .hStream = s, .attrs = &prio, .numAttrs = 1};
        for (int i = 0; i < 3; i++) {
            CK(cuLaunchKernelEx(&c, add, pa, NULL));
            CK(cuLaunchKernelEx(&c, scale, ps, NULL));
            launched += 2;
        }
        CK(cuStreamSynchronize(s));
        ok = expect("cuLaunchKernelEx", b.x, stepped(0, 3));
    }
    done("cuLaunchKernelEx", ok);
}

/* A graph captured while the task is confined (its launches are recorded,
 * not moved) and launched between confined launches on the same stream. */
static void case_graph(int rounds)
{
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf b = buf_new(0);
        CUgraph g;
        CUgraphExec e;
        CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
        step(cuLaunchKernel, &b, s);
        launched -= 2; /* recorded, not run */
        CK(cuStreamEndCapture(s, &g));
        CK(cuGraphInstantiateWithFlags(&e, g, 0));
        step(cuLaunchKernel, &b, s);
        CK(cuGraphLaunch(e, s));
        launched++;
        step(cuLaunchKernel, &b, s);
        CK(cuStreamSynchronize(s));
        ok = expect("graph between confined launches", b.x, stepped(0, 3));
        cuGraphExecDestroy(e);
        cuGraphDestroy(g);
    }
    done("graph between confined launches", ok);
}

struct worker {
    int rounds, ok;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    CK(cuCtxSetCurrent(ctx));
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    w->ok = 1;
    for (int r = 0; r < w->rounds && w->ok; r++) {
        struct buf b = buf_new((float)r);
        for (int i = 0; i < 4; i++)
            step(cuLaunchKernel, &b, s);
        CK(cuStreamSynchronize(s));
        w->ok = expect("four threads", b.x, stepped((float)r, 4));
    }
    return NULL;
}

static void case_threads(int rounds)
{
    pthread_t t[4];
    struct worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i].rounds = rounds;
        pthread_create(&t[i], NULL, worker_main, &w[i]);
    }
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        ok &= w[i].ok;
    }
    done("four threads", ok);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 8;
    if (rounds < 1) {
        fprintf(stderr, "usage: confined [ROUNDS]\n");
        return 2;
    }
    CUdevice d;
    CUmodule mod;
    CK(cuInit(0));
    CK(cuDeviceGet(&d, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, d));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, "fake module"));
    CK(cuModuleGetFunction(&add, mod, "vec_add"));
    CK(cuModuleGetFunction(&scale, mod, "_Z5scalePffi"));
    case_own_stream(rounds);
    case_legacy(rounds);
    case_per_thread(rounds);
    case_events(rounds);
    case_event_sync(rounds);
    case_launch_ex(rounds);
    case_graph(rounds);
    case_threads(rounds);
    printf("launches %ld\n%d failures\n", (long)launched, (int)failures);
    return failures ? 1 : 0;
}
