/* The CUDA entry into fikit: every driver entry point that launches work,
 * exported under its own name (found first by the dynamic linker through
 * LD_PRELOAD), and handed out in its place wherever the program looks it
 * up: dlsym on libcuda (interpose/hooks.c), and cuGetProcAddress, which is how
 * libcudart, and with it cuBLAS, cuDNN and PyTorch, reach the driver. */
#define __CUDA_API_VERSION_INTERNAL 1
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_confine.h"
#include "interpose/burst.h"
#include "interpose/hooks.h"
#include "interpose/launch.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const libcuda[] = {"libcuda.so.1", NULL};
#define EXPORT __attribute__((visibility("default")))

enum {
    H_LAUNCH, H_LAUNCH_PTSZ,
    H_LAUNCH_EX, H_LAUNCH_EX_PTSZ,
    H_COOP, H_COOP_PTSZ,
    H_GRAPH, H_GRAPH_PTSZ,
    H_GPA, H_GPA_V2, H_GPA_V2_PTSZ,
    H_MODULE_UNLOAD, H_LIBRARY_UNLOAD,
    H_CAP_V1, H_CAP_V1_PTSZ, H_CAP_V2, H_CAP_V2_PTSZ, H_CAP_GRAPH, H_CAP_GRAPH_PTSZ,
    H_CAP_END, H_CAP_END_PTSZ,
    H_SYNC_STREAM, H_SYNC_STREAM_PTSZ, H_SYNC_CTX, H_SYNC_EVENT, H_DTOH, H_DTOH_PTDS,
    H_COUNT
};

/* Wrappers, defined below. */
EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                       unsigned, unsigned, CUstream, void **, void **);
EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                            unsigned, unsigned, unsigned, CUstream, void **, void **);
EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *, CUfunction, void **, void **);
EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **, void **);
EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                                  unsigned, unsigned, unsigned, CUstream, void **);
EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction, unsigned, unsigned, unsigned,
                                                       unsigned, unsigned, unsigned, unsigned,
                                                       CUstream, void **);
EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec, CUstream);
EXPORT CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec, CUstream);
EXPORT CUresult CUDAAPI cuGetProcAddress(const char *, void **, int, cuuint64_t);
EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
                                            CUdriverProcAddressQueryResult *);
EXPORT CUresult CUDAAPI cuGetProcAddress_v2_ptsz(const char *, void **, int, cuuint64_t,
                                                 CUdriverProcAddressQueryResult *);
EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule);
EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary);
EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream);
EXPORT CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream);
EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream, CUstreamCaptureMode);
EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
EXPORT CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream, CUgraph, const CUgraphNode *,
                                                    const CUgraphEdgeData *, size_t,
                                                    CUstreamCaptureMode);
EXPORT CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream, CUgraph, const CUgraphNode *,
                                                         const CUgraphEdgeData *, size_t,
                                                         CUstreamCaptureMode);
EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream, CUgraph *);
EXPORT CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream, CUgraph *);
EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream);
EXPORT CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream);
EXPORT CUresult CUDAAPI cuCtxSynchronize(void);
EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent);
EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2(void *, CUdeviceptr, size_t);
EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *, CUdeviceptr, size_t);

#define HOOK(name, fn) {name, (void *)(fn), NULL, libcuda}

