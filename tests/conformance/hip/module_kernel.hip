// Compiled to a code object for module_launch (hipcc --genco).
#include <hip/hip_runtime.h>
extern "C" __global__ void module_scale(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= s;
}
