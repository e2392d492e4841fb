/* wl.h -- workloads: operator graphs and the descriptions they are built from.
 *
 * A model description (graph JSON, HuggingFace-style transformer config, CNN builder spec, or a
 * SCALE-Sim topology CSV) is loaded once into a struct wl_model. wl_build() turns it into a concrete
 * struct wl_graph for one shape (batch, tokens, context). Ops of a repeated block (transformer layers)
 * are stored once with a multiplicity `count`, so cost models evaluate them once.
 * Element counts are doubles: exact below 2^53, far beyond any model. */
#ifndef DSE_WL_H
#define DSE_WL_H

#include <stdint.h>

#include "err.h"
#include "optype.h"
#include "prec.h"

#define WL_NAME_LEN 64
#define WL_MAX_RANK 6
#define WL_MAX_IN 5
#define WL_MAX_OUT 2
#define WL_MAX_TENSORS 400000
#define WL_MAX_OPS 200000
#define WL_MAX_DIM 1e12
#define WL_BATCH_DIM (-1) /* a dimension written "B" in a graph file: replaced by the batch size */
#define WL_SEQ_DIM (-2)   /* "S": the step's new tokens (the prompt at prefill, 1 per decode step) */
#define WL_PAST_DIM (-3)  /* "P": tokens already in the KV cache (dimension 1 of a kv tensor) */

enum wl_kind {
    WL_INPUT,  /* activations entering the graph */
    WL_INDEX,  /* integer indices (token ids): 4 bytes each */
    WL_WEIGHT, /* parameters, stored at the weight precision */
    WL_ACT,    /* intermediate activations */
    WL_KV,     /* key/value cache: persistent, stored at the KV precision */
    WL_KIND_COUNT
};
extern const char *const wl_kind_names[WL_KIND_COUNT + 1];

/* The layout groups a graph's collectives run over (par.h's enum par_dim has the same values). */
enum wl_group { WG_TP, WG_DP, WG_PP, WG_CP, WG_EP, WG_COUNT };

/* enum wl_fn: optype.h (a device's per-function bandwidth factors use it too) */
double wl_fn_flops(enum wl_fn f); /* arithmetic per output element */
int wl_fn_binary(enum wl_fn f);    /* takes a second operand (add, sub, mul, div, batchnorm's [2, C]) */

struct wl_tensor {
    char name[WL_NAME_LEN];
    enum wl_kind kind;
    int rank;
    int64_t dim[WL_MAX_RANK];
    double elems;
    double count;  /* copies (a repeated layer's weights and KV cache); 1 otherwise */
    int64_t max_rows; /* kv: a sliding-window layer's rolling cache keeps at most this many rows
                         (tokens, dim 1) of it; 0: every row is kept */
    int producer;  /* op index, -1 for graph inputs and weights */
    int last_use;  /* last op index reading it, -1 if none */
};

