/* pass.h -- software stacks: what a compiler and runtime do to a workload graph and how its kernels and
 * runtime behave, loaded from software/NAME.json (schema: software/README.md).
 *
 * A stack is plain data, read-only once loaded. pass_apply() runs its graph passes on a built graph,
 * once per (graph, stack): BatchNorm folding, GEMM merging, epilogue / element-wise / norm fusion into
 * kernels, unfused attention where the stack has no fused kernel, the KV-cache update it does. Passes
 * annotate and rewrite the graph (wl_op: elided, kernel, fused_in, fused_out, attn_unfused, kv_concat);
 * cost models read the annotations. pass_plan_memory() is the stack's memory planner for one device,
 * run per design point (it depends on the device's on-chip capacities). Times in seconds. */
#ifndef DSE_PASS_H
#define DSE_PASS_H

#include "hw.h"
#include "wl.h"

#define SW_NAME_LEN 64

/* Graph passes, in the order pass_apply runs them. */
enum pass_id {
    PASS_GEMM_MERGE,   /* matmuls reading one input with weights of one K merge into one GEMM (QKV, gate/up) */
    PASS_BN_FOLD,      /* a BatchNorm after a convolution or matmul folds into its weights and bias */
    PASS_EPILOGUE,     /* element-wise ops after a GEMM or convolution run in its epilogue */
    PASS_ELTWISE,      /* chains of element-wise ops run as one kernel */
    PASS_NORM,         /* a norm or softmax and its element-wise neighbours run as one kernel */
    PASS_ATTENTION,    /* attention runs as one fused kernel (FlashAttention-style: no S x T tensor) */
    PASS_LAUNCH,       /* kernels are replayed from a captured graph (CUDA graphs): no host launch each */
    PASS_LAYER_FUSION, /* consecutive layers fuse through on-chip memory (depth-first; NPU compilers) */
    PASS_COUNT
};

struct pass_info {
    const char *name; /* the key in the stack file's "passes" */
    const char *what; /* one line for listings */
};
extern const struct pass_info pass_table[PASS_COUNT];

/* How the runtime holds the KV cache. */
enum kv_alloc {
    KV_CONTIGUOUS, /* one buffer per sequence, sized to its tokens */
    KV_PAGED,      /* blocks of kv_block_tokens tokens (vLLM's PagedAttention): a partly filled last block */
    KV_CONCAT,     /* grown by concatenation every step (HF DynamicCache: torch.cat): the cache is copied */
    KV_COUNT
};
extern const char *const kv_alloc_names[KV_COUNT + 1];

/* Where a graph runs when its accelerator lacks an operator. */
enum partition {
    PART_ANY,    /* each unsupported operator falls back to a linked device, the rest stays */
    PART_PREFIX, /* the accelerator runs the graph up to the first operator it lacks; the host the rest
                    (the Edge TPU compiler) */
    PART_COUNT
};
extern const char *const partition_names[PART_COUNT + 1];

#define SW_MAX_VERSIONS 16
#define SW_VERSION_LEN 24

/* Whole-run factors a stack version's end-to-end cases determine, by kind of run. */
enum sw_run { SW_TRAIN, SW_PREFILL, SW_DECODE, SW_RUN_COUNT };
extern const char *const sw_run_keys[SW_RUN_COUNT + 1]; /* "training", "prefill", "decode" */

/* One release of a stack ("versions"[]): its date, the kernel library generation it ships, runtime costs
 * that differ from the stack's, and the whole-run factors fitted on the end-to-end cases that ran it (the
 * share of the architecture's kernel rate its runs reach: a software effect, never a board's). */
struct sw_version {
    char name[SW_VERSION_LEN];
    char released[16];          /* "YYYY-MM" */
    char kernels[160];          /* its kernel library generation (free text) */
    double host_kernel_s, per_step_s, per_request_s, per_token_s, token_busy; /* < 0: the stack's */
    int sched_steps;            /* < 0: the stack's */
    double eff[SW_RUN_COUNT];   /* (0, 1]; 1: not fitted */
    double mape_pct[2];         /* held-out MAPE of its training (0) and inference (1) fit, or -1 */
};

