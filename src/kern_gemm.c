/* kern_gemm.c -- cache-blocked GEMM (fp32, bf16, fp16, int8) with packed panels and register-tile
 * micro-kernels, after Goto and van de Geijn, "Anatomy of High-Performance Matrix Multiplication"
 * (ACM TOMS 34(3), 2008) and the BLIS loop structure (Van Zee and van de Geijn, ACM TOMS 41(3), 2015).
 *
 * Loops, outermost first (C is M x N row-major; vectors run along N):
 *   m0 by plan.mc    rows of A packed together into a shared buffer (L3 resident)
 *   k0 by plan.kc    one rank-kc update; A block packed cooperatively, then a barrier
 *   task             (N chunk of nb columns) x (share of the A micro-panels): the thread packs its
 *                    kc x nb slice of B into a private buffer (L2 resident)
 *   ip by plan.mr    one A micro-panel (mr x kc, stays in L1)
 *   jp by plan.nr    one B micro-panel (kc x nr, streamed from L2) -> micro-kernel on an mr x nr tile
 * Inputs narrower than the micro-kernel's type are widened while packing (bf16/fp16 -> fp32,
 * int8 -> int16 pairs, or biased bytes for AVX512-VNNI), so conversion costs O(MK + KN), not O(MNK).
 *
 * The micro-kernels for x86 use intrinsics inside functions compiled for AVX2+FMA or AVX-512 by
 * target attributes and are chosen at run time, so the project's plain -O2 build still runs them; the
 * generic ones are plain C with fixed-size tiles that any compiler vectorizes. */
#include "kern.h"
#include "kern_impl.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* "#pragma omp simd" vectorizes a loop at -O2 (whose cost model skips loops needing a remainder);
 * without OpenMP it is left out rather than warned about. */
#ifdef _OPENMP
#define KERN_SIMD _Pragma("omp simd")
#else
#define KERN_SIMD
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KERN_X86 1
#include <immintrin.h>
#endif

/* One rank-kc update of an m x n tile of C (m <= mr, n <= nr) from packed micro-panels; acc == 0
 * overwrites C, acc != 0 adds to it. kc counts K elements (a multiple of the plan's kstep). */
typedef void ukr_fn(int kc, const void *a, const void *b, void *c, long ldc, int m, int n, int acc);

struct gemm_plan {
    int mr, nr;   /* register tile */
    int kc;       /* K elements per packed panel, a multiple of kstep */
    int mc;       /* rows of A packed at once, a multiple of mr */
    int nc;       /* most columns of B per thread block */
    int kstep;    /* K elements interleaved per packed entry: 1, 2 for int16 pairs, 4 for byte quads */
    int psz;      /* bytes per packed element */
    int bextra;   /* bytes after each packed B micro-panel (the column sums of the u8 x s8 kernel) */
    enum { PK_FLOAT, PK_I16_PAIRS, PK_U8S8_QUADS } pack;
    ukr_fn *ukr;
};

static int imin(int a, int b) { return a < b ? a : b; }
static long ceil_div(long a, long b) { return (a + b - 1) / b; }
static long round_up(long a, long b) { return ceil_div(a, b) * b; }

static int kern_nthreads(int threads)
{
#ifdef _OPENMP
    return threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
    return 1;
#endif
}

static size_t dtype_size(enum kern_dtype t) { return t == KERN_F32 ? 4 : t == KERN_I8 ? 1 : 2; }

/* bf16 is the top half of an fp32. */
static inline float bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Branch-free binary16 -> fp32 (vectorizes): moving exponent and mantissa up 13 bits and multiplying
 * by 2^(127-15) rebiases normals and turns subnormals (m 2^-24) into exact fp32 values; exponent 31
 * (inf, NaN) is mapped to 255 instead. Same results as kern_f16_to_f32. */
