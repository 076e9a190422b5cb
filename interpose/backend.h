/* Owns: the one interface between the backend-neutral interposer and a
 * vendor API, in the spirit of the Linux DRM scheduler's
 * drm_sched_backend_ops: every backend (CUDA, HIP, OpenCL) fills one
 * struct fikit_backend_ops, and nothing outside backends/<api>/ knows the
 * API's types. No policy lives behind these pointers. Each backend also
 * describes itself to the interposer with one struct fikit_backend (its
 * ops, the entry points it replaces, the names it hooks, its libraries),
 * registered when libfikit.so loads; backends/README.md says what a new
 * one provides. */
#ifndef FIKIT_INTERPOSE_BACKEND_H
#define FIKIT_INTERPOSE_BACKEND_H

#include "core/kernel_id.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One launch, described in core terms by the interposer's hook. */
struct fikit_launch_desc {
    enum fikit_backend_kind backend;
    void *device;       /* the backend's device (cl_device_id, CUcontext...) */
    void *kernel;       /* the backend's kernel handle, for naming */
    int kernel_kind;    /* the backend's own tag of what kernel is, where the
                         * handle alone cannot tell (HIP: a host function or
                         * a hipFunction_t); 0 where it can */
    void *stream;       /* stream or queue: order is kept within one */
    uint32_t grid[3];   /* blocks, or OpenCL global size */
    uint32_t block[3];  /* threads per block, or OpenCL local size (0: unset) */
    uint32_t shmem;     /* dynamic shared memory bytes */
    const char *name;   /* set by the hook when it names the launch itself
                         * (graphs, native kernels); else NULL: ask the backend.
                         * Must outlive the launch: the learner thread reads
                         * a timed launch's name after the hook returned. */
    void *launch_event; /* OpenCL: the event the enqueue produced, if any */
};

/* Timing markers of one launch, owned by the backend until released. */
struct fikit_marker {
    void *a;
    void *b;
    void *ctx;
};

struct fikit_backend_ops {
    /* Aligned so that what every launch reads (kind, captures_open, and
     * marker_begin when it is timed) shares one cache line. */
    _Alignas(64) enum fikit_backend_kind kind;
    /* Whether the backend's hooks can confine a launch to part of the
     * device's SMs (struct fikit_gate's sm_pct; CUDA: green contexts). */
    bool confines;
    const char *name;

    /* The mangled name of l's kernel (l->kernel, non-NULL) into buf. 0 or a
     * negative errno. Asked only while l's launch is being gated. */
    int (*kernel_name)(const struct fikit_launch_desc *l, char *buf, size_t len);
    /* A key stable across processes for the launch's device (two programs
     * on one GPU must get the same key) and its model name. */
    int (*device_identity)(const struct fikit_launch_desc *l, char *key, size_t keylen,
                           char *model, size_t modellen);
    /* Whether the launch's stream is being captured into a graph: then it
     * is recorded, not run, and must be neither held, published nor timed.
     * Asked only while captures_open() (cheap) says one may be. */
    bool (*captures_open)(void);
    bool (*stream_capturing)(const struct fikit_launch_desc *l);
    /* Optional: whether the device computes on this host's CPUs (an OpenCL
     * CPU device such as PoCL), so that a thread spinning while it is held
     * takes a core from the device itself. */
    bool (*device_on_host)(const struct fikit_launch_desc *l);

    /* Timing, off the hot path: begin before the real launch, end after it
     * (the launch's own event, where the API has one, is in l). */
    int (*marker_begin)(const struct fikit_launch_desc *l, struct fikit_marker *m);
    int (*marker_end)(const struct fikit_launch_desc *l, struct fikit_marker *m);
    /* -EAGAIN until the launch completed. */
    int (*marker_duration)(struct fikit_marker *m, uint64_t *ns);
    /* The idle time between the end of prev and the start of next, both
     * complete; negative if they overlapped. */
    int (*marker_gap)(struct fikit_marker *prev, struct fikit_marker *next, int64_t *ns);
    void (*marker_release)(struct fikit_marker *m);
};

struct fikit_hook; /* interpose/hooks.h */

/* One vendor API as the interposer sees it. */
struct fikit_backend {
    const struct fikit_backend_ops *ops;
    /* The entry points replaced, ending with {NULL}: answered with fikit's
     * wrappers wherever the program looks them up. NULL for a backend that
     * enters another way (OpenCL: the layer entry points). */
    struct fikit_hook *hooks;
    /* The symbol filter: the first characters of every hooked name, so
     * that dlsym answers every other name without a table lookup. */
    const char *symbol_starts;
    /* The vendor's libraries, NULL-terminated, newest first: where a real
     * entry point is looked for when the dynamic linker's next definition
     * does not have it (the program opened the library in a local scope). */
    const char *const *libraries;
};

/* Defines a backend's descriptor, fikit_<api>_backend, with the given
 * fields (.ops, .hooks, .symbol_starts, .libraries), and registers it when
 * libfikit.so loads (fikit_backend_register, interpose/hooks.h). */
#define FIKIT_BACKEND_DEFINE(api, ...)                                                             \
    const struct fikit_backend fikit_##api##_backend = {__VA_ARGS__};                              \
    __attribute__((constructor)) static void fikit_register_##api(void)                           \
    {                                                                                              \
        fikit_backend_register(&fikit_##api##_backend);                                            \
    }

_Static_assert(offsetof(struct fikit_backend_ops, marker_begin) + sizeof(void *) <= 64,
               "what a launch reads of its backend's ops shares the first cache line");

#endif
