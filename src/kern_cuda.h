/* kern_cuda.h -- kernels timed on an NVIDIA GPU (CUDA 12+, sm_80 and newer) to validate dse's GPU
 * models: cuBLAS / cuBLASLt GEMMs and this module's own element-wise, row, attention and convolution
 * kernels. Each call owns everything it creates (device buffers, stream, library handles) and frees it
 * before returning; there is no global state. Times in milliseconds, sizes in elements, memory in bytes.
 * Built only with ./configure --enable-cuda; it includes nothing of dse's, so any C program may use it. */
#ifndef DSE_KERN_CUDA_H
#define DSE_KERN_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kinds, spelt in suites as kcu_kind_names gives them (validate/README.md):
 * gemm           C[M][N] = A[M][K] B^T, B stored [N][K] as a linear layer's weight; fp32 (no TF32),
 *                tf32, fp16, bf16 (fp32 accumulation, output in the input type; cublasGemmEx), fp8 e4m3
 *                (cublasLt, bf16 output, compute capability 8.9 and newer), int8 (cublasLt, int32
 *                accumulation and output). M = 1 is a GEMV.
 * gemm_bias_gelu the same in fp16 or bf16 with cublasLt's fused epilogue: C = gelu(A B^T + bias[N]).
 * add, gelu, silu  y = a + b, GELU (tanh form), SiLU over n elements; fp16 or fp32.
 * copy, triad    STREAM: b = a, c = a + 3 b; fp32, n elements.
 * softmax, layernorm, rmsnorm  per row of a rows x cols matrix; fp16 in and out, fp32 arithmetic; the
 *                norms' eps 1e-5, gain g[cols] (and layernorm's shift b[cols]) fp16.
 * attention      softmax(q k^T / sqrt(D)) v, q and o [B][S][H][D], k and v [B][T][Hkv][D] (query head h
 *                reads kv head h / (H / Hkv)); the S queries are the last S of the T positions, so with
 *                causal query i sees keys 0 .. T-S+i. fp16 or bf16, D in {32, 64, 96, 128}.
 * conv2d         NHWC fp16: x [N][H][W][C], w [OC][KH][KW][C/groups], y [N][OH][OW][OC]. */
enum kcu_kind { KCU_GEMM, KCU_GEMM_BIAS_GELU, KCU_ADD, KCU_GELU, KCU_SILU, KCU_COPY, KCU_TRIAD, KCU_SOFTMAX,
                KCU_LAYERNORM, KCU_RMSNORM, KCU_ATTENTION, KCU_CONV2D, KCU_KIND_COUNT };
extern const char *const kcu_kind_names[KCU_KIND_COUNT + 1]; /* NULL-terminated */

enum kcu_prec { KCU_FP32, KCU_TF32, KCU_FP16, KCU_BF16, KCU_FP8, KCU_INT8, KCU_PREC_COUNT };
extern const char *const kcu_prec_names[KCU_PREC_COUNT + 1]; /* "fp32", "tf32", ..., as dse spells them */

/* One case. Each kind reads only its own member; field names are the suite's shape keys. */
struct kcu_case {
    enum kcu_kind kind;
    enum kcu_prec prec;
    struct { long long M, N, K; } gemm;                        /* gemm, gemm_bias_gelu */
    struct { long long n; } ew;                                /* add, gelu, silu, copy, triad */
    struct { long long rows, cols; } row;                      /* softmax, layernorm, rmsnorm */
    struct { long long B, H, Hkv, S, T, D, causal; } attn;     /* Hkv 0: H; T 0: S */
    struct { long long N, C, H, W, OC, KH, KW, stride, pad, groups; } conv;
};

/* Kind and name lookups: the index, or -1 for an unknown name. */
int kcu_kind_from_name(const char *name);
int kcu_prec_from_name(const char *name);
/* A case of kind k and precision p with every shape field at its default (conv2d N, stride, groups 1;
 * attention B 1, causal 1; the rest 0, which the required fields must be set from). */
