/* kern_nn.c -- neural-network operators in fp32: convolution (im2col + GEMM, direct depthwise),
 * streaming-softmax attention, softmax, layer/RMS normalization, GELU/SiLU, and the STREAM kernels.
 *
 * Elementwise and row loops carry "#pragma omp simd" so that GCC vectorizes them at -O2 (its default
 * cost model there skips loops that need a remainder loop) and may reassociate their reductions; exp
 * is a branch-free polynomial (kexpf) that vectorizes, unlike libm's. On x86-64 Linux with GCC the
 * hot functions are compiled three times (KERN_CLONES) and the widest the CPU runs is used. */
#include "kern.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kern_impl.h"

#if defined(__GNUC__)
#define KERN_INLINE static inline __attribute__((always_inline))
#else
#define KERN_INLINE static inline
#endif

/* Below this many elements, a parallel region costs more than it saves (PyTorch's grain size too;
 * the CPU model's MODEL_GRAIN_ELEMS). */
#define PAR_MIN_ELEMS (1L << 15)

static int kern_nthreads(int threads, long work)
{
#ifdef _OPENMP
    if (work < PAR_MIN_ELEMS)
        return 1;
    return threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
    (void)work;
    return 1;
#endif
}

static int imin(int a, int b) { return a < b ? a : b; }
static int imax(int a, int b) { return a > b ? a : b; }

/* exp(x) for fp32 within 1 ulp on [-87, 87] (measured: 0.99 ulp), after Cephes expf: x = n ln2 + r,
 * |r| <= ln2 / 2, ln2 split in two for an exact n ln2 (Cody and Waite), exp(r) by a degree-7
 * polynomial, 2^n built in the exponent bits. Branch-free, so loops over it vectorize. Inputs are
 * clamped to [-87, 87]: below, it returns about 1.6e-38 instead of a subnormal or 0 (callers that need
 * an exact 0 mask it); above, about 6.1e37 instead of overflowing. NaN gives NaN. */
KERN_INLINE float kexpf(float x)
{
    /* One quiet (non-trapping) comparison on |x|: GCC if-converts it, where two chained clamps stay
     * branches and block vectorization. */
    float ax = fabsf(x);
    x = copysignf(isgreater(ax, 87.0f) ? 87.0f : ax, x);
    /* n = round(x / ln2): adding 1.5 * 2^23 leaves the rounded integer in the low mantissa bits. */
    const float shift = 12582912.0f;
    float t = x * 1.44269504088896341f + shift;
    uint32_t tb, sb;
    memcpy(&tb, &t, sizeof tb);
    memcpy(&sb, &shift, sizeof sb);
    float n = t - shift;
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    uint32_t eb = (tb - sb + 127u) << 23; /* 2^n; unsigned, so well defined for any bits */
    float scale;
    memcpy(&scale, &eb, sizeof scale);
    return p * scale;
}

/* ---- activations and streams ----
 * Each kernel is a span function over contiguous elements (cloned per instruction set); the
 * parallel driver hands every thread one contiguous span, a multiple of 16 elements long. */

typedef void span_fn(long n, const float *a, const float *b, float *y, float s);

static void par_spans(span_fn *fn, long n, const float *a, const float *b, float *y, float s, int threads)
{
    if (n <= 0)
        return;
    int nt = kern_nthreads(threads, n);
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        long k = omp_get_num_threads(), t = omp_get_thread_num();
        long chunk = ((n + k - 1) / k + 15) / 16 * 16, lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
        if (lo < hi)
            fn(hi - lo, a + lo, b ? b + lo : NULL, y + lo, s);
    }
#else
    (void)nt;
    fn(n, a, b, y, s);
#endif
}

/* GELU, tanh form: 0.5 (1 + tanh u) = 1 / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3), so one
 * exp and no tanh. */
KERN_CLONES static void gelu_span(long n, const float *x, const float *unused, float *y, float s)
{
    (void)unused;
    (void)s;
    KERN_SIMD
    for (long i = 0; i < n; i++) {
        float v = x[i];
        float u2 = -1.5957691216057308f * (v + 0.044715f * v * v * v); /* -2 sqrt(2/pi) (...) */
        y[i] = v / (1.0f + kexpf(u2));
    }
}

KERN_CLONES static void silu_span(long n, const float *x, const float *unused, float *y, float s)
{
    (void)unused;
    (void)s;
    KERN_SIMD
    for (long i = 0; i < n; i++)
        y[i] = x[i] / (1.0f + kexpf(-x[i]));
}

