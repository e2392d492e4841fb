/* wl_onnx_ops.c -- the ONNX importer's second half: for one build (batch, sequence), the shapes of
 * every value of the graph wl_onnx.c read, inferred node by node in topological order, the static ones
 * folded (their contents computed when small), and dse's operators for the rest. The mapping of each
 * ONNX operator is in the table at the end and in docs/onnx.md.
 *
 * Shape inference walks the nodes in topological order. A node
 * whose inputs are all static (initializers, constants, or computed from them) is folded: its outputs
 * are static, their values computed when small (Shape, Gather, Concat, arithmetic: the shape
 * subgraphs exporters write), and it costs nothing, as a runtime folds it at load (a QDQ model's
 * DequantizeLinear of int8 weights, a Transpose of a weight). Shape and Size are static whatever their
 * input. Every other node becomes dse operators: Conv -> conv2d, MatMul/Gemm -> matmul (broadcast
 * operands materialised by a copy), BatchNormalization -> batchnorm with a [2, C] folded scale and
 * shift (2C parameters, as published counts have), element-wise ops -> eltwise (a static scalar
 * operand folds into a unary op), reshape-likes -> views, Transpose -> transpose, Split/Slice -> views
 * (a strided slice: a copy), Expand/Pad/Tile/Resize/DepthToSpace -> copy, Reduce* -> reduce per axis,
 * QLinear operators, ConvInteger and MatMulInteger -> their float counterparts (costed at the run's precision).
 * Parameters: the elements of the static weight tensors dse operators read (an initializer folded
 * through DequantizeLinear or Transpose counts once, as the tensor the operator reads); integer
 * constants (shapes, axes, indices) and generated constants (ConstantOfShape, Range) are not. A static
 * node that picks part of a weight (a Gather of position ids from a table, a Slice of it) is not
 * folded: the table is read at run time and counted whole, as published parameter counts have it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl_onnx.h"

/* bit 1: some input dimension follows the batch; bit 2: some follows the sequence (tokens) */
static int follows(const struct wl_onnx *x)
{
    int f = 0;
    for (int i = 0; i < x->n_val; i++)
        if (x->val[i].src == OXV_INPUT)
            for (int k = 0; k < x->val[i].rank; k++)
                f |= x->val[i].dim[k] == OXD_BATCH ? 1 : x->val[i].dim[k] == OXD_TOKENS ? 2 : 0;
    return f;
}

int wl_onnx_takes_tokens(const struct wl_onnx *x) { return x && (follows(x) & 2); }

/* ---- building: the shapes of one wl_shape, and dse's operators ---- */

struct ox_live {
    int set, rank, elem;
    int64_t dim[OX_RANK];
    double elems;
    int stat;   /* static: known without the data (initializers, constants, folded nodes) */
    int weight; /* static and derived from a weight initializer: parameters where an operator reads it */
    long n_c;   /* contents known: n_c (== elems) values in c; -1 unknown */
    double *c;
    int t;      /* its dse tensor, -1: none yet */
};

struct ox_b {
    const struct wl_onnx *x;
    const struct wl_shape *s;
    struct wl_graph *g;
    struct dse_err *e;
    struct ox_live *v;
    struct ox_chunk *arena; /* this build's computed contents */
    int fold, wsrc;         /* the node is folded; one of its inputs is a weight */
    int tmp;                /* intermediate tensors named so far */
    int ops_node;           /* operators the current node has added */
};

