/* The HIP entry into fikit: every libamdhip64 entry point that launches
 * work, exported under its own name (found first by the dynamic linker
 * through LD_PRELOAD), and handed out in its place wherever the program
 * looks it up: dlsym on a libamdhip64 it opened itself (interpose/hooks.c), and the
 * runtime's own hipGetProcAddress / hipGetDriverEntryPoint (ROCm 6.1+, 7.1+).
 * Which of these the installed ROCm exports is found at run time; a missing
 * one is not an error (the debug log lists them). Also here: the stream
 * capture hooks that count open captures, code unloading (cached names go),
 * and hipConfigureCall, which gives hipLaunchByPtr its geometry.
 *
 * Some wrappers are defined under another C name with an asm label giving
 * the exported one: entry points newer than the installed headers (their
 * types are declared in hip_backend.h), the _spt variants (declared by some
 * ROCm headers only), and the C++-mangled names under which ROCm 5 exports
 * hipExtModuleLaunchKernel and hipHccModuleLaunchKernel. */
#include "backends/hip/hip_backend.h"
#include "backends/hip/hip_confine.h"
#include "core/log.h"
#include "interpose/burst.h"
#include "interpose/hooks.h"
#include "interpose/launch.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define AS(sym) __asm__(sym)

/* ROCm <= 5.x exports these two as C++ functions. */
#define EXT_MODULE_CXX "_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j"
#define HCC_MODULE_CXX "_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_"

enum {
    H_LAUNCH, H_LAUNCH_SPT,
    H_EXT_LAUNCH,
    H_COOP, H_COOP_SPT,
    H_COOP_MULTI, H_EXT_MULTI,
    H_MODULE, H_MODULE_COOP, H_MODULE_COOP_MULTI,
    H_EXT_MODULE, H_EXT_MODULE_CXX, H_HCC_MODULE, H_HCC_MODULE_CXX,
    H_LAUNCH_EXC, H_DRV_LAUNCH_EX,
    H_BY_PTR, H_CONFIGURE,
    H_GRAPH, H_GRAPH_SPT,
    H_GPA, H_GPA_SPT, H_GDEP, H_GDEP_SPT,
    H_MODULE_UNLOAD, H_LIBRARY_UNLOAD,
    H_CAP, H_CAP_SPT, H_CAP_TO_GRAPH, H_CAP_END, H_CAP_END_SPT,
    H_SYNC_STREAM, H_SYNC_STREAM_SPT, H_SYNC_DEVICE, H_SYNC_EVENT,
    H_COUNT
};

/* ------------------------------------------------------ the wrappers */

typedef int fikit_hip_query_result; /* hipDriverProcAddressQueryResult, an enum */

EXPORT hipError_t hipLaunchKernel(const void *, dim3, dim3, void **, size_t, hipStream_t);
EXPORT hipError_t w_hipLaunchKernel_spt(const void *, dim3, dim3, void **, size_t, hipStream_t)
    AS("hipLaunchKernel_spt");
EXPORT hipError_t hipExtLaunchKernel(const void *, dim3, dim3, void **, size_t, hipStream_t,
                                     hipEvent_t, hipEvent_t, int);
EXPORT hipError_t hipLaunchCooperativeKernel(const void *, dim3, dim3, void **, unsigned int,
                                             hipStream_t);
EXPORT hipError_t w_hipLaunchCooperativeKernel_spt(const void *, dim3, dim3, void **, unsigned int,
                                                   hipStream_t) AS("hipLaunchCooperativeKernel_spt");
EXPORT hipError_t hipLaunchCooperativeKernelMultiDevice(hipLaunchParams *, int, unsigned int);
EXPORT hipError_t hipExtLaunchMultiKernelMultiDevice(hipLaunchParams *, int, unsigned int);
EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t, unsigned int, unsigned int, unsigned int,
                                        unsigned int, unsigned int, unsigned int, unsigned int,
                                        hipStream_t, void **, void **);
EXPORT hipError_t w_hipModuleLaunchCooperativeKernel(hipFunction_t, unsigned int, unsigned int,
                                                     unsigned int, unsigned int, unsigned int,
                                                     unsigned int, unsigned int, hipStream_t, void **)
    AS("hipModuleLaunchCooperativeKernel");
EXPORT hipError_t w_hipModuleLaunchCooperativeKernelMultiDevice(
    struct fikit_hip_function_launch_params *, unsigned int, unsigned int)
    AS("hipModuleLaunchCooperativeKernelMultiDevice");
EXPORT hipError_t w_hipExtModuleLaunchKernel(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                             uint32_t, uint32_t, size_t, hipStream_t, void **,
                                             void **, hipEvent_t, hipEvent_t, uint32_t)
    AS("hipExtModuleLaunchKernel");
EXPORT hipError_t w_hipExtModuleLaunchKernel_cxx(hipFunction_t, uint32_t, uint32_t, uint32_t,
                                                 uint32_t, uint32_t, uint32_t, size_t, hipStream_t,
                                                 void **, void **, hipEvent_t, hipEvent_t, uint32_t)
    AS(EXT_MODULE_CXX);
EXPORT hipError_t w_hipHccModuleLaunchKernel(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                             uint32_t, uint32_t, size_t, hipStream_t, void **,
                                             void **, hipEvent_t, hipEvent_t)
    AS("hipHccModuleLaunchKernel");
EXPORT hipError_t w_hipHccModuleLaunchKernel_cxx(hipFunction_t, uint32_t, uint32_t, uint32_t,
                                                 uint32_t, uint32_t, uint32_t, size_t, hipStream_t,
                                                 void **, void **, hipEvent_t, hipEvent_t)
    AS(HCC_MODULE_CXX);