static inline float f16_to_f32(uint16_t h)
{
    uint32_t em = (uint32_t)(h & 0x7fffu), u = em << 13;
    float f;
    memcpy(&f, &u, sizeof f);
    f *= 0x1p112f;
    memcpy(&u, &f, sizeof u);
    if (em >= 0x7c00u)
        u = (em << 13) | 0x7f800000u;
    u |= (uint32_t)(h & 0x8000u) << 16;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- packing ---- */

/* A rows x kl (at A, leading dimension lda) into micro-panels of mr rows: panel layout [k][mr],
 * rows past `rows` zero. Transposes 16 x mr blocks: each row is read a cache line at a time and the
 * strided writes stay inside one L1-resident block of the panel. */
static void pack_a_float(enum kern_dtype t, const void *A, long lda, int rows, int kl, int mr, float *dst)
{
    size_t esz = t == KERN_F32 ? 4 : 2;
    for (int ip = 0; ip < rows; ip += mr) {
        float *d = dst + (size_t)ip * kl;
        int mm = imin(mr, rows - ip);
        for (int p0 = 0; p0 < kl; p0 += 16) {
            int pl = imin(16, kl - p0);
            for (int i = 0; i < mm; i++) {
                const char *src = (const char *)A + ((size_t)(ip + i) * lda + p0) * esz;
                if (p0 + 32 < kl)
                    __builtin_prefetch(src + 32 * esz); /* this row's block after next */
                float *restrict di = d + (size_t)p0 * mr + i;
                if (t == KERN_F32)
                    for (int p = 0; p < pl; p++)
                        di[p * mr] = ((const float *)src)[p];
                else if (t == KERN_BF16)
                    for (int p = 0; p < pl; p++)
                        di[p * mr] = bf16_to_f32(((const uint16_t *)src)[p]);
                else
                    for (int p = 0; p < pl; p++)
                        di[p * mr] = f16_to_f32(((const uint16_t *)src)[p]);
            }
            for (int i = mm; i < mr; i++)
                for (int p = 0; p < pl; p++)
                    d[(size_t)(p0 + p) * mr + i] = 0;
        }
    }
}

/* B kl x cols into micro-panels of nr columns: panel layout [k][nr], columns past `cols` zero.
 * Walks B row by row (unit stride, prefetch friendly) and scatters each row over the panels. */
static void pack_b_float(enum kern_dtype t, const void *B, long ldb, int kl, int cols, int nr, float *dst)
{
    int npan = (int)ceil_div(cols, nr);
    for (int p = 0; p < kl; p++) {
        for (int q = 0; q < npan; q++) {
            int jp = q * nr, nn = imin(nr, cols - jp);
            float *restrict dp = dst + ((size_t)jp * kl + (size_t)p * nr);
            long r = (long)p * ldb + jp;
            if (t == KERN_F32) {
                const float *restrict s = (const float *)B + r;
                KERN_SIMD
                for (int j = 0; j < nn; j++)
                    dp[j] = s[j];
            } else if (t == KERN_BF16) {
                const uint16_t *restrict s = (const uint16_t *)B + r;
                KERN_SIMD
                for (int j = 0; j < nn; j++)
                    dp[j] = bf16_to_f32(s[j]);
            } else {
                const uint16_t *restrict s = (const uint16_t *)B + r;
                KERN_SIMD
                for (int j = 0; j < nn; j++)
                    dp[j] = f16_to_f32(s[j]);
            }
            for (int j = nn; j < nr; j++)
                dp[j] = 0;
        }
    }
}

/* int8 panels widened to int16 pairs along K, the operand shape of pmaddwd / vpdpwssd: A panel layout
 * [k/2][mr][2], B panel layout [k/2][nr][2]; klp = kl rounded up to even, padding zero. */
static void pack_a_i8(const int8_t *A, long lda, int rows, int kl, int mr, int16_t *dst)
{
    int klp = (int)round_up(kl, 2);
    for (int ip = 0; ip < rows; ip += mr) {
        int16_t *d = dst + (size_t)ip * klp;
        int mm = imin(mr, rows - ip);
        for (int i = 0; i < mr; i++) {
            const int8_t *s = A + (long)(ip + i) * lda;
            for (int p = 0; p < klp; p++)
                d[(size_t)(p >> 1) * mr * 2 + (size_t)i * 2 + (p & 1)] = (int16_t)(i < mm && p < kl ? s[p] : 0);
        }
    }
}

static void pack_b_i8(const int8_t *B, long ldb, int kl, int cols, int nr, int16_t *dst)
{
    int klp = (int)round_up(kl, 2), npan = (int)ceil_div(cols, nr);
    for (int p = 0; p < klp; p += 2) { /* two rows of B at a time, each read with unit stride */
        const int8_t *s0 = B + (long)p * ldb, *s1 = s0 + ldb;
        int has1 = p + 1 < kl;
        for (int q = 0; q < npan; q++) {
            int jp = q * nr, nn = imin(nr, cols - jp);
            int16_t *restrict dp = dst + (size_t)jp * klp + (size_t)(p >> 1) * nr * 2;
            for (int j = 0; j < nn; j++) {
                dp[2 * j] = s0[jp + j];
                dp[2 * j + 1] = (int16_t)(has1 ? s1[jp + j] : 0);
            }
            for (int j = nn; j < nr; j++)
                dp[2 * j] = dp[2 * j + 1] = 0;
        }
    }
}

/* int8 for vpdpbusd, which multiplies unsigned by signed bytes four at a time: A is stored biased,
 * a + 128 (= a xor 0x80), panel layout [k/4][mr][4]; B as is, panel layout [k/4][nr][4], followed by
 * the nr column sums of the panel (int32), which the kernel uses to remove the bias:
 * sum (a + 128) b = sum a b + 128 sum b. klp = kl rounded up to 4; padding is a = 0, b = 0. */
static void pack_a_u8s8(const int8_t *A, long lda, int rows, int kl, int mr, uint8_t *dst)
{
    int klp = (int)round_up(kl, 4);
    for (int ip = 0; ip < rows; ip += mr) {
        uint8_t *d = dst + (size_t)ip * klp;
        int mm = imin(mr, rows - ip);
        for (int i = 0; i < mr; i++) {
            const int8_t *src = A + (long)(ip + (i < mm ? i : 0)) * lda;
            for (int p = 0; p < klp; p++)
                d[(size_t)(p >> 2) * mr * 4 + (size_t)i * 4 + (p & 3)] =
                    (uint8_t)((i < mm && p < kl ? (uint8_t)src[p] : 0) ^ 0x80u);
        }
    }
}

static void pack_b_u8s8(const int8_t *B, long ldb, int kl, int cols, int nr, int8_t *dst)
{
    int klp = (int)round_up(kl, 4), npan = (int)ceil_div(cols, nr);
    size_t pan = (size_t)nr * klp + (size_t)nr * sizeof(int32_t);
    for (int q = 0; q < npan; q++) {
        int jp = q * nr, nn = imin(nr, cols - jp);
        int8_t *d = dst + q * pan;
        int32_t sum[64] = {0}; /* nr <= 64 */
        for (int p = 0; p < klp; p++) {
            const int8_t *srow = B + (long)p * ldb + jp;
            int8_t *dp = d + (size_t)(p >> 2) * nr * 4 + (p & 3);
            for (int j = 0; j < nr; j++) {
                int8_t v = p < kl && j < nn ? srow[j] : 0;
                dp[j * 4] = v;
                sum[j] += v;
            }
        }
        memcpy(d + (size_t)nr * klp, sum, (size_t)nr * sizeof(int32_t));
    }
}

/* ---- tile write-back for partial tiles (t is mr x nr with row stride tn) ---- */

static void tile_out_f32(const float *t, int tn, float *c, long ldc, int m, int n, int acc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            c[(long)i * ldc + j] = acc ? c[(long)i * ldc + j] + t[i * tn + j] : t[i * tn + j];
}

static void tile_out_i32(const int32_t *t, int tn, int32_t *c, long ldc, int m, int n, int acc)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            c[(long)i * ldc + j] = acc ? c[(long)i * ldc + j] + t[i * tn + j] : t[i * tn + j];
}

