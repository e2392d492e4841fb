// kern_cuda_nn.cu -- kern_cuda's own kernels: element-wise and STREAM (grid-stride, 16-byte vectors),
// softmax / layernorm / rmsnorm per row (a warp per row up to 1024 columns, a block per row beyond),
// fused attention (FlashAttention-style tiles with WMMA for prefill, split keys for decode) and conv2d
// NHWC (im2col + cuBLAS, or a direct depthwise kernel). Launch shapes are chosen in kcui_nn_setup;
// kcui_nn_launch issues one run on the job's stream.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "kern_cuda_impl.h"

// ---- element-wise and STREAM ----

enum { EW_ADD, EW_GELU, EW_SILU, EW_COPY, EW_TRIAD };

__device__ __forceinline__ float gelu_f(float x) // tanh form, as kern.h and dse's graph count it
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
}

template <int OP> __device__ __forceinline__ float ew_op(float a, float b)
{
    return OP == EW_ADD ? a + b : OP == EW_GELU ? gelu_f(a) : OP == EW_SILU ? a / (1.0f + expf(-a)) : OP == EW_TRIAD ? a + 3.0f * b : a;
}

// 16 bytes per thread per step (4 floats or 8 halves), then a scalar tail. cudaMalloc's alignment (256
// bytes) makes every vector aligned.
template <class T, int OP>
__global__ void __launch_bounds__(256) ew_kernel(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ y,
                                                 long long n)
{
    constexpr int V = 16 / sizeof(T);
    constexpr bool two = OP == EW_ADD || OP == EW_TRIAD;
    const long long nv = n / V, step = (long long)gridDim.x * blockDim.x;
    const long long first = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    for (long long i = first; i < nv; i += step) {
        uint4 va = reinterpret_cast<const uint4 *>(a)[i], vb = va, vy;
        if (two)
            vb = reinterpret_cast<const uint4 *>(b)[i];
        const T *ea = reinterpret_cast<const T *>(&va), *eb = reinterpret_cast<const T *>(&vb);
        T *ey = reinterpret_cast<T *>(&vy);
#pragma unroll
        for (int k = 0; k < V; k++)
            ey[k] = from_f<T>(ew_op<OP>(to_f(ea[k]), to_f(eb[k])));
        reinterpret_cast<uint4 *>(y)[i] = vy;
    }
    for (long long i = nv * V + first; i < n; i += step)
        y[i] = from_f<T>(ew_op<OP>(to_f(a[i]), two ? to_f(b[i]) : 0.0f));
}

template <class T> static void ew_launch(const struct kcui_job *j, int op)
{
    const T *a = (const T *)j->buf[0], *b = j->plan.nbuf == 3 ? (const T *)j->buf[1] : a;
    T *y = (T *)j->buf[j->plan.nbuf - 1];
    const long long n = j->plan.n[0];
    const unsigned g = kcui_grid(j, (n + 16 / sizeof(T) - 1) / (16 / sizeof(T)), 256);
    switch (op) {
    case EW_ADD: ew_kernel<T, EW_ADD><<<g, 256, 0, j->st>>>(a, b, y, n); break;
    case EW_GELU: ew_kernel<T, EW_GELU><<<g, 256, 0, j->st>>>(a, b, y, n); break;
    case EW_SILU: ew_kernel<T, EW_SILU><<<g, 256, 0, j->st>>>(a, b, y, n); break;
    case EW_COPY: ew_kernel<T, EW_COPY><<<g, 256, 0, j->st>>>(a, b, y, n); break;
    default: ew_kernel<T, EW_TRIAD><<<g, 256, 0, j->st>>>(a, b, y, n); break;
    }
}

// ---- softmax, layernorm, rmsnorm per row (fp16 in and out, fp32 arithmetic) ----
// A team (one warp, or the whole block) owns a row and reads it two or three times: the statistic,
// then (softmax, layernorm) the second one, then the output. Rows up to 1024 columns fit in L1 between
// passes; longer rows stream from L2.

enum { ROW_SOFTMAX, ROW_LAYERNORM, ROW_RMSNORM };

template <bool BLOCK, bool MAX> __device__ __forceinline__ float team_reduce(float v, float *red)
{
    v = MAX ? warp_max(v) : warp_sum(v);
    if (!BLOCK)
        return v;
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads(); // red[] may still be read by the previous reduction
    if (lane == 0)
        red[w] = v;
    __syncthreads();
    v = lane < nw ? red[lane] : (MAX ? -INFINITY : 0.0f);
    return MAX ? warp_max(v) : warp_sum(v);
}

