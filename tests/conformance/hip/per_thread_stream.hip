// Path: built with -fgpu-default-stream=per-thread: launches on the per-thread default
// stream (hipLaunchKernel_spt).
#include "common.h"
#include <thread>
int main()
{
    const int T = 4, L = 50;
    bool ok = true;
    std::vector<std::thread> th;
    std::vector<int> good(T, 0);
    for (int t = 0; t < T; t++)
        th.emplace_back([&, t] {
            Vectors v(1 << 14);
            for (int i = 0; i < L; i++)
                conf_axpy<<<(v.n + 255) / 256, 256>>>(0.25f, v.dx, v.dy, v.n);
            CK(hipStreamSynchronize(hipStreamPerThread));
            v.expect_axpy(0.25f, L);
            good[t] = v.check();
        });
    for (auto &x : th)
        x.join();
    for (int t = 0; t < T; t++)
        ok &= good[t] != 0;
    return finish(ok, (long)T * L);
}