/* ---- generic micro-kernels: portable C. The fp32 one holds its 6 x 16 tile in six 16-float
 * vectors (GCC/clang vector extensions: 4 NEON or SSE registers each, 24 of aarch64's 32), the int8
 * one relies on the compiler vectorizing its unit-stride, constant-trip j loop ---- */

enum { G_MR = 6, G_NR = 16 };

typedef float gv16 __attribute__((vector_size(64), aligned(4))); /* aligned(4): any float address */

static void ukr_f32_generic(int kc, const void *ap, const void *bp, void *cp, long ldc, int m, int n, int acc)
{
    const float *a = ap, *b = bp;
    gv16 t0 = {0}, t1 = {0}, t2 = {0}, t3 = {0}, t4 = {0}, t5 = {0};
    for (int p = 0; p < kc; p++, a += G_MR, b += G_NR) {
        gv16 bv = *(const gv16 *)(const void *)b; /* a vector type may alias its element type */
        t0 += a[0] * bv;
        t1 += a[1] * bv;
        t2 += a[2] * bv;
        t3 += a[3] * bv;
        t4 += a[4] * bv;
        t5 += a[5] * bv;
    }
    float t[G_MR][G_NR];
    memcpy(t[0], &t0, sizeof t0);
    memcpy(t[1], &t1, sizeof t1);
    memcpy(t[2], &t2, sizeof t2);
    memcpy(t[3], &t3, sizeof t3);
    memcpy(t[4], &t4, sizeof t4);
    memcpy(t[5], &t5, sizeof t5);
    tile_out_f32(&t[0][0], G_NR, cp, ldc, m, n, acc);
}

static void ukr_i8_generic(int kc, const void *ap, const void *bp, void *cp, long ldc, int m, int n, int acc)
{
    const int16_t *restrict a = ap, *restrict b = bp;
    int32_t t[G_MR][G_NR];
    memset(t, 0, sizeof t);
    for (int p = 0; p < kc; p += 2, a += 2 * G_MR, b += 2 * G_NR)
        for (int i = 0; i < G_MR; i++) {
            int32_t a0 = a[2 * i], a1 = a[2 * i + 1];
            for (int j = 0; j < G_NR; j++)
                t[i][j] += a0 * b[2 * j] + a1 * b[2 * j + 1];
        }
    tile_out_i32(&t[0][0], G_NR, cp, ldc, m, n, acc);
}

#ifdef KERN_X86
/* ---- AVX2 + FMA: 6 x 16 fp32 tile = 12 ymm accumulators ---- */

enum { A2_MR = 6, A2_NR = 16 };

__attribute__((target("avx2,fma"))) static void ukr_f32_avx2(int kc, const void *ap, const void *bp, void *cp,
                                                             long ldc, int m, int n, int acc)
{
    const float *a = ap, *b = bp;
    float *c = cp;
    __m256 r[A2_MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < A2_MR; i++)
        r[i][0] = r[i][1] = _mm256_setzero_ps();
#pragma GCC unroll 2
    for (int p = 0; p < kc; p++, a += A2_MR, b += A2_NR) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 8
        for (int i = 0; i < A2_MR; i++) {
            __m256 ai = _mm256_broadcast_ss(a + i);
            r[i][0] = _mm256_fmadd_ps(ai, b0, r[i][0]);
            r[i][1] = _mm256_fmadd_ps(ai, b1, r[i][1]);
        }
    }
    if (m == A2_MR && n == A2_NR) {
#pragma GCC unroll 8
        for (int i = 0; i < A2_MR; i++) {
            float *ci = c + (long)i * ldc;
            if (acc) {
                r[i][0] = _mm256_add_ps(r[i][0], _mm256_loadu_ps(ci));
                r[i][1] = _mm256_add_ps(r[i][1], _mm256_loadu_ps(ci + 8));
            }
            _mm256_storeu_ps(ci, r[i][0]);
            _mm256_storeu_ps(ci + 8, r[i][1]);
        }
        return;
    }
    float t[A2_MR * A2_NR];
    for (int i = 0; i < A2_MR; i++) {
        _mm256_storeu_ps(t + i * A2_NR, r[i][0]);
        _mm256_storeu_ps(t + i * A2_NR + 8, r[i][1]);
    }
    tile_out_f32(t, A2_NR, c, ldc, m, n, acc);
}

