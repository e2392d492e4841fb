// kern_cuda.cu -- kern_cuda's device side: the probe, each case's life (buffers, stream, handles, random
// inputs on the device, teardown), timing with CUDA events, the check against kern_cuda_case.c's
// reference, and the GEMMs (cublasGemmEx for fp32 / tf32 / fp16 / bf16, cuBLASLt for fp8, int8 and the
// GELU_BIAS epilogue). The module's own kernels are in kern_cuda_nn.cu. No global mutable state: every
// call creates and destroys what it uses.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kern_cuda_impl.h"

// ---- errors ----

static int vmsg(struct kcui_job *j, int rc, const char *fmt, va_list ap)
{
    if (j->err && j->errn)
        vsnprintf(j->err, j->errn, fmt, ap);
    return rc;
}

int kcui_fail(struct kcui_job *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vmsg(j, -1, fmt, ap);
    va_end(ap);
    return rc;
}

int kcui_skip(struct kcui_job *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vmsg(j, KCU_SKIP, fmt, ap);
    va_end(ap);
    return rc;
}

int kcui_cuda(struct kcui_job *j, cudaError_t e, const char *what)
{
    if (e == cudaSuccess)
        return 0;
    if (e == cudaErrorMemoryAllocation) { // not sticky: clear it, and the case is one this GPU cannot hold
        cudaGetLastError();
        return kcui_skip(j, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    }
    return kcui_fail(j, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

int kcui_blas(struct kcui_job *j, cublasStatus_t s, const char *what)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return 0;
    if (s == CUBLAS_STATUS_NOT_SUPPORTED) // a shape or type combination this library or GPU lacks
        return kcui_skip(j, "%s: %s (%s)", what, cublasGetStatusString(s), cublasGetStatusName(s));
    return kcui_fail(j, "%s: %s (%s)", what, cublasGetStatusString(s), cublasGetStatusName(s));
}

#define CU(j, x) TRY(kcui_cuda((j), (x), #x))
#define BL(j, x) TRY(kcui_blas((j), (x), #x))

unsigned kcui_grid(const struct kcui_job *j, long long work, int threads)
{
    long long want = (work + threads - 1) / threads, cap = 8LL * (j->sms > 0 ? j->sms : 1) * (1024 / threads);
    return (unsigned)std::max(1LL, std::min(want, cap));
}

// ---- probe ----

static void put(char *err, size_t errn, const char *fmt, ...)
{
    if (!err || !errn)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errn, fmt, ap);
    va_end(ap);
}

extern "C" int kcu_probe(struct kcu_info *info, char *err, size_t errn)
{
    struct kcu_info tmp;
    struct kcu_info *in = info ? info : &tmp;
    memset(in, 0, sizeof *in);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        put(err, errn, "no CUDA device: cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
        return -1;
    }
    if (n < 1) {
        put(err, errn, "no CUDA device: the driver lists none");
        return -1;
    }
    cudaDeviceProp p;
    int a[6] = {0, 0, 0, 0, 0, 0};
    static const cudaDeviceAttr which[6] = {cudaDevAttrClockRate, cudaDevAttrMemoryClockRate,
                                            cudaDevAttrGlobalMemoryBusWidth, cudaDevAttrL2CacheSize,
                                            cudaDevAttrMultiProcessorCount, cudaDevAttrComputeCapabilityMajor};
    if ((e = cudaGetDeviceProperties(&p, 0)) != cudaSuccess) {
        put(err, errn, "no CUDA device: cudaGetDeviceProperties: %s", cudaGetErrorString(e));
        return -1;
    }
    for (int i = 0; i < 6; i++)
        if ((e = cudaDeviceGetAttribute(&a[i], which[i], 0)) != cudaSuccess) {
            put(err, errn, "cudaDeviceGetAttribute: %s", cudaGetErrorString(e));
            return -1;
        }
    size_t fr = 0, tot = 0;
    if ((e = cudaMemGetInfo(&fr, &tot)) != cudaSuccess) {
        put(err, errn, "cudaMemGetInfo: %s", cudaGetErrorString(e));
        return -1;
    }
    snprintf(in->name, sizeof in->name, "%s", p.name);
    in->cc_major = p.major;
    in->cc_minor = p.minor;
    in->sm_clock_MHz = a[0] / 1000;
    in->mem_clock_MHz = a[1] / 1000;
    in->bus_width_bits = a[2];
    in->mem_GBps = 2.0 * a[1] * 1e3 * a[2] / 8 / 1e9;
    in->l2_bytes = a[3];
    in->sms = a[4];
    in->total_bytes = (double)tot;
    in->free_bytes = (double)fr;
    cudaDriverGetVersion(&in->driver_version);
    cudaRuntimeGetVersion(&in->runtime_version);
    return 0;
}

// ---- random inputs and widening, on the device ----

// A counter-based hash (splitmix64's finalizer) of (seed, i): the same values on every run and GPU.
__device__ __forceinline__ float kcu_rand(uint64_t seed, long long i)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 8388608.0f) - 1.0f; // [-1, 1), 24 bits
}

