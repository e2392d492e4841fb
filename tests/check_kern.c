/* check_kern.c -- native kernels against naive fp64 references, conversions and quantization against
 * hand-worked values, and the GEMM error experiment's ordering.
 *
 * fp32 tolerances use the standard bound for a dot product of length K computed in fp32 (Higham,
 * Accuracy and Stability of Numerical Algorithms, 2002, eq. 3.4): |c - c_exact| <= gamma_K sum |a||b|,
 * gamma_K = K u / (1 - K u), u = 2^-24. It holds for any summation order and with or without FMA, so
 * it covers every micro-kernel and blocking. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "kern.h"

static const double U32 = 0x1p-24; /* fp32 unit roundoff */

static double gamma_n(long n) { return n * U32 / (1 - n * U32); }

/* Small local generator (xorshift64*), values in [-1, 1). */
static double rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (double)((*s * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-52 - 1.0;
}

static float *rnd_floats(uint64_t *s, long n)
{
    float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (long i = 0; i < n; i++)
        x[i] = (float)rnd(s);
    return x;
}

/* The micro-kernel levels this CPU can run (generic always). */
static int isa_levels(enum kern_isa *out)
{
    int n = 0;
    enum kern_isa best = kern_isa_best();
    for (int i = KERN_ISA_GENERIC; i <= (int)best; i++)
        out[n++] = (enum kern_isa)i;
    return n;
}

/* ---- GEMM ---- */

static const int gemm_shapes[][3] = {
    {37, 29, 53},   /* odd everything, one block */
    {1, 67, 300},   /* decode-like single row */
    {130, 70, 513}, /* several K blocks: accumulation into C */
    {300, 20, 200}, /* one N chunk: threads split M (1.2 M MACs, above the parallel threshold) */
    {5, 3, 1},
    {2, 600, 77},   /* two rows: fp32 skips packing (9 strips of 64 columns and a tail of 24) */
    {7, 200, 300},  /* row groups of 4 and 3; 3 strips and a tail of 8; K in passes of 128, 128, 44 */
    {16, 64, 129},  /* one strip, no tail; K passes 128 and 1 */
    {32, 70, 129},  /* the most rows without packing (8 groups of 4); one strip and a tail of 6 */
    {33, 70, 129},  /* one row more: the packed path */
    {8, 600, 300},  /* no packing, 1.44 M MACs: two threads share 9 strips and a tail of 24 */
};

/* Checks C (with leading dimension ldc) against A B in fp64 with the gamma_K bound. */
static void check_gemm_f32_result(int M, int N, int K, const float *A, const float *B, const float *C, long ldc,
                                  const char *what)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0, sa = 0;
            for (int p = 0; p < K; p++) {
                s += (double)A[(long)i * K + p] * B[(long)p * N + j];
                sa += fabs((double)A[(long)i * K + p] * B[(long)p * N + j]);
            }
            double c = C[(long)i * ldc + j];
            ck_assert_msg(fabs(c - s) <= 1.01 * gamma_n(K) * sa + 1e-30,
                          "%s M=%d N=%d K=%d C[%d][%d] = %.9g, want %.9g", what, M, N, K, i, j, c, s);
        }
}

START_TEST(gemm_f32_matches_reference)
{
    enum kern_isa lv[8];
    int nl = isa_levels(lv);
    uint64_t s = 42;
    for (unsigned t = 0; t < sizeof gemm_shapes / sizeof gemm_shapes[0]; t++) {
        int M = gemm_shapes[t][0], N = gemm_shapes[t][1], K = gemm_shapes[t][2];
        float *A = rnd_floats(&s, (long)M * K), *B = rnd_floats(&s, (long)K * N), *C = rnd_floats(&s, (long)M * N);
        for (int l = 0; l < nl; l++)
            for (int th = 1; th <= 2; th++) {
                char what[64];
                snprintf(what, sizeof what, "%s threads=%d", kern_isa_name(lv[l]), th);
                for (long i = 0; i < (long)M * N; i++) /* every element must be written by this call */
                    C[i] = NAN;
                kern_gemm_ex(KERN_F32, lv[l], M, N, K, A, K, B, N, C, N, th);
                check_gemm_f32_result(M, N, K, A, B, C, N, what);
            }
        kern_gemm_f32(M, N, K, A, B, C, 0);
        check_gemm_f32_result(M, N, K, A, B, C, N, "auto");
        free(A);
        free(B);
        free(C);
    }
}
END_TEST

