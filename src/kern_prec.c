/* kern_prec.c -- precision emulation: bf16/fp16 conversions, rounding to tf32 and OCP fp8,
 * symmetric int8/int4 quantization, and the GEMM relative-error experiment behind the accuracy proxy.
 *
 * All float rounding is to nearest, ties to even, done on the fp32 bit pattern: adding
 * 2^(s-1) - 1 plus the lowest kept bit to the magnitude and truncating s bits rounds it to a multiple
 * of 2^s ulps, a carry into the exponent included. Values in the target's subnormal range have a
 * fixed quantum, 2^(emin - mbits), and are rounded by adding and subtracting a power of two whose ulp
 * is that quantum. */
#include "kern.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t f2u(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

static float u2f(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

uint16_t kern_f32_to_bf16(float x)
{
    uint32_t u = f2u(x), a = u & 0x7fffffffu, sign = (u >> 16) & 0x8000u;
    if (a > 0x7f800000u)                      /* NaN: keep sign and top payload, force quiet */
        return (uint16_t)((u >> 16) | 0x0040u);
    if (a == 0x7f800000u)
        return (uint16_t)(u >> 16);
    uint32_t r = a + 0x7fffu + ((a >> 16) & 1u); /* round to nearest even at bit 16 */
    if (r >= 0x7f800000u)                        /* rounded past the largest finite bf16: saturate */
        return (uint16_t)(sign | 0x7f7fu);
    return (uint16_t)(sign | (r >> 16));
}

float kern_bf16_to_f32(uint16_t h) { return u2f((uint32_t)h << 16); }

uint16_t kern_f32_to_f16(float x)
{
    uint32_t u = f2u(x), a = u & 0x7fffffffu;
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    if (a > 0x7f800000u)
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a == 0x7f800000u)
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x477ff000u) /* >= 65520 = 65504 + half an ulp: IEEE rounds to inf; saturate to 65504 */
        return (uint16_t)(sign | 0x7bffu);
    if (a < 0x38800000u) { /* below 2^-14: subnormal or zero, m 2^-24 with m = round(|x| 2^24) */
        float f = u2f(a) * 0x1p24f;              /* exact, < 1024 */
        float m = (f + 0x1p23f) - 0x1p23f;        /* round to integer, ties to even */
        return (uint16_t)(sign | (uint16_t)m);    /* m == 1024 is the smallest normal, 0x0400 */
    }
    uint32_t r = a + 0xfffu + ((a >> 13) & 1u); /* round to nearest even at bit 13 */
    r -= 112u << 23;                            /* rebias the exponent from 127 to 15 */
    return (uint16_t)(sign | (r >> 13));
}

float kern_f16_to_f32(uint16_t h)
{
    /* Exponent and mantissa moved up 13 bits and scaled by 2^(127-15): normals rebias, subnormals
     * (m 2^-24) come out exact; exponent 31 (inf, NaN) maps to 255. */
    uint32_t em = (uint32_t)(h & 0x7fffu);
    float f = u2f(em << 13) * 0x1p112f;
    uint32_t u = em >= 0x7c00u ? (em << 13) | 0x7f800000u : f2u(f);
    return u2f(u | (uint32_t)(h & 0x8000u) << 16);
}

/* A binary float format narrower than fp32: mbits stored mantissa bits, emin the exponent of the
 * smallest normal, maxv the largest finite value, inf_sat: infinities saturate (no inf encoding). */
struct fmt {
    int mbits, emin;
    float maxv;
    int inf_sat;
};

static const struct fmt FMT_TF32 = {10, -126, 0x1.ffcp127f, 0};
static const struct fmt FMT_E4M3 = {3, -6, 448.0f, 1};
static const struct fmt FMT_E5M2 = {2, -14, 57344.0f, 0};

