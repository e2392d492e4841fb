/* wl_op.c -- the operator table (optype.h): one row per operator type with its properties and the
 * function that checks its shapes and derives its counts.
 *
 * FLOP conventions (docs/models.md): a multiply-accumulate is 2 FLOPs; element-wise functions cost
 * wl_fn_flops() per output element; softmax 5, layernorm 8 and RMSNorm 4 per element; attention is
 * fused (QK^T, softmax, PV) with causal masking counted exactly: queries at the last S of T positions
 * see S(T-S+1) + S(S-1)/2 keys in all, fewer under a sliding window (wl_attention_pairs); soft-capped
 * logits add tanh and two scalings per score. An expert bank (MoE) is a matmul whose B holds E expert
 * matrices: its R rows (tokens x topk) cost R K N MACs and reach D = wl_experts_touched experts, so its
 * GEMM view is D GEMMs of R / D rows each and it reads D / E of the bank. An embedding reads only the
 * rows it gathers. The share of each input an op reads is in_frac (1 but for those two). */
#include "wl_op.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const row_kind_names[RK_COUNT + 1] = {"norm", "rope", "mul", NULL};
const char *const hw_eff_class_names[EC_COUNT + 1] = {"matmul",    "matmul_skinny",    "conv2d",  "conv2d_depthwise",
                                                      "attention", "attention_decode", "softmax", "norm",
                                                      "eltwise",   NULL};

