/* Shared virtual memory (OpenCL 2.x): a coarse-grained SVM buffer passed
 * with clSetKernelArgSVMPointer, mapped and unmapped around the host's
 * writes and reads, and a kernel following a pointer stored in SVM
 * (clSetKernelExecInfo). Skipped where the device has no SVM. */
#include "common.h"

enum { N = 256 };

static const char *src = "__kernel void svm_add(__global int *x, int k) { x[get_global_id(0)] += k; }\n"
                         "typedef struct { __global int *p; } holder;\n"
                         "__kernel void svm_follow(__global holder *h) { h->p[get_global_id(0)] *= 2; }\n";

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    cl_device_svm_capabilities caps = 0;
    cl_int err = clGetDeviceInfo(c.device, CL_DEVICE_SVM_CAPABILITIES, sizeof caps, &caps, NULL);
    if (conf_device_version(c.device) < 20 || err != CL_SUCCESS || !(caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER))
        conf_skip("the device has no coarse-grained SVM (OpenCL %d.%d, capabilities %#lx)",
                  conf_device_version(c.device) / 10, conf_device_version(c.device) % 10, (unsigned long)caps);
    int *x = clSVMAlloc(c.ctx, CL_MEM_READ_WRITE, N * sizeof *x, 0);
    void **h = clSVMAlloc(c.ctx, CL_MEM_READ_WRITE, sizeof(void *), 0);
    if (!x || !h)
        conf_skip("clSVMAlloc failed");
    cl_program p = conf_build(&c, src);
    cl_kernel add = conf_kernel(p, "svm_add"), follow = conf_kernel(p, "svm_follow");
    CL(clEnqueueSVMMap(c.queue, CL_TRUE, CL_MAP_WRITE, x, N * sizeof *x, 0, NULL, NULL));
    CL(clEnqueueSVMMap(c.queue, CL_TRUE, CL_MAP_WRITE, h, sizeof(void *), 0, NULL, NULL));
    for (int i = 0; i < N; i++)
        x[i] = i;
    *h = x;
    CL(clEnqueueSVMUnmap(c.queue, x, 0, NULL, NULL));
    CL(clEnqueueSVMUnmap(c.queue, h, 0, NULL, NULL));
    int k = 5;
    CL(clSetKernelArgSVMPointer(add, 0, x));
    CL(clSetKernelArg(add, 1, sizeof k, &k));
    CL(clSetKernelArgSVMPointer(follow, 0, h));
    void *used[] = {x};
    CL(clSetKernelExecInfo(follow, CL_KERNEL_EXEC_INFO_SVM_PTRS, sizeof used, used));
    for (int r = 0; r < 4; r++) {
        conf_ndrange1(c.queue, add, "svm_add", N, 0, NULL, NULL);
        conf_ndrange1(c.queue, follow, "svm_follow", N, 0, NULL, NULL);
    }
    CL(clEnqueueSVMMap(c.queue, CL_TRUE, CL_MAP_READ, x, N * sizeof *x, 0, NULL, NULL));
    bool ok = true;
    for (int i = 0; i < N && ok; i++) {
        int v = i;
        for (int r = 0; r < 4; r++)
            v = (v + 5) * 2;
        if (x[i] != v) {
            fprintf(stderr, "svm: element %d is %d, expected %d\n", i, x[i], v);
            ok = false;
        }
    }
    CL(clEnqueueSVMUnmap(c.queue, x, 0, NULL, NULL));
    CL(clFinish(c.queue));
    CHECK(ok, "8 kernels on SVM, through an argument and through a pointer in SVM");
    clSVMFree(c.ctx, x);
    clSVMFree(c.ctx, h);
    conf_release("kkp", add, follow, p);
    conf_close(&c);
    return conf_finish(true);
}