KERN_CLONES static void add_span(long n, const float *a, const float *b, float *y, float s)
{
    (void)s;
    KERN_SIMD
    for (long i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

KERN_CLONES static void copy_span(long n, const float *a, const float *unused, float *b, float s)
{
    (void)unused;
    (void)s;
    KERN_SIMD
    for (long i = 0; i < n; i++)
        b[i] = a[i];
}

KERN_CLONES static void triad_span(long n, const float *a, const float *b, float *c, float s)
{
    KERN_SIMD
    for (long i = 0; i < n; i++)
        c[i] = a[i] + s * b[i];
}

void kern_gelu_f32(long n, const float *x, float *y, int threads) { par_spans(gelu_span, n, x, NULL, y, 0, threads); }

void kern_silu_f32(long n, const float *x, float *y, int threads) { par_spans(silu_span, n, x, NULL, y, 0, threads); }

void kern_add_f32(long n, const float *a, const float *b, float *y, int threads)
{
    par_spans(add_span, n, a, b, y, 0, threads);
}

void kern_copy_f32(long n, const float *a, float *b, int threads) { par_spans(copy_span, n, a, NULL, b, 0, threads); }

void kern_triad_f32(long n, const float *a, const float *b, float *c, float s, int threads)
{
    par_spans(triad_span, n, a, b, c, s, threads);
}

/* ---- row operators ---- */

/* max of a row in 16 independent lanes: vectorizes without reassociation flags in GCC and clang */
KERN_INLINE float row_max(int n, const float *x)
{
    float mv[16], m = -INFINITY;
    for (int l = 0; l < 16; l++)
        mv[l] = -INFINITY;
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; l++)
            mv[l] = x[i + l] > mv[l] ? x[i + l] : mv[l];
    for (; i < n; i++)
        m = x[i] > m ? x[i] : m;
    for (int l = 0; l < 16; l++)
        m = mv[l] > m ? mv[l] : m;
    return m;
}

/* Row operators read a row, then write it: two short streams in turn, which leave one core's
 * memory pipeline idle between them (8192 x 4096 RMSNorm ran 1.5-1.9x slower than a copy of the same
 * bytes). Their last pass therefore prefetches the next row, a chunk ahead of each chunk written. */
#define ROW_CHUNK 256
KERN_INLINE void prefetch_row(const float *next, int i0, int n)
{
    if (next)
        for (int i = i0; i < n; i += 16)
            __builtin_prefetch(next + i);
}

KERN_CLONES static void softmax_row(int n, const float *x, float *y, const float *next)
{
    float m = row_max(n, x);
    float s = 0;
    KERN_SIMD_SUM(s)
    for (int i = 0; i < n; i++) {
        float e = kexpf(x[i] - m);
        y[i] = e;
        s += e;
    }
    float inv = 1.0f / s;
    for (int i0 = 0; i0 < n; i0 += ROW_CHUNK) {
        int e = imin(n, i0 + ROW_CHUNK);
        prefetch_row(next, i0, e);
        KERN_SIMD
        for (int i = i0; i < e; i++)
            y[i] *= inv;
    }
}

void kern_softmax_f32(int rows, int cols, const float *x, float *y, int threads)
{
    if (rows <= 0 || cols <= 0)
        return;
    int nt = imin(kern_nthreads(threads, (long)rows * cols), rows);
    KERN_PAR_ROWS
    for (int r = 0; r < rows; r++)
        softmax_row(cols, x + (size_t)r * cols, y + (size_t)r * cols, r + 1 < rows ? x + (size_t)(r + 1) * cols : NULL);
}

/* Two passes (mean, then the mean of squared deviations) avoid the cancellation of E[x^2] - E[x]^2;
 * the sums run in fp64, which costs nothing in a memory-bound loop and keeps a large common offset
 * from eating the mean's digits. */
KERN_CLONES static void layernorm_row(int n, const float *x, const float *g, const float *b, float *y, float eps,
                                      const float *next)
{
    double s = 0;
    KERN_SIMD_SUM(s)
    for (int i = 0; i < n; i++)
        s += x[i];
    float mean = (float)(s / n);
    double v = 0;
    KERN_SIMD_SUM(v)
    for (int i = 0; i < n; i++)
        v += (double)(x[i] - mean) * (x[i] - mean);
    float rstd = (float)(1.0 / sqrt(v / n + eps));
    for (int i0 = 0; i0 < n; i0 += ROW_CHUNK) {
        int e = imin(n, i0 + ROW_CHUNK);
        prefetch_row(next, i0, e);
        if (b) {
            KERN_SIMD
            for (int i = i0; i < e; i++)
                y[i] = (x[i] - mean) * rstd * g[i] + b[i];
        } else {
            KERN_SIMD
            for (int i = i0; i < e; i++)
                y[i] = (x[i] - mean) * rstd * g[i];
        }
    }
}

void kern_layernorm_f32(int rows, int cols, const float *x, const float *g, const float *b, float *y, float eps,
                        int threads)
{
    if (rows <= 0 || cols <= 0)
        return;
    int nt = imin(kern_nthreads(threads, (long)rows * cols), rows);
    KERN_PAR_ROWS
    for (int r = 0; r < rows; r++)
        layernorm_row(cols, x + (size_t)r * cols, g, b, y + (size_t)r * cols, eps,
                      r + 1 < rows ? x + (size_t)(r + 1) * cols : NULL);
}

KERN_CLONES static void rmsnorm_row(int n, const float *x, const float *g, float *y, float eps, const float *next)
{
    double s = 0;
    KERN_SIMD_SUM(s)
    for (int i = 0; i < n; i++)
        s += (double)x[i] * x[i];
    float rinv = (float)(1.0 / sqrt(s / n + eps));
    for (int i0 = 0; i0 < n; i0 += ROW_CHUNK) {
        int e = imin(n, i0 + ROW_CHUNK);
        prefetch_row(next, i0, e);
        KERN_SIMD
        for (int i = i0; i < e; i++)
            y[i] = x[i] * rinv * g[i];
    }
}

void kern_rmsnorm_f32(int rows, int cols, const float *x, const float *g, float *y, float eps, int threads)
{
    if (rows <= 0 || cols <= 0)
        return;
    int nt = imin(kern_nthreads(threads, (long)rows * cols), rows);
    KERN_PAR_ROWS
    for (int r = 0; r < rows; r++)
        rmsnorm_row(cols, x + (size_t)r * cols, g, y + (size_t)r * cols, eps, r + 1 < rows ? x + (size_t)(r + 1) * cols : NULL);
}

/* ---- attention ----
 * FlashAttention's online softmax (Dao et al., NeurIPS 2022; Milakov and Gimelshein, "Online
 * normalizer calculation for softmax", 2018): per query row keep the running maximum m, the running
 * sum l of exp(s - m) and the unnormalized output acc; a block of keys with maximum m' > m rescales
 * l and acc by exp(m - m') first. The output row itself serves as acc, so nothing is allocated.
 * A task is a block of ATT_QB rows that share one kv head: the query positions times the H / Hkv
 * query heads of the group (decode with grouped-query attention thus reads each kv row once for the
 * whole group), walking the keys in blocks of ATT_KB that stay in L1 while its rows use them.
 * The inner loops use 16-float vectors (GCC/clang vector extensions: one zmm, two ymm or four xmm
 * registers): q.k for four keys at a time in four independent accumulators, and P V with 64 output
 * dimensions of acc held in registers across the keys. */

enum { ATT_QB = 16, ATT_KB = 32 };

typedef float kv16 __attribute__((vector_size(64), aligned(4))); /* may be unaligned in memory */
typedef float kv4 __attribute__((vector_size(16), aligned(4)));

/* Vector views of float memory: GCC and clang let a vector type alias its element type, and
 * aligned(4) allows any float address. */
#define KV16_AT(p) (*(kv16 *)(void *)(p))
#define KV16_LD(p) (*(const kv16 *)(const void *)(p))

/* Always inlined, so that they take the caller's target clone. */
KERN_INLINE float kv16_sum(const kv16 *x)
{
    kv4 a, b, c, d;
    memcpy(&a, (const char *)x, 16);
    memcpy(&b, (const char *)x + 16, 16);
    memcpy(&c, (const char *)x + 32, 16);
    memcpy(&d, (const char *)x + 48, 16);
    a = (a + b) + (c + d);
    return (a[0] + a[1]) + (a[2] + a[3]);
}

/* s[jj] = q . k_jj for nk keys, k_jj at k + jj * ks */
KERN_INLINE void att_scores(int D, int nk, const float *q, const float *k, size_t ks, float *s)
{
    int jj = 0;
    for (; jj + 4 <= nk; jj += 4) {
        const float *k0 = k + jj * ks, *k1 = k0 + ks, *k2 = k1 + ks, *k3 = k2 + ks;
        kv16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        int d = 0;
        for (; d + 16 <= D; d += 16) {
            kv16 qv = KV16_LD(q + d);
            a0 += qv * KV16_LD(k0 + d);
            a1 += qv * KV16_LD(k1 + d);
            a2 += qv * KV16_LD(k2 + d);
            a3 += qv * KV16_LD(k3 + d);
        }
        float t0 = kv16_sum(&a0), t1 = kv16_sum(&a1), t2 = kv16_sum(&a2), t3 = kv16_sum(&a3);
        for (; d < D; d++) {
            t0 += q[d] * k0[d];
            t1 += q[d] * k1[d];
            t2 += q[d] * k2[d];
            t3 += q[d] * k3[d];
        }
        s[jj] = t0;
        s[jj + 1] = t1;
        s[jj + 2] = t2;
        s[jj + 3] = t3;
    }
    for (; jj < nk; jj++) {
        const float *kj = k + jj * ks;
        kv16 a0 = {0};
        int d = 0;
        for (; d + 16 <= D; d += 16)
            a0 += KV16_LD(q + d) * KV16_LD(kj + d);
        float t0 = kv16_sum(&a0);
        for (; d < D; d++)
            t0 += q[d] * kj[d];
        s[jj] = t0;
    }
}

/* a[0:D] += sum_jj p[jj] v_jj for nk rows v_jj at v + jj * vs */
KERN_INLINE void att_pv(int D, int nk, const float *p, const float *v, size_t vs, float *a)
{
    int d0 = 0;
    for (; d0 + 64 <= D; d0 += 64) {
        kv16 t0 = KV16_LD(a + d0), t1 = KV16_LD(a + d0 + 16), t2 = KV16_LD(a + d0 + 32),
             t3 = KV16_LD(a + d0 + 48);
        for (int jj = 0; jj < nk; jj++) {
            const float *vj = v + jj * vs + d0;
            float pj = p[jj];
            t0 += pj * KV16_LD(vj);
            t1 += pj * KV16_LD(vj + 16);
            t2 += pj * KV16_LD(vj + 32);
            t3 += pj * KV16_LD(vj + 48);
        }
        KV16_AT(a + d0) = t0;
        KV16_AT(a + d0 + 16) = t1;
        KV16_AT(a + d0 + 32) = t2;
        KV16_AT(a + d0 + 48) = t3;
    }
    for (; d0 + 16 <= D; d0 += 16) {
        kv16 t0 = KV16_LD(a + d0);
        for (int jj = 0; jj < nk; jj++)
            t0 += p[jj] * KV16_LD(v + jj * vs + d0);
        KV16_AT(a + d0) = t0;
    }
    for (int jj = 0; jj < nk && d0 < D; jj++)
        for (int d = d0; d < D; d++)
            a[d] += p[jj] * v[jj * vs + d];
}

KERN_CLONES static void attention_task(int H, int Hkv, int S, int T, int D, int b, int g, int r0, int r1,
                                       const float *q, const float *k, const float *v, float *o, int causal)
{
    int G = H / Hkv, nr = r1 - r0;
    const float scale = 1.0f / sqrtf((float)D);
    const float *qr[ATT_QB];
    float *acc[ATT_QB], m[ATT_QB], l[ATT_QB], s[ATT_KB];
    int lim[ATT_QB], jend = 0;
    for (int r = 0; r < nr; r++) {
        int i = (r0 + r) / G, h = g * G + (r0 + r) % G;
        size_t off = ((size_t)b * S + i) * (size_t)H * D + (size_t)h * D;
        qr[r] = q + off;
        acc[r] = o + off;
        memset(acc[r], 0, (size_t)D * sizeof(float));
        m[r] = -INFINITY;
        l[r] = 0;
        lim[r] = causal ? T - S + i + 1 : T; /* keys 0 .. lim-1 are visible */
        jend = imax(jend, lim[r]);
    }
    const size_t kvstride = (size_t)Hkv * D;
    const float *kb = k + (size_t)b * T * kvstride + (size_t)g * D;
    const float *vb = v + (size_t)b * T * kvstride + (size_t)g * D;
    for (int j0 = 0; j0 < jend; j0 += ATT_KB) {
        int jl = imin(ATT_KB, jend - j0);
        const float *kj0 = kb + (size_t)j0 * kvstride, *vj0 = vb + (size_t)j0 * kvstride;
        for (int r = 0; r < nr; r++) {
            int vis = imin(jl, lim[r] - j0); /* visible keys of this block for row r */
            if (vis <= 0)
                continue;
            att_scores(D, vis, qr[r], kj0, kvstride, s);
            float mb = m[r];
            for (int jj = 0; jj < vis; jj++) {
                s[jj] *= scale;
                mb = s[jj] > mb ? s[jj] : mb;
            }
            float *a = acc[r];
            if (mb > m[r]) { /* new maximum: rescale what was accumulated (exp(-inf) = 0 at the start) */
                float alpha = m[r] == -INFINITY ? 0.0f : kexpf(m[r] - mb);
                l[r] *= alpha;
                KERN_SIMD
                for (int d = 0; d < D; d++)
                    a[d] *= alpha;
                m[r] = mb;
            }
            float mr = m[r], ls = 0;
            KERN_SIMD_SUM(ls)
            for (int jj = 0; jj < vis; jj++) {
                float p = kexpf(s[jj] - mr);
                s[jj] = p;
                ls += p;
            }
            l[r] += ls;
            att_pv(D, vis, s, vj0, kvstride, a);
        }
    }
    for (int r = 0; r < nr; r++) {
        float inv = 1.0f / l[r], *a = acc[r];
        KERN_SIMD
        for (int d = 0; d < D; d++)
            a[d] *= inv;
    }
}

void kern_attention_f32(int B, int H, int Hkv, int S, int T, int D, const float *q, const float *k, const float *v,
                        float *o, int causal, int threads)
{
    if (B <= 0 || H <= 0 || Hkv <= 0 || H % Hkv || D <= 0 || S <= 0 || T < S)
        return;
    int G = H / Hkv, R = S * G; /* rows per (batch, kv head) */
    int qblocks = (R + ATT_QB - 1) / ATT_QB;
    long tasks = (long)B * Hkv * qblocks;
    double work = (double)S * T * H * D / 8;
    int nt = kern_nthreads(threads, work > 1e9 ? 1000000000L : (long)work);
    if (nt > tasks)
        nt = (int)tasks;
    /* Causal blocks differ in cost (later queries see more keys): hand them out dynamically. */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(dynamic, 1)
#endif
    for (long t = 0; t < tasks; t++) {
        int qb = (int)(t % qblocks), g = (int)(t / qblocks % Hkv), b = (int)(t / qblocks / Hkv);
        int r0 = qb * ATT_QB, r1 = imin(R, r0 + ATT_QB);
        attention_task(H, Hkv, S, T, D, b, g, r0, r1, q, k, v, o, causal);
    }
}

/* ---- convolution ---- */

/* Direct convolution, any groups: the fallback when im2col's buffer cannot be allocated. */
static void conv_direct(int N, int C, int H, int W, int OC, int KH, int KW, int stride, int pad, int groups, int OH,
                        int OW, const float *x, const float *w, float *y, int nt)
{
    int Cg = C / groups, OCg = OC / groups;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) if (nt > 1) schedule(static)
#else
    (void)nt;
#endif
    for (long t = 0; t < (long)N * OC; t++) {
        int n = (int)(t / OC), oc = (int)(t % OC), g = oc / OCg;
        float *yo = y + (size_t)t * OH * OW;
        for (int oh = 0; oh < OH; oh++)
            for (int ow = 0; ow < OW; ow++) {
                float s = 0;
                for (int c = 0; c < Cg; c++) {
                    const float *xc = x + ((size_t)n * C + (size_t)g * Cg + c) * H * W;
                    const float *wc = w + ((size_t)oc * Cg + c) * KH * KW;
                    for (int kh = 0; kh < KH; kh++) {
                        int ih = oh * stride - pad + kh;
                        if (ih < 0 || ih >= H)
                            continue;
                        for (int kw = 0; kw < KW; kw++) {
                            int iw = ow * stride - pad + kw;
                            if (iw >= 0 && iw < W)
                                s += xc[(size_t)ih * W + iw] * wc[kh * KW + kw];
                        }
                    }
                }
                yo[(size_t)oh * OW + ow] = s;
            }
    }
}