static struct fikit_hook hooks[H_COUNT + 1] = {
    [H_LAUNCH] = HOOK("cuLaunchKernel", cuLaunchKernel),
    [H_LAUNCH_PTSZ] = HOOK("cuLaunchKernel_ptsz", cuLaunchKernel_ptsz),
    [H_LAUNCH_EX] = HOOK("cuLaunchKernelEx", cuLaunchKernelEx),
    [H_LAUNCH_EX_PTSZ] = HOOK("cuLaunchKernelEx_ptsz", cuLaunchKernelEx_ptsz),
    [H_COOP] = HOOK("cuLaunchCooperativeKernel", cuLaunchCooperativeKernel),
    [H_COOP_PTSZ] = HOOK("cuLaunchCooperativeKernel_ptsz", cuLaunchCooperativeKernel_ptsz),
    [H_GRAPH] = HOOK("cuGraphLaunch", cuGraphLaunch),
    [H_GRAPH_PTSZ] = HOOK("cuGraphLaunch_ptsz", cuGraphLaunch_ptsz),
    [H_GPA] = HOOK("cuGetProcAddress", cuGetProcAddress),
    [H_GPA_V2] = HOOK("cuGetProcAddress_v2", cuGetProcAddress_v2),
    [H_GPA_V2_PTSZ] = HOOK("cuGetProcAddress_v2_ptsz", cuGetProcAddress_v2_ptsz),
    [H_MODULE_UNLOAD] = HOOK("cuModuleUnload", cuModuleUnload),
    [H_LIBRARY_UNLOAD] = HOOK("cuLibraryUnload", cuLibraryUnload),
    [H_CAP_V1] = HOOK("cuStreamBeginCapture", cuStreamBeginCapture),
    [H_CAP_V1_PTSZ] = HOOK("cuStreamBeginCapture_ptsz", cuStreamBeginCapture_ptsz),
    [H_CAP_V2] = HOOK("cuStreamBeginCapture_v2", cuStreamBeginCapture_v2),
    [H_CAP_V2_PTSZ] = HOOK("cuStreamBeginCapture_v2_ptsz", cuStreamBeginCapture_v2_ptsz),
    [H_CAP_GRAPH] = HOOK("cuStreamBeginCaptureToGraph", cuStreamBeginCaptureToGraph),
    [H_CAP_GRAPH_PTSZ] = HOOK("cuStreamBeginCaptureToGraph_ptsz", cuStreamBeginCaptureToGraph_ptsz),
    [H_CAP_END] = HOOK("cuStreamEndCapture", cuStreamEndCapture),
    [H_CAP_END_PTSZ] = HOOK("cuStreamEndCapture_ptsz", cuStreamEndCapture_ptsz),
    [H_SYNC_STREAM] = HOOK("cuStreamSynchronize", cuStreamSynchronize),
    [H_SYNC_STREAM_PTSZ] = HOOK("cuStreamSynchronize_ptsz", cuStreamSynchronize_ptsz),
    [H_SYNC_CTX] = HOOK("cuCtxSynchronize", cuCtxSynchronize),
    [H_SYNC_EVENT] = HOOK("cuEventSynchronize", cuEventSynchronize),
    [H_DTOH] = HOOK("cuMemcpyDtoH_v2", cuMemcpyDtoH_v2),
    [H_DTOH_PTDS] = HOOK("cuMemcpyDtoH_v2_ptds", cuMemcpyDtoH_v2_ptds),
    [H_COUNT] = {NULL, NULL, NULL, NULL},
};

/* CUDA as the interposer sees it. */
FIKIT_BACKEND_DEFINE(cuda, .ops = &fikit_cuda_ops, .hooks = hooks, .symbol_starts = "c", .libraries = libcuda)

/* fikit's own driver calls go through the driver's cuGetProcAddress. */
static void driver_ready(void)
{
    static _Atomic int done;
    if (atomic_load_explicit(&done, memory_order_acquire))
        return;
    void *gpa = fikit_hook_real(&hooks[H_GPA_V2]);
    if (gpa) {
        fikit_cuda_set_get_proc((fikit_cu_get_proc_fn)gpa);
        atomic_store_explicit(&done, 1, memory_order_release);
    }
}

#define REAL(id, type) ((type)fikit_hook_real(&hooks[id]))

/* ------------------------------------------------------------ launches */

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*launch_ex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
typedef CUresult (*coop_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            unsigned, CUstream, void **);
typedef CUresult (*graph_fn)(CUgraphExec, CUstream);