/* int8 as int16 pairs: vpmaddwd multiplies 16 pairs and adds each pair into an int32 lane; a pair
 * sum is at most 2 * 128^2 = 2^15, so it cannot overflow. */
__attribute__((target("avx2"))) static void ukr_i8_avx2(int kc, const void *ap, const void *bp, void *cp, long ldc,
                                                        int m, int n, int acc)
{
    const int16_t *a = ap, *b = bp;
    int32_t *c = cp;
    __m256i r[A2_MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < A2_MR; i++)
        r[i][0] = r[i][1] = _mm256_setzero_si256();
    for (int p = 0; p < kc; p += 2, a += 2 * A2_MR, b += 2 * A2_NR) {
        __m256i b0 = _mm256_load_si256((const __m256i *)b), b1 = _mm256_load_si256((const __m256i *)(b + 16));
#pragma GCC unroll 8
        for (int i = 0; i < A2_MR; i++) {
            int32_t pair;
            memcpy(&pair, a + 2 * i, sizeof pair);
            __m256i ai = _mm256_set1_epi32(pair);
            r[i][0] = _mm256_add_epi32(r[i][0], _mm256_madd_epi16(ai, b0));
            r[i][1] = _mm256_add_epi32(r[i][1], _mm256_madd_epi16(ai, b1));
        }
    }
    int32_t t[A2_MR * A2_NR];
    for (int i = 0; i < A2_MR; i++) {
        _mm256_storeu_si256((__m256i *)(t + i * A2_NR), r[i][0]);
        _mm256_storeu_si256((__m256i *)(t + i * A2_NR + 8), r[i][1]);
    }
    tile_out_i32(t, A2_NR, c, ldc, m, n, acc);
}

/* ---- AVX-512: 12 x 32 fp32 tile = 24 zmm accumulators, two B vectors and a broadcast: 27 of 32
 * registers. Per k: 2 vector loads + 12 broadcasts feed 24 FMAs (12 cycles on two FMA ports). ---- */

enum { A5_MR = 12, A5_NR = 32 };

static inline __attribute__((target("avx512f"))) __mmask16 mask16(int n)
{
    return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

__attribute__((target("avx512f"))) static void ukr_f32_avx512(int kc, const void *ap, const void *bp, void *cp,
                                                              long ldc, int m, int n, int acc)
{
    const float *a = ap, *b = bp;
    float *c = cp;
    __m512 r[A5_MR][2];
#pragma GCC unroll 16
    for (int i = 0; i < A5_MR; i++)
        r[i][0] = r[i][1] = _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int p = 0; p < kc; p++, a += A5_MR, b += A5_NR) {
        __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
#pragma GCC unroll 16
        for (int i = 0; i < A5_MR; i++) {
            __m512 ai = _mm512_set1_ps(a[i]);
            r[i][0] = _mm512_fmadd_ps(ai, b0, r[i][0]);
            r[i][1] = _mm512_fmadd_ps(ai, b1, r[i][1]);
        }
    }
    __mmask16 k0 = mask16(n), k1 = mask16(n - 16);
#pragma GCC unroll 16
    for (int i = 0; i < A5_MR; i++) {
        if (i >= m)
            break;
        float *ci = c + (long)i * ldc;
        if (acc) {
            r[i][0] = _mm512_add_ps(r[i][0], _mm512_maskz_loadu_ps(k0, ci));
            r[i][1] = _mm512_add_ps(r[i][1], _mm512_maskz_loadu_ps(k1, ci + 16));
        }
        _mm512_mask_storeu_ps(ci, k0, r[i][0]);
        _mm512_mask_storeu_ps(ci + 16, k1, r[i][1]);
    }
}

/* int8 on AVX-512BW without VNNI: 12 x 32 int32 tile, vpmaddwd + vpaddd per pair of K. */
__attribute__((target("avx512f,avx512bw"))) static void ukr_i8_avx512bw(int kc, const void *ap, const void *bp,
                                                                       void *cp, long ldc, int m, int n, int acc)
{
    const int16_t *a = ap, *b = bp;
    int32_t *c = cp;
    __m512i r[A5_MR][2];
#pragma GCC unroll 16
    for (int i = 0; i < A5_MR; i++)
        r[i][0] = r[i][1] = _mm512_setzero_si512();
    for (int p = 0; p < kc; p += 2, a += 2 * A5_MR, b += 2 * A5_NR) {
        __m512i b0 = _mm512_load_si512(b), b1 = _mm512_load_si512(b + 32);
#pragma GCC unroll 16
        for (int i = 0; i < A5_MR; i++) {
            int32_t pair;
            memcpy(&pair, a + 2 * i, sizeof pair);
            __m512i ai = _mm512_set1_epi32(pair);
            r[i][0] = _mm512_add_epi32(r[i][0], _mm512_madd_epi16(ai, b0));
            r[i][1] = _mm512_add_epi32(r[i][1], _mm512_madd_epi16(ai, b1));
        }
    }
    __mmask16 k0 = mask16(n), k1 = mask16(n - 16);
    for (int i = 0; i < m; i++) {
        int32_t *ci = c + (long)i * ldc;
        if (acc) {
            r[i][0] = _mm512_add_epi32(r[i][0], _mm512_maskz_loadu_epi32(k0, ci));
            r[i][1] = _mm512_add_epi32(r[i][1], _mm512_maskz_loadu_epi32(k1, ci + 16));
        }
        _mm512_mask_storeu_epi32(ci, k0, r[i][0]);
        _mm512_mask_storeu_epi32(ci + 16, k1, r[i][1]);
    }
}