int wl_op_fail(struct wl_opcheck *c, const char *fmt, ...)
{
    char msg[512], path[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(path, sizeof path, "ops[%d] (%s)", c->opi, c->g->op[c->opi].name);
    return dse_err_set(c->e, DSE_EINPUT, c->file, path, "%s", msg);
}

static void fmt_shape(char *buf, size_t n, int rank, const int64_t *dim)
{
    size_t at = 0;
    at += (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%lld", i ? ", " : "", (long long)dim[i]);
    if (at < n)
        snprintf(buf + at, n - at, "]");
}

static struct wl_op *cur(struct wl_opcheck *c) { return &c->g->op[c->opi]; }
static const struct wl_tensor *in(struct wl_opcheck *c, int slot) { return &c->g->t[cur(c)->in[slot]]; }

static int want_out(struct wl_opcheck *c, int slot, int rank, const int64_t *dim)
{
    const struct wl_op *o = cur(c);
    const struct wl_tensor *t = &c->g->t[o->out[slot]];
    int same = t->rank == rank;
    for (int i = 0; same && i < rank; i++)
        same = t->dim[i] == dim[i];
    if (same)
        return DSE_OK;
    char a[160], b[160];
    fmt_shape(a, sizeof a, t->rank, t->dim);
    fmt_shape(b, sizeof b, rank, dim);
    return wl_op_fail(c, "output '%s' has shape %s but %s gives %s", t->name, a, op_info[o->type].name, b);
}

static int want_rank(struct wl_opcheck *c, int slot, int rank)
{
    const struct wl_tensor *t = in(c, slot);
    if (t->rank != rank)
        return wl_op_fail(c, "input %d '%s' has rank %d, %s expects %d", slot, t->name, t->rank,
                          op_info[cur(c)->type].name, rank);
    return DSE_OK;
}

/* Output size of a window of k with stride s over n + 2p: floor((n + 2p - k) / s) + 1, or with ceil
 * when partial windows count (SCALE-Sim's ceil((n - k + s) / s)). */
static int64_t out_dim(int64_t n, int k, int s, int p, int ceil_mode)
{
    int64_t span = n + 2 * (int64_t)p - k;
    return (ceil_mode ? (span + s - 1) / s : span / s) + 1;
}

static double shape_elems(int rank, const int64_t *dim)
{
    double n = 1;
    for (int i = 0; i < rank; i++)
        n *= (double)dim[i];
    return n;
}

/* An output of x's shape. */
static int same_shape(struct wl_opcheck *c)
{
    const struct wl_tensor *x = in(c, 0);
    return want_out(c, 0, x->rank, x->dim);
}

/* A matmul on an expert bank: x [..., K] rows are tokens x topk (each token's row once per expert it
 * picked), w [E, K, N] holds every expert (all resident), the output is [..., N]. */
static int check_experts(struct wl_opcheck *c, const struct wl_tensor *x, const struct wl_tensor *w)
{
    struct wl_op *o = cur(c);
    if (o->n_in != 2 || o->transb)
        return wl_op_fail(c, "an expert bank takes no bias and no transposed weights");
    if (w->rank != 3 || w->dim[0] != o->experts)
        return wl_op_fail(c, "expert weights '%s' must have shape [%d, K, N]", w->name, o->experts);
    double ep = o->ep > 1 ? o->ep : 1, E = o->experts * ep; /* the bank holds 1/ep of E experts */
    if (o->topk < 1 || o->topk > E)
        return wl_op_fail(c, "topk %d must be in [1, %.0f experts]", o->topk, E);
    int64_t K = w->dim[1], N = w->dim[2], d[WL_MAX_RANK];
    if (x->rank < 1 || x->dim[x->rank - 1] != K)
        return wl_op_fail(c, "inner dimensions differ: '%s' has K = %lld, '%s' has K = %lld", x->name,
                          (long long)(x->rank ? x->dim[x->rank - 1] : 0), w->name, (long long)K);
    double rows = x->elems / (double)K, tokens = rows / o->topk;
    if (ep == 1 && tokens != floor(tokens))
        return wl_op_fail(c, "the %.0f rows of '%s' are not whole tokens of topk %d rows", rows, x->name, o->topk);
    /* with ep, the rows are this device's share of the group's ep x tokens: of its E / ep experts each is
     * missed by all of them with probability (1 - k / E)^(ep tokens) */
    double D = ep == 1 ? wl_experts_touched(o->experts, o->topk, tokens)
                       : o->experts * (1 - pow(1 - o->topk / E, ep * tokens));
    o->gbatch = D;
    o->gm = rows / D;
    o->gn = (double)N;
    o->gk = (double)K;
    o->macs = rows * (double)K * (double)N;
    o->flops = 2 * o->macs;
    o->in_frac[1] = D / o->experts; /* the experts the step's tokens reach */
    for (int i = 0; i < x->rank; i++)
        d[i] = x->dim[i];
    d[x->rank - 1] = N;
    return want_out(c, 0, x->rank, d);
}

static int check_matmul(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0), *w = in(c, 1);
    int64_t d[WL_MAX_RANK];
    if (o->experts > 0)
        return check_experts(c, x, w);
    if (x->rank < 2 || w->rank < 2)
        return wl_op_fail(c, "matmul needs rank >= 2 operands, got %d and %d", x->rank, w->rank);
    int64_t M = x->dim[x->rank - 2], K = x->dim[x->rank - 1];
    int64_t K2 = w->dim[w->rank - (o->transb ? 1 : 2)], N = w->dim[w->rank - (o->transb ? 2 : 1)];
    if (K != K2)
        return wl_op_fail(c, "inner dimensions differ: '%s' has K = %lld, '%s' has K = %lld", x->name, (long long)K,
                          w->name, (long long)K2);
    double lead = 1;
    for (int i = 0; i < x->rank - 2; i++)
        lead *= (double)x->dim[i];
    if (w->rank > 2) { /* batched: leading dims must match exactly */
        if (w->rank != x->rank)
            return wl_op_fail(c, "batched matmul operands have ranks %d and %d", x->rank, w->rank);
        for (int i = 0; i < x->rank - 2; i++)
            if (x->dim[i] != w->dim[i])
                return wl_op_fail(c, "batched matmul leading dimension %d differs (%lld vs %lld)", i,
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
        const struct wl_tensor *b = in(c, 2);
        if (b->rank != 1 || b->dim[0] != N)
            return wl_op_fail(c, "bias '%s' must have shape [%lld]", b->name, (long long)N);
    }
    for (int i = 0; i < x->rank; i++)
        d[i] = x->dim[i];
    d[x->rank - 1] = N;
    o->macs = o->gbatch * o->gm * o->gn * o->gk;
    o->flops = 2 * o->macs + (o->n_in == 3 ? o->gbatch * o->gm * o->gn : 0);
    return want_out(c, 0, x->rank, d);
}

static int check_conv2d(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    int rc;
    if ((rc = want_rank(c, 0, 4)) || (rc = want_rank(c, 1, 4)))
        return rc;
    const struct wl_tensor *x = in(c, 0), *w = in(c, 1);
    int64_t N = x->dim[0], C = x->dim[1], H = x->dim[2], W = x->dim[3];
    int64_t OC = w->dim[0], CG = w->dim[1];
    int64_t g = o->groups;
    o->kh = (int)w->dim[2];
    o->kw = (int)w->dim[3];
    if (g < 1 || C % g || OC % g)
        return wl_op_fail(c, "groups %lld must divide input channels %lld and filters %lld", (long long)g,
                          (long long)C, (long long)OC);
    if (CG != C / g)
        return wl_op_fail(c, "weight '%s' has %lld input channels per group, input gives %lld / %lld = %lld",
                          w->name, (long long)CG, (long long)C, (long long)g, (long long)(C / g));
    if (o->sh < 1 || o->sw < 1 || o->ph < 0 || o->pw < 0)
        return wl_op_fail(c, "stride must be >= 1 and padding >= 0");
    if (o->ph_end < 0 || o->pw_end < 0)
        return wl_op_fail(c, "padding must be >= 0");
    int64_t OH = out_dim(H + o->ph_end, o->kh, o->sh, o->ph, o->ceil_mode),
            OW = out_dim(W + o->pw_end, o->kw, o->sw, o->pw, o->ceil_mode);
    if (H + 2 * o->ph + o->ph_end < o->kh || W + 2 * o->pw + o->pw_end < o->kw)
        return wl_op_fail(c, "kernel %dx%d larger than the padded input %lldx%lld", o->kh, o->kw,
                          (long long)(H + 2 * o->ph + o->ph_end), (long long)(W + 2 * o->pw + o->pw_end));
    if (o->n_in == 3) {
        const struct wl_tensor *b = in(c, 2);
        if (b->rank != 1 || b->dim[0] != OC)
            return wl_op_fail(c, "bias '%s' must have shape [%lld]", b->name, (long long)OC);
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

static int check_attention(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    int rc;
    if (o->n_in == 4)
        return wl_op_fail(c, "attention takes q, k, v and optionally both k_past and v_past");
    for (int i = 0; i < o->n_in; i++)
        if ((rc = want_rank(c, i, 3)))
            return rc;
    const struct wl_tensor *x = in(c, 0), *k = in(c, 1), *v = in(c, 2);
    int64_t B = x->dim[0], S = x->dim[1], HD = x->dim[2];
    if (o->heads < 1 || HD % o->heads)
        return wl_op_fail(c, "heads %d must divide the query width %lld", o->heads, (long long)HD);
    int64_t hd = HD / o->heads;
    /* context parallelism: this device's S queries of a sequence of cp S, keys and values gathered;
     * cross-attention: keys and values of another sequence, of their own length */
    const int64_t cp = o->cp > 1 ? o->cp : 1, Sk = o->cross ? k->dim[1] : S * cp;
    if (o->cross && (o->n_in != 3 || o->causal || cp > 1 || o->window))
        return wl_op_fail(c, "cross-attention takes q, k and v only, is not causal and has no window or cp split");
    if (k->dim[0] != B || v->dim[0] != B || k->dim[1] != Sk || v->dim[1] != Sk || k->dim[2] != v->dim[2])
        return wl_op_fail(c, "k and v must have shape [%lld, %lld, kv_heads x head_dim]", (long long)B, (long long)Sk);
    if (k->dim[2] % hd || o->heads % (k->dim[2] / hd ? k->dim[2] / hd : 1) || k->dim[2] / hd < 1)
        return wl_op_fail(c, "key width %lld is not a divisor number of %lld-wide heads of %d query heads",
                          (long long)k->dim[2], (long long)hd, o->heads);
    int64_t P = 0;
    if (o->n_in == 5) {
        const struct wl_tensor *kp = in(c, 3), *vp = in(c, 4);
        if (kp->dim[0] != B || vp->dim[0] != B || kp->dim[2] != k->dim[2] || vp->dim[2] != k->dim[2] ||
            kp->dim[1] != vp->dim[1])
            return wl_op_fail(c, "k_past and v_past must have shape [%lld, past, %lld]", (long long)B,
                              (long long)k->dim[2]);
        P = kp->dim[1];
    }
    if (o->window < 0 || (o->window > 0 && !o->causal) || !(o->softcap >= 0))
        return wl_op_fail(c, "a sliding window (%lld) must be positive and causal; soft-capping non-negative",
                          (long long)o->window);
    double T = (double)(Sk + P), Sd = (double)S, W = (double)o->window;
    /* a context-parallel device's share: 1/cp of the sequence's pairs (load-balanced chunks, as
     * Megatron-LM's zig-zag split gives each device an early and a late chunk) */
    double pairs = o->causal ? wl_attention_pairs((double)Sk, (double)P, W) / (double)cp : Sd * T; /* cross: S x L */
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

static int check_softmax(struct wl_opcheck *c)
{
    cur(c)->flops = 5 * in(c, 0)->elems;
    return same_shape(c);
}

static int check_norm(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0);
    for (int i = 1; i < o->n_in; i++) {
        const struct wl_tensor *p = in(c, i);
        if (p->rank != 1 || x->rank < 1 || p->dim[0] != x->dim[x->rank - 1])
            return wl_op_fail(c, "scale/shift '%s' must have shape [%lld]", p->name,
                              (long long)(x->rank ? x->dim[x->rank - 1] : 0));
    }
    o->flops = (o->type == OP_LAYERNORM ? 8 : 4) * x->elems;
    return same_shape(c);
}

static int check_eltwise(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0);
    if (o->fn == FN_NONE)
        return wl_op_fail(c, "eltwise needs a function (fn)");
    int binary = wl_fn_binary(o->fn);
    if (o->n_in != 1 + binary)
        return wl_op_fail(c, "eltwise %s takes %d input(s), got %d", wl_fn_names[o->fn], 1 + binary, o->n_in);
    if (o->fn == FN_BATCHNORM) {
        const struct wl_tensor *p = in(c, 1);
        if (x->rank < 2 || p->rank != 2 || p->dim[0] != 2 || p->dim[1] != x->dim[1])
            return wl_op_fail(c, "batchnorm parameters '%s' must have shape [2, %lld]", p->name,
                              (long long)(x->rank >= 2 ? x->dim[1] : 0));
    } else if (binary) { /* numpy broadcasting of the second operand onto the first */
        const struct wl_tensor *y = in(c, 1);
        if (y->rank > x->rank)
            return wl_op_fail(c, "second operand '%s' has a higher rank than the first", y->name);
        for (int i = 1; i <= y->rank; i++) {
            int64_t a = x->dim[x->rank - i], b = y->dim[y->rank - i];
            if (b != a && b != 1)
                return wl_op_fail(c, "shapes of '%s' and '%s' do not broadcast", x->name, y->name);
        }
    }
    o->flops = wl_fn_flops(o->fn) * x->elems;
    return same_shape(c);
}

static int check_embedding(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    int rc;
    if ((rc = want_rank(c, 1, 2)))
        return rc;
    const struct wl_tensor *x = in(c, 0), *tab = in(c, 1);
    int64_t d[WL_MAX_RANK];
    if (x->rank >= WL_MAX_RANK)
        return wl_op_fail(c, "index tensor rank too high");
    for (int i = 0; i < x->rank; i++)
        d[i] = x->dim[i];
    d[x->rank] = tab->dim[1];
    if ((rc = want_out(c, 0, x->rank + 1, d)))
        return rc;
    o->in_frac[1] = c->g->t[o->out[0]].elems / tab->elems; /* the gathered rows: output elements */
    return DSE_OK;
}

static int check_pool(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    int rc;
    if ((rc = want_rank(c, 0, 4)))
        return rc;
    const struct wl_tensor *x = in(c, 0);
    if (o->kh <= 0 || o->kw <= 0) { /* global */
        o->kh = (int)x->dim[2];
        o->kw = (int)x->dim[3];
        o->sh = o->kh;
        o->sw = o->kw;
        o->ph = o->pw = 0;
    }
    int64_t H = x->dim[2] + o->ph_end, W = x->dim[3] + o->pw_end; /* asymmetric padding's extra end rows */
    if (o->sh < 1 || o->sw < 1 || o->ph < 0 || o->pw < 0 || o->ph_end < 0 || o->pw_end < 0 ||
        H + 2 * o->ph < o->kh || W + 2 * o->pw < o->kw)
        return wl_op_fail(c, "pool window %dx%d stride %dx%d does not fit the input", o->kh, o->kw, o->sh, o->sw);
    int64_t od[4] = {x->dim[0], x->dim[1], out_dim(H, o->kh, o->sh, o->ph, o->ceil_mode),
                     out_dim(W, o->kw, o->sw, o->pw, o->ceil_mode)};
    o->flops = (double)o->kh * o->kw * shape_elems(4, od);
    return want_out(c, 0, 4, od);
}

static int check_concat(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0);
    int64_t d[WL_MAX_RANK];
    if (o->axis < 0 || o->axis >= x->rank)
        return wl_op_fail(c, "axis %d out of range for rank %d", o->axis, x->rank);
    for (int i = 0; i < x->rank; i++)
        d[i] = x->dim[i];
    for (int k = 1; k < o->n_in; k++) {
        const struct wl_tensor *y = in(c, k);
        if (y->rank != x->rank)
            return wl_op_fail(c, "concat inputs have ranks %d and %d", x->rank, y->rank);
        for (int i = 0; i < x->rank; i++)
            if (i != o->axis && y->dim[i] != x->dim[i])
                return wl_op_fail(c, "concat inputs differ in dimension %d (%lld vs %lld)", i, (long long)x->dim[i],
                                  (long long)y->dim[i]);
        d[o->axis] += y->dim[o->axis];
    }
    return want_out(c, 0, x->rank, d);
}

static int check_reshape(struct wl_opcheck *c)
{
    const struct wl_tensor *x = in(c, 0), *y = &c->g->t[cur(c)->out[0]];
    if (y->elems != x->elems)
        return wl_op_fail(c, "reshape of '%s' (%.0f elements) to '%s' (%.0f elements)", x->name, x->elems, y->name,
                          y->elems);
    return DSE_OK;
}

static int check_slice(struct wl_opcheck *c)
{
    const struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0), *y = &c->g->t[o->out[0]];
    int ok = y->rank == x->rank && o->axis >= 0 && o->axis < x->rank;
    for (int i = 0; ok && i < x->rank; i++)
        ok = i == o->axis ? y->dim[i] <= x->dim[i] : y->dim[i] == x->dim[i];
    if (!ok)
        return wl_op_fail(c, "'%s' is not a slice of '%s' along axis %d", y->name, x->name, o->axis);
    return DSE_OK;
}

/* transpose: the output's axis i is the input's perm[i] (a permutation of the input's axes); it moves
 * every element, no arithmetic. */
static int check_transpose(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0);
    int64_t d[WL_MAX_RANK];
    int seen[WL_MAX_RANK] = {0};
    for (int i = x->rank; i < WL_MAX_RANK; i++)
        if (o->perm[i] != -1)
            return wl_op_fail(c, "perm has more entries than the input's %d axes", x->rank);
    for (int i = 0; i < x->rank; i++) {
        int a = o->perm[i];
        if (a < 0 || a >= x->rank || seen[a]++)
            return wl_op_fail(c, "perm must list each of the input's %d axes once (perm[%d] = %d)", x->rank, i, a);
        d[i] = x->dim[a];
    }
    return want_out(c, 0, x->rank, d);
}

