/* pass.c -- a software stack's graph passes and memory planner (see pass.h).
 *
 * Passes, in order:
 *   gemm_merge  matmuls that read the same input, with rank-2 weights of the same K each read by that
 *               op alone (and biases alike, or none), become one matmul of N = sum of their N over a
 *               weight [K, sum N]; each former op becomes a view (slice) of the merged output. Parameters
 *               are unchanged; the input is read once and one larger GEMM runs (QKV and gate/up in
 *               vLLM, TensorRT-LLM, XLA).
 *   bn_fold     a BatchNorm (eltwise batchnorm) whose input is a convolution's or matmul's output read
 *               by it alone is folded into that op's weights and bias: it becomes a view, and the
 *               producer adds its bias in the epilogue (1 FLOP per output when it had none).
 *   fusion      an op joins the kernel of the producer of one of its inputs (input 0 first) when that
 *               tensor (through views) has this op as its only reader, or as the first of its readers
 *               (then it is still written: vLLM's fused residual add + RMSNorm), and the pair is one the stack
 *               fuses: element-wise after a GEMM or convolution (epilogue_fusion), element-wise after
 *               element-wise, a gather or a pool (eltwise_fusion), element-wise after a norm or softmax,
 *               or a norm or softmax after element-wise ops (norm_fusion; one reduction per kernel).
 *               The joining input and the producer's output stay on chip (fused_in, fused_out).
 *               Kernels are chains along single-reader edges, so the kernel graph is acyclic; ops are
 *               then reordered so that each kernel's ops are consecutive.
 *   attention   without fused_attention, attention runs as QK^T, scale and mask, softmax and PV
 *               kernels with the S x T scores in main memory (attn_unfused).
 *   kv cache    with kv_cache "concat", attention reading a cache copies it every step (kv_concat).
 * Launches: the first non-view op of each kernel pays one (unfused attention 4). */
#include "pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- gemm_merge ---- */

static int mergeable(const struct wl_graph *g, const struct wl_op *o, const int *readers)
{
    if (o->type != OP_MATMUL || o->experts > 0 || o->elided || o->n_in < 2)
        return 0;
    const struct wl_tensor *w = &g->t[o->in[1]];
    if (w->kind != WL_WEIGHT || w->rank != 2 || readers[o->in[1]] != 1)
        return 0;
    if (o->n_in == 3 && (g->t[o->in[2]].kind != WL_WEIGHT || readers[o->in[2]] != 1))
        return 0;
    return 1;
}

static int same_group(const struct wl_op *a, const struct wl_op *b)
{
    return a->in[0] == b->in[0] && a->n_in == b->n_in && a->transb == b->transb && a->count == b->count &&
           a->gk == b->gk;
}

/* Merges group[0..n) of g's ops (see above); drop marks the weights it replaced. */
static int merge_group(struct wl_graph *g, const int *group, int n, int serial, char *drop, struct dse_err *e)
{
    const struct wl_op *o0 = &g->op[group[0]];
    const struct wl_tensor *y0 = &g->t[o0->out[0]];
    int64_t N = 0, K = (int64_t)o0->gk, d[WL_MAX_RANK];
    for (int i = 0; i < n; i++)
        N += (int64_t)g->op[group[i]].gn;
    char name[WL_NAME_LEN], wname[WL_NAME_LEN], bname[WL_NAME_LEN], oname[WL_NAME_LEN];
    if (snprintf(name, sizeof name, "%s+%d", o0->name, n - 1) >= (int)sizeof name)
        snprintf(name, sizeof name, "merged%d", serial);
    snprintf(wname, sizeof wname, "merged%d.weight", serial);
    snprintf(bname, sizeof bname, "merged%d.bias", serial);
    snprintf(oname, sizeof oname, "merged%d.out", serial);
    int64_t wd[2] = {o0->transb ? N : K, o0->transb ? K : N};
    for (int i = 0; i < y0->rank; i++)
        d[i] = y0->dim[i];
    d[y0->rank - 1] = N;
    int ins[3], out, rank = y0->rank; /* g->t may move as tensors are added */
    ins[0] = o0->in[0];
    if ((ins[1] = wl_add_tensor(g, wname, WL_WEIGHT, 2, wd, e)) < 0)
        return e->code;
    if (o0->n_in == 3 && (ins[2] = wl_add_tensor(g, bname, WL_WEIGHT, 1, &N, e)) < 0)
        return e->code;
    if ((out = wl_add_tensor(g, oname, WL_ACT, rank, d, e)) < 0)
        return e->code;
    o0 = &g->op[group[0]];
    int transb = o0->transb, n_in = o0->n_in;
    double count = o0->count;
    int k = wl_add_op(g, name, OP_MATMUL, ins, n_in, &out, 1, e);
    if (k < 0)
        return e->code;
    g->op[k].transb = transb;
    g->op[k].count = count;
    for (int i = 0; i < n; i++) { /* each part: a view of its columns of the merged output */
        struct wl_op *o = &g->op[group[i]];
        for (int m = 1; m < o->n_in; m++)
            drop[o->in[m]] = 1;
        o->type = OP_SLICE;
        o->n_in = 1;
        o->in[0] = out;
        o->axis = g->t[o->out[0]].rank - 1;
        o->transb = 0;
    }
    return DSE_OK;
}