/* A graph launch is one unit, named by the order of its first launch. */
static struct fikit_graph_names graph_names = FIKIT_GRAPH_NAMES_INIT("cuda-graph");

/* Describes one launch into x and enters the gate; false when CUDA is not
 * scheduled or there is no current context: the hook then makes the real
 * call alone. graph: f is a graph, named only once it is to be gated. */
static bool begin(struct fikit_launch *x, bool ptsz, void *f, CUstream s, const unsigned grid[3],
                  const unsigned block[3], unsigned shmem, bool graph)
{
    fikit_launch_start(x);
    if (!fikit_client_wants(FIKIT_BACKEND_CUDA))
        return false;
    driver_ready();
    const char *name = graph ? fikit_graph_name(&graph_names, f) : NULL;
    if (!fikit_cuda_describe(&x->desc, f, s, ptsz, grid, block, shmem, name))
        return false;
    fikit_launch_begin(x, &fikit_cuda_ops);
    return true;
}

static CUresult end(struct fikit_launch *x, CUresult r)
{
    fikit_launch_end(x, r == CUDA_SUCCESS);
    return r;
}

/* Where the gate confines the launch to part of the SMs (x->gate.sm_pct):
 * into a green context's stream, ordered against the program's
 * (backends/cuda/cuda_confine.h). False: it goes as the program asked. */
static bool confine_begin(struct fikit_launch *x, struct fikit_cuda_redirect *rd)
{
    if (!x->gate.sm_pct)
        return false;
    if (fikit_cuda_confine_begin(&x->desc, x->gate.sm_pct, rd))
        return true;
    if (rd->failed)
        fikit_client_confine_failed(rd->failed);
    return false;
}

static bool confine_end(struct fikit_cuda_redirect *rd, CUresult r)
{
    if (fikit_cuda_confine_end(rd, r))
        return true;
    if (rd->failed)
        fikit_client_confine_failed(rd->failed);
    return false;
}

static CUresult launch(int id, bool ptsz, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream s,
                       void **params, void **extra)
{
    launch_fn real = REAL(id, launch_fn);
    if (!real)
        return CUDA_ERROR_NOT_FOUND;
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    struct fikit_launch x;
    if (!begin(&x, ptsz, (void *)f, s, grid, block, shmem, false))
        return real(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
    struct fikit_cuda_redirect rd;
    if (confine_begin(&x, &rd)) {
        CUresult r = real(f, gx, gy, gz, bx, by, bz, shmem, rd.stream, params, extra);
        if (fikit_cuda_confine_retry(&rd, r))
            r = real(f, gx, gy, gz, bx, by, bz, shmem, rd.stream, params, extra);
        if (confine_end(&rd, r))
            return end(&x, r);
    }
    return end(&x, real(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra));
}

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                       CUstream s, void **params, void **extra)
{
    return launch(H_LAUNCH, false, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                            unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                                            CUstream s, void **params, void **extra)
{
    return launch(H_LAUNCH_PTSZ, true, f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}

/* A launch with attributes moves only where none of them ties it to the
 * whole device or to its stream: clusters need their SMs together,
 * cooperative grids all their blocks resident, and a programmatic or
 * completion event dependency names the stream it was launched into. */
static bool attributes_confinable(const CUlaunchConfig *c)
{
    for (unsigned i = 0; i < c->numAttrs; i++)
        switch (c->attrs[i].id) {
        case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
            break;
        default:
            return false;
        }
    return true;
}

static CUresult launch_ex(int id, bool ptsz, const CUlaunchConfig *c, CUfunction f, void **params,
                          void **extra)
{
    launch_ex_fn real = REAL(id, launch_ex_fn);
    if (!real)
        return CUDA_ERROR_NOT_FOUND;
    if (!c)
        return real(c, f, params, extra);
    const unsigned grid[3] = {c->gridDimX, c->gridDimY, c->gridDimZ};
    const unsigned block[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
    struct fikit_launch x;
    if (!begin(&x, ptsz, (void *)f, c->hStream, grid, block, c->sharedMemBytes, false))
        return real(c, f, params, extra);
    struct fikit_cuda_redirect rd;
    if (attributes_confinable(c) && confine_begin(&x, &rd)) {
        CUlaunchConfig moved = *c;
        moved.hStream = rd.stream;
        CUresult r = real(&moved, f, params, extra);
        if (fikit_cuda_confine_retry(&rd, r))
            r = real(&moved, f, params, extra);
        if (confine_end(&rd, r))
            return end(&x, r);
    }
    return end(&x, real(c, f, params, extra));
}

EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
                                         void **extra)
{
    return launch_ex(H_LAUNCH_EX, false, c, f, params, extra);
}

EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params,
                                              void **extra)
{
    return launch_ex(H_LAUNCH_EX_PTSZ, true, c, f, params, extra);
}

static CUresult coop(int id, bool ptsz, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                     unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params)
{
    coop_fn real = REAL(id, coop_fn);
    if (!real)
        return CUDA_ERROR_NOT_FOUND;
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    struct fikit_launch x;
    if (!begin(&x, ptsz, (void *)f, s, grid, block, shmem, false))
        return real(f, gx, gy, gz, bx, by, bz, shmem, s, params);
    return end(&x, real(f, gx, gy, gz, bx, by, bz, shmem, s, params));
}

EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                                  unsigned bx, unsigned by, unsigned bz,
                                                  unsigned shmem, CUstream s, void **params)
{
    return coop(H_COOP, false, f, gx, gy, gz, bx, by, bz, shmem, s, params);
}

EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy,
                                                       unsigned gz, unsigned bx, unsigned by,
                                                       unsigned bz, unsigned shmem, CUstream s,
                                                       void **params)
{
    return coop(H_COOP_PTSZ, true, f, gx, gy, gz, bx, by, bz, shmem, s, params);
}

static CUresult graph(int id, bool ptsz, CUgraphExec exec, CUstream s)
{
    graph_fn real = REAL(id, graph_fn);
    if (!real)
        return CUDA_ERROR_NOT_FOUND;
    struct fikit_launch x;
    if (!begin(&x, ptsz, (void *)exec, s, NULL, NULL, 0, true))
        return real(exec, s);
    return end(&x, real(exec, s));
}

EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec exec, CUstream s) { return graph(H_GRAPH, false, exec, s); }

EXPORT CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec exec, CUstream s)
{
    return graph(H_GRAPH_PTSZ, true, exec, s);
}

/* Unloading code invalidates kernel handles, which may then be reused. */
EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule m)
{
    CUresult (*real)(CUmodule) = REAL(H_MODULE_UNLOAD, CUresult(*)(CUmodule));
    return fikit_unloaded(real ? real(m) : CUDA_ERROR_NOT_FOUND);
}

EXPORT CUresult CUDAAPI cuLibraryUnload(CUlibrary lib)
{
    CUresult (*real)(CUlibrary) = REAL(H_LIBRARY_UNLOAD, CUresult(*)(CUlibrary));
    return fikit_unloaded(real ? real(lib) : CUDA_ERROR_NOT_FOUND);
}

/* ---------------------------------------------------------------- waits */

/* The waits by which a program learns that its work is done: each ends the
 * task's open burst when nothing was launched while it waited
 * (interpose/burst.h). Polling (cuStreamQuery, cuEventQuery) is not one. */
#define WAIT(id, type, ...)                                                                                \
    do {                                                                                                   \
        type real = REAL(id, type);                                                                        \
        if (!real)                                                                                         \
            return CUDA_ERROR_NOT_FOUND;                                                                   \
        FIKIT_BURST_WAIT(CUresult, CUDA_SUCCESS, real(__VA_ARGS__));                                       \
    } while (0)

