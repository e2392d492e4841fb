/* model.h -- the device cost-model interface: the cost of one operator on one device.
 *
 * Each device class (cpu, gpu, systolic, npu) is an entry in a const table of function pointers
 * (model.c); a new class is one file and one table entry. Costs are in seconds, bytes and joules,
 * for ONE execution of the op (the caller multiplies by the op's count). */
#ifndef DSE_MODEL_H
#define DSE_MODEL_H

#include "hw.h"
#include "wl.h"

enum bound { BOUND_COMPUTE, BOUND_MEMORY, BOUND_OVERHEAD, BOUND_NONE, BOUND_NETWORK, BOUND_COUNT };
extern const char *const bound_names[BOUND_COUNT + 1];

/* Why an op cannot run on a device. */
enum op_status { OPS_OK, OPS_UNSUPPORTED_OP, OPS_UNSUPPORTED_PREC, OPS_NO_TIER, OPS_TOO_LARGE };

enum fidelity { FID_ANALYTICAL, FID_CYCLE, FID_COUNT };
extern const char *const fidelity_names[FID_COUNT + 1];

struct exec_cfg {
    struct prec_cfg prec;
    enum fidelity fidelity;
    int graph_capture;      /* kernels replayed from a captured graph (the stack's launch_elimination):
                               each launch costs overhead.graph_node_us instead of per_op_us */
    int threads;            /* CPU: threads used (0: one per core) */
    double graph_weight_bytes; /* all weights of the graph being evaluated (for on-chip residency) */
    int warm;               /* repeated runs (validation): every tensor stays in the nearest level it fits */
    const signed char *home; /* the stack's memory plan for this device (pass_plan_memory): the level
                                each tensor lives in, -1 for the default rule; NULL: no plan */
    int nofuse;             /* the op runs on another device than its kernel: costed on its own */
};

struct op_cost {
    double compute_s, memory_s, overhead_s, time_s;
    enum bound bound;
    int mem_level;               /* the level that limits memory time */
    double bytes[HW_MAX_MEM];    /* bytes served by each memory level */
    double energy_compute_J, energy_memory_J, energy_static_J;
    double idle_share;           /* share of the device's units the op leaves idle (a CPU's unused cores); 0 */
    double utilization;          /* achieved / peak arithmetic rate, in [0, 1] */
    enum prec cprec;             /* arithmetic precision used */
    enum hw_engine engine;
    /* cycle tier (0 in the analytical tier) */
    double cycles_compute, cycles_stall, mapping_efficiency;
    double sram_reads, sram_writes, dram_reads, dram_writes; /* elements (SCALE-Sim's unit: words) */
};

struct device_model {
    const char *name; /* class name, as in hwdesc "class" */
    const char *tier; /* "analytical" */
    /* Class-specific sanity checks of a loaded device beyond the schema. */
    int (*check)(const struct hw_device *d, struct dse_err *e);
    /* Fills *c; returns OPS_OK or why the op cannot run here (c is then untouched). */
    enum op_status (*op_cost)(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                              const struct exec_cfg *x, struct op_cost *c);
    /* The cycle-approximate tier, NULL where it is not built for the class yet. */
    enum op_status (*op_cost_cycle)(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                                    const struct exec_cfg *x, struct op_cost *c);
};

/* A matmul of at most this many rows (gm: a decode step, a small batch) is "skinny": matrix-vector
 * style kernels run it, unpacked, at their own efficiency (class matmul_skinny); attention with at
 * most this many query rows per head (a decode step) likewise (class attention_decode). */
#define MODEL_SKINNY_ROWS 32
/* The efficiency class of an operator (depthwise and grouped convolutions and skinny matmuls apart). */
enum hw_eff_class model_eff_class(const struct wl_op *op);

/* Time of an op's compute and memory phases: they overlap (the roofline's max) except for the
 * device's serial_fraction of the shorter one (efficiency.serial_fraction; a core that waits on a
 * cache miss does not issue arithmetic meanwhile, so real overlap is partial). */