/* reduce: over axis, kept with extent 1; an add (or compare) per input element. */
static int check_reduce(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0);
    if (o->axis < 0 || o->axis >= x->rank)
        return wl_op_fail(c, "axis %d out of range for rank %d", o->axis, x->rank);
    int64_t d[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        d[i] = i == o->axis ? 1 : x->dim[i];
    o->flops = x->elems;
    return want_out(c, 0, x->rank, d);
}

/* gather (ONNX Gather): data [d0 .. d(r-1)], indices [i0 ..] -> data's shape with axis replaced by the
 * indices' shape; the picked slices are read (the output's elements), no arithmetic. */
static int check_gather(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0), *ix = in(c, 1);
    if (o->axis < 0 || o->axis >= x->rank)
        return wl_op_fail(c, "axis %d out of range for rank %d", o->axis, x->rank);
    if (ix->kind != WL_INDEX && !(ix->kind == WL_ACT && ix->producer >= 0))
        return wl_op_fail(c, "indices '%s' must be of kind index (or computed by an op)", ix->name);
    int r = x->rank - 1 + ix->rank, k = 0;
    if (r > WL_MAX_RANK)
        return wl_op_fail(c, "the output's rank %d exceeds %d", r, WL_MAX_RANK);
    int64_t d[WL_MAX_RANK];
    for (int i = 0; i < x->rank; i++)
        if (i == o->axis)
            for (int j = 0; j < ix->rank; j++)
                d[k++] = ix->dim[j];
        else
            d[k++] = x->dim[i];
    int rc = want_out(c, 0, r, d);
    if (!rc && x->kind == WL_WEIGHT) /* a table: only the picked rows are read */
        o->in_frac[0] = c->g->t[o->out[0]].elems / x->elems;
    return rc;
}

