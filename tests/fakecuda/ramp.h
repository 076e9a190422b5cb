/* Shared by the programs on the CUDA driver (driver_paths.c, multi_dev.c):
 * a device buffer of N floats holding 0, 1, ..., N-1, and the check that
 * the scale kernel left 3 times that. Include after defining N and CK. */
#ifndef FIKIT_TESTS_FAKECUDA_RAMP_H
#define FIKIT_TESTS_FAKECUDA_RAMP_H

#include <cuda.h>

/* A device buffer holding 0, 1, ..., N-1. */
static CUdeviceptr upload_ramp(void)
{
    float host[N];
    for (int i = 0; i < N; i++)
        host[i] = (float)i;
    CUdeviceptr d;
    CK(cuMemAlloc(&d, sizeof host));
    CK(cuMemcpyHtoD(d, host, sizeof host));
    return d;
}

/* Whether the buffer now holds 3 * (0, 1, ..., N-1); frees it. */
static int ramp_tripled(CUdeviceptr d)
{
    float back[N];
    CK(cuMemcpyDtoH(back, d, sizeof back));
    int ok = 1;
    for (int i = 0; i < N; i++) {
        float e = back[i] - 3.0f * (float)i;
        ok &= e < 1e-6f && e > -1e-6f;
    }
    cuMemFree(d);
    return ok;
}

#endif
