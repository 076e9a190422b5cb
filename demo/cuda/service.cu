// The demo's high-priority task on CUDA: requests arrive as a Poisson process;
// each runs KERNELS distinct short kernels with GAP_US of host work after each,
// then reads back and checks every element. Prints latency percentiles.
#include "demo_cuda.h"
#include <getopt.h>
#include <cstring>

static void usage(FILE *f)
{
    fprintf(f, "Usage: fikit-demo-service-cuda [OPTIONS]\n\n"
               "The CUDA twin of fikit-demo-service: a latency-critical service whose requests\n"
               "are bursts of short kernels separated by host work. Same options and output.\n\n"
               "  -n, --requests N   requests (default 400)\n"
               "  -r, --rate R       mean arrivals per second; 0 = back to back (default 100)\n"
               "  -k, --kernels K    kernels per request, 1 to 16 (default 5)\n"
               "  -g, --gap-us G     host work after each kernel, microseconds (default 1500)\n"
               "  -w, --work W       rounds per element per kernel (default 4000)\n"
               "  -s, --size S       elements (default 65536)\n"
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
    static const option opts[] = {{"requests", 1, 0, 'n'}, {"rate", 1, 0, 'r'}, {"kernels", 1, 0, 'k'},
                                  {"gap-us", 1, 0, 'g'},   {"work", 1, 0, 'w'}, {"size", 1, 0, 's'},
                                  {"seed", 1, 0, 'S'},     {"json", 0, 0, 'j'}, {"help", 0, 0, 'h'},
                                  {0, 0, 0, 0}};
    long requests = 400, kernels = 5, gap_us = 1500, work = 4000, size = 65536;
    double rate = 100;
    unsigned seed = 1;
    int json = 0, c;
    while ((c = getopt_long(argc, argv, "n:r:k:g:w:s:h", opts, nullptr)) != -1) {
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
    if (requests < 1 || kernels < 1 || kernels > DEMO_LAYERS || gap_us < 0 || work < 1 || size < 1 || rate < 0) {
        fprintf(stderr, "fikit-demo-service-cuda: every count must be positive, kernels at most 16\n");
        return 2;
    }
    cudaDeviceProp prop;
    DEMO_CK(cudaGetDeviceProperties(&prop, 0));
    size_t bytes = size * sizeof(uint32_t);
    std::vector<uint32_t> in(size), out(size);
    uint32_t *d;
    DEMO_CK(cudaMalloc(&d, bytes));
    cudaStream_t s;
    DEMO_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    uint32_t A, C;
    demo_affine((uint64_t)work * kernels, &A, &C);
    unsigned blocks = (unsigned)((size + 255) / 256);
    for (long k = 0; k < kernels; k++) // warm-up, not counted
        demo_layers[k]<<<blocks, 256, 0, s>>>(d, (uint32_t)size, (uint32_t)work);
    DEMO_CK(cudaStreamSynchronize(s));

    srand(seed);
    long bad = 0;
    std::vector<double> lat(requests);
    double start = demo_now_s(), arrival = start, busy_s = 0;
    for (long r = 0; r < requests; r++) {
        if (rate > 0)
            arrival += -std::log(1.0 - (rand() + 0.5) / ((double)RAND_MAX + 1.0)) / rate;
        else
            arrival = demo_now_s();
        demo_until(arrival);
        double begun = demo_now_s(); /* later than arrival while requests queue */
        for (long i = 0; i < size; i++)
            in[i] = (uint32_t)rand() ^ ((uint32_t)r << 16);
        DEMO_CK(cudaMemcpyAsync(d, in.data(), bytes, cudaMemcpyHostToDevice, s));
        for (long k = 0; k < kernels; k++) {
            demo_layers[k]<<<blocks, 256, 0, s>>>(d, (uint32_t)size, (uint32_t)work);
            DEMO_CK(cudaStreamSynchronize(s));
            if (gap_us && k + 1 < kernels)
                demo_until(demo_now_s() + gap_us * 1e-6);
        }
        DEMO_CK(cudaMemcpyAsync(out.data(), d, bytes, cudaMemcpyDeviceToHost, s));
        DEMO_CK(cudaStreamSynchronize(s));
        lat[r] = (demo_now_s() - arrival) * 1e3;
        busy_s += demo_now_s() - begun;
        for (long i = 0; i < size; i++)
            bad += out[i] != A * in[i] + C;
    }
    double elapsed = demo_now_s() - start, mean = 0;
    for (double l : lat)
        mean += l / requests;
    double p50 = demo_quantile(lat, 0.5), p99 = demo_quantile(lat, 0.99), mx = demo_quantile(lat, 1.0);
    if (json) {
        printf("{\"program\":\"service\",\"device\":\"%s\",\"requests\":%ld,\"seconds\":%.3f,"
               "\"mean_ms\":%.4f,\"service_ms\":%.4f,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"max_ms\":%.4f,"
               "\"wrong\":%ld,\"t0\":%.6f,\"t1\":%.6f,\"latencies_ms\":[",
               prop.name, requests, elapsed, mean, busy_s * 1e3 / requests, p50, p99, mx, bad, start,
               start + elapsed);
        for (long r = 0; r < requests; r++)
            printf("%s%.4f", r ? "," : "", lat[r]);
        printf("]}\n");
    } else
        printf("service: %ld requests on %s in %.2f s: latency mean %.3f ms, p50 %.3f ms, p99 %.3f ms; %s\n",
               requests, prop.name, elapsed, mean, p50, p99, bad ? "WRONG OUTPUTS" : "all outputs correct");
    return bad ? 1 : 0;
}
