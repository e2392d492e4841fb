/* check_kern_cuda.c -- the GPU module (src/kern_cuda.h), built only with ./configure --enable-cuda. Every
 * test passes with or without a GPU: the probe reports its absence with a message; names, shape keys,
 * validation and counts are host code; the host references are checked against dse's own CPU kernels
 * (kern.h) and the attention kernel's tiled algorithm against the reference, run on the host. Where a
 * GPU is present, small cases also run on it through kcu_check. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "kern.h"
#include "kern_cuda_impl.h"

static float urand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*s >> 40) * 0x1p-23 - 1.0);
}

/* Floats on a 1/64 grid in [-1, 1): exact in fp16 and bf16, so the references see what a GPU would. */
static float *grid_floats(uint64_t *s, long long n)
{
    float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (long long i = 0; i < n; i++)
        x[i] = roundf(urand(s) * 64) / 64;
    return x;
}

static struct kcu_case mk(enum kcu_kind k, enum kcu_prec p) { struct kcu_case c; kcu_case_init(&c, k, p); return c; }

static int gpu_present(void)
{
    char err[256];
    return kcu_probe(NULL, err, sizeof err) == 0;
}

START_TEST(probe_reports)
{
    struct kcu_info g;
    char err[256] = "";
    int rc = kcu_probe(&g, err, sizeof err);
    if (rc) { /* no GPU (this project's build machines): a reason, from the driver */
        ck_assert_msg(strlen(err) > 0, "kcu_probe failed without a message");
        ck_assert_msg(strstr(err, "no CUDA device") == err, "%s", err);
    } else {
        ck_assert(strlen(g.name) > 0 && g.sms > 0 && g.cc_major >= 1 && g.total_bytes > 0);
        ck_assert(g.free_bytes > 0 && g.free_bytes <= g.total_bytes && g.mem_GBps > 0);
    }
    /* kcu_time and kcu_check fail the same way, with the same reason */
    struct kcu_case c = mk(KCU_ADD, KCU_FP32);
    struct kcu_timing t;
    double e, tol;
    c.ew.n = 1024;
    if (rc) {
        err[0] = '\0';
        ck_assert_int_eq(kcu_time(&c, 1, 1, 0, &t, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "no CUDA device") == err, "%s", err);
        err[0] = '\0';
        ck_assert_int_eq(kcu_check(&c, &e, &tol, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "no CUDA device") == err, "%s", err);
    } else {
        ck_assert_msg(kcu_time(&c, 1, 3, 0, &t, err, sizeof err) == 0, "%s", err);
        ck_assert(t.runs >= 3 && t.min_ms > 0 && t.p25_ms <= t.median_ms && t.median_ms <= t.p75_ms && *t.impl);
    }
    /* an invalid case is refused before the GPU is asked anything */
    c.ew.n = 0;
    ck_assert_int_eq(kcu_time(&c, 1, 1, 0, &t, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "invalid case: add: n = 0") == err, "%s", err);
}
END_TEST

