/* A CUDA runtime double (libcudart.so.13) over the driver double, so that
 * programs written with the runtime API and <<<>>> (the CUDA demo) run in CI
 * without a GPU: a program built with nvcc -cudart shared finds this library
 * first on LD_LIBRARY_PATH. It is not NVIDIA's runtime: it answers only the
 * calls the demo programs make, and forwards each to the driver as the real
 * runtime does (a kernel launch is cuLaunchKernel on the function the host
 * stub was registered with), so the launch reaches whatever stands between
 * the program and libcuda.so.1: fikit's interposer, in the tests. The real
 * static runtime cannot run on the driver double: it talks to the driver
 * through private export tables. */
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define RT __attribute__((visibility("default")))

/* cuda.h declares it only for programs built for per-thread default streams. */
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned shmem, CUstream s, void **params, void **extra);

/* ------------------------------------------------------------ the context */

static CUcontext ctx;
static CUresult init_result = CUDA_ERROR_NOT_INITIALIZED;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init(void)
{
    CUdevice dev;
    init_result = cuInit(0);
    if (init_result == CUDA_SUCCESS)
        init_result = cuDeviceGet(&dev, 0);
    if (init_result == CUDA_SUCCESS)
        init_result = cuDevicePrimaryCtxRetain(&ctx, dev);
}

/* The device's primary context, current on the calling thread, as the
 * runtime makes it on a thread's first call. */
static cudaError_t ready(void)
{
    pthread_once(&init_once, init);
    if (init_result != CUDA_SUCCESS)
        return init_result == CUDA_ERROR_NO_DEVICE ? cudaErrorNoDevice : cudaErrorInitializationError;
    return cuCtxSetCurrent(ctx) == CUDA_SUCCESS ? cudaSuccess : cudaErrorInitializationError;
}

static cudaError_t from(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE: return cudaErrorInvalidValue;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NO_DEVICE: return cudaErrorNoDevice;
    case CUDA_ERROR_NOT_FOUND: return cudaErrorSymbolNotFound;
    default: return cudaErrorUnknown;
    }
}

/* ------------------------------------------- what nvcc's host code calls */

/* The kernels the program registered: host stub -> device name -> the
 * driver's function, looked up at the first launch. */
#define MAX_KERNELS 256
static struct kernel {
    const void *stub;
    const char *name;
    CUfunction f;
} kernels[MAX_KERNELS];
static int nkernels;
static pthread_mutex_t kernels_lock = PTHREAD_MUTEX_INITIALIZER;
static char fatbin_handle; /* one module: the driver double has one table of functions */

RT void **__cudaRegisterFatBinary(void *fatCubin)
{
    (void)fatCubin;
    static void *handle = &fatbin_handle;
    return &handle;
}
RT void __cudaRegisterFatBinaryEnd(void **handle) { (void)handle; }
RT void __cudaUnregisterFatBinary(void **handle) { (void)handle; }
RT char __cudaInitModule(void **handle) { (void)handle; return 1; }

RT void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun, const char *deviceName,
                               int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim, dim3 *gDim, int *wSize)
{
    /* deviceFun is the name in the module (mangled), deviceName the source's */
    (void)handle, (void)deviceName, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    pthread_mutex_lock(&kernels_lock);
    if (nkernels < MAX_KERNELS)
        kernels[nkernels++] = (struct kernel){.stub = hostFun, .name = deviceFun};
    else
        fprintf(stderr, "fake libcudart: more than %d kernels registered; %s left out\n", MAX_KERNELS, deviceFun);
    pthread_mutex_unlock(&kernels_lock);
}

RT cudaError_t __cudaGetKernel(cudaKernel_t *out, const void *stub)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return e;
    e = cudaErrorInvalidDeviceFunction;
    pthread_mutex_lock(&kernels_lock);
    for (int i = 0; i < nkernels; i++) {
        if (kernels[i].stub != stub)
            continue;
        CUmodule m;
        if (!kernels[i].f && cuModuleLoadData(&m, &fatbin_handle) == CUDA_SUCCESS)
            cuModuleGetFunction(&kernels[i].f, m, kernels[i].name);
        if (kernels[i].f) {
            *out = (cudaKernel_t)kernels[i].f;
            e = cudaSuccess;
        }
        break;
    }
    pthread_mutex_unlock(&kernels_lock);
    return e;
}

/* <<<grid, block, shmem, stream>>> pushes its configuration, the stub pops
 * it: per thread, a few deep (a launch inside a launch's arguments). */
static __thread struct config {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
} configs[8];
static __thread int nconfigs;

RT unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shmem, struct CUstream_st *stream)
{
    if (nconfigs == 8)
        return 1;
    configs[nconfigs++] = (struct config){grid, block, shmem, stream};
    return 0;
}

RT cudaError_t __cudaPopCallConfiguration(dim3 *grid, dim3 *block, size_t *shmem, void *stream)
{
    if (!nconfigs)
        return cudaErrorMissingConfiguration;
    struct config c = configs[--nconfigs];
    *grid = c.grid, *block = c.block, *shmem = c.shmem;
    *(cudaStream_t *)stream = c.stream;
    return cudaSuccess;
}

RT cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return e;
    return from(cuLaunchKernel((CUfunction)k, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, (CUstream)s, args, NULL));
}

RT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return e;
    return from(cuLaunchKernel_ptsz((CUfunction)k, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, (CUstream)s, args,
                                    NULL));
}

/* ------------------------------------------------------ the runtime API */

RT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return e;
    CUdevice dev;
    CUresult r = cuDeviceGet(&dev, device);
    if (r != CUDA_SUCCESS)
        return cudaErrorInvalidDevice;
    memset(prop, 0, sizeof *prop);
    return from(cuDeviceGetName(prop->name, (int)sizeof prop->name, dev));
}

RT cudaError_t cudaMalloc(void **p, size_t n)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return e;
    CUdeviceptr d;
    CUresult r = cuMemAlloc(&d, n);
    *p = r == CUDA_SUCCESS ? (void *)(uintptr_t)d : NULL;
    return from(r);
}

RT cudaError_t cudaFree(void *p)
{
    cudaError_t e = ready();
    return e != cudaSuccess ? e : from(cuMemFree((CUdeviceptr)(uintptr_t)p));
}

/* The driver double runs a kernel when it is launched, so a copy in stream
 * order is a copy now. */
RT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    cudaError_t e = ready();
    if (e != cudaSuccess)
        return e;
    switch (kind) {
    case cudaMemcpyHostToDevice: return from(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)dst, src, n));
    case cudaMemcpyDeviceToHost: return from(cuMemcpyDtoH(dst, (CUdeviceptr)(uintptr_t)src, n));
    default: return cudaErrorInvalidMemcpyDirection;
    }
}

RT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s)
{
    (void)s;
    return cudaMemcpy(dst, src, n, kind);
}

RT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    cudaError_t e = ready();
    return e != cudaSuccess ? e : from(cuStreamCreate((CUstream *)s, flags));
}

RT cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    cudaError_t e = ready();
    return e != cudaSuccess ? e : from(cuStreamSynchronize((CUstream)s));
}

RT cudaError_t cudaDeviceSynchronize(void)
{
    cudaError_t e = ready();
    return e != cudaSuccess ? e : from(cuCtxSynchronize());
}

RT const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorMissingConfiguration: return "__global__ function call is not configured";
    default: return "unknown error (fake libcudart)";
    }
}
