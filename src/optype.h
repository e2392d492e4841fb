/* optype.h -- the operator vocabulary shared by workloads (what a graph contains) and hardware
 * descriptions (which operators a device runs). */
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
    OP_COUNT
};

extern const char *const op_type_names[OP_COUNT + 1]; /* NULL-terminated */

int op_type_from_name(const char *s); /* -1 when unknown */
/* GEMM-like operators run on matrix engines; the rest on vector engines. */
int op_type_is_gemm(enum op_type t);

#endif
