/* eval_layout.c -- the automatic layout search (eval_layout.h): every tp x pp x dp split of a
 * system's devices, and for pipelines a few micro-batch counts, evaluated and ranked. */
#include "eval_layout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Micro-batch counts tried. Inference: 1, and pp, 2 pp, 4 pp, 8 pp where they divide the batch (fewer
 * than pp leave stages idle every step; many more only shrink each micro-batch's GEMMs). A training
 * step: the replica's batch in micro-batches of 1, 2, 4 or 8 sequences (Megatron-LM's micro-batch
 * size), pipelined or accumulated. */
static int micro_counts(int pp, int64_t batch, int train, int *out)
{
    int n = 0;
    if (train) {
        for (int64_t mbs = 8; mbs >= 1; mbs /= 2)
            if (batch % mbs == 0 && batch / mbs <= 4096)
                out[n++] = (int)(batch / mbs);
        return n;
    }
    out[n++] = 1;
    for (int k = 1; pp > 1 && k <= 8; k *= 2)
        if ((int64_t)pp * k <= batch && batch % ((int64_t)pp * k) == 0)
            out[n++] = pp * k;
    return n;
}

/* Keeps best[0..*n) sorted best first, at most cap of them. */
static void keep(struct layout_choice *best, int *n, int cap, const struct layout_choice *c, int maximize)
{
    int at = *n;
    while (at > 0 && (maximize ? c->value > best[at - 1].value : c->value < best[at - 1].value))
        at--;
    if (at >= cap)
        return;
    int last = *n < cap ? *n : cap - 1;
    memmove(&best[at + 1], &best[at], sizeof *best * (size_t)(last - at));
    best[at] = *c;
    if (*n < cap)
        (*n)++;
}

int eval_layout_search(const struct eval_req *r, const struct metric *m, struct layout_choice *best, int cap,
                       struct layout_stats *st, struct dse_err *e)
{
    int N = hw_topo_devices(r->sys), rc = DSE_OK, nbest = 0, maximize = m->dir == DIR_MAX;
    memset(st, 0, sizeof *st);
    struct eval_scratch s;
    memset(&s, 0, sizeof s);
    struct eval_result res = {0};
    int lm = wl_model_is_lm(r->model);
    enum wl_phase ph = r->phase == PH_TRAIN ? PH_TRAIN : lm ? (r->phase == PH_NONE ? PH_GENERATE : r->phase) : PH_NONE;
    for (int tp = 1; tp <= N && !rc; tp++) {
        if (N % tp)
            continue;
        struct eval_req q = *r;
        q.want_ops = 0;
        q.layout.n[PAR_TP] = tp;
        q.layout.n[PAR_PP] = 1;
        q.layout.n[PAR_CP] = 1;
        q.layout.ep = 1;
        q.layout.microbatches = 1;
        struct dse_err le;
        if (eval_check_layout(&q, &le)) { /* this tp cannot shard the model: every split with it */
            for (int pp = 1; pp <= N / tp; pp++)
                if ((N / tp) % pp == 0) {
                    st->searched++;
                    st->refused++;
                }
            continue;
        }
        /* context parallelism for a transformer's token sequence (not a decode step's), expert
         * parallelism for a mixture of experts: powers of two that divide what is left */
        int cps = r->model->kind == WLM_TRANSFORMER && strcmp(r->model->tf.model_type, "vit") && ph != PH_DECODE;
        int moe = r->model->kind == WLM_TRANSFORMER && r->model->tf.experts > 1;
        for (int cp = 1; cp <= N / tp && !rc; cp *= 2)
        for (int pp = 1; pp <= N / (tp * cp) && !rc; pp++) {
            if (cp > 1 && (!cps || (N / tp) % cp || r->prompt % cp))
                break;
            if ((N / (tp * cp)) % pp)
                continue;
            int dp = N / (tp * cp * pp), train = ph == PH_TRAIN;
            if (train && r->batch % dp) { /* the global batch does not split over the replicas */
                st->searched++;
                st->refused++;
                continue;
            }
            int mc[5], nm = micro_counts(pp, train ? r->batch / dp : r->batch, train, mc);
            for (int ep = 1; ep <= dp && !rc; ep *= 2)
            for (int k = 0; k < nm && !rc; k++) {
                if (ep > 1 && (!moe || dp % ep || r->model->tf.experts % ep))
                    break;
                q.layout.n[PAR_TP] = tp;
                q.layout.n[PAR_CP] = cp;
                q.layout.n[PAR_PP] = pp;
                q.layout.n[PAR_DP] = 0;
                q.layout.ep = ep;
                q.layout.microbatches = mc[k];
                q.share_sig = 0; /* another layout: no mode evaluations to share (eval.c: pick_mode) */
                st->searched++;
                if (par_layout_complete(r->sys, &q.layout, &le) || eval_check_layout(&q, &le)) {
                    st->refused++;
                    continue;
                }
                struct eval_graphs eg;
                if ((rc = eval_graphs_build(q.model, ph, eval_micro_batch(&q), q.prompt, &q.layout, q.sw, &eg, e)))
                    break;
                if (!(rc = eval_scratch_fit(&s, &eg, e)) && !(rc = eval_point(&q, &eg, &s, &res, e))) {
                    double v = metric_value(m, &res.t);
                    if (!res.feasible || !metric_applies(m, ph) || isnan(v)) {
                        st->infeasible++;
                    } else {
                        struct layout_choice c = {q.layout, v, res.t.latency_s, res.t.peak_memory_bytes};
                        keep(best, &nbest, cap, &c, maximize);
                    }
                }
                eval_graphs_free(&eg);
            }
        }
    }
    eval_scratch_free(&s);
    eval_result_free(&res);
    st->kept = nbest;
    return rc;
}