static float round_fmt(const struct fmt *f, float x)
{
    uint32_t u = f2u(x), a = u & 0x7fffffffu, sign = u & 0x80000000u;
    if (a > 0x7f800000u)
        return x;
    if (a == 0x7f800000u)
        return f->inf_sat ? copysignf(f->maxv, x) : x;
    uint32_t r;
    if (a < (uint32_t)(f->emin + 127) << 23) {
        /* subnormal in the target: quantum 2^(emin - mbits), the ulp of c = 2^(emin - mbits + 23) */
        float c = u2f((uint32_t)(f->emin - f->mbits + 23 + 127) << 23);
        r = f2u((u2f(a) + c) - c);
    } else {
        int s = 23 - f->mbits;
        r = a + (1u << (s - 1)) - 1u + ((a >> s) & 1u);
        r &= ~((1u << s) - 1u);
    }
    if (r > f2u(f->maxv))
        r = f2u(f->maxv);
    return u2f(sign | r);
}

/* Symmetric integer quantization of n values with one scale: s = max|x| / qmax, x -> s round(x / s). */
static void quant_int(const float *x, float *xq, int n, float qmax)
{
    float amax = 0;
    for (int i = 0; i < n; i++) {
        float v = fabsf(x[i]);
        amax = v > amax || isnan(v) ? v : amax;
    }
    if (amax == 0) {
        memset(xq, 0, (size_t)n * sizeof *xq);
        return;
    }
    float s = amax / qmax;
    for (int i = 0; i < n; i++) {
        float q = nearbyintf(x[i] / s); /* current rounding mode: to nearest, ties to even */
        q = q > qmax ? qmax : q < -qmax ? -qmax : q;
        xq[i] = q * s;
    }
}

void kern_quantize_fp8e5m2(long n, const float *x, float *xq)
{
    for (long i = 0; i < n; i++)
        xq[i] = round_fmt(&FMT_E5M2, x[i]);
}

void kern_quantize(enum prec p, int rows, int cols, int group, const float *x, float *xq)
{
    if (rows <= 0 || cols <= 0)
        return;
    long n = (long)rows * cols;
    switch (p) {
    case P_TF32:
        for (long i = 0; i < n; i++)
            xq[i] = round_fmt(&FMT_TF32, x[i]);
        break;
    case P_BF16:
        for (long i = 0; i < n; i++)
            xq[i] = kern_bf16_to_f32(kern_f32_to_bf16(x[i]));
        break;
    case P_FP16:
        for (long i = 0; i < n; i++)
            xq[i] = kern_f16_to_f32(kern_f32_to_f16(x[i]));
        break;
    case P_FP8:
        for (long i = 0; i < n; i++)
            xq[i] = round_fmt(&FMT_E4M3, x[i]);
        break;
    case P_INT8:
        for (int r = 0; r < rows; r++)
            quant_int(x + (size_t)r * cols, xq + (size_t)r * cols, cols, 127.0f);
        break;
    case P_INT4: {
        int gs = group <= 0 || group > cols ? cols : group;
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c += gs)
                quant_int(x + (size_t)r * cols + c, xq + (size_t)r * cols + c, cols - c < gs ? cols - c : gs,
                          7.0f);
        break;
    }
    default: /* P_FP64, P_FP32: already representable */
        if (xq != x)
            memmove(xq, x, (size_t)n * sizeof *xq);
        break;
    }
}

/* ---- GEMM relative error ---- */

/* splitmix64 (Steele, Lea and Flood, OOPSLA 2014): the generator state lives on the caller's stack. */
static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* n standard normal values by Box-Muller, two per pair of uniforms (u1 in (0, 1], u2 in [0, 1)). */
static void gaussian(uint64_t *s, float *out, long n, double sd)
{
    const double two_pi = 6.283185307179586476925;
    for (long i = 0; i < n; i += 2) {
        double u1 = 1.0 - (double)(splitmix64(s) >> 11) * 0x1p-53;
        double u2 = (double)(splitmix64(s) >> 11) * 0x1p-53;
        double r = sqrt(-2.0 * log(u1)) * sd;
        out[i] = (float)(r * cos(two_pi * u2));
        if (i + 1 < n)
            out[i + 1] = (float)(r * sin(two_pi * u2));
    }
}

