/* A stand-in for libnccl.so.2 against the CUDA driver double: its one
 * collective launches a kernel whose name says nothing of NCCL
 * (_Z9reduce_inPffi), as NCCL's own launches reach the driver from inside
 * libnccl. fikit must know the launch as a collective by the library it
 * came from (docs/DESIGN.md, "Collectives"). */
#include <cuda.h>

#define EXPORT __attribute__((visibility("default")))

/* x := x * s over n floats on the current context's device; the kernel is
 * looked up in the caller's module. */
EXPORT CUresult fake_nccl_all_reduce(CUmodule mod, CUdeviceptr x, float s, int n, CUstream stream)
{
    CUfunction f;
    CUresult r = cuModuleGetFunction(&f, mod, "_Z9reduce_inPffi");
    if (r != CUDA_SUCCESS)
        return r;
    void *params[] = {&x, &s, &n};
    r = cuLaunchKernel(f, (unsigned)(n + 63) / 64, 1, 1, 64, 1, 1, 0, stream, params, NULL);
    /* Not a tail call: NCCL's frame stays on the stack under the launch. */
    __asm__ volatile("" ::: "memory");
    return r;
}
