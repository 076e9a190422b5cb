// Not a case: tells the runner whether an AMD GPU is usable, and if not, why. Prints
// "device NAME, ARCH, HIP runtime R, driver D" and exits 0, or "no usable HIP device: WHY"
// and exits 1.
#include <cstdio>
#include <hip/hip_runtime.h>
int main()
{
    int n = 0;
    hipError_t e = hipGetDeviceCount(&n);
    if (e != hipSuccess) {
        printf("no usable HIP device: %s: %s\n", hipGetErrorName(e), hipGetErrorString(e));
        return 1;
    }
    if (n == 0) {
        printf("no usable HIP device: none found\n");
        return 1;
    }
    hipDeviceProp_t p;
    e = hipGetDeviceProperties(&p, 0);
    if (e != hipSuccess) {
        printf("no usable HIP device: hipGetDeviceProperties: %s\n", hipGetErrorString(e));
        return 1;
    }
    int drv = 0, rt = 0;
    (void)hipDriverGetVersion(&drv);
    (void)hipRuntimeGetVersion(&rt);
    printf("device %s, %s, HIP runtime %d, driver %d\n", p.name, p.gcnArchName, rt, drv);
    return 0;
}
