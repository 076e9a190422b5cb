/* Owns: CUDA in the core's terms. The driver's functions fikit itself needs
 * (naming kernels, identifying devices, events, capture state) are looked
 * up at run time through the driver's own cuGetProcAddress, so libfikit.so
 * never links libcuda and costs nothing in programs that do not use it. */
#ifndef FIKIT_BACKENDS_CUDA_H
#define FIKIT_BACKENDS_CUDA_H

#include "interpose/backend.h"
#include "backends/capture.h"

#include <cuda.h>
#include <stdbool.h>

extern const struct fikit_backend_ops fikit_cuda_ops;
/* The descriptor, with the hooks (cuda_hooks.c). */
extern const struct fikit_backend fikit_cuda_backend;

/* The per-thread default stream, as a handle. */
#define FIKIT_CU_STREAM_PER_THREAD ((CUstream)0x2)

/* Fills l for a launch of kernel f (a CUfunction or CUkernel handle) on
 * stream s from an entry point with per-thread default-stream semantics
 * (ptsz). Returns false if there is no current context (the real call then
 * reports that). name: for launches that are not kernels (graphs). */
bool fikit_cuda_describe(struct fikit_launch_desc *l, void *f, CUstream s, bool ptsz,
                         const unsigned grid[3], const unsigned block[3], unsigned shmem,
                         const char *name);

/* Stream captures this process has open, kept by the capture hooks: while
 * there are none, launches need no capture query. */
extern struct fikit_captures fikit_cuda_captures;

/* The driver's cuGetProcAddress_v2, found by the interposer. */
typedef CUresult (*fikit_cu_get_proc_fn)(const char *, void **, int, cuuint64_t,
                                         CUdriverProcAddressQueryResult *);
void fikit_cuda_set_get_proc(fikit_cu_get_proc_fn fn);
/* A driver function by name and the ABI version it was written against;
 * NULL if the driver lacks it or is not reached yet. */
void *fikit_cuda_driver_proc(const char *name, int version);

#endif