/* int8 on AVX512-VNNI with vpdpbusd: 64 multiply-adds per instruction, twice vpdpwssd. A arrives
 * biased by +128 (unsigned), so the kernel subtracts 128 times the column sums stored after the B
 * panel. The sums wrap modulo 2^32 like the hardware adds, so the result is exact whenever the true
 * one fits in int32. */
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void ukr_u8s8_avx512vnni(int kc, const void *ap,
                                                                                       const void *bp, void *cp,
                                                                                       long ldc, int m, int n, int acc)
{
    const uint8_t *a = ap;
    const int8_t *b = bp;
    int32_t *c = cp;
    __m512i r[A5_MR][2];
#pragma GCC unroll 16
    for (int i = 0; i < A5_MR; i++)
        r[i][0] = r[i][1] = _mm512_setzero_si512();
    for (int p = 0; p < kc; p += 4, a += 4 * A5_MR, b += 4 * A5_NR) {
        __m512i b0 = _mm512_load_si512(b), b1 = _mm512_load_si512(b + 64);
#pragma GCC unroll 16
        for (int i = 0; i < A5_MR; i++) {
            int32_t quad;
            memcpy(&quad, a + 4 * i, sizeof quad);
            __m512i ai = _mm512_set1_epi32(quad);
            r[i][0] = _mm512_dpbusd_epi32(r[i][0], ai, b0);
            r[i][1] = _mm512_dpbusd_epi32(r[i][1], ai, b1);
        }
    }
    /* b now points at the column sums */
    __m512i s0 = _mm512_slli_epi32(_mm512_loadu_si512(b), 7), s1 = _mm512_slli_epi32(_mm512_loadu_si512(b + 64), 7);
    __mmask16 k0 = mask16(n), k1 = mask16(n - 16);
    for (int i = 0; i < m; i++) {
        int32_t *ci = c + (long)i * ldc;
        __m512i v0 = _mm512_sub_epi32(r[i][0], s0), v1 = _mm512_sub_epi32(r[i][1], s1);
        if (acc) {
            v0 = _mm512_add_epi32(v0, _mm512_maskz_loadu_epi32(k0, ci));
            v1 = _mm512_add_epi32(v1, _mm512_maskz_loadu_epi32(k1, ci + 16));
        }
        _mm512_mask_storeu_epi32(ci, k0, v0);
        _mm512_mask_storeu_epi32(ci + 16, k1, v1);
    }
}
#endif

/* ---- plans: blocking per micro-kernel. An mr x kc A micro-panel fits a 32-48 KiB L1 next to the
 * kc x nr B micro-panel streaming through; a kc x nc B block fits a 1-2 MiB L2; mc rows of A (a few
 * MiB) sit in L3. int8 plans take twice the kc since a packed int16 is half an fp32. Tuned on a
 * Xeon (Sapphire/Emerald Rapids: 48 KiB L1d, 2 MiB L2 per core). ---- */

static const struct gemm_plan plan_f32_generic = {G_MR, G_NR, 256, 510, 1024, 1, 4, 0, PK_FLOAT, ukr_f32_generic};
static const struct gemm_plan plan_i8_generic = {G_MR, G_NR, 512, 510, 1024, 2, 2, 0, PK_I16_PAIRS, ukr_i8_generic};
#ifdef KERN_X86
static const struct gemm_plan plan_f32_avx2 = {A2_MR, A2_NR, 256, 2040, 1024, 1, 4, 0, PK_FLOAT, ukr_f32_avx2};
static const struct gemm_plan plan_i8_avx2 = {A2_MR, A2_NR, 512, 2040, 1024, 2, 2, 0, PK_I16_PAIRS, ukr_i8_avx2};
static const struct gemm_plan plan_f32_avx512 = {A5_MR, A5_NR, 384, 2040, 768, 1, 4, 0, PK_FLOAT, ukr_f32_avx512};
static const struct gemm_plan plan_i8_avx512bw = {A5_MR, A5_NR, 768, 2040, 768, 2, 2, 0, PK_I16_PAIRS, ukr_i8_avx512bw};
static const struct gemm_plan plan_i8_avx512vnni = {A5_MR, A5_NR, 1536, 2040, 768, 4, 1, 4 * A5_NR, PK_U8S8_QUADS,
                                                     ukr_u8s8_avx512vnni};
#endif

enum kern_isa kern_isa_best(void)
{
#ifdef KERN_X86
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
        if (__builtin_cpu_supports("avx512vnni"))
            return KERN_ISA_AVX512_VNNI;
        return KERN_ISA_AVX512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return KERN_ISA_AVX2;
#endif
    return KERN_ISA_GENERIC;
}

