/* wl_graph.c -- operator graphs: construction, topological order, shape checks, derived counts.
 *
 * FLOP conventions (docs/models.md): a multiply-accumulate is 2 FLOPs; element-wise functions cost
 * wl_fn_flops() per output element; softmax 5, layernorm 8 and RMSNorm 4 per element; attention is
 * fused (QK^T, softmax, PV) with causal masking counted exactly: queries at the last S of T positions
 * see S(T-S+1) + S(S-1)/2 keys in all, fewer under a sliding window (wl_attention_pairs); soft-capped
 * logits add tanh and two scalings per score. An expert bank (MoE) is a matmul whose B holds E expert
 * matrices: its R rows (tokens x topk) cost R K N MACs and reach D = wl_experts_touched experts, so its
 * GEMM view is D GEMMs of R / D rows each and it reads D / E of the bank. */
#include "wl_op.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const wl_kind_names[WL_KIND_COUNT + 1] = {"input", "index", "weight", "activation", "kv", NULL};
const char *const wl_fn_names[FN_COUNT + 1] = {"none", "add", "sub", "mul", "div", "relu", "relu6", "gelu",
                                               "silu", "sigmoid", "tanh", "exp", "scale", "batchnorm", "rope",
                                               NULL};
const char *const wl_phase_names[] = {"none", "prefill", "decode", "generate", "train", NULL};

int wl_fn_binary(enum wl_fn f)
{
    return f == FN_ADD || f == FN_SUB || f == FN_MUL || f == FN_DIV || f == FN_BATCHNORM;
}

double wl_fn_flops(enum wl_fn f)
{
    /* Counted as a vector unit executes them. exp is 10: a vectorized expf is a Cody-Waite range
     * reduction (about 4 operations) and a degree-5 or 6 polynomial (6 FMAs); dse's own kexpf issues
     * 20 instructions with its clamp and exponent assembly. So sigmoid 1/(1+exp(-x)) 12 (exp, add,
     * divide); silu x*sigmoid(x) 13; tanh 1 - 2/(1+exp(2x)) 14; gelu (tanh form, evaluated as
     * x / (1 + exp(-2u)), u = sqrt(2/pi)(x + 0.044715 x^3)) 5 for u, exp, add, divide: 17;
     * batchnorm folded to scale+shift 2; rope x*cos + rot(x)*sin 3. Measured on this project's AVX-512
     * kernels, gelu costs 1.16x silu per element (17/13 = 1.31). */
    static const double fl[FN_COUNT] = {0, 1, 1, 1, 1, 1, 2, 17, 13, 12, 14, 10, 1, 2, 3};
    return (unsigned)f < FN_COUNT ? fl[f] : 0;
}

void wl_graph_init(struct wl_graph *g, const char *name)
{
    memset(g, 0, sizeof *g);
    dse_strlcpy(g->name, name, sizeof g->name);
}

void wl_graph_free(struct wl_graph *g)
{
    free(g->t);
    free(g->op);
    free(g->ix);
    memset(g, 0, sizeof *g);
}

