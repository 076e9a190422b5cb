// Host cost of one CUDA launch: times ROUNDS batches of N <<<>>> launches of an
// empty kernel (drained between batches, untimed) and prints the median ns per
// launch. Run with and without fikit for its added cost (bench/launch-cost).
// With COLD_KB > 0, every launch is timed by itself and followed, untimed, by a
// pass over COLD_KB kilobytes of other memory, so the launch path runs cold.
// A fourth argument, p99, prints a second line: the p99 of those single
// launches (with COLD_KB > 0; bench/h200/confine-cost.sh).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cstdint>
#include <cuda_runtime.h>
#include <string>
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
    long cold_kb = argc > 3 ? atol(argv[3]) : 0;
    if (n < 1 || rounds < 1 || cold_kb < 0) {
        fprintf(stderr, "Usage: fikit-bench-cuda-launch-cost [N [ROUNDS [COLD_KB]]]\n");
        return 2;
    }
    std::vector<uint64_t> cold((size_t)cold_kb * 1024 / sizeof(uint64_t));
    bool p99 = argc > 4 && std::string(argv[4]) == "p99";
    std::vector<double> per, each;
    for (int r = -3; r < rounds; r++) {
        double t0 = now_ns(), spent = 0;
        for (int i = 0; i < n; i++) {
            double a = cold_kb ? now_ns() : 0;
            empty_kernel<<<1, 32>>>();
            if (cold_kb) {
                double t = now_ns() - a;
                spent += t;
                if (p99 && r >= 0)
                    each.push_back(t);
                for (size_t w = 0; w < cold.size(); w += 8) // one word per cache line
                    cold[w] += (uint64_t)i;
            }
        }
        double t1 = now_ns();
        if (cudaDeviceSynchronize() != cudaSuccess)
            return 1;
        if (r >= 0)
            per.push_back((cold_kb ? spent : t1 - t0) / n);
    }
    std::sort(per.begin(), per.end());
    printf("%.1f\n", per[per.size() / 2]);
    if (p99 && !each.empty()) {
        std::sort(each.begin(), each.end());
        printf("p99 %.1f\n", each[each.size() * 99 / 100]);
    }
    return 0;
}
