/* A HIP program whose launches fikit confines to part of the CUs (a beside
 * task with mps_lower_cap = launches, beside a busy higher level), against
 * tests/hip's runtime double, where a CU-masked stream runs asynchronously:
 * every case reads its result the way a program may (its stream's
 * synchronisation, the null stream's, an event, another stream that waits
 * on an event), so a launch moved without the program's order kept is read
 * before it ran and the case fails. The HIP counterpart of
 * tests/fakecuda/confined.c.
 *
 *   confined_hip [ROUNDS]      each case ROUNDS times (default 8)
 *
 * Cases: a stream of its own, the null stream, the per-thread stream,
 * events across two streams, hipEventSynchronize, hipModuleLaunchKernel,
 * four threads. Prints "ok NAME" or "FAILED NAME: ..." per case, then
 * "launches N" and "F failures"; exits 1 if any failed. */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/double/program.h"

hipError_t hipLaunchKernel_spt(const void *, dim3, dim3, void **, size_t, hipStream_t);
void fakehip_vec_add(void);
void fakehip_scale(void);

#define N 64
#define CK(call) DBL_CHECK(hipError_t, hipSuccess, call)

static hipFunction_t module_add, module_scale;
static _Atomic long launched;
static _Atomic int failures;

enum path { RUNTIME, RUNTIME_SPT, MODULE };

struct buf {
    float *x, *ones;
};

static struct buf buf_new(float v)
{
    struct buf b;
    float h[N];
    CK(hipMalloc((void **)&b.x, sizeof h));
    CK(hipMalloc((void **)&b.ones, sizeof h));
    for (int i = 0; i < N; i++)
        h[i] = v;
    CK(hipMemcpy(b.x, h, sizeof h, hipMemcpyHostToDevice));
    for (int i = 0; i < N; i++)
        h[i] = 1.0f;
    CK(hipMemcpy(b.ones, h, sizeof h, hipMemcpyHostToDevice));
    return b;
}

/* x := (x + 1) * 2 on s: two kernels whose order shows in the result. */
static void step(enum path p, struct buf *b, hipStream_t s)
{
    int n = N;
    float two = 2.0f;
    void *pa[] = {&b->x, &b->ones, &b->x, &n};
    void *ps[] = {&b->x, &two, &n};
    dim3 g = {1, 1, 1}, blk = {N, 1, 1};
    if (p == MODULE) {
        CK(hipModuleLaunchKernel(module_add, 1, 1, 1, N, 1, 1, 0, s, pa, NULL));
        CK(hipModuleLaunchKernel(module_scale, 1, 1, 1, N, 1, 1, 0, s, ps, NULL));
    } else if (p == RUNTIME_SPT) {
        CK(hipLaunchKernel_spt((const void *)fakehip_vec_add, g, blk, pa, 0, s));
        CK(hipLaunchKernel_spt((const void *)fakehip_scale, g, blk, ps, 0, s));
    } else {
        CK(hipLaunchKernel((const void *)fakehip_vec_add, g, blk, pa, 0, s));
        CK(hipLaunchKernel((const void *)fakehip_scale, g, blk, ps, 0, s));
    }
    launched += 2;
}

static float stepped(float v, int rounds)
{
    while (rounds--)
        v = (v + 1.0f) * 2.0f;
    return v;
}

/* Read in place (device memory is host memory in the double), after the
 * program's own synchronisation. */
static int expect(const char *name, const float *x, float want)
{
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

static void case_stream(const char *name, enum path p, int rounds)
{
    hipStream_t s;
    CK(hipStreamCreate(&s));
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf b = buf_new(0);
        for (int i = 0; i < 4; i++)
            step(p, &b, s);
        CK(hipStreamSynchronize(s));
        ok = expect(name, b.x, stepped(0, 4));
    }
    done(name, ok);
}

static void case_null(int rounds)
{
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf b = buf_new(1);
        for (int i = 0; i < 4; i++)
            step(RUNTIME, &b, NULL);
        CK(hipDeviceSynchronize());
        ok = expect("null stream, hipDeviceSynchronize", b.x, stepped(1, 4));
    }
    done("null stream", ok);
}

static void case_per_thread(int rounds)
{
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf b = buf_new(2);
        for (int i = 0; i < 4; i++)
            step(RUNTIME_SPT, &b, NULL);
        CK(hipStreamSynchronize(hipStreamPerThread));
        ok = expect("per-thread stream", b.x, stepped(2, 4));
    }
    done("per-thread stream", ok);
}

static void case_events(int rounds)
{
    hipStream_t a, b;
    hipEvent_t ev;
    CK(hipStreamCreate(&a));
    CK(hipStreamCreate(&b));
    CK(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf x = buf_new(0), y = buf_new(5);
        for (int i = 0; i < 3; i++)
            step(RUNTIME, &x, a);
        CK(hipEventRecord(ev, a));
        CK(hipStreamWaitEvent(b, ev, 0));
        int n = N;
        void *p[] = {&x.x, &y.x, &y.x, &n};
        CK(hipLaunchKernel((const void *)fakehip_vec_add, (dim3){1, 1, 1}, (dim3){N, 1, 1}, p, 0, b));
        launched++;
        CK(hipStreamSynchronize(b));
        ok = expect("events across streams", y.x, stepped(0, 3) + 5.0f);
    }
    done("events across streams", ok);
}

static void case_event_sync(int rounds)
{
    hipStream_t s;
    hipEvent_t ev;
    CK(hipStreamCreate(&s));
    CK(hipEventCreate(&ev));
    int ok = 1;
    for (int r = 0; r < rounds && ok; r++) {
        struct buf b = buf_new(3);
        for (int i = 0; i < 3; i++)
            step(RUNTIME, &b, s);
        CK(hipEventRecord(ev, s));
        CK(hipEventSynchronize(ev));
        ok = expect("hipEventSynchronize", b.x, stepped(3, 3));
    }
    done("hipEventSynchronize", ok);
}

struct worker {
    int rounds, ok;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    hipStream_t s;
    CK(hipStreamCreate(&s));
    w->ok = 1;
    for (int r = 0; r < w->rounds && w->ok; r++) {
        struct buf b = buf_new((float)r);
        for (int i = 0; i < 4; i++)
            step(RUNTIME, &b, s);
        CK(hipStreamSynchronize(s));
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
        fprintf(stderr, "usage: confined_hip [ROUNDS]\n");
        return 2;
    }
    hipModule_t mod;
    CK(hipSetDevice(0));
    CK(hipModuleLoad(&mod, "fake.co"));
    CK(hipModuleGetFunction(&module_add, mod, "vec_add"));
    CK(hipModuleGetFunction(&module_scale, mod, "_Z5scalePffi"));
    case_stream("own stream", RUNTIME, rounds);
    case_null(rounds);
    case_per_thread(rounds);
    case_events(rounds);
    case_event_sync(rounds);
    case_stream("hipModuleLaunchKernel", MODULE, rounds);
    case_threads(rounds);
    printf("launches %ld\n%d failures\n", (long)launched, (int)failures);
    return failures ? 1 : 0;
}
