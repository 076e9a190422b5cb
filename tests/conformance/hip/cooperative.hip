// Path: a cooperative launch (grid-wide synchronisation): hipLaunchCooperativeKernel, and
// hipLaunchCooperativeKernelMultiDevice on one device where the device supports it.
#include "common.h"
#include <hip/hip_cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void coop_sum(const float *x, float *partial, float *out, int n)
{
    cg::grid_group grid = cg::this_grid();
    float s = 0;
    for (int i = grid.thread_rank(); i < n; i += grid.size())
        s += x[i];
    partial[grid.thread_rank()] = s;
    grid.sync();
    if (grid.thread_rank() == 0) {
        float t = 0;
        for (unsigned i = 0; i < grid.size(); i++)
            t += partial[i];
        *out = t;
    }
}
int main()
{
    const int N = 1 << 16, L = 50;
    std::vector<float> h(N, 1.0f);
    float *dx, *dp, *dout;
    int blocks = 0;
    CK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, coop_sum, 128, 0));
    hipDeviceProp_t p;
    CK(hipGetDeviceProperties(&p, 0));
    int grid = p.multiProcessorCount * (blocks < 2 ? blocks : 2);
    CK(hipMalloc(&dx, N * sizeof(float)));
    CK(hipMalloc(&dp, grid * 128 * sizeof(float)));
    CK(hipMalloc(&dout, sizeof(float)));
    CK(hipMemcpy(dx, h.data(), N * sizeof(float), hipMemcpyHostToDevice));
    int n = N;
    void *args[] = {&dx, &dp, &dout, &n};
    for (int i = 0; i < L; i++)
        CK(hipLaunchCooperativeKernel((const void *)coop_sum, dim3(grid), dim3(128), args, 0, 0));
    CK(hipDeviceSynchronize());
    float out = 0;
    CK(hipMemcpy(&out, dout, sizeof out, hipMemcpyDeviceToHost));
    bool ok = out == (float)N;
    long launches = L;
    int multi = 0;
    CK(hipDeviceGetAttribute(&multi, hipDeviceAttributeCooperativeMultiDeviceLaunch, 0));
    if (multi) {
        hipStream_t s;
        CK(hipStreamCreate(&s));
        hipLaunchParams lp = {};
        lp.func = (void *)coop_sum;
        lp.gridDim = dim3(grid);
        lp.blockDim = dim3(128);
        lp.args = args;
        lp.stream = s;
        CK(hipMemset(dout, 0, sizeof(float)));
        for (int i = 0; i < L; i++)
            CK(hipLaunchCooperativeKernelMultiDevice(&lp, 1, 0));
        CK(hipDeviceSynchronize());
        CK(hipMemcpy(&out, dout, sizeof out, hipMemcpyDeviceToHost));
        ok &= out == (float)N;
        launches += L;
    }
    return finish(ok, launches);
}
