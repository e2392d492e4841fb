/* kern.h -- native kernels (GEMM, conv, attention, norms, activations, STREAM, precision emulation)
 * that dse times on the host to calibrate its device models; timing is the caller's job.
 * Tensors are dense, row-major, caller-owned; sizes count elements. Thread-safe, no global state;
 * `threads` <= 0 means all OpenMP threads. Scratch is allocated inside; when that fails a slower
 * direct loop runs instead, so kernels never fail and return nothing. */
#ifndef DSE_KERN_H
#define DSE_KERN_H

#include <stdint.h>

#include "prec.h"

/* ---- GEMM: C[M,N] = A[M,K] B[K,N] (C is overwritten; K == 0 gives C = 0) ---- */

void kern_gemm_f32(int M, int N, int K, const float *A, const float *B, float *C, int threads);
/* bf16 / IEEE fp16 inputs (raw bits), converted to fp32 while packing; fp32 accumulation. */
void kern_gemm_bf16(int M, int N, int K, const uint16_t *A, const uint16_t *B, float *C, int threads);
void kern_gemm_f16(int M, int N, int K, const uint16_t *A, const uint16_t *B, float *C, int threads);
/* int8 inputs, exact int32 accumulation (no overflow possible for K < 2^17 = 2^31 / 128^2). */
void kern_gemm_i8(int M, int N, int K, const int8_t *A, const int8_t *B, int32_t *C, int threads);

enum kern_dtype { KERN_F32, KERN_BF16, KERN_F16, KERN_I8 };
/* Instruction-set level of the GEMM micro-kernels, in increasing order: GENERIC (portable C, any
 * CPU), AVX2 (with FMA), AVX512 (F and BW), AVX512_VNNI (same fp32 kernels; int8 by vpdpbusd).
 * AUTO picks the best the CPU supports; asking for a level the CPU (or the build's architecture)
 * lacks gives the best one below it. */
enum kern_isa { KERN_ISA_AUTO, KERN_ISA_GENERIC, KERN_ISA_AVX2, KERN_ISA_AVX512, KERN_ISA_AVX512_VNNI };

/* The level AUTO resolves to on this CPU, and its name ("generic", "avx2", "avx512", "avx512-vnni"):
 * record it with every timing, since the same build runs different code on different machines. */
enum kern_isa kern_isa_best(void);
const char *kern_isa_name(enum kern_isa isa);
/* General form behind the typed GEMMs: leading dimensions (elements between rows, >= the row length)
 * and an explicit micro-kernel level. A and B hold `type` elements; C holds float, or int32_t for
 * KERN_I8. */
void kern_gemm_ex(enum kern_dtype type, enum kern_isa isa, int M, int N, int K, const void *A, long lda,
                  const void *B, long ldb, void *C, long ldc, int threads);

/* ---- Neural-network operators (fp32) ---- */

/* 2-D convolution, NCHW. x [N][C][H][W], w [OC][C/groups][KH][KW], y [N][OC][OH][OW] with
 * OH = (H + 2 pad - KH) / stride + 1 and OW likewise; zero padding, no bias. Requires C and OC to be
 * multiples of groups, stride >= 1, pad >= 0 and OH, OW >= 1; otherwise y is left untouched. */
void kern_conv2d_f32(int N, int C, int H, int W, int OC, int KH, int KW, int stride, int pad, int groups,
                     const float *x, const float *w, float *y, int threads);

/* Scaled dot-product attention, o = softmax(q k^T / sqrt(D)) v, per batch and head.
 * q, o [B][S][H*D]; k, v [B][T][Hkv*D]; query head h reads kv head h / (H / Hkv) (grouped-query;
 * H must be a multiple of Hkv). The S queries are the last S of the T positions: with causal != 0,
 * query i sees keys 0 .. T-S+i. Streaming (online) softmax: no S x T buffer. S == T is prefill,
 * S == 1 with T = cache length is decode. Requires 1 <= S <= T. */
void kern_attention_f32(int B, int H, int Hkv, int S, int T, int D, const float *q, const float *k,
                        const float *v, float *o, int causal, int threads);