/* Output columns ow with 0 <= ow * stride - pad + kw < W form the range [*lo, *hi). */
static void valid_cols(int OW, int W, int stride, int pad, int kw, int *lo, int *hi)
{
    int a = pad - kw; /* need ow * stride >= a */
    *lo = a <= 0 ? 0 : (a + stride - 1) / stride;
    int bnd = W + pad - kw; /* need ow * stride < bnd */
    *hi = bnd <= 0 ? 0 : imin(OW, (bnd + stride - 1) / stride);
    if (*lo > *hi)
        *lo = *hi;
}

/* Depthwise (groups == C == OC): one plane per (image, channel); each filter tap adds a scaled,
 * shifted input row to the output row over the columns where the tap lands inside the image. */
KERN_CLONES static void dw_plane(int H, int W, int KH, int KW, int stride, int pad, int OH, int OW, const float *xp,
                                 const float *wc, float *yp)
{
    for (int oh = 0; oh < OH; oh++) {
        float *restrict yr = yp + (size_t)oh * OW;
        memset(yr, 0, (size_t)OW * sizeof *yr);
        for (int kh = 0; kh < KH; kh++) {
            int ih = oh * stride - pad + kh;
            if (ih < 0 || ih >= H)
                continue;
            const float *xr = xp + (size_t)ih * W;
            for (int kw = 0; kw < KW; kw++) {
                int lo, hi;
                valid_cols(OW, W, stride, pad, kw, &lo, &hi);
                if (lo >= hi)
                    continue;
                float wt = wc[kh * KW + kw];
                const float *restrict xs = xr + (long)lo * stride - pad + kw; /* column of ow = lo */
                if (stride == 1) {
                    KERN_SIMD
                    for (int ow = lo; ow < hi; ow++)
                        yr[ow] += wt * xs[ow - lo];
                } else {
                    for (int ow = lo; ow < hi; ow++)
                        yr[ow] += wt * xs[(long)(ow - lo) * stride];
                }
            }
        }
    }
}