/* copy: any shapes; the bytes are its inputs read and its output written, no arithmetic. */
static int check_copy(struct wl_opcheck *c)
{
    (void)c;
    return DSE_OK;
}

/* A collective's device kernel reads its buffer and writes the result; an all-reduce adds the
 * members' pieces (an add per element counted), an all-gather only copies. */
static int check_allreduce(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0);
    if (o->coll_dim < 0 || o->coll_dim >= WG_COUNT)
        return wl_op_fail(c, "group %d is not a layout dimension (0 tp, 1 dp, 2 pp, 3 cp, 4 ep)", o->coll_dim);
    o->flops = x->elems;
    return want_out(c, 0, x->rank, x->dim);
}

/* An all-to-all exchanges rows (axis 1): what a device sends and what it receives may differ in
 * count (a MoE dispatch to an imbalanced share), the other dimensions not. */
static int check_alltoall(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0), *y = &c->g->t[o->out[0]];
    if (o->coll_dim < 0 || o->coll_dim >= WG_COUNT)
        return wl_op_fail(c, "group %d is not a layout dimension (0 tp, 1 dp, 2 pp, 3 cp, 4 ep)", o->coll_dim);
    int ok = y->rank == x->rank && x->rank >= 2;
    for (int i = 0; ok && i < x->rank; i++)
        ok = i == 1 || y->dim[i] == x->dim[i];
    if (!ok)
        return wl_op_fail(c, "'%s' is not '%s' with its rows (axis 1) exchanged", y->name, x->name);
    return DSE_OK;
}