static int gemm_merge(struct wl_graph *g, struct dse_err *e)
{
    int nt = g->n_t, no = g->n_op, rc = DSE_OK, serial = 0, merged = 0;
    /* merging adds at most 3 tensors per group (at most no / 2 groups) */
    int *readers = calloc((size_t)nt + 1, sizeof *readers), *group = malloc(sizeof *group * (size_t)(no + 1));
    char *done = calloc((size_t)no + 1, 1), *drop = calloc((size_t)nt + 3 * (size_t)no / 2 + 1, 1);
    if (!readers || !group || !done || !drop) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < no; i++)
        for (int m = 0; m < g->op[i].n_in; m++)
            readers[g->op[i].in[m]]++;
    for (int i = 0; i < no && !rc; i++) {
        if (done[i] || !mergeable(g, &g->op[i], readers))
            continue;
        int n = 0;
        for (int j = i; j < no; j++)
            if (!done[j] && mergeable(g, &g->op[j], readers) && same_group(&g->op[i], &g->op[j])) {
                group[n++] = j;
                done[j] = 1;
            }
        if (n > 1) {
            rc = merge_group(g, group, n, serial++, drop, e);
            merged = 1;
        }
    }
    if (!rc && merged && !(rc = wl_drop_tensors(g, drop, e)))
        rc = wl_finalize(g, g->name, e); /* the merged op before its views: sorted, re-derived */
out:
    free(readers);
    free(group);
    free(done);
    free(drop);
    return rc;
}

/* ---- bn_fold and fusion ---- */

/* The op that produces tensor t, which op `reader` reads, looking through views read by one op alone;
 * *path gets the views passed, *np their number; *shared is set when t itself has other readers too
 * (then reader must be its first: its producer's output is still written, and no other reader can lie
 * between them). -1 when there is no such producer. */
static int source_op(const struct wl_graph *g, const int *readers, const int *first_reader, int t, int reader,
                     int *path, int *np, int *shared)
{
    *np = 0;
    *shared = readers[t] > 1;
    if (*shared && (first_reader[t] != reader || !(g->t[t].producer >= 0 && !wl_op_is_view(&g->op[g->t[t].producer]))))
        return -1;
    for (;;) {
        if (readers[t] != 1 && *np > 0)
            return -1;
        int p = g->t[t].producer;
        if (p < 0 || !wl_op_is_view(&g->op[p]))
            return p;
        if (g->op[p].type != OP_RESHAPE && g->op[p].type != OP_SLICE && !g->op[p].elided)
            return -1;
        path[(*np)++] = p;
        t = g->op[p].in[0];
    }
}

static void bn_fold(struct wl_graph *g, const int *readers)
{
    for (int i = 0; i < g->n_op; i++) {
        struct wl_op *o = &g->op[i];
        if (o->type != OP_ELTWISE || o->fn != FN_BATCHNORM || o->elided || readers[o->in[0]] != 1)
            continue;
        int p = g->t[o->in[0]].producer;
        if (p < 0 || (g->op[p].type != OP_CONV2D && g->op[p].type != OP_MATMUL) || g->op[p].count != o->count)
            continue;
        o->elided = 1;
        o->flops = 0;
        if (g->op[p].n_in == 2) /* the folded shift becomes its bias */
            g->op[p].flops += g->t[g->op[p].out[0]].elems;
    }
}