/* y[i] = the nine taps of a 3 x 3 filter over rows r0, r1, r2 at columns i, i + 1, i + 2, summed in
 * registers: one store per output, not nine (stride 1). */
KERN_INLINE void dw3x3(long n, const float *restrict r0, const float *restrict r1, const float *restrict r2,
                       const float *w, float *restrict y)
{
    const float w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7], w8 = w[8];
    KERN_SIMD
    for (long i = 0; i < n; i++)
        y[i] = w0 * r0[i] + w1 * r0[i + 1] + w2 * r0[i + 2] + w3 * r1[i] + w4 * r1[i + 1] + w5 * r1[i + 2] +
               w6 * r2[i] + w7 * r2[i + 1] + w8 * r2[i + 2];
}

/* Stride 1 on a zero-padded copy of the plane (row stride Wp = W + 2 pad): every tap is then one
 * loop over the whole plane, y'[i] += w x'[i + kh Wp + kw] with y' on the same row stride, and the
 * pad columns are dropped at the end. Row by row, a 14 x 14 plane costs 126 loops of 14 (measured
 * 0.5 us per channel of loop overhead); here 9 loops of 224, or for 3 x 3 (MobileNet's) one loop
 * that sums the nine taps in registers and stores each output once (2 cores: 144 x 56 x 56 0.25 ->
 * 0.17 ms, 576 x 14 x 14 0.09 -> 0.055 ms, with the per-plane zeroing of xp dropped). xp: (H + 2 pad +
 * 1) x Wp floats (one spare row for the last taps' overrun into junk columns), yw: OH x Wp. */
