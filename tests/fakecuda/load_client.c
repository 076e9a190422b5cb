/* One client of the load test (tests/integration/test_load.py): THREADS
 * threads, each on its own stream, launch x += 1 on their own buffer for
 * SECONDS, pausing PAUSE_US between launches. At the end each thread checks
 * that its buffer moved by exactly its launch count (no launch lost or run
 * twice) and the process prints one line:
 *   launches N failures F call_p50_us A call_p99_us B call_max_us C
 * where the call times are those of cuLaunchKernel as the program sees them
 * (fikit's cost, plus the time held for a lower-priority task). */
#include <cuda.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 64
#define MAX_SAMPLES 20000 /* per thread; later launches overwrite at random */

static CUcontext ctx;
static CUfunction add;
static double seconds = 5;
static long pause_us = 1000;
static _Atomic long launched;
static _Atomic int failures;

struct worker {
    pthread_t tid;
    unsigned seed;
    size_t nsamples;
    double *samples; /* call times, us */
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define CK(call)                                                                                   \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            fprintf(stderr, "load_client: %s = %d\n", #call, r_);                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void *run(void *arg)
{
    struct worker *w = arg;
    CK(cuCtxSetCurrent(ctx));
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    float x[N], ones[N];
    int n = N;
    for (int i = 0; i < N; i++)
        x[i] = (float)i, ones[i] = 1.0f;
    CUdeviceptr dx, d1;
    CK(cuMemAlloc(&dx, sizeof x));
    CK(cuMemAlloc(&d1, sizeof ones));
    CK(cuMemcpyHtoD(dx, x, sizeof x));
    CK(cuMemcpyHtoD(d1, ones, sizeof ones));
    void *params[] = {&dx, &d1, &dx, &n}; /* x = x + 1 */
    long mine = 0;
    double end = now_s() + seconds;
    while (now_s() < end) {
        double t0 = now_s();
        CK(cuLaunchKernel(add, 1, 1, 1, N, 1, 1, 0, s, params, NULL));
        double us = (now_s() - t0) * 1e6;
        mine++;
        if (w->nsamples < MAX_SAMPLES)
            w->samples[w->nsamples++] = us;
        else
            w->samples[rand_r(&w->seed) % MAX_SAMPLES] = us;
        struct timespec p = {0, pause_us * 1000};
        nanosleep(&p, NULL);
    }
    CK(cuStreamSynchronize(s));
    CK(cuMemcpyDtoH(x, dx, sizeof x));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad |= x[i] != (float)i + (float)mine;
    if (bad)
        fprintf(stderr, "load_client: a thread launched %ld times but its buffer moved by %.0f\n",
                mine, (double)(x[0]));
    failures += bad;
    launched += mine;
    cuMemFree(dx);
    cuMemFree(d1);
    cuStreamDestroy(s);
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int nthreads = 8;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--pause-us") == 0 && i + 1 < argc)
            pause_us = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: load_client [--threads N] [--seconds S] [--pause-us US]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > 256 || seconds <= 0 || pause_us < 0 || pause_us > 999999) {
        fprintf(stderr, "load_client: threads 1..256, seconds > 0, pause-us 0..999999\n");
        return 2;
    }
    CUdevice dev;
    CUmodule mod;
    CK(cuInit(0));
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuModuleLoadData(&mod, "fake module"));
    CK(cuModuleGetFunction(&add, mod, "vec_add"));

    struct worker *w = calloc((size_t)nthreads, sizeof *w);
    for (int i = 0; i < nthreads; i++) {
        w[i].seed = (unsigned)i + 1;
        w[i].samples = malloc(MAX_SAMPLES * sizeof(double));
        if (!w[i].samples || pthread_create(&w[i].tid, NULL, run, &w[i]) != 0) {
            fprintf(stderr, "load_client: cannot start thread %d\n", i);
            return 1;
        }
    }
    size_t total = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(w[i].tid, NULL);
        total += w[i].nsamples;
    }
    double *all = malloc((total ? total : 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < nthreads; i++) {
        memcpy(all + k, w[i].samples, w[i].nsamples * sizeof *all);
        k += w[i].nsamples;
        free(w[i].samples);
    }
    qsort(all, total, sizeof *all, by_value);
    double p50 = total ? all[total / 2] : 0, p99 = total ? all[total * 99 / 100] : 0,
           max = total ? all[total - 1] : 0;
    printf("launches %ld failures %d call_p50_us %.2f call_p99_us %.2f call_max_us %.2f\n",
           (long)launched, (int)failures, p50, p99, max);
    free(all);
    free(w);
    return failures ? 1 : 0;
}