EXPORT hipError_t w_hipLaunchKernelExC(const struct fikit_hip_launch_config *, const void *, void **)
    AS("hipLaunchKernelExC");
EXPORT hipError_t w_hipDrvLaunchKernelEx(const struct fikit_hip_drv_launch_config *, hipFunction_t,
                                         void **, void **) AS("hipDrvLaunchKernelEx");
EXPORT hipError_t hipLaunchByPtr(const void *);
EXPORT hipError_t hipConfigureCall(dim3, dim3, size_t, hipStream_t);
EXPORT hipError_t hipGraphLaunch(hipGraphExec_t, hipStream_t);
EXPORT hipError_t w_hipGraphLaunch_spt(hipGraphExec_t, hipStream_t) AS("hipGraphLaunch_spt");
EXPORT hipError_t w_hipGetProcAddress(const char *, void **, int, uint64_t, fikit_hip_query_result *)
    AS("hipGetProcAddress");
EXPORT hipError_t w_hipGetProcAddress_spt(const char *, void **, int, uint64_t,
                                          fikit_hip_query_result *) AS("hipGetProcAddress_spt");
EXPORT hipError_t w_hipGetDriverEntryPoint(const char *, void **, unsigned long long,
                                           fikit_hip_query_result *) AS("hipGetDriverEntryPoint");
EXPORT hipError_t w_hipGetDriverEntryPoint_spt(const char *, void **, unsigned long long,
                                               fikit_hip_query_result *)
    AS("hipGetDriverEntryPoint_spt");
EXPORT hipError_t hipModuleUnload(hipModule_t);
EXPORT hipError_t hipStreamSynchronize(hipStream_t);
EXPORT hipError_t w_hipStreamSynchronize_spt(hipStream_t) AS("hipStreamSynchronize_spt");
EXPORT hipError_t hipDeviceSynchronize(void);
EXPORT hipError_t hipEventSynchronize(hipEvent_t);
EXPORT hipError_t w_hipLibraryUnload(void *) AS("hipLibraryUnload");
EXPORT hipError_t hipStreamBeginCapture(hipStream_t, hipStreamCaptureMode);
EXPORT hipError_t w_hipStreamBeginCapture_spt(hipStream_t, hipStreamCaptureMode)
    AS("hipStreamBeginCapture_spt");
EXPORT hipError_t w_hipStreamBeginCaptureToGraph(hipStream_t, hipGraph_t, const hipGraphNode_t *,
                                                 const void *, size_t, hipStreamCaptureMode)
    AS("hipStreamBeginCaptureToGraph");
EXPORT hipError_t hipStreamEndCapture(hipStream_t, hipGraph_t *);
EXPORT hipError_t w_hipStreamEndCapture_spt(hipStream_t, hipGraph_t *) AS("hipStreamEndCapture_spt");

#define HOOK(id, name, fn) [id] = {name, (void *)(fn), NULL, fikit_hip_sonames}

static struct fikit_hook hooks[H_COUNT + 1] = {
    HOOK(H_LAUNCH, "hipLaunchKernel", hipLaunchKernel),
    HOOK(H_LAUNCH_SPT, "hipLaunchKernel_spt", w_hipLaunchKernel_spt),
    HOOK(H_EXT_LAUNCH, "hipExtLaunchKernel", hipExtLaunchKernel),
    HOOK(H_COOP, "hipLaunchCooperativeKernel", hipLaunchCooperativeKernel),
    HOOK(H_COOP_SPT, "hipLaunchCooperativeKernel_spt", w_hipLaunchCooperativeKernel_spt),
    HOOK(H_COOP_MULTI, "hipLaunchCooperativeKernelMultiDevice", hipLaunchCooperativeKernelMultiDevice),
    HOOK(H_EXT_MULTI, "hipExtLaunchMultiKernelMultiDevice", hipExtLaunchMultiKernelMultiDevice),
    HOOK(H_MODULE, "hipModuleLaunchKernel", hipModuleLaunchKernel),
    HOOK(H_MODULE_COOP, "hipModuleLaunchCooperativeKernel", w_hipModuleLaunchCooperativeKernel),
    HOOK(H_MODULE_COOP_MULTI, "hipModuleLaunchCooperativeKernelMultiDevice",
         w_hipModuleLaunchCooperativeKernelMultiDevice),
    HOOK(H_EXT_MODULE, "hipExtModuleLaunchKernel", w_hipExtModuleLaunchKernel),
    HOOK(H_EXT_MODULE_CXX, EXT_MODULE_CXX, w_hipExtModuleLaunchKernel_cxx),
    HOOK(H_HCC_MODULE, "hipHccModuleLaunchKernel", w_hipHccModuleLaunchKernel),
    HOOK(H_HCC_MODULE_CXX, HCC_MODULE_CXX, w_hipHccModuleLaunchKernel_cxx),
    HOOK(H_LAUNCH_EXC, "hipLaunchKernelExC", w_hipLaunchKernelExC),
    HOOK(H_DRV_LAUNCH_EX, "hipDrvLaunchKernelEx", w_hipDrvLaunchKernelEx),
    HOOK(H_BY_PTR, "hipLaunchByPtr", hipLaunchByPtr),
    HOOK(H_CONFIGURE, "hipConfigureCall", hipConfigureCall),
    HOOK(H_GRAPH, "hipGraphLaunch", hipGraphLaunch),
    HOOK(H_GRAPH_SPT, "hipGraphLaunch_spt", w_hipGraphLaunch_spt),
    HOOK(H_GPA, "hipGetProcAddress", w_hipGetProcAddress),
    HOOK(H_GPA_SPT, "hipGetProcAddress_spt", w_hipGetProcAddress_spt),
    HOOK(H_GDEP, "hipGetDriverEntryPoint", w_hipGetDriverEntryPoint),
    HOOK(H_GDEP_SPT, "hipGetDriverEntryPoint_spt", w_hipGetDriverEntryPoint_spt),
    HOOK(H_MODULE_UNLOAD, "hipModuleUnload", hipModuleUnload),
    HOOK(H_LIBRARY_UNLOAD, "hipLibraryUnload", w_hipLibraryUnload),
    HOOK(H_CAP, "hipStreamBeginCapture", hipStreamBeginCapture),
    HOOK(H_CAP_SPT, "hipStreamBeginCapture_spt", w_hipStreamBeginCapture_spt),
    HOOK(H_CAP_TO_GRAPH, "hipStreamBeginCaptureToGraph", w_hipStreamBeginCaptureToGraph),
    HOOK(H_CAP_END, "hipStreamEndCapture", hipStreamEndCapture),
    HOOK(H_CAP_END_SPT, "hipStreamEndCapture_spt", w_hipStreamEndCapture_spt),
    HOOK(H_SYNC_STREAM, "hipStreamSynchronize", hipStreamSynchronize),
    HOOK(H_SYNC_STREAM_SPT, "hipStreamSynchronize_spt", w_hipStreamSynchronize_spt),
    HOOK(H_SYNC_DEVICE, "hipDeviceSynchronize", hipDeviceSynchronize),
    HOOK(H_SYNC_EVENT, "hipEventSynchronize", hipEventSynchronize),
    [H_COUNT] = {NULL, NULL, NULL, NULL},
};