struct sw_stack {
    char name[SW_NAME_LEN];
    char version[SW_VERSION_LEN]; /* the release this is ("": a stack without versions) */
    char description[512];
    char path[DSE_PATH_LEN];  /* the file it came from ("" for the built-in "none") */
    unsigned targets;         /* bit per enum hw_class it compiles for */
    unsigned passes;          /* bit per enum pass_id */
    int weights_on_chip;      /* the planner pins weights into software-managed SRAM, layer by layer ... */
    double pin_share;         /* ... while they fit in this share of it (memory.weights_on_chip) */
    int activations_on_chip;  /* the planner keeps activations in that SRAM between layers when they fit */
    int activations_first;    /* every activation stays in that SRAM (the device runs its graph whole, no
                                 intermediate returns to the host): the largest op's activations are
                                 reserved there first and the weights get what is left (memory.activations_first) */
    enum kv_alloc kv;
    int kv_block_tokens;      /* KV_PAGED */
    double mem_util;          /* the share of each target device's main memory the runtime allocates, its
                                 reserve counted in it (memory.utilization: vLLM's gpu_memory_utilization);
                                 0: all of it */
    enum partition partition;
    double host_kernel_s;     /* host time to issue one kernel (framework dispatch + launch call) when
                                 kernels are not replayed from a captured graph */
    double per_step_s;        /* runtime work per forward pass (scheduling, sampling, synchronisation) */
    double per_request_s;     /* per request (tokenisation, set-up) */
    double per_token_s;       /* per sequence of a forward pass, i.e. per token it emits: sampling, detokenising
                                 and streaming each sequence's token, which a synchronous engine (vLLM's V0
                                 before 0.6: API server, scheduler and model runner in one Python process)
                                 runs between the device's steps (runtime.per_token_us) */
    double token_busy;        /* of per_token_s, the share each device spends running the runtime's own small
                                 kernels (sampling over the vocabulary, input copies), paid at its active_W
                                 (runtime.per_token_device_share; 0: it waits, at its gap_W) */
    int sched_steps;          /* decode steps its scheduler runs back to back before scheduling again
                                 (runtime.scheduler_steps: vLLM's --num-scheduler-steps; 0: every step) */
    int trains;               /* it runs training steps (a backward pass, optimizers): "training": true */
    unsigned train_precs;     /* bit per enum prec a training step may compute in ("training_precisions";
                                 default fp32, tf32, bf16, fp16: PASS_TRAIN_PRECS) */
    int overlap_grad;         /* its data-parallel gradient reduction runs under the backward (bucketed):
                                 "overlap": {"grad_reduce": true} */
    int overlap_param;        /* ZeRO 1-2: the updated weights' all-gather runs under the next step's
                                 forward (Megatron-LM's --overlap-param-gather): "param_gather": true */
    int overlap_tp;           /* a training step's tensor-parallel all-reduces run under the GEMMs beside
                                 them (Megatron-LM's --tp-comm-overlap, Transformer Engine): "tp_comm": true */
    int tp_padding;           /* it pads attention heads and widths up to multiples of tp (AWS Neuron):
                                 "parallel": {"tp_padding": true} */
    int sequence_parallel;    /* training with tp splits norms' and residual adds' activations along the
                                 sequence (Megatron-LM): "parallel": {"sequence_parallel": true} */
    double base_rt[5];        /* the stack's own host_kernel_s, per_step_s, per_request_s, per_token_s, token_busy (a
                                 version may change them) */
    int base_sched_steps;
    double eff[SW_RUN_COUNT]; /* the selected version's whole-run factors (1: none) */
    double mape_pct[2];       /* and their held-out errors, training and inference (-1: none) */
    int n_versions;
    char default_version[SW_VERSION_LEN];
    struct sw_version versions[SW_MAX_VERSIONS];
};

/* The precisions mixed-precision training computes in where a stack declares none: fp32 (and TF32, its
 * tensor-core mode on Ampere and later) and the two 16-bit floats with fp32 master weights and loss
 * scaling (fp16) or without (bf16): Micikevicius et al., "Mixed Precision Training", ICLR 2018
 * (arXiv 1710.03740); Kalamkar et al., "A Study of BFLOAT16 for Deep Learning Training" (arXiv
 * 1905.12322); PyTorch's torch.autocast takes float16 and bfloat16. fp8 only where a stack declares it
 * (Transformer Engine: megatron-core); integer formats and weight-only quantization (w4a16) are inference
 * formats no stack here trains in. */