static int check_allgather(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    const struct wl_tensor *x = in(c, 0), *y = &c->g->t[o->out[0]];
    if (o->coll_dim < 0 || o->coll_dim >= WG_COUNT)
        return wl_op_fail(c, "group %d is not a layout dimension (0 tp, 1 dp, 2 pp, 3 cp, 4 ep)", o->coll_dim);
    if (o->axis < 0 || o->axis >= x->rank)
        return wl_op_fail(c, "axis %d out of range for rank %d", o->axis, x->rank);
    int ok = y->rank == x->rank && x->dim[o->axis] > 0 && y->dim[o->axis] % x->dim[o->axis] == 0;
    for (int i = 0; ok && i < x->rank; i++)
        ok = i == o->axis || y->dim[i] == x->dim[i];
    if (!ok)
        return wl_op_fail(c, "'%s' is not '%s' gathered along axis %d (a whole multiple of it there, equal elsewhere)",
                          y->name, x->name, o->axis);
    return DSE_OK;
}

const struct op_info op_info[OP_COUNT] = {
    /* name         flags                min max out  eff           eff_alt              narrow          role           check */
    [OP_MATMUL] = {"matmul", OPF_GEMM, 2, 3, 1, EC_MATMUL, EC_MATMUL_SKINNY, NARROW_ROWS, ROLE_GEMM, check_matmul},
    [OP_CONV2D] = {"conv2d", OPF_GEMM, 2, 3, 1, EC_CONV, EC_CONV_DW, NARROW_GROUPED, ROLE_GEMM, check_conv2d},
    [OP_ATTENTION] = {"attention", OPF_GEMM | OPF_KV, 3, 5, 1, EC_ATTENTION, EC_ATTENTION_DECODE, NARROW_ROWS,
                      ROLE_ATTENTION, check_attention},
    [OP_SOFTMAX] = {"softmax", 0, 1, 1, 1, EC_SOFTMAX, EC_SOFTMAX, NARROW_NONE, ROLE_REDUCTION, check_softmax},
    [OP_LAYERNORM] = {"layernorm", 0, 2, 3, 1, EC_NORM, EC_NORM, NARROW_NONE, ROLE_REDUCTION, check_norm},
    [OP_RMSNORM] = {"rmsnorm", 0, 2, 2, 1, EC_NORM, EC_NORM, NARROW_NONE, ROLE_REDUCTION, check_norm},
    [OP_ELTWISE] = {"eltwise", 0, 1, 2, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_POINTWISE, check_eltwise},
    [OP_EMBEDDING] = {"embedding", 0, 2, 2, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_DATA, check_embedding},
    [OP_POOL] = {"pool", 0, 1, 1, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_DATA, check_pool},
    [OP_CONCAT] = {"concat", 0, 2, WL_MAX_IN, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_DATA, check_concat},
    [OP_RESHAPE] = {"reshape", OPF_VIEW, 1, 1, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_VIEW, check_reshape},
    [OP_SLICE] = {"slice", OPF_VIEW, 1, 1, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_VIEW, check_slice},
    [OP_ALLREDUCE] = {"allreduce", OPF_COLL, 1, 1, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_COLL, check_allreduce},
    [OP_ALLGATHER] = {"allgather", OPF_COLL, 1, 1, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_COLL, check_allgather},
    [OP_ALLTOALL] = {"alltoall", OPF_COLL, 1, 1, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_COLL, check_alltoall},
    [OP_TRANSPOSE] = {"transpose", 0, 1, 1, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_DATA, check_transpose},
    [OP_REDUCE] = {"reduce", 0, 1, 1, 1, EC_SOFTMAX, EC_SOFTMAX, NARROW_NONE, ROLE_REDUCTION, check_reduce},
    [OP_GATHER] = {"gather", 0, 2, 2, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_DATA, check_gather},
    [OP_COPY] = {"copy", 0, 1, WL_MAX_IN, 1, EC_ELTWISE, EC_ELTWISE, NARROW_NONE, ROLE_DATA, check_copy},
};
_Static_assert(sizeof op_info / sizeof op_info[0] == OP_COUNT, "one op_info row per enum op_type");