START_TEST(names_and_fields)
{
    ck_assert_int_eq(kcu_kind_from_name("gemm"), KCU_GEMM);
    ck_assert_int_eq(kcu_kind_from_name("gemm_bias_gelu"), KCU_GEMM_BIAS_GELU);
    ck_assert_int_eq(kcu_kind_from_name("conv2d"), KCU_CONV2D);
    ck_assert_int_eq(kcu_kind_from_name("matmul"), -1);
    ck_assert_int_eq(kcu_kind_from_name(NULL), -1);
    ck_assert_int_eq(kcu_prec_from_name("fp8"), KCU_FP8);
    ck_assert_int_eq(kcu_prec_from_name("tf32"), KCU_TF32);
    ck_assert_int_eq(kcu_prec_from_name("int4"), -1);
    ck_assert_ptr_null(kcu_kind_names[KCU_KIND_COUNT]);
    ck_assert_ptr_null(kcu_prec_names[KCU_PREC_COUNT]);
    /* dse's suites spell kinds and precisions the same way */
    for (int k = 0; k < KCU_KIND_COUNT; k++)
        ck_assert_int_eq(kcu_kind_from_name(kcu_kind_names[k]), k);
    const char *const *f = kcu_fields(KCU_GEMM);
    ck_assert(f && !strcmp(f[0], "M") && !strcmp(f[1], "N") && !strcmp(f[2], "K") && !f[3]);
    ck_assert_ptr_null(kcu_fields(KCU_KIND_COUNT));
    /* every key of every kind can be set and read back; other keys cannot */
    for (int k = 0; k < KCU_KIND_COUNT; k++) {
        struct kcu_case c = mk((enum kcu_kind)k, KCU_FP16);
        long long v = 0, i = 0;
        for (f = kcu_fields((enum kcu_kind)k); *f; f++, i++) {
            ck_assert_int_eq(kcu_set_field(&c, *f, 100 + i), 0);
            ck_assert(kcu_get_field(&c, *f, &v) == 0 && v == 100 + i);
        }
        ck_assert_int_eq(kcu_set_field(&c, "bogus", 1), -1);
        ck_assert_int_eq(kcu_get_field(&c, "bogus", &v), -1);
    }
    struct kcu_case c = mk(KCU_ADD, KCU_FP16);
    ck_assert_int_eq(kcu_set_field(&c, "M", 1), -1); /* a GEMM key on an element-wise case */
    /* defaults */
    c = mk(KCU_CONV2D, KCU_FP16);
    ck_assert(c.conv.N == 1 && c.conv.stride == 1 && c.conv.groups == 1 && c.conv.pad == 0);
    c = mk(KCU_ATTENTION, KCU_FP16);
    ck_assert(c.attn.B == 1 && c.attn.causal == 1 && c.attn.Hkv == 0 && c.attn.T == 0);
}
END_TEST

START_TEST(shape_strings)
{
    char buf[160];
    struct kcu_case c = mk(KCU_GEMM, KCU_FP16);
    c.gemm.M = 1, c.gemm.N = 2, c.gemm.K = 3;
    ck_assert_int_eq(kcu_shape(&c, buf, sizeof buf), 11);
    ck_assert_str_eq(buf, "M=1;N=2;K=3");
    char small[6];
    ck_assert_int_eq(kcu_shape(&c, small, sizeof small), 11); /* the length it would have written */
    ck_assert_str_eq(small, "M=1;N");
    c = mk(KCU_ATTENTION, KCU_BF16); /* defaults resolved: Hkv = H, T = S */
    c.attn.H = 32, c.attn.S = 128, c.attn.D = 128;
    kcu_shape(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "B=1;H=32;Hkv=32;S=128;T=128;D=128;causal=1");
    c = mk(KCU_CONV2D, KCU_FP16);
    c.conv.C = 3, c.conv.H = c.conv.W = 224, c.conv.OC = 64, c.conv.KH = c.conv.KW = 7, c.conv.stride = 2, c.conv.pad = 3;
    kcu_shape(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "N=1;C=3;H=224;W=224;OC=64;KH=7;KW=7;stride=2;pad=3;groups=1");
    c = mk(KCU_SOFTMAX, KCU_FP16);
    c.row.rows = 4, c.row.cols = 5;
    kcu_shape(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "rows=4;cols=5");
}
END_TEST

#define REFUSED(c, text)                                                                                        \
    do {                                                                                                       \
        char e_[256] = "";                                                                                     \
        ck_assert_int_eq(kcu_validate(&(c), e_, sizeof e_), -1);                                               \
        ck_assert_msg(strstr(e_, (text)) != NULL, "'%s' does not say '%s'", e_, (text));                       \
    } while (0)

