// The demo's high-priority task on CUDA: requests arrive as a Poisson process;
// each runs KERNELS distinct short kernels with GAP_US of host work after each,
// then reads back and checks every element. Prints latency percentiles.
#include "demo_cuda.h"
#include <cstring>

static const char *const about =
    "The CUDA twin of fikit-demo-service: a latency-critical service whose requests\n"
    "are bursts of short kernels separated by host work. Same options and output.";

int main(int argc, char **argv)
{
    demo_opts o = {};
    o.requests = 400, o.kernels = 5, o.gap_us = 1500, o.work = 4000, o.size = 65536, o.rate = 100, o.seed = 1;
    int rc = demo_options(argc, argv, &o, "fikit-demo-service-cuda", about, DEMO_SERVICE_OPTS, DEMO_SERVICE_LONG);
    if (rc >= 0)
        return rc;
    long requests = o.requests, kernels = o.kernels, gap_us = o.gap_us, work = o.work, size = o.size;
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

    srand(o.seed);
    long bad = 0;
    std::vector<double> lat(requests);
    double start = demo_now_s(), arrival = start, busy_s = 0;
    for (long r = 0; r < requests; r++) {
        arrival = demo_next_arrival(o.rate, arrival);
        demo_until(arrival);
        double begun = demo_now_s(); /* later than arrival while requests queue */
        demo_request_input(in.data(), size, r);
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
        bad += demo_wrong(out.data(), in.data(), size, A, C);
    }
    double elapsed = demo_now_s() - start;
    return demo_service_report(&o, "fikit-demo-service-cuda", prop.name, start, elapsed, lat.data(), busy_s, bad);
}
