// Not a case: the busy priority-0 task that the suite's low-priority runs yield to.
// Launches a ~20 us kernel every 100 us for SECONDS.
#include "common.h"
#include <chrono>
#include <thread>
__global__ void spin_kernel(unsigned long long cycles)
{
    unsigned long long t0 = clock64();
    while (clock64() - t0 < cycles)
        ;
}
int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    long n = 0;
    while (std::chrono::steady_clock::now() < end) {
        spin_kernel<<<1, 32>>>(40000);
        CK(cudaStreamSynchronize(0));
        std::this_thread::sleep_for(std::chrono::microseconds(80));
        n++;
    }
    printf("launches %ld\n", n);
    return 0;
}