START_TEST(gemm_leading_dims_and_k0)
{
    /* A 9x7 inside lda 11, B 7x13 inside ldb 16, C 9x13 inside ldc 15: the padding must stay untouched. */
    enum { M = 9, N = 13, K = 7, LDA = 11, LDB = 16, LDC = 15 };
    enum kern_isa lv[8];
    int nl = isa_levels(lv);
    uint64_t s = 7;
    float A[M * LDA], B[K * LDB], C[M * LDC], a[M * K], b[K * N], c[M * N];
    for (int i = 0; i < M * LDA; i++)
        A[i] = (float)rnd(&s);
    for (int i = 0; i < K * LDB; i++)
        B[i] = (float)rnd(&s);
    for (int i = 0; i < M; i++)
        for (int p = 0; p < K; p++)
            a[i * K + p] = A[i * LDA + p];
    for (int p = 0; p < K; p++)
        for (int j = 0; j < N; j++)
            b[p * N + j] = B[p * LDB + j];
    for (int l = 0; l < nl; l++) {
        for (int i = 0; i < M * LDC; i++)
            C[i] = 12345.0f;
        kern_gemm_ex(KERN_F32, lv[l], M, N, K, A, LDA, B, LDB, C, LDC, 1);
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < N; j++)
                c[i * N + j] = C[i * LDC + j];
            for (int j = N; j < LDC; j++)
                ck_assert_msg(C[i * LDC + j] == 12345.0f, "%s wrote padding", kern_isa_name(lv[l]));
        }
        check_gemm_f32_result(M, N, K, a, b, c, N, kern_isa_name(lv[l]));
    }
    /* the same layout for int8 (each kernel packs int8 its own way) */
    int8_t Ai[M * LDA], Bi[K * LDB];
    int32_t Ci[M * LDC];
    for (int i = 0; i < M * LDA; i++)
        Ai[i] = (int8_t)(rnd(&s) * 128);
    for (int i = 0; i < K * LDB; i++)
        Bi[i] = (int8_t)(rnd(&s) * 128);
    for (int l = 0; l < nl; l++) {
        for (int i = 0; i < M * LDC; i++)
            Ci[i] = 12345;
        kern_gemm_ex(KERN_I8, lv[l], M, N, K, Ai, LDA, Bi, LDB, Ci, LDC, 1);
        for (int i = 0; i < M; i++) {
            for (int j = 0; j < N; j++) {
                int32_t want = 0;
                for (int p = 0; p < K; p++)
                    want += Ai[i * LDA + p] * Bi[p * LDB + j];
                ck_assert_msg(Ci[i * LDC + j] == want, "%s int8 C[%d][%d]", kern_isa_name(lv[l]), i, j);
            }
            for (int j = N; j < LDC; j++)
                ck_assert_msg(Ci[i * LDC + j] == 12345, "%s int8 wrote padding", kern_isa_name(lv[l]));
        }
    }
    /* K == 0: the empty sum, C = 0. */
    for (int i = 0; i < M * N; i++)
        c[i] = 1;
    kern_gemm_f32(M, N, 0, a, b, c, 1);
    for (int i = 0; i < M * N; i++)
        ck_assert(c[i] == 0);
}
END_TEST

START_TEST(gemm_bf16_f16_match_reference)
{
    enum kern_isa lv[8];
    int nl = isa_levels(lv);
    uint64_t s = 99;
    static const int shapes[][3] = {{37, 29, 53}, {130, 70, 513}};
    for (unsigned t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        int M = shapes[t][0], N = shapes[t][1], K = shapes[t][2];
        uint16_t *A = malloc(sizeof *A * M * K), *B = malloc(sizeof *B * K * N);
        float *a = malloc(sizeof *a * M * K), *b = malloc(sizeof *b * K * N), *C = malloc(sizeof *C * M * N);
        ck_assert(A && B && a && b && C);
        for (int half = 0; half < 2; half++) {
            /* Inputs as bf16 / fp16 codes; the reference uses their exact fp32 values, so only the
             * fp32 accumulation differs. fp16 inputs include subnormals (scaled by 2^-15). */
            for (long i = 0; i < (long)M * K; i++) {
                float v = (float)rnd(&s) * (half && i % 7 == 0 ? 0x1p-15f : 1.0f);
                A[i] = half ? kern_f32_to_f16(v) : kern_f32_to_bf16(v);
                a[i] = half ? kern_f16_to_f32(A[i]) : kern_bf16_to_f32(A[i]);
            }
            for (long i = 0; i < (long)K * N; i++) {
                float v = (float)rnd(&s);
                B[i] = half ? kern_f32_to_f16(v) : kern_f32_to_bf16(v);
                b[i] = half ? kern_f16_to_f32(B[i]) : kern_bf16_to_f32(B[i]);
            }
            for (int l = 0; l < nl; l++)
                for (int th = 1; th <= 2; th++) {
                    char what[64];
                    snprintf(what, sizeof what, "%s %s threads=%d", half ? "f16" : "bf16", kern_isa_name(lv[l]), th);
                    kern_gemm_ex(half ? KERN_F16 : KERN_BF16, lv[l], M, N, K, A, K, B, N, C, N, th);
                    check_gemm_f32_result(M, N, K, a, b, C, N, what);
                }
        }
        kern_gemm_bf16(M, N, K, A, B, C, 1); /* the wrappers reach the same code */
        kern_gemm_f16(M, N, K, A, B, C, 1);
        check_gemm_f32_result(M, N, K, a, b, C, N, "kern_gemm_f16");
        free(A);
        free(B);
        free(a);
        free(b);
        free(C);
    }
}
END_TEST

START_TEST(gemm_i8_exact)
{
    enum kern_isa lv[8];
    int nl = isa_levels(lv);
    uint64_t s = 5;
    static const int shapes[][3] = {{37, 29, 53}, {1, 67, 300}, {70, 45, 1537}, {300, 20, 201}};
    for (unsigned t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        int M = shapes[t][0], N = shapes[t][1], K = shapes[t][2];
        int8_t *A = malloc((size_t)M * K), *B = malloc((size_t)K * N);
        int32_t *C = malloc(sizeof *C * M * N), *R = malloc(sizeof *R * M * N);
        ck_assert(A && B && C && R);
        for (long i = 0; i < (long)M * K; i++) /* the full range, -128 included */
            A[i] = (int8_t)(i % 11 == 0 ? -128 : (int)floor(rnd(&s) * 128));
        for (long i = 0; i < (long)K * N; i++)
            B[i] = (int8_t)(i % 13 == 0 ? -128 : (int)floor(rnd(&s) * 128));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                int32_t acc = 0;
                for (int p = 0; p < K; p++)
                    acc += A[(long)i * K + p] * B[(long)p * N + j];
                R[(long)i * N + j] = acc;
            }
        for (int l = 0; l < nl; l++)
            for (int th = 1; th <= 2; th++) {
                memset(C, 0x55, sizeof *C * M * N);
                kern_gemm_ex(KERN_I8, lv[l], M, N, K, A, K, B, N, C, N, th);
                for (long i = 0; i < (long)M * N; i++)
                    ck_assert_msg(C[i] == R[i], "%s threads=%d M=%d N=%d K=%d C[%ld] = %d, want %d",
                                  kern_isa_name(lv[l]), th, M, N, K, i, C[i], R[i]);
            }
        kern_gemm_i8(M, N, K, A, B, C, 0);
        ck_assert(memcmp(C, R, sizeof *C * M * N) == 0);
        free(A);
        free(B);
        free(C);
        free(R);
    }
}
END_TEST