// Loads V consecutive halves (V = 8: one 16-byte vector) as floats.
template <int V> __device__ __forceinline__ void load_h(const __half *p, float *f)
{
    if (V == 8) {
        uint4 u = *reinterpret_cast<const uint4 *>(p);
        const __half *h = reinterpret_cast<const __half *>(&u);
#pragma unroll
        for (int k = 0; k < 8; k++)
            f[k] = __half2float(h[k]);
    } else {
#pragma unroll
        for (int k = 0; k < V; k++)
            f[k] = __half2float(p[k]);
    }
}

template <int V> __device__ __forceinline__ void store_h(__half *p, const float *f)
{
    if (V == 8) {
        uint4 u;
        __half *h = reinterpret_cast<__half *>(&u);
#pragma unroll
        for (int k = 0; k < 8; k++)
            h[k] = __float2half(f[k]);
        *reinterpret_cast<uint4 *>(p) = u;
    } else {
#pragma unroll
        for (int k = 0; k < V; k++)
            p[k] = __float2half(f[k]);
    }
}

template <int KIND, bool BLOCK, int V>
__global__ void row_kernel(const __half *__restrict__ x, const __half *__restrict__ g, const __half *__restrict__ bb,
                           __half *__restrict__ y, long long rows, int cols)
{
    __shared__ float red[32];
    const long long row = BLOCK ? (long long)blockIdx.x : blockIdx.x * (long long)(blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) // whole warps leave together; in BLOCK mode never taken
        return;
    const int rank = BLOCK ? threadIdx.x : (threadIdx.x & 31), size = BLOCK ? blockDim.x : 32;
    const __half *xr = x + row * cols;
    __half *yr = y + row * cols;
    float f[V], a = KIND == ROW_SOFTMAX ? -INFINITY : 0.0f, b = 0.0f;
    for (int c = rank * V; c < cols; c += size * V) { // first statistic: max, sum or sum of squares
        load_h<V>(xr + c, f);
#pragma unroll
        for (int k = 0; k < V; k++)
            a = KIND == ROW_SOFTMAX ? fmaxf(a, f[k]) : KIND == ROW_LAYERNORM ? a + f[k] : a + f[k] * f[k];
    }
    a = team_reduce<BLOCK, KIND == ROW_SOFTMAX>(a, red);
    if (KIND == ROW_LAYERNORM)
        a /= cols; // the mean
    if (KIND != ROW_RMSNORM) {
        for (int c = rank * V; c < cols; c += size * V) { // second: sum of exp(x - max), or of (x - mean)^2
            load_h<V>(xr + c, f);
#pragma unroll
            for (int k = 0; k < V; k++)
                b += KIND == ROW_SOFTMAX ? __expf(f[k] - a) : (f[k] - a) * (f[k] - a);
        }
        b = team_reduce<BLOCK, false>(b, red);
    }
    const float s = KIND == ROW_SOFTMAX ? 1.0f / b : KIND == ROW_LAYERNORM ? rsqrtf(b / cols + 1e-5f) : rsqrtf(a / cols + 1e-5f);
    for (int c = rank * V; c < cols; c += size * V) {
        float gv[V], bv[V];
        load_h<V>(xr + c, f);
        if (KIND != ROW_SOFTMAX)
            load_h<V>(g + c, gv);
        if (KIND == ROW_LAYERNORM)
            load_h<V>(bb + c, bv);
#pragma unroll
        for (int k = 0; k < V; k++)
            f[k] = KIND == ROW_SOFTMAX ? __expf(f[k] - a) * s : KIND == ROW_LAYERNORM ? (f[k] - a) * s * gv[k] + bv[k] : f[k] * s * gv[k];
        store_h<V>(yr + c, f);
    }
}

template <int KIND, bool BLOCK> static void row_launch2(const struct kcui_job *j, unsigned grid, int threads, int v8)
{
    const int nb = j->plan.nbuf;
    const __half *x = (const __half *)j->buf[0], *g = nb > 2 ? (const __half *)j->buf[1] : nullptr,
                 *b = nb > 3 ? (const __half *)j->buf[2] : nullptr;
    __half *y = (__half *)j->buf[nb - 1];
    const long long rows = j->c->row.rows;
    const int cols = (int)j->c->row.cols;
    if (v8)
        row_kernel<KIND, BLOCK, 8><<<grid, threads, 0, j->st>>>(x, g, b, y, rows, cols);
    else
        row_kernel<KIND, BLOCK, 1><<<grid, threads, 0, j->st>>>(x, g, b, y, rows, cols);
}