struct wl_op {
    char name[WL_NAME_LEN];
    enum op_type type;
    enum wl_fn fn;
    int n_in, n_out;
    int in[WL_MAX_IN], out[WL_MAX_OUT];
    double count; /* multiplicity */
    /* attributes */
    int kh, kw, sh, sw, ph, pw, groups; /* conv2d, pool */
    int ph_end, pw_end;                 /* conv2d, pool: padding added at the bottom / right beyond ph, pw
                                           (ONNX's asymmetric pads: begin ph, end ph + ph_end) */
    int pool_max;                       /* pool: 1 max, 0 average */
    int heads;                          /* attention: query heads (key/value heads follow from shapes) */
    int causal;                         /* attention */
    int axis;                           /* concat, slice, allgather, reduce */
    int perm[WL_MAX_RANK];              /* transpose: output axis i is input axis perm[i] */
    int coll_dim;                       /* allreduce, allgather, alltoall: the layout group that runs it
                                           (enum wl_group, equal to par.h's enum par_dim) */
    int transb;                         /* matmul: second operand stored [N, K] */
    int ceil_mode;                      /* conv2d, pool: partial windows at the edge count (SCALE-Sim) */
    int64_t window;                     /* attention: sliding window, keys per query (itself included);
                                           0 = every earlier key (wl_attention_pairs) */
    double softcap;                     /* attention: logits soft-capped as c tanh(s / c); 0 = none */
    int experts, topk;                  /* matmul: B is a bank [experts, K, N] of expert weights of
                                           which each token (topk rows of A) uses topk (MoE) */
    int cross;                          /* attention: keys and values of another sequence (an encoder's
                                           output, any length), every query seeing every key; no past */
    int cp;                             /* attention: queries are this device's 1/cp of a context-parallel
                                           sequence, keys and values gathered from all cp (0, 1: none) */
    int ep;                             /* expert bank: the bank is this device's 1/ep of the experts,
                                           its rows those the ep group's tokens route to them (0, 1: all) */
    /* derived by wl_finalize */
    double macs;  /* multiply-accumulates */
    double flops; /* 2 x macs + other arithmetic */
    double rows, cols; /* row view of its first output: cols its last dimension, rows the rest (a row
                          kernel runs one CTA per row: model_row_floor_s) */
    double gm, gn, gk, gbatch; /* GEMM view: gbatch independent (gm x gk) @ (gk x gn); for an expert
                                  bank gbatch = the expected number of distinct experts the step's
                                  tokens reach (wl_experts_touched) and gm their mean rows */
    double in_frac[WL_MAX_IN]; /* share of each input the op reads: an embedding's gathered rows, an
                                  expert bank's reached experts; 1 otherwise */
    /* set by a software stack's passes (pass.h); as built, every op is its own kernel (kernel = its
     * index after wl_finalize) and nothing is fused or elided */
    int elided;      /* folded away (a BatchNorm into its convolution): a view, costs nothing */
    int kernel;      /* the kernel (launch) it runs in: ops of one kernel are consecutive */
    unsigned char fused_in;  /* bit k: input k comes from inside the kernel (on chip, not read) */
    unsigned char fused_out; /* bit k: output k is consumed only inside the kernel (not written) */
    unsigned char attn_unfused; /* attention as QK^T, softmax and PV kernels: the S x T scores go
                                   through main memory (written, read, written, read) */
    unsigned char kv_concat;    /* attention reading a KV cache grown by concatenation: each step
                                   copies the cache (read and written once more) */
    unsigned char prefill_only; /* graph JSON phases: not part of the subgraph a decode step repeats */
    unsigned char launches;     /* kernel launches this op pays: 1 for the first op of a kernel that
                                   is not a view, 0 for the rest of it and for views, 4 for unfused
                                   attention (QK^T, scale and mask, softmax, PV) */
};

struct wl_graph {
    char name[WL_NAME_LEN];
    struct wl_tensor *t;
    int n_t, cap_t;
    struct wl_op *op;
    int n_op, cap_op;
    /* Name index kept by wl_add_tensor (open addressing, power-of-two size): used by wl_find_tensor
     * while it covers every tensor (ix_n == n_t); a graph whose tensors were copied in by hand has none
     * and is searched linearly. Keeps loading linear in the number of tensors. */
    int *ix;
    int ix_cap, ix_n;
};

/* --- building and checking graphs --- */
void wl_graph_init(struct wl_graph *g, const char *name);
void wl_graph_free(struct wl_graph *g);
int wl_graph_copy(struct wl_graph *dst, const struct wl_graph *src, struct dse_err *e);
/* Adds a tensor; returns its index or -1 (error set: duplicate name, too many, out of memory). */
int wl_add_tensor(struct wl_graph *g, const char *name, enum wl_kind kind, int rank, const int64_t *dim,
                  struct dse_err *e);
int wl_find_tensor(const struct wl_graph *g, const char *name);
/* Adds an op with inputs/outputs given as tensor indices; returns its index or -1. */
int wl_add_op(struct wl_graph *g, const char *name, enum op_type type, const int *in, int n_in, const int *out,
              int n_out, struct dse_err *e);
/* Orders ops topologically (rejecting cycles), checks every shape, derives MACs, FLOPs, GEMM views,
 * tensor counts and lifetimes. file names the source in messages. */
int wl_finalize(struct wl_graph *g, const char *file, struct dse_err *e);

/* For graph rewrites (pass.c). wl_drop_tensors removes the tensors marked in drop[0..n_t), which no
 * op may read or write, renumbering the rest. wl_reorder puts the ops in order[0..n_op) (a
 * permutation that keeps producers before consumers) and re-derives producers and lifetimes. */
int wl_drop_tensors(struct wl_graph *g, const char *drop, struct dse_err *e);
int wl_reorder(struct wl_graph *g, const int *order, struct dse_err *e);

/* A view (reshape, slice) or an op a pass folded away: no data moves, no cost. */
int wl_op_is_view(const struct wl_op *op);