int wl_graph_copy(struct wl_graph *dst, const struct wl_graph *src, struct dse_err *e)
{
    wl_graph_init(dst, src->name);
    dst->t = malloc(sizeof *dst->t * (size_t)(src->n_t ? src->n_t : 1));
    dst->op = malloc(sizeof *dst->op * (size_t)(src->n_op ? src->n_op : 1));
    if (!dst->t || !dst->op) {
        wl_graph_free(dst);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    if (src->n_t) /* memcpy from NULL is undefined even for 0 bytes */
        memcpy(dst->t, src->t, sizeof *dst->t * (size_t)src->n_t);
    if (src->n_op)
        memcpy(dst->op, src->op, sizeof *dst->op * (size_t)src->n_op);
    dst->n_t = src->n_t;
    dst->cap_t = src->n_t ? src->n_t : 1;
    dst->n_op = src->n_op;
    dst->cap_op = src->n_op ? src->n_op : 1;
    return DSE_OK;
}

static unsigned name_hash(const char *s)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

int wl_find_tensor(const struct wl_graph *g, const char *name)
{
    if (g->ix && g->ix_n == g->n_t) {
        unsigned mask = (unsigned)g->ix_cap - 1;
        for (unsigned h = name_hash(name) & mask;; h = (h + 1) & mask) {
            int k = g->ix[h];
            if (k < 0)
                return -1;
            if (strcmp(g->t[k].name, name) == 0)
                return k;
        }
    }
    for (int i = g->n_t - 1; i >= 0; i--)
        if (strcmp(g->t[i].name, name) == 0)
            return i;
    return -1;
}

/* Adds tensor k (already in g->t) to the name index, growing it to keep the load under 1/2.
 * Returns 0, or -1 when out of memory (the index is then dropped: lookups fall back to a scan). */
static int index_tensor(struct wl_graph *g, int k)
{
    if (g->ix && g->ix_n != k) { /* tensors were added by hand: the index is stale */
        free(g->ix);
        g->ix = NULL;
    }
    if (!g->ix || 2 * (k + 1) > g->ix_cap) {
        int cap = 256;
        while (cap < 4 * (k + 1))
            cap *= 2;
        int *ix = malloc(sizeof *ix * (size_t)cap);
        free(g->ix);
        g->ix = ix;
        g->ix_n = 0;
        if (!ix)
            return -1;
        g->ix_cap = cap;
        for (int i = 0; i < cap; i++)
            ix[i] = -1;
        for (int i = 0; i < k; i++) { /* rehash the earlier tensors */
            unsigned h = name_hash(g->t[i].name) & (unsigned)(cap - 1);
            while (ix[h] >= 0)
                h = (h + 1) & (unsigned)(cap - 1);
            ix[h] = i;
        }
        g->ix_n = k;
    }
    unsigned mask = (unsigned)g->ix_cap - 1, h = name_hash(g->t[k].name) & mask;
    while (g->ix[h] >= 0)
        h = (h + 1) & mask;
    g->ix[h] = k;
    g->ix_n = k + 1;
    return 0;
}

double wl_experts_touched(double experts, double topk, double tokens)
{
    /* An expert is missed by one token with probability 1 - k/E, by T independent tokens with
     * (1 - k/E)^T; the expected number reached is E minus E times that. */
    return experts * (1 - pow(1 - topk / experts, tokens));
}

double wl_attention_pairs(double S, double P, double W)
{
    double T = S + P;
    if (W <= 0 || W >= T) /* no window, or one wider than every query's causal span */
        return S * (T - S + 1) + S * (S - 1) / 2;
    /* The a new queries at positions p <= W - 1 see p + 1 keys (P + 1 .. P + a), the rest W each. */
    double a = W - P > 0 ? W - P : 0;
    return a * P + a * (a + 1) / 2 + (S - a) * W;
}

static double shape_elems(int rank, const int64_t *dim)
{
    double n = 1;
    for (int i = 0; i < rank; i++)
        n *= (double)dim[i];
    return n;
}

int wl_add_tensor(struct wl_graph *g, const char *name, enum wl_kind kind, int rank, const int64_t *dim,
                  struct dse_err *e)
{
    if (g->n_t >= WL_MAX_TENSORS)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "more than %d tensors", WL_MAX_TENSORS), -1;
    if (rank < 0 || rank > WL_MAX_RANK)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "tensor '%s': rank %d (at most %d)", name, rank, WL_MAX_RANK),
               -1;
    if (wl_find_tensor(g, name) >= 0)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "tensor '%s' declared twice", name), -1;
    if (g->n_t == g->cap_t) {
        int cap = g->cap_t ? g->cap_t * 2 : 64;
        struct wl_tensor *nt = realloc(g->t, sizeof *nt * (size_t)cap);
        if (!nt)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory"), -1;
        g->t = nt;
        g->cap_t = cap;
    }
    struct wl_tensor *t = &g->t[g->n_t];
    memset(t, 0, sizeof *t);
    dse_strlcpy(t->name, name, sizeof t->name);
    t->kind = kind;
    t->rank = rank;
    for (int i = 0; i < rank; i++)
        t->dim[i] = dim[i];
    t->elems = shape_elems(rank, dim);
    t->count = 1;
    t->producer = -1;
    t->last_use = -1;
    if (index_tensor(g, g->n_t))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory"), -1;
    return g->n_t++;
}

