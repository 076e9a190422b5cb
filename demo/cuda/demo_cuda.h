// Shared by the CUDA demo programs: the same work and exact check as the
// OpenCL ones (rounds of a 32-bit LCG per element, verified in closed form).
#pragma once
#include "../demo.h"

#include <cuda_runtime.h>

#include "../check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#define DEMO_CK(call) FIKIT_CHECK_CUDA(call)

// One distinct kernel per layer, as a network has, so each step is its own kernel to fikit.
template <int L> __global__ void layer(uint32_t *x, uint32_t n, uint32_t rounds)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t v = x[i];
    for (uint32_t k = 0; k < rounds; k++)
        v = v * 1664525u + 1013904223u;
    x[i] = v;
}

typedef void (*layer_fn)(uint32_t *, uint32_t, uint32_t);
static layer_fn demo_layers[DEMO_LAYERS] = {layer<0>,  layer<1>,  layer<2>,  layer<3>,
                                            layer<4>,  layer<5>,  layer<6>,  layer<7>,
                                            layer<8>,  layer<9>,  layer<10>, layer<11>,
                                            layer<12>, layer<13>, layer<14>, layer<15>};

// Waits until t: sleeps for most of it, spins the last 100 us (a service's host work).
static inline void demo_until(double t)
{
    for (;;) {
        double left = t - demo_now_s();
        if (left <= 0)
            return;
        if (left > 150e-6) {
            timespec ts = {0, (long)((left - 100e-6) * 1e9)};
            nanosleep(&ts, nullptr);
        }
    }
}

