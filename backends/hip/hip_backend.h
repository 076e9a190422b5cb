/* Owns: HIP (ROCm) in the core's terms. The runtime functions fikit itself
 * needs (naming kernels, identifying devices, events, capture state) are
 * looked up at run time in the very libamdhip64 whose entry point the
 * program called, so libfikit.so never links libamdhip64 and costs nothing
 * in programs that do not use it. A device is a HIP device ordinal; a
 * kernel is either a host function (the address the runtime registered,
 * named with hipKernelNameRefByPtr) or a hipFunction_t (named with
 * hipKernelNameRef). */
#ifndef FIKIT_BACKENDS_HIP_H
#define FIKIT_BACKENDS_HIP_H

#include "interpose/backend.h"
#include "backends/capture.h"

/* hip_runtime_api.h is plain C on the AMD platform once it is selected. */
#if !defined(__HIP_PLATFORM_AMD__)
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include <stdbool.h>
#include <stdint.h>

extern const struct fikit_backend_ops fikit_hip_ops;
/* The descriptor, with the hooks (hip_hooks.c). */
extern const struct fikit_backend fikit_hip_backend;

/* The runtime's library names, newest first (NULL-terminated). */
extern const char *const fikit_hip_sonames[];

/* -------------------------------------------------------------------------
 * Declarations the installed headers may lack. hip_ext.h is C++ only
 * (default arguments), and entry points newer than the installed ROCm are
 * not declared at all, yet libfikit.so must interpose on them wherever the
 * runtime has them. These mirror the ABI of the ROCm release that added
 * each; fikit's wrappers that use them are given their exported names with
 * asm labels, so these never clash with a newer header's declarations. */

/* The per-thread default stream as a handle (ROCm 5.0). */
#ifndef hipStreamPerThread
#define hipStreamPerThread ((hipStream_t)2)
#endif

/* hipGetProcAddress (ROCm 6.1) and hipGetDriverEntryPoint (ROCm 7.1) flags. */
#define FIKIT_HIP_GPA_DEFAULT 0x0
#define FIKIT_HIP_GPA_LEGACY_STREAM 0x1
#define FIKIT_HIP_GPA_PER_THREAD_DEFAULT_STREAM 0x2

/* hipLaunchConfig_t (ROCm 6.5, hipLaunchKernelExC), as cudaLaunchConfig_t. */
struct fikit_hip_launch_config {
    dim3 gridDim;
    dim3 blockDim;
    size_t dynamicSmemBytes;
    hipStream_t stream;
    void *attrs;
    unsigned int numAttrs;
};

/* HIP_LAUNCH_CONFIG (ROCm 6.5, hipDrvLaunchKernelEx), as CUlaunchConfig. */
struct fikit_hip_drv_launch_config {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    hipStream_t hStream;
    void *attrs;
    unsigned int numAttrs;
};

/* hipFunctionLaunchParams (ROCm 5.5, hipModuleLaunchCooperativeKernelMultiDevice). */
struct fikit_hip_function_launch_params {
    hipFunction_t function;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    hipStream_t hStream;
    void **kernelParams;
};

/* ------------------------------------------------------------------ API */

/* How a launch's kernel argument is to be named. */
enum fikit_hip_kernel_kind {
    FIKIT_HIP_HOST_FUNCTION, /* a host function address: hipLaunchKernel and friends */
    FIKIT_HIP_FUNCTION,      /* a hipFunction_t: hipModuleLaunchKernel and friends */
    FIKIT_HIP_NAMED,         /* named by the caller (graphs) */
};

/* Finds the runtime functions fikit needs in the library that holds
 * real_entry (any real HIP entry point the program reached), looking them
 * up with sym (the C library's dlsym: never one that answers with fikit's
 * wrappers). Idempotent and thread-safe; returns 0, or -ENOENT if no
 * libamdhip64 is loaded or it lacks what fikit needs (HIP launches then run
 * unscheduled, after one warning). */
typedef void *(*fikit_hip_sym_fn)(void *handle, const char *name);
int fikit_hip_runtime_init(void *real_entry, fikit_hip_sym_fn sym);
/* The runtime library found by fikit_hip_runtime_init (a dlopen handle and
 * its path), or NULL before it succeeded. */
void *fikit_hip_runtime_handle(const char **path);

/* Fills l for a launch of kernel k on stream s from an entry point with
 * per-thread default-stream semantics (spt: a NULL stream then means
 * hipStreamPerThread). Returns false if no device can be named for it (no
 * device, an invalid stream, the runtime not found): the real call then
 * reports that, unchanged. name: for kind FIKIT_HIP_NAMED. l->kernel_kind
 * keeps kind: a host function and a hipFunction_t cannot be told apart from
 * the pointer alone when the gate asks ops->kernel_name(l). */
bool fikit_hip_describe(struct fikit_launch_desc *l, enum fikit_hip_kernel_kind kind,
                        const void *k, hipStream_t s, bool spt, const unsigned grid[3],
                        const unsigned block[3], size_t shmem, const char *name);

/* Stream captures this process has open, kept by the capture hooks: while
 * there are none, launches need no capture query. */
extern struct fikit_captures fikit_hip_captures;

#endif
