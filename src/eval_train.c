/* eval_train.c -- the training step (--phase train; docs/models.md, "Training step"): the forward is
 * eval.c's, costed with the other phases; this file adds the backward from its recorded costs, the
 * gradient synchronisation, the optimizer step and the memory a device holds. */
#include "eval_impl.h"

#include <string.h>

const char *const train_opt_names[OPT_COUNT + 1] = {"adamw", "sgd", NULL};
const char *const train_recompute_names[RC_COUNT + 1] = {"none", "selective", "full", NULL};

/* The precisions a training step computes in (eval.h): one for weights and activations (mixed
 * precision keeps fp32 master weights and optimizer states beside them, eval_train_rest), in the stack's
 * training_precisions (pass.h: PASS_TRAIN_PRECS unless it declares others), on a device with a matrix
 * engine at it (fp8: Hopper's, not the A100's). Integer and weight-only formats (int8, int4, w4a16) are
 * inference quantizations: a backward pass through them is no stack's. */
int eval_check_train_prec(const struct eval_req *r, struct dse_err *e)
{
    if (r->phase != PH_TRAIN || (r->sw && !r->sw->trains)) /* an inference stack's point says why (eval.c) */
        return DSE_OK;
    unsigned ok = r->sw ? r->sw->train_precs : PASS_TRAIN_PRECS;
    const struct hw_device *d = &r->sys->dev[r->dev];
    enum prec a = r->x.prec.a;
    enum hw_engine eng;
    int why = r->x.prec.w != a ? 1 : !((ok >> a) & 1) ? 2 : !(hw_gemm_peak(d, a, &eng) > 0) ? 3 : 0;
    if (!why)
        return DSE_OK;
    char list[96] = "", pb[48]; /* the message: formatted only for a refusal (a sweep's hot path) */
    int n = 0, k = 0;
    for (int p = 0; p < P_COUNT; p++)
        n += (ok >> p) & 1;
    for (int p = 0; p < P_COUNT; p++)
        if ((ok >> p) & 1) {
            size_t at = strlen(list);
            snprintf(list + at, sizeof list - at, "%s%s", k ? (k == n - 1 ? " or " : ", ") : "", prec_names[p]);
            k++;
        }
    prec_format(&r->x.prec, pb, sizeof pb);
    const char *sw = r->sw ? r->sw->name : "none";
    if (why == 1)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL,
                           "training at %s: a training step keeps weights and activations at one precision (mixed "
                           "precision: fp32 master weights beside them); weight-only formats are inference "
                           "quantizations; stack '%s' trains in %s", pb, sw, list);
    if (why == 2)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "training at %s: software stack '%s' trains in %s (its "
                           "training_precisions), not %s", pb, sw, list, prec_names[a]);
    return dse_err_set(e, DSE_EINPUT, NULL, NULL, "training at %s: device '%s' of %s has no %s matrix engine to train in",
                       pb, d->name, r->sys->name, prec_names[a]);
}

/* What a training step's forward keeps for its backward (eval_graphs: act_saved_elems and the rest):
 * every output of an op that is not a view, count-weighted; of it the S x T scores an unfused attention
 * keeps (its softmax's probabilities) and the tensors of the residual stream's width (what a tp shard
 * holds whole: norms' and residual adds' outputs, which sequence parallelism splits); the inputs of
 * the repeated layers; the forward's FLOPs. */
void eval_train_acts(const struct wl_graph *g, struct eval_graphs *eg)
{
    eg->act_saved_elems = eg->act_scores_elems = eg->act_layer_in_elems = eg->act_whole_elems = eg->fwd_flops = 0;
    int first = -1;
    int64_t width = 0; /* the residual stream's: the last dimension of the first layer's input */
    for (int i = 0; i < g->n_op && first < 0; i++)
        if (g->op[i].count > 1) {
            first = i;
            const struct wl_tensor *x = &g->t[g->op[i].in[0]];
            width = x->rank ? x->dim[x->rank - 1] : 0;
            eg->act_layer_in_elems = x->elems * g->op[i].count;
        }
    for (int i = 0; i < g->n_op; i++) {
        const struct wl_op *op = &g->op[i];
        eg->fwd_flops += op->flops * op->count;
        if (wl_op_is_view(op))
            continue;
        for (int k = 0; k < op->n_out; k++) {
            const struct wl_tensor *t = &g->t[op->out[k]];
            if (t->kind != WL_ACT)
                continue;
            eg->act_saved_elems += t->elems * op->count;
            if (eg->tp > 1 && t->rank && t->dim[t->rank - 1] == width && op->count > 1)
                eg->act_whole_elems += t->elems * op->count;
        }
        if (op->type == OP_ATTENTION && op->attn_unfused)
            eg->act_scores_elems += model_attention_scores(op) * op->count;
    }
    eg->act_saved_elems += eg->act_scores_elems;
}

