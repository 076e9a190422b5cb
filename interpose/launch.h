/* Owns: what every hook does around a real launch call, written once for
 * every API: fikit_launch_begin() after the hook described the launch (it
 * enters the gate, which may hold the launch), the real call, then
 * fikit_launch_end() (the gate's exit, and fikit's own time when
 * FIKIT_SELF_TIME asks for it). Also the other things hooks of every API
 * share: naming a graph launch, and forgetting kernel names when code is
 * unloaded. A hook that cannot describe its launch makes the real call alone. */
#ifndef FIKIT_INTERPOSE_LAUNCH_H
#define FIKIT_INTERPOSE_LAUNCH_H

#include "interpose/backend.h"
#include "interpose/gate.h"
#include "interpose/ptrmap.h"
#include "interpose/selftime.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct fikit_launch {
    struct fikit_launch_desc desc; /* filled by the hook before begin */
    struct fikit_gate gate;
    uint64_t t0, t1, t2;           /* FIKIT_SELF_TIME: entry, before and after the real call */
};

/* The hook's entry: t0, before it asks anything (fikit_selftime_now()). */
static inline void fikit_launch_start(struct fikit_launch *x) { x->t0 = fikit_selftime_now(); }

/* The launch described in x->desc goes through the gate; the real call
 * comes next. */
static inline void fikit_launch_begin(struct fikit_launch *x, const struct fikit_backend_ops *ops)
{
    fikit_gate_enter(&x->gate, ops, &x->desc);
    x->t2 = 0;
    x->t1 = fikit_selftime_now();
}

/* The real call returned (where the hook has more to do before _end). */
static inline void fikit_launch_returned(struct fikit_launch *x) { x->t2 = fikit_selftime_now(); }

/* launched: whether the real call succeeded. */
static inline void fikit_launch_end(struct fikit_launch *x, bool launched)
{
    if (!x->t2)
        fikit_launch_returned(x);
    fikit_gate_exit(&x->gate, &x->desc, launched);
    if (fikit_client.selftime_on)
        fikit_selftime_record(x->t0, x->t1, x->t2, fikit_now_ns());
}

/* A graph launch is one unit: named by the order in which this process
 * first launched it (its handle differs between runs; the order does not),
 * as "<prefix>-<n>". The name lives as long as the process. */
struct fikit_graph_names {
    struct fikit_ptrmap map;
    _Atomic unsigned count;
    const char *prefix;
};

#define FIKIT_GRAPH_NAMES_INIT(pfx) {.map = FIKIT_PTRMAP_INIT, .prefix = (pfx)}

const char *fikit_graph_name(struct fikit_graph_names *g, const void *exec);

/* Code was unloaded: kernel handles may be reused, so cached names go.
 * Returns the unload's own result: `return fikit_unloaded(real(m));` */
static inline int fikit_unloaded(int result)
{
    fikit_gate_forget_all_kernels();
    return result;
}

#endif