const char *kern_isa_name(enum kern_isa isa)
{
    static const char *const names[] = {"auto", "generic", "avx2", "avx512", "avx512-vnni"};
    return (unsigned)isa < sizeof names / sizeof names[0] ? names[isa] : "unknown";
}

static const struct gemm_plan *plan_for(enum kern_dtype t, enum kern_isa want)
{
    enum kern_isa best = kern_isa_best(), isa = want == KERN_ISA_AUTO || want > best ? best : want;
#ifdef KERN_X86
    if (isa == KERN_ISA_AVX512_VNNI)
        return t == KERN_I8 ? &plan_i8_avx512vnni : &plan_f32_avx512;
    if (isa == KERN_ISA_AVX512)
        return t == KERN_I8 ? &plan_i8_avx512bw : &plan_f32_avx512;
    if (isa == KERN_ISA_AVX2)
        return t == KERN_I8 ? &plan_i8_avx2 : &plan_f32_avx2;
#else
    (void)isa;
#endif
    return t == KERN_I8 ? &plan_i8_generic : &plan_f32_generic;
}

/* ---- drivers ---- */

static float load_float(enum kern_dtype t, const void *p, long i)
{
    switch (t) {
    case KERN_BF16: return bf16_to_f32(((const uint16_t *)p)[i]);
    case KERN_F16: return f16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

/* Direct triple loop, used only when the packing buffers cannot be allocated. */
static void gemm_direct(enum kern_dtype t, int M, int N, int K, const void *A, long lda, const void *B, long ldb,
                        void *C, long ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            if (t == KERN_I8) {
                int32_t s = 0;
                for (int p = 0; p < K; p++)
                    s += (int32_t)((const int8_t *)A)[(long)i * lda + p] * ((const int8_t *)B)[(long)p * ldb + j];
                ((int32_t *)C)[(long)i * ldc + j] = s;
            } else {
                float s = 0;
                for (int p = 0; p < K; p++)
                    s += load_float(t, A, (long)i * lda + p) * load_float(t, B, (long)p * ldb + j);
                ((float *)C)[(long)i * ldc + j] = s;
            }
        }
}

static void *alloc64(size_t bytes)
{
    return aligned_alloc(64, (size_t)round_up((long)(bytes ? bytes : 1), 64));
}

/* Below this many multiply-adds a parallel region costs about what it saves (2 cores of a KVM guest:
 * 64^3 took 10.6 us on one thread and 23.5 us on two; 96^3 broke even; 128^3 52 us against 72). The
 * same grain as convolution and attention here, and as the CPU model's (MODEL_GRAIN_MACS). */
#define GEMM_PAR_MIN_MACS (1L << 19)

/* fp32 with few rows of A (decode steps, small batches): packing B would stream it from memory in
 * row pieces and write it out again, for at most a few uses per panel. Instead each thread takes
 * 64-column strips of B and, for every group of up to 4 rows of A, keeps the 4 x 64 sums in 16
 * vector registers while it walks down the strip, K in passes of SK_KB rows: B is read from memory
 * once. Measured on 2 cores (AVX-512), N = K = 4096: M=1 1.4 ms (packed-free GEMV before: 2.3),
 * M=8 3.2-7 ms (packed 7.0), M=16 4.4-6.2 ms (packed 8.1-9.1), M=32 7.3 ms (packed 10.1); at
 * N = K = 1024 the packed kernel wins from M=48 (0.69 against 1.02 ms), hence the limit of 32. */
#define SKINNY_MAX_M 32
#define SK_NB 64

/* Fully unrolled row loops let the compiler keep acc in registers (indexed by a variable it is memory). */
#if defined(__GNUC__) && !defined(__clang__)
#define SK_UNROLL _Pragma("GCC unroll 4")
#elif defined(__clang__)
#define SK_UNROLL _Pragma("unroll")
#else
#define SK_UNROLL
#endif
#define SKINNY_KERNEL(R)                                                                                       \
    KERN_CLONES static void skinny_r##R(int K, const float *A, long lda, const float *B, long ldb, float *C,  \
                                        long ldc, int add, const float *next)                                  \
    {                                                                                                          \
        gv16 acc[R][4];                                                                                        \
        SK_UNROLL for (int r = 0; r < R; r++)                                                                  \
            if (add)                                                                                           \
                memcpy(acc[r], C + (long)r * ldc, sizeof acc[r]);                                              \
            else                                                                                               \
                acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = (gv16){0};                                     \
        for (int p = 0; p < K; p++) {                                                                          \
            const gv16 *b = (const gv16 *)(const void *)(B + (long)p * ldb);                                   \
            if (next) {                                                                                        \
                const char *f = (const char *)(next + (long)p * ldb);                                          \
                __builtin_prefetch(f);                                                                         \
                __builtin_prefetch(f + 64);                                                                    \
                __builtin_prefetch(f + 128);                                                                   \
                __builtin_prefetch(f + 192);                                                                   \
            }                                                                                                  \
            gv16 b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];                                                   \
            SK_UNROLL for (int r = 0; r < R; r++) {                                                            \
                float a = A[(long)r * lda + p];                                                                \
                acc[r][0] += a * b0;                                                                           \
                acc[r][1] += a * b1;                                                                           \
                acc[r][2] += a * b2;                                                                           \
                acc[r][3] += a * b3;                                                                           \
            }                                                                                                  \
        }                                                                                                      \
        SK_UNROLL for (int r = 0; r < R; r++)                                                                  \
            memcpy(C + (long)r * ldc, acc[r], sizeof acc[r]);                                                  \
    }