/* HIP as the interposer sees it: C names start with h, ROCm 5's C++ ones with _. */
FIKIT_BACKEND_DEFINE(hip, .ops = &fikit_hip_ops, .hooks = hooks, .symbol_starts = "h_",
                     .libraries = fikit_hip_sonames)

/* ------------------------------------------------- the real functions */

/* The real function behind hook id: the next definition after libfikit.so
 * (RTLD_NEXT), what the program's own lookups answered, or, when the program
 * holds libamdhip64 in a local scope, the loaded libamdhip64's own. */
static void *real_of(int id) { return fikit_hook_real(&hooks[id]); }

#define REAL(id, type) ((type)real_of(id))

/* Once per process, at debug level: which hooked entry points the
 * installed runtime has, and where each real one was found. */
static void report_entry_points(void)
{
    const char *path = "?";
    fikit_hip_runtime_handle(&path);
    for (int i = 0; i < H_COUNT; i++) {
        void *r = real_of(i);
        Dl_info info;
        if (!r) {
            fikit_debug("hip: entry point %s: not exported by this runtime (not an error)",
                        hooks[i].name);
        } else if (dladdr(r, &info) && info.dli_fname) {
            bool same = info.dli_sname && strcmp(info.dli_sname, hooks[i].name) == 0;
            fikit_debug("hip: entry point %s: real in %s%s%s%s", hooks[i].name, info.dli_fname,
                        same ? "" : " (as ", same ? "" : (info.dli_sname ? info.dli_sname : "?"),
                        same ? "" : ")");
        } else {
            fikit_debug("hip: entry point %s: real at %p", hooks[i].name, r);
        }
    }
    fikit_debug("hip: runtime %s: %d entry points hooked", path, H_COUNT);
}

/* The runtime's functions fikit itself needs, from the library that holds
 * real (a real entry point the program reached). */
static bool runtime_ready(void *real)
{
    static _Atomic int state; /* 0: not tried, 1: ready, -1: unusable */
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s)
        return s > 0;
    bool ok = fikit_hip_runtime_init(real, fikit_real_dlsym) == 0;
    int expected = 0;
    if (atomic_compare_exchange_strong(&state, &expected, ok ? 1 : -1) &&
        fikit_log_enabled(FIKIT_LOG_DEBUG))
        report_entry_points();
    return ok;
}

/* ------------------------------------------------------------ launches */

/* A launch entry point that the runtime itself calls from another one (ROCm
 * 5.2's hipLaunchByPtr calls hipModuleLaunchKernel through its PLT, which
 * LD_PRELOAD resolves to fikit) is part of the outer launch: passed
 * straight through, never gated twice. */
static _Thread_local unsigned in_launch;

#define PASS(CALL)                                                                                 \
    do {                                                                                           \
        in_launch++;                                                                               \
        hipError_t p_ = CALL;                                                                      \
        in_launch--;                                                                               \
        return p_;                                                                                 \
    } while (0)

/* A graph launch is one unit, named by the order of its first launch. */
static struct fikit_graph_names graph_names = FIKIT_GRAPH_NAMES_INIT("hip-graph");

/* Describes one launch into x and enters the gate; false when HIP is not
 * scheduled, the launch is nested in another, or no device can be named for
 * it (the runtime then reports what is wrong, unchanged). A graph
 * (FIKIT_HIP_NAMED) is named only once it is to be gated. */