/* Row-wise softmax, max-subtracted (numerically stable). x may equal y. */
void kern_softmax_f32(int rows, int cols, const float *x, float *y, int threads);
/* y = (x - mean) / sqrt(var + eps) * g + b per row (biased variance); b may be NULL. x may equal y. */
void kern_layernorm_f32(int rows, int cols, const float *x, const float *g, const float *b, float *y, float eps,
                        int threads);
/* y = x / sqrt(mean(x^2) + eps) * g per row. x may equal y. */
void kern_rmsnorm_f32(int rows, int cols, const float *x, const float *g, float *y, float eps, int threads);

/* GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))); SiLU: x / (1 + exp(-x));
 * y = a + b. Elementwise: y may equal an input. */
void kern_gelu_f32(long n, const float *x, float *y, int threads);
void kern_silu_f32(long n, const float *x, float *y, int threads);
void kern_add_f32(long n, const float *a, const float *b, float *y, int threads);

/* STREAM (McCalpin) kernels: copy b = a (moves 8n bytes); triad c = a + s b (moves 12n bytes). */
void kern_copy_f32(long n, const float *a, float *b, int threads);
void kern_triad_f32(long n, const float *a, const float *b, float *c, float s, int threads);

/* ---- Precision emulation ----
 * Float conversions round to nearest, ties to even, and saturate: a finite value beyond the largest
 * finite one becomes that value with its sign (where IEEE would give infinity), so that emulating a
 * narrow format never turns finite data into inf. Infinities and NaNs are kept. */

uint16_t kern_f32_to_bf16(float x);
float kern_bf16_to_f32(uint16_t h);
uint16_t kern_f32_to_f16(float x); /* IEEE binary16, subnormals kept */
float kern_f16_to_f32(uint16_t h);

/* Rounds x [rows][cols] to precision p and back to float into xq (xq may equal x):
 * P_FP64, P_FP32: copy. P_TF32: 10 mantissa bits, fp32 range. P_BF16, P_FP16: as above.
 * P_FP8: OCP e4m3 (3 mantissa bits, bias 7, subnormals down to 2^-9, max 448, no inf: inf and
 *   overflow saturate to +-448, NaN stays NaN); for e5m2 use kern_quantize_fp8e5m2.
 * P_INT8: symmetric, one scale per row, s = max|x| / 127, x -> s * round(x / s) in [-127, 127]
 *   (a weight matrix stored [out channels][in] gets one scale per output channel).
 * P_INT4: symmetric, one scale per `group` consecutive elements of a row (group <= 0 or > cols: the
 *   whole row; the last group of a row may be shorter), s = max|x| / 7, levels -7 .. 7.
 * Integer formats map a zero scale (all-zero row or group) to zeros; non-finite inputs there give
 * non-finite outputs. */
void kern_quantize(enum prec p, int rows, int cols, int group, const float *x, float *xq);
/* OCP fp8 e5m2: 2 mantissa bits, bias 15, subnormals down to 2^-16, max 57344, inf kept, finite
 * overflow saturates. Elementwise over n values; xq may equal x. */
void kern_quantize_fp8e5m2(long n, const float *x, float *xq);

/* Relative error ||C_q - C||_F / ||C||_F of C = A B when the weights B [K][N] are stored at pw and the
 * activations A [M][K] at pa, both products computed in fp64. A is standard Gaussian, B Gaussian with
 * standard deviation 1/sqrt(K), drawn from `seed`: the result depends only on the arguments (not on
 * the thread count), so callers may memoize it. Integer weights get one scale per output channel
 * (column of B) for int8 and per 128 consecutive K elements of a column for int4; integer
 * activations one scale per token (row of A) for int8, per 128 along the row for int4; fp8 (e4m3)
 * operands one per-tensor scale mapping max|x| to 448, as fp8 inference does. O(M N K) fp64 work on
 * the OpenMP threads. Returns -1 for M, N or K < 1 or when memory runs out. */
double kern_gemm_rel_error(enum prec pw, enum prec pa, int M, int N, int K, unsigned long seed);

#endif
