/* The demo's high-priority task: a service. Requests arrive as a Poisson
 * process; each is a burst of short kernels separated by host work (the
 * idle gaps fikit fills), then its output is read back and checked. Prints
 * latency percentiles (arrival to checked result). */
#include "demo/demo_cl.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "Usage: fikit-demo-service [OPTIONS]\n"
               "\n"
               "A latency-critical OpenCL service for the fikit demo. Each request writes an\n"
               "input, runs KERNELS short kernels with GAP_US of host work after each, reads\n"
               "the result and checks every element exactly. Requests arrive as a Poisson\n"
               "process. Prints one line of results; exits 1 if any output is wrong.\n"
               "\n"
               "Options:\n"
               "  -n, --requests N   requests to serve (default 100)\n"
               "  -r, --rate R       mean arrivals per second; 0 = back to back (default 10)\n"
               "  -k, --kernels K    kernels per request, 1 to 16: layer0, layer1, ...\n"
               "                     (default 5)\n"
               "  -g, --gap-us G     host work after each kernel, microseconds (default 2000)\n"
               "  -w, --work W       rounds per element per kernel (default 20000)\n"
               "  -s, --size S       elements (default 16384)\n"
               "      --seed S       random seed (default 1)\n"
               "      --json         print the result as JSON, with t0 and t1: the measured\n"
               "                     window, CLOCK_MONOTONIC seconds, and service_ms: the mean\n"
               "                     time a request took from when it could start (its arrival,\n"
               "                     or the end of the one before) to its result, and every\n"
               "                     request's latency (latencies_ms)\n"
               "  -h, --help         show this help\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"requests", required_argument, 0, 'n'}, {"rate", required_argument, 0, 'r'},
        {"kernels", required_argument, 0, 'k'},  {"gap-us", required_argument, 0, 'g'},
        {"work", required_argument, 0, 'w'},     {"size", required_argument, 0, 's'},
        {"seed", required_argument, 0, 'S'},     {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
    long requests = 100, kernels = 5, gap_us = 2000, work = 20000, size = 16384;
    double rate = 10;
    unsigned seed = 1;
    int json = 0, c;
    while ((c = getopt_long(argc, argv, "n:r:k:g:w:s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n': requests = atol(optarg); break;
        case 'r': rate = atof(optarg); break;
        case 'k': kernels = atol(optarg); break;
        case 'g': gap_us = atol(optarg); break;
        case 'w': work = atol(optarg); break;
        case 's': size = atol(optarg); break;
        case 'S': seed = (unsigned)atol(optarg); break;
        case 'j': json = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (requests < 1 || kernels < 1 || kernels > DEMO_LAYERS || gap_us < 0 || work < 1 || size < 1 ||
        rate < 0) {
        fprintf(stderr, "fikit-demo-service: every count must be positive, kernels at most %d\n",
                DEMO_LAYERS);
        return 2;
    }
    struct demo_cl d;
    demo_cl_open(&d);
    cl_int err;
    size_t bytes = (size_t)size * sizeof(uint32_t);
    cl_mem buf = clCreateBuffer(d.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    DEMO_CHECK(err);
    uint32_t *in = malloc(bytes), *out = malloc(bytes);
    double *lat = malloc((size_t)requests * sizeof *lat);
    uint32_t A, C;
    demo_affine((uint64_t)work * (uint64_t)kernels, &A, &C);
    cl_uint rounds = (cl_uint)work;
    for (long k = 0; k < kernels; k++) {
        DEMO_CHECK(clSetKernelArg(d.layer[k], 0, sizeof buf, &buf));
        DEMO_CHECK(clSetKernelArg(d.layer[k], 1, sizeof rounds, &rounds));
    }
    size_t gws = (size_t)size;

    srand(seed);
    long bad = 0;
    /* Warm-up, not counted: the first launch of each kernel compiles it. */
    for (long k = 0; k < kernels; k++)
        DEMO_CHECK(clEnqueueNDRangeKernel(d.queue, d.layer[k], 1, NULL, &gws, NULL, 0, NULL, NULL));
    DEMO_CHECK(clFinish(d.queue));
    double start = demo_now_s(), arrival = start, busy_s = 0;
    for (long r = 0; r < requests; r++) {
        if (rate > 0)
            arrival += -log(1.0 - (rand() + 0.5) / ((double)RAND_MAX + 1.0)) / rate;
        else
            arrival = demo_now_s();
        demo_sleep_until(arrival);
        double begun = demo_now_s(); /* later than arrival while requests queue */
        for (long i = 0; i < size; i++)
            in[i] = (uint32_t)rand() ^ ((uint32_t)r << 16);
        DEMO_CHECK(clEnqueueWriteBuffer(d.queue, buf, CL_TRUE, 0, bytes, in, 0, NULL, NULL));
        for (long k = 0; k < kernels; k++) {
            DEMO_CHECK(clEnqueueNDRangeKernel(d.queue, d.layer[k], 1, NULL, &gws, NULL, 0, NULL, NULL));
            DEMO_CHECK(clFinish(d.queue));
            if (gap_us && k + 1 < kernels)
                demo_sleep_until(demo_now_s() + (double)gap_us * 1e-6);
        }
        DEMO_CHECK(clEnqueueReadBuffer(d.queue, buf, CL_TRUE, 0, bytes, out, 0, NULL, NULL));
        lat[r] = (demo_now_s() - arrival) * 1e3;
        busy_s += demo_now_s() - begun;
        for (long i = 0; i < size; i++)
            if (out[i] != A * in[i] + C)
                bad++;
    }
    double elapsed = demo_now_s() - start;
    double mean = 0;
    for (long r = 0; r < requests; r++)
        mean += lat[r] / (double)requests;
    qsort(lat, (size_t)requests, sizeof *lat, cmp_double);
    double p50 = demo_quantile(lat, (size_t)requests, 0.5), p99 = demo_quantile(lat, (size_t)requests, 0.99);
    if (json) {
        printf("{\"program\":\"service\",\"device\":\"%s\",\"requests\":%ld,\"seconds\":%.3f,"
               "\"mean_ms\":%.3f,\"service_ms\":%.3f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f,"
               "\"wrong\":%ld,\"t0\":%.6f,\"t1\":%.6f,\"latencies_ms\":[",
               d.device_name, requests, elapsed, mean, busy_s * 1e3 / (double)requests, p50, p99,
               lat[requests - 1], bad, start, start + elapsed);
        for (long r = 0; r < requests; r++) /* sorted: the order is not needed */
            printf("%s%.3f", r ? "," : "", lat[r]);
        printf("]}\n");
    } else
        printf("service: %ld requests on %s in %.2f s: latency mean %.2f ms, p50 %.2f ms, p99 %.2f ms; "
               "%s\n", requests, d.device_name, elapsed, mean, p50, p99,
               bad ? "WRONG OUTPUTS" : "all outputs correct");
    if (bad)
        fprintf(stderr, "fikit-demo-service: %ld wrong output elements\n", bad);
    clReleaseMemObject(buf);
    demo_cl_close(&d);
    free(in);
    free(out);
    free(lat);
    return bad ? 1 : 0;
}