template <int KIND> static void row_launch(const struct kcui_job *j)
{
    const long long rows = j->c->row.rows, cols = j->c->row.cols;
    const int v8 = cols % 8 == 0; // rows start 16-byte aligned
    if (cols <= 1024)             // a warp per row, 8 rows per block
        row_launch2<KIND, false>(j, (unsigned)((rows + 7) / 8), 256, v8);
    else
        row_launch2<KIND, true>(j, (unsigned)rows, cols <= 4096 ? 256 : 1024, v8);
}


// ---- conv2d, NHWC fp16 ----
// Grouped or dense: im2col into the workspace, col[g][p][(kh kw c)] for output pixel p, which is the
// weights' own [OC][KH][KW][C/groups] order, then one cuBLAS GEMM per group (strided-batched):
// y[p][g OCg + j] = sum_k col[g][p][k] w[g OCg + j][k]. A 1x1, stride-1, unpadded dense convolution is
// that GEMM on x itself. Depthwise (groups == C) is a direct kernel: one thread per output element,
// output channels fastest so a warp reads neighbouring input channels.

__global__ void im2col_kernel(const __half *__restrict__ x, __half *__restrict__ col, int C, int H, int W, int KH,
                              int KW, int st, int pad, int OH, int OW, int G, long long P, long long total)
{
    const int Cg = C / G, Kg = KH * KW * Cg;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const long long gp = i / Kg;
        const int kx = (int)(i - gp * Kg), ci = kx % Cg, kw = (kx / Cg) % KW, kh = kx / (Cg * KW);
        const int g = (int)(gp / P);
        const long long p = gp - (long long)g * P;
        const int ow = (int)(p % OW), oh = (int)((p / OW) % OH);
        const long long n = p / ((long long)OW * OH);
        const int ih = oh * st - pad + kh, iw = ow * st - pad + kw;
        col[i] = ih >= 0 && ih < H && iw >= 0 && iw < W ? x[((n * H + ih) * W + iw) * C + g * Cg + ci] : __float2half(0.0f);
    }
}

__global__ void dwconv_kernel(const __half *__restrict__ x, const __half *__restrict__ w, __half *__restrict__ y, int C,
                              int H, int W, int OC, int KH, int KW, int st, int pad, int OH, int OW, long long total)
{
    const int mult = OC / C;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const int oc = (int)(i % OC), c = oc / mult;
        const long long p = i / OC;
        const int ow = (int)(p % OW), oh = (int)((p / OW) % OH);
        const long long n = p / ((long long)OW * OH);
        float a = 0;
        for (int kh = 0; kh < KH; kh++) {
            const int ih = oh * st - pad + kh;
            if (ih < 0 || ih >= H)
                continue;
            for (int kw = 0; kw < KW; kw++) {
                const int iw = ow * st - pad + kw;
                if (iw >= 0 && iw < W)
                    a += __half2float(x[((n * H + ih) * W + iw) * C + c]) * __half2float(w[(oc * KH + kh) * KW + kw]);
            }
        }
        y[i] = __float2half(a);
    }
}

struct conv_dims {
    int N, C, H, W, OC, KH, KW, st, pad, G, OH, OW;
    long long P; // output pixels
    int depthwise, direct;
};

static conv_dims conv_of(const struct kcu_case *c)
{
    conv_dims d;
    d.N = (int)c->conv.N, d.C = (int)c->conv.C, d.H = (int)c->conv.H, d.W = (int)c->conv.W, d.OC = (int)c->conv.OC;
    d.KH = (int)c->conv.KH, d.KW = (int)c->conv.KW, d.st = (int)c->conv.stride, d.pad = (int)c->conv.pad;
    d.G = (int)c->conv.groups;
    d.OH = (d.H + 2 * d.pad - d.KH) / d.st + 1;
    d.OW = (d.W + 2 * d.pad - d.KW) / d.st + 1;
    d.P = (long long)d.N * d.OH * d.OW;
    d.depthwise = d.G == d.C && d.G > 1; // the rule kcui_plan uses for the workspace
    d.direct = d.KH == 1 && d.KW == 1 && d.st == 1 && d.pad == 0 && d.G == 1;
    return d;
}

