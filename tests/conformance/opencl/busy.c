/* Not a case: the busy priority-0 task that the suite's priority-9 runs
 * wait behind. Launches a kernel of about a millisecond's work back to back
 * until SIGTERM (or --seconds S, default 120, or --count N launches), checks
 * every result exactly, and prints "launches N" and "result ok". */
#include "common.h"

#include <signal.h>
#include <stdint.h>
#include <time.h>

static volatile sig_atomic_t stop;
static void on_term(int sig) { (void)sig; stop = 1; }

static const char *src = "__kernel void busy_rounds(__global uint *x, uint n) {\n"
                         "    size_t i = get_global_id(0); uint v = x[i];\n"
                         "    for (uint k = 0; k < n; k++) v = v * 1664525u + 1013904223u;\n"
                         "    x[i] = v; }\n";

/* (A, C) with x -> A x + C equal to N rounds of the kernel's map. */
static void affine(uint64_t n, uint32_t *A, uint32_t *C)
{
    uint32_t ra = 1, rc = 0, ba = 1664525u, bc = 1013904223u;
    for (; n; n >>= 1) {
        if (n & 1) {
            rc = ba * rc + bc;
            ra = ba * ra;
        }
        bc = ba * bc + bc;
        ba = ba * ba;
    }
    *A = ra;
    *C = rc;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = 120;
    long count = 0;
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--count"))
            count = atol(argv[++i]);
    }
    struct sigaction sa = {.sa_handler = on_term};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    struct conf c;
    conf_open(argc, argv, &c);
    cl_program p = conf_build(&c, src);
    cl_kernel k = conf_kernel(p, "busy_rounds");
    enum { N = 4096 };
    const cl_uint rounds = 2000;
    static uint32_t x[N], back[N];
    for (uint32_t i = 0; i < N; i++)
        x[i] = i * 2654435761u;
    cl_mem buf = conf_buffer(c.ctx, sizeof x, x);
    conf_arg_mem(k, 0, buf);
    CL(clSetKernelArg(k, 1, sizeof rounds, &rounds));
    uint32_t A, C;
    affine((uint64_t)rounds * 64, &A, &C);
    long n = 0;
    bool ok = true;
    double end = now() + seconds;
    while (!stop && now() < end && ok && (count <= 0 || n < count)) {
        size_t gws = N;
        CL(clEnqueueNDRangeKernel(c.queue, k, 1, NULL, &gws, NULL, 0, NULL, NULL));
        CL(clFinish(c.queue));
        if (++n == 1) {
            fprintf(stderr, "ready\n");
        }
        if (n % 64 == 0) { /* check the state so far exactly */
            CL(clEnqueueReadBuffer(c.queue, buf, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
            for (uint32_t i = 0; i < N; i++) {
                uint32_t v = A * x[i] + C;
                x[i] = v;
                if (back[i] != v) {
                    fprintf(stderr, "busy: element %u is %u, expected %u\n", i, back[i], v);
                    ok = false;
                    break;
                }
            }
        }
    }
    printf("launches %ld\n%s\n", n, ok ? "result ok" : "result WRONG");
    return ok ? 0 : 1;
}