static bool begin(struct fikit_launch *x, void *real, enum fikit_hip_kernel_kind kind, const void *k,
                  hipStream_t s, bool spt, const unsigned grid[3], const unsigned block[3],
                  size_t shmem)
{
    fikit_launch_start(x);
    if (in_launch || !fikit_client_wants(FIKIT_BACKEND_HIP) || !runtime_ready(real))
        return false;
    const char *name = kind == FIKIT_HIP_NAMED ? fikit_graph_name(&graph_names, k) : NULL;
    if (!fikit_hip_describe(&x->desc, kind, k, s, spt, grid, block, shmem, name))
        return false;
    fikit_launch_begin(x, &fikit_hip_ops);
    return true;
}

/* Gates one launch around CALL, or makes CALL alone where begin() says so;
 * the runtime's calls from inside CALL are part of it either way. */
#define GATED(real, kind, k, stream, spt, grid, block, shmem, CALL)                                \
    do {                                                                                           \
        struct fikit_launch x_;                                                                    \
        if (!begin(&x_, (void *)(real), (kind), (const void *)(k), (stream), (spt), (grid),        \
                   (block), (shmem)))                                                              \
            PASS(CALL);                                                                            \
        in_launch++;                                                                               \
        hipError_t r_ = CALL;                                                                      \
        in_launch--;                                                                               \
        fikit_launch_end(&x_, r_ == hipSuccess);                                                   \
        return r_;                                                                                 \
    } while (0)

/* Where the gate confines the launch to part of the CUs (x->gate.sm_pct):
 * into a CU-masked stream, ordered against the program's
 * (backends/hip/hip_confine.h). False: it goes as the program asked. */
static bool confine_begin(struct fikit_launch *x, struct fikit_hip_redirect *rd)
{
    if (!x->gate.sm_pct)
        return false;
    if (fikit_hip_confine_begin(&x->desc, x->gate.sm_pct, rd))
        return true;
    if (rd->failed)
        fikit_client_confine_failed(rd->failed);
    return false;
}

static bool confine_end(struct fikit_hip_redirect *rd, hipError_t r)
{
    if (fikit_hip_confine_end(rd, r))
        return true;
    if (rd->failed)
        fikit_client_confine_failed(rd->failed);
    return false;
}

/* GATED, for the entry points whose launches may be confined: CALL names
 * its stream sv, which is the masked stream where the gate confines the
 * launch and the program's otherwise. */
#define GATED_CONFINED(real, kind, k, program, spt, grid, block, shmem, sv, CALL)                  \
    do {                                                                                           \
        struct fikit_launch x_;                                                                    \
        hipStream_t sv = (program);                                                                \
        if (!begin(&x_, (void *)(real), (kind), (const void *)(k), sv, (spt), (grid), (block),     \
                   (shmem)))                                                                       \
            PASS(CALL);                                                                            \
        in_launch++;                                                                               \
        struct fikit_hip_redirect rd_;                                                             \
        hipError_t r_;                                                                             \
        if (confine_begin(&x_, &rd_)) {                                                            \
            sv = rd_.stream;                                                                       \
            r_ = CALL;                                                                             \
            if (!confine_end(&rd_, r_)) {                                                          \
                sv = (program);                                                                    \
                r_ = CALL;                                                                         \
            }                                                                                      \
        } else {                                                                                   \
            r_ = CALL;                                                                             \
        }                                                                                          \
        in_launch--;                                                                               \
        fikit_launch_end(&x_, r_ == hipSuccess);                                                   \
        return r_;                                                                                 \
    } while (0)

#define DIMS(d) {(d).x, (d).y, (d).z}

/* hipLaunchKernel and hipLaunchKernel_spt */
typedef hipError_t (*launch_fn)(const void *, dim3, dim3, void **, size_t, hipStream_t);

static hipError_t launch(int id, bool spt, const void *f, dim3 g, dim3 b, void **args, size_t shmem,
                         hipStream_t s)
{
    launch_fn real = REAL(id, launch_fn);
    if (!real)
        return hipErrorNotFound;
    const unsigned grid[3] = DIMS(g), block[3] = DIMS(b);
    GATED_CONFINED(real, FIKIT_HIP_HOST_FUNCTION, f, s, spt, grid, block, shmem, st,
                   real(f, g, b, args, shmem, st));
}

EXPORT hipError_t hipLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem,
                                  hipStream_t s)
{
    return launch(H_LAUNCH, false, f, g, b, args, shmem, s);
}

EXPORT hipError_t w_hipLaunchKernel_spt(const void *f, dim3 g, dim3 b, void **args, size_t shmem,
                                        hipStream_t s)
{
    return launch(H_LAUNCH_SPT, true, f, g, b, args, shmem, s);
}

typedef hipError_t (*ext_launch_fn)(const void *, dim3, dim3, void **, size_t, hipStream_t,
                                    hipEvent_t, hipEvent_t, int);

EXPORT hipError_t hipExtLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem,
                                     hipStream_t s, hipEvent_t start, hipEvent_t stop, int flags)
{
    ext_launch_fn real = REAL(H_EXT_LAUNCH, ext_launch_fn);
    if (!real)
        return hipErrorNotFound;
    const unsigned grid[3] = DIMS(g), block[3] = DIMS(b);
    GATED(real, FIKIT_HIP_HOST_FUNCTION, f, s, false, grid, block, shmem,
          real(f, g, b, args, shmem, s, start, stop, flags));
}

typedef hipError_t (*coop_fn)(const void *, dim3, dim3, void **, unsigned int, hipStream_t);

