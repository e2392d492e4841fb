/* eval_par.c -- a parallel layout's effect on a design point (eval.h, par.h): the pipeline's schedule
 * and its sends between stages, a graph's split into stages, the batch a replica and a micro-batch
 * run, and the checks that a layout can run a workload. */
#include "eval_impl.h"

#include <math.h>
#include <string.h>

/* The stage split of g (eval_graphs: w_layers, w_before, w_after, boundary): a repeated op (count > 1)
 * is a layer's; a weight read only outside them goes with the first stage when read before the first
 * layer op, the last when after (both for a tied table); the boundary is input 0 of the first layer op. */
void eval_stage_split(const struct wl_graph *g, double *w_layers, double *w_before, double *w_after,
                      double *boundary)
{
    int first = -1, last = -1;
    for (int i = 0; i < g->n_op; i++)
        if (g->op[i].count > 1) {
            if (first < 0)
                first = i;
            last = i;
        }
    *w_layers = *w_before = *w_after = 0;
    *boundary = first >= 0 ? g->t[g->op[first].in[0]].elems : 0;
    for (int t = 0; t < g->n_t; t++) {
        const struct wl_tensor *tt = &g->t[t];
        if (tt->kind != WL_WEIGHT)
            continue;
        int before = 0, after = 0, inside = 0;
        for (int i = 0; i < g->n_op; i++)
            for (int k = 0; k < g->op[i].n_in; k++)
                if (g->op[i].in[k] == t) {
                    if (first >= 0 && i >= first && i <= last && g->op[i].count > 1)
                        inside = 1;
                    else if (first < 0 || i < first)
                        before = 1;
                    else
                        after = 1;
                }
        if (inside)
            *w_layers += tt->elems * tt->count;
        else {
            *w_before += before ? tt->elems * tt->count : 0;
            *w_after += after ? tt->elems * tt->count : 0;
        }
    }
}

/* A layout's pipeline (par.h; docs/models.md, "Pipeline stages"). The L repeated layers are cut into
 * pp stages of at most c = ceil(L / pp) layers each (an even cut where pp divides L, as Megatron-LM
 * requires; otherwise some stages hold c and the rest c - 1); the first stage also runs what comes
 * before the layers (the embeddings), the last what comes after them (the final norm, the head, the
 * loss). With T_l the time of all L layers of one pass of one micro-batch, T_b and T_a that of the ops
 * before and after them, the slowest stage takes
 *   t_max = c / L x T_l + max(T_b, T_a)          (the end stages assumed to hold c layers: conservative)
 * and the whole graph once through every stage G = T_l + T_b + T_a. M micro-batches take
 *   prefill (or a whole inference), training:  G + (M - 1) t_max   (the first micro-batch through every
 *                                              stage, then one leaving the slowest stage each t_max;
 *                                              balanced stages give (M + pp - 1) G / pp)
 *   a decode step of all M:                    max(M t_max, G)       (a micro-batch's next token needs its
 *                                              last, so the pipe is bound by the slowest stage only
 *                                              when M micro-batches keep every stage busy)
 * Both are linear in the ops' times but for the max: eval_pipe_factors gives each part's factor (ops
 * before, layers, after), so that sum(factor x part) is the pipeline's time: f[STAGE_LAYERS] per layer
 * op's time, the slower end's M (or 1 + (M - 1)), the other end's 1 (or 0: it runs on another stage
 * while the slowest stage's work sets the pace). A training step's backward takes its forward's factors
 * (which end is slower is decided by the forward). The device's own share d[] (its energy, for its
 * power) is the slowest stage's: c / L of the layers and the slower end, M micro-batches. With pp = 1
 * every factor is M. Plus, on the critical path, the (pp - 1) sends of the boundary activation, each tp
 * rank sending its 1/tp (Megatron-LM's scatter/gather). Energy: every device of the system, every
 * micro-batch (escale), unchanged by the cut. */
void eval_layer_span(const struct wl_graph *g, int *first, int *last)
{
    *first = *last = -1;
    for (int i = 0; i < g->n_op; i++)
        if (g->op[i].count > 1) {
            if (*first < 0)
                *first = i;
            *last = i;
        }
}

int eval_stage_of(int i, int first, int last)
{
    return first < 0 ? STAGE_LAYERS : i < first ? STAGE_BEFORE : i > last ? STAGE_AFTER : STAGE_LAYERS;
}

