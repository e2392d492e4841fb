/* wl_graph.c -- operator graphs: construction, topological order, shape checks, derived counts.
 *
 * FLOP conventions (docs/models.md): a multiply-accumulate is 2 FLOPs; element-wise functions cost
 * wl_fn_flops() per output element; softmax 5, layernorm 8 and RMSNorm 4 per element; attention is
 * fused (QK^T, softmax, PV) with causal masking counted exactly: queries at the last S of T positions
 * see S(T-S+1) + S(S-1)/2 keys in all, fewer under a sliding window (wl_attention_pairs); soft-capped
 * logits add tanh and two scalings per score. An expert bank (MoE) is a matmul whose B holds E expert
 * matrices: its R rows (tokens x topk) cost R K N MACs and reach D = wl_experts_touched experts, so its
 * GEMM view is D GEMMs of R / D rows each and it reads D / E of the bank. */
#include "wl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const wl_kind_names[WL_KIND_COUNT + 1] = {"input", "index", "weight", "activation", "kv", NULL};
const char *const wl_fn_names[FN_COUNT + 1] = {"none", "add", "sub", "mul", "div", "relu", "relu6", "gelu",
                                               "silu", "sigmoid", "tanh", "exp", "scale", "batchnorm", "rope",
                                               NULL};
const char *const wl_phase_names[] = {"none", "prefill", "decode", "generate", NULL};

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

/* ---- shape checking ---- */

static void fmt_shape(char *buf, size_t n, int rank, const int64_t *dim)
{
    size_t at = 0;
    at += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%lld", i ? ", " : "", (long long)dim[i]);
    if (at < n)
        snprintf(buf + at, n - at, "]");
}

struct chk {
    const struct wl_graph *g;
    const char *file;
    struct dse_err *e;
    int opi;
};

