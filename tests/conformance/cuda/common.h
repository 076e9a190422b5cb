/* Shared by the CUDA conformance cases: error checks, the kernels, and the
 * lines the suite runner reads. Each case prints "launches N" (kernel and
 * graph launches that ran; captured launches do not count) and exits 0 only
 * if every result was checked correct. */
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CU(call)                                                                                   \
    do {                                                                                           \
        CUresult e_ = (call);                                                                      \
        if (e_ != CUDA_SUCCESS) {                                                                  \
            const char *s_ = "?";                                                                  \
            cuGetErrorString(e_, &s_);                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_);                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

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
        CK(cudaMalloc(&dx, n * sizeof(float)));
        CK(cudaMalloc(&dy, n * sizeof(float)));
        CK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
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
        CK(cudaMemcpy(back.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++)
            if (std::fabs(back[i] - expect[i]) > 1e-4f * (1.0f + std::fabs(expect[i]))) {
                fprintf(stderr, "element %d: %g, expected %g\n", i, back[i], expect[i]);
                return false;
            }
        return true;
    }
    ~Vectors()
    {
        cudaFree(dx);
        cudaFree(dy);
    }
};

static inline int finish(bool ok, long launches)
{
    printf("launches %ld\n", launches);
    printf("%s\n", ok ? "result ok" : "result WRONG");
    return ok ? 0 : 1;
}
