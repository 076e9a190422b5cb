/* The demo's low-priority task: a batch job of long kernels in a closed
 * loop, each output checked exactly. Prints its throughput. */
#include "demo/demo_cl.h"

#include <string.h>

static const char *const about =
    "A throughput OpenCL job for the fikit demo: runs long kernels back to back for\n"
    "SECONDS (or COUNT kernels), checks every output element exactly, and prints\n"
    "kernels per second. SIGTERM or SIGINT end the run early (results are printed).\n"
    "Exits 1 if any output is wrong.";

int main(int argc, char **argv)
{
    struct demo_opts o = {.seconds = 10, .work = 60000, .size = 16384};
    int rc = demo_options(argc, argv, &o, "fikit-demo-batch", about, DEMO_BATCH_OPTS, DEMO_BATCH_LONG);
    if (rc >= 0)
        return rc;
    long size = o.size;
    struct demo_cl d;
    demo_cl_open(&d);
    size_t bytes = (size_t)size * sizeof(uint32_t);
    cl_mem buf = demo_cl_buffer(&d, bytes);
    uint32_t *x = malloc(bytes), *y = malloc(bytes);
    for (long i = 0; i < size; i++)
        x[i] = (uint32_t)i * 2654435761u;
    DEMO_CHECK(clEnqueueWriteBuffer(d.queue, buf, CL_TRUE, 0, bytes, x, 0, NULL, NULL));
    uint32_t A, C;
    demo_affine((uint64_t)o.work, &A, &C);
    cl_uint rounds = (cl_uint)o.work;
    DEMO_CHECK(clSetKernelArg(d.kernel, 0, sizeof buf, &buf));
    DEMO_CHECK(clSetKernelArg(d.kernel, 1, sizeof rounds, &rounds));
    size_t gws = (size_t)size;

    long done = 0, bad = 0;
    /* Warm-up, not counted: the first launch compiles the kernel. */
    DEMO_CHECK(clEnqueueNDRangeKernel(d.queue, d.kernel, 1, NULL, &gws, NULL, 0, NULL, NULL));
    DEMO_CHECK(clEnqueueReadBuffer(d.queue, buf, CL_TRUE, 0, bytes, x, 0, NULL, NULL));
    /* start before "ready": the window a service measures after it is
     * said is then always inside the progress marks (a batch preempted
     * between the two, beside busy loops, began its marks after it). */
    double start = demo_now_s(), end = start + o.seconds;
    demo_batch_ready(&o);
    struct demo_progress progress = {0};
    while (demo_batch_more(&o, done, end)) {
        DEMO_CHECK(clEnqueueNDRangeKernel(d.queue, d.kernel, 1, NULL, &gws, NULL, 0, NULL, NULL));
        DEMO_CHECK(clEnqueueReadBuffer(d.queue, buf, CL_TRUE, 0, bytes, y, 0, NULL, NULL));
        for (long i = 0; i < size; i++) {
            x[i] = A * x[i] + C;
            if (y[i] != x[i])
                bad++;
        }
        done++;
        if (o.progress)
            demo_progress_note(&progress, "fikit-demo-batch");
    }
    double elapsed = demo_now_s() - start;
    rc = demo_batch_report(&o, "fikit-demo-batch", d.device_name, start, elapsed, done, bad, &progress);
    clReleaseMemObject(buf);
    demo_cl_close(&d);
    free(x);
    free(y);
    free(progress.at);
    return rc;
}