KERN_CLONES static void dw_plane_padded(int H, int W, int KH, int KW, int pad, int OH, int OW, const float *xc,
                                        const float *wc, float *yp, float *xp, float *yw)
{
    int Wp = W + 2 * pad;
    long n = (long)OH * Wp;
    /* xp arrives zeroed (calloc) and only its interior is ever written: the border stays 0 */
    for (int h = 0; h < H; h++)
        memcpy(xp + (size_t)(h + pad) * Wp + pad, xc + (size_t)h * W, sizeof *xc * (size_t)W);
    if (KH == 3 && KW == 3) {
        dw3x3(n, xp, xp + Wp, xp + 2 * (size_t)Wp, wc, yw);
    } else {
        memset(yw, 0, sizeof *yw * (size_t)n);
        for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++) {
                float wt = wc[kh * KW + kw];
                const float *restrict xs = xp + (size_t)kh * Wp + kw;
                float *restrict yr = yw;
                KERN_SIMD
                for (long i = 0; i < n; i++)
                    yr[i] += wt * xs[i];
            }
    }
    for (int oh = 0; oh < OH; oh++)
        memcpy(yp + (size_t)oh * OW, yw + (size_t)oh * Wp, sizeof *yp * (size_t)OW);
}

/* Any stride, any plane size: the zero-padded plane split by column phase, phase q holding the
 * padded columns q, q + s, q + 2s, ... (PW = ceil(Wp / s) of them per row). Output column ow of tap kw
 * reads padded column ow s + kw, element ow + kw / s of phase kw % s: every tap is a contiguous
 * vector loop along the output row (the row-by-row gather it replaces ran 96 x 112 x 112 stride 2
 * at 1.6 ms on 2 cores; now 0.29). ph: s x (H + 2 pad) x PW floats, zeroed by the caller. */
