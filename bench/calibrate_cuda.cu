// The switch-cost probe on CUDA (see calibrate_probe.h).
#include <cuda_runtime.h>

#include "bench/calibrate_probe.h"

__global__ void tiny(int *x) { x[threadIdx.x] += 1; }
static int *buf;

static int probe_open(char *name, size_t len)
{
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess || cudaMalloc(&buf, 64 * sizeof(int)) != cudaSuccess)
        return 1;
    snprintf(name, len, "%s", p.name);
    return 0;
}

static int probe_tiny_kernel(void)
{
    tiny<<<1, 64>>>(buf);
    return cudaDeviceSynchronize() != cudaSuccess;
}

int main(int argc, char **argv) { return probe_main(argc, argv); }
