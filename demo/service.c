/* The demo's high-priority task: a service. Requests arrive as a Poisson
 * process; each is a burst of short kernels separated by host work (the
 * idle gaps fikit fills), then its output is read back and checked. Prints
 * latency percentiles (arrival to checked result). */
#include "demo/demo_cl.h"

#include <string.h>

static const char *const about =
    "A latency-critical OpenCL service for the fikit demo. Each request prepares\n"
    "its input (PREP_US of CPU work), writes it, runs KERNELS short kernels with\n"
    "GAP_US of host work after each, reads the result and checks every element\n"
    "exactly. Requests arrive as a Poisson process. Prints one line of results;\n"
    "exits 1 if any output is wrong.";

int main(int argc, char **argv)
{
    struct demo_opts o = {.requests = 100, .kernels = 5, .gap_us = 2000, .work = 20000, .size = 16384,
                          .rate = 10, .seed = 1};
    int rc = demo_options(argc, argv, &o, "fikit-demo-service", about, DEMO_SERVICE_OPTS, DEMO_SERVICE_LONG_BURSTS);
    if (rc >= 0)
        return rc;
    long requests = o.requests, kernels = o.kernels, gap_us = o.gap_us, size = o.size;
    struct demo_cl d;
    demo_cl_open(&d);
    size_t bytes = (size_t)size * sizeof(uint32_t);
    cl_mem buf = demo_cl_buffer(&d, bytes);
    uint32_t *in = malloc(bytes), *out = malloc(bytes);
    double *lat = malloc((size_t)requests * sizeof *lat);
    uint32_t A, C;
    demo_affine((uint64_t)o.work * (uint64_t)kernels, &A, &C);
    cl_uint rounds = (cl_uint)o.work;
    for (long k = 0; k < kernels; k++) {
        DEMO_CHECK(clSetKernelArg(d.layer[k], 0, sizeof buf, &buf));
        DEMO_CHECK(clSetKernelArg(d.layer[k], 1, sizeof rounds, &rounds));
    }
    size_t gws = (size_t)size;

    srand(o.seed);
    long bad = 0;
    /* Warm-up, not counted: the first launch of each kernel compiles it. */
    for (long k = 0; k < kernels; k++)
        DEMO_CHECK(clEnqueueNDRangeKernel(d.queue, d.layer[k], 1, NULL, &gws, NULL, 0, NULL, NULL));
    DEMO_CHECK(clFinish(d.queue));
    double start = demo_now_s(), arrival = start, busy_s = 0, on_since = start;
    for (long r = 0; r < requests; r++) {
        arrival = demo_next_arrival(o.rate, arrival);
        /* --bursts: past ON ms of requests, none for OFF ms; the next one
         * arrives as they resume. */
        if (o.on_ms > 0 && (arrival > on_since + o.on_ms * 1e-3 || demo_now_s() > on_since + o.on_ms * 1e-3)) {
            on_since = (arrival > demo_now_s() ? arrival : demo_now_s()) + o.off_ms * 1e-3;
            if (arrival < on_since)
                arrival = on_since;
        }
        demo_sleep_until(arrival);
        double begun = demo_now_s(); /* later than arrival while requests queue */
        demo_request_input(in, size, r);
        if (o.prep_us)
            demo_cpu_work_us(o.prep_us);
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
        bad += demo_wrong(out, in, size, A, C);
    }
    double elapsed = demo_now_s() - start;
    rc = demo_service_report(&o, "fikit-demo-service", d.device_name, start, elapsed, lat, busy_s, bad);
    clReleaseMemObject(buf);
    demo_cl_close(&d);
    free(in);
    free(out);
    free(lat);
    return rc;
}