START_TEST(validation)
{
    char err[256];
    struct kcu_case a = mk(KCU_ATTENTION, KCU_FP16);
    a.attn.H = 32, a.attn.Hkv = 8, a.attn.S = 512, a.attn.D = 128;
    ck_assert_msg(kcu_validate(&a, err, sizeof err) == 0, "%s", err);
    a.attn.Hkv = 5;
    REFUSED(a, "Hkv = 5 must divide H = 32");
    a.attn.Hkv = 64;
    REFUSED(a, "Hkv = 64 must divide H = 32");
    a.attn.Hkv = 8, a.attn.T = 100;
    REFUSED(a, "T = 100 must be at least S = 512");
    a.attn.T = 0, a.attn.D = 80;
    REFUSED(a, "D = 80, expected 32, 64, 96 or 128");
    a.attn.D = 128, a.prec = KCU_FP32;
    REFUSED(a, "attention runs fp16, bf16, not fp32");
    a.prec = KCU_FP16, a.attn.causal = 2;
    REFUSED(a, "causal = 2, expected 0 .. 1");

    struct kcu_case g = mk(KCU_GEMM, KCU_FP8);
    g.gemm.M = 1, g.gemm.N = 4096, g.gemm.K = 4096;
    ck_assert_int_eq(kcu_validate(&g, NULL, 0), 0);
    g.gemm.K = 4100;
    REFUSED(g, "need N and K multiples of 16");
    g.prec = KCU_BF16;
    ck_assert_int_eq(kcu_validate(&g, NULL, 0), 0);
    g.gemm.M = 0;
    REFUSED(g, "gemm: M = 0, expected 1 ..");
    g = mk(KCU_GEMM_BIAS_GELU, KCU_INT8);
    g.gemm.M = g.gemm.N = g.gemm.K = 16;
    REFUSED(g, "gemm_bias_gelu runs fp16, bf16, not int8");

    struct kcu_case r = mk(KCU_SOFTMAX, KCU_FP32);
    r.row.rows = r.row.cols = 8;
    REFUSED(r, "softmax runs fp16, not fp32");
    struct kcu_case e = mk(KCU_COPY, KCU_FP16);
    e.ew.n = 8;
    REFUSED(e, "copy runs fp32, not fp16");

    struct kcu_case v = mk(KCU_CONV2D, KCU_FP16);
    v.conv.C = 32, v.conv.H = v.conv.W = 56, v.conv.OC = 64, v.conv.KH = v.conv.KW = 3, v.conv.pad = 1;
    ck_assert_int_eq(kcu_validate(&v, NULL, 0), 0);
    v.conv.groups = 3;
    REFUSED(v, "groups = 3 must divide C = 32 and OC = 64");
    v.conv.groups = 1, v.conv.pad = 0, v.conv.H = 2;
    REFUSED(v, "does not fit the padded input");

    struct kcu_case bad = mk(KCU_ADD, KCU_FP16);
    bad.kind = (enum kcu_kind)KCU_KIND_COUNT;
    REFUSED(bad, "unknown kind");
    ck_assert_int_eq(kcu_validate(NULL, NULL, 0), -1);
}
END_TEST