static hipError_t coop(int id, bool spt, const void *f, dim3 g, dim3 b, void **args,
                       unsigned int shmem, hipStream_t s)
{
    coop_fn real = REAL(id, coop_fn);
    if (!real)
        return hipErrorNotFound;
    const unsigned grid[3] = DIMS(g), block[3] = DIMS(b);
    GATED(real, FIKIT_HIP_HOST_FUNCTION, f, s, spt, grid, block, shmem,
          real(f, g, b, args, shmem, s));
}

EXPORT hipError_t hipLaunchCooperativeKernel(const void *f, dim3 g, dim3 b, void **args,
                                             unsigned int shmem, hipStream_t s)
{
    return coop(H_COOP, false, f, g, b, args, shmem, s);
}

EXPORT hipError_t w_hipLaunchCooperativeKernel_spt(const void *f, dim3 g, dim3 b, void **args,
                                                   unsigned int shmem, hipStream_t s)
{
    return coop(H_COOP_SPT, true, f, g, b, args, shmem, s);
}

/* One call, one launch per device: each is gated on its own device (a held
 * one waits before the call is made), and timed on its own stream. */
#define MULTI_MAX 16

struct multi {
    int n;
    bool on[MULTI_MAX];
    struct fikit_launch_desc l[MULTI_MAX];
    struct fikit_gate g[MULTI_MAX];
};

static void multi_enter(struct multi *m, int i, enum fikit_hip_kernel_kind kind, const void *k,
                        hipStream_t s, const unsigned grid[3], const unsigned block[3], size_t shmem)
{
    m->on[i] = fikit_hip_describe(&m->l[i], kind, k, s, false, grid, block, shmem, NULL);
    if (m->on[i])
        fikit_gate_enter(&m->g[i], &fikit_hip_ops, &m->l[i]);
}

static void multi_exit(struct multi *m, hipError_t r, uint64_t t0, uint64_t t1, uint64_t t2)
{
    for (int i = 0; i < m->n; i++)
        if (m->on[i])
            fikit_gate_exit(&m->g[i], &m->l[i], r == hipSuccess);
    if (fikit_client.selftime_on)
        fikit_selftime_record(t0, t1, t2, fikit_now_ns());
}

#define MULTI_CALL(m, CALL)                                                                        \
    do {                                                                                           \
        uint64_t t1_ = fikit_selftime_now();                                                       \
        in_launch++;                                                                               \
        hipError_t r_ = CALL;                                                                      \
        in_launch--;                                                                               \
        multi_exit(&(m), r_, t0, t1_, fikit_selftime_now());                                       \
        return r_;                                                                                 \
    } while (0)

typedef hipError_t (*multi_fn)(hipLaunchParams *, int, unsigned int);

static hipError_t multi(int id, hipLaunchParams *p, int n, unsigned int flags)
{
    multi_fn real = REAL(id, multi_fn);
    if (!real)
        return hipErrorNotFound;
    uint64_t t0 = fikit_selftime_now();
    if (in_launch || !p || n <= 0 || n > MULTI_MAX || !fikit_client_wants(FIKIT_BACKEND_HIP) ||
        !runtime_ready((void *)real))
        PASS(real(p, n, flags));
    struct multi m = {.n = n};
    for (int i = 0; i < n; i++) {
        const unsigned grid[3] = DIMS(p[i].gridDim), block[3] = DIMS(p[i].blockDim);
        multi_enter(&m, i, FIKIT_HIP_HOST_FUNCTION, p[i].func, p[i].stream, grid, block,
                    p[i].sharedMem);
    }
    MULTI_CALL(m, real(p, n, flags));
}

EXPORT hipError_t hipLaunchCooperativeKernelMultiDevice(hipLaunchParams *p, int n, unsigned int flags)
{
    return multi(H_COOP_MULTI, p, n, flags);
}

EXPORT hipError_t hipExtLaunchMultiKernelMultiDevice(hipLaunchParams *p, int n, unsigned int flags)
{
    return multi(H_EXT_MULTI, p, n, flags);
}

typedef hipError_t (*module_fn)(hipFunction_t, unsigned int, unsigned int, unsigned int,
                                unsigned int, unsigned int, unsigned int, unsigned int, hipStream_t,
                                void **, void **);

EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy,
                                        unsigned int gz, unsigned int bx, unsigned int by,
                                        unsigned int bz, unsigned int shmem, hipStream_t s,
                                        void **params, void **extra)
{
    module_fn real = REAL(H_MODULE, module_fn);
    if (!real)
        return hipErrorNotFound;
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    GATED_CONFINED(real, FIKIT_HIP_FUNCTION, f, s, false, grid, block, shmem, st,
                   real(f, gx, gy, gz, bx, by, bz, shmem, st, params, extra));
}

typedef hipError_t (*module_coop_fn)(hipFunction_t, unsigned int, unsigned int, unsigned int,
                                     unsigned int, unsigned int, unsigned int, unsigned int,
                                     hipStream_t, void **);

EXPORT hipError_t w_hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gx,
                                                     unsigned int gy, unsigned int gz,
                                                     unsigned int bx, unsigned int by,
                                                     unsigned int bz, unsigned int shmem,
                                                     hipStream_t s, void **params)
{
    module_coop_fn real = REAL(H_MODULE_COOP, module_coop_fn);
    if (!real)
        return hipErrorNotFound;
    const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
    GATED(real, FIKIT_HIP_FUNCTION, f, s, false, grid, block, shmem,
          real(f, gx, gy, gz, bx, by, bz, shmem, s, params));
}

typedef hipError_t (*module_multi_fn)(struct fikit_hip_function_launch_params *, unsigned int,
                                      unsigned int);

