// Host cost of one CUDA launch: times ROUNDS batches of N <<<>>> launches of an
// empty kernel (drained between batches, untimed) and prints the median ns per
// launch. Run with and without fikit for its added cost (bench/launch-cost).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>
#include <vector>

__global__ void empty_kernel() {}

static double now_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 500, rounds = argc > 2 ? atoi(argv[2]) : 31;
    if (n < 1 || rounds < 1) {
        fprintf(stderr, "Usage: fikit-bench-cuda-launch-cost [N [ROUNDS]]\n");
        return 2;
    }
    std::vector<double> per;
    for (int r = -3; r < rounds; r++) {
        double t0 = now_ns();
        for (int i = 0; i < n; i++)
            empty_kernel<<<1, 32>>>();
        double t1 = now_ns();
        if (cudaDeviceSynchronize() != cudaSuccess)
            return 1;
        if (r >= 0)
            per.push_back((t1 - t0) / n);
    }
    std::sort(per.begin(), per.end());
    printf("%.1f\n", per[per.size() / 2]);
    return 0;
}
