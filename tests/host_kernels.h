/* The kernels of the driver doubles (tests/fakecuda, tests/hip), run on the
 * host with the launch's parameters: x := x * s, c := a + b, and the CUDA
 * demo's layer (demo/cuda/demo_cuda.h: rounds of a 32-bit LCG per element). */
#ifndef FIKIT_TESTS_HOST_KERNELS_H
#define FIKIT_TESTS_HOST_KERNELS_H

typedef void (*host_kernel)(void **params, const unsigned grid[3], const unsigned block[3]);

static inline void k_vec_add(void **p, const unsigned g[3], const unsigned b[3])
{
    const float *a = *(const float **)p[0], *bb = *(const float **)p[1];
    float *c = *(float **)p[2];
    int n = *(int *)p[3];
    for (unsigned i = 0; i < g[0] * b[0]; i++)
        if ((int)i < n)
            c[i] = a[i] + bb[i];
}

static inline void k_scale(void **p, const unsigned g[3], const unsigned b[3])
{
    float *x = *(float **)p[0];
    float s = *(float *)p[1];
    int n = *(int *)p[2];
    for (unsigned i = 0; i < g[0] * b[0]; i++)
        if ((int)i < n)
            x[i] *= s;
}

/* layer<L>(uint32_t *x, uint32_t n, uint32_t rounds), as on the device. */
static inline void k_layer(void **p, const unsigned g[3], const unsigned b[3])
{
    unsigned *x = *(unsigned **)p[0];
    unsigned n = *(unsigned *)p[1], rounds = *(unsigned *)p[2];
    for (unsigned i = 0; i < g[0] * b[0] && i < n; i++) {
        unsigned v = x[i];
        for (unsigned k = 0; k < rounds; k++)
            v = v * 1664525u + 1013904223u;
        x[i] = v;
    }
}

#endif