typedef CUresult (*stream_fn)(CUstream);
typedef CUresult (*ctx_sync_fn)(void);
typedef CUresult (*event_fn)(CUevent);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);

EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream s) { WAIT(H_SYNC_STREAM, stream_fn, s); }
EXPORT CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream s) { WAIT(H_SYNC_STREAM_PTSZ, stream_fn, s); }
EXPORT CUresult CUDAAPI cuCtxSynchronize(void) { WAIT(H_SYNC_CTX, ctx_sync_fn); }
EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent e) { WAIT(H_SYNC_EVENT, event_fn, e); }
EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { WAIT(H_DTOH, dtoh_fn, dst, src, n); }
EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
    WAIT(H_DTOH_PTDS, dtoh_fn, dst, src, n);
}

/* ------------------------------------------------------ stream capture */

/* Counting open captures lets every other launch skip the capture query. */
#define BEGAN(call) FIKIT_CAPTURE_BEGAN(&fikit_cuda_captures, CUresult, CUDA_SUCCESS, call)

EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream s)
{
    CUresult (*real)(CUstream) = REAL(H_CAP_V1, CUresult(*)(CUstream));
    BEGAN(real ? real(s) : CUDA_ERROR_NOT_FOUND);
}

EXPORT CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream s)
{
    CUresult (*real)(CUstream) = REAL(H_CAP_V1_PTSZ, CUresult(*)(CUstream));
    BEGAN(real ? real(s) : CUDA_ERROR_NOT_FOUND);
}

typedef CUresult (*cap_v2_fn)(CUstream, CUstreamCaptureMode);

EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode m)
{
    cap_v2_fn real = REAL(H_CAP_V2, cap_v2_fn);
    BEGAN(real ? real(s, m) : CUDA_ERROR_NOT_FOUND);
}

EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode m)
{
    cap_v2_fn real = REAL(H_CAP_V2_PTSZ, cap_v2_fn);
    BEGAN(real ? real(s, m) : CUDA_ERROR_NOT_FOUND);
}

typedef CUresult (*cap_graph_fn)(CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *,
                                 size_t, CUstreamCaptureMode);

EXPORT CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *d,
                                                    const CUgraphEdgeData *e, size_t n,
                                                    CUstreamCaptureMode m)
{
    cap_graph_fn real = REAL(H_CAP_GRAPH, cap_graph_fn);
    BEGAN(real ? real(s, g, d, e, n, m) : CUDA_ERROR_NOT_FOUND);
}

EXPORT CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g, const CUgraphNode *d,
                                                         const CUgraphEdgeData *e, size_t n,
                                                         CUstreamCaptureMode m)
{
    cap_graph_fn real = REAL(H_CAP_GRAPH_PTSZ, cap_graph_fn);
    BEGAN(real ? real(s, g, d, e, n, m) : CUDA_ERROR_NOT_FOUND);
}

typedef CUresult (*cap_end_fn)(CUstream, CUgraph *);

EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream s, CUgraph *g)
{
    cap_end_fn real = REAL(H_CAP_END, cap_end_fn);
    CUresult r = real ? real(s, g) : CUDA_ERROR_NOT_FOUND;
    fikit_captures_ended(&fikit_cuda_captures); /* ended, successfully or not */
    return r;
}

EXPORT CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{
    cap_end_fn real = REAL(H_CAP_END_PTSZ, cap_end_fn);
    CUresult r = real ? real(s, g) : CUDA_ERROR_NOT_FOUND;
    fikit_captures_ended(&fikit_cuda_captures);
    return r;
}

/* --------------------------------------------------- cuGetProcAddress */

/* The hook for a query: the variant the driver returned for this name and
 * stream flag. Returns -1 for names fikit does not replace. */