/* Re-derives one op's MACs, FLOPs and GEMM view after its tensors' shapes changed in place. */
int wl_op_derive(struct wl_graph *g, int op, struct dse_err *e);

/* --- model descriptions --- */
enum wl_model_kind { WLM_GRAPH, WLM_TRANSFORMER, WLM_CNN, WLM_TOPO, WLM_ONNX };
enum wl_phase { PH_NONE, PH_PREFILL, PH_DECODE, PH_GENERATE, PH_TRAIN };
extern const char *const wl_phase_names[]; /* "none", "prefill", "decode", "generate", "train", NULL */

struct wl_transformer {
    char model_type[32];
    int family;           /* row of the model_type table in wl_transformer.c */
    int decoder;          /* causal LM with a KV cache vs encoder (bert, vit) */
    int64_t hidden, layers, heads, kv_heads, head_dim, intermediate, vocab, max_pos, type_vocab;
    const char *max_pos_key; /* the config field max_pos came from (a static string) */
    int gated_mlp;        /* gated MLP (gate, up, down: SwiGLU, GeGLU) vs two-matrix MLP */
    int act;              /* enum wl_fn of the MLP activation */
    int rms;              /* RMSNorm vs LayerNorm */
    int qkv_bias, mlp_bias, out_bias;
    int learned_pos;      /* learned position embeddings (gpt2, bert, vit) vs rotary */
    int tied;             /* lm_head shares the embedding table */
    int head_bias;        /* gptj: the untied lm_head has a bias */
    int pooler;           /* bert pooler */
    int embed_scale;      /* gemma: embeddings scaled by sqrt(hidden) */
    int sandwich_norm;    /* gemma2: RMSNorm on the attention output and on the MLP output too */
    int post_norm;        /* bert, roberta, distilbert: post-LayerNorm, an embedding LayerNorm, no final norm */
    int parallel_block;   /* gpt_neox (use_parallel_residual), falcon: attention and MLP both read the layer input */
    int shared_norm;      /* falcon's first architecture: one LayerNorm feeds both */
    int qk_norm;          /* qwen3: RMSNorm of each head's query and key (weights of head_dim) */
    int64_t dec_layers;   /* t5: decoder layers (layers counts the encoder's) */
    int64_t rel_buckets;  /* t5: relative position buckets (a [buckets, heads] bias in each stack's first layer) */
    double attn_softcap, final_softcap; /* gemma2: logits soft-capped as c tanh(x / c); 0 = none */
    /* mixture of experts (experts 0: a dense model) */
    int64_t experts, topk, moe_intermediate, shared_intermediate; /* shared: qwen2_moe's gated expert */
    /* layer kinds: block_layers[windowed][moe] layers have sliding-window attention (window keys per
     * query) or not, and a mixture-of-experts MLP or a dense one; they sum to layers */
    int64_t window;
    int64_t block_layers[2][2];
    /* vision */
    int64_t image_size, patch_size, channels, num_labels;
    int tp; /* a tensor-parallel shard (wl_shard_transformer): heads, KV heads, FFN widths and vocabulary
               are one device's of tp, and the builder inserts the tp group's collectives; 0 or 1: whole */
    int ep; /* expert parallelism: one device's experts of ep, with all-to-all dispatch and combine */
    int cp; /* context parallelism: one device's 1/cp of the sequence (prefill, training, encoders: its
               tokens, keys and values gathered for attention; decode: its 1/cp of the KV cache, the
               attention's partial results all-reduced) */
    double moe_imbalance; /* with ep: the busiest device's routed rows over the mean (>= 1) */
};

struct wl_cnn {
    char arch[32];    /* the generator (wl_cnn_gen.h's tables) */
    char variant[16]; /* a family's named size ("n", "s", "50", ...); "" when the family takes none */
    int64_t image_h, image_w, num_classes;
    int64_t channels;  /* the input image's channels (spec image_channels, 1 to 16; 3 unless given) */
    double width_mult, depth_mult; /* a family's channel and depth scales (1: as published) */
    double published_params, published_GMACs; /* the source's counts at image_h x image_w (0: none given);
                                                 a test holds the built graph to them */
};

struct wl_onnx; /* an imported ONNX graph (wl_onnx.c), shapes inferred again for every build */

