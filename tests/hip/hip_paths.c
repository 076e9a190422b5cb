/* Every HIP entry point libfikit.so hooks, called on a machine with no AMD
 * GPU, against the installed libamdhip64: through the program's own link
 * (hip_paths_linked) and through dlopen + dlsym of libamdhip64
 * (hip_paths_dlopen, which does not link it, as PyTorch and Triton do).
 *
 * For each name it prints where dlsym found it ("where: NAME: libamdhip64...",
 * "libfikit.so" under fikit, or "absent" where this ROCm lacks it), then
 * what the call returned and what the runtime's error state then says.
 * The "where:" lines differ under fikit by design; every other line must be
 * the same with and without fikit (tests/integration/test_hip_nodevice.py).
 *
 * The calls carry dummy arguments: with no device the runtime refuses them
 * before looking at them. With a device present it exits 77 (skipped). */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include "tests/hip/rocm_abi.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef hipError_t (*get_count_fn)(int *);
typedef const char *(*err_str_fn)(hipError_t);
typedef hipError_t (*last_fn)(void);

static void *lib;
static get_count_fn get_count;
static err_str_fn err_name, err_string;
static last_fn peek_last;

static const char *where(const void *p)
{
    Dl_info info;
    if (!p)
        return "absent";
    if (!dladdr(p, &info) || !info.dli_fname)
        return "unknown";
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    /* libamdhip64.so.5 or .so.5.2.21153: the soname is enough. */
    static char buf[256];
    snprintf(buf, sizeof buf, "%s", base);
    char *v = strstr(buf, ".so");
    if (v && strncmp(buf, "libamdhip64", 11) == 0)
        v[3] = '\0';
    return buf;
}

static void report(const char *what, hipError_t r)
{
    hipError_t last = peek_last();
    printf("%s: %d %s (%s); error state %d %s\n", what, (int)r, err_name(r), err_string(r),
           (int)last, err_name(last));
}

/* dlsym on the library the program opened: what a program that looks
 * entry points up itself gets. */
static void *sym(const char *name)
{
    void *p = dlsym(lib, name);
    printf("where: %s: %s\n", name, where(p));
    return p;
}

#define CALL(name, type, ...)                                                                      \
    do {                                                                                           \
        type f_ = (type)sym(name);                                                                 \
        if (f_)                                                                                    \
            report(name, f_(__VA_ARGS__));                                                         \
    } while (0)

static void kernel_stub(void) {}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
#ifdef FIKIT_HIP_LINKED
    /* The library the program was linked with, opened again by name. */
    Dl_info info;
    if (!dladdr((void *)hipGetDeviceCount, &info) || !(lib = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD))) {
        fprintf(stderr, "hip_paths: cannot find the linked libamdhip64\n");
        return 2;
    }
#else
    static const char *const names[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5",
                                        "libamdhip64.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !lib; i++)
        lib = dlopen(argc > 1 ? argv[1] : names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "hip_paths: cannot dlopen libamdhip64: %s\n", dlerror());
        return 2;
    }
#endif
    (void)argc;
    (void)argv;
    get_count = (get_count_fn)dlsym(lib, "hipGetDeviceCount");
    err_name = (err_str_fn)dlsym(lib, "hipGetErrorName");
    err_string = (err_str_fn)dlsym(lib, "hipGetErrorString");
    peek_last = (last_fn)dlsym(lib, "hipPeekAtLastError");
    if (!get_count || !err_name || !err_string || !peek_last) {
        fprintf(stderr, "hip_paths: libamdhip64 lacks hipGetDeviceCount or error functions\n");
        return 2;
    }
    int n = -1;
    hipError_t e = get_count(&n);
    report("hipGetDeviceCount", e);
    if (e == hipSuccess && n > 0) {
        printf("%d HIP devices: this test is for machines without one\n", n);
        return 77;
    }

    const void *k = (const void *)kernel_stub;
    dim3 one = {1, 1, 1};
    void *args[1] = {NULL};
    hipLaunchParams lp[1];
    memset(lp, 0, sizeof lp);
    lp[0].func = (void *)kernel_stub;
    lp[0].gridDim = one;
    lp[0].blockDim = one;
    struct function_launch_params fp[1];
    memset(fp, 0, sizeof fp);
    struct launch_config lc = {one, one, 0, NULL, NULL, 0};
    struct drv_launch_config dc = {{1, 1, 1}, {1, 1, 1}, 0, NULL, NULL, 0};
    hipGraph_t graph = NULL;
    void *pfn = NULL;
    int status = 0;