START_TEST(isa_names)
{
    ck_assert_str_eq(kern_isa_name(KERN_ISA_GENERIC), "generic");
    ck_assert_str_eq(kern_isa_name(KERN_ISA_AVX512), "avx512");
    ck_assert_str_eq(kern_isa_name(KERN_ISA_AVX512_VNNI), "avx512-vnni");
    ck_assert(kern_isa_best() >= KERN_ISA_GENERIC && kern_isa_best() <= KERN_ISA_AVX512_VNNI);
}
END_TEST

/* ---- convolution ---- */

static void conv_case(int N, int C, int H, int W, int OC, int KH, int KW, int stride, int pad, int groups, int threads)
{
    uint64_t s = (uint64_t)(N * 1000003 + C * 1009 + OC * 31 + groups * 7 + stride);
    int OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1, Cg = C / groups, OCg = OC / groups;
    float *x = rnd_floats(&s, (long)N * C * H * W), *w = rnd_floats(&s, (long)OC * Cg * KH * KW);
    long ny = (long)N * OC * OH * OW;
    float *y = rnd_floats(&s, ny + 1);
    y[ny] = 777.0f; /* guard after the output */
    kern_conv2d_f32(N, C, H, W, OC, KH, KW, stride, pad, groups, x, w, y, threads);
    ck_assert(y[ny] == 777.0f);
    long taps = (long)Cg * KH * KW;
    for (int n = 0; n < N; n++)
        for (int oc = 0; oc < OC; oc++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    double r = 0, ra = 0;
                    int g = oc / OCg;
                    for (int c = 0; c < Cg; c++)
                        for (int kh = 0; kh < KH; kh++)
                            for (int kw = 0; kw < KW; kw++) {
                                int ih = oh * stride - pad + kh, iw = ow * stride - pad + kw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                double t = (double)x[(((long)n * C + g * Cg + c) * H + ih) * W + iw] *
                                           w[(((long)oc * Cg + c) * KH + kh) * KW + kw];
                                r += t;
                                ra += fabs(t);
                            }
                    double got = y[(((long)n * OC + oc) * OH + oh) * OW + ow];
                    /* a dot product of at most Cg KH KW terms: the gamma bound */
                    ck_assert_msg(fabs(got - r) <= 1.01 * gamma_n(taps) * ra + 1e-30,
                                  "conv C=%d OC=%d k=%dx%d s=%d p=%d g=%d: y[%d][%d][%d][%d] = %.9g, want %.9g", C, OC,
                                  KH, KW, stride, pad, groups, n, oc, oh, ow, got, r);
                }
    free(x);
    free(w);
    free(y);
}

START_TEST(conv2d_matches_reference)
{
    for (int th = 1; th <= 2; th++) {
        conv_case(2, 3, 11, 9, 5, 3, 3, 2, 1, 1, th);   /* im2col, stride 2, pad 1 */
        conv_case(1, 4, 10, 12, 6, 3, 2, 1, 0, 2, th);  /* two groups, non-square kernel */
        conv_case(2, 6, 9, 8, 6, 3, 3, 1, 1, 6, th);    /* depthwise */
        conv_case(1, 5, 12, 11, 5, 5, 5, 2, 2, 5, th);  /* depthwise, stride 2 */
        conv_case(1, 3, 7, 9, 3, 5, 3, 1, 2, 3, th);    /* depthwise 5x3, pad 2 (wider than 3 needs): padded plane */
        conv_case(1, 4, 6, 6, 4, 3, 3, 1, 0, 4, th);    /* depthwise, no padding: padded plane with pad 0 */
        conv_case(1, 2, 100, 100, 2, 3, 3, 1, 1, 2, th); /* depthwise, plane too big for L1: phased plane */
        conv_case(2, 4, 15, 15, 4, 3, 3, 2, 1, 4, th);   /* depthwise 3x3 stride 2 (MobileNet), odd size, 2 images */
        conv_case(1, 3, 13, 10, 3, 3, 3, 3, 0, 3, th);   /* depthwise stride 3, no padding */
        conv_case(1, 2, 9, 9, 2, 5, 5, 2, 2, 2, th);     /* depthwise 5x5 stride 2, pad 2 */
        conv_case(2, 8, 7, 5, 7, 1, 1, 1, 0, 1, th);    /* pointwise: no im2col */
        conv_case(1, 6, 8, 8, 12, 3, 3, 1, 1, 3, th);   /* grouped, OC / groups = 4 */
        conv_case(1, 16, 20, 20, 24, 3, 3, 1, 1, 1, th); /* large enough for the threaded GEMM */
    }
    /* An invalid shape leaves y alone. */
    float x[4] = {1, 2, 3, 4}, w[4] = {1, 1, 1, 1}, y[1] = {-5};
    kern_conv2d_f32(1, 3, 2, 2, 1, 1, 1, 1, 0, 2, x, w, y, 1); /* C not a multiple of groups */
    ck_assert(y[0] == -5);
    kern_conv2d_f32(1, 1, 2, 2, 1, 3, 3, 1, 0, 1, x, w, y, 1); /* kernel larger than the input */
    ck_assert(y[0] == -5);
}
END_TEST