/* The backward of a training step, from the forward's recorded op costs (docs/models.md, "Training"):
 * a GEMM-like op costs twice its forward (the input's and the weight's gradients: two products of its
 * size), attention 2.5 times (FlashAttention's backward: five matrix products to the forward's two),
 * element-wise, norm, softmax, pooling and gather ops twice (each reads the output's gradient and a
 * kept input and writes the input's gradient), a collective once (the mirror of the forward's: tp's
 * all-reduce of an input gradient); recomputation adds the forward of what it recomputes. */
static double bwd_factor(const struct wl_op *op, enum train_recompute rc)
{
    if (wl_op_is_view(op))
        return 0;
    double f = op->type == OP_ATTENTION ? 2.5 : (op_info[op->type].flags & OPF_COLL) ? 1 : 2;
    if (rc == RC_FULL || (rc == RC_SELECTIVE && op->type == OP_ATTENTION))
        f += 1;
    return f;
}

static void scale_cost(struct eval_op_cost *c, double f)
{
    c->time_s *= f;
    c->compute_s *= f;
    c->memory_s *= f;
    c->overhead_s *= f;
    c->xfer_s *= f;
    c->comm_s *= f;
    c->comm_total_s *= f;
    c->e_compute *= f;
    c->e_memory *= f;
    c->e_link *= f;
    c->e_active *= f;
    c->main_bytes *= f;
    c->cycles_compute *= f;
    c->cycles_stall *= f;
    c->sram_reads *= f;
    c->sram_writes *= f;
    c->dram_reads *= f;
    c->dram_writes *= f;
}

/* A row of its own (the gradient synchronisation, the optimizer step): once per step on every device. */
static int step_row(const struct eval_req *r, struct eval_result *res, const char *name, enum op_type type,
                    const struct eval_op_cost *c, struct dse_err *e)
{
    struct wl_op op;
    memset(&op, 0, sizeof op);
    dse_strlcpy(op.name, name, sizeof op.name);
    op.type = type;
    op.count = 1;
    op.kernel = -1 - res->n_ops; /* a kernel of its own */
    double ts = res->tscale, es = res->escale, ds = res->dscale;
    res->tscale = 1;
    res->escale = res->t.devices;
    res->dscale = 1;
    int rc = eval_account(r, res, &op, PH_TRAIN, res->n_ops, c, e);
    res->tscale = ts;
    res->escale = es;
    res->dscale = ds;
    return rc;
}

/* Bytes per parameter an optimizer step moves through main memory, and the state it keeps per
 * parameter beyond the weights: AdamW reads the fp32 master weight, gradient, first and second moments
 * (16 B) and writes the master, moments and the low-precision copy (12 + 2 B); SGD with momentum reads
 * master, gradient and momentum, writes master, momentum and the copy. Without mixed precision (fp32
 * weights) there is no master copy. */
static void opt_bytes(const struct train_cfg *tc, enum prec w, double *traffic, double *state)
{
    int mixed = w != P_FP32;
    if (tc->optimizer == OPT_SGD) {
        *traffic = mixed ? 22 : 20;
        *state = mixed ? 8 : 4;
    } else {
        *traffic = mixed ? 30 : 28;
        *state = mixed ? 12 : 8;
    }
}