int wl_add_op(struct wl_graph *g, const char *name, enum op_type type, const int *in, int n_in, const int *out,
              int n_out, struct dse_err *e)
{
    if (g->n_op >= WL_MAX_OPS)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "more than %d operators", WL_MAX_OPS), -1;
    if (n_in < 1 || n_in > WL_MAX_IN || n_out < 1 || n_out > WL_MAX_OUT)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "op '%s': %d inputs and %d outputs (1..%d and 1..%d allowed)",
                           name, n_in, n_out, WL_MAX_IN, WL_MAX_OUT),
               -1;
    if (g->n_op == g->cap_op) {
        int cap = g->cap_op ? g->cap_op * 2 : 64;
        struct wl_op *no = realloc(g->op, sizeof *no * (size_t)cap);
        if (!no)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory"), -1;
        g->op = no;
        g->cap_op = cap;
    }
    struct wl_op *o = &g->op[g->n_op];
    memset(o, 0, sizeof *o);
    dse_strlcpy(o->name, name, sizeof o->name);
    o->type = type;
    o->n_in = n_in;
    o->n_out = n_out;
    for (int i = 0; i < n_in; i++)
        o->in[i] = in[i];
    for (int i = 0; i < n_out; i++)
        o->out[i] = out[i];
    o->count = 1;
    o->groups = 1;
    o->sh = o->sw = 1;
    return g->n_op++;
}

static int cmp_op_name(const void *a, const void *b)
{
    const struct wl_op *x = *(const struct wl_op *const *)a, *y = *(const struct wl_op *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x > y) - (x < y);
}

/* Operator names identify rows in every report, so two ops may not share one. Sorts pointers by name
 * (O(n log n)); returns the later index of the first duplicate pair (the earlier in *first), -1 when
 * names are unique, -2 when out of memory. */
static int dup_op_name(const struct wl_graph *g, int *first)
{
    int sorted = 1, dup = -1;
    for (int i = 1; i < g->n_op && sorted; i++) /* names in order (common) need no sort */
        sorted = strcmp(g->op[i - 1].name, g->op[i].name) < 0;
    if (sorted)
        return -1;
    const struct wl_op **p = malloc(sizeof *p * (size_t)g->n_op);
    if (!p)
        return -2;
    for (int i = 0; i < g->n_op; i++)
        p[i] = &g->op[i];
    qsort(p, (size_t)g->n_op, sizeof *p, cmp_op_name);
    for (int i = 1; i < g->n_op; i++)
        if (strcmp(p[i - 1]->name, p[i]->name) == 0 && (dup < 0 || p[i] - g->op < dup)) {
            dup = (int)(p[i] - g->op);
            *first = (int)(p[i - 1] - g->op);
        }
    free(p);
    return dup;
}

