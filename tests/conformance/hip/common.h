/* Shared by the HIP conformance cases: error checks and the API's memory
 * calls; the kernel, the vectors and the runner's lines are in
 * ../common.h, shared with the CUDA cases. */
#pragma once
#include <hip/hip_runtime.h>

#include "../../../demo/check.h"

#include <cstdio>
#include <cstdlib>

#define CK(call)                                                                                   \
    FIKIT_CHECK(hipError_t, hipSuccess, call, "%s (%s)", hipGetErrorString(e_), hipGetErrorName(e_))

#define CONF_MALLOC(p, bytes) hipMalloc((p), (bytes))
#define CONF_TO_DEVICE(dst, src, bytes) hipMemcpy((dst), (src), (bytes), hipMemcpyHostToDevice)
#define CONF_TO_HOST(dst, src, bytes) hipMemcpy((dst), (src), (bytes), hipMemcpyDeviceToHost)
#define CONF_FREE(p) hipFree(p)

#include "../common.h"