/* ---- attention ---- */

static void attention_case(int B, int H, int Hkv, int S, int T, int D, int causal, int threads)
{
    uint64_t s = (uint64_t)(B * 7919 + H * 131 + S * 17 + T * 3 + causal);
    long nq = (long)B * S * H * D, nkv = (long)B * T * Hkv * D;
    float *q = rnd_floats(&s, nq), *k = rnd_floats(&s, nkv), *v = rnd_floats(&s, nkv), *o = rnd_floats(&s, nq);
    kern_attention_f32(B, H, Hkv, S, T, D, q, k, v, o, causal, threads);
    double *p = malloc(sizeof *p * T);
    ck_assert_ptr_nonnull(p);
    int G = H / Hkv;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < S; i++) {
                const float *qi = q + ((long)b * S + i) * H * D + (long)h * D;
                int lim = causal ? T - S + i + 1 : T;
                double m = -INFINITY, l = 0;
                for (int j = 0; j < lim; j++) {
                    const float *kj = k + ((long)b * T + j) * Hkv * D + (long)(h / G) * D;
                    double d = 0;
                    for (int e = 0; e < D; e++)
                        d += (double)qi[e] * kj[e];
                    p[j] = d / sqrt((double)D);
                    m = p[j] > m ? p[j] : m;
                }
                for (int j = 0; j < lim; j++)
                    l += p[j] = exp(p[j] - m);
                for (int e = 0; e < D; e++) {
                    double r = 0;
                    for (int j = 0; j < lim; j++)
                        r += p[j] / l * v[((long)b * T + j) * Hkv * D + (long)(h / G) * D + e];
                    double got = o[((long)b * S + i) * H * D + (long)h * D + e];
                    /* |v| < 1 and the output is a convex combination of v, so absolute error. Scores
                     * carry fp32 dot-product error <= gamma_D sum|q||k| / sqrt(D) <= 1e-6 here, exp
                     * a few ulp: relative weight error ~1e-6; the weighted sums add gamma_T. */
                    ck_assert_msg(fabs(got - r) <= 1e-5,
                                  "attention B=%d H=%d Hkv=%d S=%d T=%d causal=%d: o[%d][%d][%d][%d] = %.9g, want %.9g",
                                  B, H, Hkv, S, T, causal, b, i, h, e, got, r);
                }
            }
    free(p);
    free(q);
    free(k);
    free(v);
    free(o);
}

START_TEST(attention_matches_reference)
{
    for (int th = 1; th <= 2; th++) {
        attention_case(2, 4, 2, 37, 37, 16, 1, th);  /* prefill, causal, grouped-query */
        attention_case(1, 3, 3, 21, 21, 8, 0, th);   /* prefill, non-causal, multi-head */
        attention_case(2, 4, 2, 1, 45, 16, 1, th);   /* decode, GQA H=4 Hkv=2 */
        attention_case(1, 4, 1, 1, 70, 32, 0, th);   /* decode, multi-query */
        attention_case(1, 2, 2, 5, 40, 8, 1, th);    /* chunked prefill: the last 5 of 40 */
        attention_case(1, 2, 1, 19, 19, 72, 1, th);  /* D = 64 + 8: register tile plus scalar tail */
        attention_case(1, 2, 2, 1, 37, 80, 0, th);   /* D = 64 + 16 */
    }
    /* Scores far apart (scaled q, k) stay finite: the online max subtraction. */
    enum { D = 4, T = 3 };
    float q[D] = {30, 30, 30, 30}, k[T * D] = {3, 3, 3, 3, -3, -3, -3, -3, 2, 2, 2, 2}, v[T * D], o[D];
    for (int i = 0; i < T * D; i++)
        v[i] = (float)(i / D);
    kern_attention_f32(1, 1, 1, 1, T, D, q, k, v, o, 0, 1); /* scores 180, -180, 120: all weight on key 0 */
    for (int e = 0; e < D; e++)
        ck_assert(fabs(o[e] - 0.0) < 1e-6);
}
END_TEST

/* ---- row operators and activations ---- */

START_TEST(softmax_rows)
{
    enum { R = 5, C = 67 };
    uint64_t s = 3;
    float x[R * C], y[R * C];
    for (int i = 0; i < R * C; i++)
        x[i] = (float)(rnd(&s) * 20);
    x[0] = 1000; /* large values: stable only with the max subtracted */
    x[1] = 1001;
    kern_softmax_f32(R, C, x, y, 1);
    for (int r = 0; r < R; r++) {
        double m = -INFINITY, l = 0, sum = 0;
        for (int j = 0; j < C; j++)
            m = x[r * C + j] > m ? x[r * C + j] : m;
        for (int j = 0; j < C; j++)
            l += exp(x[r * C + j] - m);
        for (int j = 0; j < C; j++) {
            double want = exp(x[r * C + j] - m) / l;
            /* exp to a few ulp, the sum to gamma_C: relative 1e-5 is ample; tiny values absolute. */
            ck_assert_msg(fabs(y[r * C + j] - want) <= 1e-5 * want + 1e-12, "softmax y[%d][%d] = %g, want %g", r, j,
                          y[r * C + j], want);
            sum += y[r * C + j];
        }
        ck_assert_msg(fabs(sum - 1) <= 1e-5, "row %d sums to %.9g", r, sum);
    }
    ck_assert(fabs(y[1] / y[0] - exp(1.0)) < 1e-5);
    kern_softmax_f32(R, C, x, x, 2); /* in place */
    ck_assert(memcmp(x, y, sizeof x) == 0);
}
END_TEST