int wl_finalize(struct wl_graph *g, const char *file, struct dse_err *e)
{
    int rc = DSE_OK;
    int *indeg = NULL, *order = NULL, *cons_start = NULL, *cons = NULL;
    struct wl_op *sorted = NULL;
    struct wl_opcheck c = {g, file, e, 0};
    if (g->n_op == 0)
        return dse_err_set(e, DSE_EINPUT, file, "ops", "expected at least one operator");
    int first = -1, dup = dup_op_name(g, &first);
    if (dup == -2)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    if (dup >= 0) {
        c.opi = dup;
        return wl_op_fail(&c, "operator name '%s' is already used by ops[%d]; names must be unique", g->op[dup].name,
                       first);
    }

    for (int i = 0; i < g->n_t; i++) {
        g->t[i].producer = -1;
        g->t[i].last_use = -1;
        if (g->t[i].kind == WL_WEIGHT || g->t[i].kind == WL_KV)
            g->t[i].count = 0;
        for (int k = 0; k < g->t[i].rank; k++)
            if (g->t[i].dim[k] < 1 || (double)g->t[i].dim[k] > WL_MAX_DIM)
                return dse_err_set(e, DSE_EINPUT, file, NULL, "tensor '%s': dimension %d is %lld (expected 1..%g)",
                                   g->t[i].name, k, (long long)g->t[i].dim[k], WL_MAX_DIM);
    }
    for (int i = 0; i < g->n_op; i++) {
        c.opi = i;
        if (!(g->op[i].count >= 1))
            return wl_op_fail(&c, "repeat count must be at least 1");
        for (int k = 0; k < g->op[i].n_out; k++) {
            struct wl_tensor *t = &g->t[g->op[i].out[k]];
            if (t->kind == WL_WEIGHT || t->kind == WL_INPUT || t->kind == WL_INDEX)
                return wl_op_fail(&c, "output '%s' is declared as %s; only activations and kv tensors are produced",
                               t->name, wl_kind_names[t->kind]);
            if (t->producer >= 0)
                return wl_op_fail(&c, "output '%s' is already produced by ops[%d] (%s)", t->name, t->producer,
                               g->op[t->producer].name);
            t->producer = i;
            for (int m = 0; m < g->op[i].n_in; m++)
                if (g->op[i].in[m] == g->op[i].out[k])
                    return wl_op_fail(&c, "'%s' is both an input and an output: cycle in the graph", t->name);
        }
    }
    for (int i = 0; i < g->n_op; i++) {
        c.opi = i;
        for (int k = 0; k < g->op[i].n_in; k++) {
            const struct wl_tensor *t = &g->t[g->op[i].in[k]];
            if (t->producer < 0 && t->kind == WL_ACT)
                return wl_op_fail(&c, "input '%s' is produced by no operator (declare it with kind input)", t->name);
        }
    }

    /* Kahn's algorithm, FIFO in file order so the result is deterministic. */
    size_t n = (size_t)g->n_op;
    indeg = calloc(n, sizeof *indeg);
    order = malloc(n * sizeof *order);
    cons_start = calloc(n + 1, sizeof *cons_start);
    sorted = malloc(n * sizeof *sorted);
    if (!indeg || !order || !cons_start || !sorted) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    size_t edges = 0;
    for (int i = 0; i < g->n_op; i++)
        for (int k = 0; k < g->op[i].n_in; k++)
            if (g->t[g->op[i].in[k]].producer >= 0) {
                cons_start[g->t[g->op[i].in[k]].producer + 1]++;
                indeg[i]++;
                edges++;
            }
    for (size_t i = 0; i < n; i++)
        cons_start[i + 1] += cons_start[i];
    cons = malloc((edges ? edges : 1) * sizeof *cons);
    int *fill = calloc(n, sizeof *fill);
    if (!cons || !fill) {
        free(fill);
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < g->n_op; i++)
        for (int k = 0; k < g->op[i].n_in; k++) {
            int p = g->t[g->op[i].in[k]].producer;
            if (p >= 0)
                cons[cons_start[p] + fill[p]++] = i;
        }
    free(fill);
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++)
        if (indeg[i] == 0)
            order[tail++] = (int)i;
    while (head < tail) {
        int u = order[head++];
        for (int k = cons_start[u]; k < cons_start[u + 1]; k++)
            if (--indeg[cons[k]] == 0)
                order[tail++] = cons[k];
    }
    if (tail < n) {
        for (size_t i = 0; i < n; i++)
            if (indeg[i] > 0) {
                c.opi = (int)i;
                rc = wl_op_fail(&c, "cycle in the graph: this operator depends on its own output");
                goto out;
            }
    }
    for (size_t i = 0; i < n; i++)
        sorted[i] = g->op[order[i]];
    memcpy(g->op, sorted, n * sizeof *sorted);

    for (int i = 0; i < g->n_op; i++) {
        c.opi = i;
        if ((rc = wl_op_check(&c)))
            goto out;
        struct wl_op *o = &g->op[i];
        for (int k = 0; k < o->n_out; k++)
            g->t[o->out[k]].producer = i;
        for (int k = 0; k < o->n_in; k++) {
            struct wl_tensor *t = &g->t[o->in[k]];
            t->last_use = i;
            if ((t->kind == WL_WEIGHT || t->kind == WL_KV) && o->count > t->count)
                t->count = o->count;
        }
        for (int k = 0; k < o->n_out; k++) {
            struct wl_tensor *t = &g->t[o->out[k]];
            if (t->kind == WL_KV && o->count > t->count)
                t->count = o->count;
        }
    }
    for (int i = 0; i < g->n_t; i++)
        if (g->t[i].count == 0)
            g->t[i].count = 1; /* an unused weight still occupies memory once */
    for (int i = 0; i < g->n_op; i++) {
        g->op[i].kernel = i;
        g->op[i].launches = !wl_op_is_view(&g->op[i]);
    }