struct kinfo { /* a kernel being formed: its first op's role, whether it holds a reduction, its last op */
    enum op_role lead;
    int reduction, tail;
};

static int fuses(const struct sw_stack *s, const struct kinfo *k, enum op_role r)
{
    if (r == ROLE_POINTWISE)
        return (k->lead == ROLE_GEMM && pass_has(s, PASS_EPILOGUE)) ||
               ((k->lead == ROLE_POINTWISE || k->lead == ROLE_DATA) && !k->reduction && pass_has(s, PASS_ELTWISE)) ||
               (k->reduction && k->lead != ROLE_GEMM && pass_has(s, PASS_NORM));
    if (r == ROLE_REDUCTION)
        return k->lead == ROLE_POINTWISE && !k->reduction && pass_has(s, PASS_NORM);
    return 0;
}

static int fuse(const struct sw_stack *s, struct wl_graph *g, const int *readers, struct dse_err *e)
{
    int n = g->n_op, nt = g->n_t, rc = DSE_OK, edges = 0;
    for (int i = 0; i < n; i++)
        edges += g->op[i].n_in;
    struct kinfo *ki = malloc(sizeof *ki * (size_t)n);
    int *path = malloc(sizeof *path * (size_t)n), *order = malloc(sizeof *order * (size_t)n);
    int *next = malloc(sizeof *next * (size_t)n), *indeg = calloc((size_t)n, sizeof *indeg);
    int *queue = malloc(sizeof *queue * (size_t)n), *newid = malloc(sizeof *newid * (size_t)n);
    int *cstart = calloc((size_t)nt + 1, sizeof *cstart), *cons = malloc(sizeof *cons * (size_t)(edges + 1));
    int *first_reader = malloc(sizeof *first_reader * (size_t)(nt + 1));
    if (!ki || !path || !order || !next || !indeg || !queue || !newid || !cstart || !cons || !first_reader) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int t = 0; t < nt; t++)
        first_reader[t] = -1;
    for (int i = n - 1; i >= 0; i--)
        for (int m = 0; m < g->op[i].n_in; m++)
            first_reader[g->op[i].in[m]] = i;
    for (int i = 0; i < n; i++) {
        g->op[i].kernel = i;
        ki[i].lead = op_info[g->op[i].type].role;
        ki[i].reduction = ki[i].lead == ROLE_REDUCTION;
        ki[i].tail = i;
    }
    for (int i = 0; i < n; i++) {
        struct wl_op *o = &g->op[i];
        enum op_role r = op_info[o->type].role;
        if (wl_op_is_view(o) || (r != ROLE_POINTWISE && r != ROLE_REDUCTION))
            continue;
        for (int slot = 0; slot < o->n_in; slot++) {
            int np, shared, q = source_op(g, readers, first_reader, o->in[slot], i, path, &np, &shared);
            if (q < 0 || wl_op_is_view(&g->op[q]) || g->op[q].count != o->count)
                continue;
            struct kinfo *k = &ki[g->op[q].kernel];
            if (k->tail != q || !fuses(s, k, r)) /* a kernel grows at its end only: a chain */
                continue;
            o->kernel = g->op[q].kernel;
            for (int v = 0; v < np; v++)
                g->op[path[v]].kernel = o->kernel;
            k->reduction |= r == ROLE_REDUCTION;
            k->tail = i;
            o->fused_in |= (unsigned char)(1u << slot);
            if (!shared) /* read only here: never written (a shared one is, for its other readers) */
                g->op[q].fused_out |= 1;
            break;
        }
    }
    /* A view left alone (a BatchNorm folded into the convolution before it, a flatten) launches nothing:
     * it joins the kernel that writes what it views, so that the kernels listed are those launched. */
    for (int i = 0; i < n; i++) {
        struct wl_op *o = &g->op[i];
        int p = o->n_in ? g->t[o->in[0]].producer : -1;
        if (wl_op_is_view(o) && o->kernel == i && p >= 0)
            o->kernel = g->op[p].kernel;
    }
    /* A kernel's id is the index of its first op. Kahn's algorithm over kernels in the order of their
     * first ops; each kernel's ops then follow one another in their own (topological) order. next[]
     * links a kernel's ops; cstart/cons list the readers of each tensor. */
    for (int i = 0; i < n; i++)
        queue[i] = -1; /* the last op seen of each kernel, while linking */
    for (int i = n - 1; i >= 0; i--) {
        next[i] = queue[g->op[i].kernel];
        queue[g->op[i].kernel] = i;
    }
    for (int i = 0; i < n; i++)
        for (int m = 0; m < g->op[i].n_in; m++) {
            cstart[g->op[i].in[m] + 1]++;
            int p = g->t[g->op[i].in[m]].producer;
            if (p >= 0 && g->op[p].kernel != g->op[i].kernel)
                indeg[g->op[i].kernel]++;
        }
    for (int t = 0; t < nt; t++)
        cstart[t + 1] += cstart[t];
    for (int i = n - 1; i >= 0; i--) /* each tensor's range filled from its back: cstart[t] ends at its start */
        for (int m = g->op[i].n_in - 1; m >= 0; m--)
            cons[--cstart[g->op[i].in[m] + 1] ] = i;
    /* now cstart[t + 1] is the start of t's range: shift back so [cstart[t], cstart[t + 1]) is t's */
    memmove(cstart, cstart + 1, sizeof *cstart * (size_t)nt);
    cstart[nt] = edges;
    int head = 0, tail = 0, emitted = 0, kid = 0;
    for (int i = 0; i < n; i++)
        if (g->op[i].kernel == i && indeg[i] == 0)
            queue[tail++] = i;
    while (head < tail) {
        int k = queue[head++];
        newid[k] = kid++;
        for (int i = k; i >= 0; i = next[i]) {
            order[emitted++] = i;
            for (int q = 0; q < g->op[i].n_out; q++) {
                int t = g->op[i].out[q];
                for (int c = cstart[t]; c < cstart[t + 1]; c++) {
                    int kc = g->op[cons[c]].kernel;
                    if (kc != k && --indeg[kc] == 0)
                        queue[tail++] = kc;
                }
            }
        }
    }
    if (emitted != n) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "fusion of '%s' left %d operators unordered", g->name, n - emitted);
        goto out;
    }
    for (int i = 0; i < n; i++)
        g->op[i].kernel = newid[g->op[i].kernel];
    if ((rc = wl_reorder(g, order, e)))
        goto out;
    for (int i = 0; i < n; i++) { /* the first op of a kernel that is not a view launches it */
        struct wl_op *o = &g->op[i];
        int lead = !wl_op_is_view(o);
        for (int j = i - 1; lead && j >= 0 && g->op[j].kernel == o->kernel; j--)
            lead = wl_op_is_view(&g->op[j]);
        o->launches = (unsigned char)lead;
    }