START_TEST(norms)
{
    enum { R = 4, C = 129 };
    uint64_t s = 11;
    float x[R * C], g[C], b[C], y[R * C];
    for (int i = 0; i < R * C; i++)
        x[i] = (float)(rnd(&s) * 3 + 100); /* offset 100: a one-pass variance would lose digits */
    for (int i = 0; i < C; i++) {
        g[i] = (float)(1 + rnd(&s) * 0.5);
        b[i] = (float)rnd(&s);
    }
    const float eps = 1e-5f;
    kern_layernorm_f32(R, C, x, g, b, y, eps, 1);
    for (int r = 0; r < R; r++) {
        double m = 0, v = 0;
        for (int j = 0; j < C; j++)
            m += x[r * C + j];
        m /= C;
        for (int j = 0; j < C; j++)
            v += (x[r * C + j] - m) * (x[r * C + j] - m);
        v /= C;
        for (int j = 0; j < C; j++) {
            double want = (x[r * C + j] - m) / sqrt(v + eps) * g[j] + b[j];
            /* x - mean in fp32 carries the rounding of values ~100 against a spread ~1.7: about
             * 2^-24 100 / 1.7 = 3.5e-6, then a few more roundings */
            ck_assert_msg(fabs(y[r * C + j] - want) <= 1e-5 * (fabs(want) + 1), "layernorm %d %d: %g vs %g", r, j,
                          y[r * C + j], want);
        }
    }
    kern_layernorm_f32(R, C, x, g, NULL, y, eps, 1); /* no bias */
    kern_rmsnorm_f32(R, C, x, g, y + 0, eps, 2);
    for (int r = 0; r < R; r++) {
        double ss = 0;
        for (int j = 0; j < C; j++)
            ss += (double)x[r * C + j] * x[r * C + j];
        for (int j = 0; j < C; j++) {
            double want = x[r * C + j] / sqrt(ss / C + eps) * g[j];
            ck_assert_msg(fabs(y[r * C + j] - want) <= 1e-5 * fabs(want), "rmsnorm %d %d: %g vs %g", r, j,
                          y[r * C + j], want);
        }
    }
}
END_TEST

START_TEST(activations_known_values)
{
    /* GELU (tanh form) and SiLU at hand-computed points (fp64 evaluations of the formulas). */
    static const float xs[] = {0, 1, -1, 2, 0.5f, -3, 100, -100};
    static const double gelu[] = {0, 0.8411919906082768, -0.15880800939172324, 1.954597694087775,
                                  0.34571400982514394, -0.0036373920817729943, 100, 0};
    static const double silu[] = {0, 0.7310585786300049, -0.2689414213699951, 1.7615941559557649,
                                  0.3112296656009273, -0.1422776195332459, 100, 0};
    enum { N = sizeof xs / sizeof xs[0] };
    float y[N];
    kern_gelu_f32(N, xs, y, 1);
    for (int i = 0; i < N; i++) /* exp to ~2 ulp plus a division: 1e-6 relative; 1e-30 absolute at 0 */
        ck_assert_msg(fabs(y[i] - gelu[i]) <= 1e-6 * fabs(gelu[i]) + 1e-30, "gelu(%g) = %.9g, want %.9g", xs[i], y[i],
                      gelu[i]);
    kern_silu_f32(N, xs, y, 1);
    for (int i = 0; i < N; i++)
        ck_assert_msg(fabs(y[i] - silu[i]) <= 1e-6 * fabs(silu[i]) + 1e-30, "silu(%g) = %.9g, want %.9g", xs[i], y[i],
                      silu[i]);
    /* A long vector (threaded path) against libm. */
    long n = 100003;
    uint64_t s = 1;
    float *x = rnd_floats(&s, n), *g = malloc(sizeof *g * n), *si = malloc(sizeof *si * n);
    ck_assert(g && si);
    for (long i = 0; i < n; i++)
        x[i] *= 12;
    kern_gelu_f32(n, x, g, 2);
    kern_silu_f32(n, x, si, 2);
    for (long i = 0; i < n; i++) {
        double v = x[i];
        /* 0.5 (1 + tanh u) written as 1 / (1 + exp(-2u)): in fp64, 1 + tanh u cancels to 0 for
         * u < -19 while the true value is still ~1e-17 relative to x */
        double u2 = -2 * 0.7978845608028654 * (v + 0.044715 * v * v * v);
        double wg = v / (1 + exp(u2));
        double ws = v / (1 + exp(-v));
        /* the fp32 argument u2 carries a few roundings of |u2|, which exp turns into relative error
         * ~ 3 |u2| 2^-24 (|u2| reaches ~50 where exp(u2) still matters); exp and the rest add ~8 ulp */
        double tg = (8 + 4 * fabs(u2)) * U32;
        ck_assert_msg(fabs(g[i] - wg) <= tg * fabs(wg) + 1e-30, "gelu(%.9g) = %.9g, want %.9g", v, g[i], wg);
        ck_assert_msg(fabs(si[i] - ws) <= 2e-6 * fabs(ws) + 1e-30, "silu(%.9g) = %.9g, want %.9g", v, si[i], ws);
    }
    free(x);
    free(g);
    free(si);
}
END_TEST