EXPORT hipError_t w_hipModuleLaunchCooperativeKernelMultiDevice(
    struct fikit_hip_function_launch_params *p, unsigned int n, unsigned int flags)
{
    module_multi_fn real = REAL(H_MODULE_COOP_MULTI, module_multi_fn);
    if (!real)
        return hipErrorNotFound;
    uint64_t t0 = fikit_selftime_now();
    if (in_launch || !p || n == 0 || n > MULTI_MAX || !fikit_client_wants(FIKIT_BACKEND_HIP) ||
        !runtime_ready((void *)real))
        PASS(real(p, n, flags));
    struct multi m = {.n = (int)n};
    for (unsigned i = 0; i < n; i++) {
        const unsigned grid[3] = {p[i].gridDimX, p[i].gridDimY, p[i].gridDimZ};
        const unsigned block[3] = {p[i].blockDimX, p[i].blockDimY, p[i].blockDimZ};
        multi_enter(&m, (int)i, FIKIT_HIP_FUNCTION, p[i].function, p[i].hStream, grid, block,
                    p[i].sharedMemBytes);
    }
    MULTI_CALL(m, real(p, n, flags));
}

/* hipExtModuleLaunchKernel takes the grid in work-items, not blocks: fikit
 * keys it in blocks, as the same launch through hipModuleLaunchKernel. */
static unsigned blocks_of(uint32_t global, uint32_t local)
{
    return local ? (unsigned)((global + (uint64_t)local - 1) / local) : global;
}

typedef hipError_t (*ext_module_fn)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                    uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
                                    hipEvent_t, hipEvent_t, uint32_t);

static hipError_t ext_module(int id, hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                             uint32_t lx, uint32_t ly, uint32_t lz, size_t shmem, hipStream_t s,
                             void **params, void **extra, hipEvent_t start, hipEvent_t stop,
                             uint32_t flags)
{
    ext_module_fn real = REAL(id, ext_module_fn);
    if (!real)
        return hipErrorNotFound;
    const unsigned grid[3] = {blocks_of(gx, lx), blocks_of(gy, ly), blocks_of(gz, lz)};
    const unsigned block[3] = {lx, ly, lz};
    GATED(real, FIKIT_HIP_FUNCTION, f, s, false, grid, block, shmem,
          real(f, gx, gy, gz, lx, ly, lz, shmem, s, params, extra, start, stop, flags));
}

EXPORT hipError_t w_hipExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                                             uint32_t lx, uint32_t ly, uint32_t lz, size_t shmem,
                                             hipStream_t s, void **params, void **extra,
                                             hipEvent_t start, hipEvent_t stop, uint32_t flags)
{
    return ext_module(H_EXT_MODULE, f, gx, gy, gz, lx, ly, lz, shmem, s, params, extra, start, stop,
                      flags);
}

EXPORT hipError_t w_hipExtModuleLaunchKernel_cxx(hipFunction_t f, uint32_t gx, uint32_t gy,
                                                 uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz,
                                                 size_t shmem, hipStream_t s, void **params,
                                                 void **extra, hipEvent_t start, hipEvent_t stop,
                                                 uint32_t flags)
{
    return ext_module(H_EXT_MODULE_CXX, f, gx, gy, gz, lx, ly, lz, shmem, s, params, extra, start,
                      stop, flags);
}

typedef hipError_t (*hcc_module_fn)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                    uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
                                    hipEvent_t, hipEvent_t);

static hipError_t hcc_module(int id, hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                             uint32_t lx, uint32_t ly, uint32_t lz, size_t shmem, hipStream_t s,
                             void **params, void **extra, hipEvent_t start, hipEvent_t stop)
{
    hcc_module_fn real = REAL(id, hcc_module_fn);
    if (!real)
        return hipErrorNotFound;
    const unsigned grid[3] = {blocks_of(gx, lx), blocks_of(gy, ly), blocks_of(gz, lz)};
    const unsigned block[3] = {lx, ly, lz};
    GATED(real, FIKIT_HIP_FUNCTION, f, s, false, grid, block, shmem,
          real(f, gx, gy, gz, lx, ly, lz, shmem, s, params, extra, start, stop));
}

EXPORT hipError_t w_hipHccModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz,
                                             uint32_t lx, uint32_t ly, uint32_t lz, size_t shmem,
                                             hipStream_t s, void **params, void **extra,
                                             hipEvent_t start, hipEvent_t stop)
{
    return hcc_module(H_HCC_MODULE, f, gx, gy, gz, lx, ly, lz, shmem, s, params, extra, start, stop);
}

EXPORT hipError_t w_hipHccModuleLaunchKernel_cxx(hipFunction_t f, uint32_t gx, uint32_t gy,
                                                 uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz,
                                                 size_t shmem, hipStream_t s, void **params,
                                                 void **extra, hipEvent_t start, hipEvent_t stop)
{
    return hcc_module(H_HCC_MODULE_CXX, f, gx, gy, gz, lx, ly, lz, shmem, s, params, extra, start,
                      stop);
}

typedef hipError_t (*launch_exc_fn)(const struct fikit_hip_launch_config *, const void *, void **);

EXPORT hipError_t w_hipLaunchKernelExC(const struct fikit_hip_launch_config *c, const void *f,
                                       void **args)
{
    launch_exc_fn real = REAL(H_LAUNCH_EXC, launch_exc_fn);
    if (!real)
        return hipErrorNotFound;
    if (!c)
        return real(c, f, args);
    const unsigned grid[3] = DIMS(c->gridDim), block[3] = DIMS(c->blockDim);
    GATED(real, FIKIT_HIP_HOST_FUNCTION, f, c->stream, false, grid, block, c->dynamicSmemBytes,
          real(c, f, args));
}