out:
    free(indeg);
    free(order);
    free(cons_start);
    free(cons);
    free(sorted);
    return rc;
}

int wl_drop_tensors(struct wl_graph *g, const char *drop, struct dse_err *e)
{
    int *map = malloc(sizeof *map * (size_t)(g->n_t ? g->n_t : 1)), n = 0;
    if (!map)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (int i = 0; i < g->n_t; i++) {
        map[i] = drop[i] ? -1 : n;
        if (!drop[i])
            g->t[n++] = g->t[i];
    }
    for (int i = 0; i < g->n_op; i++) {
        struct wl_op *o = &g->op[i];
        for (int k = 0; k < o->n_in + o->n_out; k++) {
            int *slot = k < o->n_in ? &o->in[k] : &o->out[k - o->n_in];
            if (map[*slot] < 0) {
                free(map);
                return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "op '%s' uses a dropped tensor", o->name);
            }
            *slot = map[*slot];
        }
    }
    g->n_t = n;
    free(g->ix); /* names moved: lookups scan until the index is rebuilt by wl_add_tensor */
    g->ix = NULL;
    g->ix_cap = g->ix_n = 0;
    free(map);
    return DSE_OK;
}

int wl_reorder(struct wl_graph *g, const int *order, struct dse_err *e)
{
    struct wl_op *sorted = malloc(sizeof *sorted * (size_t)(g->n_op ? g->n_op : 1));
    if (!sorted)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (int i = 0; i < g->n_op; i++)
        sorted[i] = g->op[order[i]];
    memcpy(g->op, sorted, sizeof *sorted * (size_t)g->n_op);
    free(sorted);
    for (int i = 0; i < g->n_t; i++)
        g->t[i].producer = g->t[i].last_use = -1;
    for (int i = 0; i < g->n_op; i++) {
        const struct wl_op *o = &g->op[i];
        for (int k = 0; k < o->n_in; k++) {
            struct wl_tensor *t = &g->t[o->in[k]];
            if (t->kind == WL_ACT && t->producer < 0)
                return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "reorder put op '%s' before the producer of '%s'",
                                   o->name, t->name);
            t->last_use = i;
        }
        for (int k = 0; k < o->n_out; k++)
            g->t[o->out[k]].producer = i;
    }
    return DSE_OK;
}

int wl_op_derive(struct wl_graph *g, int op, struct dse_err *e)
{
    struct wl_opcheck c = {g, g->name, e, op};
    return wl_op_check(&c);
}

/* ---- graph-level counts ---- */