out:
    free(ki);
    free(path);
    free(order);
    free(next);
    free(indeg);
    free(queue);
    free(newid);
    free(cstart);
    free(cons);
    free(first_reader);
    return rc;
}

int pass_apply(const struct sw_stack *s, struct wl_graph *g, struct dse_err *e)
{
    int rc;
    if (!s)
        return DSE_OK;
    if (pass_has(s, PASS_GEMM_MERGE) && (rc = gemm_merge(g, e)))
        return rc;
    int *readers = calloc((size_t)g->n_t + 1, sizeof *readers);
    if (!readers)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (int i = 0; i < g->n_op; i++)
        for (int m = 0; m < g->op[i].n_in; m++)
            readers[g->op[i].in[m]]++;
    if (pass_has(s, PASS_BN_FOLD))
        bn_fold(g, readers);
    rc = pass_has(s, PASS_EPILOGUE) || pass_has(s, PASS_ELTWISE) || pass_has(s, PASS_NORM) || pass_has(s, PASS_BN_FOLD)
             ? fuse(s, g, readers, e)
             : DSE_OK;
    free(readers);
    if (rc)
        return rc;
    for (int i = 0; i < g->n_op; i++) {
        struct wl_op *o = &g->op[i];
        if (o->type == OP_ELTWISE && o->elided)
            o->launches = 0;
        if (o->type != OP_ATTENTION)
            continue;
        o->attn_unfused = !pass_has(s, PASS_ATTENTION);
        if (o->attn_unfused)
            o->launches = 4;
        o->kv_concat = s->kv == KV_CONCAT && o->n_in == 5;
    }
    return DSE_OK;
}