void eval_pipe_factors(const struct par_layout *l, int64_t layers, int decode, const double t[STAGE_COUNT],
                       double f[STAGE_COUNT], double d[STAGE_COUNT])
{
    double M = l->microbatches > 0 ? l->microbatches : 1, pp = l->n[PAR_PP] > 0 ? l->n[PAR_PP] : 1;
    for (int k = 0; k < STAGE_COUNT; k++)
        f[k] = d[k] = M;
    if (pp <= 1 || layers < 1)
        return;
    double L = (double)layers, share = ceil(L / pp) / L; /* the slowest stage's share of the layers */
    int slow = t[STAGE_BEFORE] >= t[STAGE_AFTER] ? STAGE_BEFORE : STAGE_AFTER, other = STAGE_BEFORE + STAGE_AFTER - slow;
    double tmax = share * t[STAGE_LAYERS] + t[slow], G = t[STAGE_BEFORE] + t[STAGE_LAYERS] + t[STAGE_AFTER];
    d[STAGE_LAYERS] = M * share;
    d[other] = 0;
    if (!decode) {
        f[STAGE_LAYERS] = 1 + (M - 1) * share;
        f[other] = 1;
    } else if (M * tmax >= G) {
        f[STAGE_LAYERS] = M * share;
        f[other] = 0;
    } else { /* fewer micro-batches than keep the stages busy: each step is one pass through them all */
        f[STAGE_BEFORE] = f[STAGE_LAYERS] = f[STAGE_AFTER] = 1;
    }
}

void eval_stage_scale(struct eval_result *res, int part)
{
    res->tscale = res->stage_f[part];
    res->dscale = res->stage_d[part];
}

int64_t eval_layers(const struct eval_req *r)
{
    return r->model->kind == WLM_TRANSFORMER ? r->model->tf.layers : 0;
}

/* The slowest stage's share of the layers, for its memory: ceil(L / pp) / L (1 without stages). */
double eval_stage_share(const struct par_layout *l, int64_t layers)
{
    double pp = l->n[PAR_PP] > 0 ? l->n[PAR_PP] : 1;
    return pp > 1 && layers > 0 ? ceil((double)layers / pp) / (double)layers : 1;
}

int eval_pipe_sends(const struct eval_req *r, struct eval_result *res, double elems, struct dse_err *e)
{
    const struct par_layout *l = &r->layout;
    int pp = l->n[PAR_PP], tp = l->n[PAR_TP] > 0 ? l->n[PAR_TP] : 1, size, stride;
    if (pp <= 1 || !(elems > 0))
        return DSE_OK;
    par_group(l, PAR_PP, &size, &stride);
    struct coll_cost c;
    double bytes = elems * prec_bytes(r->x.prec.a);
    int rc = par_coll_cost(&r->sys->topo, COLL_SENDRECV, 2, stride, bytes / tp, &c, e);
    if (rc)
        return rc;
    double t = (pp - 1) * c.time_s, dp = l->n[PAR_DP] > 0 ? l->n[PAR_DP] : 1, M = l->microbatches > 0 ? l->microbatches : 1;
    res->t.latency_s += t;
    res->t.xfer_s += t;
    res->t.comm_s += t;
    res->t.comm_total_s += t; /* on the critical path: all of it exposed */
    res->t.pipe_s += t;
    res->t.energy_link_J += dp * M * (pp - 1) * tp * c.energy_J;
    res->t.pipe_J += dp * M * (pp - 1) * tp * c.energy_J;
    res->dev_busy_s[res->part][r->dev] += t;
    return DSE_OK;
}

int64_t eval_replica_batch(const struct eval_req *r)
{
    int dp = r->layout.n[PAR_DP] > 0 ? r->layout.n[PAR_DP] : 1;
    return r->phase == PH_TRAIN ? r->batch / dp : r->batch;
}

int64_t eval_micro_batch(const struct eval_req *r)
{
    return eval_replica_batch(r) / (r->layout.microbatches > 0 ? r->layout.microbatches : 1);
}

