// Path: a library's launches: an SGEMM through hipBLAS (or rocBLAS, whichever the build
// found), checked against the CPU. Its kernels and their count are the library's choice:
// the runner expects at least one per GEMM call.
#include "common.h"
#if defined(FIKIT_USE_HIPBLAS)
#if __has_include(<hipblas/hipblas.h>)
#include <hipblas/hipblas.h>
#else
#include <hipblas.h>
#endif
#else
#if __has_include(<rocblas/rocblas.h>)
#include <rocblas/rocblas.h>
#else
#include <rocblas.h>
#endif
#endif
int main()
{
    const int M = 256, N = 192, K = 128, L = 20;
    std::vector<float> A(M * K), B(K * N), C(M * N, 0.0f), R(M * N, 0.0f);
    for (int i = 0; i < M * K; i++)
        A[i] = (float)((i * 7) % 11) / 11.0f;
    for (int i = 0; i < K * N; i++)
        B[i] = (float)((i * 5) % 13) / 13.0f;
    for (int j = 0; j < N; j++) // column-major reference
        for (int i = 0; i < M; i++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += (double)A[i + k * M] * B[k + j * K];
            R[i + j * M] = (float)s;
        }
    float *dA, *dB, *dC;
    CK(hipMalloc(&dA, A.size() * 4));
    CK(hipMalloc(&dB, B.size() * 4));
    CK(hipMalloc(&dC, C.size() * 4));
    CK(hipMemcpy(dA, A.data(), A.size() * 4, hipMemcpyHostToDevice));
    CK(hipMemcpy(dB, B.data(), B.size() * 4, hipMemcpyHostToDevice));
    float one = 1.0f, zero = 0.0f;
#if defined(FIKIT_USE_HIPBLAS)
    hipblasHandle_t h;
    if (hipblasCreate(&h) != HIPBLAS_STATUS_SUCCESS)
        return 1;
    for (int i = 0; i < L; i++)
        if (hipblasSgemm(h, HIPBLAS_OP_N, HIPBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M) !=
            HIPBLAS_STATUS_SUCCESS)
            return 1;
#else
    rocblas_handle h;
    if (rocblas_create_handle(&h) != rocblas_status_success)
        return 1;
    for (int i = 0; i < L; i++)
        if (rocblas_sgemm(h, rocblas_operation_none, rocblas_operation_none, M, N, K, &one, dA, M, dB,
                          K, &zero, dC, M) != rocblas_status_success)
            return 1;
#endif
    CK(hipDeviceSynchronize());
    CK(hipMemcpy(C.data(), dC, C.size() * 4, hipMemcpyDeviceToHost));
    double err = 0, ref = 0;
    for (int i = 0; i < M * N; i++) {
        err += (C[i] - R[i]) * (C[i] - R[i]);
        ref += R[i] * R[i];
    }
#if defined(FIKIT_USE_HIPBLAS)
    hipblasDestroy(h);
#else
    rocblas_destroy_handle(h);
#endif
    printf("launches-at-least %d\n", L);
    printf("relative error %.2e\n", std::sqrt(err / ref));
    printf("%s\n", std::sqrt(err / ref) < 1e-5 ? "result ok" : "result WRONG");
    return std::sqrt(err / ref) < 1e-5 ? 0 : 1;
}