double pass_kernel_launches(const struct wl_graph *g)
{
    double n = 0;
    for (int i = 0; i < g->n_op; i++)
        n += g->op[i].launches * g->op[i].count;
    return n;
}

/* ---- memory planner ---- */

int pass_plan_memory(const struct sw_stack *s, const struct hw_device *d, const struct wl_graph *g,
                     const struct prec_cfg *p, signed char *home)
{
    if (!s || (!s->weights_on_chip && !s->activations_on_chip && !pass_has(s, PASS_LAYER_FUSION)))
        return 0;
    int L = -1, last = d->n_mem - 1;
    /* the largest software-managed level below main memory, not the engines' own (accumulators) */
    for (int l = hw_first_shared_level(d); l < last; l++)
        if (d->mem[l].kind == MEM_SRAM && (L < 0 || d->mem[l].capacity_bytes > d->mem[L].capacity_bytes))
            L = l;
    if (L < 0)
        return 0;
    double cap = d->mem[L].capacity_bytes, pinned = 0, limit = s->pin_share * cap;
    for (int t = 0; t < g->n_t; t++)
        home[t] = (signed char)(g->t[t].kind == WL_WEIGHT ? last : -1);
    int all_act = 0; /* activations_first, where the largest op's activations fit the level at all */
    if (s->activations_first) { /* the largest op's activations first; the weights get the rest */
        double peak = 0;
        for (int i = 0; i < g->n_op; i++) {
            const struct wl_op *o = &g->op[i];
            double b = 0;
            for (int m = 0; m < o->n_in; m++)
                b += g->t[o->in[m]].kind == WL_ACT ? wl_tensor_bytes(&g->t[o->in[m]], p) : 0;
            for (int m = 0; m < o->n_out; m++)
                b += g->t[o->out[m]].kind == WL_ACT ? wl_tensor_bytes(&g->t[o->out[m]], p) : 0;
            peak = b > peak ? b : peak;
        }
        all_act = peak <= cap;
        if (all_act && cap - peak < limit)
            limit = cap - peak;
    }
    if (s->weights_on_chip)
        for (int i = 0; i < g->n_op; i++) {
            const struct wl_op *o = &g->op[i];
            for (int m = 0; m < o->n_in; m++) {
                const struct wl_tensor *t = &g->t[o->in[m]];
                if (t->kind != WL_WEIGHT || home[o->in[m]] != last || wl_op_is_view(o))
                    continue;
                double b = wl_tensor_bytes(t, p) * t->count;
                if (pinned + b <= limit) {
                    home[o->in[m]] = (signed char)L;
                    pinned += b;
                }
            }
        }
    double room = 0.5 * (cap - pinned);
    for (int t = 0; t < g->n_t; t++) {
        const struct wl_tensor *x = &g->t[t];
        if (x->kind != WL_ACT)
            continue;
        double b = wl_tensor_bytes(x, p), band = b;
        if (pass_has(s, PASS_LAYER_FUSION) && x->last_use >= 0) {
            const struct wl_op *c = &g->op[x->last_use];
            int conv = (c->type == OP_CONV2D || c->type == OP_POOL) && x->rank == 4 && x->dim[2] > 0;
            double rows = x->rank >= 2 ? (double)x->dim[x->rank == 4 ? 2 : x->rank - 2] : 1;
            double keep = conv ? (double)(c->kh + c->sh) : 1;
            band = keep < rows ? b * keep / rows : b;
        }
        home[t] = (signed char)(all_act || b <= room || band <= room ? L : last);
    }
    return 1;
}
