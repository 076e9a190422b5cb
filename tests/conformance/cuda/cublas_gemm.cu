// Path: a library's launches: cuBLAS SGEMM, checked against the CPU. Its kernels and their
// count are cuBLAS's choice: the runner expects at least one per GEMM call.
#include "common.h"
#include <cublas_v2.h>
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
    CK(cudaMalloc(&dA, A.size() * 4));
    CK(cudaMalloc(&dB, B.size() * 4));
    CK(cudaMalloc(&dC, C.size() * 4));
    CK(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        return 1;
    cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH); // plain fp32, no TF32
    float one = 1.0f, zero = 0.0f;
    for (int i = 0; i < L; i++)
        if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, dA, M, dB, K, &zero, dC, M) !=
            CUBLAS_STATUS_SUCCESS)
            return 1;
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(C.data(), dC, C.size() * 4, cudaMemcpyDeviceToHost));
    double err = 0, ref = 0;
    for (int i = 0; i < M * N; i++) {
        err += (C[i] - R[i]) * (C[i] - R[i]);
        ref += R[i] * R[i];
    }
    cublasDestroy(h);
    printf("launches-at-least %d\n", L);
    printf("relative error %.2e\n", std::sqrt(err / ref));
    printf("%s\n", std::sqrt(err / ref) < 1e-5 ? "result ok" : "result WRONG");
    return std::sqrt(err / ref) < 1e-5 ? 0 : 1;
}