static int op_fail(struct chk *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int op_fail(struct chk *c, const char *fmt, ...)
{
    char msg[512], path[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "ops[%d] (%s)", c->opi, c->g->op[c->opi].name);
    return dse_err_set(c->e, DSE_EINPUT, c->file, path, "%s", msg);
}

static int want_out(struct chk *c, int slot, int rank, const int64_t *dim)
{
    const struct wl_op *o = &c->g->op[c->opi];
    const struct wl_tensor *t = &c->g->t[o->out[slot]];
    int same = t->rank == rank;
    for (int i = 0; same && i < rank; i++)
        same = t->dim[i] == dim[i];
    if (same)
        return DSE_OK;
    char a[160], b[160];
    fmt_shape(a, sizeof a, t->rank, t->dim);
    fmt_shape(b, sizeof b, rank, dim);
    return op_fail(c, "output '%s' has shape %s but %s gives %s", t->name, a, op_type_names[o->type], b);
}

static int want_io(struct chk *c, int min_in, int max_in, int n_out)
{
    const struct wl_op *o = &c->g->op[c->opi];
    if (o->n_in < min_in || o->n_in > max_in)
        return op_fail(c, "%s takes %d to %d inputs, got %d", op_type_names[o->type], min_in, max_in, o->n_in);
    if (o->n_out != n_out)
        return op_fail(c, "%s gives %d output(s), got %d", op_type_names[o->type], n_out, o->n_out);
    return DSE_OK;
}

static int want_rank(struct chk *c, int slot, int rank)
{
    const struct wl_tensor *t = &c->g->t[c->g->op[c->opi].in[slot]];
    if (t->rank != rank)
        return op_fail(c, "input %d '%s' has rank %d, %s expects %d", slot, t->name, t->rank,
                       op_type_names[c->g->op[c->opi].type], rank);
    return DSE_OK;
}

/* Output size of a window of k with stride s over n + 2p: floor((n + 2p - k) / s) + 1, or with ceil
 * when partial windows count (SCALE-Sim's ceil((n - k + s) / s)). */
static int64_t out_dim(int64_t n, int k, int s, int p, int ceil_mode)
{
    int64_t span = n + 2 * (int64_t)p - k;
    return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

/* A matmul on an expert bank: x [..., K] rows are tokens x topk (each token's row once per expert it
 * picked), w [E, K, N] holds every expert (all resident), the output is [..., N]. */
static int check_experts(struct chk *c, const struct wl_tensor *x, const struct wl_tensor *w)
{
    struct wl_op *o = (struct wl_op *)&c->g->op[c->opi];
    if (o->n_in != 2 || o->transb)
        return op_fail(c, "an expert bank takes no bias and no transposed weights");
    if (w->rank != 3 || w->dim[0] != o->experts)
        return op_fail(c, "expert weights '%s' must have shape [%d, K, N]", w->name, o->experts);
    if (o->topk < 1 || o->topk > o->experts)
        return op_fail(c, "topk %d must be in [1, %d experts]", o->topk, o->experts);
    int64_t K = w->dim[1], N = w->dim[2], d[WL_MAX_RANK];
    if (x->rank < 1 || x->dim[x->rank - 1] != K)
        return op_fail(c, "inner dimensions differ: '%s' has K = %lld, '%s' has K = %lld", x->name,
                       (long long)(x->rank ? x->dim[x->rank - 1] : 0), w->name, (long long)K);
    double rows = x->elems / (double)K, tokens = rows / o->topk;
    if (tokens != floor(tokens))
        return op_fail(c, "the %.0f rows of '%s' are not whole tokens of topk %d rows", rows, x->name, o->topk);
    double D = wl_experts_touched(o->experts, o->topk, tokens);
    o->gbatch = D;
    o->gm = rows / D;
    o->gn = (double)N;
    o->gk = (double)K;
    o->macs = rows * (double)K * (double)N;
    o->flops = 2 * o->macs;
    for (int i = 0; i < x->rank; i++)
        d[i] = x->dim[i];
    d[x->rank - 1] = N;
    return want_out(c, 0, x->rank, d);
}

static int check_op(struct chk *c)
{
    struct wl_op *o = (struct wl_op *)&c->g->op[c->opi];
    const struct wl_tensor *x = &c->g->t[o->in[0]];
    int64_t d[WL_MAX_RANK];
    int rc;
    o->macs = o->flops = 0;
    o->gm = o->gn = o->gk = o->gbatch = 0;
    switch (o->type) {
    case OP_MATMUL: {
        if ((rc = want_io(c, 2, 3, 1)))
            return rc;
        const struct wl_tensor *w = &c->g->t[o->in[1]];
        if (o->experts > 0)
            return check_experts(c, x, w);
        if (x->rank < 2 || w->rank < 2)
            return op_fail(c, "matmul needs rank >= 2 operands, got %d and %d", x->rank, w->rank);
        int64_t M = x->dim[x->rank - 2], K = x->dim[x->rank - 1];
        int64_t K2 = w->dim[w->rank - (o->transb ? 1 : 2)], N = w->dim[w->rank - (o->transb ? 2 : 1)];
        if (K != K2)
            return op_fail(c, "inner dimensions differ: '%s' has K = %lld, '%s' has K = %lld", x->name, (long long)K,
                           w->name, (long long)K2);
        double lead = 1;
        for (int i = 0; i < x->rank - 2; i++)
            lead *= (double)x->dim[i];
        if (w->rank > 2) { /* batched: leading dims must match exactly */
            if (w->rank != x->rank)
                return op_fail(c, "batched matmul operands have ranks %d and %d", x->rank, w->rank);
            for (int i = 0; i < x->rank - 2; i++)
                if (x->dim[i] != w->dim[i])
                    return op_fail(c, "batched matmul leading dimension %d differs (%lld vs %lld)", i,
                                   (long long)x->dim[i], (long long)w->dim[i]);
            o->gbatch = lead;
            o->gm = (double)M;
        } else { /* a weight matrix: fold leading dims into M */
            o->gbatch = 1;
            o->gm = lead * (double)M;
        }
        o->gn = (double)N;
        o->gk = (double)K;
        if (o->n_in == 3) {
            const struct wl_tensor *b = &c->g->t[o->in[2]];
            if (b->rank != 1 || b->dim[0] != N)
                return op_fail(c, "bias '%s' must have shape [%lld]", b->name, (long long)N);
        }
        for (int i = 0; i < x->rank; i++)
            d[i] = x->dim[i];
        d[x->rank - 1] = N;
        o->macs = o->gbatch * o->gm * o->gn * o->gk;
        o->flops = 2 * o->macs + (o->n_in == 3 ? o->gbatch * o->gm * o->gn : 0);
        return want_out(c, 0, x->rank, d);
    }
    case OP_CONV2D: {
        if ((rc = want_io(c, 2, 3, 1)) || (rc = want_rank(c, 0, 4)) || (rc = want_rank(c, 1, 4)))
            return rc;
        const struct wl_tensor *w = &c->g->t[o->in[1]];
        int64_t N = x->dim[0], C = x->dim[1], H = x->dim[2], W = x->dim[3];
        int64_t OC = w->dim[0], CG = w->dim[1];
        int64_t g = o->groups;
        o->kh = (int)w->dim[2];
        o->kw = (int)w->dim[3];
        if (g < 1 || C % g || OC % g)
            return op_fail(c, "groups %lld must divide input channels %lld and filters %lld", (long long)g,
                           (long long)C, (long long)OC);
        if (CG != C / g)
            return op_fail(c, "weight '%s' has %lld input channels per group, input gives %lld / %lld = %lld",
                           w->name, (long long)CG, (long long)C, (long long)g, (long long)(C / g));
        if (o->sh < 1 || o->sw < 1 || o->ph < 0 || o->pw < 0)
            return op_fail(c, "stride must be >= 1 and padding >= 0");
        int64_t OH = out_dim(H, o->kh, o->sh, o->ph, o->ceil_mode), OW = out_dim(W, o->kw, o->sw, o->pw, o->ceil_mode);
        if (H + 2 * o->ph < o->kh || W + 2 * o->pw < o->kw)
            return op_fail(c, "kernel %dx%d larger than the padded input %lldx%lld", o->kh, o->kw,
                           (long long)(H + 2 * o->ph), (long long)(W + 2 * o->pw));
        if (o->n_in == 3) {
            const struct wl_tensor *b = &c->g->t[o->in[2]];
            if (b->rank != 1 || b->dim[0] != OC)
                return op_fail(c, "bias '%s' must have shape [%lld]", b->name, (long long)OC);
        }
        int64_t od[4] = {N, OC, OH, OW};
        o->gbatch = (double)g;
        o->gm = (double)N * (double)OH * (double)OW;
        o->gn = (double)(OC / g);
        o->gk = (double)CG * o->kh * o->kw;
        o->macs = o->gbatch * o->gm * o->gn * o->gk;
        o->flops = 2 * o->macs + (o->n_in == 3 ? (double)N * OC * OH * OW : 0);
        return want_out(c, 0, 4, od);
    }
    case OP_ATTENTION: {
        if ((rc = want_io(c, 3, 5, 1)))
            return rc;
        if (o->n_in == 4)
            return op_fail(c, "attention takes q, k, v and optionally both k_past and v_past");
        for (int i = 0; i < o->n_in; i++)
            if ((rc = want_rank(c, i, 3)))
                return rc;
        const struct wl_tensor *k = &c->g->t[o->in[1]], *v = &c->g->t[o->in[2]];
        int64_t B = x->dim[0], S = x->dim[1], HD = x->dim[2];
        if (o->heads < 1 || HD % o->heads)
            return op_fail(c, "heads %d must divide the query width %lld", o->heads, (long long)HD);
        int64_t hd = HD / o->heads;
        if (k->dim[0] != B || v->dim[0] != B || k->dim[1] != S || v->dim[1] != S || k->dim[2] != v->dim[2])
            return op_fail(c, "k and v must have shape [%lld, %lld, kv_heads x head_dim]", (long long)B, (long long)S);
        if (k->dim[2] % hd || o->heads % (k->dim[2] / hd ? k->dim[2] / hd : 1) || k->dim[2] / hd < 1)
            return op_fail(c, "key width %lld is not a divisor number of %lld-wide heads of %d query heads",
                           (long long)k->dim[2], (long long)hd, o->heads);
        int64_t P = 0;
        if (o->n_in == 5) {
            const struct wl_tensor *kp = &c->g->t[o->in[3]], *vp = &c->g->t[o->in[4]];
            if (kp->dim[0] != B || vp->dim[0] != B || kp->dim[2] != k->dim[2] || vp->dim[2] != k->dim[2] ||
                kp->dim[1] != vp->dim[1])
                return op_fail(c, "k_past and v_past must have shape [%lld, past, %lld]", (long long)B,
                               (long long)k->dim[2]);
            P = kp->dim[1];
        }
        if (o->window < 0 || (o->window > 0 && !o->causal) || !(o->softcap >= 0))
            return op_fail(c, "a sliding window (%lld) must be positive and causal; soft-capping non-negative",
                           (long long)o->window);
        double T = (double)(S + P), Sd = (double)S, W = (double)o->window;
        double pairs = o->causal ? wl_attention_pairs(Sd, (double)P, W) : Sd * T;
        double bh = (double)B * o->heads;
        o->macs = bh * pairs * 2 * (double)hd;
        /* softmax 5 per score; soft-capping c tanh(s / c) adds tanh and two scalings */
        o->flops = 2 * o->macs + 5 * bh * pairs + (o->softcap > 0 ? (wl_fn_flops(FN_TANH) + 2) * bh * pairs : 0);
        o->gbatch = bh;
        o->gm = Sd;
        o->gn = W > 0 && W < T ? W : T; /* keys one query sees at most */
        o->gk = (double)hd;
        int64_t od[3] = {B, S, HD};
        return want_out(c, 0, 3, od);
    }
    case OP_SOFTMAX:
    case OP_RESHAPE:
        if ((rc = want_io(c, 1, 1, 1)))
            return rc;
        if (o->type == OP_RESHAPE) {
            const struct wl_tensor *y = &c->g->t[o->out[0]];
            if (y->elems != x->elems)
                return op_fail(c, "reshape of '%s' (%.0f elements) to '%s' (%.0f elements)", x->name, x->elems,
                               y->name, y->elems);
            return DSE_OK;
        }
        o->flops = 5 * x->elems;
        return want_out(c, 0, x->rank, x->dim);
    case OP_LAYERNORM:
    case OP_RMSNORM:
        if ((rc = want_io(c, 2, o->type == OP_LAYERNORM ? 3 : 2, 1)))
            return rc;
        for (int i = 1; i < o->n_in; i++) {
            const struct wl_tensor *p = &c->g->t[o->in[i]];
            if (p->rank != 1 || x->rank < 1 || p->dim[0] != x->dim[x->rank - 1])
                return op_fail(c, "scale/shift '%s' must have shape [%lld]", p->name,
                               (long long)(x->rank ? x->dim[x->rank - 1] : 0));
        }
        o->flops = (o->type == OP_LAYERNORM ? 8 : 4) * x->elems;
        return want_out(c, 0, x->rank, x->dim);
    case OP_ELTWISE: {
        if (o->fn == FN_NONE)
            return op_fail(c, "eltwise needs a function (fn)");
        int binary = o->fn == FN_ADD || o->fn == FN_SUB || o->fn == FN_MUL || o->fn == FN_DIV ||
                     o->fn == FN_BATCHNORM;
        if ((rc = want_io(c, binary ? 2 : 1, binary ? 2 : 1, 1)))
            return rc;
        if (o->fn == FN_BATCHNORM) {
            const struct wl_tensor *p = &c->g->t[o->in[1]];
            if (x->rank < 2 || p->rank != 2 || p->dim[0] != 2 || p->dim[1] != x->dim[1])
                return op_fail(c, "batchnorm parameters '%s' must have shape [2, %lld]", p->name,
                               (long long)(x->rank >= 2 ? x->dim[1] : 0));
        } else if (binary) { /* numpy broadcasting of the second operand onto the first */
            const struct wl_tensor *y = &c->g->t[o->in[1]];
            if (y->rank > x->rank)
                return op_fail(c, "second operand '%s' has a higher rank than the first", y->name);
            for (int i = 1; i <= y->rank; i++) {
                int64_t a = x->dim[x->rank - i], b = y->dim[y->rank - i];
                if (b != a && b != 1)
                    return op_fail(c, "shapes of '%s' and '%s' do not broadcast", x->name, y->name);
            }
        }
        o->flops = wl_fn_flops(o->fn) * x->elems;
        return want_out(c, 0, x->rank, x->dim);
    }
    case OP_EMBEDDING: {
        if ((rc = want_io(c, 2, 2, 1)) || (rc = want_rank(c, 1, 2)))
            return rc;
        const struct wl_tensor *tab = &c->g->t[o->in[1]];
        if (x->rank >= WL_MAX_RANK)
            return op_fail(c, "index tensor rank too high");
        for (int i = 0; i < x->rank; i++)
            d[i] = x->dim[i];
        d[x->rank] = tab->dim[1];
        return want_out(c, 0, x->rank + 1, d);
    }
    case OP_POOL: {
        if ((rc = want_io(c, 1, 1, 1)) || (rc = want_rank(c, 0, 4)))
            return rc;
        if (o->kh <= 0 || o->kw <= 0) { /* global */
            o->kh = (int)x->dim[2];
            o->kw = (int)x->dim[3];
            o->sh = o->kh;
            o->sw = o->kw;
            o->ph = o->pw = 0;
        }
        if (o->sh < 1 || o->sw < 1 || o->ph < 0 || o->pw < 0 || x->dim[2] + 2 * o->ph < o->kh ||
            x->dim[3] + 2 * o->pw < o->kw)
            return op_fail(c, "pool window %dx%d stride %dx%d does not fit the input", o->kh, o->kw, o->sh, o->sw);
        int64_t od[4] = {x->dim[0], x->dim[1], out_dim(x->dim[2], o->kh, o->sh, o->ph, o->ceil_mode),
                         out_dim(x->dim[3], o->kw, o->sw, o->pw, o->ceil_mode)};
        o->flops = (double)o->kh * o->kw * shape_elems(4, od);
        return want_out(c, 0, 4, od);
    }
    case OP_SLICE: {
        if ((rc = want_io(c, 1, 1, 1)))
            return rc;
        const struct wl_tensor *y = &c->g->t[o->out[0]];
        int ok = y->rank == x->rank && o->axis >= 0 && o->axis < x->rank;
        for (int i = 0; ok && i < x->rank; i++)
            ok = i == o->axis ? y->dim[i] <= x->dim[i] : y->dim[i] == x->dim[i];
        if (!ok)
            return op_fail(c, "'%s' is not a slice of '%s' along axis %d", y->name, x->name, o->axis);
        return DSE_OK;
    }
    case OP_CONCAT: {
        if ((rc = want_io(c, 2, WL_MAX_IN, 1)))
            return rc;
        if (o->axis < 0 || o->axis >= x->rank)
            return op_fail(c, "axis %d out of range for rank %d", o->axis, x->rank);
        for (int i = 0; i < x->rank; i++)
            d[i] = x->dim[i];
        for (int k = 1; k < o->n_in; k++) {
            const struct wl_tensor *y = &c->g->t[o->in[k]];
            if (y->rank != x->rank)
                return op_fail(c, "concat inputs have ranks %d and %d", x->rank, y->rank);
            for (int i = 0; i < x->rank; i++)
                if (i != o->axis && y->dim[i] != x->dim[i])
                    return op_fail(c, "concat inputs differ in dimension %d (%lld vs %lld)", i, (long long)x->dim[i],
                                   (long long)y->dim[i]);
            d[o->axis] += y->dim[o->axis];
        }
        return want_out(c, 0, x->rank, d);
    }
    default:
        return op_fail(c, "unknown operator type");
    }
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
    struct chk c = {g, file, e, 0};
    if (g->n_op == 0)
        return dse_err_set(e, DSE_EINPUT, file, "ops", "expected at least one operator");
    int first = -1, dup = dup_op_name(g, &first);
    if (dup == -2)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    if (dup >= 0) {
        c.opi = dup;
        return op_fail(&c, "operator name '%s' is already used by ops[%d]; names must be unique", g->op[dup].name,
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
            return op_fail(&c, "repeat count must be at least 1");
        for (int k = 0; k < g->op[i].n_out; k++) {
            struct wl_tensor *t = &g->t[g->op[i].out[k]];
            if (t->kind == WL_WEIGHT || t->kind == WL_INPUT || t->kind == WL_INDEX)
                return op_fail(&c, "output '%s' is declared as %s; only activations and kv tensors are produced",
                               t->name, wl_kind_names[t->kind]);
            if (t->producer >= 0)
                return op_fail(&c, "output '%s' is already produced by ops[%d] (%s)", t->name, t->producer,
                               g->op[t->producer].name);
            t->producer = i;
            for (int m = 0; m < g->op[i].n_in; m++)
                if (g->op[i].in[m] == g->op[i].out[k])
                    return op_fail(&c, "'%s' is both an input and an output: cycle in the graph", t->name);
        }
    }
    for (int i = 0; i < g->n_op; i++) {
        c.opi = i;
        for (int k = 0; k < g->op[i].n_in; k++) {
            const struct wl_tensor *t = &g->t[g->op[i].in[k]];
            if (t->producer < 0 && t->kind == WL_ACT)
                return op_fail(&c, "input '%s' is produced by no operator (declare it with kind input)", t->name);
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
                rc = op_fail(&c, "cycle in the graph: this operator depends on its own output");
                goto out;
            }
    }
    for (size_t i = 0; i < n; i++)
        sorted[i] = g->op[order[i]];
    memcpy(g->op, sorted, n * sizeof *sorted);

    for (int i = 0; i < g->n_op; i++) {
        c.opi = i;
        if ((rc = check_op(&c)))
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
out:
    free(indeg);
    free(order);
    free(cons_start);
    free(cons);
    free(sorted);
    return rc;
}

int wl_op_derive(struct wl_graph *g, int op, struct dse_err *e)
{
    struct chk c = {g, g->name, e, op};
    return check_op(&c);
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
    const struct wl_tensor *t = &g->t[op->in[slot]];
    double b = wl_tensor_bytes(t, p);
    if (op->type == OP_EMBEDDING && slot == 1 && t->elems > 0) /* the gathered rows: output elements */
        return b / t->elems * g->t[op->out[0]].elems;
    if (op->type == OP_MATMUL && op->experts > 0 && slot == 1) /* the D of E experts the tokens reach */
        return b * op->gbatch / op->experts;
    return b;
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
        if (t->producer >= 0 && (g->op[t->producer].type == OP_RESHAPE || g->op[t->producer].type == OP_SLICE))
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
