// Not a case: tells the runner whether a CUDA device is usable, and if not, why.
#include <cstdio>
#include <cuda_runtime.h>
int main()
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        printf("no usable CUDA device: %s\n", cudaGetErrorString(e));
        return 1;
    }
    if (n == 0) {
        printf("no usable CUDA device: none found\n");
        return 1;
    }
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    printf("device %s, compute capability %d.%d, driver API %d, runtime %d\n", p.name, p.major,
           p.minor, drv, rt);
    return 0;
}