KERN_CLONES static void dw_plane_phased(int H, int W, int KH, int KW, int stride, int pad, int OH, int OW,
                                        const float *xc, const float *wc, float *yp, float *ph)
{
    int Wp = W + 2 * pad, Hp = H + 2 * pad, PW = (Wp + stride - 1) / stride;
    size_t plane = (size_t)Hp * PW;
    if (stride == 2 && KH == 3 && KW == 3) {
        /* MobileNet's case: ph as one padded plane (Hp x Wp fits in ph), the taps read at stride 2,
         * which the compiler turns into shuffles of the loaded rows; materializing the phases cost
         * more than that (144 x 56 x 56 stride 2: 0.18 -> 0.10 ms). */
        for (int ih = 0; ih < H; ih++)
            memcpy(ph + (size_t)(ih + pad) * Wp + pad, xc + (size_t)ih * W, sizeof *xc * (size_t)W);
        const float w0 = wc[0], w1 = wc[1], w2 = wc[2], w3 = wc[3], w4 = wc[4], w5 = wc[5], w6 = wc[6],
                    w7 = wc[7], w8 = wc[8];
        for (int oh = 0; oh < OH; oh++) {
            const float *restrict r0 = ph + (size_t)(2 * oh) * Wp, *restrict r1 = r0 + Wp, *restrict r2 = r1 + Wp;
            float *restrict yr = yp + (size_t)oh * OW;
            KERN_SIMD
            for (int ow = 0; ow < OW; ow++)
                yr[ow] = w0 * r0[2 * ow] + w1 * r0[2 * ow + 1] + w2 * r0[2 * ow + 2] + w3 * r1[2 * ow] +
                         w4 * r1[2 * ow + 1] + w5 * r1[2 * ow + 2] + w6 * r2[2 * ow] + w7 * r2[2 * ow + 1] +
                         w8 * r2[2 * ow + 2];
        }
        return;
    }
    /* ph arrives zeroed (calloc) and only the image's own columns are written: the padding stays 0 */
    for (int q = 0; q < stride; q++) {
        int jlo = pad > q ? (pad - q + stride - 1) / stride : 0, jhi = (pad + W - q + stride - 1) / stride;
        for (int ih = 0; ih < H; ih++) {
            float *restrict d = ph + (size_t)q * plane + (size_t)(ih + pad) * PW;
            const float *restrict s = xc + (size_t)ih * W + q - pad;
            if (stride == 1)
                memcpy(d + jlo, s + jlo, sizeof *d * (size_t)(jhi - jlo));
            else if (stride == 2) { /* a constant stride the compiler turns into shuffles */
                KERN_SIMD
                for (int j = jlo; j < jhi; j++)
                    d[j] = s[2 * (size_t)j];
            } else {
                for (int j = jlo; j < jhi; j++)
                    d[j] = s[(size_t)j * stride];
            }
        }
    }
    for (int oh = 0; oh < OH; oh++) {
        float *restrict yr = yp + (size_t)oh * OW;
        if (KH == 3 && KW == 3 && stride == 1) { /* one phase: the padded plane's rows */
            const float *r0 = ph + (size_t)oh * PW;
            dw3x3(OW, r0, r0 + PW, r0 + 2 * (size_t)PW, wc, yr);
            continue;
        }
        memset(yr, 0, (size_t)OW * sizeof *yr);
        for (int kh = 0; kh < KH; kh++)
            for (int kw = 0; kw < KW; kw++) {
                const float *restrict xs =
                    ph + (size_t)(kw % stride) * plane + (size_t)(oh * stride + kh) * PW + kw / stride;
                float wt = wc[kh * KW + kw];
                KERN_SIMD
                for (int ow = 0; ow < OW; ow++)
                    yr[ow] += wt * xs[ow];
            }
    }
}