SKINNY_KERNEL(1)
SKINNY_KERNEL(2)
SKINNY_KERNEL(3)
SKINNY_KERNEL(4)

/* The last N % 64 columns: sums in L1, one pass over those columns of B. */
KERN_CLONES static void skinny_tail(int M, int K, int nl, const float *A, long lda, const float *B, long ldb, float *C,
                                    long ldc, int add)
{
    float acc[SKINNY_MAX_M][SK_NB];
    for (int i = 0; i < M; i++)
        for (int j = 0; j < nl; j++)
            acc[i][j] = add ? C[(long)i * ldc + j] : 0;
    for (int p = 0; p < K; p++) {
        const float *b = B + (long)p * ldb;
        for (int i = 0; i < M; i++) {
            float a = A[(long)i * lda + p], *r = acc[i];
            KERN_SIMD
            for (int j = 0; j < nl; j++)
                r[j] += a * b[j];
        }
    }
    for (int i = 0; i < M; i++)
        memcpy(C + (long)i * ldc, acc[i], (size_t)nl * sizeof(float));
}

/* Rows of B taken per pass: a thread's KB rows stream from memory as long contiguous pieces, and one
 * strip's KB x 64 block (32 KiB) stays in L1 for every row group. A strip reads 256 bytes from each of
 * KB rows a whole row of B apart, a pattern the hardware prefetchers do not follow, so with more than
 * one row group (enough arithmetic per row to hide the requests) the first group prefetches the next
 * strip row by row. Best of 3 on 2 cores, N = K = 4096: M=8 3.8-7.8 -> 2.3-4.4 ms, M=32 9.7-12.7 ->
 * 5.5-7.8 ms; N = K = 2048, M=16: 0.85-1.36 -> 0.72-0.91 ms. M=1 gained nothing (bandwidth-bound). */
#define SK_KB 128

static void skinny_strip(int M, int K0, int kl, int nl, const float *A, long lda, const float *B, long ldb, float *C,
                         long ldc, const float *next)
{
    const float *a0 = A + K0, *b0 = B + (long)K0 * ldb;
    if (nl < SK_NB) {
        skinny_tail(M, kl, nl, a0, lda, b0, ldb, C, ldc, K0 > 0);
        return;
    }
    for (int i0 = 0; i0 < M; i0 += 4) {
        const float *a = a0 + (long)i0 * lda;
        float *c = C + (long)i0 * ldc;
        const float *nx = i0 == 0 && next ? next + (long)K0 * ldb : NULL;
        switch (imin(4, M - i0)) {
        case 1: skinny_r1(kl, a, lda, b0, ldb, c, ldc, K0 > 0, nx); break;
        case 2: skinny_r2(kl, a, lda, b0, ldb, c, ldc, K0 > 0, nx); break;
        case 3: skinny_r3(kl, a, lda, b0, ldb, c, ldc, K0 > 0, nx); break;
        default: skinny_r4(kl, a, lda, b0, ldb, c, ldc, K0 > 0, nx); break;
        }
    }
}

static void gemm_skinny_f32(int M, int N, int K, const float *A, long lda, const float *B, long ldb, float *C, long ldc,
                            int nt)
{
    long nstrip = ceil_div(N, SK_NB);
    if (nt > nstrip)
        nt = (int)nstrip;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
    {
#ifdef _OPENMP
        int tid = omp_get_thread_num(), T = omp_get_num_threads();
#else
        int tid = 0, T = 1;
#endif
        long s0 = nstrip * tid / T, s1 = nstrip * (tid + 1) / T; /* this thread's strips */
        for (int k0 = 0; k0 < K; k0 += SK_KB)
            for (long st = s0; st < s1; st++) {
                long j0 = st * SK_NB;
                skinny_strip(M, k0, imin(SK_KB, K - k0), (int)(N - j0 < SK_NB ? N - j0 : SK_NB), A, lda, B + j0, ldb,
                             C + j0, ldc, M > 4 && st + 1 < s1 && N - j0 >= 2 * SK_NB ? B + j0 + SK_NB : NULL);
            }
    }
}

