/* Owns: confining a HIP launch to part of the device's compute units (issue
 * 37, docs/DESIGN.md "SM shares per launch"): the HIP counterpart of
 * backends/cuda/cuda_confine.h. The launch goes into a stream made once per
 * process, device and size with hipExtStreamCreateWithCUMask (the first N
 * CUs), ordered against the program's stream by two events as on CUDA: the
 * masked stream waits for what the program's stream holds before the
 * launch, and the program's stream waits for the launch. Unlike a green
 * context, a CU mask needs no context of its own: any stream of the device
 * is a mask's neighbour, and a program's own masked streams cannot be told
 * apart (they are confined further, never less). */
#ifndef FIKIT_BACKENDS_HIP_CONFINE_H
#define FIKIT_BACKENDS_HIP_CONFINE_H

#include "interpose/backend.h"
#include "backends/hip/hip_backend.h"

#include <stdbool.h>
#include <stdint.h>

struct fikit_confine_lane;

struct fikit_hip_redirect {
    struct fikit_confine_lane *lane; /* held from begin to end */
    hipStream_t stream;          /* the masked stream to launch into */
    hipStream_t program;         /* the program's stream, as the runtime sees it */
    const char *failed;          /* set where confining cannot work in this process */
};

/* Prepares the launch l to go into a stream of pct % of its device's CUs
 * (at least one); the masked stream waits for the program's stream. False:
 * launch it as the program asked (the share is the whole device, or no
 * masked stream could be had: then r->failed says why). */
bool fikit_hip_confine_begin(const struct fikit_launch_desc *l, uint32_t pct, struct fikit_hip_redirect *r);

/* After the launch into r->stream. Taken: the program's stream waits for it;
 * true. Refused: false, and the hook launches it as the program asked. */
bool fikit_hip_confine_end(struct fikit_hip_redirect *r, hipError_t result);

#endif