START_TEST(counts)
{
    struct kcu_case g = mk(KCU_GEMM, KCU_FP16);
    g.gemm.M = 2, g.gemm.N = 3, g.gemm.K = 4;
    ck_assert_double_eq(kcu_flops(&g), 48);
    ck_assert_double_eq(kcu_min_bytes(&g), (8 + 12 + 6) * 2);
    ck_assert_double_eq(kcu_bytes(&g), (8 + 12 + 6) * 2 + KCUI_LIB_BYTES); /* cuBLAS's own allocations */
    g.prec = KCU_INT8; /* int32 out, cuBLASLt workspace */
    g.gemm.N = g.gemm.K = 16;
    ck_assert_double_eq(kcu_min_bytes(&g), 32 + 256 + 32 * 4);
    ck_assert_double_eq(kcu_bytes(&g), 32 + 256 + 32 * 4 + KCUI_LT_WS_BYTES + KCUI_LIB_BYTES);
    g.prec = KCU_FP8; /* bf16 out */
    ck_assert_double_eq(kcu_min_bytes(&g), 32 + 256 + 32 * 2);
    struct kcu_case bg = mk(KCU_GEMM_BIAS_GELU, KCU_BF16);
    bg.gemm.M = 2, bg.gemm.N = 3, bg.gemm.K = 4;
    ck_assert_double_eq(kcu_flops(&bg), 48 + 18 * 6);
    ck_assert_double_eq(kcu_min_bytes(&bg), (8 + 12 + 3 + 6) * 2);

    struct kcu_case a = mk(KCU_ATTENTION, KCU_FP16);
    a.attn.H = 2, a.attn.S = 4, a.attn.D = 32;
    /* causal S = T = 4: 1 + 2 + 3 + 4 = 10 pairs per head, 4 D + 5 FLOPs each (dse's count) */
    ck_assert_double_eq(kcu_flops(&a), 2 * 10 * (4 * 32 + 5));
    a.attn.causal = 0;
    ck_assert_double_eq(kcu_flops(&a), 2 * 16 * (4 * 32 + 5));
    a.attn.S = 1, a.attn.T = 1000, a.attn.Hkv = 1, a.attn.causal = 1; /* decode: 1000 keys; split workspace */
    ck_assert_double_eq(kcu_flops(&a), 2 * 1000 * (4 * 32 + 5));
    ck_assert_double_eq(kcu_min_bytes(&a), 2.0 * (2 * 32 * 2 + 2 * 1000 * 32));
    ck_assert_double_eq(kcu_bytes(&a), kcu_min_bytes(&a) + 4.0 * 2 * 16 * (32 + 2)); /* ceil(1000 / 64) splits */

    struct kcu_case v = mk(KCU_CONV2D, KCU_FP16);
    v.conv.C = 4, v.conv.H = v.conv.W = 5, v.conv.OC = 2, v.conv.KH = v.conv.KW = 3, v.conv.pad = 1;
    ck_assert_double_eq(kcu_flops(&v), 2.0 * 2 * 25 * 9 * 4);
    ck_assert_double_eq(kcu_bytes(&v), 2.0 * (100 + 72 + 50) + 2.0 * 25 * 9 * 4 + KCUI_LIB_BYTES); /* + im2col */
    v.conv.groups = 2;
    ck_assert_double_eq(kcu_flops(&v), 2.0 * 2 * 25 * 9 * 2);

    struct kcu_case e = mk(KCU_GELU, KCU_FP32);
    e.ew.n = 10;
    ck_assert_double_eq(kcu_flops(&e), 170);
    ck_assert_double_eq(kcu_min_bytes(&e), 80);
    ck_assert_double_eq(kcu_bytes(&e), 80);
    e.kind = KCU_TRIAD;
    ck_assert_double_eq(kcu_min_bytes(&e), 120);
    struct kcu_case r = mk(KCU_LAYERNORM, KCU_FP16);
    r.row.rows = 2, r.row.cols = 3;
    ck_assert_double_eq(kcu_flops(&r), 48);
    ck_assert_double_eq(kcu_min_bytes(&r), 2.0 * (6 + 3 + 3 + 6));
    e.ew.n = 0; /* invalid: nothing */
    ck_assert_double_eq(kcu_flops(&e), 0);
    ck_assert_double_eq(kcu_bytes(&e), 0);
}
END_TEST

/* The host references kcu_check trusts, against dse's CPU kernels (an independent implementation). */
static void expect_close(const double *ref, const float *y, long long n, double tol)
{
    double *yd = malloc((size_t)n * sizeof *yd);
    ck_assert_ptr_nonnull(yd);
    for (long long i = 0; i < n; i++)
        yd[i] = y[i];
    long long w;
    double e = kcui_compare(ref, yd, n, &w);
    ck_assert_msg(e <= tol, "relative error %g at %lld: %g where %g", e, w, yd[w], ref[w]);
    free(yd);
}

