/* Launch structures of the HIP runtime as ROCm lays them out, written here
 * for the tests (the runtime double and the programs that call it) rather
 * than taken from backends/hip: a test that shares the backend's own
 * definition could not notice a wrong one. Include after
 * <hip/hip_runtime_api.h>. */
#ifndef FIKIT_TESTS_HIP_ROCM_ABI_H
#define FIKIT_TESTS_HIP_ROCM_ABI_H

struct launch_config { /* hipLaunchConfig_t, ROCm 6.5 */
    dim3 grid, block;
    size_t shmem;
    hipStream_t stream;
    void *attrs;
    unsigned n;
};
struct drv_launch_config { /* HIP_LAUNCH_CONFIG, ROCm 6.5 */
    unsigned g[3], b[3], shmem;
    hipStream_t stream;
    void *attrs;
    unsigned n;
};
struct function_launch_params { /* hipFunctionLaunchParams, ROCm 5.5 */
    hipFunction_t f;
    unsigned g[3], b[3], shmem;
    hipStream_t stream;
    void **params;
};

#endif