static int hook_for(const char *symbol, int version, cuuint64_t flags)
{
    static const struct {
        const char *base;
        int legacy, per_thread;
        int min_version; /* the version from which the base name means this ABI */
    } map[] = {
        {"cuLaunchKernel", H_LAUNCH, H_LAUNCH_PTSZ, 0},
        {"cuLaunchKernelEx", H_LAUNCH_EX, H_LAUNCH_EX_PTSZ, 0},
        {"cuLaunchCooperativeKernel", H_COOP, H_COOP_PTSZ, 0},
        {"cuGraphLaunch", H_GRAPH, H_GRAPH_PTSZ, 0},
        {"cuModuleUnload", H_MODULE_UNLOAD, H_MODULE_UNLOAD, 0},
        {"cuLibraryUnload", H_LIBRARY_UNLOAD, H_LIBRARY_UNLOAD, 0},
        /* cuStreamBeginCapture took a mode from 10.1 on (_v2). */
        {"cuStreamBeginCapture", H_CAP_V2, H_CAP_V2_PTSZ, 10010},
        {"cuStreamBeginCapture", H_CAP_V1, H_CAP_V1_PTSZ, 0},
        {"cuStreamBeginCaptureToGraph", H_CAP_GRAPH, H_CAP_GRAPH_PTSZ, 0},
        {"cuStreamEndCapture", H_CAP_END, H_CAP_END_PTSZ, 0},
        {"cuStreamSynchronize", H_SYNC_STREAM, H_SYNC_STREAM_PTSZ, 0},
        {"cuCtxSynchronize", H_SYNC_CTX, H_SYNC_CTX, 0},
        {"cuEventSynchronize", H_SYNC_EVENT, H_SYNC_EVENT, 0},
        /* before 3.2 the name meant 32-bit sizes: not replaced */
        {"cuMemcpyDtoH", H_DTOH, H_DTOH_PTDS, 3020},
    };
    if (!symbol || symbol[0] != 'c')
        return -1;
    if (strcmp(symbol, "cuGetProcAddress") == 0)
        return version >= 12000 ? H_GPA_V2 : H_GPA;
    bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (version >= map[i].min_version && strcmp(symbol, map[i].base) == 0)
            return per_thread ? map[i].per_thread : map[i].legacy;
    return -1;
}

/* The driver answered real for (symbol, version, flags): the program gets
 * fikit's wrapper of exactly that variant, which calls real. */
static void answer(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    int id = pfn && *pfn ? hook_for(symbol, version, flags) : -1;
    if (id >= 0)
        fikit_hook_take(&hooks[id], pfn);
}

typedef CUresult (*gpa_v1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa_v2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    gpa_v1_fn real = REAL(H_GPA, gpa_v1_fn);
    if (!real)
        return CUDA_ERROR_NOT_FOUND;
    CUresult r = real(symbol, pfn, version, flags);
    if (r == CUDA_SUCCESS)
        answer(symbol, pfn, version, flags);
    return r;
}

/* The v2 queries: the real one's answer, fikit's wrapper where it hooks
 * the name (as the per-thread-stream variant when the _ptsz query asked). */
static CUresult gpa_v2(gpa_v2_fn real, const char *symbol, void **pfn, int version, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status, cuuint64_t answer_flags)
{
    if (!real)
        return CUDA_ERROR_NOT_FOUND;
    CUresult r = real(symbol, pfn, version, flags, status);
    if (r == CUDA_SUCCESS)
        answer(symbol, pfn, version, answer_flags);
    return r;
}

EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
                                            cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    return gpa_v2(REAL(H_GPA_V2, gpa_v2_fn), symbol, pfn, version, flags, status, flags);
}

EXPORT CUresult CUDAAPI cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int version,
                                                 cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    gpa_v2_fn real = REAL(H_GPA_V2_PTSZ, gpa_v2_fn);
    if (!real)
        real = REAL(H_GPA_V2, gpa_v2_fn);
    return gpa_v2(real, symbol, pfn, version, flags, status,
                  flags | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
}