#ifdef FIKIT_HIP_LINKED
    /* The program's own references: resolved by the dynamic linker, so
     * fikit's under LD_PRELOAD. */
    printf("where: &hipLaunchKernel: %s\n", where((void *)hipLaunchKernel));
    printf("where: &hipModuleLaunchKernel: %s\n", where((void *)hipModuleLaunchKernel));
    printf("where: &hipGraphLaunch: %s\n", where((void *)hipGraphLaunch));
    report("direct hipLaunchKernel", hipLaunchKernel(k, one, one, args, 0, NULL));
    report("direct hipModuleLaunchKernel",
           hipModuleLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    report("direct hipExtLaunchKernel", hipExtLaunchKernel(k, one, one, args, 0, NULL, NULL, NULL, 0));
    report("direct hipLaunchCooperativeKernel", hipLaunchCooperativeKernel(k, one, one, args, 0, NULL));
    report("direct hipLaunchCooperativeKernelMultiDevice", hipLaunchCooperativeKernelMultiDevice(lp, 1, 0));
    report("direct hipExtLaunchMultiKernelMultiDevice", hipExtLaunchMultiKernelMultiDevice(lp, 1, 0));
    report("direct hipConfigureCall", hipConfigureCall(one, one, 0, NULL));
    report("direct hipLaunchByPtr", hipLaunchByPtr(k));
    report("direct hipGraphLaunch", hipGraphLaunch(NULL, NULL));
    report("direct hipStreamBeginCapture", hipStreamBeginCapture(NULL, hipStreamCaptureModeGlobal));
    report("direct hipStreamEndCapture", hipStreamEndCapture(NULL, &graph));
    report("direct hipModuleUnload", hipModuleUnload(NULL));
#endif

    typedef hipError_t (*launch_t)(const void *, dim3, dim3, void **, size_t, hipStream_t);
    typedef hipError_t (*ext_launch_t)(const void *, dim3, dim3, void **, size_t, hipStream_t,
                                       hipEvent_t, hipEvent_t, int);
    typedef hipError_t (*coop_t)(const void *, dim3, dim3, void **, unsigned, hipStream_t);
    typedef hipError_t (*multi_t)(hipLaunchParams *, int, unsigned);
    typedef hipError_t (*module_t)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, hipStream_t, void **, void **);
    typedef hipError_t (*module_coop_t)(hipFunction_t, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, hipStream_t, void **);
    typedef hipError_t (*module_multi_t)(struct function_launch_params *, unsigned, unsigned);
    typedef hipError_t (*ext_module_t)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                       uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
                                       hipEvent_t, hipEvent_t, uint32_t);
    typedef hipError_t (*hcc_module_t)(hipFunction_t, uint32_t, uint32_t, uint32_t, uint32_t,
                                       uint32_t, uint32_t, size_t, hipStream_t, void **, void **,
                                       hipEvent_t, hipEvent_t);
    typedef hipError_t (*exc_t)(const struct launch_config *, const void *, void **);
    typedef hipError_t (*drv_ex_t)(const struct drv_launch_config *, hipFunction_t, void **, void **);
    typedef hipError_t (*by_ptr_t)(const void *);
    typedef hipError_t (*configure_t)(dim3, dim3, size_t, hipStream_t);
    typedef hipError_t (*graph_t)(hipGraphExec_t, hipStream_t);
    typedef hipError_t (*gpa_t)(const char *, void **, int, uint64_t, int *);
    typedef hipError_t (*gdep_t)(const char *, void **, unsigned long long, int *);
    typedef hipError_t (*unload_t)(void *);
    typedef hipError_t (*cap_t)(hipStream_t, hipStreamCaptureMode);
    typedef hipError_t (*cap_graph_t)(hipStream_t, hipGraph_t, const void *, const void *, size_t,
                                      hipStreamCaptureMode);
    typedef hipError_t (*cap_end_t)(hipStream_t, hipGraph_t *);

    CALL("hipLaunchKernel", launch_t, k, one, one, args, 0, NULL);
    CALL("hipLaunchKernel_spt", launch_t, k, one, one, args, 0, NULL);
    CALL("hipExtLaunchKernel", ext_launch_t, k, one, one, args, 0, NULL, NULL, NULL, 0);
    CALL("hipLaunchCooperativeKernel", coop_t, k, one, one, args, 0, NULL);
    CALL("hipLaunchCooperativeKernel_spt", coop_t, k, one, one, args, 0, NULL);
    CALL("hipLaunchCooperativeKernelMultiDevice", multi_t, lp, 1, 0);
    CALL("hipExtLaunchMultiKernelMultiDevice", multi_t, lp, 1, 0);
    CALL("hipModuleLaunchKernel", module_t, NULL, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
    CALL("hipModuleLaunchCooperativeKernel", module_coop_t, NULL, 1, 1, 1, 1, 1, 1, 0, NULL, args);
    CALL("hipModuleLaunchCooperativeKernelMultiDevice", module_multi_t, fp, 1, 0);
    CALL("hipExtModuleLaunchKernel", ext_module_t, NULL, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL,
         NULL, NULL, 0);
    CALL("_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j",
         ext_module_t, NULL, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL, NULL, NULL, 0);
    CALL("hipHccModuleLaunchKernel", hcc_module_t, NULL, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL,
         NULL, NULL);
    CALL("_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_",
         hcc_module_t, NULL, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL, NULL, NULL);
    CALL("hipLaunchKernelExC", exc_t, &lc, k, args);
    CALL("hipDrvLaunchKernelEx", drv_ex_t, &dc, NULL, args, NULL);
    CALL("hipConfigureCall", configure_t, one, one, 0, NULL);
    CALL("hipLaunchByPtr", by_ptr_t, k);
    CALL("hipGraphLaunch", graph_t, NULL, NULL);
    CALL("hipGraphLaunch_spt", graph_t, NULL, NULL);
    CALL("hipGetProcAddress", gpa_t, "hipLaunchKernel", &pfn, 600, 0, &status);
    CALL("hipGetProcAddress_spt", gpa_t, "hipLaunchKernel", &pfn, 600, 0, &status);
    CALL("hipGetDriverEntryPoint", gdep_t, "hipLaunchKernel", &pfn, 0, &status);
    CALL("hipGetDriverEntryPoint_spt", gdep_t, "hipLaunchKernel", &pfn, 0, &status);
    CALL("hipModuleUnload", unload_t, NULL);
    CALL("hipLibraryUnload", unload_t, NULL);
    CALL("hipStreamBeginCapture", cap_t, NULL, hipStreamCaptureModeGlobal);
    CALL("hipStreamBeginCapture_spt", cap_t, NULL, hipStreamCaptureModeGlobal);
    CALL("hipStreamBeginCaptureToGraph", cap_graph_t, NULL, NULL, NULL, NULL, 0,
         hipStreamCaptureModeGlobal);
    CALL("hipStreamEndCapture", cap_end_t, NULL, &graph);
    CALL("hipStreamEndCapture_spt", cap_end_t, NULL, &graph);
    /* The waits that end a burst (interpose/burst.h). */
    typedef hipError_t (*sync_t)(hipStream_t);
    typedef hipError_t (*device_sync_t)(void);
    typedef hipError_t (*event_sync_t)(hipEvent_t);
    CALL("hipStreamSynchronize", sync_t, NULL);
    CALL("hipStreamSynchronize_spt", sync_t, NULL);
    CALL("hipDeviceSynchronize", device_sync_t);
    CALL("hipEventSynchronize", event_sync_t, NULL);
    /* Not hooked by fikit: answered as without it. */
    typedef hipError_t (*get_device_t)(int *);
    CALL("hipGetDevice", get_device_t, &n);
    report("final", get_count(&n));
    return 1; /* like a program that gives up when it finds no GPU */
}
