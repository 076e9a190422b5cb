/* Owns: confining a CUDA launch to part of the device's SMs (issue 37,
 * docs/DESIGN.md "SM shares"). The program's launch goes into a stream of a
 * green context made once per process, device and size, ordered against
 * the program's own stream by two events: the green stream waits for what
 * the program's stream holds before the launch, and the program's stream
 * waits for the launch, so every later operation on it (a launch, a copy,
 * an event the program records, a synchronisation) comes after the kernel
 * as if it had run there. Only launches in a device's primary context (the
 * runtime's) are moved; a program's own contexts and its own green
 * contexts' streams are left alone. */
#ifndef FIKIT_BACKENDS_CUDA_CONFINE_H
#define FIKIT_BACKENDS_CUDA_CONFINE_H

#include "interpose/backend.h"

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

struct fikit_confine_lane;
struct fikit_confine_part;

/* One launch being moved. */
struct fikit_cuda_redirect {
    struct fikit_confine_lane *lane; /* held from begin to end */
    struct fikit_confine_part *part; /* its green context */
    CUstream stream;              /* the green stream to launch into */
    CUstream program;             /* the program's stream, as the driver sees it */
    bool pushed;                  /* the green context is current around the launch */
    const char *failed;           /* set where confining will not work in this
                                   * process (why, for fikit_client_confine_failed) */
};

/* Prepares the launch l (its context current) to go into a green context
 * of pct % of the device's SMs (rounded up to the device's partition
 * size): the green stream is made to wait for the program's stream.
 * False: launch it as the program asked (another context, the program's
 * own green stream, a share that is the whole device, or no green context
 * could be had: then r->failed says why). */
bool fikit_cuda_confine_begin(const struct fikit_launch_desc *l, uint32_t pct, struct fikit_cuda_redirect *r);

/* The launch into r->stream returned result: whether to launch it into
 * r->stream once more, with the green context made current (some handles
 * are taken only so; remembered for the process). */
bool fikit_cuda_confine_retry(struct fikit_cuda_redirect *r, CUresult result);

/* After the launch into r->stream (result: its last answer). Taken: the
 * program's stream now waits for it; returns true. Refused: returns false
 * and the hook launches it as the program asked; where the driver refused
 * every one so far (8), r->failed says why. */
bool fikit_cuda_confine_end(struct fikit_cuda_redirect *r, CUresult result);

#endif
