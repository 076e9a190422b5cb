/* A program on several devices of the CUDA driver double (tests/fakecuda):
 *
 *   multi_dev --list
 *       prints the visible devices as this process numbers them, with the
 *       UUID of each ("count N", then "device I GPU-..."), as the driver
 *       shows them through CUDA_VISIBLE_DEVICES.
 *   multi_dev [-d D] --spin SECONDS
 *       launches on visible device D (default 0) every 200 us for SECONDS:
 *       a busy task for others to be held behind.
 *   multi_dev [--after-line] D:N[:KIND] ...
 *       one thread per argument, each making N launches on visible device D,
 *       its own stream, each result checked: KIND plain (the default),
 *       nccl (a kernel named as NCCL names its collectives) or lib (a launch
 *       made by libnccl.so.2, tests/fakecuda/fake_nccl.c). With --after-line
 *       every thread but the first waits for a line on stdin before it
 *       starts. Each thread prints "device D GPU-...: N launches, ok" when
 *       done; then "launches TOTAL" and "F failures".
 */
#include <cuda.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/double/program.h"

#define N 256
#define CK(call) DBL_CHECK(CUresult, CUDA_SUCCESS, call)
#include "tests/fakecuda/ramp.h"

CUresult fake_nccl_all_reduce(CUmodule mod, CUdeviceptr x, float s, int n, CUstream stream);

static CUmodule mod;
static _Atomic long launched;
static _Atomic int failures;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void uuid_of(CUdevice d, char *out, size_t len)
{
    CUuuid u;
    CK(cuDeviceGetUuid(&u, d));
    const unsigned char *b = (const unsigned char *)u.bytes;
    snprintf(out, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static CUcontext context_of(int ordinal)
{
    CUdevice d;
    CUcontext c;
    CK(cuDeviceGet(&d, ordinal));
    CK(cuDevicePrimaryCtxRetain(&c, d));
    return c;
}

struct job {
    int device, n;
    const char *kind;
    int wait_line;
};

static void *run_job(void *arg)
{
    struct job *j = arg;
    if (j->wait_line) {
        char line[64];
        if (!fgets(line, sizeof line, stdin)) {
            fprintf(stderr, "device %d: stdin closed before the line to start\n", j->device);
            failures++;
            return NULL;
        }
    }
    CK(cuCtxSetCurrent(context_of(j->device)));
    CUfunction f;
    const char *name = !strcmp(j->kind, "nccl") ? "ncclDevKernel_AllReduce_Sum_f32_RING_LL" : "_Z5scalePffi";
    CK(cuModuleGetFunction(&f, mod, name));
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    CUdeviceptr d = upload_ramp();
    /* Every launch but the last scales by 1, the last by 3: the result
     * shows that each ran once. */
    for (int i = 0; i < j->n; i++) {
        float k = i == j->n - 1 ? 3.0f : 1.0f;
        int n = N;
        if (!strcmp(j->kind, "lib")) {
            CK(fake_nccl_all_reduce(mod, d, k, n, s));
        } else {
            void *params[] = {&d, &k, &n};
            CK(cuLaunchKernel(f, N / 64, 1, 1, 64, 1, 1, 0, s, params, NULL));
        }
        launched++;
    }
    CK(cuStreamSynchronize(s));
    int ok = ramp_tripled(d);
    failures += !ok;
    char uuid[64];
    CUdevice dev;
    CK(cuCtxGetDevice(&dev));
    uuid_of(dev, uuid, sizeof uuid);
    pthread_mutex_lock(&out_lock);
    printf("device %d %s: %d launches, %s\n", j->device, uuid, j->n, ok ? "ok" : "WRONG");
    fflush(stdout);
    pthread_mutex_unlock(&out_lock);
    return NULL;
}

struct spin_args {
    CUfunction f;
    void **params;
};

static void spin_launch(void *arg)
{
    struct spin_args *a = arg;
    CK(cuLaunchKernel(a->f, N / 64, 1, 1, 64, 1, 1, 0, NULL, a->params, NULL));
}

static int spin(int device, double seconds)
{
    CK(cuCtxSetCurrent(context_of(device)));
    CUfunction f;
    CK(cuModuleGetFunction(&f, mod, "_Z5scalePffi"));
    float x[N] = {0};
    int n = N;
    float k = 1.0f;
    CUdeviceptr d;
    CK(cuMemAlloc(&d, sizeof x));
    void *params[] = {&d, &k, &n};
    struct spin_args a = {f, params};
    return dbl_spin(seconds, spin_launch, &a);
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        int n = 0;
        if (cuInit(0) == CUDA_SUCCESS)
            CK(cuDeviceGetCount(&n));
        printf("count %d\n", n);
        for (int i = 0; i < n; i++) {
            char uuid[64];
            uuid_of(i, uuid, sizeof uuid);
            printf("device %d %s\n", i, uuid);
        }
        return 0;
    }
    CK(cuInit(0));
    CK(cuCtxSetCurrent(context_of(0)));
    CK(cuModuleLoadData(&mod, "fake module"));

    int a = 1, device = 0, after_line = 0;
    if (a + 1 < argc && !strcmp(argv[a], "-d")) {
        device = atoi(argv[a + 1]);
        a += 2;
    }
    if (a + 1 < argc && !strcmp(argv[a], "--spin"))
        return spin(device, atof(argv[a + 1]));
    if (a < argc && !strcmp(argv[a], "--after-line")) {
        after_line = 1;
        a++;
    }
    int njobs = argc - a;
    if (njobs < 1) {
        fprintf(stderr, "usage: multi_dev --list | [-d D] --spin SECONDS | [--after-line] D:N[:plain|nccl|lib] ...\n");
        return 2;
    }
    struct job *jobs = calloc((size_t)njobs, sizeof *jobs);
    pthread_t *t = calloc((size_t)njobs, sizeof *t);
    for (int i = 0; i < njobs; i++) {
        char kind[16] = "plain";
        if (sscanf(argv[a + i], "%d:%d:%15s", &jobs[i].device, &jobs[i].n, kind) < 2 || jobs[i].n < 1 ||
            (strcmp(kind, "plain") && strcmp(kind, "nccl") && strcmp(kind, "lib"))) {
            fprintf(stderr, "multi_dev: '%s' is not D:N[:plain|nccl|lib]\n", argv[a + i]);
            return 2;
        }
        jobs[i].kind = !strcmp(kind, "nccl") ? "nccl" : !strcmp(kind, "lib") ? "lib" : "plain";
        jobs[i].wait_line = after_line && i > 0;
    }
    for (int i = 0; i < njobs; i++)
        pthread_create(&t[i], NULL, run_job, &jobs[i]);
    for (int i = 0; i < njobs; i++)
        pthread_join(t[i], NULL);
    printf("launches %ld\n%d failures\n", (long)launched, (int)failures);
    return failures ? 1 : 0;
}