#define PASS_TRAIN_PRECS ((1u << P_FP32) | (1u << P_TF32) | (1u << P_BF16) | (1u << P_FP16))

/* The built-in stack of a device that names none: no passes, no runtime costs (every operator its own
 * kernel, as the graph is written). */
void pass_none(struct sw_stack *s);
int pass_has(const struct sw_stack *s, enum pass_id p);

/* The stack a training step uses when none is named and the device's own does not train (TensorRT,
 * vLLM, ... are inference-only): megatron on GPUs, compiled (XLA, torch.compile) elsewhere. */
const char *pass_train_default(int hw_class);

/* Makes release ver ("": the stack's default_version, or none) the one s describes: its runtime costs and
 * whole-run factors. DSE_EINPUT naming the releases when s has no such one. */
int pass_select_version(struct sw_stack *s, const char *ver, struct dse_err *e);
/* "name" or "name@version" as written ("tensorrt@0.6.1"): the stack and release s is (NULL: "none"), in
 * out, which it returns. */
#define SW_LABEL_LEN (SW_NAME_LEN + SW_VERSION_LEN + 2)
const char *pass_label(const struct sw_stack *s, char *out, unsigned long n);

/* Splits "NAME@VERSION" (or PATH@VERSION: the release after the last '@' that no '/' follows) into base
 * (the stack's name or path) and *ver (the release; "" without one); DSE_EINPUT for "NAME@", "@V",
 * "none@V" or a base longer than n - 1. */
int pass_split_version(const char *name, char *base, unsigned long n, const char **ver, struct dse_err *e);

/* Loads and checks a stack file (its default version selected). */
int pass_load_file(const char *path, struct sw_stack *s, struct dse_err *e);
int pass_load_buf(const char *buf, unsigned long len, const char *fname, struct sw_stack *s, struct dse_err *e);
/* Finds the file of stack `name` (a path, or NAME for software/NAME.json) under the current
 * directory, the directory above near_file's folder (a hwdesc's or a sweep spec's), or the installed
 * data directory; writes the path to out. Returns DSE_OK, or DSE_EINPUT naming what was tried. */
int pass_resolve(const char *name, const char *near_file, char *out, unsigned long n, struct dse_err *e);
/* pass_resolve then pass_load_file, then the release after an '@' (NAME@VERSION, PATH@VERSION), else the
 * default; the name "none" is the built-in stack. */
int pass_load_named(const char *name, const char *near_file, struct sw_stack *s, struct dse_err *e);
/* DSE_OK when the stack compiles for devices of class cls; else DSE_EINPUT with the reason. */
int pass_check_target(const struct sw_stack *s, const struct hw_device *d, struct dse_err *e);

/* Runs the stack's passes on a finalized graph in place (once per graph and stack). Parameter and
 * MAC counts are unchanged; ops may be reordered (a kernel's ops become consecutive), merged GEMMs
 * replace their parts (the parts become views of the merged output) and folded ops become views. */
int pass_apply(const struct sw_stack *s, struct wl_graph *g, struct dse_err *e);

/* Kernel launches of one execution of g: the sum of wl_op.launches x count. */
double pass_kernel_launches(const struct wl_graph *g);

/* The memory planner of stack s for device d: home[t] is the memory level tensor t lives in for ops
 * on d, or -1 where the cost model's default applies (model_roofline.c: activations in the nearest
 * on-chip level whose half holds them). It plans only for stacks that manage on-chip memory
 * (weights_on_chip, activations_on_chip or layer_fusion) on devices with a software-managed sram level below main memory:
 * weights are pinned, in the order ops first read them, into the largest such level while they fit in
 * pin_share of it (the rest stream from main memory); an activation stays in that level when it fits
 * in half of what the pinned weights leave, or, with layer fusion, when the band its consumer works on
 * does (kernel height + stride rows of a convolution's or pool's input, else one row). With
 * activations_first every activation lives in that level, and the weights are pinned into what the
 * largest op's activations (inputs and outputs together) leave, at most pin_share of it; where that op's
 * activations exceed the level, the rule above applies instead (they cannot all stay). Returns 1 when
 * it planned (home filled), 0 when the defaults apply. Allocation free. */
int pass_plan_memory(const struct sw_stack *s, const struct hw_device *d, const struct wl_graph *g,
                     const struct prec_cfg *p, signed char *home);

#endif