static int bfail(struct ox_b *b, const struct ox_node *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int bfail(struct ox_b *b, const struct ox_node *n, const char *fmt, ...)
{
    char msg[512], where[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(where, sizeof where, "node '%.80s' (%.40s)", n->name, n->op);
    return dse_err_set(b->e, DSE_EINPUT, b->x->file, where, "%s", msg);
}

static struct ox_live *IN(struct ox_b *b, const struct ox_node *n, int k)
{
    return k < n->n_in && n->in[k] >= 0 ? &b->v[n->in[k]] : NULL;
}

static const char *in_name(struct ox_b *b, const struct ox_node *n, int k)
{
    return k < n->n_in && n->in[k] >= 0 ? b->x->val[n->in[k]].name : "";
}

static int need(struct ox_b *b, const struct ox_node *n, int k, struct ox_live **out)
{
    if (!(*out = IN(b, n, k)))
        return bfail(b, n, "input %d is missing", k);
    return DSE_OK;
}

static const struct ox_attr *attr(const struct ox_node *n, const char *name)
{
    for (int i = 0; i < n->n_attr; i++)
        if (!strcmp(n->attr[i].name, name))
            return &n->attr[i];
    return NULL;
}

static int64_t ai(const struct ox_node *n, const char *name, int64_t def)
{
    const struct ox_attr *a = attr(n, name);
    return a ? a->i : def;
}

static double af(const struct ox_node *n, const char *name, double def)
{
    const struct ox_attr *a = attr(n, name);
    return a ? a->f : def;
}

static const char *as(const struct ox_node *n, const char *name, const char *def)
{
    const struct ox_attr *a = attr(n, name);
    return a && a->s ? a->s : def;
}

/* An ints attribute: its count (at most max) into out, 0 when absent; -1 with the error set. */
static int aints(struct ox_b *b, const struct ox_node *n, const char *name, int64_t *out, int max)
{
    const struct ox_attr *a = attr(n, name);
    if (!a)
        return 0;
    if (a->n_ints > max)
        return bfail(b, n, "attribute %s has %d values (at most %d)", name, a->n_ints, max), -1;
    for (int i = 0; i < a->n_ints; i++)
        out[i] = a->ints[i];
    return a->n_ints;
}

/* A constant input's values as integers (count into *cnt, at most max). */
static int cints(struct ox_b *b, const struct ox_node *n, int k, int64_t *out, int max, int *cnt)
{
    struct ox_live *v = IN(b, n, k);
    if (!v)
        return bfail(b, n, "input %d is missing", k);
    if (v->n_c < 0)
        return bfail(b, n, "input %d '%.80s' must be a constant dse can compute (it depends on the data)", k,
                     in_name(b, n, k));
    if (v->n_c > max)
        return bfail(b, n, "input %d '%.80s' holds %ld values (at most %d)", k, in_name(b, n, k), v->n_c, max);
    for (long i = 0; i < v->n_c; i++) {
        double d = v->c[i]; /* int64 read into a double: +-2^63 is INT64_MAX/MIN (Slice's "to the end") */
        if (!isfinite(d) || d != floor(d) || fabs(d) > 0x1p63)
            return bfail(b, n, "input %d '%.80s' value %ld is %g (expected an integer)", k, in_name(b, n, k), i, d);
        out[i] = d >= 0x1p63 ? INT64_MAX : d <= -0x1p63 ? INT64_MIN : (int64_t)d;
    }
    *cnt = (int)v->n_c;
    return DSE_OK;
}

static int norm_axis(struct ox_b *b, const struct ox_node *n, int64_t a, int rank, int *out)
{
    int r = rank ? rank : 1;
    if (a < -r || a >= r)
        return bfail(b, n, "axis %lld out of range for rank %d", (long long)a, rank);
    *out = (int)(a < 0 ? a + r : a);
    return DSE_OK;
}

static int set_out(struct ox_b *b, const struct ox_node *n, int k, int rank, const int64_t *dim, int elem)
{
    if (k >= n->n_out || n->out[k] < 0)
        return DSE_OK;
    if (rank > OX_RANK)
        return bfail(b, n, "output %d would have rank %d (at most %d)", k, rank, OX_RANK);
    struct ox_live *o = &b->v[n->out[k]];
    double el = 1;
    for (int i = 0; i < rank; i++) {
        if (dim[i] < 0 || (double)dim[i] > WL_MAX_DIM)
            return bfail(b, n, "output %d '%.80s': dimension %d is %lld (expected 0..%g)", k, b->x->val[n->out[k]].name,
                         i, (long long)dim[i], WL_MAX_DIM);
        el *= (double)dim[i];
        o->dim[i] = dim[i];
    }
    if (el > OX_MAX_ELEMS)
        return bfail(b, n, "output %d '%.80s' would hold %.4g elements: dimension overflow", k,
                     b->x->val[n->out[k]].name, el);
    o->set = 1;
    o->rank = rank;
    o->elem = elem;
    o->elems = el;
    o->stat = b->fold;
    o->weight = b->fold && b->wsrc;
    o->n_c = -1;
    o->c = NULL;
    o->t = -1;
    return DSE_OK;
}

static int same_out(struct ox_b *b, const struct ox_node *n, int k, const struct ox_live *x)
{
    return set_out(b, n, k, x->rank, x->dim, x->elem);
}

/* A folded node's output contents (kept when small). */
static int set_vals(struct ox_b *b, const struct ox_node *n, int k, const double *vals)
{
    if (k >= n->n_out || n->out[k] < 0)
        return DSE_OK;
    struct ox_live *o = &b->v[n->out[k]];
    if (!b->fold || o->elems > OX_FOLD_MAX)
        return DSE_OK;
    size_t m = (size_t)o->elems;
    if (!(o->c = ar_alloc(&b->arena, sizeof *o->c * (m ? m : 1))))
        return dse_err_set(b->e, DSE_ERUNTIME, b->x->file, NULL, "out of memory");
    memcpy(o->c, vals, sizeof *o->c * m);
    o->n_c = (long)m;
    return DSE_OK;
}

/* Scratch for computed contents (up to OX_FOLD_MAX values), from this build's arena. */
static double *scratch(struct ox_b *b, double elems)
{
    size_t m = elems > 0 ? (size_t)elems : 1;
    double *p = ar_alloc(&b->arena, sizeof *p * m);
    if (!p)
        dse_err_set(b->e, DSE_ERUNTIME, b->x->file, NULL, "out of memory");
    return p;
}

/* whether all of node n's present inputs have known contents and its outputs are small */
static int computable(struct ox_b *b, const struct ox_node *n, double out_elems)
{
    if (!b->fold || out_elems > OX_FOLD_MAX)
        return 0;
    for (int k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0 && b->v[n->in[k]].n_c < 0)
            return 0;
    return 1;
}

/* ---- dse tensors and operators ---- */

static int mk_tensor(struct ox_b *b, const struct ox_node *n, const char *base, enum wl_kind kind, int rank,
                     const int64_t *dim)
{
    int64_t d[WL_MAX_RANK] = {1};
    if (rank > WL_MAX_RANK)
        return bfail(b, n, "'%.80s' has rank %d; dse's tensors have at most %d", base, rank, WL_MAX_RANK), -1;
    for (int i = 0; i < rank; i++) {
        if (dim[i] < 1)
            return bfail(b, n, "'%.80s' has a zero-sized dimension %d; dse does not model empty tensors", base, i), -1;
        d[i] = dim[i];
    }
    char nm[WL_NAME_LEN];
    if (strlen(base) < WL_NAME_LEN - 12)
        snprintf(nm, sizeof nm, "%s", base);
    else
        snprintf(nm, sizeof nm, "%.40s~%d", base, b->tmp++);
    int t = wl_add_tensor(b->g, nm, kind, rank ? rank : 1, d, b->e);
    if (t < 0 && b->g->n_t < WL_MAX_TENSORS) { /* a name taken by an earlier (shortened) one */
        snprintf(nm, sizeof nm, "%.40s~%d", base, b->tmp++);
        t = wl_add_tensor(b->g, nm, kind, rank ? rank : 1, d, b->e);
    }
    if (t < 0)
        return bfail(b, n, "%s", b->e->msg), -1;
    return t;
}

/* The dse tensor input k is read as: a weight (static, from a weight initializer), a static constant
 * or graph input (index for integers, else input), or an operator's output. */
static int tin(struct ox_b *b, const struct ox_node *n, int k)
{
    struct ox_live *v = IN(b, n, k);
    if (!v)
        return bfail(b, n, "input %d is missing", k), -1;
    if (v->t >= 0)
        return v->t;
    int vi = n->in[k];
    enum wl_kind kind;
    if (v->stat)
        kind = v->weight ? WL_WEIGHT : elem_is_int(v->elem) ? WL_INDEX : WL_INPUT;
    else if (b->x->val[vi].src == OXV_INPUT)
        kind = elem_is_int(v->elem) ? WL_INDEX : WL_INPUT;
    else
        return bfail(b, n, "input %d '%.80s' is an output dse does not compute", k, b->x->val[vi].name), -1;
    return v->t = mk_tensor(b, n, b->x->val[vi].name, kind, v->rank, v->dim);
}

static int tout(struct ox_b *b, const struct ox_node *n, int k)
{
    if (k >= n->n_out || n->out[k] < 0)
        return bfail(b, n, "output %d is omitted", k), -1;
    struct ox_live *v = &b->v[n->out[k]];
    if (v->t >= 0)
        return v->t;
    return v->t = mk_tensor(b, n, b->x->val[n->out[k]].name, WL_ACT, v->rank, v->dim);
}

static int ttmp(struct ox_b *b, const struct ox_node *n, int rank, const int64_t *dim)
{
    char nm[WL_NAME_LEN];
    snprintf(nm, sizeof nm, "%.40s~%d", n->name, b->tmp++);
    return mk_tensor(b, n, nm, WL_ACT, rank, dim);
}

/* Adds one operator of node n; returns its index or -1 (error set). */
static int emit(struct ox_b *b, const struct ox_node *n, enum op_type type, const int *in, int nin, int out)
{
    for (int k = 0; k < nin; k++)
        if (in[k] < 0)
            return -1;
    if (out < 0)
        return -1;
    char nm[WL_NAME_LEN];
    if (b->ops_node++)
        snprintf(nm, sizeof nm, "%.50s~%d", n->name, b->ops_node);
    else
        snprintf(nm, sizeof nm, "%s", n->name);
    int o = wl_add_op(b->g, nm, type, in, nin, &out, 1, b->e);
    if (o < 0)
        return bfail(b, n, "%s", b->e->msg), -1;
    b->g->op[o].count = 1;
    b->g->op[o].groups = 1;
    b->g->op[o].sh = b->g->op[o].sw = 1;
    for (int a = 0; a < WL_MAX_RANK; a++)
        b->g->op[o].perm[a] = -1;
    return o;
}

static int t_shape(struct ox_b *b, int t, int rank, const int64_t *dim)
{
    const struct wl_tensor *w = &b->g->t[t];
    int r = rank ? rank : 1;
    if (w->rank != r)
        return 0;
    for (int i = 0; i < rank; i++)
        if (w->dim[i] != dim[i])
            return 0;
    return 1;
}

/* t seen with another shape of as many elements: a view (reshape) into out (or a new intermediate). */
static int view(struct ox_b *b, const struct ox_node *n, int t, int rank, const int64_t *dim, int out)
{
    if (t < 0)
        return -1;
    if (out < 0 && t_shape(b, t, rank, dim))
        return t;
    if (out < 0 && (out = ttmp(b, n, rank, dim)) < 0)
        return -1;
    return emit(b, n, OP_RESHAPE, &t, 1, out) < 0 ? -1 : out;
}

/* Input k as a tensor of the given shape: a static weight is created in that shape (its elements count
 * once), anything else is viewed. */
static int tin_as(struct ox_b *b, const struct ox_node *n, int k, int rank, const int64_t *dim)
{
    struct ox_live *v = IN(b, n, k);
    if (v && v->stat && v->t < 0) {
        int save_rank = v->rank;
        int64_t save[OX_RANK];
        memcpy(save, v->dim, sizeof save);
        v->rank = rank;
        memcpy(v->dim, dim, sizeof *dim * (size_t)rank);
        int t = tin(b, n, k);
        v->rank = save_rank;
        memcpy(v->dim, save, sizeof save);
        return t;
    }
    return view(b, n, tin(b, n, k), rank, dim, -1);
}

/* Where a node's last operator writes output k when that operator gives shape (rank, dim): the
 * output's own tensor when the shapes agree, else an intermediate that fin() views into it. */
static int dst(struct ox_b *b, const struct ox_node *n, int k, int rank, const int64_t *dim)
{
    const struct ox_live *v = &b->v[n->out[k]];
    int same = v->rank == rank || (v->rank == 0 && rank == 1 && dim[0] == 1);
    for (int i = 0; same && i < rank && i < v->rank; i++)
        same = v->dim[i] == dim[i];
    return same ? tout(b, n, k) : ttmp(b, n, rank, dim);
}

static int fin(struct ox_b *b, const struct ox_node *n, int k, int t)
{
    if (t < 0)
        return b->e->code ? b->e->code : DSE_EINPUT;
    int o = tout(b, n, k);
    if (o < 0)
        return b->e->code;
    if (o == t)
        return DSE_OK;
    return view(b, n, t, b->g->t[o].rank, b->g->t[o].dim, o) < 0 ? b->e->code : DSE_OK;
}

/* ---- shape helpers ---- */

static int bshape(struct ox_b *b, const struct ox_node *n, int ra, const int64_t *da, int rb, const int64_t *db,
                  int *r, int64_t *d)
{
    int m = ra > rb ? ra : rb;
    for (int i = 0; i < m; i++) {
        int64_t x = i < ra ? da[ra - 1 - i] : 1, y = i < rb ? db[rb - 1 - i] : 1;
        if (x != y && x != 1 && y != 1)
            return bfail(b, n, "shapes do not broadcast: %lld against %lld %d dimensions from the end", (long long)x,
                         (long long)y, i + 1);
        d[m - 1 - i] = x == 1 ? y : x;
    }
    *r = m;
    return DSE_OK;
}

/* The offset, in an input of shape id (aligned at the right, 1-sized dimensions broadcast), of output
 * element flat of shape od. */
static long bc_index(long flat, int orank, const int64_t *od, int irank, const int64_t *id)
{
    long off = 0, stride = 1;
    for (int i = orank - 1, j = irank - 1; i >= 0; i--, j--) {
        long c = od[i] ? flat % od[i] : 0;
        flat = od[i] ? flat / od[i] : 0;
        if (j >= 0) {
            if (id[j] != 1)
                off += c * stride;
            stride *= id[j];
        }
    }
    return off;
}

static int same_dims(int ra, const int64_t *a, int rb, const int64_t *b)
{
    if (ra != rb)
        return 0;
    for (int i = 0; i < ra; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static double prod(const int64_t *d, int from, int to)
{
    double p = 1;
    for (int i = from; i < to; i++)
        p *= (double)d[i];
    return p;
}

/* ---- element-wise operators ---- */

enum ox_ar { AR_ADD, AR_SUB, AR_MUL, AR_DIV, AR_POW, AR_MAX, AR_MIN, AR_MOD, AR_EQ, AR_LT, AR_LE, AR_GT, AR_GE,
             AR_AND, AR_OR, AR_XOR, AR_WHERE, AR_MEAN, AR_PRELU, AR_BINARY_END,
             AR_ID, AR_NEG, AR_ABS, AR_SQRT, AR_RECIP, AR_FLOOR, AR_CEIL, AR_ROUND, AR_NOT, AR_RELU, AR_EXP, AR_LOG,
             AR_ERF, AR_TANH, AR_SIGMOID, AR_SIN, AR_COS, AR_SIGN, AR_CLIP, AR_OTHER };

struct ox_ew {
    const char *name;
    enum ox_ar ar;
    enum wl_fn fn; /* what dse costs it as: a binary function for binary ones, else a unary one */
};

/* Costs follow wl_fn_flops: a comparison, select or min/max is a subtract's; Erf, Sin and Cos a tanh's;
 * Log, Softplus, Elu and Selu an exp's; clamps (Clip, HardSigmoid, HardSwish) relu6's; Cast, Neg, Abs,
 * rounding, Sqrt and Reciprocal one operation (scale). Pow by a constant exponent other than 1, 2 or
 * 0.5 an exp's; Pow of two tensors a multiply's (an underestimate, rare outside constants). */
static const struct ox_ew ew_tab[] = {
    {"Add", AR_ADD, FN_ADD}, {"Sum", AR_ADD, FN_ADD}, {"Sub", AR_SUB, FN_SUB}, {"Mul", AR_MUL, FN_MUL},
    {"Div", AR_DIV, FN_DIV}, {"Pow", AR_POW, FN_MUL}, {"Max", AR_MAX, FN_SUB}, {"Min", AR_MIN, FN_SUB},
    {"Mean", AR_MEAN, FN_ADD}, {"Mod", AR_MOD, FN_DIV}, {"Equal", AR_EQ, FN_SUB}, {"Less", AR_LT, FN_SUB},
    {"LessOrEqual", AR_LE, FN_SUB}, {"Greater", AR_GT, FN_SUB}, {"GreaterOrEqual", AR_GE, FN_SUB},
    {"And", AR_AND, FN_MUL}, {"Or", AR_OR, FN_SUB}, {"Xor", AR_XOR, FN_SUB}, {"Where", AR_WHERE, FN_SUB},
    {"PRelu", AR_PRELU, FN_MUL},
    {"Identity", AR_ID, FN_NONE}, {"Cast", AR_ID, FN_SCALE}, {"Neg", AR_NEG, FN_SCALE}, {"Abs", AR_ABS, FN_SCALE},
    {"Sqrt", AR_SQRT, FN_SCALE}, {"Reciprocal", AR_RECIP, FN_SCALE}, {"Floor", AR_FLOOR, FN_SCALE},
    {"Ceil", AR_CEIL, FN_SCALE}, {"Round", AR_ROUND, FN_SCALE}, {"Not", AR_NOT, FN_SCALE}, {"Sign", AR_SIGN, FN_SCALE},
    {"Relu", AR_RELU, FN_RELU}, {"LeakyRelu", AR_OTHER, FN_RELU}, {"ThresholdedRelu", AR_OTHER, FN_RELU},
    {"Shrink", AR_OTHER, FN_RELU}, {"Exp", AR_EXP, FN_EXP}, {"Log", AR_LOG, FN_EXP}, {"Softplus", AR_OTHER, FN_EXP},
    {"Elu", AR_OTHER, FN_EXP}, {"Selu", AR_OTHER, FN_EXP}, {"Celu", AR_OTHER, FN_EXP}, {"Erf", AR_ERF, FN_TANH},
    {"Tanh", AR_TANH, FN_TANH}, {"Sigmoid", AR_SIGMOID, FN_SIGMOID}, {"HardSigmoid", AR_OTHER, FN_RELU6},
    {"HardSwish", AR_OTHER, FN_RELU6}, {"Softsign", AR_OTHER, FN_SCALE}, {"Mish", AR_OTHER, FN_TANH},
    {"Sin", AR_SIN, FN_TANH}, {"Cos", AR_COS, FN_TANH}, {"Gelu", AR_OTHER, FN_GELU}, {"Clip", AR_CLIP, FN_RELU6},
    {"IsNaN", AR_OTHER, FN_SCALE}, {"IsInf", AR_OTHER, FN_SCALE},
};

static double ar_unary(enum ox_ar ar, double a, int to_int)
{
    double r;
    switch (ar) {
    case AR_NEG: r = -a; break;
    case AR_ABS: r = fabs(a); break;
    case AR_SQRT: r = sqrt(a); break;
    case AR_RECIP: r = 1 / a; break;
    case AR_FLOOR: r = floor(a); break;
    case AR_CEIL: r = ceil(a); break;
    case AR_ROUND: r = nearbyint(a); break;
    case AR_NOT: r = !a; break;
    case AR_RELU: r = a > 0 ? a : 0; break;
    case AR_EXP: r = exp(a); break;
    case AR_LOG: r = log(a); break;
    case AR_ERF: r = erf(a); break;
    case AR_TANH: r = tanh(a); break;
    case AR_SIGMOID: r = 1 / (1 + exp(-a)); break;
    case AR_SIN: r = sin(a); break;
    case AR_COS: r = cos(a); break;
    case AR_SIGN: r = (a > 0) - (a < 0); break;
    default: r = a; break;
    }
    return to_int ? trunc(r) : r;
}

static double ar_binary(enum ox_ar ar, double a, double c, int is_int)
{
    switch (ar) {
    case AR_ADD: case AR_MEAN: return a + c;
    case AR_SUB: return a - c;
    case AR_MUL: return a * c;
    case AR_DIV: return is_int ? (c != 0 ? trunc(a / c) : 0) : a / c;
    case AR_POW: return pow(a, c);
    case AR_MAX: return a > c ? a : c;
    case AR_MIN: return a < c ? a : c;
    case AR_MOD: return c != 0 ? a - c * floor(a / c) : 0;
    case AR_EQ: return a == c;
    case AR_LT: return a < c;
    case AR_LE: return a <= c;
    case AR_GT: return a > c;
    case AR_GE: return a >= c;
    case AR_AND: return a && c;
    case AR_OR: return a || c;
    case AR_XOR: return !a != !c;
    case AR_PRELU: return a < 0 ? a * c : a;
    default: return a;
    }
}

static int h_ew(struct ox_b *b, const struct ox_node *n, int arg)
{
    const struct ox_ew *w = &ew_tab[arg];
    int binary = w->ar < AR_BINARY_END, rc, r = 0;
    int64_t d[OX_RANK];
    struct ox_live *x;
    if ((rc = need(b, n, 0, &x)))
        return rc;
    int nd = binary ? n->n_in : 1; /* data inputs (Clip's min and max are not: constants); count checked by arity() */
    r = x->rank;
    memcpy(d, x->dim, sizeof d);
    for (int k = 1; k < nd; k++) {
        struct ox_live *y;
        if ((rc = need(b, n, k, &y)) || (rc = bshape(b, n, r, d, y->rank, y->dim, &r, d)))
            return rc;
    }
    int elem = x->elem;
    if (w->ar >= AR_EQ && w->ar <= AR_GE)
        elem = OXE_BOOL;
    else if (w->ar == AR_WHERE)
        elem = IN(b, n, 1)->elem;
    else if (!strcmp(w->name, "Cast"))
        elem = (int)ai(n, "to", OXE_FLOAT);
    if ((rc = set_out(b, n, 0, r, d, elem)))
        return rc;
    struct ox_live *o = &b->v[n->out[0]];
    if (computable(b, n, o->elems) && w->ar < AR_OTHER) {
        double *c = scratch(b, o->elems);
        if (!c)
            return DSE_ERUNTIME;
        int to_int = elem_is_int(elem) && elem != OXE_BOOL;
        double lo = -INFINITY, hi = INFINITY;
        if (w->ar == AR_CLIP) {
            struct ox_live *mn = IN(b, n, 1), *mx = IN(b, n, 2);
            lo = mn && mn->n_c > 0 ? mn->c[0] : af(n, "min", -INFINITY);
            hi = mx && mx->n_c > 0 ? mx->c[0] : af(n, "max", INFINITY);
        }
        for (long i = 0; i < (long)o->elems; i++) {
            double a = x->c[bc_index(i, r, d, x->rank, x->dim)];
            if (w->ar == AR_WHERE) {
                struct ox_live *p = IN(b, n, 1), *q = IN(b, n, 2);
                c[i] = a ? p->c[bc_index(i, r, d, p->rank, p->dim)] : q->c[bc_index(i, r, d, q->rank, q->dim)];
            } else if (binary) {
                for (int k = 1; k < nd; k++) {
                    struct ox_live *y = IN(b, n, k);
                    a = ar_binary(w->ar, a, y->c[bc_index(i, r, d, y->rank, y->dim)], elem_is_int(x->elem));
                }
                c[i] = w->ar == AR_MEAN ? a / nd : a;
            } else if (w->ar == AR_CLIP) {
                c[i] = a < lo ? lo : a > hi ? hi : a;
            } else {
                c[i] = ar_unary(w->ar, a, to_int);
            }
            if (to_int && binary)
                c[i] = trunc(c[i]);
        }
        if ((rc = set_vals(b, n, 0, c)))
            return rc;
    }
    if (b->fold)
        return DSE_OK;
    if (w->fn == FN_NONE) /* Identity */
        return fin(b, n, 0, tin(b, n, 0));
    /* operands: the data inputs less static scalars, which fold into a unary operation */
    int L[64], nl = 0, scalar_exp = 0;
    for (int k = 0; k < nd; k++) {
        struct ox_live *y = IN(b, n, k);
        if (binary && y->stat && y->elems == 1 && nd > 1) {
            if (w->ar == AR_POW && k == 1 && y->n_c == 1)
                scalar_exp = y->c[0] != 1 && y->c[0] != 2 && y->c[0] != 0.5;
            continue;
        }
        L[nl++] = k;
    }
    if (nl == 0)
        L[nl++] = 0;
    if (!binary || nl == 1) {
        enum wl_fn fn = binary ? (scalar_exp ? FN_EXP : FN_SCALE) : w->fn;
        struct ox_live *y = IN(b, n, L[0]);
        int t = tin(b, n, L[0]), out = dst(b, n, 0, y->rank ? y->rank : 1, y->rank ? y->dim : (int64_t[]){1});
        int op = emit(b, n, OP_ELTWISE, &t, 1, out);
        if (op < 0)
            return b->e->code;
        b->g->op[op].fn = fn;
        return fin(b, n, 0, out);
    }
    int acc = -1, first = -1;
    for (int i = 0; i < nl && first < 0; i++)
        if (same_dims(IN(b, n, L[i])->rank, IN(b, n, L[i])->dim, r, d))
            first = i;
    if (first < 0) { /* no operand has the output's shape: one is broadcast to it first */
        int t = tin(b, n, L[0]), big = ttmp(b, n, r, d);
        if (emit(b, n, OP_COPY, &t, 1, big) < 0)
            return b->e->code;
        acc = big;
        first = 0;
    } else {
        acc = tin(b, n, L[first]);
    }
    int left = nl - 1;
    for (int i = 0; i < nl; i++) {
        if (i == first)
            continue;
        int in[2] = {acc, tin(b, n, L[i])}, out = --left == 0 ? dst(b, n, 0, r, d) : ttmp(b, n, r, d);
        int op = emit(b, n, OP_ELTWISE, in, 2, out);
        if (op < 0)
            return b->e->code;
        b->g->op[op].fn = w->fn;
        acc = out;
    }
    return fin(b, n, 0, acc);
}

/* ---- convolution and pooling ---- */

struct ox_win {
    int sp;                            /* spatial dimensions: 1 or 2 */
    int64_t k[2], s[2], pb[2], pe[2], out[2];
};

/* strides, pads (begin..., end...), auto_pad, dilations (only 1) and the output size over x's spatial
 * dimensions: floor((in + pad_begin + pad_end - k) / s) + 1, or ceil in ceil_mode. */
static int window(struct ox_b *b, const struct ox_node *n, const struct ox_live *x, const int64_t *kernel, int ceil_mode,
                  struct ox_win *w)
{
    int64_t st[4], pads[8], dil[4];
    int sp = x->rank - 2, ns = aints(b, n, "strides", st, 4), np = aints(b, n, "pads", pads, 8),
        nd = aints(b, n, "dilations", dil, 4);
    if (ns < 0 || np < 0 || nd < 0)
        return b->e->code;
    if ((ns && ns != sp) || (np && np != 2 * sp) || (nd && nd != sp))
        return bfail(b, n, "strides, pads or dilations do not match the %d spatial dimensions", sp);
    for (int i = 0; i < nd; i++)
        if (dil[i] != 1)
            return bfail(b, n, "dilations other than 1 are not modelled (dilation %lld)", (long long)dil[i]);
    const char *ap = as(n, "auto_pad", "NOTSET");
    int same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"), valid = !strcmp(ap, "VALID");
    if (!same && !valid && strcmp(ap, "NOTSET") && ap[0])
        return bfail(b, n, "auto_pad '%.20s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", ap);
    w->sp = sp;
    for (int i = 0; i < sp; i++) {
        int64_t in = x->dim[2 + i], k = kernel[i], s = ns ? st[i] : 1;
        if (k < 1 || s < 1 || k > 65536 || s > 65536)
            return bfail(b, n, "kernel %lld and stride %lld must be in 1..65536", (long long)k, (long long)s);
        if (same) {
            int64_t o = (in + s - 1) / s, total = (o - 1) * s + k - in;
            if (total < 0)
                total = 0;
            w->pb[i] = ap[5] == 'U' ? total / 2 : total - total / 2;
            w->pe[i] = total - w->pb[i];
        } else if (valid || !np) {
            w->pb[i] = w->pe[i] = 0;
        } else {
            w->pb[i] = pads[i];
            w->pe[i] = pads[i + sp];
        }
        if (w->pb[i] < 0 || w->pe[i] < 0 || w->pb[i] > 65536 || w->pe[i] > 65536)
            return bfail(b, n, "pads must be in 0..65536");
        int64_t span = in + w->pb[i] + w->pe[i] - k;
        if (span < 0)
            return bfail(b, n, "kernel %lld is larger than the padded input %lld", (long long)k,
                         (long long)(in + w->pb[i] + w->pe[i]));
        w->k[i] = k;
        w->s[i] = s;
        w->out[i] = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    }
    return DSE_OK;
}

/* dse's window attributes from w: 1-D windows run as 2-D ones of height 1. */
static void window_attrs(struct wl_op *op, const struct ox_win *w, int ceil_mode)
{
    int h = w->sp == 2 ? 0 : -1, v = w->sp - 1;
    op->sh = h < 0 ? 1 : (int)w->s[0];
    op->sw = (int)w->s[v];
    op->ph = h < 0 ? 0 : (int)(w->pb[0] < w->pe[0] ? w->pb[0] : w->pe[0]);
    op->ph_end = h < 0 ? 0 : (int)(w->pb[0] + w->pe[0] - 2 * op->ph);
    op->pw = (int)(w->pb[v] < w->pe[v] ? w->pb[v] : w->pe[v]);
    op->pw_end = (int)(w->pb[v] + w->pe[v] - 2 * op->pw);
    op->ceil_mode = ceil_mode;
}

/* x [N, C, L] as [N, C, 1, L] for dse's 2-D operators */
static void as4(const struct ox_live *x, int64_t *d)
{
    d[0] = x->dim[0];
    d[1] = x->dim[1];
    d[2] = x->rank == 4 ? x->dim[2] : 1;
    d[3] = x->dim[x->rank - 1];
}

static int spatial_ok(struct ox_b *b, const struct ox_node *n, const struct ox_live *x)
{
    if (x->rank == 5)
        return bfail(b, n, "3-D (volumetric) windows are not modelled");
    if (x->rank != 3 && x->rank != 4)
        return bfail(b, n, "input '%.80s' has rank %d; expected [N, C, H, W] or [N, C, L]", in_name(b, n, 0), x->rank);
    return DSE_OK;
}

enum { CV_CONV, CV_QLINEAR, CV_INTEGER };
static int h_conv(struct ox_b *b, const struct ox_node *n, int arg)
{
    int wi = arg == CV_QLINEAR ? 3 : 1, bi = arg == CV_QLINEAR ? 8 : arg == CV_CONV ? 2 : -1, rc;
    struct ox_live *x, *w;
    if ((rc = need(b, n, 0, &x)) || (rc = need(b, n, wi, &w)) || (rc = spatial_ok(b, n, x)))
        return rc;
    if (w->rank != x->rank)
        return bfail(b, n, "weight '%.80s' has rank %d, the input %d", in_name(b, n, wi), w->rank, x->rank);
    int64_t g = ai(n, "group", 1), C = x->dim[1], OC = w->dim[0], ks[2];
    if (g < 1 || g > 65536 || C % g || OC % g || w->dim[1] * g != C)
        return bfail(b, n, "group %lld: the weight's %lld input channels per group do not give the input's %lld",
                     (long long)g, (long long)w->dim[1], (long long)C);
    int nk = aints(b, n, "kernel_shape", ks, 2);
    if (nk < 0)
        return b->e->code;
    for (int i = 0; i < x->rank - 2; i++) {
        if (nk && ks[i] != w->dim[2 + i])
            return bfail(b, n, "kernel_shape disagrees with the weight's shape");
        ks[i] = w->dim[2 + i];
    }
    struct ox_win win;
    if ((rc = window(b, n, x, ks, 0, &win)))
        return rc;
    int64_t od[4] = {x->dim[0], OC, win.out[0], win.out[win.sp - 1]};
    if (win.sp == 1)
        od[2] = win.out[0];
    if ((rc = set_out(b, n, 0, x->rank, od, x->elem)) || b->fold)
        return rc;
    struct ox_live *bias = bi >= 0 ? IN(b, n, bi) : NULL;
    if (bias && bias->elems != (double)OC)
        return bfail(b, n, "bias '%.80s' has %.0f elements for %lld filters", in_name(b, n, bi), bias->elems,
                     (long long)OC);
    int64_t xd[4], wd[4] = {OC, w->dim[1], win.sp == 2 ? ks[0] : 1, ks[win.sp - 1]}, o4[4], bd[1] = {OC};
    as4(x, xd);
    o4[0] = od[0];
    o4[1] = OC;
    o4[2] = win.sp == 2 ? win.out[0] : 1;
    o4[3] = win.out[win.sp - 1];
    int in[3] = {tin_as(b, n, 0, 4, xd), tin_as(b, n, wi, 4, wd), bias ? tin_as(b, n, bi, 1, bd) : 0};
    int out = dst(b, n, 0, 4, o4), op = emit(b, n, OP_CONV2D, in, bias ? 3 : 2, out);
    if (op < 0)
        return b->e->code;
    b->g->op[op].groups = (int)g;
    window_attrs(&b->g->op[op], &win, 0);
    return fin(b, n, 0, out);
}

#define PL_MAX 0
#define PL_AVG 1
#define PL_GLOBAL 8
static int h_pool(struct ox_b *b, const struct ox_node *n, int arg)
{
    struct ox_live *x;
    int rc, global = arg & PL_GLOBAL, cm = (int)ai(n, "ceil_mode", 0);
    if ((rc = need(b, n, 0, &x)) || (rc = spatial_ok(b, n, x)))
        return rc;
    if (global && ai(n, "channels_last", 0)) /* QLinearGlobalAveragePool on [N, H, W, C]: the same work */
        return bfail(b, n, "channels_last pooling is not modelled");
    struct ox_win win = {.sp = x->rank - 2};
    int64_t od[4] = {x->dim[0], x->dim[1], 1, 1}, ks[2];
    if (!global) {
        int nk = aints(b, n, "kernel_shape", ks, 2);
        if (nk < 0)
            return b->e->code;
        if (nk != x->rank - 2)
            return bfail(b, n, "kernel_shape must give %d sizes", x->rank - 2);
        if ((rc = window(b, n, x, ks, cm, &win)))
            return rc;
        od[2] = win.out[0];
        od[3] = win.out[win.sp - 1];
    }
    if ((rc = set_out(b, n, 0, x->rank, od, x->elem)) || (rc = set_out(b, n, 1, x->rank, od, OXE_INT64)) || b->fold)
        return rc;
    int64_t xd[4], o4[4] = {od[0], od[1], global || win.sp == 1 ? 1 : od[2], x->rank == 3 ? od[2] : od[3]};
    as4(x, xd);
    int in = tin_as(b, n, 0, 4, xd), out = dst(b, n, 0, 4, o4), op = emit(b, n, OP_POOL, &in, 1, out);
    if (op < 0)
        return b->e->code;
    struct wl_op *p = &b->g->op[op];
    p->pool_max = (arg & 7) == PL_MAX;
    if (global)
        p->kh = p->kw = 0;
    else {
        p->kh = win.sp == 2 ? (int)win.k[0] : 1;
        p->kw = (int)win.k[win.sp - 1];
        window_attrs(p, &win, cm);
    }
    return fin(b, n, 0, out);
}

/* ---- matrix products ---- */

/* A batched product's operand t at the common leading shape (rank r, dims d): copied there when it
 * broadcasts (widen), else viewed. */
static int at_lead(struct ox_b *b, const struct ox_node *n, int t, int widen, int r, const int64_t *d)
{
    if (t < 0 || !widen)
        return view(b, n, t, r, d, -1);
    int big = ttmp(b, n, r, d);
    return emit(b, n, OP_COPY, &t, 1, big) < 0 ? -1 : big;
}

/* C = A B with numpy's rules: a 1-D A is a row, a 1-D B a column (both dropped from the result);
 * leading dimensions broadcast. B with no leading dimensions beyond 1 is one matrix (weights); else
 * the product is batched, operands broadcast to the common leading shape by a copy first. */
static int matmul_core(struct ox_b *b, const struct ox_node *n, int ai_, int bi_, int ci, int transb)
{
    struct ox_live *A, *B;
    int rc;
    if ((rc = need(b, n, ai_, &A)) || (rc = need(b, n, bi_, &B)))
        return rc;
    if (A->rank < 1 || B->rank < 1)
        return bfail(b, n, "operands must have rank >= 1");
    int64_t ad[OX_RANK + 1], bd[OX_RANK + 1];
    int ra = A->rank, rb = B->rank;
    memcpy(ad, A->dim, sizeof A->dim);
    memcpy(bd, B->dim, sizeof B->dim);
    if (ra == 1) { /* [K] -> [1, K] */
        ad[1] = ad[0];
        ad[0] = 1;
        ra = 2;
    }
    if (rb == 1) { /* [K] -> [K, 1] */
        bd[1] = 1;
        rb = 2;
    }
    int64_t M = ad[ra - 2], K = ad[ra - 1], K2 = bd[rb - (transb ? 1 : 2)], N = bd[rb - (transb ? 2 : 1)];
    if (K != K2)
        return bfail(b, n, "inner dimensions differ: '%.60s' has K = %lld, '%.60s' has K = %lld", in_name(b, n, ai_),
                     (long long)K, in_name(b, n, bi_), (long long)K2);
    int rl;
    int64_t lead[OX_RANK];
    if ((rc = bshape(b, n, ra - 2, ad, rb - 2, bd, &rl, lead)))
        return rc;
    int64_t od[OX_RANK + 2];
    int ro = 0;
    for (int i = 0; i < rl; i++)
        od[ro++] = lead[i];
    if (A->rank > 1)
        od[ro++] = M;
    if (B->rank > 1)
        od[ro++] = N;
    if ((rc = set_out(b, n, 0, ro, od, A->elem)) || b->fold)
        return rc;
    int b_single = prod(bd, 0, rb - 2) == 1; /* one matrix: weights, or an activation with unit leading dims */
    int64_t bm[2] = {bd[rb - 2], bd[rb - 1]};
    int tb = b_single ? tin_as(b, n, bi_, 2, bm) : -1, ta;
    int64_t full[OX_RANK + 2], md[OX_RANK + 2];
    int r;
    if (b_single) {
        ta = tin_as(b, n, ai_, ra, ad);
        r = ra;
        memcpy(md, ad, sizeof *md * (size_t)ra);
    } else { /* batched: both operands at the common leading shape */
        r = rl + 2;
        memcpy(full, lead, sizeof *lead * (size_t)rl);
        full[rl] = M;
        full[rl + 1] = K;
        int64_t fb[OX_RANK + 2];
        memcpy(fb, lead, sizeof *lead * (size_t)rl);
        fb[rl] = bd[rb - 2];
        fb[rl + 1] = bd[rb - 1];
        if ((ta = at_lead(b, n, tin_as(b, n, ai_, ra, ad), prod(ad, 0, ra - 2) != prod(lead, 0, rl), r, full)) < 0 ||
            (tb = at_lead(b, n, tin_as(b, n, bi_, rb, bd), prod(bd, 0, rb - 2) != prod(lead, 0, rl), r, fb)) < 0)
            return b->e->code;
        memcpy(md, full, sizeof *md * (size_t)r);
    }
    md[r - 1] = N;
    struct ox_live *C = ci >= 0 ? IN(b, n, ci) : NULL;
    int64_t nd1[1] = {N};
    int bias = C && C->stat && C->elems == (double)N && r >= 2;
    int in[3] = {ta, tb, bias ? tin_as(b, n, ci, 1, nd1) : 0};
    int out = C && !bias ? ttmp(b, n, r, md) : dst(b, n, 0, r, md), op = emit(b, n, OP_MATMUL, in, bias ? 3 : 2, out);
    if (op < 0)
        return b->e->code;
    b->g->op[op].transb = transb;
    if (C && !bias) { /* Gemm's C of [M, N] (or broadcast to it): an add */
        int in2[2] = {out, tin(b, n, ci)};
        int o2 = dst(b, n, 0, r, md), op2 = emit(b, n, OP_ELTWISE, in2, 2, o2);
        if (op2 < 0)
            return b->e->code;
        b->g->op[op2].fn = FN_ADD;
        out = o2;
    }
    return fin(b, n, 0, out);
}

enum { MM_PLAIN, MM_QLINEAR, MM_INTEGER };
static int h_matmul(struct ox_b *b, const struct ox_node *n, int arg)
{
    return matmul_core(b, n, 0, arg == MM_QLINEAR ? 3 : 1, -1, 0);
}

/* Gemm: Y = alpha A' B' + beta C (A' = A or its transpose); alpha and beta fold into the weights. */
static int h_gemm(struct ox_b *b, const struct ox_node *n, int arg)
{
    int bi = arg ? 3 : 1, ci = arg ? 6 : 2, rc;
    struct ox_live *A, *B;
    if ((rc = need(b, n, 0, &A)) || (rc = need(b, n, bi, &B)))
        return rc;
    if (A->rank != 2 || B->rank != 2)
        return bfail(b, n, "Gemm takes matrices, got ranks %d and %d", A->rank, B->rank);
    int ta = (int)ai(n, "transA", 0);
    if (ta && !A->stat)
        return bfail(b, n, "transA of a computed operand is not modelled");
    int64_t save = A->dim[0];
    if (ta) { /* a static A, folded transposed (its elements count once) */
        A->dim[0] = A->dim[1];
        A->dim[1] = save;
    }
    rc = matmul_core(b, n, 0, bi, IN(b, n, ci) ? ci : -1, (int)ai(n, "transB", 0));
    if (ta) {
        A->dim[1] = A->dim[0];
        A->dim[0] = save;
    }
    return rc;
}

/* ---- normalisation and softmax ---- */

/* BatchNormalization at inference: y = (x - mean) / sqrt(var + eps) scale + B, folded into one scale
 * and shift per channel: dse's batchnorm with a [2, C] parameter tensor (2C parameters). */
static int h_bn(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    struct ox_live *x;
    int rc;
    if ((rc = need(b, n, 0, &x)))
        return rc;
    if (n->n_in < 5)
        return bfail(b, n, "expects x, scale, B, mean and var");
    if (x->rank < 2)
        return bfail(b, n, "input '%.80s' has rank %d; expected [N, C, ...]", in_name(b, n, 0), x->rank);
    for (int k = 1; k < 5; k++) {
        struct ox_live *p;
        if ((rc = need(b, n, k, &p)))
            return rc;
        if (p->elems != (double)x->dim[1])
            return bfail(b, n, "input %d '%.80s' has %.0f elements for %lld channels", k, in_name(b, n, k), p->elems,
                         (long long)x->dim[1]);
        if (!p->stat && !b->fold)
            return bfail(b, n, "input %d '%.80s' is computed; dse folds batch statistics as constants", k,
                         in_name(b, n, k));
    }
    if ((rc = same_out(b, n, 0, x)) || b->fold)
        return rc;
    for (int k = 1; k < n->n_out; k++)
        if (n->out[k] >= 0 && (rc = set_out(b, n, k, 1, &x->dim[1], x->elem)))
            return rc;
    char nm[WL_NAME_LEN + 8];
    snprintf(nm, sizeof nm, "%.50s.bn", n->name);
    int64_t pd[2] = {2, x->dim[1]};
    int in[2] = {tin(b, n, 0), mk_tensor(b, n, nm, IN(b, n, 1)->weight ? WL_WEIGHT : WL_INPUT, 2, pd)};
    int out = tout(b, n, 0), op = emit(b, n, OP_ELTWISE, in, 2, out);
    if (op < 0)
        return b->e->code;
    b->g->op[op].fn = FN_BATCHNORM;
    return DSE_OK;
}

enum { NM_LAYER, NM_RMS, NM_SKIP_LAYER, NM_SKIP_RMS };
/* LayerNormalization (normalised over axis..end: viewed as [rows, D]), com.microsoft's
 * SimplifiedLayerNormalization (RMSNorm) and the Skip variants (input + skip [+ bias], then the norm;
 * their fourth output is that sum). */
static int h_norm(struct ox_b *b, const struct ox_node *n, int arg)
{
    struct ox_live *x, *sc;
    int skip = arg == NM_SKIP_LAYER || arg == NM_SKIP_RMS, rms = arg == NM_RMS || arg == NM_SKIP_RMS, rc;
    int si = skip ? 2 : 1, bi = arg == NM_LAYER ? 2 : arg == NM_SKIP_LAYER ? 3 : -1, bsi = skip ? (rms ? 3 : 4) : -1;
    if ((rc = need(b, n, 0, &x)) || (rc = need(b, n, si, &sc)))
        return rc;
    int axis = 0;
    if ((rc = norm_axis(b, n, skip ? -1 : ai(n, "axis", -1), x->rank, &axis)))
        return rc;
    double D = prod(x->dim, axis, x->rank);
    if (sc->elems != D)
        return bfail(b, n, "scale '%.80s' has %.0f elements; the normalised dimensions hold %.0f", in_name(b, n, si),
                     sc->elems, D);
    if ((rc = same_out(b, n, 0, x)))
        return rc;
    for (int k = 1; k < n->n_out && k < 3; k++) /* mean, inverse std dev: not computed (training outputs) */
        if ((rc = set_out(b, n, k, axis, x->dim, OXE_FLOAT)))
            return rc;
    if (skip && (rc = set_out(b, n, 3, x->rank, x->dim, x->elem)))
        return rc;
    if (b->fold)
        return DSE_OK;
    int t = tin(b, n, 0);
    if (skip) {
        int in[2] = {t, tin(b, n, 1)};
        int s1 = n->n_out > 3 && n->out[3] >= 0 && !(bsi < n->n_in && n->in[bsi] >= 0) ? tout(b, n, 3)
                                                                                       : ttmp(b, n, x->rank, x->dim);
        int op = emit(b, n, OP_ELTWISE, in, 2, s1);
        if (op < 0)
            return b->e->code;
        b->g->op[op].fn = FN_ADD;
        t = s1;
        if (bsi < n->n_in && n->in[bsi] >= 0) {
            int in2[2] = {t, tin(b, n, bsi)};
            int s2 = n->n_out > 3 && n->out[3] >= 0 ? tout(b, n, 3) : ttmp(b, n, x->rank, x->dim);
            if ((op = emit(b, n, OP_ELTWISE, in2, 2, s2)) < 0)
                return b->e->code;
            b->g->op[op].fn = FN_ADD;
            t = s2;
        }
    }
    int64_t rows[2] = {(int64_t)prod(x->dim, 0, axis), (int64_t)D}, d1[1] = {(int64_t)D};
    int flat = axis != x->rank - 1 || x->rank > WL_MAX_RANK;
    int xin = flat ? view(b, n, t, 2, rows, -1) : t;
    int in[3] = {xin, tin_as(b, n, si, 1, d1), bi >= 0 && bi < n->n_in && n->in[bi] >= 0 ? tin_as(b, n, bi, 1, d1) : -1};
    int nin = in[2] >= 0 ? 3 : 2;
    if (rms)
        nin = 2;
    int out = flat ? ttmp(b, n, 2, rows) : tout(b, n, 0), op = emit(b, n, rms ? OP_RMSNORM : OP_LAYERNORM, in, nin, out);
    if (op < 0)
        return b->e->code;
    return fin(b, n, 0, out);
}

static int h_softmax(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    struct ox_live *x;
    int rc, axis = 0;
    if ((rc = need(b, n, 0, &x)) || (rc = norm_axis(b, n, ai(n, "axis", b->x->opset >= 13 ? -1 : 1), x->rank, &axis)) ||
        (rc = same_out(b, n, 0, x)) || b->fold)
        return rc;
    int t = tin(b, n, 0), out = tout(b, n, 0);
    return emit(b, n, OP_SOFTMAX, &t, 1, out) < 0 ? b->e->code : DSE_OK;
}

/* ---- views and data movement ---- */

/* Output 0 has input 0's elements in another shape: free (a view); folded contents are copied. */
static int as_view(struct ox_b *b, const struct ox_node *n, int rank, const int64_t *dim)
{
    struct ox_live *x = IN(b, n, 0);
    int rc;
    if ((rc = set_out(b, n, 0, rank, dim, x->elem)))
        return rc;
    if (b->v[n->out[0]].elems != x->elems)
        return bfail(b, n, "gives %.0f elements from '%.80s' of %.0f", b->v[n->out[0]].elems, in_name(b, n, 0),
                     x->elems);
    if (x->n_c >= 0 && (rc = set_vals(b, n, 0, x->c)))
        return rc;
    if (b->fold)
        return DSE_OK;
    return fin(b, n, 0, tin(b, n, 0));
}

enum { VW_RESHAPE, VW_FLATTEN, VW_SQUEEZE, VW_UNSQUEEZE, VW_IDENTITY };
static int h_view(struct ox_b *b, const struct ox_node *n, int arg)
{
    struct ox_live *x;
    int rc, r = 0, cnt = 0;
    if ((rc = need(b, n, 0, &x)))
        return rc;
    int64_t d[OX_RANK], ax[OX_RANK * 2];
    if (arg == VW_IDENTITY) /* Identity, Dropout at inference (its mask output is not computed) */
        return as_view(b, n, x->rank, x->dim);
    if (arg == VW_RESHAPE) {
        int64_t sh[OX_RANK + 1];
        if (b->x->opset < 5)
            return bfail(b, n, "Reshape of opset < 5 (shape as an attribute) is not read");
        if ((rc = cints(b, n, 1, sh, OX_RANK, &r)))
            return rc;
        int infer = -1, allow0 = (int)ai(n, "allowzero", 0);
        double known = 1;
        for (int i = 0; i < r; i++) {
            if (sh[i] == 0 && !allow0) {
                if (i >= x->rank)
                    return bfail(b, n, "shape entry %d is 0 (copy) beyond the input's rank %d", i, x->rank);
                sh[i] = x->dim[i];
            }
            if (sh[i] == -1) {
                if (infer >= 0)
                    return bfail(b, n, "shape has two -1 entries");
                infer = i;
                continue;
            }
            if (sh[i] < 0)
                return bfail(b, n, "shape entry %d is %lld", i, (long long)sh[i]);
            known *= (double)sh[i];
        }
        if (infer >= 0) {
            if (known == 0 || fmod(x->elems, known) != 0)
                return bfail(b, n, "cannot infer the -1 entry: %.0f elements over %.0f", x->elems, known);
            sh[infer] = (int64_t)(x->elems / known);
        }
        return as_view(b, n, r, sh);
    }
    if (arg == VW_FLATTEN) {
        int axis = 0;
        if ((rc = norm_axis(b, n, ai(n, "axis", 1), x->rank + 1, &axis)))
            return rc;
        d[0] = (int64_t)prod(x->dim, 0, axis);
        d[1] = (int64_t)prod(x->dim, axis, x->rank);
        return as_view(b, n, 2, d);
    }
    int from_input = b->x->opset >= 13;
    if (from_input && n->n_in > 1 && n->in[1] >= 0) {
        if ((rc = cints(b, n, 1, ax, OX_RANK * 2, &cnt)))
            return rc;
    } else if (!from_input) {
        if ((cnt = aints(b, n, "axes", ax, OX_RANK * 2)) < 0)
            return b->e->code;
    }
    char mark[OX_RANK + 1] = {0};
    if (arg == VW_SQUEEZE) {
        for (int i = 0; i < cnt; i++) {
            int a = 0;
            if ((rc = norm_axis(b, n, ax[i], x->rank, &a)))
                return rc;
            if (x->dim[a] != 1)
                return bfail(b, n, "squeezes axis %d of size %lld", a, (long long)x->dim[a]);
            mark[a] = 1;
        }
        for (int i = 0; i < x->rank; i++)
            if (cnt ? !mark[i] : x->dim[i] != 1)
                d[r++] = x->dim[i];
        return as_view(b, n, r, d);
    }
    int out_rank = x->rank + cnt;
    if (out_rank > OX_RANK)
        return bfail(b, n, "output rank %d exceeds %d", out_rank, OX_RANK);
    for (int i = 0; i < cnt; i++) {
        int a = 0;
        if ((rc = norm_axis(b, n, ax[i], out_rank, &a)))
            return rc;
        if (mark[a])
            return bfail(b, n, "axis %d given twice", a);
        mark[a] = 1;
    }
    for (int i = 0, k = 0; i < out_rank; i++)
        d[i] = mark[i] ? 1 : x->dim[k++];
    return as_view(b, n, out_rank, d);
}

static int h_transpose(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    struct ox_live *x;
    int rc;
    if ((rc = need(b, n, 0, &x)))
        return rc;
    int64_t perm[OX_RANK], d[OX_RANK];
    int np = aints(b, n, "perm", perm, OX_RANK);
    if (np < 0)
        return b->e->code;
    if (!np)
        for (int i = 0; i < x->rank; i++)
            perm[i] = x->rank - 1 - i;
    else if (np != x->rank)
        return bfail(b, n, "perm has %d entries for rank %d", np, x->rank);
    char seen[OX_RANK] = {0};
    for (int i = 0; i < x->rank; i++) {
        if (perm[i] < 0 || perm[i] >= x->rank || seen[perm[i]]++)
            return bfail(b, n, "perm is not a permutation of the %d axes", x->rank);
        d[i] = x->dim[perm[i]];
    }
    if ((rc = set_out(b, n, 0, x->rank, d, x->elem)))
        return rc;
    struct ox_live *o = &b->v[n->out[0]];
    if (computable(b, n, o->elems)) {
        double *c = scratch(b, o->elems);
        if (!c)
            return DSE_ERUNTIME;
        int64_t st[OX_RANK];
        for (int i = x->rank - 1, s = 1; i >= 0; i--) {
            st[i] = s;
            s *= (int)x->dim[i];
        }
        for (long i = 0; i < (long)o->elems; i++) {
            long f = i, off = 0;
            for (int k = x->rank - 1; k >= 0; k--) {
                off += (f % d[k]) * st[perm[k]];
                f /= d[k];
            }
            c[i] = x->c[off];
        }
        if ((rc = set_vals(b, n, 0, c)))
            return rc;
    }
    if (b->fold)
        return DSE_OK;
    /* moving only unit axes keeps the memory order: a view */
    int last = -1, order = 1;
    for (int i = 0; i < x->rank && order; i++)
        if (x->dim[perm[i]] != 1) {
            order = perm[i] > last;
            last = (int)perm[i];
        }
    int t = tin(b, n, 0);
    if (order || x->rank > WL_MAX_RANK)
        return x->rank > WL_MAX_RANK && !order ? bfail(b, n, "rank %d exceeds %d", x->rank, WL_MAX_RANK)
                                               : fin(b, n, 0, t);
    int out = tout(b, n, 0), op = emit(b, n, OP_TRANSPOSE, &t, 1, out);
    if (op < 0)
        return b->e->code;
    for (int i = 0; i < x->rank; i++)
        b->g->op[op].perm[i] = (int)perm[i];
    return DSE_OK;
}

static int h_concat(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    struct ox_live *x;
    int rc, axis = 0;
    if ((rc = need(b, n, 0, &x)) || (rc = norm_axis(b, n, ai(n, "axis", 0), x->rank, &axis)))
        return rc;
    int64_t d[OX_RANK];
    memcpy(d, x->dim, sizeof d);
    d[axis] = 0;
    for (int k = 0; k < n->n_in; k++) {
        struct ox_live *y;
        if ((rc = need(b, n, k, &y)))
            return rc;
        if (y->rank != x->rank)
            return bfail(b, n, "inputs have ranks %d and %d", x->rank, y->rank);
        for (int i = 0; i < x->rank; i++)
            if (i != axis && y->dim[i] != x->dim[i])
                return bfail(b, n, "input %d differs in dimension %d (%lld vs %lld)", k, i, (long long)y->dim[i],
                             (long long)x->dim[i]);
        d[axis] += y->dim[axis];
    }
    if ((rc = set_out(b, n, 0, x->rank, d, x->elem)))
        return rc;
    struct ox_live *o = &b->v[n->out[0]];
    if (computable(b, n, o->elems)) {
        double *c = scratch(b, o->elems);
        if (!c)
            return DSE_ERUNTIME;
        double outer = prod(d, 0, axis), inner = prod(d, axis + 1, x->rank);
        long at = 0;
        for (long p = 0; p < (long)outer; p++)
            for (int k = 0; k < n->n_in; k++) {
                struct ox_live *y = IN(b, n, k);
                long blk = (long)(y->dim[axis] * inner);
                memcpy(c + at, y->c + p * blk, sizeof *c * (size_t)blk);
                at += blk;
            }
        if ((rc = set_vals(b, n, 0, c)))
            return rc;
    }
    if (b->fold)
        return DSE_OK;
    int parts[64], np = 0;
    for (int k = 0; k < n->n_in && np < 64; k++)
        if (IN(b, n, k)->elems > 0)
            parts[np++] = k;
    if (np == 1)
        return fin(b, n, 0, tin(b, n, parts[0]));
    int acc = -1;
    int64_t ad[OX_RANK];
    memcpy(ad, d, sizeof ad);
    ad[axis] = 0;
    for (int i = 0; i < np;) { /* dse's concat joins up to WL_MAX_IN: a chain for more */
        int in[WL_MAX_IN], m = 0;
        if (acc >= 0)
            in[m++] = acc;
        while (m < WL_MAX_IN && i < np) {
            ad[axis] += IN(b, n, parts[i])->dim[axis];
            in[m++] = tin(b, n, parts[i++]);
        }
        int out = i == np ? tout(b, n, 0) : ttmp(b, n, x->rank, ad);
        if (emit(b, n, OP_CONCAT, in, m, out) < 0)
            return b->e->code;
        b->g->op[b->g->n_op - 1].axis = axis;
        acc = out;
    }
    return DSE_OK;
}

/* a slice view of t along axis into out */
static int slice_view(struct ox_b *b, const struct ox_node *n, int t, int axis, int out)
{
    if (t < 0 || out < 0)
        return -1;
    int op = emit(b, n, OP_SLICE, &t, 1, out);
    if (op < 0)
        return -1;
    b->g->op[op].axis = axis;
    return out;
}

static int h_split(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    struct ox_live *x;
    int rc, axis = 0, cnt = 0;
    if ((rc = need(b, n, 0, &x)) || (rc = norm_axis(b, n, ai(n, "axis", 0), x->rank, &axis)))
        return rc;
    int64_t sp[64];
    if (n->n_out > 64)
        return bfail(b, n, "more than 64 outputs");
    if (b->x->opset >= 13 && n->n_in > 1 && n->in[1] >= 0) {
        if ((rc = cints(b, n, 1, sp, 64, &cnt)))
            return rc;
    } else if (b->x->opset < 13 && (cnt = aints(b, n, "split", sp, 64)) < 0) {
        return b->e->code;
    }
    int no = n->n_out;
    if (!cnt) { /* equal parts (opset 18: num_outputs, the last one smaller) */
        int64_t L = x->dim[axis], per = (L + no - 1) / no;
        if (!attr(n, "num_outputs") && L % no)
            return bfail(b, n, "axis %d of size %lld does not split into %d equal parts", axis, (long long)L, no);
        if (no > L)
            return bfail(b, n, "axis %d of size %lld cannot split into %d outputs (at most %lld)", axis, (long long)L,
                         no, (long long)L);
        for (int i = 0; i < no; i++) {
            sp[i] = L - per * i < per ? L - per * i : per;
            if (sp[i] < 0)
                sp[i] = 0;
        }
        cnt = no;
    }
    int64_t total = 0;
    for (int i = 0; i < cnt; i++) {
        if (sp[i] < 0 || sp[i] > WL_MAX_DIM)
            return bfail(b, n, "split size %lld out of range", (long long)sp[i]);
        total += sp[i];
    }
    if (cnt != no || total != x->dim[axis])
        return bfail(b, n, "split sizes (%d, summing to %lld) do not cover axis %d of size %lld in %d outputs", cnt,
                     (long long)total, axis, (long long)x->dim[axis], no);
    int64_t d[OX_RANK];
    memcpy(d, x->dim, sizeof d);
    double inner = prod(x->dim, axis + 1, x->rank), outer = prod(x->dim, 0, axis);
    int64_t at = 0;
    for (int k = 0; k < no; k++) {
        d[axis] = sp[k];
        if ((rc = set_out(b, n, k, x->rank, d, x->elem)))
            return rc;
        if (n->out[k] >= 0 && computable(b, n, b->v[n->out[k]].elems)) {
            double *c = scratch(b, b->v[n->out[k]].elems);
            if (!c)
                return DSE_ERUNTIME;
            long blk = (long)(sp[k] * inner), at2 = 0;
            for (long p = 0; p < (long)outer; p++, at2 += blk)
                memcpy(c + at2, x->c + (long)(p * x->dim[axis] * inner + at * inner), sizeof *c * (size_t)blk);
            if ((rc = set_vals(b, n, k, c)))
                return rc;
        }
        at += sp[k];
        if (!b->fold && n->out[k] >= 0 && sp[k] > 0 && slice_view(b, n, tin(b, n, 0), axis, tout(b, n, k)) < 0)
            return b->e->code;
    }
    return DSE_OK;
}

/* Slice: starts, ends, axes, steps (inputs from opset 10, attributes before), clamped as the operator
 * specifies. Unit steps are views (one slice per cut axis), others a strided copy. */
static int h_slice(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    struct ox_live *x;
    int rc, ns = 0, ne = 0, na = 0, nst = 0;
    if ((rc = need(b, n, 0, &x)))
        return rc;
    int64_t st[OX_RANK], en[OX_RANK], ax[OX_RANK], sp[OX_RANK];
    if (b->x->opset >= 10) {
        if ((rc = cints(b, n, 1, st, OX_RANK, &ns)) || (rc = cints(b, n, 2, en, OX_RANK, &ne)))
            return rc;
        if (IN(b, n, 3) && (rc = cints(b, n, 3, ax, OX_RANK, &na)))
            return rc;
        if (IN(b, n, 4) && (rc = cints(b, n, 4, sp, OX_RANK, &nst)))
            return rc;
    } else {
        if ((ns = aints(b, n, "starts", st, OX_RANK)) < 0 || (ne = aints(b, n, "ends", en, OX_RANK)) < 0 ||
            (na = aints(b, n, "axes", ax, OX_RANK)) < 0)
            return b->e->code;
    }
    if (ns != ne || (na && na != ns) || (nst && nst != ns))
        return bfail(b, n, "starts, ends, axes and steps differ in length");
    int64_t d[OX_RANK], first[OX_RANK] = {0}, step[OX_RANK];
    memcpy(d, x->dim, sizeof d);
    for (int i = 0; i < OX_RANK; i++)
        step[i] = 1;
    int strided = 0;
    char cut[OX_RANK] = {0};
    for (int i = 0; i < ns; i++) {
        int a = 0;
        if ((rc = norm_axis(b, n, na ? ax[i] : i, x->rank, &a)))
            return rc;
        int64_t L = x->dim[a], s = nst ? sp[i] : 1, lo = st[i], hi = en[i];
        if (s == 0)
            return bfail(b, n, "step 0");
        if (s > L + 1) /* a step past the end takes one element: bounded so the arithmetic cannot overflow */
            s = L + 1;
        else if (s < -(L + 1))
            s = -(L + 1);
        if (lo < 0)
            lo = lo < -L ? 0 : lo + L;
        if (hi < 0)
            hi = hi < -L ? -1 : hi + L;
        if (s > 0) {
            lo = lo > L ? L : lo;
            hi = hi > L ? L : hi;
            d[a] = hi > lo ? (hi - lo + s - 1) / s : 0;
        } else {
            lo = lo > L - 1 ? L - 1 : lo;
            hi = hi > L - 1 ? L - 1 : hi;
            d[a] = lo > hi ? (lo - hi - s - 1) / -s : 0;
        }
        first[a] = lo;
        step[a] = s;
        strided |= s != 1 && d[a] > 1;
        cut[a] = d[a] != L;
    }
    if ((rc = set_out(b, n, 0, x->rank, d, x->elem)))
        return rc;
    struct ox_live *o = &b->v[n->out[0]];
    if (computable(b, n, o->elems)) {
        double *c = scratch(b, o->elems);
        if (!c)
            return DSE_ERUNTIME;
        for (long i = 0; i < (long)o->elems; i++) {
            long f = i, off = 0, stride = 1;
            for (int k = x->rank - 1; k >= 0; k--) {
                long idx = d[k] ? f % d[k] : 0;
                f = d[k] ? f / d[k] : 0;
                off += (long)(first[k] + idx * step[k]) * stride;
                stride *= (long)x->dim[k];
            }
            c[i] = x->c[off];
        }
        if ((rc = set_vals(b, n, 0, c)))
            return rc;
    }
    if (b->fold)
        return DSE_OK;
    int t = tin(b, n, 0);
    if (strided) {
        int out = tout(b, n, 0);
        return emit(b, n, OP_COPY, &t, 1, out) < 0 ? b->e->code : DSE_OK;
    }
    int64_t cur[OX_RANK];
    memcpy(cur, x->dim, sizeof cur);
    int left = 0;
    for (int a = 0; a < x->rank; a++)
        left += cut[a];
    for (int a = 0; a < x->rank; a++) {
        if (!cut[a])
            continue;
        cur[a] = d[a];
        int out = --left == 0 ? tout(b, n, 0) : ttmp(b, n, x->rank, cur);
        if ((t = slice_view(b, n, t, a, out)) < 0)
            return b->e->code;
    }
    return fin(b, n, 0, t);
}

/* Gather: data's slices along axis picked by indices. A weight table of rank 2 read along axis 0 is an
 * embedding (only the picked rows read); anything else dse's gather. */
static int h_gather(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    struct ox_live *x, *ix;
    int rc, axis = 0;
    if ((rc = need(b, n, 0, &x)) || (rc = need(b, n, 1, &ix)) ||
        (rc = norm_axis(b, n, ai(n, "axis", 0), x->rank, &axis)))
        return rc;
    int r = x->rank - 1 + ix->rank, k = 0;
    if (r > OX_RANK)
        return bfail(b, n, "output rank %d exceeds %d", r, OX_RANK);
    int64_t d[OX_RANK];
    for (int i = 0; i < x->rank; i++)
        if (i == axis)
            for (int j = 0; j < ix->rank; j++)
                d[k++] = ix->dim[j];
        else
            d[k++] = x->dim[i];
    if ((rc = set_out(b, n, 0, r, d, x->elem)))
        return rc;
    struct ox_live *o = &b->v[n->out[0]];
    if (computable(b, n, o->elems)) {
        double *c = scratch(b, o->elems);
        if (!c)
            return DSE_ERUNTIME;
        long inner = (long)prod(x->dim, axis + 1, x->rank), L = (long)x->dim[axis], ni = (long)ix->elems;
        for (long i = 0; i < (long)o->elems; i++) {
            long in_ = i % inner, rest = i / inner, j = rest % (ni ? ni : 1), out_ = rest / (ni ? ni : 1);
            double qd = ix->c[j] < 0 ? ix->c[j] + (double)L : ix->c[j];
            if (!(qd >= 0 && qd < (double)L))
                return bfail(b, n, "index %g out of range for axis %d of size %ld", ix->c[j], axis, L);
            long q = (long)qd;
            c[i] = x->c[(out_ * L + q) * inner + in_];
        }
        if ((rc = set_vals(b, n, 0, c)))
            return rc;
    }
    if (b->fold)
        return DSE_OK;
    if (x->stat && x->rank == 2 && axis == 0 && ix->rank + 1 <= WL_MAX_RANK) {
        int in[2] = {tin(b, n, 1), tin(b, n, 0)}, out = dst(b, n, 0, ix->rank + 1, d);
        if (emit(b, n, OP_EMBEDDING, in, 2, out) < 0)
            return b->e->code;
        return fin(b, n, 0, out);
    }
    int64_t d1[OX_RANK]; /* a scalar index: dse gathers with a [1] index, the axis kept as 1 */
    memcpy(d1, x->dim, sizeof d1);
    d1[axis] = 1;
    int in[2] = {tin(b, n, 0), tin(b, n, 1)}, out = ix->rank ? tout(b, n, 0) : dst(b, n, 0, x->rank, d1);
    int op = emit(b, n, OP_GATHER, in, 2, out);
    if (op < 0)
        return b->e->code;
    b->g->op[op].axis = axis;
    return fin(b, n, 0, out);
}

/* ---- static sources: Shape, Size, Constant, ConstantOfShape, Range ---- */

static int h_shape(struct ox_b *b, const struct ox_node *n, int arg)
{
    struct ox_live *x;
    int rc;
    if ((rc = need(b, n, 0, &x)))
        return rc;
    double v[OX_RANK];
    int64_t one = 1, r = 0;
    if (arg) { /* Size */
        v[0] = x->elems;
        if ((rc = set_out(b, n, 0, 0, &one, OXE_INT64)))
            return rc;
    } else {
        int64_t lo = ai(n, "start", 0), hi = ai(n, "end", x->rank);
        lo = lo < 0 ? lo + x->rank : lo;
        hi = hi < 0 ? hi + x->rank : hi;
        lo = lo < 0 ? 0 : lo > x->rank ? x->rank : lo;
        hi = hi < 0 ? 0 : hi > x->rank ? x->rank : hi;
        for (int64_t i = lo; i < hi; i++)
            v[r++] = (double)x->dim[i];
        if ((rc = set_out(b, n, 0, 1, &r, OXE_INT64)))
            return rc;
    }
    return set_vals(b, n, 0, v);
}

static int h_constant(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    const struct ox_attr *a = n->n_attr == 1 ? &n->attr[0] : NULL;
    if (!a)
        return bfail(b, n, "expects exactly one attribute (value, value_float, value_int, ...)");
    int rc;
    int64_t one = 1;
    if (!strcmp(a->name, "value") && a->t >= 0) {
        const struct ox_val *t = &b->x->val[a->t];
        b->wsrc = t->rank > 0 && !elem_is_int(t->elem) ? 1 : t->elem == OXE_INT8 || t->elem == OXE_UINT8;
        if (prod(t->dim, 0, t->rank) <= 1)
            b->wsrc = 0;
        if ((rc = set_out(b, n, 0, t->rank, t->dim, t->elem)))
            return rc;
        return t->n_c >= 0 ? set_vals(b, n, 0, t->c) : DSE_OK;
    }
    double v[1];
    b->wsrc = 0;
    if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) {
        v[0] = a->name[6] == 'f' ? a->f : (double)a->i;
        if ((rc = set_out(b, n, 0, 0, &one, a->name[6] == 'f' ? OXE_FLOAT : OXE_INT64)))
            return rc;
        return set_vals(b, n, 0, v);
    }
    if (!strcmp(a->name, "value_floats") || !strcmp(a->name, "value_ints")) {
        int64_t m = a->name[6] == 'f' ? a->n_floats : a->n_ints;
        double *c = scratch(b, (double)m);
        if (!c)
            return DSE_ERUNTIME;
        for (int64_t i = 0; i < m; i++)
            c[i] = a->name[6] == 'f' ? a->floats[i] : (double)a->ints[i];
        if ((rc = set_out(b, n, 0, 1, &m, a->name[6] == 'f' ? OXE_FLOAT : OXE_INT64)))
            return rc;
        return set_vals(b, n, 0, c);
    }
    return bfail(b, n, "attribute '%.40s' is not read (value, value_float(s), value_int(s))", a->name);
}

static int h_const_of_shape(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    int64_t d[OX_RANK];
    int r, rc;
    if ((rc = cints(b, n, 0, d, OX_RANK, &r)))
        return rc;
    const struct ox_attr *a = attr(n, "value");
    const struct ox_val *t = a && a->t >= 0 ? &b->x->val[a->t] : NULL;
    double fill = t && t->n_c > 0 ? t->c[0] : 0;
    b->wsrc = 0; /* generated: never parameters */
    if ((rc = set_out(b, n, 0, r, d, t ? t->elem : OXE_FLOAT)))
        return rc;
    struct ox_live *o = &b->v[n->out[0]];
    if (o->elems <= OX_FOLD_MAX) {
        double *c = scratch(b, o->elems);
        if (!c)
            return DSE_ERUNTIME;
        for (long i = 0; i < (long)o->elems; i++)
            c[i] = fill;
        return set_vals(b, n, 0, c);
    }
    return DSE_OK;
}

static int h_range(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    struct ox_live *s, *l, *dl;
    int rc;
    if ((rc = need(b, n, 0, &s)) || (rc = need(b, n, 1, &l)) || (rc = need(b, n, 2, &dl)))
        return rc;
    if (s->n_c != 1 || l->n_c != 1 || dl->n_c != 1)
        return bfail(b, n, "start, limit and delta must be scalar constants dse can compute");
    double d0 = s->c[0], step = dl->c[0], m = step != 0 ? ceil((l->c[0] - d0) / step) : -1;
    if (step == 0 || !(m < WL_MAX_DIM))
        return bfail(b, n, "delta 0 or too many elements");
    int64_t len = m > 0 ? (int64_t)m : 0;
    b->wsrc = 0;
    if ((rc = set_out(b, n, 0, 1, &len, s->elem)))
        return rc;
    if (len <= OX_FOLD_MAX) {
        double *c = scratch(b, (double)len);
        if (!c)
            return DSE_ERUNTIME;
        for (int64_t i = 0; i < len; i++)
            c[i] = d0 + (double)i * step;
        return set_vals(b, n, 0, c);
    }
    return DSE_OK;
}

/* ---- copies: Expand, Tile, Pad, Resize/Upsample, DepthToSpace/SpaceToDepth, scatters ---- */

/* output 0 of shape (r, d) written from input 0 (and the data inputs listed): a copy; the same
 * elements as input 0: a view. */
static int copy_out(struct ox_b *b, const struct ox_node *n, int r, const int64_t *d, int extra)
{
    struct ox_live *x = IN(b, n, 0);
    int rc;
    if ((rc = set_out(b, n, 0, r, d, x->elem)) || b->fold)
        return rc;
    int in[WL_MAX_IN], m = 0;
    in[m++] = tin(b, n, 0);
    if (extra >= 0 && extra < n->n_in && n->in[extra] >= 0)
        in[m++] = tin(b, n, extra);
    if (m == 1 && same_dims(x->rank, x->dim, r, d))
        return fin(b, n, 0, in[0]);
    int out = tout(b, n, 0);
    return emit(b, n, OP_COPY, in, m, out) < 0 ? b->e->code : DSE_OK;
}

static int pad_ok(int64_t p) { return p >= -WL_MAX_DIM && p <= WL_MAX_DIM; }

enum { CP_EXPAND, CP_TILE, CP_PAD, CP_RESIZE, CP_UPSAMPLE, CP_D2S, CP_S2D, CP_SCATTER, CP_GATHER_EL };
static int h_copy(struct ox_b *b, const struct ox_node *n, int arg)
{
    struct ox_live *x;
    int rc, r, cnt = 0;
    if ((rc = need(b, n, 0, &x)))
        return rc;
    int64_t d[OX_RANK], v[2 * OX_RANK];
    r = x->rank;
    memcpy(d, x->dim, sizeof d);
    switch (arg) {
    case CP_EXPAND:
        if ((rc = cints(b, n, 1, v, OX_RANK, &cnt)) || (rc = bshape(b, n, x->rank, x->dim, cnt, v, &r, d)))
            return rc;
        if (computable(b, n, prod(d, 0, r))) {
            if ((rc = set_out(b, n, 0, r, d, x->elem)))
                return rc;
            double *c = scratch(b, prod(d, 0, r));
            if (!c)
                return DSE_ERUNTIME;
            for (long i = 0; i < (long)prod(d, 0, r); i++)
                c[i] = x->c[bc_index(i, r, d, x->rank, x->dim)];
            return set_vals(b, n, 0, c);
        }
        break;
    case CP_TILE:
        if ((rc = cints(b, n, 1, v, OX_RANK, &cnt)))
            return rc;
        if (cnt != r)
            return bfail(b, n, "repeats has %d entries for rank %d", cnt, r);
        for (int i = 0; i < r; i++) {
            if (v[i] < 0 || (double)v[i] * (double)d[i] > WL_MAX_DIM)
                return bfail(b, n, "repeats %lld out of range", (long long)v[i]);
            d[i] *= v[i];
        }
        break;
    case CP_PAD:
        if (b->x->opset >= 11) {
            if ((rc = cints(b, n, 1, v, 2 * OX_RANK, &cnt)))
                return rc;
        } else if ((cnt = aints(b, n, "pads", v, 2 * OX_RANK)) < 0) {
            return b->e->code;
        }
        if (IN(b, n, 3) && IN(b, n, 3)->n_c >= 0) { /* axes (opset 18) */
            int64_t axs[OX_RANK];
            int na;
            if ((rc = cints(b, n, 3, axs, OX_RANK, &na)))
                return rc;
            if (cnt != 2 * na)
                return bfail(b, n, "pads has %d entries for %d axes", cnt, na);
            for (int i = 0; i < na; i++) {
                int a = 0;
                if ((rc = norm_axis(b, n, axs[i], r, &a)))
                    return rc;
                if (!pad_ok(v[i]) || !pad_ok(v[i + na]))
                    return bfail(b, n, "pads %lld, %lld out of range", (long long)v[i], (long long)v[i + na]);
                d[a] += v[i] + v[i + na];
            }
        } else {
            if (cnt != 2 * r)
                return bfail(b, n, "pads has %d entries for rank %d", cnt, r);
            for (int i = 0; i < r; i++) {
                if (!pad_ok(v[i]) || !pad_ok(v[i + r]))
                    return bfail(b, n, "pads %lld, %lld out of range", (long long)v[i], (long long)v[i + r]);
                d[i] += v[i] + v[i + r];
            }
        }
        for (int i = 0; i < r; i++)
            if (d[i] < 0 || d[i] > WL_MAX_DIM)
                return bfail(b, n, "padding leaves dimension %d at %lld", i, (long long)d[i]);
        break;
    case CP_RESIZE:
    case CP_UPSAMPLE: {
        struct ox_live *sc = arg == CP_UPSAMPLE ? IN(b, n, 1) : IN(b, n, b->x->opset >= 11 ? 2 : 1);
        struct ox_live *sz = arg == CP_RESIZE && b->x->opset >= 11 ? IN(b, n, 3) : NULL;
        const struct ox_attr *sa = arg == CP_UPSAMPLE ? attr(n, "scales") : NULL;
        if (sz && sz->elems > 0) {
            int64_t szv[OX_RANK];
            if ((rc = cints(b, n, 3, szv, OX_RANK, &cnt)))
                return rc;
            if (cnt != r)
                return bfail(b, n, "sizes has %d entries for rank %d", cnt, r);
            memcpy(d, szv, sizeof *d * (size_t)r);
        } else if (sc && sc->elems > 0) {
            if (sc->n_c != r)
                return bfail(b, n, "scales must be a constant of %d values", r);
            for (int i = 0; i < r; i++) {
                double o = floor((double)x->dim[i] * sc->c[i]);
                if (!(sc->c[i] > 0) || !(o <= WL_MAX_DIM))
                    return bfail(b, n, "scale %g out of range", sc->c[i]);
                d[i] = (int64_t)o;
            }
        } else if (sa && sa->n_floats == r) {
            for (int i = 0; i < r; i++) {
                double o = floor((double)x->dim[i] * sa->floats[i]);
                if (!(o >= 0 && o <= WL_MAX_DIM))
                    return bfail(b, n, "scale %g out of range", sa->floats[i]);
                d[i] = (int64_t)o;
            }
        } else {
            return bfail(b, n, "needs scales or sizes");
        }
        break;
    }
    case CP_D2S:
    case CP_S2D: {
        int64_t bs = ai(n, "blocksize", 0);
        if (r != 4 || bs < 1 || bs > 65536 || (arg == CP_D2S ? x->dim[1] % (bs * bs) : x->dim[2] % bs || x->dim[3] % bs))
            return bfail(b, n, "blocksize %lld does not fit [N, C, H, W]", (long long)bs);
        if (arg == CP_D2S) {
            d[1] /= bs * bs;
            d[2] *= bs;
            d[3] *= bs;
        } else {
            d[1] *= bs * bs;
            d[2] /= bs;
            d[3] /= bs;
        }
        break;
    }
    case CP_SCATTER: /* ScatterND, ScatterElements: data's shape, updates read too */
        return copy_out(b, n, r, d, 2);
    case CP_GATHER_EL: { /* GatherElements: the indices' shape */
        struct ox_live *ix;
        if ((rc = need(b, n, 1, &ix)))
            return rc;
        return copy_out(b, n, ix->rank, ix->dim, 1);
    }
    }
    return copy_out(b, n, r, d, -1);
}

/* ---- reductions ---- */

enum { RD_SUM, RD_MEAN, RD_MAX, RD_MIN, RD_PROD, RD_OTHER, RD_ARGMAX, RD_ARGMIN };
/* Reduce* over axes (attribute, or input from opset 13 for ReduceSum and 18 for the rest; none: all
 * axes unless noop_with_empty_axes): dse reduces one axis at a time, the largest share first. */
static int h_reduce(struct ox_b *b, const struct ox_node *n, int arg)
{
    struct ox_live *x;
    int rc, cnt = 0, arg_red = arg == RD_ARGMAX || arg == RD_ARGMIN;
    if ((rc = need(b, n, 0, &x)))
        return rc;
    int64_t ax[OX_RANK], d[OX_RANK];
    int input_axes = arg == RD_SUM ? b->x->opset >= 13 : b->x->opset >= 18;
    if (arg_red) {
        ax[0] = ai(n, "axis", 0);
        cnt = 1;
    } else if (input_axes && IN(b, n, 1)) {
        if ((rc = cints(b, n, 1, ax, OX_RANK, &cnt)))
            return rc;
    } else if (!input_axes && (cnt = aints(b, n, "axes", ax, OX_RANK)) < 0) {
        return b->e->code;
    }
    char mark[OX_RANK] = {0};
    if (!cnt && ai(n, "noop_with_empty_axes", 0))
        return as_view(b, n, x->rank, x->dim);
    for (int i = 0; i < (cnt ? cnt : x->rank); i++) {
        int a = i;
        if (cnt && (rc = norm_axis(b, n, ax[i], x->rank, &a)))
            return rc;
        mark[a] = 1;
    }
    int keep = (int)ai(n, "keepdims", 1), r = 0;
    int64_t kd[OX_RANK];
    for (int i = 0; i < x->rank; i++) {
        kd[i] = mark[i] ? 1 : x->dim[i];
        if (!mark[i] || keep)
            d[r++] = kd[i];
    }
    if ((rc = set_out(b, n, 0, r, d, arg_red ? OXE_INT64 : x->elem)))
        return rc;
    struct ox_live *o = &b->v[n->out[0]];
    if (computable(b, n, o->elems) && arg <= RD_PROD) {
        double *c = scratch(b, o->elems);
        if (!c)
            return DSE_ERUNTIME;
        for (long i = 0; i < (long)o->elems; i++)
            c[i] = arg == RD_PROD ? 1 : arg == RD_MAX ? -INFINITY : arg == RD_MIN ? INFINITY : 0;
        for (long i = 0; i < (long)x->elems; i++) {
            long f = i, off = 0, stride = 1;
            for (int k = x->rank - 1; k >= 0; k--) {
                long idx = f % x->dim[k];
                f /= x->dim[k];
                if (!mark[k])
                    off += idx * stride;
                stride *= mark[k] ? 1 : (long)x->dim[k];
            }
            double a = x->c[i];
            c[off] = arg == RD_PROD ? c[off] * a : arg == RD_MAX ? (a > c[off] ? a : c[off])
                   : arg == RD_MIN ? (a < c[off] ? a : c[off]) : c[off] + a;
        }
        if (arg == RD_MEAN)
            for (long i = 0; i < (long)o->elems; i++)
                c[i] /= x->elems / o->elems;
        if ((rc = set_vals(b, n, 0, c)))
            return rc;
    }
    if (b->fold)
        return DSE_OK;
    int t = tin(b, n, 0);
    int64_t cur[OX_RANK];
    memcpy(cur, x->dim, sizeof cur);
    for (;;) { /* the largest remaining reduced axis first: it shrinks the data most */
        int a = -1;
        for (int i = 0; i < x->rank; i++)
            if (mark[i] && cur[i] > 1 && (a < 0 || cur[i] > cur[a]))
                a = i;
        if (a < 0)
            break;
        cur[a] = 1;
        int out = ttmp(b, n, x->rank, cur), op = emit(b, n, OP_REDUCE, &t, 1, out);
        if (op < 0)
            return b->e->code;
        b->g->op[op].axis = a;
        t = out;
    }
    return fin(b, n, 0, t);
}

/* TopK: values and indices of the k largest along axis, costed as one pass over the input (a copy). */
static int h_topk(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    struct ox_live *x;
    int rc, axis = 0, cnt;
    int64_t k[1], d[OX_RANK];
    if ((rc = need(b, n, 0, &x)) || (rc = norm_axis(b, n, ai(n, "axis", -1), x->rank, &axis)))
        return rc;
    if (b->x->opset >= 10) {
        if ((rc = cints(b, n, 1, k, 1, &cnt)))
            return rc;
        if (cnt != 1)
            return bfail(b, n, "input 1 '%.80s' (k) holds %d values (expected 1)", in_name(b, n, 1), cnt);
    } else {
        k[0] = ai(n, "k", 1);
    }
    if (k[0] < 1 || k[0] > x->dim[axis])
        return bfail(b, n, "k %lld out of range for axis %d of size %lld", (long long)k[0], axis,
                     (long long)x->dim[axis]);
    memcpy(d, x->dim, sizeof d);
    d[axis] = k[0];
    if ((rc = set_out(b, n, 0, x->rank, d, x->elem)) || (rc = set_out(b, n, 1, x->rank, d, OXE_INT64)) || b->fold)
        return rc;
    int t = tin(b, n, 0), out = tout(b, n, 0);
    if (emit(b, n, OP_COPY, &t, 1, out) < 0)
        return b->e->code;
    return n->n_out > 1 && n->out[1] >= 0 ? fin(b, n, 1, out) : DSE_OK;
}

/* ---- quantization ---- */

/* QuantizeLinear, DequantizeLinear: one scaling per element; of a static weight, folded. */
static int h_quant(struct ox_b *b, const struct ox_node *n, int arg)
{
    struct ox_live *x, *zp = IN(b, n, 2);
    int rc;
    if ((rc = need(b, n, 0, &x)) ||
        (rc = set_out(b, n, 0, x->rank, x->dim, arg ? OXE_FLOAT : zp ? zp->elem : OXE_UINT8)) || b->fold)
        return rc;
    int t = tin(b, n, 0), out = tout(b, n, 0), op = emit(b, n, OP_ELTWISE, &t, 1, out);
    if (op < 0)
        return b->e->code;
    b->g->op[op].fn = FN_SCALE;
    return DSE_OK;
}

/* DynamicQuantizeLinear: y, its scale and zero point from x's range: a reduction over all of x (the
 * scale) and a scaling per element. */
static int h_dynquant(struct ox_b *b, const struct ox_node *n, int arg)
{
    (void)arg;
    struct ox_live *x;
    int rc;
    int64_t one = 1;
    if ((rc = need(b, n, 0, &x)) || (rc = set_out(b, n, 0, x->rank, x->dim, OXE_UINT8)) ||
        (rc = set_out(b, n, 1, 0, &one, OXE_FLOAT)) || (rc = set_out(b, n, 2, 0, &one, OXE_UINT8)) || b->fold)
        return rc;
    int t = tin(b, n, 0), out = tout(b, n, 0), op = emit(b, n, OP_ELTWISE, &t, 1, out);
    if (op < 0)
        return b->e->code;
    b->g->op[op].fn = FN_SCALE;
    if (n->n_out > 1 && n->out[1] >= 0) {
        int64_t all[1] = {(int64_t)x->elems};
        int flat = view(b, n, t, 1, all, -1), sc = tout(b, n, 1);
        if ((op = emit(b, n, OP_REDUCE, &flat, 1, sc)) < 0)
            return b->e->code;
        if (n->n_out > 2 && n->out[2] >= 0 && fin(b, n, 2, sc))
            return b->e->code;
    }
    return DSE_OK;
}

/* The float counterpart of a quantized element-wise or concat operator (com.microsoft): the data
 * inputs are at the given positions, scales and zero points are not read as data. */
enum { QE_ADD, QE_MUL, QE_SIGMOID, QE_LEAKY, QE_CONCAT };
static int h_qelt(struct ox_b *b, const struct ox_node *n, int arg)
{
    struct ox_live *x;
    int rc;
    if ((rc = need(b, n, arg == QE_CONCAT ? 2 : 0, &x)))
        return rc;
    if (arg == QE_CONCAT) { /* Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per input */
        int axis = 0, np = 0, ins[64];
        if ((rc = norm_axis(b, n, ai(n, "axis", 0), x->rank, &axis)))
            return rc;
        int64_t d[OX_RANK];
        memcpy(d, x->dim, sizeof d);
        d[axis] = 0;
        for (int k = 2; k < n->n_in && np < 64; k += 3) {
            struct ox_live *y;
            if ((rc = need(b, n, k, &y)))
                return rc;
            if (!same_dims(y->rank, y->dim, x->rank, x->dim) && y->rank != x->rank)
                return bfail(b, n, "inputs differ in rank");
            d[axis] += y->dim[axis];
            ins[np++] = k;
        }
        if ((rc = set_out(b, n, 0, x->rank, d, x->elem)) || b->fold)
            return rc;
        int in[WL_MAX_IN], m = 0;
        if (np > WL_MAX_IN)
            return bfail(b, n, "more than %d inputs", WL_MAX_IN);
        for (int i = 0; i < np; i++)
            in[m++] = tin(b, n, ins[i]);
        if (m == 1)
            return fin(b, n, 0, in[0]);
        int out = tout(b, n, 0), op = emit(b, n, OP_CONCAT, in, m, out);
        if (op < 0)
            return b->e->code;
        b->g->op[op].axis = axis;
        return DSE_OK;
    }
    if (arg == QE_SIGMOID || arg == QE_LEAKY) {
        if ((rc = same_out(b, n, 0, x)) || b->fold)
            return rc;
        int t = tin(b, n, 0), out = tout(b, n, 0), op = emit(b, n, OP_ELTWISE, &t, 1, out);
        if (op < 0)
            return b->e->code;
        b->g->op[op].fn = arg == QE_SIGMOID ? FN_SIGMOID : FN_RELU;
        return DSE_OK;
    }
    struct ox_live *y; /* A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point */
    int r;
    int64_t d[OX_RANK];
    if ((rc = need(b, n, 3, &y)) || (rc = bshape(b, n, x->rank, x->dim, y->rank, y->dim, &r, d)) ||
        (rc = set_out(b, n, 0, r, d, x->elem)) || b->fold)
        return rc;
    int a = tin(b, n, 0), c = tin(b, n, 3);
    if (!same_dims(x->rank, x->dim, r, d)) { /* the broadcast operand second */
        int s = a;
        a = c;
        c = s;
    }
    int in[2] = {a, c}, out = dst(b, n, 0, r, d), op = emit(b, n, OP_ELTWISE, in, 2, out);
    if (op < 0)
        return b->e->code;
    b->g->op[op].fn = arg == QE_ADD ? FN_ADD : FN_MUL;
    return fin(b, n, 0, out);
}

/* com.microsoft Gelu, FastGelu and BiasGelu (x [+ bias], then GELU), QuickGelu (x sigmoid(a x)). */
static int h_gelu(struct ox_b *b, const struct ox_node *n, int arg)
{
    struct ox_live *x;
    int rc;
    if ((rc = need(b, n, 0, &x)) || (rc = same_out(b, n, 0, x)) || b->fold)
        return rc;
    int t = tin(b, n, 0);
    if (IN(b, n, 1)) {
        int in[2] = {t, tin(b, n, 1)}, s = ttmp(b, n, x->rank, x->dim), op = emit(b, n, OP_ELTWISE, in, 2, s);
        if (op < 0)
            return b->e->code;
        b->g->op[op].fn = FN_ADD;
        t = s;
    }
    int out = tout(b, n, 0), op = emit(b, n, OP_ELTWISE, &t, 1, out);
    if (op < 0)
        return b->e->code;
    b->g->op[op].fn = arg ? FN_SILU : FN_GELU;
    return DSE_OK;
}

/* ---- fused attention (com.microsoft) ---- */

/* Attention: input [B, S, D_in] @ weights [D_in, 3D] + bias, split into q, k, v of [B, S, D], then
 * scaled dot-product attention of num_heads heads (causal when unidirectional). Masks cost nothing
 * more (they only select); past key/value caches are not modelled. MultiHeadAttention: q, k, v given
 * (same length), its optional bias added. */
static int h_attention(struct ox_b *b, const struct ox_node *n, int arg)
{
    struct ox_live *x;
    int rc;
    int64_t heads = ai(n, "num_heads", 0);
    if ((rc = need(b, n, 0, &x)))
        return rc;
    if (heads < 1 || heads > 65536)
        return bfail(b, n, "num_heads %lld out of range", (long long)heads);
    if (x->rank != 3)
        return bfail(b, n, "input '%.80s' has rank %d; expected [batch, sequence, hidden]", in_name(b, n, 0), x->rank);
    int64_t B = x->dim[0], S = x->dim[1], D;
    if (arg == 0) {
        struct ox_live *w;
        if ((rc = need(b, n, 1, &w)))
            return rc;
        if (IN(b, n, 4))
            return bfail(b, n, "a past key/value input is not modelled");
        int64_t qkv[3];
        int nq = aints(b, n, "qkv_hidden_sizes", qkv, 3);
        if (nq < 0)
            return b->e->code;
        if (w->rank != 2 || w->dim[0] != x->dim[2] || (nq && (qkv[0] != qkv[1] || qkv[0] != qkv[2])) ||
            w->dim[1] % 3)
            return bfail(b, n, "weights must be [%lld, 3 x hidden] with equal q, k and v widths",
                         (long long)x->dim[2]);
        D = w->dim[1] / 3;
        if (D % heads)
            return bfail(b, n, "num_heads %lld does not divide the width %lld", (long long)heads, (long long)D);
        int64_t od[3] = {B, S, D};
        if ((rc = set_out(b, n, 0, 3, od, x->elem)) || b->fold)
            return rc;
        if (n->n_out > 1 && n->out[1] >= 0)
            return bfail(b, n, "the present key/value output is not modelled");
        int64_t qd[3] = {B, S, 3 * D}, dd[3] = {B, S, D}, b3[1] = {3 * D};
        struct ox_live *bias = IN(b, n, 2);
        int in[3] = {tin(b, n, 0), tin(b, n, 1), bias ? tin_as(b, n, 2, 1, b3) : 0};
        int all = ttmp(b, n, 3, qd), op = emit(b, n, OP_MATMUL, in, bias ? 3 : 2, all);
        if (op < 0)
            return b->e->code;
        int qkvt[3];
        for (int i = 0; i < 3; i++)
            if ((qkvt[i] = slice_view(b, n, all, 2, ttmp(b, n, 3, dd))) < 0)
                return b->e->code;
        int out = tout(b, n, 0);
        if ((op = emit(b, n, OP_ATTENTION, qkvt, 3, out)) < 0)
            return b->e->code;
        b->g->op[op].heads = (int)heads;
        b->g->op[op].causal = (int)ai(n, "unidirectional", 0);
        return DSE_OK;
    }
    struct ox_live *k = IN(b, n, 1), *v = IN(b, n, 2);
    if (!k || !v || k->rank != 3 || v->rank != 3)
        return bfail(b, n, "packed or 4-D key and value inputs are not modelled (expected [batch, length, hidden])");
    if (k->dim[1] != S || v->dim[1] != S)
        return bfail(b, n, "keys of another length than the queries (%lld vs %lld: cross attention) are not "
                     "modelled", (long long)k->dim[1], (long long)S);
    int64_t od[3] = {B, S, v->dim[2]};
    if (v->dim[2] != x->dim[2])
        return bfail(b, n, "value width %lld differs from the query width %lld", (long long)v->dim[2],
                     (long long)x->dim[2]);
    if ((rc = set_out(b, n, 0, 3, od, x->elem)) || b->fold)
        return rc;
    if (IN(b, n, 6) || IN(b, n, 7))
        return bfail(b, n, "past key/value inputs are not modelled");
    int qkvt[3] = {tin(b, n, 0), tin(b, n, 1), tin(b, n, 2)};
    int out = tout(b, n, 0), op = emit(b, n, OP_ATTENTION, qkvt, 3, out);
    if (op < 0)
        return b->e->code;
    b->g->op[op].heads = (int)heads;
    b->g->op[op].causal = (int)ai(n, "unidirectional", 0);
    return DSE_OK;
}

/* An operator dse does not model, with --unknown-ops=memory: each output (its shape input 0's) copied
 * from the node's data inputs, no arithmetic. */
static int h_unknown(struct ox_b *b, const struct ox_node *n)
{
    struct ox_live *x;
    int rc;
    if ((rc = need(b, n, 0, &x)))
        return bfail(b, n, "operator %s is not modelled and has no input to size it by", n->op);
    for (int k = 0; k < n->n_out; k++)
        if ((rc = same_out(b, n, k, x)))
            return rc;
    if (b->fold)
        return DSE_OK;
    int in[WL_MAX_IN], m = 0;
    for (int k = 0; k < n->n_in && m < WL_MAX_IN; k++)
        if (IN(b, n, k) && !IN(b, n, k)->stat)
            in[m++] = tin(b, n, k);
    if (!m)
        in[m++] = tin(b, n, 0);
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && emit(b, n, OP_COPY, in, m, tout(b, n, k)) < 0)
            return b->e->code;
    return DSE_OK;
}

/* ---- the operator table ----
 * name, handler, flags, handler parameter, and the inputs a node may list (min, max; -1: any), from the
 * operator's inputs in onnx/docs/Operators.md (ai.onnx, opsets 7-21: the widest count over them, e.g.
 * Tile's third input of opset 1) and ONNX Runtime's docs/ContribOperators.md (com.microsoft). */

static const struct ox_op ox_ops[] = {
    {"Conv", h_conv, 0, CV_CONV, 2, 3},
    {"ConvInteger", h_conv, OXF_QUANT, CV_INTEGER, 2, 4},
    {"QLinearConv", h_conv, OXF_QUANT, CV_QLINEAR, 8, 9},
    {"MaxPool", h_pool, 0, PL_MAX, 1, 1},
    {"AveragePool", h_pool, 0, PL_AVG, 1, 1},
    {"LpPool", h_pool, 0, PL_AVG, 1, 1},
    {"GlobalAveragePool", h_pool, 0, PL_AVG | PL_GLOBAL, 1, 1},
    {"GlobalMaxPool", h_pool, 0, PL_MAX | PL_GLOBAL, 1, 1},
    {"GlobalLpPool", h_pool, 0, PL_AVG | PL_GLOBAL, 1, 1},
    {"MatMul", h_matmul, 0, MM_PLAIN, 2, 2},
    {"MatMulInteger", h_matmul, OXF_QUANT, MM_INTEGER, 2, 4},
    {"QLinearMatMul", h_matmul, OXF_QUANT, MM_QLINEAR, 8, 8},
    {"Gemm", h_gemm, 0, 0, 2, 3},
    {"BatchNormalization", h_bn, 0, 0, 5, 5},
    {"LayerNormalization", h_norm, 0, NM_LAYER, 2, 3},
    {"SimplifiedLayerNormalization", h_norm, 0, NM_RMS, 2, 3},
    {"Softmax", h_softmax, 0, 0, 1, 1},
    {"LogSoftmax", h_softmax, 0, 0, 1, 1},
    {"Reshape", h_view, 0, VW_RESHAPE, 1, 2},
    {"Flatten", h_view, 0, VW_FLATTEN, 1, 1},
    {"Squeeze", h_view, 0, VW_SQUEEZE, 1, 2},
    {"Unsqueeze", h_view, 0, VW_UNSQUEEZE, 1, 2},
    {"Dropout", h_view, 0, VW_IDENTITY, 1, 3},
    {"Transpose", h_transpose, 0, 0, 1, 1},
    {"Concat", h_concat, 0, 0, 1, -1},
    {"Split", h_split, 0, 0, 1, 2},
    {"Slice", h_slice, 0, 0, 1, 5},
    {"Gather", h_gather, 0, 0, 2, 2},
    {"Shape", h_shape, OXF_SHAPE, 0, 1, 1},
    {"Size", h_shape, OXF_SHAPE, 1, 1, 1},
    {"Constant", h_constant, 0, 0, 0, 0},
    {"ConstantOfShape", h_const_of_shape, 0, 0, 1, 1},
    {"Range", h_range, 0, 0, 3, 3},
    {"Expand", h_copy, 0, CP_EXPAND, 2, 2},
    {"Tile", h_copy, 0, CP_TILE, 2, 3},
    {"Pad", h_copy, 0, CP_PAD, 1, 4},
    {"Resize", h_copy, 0, CP_RESIZE, 1, 4},
    {"Upsample", h_copy, 0, CP_UPSAMPLE, 1, 2},
    {"DepthToSpace", h_copy, 0, CP_D2S, 1, 1},
    {"SpaceToDepth", h_copy, 0, CP_S2D, 1, 1},
    {"ScatterND", h_copy, 0, CP_SCATTER, 3, 3},
    {"ScatterElements", h_copy, 0, CP_SCATTER, 3, 3},
    {"GatherElements", h_copy, 0, CP_GATHER_EL, 2, 2},
    {"ReduceSum", h_reduce, 0, RD_SUM, 1, 2},
    {"ReduceMean", h_reduce, 0, RD_MEAN, 1, 2},
    {"ReduceMax", h_reduce, 0, RD_MAX, 1, 2},
    {"ReduceMin", h_reduce, 0, RD_MIN, 1, 2},
    {"ReduceProd", h_reduce, 0, RD_PROD, 1, 2},
    {"ReduceL1", h_reduce, 0, RD_OTHER, 1, 2},
    {"ReduceL2", h_reduce, 0, RD_OTHER, 1, 2},
    {"ReduceLogSum", h_reduce, 0, RD_OTHER, 1, 2},
    {"ReduceLogSumExp", h_reduce, 0, RD_OTHER, 1, 2},
    {"ReduceSumSquare", h_reduce, 0, RD_OTHER, 1, 2},
    {"ArgMax", h_reduce, 0, RD_ARGMAX, 1, 1},
    {"ArgMin", h_reduce, 0, RD_ARGMIN, 1, 1},
    {"TopK", h_topk, 0, 0, 1, 2},
    {"QuantizeLinear", h_quant, OXF_QUANT, 0, 2, 3},
    {"DequantizeLinear", h_quant, OXF_QUANT, 1, 2, 3},
    {"DynamicQuantizeLinear", h_dynquant, OXF_QUANT, 0, 1, 1},
    /* com.microsoft (ONNX Runtime's contrib operators) */
    {"QGemm", h_gemm, OXF_MS | OXF_QUANT, 1, 6, 9},
    {"QLinearAveragePool", h_pool, OXF_MS | OXF_QUANT, PL_AVG, 4, 5},
    {"QLinearGlobalAveragePool", h_pool, OXF_MS | OXF_QUANT, PL_AVG | PL_GLOBAL, 4, 5},
    {"QLinearAdd", h_qelt, OXF_MS | OXF_QUANT, QE_ADD, 7, 8},
    {"QLinearMul", h_qelt, OXF_MS | OXF_QUANT, QE_MUL, 7, 8},
    {"QLinearSigmoid", h_qelt, OXF_MS | OXF_QUANT, QE_SIGMOID, 4, 5},
    {"QLinearLeakyRelu", h_qelt, OXF_MS | OXF_QUANT, QE_LEAKY, 4, 5},
    {"QLinearConcat", h_qelt, OXF_MS | OXF_QUANT, QE_CONCAT, 3, -1},
    {"QuantizeLinear", h_quant, OXF_MS | OXF_QUANT, 0, 2, 3},
    {"DequantizeLinear", h_quant, OXF_MS | OXF_QUANT, 1, 2, 3},
    {"SimplifiedLayerNormalization", h_norm, OXF_MS, NM_RMS, 2, 3},
    {"SkipLayerNormalization", h_norm, OXF_MS, NM_SKIP_LAYER, 3, 5},
    {"SkipSimplifiedLayerNormalization", h_norm, OXF_MS, NM_SKIP_RMS, 3, 4},
    {"Gelu", h_gelu, OXF_MS, 0, 1, 1},
    {"FastGelu", h_gelu, OXF_MS, 0, 1, 2},
    {"BiasGelu", h_gelu, OXF_MS, 0, 2, 2},
    {"QuickGelu", h_gelu, OXF_MS, 1, 1, 1},
    {"Attention", h_attention, OXF_MS, 0, 1, 8},
    {"MultiHeadAttention", h_attention, OXF_MS, 1, 1, 10},
};
static const struct ox_op ox_ew_op = {"(element-wise)", h_ew, 0, 0, 1, -1}; /* arity: per op, arity() */

const struct ox_op *ox_find_op(const char *name, int ms, int *arg)
{
    for (size_t i = 0; i < sizeof ox_ops / sizeof ox_ops[0]; i++)
        if (!strcmp(ox_ops[i].name, name) && !(ox_ops[i].flags & OXF_MS) == !ms) {
            *arg = ox_ops[i].arg;
            return &ox_ops[i];
        }
    for (size_t i = 0; !ms && i < sizeof ew_tab / sizeof ew_tab[0]; i++)
        if (!strcmp(ew_tab[i].name, name)) {
            *arg = (int)i;
            return &ox_ew_op;
        }
    *arg = 0;
    return NULL;
}

/* whether a folded node's outputs hold fewer elements than one of its weight inputs */
static int picks(struct ox_b *b, const struct ox_node *n)
{
    double most = 0, out = 0;
    for (int k = 0; k < n->n_in; k++)
        if (n->in[k] >= 0 && b->v[n->in[k]].weight && b->v[n->in[k]].elems > most)
            most = b->v[n->in[k]].elems;
    for (int k = 0; k < n->n_out; k++)
        if (n->out[k] >= 0 && b->v[n->out[k]].set && b->v[n->out[k]].elems > out)
            out = b->v[n->out[k]].elems;
    return out < most;
}

/* The inputs node n may list: its operator's, an element-wise one's from its arithmetic (Where three,
 * Clip one to three, Sum, Mean, Max and Min any number from one, other binary ops two, the rest one). */
static void arity(const struct ox_node *n, int *lo, int *hi)
{
    *lo = n->h->min_in;
    *hi = n->h->max_in;
    if (n->h->fn != h_ew)
        return;
    enum ox_ar a = ew_tab[n->arg].ar;
    if (a == AR_WHERE)
        *lo = *hi = 3;
    else if (a == AR_CLIP)
        *lo = 1, *hi = 3;
    else if (!strcmp(ew_tab[n->arg].name, "Sum") || a == AR_MEAN || a == AR_MAX || a == AR_MIN)
        *lo = 1, *hi = -1;
    else if (a < AR_BINARY_END)
        *lo = *hi = 2;
    else
        *lo = *hi = 1;
}

/* Refuses a node listing fewer or more inputs than its operator takes, or omitting its first. */
static int check_arity(struct ox_b *b, const struct ox_node *n)
{
    int lo, hi;
    arity(n, &lo, &hi);
    if (n->n_in < lo || (hi >= 0 && n->n_in > hi)) {
        char want[48];
        if (lo == hi)
            snprintf(want, sizeof want, "%d", lo);
        else if (hi < 0)
            snprintf(want, sizeof want, "at least %d", lo);
        else
            snprintf(want, sizeof want, "%d to %d", lo, hi);
        return bfail(b, n, "takes %s input%s, got %d", want, lo == 1 && hi == 1 ? "" : "s", n->n_in);
    }
    if (lo > 0 && n->in[0] < 0)
        return bfail(b, n, "input 0 is omitted (it is required)");
    return DSE_OK;
}

/* Runs node n's handler: its shapes, and dse operators unless its inputs are all static (then folded).
 * shapes_only: the shapes alone, outputs left computed (an attention chain's deferred nodes). */
static int run_node(struct ox_b *b, const struct ox_node *n, int shapes_only)
{
    int all = 1, rc;
    b->fold = n->h && (n->h->flags & OXF_SHAPE);
    b->wsrc = 0;
    for (int k = 0; k < n->n_in; k++) {
        int vi = n->in[k];
        if (vi < 0)
            continue;
        if (!b->v[vi].set)
            return bfail(b, n, "input %d '%.80s' is an output dse does not compute", k, b->x->val[vi].name);
        all &= b->v[vi].stat;
        b->wsrc |= b->v[vi].weight;
    }
    if (n->h && (rc = check_arity(b, n)))
        return rc;
    b->fold |= all || shapes_only;
    b->ops_node = 0;
    rc = n->h ? n->h->fn(b, n, n->arg) : h_unknown(b, n);
    if (!rc && shapes_only)
        for (int k = 0; k < n->n_out; k++)
            if (n->out[k] >= 0) {
                struct ox_live *o = &b->v[n->out[k]];
                o->stat = o->weight = 0;
                o->n_c = -1;
                o->c = NULL;
            }
    if (!rc && !shapes_only && b->fold && b->wsrc && !(n->h && (n->h->flags & OXF_SHAPE)) && picks(b, n)) {
        b->fold = 0; /* part of a weight (a Gather or Slice of a table): read at run time, the table counted */
        rc = n->h ? n->h->fn(b, n, n->arg) : h_unknown(b, n);
    }
    return rc;
}

/* ---- attention as exporters write it ----
 * MatMul(Q, K^T) [-> Div or Mul by a static scalar] [-> Add(mask)] -> Softmax(last axis) -> MatMul(., V)
 * with Q [B, H, S, D], K^T [B, H, D, T], V [B, H, T, D], each intermediate read once: one dse attention
 * of H heads (keys and values viewed as [B, T, H D]; T > S: the first T - S rows as the cache), so
 * that software stacks fuse it as they fuse the builders' attention. Not causal: the exported graph
 * computes every score (a mask only selects), and so does dse. The chain's nodes before the last
 * MatMul are deferred (their shapes inferred, no operators) until the last MatMul shows V fits;
 * otherwise they are emitted as written. */
#define OX_OPEN_CHAINS 16
struct ox_chain {
    int node[4], n; /* deferred nodes, in order: the first MatMul, scale, mask, Softmax */
    int last;       /* the final MatMul's node index, -1: no chain open */
};

static int is_op(const struct ox_node *n, const char *op) { return n->h && !(n->h->flags & OXF_MS) && !strcmp(n->op, op); }

static int chain_open(struct ox_b *b, int i, char *state, struct ox_chain *ch)
{
    const struct wl_onnx *x = b->x;
    const struct ox_node *m1 = &x->node[i];
    struct ox_live *Q = IN(b, m1, 0), *K = IN(b, m1, 1);
    if (!Q || !K || Q->stat || K->stat || Q->rank != 4 || K->rank != 4 || Q->dim[0] != K->dim[0] ||
        Q->dim[1] != K->dim[1] || Q->dim[3] != K->dim[2] || m1->n_out != 1 || m1->out[0] < 0)
        return 0;
    int v = m1->out[0], scale = 0, mask = 0, n = 0;
    ch->node[n++] = i;
    for (;;) {
        if (x->val[v].uses != 1)
            return 0;
        int j = x->val[v].user;
        const struct ox_node *c = &x->node[j];
        if (c->n_in != (is_op(c, "Softmax") ? 1 : 2) || c->n_out < 1 || c->in[0] < 0)
            return 0;
        if (is_op(c, "Softmax")) {
            int64_t ax = ai(c, "axis", x->opset >= 13 ? -1 : 1);
            int sv = c->out[0];
            if ((ax != -1 && ax != 3) || sv < 0 || x->val[sv].uses != 1)
                return 0;
            const struct ox_node *m2 = &x->node[x->val[sv].user];
            if (!is_op(m2, "MatMul") || m2->n_in != 2 || m2->in[0] != sv)
                return 0;
            ch->node[n++] = j;
            ch->n = n;
            ch->last = x->val[sv].user;
            break;
        }
        int other = c->in[0] == v ? c->in[1] : c->in[0];
        if (other < 0 || !b->v[other].set) /* its operand not yet computed: no chain */
            return 0;
        if ((is_op(c, "Div") || is_op(c, "Mul")) && !scale && c->in[0] == v && b->v[other].stat &&
            b->v[other].elems == 1)
            scale = 1;
        else if (is_op(c, "Add") && !mask)
            mask = 1;
        else
            return 0;
        ch->node[n++] = j;
        v = c->out[0];
        if (v < 0 || n >= 4)
            return 0;
    }
    for (int k = 0; k < ch->n; k++) { /* shapes now; operators when the last MatMul decides */
        int rc = run_node(b, &x->node[ch->node[k]], 1);
        if (rc)
            return -rc;
        state[ch->node[k]] = 1;
    }
    return 1;
}

/* The chain's one attention, or 1 when V does not fit (the caller emits the nodes as written). */
static int chain_close(struct ox_b *b, const struct ox_chain *ch)
{
    const struct ox_node *m1 = &b->x->node[ch->node[0]], *m2 = &b->x->node[ch->last];
    struct ox_live *Q = IN(b, m1, 0), *K = IN(b, m1, 1), *V = IN(b, m2, 1);
    int64_t B = Q->dim[0], H = Q->dim[1], S = Q->dim[2], D = Q->dim[3], T = K->dim[3];
    if (!V || !V->set || V->stat || V->rank != 4 || V->dim[0] != B || V->dim[1] != H || V->dim[2] != T ||
        V->dim[3] != D || T < S || (double)H * D > WL_MAX_DIM)
        return 1;
    int64_t od[4] = {B, H, S, D}, qd[3] = {B, S, H * D}, kd[3] = {B, T, H * D}, nd[3] = {B, S, H * D},
            pd[3] = {B, T - S, H * D};
    int rc;
    b->fold = 0;
    b->ops_node = 0;
    if ((rc = set_out(b, m2, 0, 4, od, Q->elem)))
        return -rc;
    int in[5] = {view(b, m1, tin(b, m1, 0), 3, qd, -1), view(b, m1, tin(b, m1, 1), 3, kd, -1),
                 view(b, m2, tin(b, m2, 1), 3, kd, -1), 0, 0}, nin = 3;
    if (T > S) { /* keys beyond the queries: the leading T - S rows as the cache */
        int kall = in[1], vall = in[2];
        in[1] = slice_view(b, m2, kall, 1, ttmp(b, m2, 3, nd));
        in[2] = slice_view(b, m2, vall, 1, ttmp(b, m2, 3, nd));
        in[3] = slice_view(b, m2, kall, 1, ttmp(b, m2, 3, pd));
        in[4] = slice_view(b, m2, vall, 1, ttmp(b, m2, 3, pd));
        nin = 5;
    }
    int out = ttmp(b, m2, 3, qd), op = emit(b, m2, OP_ATTENTION, in, nin, out);
    if (op < 0)
        return -b->e->code;
    b->g->op[op].heads = (int)H;
    b->g->op[op].causal = 0;
    rc = fin(b, m2, 0, out);
    return rc ? -rc : 0;
}

int wl_onnx_build(const struct wl_onnx *x, const char *name, const struct wl_shape *s, struct wl_graph *g,
                  struct dse_err *e)
{
    struct ox_b b = {.x = x, .s = s, .g = g, .e = e};
    struct ox_chain open[OX_OPEN_CHAINS]; /* attention chains waiting for their last MatMul */
    int rc = DSE_OK, n_open = 0;
    wl_graph_init(g, name);
    if (s->batch > 1 && !(follows(x) & 1))
        return dse_err_set(e, DSE_EINPUT, x->file, NULL, "batch %lld: the model's inputs have a fixed batch (no "
                           "dynamic batch dimension); export it with one, or evaluate batch 1", (long long)s->batch);
    char *state = calloc((size_t)x->n_node + 1, 1); /* 1: an attention chain's node, already handled */
    if (!state || !(b.v = calloc((size_t)x->n_val + 1, sizeof *b.v))) {
        free(state);
        return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory");
    }
    for (int i = 0; i < x->n_val; i++) {
        const struct ox_val *o = &x->val[i];
        struct ox_live *v = &b.v[i];
        v->t = -1;
        v->n_c = -1;
        if (o->src != OXV_INIT && o->src != OXV_INPUT)
            continue;
        v->set = 1;
        v->rank = o->rank;
        v->elem = o->elem;
        v->elems = 1;
        for (int k = 0; k < o->rank; k++) {
            v->dim[k] = o->dim[k] == OXD_BATCH ? s->batch : o->dim[k] == OXD_TOKENS ? s->tokens : o->dim[k];
            v->elems *= (double)v->dim[k];
        }
        if (o->src == OXV_INIT) {
            v->stat = 1;
            v->weight = v->elems > 1 && o->elem != OXE_INT64 && o->elem != OXE_UINT64 && o->elem != OXE_BOOL &&
                        o->elem != OXE_STRING;
            v->n_c = o->n_c;
            v->c = o->c;
        }
    }
    for (int i = 0; i < x->n_node && !rc; i++) {
        const struct ox_node *n = &x->node[i];
        if (state[i])
            continue;
        int c = 0;
        while (c < n_open && open[c].last != i)
            c++;
        if (c < n_open) { /* a chain's last MatMul: one attention, or the nodes as written */
            struct ox_chain ch = open[c];
            open[c] = open[--n_open];
            int r = chain_close(&b, &ch);
            if (r < 0) {
                rc = -r;
                break;
            }
            if (r == 0)
                continue;
            for (int k = 0; k < ch.n && !rc; k++)
                rc = run_node(&b, &x->node[ch.node[k]], 0);
            if (rc)
                break;
        } else if (n_open < OX_OPEN_CHAINS && is_op(n, "MatMul")) {
            int r = chain_open(&b, i, state, &open[n_open]);
            if (r < 0) {
                rc = -r;
                break;
            }
            if (r > 0) {
                n_open++;
                continue;
            }
        }
        rc = run_node(&b, n, 0);
        if (!rc && g->n_t >= WL_MAX_TENSORS)
            rc = bfail(&b, n, "more than %d tensors", WL_MAX_TENSORS);
    }
    if (!rc && g->n_op == 0)
        rc = dse_err_set(e, DSE_EINPUT, x->file, NULL, "no operator to cost: every node folds into constants");
    free(state);
    free(b.v);
    ar_free(b.arena);
    return rc;
}