double model_busy_s(const struct hw_device *d, double compute_s, double memory_s);
/* CPU runtimes run an op on one core below a grain size (PyTorch's at::parallel_for: 32768 elements)
 * and on all cores above it, paying a fork/join: an op is parallel from MODEL_GRAIN_ELEMS output
 * elements, or for GEMM-like ops (matmul, conv2d, attention) from MODEL_GRAIN_MACS multiply-adds,
 * the thresholds dse's own kernels use. */
#define MODEL_GRAIN_ELEMS 32768.0
#define MODEL_GRAIN_MACS 524288.0
int model_cpu_parallel(const struct wl_graph *g, const struct wl_op *op);
/* The device's core count: the largest unit count of its compute entries (at least 1). */
double model_cpu_cores(const struct hw_device *d);
/* The precision a tensor is stored in (weights, KV cache, or activations). */
enum prec model_tensor_prec(const struct wl_tensor *t, const struct prec_cfg *p);
/* Seconds a CPU spends preparing an op, not overlapped with it: a packed GEMM's set-up and the copy
 * of its operands into panels (dense matmul, im2col convolution), a grouped convolution's per-group
 * cost; 0 on other devices and ops, or when the hwdesc gives none of these overheads. */
double model_cpu_prep_s(const struct hw_device *d, const struct wl_op *op);

/* What a kernel of fused operators moves (pass.h): the bytes op reads as input `slot` (an embedding's
 * rows, an expert bank's experts; 0 when the input comes from inside its kernel) and writes as output
 * `slot` (0 when only its kernel reads it). */
double model_in_bytes(const struct wl_graph *g, const struct wl_op *op, int slot, const struct exec_cfg *x);
double model_out_bytes(const struct wl_graph *g, const struct wl_op *op, int slot, const struct exec_cfg *x);
/* Launch cost of op: its launches (0 inside a fused kernel) x overhead.per_op_us, or x
 * overhead.graph_node_us when kernels are replayed from a captured graph. */
double model_launch_s(const struct hw_device *d, const struct wl_op *op, const struct exec_cfg *x);
/* Main-memory bytes an attention op moves beyond its operands: an unfused attention's scores (written
 * and read twice: 4 x scores at the activation precision) and a cache grown by concatenation (copied
 * each step: read and written once more); 0 for other ops. */
double model_extra_bytes(const struct wl_graph *g, const struct wl_op *op, const struct exec_cfg *x);
/* Elements of the S x T score matrix of an attention op (batch x heads x queries x keys each sees at
 * most): what an unfused attention writes to memory. */
double model_attention_scores(const struct wl_op *op);
/* The level tensor t lives in by the stack's memory plan, or -1 when there is none for it. */
int model_planned_home(const struct exec_cfg *x, int t);

/* Kernel efficiency terms, one set for both tiers (docs/models.md, "Kernel efficiency"):
 * GPU thread-block tiles for a GEMM (a matmul or convolution's GEMM view): tiles of tm x tn outputs,
 * shrunk to the next power of two >= M (or N), at least 16, for skinny shapes as GEMM libraries pick;
 * split-K across CTAs when the tiles cannot fill the GPU; waves of SMs x ctas_per_sm tiles, the last one
 * partly filled: waves = w + (1 - gemm_wave_tail) x (ceil(w) - w), w = tiles / (SMs x ctas_per_sm), where
 * gemm_wave_tail is the share of the idle SMs a library's tail handling (stream-K, a tile shape that
 * divides better) puts to work, fitted per architecture.
 * Split-K's partial sums (parallel split-K, as CUTLASS and cuBLAS run it): each of the `split` K chunks
 * writes an fp32 M x N partial to a workspace and a reduction reads them back after the main loop:
 *   red_bytes = 2 x 4 x split x gbatch x M x N,   red_s = model_mem_s(main memory, red_bytes)
 * (the GEMM class's share of main memory's bandwidth: the reduction is a small streaming kernel of its
 * own; timing it at L2's bandwidth fitted worse on the fit halves), a serial phase both tiers add to the
 * GEMM's time (counted in its overhead, outside its roofline). The library keeps the unsplit kernel
 * unless splitting is faster at precision p (main loop at the rate the depth term gives, plus red_s). */