/* Group length for int4 in the experiment (GPTQ/AWQ's usual 128). */
#define REL_INT4_GROUP 128

/* Rounds rows x cols (one row per scale group owner) to p. fp8 gets one per-tensor scale mapping
 * max|x| onto e4m3's 448, as fp8 inference recipes do; unscaled, the small weights (sd 1/sqrt(K))
 * would fall into e4m3's subnormals and measure its range instead of its 3-bit mantissa. */
static void quantize_operand(enum prec p, int rows, int cols, const float *x, float *xq)
{
    long n = (long)rows * cols;
    if (p != P_FP8) {
        kern_quantize(p, rows, cols, REL_INT4_GROUP, x, xq);
        return;
    }
    float amax = 0;
    for (long i = 0; i < n; i++)
        amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
    float s = amax > 0 ? 448.0f / amax : 1.0f;
    for (long i = 0; i < n; i++)
        xq[i] = x[i] * s;
    kern_quantize(P_FP8, rows, cols, 0, xq, xq);
    for (long i = 0; i < n; i++)
        xq[i] /= s;
}

double kern_gemm_rel_error(enum prec pw, enum prec pa, int M, int N, int K, unsigned long seed)
{
    if (M < 1 || N < 1 || K < 1)
        return -1;
    size_t na = (size_t)M * K, nb = (size_t)K * N;
    float *a = malloc(na * sizeof *a), *aq = malloc(na * sizeof *aq);
    float *b = malloc(nb * sizeof *b), *bt = malloc(nb * sizeof *bt), *btq = malloc(nb * sizeof *btq);
    double *err = malloc((size_t)M * sizeof *err), *ref = malloc((size_t)M * sizeof *ref);
    double result = -1;
    if (!a || !aq || !b || !bt || !btq || !err || !ref)
        goto out;
    uint64_t s = seed;
    gaussian(&s, a, (long)na, 1.0);
    gaussian(&s, b, (long)nb, 1.0 / sqrt((double)K)); /* B [K][N], row-major */
    for (int k = 0; k < K; k++) /* bt [N][K]: a row per output channel */
        for (int j = 0; j < N; j++)
            bt[(size_t)j * K + k] = b[(size_t)k * N + j];
    quantize_operand(pa, M, K, a, aq);
    quantize_operand(pw, N, K, bt, btq);
    /* Both products in fp64 (exact enough that only the quantization shows); per-row sums keep the
     * result independent of the thread count (the vectorized dot products may round differently on
     * another instruction set, far below any quantization error). */
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int i = 0; i < M; i++) {
        const float *ai = a + (size_t)i * K, *aqi = aq + (size_t)i * K;
        double e2 = 0, r2 = 0;
        for (int j = 0; j < N; j++) {
            const float *bj = bt + (size_t)j * K, *bqj = btq + (size_t)j * K;
            double c = 0, cq = 0;
#ifdef _OPENMP
#pragma omp simd reduction(+ : c, cq)
#endif
            for (int k = 0; k < K; k++) {
                c += (double)ai[k] * bj[k];
                cq += (double)aqi[k] * bqj[k];
            }
            e2 += (cq - c) * (cq - c);
            r2 += c * c;
        }
        err[i] = e2;
        ref[i] = r2;
    }
    double e2 = 0, r2 = 0;
    for (int i = 0; i < M; i++) {
        e2 += err[i];
        r2 += ref[i];
    }
    result = r2 > 0 ? sqrt(e2 / r2) : 0;
out:
    free(a);
    free(aq);
    free(b);
    free(bt);
    free(btq);
    free(err);
    free(ref);
    return result;
}
