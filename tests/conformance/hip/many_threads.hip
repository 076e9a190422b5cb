// Path: many threads, each on its own stream.
#include "common.h"
#include <thread>
int main()
{
    const int T = 16, L = 100;
    std::vector<int> good(T, 0);
    std::vector<std::thread> th;
    for (int t = 0; t < T; t++)
        th.emplace_back([&, t] {
            hipStream_t s;
            CK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
            Vectors v(1 << 12);
            for (int i = 0; i < L; i++)
                conf_axpy<<<(v.n + 255) / 256, 256, 0, s>>>(1.0f + t, v.dx, v.dy, v.n);
            CK(hipStreamSynchronize(s));
            v.expect_axpy(1.0f + t, L);
            good[t] = v.check();
        });
    for (auto &x : th)
        x.join();
    bool ok = true;
    for (int t = 0; t < T; t++)
        ok &= good[t] != 0;
    return finish(ok, (long)T * L);
}
