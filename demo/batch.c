/* The demo's low-priority task: a batch job of long kernels in a closed
 * loop, each output checked exactly. Prints its throughput. */
#include "demo/demo_cl.h"

#include <getopt.h>
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static void usage(FILE *f)
{
    fprintf(f, "Usage: fikit-demo-batch [OPTIONS]\n"
               "\n"
               "A throughput OpenCL job for the fikit demo: runs long kernels back to back for\n"
               "SECONDS (or COUNT kernels), checks every output element exactly, and prints\n"
               "kernels per second. SIGTERM or SIGINT end the run early (results are printed).\n"
               "Exits 1 if any output is wrong.\n"
               "\n"
               "Options:\n"
               "  -t, --seconds T    run for T seconds (default 10)\n"
               "  -c, --count N      run exactly N kernels instead\n"
               "  -w, --work W       rounds per element per kernel (default 60000)\n"
               "  -s, --size S       elements (default 16384)\n"
               "      --json         print the result as JSON\n"
               "      --progress     with --json, also when each kernel was done: \"progress\"\n"
               "                     holds [CLOCK_MONOTONIC seconds, kernels done] pairs, so\n"
               "                     a harness can take the throughput over another\n"
               "                     program's window; and writes \"ready\" to stderr once\n"
               "                     its kernel is built, so a harness can start the other\n"
               "                     program then\n"
               "  -h, --help         show this help\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"seconds", required_argument, 0, 't'}, {"count", required_argument, 0, 'c'},
        {"work", required_argument, 0, 'w'},    {"size", required_argument, 0, 's'},
        {"json", no_argument, 0, 'j'},          {"help", no_argument, 0, 'h'},
        {"progress", no_argument, 0, 'P'},      {0, 0, 0, 0}};
    double seconds = 10;
    long count = 0, work = 60000, size = 16384;
    int json = 0, progress = 0, c;
    while ((c = getopt_long(argc, argv, "t:c:w:s:h", opts, NULL)) != -1) {
        switch (c) {
        case 't': seconds = atof(optarg); break;
        case 'c': count = atol(optarg); break;
        case 'w': work = atol(optarg); break;
        case 's': size = atol(optarg); break;
        case 'j': json = 1; break;
        case 'P': progress = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (work < 1 || size < 1 || (count <= 0 && seconds <= 0)) {
        fprintf(stderr, "fikit-demo-batch: every count must be positive\n");
        return 2;
    }
    struct demo_cl d;
    demo_cl_open(&d);
    cl_int err;
    size_t bytes = (size_t)size * sizeof(uint32_t);
    cl_mem buf = clCreateBuffer(d.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    DEMO_CHECK(err);
    uint32_t *x = malloc(bytes), *y = malloc(bytes);
    for (long i = 0; i < size; i++)
        x[i] = (uint32_t)i * 2654435761u;
    DEMO_CHECK(clEnqueueWriteBuffer(d.queue, buf, CL_TRUE, 0, bytes, x, 0, NULL, NULL));
    uint32_t A, C;
    demo_affine((uint64_t)work, &A, &C);
    cl_uint rounds = (cl_uint)work;
    DEMO_CHECK(clSetKernelArg(d.kernel, 0, sizeof buf, &buf));
    DEMO_CHECK(clSetKernelArg(d.kernel, 1, sizeof rounds, &rounds));
    size_t gws = (size_t)size;

    long done = 0, bad = 0;
    /* Warm-up, not counted: the first launch compiles the kernel. */
    DEMO_CHECK(clEnqueueNDRangeKernel(d.queue, d.kernel, 1, NULL, &gws, NULL, 0, NULL, NULL));
    DEMO_CHECK(clEnqueueReadBuffer(d.queue, buf, CL_TRUE, 0, bytes, x, 0, NULL, NULL));
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    if (progress) {
        fputs("ready\n", stderr);
        fflush(stderr);
    }
    double start = demo_now_s(), end = start + seconds;
    double *done_at = NULL; /* --progress: when each kernel was done */
    size_t done_cap = 0;
    while (!stop && (count > 0 ? done < count : demo_now_s() < end)) {
        DEMO_CHECK(clEnqueueNDRangeKernel(d.queue, d.kernel, 1, NULL, &gws, NULL, 0, NULL, NULL));
        DEMO_CHECK(clEnqueueReadBuffer(d.queue, buf, CL_TRUE, 0, bytes, y, 0, NULL, NULL));
        for (long i = 0; i < size; i++) {
            x[i] = A * x[i] + C;
            if (y[i] != x[i])
                bad++;
        }
        done++;
        if (progress) {
            if ((size_t)done > done_cap) {
                done_cap = done_cap ? 2 * done_cap : 1024;
                done_at = realloc(done_at, done_cap * sizeof *done_at);
                if (!done_at) {
                    fprintf(stderr, "fikit-demo-batch: out of memory for --progress\n");
                    return 2;
                }
            }
            done_at[done - 1] = demo_now_s();
        }
    }
    double elapsed = demo_now_s() - start;
    if (json) {
        printf("{\"program\":\"batch\",\"device\":\"%s\",\"kernels\":%ld,\"seconds\":%.3f,"
               "\"per_second\":%.3f,\"wrong\":%ld",
               d.device_name, done, elapsed, (double)done / elapsed, bad);
        if (progress) {
            printf(",\"progress\":[[%.6f,0]", start);
            for (long i = 0; i < done; i++)
                printf(",[%.6f,%ld]", done_at[i], i + 1);
            printf("]");
        }
        printf("}\n");
    } else
        printf("batch: %ld kernels on %s in %.2f s: %.2f kernels/s; %s\n", done, d.device_name,
               elapsed, (double)done / elapsed, bad ? "WRONG OUTPUTS" : "all outputs correct");
    if (bad)
        fprintf(stderr, "fikit-demo-batch: %ld wrong output elements\n", bad);
    clReleaseMemObject(buf);
    demo_cl_close(&d);
    free(x);
    free(y);
    free(done_at);
    return bad ? 1 : 0;
}
