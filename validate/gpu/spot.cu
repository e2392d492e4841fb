// spot.cu -- measures three kernels on an NVIDIA GPU to check dse's analytical model against:
// a compute-bound fp16 GEMM (cuBLAS, tensor cores), a memory-bound fp16 element-wise add, and a
// decode-like fp16 GEMV. Median of 50 timed runs after 10 warm-up runs, CUDA events.
// Build: nvcc -O2 -o spot spot.cu -lcublas     Run: ./spot   (prints CSV: kernel,shape,median_ms,min_ms,max_ms)
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdio>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void add_h(const __half2 *a, const __half2 *b, __half2 *c, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        c[i] = __hadd2(a[i], b[i]);
}

template <class F> static int timeit(const char *name, const char *shape, F f)
{
    cudaEvent_t s, e;
    cudaEventCreate(&s);
    cudaEventCreate(&e);
    for (int i = 0; i < 10; i++) f();
    std::vector<float> t;
    for (int i = 0; i < 50; i++) {
        cudaEventRecord(s);
        f();
        cudaEventRecord(e);
        cudaEventSynchronize(e);
        float ms;
        cudaEventElapsedTime(&ms, s, e);
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    printf("%s,%s,%.6f,%.6f,%.6f\n", name, shape, t[t.size() / 2], t.front(), t.back());
    return 0;
}

int main()
{
    cublasHandle_t h;
    cublasCreate(&h);
    const int n = 8192;
    __half *A, *B, *C;
    CK(cudaMalloc(&A, (size_t)n * n * 2));
    CK(cudaMalloc(&B, (size_t)n * n * 2));
    CK(cudaMalloc(&C, (size_t)n * n * 2));
    cudaMemset(A, 0, (size_t)n * n * 2);
    cudaMemset(B, 0, (size_t)n * n * 2);
    const __half one = __float2half(1.f), zero = __float2half(0.f);
    printf("kernel,shape,median_ms,min_ms,max_ms\n");
    timeit("gemm_fp16", "8192x8192x8192", [&] {
        cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A, n, B, n, &zero, C, n);
    });
    timeit("gemv_fp16", "1x8192x8192", [&] {
        cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, 1, n, &one, A, n, B, n, &zero, C, n);
    });
    const size_t m = (size_t)256 << 20; // 256 Mi fp16 elements = 512 MiB per operand
    __half2 *x, *y, *z;
    CK(cudaMalloc(&x, m * 2));
    CK(cudaMalloc(&y, m * 2));
    CK(cudaMalloc(&z, m * 2));
    timeit("add_fp16", "268435456", [&] { add_h<<<132 * 16, 256>>>(x, y, z, m / 2); });
    CK(cudaDeviceSynchronize());
    return 0;
}