// Uniform [-1, 1) in the buffer's type; int8 gets the integers -8 .. 7.
__global__ void kcu_fill(void *p, long long n, int dt, uint64_t seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float u = kcu_rand(seed, i);
        switch (dt) {
        case KCUI_F32: ((float *)p)[i] = u; break;
        case KCUI_F16: ((__half *)p)[i] = __float2half(u); break;
        case KCUI_BF16: ((__nv_bfloat16 *)p)[i] = __float2bfloat16(u); break;
        case KCUI_FP8: ((__nv_fp8_e4m3 *)p)[i] = __nv_fp8_e4m3(u); break;
        case KCUI_I8: ((int8_t *)p)[i] = (int8_t)floorf(u * 8); break;
        default: ((int32_t *)p)[i] = (int32_t)floorf(u * 8); break;
        }
    }
}

// Any element type to float (exact for all but int32 beyond 2^24: kcu_check copies int32 raw).
__global__ void kcu_widen(const void *p, long long n, int dt, float *y)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        float v;
        switch (dt) {
        case KCUI_F32: v = ((const float *)p)[i]; break;
        case KCUI_F16: v = __half2float(((const __half *)p)[i]); break;
        case KCUI_BF16: v = __bfloat162float(((const __nv_bfloat16 *)p)[i]); break;
        case KCUI_FP8: v = (float)((const __nv_fp8_e4m3 *)p)[i]; break;
        case KCUI_I8: v = ((const int8_t *)p)[i]; break;
        default: v = (float)((const int32_t *)p)[i]; break;
        }
        y[i] = v;
    }
}

// ---- GEMM: C[M][N] = A[M][K] B[N][K]^T ----
// cuBLAS is column-major: the row-major C[M][N] is C^T[N][M], and C^T = B A^T, so every call passes
// the weights B [N][K] transposed (m = N) and the activations A [M][K] as they are (n = M), leading
// dimension K both; this is the "TN" form cuBLASLt requires for fp8 and int8.

static cudaDataType_t cuda_type(enum kcui_dt t)
{
    static const cudaDataType_t m[] = {CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF, CUDA_R_8F_E4M3, CUDA_R_8I, CUDA_R_32I};
    return m[t];
}

static int gemm_uses_lt(const struct kcu_case *c)
{
    return c->kind == KCU_GEMM_BIAS_GELU || c->prec == KCU_FP8 || c->prec == KCU_INT8;
}