int eval_check_layout(const struct eval_req *r, struct dse_err *e)
{
    const struct par_layout *l = &r->layout;
    int M = l->microbatches > 0 ? l->microbatches : 1, pp = l->n[PAR_PP] > 0 ? l->n[PAR_PP] : 1;
    int cp = l->n[PAR_CP] > 0 ? l->n[PAR_CP] : 1;
    int devs = l->n[PAR_TP] * cp * (l->n[PAR_DP] > 0 ? l->n[PAR_DP] : 1) * pp;
    if (devs > 1 && (r->sys->topo.n_level == 0 || r->dev != r->sys->topo.dev))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "a layout of %d devices runs on the topology's device%s%s%s", devs,
                           r->sys->topo.n_level ? " '" : " (system '", r->sys->topo.n_level ? r->sys->dev[r->sys->topo.dev].name : r->sys->name,
                           r->sys->topo.n_level ? "'" : "' has no topology)");
    int dp = r->layout.n[PAR_DP] > 0 ? r->layout.n[PAR_DP] : 1;
    if (r->phase == PH_TRAIN && r->batch % dp)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "dp %d replicas must divide the global batch %lld of a training step",
                           dp, (long long)r->batch);
    if (eval_replica_batch(r) % M)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "microbatches %d must divide the batch %lld%s", M,
                           (long long)eval_replica_batch(r), r->phase == PH_TRAIN ? " of a replica" : "");
    if (M > 1 && pp == 1 && r->phase != PH_TRAIN)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL,
                           "microbatches %d need pipeline stages (pp > 1), or a training step (gradient accumulation)", M);
    if (r->phase == PH_TRAIN && r->train.recompute == RC_FULL && r->model->kind != WLM_TRANSFORMER)
        return dse_err_set(e, DSE_EINPUT, r->model->path, NULL,
                           "full recomputation keeps each transformer layer's input; %s has no layers to checkpoint",
                           r->model->name);
    if (r->phase == PH_TRAIN && (r->train.zero < 0 || r->train.zero > 3))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "zero: expected a ZeRO stage 0 to 3, got %d", r->train.zero);
    if (pp > 1) {
        if (r->model->kind != WLM_TRANSFORMER)
            return dse_err_set(e, DSE_EINPUT, r->model->path, NULL,
                               "pipeline stages (pp %d) split a model's repeated layers; %s has none to split: use dp",
                               pp, r->model->name);
        if (pp > r->model->tf.layers)
            return dse_err_set(e, DSE_EINPUT, r->model->path, "num_hidden_layers",
                               "pp %d stages need at least as many layers, %s has %lld", pp, r->model->name,
                               (long long)r->model->tf.layers);
    }
    int rc = wl_check_split(r->model, l->n[PAR_TP], cp, l->ep, e);
    if (rc)
        return rc;
    if (cp > 1 && r->phase != PH_DECODE && r->prompt % cp) /* decoding splits the cache, which need not divide */
        return dse_err_set(e, DSE_EINPUT, NULL, "--prompt", "%lld tokens do not split over cp %d (cp must divide them)",
                           (long long)r->prompt, cp);
    if (l->ep > 1) {
        struct wl_transformer sc = r->model->tf;
        if ((rc = wl_expert_parallel(&sc, l->ep, l->moe_imbalance > 0 ? l->moe_imbalance : 1, r->model->path, e)))
            return rc;
    }
    if (l->n[PAR_TP] > 1) {
        struct wl_transformer sc;
        return wl_shard_transformer(&r->model->tf, l->n[PAR_TP], r->sw && r->sw->tp_padding, r->model->path, &sc, e);
    }
    return DSE_OK;
}

/* Tensor-parallel communication overlap (a stack's "overlap": {"tp_comm": true}, Megatron-LM's
 * --tp-comm-overlap through Transformer Engine): with sequence parallelism a tp all-reduce is a
 * reduce-scatter of the GEMM output before it and an all-gather of the input of the GEMMs after it,
 * and each half is pipelined in chunks with its GEMM. Modelled as
 *   exposed = max(0, t/2 - g_prev) + max(0, t/2 - g_next)
 * t the all-reduce's time, g_prev the kernel time of the GEMM that produces its input, g_next that of
 * the GEMMs reading the first GEMM input downstream of it (within the repeated layer, wrapping to its
 * start: the next layer's q, k and v); perfect overlap up to the GEMM's length (the GEMM's slowdown from
 * sharing its SMs with the copy is not modelled). An all-reduce outside a repeated layer (count 1) or
 * beside no GEMM hides nothing. eval_tp_neighbours finds the GEMMs: *prev (or -1) and up to max of the
 * next; returns how many next. */
int eval_tp_neighbours(const struct wl_graph *g, int i, int *prev, int *next, int max)
{
    const struct wl_op *op = &g->op[i];
    *prev = -1;
    if (op->count <= 1)
        return 0;
    int b0 = i, b1 = i, n = 0;
    while (b0 > 0 && g->op[b0 - 1].count == op->count)
        b0--;
    while (b1 + 1 < g->n_op && g->op[b1 + 1].count == op->count)
        b1++;
    int p = op->n_in ? g->t[op->in[0]].producer : -1;
    if (p >= b0 && p <= b1 && g->op[p].type == OP_MATMUL)
        *prev = p;
    int x = -1, len = b1 - b0 + 1;
    for (int s = 1; s < len && x < 0; s++) { /* the first GEMM after it, the layer read as a ring */
        const struct wl_op *o = &g->op[b0 + (i - b0 + s) % len];
        if (o->type == OP_MATMUL && o->n_in && g->t[o->in[0]].kind == WL_ACT)
            x = o->in[0];
    }
    for (int j = b0; j <= b1 && x >= 0 && n < max; j++)
        if (g->op[j].type == OP_MATMUL && g->op[j].n_in && g->op[j].in[0] == x)
            next[n++] = j;
    return n;
}

double eval_tp_exposed(double t, double g_prev, double g_next)
{
    double h = t / 2, a = h > g_prev ? h - g_prev : 0, b = h > g_next ? h - g_next : 0;
    return a + b;
}
