// Path: a cooperative launch (grid-wide synchronisation).
#include "common.h"
#include <cooperative_groups.h>
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
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, coop_sum, 128, 0));
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    int grid = p.multiProcessorCount * (blocks < 2 ? blocks : 2);
    CK(cudaMalloc(&dx, N * sizeof(float)));
    CK(cudaMalloc(&dp, grid * 128 * sizeof(float)));
    CK(cudaMalloc(&dout, sizeof(float)));
    CK(cudaMemcpy(dx, h.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    void *args[] = {&dx, &dp, &dout, (void *)&N};
    int n = N;
    args[3] = &n;
    for (int i = 0; i < L; i++)
        CK(cudaLaunchCooperativeKernel((const void *)coop_sum, grid, 128, args, 0, 0));
    CK(cudaDeviceSynchronize());
    float out;
    CK(cudaMemcpy(&out, dout, sizeof out, cudaMemcpyDeviceToHost));
    return finish(out == (float)N, L);
}