struct wl_model {
    enum wl_model_kind kind;
    char name[WL_NAME_LEN];
    char path[DSE_PATH_LEN];
    struct wl_graph graph; /* WLM_GRAPH and WLM_TOPO: template, dims may be WL_BATCH_DIM */
    struct wl_transformer tf;
    struct wl_cnn cnn;
    struct wl_onnx *onnx; /* WLM_ONNX (owned; wl_model_free frees it) */
    int phased;           /* WLM_GRAPH with a "phases" block: a decoder LM (prefill, decode steps); its
                             positions limit in tf.max_pos */
};

/* How a model file is read: ONNX dynamic dimensions bound by name (--dim name=value) and what to do
 * with an operator dse does not model (error, or costed as memory-bound with a warning). */
#define WL_MAX_BIND 16
struct wl_load_opt {
    int n_dims;
    struct {
        char name[WL_NAME_LEN];
        int64_t value;
    } dims[WL_MAX_BIND];
    int unknown_memory;
};

struct wl_shape {
    int64_t batch;
    int64_t tokens;  /* new tokens per sequence in this step (prefill: the prompt; decode: 1) */
    int64_t past;    /* tokens already in the KV cache */
    int tp;          /* tensor-parallel degree: the graph is one device's shard of tp (0 or 1: whole) */
    int train;       /* the forward pass of a training step: no KV cache (keys and values are activations)
                        and a decoder's logits for every position with their cross-entropy softmax */
    int ep;          /* expert-parallel degree (0 or 1: every expert on every device) */
    int cp;          /* context-parallel degree (0 or 1: the whole sequence on every device) */
    int tp_pad;      /* heads and widths tp does not divide are padded up (the stack's "tp_padding") */
    double moe_imbalance; /* with ep: the busiest device's routed rows over the mean (0: 1, balanced) */
};

/* Loads a model description: *.json (graph, transformer config or CNN spec), *.csv (SCALE-Sim) or
 * *.onnx. wl_load_buf's csv: 0 JSON, 1 SCALE-Sim CSV, 2 ONNX. */
int wl_load_file(const char *path, struct wl_model *m, struct dse_err *e);
int wl_load_buf(const char *buf, unsigned long len, const char *fname, int csv, struct wl_model *m,
                struct dse_err *e);
/* The same with options (opt NULL: none); *.onnx files are read as ONNX models. */
int wl_load_file_opt(const char *path, const struct wl_load_opt *opt, struct wl_model *m, struct dse_err *e);
/* Parses "name=value" into opt's dimension bindings (the CLI's --dim); DSE_EINPUT naming what is wrong. */
int wl_load_opt_dim(struct wl_load_opt *opt, const char *arg, struct dse_err *e);
/* ONNX (wl_onnx.c): an ONNX ModelProto in buf; nothing is kept of buf. Dynamic dimensions: those the
 * options bind, else batch-like names (and an unnamed leading dimension) follow the build's batch and
 * sequence-like names its tokens; any other is an error naming the input and the dimension. */
int wl_onnx_load(const void *buf, unsigned long len, const char *fname, const struct wl_load_opt *opt,
                 struct wl_onnx **out, struct dse_err *e);
int wl_onnx_build(const struct wl_onnx *x, const char *name, const struct wl_shape *s, struct wl_graph *g,
                  struct dse_err *e);
void wl_onnx_free(struct wl_onnx *x);
/* The first quantized operator's type (QLinearConv, ...) when the model holds any, else NULL. */
const char *wl_onnx_quantized(const struct wl_onnx *x);
/* Whether a dimension of the model's inputs follows the build's tokens (a sequence length). */
int wl_onnx_takes_tokens(const struct wl_onnx *x);
void wl_model_free(struct wl_model *m);
int wl_model_is_lm(const struct wl_model *m); /* has prefill/decode phases */
/* Whether the build's tokens shape it (--prompt applies): LMs, encoders, graphs with "S", ONNX
 * models with a sequence dimension. */
int wl_model_takes_tokens(const struct wl_model *m);
/* Builds the concrete graph for one step shape into g (initialised here, caller frees). */
int wl_build(const struct wl_model *m, const struct wl_shape *s, struct wl_graph *g, struct dse_err *e);
/* The splits a model allows: tp, cp and ep (> 1) need a transformer, cp one with a token sequence
 * (not ViT's patches), ep a mixture of experts; otherwise DSE_EINPUT naming the split and the model.
 * wl_build and eval's layout check share it, so both refuse alike. */