double wl_params(const struct wl_graph *g)
{
    double s = 0;
    for (int i = 0; i < g->n_t; i++)
        if (g->t[i].kind == WL_WEIGHT)
            s += g->t[i].elems * g->t[i].count;
    return s;
}

double wl_active_params(const struct wl_graph *g)
{
    double s = wl_params(g);
    for (int i = 0; i < g->n_op; i++) {
        const struct wl_op *o = &g->op[i];
        const struct wl_tensor *t = o->n_in >= 2 ? &g->t[o->in[1]] : NULL;
        if (o->type == OP_MATMUL && o->experts > 0 && t && t->kind == WL_WEIGHT)
            s -= t->elems * t->count * (1 - (double)o->topk / o->experts);
    }
    return s;
}

double wl_macs(const struct wl_graph *g)
{
    double s = 0;
    for (int i = 0; i < g->n_op; i++)
        s += g->op[i].macs * g->op[i].count;
    return s;
}

double wl_tensor_bytes(const struct wl_tensor *t, const struct prec_cfg *p)
{
    switch (t->kind) {
    case WL_WEIGHT: return t->elems * prec_bytes(p->w);
    case WL_KV: return t->elems * prec_bytes(p->kv);
    case WL_INDEX: return t->elems * 4;
    default: return t->elems * prec_bytes(p->a);
    }
}

double wl_op_read_bytes(const struct wl_graph *g, const struct wl_op *op, int slot, const struct prec_cfg *p)
{
    return wl_tensor_bytes(&g->t[op->in[slot]], p) * op->in_frac[slot];
}

double wl_kv_bytes(const struct wl_tensor *t, const struct prec_cfg *p, int64_t grow)
{
    double b = wl_tensor_bytes(t, p);
    if (t->rank < 2 || t->dim[1] < 1 || (grow == 0 && (t->max_rows <= 0 || t->dim[1] <= t->max_rows)))
        return b;
    double rows = (double)t->dim[1], keep = rows + (double)grow;
    if (t->max_rows > 0 && keep > (double)t->max_rows)
        keep = (double)t->max_rows;
    return b / rows * keep;
}

double wl_kind_bytes(const struct wl_graph *g, enum wl_kind k, const struct prec_cfg *p)
{
    double s = 0;
    for (int i = 0; i < g->n_t; i++)
        if (g->t[i].kind == k)
            s += wl_tensor_bytes(&g->t[i], p) * g->t[i].count;
    return s;
}

double wl_peak_act_bytes(const struct wl_graph *g, const struct prec_cfg *p, double *scratch)
{
    /* A tensor is live from the op that produces it (the start, for graph inputs) through its last
     * reader (the end, for graph outputs); a view's output shares its input's storage. Events are
     * added to a difference array and summed, O(tensors + ops). */
    double *diff = scratch ? scratch : calloc((size_t)g->n_op + 2, sizeof *diff);
    if (!diff)
        return -1;
    if (scratch)
        memset(diff, 0, sizeof *diff * ((size_t)g->n_op + 2));
    for (int k = 0; k < g->n_t; k++) {
        const struct wl_tensor *t = &g->t[k];
        if (t->kind != WL_ACT && t->kind != WL_INPUT && t->kind != WL_INDEX)
            continue;
        int born = t->producer < 0 ? 0 : t->producer;
        if (t->producer >= 0 && wl_op_is_view(&g->op[t->producer]))
            born++; /* the input's storage, which is released at the view, carries on */
        int dies = t->last_use < 0 ? g->n_op - 1 : t->last_use;
        if (dies < born)
            dies = born;
        double b = wl_tensor_bytes(t, p);
        diff[born] += b;
        diff[dies + 1] -= b;
    }
    double live = 0, peak = 0;
    for (int i = 0; i < g->n_op; i++) {
        live += diff[i];
        if (live > peak)
            peak = live;
    }
    if (!scratch)
        free(diff);
    return peak;
}
