// Compiled to PTX for driver_module (nvcc -ptx).
extern "C" __global__ void driver_scale(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= s;
}
