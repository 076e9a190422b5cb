/* The one error check of the example programs (demo/) and of the
 * conformance cases (tests/conformance/): a call whose status is not the
 * API's success prints "file:line: the call: the API's error" on standard
 * error and exits 1. Include it after the API's header. */
#ifndef FIKIT_DEMO_CHECK_H
#define FIKIT_DEMO_CHECK_H

#include <stdio.h>
#include <stdlib.h>

/* fmt and its arguments describe the status e_. */
#define FIKIT_CHECK(status_t, ok, call, fmt, ...)                                                  \
    do {                                                                                           \
        status_t e_ = (call);                                                                      \
        if (e_ != (ok)) {                                                                          \
            fprintf(stderr, "%s:%d: %s: " fmt "\n", __FILE__, __LINE__, #call, __VA_ARGS__);       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#ifdef CL_SUCCESS
#define FIKIT_CHECK_CL(call) FIKIT_CHECK(cl_int, CL_SUCCESS, call, "OpenCL error %d", e_)
#endif
#ifdef CUDART_VERSION
#define FIKIT_CHECK_CUDA(call) FIKIT_CHECK(cudaError_t, cudaSuccess, call, "%s", cudaGetErrorString(e_))
#endif

#endif