static void conv_depthwise(int N, int C, int H, int W, int KH, int KW, int stride, int pad, int OH, int OW,
                           const float *x, const float *w, float *y, int nt)
{
    /* Stride 1 only, and both copies in L1 (32 KiB): a 112 x 112 plane (103 KiB) ran 13 % slower padded */
    size_t xn = (size_t)(H + 2 * pad + 1) * (size_t)(W + 2 * pad), yn = (size_t)OH * (size_t)(W + 2 * pad);
    int padded = stride == 1 && (xn + yn) * sizeof(float) <= 32768;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#else
    (void)nt;
#endif
    {
        float *xp = padded ? calloc(xn + yn, sizeof *xp) : NULL;
        size_t phn = (size_t)stride * (size_t)(H + 2 * pad) * (size_t)((W + 2 * pad + stride - 1) / stride);
        float *ph = padded ? NULL : calloc(phn, sizeof *ph);
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (long t = 0; t < (long)N * C; t++) {
            const float *xc = x + (size_t)t * H * W, *wc = w + (size_t)(t % C) * KH * KW;
            if (xp)
                dw_plane_padded(H, W, KH, KW, pad, OH, OW, xc, wc, y + (size_t)t * OH * OW, xp, xp + xn);
            else if (ph)
                dw_plane_phased(H, W, KH, KW, stride, pad, OH, OW, xc, wc, y + (size_t)t * OH * OW, ph);
            else
                dw_plane(H, W, KH, KW, stride, pad, OH, OW, xc, wc, y + (size_t)t * OH * OW);
        }
        free(xp);
        free(ph);
    }
}

/* im2col of one image and group for output pixels [p0, p0 + np): col[(c KH + kh) KW + kw][p - p0] =
 * x[c][oh stride - pad + kh][ow stride - pad + kw] (0 outside the image), p = oh OW + ow. */
static void im2col(int Cg, int H, int W, int KH, int KW, int stride, int pad, int OW, long p0, int np,
                   const float *xg, float *col, int nt)
{
    int rows = Cg * KH * KW;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) if (nt > 1 && (long)rows * np >= PAR_MIN_ELEMS) schedule(static)
#else
    (void)nt;