void kern_gemm_ex(enum kern_dtype type, enum kern_isa isa, int M, int N, int K, const void *A, long lda,
                  const void *B, long ldb, void *C, long ldc, int threads)
{
    if (M <= 0 || N <= 0)
        return;
    if (K <= 0) {
        for (int i = 0; i < M; i++)
            memset((char *)C + (size_t)i * ldc * 4, 0, (size_t)N * 4);
        return;
    }
    const struct gemm_plan *pl = plan_for(type, isa);
    const size_t esz = dtype_size(type);
    int nt = kern_nthreads(threads);
    if ((double)M * N * K < GEMM_PAR_MIN_MACS)
        nt = 1;
    if (type == KERN_F32 && M <= SKINNY_MAX_M) {
        gemm_skinny_f32(M, N, K, (const float *)A, lda, (const float *)B, ldb, (float *)C, ldc, nt);
        return;
    }

    /* Block sizes for this problem: K and M split evenly into blocks of at most pl->kc and pl->mc (no
     * thin last block); N split evenly into a multiple of nt chunks of at most pl->nc columns, so
     * that static scheduling keeps the threads equally busy. */
    int kc = (int)round_up(ceil_div(K, ceil_div(K, pl->kc)), pl->kstep);
    int mc = (int)round_up(ceil_div(M, ceil_div(M, pl->mc)), pl->mr);
    long nchunks = nt * ceil_div(N, (long)nt * pl->nc);
    int nb = (int)round_up(ceil_div(N, nchunks), pl->nr);
    int tasks_n = (int)ceil_div(N, nb);
    int msplit = tasks_n >= nt ? 1 : (int)ceil_div(nt, tasks_n); /* few N chunks: also split M */
    /* bytes of one packed B micro-panel at the full kc, and of one thread's B block (64-aligned) */
    size_t bpanel_max = (size_t)pl->nr * kc * pl->psz + (size_t)pl->bextra;
    size_t abytes = (size_t)mc * kc * pl->psz;
    size_t bbytes = (size_t)round_up((long)(ceil_div(nb, pl->nr) * bpanel_max), 64);
    char *apack = alloc64(abytes), *bpack = alloc64(bbytes * nt);
    if (!apack || !bpack) {
        free(apack);
        free(bpack);
        gemm_direct(type, M, N, K, A, lda, B, ldb, C, ldc);
        return;
    }

#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
    {
#ifdef _OPENMP
        char *bp = bpack + bbytes * (size_t)omp_get_thread_num();
#else
        char *bp = bpack;
#endif
        for (int m0 = 0; m0 < M; m0 += mc) {
            int ml = imin(mc, M - m0), npan = (int)ceil_div(ml, pl->mr);
            for (int k0 = 0; k0 < K; k0 += kc) {
                int kl = imin(kc, K - k0), klp = (int)round_up(kl, pl->kstep);
                const char *a0 = (const char *)A + ((size_t)m0 * lda + k0) * esz;
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
                for (int ip = 0; ip < npan; ip++) {
                    int rows = imin(pl->mr, ml - ip * pl->mr);
                    const char *ai = a0 + (size_t)ip * pl->mr * lda * esz;
                    char *d = apack + (size_t)ip * pl->mr * klp * pl->psz;
                    if (pl->pack == PK_I16_PAIRS)
                        pack_a_i8((const int8_t *)ai, lda, rows, kl, pl->mr, (int16_t *)d);
                    else if (pl->pack == PK_U8S8_QUADS)
                        pack_a_u8s8((const int8_t *)ai, lda, rows, kl, pl->mr, (uint8_t *)d);
                    else
                        pack_a_float(type, ai, lda, rows, kl, pl->mr, (float *)d);
                }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
                for (int task = 0; task < tasks_n * msplit; task++) {
                    int n0 = (task / msplit) * nb, nl = imin(nb, N - n0), part = task % msplit;
                    int ip0 = (int)((long)npan * part / msplit), ip1 = (int)((long)npan * (part + 1) / msplit);
                    if (ip0 >= ip1)
                        continue;
                    const char *b0 = (const char *)B + ((size_t)k0 * ldb + n0) * esz;
                    if (pl->pack == PK_I16_PAIRS)
                        pack_b_i8((const int8_t *)b0, ldb, kl, nl, pl->nr, (int16_t *)bp);
                    else if (pl->pack == PK_U8S8_QUADS)
                        pack_b_u8s8((const int8_t *)b0, ldb, kl, nl, pl->nr, (int8_t *)bp);
                    else
                        pack_b_float(type, b0, ldb, kl, nl, pl->nr, (float *)bp);
                    size_t bpanel = (size_t)pl->nr * klp * pl->psz + (size_t)pl->bextra;
                    for (int ip = ip0; ip < ip1; ip++) {
                        int i0 = ip * pl->mr, rows = imin(pl->mr, ml - i0);
                        const char *pa = apack + (size_t)i0 * klp * pl->psz;
                        char *c = (char *)C + ((size_t)(m0 + i0) * ldc + n0) * 4;
                        for (int jp = 0; jp < nl; jp += pl->nr)
                            pl->ukr(klp, pa, bp + (size_t)(jp / pl->nr) * bpanel, c + (size_t)jp * 4, ldc, rows,
                                    imin(pl->nr, nl - jp), k0 > 0);
                    }
                }
            }
        }
    }
    free(apack);
    free(bpack);
}

void kern_gemm_f32(int M, int N, int K, const float *A, const float *B, float *C, int threads)
{
    kern_gemm_ex(KERN_F32, KERN_ISA_AUTO, M, N, K, A, K, B, N, C, N, threads);
}

void kern_gemm_bf16(int M, int N, int K, const uint16_t *A, const uint16_t *B, float *C, int threads)
{
    kern_gemm_ex(KERN_BF16, KERN_ISA_AUTO, M, N, K, A, K, B, N, C, N, threads);
}

void kern_gemm_f16(int M, int N, int K, const uint16_t *A, const uint16_t *B, float *C, int threads)
{
    kern_gemm_ex(KERN_F16, KERN_ISA_AUTO, M, N, K, A, K, B, N, C, N, threads);
}

void kern_gemm_i8(int M, int N, int K, const int8_t *A, const int8_t *B, int32_t *C, int threads)
{
    kern_gemm_ex(KERN_I8, KERN_ISA_AUTO, M, N, K, A, K, B, N, C, N, threads);
}
