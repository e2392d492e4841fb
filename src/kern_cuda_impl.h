/* kern_cuda_impl.h -- the inside of the kern_cuda module, shared by its three files: kern_cuda_case.c
 * (host only: each case's buffers, counts and double-precision reference), kern_cuda.cu (device, timing,
 * checking, GEMMs) and kern_cuda_nn.cu (this module's own kernels). Not for use outside the module but
 * by its tests. The C part needs no CUDA headers; the part for the .cu files is under __CUDACC__. */
#ifndef DSE_KERN_CUDA_IMPL_H
#define DSE_KERN_CUDA_IMPL_H

#include "kern_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types of device buffers. */
enum kcui_dt { KCUI_F32, KCUI_F16, KCUI_BF16, KCUI_FP8, KCUI_I8, KCUI_I32 };
extern const int kcui_dt_bytes[]; /* 4, 2, 2, 1, 1, 4 */

#define KCUI_MAXBUF 5
/* A case's device buffers: inputs first (filled with random values), the output last (zeroed), and the
 * scratch its kernels need (workspace; cuBLASLt's included). Sizes in elements and bytes. */
struct kcui_plan {
    int nbuf;
    long long n[KCUI_MAXBUF];
    enum kcui_dt dt[KCUI_MAXBUF];
    const char *name[KCUI_MAXBUF];
    double ws_bytes;
};
/* Fills p for a valid case (kcu_validate 0). */
void kcui_plan(const struct kcu_case *c, struct kcui_plan *p);

#define KCUI_LT_WS_BYTES (32.0 * 1024 * 1024) /* cuBLASLt workspace: what its heuristics may use */
#define KCUI_LIB_BYTES (128.0 * 1024 * 1024)  /* allowance for the handles' own allocations */
#define KCUI_FD_MAX_SPLITS 128                /* attention decode: the most key splits */
#define KCUI_FD_MAX_S 4                       /* attention: S at most this runs the decode kernel */
#define KCUI_FD_CHUNK_MIN 64                  /* attention decode: the fewest keys per split */

/* Host reference in double: in[i] holds input buffer i widened to float (exact for every element
 * type used), out the plan's output, n[nbuf-1] values. */
void kcui_reference(const struct kcu_case *c, const float *const *in, double *out);
/* The bound kcu_check applies to max |y - ref| / (|ref| + rms(ref)), and that measure over n outputs
 * (the index of the worst in *worst). */
double kcui_tol(const struct kcu_case *c);
double kcui_compare(const double *ref, const double *y, long long n, long long *worst);

/* The attention kernel's tiled algorithm (kern_cuda_nn.cu) run on the host, its block emulated one
 * phase at a time and WMMA replaced by scalar 16x16x16 products over the same shared-memory tiles, so
 * that the tiling, masking and online softmax are tested without a GPU. Inputs and output as floats
 * (rounded to the case's precision on the way in and out). 0, or -1 for an unsupported case. */
int kcui_attention_emulate(const struct kcu_case *c, const float *q, const float *k, const float *v, float *o);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

/* One prepared case: what kcu_time and kcu_check create, run and destroy. */
struct kcui_job {
    const struct kcu_case *c;
    struct kcui_plan plan;
    void *buf[KCUI_MAXBUF];
    void *ws;
    size_t ws_bytes;
    cudaStream_t st;
    cublasHandle_t blas;
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t ltop;
    cublasLtMatrixLayout_t lta, ltb, ltc;
    cublasLtMatmulAlgo_t algo;
    int sms, cc;          /* streaming multiprocessors; compute capability x 10 */
    int smem_optin;       /* bytes of shared memory a block may opt in to */
    int splits, chunk;    /* attention decode: key splits, keys per split */
    char impl[96];
    char *err;
    size_t errn;
};

/* Error reporting: write the message into j->err and return -1 (KCU_SKIP for kcui_skip). */
int kcui_fail(struct kcui_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int kcui_skip(struct kcui_job *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int kcui_cuda(struct kcui_job *j, cudaError_t e, const char *what);
int kcui_blas(struct kcui_job *j, cublasStatus_t s, const char *what);

/* kern_cuda_nn.cu: per kind, setup after the buffers exist (launch shapes, attributes, impl), and one
 * launch on j->st. 0 or an error from the functions above. */
int kcui_nn_setup(struct kcui_job *j);
int kcui_nn_launch(struct kcui_job *j);
/* kern_cuda_attn.cu: the same for attention. */
int kcui_attn_setup(struct kcui_job *j);
int kcui_attn_launch(struct kcui_job *j);
/* Grid size for grid-stride loops: enough blocks of `threads` to fill the GPU a few times over. */
unsigned kcui_grid(const struct kcui_job *j, long long work, int threads);

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define TRY(x)                                                                                                 \
    do {                                                                                                       \
        int rc_ = (x);                                                                                         \
        if (rc_)                                                                                               \
            return rc_;                                                                                        \
    } while (0)

/* Conversions between float and the element types, and warp reductions (every lane gets the result). */

__host__ __device__ __forceinline__ float to_f(float x) { return x; }
__host__ __device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
__host__ __device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> __host__ __device__ __forceinline__ T from_f(float x);
template <> __host__ __device__ __forceinline__ float from_f<float>(float x) { return x; }
template <> __host__ __device__ __forceinline__ __half from_f<__half>(float x) { return __float2half(x); }
template <> __host__ __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x)
{
    return __float2bfloat16(x);
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
#endif

#endif
