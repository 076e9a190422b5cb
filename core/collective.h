/* Owns: the collective rule (docs/DESIGN.md, "Collectives"). A kernel of a
 * collective that spans devices (an NCCL or RCCL all-reduce, broadcast,
 * send/receive...) waits inside the GPU for every other rank of it; holding
 * one rank's kernel stalls the ranks already running on other GPUs for the
 * length of the hold. So such a launch is never held, paced or made to look
 * again: where fikit_admit would do any of that, it goes at once; where it
 * fits a gap, it takes its room as any fill does. Which launches belong to a
 * collective: a kernel with "nccl" in its name (any case: NCCL's and RCCL's
 * kernels are all named so), or one launched from inside libnccl or librccl
 * (the interposer looks at the launch's callers once per kernel handle). */
#ifndef FIKIT_CORE_COLLECTIVE_H
#define FIKIT_CORE_COLLECTIVE_H

#include "core/admit.h"

#include <stdbool.h>
#include <stdint.h>

/* Whether a kernel of this name belongs to a collective. */
bool fikit_collective_kernel(const char *name);

/* Whether a launch made from code in the shared object at path (as dladdr
 * names it) belongs to a collective: libnccl*, librccl*. */
bool fikit_collective_library(const char *path);

/* fikit_admit for a launch that may belong to a collective: the same
 * answer for any other launch; for a collective, GO where fikit_admit would
 * hold, pace or recheck it, and FILL where it fills. */
void fikit_collective_admit(const struct fikit_view *v, uint64_t now, uint64_t dur_ns, bool collective,
                            struct fikit_admit *out);

#endif
