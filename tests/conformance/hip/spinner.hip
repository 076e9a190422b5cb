// Not a case: the busy priority-0 task that the suite's low-priority runs yield to.
// Launches a ~20 us kernel every 100 us for SECONDS.
#include "common.h"
#include <chrono>
#include <thread>
__global__ void spin_kernel(long long ticks)
{
    long long t0 = clock64();
    while (clock64() - t0 < ticks)
        ;
}
int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    // clock64() counts shader cycles, whose rate varies with the GPU: calibrate.
    long long ticks = 2000;
    hipEvent_t a, b;
    CK(hipEventCreate(&a));
    CK(hipEventCreate(&b));
    for (int i = 0; i < 4; i++) {
        CK(hipEventRecord(a, 0));
        spin_kernel<<<1, 32>>>(ticks);
        CK(hipEventRecord(b, 0));
        CK(hipEventSynchronize(b));
        float ms = 0;
        CK(hipEventElapsedTime(&ms, a, b));
        if (ms > 0)
            ticks = (long long)(ticks * (0.020 / ms));
        if (ticks < 1)
            ticks = 1;
    }
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    long n = 0;
    while (std::chrono::steady_clock::now() < end) {
        spin_kernel<<<1, 32>>>(ticks);
        CK(hipStreamSynchronize(0));
        std::this_thread::sleep_for(std::chrono::microseconds(80));
        n++;
    }
    printf("launches %ld\n", n);
    return 0;
}