typedef hipError_t (*drv_launch_ex_fn)(const struct fikit_hip_drv_launch_config *, hipFunction_t,
                                       void **, void **);

EXPORT hipError_t w_hipDrvLaunchKernelEx(const struct fikit_hip_drv_launch_config *c,
                                         hipFunction_t f, void **params, void **extra)
{
    drv_launch_ex_fn real = REAL(H_DRV_LAUNCH_EX, drv_launch_ex_fn);
    if (!real)
        return hipErrorNotFound;
    if (!c)
        return real(c, f, params, extra);
    const unsigned grid[3] = {c->gridDimX, c->gridDimY, c->gridDimZ};
    const unsigned block[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
    GATED(real, FIKIT_HIP_FUNCTION, f, c->hStream, false, grid, block, c->sharedMemBytes,
          real(c, f, params, extra));
}

/* hipConfigureCall + hipSetupArgument + hipLaunchByPtr: the geometry of the
 * launch is what the thread last configured. This mirrors the runtime's
 * own per-thread stack of configurations (hipLaunchByPtr pops one). */
#define CONFIG_MAX 8
static _Thread_local struct {
    dim3 grid, block;
    size_t shmem;
    hipStream_t stream;
} configs[CONFIG_MAX];
static _Thread_local unsigned nconfigs;

typedef hipError_t (*configure_fn)(dim3, dim3, size_t, hipStream_t);

EXPORT hipError_t hipConfigureCall(dim3 g, dim3 b, size_t shmem, hipStream_t s)
{
    configure_fn real = REAL(H_CONFIGURE, configure_fn);
    if (!real)
        return hipErrorNotFound;
    hipError_t r = real(g, b, shmem, s);
    if (r == hipSuccess) {
        if (nconfigs < CONFIG_MAX) {
            configs[nconfigs].grid = g;
            configs[nconfigs].block = b;
            configs[nconfigs].shmem = shmem;
            configs[nconfigs].stream = s;
        }
        nconfigs++;
    }
    return r;
}

typedef hipError_t (*by_ptr_fn)(const void *);

EXPORT hipError_t hipLaunchByPtr(const void *f)
{
    by_ptr_fn real = REAL(H_BY_PTR, by_ptr_fn);
    if (!real)
        return hipErrorNotFound;
    unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    size_t shmem = 0;
    hipStream_t s = NULL;
    if (nconfigs > 0 && --nconfigs < CONFIG_MAX) {
        const dim3 g = configs[nconfigs].grid, b = configs[nconfigs].block;
        grid[0] = g.x, grid[1] = g.y, grid[2] = g.z;
        block[0] = b.x, block[1] = b.y, block[2] = b.z;
        shmem = configs[nconfigs].shmem;
        s = configs[nconfigs].stream;
    }
    GATED(real, FIKIT_HIP_HOST_FUNCTION, f, s, false, grid, block, shmem, real(f));
}

typedef hipError_t (*graph_fn)(hipGraphExec_t, hipStream_t);

static hipError_t graph(int id, bool spt, hipGraphExec_t exec, hipStream_t s)
{
    graph_fn real = REAL(id, graph_fn);
    if (!real)
        return hipErrorNotFound;
    GATED(real, FIKIT_HIP_NAMED, exec, s, spt, NULL, NULL, 0, real(exec, s));
}

EXPORT hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t s) { return graph(H_GRAPH, false, exec, s); }

EXPORT hipError_t w_hipGraphLaunch_spt(hipGraphExec_t exec, hipStream_t s)
{
    return graph(H_GRAPH_SPT, true, exec, s);
}

/* Unloading code invalidates kernel handles, which may then be reused. */
EXPORT hipError_t hipModuleUnload(hipModule_t m)
{
    hipError_t (*real)(hipModule_t) = REAL(H_MODULE_UNLOAD, hipError_t(*)(hipModule_t));
    return fikit_unloaded(real ? real(m) : hipErrorNotFound);
}

EXPORT hipError_t w_hipLibraryUnload(void *lib)
{
    hipError_t (*real)(void *) = REAL(H_LIBRARY_UNLOAD, hipError_t(*)(void *));
    return fikit_unloaded(real ? real(lib) : hipErrorNotFound);
}

/* ---------------------------------------------------------------- waits */

/* The waits by which a program learns that its work is done: each ends the
 * task's open burst when nothing was launched while it waited
 * (interpose/burst.h). Polling (hipStreamQuery, hipEventQuery) is not one. */
#define WAIT(id, type, ...)                                                                                \
    do {                                                                                                   \
        type real = REAL(id, type);                                                                        \
        if (!real)                                                                                         \
            return hipErrorNotFound;                                                                       \
        FIKIT_BURST_WAIT(hipError_t, hipSuccess, real(__VA_ARGS__));                                       \
    } while (0)

typedef hipError_t (*stream_sync_fn)(hipStream_t);
typedef hipError_t (*device_sync_fn)(void);
typedef hipError_t (*event_sync_fn)(hipEvent_t);

EXPORT hipError_t hipStreamSynchronize(hipStream_t s) { WAIT(H_SYNC_STREAM, stream_sync_fn, s); }
EXPORT hipError_t w_hipStreamSynchronize_spt(hipStream_t s)
{
    WAIT(H_SYNC_STREAM_SPT, stream_sync_fn, s);
}
EXPORT hipError_t hipDeviceSynchronize(void) { WAIT(H_SYNC_DEVICE, device_sync_fn); }
EXPORT hipError_t hipEventSynchronize(hipEvent_t e) { WAIT(H_SYNC_EVENT, event_sync_fn, e); }