int wl_op_check(struct wl_opcheck *c)
{
    struct wl_op *o = cur(c);
    if ((unsigned)o->type >= OP_COUNT)
        return wl_op_fail(c, "unknown operator type");
    const struct op_info *oi = &op_info[o->type];
    if (o->n_in < oi->min_in || o->n_in > oi->max_in)
        return wl_op_fail(c, "%s takes %d to %d inputs, got %d", oi->name, oi->min_in, oi->max_in, o->n_in);
    if (o->n_out != oi->n_out)
        return wl_op_fail(c, "%s gives %d output(s), got %d", oi->name, oi->n_out, o->n_out);
    o->macs = o->flops = 0;
    o->gm = o->gn = o->gk = o->gbatch = 0;
    for (int k = 0; k < WL_MAX_IN; k++)
        o->in_frac[k] = 1;
    const struct wl_tensor *y = &c->g->t[o->out[0]];
    o->cols = y->rank > 0 && y->dim[y->rank - 1] > 0 ? (double)y->dim[y->rank - 1] : 1;
    o->rows = y->elems / o->cols;
    return oi->check(c);
}

const char *op_type_name(enum op_type t) { return (unsigned)t < OP_COUNT ? op_info[t].name : "?"; }

int op_type_from_name(const char *s)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(op_info[i].name, s) == 0)
            return i;
    return -1;
}

void op_type_list(char *buf, unsigned long n)
{
    size_t at = 0;
    if (n)
        buf[0] = '\0';
    for (int i = 0; i < OP_COUNT && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "", op_info[i].name);
}

int op_type_is_gemm(enum op_type t) { return (unsigned)t < OP_COUNT && (op_info[t].flags & OPF_GEMM); }

int wl_op_is_view(const struct wl_op *op) { return (op_info[op->type].flags & OPF_VIEW) || op->elided; }