START_TEST(references_match_cpu_kernels)
{
    uint64_t s = 7;
    /* GEMM with B stored [N][K] */
    const int M = 9, N = 13, K = 37;
    float *A = grid_floats(&s, M * K), *Bt = grid_floats(&s, N * K), *B = malloc(sizeof(float) * K * N),
          *C = malloc(sizeof(float) * M * N), *bias = grid_floats(&s, N);
    double *ref = malloc(sizeof(double) * 4096);
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            B[k * N + n] = Bt[n * K + k];
    kern_gemm_f32(M, N, K, A, B, C, 1);
    struct kcu_case g = mk(KCU_GEMM, KCU_FP32);
    g.gemm.M = M, g.gemm.N = N, g.gemm.K = K;
    const float *gin[3] = {A, Bt, bias};
    kcui_reference(&g, gin, ref);
    expect_close(ref, C, M * N, 1e-5);
    g.kind = KCU_GEMM_BIAS_GELU, g.prec = KCU_FP16; /* gelu(A B^T + bias) */
    for (int i = 0; i < M * N; i++)
        C[i] += bias[i % N];
    kern_gelu_f32(M * N, C, C, 1);
    kcui_reference(&g, gin, ref);
    expect_close(ref, C, M * N, 1e-5);

    /* softmax, layernorm, rmsnorm (eps 1e-5), gelu, silu */
    const int R = 5, L = 40;
    float *x = grid_floats(&s, R * L), *gm = grid_floats(&s, L), *bt = grid_floats(&s, L), *y = malloc(sizeof(float) * R * L);
    const float *rin[3] = {x, gm, bt};
    struct kcu_case r = mk(KCU_SOFTMAX, KCU_FP16);
    r.row.rows = R, r.row.cols = L;
    kern_softmax_f32(R, L, x, y, 1);
    kcui_reference(&r, rin, ref);
    expect_close(ref, y, R * L, 1e-5);
    r.kind = KCU_LAYERNORM;
    kern_layernorm_f32(R, L, x, gm, bt, y, 1e-5f, 1);
    kcui_reference(&r, rin, ref);
    expect_close(ref, y, R * L, 1e-4);
    r.kind = KCU_RMSNORM;
    kern_rmsnorm_f32(R, L, x, gm, y, 1e-5f, 1);
    kcui_reference(&r, rin, ref);
    expect_close(ref, y, R * L, 1e-4);
    struct kcu_case e = mk(KCU_GELU, KCU_FP32);
    e.ew.n = R * L;
    kern_gelu_f32(R * L, x, y, 1);
    kcui_reference(&e, rin, ref);
    expect_close(ref, y, R * L, 1e-5);
    e.kind = KCU_SILU;
    kern_silu_f32(R * L, x, y, 1);
    kcui_reference(&e, rin, ref);
    expect_close(ref, y, R * L, 1e-5);

    /* attention: the same layout as kern_attention_f32; grouped-query, S < T, causal and not */
    for (int causal = 0; causal < 2; causal++) {
        struct kcu_case a = mk(KCU_ATTENTION, KCU_FP16);
        a.attn.B = 2, a.attn.H = 4, a.attn.Hkv = 2, a.attn.S = 5, a.attn.T = 9, a.attn.D = 32, a.attn.causal = causal;
        float *q = grid_floats(&s, 2 * 5 * 4 * 32), *k = grid_floats(&s, 2 * 9 * 2 * 32), *v = grid_floats(&s, 2 * 9 * 2 * 32),
              *o = malloc(sizeof(float) * 2 * 5 * 4 * 32);
        const float *ain[3] = {q, k, v};
        kern_attention_f32(2, 4, 2, 5, 9, 32, q, k, v, o, causal, 1);
        kcui_reference(&a, ain, ref);
        expect_close(ref, o, 2 * 5 * 4 * 32, 1e-5);
        free(q), free(k), free(v), free(o);
    }

    /* conv2d NHWC against kern_conv2d_f32 NCHW: dense, strided, grouped, depthwise */
    static const int cv[][10] = {/* N C H W OC KH KW stride pad groups */
                                 {2, 3, 7, 6, 4, 3, 3, 1, 1, 1},
                                 {1, 4, 9, 9, 6, 3, 3, 2, 1, 2},
                                 {1, 6, 8, 7, 6, 3, 3, 2, 1, 6},
                                 {1, 2, 5, 5, 3, 1, 1, 1, 0, 1}};
    for (unsigned t = 0; t < sizeof cv / sizeof cv[0]; t++) {
        const int *p = cv[t], Nn = p[0], Cc = p[1], Hh = p[2], Ww = p[3], OC = p[4], KH = p[5], KW = p[6], st = p[7],
                  pad = p[8], G = p[9], Cg = Cc / G, OH = (Hh + 2 * pad - KH) / st + 1, OW = (Ww + 2 * pad - KW) / st + 1;
        float *xh = grid_floats(&s, Nn * Hh * Ww * Cc), *wh = grid_floats(&s, OC * KH * KW * Cg),
              *xc = malloc(sizeof(float) * Nn * Cc * Hh * Ww), *wc = malloc(sizeof(float) * OC * Cg * KH * KW),
              *yc = malloc(sizeof(float) * Nn * OC * OH * OW), *yh = malloc(sizeof(float) * Nn * OC * OH * OW);
        for (int n = 0; n < Nn; n++)
            for (int c = 0; c < Cc; c++)
                for (int i = 0; i < Hh * Ww; i++)
                    xc[(n * Cc + c) * Hh * Ww + i] = xh[(n * Hh * Ww + i) * Cc + c];
        for (int o = 0; o < OC; o++)
            for (int c = 0; c < Cg; c++)
                for (int i = 0; i < KH * KW; i++)
                    wc[(o * Cg + c) * KH * KW + i] = wh[(o * KH * KW + i) * Cg + c];
        kern_conv2d_f32(Nn, Cc, Hh, Ww, OC, KH, KW, st, pad, G, xc, wc, yc, 1);
        for (int n = 0; n < Nn; n++)
            for (int o = 0; o < OC; o++)
                for (int i = 0; i < OH * OW; i++)
                    yh[(n * OH * OW + i) * OC + o] = yc[(n * OC + o) * OH * OW + i];
        struct kcu_case c = mk(KCU_CONV2D, KCU_FP16);
        c.conv.N = Nn, c.conv.C = Cc, c.conv.H = Hh, c.conv.W = Ww, c.conv.OC = OC, c.conv.KH = KH, c.conv.KW = KW;
        c.conv.stride = st, c.conv.pad = pad, c.conv.groups = G;
        ck_assert_int_eq(kcu_validate(&c, NULL, 0), 0);
        const float *cin[2] = {xh, wh};
        kcui_reference(&c, cin, ref);
        expect_close(ref, yh, Nn * OC * OH * OW, 1e-5);
        free(xh), free(wh), free(xc), free(wc), free(yc), free(yh);
    }
    free(A), free(Bt), free(B), free(C), free(bias), free(ref), free(x), free(gm), free(bt), free(y);
}
END_TEST