struct gpu_tiling {
    double tm, tn, tiles_m, tiles_n, tiles, split, waves, conc;
    double kc;              /* the K loop of one CTA: ceil(K / split) rounded up to whole tile_k steps */
    double red_bytes, red_s; /* split-K's reduction: bytes through main memory, seconds (0 unsplit) */
};
void model_gpu_tiling(const struct hw_device *d, const struct wl_op *op, enum prec p, struct gpu_tiling *t);
/* t as the unsplit kernel (split 1, no reduction): the cycle tier costs both and keeps the faster. */
void model_gpu_unsplit(const struct hw_device *d, const struct wl_op *op, struct gpu_tiling *t);
/* The depth term of a matmul-class GEMM (1 for other ops): K / (K + gemm_k_half), on a GPU for tiling t
 * kc / (kc + gemm_k_half + gemm_k_fill / waves). */
double model_gemm_depth(const struct hw_device *d, const struct wl_op *op, const struct gpu_tiling *t);
/* The factor on a GEMM-like op's achieved compute rate: the engine's efficiency at precision p
 * (efficiency.per_precision), the K loop's depth (model_gemm_depth: on a GPU of one CTA's K loop, which
 * split-K shortens; matmul classes only), and, with quantize set (the
 * analytical tier; the cycle tiers count these themselves), the work padded to whole tiles and waves:
 * a GPU's thread-block tiles (model_gpu_tiling), a systolic array's folds (model_systolic_gemm), a
 * CPU's mr x nr micro-tiles. In (0, 4]; 1 for other ops and for a device that describes none of it. */
double model_gemm_eff(const struct hw_device *d, const struct wl_op *op, enum prec p, int quantize);
/* model_gemm_eff for a GPU GEMM's tiling t already chosen (NULL: not a GPU GEMM), so a tier that needs the
 * tiling too chooses it once. */
double model_gemm_eff_tiled(const struct hw_device *d, const struct wl_op *op, enum prec p, int quantize,
                            const struct gpu_tiling *t);
/* Whether op runs as a GPU GEMM kernel of d (tiles, waves, split-K): a GEMM-like op other than attention. */
int model_gpu_gemm(const struct hw_device *d, const struct wl_op *op);
/* The share of a level's bandwidth op's kernel reaches: its class's factor (memory_per_class) x, for an
 * element-wise op, its function's (memory_per_function). */
double model_mem_factor(const struct hw_device *d, const struct wl_op *op);
/* Seconds op needs to move `bytes` through memory level l of d at bandwidth bw (already derated by the
 * level's efficiency): at main memory the op's class reaches its own share of it (memory_per_class: a
 * GEMV or a paged attention reaches less than a streaming copy), and a kernel too small to fill the
 * memory system reaches bytes / (bytes + bw_half_bytes) of it (efficiency.bw_half_MB):
 * (bytes + bw_half_bytes) / (bw x eff_mclass); other levels bytes / bw. */
double model_mem_s(const struct hw_device *d, const struct wl_op *op, int l, double bytes, double bw);
/* The least time a GPU row kernel (a norm, the rotary embedding, a gated product leading its kernel)
 * takes however wide the memory: waves of resident rows x dependent steps per row x the architecture's
 * row_kernels.iter_ns; 0 for other ops and devices without those terms. model_mem_s's floor at main memory. */
double model_row_floor_s(const struct hw_device *d, const struct wl_op *op);
/* The row kernel op runs as when it leads its kernel (enum row_kind), else -1. */
int model_row_kind(const struct wl_op *op);