#endif
    for (int rk = 0; rk < rows; rk++) {
        int c = rk / (KH * KW), kh = rk / KW % KH, kw = rk % KW;
        const float *xc = xg + (size_t)c * H * W;
        float *dst = col + (size_t)rk * np;
        int lo, hi;
        valid_cols(OW, W, stride, pad, kw, &lo, &hi);
        for (long p = p0; p < p0 + np;) { /* one output row (or its part inside the chunk) at a time */
            int oh = (int)(p / OW), ow0 = (int)(p % OW);
            int ow1 = (int)(imin(OW, ow0 + (int)(p0 + np - p)));
            float *d = dst + (p - p0); /* d[ow - ow0] for ow in [ow0, ow1) */
            int ih = oh * stride - pad + kh;
            int a = imin(imax(ow0, lo), ow1), z = imax(imin(ow1, hi), a); /* [a, z): inside the image */
            if (ih < 0 || ih >= H)
                a = z = ow1;
            for (int ow = ow0; ow < a; ow++)
                d[ow - ow0] = 0;
            if (z > a) {
                const float *xr = xc + (size_t)ih * W; /* column of ow: ow stride - pad + kw >= 0 */
                if (stride == 1) {
                    memcpy(d + (a - ow0), xr + (a - pad + kw), (size_t)(z - a) * sizeof *d);
                } else if (stride == 2) { /* a constant stride: vector shuffles (ResNet's stem) */
                    float *restrict dd = d - ow0;
                    const float *restrict xs = xr - pad + kw;
                    KERN_SIMD
                    for (int ow = a; ow < z; ow++)
                        dd[ow] = xs[2 * (long)ow];
                } else {
                    for (int ow = a; ow < z; ow++)
                        d[ow - ow0] = xr[(long)ow * stride - pad + kw];
                }
            }
            for (int ow = z; ow < ow1; ow++)
                d[ow - ow0] = 0;
            p += ow1 - ow0;
        }
    }
}

/* im2col buffer cap: larger layers are done in chunks of output pixels. */
#define CONV_COL_MAX_BYTES (32L << 20)

void kern_conv2d_f32(int N, int C, int H, int W, int OC, int KH, int KW, int stride, int pad, int groups,
                     const float *x, const float *w, float *y, int threads)
{
    if (N <= 0 || C <= 0 || H <= 0 || W <= 0 || OC <= 0 || KH <= 0 || KW <= 0 || stride <= 0 || pad < 0 ||
        groups <= 0 || C % groups || OC % groups)
        return;
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
    if (H + 2 * pad < KH || W + 2 * pad < KW || OH <= 0 || OW <= 0)
        return;
    long P = (long)OH * OW;
    double macs = (double)N * OC * P * (C / groups) * KH * KW;
    int nt = kern_nthreads(threads, macs / 16 > 1e9 ? 1000000000L : (long)(macs / 16));
    if (groups == C && OC == C) {
        conv_depthwise(N, C, H, W, KH, KW, stride, pad, OH, OW, x, w, y, nt);
        return;
    }
    int Cg = C / groups, OCg = OC / groups, Kg = Cg * KH * KW;
    int pointwise = KH == 1 && KW == 1 && stride == 1 && pad == 0; /* x is already the GEMM operand */
    long chunk = P;
    float *col = NULL;
    if (!pointwise) {
        long cap = CONV_COL_MAX_BYTES / ((long)Kg * (long)sizeof(float));
        if (chunk > cap)
            chunk = cap > 256 ? cap / 256 * 256 : 256;
        col = malloc((size_t)Kg * chunk * sizeof *col);
        if (!col) {
            conv_direct(N, C, H, W, OC, KH, KW, stride, pad, groups, OH, OW, x, w, y, nt);
            return;
        }
    }
    for (int n = 0; n < N; n++)
        for (int g = 0; g < groups; g++) {
            const float *xg = x + ((size_t)n * C + (size_t)g * Cg) * H * W;
            const float *wg = w + (size_t)g * OCg * Kg;
            float *yg = y + ((size_t)n * OC + (size_t)g * OCg) * P;
            if (pointwise) {
                kern_gemm_ex(KERN_F32, KERN_ISA_AUTO, OCg, (int)P, Kg, wg, Kg, xg, P, yg, P, nt);
                continue;
            }
            for (long p0 = 0; p0 < P; p0 += chunk) {
                int np = (int)(P - p0 < chunk ? P - p0 : chunk);
                im2col(Cg, H, W, KH, KW, stride, pad, OW, p0, np, xg, col, nt);
                kern_gemm_ex(KERN_F32, KERN_ISA_AUTO, OCg, np, Kg, wg, Kg, col, np, yg + p0, P, nt);
            }
        }
    free(col);
}
