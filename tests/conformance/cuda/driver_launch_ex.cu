// Path: cuLaunchKernelEx with launch attributes, on a kernel of the runtime.
#include "common.h"
int main()
{
    Vectors v(1 << 16);
    CUfunction fn;
    cudaFunction_t rf;
    CK(cudaGetFuncBySymbol(&rf, (const void *)conf_axpy));
    fn = (CUfunction)rf;
    float a = 1.5f;
    void *args[] = {&a, &v.dx, &v.dy, &v.n};
    CUlaunchAttribute attrs[2];
    attrs[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    attrs[0].value.priority = 0;
    attrs[1].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attrs[1].value.clusterDim.x = 2;
    attrs[1].value.clusterDim.y = 1;
    attrs[1].value.clusterDim.z = 1;
    CUlaunchConfig cfg = {};
    cfg.gridDimX = (v.n + 255) / 256;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 256;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.attrs = attrs;
    cfg.numAttrs = 2;
    const int L = 100;
    for (int i = 0; i < L; i++)
        CU(cuLaunchKernelEx(&cfg, fn, args, nullptr));
    CK(cudaDeviceSynchronize());
    v.expect_axpy(1.5f, L);
    return finish(v.check(), L);
}