START_TEST(compare_measure)
{
    const double ref[4] = {1, -1, 1, -1}, y[4] = {1, -1, 1.5, -1};
    long long w = -1;
    /* |1.5 - 1| / (|1| + rms 1) */
    ck_assert_double_eq_tol(kcui_compare(ref, y, 4, &w), 0.25, 1e-15);
    ck_assert_int_eq(w, 2);
    const double yn[4] = {1, NAN, 1, -1};
    ck_assert(isinf(kcui_compare(ref, yn, 4, &w)) && w == 1);
    ck_assert(kcui_tol(&(struct kcu_case){.kind = KCU_GEMM, .prec = KCU_INT8}) == 0);
}
END_TEST

/* The prefill kernel's tiles, masks and online softmax, run on the host (kcui_attention_emulate), match
 * the reference: full and partial query tiles, S < T, grouped-query heads, every head size, both
 * types, causal or not, key counts that end inside a tile. */
START_TEST(attention_tiles_match_reference)
{
    static const int cases[][8] = {/* B H Hkv S T D causal bf16 */
                                   {2, 4, 2, 100, 100, 64, 1, 0}, {1, 2, 2, 100, 100, 64, 0, 0}, {1, 4, 1, 70, 200, 128, 1, 0},
                                   {1, 2, 2, 33, 33, 96, 1, 1},   {1, 2, 1, 1, 300, 32, 1, 0},   {2, 8, 2, 3, 129, 128, 1, 1},
                                   {1, 1, 1, 130, 130, 32, 1, 0}, {1, 3, 3, 65, 65, 128, 0, 1},  {1, 2, 1, 64, 64, 32, 1, 1}};
    uint64_t s = 11;
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const int *p = cases[i];
        struct kcu_case c = mk(KCU_ATTENTION, p[7] ? KCU_BF16 : KCU_FP16);
        c.attn.B = p[0], c.attn.H = p[1], c.attn.Hkv = p[2], c.attn.S = p[3], c.attn.T = p[4], c.attn.D = p[5];
        c.attn.causal = p[6];
        struct kcui_plan pl;
        ck_assert_int_eq(kcu_validate(&c, NULL, 0), 0);
        kcui_plan(&c, &pl);
        float *q = grid_floats(&s, pl.n[0]), *k = grid_floats(&s, pl.n[1]), *v = grid_floats(&s, pl.n[2]),
              *o = malloc(sizeof(float) * (size_t)pl.n[3]);
        double *ref = malloc(sizeof(double) * (size_t)pl.n[3]);
        const float *in[3] = {q, k, v};
        ck_assert_int_eq(kcui_attention_emulate(&c, q, k, v, o), 0);
        kcui_reference(&c, in, ref);
        char shape[160];
        kcu_shape(&c, shape, sizeof shape);
        double *od = malloc(sizeof(double) * (size_t)pl.n[3]);
        for (long long j = 0; j < pl.n[3]; j++)
            od[j] = o[j];
        double e = kcui_compare(ref, od, pl.n[3], NULL);
        ck_assert_msg(e <= kcui_tol(&c), "%s %s: relative error %g above %g", shape, kcu_prec_names[c.prec], e, kcui_tol(&c));
        free(q), free(k), free(v), free(o), free(ref), free(od);
    }
    struct kcu_case bad = mk(KCU_GEMM, KCU_FP16);
    ck_assert_int_eq(kcui_attention_emulate(&bad, NULL, NULL, NULL, NULL), -1);
}
END_TEST

