/* Owns: OpenCL in the core's terms: naming kernels, identifying devices,
 * and timing launches with command-queue profiling. Every call goes to the
 * next layer's dispatch table, set by the layer at clInitLayer. */
#ifndef FIKIT_BACKENDS_OPENCL_H
#define FIKIT_BACKENDS_OPENCL_H

#define CL_TARGET_OPENCL_VERSION 300
#include "interpose/backend.h"

#include <CL/cl_icd.h>

extern const struct fikit_backend_ops fikit_opencl_ops;
/* The descriptor, with the layer (opencl_layer.c). */
extern const struct fikit_backend fikit_opencl_backend;

/* The dispatch table below fikit's layer (the driver, or the next layer). */
void fikit_opencl_set_target(const struct _cl_icd_dispatch *target);
const struct _cl_icd_dispatch *fikit_opencl_target(void);

#endif
