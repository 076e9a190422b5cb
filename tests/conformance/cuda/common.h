/* Shared by the CUDA conformance cases: error checks and the API's memory
 * calls; the kernel, the vectors and the runner's lines are in
 * ../common.h, shared with the HIP cases. */
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include "../../../demo/check.h"

#include <cstdio>
#include <cstdlib>

#define CK(call) FIKIT_CHECK_CUDA(call)

#define CU(call)                                                                                   \
    do {                                                                                           \
        CUresult e_ = (call);                                                                      \
        if (e_ != CUDA_SUCCESS) {                                                                  \
            const char *s_ = "?";                                                                  \
            cuGetErrorString(e_, &s_);                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_);                     \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define CONF_MALLOC(p, bytes) cudaMalloc((p), (bytes))
#define CONF_TO_DEVICE(dst, src, bytes) cudaMemcpy((dst), (src), (bytes), cudaMemcpyHostToDevice)
#define CONF_TO_HOST(dst, src, bytes) cudaMemcpy((dst), (src), (bytes), cudaMemcpyDeviceToHost)
#define CONF_FREE(p) cudaFree(p)

#include "../common.h"