static int lt_heuristic(struct kcui_job *j, cublasLtMatmulPreference_t pref)
{
    uint64_t ws = j->ws_bytes;
    BL(j, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t res;
    int n = 0;
    memset(&res, 0, sizeof res);
    BL(j, cublasLtMatmulAlgoGetHeuristic(j->lt, j->ltop, j->lta, j->ltb, j->ltc, j->ltc, pref, 1, &res, &n));
    if (n < 1)
        return kcui_skip(j, "cuBLASLt has no algorithm for this %s GEMM on this GPU", kcu_prec_names[j->c->prec]);
    j->algo = res.algo;
    return 0;
}

static int gemm_setup(struct kcui_job *j)
{
    const struct kcu_case *c = j->c;
    const enum kcui_dt in = j->plan.dt[0], out = j->plan.dt[j->plan.nbuf - 1];
    if (!gemm_uses_lt(c)) {
        snprintf(j->impl, sizeof j->impl, "%s",
                 c->prec == KCU_FP32   ? "cublasGemmEx fp32 (no TF32)"
                 : c->prec == KCU_TF32 ? "cublasGemmEx fp32 data on TF32 tensor cores"
                 : c->prec == KCU_FP16 ? "cublasGemmEx fp16 (fp32 accumulation)"
                                       : "cublasGemmEx bf16 (fp32 accumulation)");
        return 0;
    }
    const int i8 = c->prec == KCU_INT8;
    const uint64_t M = (uint64_t)c->gemm.M, N = (uint64_t)c->gemm.N, K = (uint64_t)c->gemm.K;
    BL(j, cublasLtMatmulDescCreate(&j->ltop, i8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F, i8 ? CUDA_R_32I : CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    BL(j, cublasLtMatmulDescSetAttribute(j->ltop, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    BL(j, cublasLtMatmulDescSetAttribute(j->ltop, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (c->kind == KCU_GEMM_BIAS_GELU) { // bias[N] runs along m, the rows of the column-major D
        const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_GELU_BIAS;
        const void *bias = j->buf[2];
        BL(j, cublasLtMatmulDescSetAttribute(j->ltop, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
        BL(j, cublasLtMatmulDescSetAttribute(j->ltop, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    }
    BL(j, cublasLtMatrixLayoutCreate(&j->lta, cuda_type(in), K, N, K));
    BL(j, cublasLtMatrixLayoutCreate(&j->ltb, cuda_type(in), K, M, K));
    BL(j, cublasLtMatrixLayoutCreate(&j->ltc, cuda_type(out), N, M, N));
    cublasLtMatmulPreference_t pref = nullptr;
    BL(j, cublasLtMatmulPreferenceCreate(&pref));
    int rc = lt_heuristic(j, pref);
    cublasLtMatmulPreferenceDestroy(pref);
    if (rc)
        return rc;
    snprintf(j->impl, sizeof j->impl, "%s",
             c->kind == KCU_GEMM_BIAS_GELU ? (c->prec == KCU_FP16 ? "cublasLt fp16 + GELU_BIAS epilogue"
                                                                   : "cublasLt bf16 + GELU_BIAS epilogue")
             : i8                          ? "cublasLt int8 -> int32"
                                           : "cublasLt fp8 e4m3 -> bf16");
    return 0;
}

static int gemm_launch(struct kcui_job *j)
{
    const struct kcu_case *c = j->c;
    const int M = (int)c->gemm.M, N = (int)c->gemm.N, K = (int)c->gemm.K;
    void *C = j->buf[j->plan.nbuf - 1];
    if (!gemm_uses_lt(c)) {
        const float alpha = 1, beta = 0;
        const cudaDataType_t t = cuda_type(j->plan.dt[0]);
        BL(j, cublasGemmEx(j->blas, CUBLAS_OP_T, CUBLAS_OP_N, N, M, K, &alpha, j->buf[1], t, K, j->buf[0], t, K, &beta,
                           C, t, N, c->prec == KCU_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                           CUBLAS_GEMM_DEFAULT));
        return 0;
    }
    const float fa = 1, fb = 0;
    const int32_t ia = 1, ib = 0;
    const int i8 = c->prec == KCU_INT8;
    BL(j, cublasLtMatmul(j->lt, j->ltop, i8 ? (const void *)&ia : (const void *)&fa, j->buf[1], j->lta, j->buf[0], j->ltb,
                         i8 ? (const void *)&ib : (const void *)&fb, C, j->ltc, C, j->ltc, &j->algo, j->ws, j->ws_bytes,
                         j->st));
    return 0;
}

// ---- one case's life ----

static int is_gemm(const struct kcu_case *c) { return c->kind == KCU_GEMM || c->kind == KCU_GEMM_BIAS_GELU; }

static const uint64_t KCU_SEED = 0x6473652d6b6375ull; // "dse-kcu"

static int job_open(struct kcui_job *j, const struct kcu_case *c)
{
    char why[256];
    if (!c || kcu_validate(c, why, sizeof why))
        return kcui_fail(j, "invalid case: %s", c ? why : "none");
    j->c = c;
    kcui_plan(c, &j->plan);
    int n = 0, major = 0, minor = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return kcui_fail(j, "no CUDA device: cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    if (n < 1)
        return kcui_fail(j, "no CUDA device: the driver lists none");
    CU(j, cudaSetDevice(0));
    CU(j, cudaDeviceGetAttribute(&j->sms, cudaDevAttrMultiProcessorCount, 0));
    CU(j, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CU(j, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
    CU(j, cudaDeviceGetAttribute(&j->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
    j->cc = 10 * major + minor;
    if (j->cc < 80)
        return kcui_skip(j, "compute capability %d.%d: this module is built for 8.0 and newer", major, minor);
    if (c->prec == KCU_FP8 && j->cc < 89)
        return kcui_skip(j, "fp8 GEMMs need compute capability 8.9 or newer; this GPU has %d.%d", major, minor);
    size_t fr = 0, tot = 0;
    CU(j, cudaMemGetInfo(&fr, &tot));
    const double need = kcu_bytes(c);
    if (need > 0.97 * (double)fr)
        return kcui_skip(j, "needs %.2f GB of device memory; %.2f GB of %.2f GB free", need * 1e-9, fr * 1e-9, tot * 1e-9);
    CU(j, cudaStreamCreateWithFlags(&j->st, cudaStreamNonBlocking));
    if ((is_gemm(c) && !gemm_uses_lt(c)) || c->kind == KCU_CONV2D) {
        BL(j, cublasCreate(&j->blas));
        BL(j, cublasSetStream(j->blas, j->st));
    }
    if (is_gemm(c) && gemm_uses_lt(c))
        BL(j, cublasLtCreate(&j->lt));
    for (int i = 0; i < j->plan.nbuf; i++) {
        const size_t bytes = (size_t)j->plan.n[i] * kcui_dt_bytes[j->plan.dt[i]];
        char what[64];
        snprintf(what, sizeof what, "cudaMalloc (%s, %.3g MB)", j->plan.name[i], bytes * 1e-6);
        TRY(kcui_cuda(j, cudaMalloc(&j->buf[i], bytes ? bytes : 1), what));
        if (i < j->plan.nbuf - 1) {
            kcu_fill<<<kcui_grid(j, j->plan.n[i], 256), 256, 0, j->st>>>(j->buf[i], j->plan.n[i], j->plan.dt[i],
                                                                             KCU_SEED + 0x1000193ull * (uint64_t)i);
            CU(j, cudaGetLastError());
        } else {
            CU(j, cudaMemsetAsync(j->buf[i], 0, bytes, j->st));
        }
    }
    if (j->plan.ws_bytes > 0) {
        j->ws_bytes = (size_t)j->plan.ws_bytes;
        TRY(kcui_cuda(j, cudaMalloc(&j->ws, j->ws_bytes), "cudaMalloc (workspace)"));
    }
    TRY(is_gemm(c) ? gemm_setup(j) : kcui_nn_setup(j));
    CU(j, cudaStreamSynchronize(j->st));
    return 0;
}

static int job_launch(struct kcui_job *j)
{
    TRY(is_gemm(j->c) ? gemm_launch(j) : kcui_nn_launch(j));
    return kcui_cuda(j, cudaGetLastError(), "kernel launch");
}

// Frees whatever job_open created, in reverse; errors here are ignored (the result is already known).
static void job_close(struct kcui_job *j)
{
    if (j->st)
        cudaStreamSynchronize(j->st);
    if (j->ltc)
        cublasLtMatrixLayoutDestroy(j->ltc);
    if (j->ltb)
        cublasLtMatrixLayoutDestroy(j->ltb);
    if (j->lta)
        cublasLtMatrixLayoutDestroy(j->lta);
    if (j->ltop)
        cublasLtMatmulDescDestroy(j->ltop);
    if (j->lt)
        cublasLtDestroy(j->lt);
    if (j->blas)
        cublasDestroy(j->blas);
    if (j->ws)
        cudaFree(j->ws);
    for (int i = 0; i < KCUI_MAXBUF; i++)
        if (j->buf[i])
            cudaFree(j->buf[i]);
    if (j->st)
        cudaStreamDestroy(j->st);
    memset(j, 0, sizeof *j);
}

static double quantile(const std::vector<float> &v, double p)
{
    const double pos = p * (double)(v.size() - 1);
    const size_t lo = (size_t)pos;
    const double f = pos - (double)lo;
    return lo + 1 < v.size() ? v[lo] + f * (v[lo + 1] - v[lo]) : v[lo];
}

extern "C" int kcu_time(const struct kcu_case *c, int warmup, int min_runs, double min_ms, struct kcu_timing *t,
                        char *err, size_t errn)
{
    struct kcui_job j;
    memset(&j, 0, sizeof j);
    j.err = err;
    j.errn = errn;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    std::vector<float> ms;
    double total = 0;
    int rc = 0;
    if (t)
        memset(t, 0, sizeof *t);
    if ((rc = job_open(&j, c)) || (rc = kcui_cuda(&j, cudaEventCreate(&e0), "cudaEventCreate")) ||
        (rc = kcui_cuda(&j, cudaEventCreate(&e1), "cudaEventCreate")))
        goto out;
    for (int i = 0; i < warmup; i++)
        if ((rc = job_launch(&j)))
            goto out;
    if ((rc = kcui_cuda(&j, cudaStreamSynchronize(j.st), "warm-up runs")))
        goto out;
    // Events on the stream bracket each run alone: what a graph replay or a busy stream would see,
    // without the host's launch gap between runs.
    while (ms.empty() || (int)ms.size() < min_runs || total < min_ms) {
        float x = 0;
        if ((rc = kcui_cuda(&j, cudaEventRecord(e0, j.st), "cudaEventRecord")) || (rc = job_launch(&j)) ||
            (rc = kcui_cuda(&j, cudaEventRecord(e1, j.st), "cudaEventRecord")) ||
            (rc = kcui_cuda(&j, cudaEventSynchronize(e1), "timed run")) ||
            (rc = kcui_cuda(&j, cudaEventElapsedTime(&x, e0, e1), "cudaEventElapsedTime")))
            goto out;
        ms.push_back(x);
        total += x;
        if (ms.size() >= 1000000) // a kernel below the events' resolution: enough samples
            break;
    }
    std::sort(ms.begin(), ms.end());
    if (t) {
        t->median_ms = quantile(ms, 0.5);
        t->p25_ms = quantile(ms, 0.25);
        t->p75_ms = quantile(ms, 0.75);
        t->min_ms = ms[0];
        t->runs = (int)ms.size();
        snprintf(t->impl, sizeof t->impl, "%s", j.impl);
    }
out:
    if (e1)
        cudaEventDestroy(e1);
    if (e0)
        cudaEventDestroy(e0);
    job_close(&j);
    return rc;
}

// Buffer i of the job as doubles on the host (int32 copied raw, the rest widened to float on the device).
static int download(struct kcui_job *j, int i, float *tmp_dev, double *y, float *yf)
{
    const long long n = j->plan.n[i];
    if (j->plan.dt[i] == KCUI_I32) {
        std::vector<int32_t> v((size_t)n);
        CU(j, cudaMemcpy(v.data(), j->buf[i], (size_t)n * 4, cudaMemcpyDeviceToHost));
        for (long long k = 0; k < n; k++)
            y[k] = v[(size_t)k];
        return 0;
    }
    kcu_widen<<<kcui_grid(j, n, 256), 256, 0, j->st>>>(j->buf[i], n, j->plan.dt[i], tmp_dev);
    CU(j, cudaGetLastError());
    CU(j, cudaStreamSynchronize(j->st));
    CU(j, cudaMemcpy(yf, tmp_dev, (size_t)n * 4, cudaMemcpyDeviceToHost));
    if (y)
        for (long long k = 0; k < n; k++)
            y[k] = yf[k];
    return 0;
}

extern "C" int kcu_check(const struct kcu_case *c, double *rel_err, double *tol, char *err, size_t errn)
{
    struct kcui_job j;
    memset(&j, 0, sizeof j);
    j.err = err;
    j.errn = errn;
    float *in[KCUI_MAXBUF] = {nullptr}, *tmp = nullptr, *yf = nullptr;
    double *ref = nullptr, *y = nullptr, e = 0, bound = c ? kcui_tol(c) : 0;
    long long worst = 0, most = 0, nout = 0;
    int rc = 0, last = 0;
    if (rel_err)
        *rel_err = 0;
    if (tol)
        *tol = bound;
    if ((rc = job_open(&j, c)))
        goto out;
    last = j.plan.nbuf - 1;
    nout = j.plan.n[last];
    for (int i = 0; i < j.plan.nbuf; i++)
        most = std::max(most, j.plan.n[i]);
    if ((rc = job_launch(&j)) || (rc = kcui_cuda(&j, cudaStreamSynchronize(j.st), "the checked run")) ||
        (rc = kcui_cuda(&j, cudaMalloc(&tmp, (size_t)most * 4), "cudaMalloc (check)")))
        goto out;
    ref = (double *)malloc((size_t)nout * sizeof *ref);
    y = (double *)malloc((size_t)nout * sizeof *y);
    yf = (float *)malloc((size_t)nout * sizeof *yf);
    if (!ref || !y || !yf) {
        rc = kcui_fail(&j, "out of host memory for the check");
        goto out;
    }
    for (int i = 0; i < last; i++) {
        if (!(in[i] = (float *)malloc((size_t)j.plan.n[i] * sizeof(float)))) {
            rc = kcui_fail(&j, "out of host memory for the check");
            goto out;
        }
        if ((rc = download(&j, i, tmp, nullptr, in[i])))
            goto out;
    }
    if ((rc = download(&j, last, tmp, y, yf)))
        goto out;
    kcui_reference(c, in, ref);
    e = kcui_compare(ref, y, nout, &worst);
    if (rel_err)
        *rel_err = e;
    if (!(e <= bound)) {
        char shape[160];
        kcu_shape(c, shape, sizeof shape);
        rc = kcui_fail(&j, "%s %s %s (%s): relative error %.3g above %.3g, at output %lld: %.6g where %.6g", 
                       kcu_kind_names[c->kind], kcu_prec_names[c->prec], shape, j.impl, e, bound, worst,
                       y[worst], ref[worst]);
        rc = 1;
    }
out:
    for (int i = 0; i < KCUI_MAXBUF; i++)
        free(in[i]);
    free(ref);
    free(y);
    free(yf);
    if (tmp)
        cudaFree(tmp);
    job_close(&j);
    return rc;
}
