/* optype.h -- the operator vocabulary shared by workloads (what a graph contains), hardware
 * descriptions (which operators a device runs), cost models and software stacks: one enum and, beside
 * it, one table of each operator's properties (op_info, defined in wl_op.c with the shape checks).
 * Adding an operator is one enum entry, one table row and its check function. */
#ifndef DSE_OPTYPE_H
#define DSE_OPTYPE_H

enum op_type {
    OP_MATMUL,    /* C[M,N] = A[M,K] B[K,N], batched over leading dims */
    OP_CONV2D,    /* NCHW, groups (depthwise when groups == channels) */
    OP_ATTENTION, /* fused scaled dot-product attention, grouped-query aware */
    OP_SOFTMAX,
    OP_LAYERNORM,
    OP_RMSNORM,
    OP_ELTWISE,   /* element-wise arithmetic and activations (attribute fn) */
    OP_EMBEDDING, /* row gather from a table */
    OP_POOL,      /* max / average, windowed or global */
    OP_CONCAT,
    OP_RESHAPE,   /* a view: no data moves */
    OP_SLICE,     /* a view of the leading part of one axis: no data moves */
    OP_ALLREDUCE, /* collective over a layout group (par.h): every member ends with the sum */
    OP_ALLGATHER, /* collective over a layout group: the members' pieces joined along axis */
    OP_ALLTOALL,  /* collective over a layout group: rows (axis 1) exchanged, e.g. a MoE layer's dispatch
                     to the devices holding each token's experts and the combine back */
    OP_TRANSPOSE, /* axes permuted (attribute perm): every element read and written in the new order */
    OP_REDUCE,    /* sum, mean or max over one axis (attribute axis), kept with extent 1 */
    OP_GATHER,    /* ONNX Gather: data's slices along axis picked by an index tensor */
    OP_COPY,      /* moves data without arithmetic, shapes free: reads every input, writes its output (ONNX
                     Expand, Pad, Tile, Resize, strided slices; unknown operators costed as memory-bound) */
    OP_COUNT
};

/* The function of an element-wise operator. */
enum wl_fn {
    FN_NONE, FN_ADD, FN_SUB, FN_MUL, FN_DIV, FN_RELU, FN_RELU6, FN_GELU, FN_SILU, FN_SIGMOID, FN_TANH,
    FN_EXP, FN_SCALE, FN_BATCHNORM, FN_ROPE, FN_COUNT
};
extern const char *const wl_fn_names[FN_COUNT + 1];

/* Operator classes with their own achieved compute efficiency (calibrated separately). */
enum hw_eff_class { EC_MATMUL, EC_MATMUL_SKINNY, EC_CONV, EC_CONV_DW, EC_ATTENTION, EC_ATTENTION_DECODE, EC_SOFTMAX,
                    EC_NORM, EC_ELTWISE, EC_COUNT };
extern const char *const hw_eff_class_names[EC_COUNT + 1];

/* Row kernels: a GPU library's kernels that run one CTA per row and step through it (model_row_floor_s):
 * norms, the rotary embedding, the gated activation's product (vLLM's and sarathi's silu_and_mul). */
enum row_kind { RK_NORM, RK_ROPE, RK_MUL, RK_COUNT };
extern const char *const row_kind_names[RK_COUNT + 1];

/* Properties. */
#define OPF_VIEW 1u  /* moves no data and costs nothing (its output aliases its input) */
#define OPF_GEMM 2u  /* GEMM-like: runs on matrix engines, has a GEMM view (gm, gn, gk, gbatch) */
#define OPF_KV 4u    /* may read a KV cache (k_past, v_past): re-costed at every decode step */
#define OPF_COLL 8u  /* a collective: its device kernel is costed like any op, its link time by par.h */

/* When an operator takes its alternative efficiency class (eff_alt). */
enum op_narrow {
    NARROW_NONE,
    NARROW_ROWS,   /* at most MODEL_SKINNY_ROWS rows (gm): matrix-vector style kernels, a decode step */
    NARROW_GROUPED /* a grouped or depthwise convolution (groups > 1) */
};

/* What software stacks' graph passes may do with an operator (pass.c). */
enum op_role {
    ROLE_GEMM,      /* a producer whose output epilogues fuse into it (matmul, conv2d) */
    ROLE_ATTENTION, /* fused attention (or, unfused, QK^T + softmax + PV kernels) */
    ROLE_REDUCTION, /* row reductions (softmax, norms): element-wise neighbours fuse with them */
    ROLE_POINTWISE, /* element-wise: an epilogue of a producer, or a link of a fused chain */
    ROLE_DATA,      /* moves data (embedding gather, pooling, concat): a pointwise chain may follow it */
    ROLE_VIEW,      /* free */
    ROLE_COLL,      /* a collective: a kernel of its own (nothing fuses into or with it) */
    ROLE_COUNT
};

struct wl_opcheck; /* wl_op.h: the op being checked, its graph and where to report */

struct op_info {
    const char *name;
    unsigned flags;          /* OPF_* */
    int min_in, max_in;      /* inputs (eltwise narrows by its function) */
    int n_out;               /* outputs */
    enum hw_eff_class eff;   /* efficiency class ... */
    enum hw_eff_class eff_alt;
    enum op_narrow narrow;   /* ... and when the alternative applies */
    enum op_role role;
    /* Checks the shapes (input count already within min_in..max_in), derives MACs, FLOPs, the GEMM
     * view and the share of each input read (wl_op: in_frac); returns DSE_OK or an input error
     * naming the op. */
    int (*check)(struct wl_opcheck *c);
};

extern const struct op_info op_info[OP_COUNT];

const char *op_type_name(enum op_type t);
int op_type_from_name(const char *s); /* -1 when unknown */
/* Writes the known names, comma-separated, into buf (for error messages). */
void op_type_list(char *buf, unsigned long n);
/* GEMM-like operators run on matrix engines; the rest on vector engines. */
int op_type_is_gemm(enum op_type t);

#endif