/* Costs op at x->fidelity: the class's cycle tier, or OPS_NO_TIER when it has none. */
enum op_status model_cost(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                          const struct exec_cfg *x, struct op_cost *c);
/* The GPU, CPU and NPU cycle tiers (model_gpu.c, model_cpu.c, model_npu.c). */
enum op_status model_gpu_cycle(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                               const struct exec_cfg *x, struct op_cost *c);
enum op_status model_cpu_cycle(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                               const struct exec_cfg *x, struct op_cost *c);
enum op_status model_npu_cycle(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                               const struct exec_cfg *x, struct op_cost *c);
/* Finishes a cycle-tier cost from compute_s, memory_s and overhead_s (overlapped): time, bound,
 * utilization, static energy. */
void model_finish(const struct hw_device *d, const struct wl_op *op, struct op_cost *c);
/* The systolic cycle tier (model_systolic.c). */
enum op_status model_systolic_cycle(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                                    const struct exec_cfg *x, struct op_cost *c);
/* SCALE-Sim v2's compute figures of one (M x K) @ (K x N) GEMM on an R x C array (exposed for tests):
 * folds x cycles_per_fold demand rows, compute_cycles = that - 1 (SCALE-Sim's Total Cycles less its
 * Stall Cycles), mapping efficiency and compute utilization in [0, 1], SRAM words requested. */
struct sa_gemm {
    double folds, cycles_per_fold, compute_cycles, mapping_efficiency, compute_util;
    double ifmap_reads, filter_reads, ofmap_writes;
};
void model_systolic_gemm(int rows, int cols, enum hw_dataflow df, double M, double K, double N, struct sa_gemm *out);
/* SCALE-Sim v2's report items of one GEMM layer on d's array (its COMPUTE_REPORT, BANDWIDTH_REPORT and
 * DETAILED_ACCESS_REPORT): cycles, percentages, and per operand (ifmap, filter, ofmap) the SRAM and
 * DRAM words and first / last cycles. The DRAM and stall items are modelled for a SCALE-Sim .cfg with
 * USER bandwidth (dram_modelled 1); with CALC nothing stalls and the DRAM items are left 0. */
enum { SA_IFMAP, SA_FILTER, SA_OFMAP };
struct sa_report {
    double compute_cycles, stall_cycles, total_cycles;
    double overall_util_pct, mapping_efficiency_pct, compute_util_pct;
    double sram_start[3], sram_stop[3], sram_acc[3]; /* reads (ifmap, filter), writes (ofmap) */
    double dram_start[3], dram_stop[3], dram_acc[3];
    int dram_modelled;
};
/* Returns 0, or -1 for a layer too large to replay: over MODEL_SA_MAX_STEPS events (folds, window
 * moves, drains: about 1 us each; ResNet-50 on a 32x32 array with 64 KiB SRAMs needs at most 1.3e4 a
 * layer) or an operand over 1e15 words (the cycle tier then answers OPS_TOO_LARGE). */
#ifndef MODEL_SA_MAX_STEPS /* the scalesim fuzz target builds with a lower limit: short replays, more inputs */
#define MODEL_SA_MAX_STEPS 2e6
#endif
int model_systolic_layer(const struct hw_device *d, double M, double K, double N, double elem_bytes,
                         struct sa_report *r);
/* The GEMMs an op runs on an array, as SCALE-Sim lists layers: returns how many shapes (1, or 2 for
 * attention: QK^T then PV), dims[i] = {M, K, N}, each run *times times (groups x batch x heads). */
int model_systolic_gemms(const struct wl_op *op, double dims[2][3], double *times);

const struct device_model *model_for(enum hw_class cls);

/* The analytical roofline shared by every class in this tier (model_roofline.c). */
enum op_status model_roofline_cost(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                                   const struct exec_cfg *x, struct op_cost *c);
/* Precision an op computes in on a device, or -1 when the device has no engine for it. */
int model_op_prec(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op,
                  const struct prec_cfg *p, enum hw_engine *eng, double *peak);

#endif
