// The demo's low-priority task on CUDA: long kernels back to back, each output checked.
#include "demo_cuda.h"

static const char *const about =
    "The CUDA twin of fikit-demo-batch: long kernels in a closed loop, every output\n"
    "checked; SIGTERM or SIGINT end the run and print the results.";

int main(int argc, char **argv)
{
    demo_opts o = {};
    o.seconds = 10, o.work = 20000, o.size = 1 << 20;
    int rc = demo_options(argc, argv, &o, "fikit-demo-batch-cuda", about, DEMO_BATCH_OPTS, DEMO_BATCH_LONG);
    if (rc >= 0)
        return rc;
    long work = o.work, size = o.size;
    cudaDeviceProp prop;
    DEMO_CK(cudaGetDeviceProperties(&prop, 0));
    size_t bytes = size * sizeof(uint32_t);
    std::vector<uint32_t> x(size), y(size);
    for (long i = 0; i < size; i++)
        x[i] = (uint32_t)i * 2654435761u;
    uint32_t *d;
    DEMO_CK(cudaMalloc(&d, bytes));
    cudaStream_t s;
    DEMO_CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    DEMO_CK(cudaMemcpy(d, x.data(), bytes, cudaMemcpyHostToDevice));
    uint32_t A, C;
    demo_affine((uint64_t)work, &A, &C);
    unsigned blocks = (unsigned)((size + 255) / 256);
    demo_layers[15]<<<blocks, 256, 0, s>>>(d, (uint32_t)size, (uint32_t)work); // warm-up
    DEMO_CK(cudaMemcpyAsync(x.data(), d, bytes, cudaMemcpyDeviceToHost, s));
    DEMO_CK(cudaStreamSynchronize(s));
    // As fikit-demo-batch does: run-demo starts the service once this says
    // it is up (its kernel loaded and run once), so that line must come.
    double start = demo_now_s(), end = start + o.seconds; // before "ready": as fikit-demo-batch
    demo_batch_ready(&o);
    long done = 0, bad = 0;
    demo_progress progress = {};
    while (demo_batch_more(&o, done, end)) {
        demo_layers[15]<<<blocks, 256, 0, s>>>(d, (uint32_t)size, (uint32_t)work);
        DEMO_CK(cudaMemcpyAsync(y.data(), d, bytes, cudaMemcpyDeviceToHost, s));
        DEMO_CK(cudaStreamSynchronize(s));
        for (long i = 0; i < size; i++) {
            x[i] = A * x[i] + C;
            bad += y[i] != x[i];
        }
        done++;
        if (o.progress)
            demo_progress_note(&progress, "fikit-demo-batch-cuda");
    }
    double elapsed = demo_now_s() - start;
    return demo_batch_report(&o, "fikit-demo-batch-cuda", prop.name, start, elapsed, done, bad, &progress);
}