static int conv_launch(struct kcui_job *j)
{
    const conv_dims d = conv_of(j->c);
    const __half *x = (const __half *)j->buf[0], *w = (const __half *)j->buf[1];
    __half *y = (__half *)j->buf[2];
    if (d.depthwise) {
        const long long total = d.P * d.OC;
        dwconv_kernel<<<kcui_grid(j, total, 256), 256, 0, j->st>>>(x, w, y, d.C, d.H, d.W, d.OC, d.KH, d.KW, d.st, d.pad,
                                                                     d.OH, d.OW, total);
        return 0;
    }
    const int Cg = d.C / d.G, Kg = d.KH * d.KW * Cg, OCg = d.OC / d.G;
    const __half *cols = x;
    if (!d.direct) {
        const long long total = (long long)d.G * d.P * Kg;
        im2col_kernel<<<kcui_grid(j, total, 256), 256, 0, j->st>>>(x, (__half *)j->ws, d.C, d.H, d.W, d.KH, d.KW, d.st,
                                                                     d.pad, d.OH, d.OW, d.G, d.P, total);
        TRY(kcui_cuda(j, cudaGetLastError(), "im2col launch"));
        cols = (const __half *)j->ws;
    }
    const float alpha = 1, beta = 0;
    return kcui_blas(j,
                     cublasGemmStridedBatchedEx(j->blas, CUBLAS_OP_T, CUBLAS_OP_N, OCg, (int)d.P, Kg, &alpha, w, CUDA_R_16F,
                                                Kg, (long long)OCg * Kg, cols, CUDA_R_16F, Kg, d.P * Kg, &beta, y,
                                                CUDA_R_16F, d.OC, OCg, d.G, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmStridedBatchedEx (conv2d)");
}

// ---- the module's kinds ----

int kcui_nn_setup(struct kcui_job *j)
{
    const struct kcu_case *c = j->c;
    const char *t = c->prec == KCU_FP16 ? "fp16" : "fp32";
    switch (c->kind) {
    case KCU_ADD:
    case KCU_GELU:
    case KCU_SILU:
    case KCU_COPY:
    case KCU_TRIAD:
        snprintf(j->impl, sizeof j->impl, "kcu grid-stride %s (16-byte vectors)", t);
        return 0;
    case KCU_SOFTMAX:
    case KCU_LAYERNORM:
    case KCU_RMSNORM:
        snprintf(j->impl, sizeof j->impl, "kcu %s per row (fp16 io; fp32 math)",
                 c->row.cols <= 1024 ? "warp" : c->row.cols <= 4096 ? "256-thread block" : "1024-thread block");
        return 0;
    case KCU_ATTENTION: return kcui_attn_setup(j);
    case KCU_CONV2D: {
        const conv_dims d = conv_of(c);
        snprintf(j->impl, sizeof j->impl, "%s",
                 d.depthwise ? "kcu direct depthwise fp16 (fp32 FMA)"
                 : d.direct  ? "1x1: cublasGemmStridedBatchedEx fp16 on x"
                             : "im2col + cublasGemmStridedBatchedEx fp16");
        return 0;
    }
    default: return kcui_fail(j, "kind %s is not a kern_cuda_nn kernel", kcu_kind_names[c->kind]);
    }
}

int kcui_nn_launch(struct kcui_job *j)
{
    const struct kcu_case *c = j->c;
    const int h = c->prec == KCU_FP16;
    switch (c->kind) {
    case KCU_ADD: h ? ew_launch<__half>(j, EW_ADD) : ew_launch<float>(j, EW_ADD); return 0;
    case KCU_GELU: h ? ew_launch<__half>(j, EW_GELU) : ew_launch<float>(j, EW_GELU); return 0;
    case KCU_SILU: h ? ew_launch<__half>(j, EW_SILU) : ew_launch<float>(j, EW_SILU); return 0;
    case KCU_COPY: ew_launch<float>(j, EW_COPY); return 0;
    case KCU_TRIAD: ew_launch<float>(j, EW_TRIAD); return 0;
    case KCU_SOFTMAX: row_launch<ROW_SOFTMAX>(j); return 0;
    case KCU_LAYERNORM: row_launch<ROW_LAYERNORM>(j); return 0;
    case KCU_RMSNORM: row_launch<ROW_RMSNORM>(j); return 0;
    case KCU_ATTENTION: return kcui_attn_launch(j);
    case KCU_CONV2D: return conv_launch(j);
    default: return kcui_fail(j, "kind %s is not a kern_cuda_nn kernel", kcu_kind_names[c->kind]);
    }
}