/* The rest of a training step after its forward (recorded in s->contrib): the backward, the gradient
 * synchronisation over dp (ZeRO 0 all-reduces fp32 gradients, 1 and 2 reduce-scatter them and
 * all-gather the updated weights, 3 also gathers the weights for the forward and the backward; where
 * the stack overlaps it (sw_stack.overlap_grad: bucketed, as DDP and Megatron-LM do) the gradients'
 * reduction runs under the backward and only what outlasts it adds; a weight gather after the
 * optimizer adds whole, or beyond the next forward where the stack overlaps it (overlap_param), ZeRO 3's
 * during the passes beyond them; tp all-reduces under the backward's GEMMs beside them where the stack
 * overlaps them (overlap_tp, eval_par.c)), the optimizer step (memory-bound),
 * and each device's memory: weights, fp32 gradients, optimizer states (sharded by the ZeRO stage) and
 * the activations the micro-batches in flight keep. Kernel times are x res->kscale (efficiency.training). */
int eval_train_rest(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                    struct eval_result *res, const struct usage *u, double wshare, struct dse_err *e)
{
    const struct wl_graph *g = &eg->first;
    const struct train_cfg *tc = &r->train;
    const struct par_layout *L = &r->layout;
    const struct hw_device *d = &r->sys->dev[r->dev];
    int row0 = res->n_ops, rc;
    double t_fwd = res->t.latency_s;
    res->pass = 1;
    int first, last;
    eval_layer_span(g, &first, &last);
    for (int k = 0; k < g->n_op; k++) {
        struct eval_op_cost c = s->contrib[k];
        double f = bwd_factor(&g->op[k], tc->recompute);
        scale_cost(&c, f);
        struct wl_op ob = g->op[k];
        ob.macs *= f;
        ob.flops *= f;
        if (r->sw && r->sw->overlap_tp && (op_info[ob.type].flags & OPF_COLL) && ob.coll_dim == PAR_TP && c.xfer_s > 0) {
            /* under the backward GEMMs beside it (eval_par.c): the GEMMs' and its own backward factors */
            int prev, next[8], nn = eval_tp_neighbours(g, k, &prev, next, 8);
            double gp = prev >= 0 ? s->contrib[prev].time_s * bwd_factor(&g->op[prev], tc->recompute) : 0, gn = 0;
            for (int j = 0; j < nn; j++)
                gn += s->contrib[next[j]].time_s * bwd_factor(&g->op[next[j]], tc->recompute);
            double ks = res->kscale > 0 ? res->kscale : 1;
            c.xfer_s = c.comm_s = eval_tp_exposed(c.xfer_s, gp * ks, gn * ks);
        }
        eval_stage_scale(res, eval_stage_of(k, first, last)); /* the forward's pipeline factors (eval_par.c) */
        if ((rc = eval_account(r, res, &ob, PH_TRAIN, row0 + k, &c, e)))
            return rc;
    }
    if ((rc = eval_pipe_sends(r, res, eg->boundary_elems, e))) /* the boundary's gradient, back a stage */
        return rc;
    eval_runtime_step(r, res, res->t.latency_s - t_fwd, 2 * eg->first_launches, 0);
    double t_bwd = res->t.latency_s - t_fwd;

    res->pass = 2;
    int dpn = L->n[PAR_DP] > 0 ? L->n[PAR_DP] : 1, size, stride;
    par_group(L, PAR_DP, &size, &stride);
    double P = eg->first_params * wshare, gbytes = 4 * P, pbytes = P * prec_bytes(r->x.prec.w);
    struct coll_cost red, gat;
    memset(&gat, 0, sizeof gat);
    if ((rc = par_coll_cost(&r->sys->topo, tc->zero ? COLL_REDUCESCATTER : COLL_ALLREDUCE, size, stride, gbytes, &red,
                            e)) ||
        (tc->zero && (rc = par_coll_cost(&r->sys->topo, COLL_ALLGATHER, size, stride, pbytes, &gat, e))))
        return rc;
    /* the stack's overlap: a reduction under the backward adds only what outlasts it */
    double hide = r->sw && r->sw->overlap_grad ? t_bwd : 0;
    double exposed = red.time_s > hide ? red.time_s - hide : 0, link_J = red.energy_J + gat.energy_J;
    double total = red.time_s + gat.time_s; /* every collective whole: ZeRO 0 the all-reduce, 1-2 and the gather */
    if (tc->zero == 3) { /* the weights gathered before the forward and again before the backward (none
                          * after the optimizer: each replica updates its shard), under them if it overlaps */
        double hf = hide > 0 ? t_fwd : 0;
        exposed = (gat.time_s > hf ? gat.time_s - hf : 0) + (gat.time_s + red.time_s > hide ? gat.time_s + red.time_s - hide : 0);
        link_J += gat.energy_J;
        total += gat.time_s;
    } else if (r->sw && r->sw->overlap_param) { /* the updated weights gathered under the next forward */
        exposed += gat.time_s > t_fwd ? gat.time_s - t_fwd : 0;
    } else {
        exposed += gat.time_s;
    }
    struct eval_op_cost c;
    memset(&c, 0, sizeof c);
    c.dev = r->dev;
    c.bound = BOUND_NETWORK;
    c.cprec = P_FP32;
    c.xfer_s = c.comm_s = exposed;
    c.comm_total_s = dpn > 1 ? total : 0;
    c.e_link = link_J;
    if (dpn > 1 && (rc = step_row(r, res, tc->zero ? "grad_reducescatter+param_allgather" : "grad_allreduce",
                                  tc->zero ? OP_ALLGATHER : OP_ALLREDUCE, &c, e)))
        return rc;
    double traffic, state;
    opt_bytes(tc, r->x.prec.w, &traffic, &state);
    double Popt = tc->zero >= 1 ? P / dpn : P, bytes = Popt * traffic;
    const struct hw_mem *mm = &d->mem[d->n_mem - 1];
    memset(&c, 0, sizeof c);
    c.dev = r->dev;
    c.bound = BOUND_MEMORY;
    c.cprec = P_FP32;
    c.memory_s = c.time_s = bytes / (mm->bandwidth_Bps * d->eff_level[d->n_mem - 1] * d->eff_mclass[EC_ELTWISE]);
    c.main_bytes = bytes;
    c.e_memory = bytes * mm->energy_J_per_byte;
    if ((rc = step_row(r, res, tc->optimizer == OPT_SGD ? "optimizer_sgd" : "optimizer_adamw", OP_ELTWISE, &c, e)))
        return rc;

    /* memory per device */
    double M = L->microbatches > 0 ? L->microbatches : 1, pp = L->n[PAR_PP] > 0 ? L->n[PAR_PP] : 1;
    /* sequence parallelism (Megatron-LM, the stack's): the tp group splits the residual-stream-wide
     * tensors along the sequence, so each device keeps 1/tp of them (and of the layer inputs) */
    double tpn = L->n[PAR_TP] > 1 ? L->n[PAR_TP] : 1, sp = r->sw && r->sw->sequence_parallel && tpn > 1;
    double whole_cut = sp ? eg->act_whole_elems * (1 - 1 / tpn) : 0, in_div = sp ? tpn : 1;
    double kept = tc->recompute == RC_FULL ? eg->act_layer_in_elems / in_div +
                                                 (eg->act_saved_elems - whole_cut) / r->model->tf.layers
                  : tc->recompute == RC_SELECTIVE ? eg->act_saved_elems - eg->act_scores_elems - whole_cut
                                                  : eg->act_saved_elems - whole_cut;
    /* 1F1B: the first stage holds min(M, pp) micro-batches' activations of its ceil(L / pp) of L layers */
    double inflight = pp > 1 ? (M < pp ? M : pp) * eval_stage_share(L, eval_layers(r)) : 1;
    struct eval_totals *T = &res->t;
    for (int dv = 0; dv < r->sys->n_dev; dv++) {
        res->need_bytes[dv] = dv == r->dev ? 0 : u->weights[dv];
        T->weight_bytes += dv == r->dev ? 0 : u->weights[dv];
    }
    double w = u->weights[r->dev] * wshare / (tc->zero >= 3 ? dpn : 1);
    T->weight_bytes += w;
    T->grad_bytes = gbytes / (tc->zero >= 2 ? dpn : 1);
    T->optimizer_bytes = P * state / (tc->zero >= 1 ? dpn : 1);
    T->act_bytes = kept * prec_bytes(r->x.prec.a) * inflight;
    res->need_bytes[r->dev] += w + T->grad_bytes + T->optimizer_bytes + T->act_bytes;
    return DSE_OK;
}