/* With a GPU: small cases of the main paths against the reference (kcu_run --check runs them all). */
START_TEST(gpu_checks_when_present)
{
    if (!gpu_present())
        return;
    static const char *const shapes[][3] = {{"gemm", "fp16", "M=33;N=70;K=90"},
                                             {"add", "fp16", "n=100003"},
                                             {"softmax", "fp16", "rows=37;cols=1000"},
                                             {"attention", "fp16", "B=2;H=4;Hkv=2;S=100;T=100;D=64;causal=1"},
                                             {"attention", "fp16", "B=2;H=8;Hkv=2;S=1;T=1000;D=128;causal=1"},
                                             {"conv2d", "fp16", "N=2;C=16;H=9;W=9;OC=32;KH=3;KW=3;stride=1;pad=1"}};
    for (unsigned i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        struct kcu_case c = mk((enum kcu_kind)kcu_kind_from_name(shapes[i][0]), (enum kcu_prec)kcu_prec_from_name(shapes[i][1]));
        char buf[128], err[512];
        snprintf(buf, sizeof buf, "%s", shapes[i][2]);
        char *save = NULL;
        for (char *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
            char *eq = strchr(kv, '=');
            *eq = '\0';
            ck_assert_int_eq(kcu_set_field(&c, kv, atoll(eq + 1)), 0);
        }
        double e, tol;
        int rc = kcu_check(&c, &e, &tol, err, sizeof err);
        ck_assert_msg(rc == 0 || rc == KCU_SKIP, "%s %s: %s", shapes[i][0], shapes[i][2], err);
    }
}
END_TEST

Suite *make_kern_cuda_suite(void)
{
    Suite *s = suite_create("kern_cuda");
    TCase *t = tcase_create("kern_cuda");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, probe_reports);
    tcase_add_test(t, names_and_fields);
    tcase_add_test(t, shape_strings);
    tcase_add_test(t, validation);
    tcase_add_test(t, counts);
    tcase_add_test(t, references_match_cpu_kernels);
    tcase_add_test(t, compare_measure);
    tcase_add_test(t, attention_tiles_match_reference);
    tcase_add_test(t, gpu_checks_when_present);
    suite_add_tcase(s, t);
    return s;
}