int wl_check_split(const struct wl_model *m, int tp, int cp, int ep, struct dse_err *e);

/* prompt + generated tokens (a decode step: prompt + 1) must fit in a decoder's positions
 * (max_position_embeddings; gpt2: n_positions); otherwise DSE_EINPUT naming both numbers and the field,
 * reported at file / path. Other workloads always pass. */
int wl_check_context(const struct wl_model *m, enum wl_phase ph, int64_t prompt, int64_t gen, const char *file,
                     const char *path, struct dse_err *e);

/* Graph-level counts. */
double wl_params(const struct wl_graph *g);  /* weight elements x count */
/* Parameters one token uses: wl_params less, for each expert bank, the (experts - topk) / experts of it
 * a token's router does not pick. */
double wl_active_params(const struct wl_graph *g);
/* The expected number of distinct experts that `tokens` tokens reach when each picks topk distinct
 * experts of `experts` uniformly and independently of the others (a uniform-routing assumption: real
 * routers are skewed, which touches fewer): E (1 - (1 - k/E)^T). */
double wl_experts_touched(double experts, double topk, double tokens);
/* Keys that S new queries attend after P cached ones with causal masking and a sliding window of W
 * keys per query (itself included; 0 = no window): sum over positions p = P..P+S-1 of min(p + 1, W). */
double wl_attention_pairs(double S, double P, double W);
/* Bytes op reads of its input `slot`: an embedding reads only the gathered rows of its table, an
 * expert bank only the experts the step's tokens reach (gbatch of experts); else the whole tensor. */
double wl_op_read_bytes(const struct wl_graph *g, const struct wl_op *op, int slot, const struct prec_cfg *p);
/* Bytes of a kv tensor held in the cache (one copy) once `grow` more tokens have joined its rows
 * (dim 1), at most max_rows of them when a sliding window bounds it. */
double wl_kv_bytes(const struct wl_tensor *t, const struct prec_cfg *p, int64_t grow);
double wl_macs(const struct wl_graph *g);    /* MACs x count */
double wl_kind_bytes(const struct wl_graph *g, enum wl_kind k, const struct prec_cfg *p);
double wl_tensor_bytes(const struct wl_tensor *t, const struct prec_cfg *p); /* one copy */
/* Peak bytes of activations live at once (tensor lifetimes in op order). scratch: n_op + 2 doubles,
 * or NULL to allocate. */
double wl_peak_act_bytes(const struct wl_graph *g, const struct prec_cfg *p, double *scratch);

/* Builders used by wl_build (wl_transformer.c, wl_cnn.c). */
int wl_build_transformer(const struct wl_transformer *c, const char *name, const struct wl_shape *s,
                         struct wl_graph *g, struct dse_err *e);
int wl_build_cnn(const struct wl_cnn *c, const char *name, const struct wl_shape *s, struct wl_graph *g,
                 struct dse_err *e);
/* Whether generator `arch` exists and takes `variant` ("": none): 0, else -1 with msg saying what it
 * expects (the generators, or the family's variants). */
int wl_cnn_check(const char *arch, const char *variant, char *msg, size_t n);
int wl_parse_transformer(const void *json_root, const char *file, struct wl_transformer *c, struct dse_err *e);
/* One device's shard of c under tensor parallelism of degree tp (Megatron-LM's split): attention heads
 * and FFN widths split tp ways (tp must divide them), KV heads too or, when there are fewer than tp,
 * one copy per device; the vocabulary (embedding rows, lm_head columns) padded to a multiple of tp and
 * split; norms, routers and position tables whole on every device. The builder then adds an
 * all-reduce after the embedding, each attention output projection and each MLP, and an all-gather
 * of the logits. Errors name file and the config key. With pad (a runtime that pads, as AWS Neuron's
 * pads attention heads to a multiple of tp), nothing is refused: each share is rounded up. */
int wl_shard_transformer(const struct wl_transformer *c, int tp, int pad, const char *file, struct wl_transformer *out,
                         struct dse_err *e);
/* Expert parallelism on (a shard of) c: ep devices share the experts, E / ep each (ep must divide E;
 * a dense model is refused), tokens dispatched to their experts' devices and combined back by
 * all-to-alls; imbalance (>= 1) scales the busiest device's rows. Errors name file and key. */
int wl_expert_parallel(struct wl_transformer *c, int ep, double imbalance, const char *file, struct dse_err *e);

#endif
