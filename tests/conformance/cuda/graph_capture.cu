// Path: stream capture into a graph, then cudaGraphLaunch (one unit each).
#include "common.h"
int main()
{
    Vectors v(1 << 16);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cudaGraph_t g;
    cudaGraphExec_t e;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int i = 0; i < 10; i++)
        conf_axpy<<<(v.n + 255) / 256, 256, 0, s>>>(0.5f, v.dx, v.dy, v.n);
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&e, g, 0));
    const int G = 30;
    for (int i = 0; i < G; i++)
        CK(cudaGraphLaunch(e, s));
    CK(cudaStreamSynchronize(s));
    v.expect_axpy(0.5f, 10 * G);
    return finish(v.check(), G);
}
