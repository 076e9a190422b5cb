/* Shared by the CUDA and HIP conformance cases (each API's common.h
 * includes it): the kernel, the vectors it works on with their expected
 * values, and the lines the suite runner reads. Each case prints "launches
 * N" (kernel and graph launches that ran; captured launches do not count)
 * and exits 0 only if every result was checked correct. The including
 * header defines CK(call) and the API's memory calls: CONF_MALLOC(p, bytes),
 * CONF_TO_DEVICE(dst, src, bytes), CONF_TO_HOST(dst, src, bytes), CONF_FREE(p). */
#pragma once

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

/* y = a * x + y over n elements. */
extern "C" __global__ void conf_axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

struct Vectors {
    int n;
    std::vector<float> x, y, expect;
    float *dx = nullptr, *dy = nullptr;
    explicit Vectors(int n_) : n(n_), x(n_), y(n_), expect(n_)
    {
        for (int i = 0; i < n; i++) {
            x[i] = (float)(i % 97) * 0.5f;
            y[i] = (float)(i % 13);
            expect[i] = y[i];
        }
        CK(CONF_MALLOC(&dx, n * sizeof(float)));
        CK(CONF_MALLOC(&dy, n * sizeof(float)));
        CK(CONF_TO_DEVICE(dx, x.data(), n * sizeof(float)));
        CK(CONF_TO_DEVICE(dy, y.data(), n * sizeof(float)));
    }
    /* What the device should hold after `times` launches of axpy(a). */
    void expect_axpy(float a, int times)
    {
        for (int t = 0; t < times; t++)
            for (int i = 0; i < n; i++)
                expect[i] = a * x[i] + expect[i];
    }
    bool check()
    {
        std::vector<float> back(n);
        CK(CONF_TO_HOST(back.data(), dy, n * sizeof(float)));
        for (int i = 0; i < n; i++)
            if (std::fabs(back[i] - expect[i]) > 1e-4f * (1.0f + std::fabs(expect[i]))) {
                fprintf(stderr, "element %d: %g, expected %g\n", i, back[i], expect[i]);
                return false;
            }
        return true;
    }
    ~Vectors()
    {
        (void)CONF_FREE(dx);
        (void)CONF_FREE(dy);
    }
};

static inline int finish(bool ok, long launches)
{
    printf("launches %ld\n", launches);
    printf("%s\n", ok ? "result ok" : "result WRONG");
    return ok ? 0 : 1;
}