void kcu_case_init(struct kcu_case *c, enum kcu_kind k, enum kcu_prec p);
/* The shape keys kind k reads, in suite order, NULL-terminated ({"M", "N", "K", NULL} for gemm). */
const char *const *kcu_fields(enum kcu_kind k);
/* Sets or reads shape key `name` of c's kind; -1 when the kind has no such key. */
int kcu_set_field(struct kcu_case *c, const char *name, long long v);
int kcu_get_field(const struct kcu_case *c, const char *name, long long *v);
/* Writes the shape as dse's import CSV spells it, "M=1;N=2;K=3" (defaults resolved); returns the
 * length snprintf would have written. */
int kcu_shape(const struct kcu_case *c, char *buf, size_t n);
/* 0 when the case can run: sizes in range, the precision one the kind has, divisibility (H by Hkv,
 * groups into C and OC, fp8 / int8 N and K by 16); otherwise -1 with the reason in err. Checks the
 * case alone: the GPU (fp8 needs compute capability 8.9, memory) is checked by kcu_time. */
int kcu_validate(const struct kcu_case *c, char *err, size_t errn);
/* Device memory the case allocates (inputs, outputs, scratch, library workspace), in bytes. */
double kcu_bytes(const struct kcu_case *c);
/* Floating-point operations (integer ones for int8) and main-memory bytes of one run, counted as
 * dse counts them: 2 M N K for a GEMM; each tensor read or written once. For achieved-rate figures. */
double kcu_flops(const struct kcu_case *c);
double kcu_min_bytes(const struct kcu_case *c);

struct kcu_info {
    char name[256];          /* "NVIDIA H200" */
    int cc_major, cc_minor;  /* compute capability */
    int sms;                 /* streaming multiprocessors */
    int sm_clock_MHz;        /* peak SM clock */
    int mem_clock_MHz;       /* peak memory clock */
    int bus_width_bits;
    double mem_GBps;         /* 2 x memory clock x bus width / 8: the datasheet peak of DDR and HBM */
    double l2_bytes;
    double total_bytes, free_bytes;
    int driver_version, runtime_version; /* 13000 = 13.0 */
};

/* Probes device 0 (select another with CUDA_VISIBLE_DEVICES). 0 when a CUDA GPU is usable; otherwise
 * nonzero with the reason in err ("no CUDA device: ..." with the driver's own error). */
int kcu_probe(struct kcu_info *info, char *err, size_t errn);

struct kcu_timing {
    double median_ms, p25_ms, p75_ms, min_ms;
    int runs;
    char impl[96]; /* what ran: "cublasLt fp8 e4m3 -> bf16", "kcu flash attention wmma 16x16x16, 64x32 tiles" */
};

/* Times case c on device 0: allocates its buffers (cudaMalloc; refused when they exceed the free
 * memory), fills them with small random values on the device, runs it `warmup` times untimed, then
 * timed (CUDA events around each run, so launch gaps are not counted; inputs stay warm in L2 where
 * they fit) until at least `min_runs` runs and `min_ms` of measured time. Fills t with the median,
 * quartiles and minimum; frees everything. 0 on success; KCU_SKIP when the case cannot run on this GPU
 * (too little free memory, fp8 below compute capability 8.9, no cuBLASLt algorithm, too little shared
 * memory), the reason in err; -1 on any other failure (no GPU, a CUDA / cuBLAS error with its message,
 * an invalid case). After -1 from a kernel fault the CUDA context may be unusable for later calls. */
#define KCU_SKIP 2
int kcu_time(const struct kcu_case *c, int warmup, int min_runs, double min_ms, struct kcu_timing *t, char *err,
             size_t errn);

/* Runs a (small) case once and compares its output with a host reference computed in double from the
 * same device-generated inputs: *rel_err = max |y - ref| / (|ref| + rms(ref)) over all outputs, *tol the
 * bound for the precision (0 for int8, which must be exact). 0 when within tol, 1 when not (err says
 * by how much), -1 when it could not run (err says why; KCU_SKIP where kcu_time would skip). Host work
 * is the naive reference (O(M N K) for a GEMM): keep cases small. */
int kcu_check(const struct kcu_case *c, double *rel_err, double *tol, char *err, size_t errn);

#ifdef __cplusplus
}
#endif

#endif
