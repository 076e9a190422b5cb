// Path: stream capture into a graph, then hipGraphLaunch (one unit each).
#include "common.h"
int main()
{
    Vectors v(1 << 16);
    hipStream_t s;
    CK(hipStreamCreate(&s));
    hipGraph_t g;
    hipGraphExec_t e;
    CK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    for (int i = 0; i < 10; i++)
        conf_axpy<<<(v.n + 255) / 256, 256, 0, s>>>(0.5f, v.dx, v.dy, v.n);
    CK(hipStreamEndCapture(s, &g));
    CK(hipGraphInstantiate(&e, g, nullptr, nullptr, 0));
    const int G = 30;
    for (int i = 0; i < G; i++)
        CK(hipGraphLaunch(e, s));
    CK(hipStreamSynchronize(s));
    v.expect_axpy(0.5f, 10 * G);
    return finish(v.check(), G);
}