START_TEST(streams_exact)
{
    long n = 70001; /* threaded and odd */
    uint64_t s = 2;
    float *a = rnd_floats(&s, n), *b = rnd_floats(&s, n), *c = rnd_floats(&s, n);
    kern_copy_f32(n, a, c, 2);
    ck_assert(memcmp(a, c, sizeof *a * n) == 0);
    kern_triad_f32(n, a, b, c, 3.0f, 2);
    for (long i = 0; i < n; i++) /* one rounding of a + s b either way (fused or not) */
        ck_assert(fabs(c[i] - ((double)a[i] + 3.0 * b[i])) <= 2 * U32 * (fabs(a[i]) + 3 * fabs(b[i])));
    kern_add_f32(n, a, b, c, 1);
    for (long i = 0; i < n; i++)
        ck_assert(c[i] == a[i] + b[i]);
    free(a);
    free(b);
    free(c);
}
END_TEST

/* ---- conversions ---- */

START_TEST(bf16_conversion)
{
    /* exactly representable: round trip */
    static const float exact[] = {0.0f, -0.0f, 1.0f, -2.5f, 0x1.fep127f, 0x1p-133f /* smallest subnormal */, 3.0f};
    for (unsigned i = 0; i < sizeof exact / sizeof exact[0]; i++)
        ck_assert(kern_bf16_to_f32(kern_f32_to_bf16(exact[i])) == exact[i]);
    ck_assert_uint_eq(kern_f32_to_bf16(1.0f), 0x3f80);
    /* 1 + 2^-8 lies halfway between 1 (mantissa 0, even) and 1 + 2^-7: to 1. 1 + 3 2^-8 lies halfway
     * between 1 + 2^-7 (mantissa 1, odd) and 1 + 2^-6 (mantissa 2): to the even one. */
    ck_assert_uint_eq(kern_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    ck_assert_uint_eq(kern_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
    ck_assert_uint_eq(kern_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81); /* above the tie */
    ck_assert_uint_eq(kern_f32_to_bf16(-1.0f - 0x1p-8f), 0xbf80);
    /* saturation: FLT_MAX would round to inf; inf stays inf; NaN stays NaN */
    ck_assert_uint_eq(kern_f32_to_bf16(0x1.fffffep127f), 0x7f7f);
    ck_assert_uint_eq(kern_f32_to_bf16(-0x1.fffffep127f), 0xff7f);
    ck_assert_uint_eq(kern_f32_to_bf16(INFINITY), 0x7f80);
    ck_assert_uint_eq(kern_f32_to_bf16(-INFINITY), 0xff80);
    ck_assert(isnan(kern_bf16_to_f32(kern_f32_to_bf16(NAN))));
    /* every non-NaN code round-trips */
    for (unsigned h = 0; h < 65536; h++) {
        float f = kern_bf16_to_f32((uint16_t)h);
        if (isnan(f))
            ck_assert(isnan(kern_bf16_to_f32(kern_f32_to_bf16(f))));
        else
            ck_assert_msg(kern_f32_to_bf16(f) == h, "bf16 0x%04x", h);
    }
}
END_TEST

START_TEST(f16_conversion)
{
    ck_assert_uint_eq(kern_f32_to_f16(1.0f), 0x3c00);
    ck_assert_uint_eq(kern_f32_to_f16(-2.0f), 0xc000);
    ck_assert_uint_eq(kern_f32_to_f16(65504.0f), 0x7bff);
    ck_assert_uint_eq(kern_f32_to_f16(65519.0f), 0x7bff); /* below 65520: rounds down anyway */
    ck_assert_uint_eq(kern_f32_to_f16(65520.0f), 0x7bff); /* IEEE: inf; saturated */
    ck_assert_uint_eq(kern_f32_to_f16(-1e6f), 0xfbff);
    ck_assert_uint_eq(kern_f32_to_f16(INFINITY), 0x7c00);
    ck_assert_uint_eq(kern_f32_to_f16(-INFINITY), 0xfc00);
    ck_assert(isnan(kern_f16_to_f32(kern_f32_to_f16(NAN))));
    /* ties to even among normals: 1 + 2^-11 -> 1, 1 + 3 2^-11 -> 1 + 2^-9 */
    ck_assert_uint_eq(kern_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    ck_assert_uint_eq(kern_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
    /* subnormals: m 2^-24 */
    ck_assert_uint_eq(kern_f32_to_f16(0x1p-24f), 0x0001);
    ck_assert_uint_eq(kern_f32_to_f16(0x1p-25f), 0x0000);     /* tie between 0 and 1: to 0 */
    ck_assert_uint_eq(kern_f32_to_f16(3 * 0x1p-25f), 0x0002); /* tie between 1 and 2: to 2 */
    ck_assert_uint_eq(kern_f32_to_f16(1023 * 0x1p-24f), 0x03ff);
    ck_assert_uint_eq(kern_f32_to_f16(0x1p-14f - 0x1p-25f), 0x0400); /* tie 1023/1024: to the smallest normal */
    ck_assert_uint_eq(kern_f32_to_f16(0x1p-14f), 0x0400);
    ck_assert_uint_eq(kern_f32_to_f16(-0x1p-30f), 0x8000); /* underflow keeps the sign */
    ck_assert(kern_f16_to_f32(0x0001) == 0x1p-24f);
    ck_assert(kern_f16_to_f32(0x03ff) == 1023 * 0x1p-24f);
    ck_assert(kern_f16_to_f32(0x7bff) == 65504.0f);
    ck_assert(isinf(kern_f16_to_f32(0xfc00)) && kern_f16_to_f32(0xfc00) < 0);
    for (unsigned h = 0; h < 65536; h++) {
        float f = kern_f16_to_f32((uint16_t)h);
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
            ck_assert(isnan(f));
        else
            ck_assert_msg(kern_f32_to_f16(f) == h, "f16 0x%04x", h);
    }
}
END_TEST

/* ---- quantization ---- */

START_TEST(quantize_int8_int4)
{
    /* int8, one scale per row. Row 0: max 31.75, s = 31.75 / 127 = 0.25 exactly:
     * 1.125 / s = 4.5 -> 4 (even), 1.375 / s = 5.5 -> 6, -0.3 / s = -1.2 -> -1. Row 1 is all zero. */
    float x[10] = {31.75f, 1.125f, 1.375f, -0.3f, 0, 0, 0, 0, 0, 0}, xq[10];
    kern_quantize(P_INT8, 2, 5, 0, x, xq);
    const float w8[10] = {31.75f, 1.0f, 1.5f, -0.25f, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 10; i++)
        ck_assert_msg(xq[i] == w8[i], "int8 [%d] = %g, want %g", i, xq[i], w8[i]);
    /* int4, groups of 4 along a 10-wide row (4, 4, 2).
     * group 0: max 7, s = 1: 3.5 -> 4 (even), -1.75 -> -2, 0.5 -> 0 (even).
     * group 1: max 1.75, s = 0.25: -0.3 -> -1.2 -> -1, 0.6 -> 2.4 -> 2, 0.125 -> 0.5 -> 0.
     * group 2: max 0.7, s = 0.1: -0.7 -> -7 (exact multiple up to rounding of s), 0.2 -> 2. */
    float y[10] = {7, 3.5f, -1.75f, 0.5f, 1.75f, -0.3f, 0.6f, 0.125f, -0.7f, 0.2f}, yq[10];
    kern_quantize(P_INT4, 1, 10, 4, y, yq);
    const float w4[10] = {7, 4, -2, 0, 1.75f, -0.25f, 0.5f, 0, -0.7f, 0.2f};
    for (int i = 0; i < 10; i++)
        ck_assert_msg(fabsf(yq[i] - w4[i]) <= 1e-6f, "int4 [%d] = %g, want %g", i, yq[i], w4[i]);
    /* group <= 0: one scale for the whole row, max 7 -> s = 1 */
    kern_quantize(P_INT4, 1, 10, 0, y, yq);
    ck_assert(yq[4] == 2 && yq[5] == 0 && yq[8] == -1);
    /* in place, and fp32 / fp64 are copies */
    float z[3] = {0.1f, -3e-8f, 12345.678f}, zc[3];
    memcpy(zc, z, sizeof z);
    kern_quantize(P_FP32, 1, 3, 0, z, z);
    ck_assert(memcmp(z, zc, sizeof z) == 0);
    float zq[3];
    kern_quantize(P_FP64, 3, 1, 0, z, zq);
    ck_assert(memcmp(zq, zc, sizeof z) == 0);
    kern_quantize(P_INT8, 1, 5, 0, x, x); /* in place */
    ck_assert(x[1] == 1.0f && x[2] == 1.5f);
}
END_TEST

static float q1(enum prec p, float v)
{
    float r;
    kern_quantize(p, 1, 1, 0, &v, &r);
    return r;
}

static float e5m2(float v)
{
    float r;
    kern_quantize_fp8e5m2(1, &v, &r);
    return r;
}

START_TEST(quantize_floats)
{
    /* fp8 e4m3: max 448 = 1.75 2^8; no inf, so overflow and inf saturate */
    ck_assert(q1(P_FP8, 448) == 448);
    ck_assert(q1(P_FP8, 464) == 448); /* tie between 448 (mantissa 6) and 480 (not finite): saturate */
    ck_assert(q1(P_FP8, 500) == 448);
    ck_assert(q1(P_FP8, 1e9f) == 448);
    ck_assert(q1(P_FP8, INFINITY) == 448 && q1(P_FP8, -INFINITY) == -448);
    ck_assert(isnan(q1(P_FP8, NAN)));
    ck_assert(q1(P_FP8, 1.0625f) == 1.0f);   /* tie between 1 and 1.125: even mantissa 0 */
    ck_assert(q1(P_FP8, 1.1875f) == 1.25f);  /* tie between 1.125 (odd) and 1.25 (even) */
    ck_assert(q1(P_FP8, 0.3f) == 0.3125f);   /* quantum 2^-5 in [0.25, 0.5): 9.6 -> 10 */
    ck_assert(q1(P_FP8, -0.3f) == -0.3125f);
    ck_assert(q1(P_FP8, 0x1p-6f) == 0x1p-6f); /* smallest normal */
    ck_assert(q1(P_FP8, 0x1p-9f) == 0x1p-9f); /* smallest subnormal */
    ck_assert(q1(P_FP8, 0x1p-10f) == 0);      /* tie between 0 and 2^-9: to 0 */
    ck_assert(q1(P_FP8, 3 * 0x1p-10f) == 0x1p-8f); /* tie between 1 and 2 quanta: to 2 */
    ck_assert(q1(P_FP8, 7 * 0x1p-9f) == 7 * 0x1p-9f); /* largest subnormal */
    /* fp8 e5m2: max 57344 = 1.75 2^15, inf kept */
    ck_assert(e5m2(57344) == 57344 && e5m2(60000) == 57344 && e5m2(1e9f) == 57344);
    ck_assert(isinf(e5m2(INFINITY)));
    ck_assert(e5m2(1.125f) == 1.0f && e5m2(1.375f) == 1.5f);
    ck_assert(e5m2(0x1p-16f) == 0x1p-16f && e5m2(0x1p-17f) == 0);
    /* tf32: 10 mantissa bits, fp32 range */
    ck_assert(q1(P_TF32, 1.0f + 0x1p-11f) == 1.0f);
    ck_assert(q1(P_TF32, 1.0f + 3 * 0x1p-11f) == 1.0f + 0x1p-9f);
    ck_assert(q1(P_TF32, 0x1.fffffep127f) == 0x1.ffcp127f); /* saturates */
    ck_assert(q1(P_TF32, 0x1p-140f) == 0x1p-140f || q1(P_TF32, 0x1p-140f) == 0); /* below its quantum 2^-136 */
    ck_assert(q1(P_TF32, 3 * 0x1p-137f) == 0x1p-135f);
    /* bf16 / fp16 through kern_quantize are the conversion round trips */
    uint64_t s = 17;
    for (int i = 0; i < 1000; i++) {
        float v = (float)(rnd(&s) * pow(2, (int)(rnd(&s) * 40)));
        ck_assert(q1(P_BF16, v) == kern_bf16_to_f32(kern_f32_to_bf16(v)));
        ck_assert(q1(P_FP16, v) == kern_f16_to_f32(kern_f32_to_f16(v)));
        /* every format: relative error at most half its ulp for normal, in-range values */
        if (fabsf(v) >= 0x1p-6f && fabsf(v) <= 448)
            ck_assert(fabsf(q1(P_FP8, v) - v) <= 0x1p-4f * fabsf(v));
        if (fabsf(v) >= 0x1p-14f && fabsf(v) <= 57344)
            ck_assert(fabsf(e5m2(v) - v) <= 0x1p-3f * fabsf(v));
        ck_assert(fabsf(q1(P_TF32, v) - v) <= 0x1p-11f * fabsf(v));
    }
}
END_TEST

/* ---- GEMM error experiment ---- */

START_TEST(gemm_rel_error_ordering)
{
    static const enum prec ps[] = {P_FP32, P_BF16, P_FP16, P_FP8, P_INT8, P_INT4};
    enum { NP = sizeof ps / sizeof ps[0] };
    double e[P_COUNT];
    for (int i = 0; i < NP; i++) {
        e[ps[i]] = kern_gemm_rel_error(ps[i], ps[i], 64, 48, 256, 1);
        ck_assert(e[ps[i]] >= 0);
    }
    ck_assert_msg(e[P_FP32] < 1e-6, "fp32 %g", e[P_FP32]); /* only the fp32 rounding of the inputs: none */
    /* fewer mantissa bits, more error: fp16 (11) < bf16 (8) < fp8 e4m3 (4) < int4 */
    ck_assert(e[P_FP32] < e[P_FP16] && e[P_FP16] < e[P_BF16] && e[P_BF16] < e[P_FP8] && e[P_FP8] < e[P_INT4]);
    ck_assert(e[P_FP16] < e[P_INT8] && e[P_INT8] < e[P_INT4]);
    /* scale: bf16 rounds each operand with relative RMS error about 2^-8 / sqrt(3)... within 4x of that
     * times sqrt(2) for two operands (uniform rounding error, Widrow and Kollar) */
    double bf = 0x1p-8 / sqrt(3.0) * sqrt(2.0);
    ck_assert_msg(e[P_BF16] > bf / 4 && e[P_BF16] < bf * 4, "bf16 %g vs %g", e[P_BF16], bf);
    /* weights only: less error than both */
    double w4a16 = kern_gemm_rel_error(P_INT4, P_FP16, 64, 48, 256, 1);
    ck_assert(w4a16 < e[P_INT4] && w4a16 > e[P_INT8]);
    /* deterministic for a seed, different across seeds */
    ck_assert(kern_gemm_rel_error(P_INT8, P_INT8, 64, 48, 256, 1) == e[P_INT8]);
    double other = kern_gemm_rel_error(P_INT8, P_INT8, 64, 48, 256, 2);
    ck_assert(other != e[P_INT8] && fabs(other / e[P_INT8] - 1) < 0.2);
    ck_assert(kern_gemm_rel_error(P_FP16, P_FP16, 0, 4, 4, 1) == -1);
}
END_TEST

Suite *make_kern_suite(void)
{
    Suite *s = suite_create("kern");
    TCase *t = tcase_create("kern");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, gemm_f32_matches_reference);
    tcase_add_test(t, gemm_leading_dims_and_k0);
    tcase_add_test(t, gemm_bf16_f16_match_reference);
    tcase_add_test(t, gemm_i8_exact);
    tcase_add_test(t, isa_names);
    tcase_add_test(t, conv2d_matches_reference);
    tcase_add_test(t, attention_matches_reference);
    tcase_add_test(t, softmax_rows);
    tcase_add_test(t, norms);
    tcase_add_test(t, activations_known_values);
    tcase_add_test(t, streams_exact);
    tcase_add_test(t, bf16_conversion);
    tcase_add_test(t, f16_conversion);
    tcase_add_test(t, quantize_int8_int4);
    tcase_add_test(t, quantize_floats);
    tcase_add_test(t, gemm_rel_error_ordering);
    suite_add_tcase(s, t);
    return s;
}