/* ------------------------------------------------------ stream capture */

/* Counting open captures lets every other launch skip the capture query. */
#define BEGAN(call) FIKIT_CAPTURE_BEGAN(&fikit_hip_captures, hipError_t, hipSuccess, call)

typedef hipError_t (*cap_fn)(hipStream_t, hipStreamCaptureMode);

EXPORT hipError_t hipStreamBeginCapture(hipStream_t s, hipStreamCaptureMode m)
{
    cap_fn real = REAL(H_CAP, cap_fn);
    BEGAN(real ? real(s, m) : hipErrorNotFound);
}

EXPORT hipError_t w_hipStreamBeginCapture_spt(hipStream_t s, hipStreamCaptureMode m)
{
    cap_fn real = REAL(H_CAP_SPT, cap_fn);
    BEGAN(real ? real(s, m) : hipErrorNotFound);
}

typedef hipError_t (*cap_graph_fn)(hipStream_t, hipGraph_t, const hipGraphNode_t *, const void *,
                                   size_t, hipStreamCaptureMode);

EXPORT hipError_t w_hipStreamBeginCaptureToGraph(hipStream_t s, hipGraph_t g,
                                                 const hipGraphNode_t *deps, const void *edges,
                                                 size_t n, hipStreamCaptureMode m)
{
    cap_graph_fn real = REAL(H_CAP_TO_GRAPH, cap_graph_fn);
    BEGAN(real ? real(s, g, deps, edges, n, m) : hipErrorNotFound);
}

typedef hipError_t (*cap_end_fn)(hipStream_t, hipGraph_t *);

EXPORT hipError_t hipStreamEndCapture(hipStream_t s, hipGraph_t *g)
{
    cap_end_fn real = REAL(H_CAP_END, cap_end_fn);
    hipError_t r = real ? real(s, g) : hipErrorNotFound;
    fikit_captures_ended(&fikit_hip_captures); /* ended, successfully or not */
    return r;
}

EXPORT hipError_t w_hipStreamEndCapture_spt(hipStream_t s, hipGraph_t *g)
{
    cap_end_fn real = REAL(H_CAP_END_SPT, cap_end_fn);
    hipError_t r = real ? real(s, g) : hipErrorNotFound;
    fikit_captures_ended(&fikit_hip_captures);
    return r;
}

/* -------------------------------------------- hipGetProcAddress & co. */

/* The runtime answered *pfn for symbol: the program gets fikit's wrapper of
 * the entry point that *pfn is. Which one that is (the _spt variant or not,
 * the C or the C++ name) is read from the runtime's own symbol table; the
 * name asked for is the fallback. */
static void answer(const char *symbol, void **pfn)
{
    if (!pfn || !*pfn)
        return;
    /* A runtime that looks its entries up with dlsym gets fikit's wrappers
     * already (interpose/hooks.c): never take a wrapper for the real function, or it
     * would call itself. */
    if (fikit_hook_is_wrapper(hooks, *pfn))
        return;
    Dl_info info;
    struct fikit_hook *h = NULL;
    if (dladdr(*pfn, &info) && info.dli_sname && info.dli_saddr == *pfn)
        h = fikit_hook_in(hooks, info.dli_sname);
    if (!h)
        h = fikit_hook_in(hooks, symbol);
    fikit_hook_take(h, pfn);
}

typedef hipError_t (*gpa_fn)(const char *, void **, int, uint64_t, fikit_hip_query_result *);

static hipError_t gpa(int id, const char *symbol, void **pfn, int version, uint64_t flags,
                      fikit_hip_query_result *status)
{
    gpa_fn real = REAL(id, gpa_fn);
    if (!real)
        return hipErrorNotFound;
    hipError_t r = real(symbol, pfn, version, flags, status);
    if (r == hipSuccess)
        answer(symbol, pfn);
    return r;
}

EXPORT hipError_t w_hipGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags,
                                      fikit_hip_query_result *status)
{
    return gpa(H_GPA, symbol, pfn, version, flags, status);
}

EXPORT hipError_t w_hipGetProcAddress_spt(const char *symbol, void **pfn, int version,
                                          uint64_t flags, fikit_hip_query_result *status)
{
    return gpa(H_GPA_SPT, symbol, pfn, version, flags, status);
}

typedef hipError_t (*gdep_fn)(const char *, void **, unsigned long long, fikit_hip_query_result *);

static hipError_t gdep(int id, const char *symbol, void **pfn, unsigned long long flags,
                       fikit_hip_query_result *status)
{
    gdep_fn real = REAL(id, gdep_fn);
    if (!real)
        return hipErrorNotFound;
    hipError_t r = real(symbol, pfn, flags, status);
    if (r == hipSuccess)
        answer(symbol, pfn);
    return r;
}

EXPORT hipError_t w_hipGetDriverEntryPoint(const char *symbol, void **pfn, unsigned long long flags,
                                           fikit_hip_query_result *status)
{
    return gdep(H_GDEP, symbol, pfn, flags, status);
}

EXPORT hipError_t w_hipGetDriverEntryPoint_spt(const char *symbol, void **pfn,
                                               unsigned long long flags,
                                               fikit_hip_query_result *status)
{
    return gdep(H_GDEP_SPT, symbol, pfn, flags, status);
}
