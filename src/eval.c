/* eval.c -- evaluating one design point (see eval.h). */
#include "eval.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int eval_default_device(const struct hw_system *sys)
{
    for (int i = 0; i < sys->n_dev; i++)
        if (sys->dev[i].cls != HW_CPU)
            return i;
    return 0;
}

int eval_default_prec(const struct hw_device *d)
{
    static const enum prec order[] = {P_FP16, P_BF16, P_INT8, P_FP32};
    for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++)
        if (hw_gemm_peak(d, order[i], NULL) > 0)
            return order[i];
    return -1;
}

static void infeasible(struct eval_result *res, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void infeasible(struct eval_result *res, const char *fmt, ...)
{
    if (!res->feasible)
        return; /* keep the first reason */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->reason, sizeof res->reason, fmt, ap);
    va_end(ap);
    res->feasible = 0;
}

/* Memory use per device of one graph: weights and KV of the ops placed there, activations on the
 * primary device. */
struct usage {
    double weights[HW_MAX_DEVICES], kv[HW_MAX_DEVICES], act;
};

struct scratch {
    int *loc;    /* device holding each tensor */
    int *placed; /* device of each op */
    char *seen;  /* tensor already counted in usage */
    int cap_t, cap_op;
};

static int scratch_fit(struct scratch *s, const struct wl_graph *g, struct dse_err *e)
{
    if (g->n_t > s->cap_t) {
        int *l = realloc(s->loc, sizeof *l * (size_t)g->n_t);
        char *sn = l ? realloc(s->seen, (size_t)g->n_t) : NULL;
        if (l)
            s->loc = l;
        if (sn)
            s->seen = sn;
        if (!l || !sn)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        s->cap_t = g->n_t;
    }
    if (g->n_op > s->cap_op) {
        int *p = realloc(s->placed, sizeof *p * (size_t)g->n_op);
        if (!p)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        s->placed = p;
        s->cap_op = g->n_op;
    }
    return DSE_OK;
}

static int push_op(struct eval_result *res, struct dse_err *e)
{
    if (res->n_ops == res->cap_ops) {
        int cap = res->cap_ops ? res->cap_ops * 2 : 64;
        struct eval_op *n = realloc(res->ops, sizeof *n * (size_t)cap);
        if (!n)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        res->ops = n;
        res->cap_ops = cap;
    }
    memset(&res->ops[res->n_ops], 0, sizeof res->ops[0]);
    return DSE_OK;
}

/* Evaluates one graph once. Rows go to res->ops starting at row0: appended when row0 == n_ops,
 * otherwise accumulated into the existing rows (decode steps share one row per op). */
static int eval_graph(const struct eval_req *r, const struct wl_graph *g, enum wl_phase ph, int row0,
                      struct scratch *s, struct usage *u, unsigned *used, struct eval_result *res,
                      struct dse_err *e)
{
    const struct hw_system *sys = r->sys;
    int rc;
    if ((rc = scratch_fit(s, g, e)))
        return rc;
    for (int i = 0; i < g->n_t; i++) {
        s->loc[i] = r->dev;
        s->seen[i] = 0;
    }
    memset(u, 0, sizeof *u);
    u->act = wl_peak_act_bytes(g, &r->x.prec);
    struct exec_cfg x = r->x;
    x.graph_weight_bytes = wl_kind_bytes(g, WL_WEIGHT, &r->x.prec);
    int append = row0 == res->n_ops;
    for (int i = 0; i < g->n_op; i++) {
        const struct wl_op *op = &g->op[i];
        struct op_cost c;
        int dev = r->dev;
        enum op_status st = model_for(sys->dev[dev].cls)->op_cost(&sys->dev[dev], g, op, &x, &c);
        if (st == OPS_UNSUPPORTED_PREC) {
            char pb[48];
            prec_format(&r->x.prec, pb, sizeof pb);
            infeasible(res, "device '%s' cannot compute %s (op '%s') at precision %s", sys->dev[dev].name,
                       op_type_names[op->type], op->name, pb);
            return DSE_OK;
        }
        if (st == OPS_UNSUPPORTED_OP) { /* fall back: the first other device that runs it and is linked */
            st = OPS_UNSUPPORTED_OP;
            for (int k = 0; k < sys->n_dev && st != OPS_OK; k++) {
                if (k == r->dev || hw_link_between(sys, r->dev, k) < 0)
                    continue;
                st = model_for(sys->dev[k].cls)->op_cost(&sys->dev[k], g, op, &x, &c);
                if (st == OPS_OK)
                    dev = k;
            }
            if (st != OPS_OK) {
                infeasible(res, "no device of '%s' runs %s (op '%s') at this precision: '%s' does not support it",
                           sys->name, op_type_names[op->type], op->name, sys->dev[r->dev].name);
                return DSE_OK;
            }
        }
        s->placed[i] = dev;
        *used |= 1u << dev;

        /* Transfers of inputs that live on another device. */
        double xs = 0, xj = 0;
        for (int k = 0; k < op->n_in; k++) {
            int t = op->in[k];
            const struct wl_tensor *tt = &g->t[t];
            if (tt->kind == WL_WEIGHT || tt->kind == WL_KV) {
                if (!s->seen[t]) {
                    double b = wl_tensor_bytes(tt, &r->x.prec) * tt->count;
                    if (tt->kind == WL_WEIGHT)
                        u->weights[dev] += b;
                    else
                        u->kv[dev] += b;
                    s->seen[t] = 1;
                }
                continue;
            }
            if (s->loc[t] != dev) {
                int l = hw_link_between(sys, s->loc[t], dev);
                double b = wl_tensor_bytes(tt, &r->x.prec);
                if (l < 0) {
                    infeasible(res, "no link between '%s' and '%s' for tensor '%s'", sys->dev[s->loc[t]].name,
                               sys->dev[dev].name, tt->name);
                    return DSE_OK;
                }
                xs += sys->link[l].latency_s + b / sys->link[l].bandwidth_Bps;
                xj += b * sys->link[l].energy_J_per_byte;
            }
        }
        for (int k = 0; k < op->n_out; k++) {
            int t = op->out[k];
            s->loc[t] = dev;
            if (g->t[t].kind == WL_KV && !s->seen[t]) {
                u->kv[dev] += wl_tensor_bytes(&g->t[t], &r->x.prec) * g->t[t].count;
                s->seen[t] = 1;
            }
        }

        double n = op->count;
        struct eval_totals *T = &res->t;
        T->compute_s += c.compute_s * n;
        T->memory_s += c.memory_s * n;
        T->overhead_s += c.overhead_s * n;
        T->xfer_s += xs * n;
        T->latency_s += (c.time_s + xs) * n;
        T->energy_compute_J += c.energy_compute_J * n;
        T->energy_memory_J += c.energy_memory_J * n;
        T->energy_link_J += xj * n;
        T->macs += op->macs * n;
        T->flops += op->flops * n;
        T->main_bytes += c.bytes[sys->dev[dev].n_mem - 1] * n;

        if (append && (rc = push_op(res, e)))
            return rc;
        struct eval_op *row = &res->ops[row0 + i];
        if (append) {
            dse_strlcpy(row->name, op->name, sizeof row->name);
            row->type = op->type;
            row->phase = ph;
            row->dev = dev;
            row->cprec = c.cprec;
            res->n_ops++;
        }
        row->count += n;
        row->time_s += (c.time_s + xs) * n;
        row->compute_s += c.compute_s * n;
        row->memory_s += c.memory_s * n;
        row->overhead_s += c.overhead_s * n;
        row->xfer_s += xs * n;
        row->bound = c.bound;
        row->macs += op->macs * n;
        row->flops += op->flops * n;
        row->bytes += c.bytes[sys->dev[dev].n_mem - 1] * n;
        row->energy_J += (c.energy_compute_J + c.energy_memory_J + xj) * n;
        row->utilization = c.utilization;
    }
    return DSE_OK;
}

/* Checks memory capacity: devices sharing a memory pool are summed against it. */
static void check_capacity(const struct eval_req *r, const struct usage *u, double act, struct eval_result *res)
{
    const struct hw_system *sys = r->sys;
    double need[HW_MAX_DEVICES] = {0};
    for (int d = 0; d < sys->n_dev; d++)
        need[d] = u->weights[d] + u->kv[d] + (d == r->dev ? act : 0);
    for (int d = 0; d < sys->n_dev; d++) {
        const struct hw_mem *m = &sys->dev[d].mem[sys->dev[d].n_mem - 1];
        double total = need[d];
        if (m->shared >= 0) {
            total = 0;
            for (int k = 0; k < sys->n_dev; k++)
                if (sys->dev[k].mem[sys->dev[k].n_mem - 1].shared == m->shared)
                    total += need[k];
        }
        if (total > m->capacity_bytes) {
            infeasible(res,
                       "does not fit in memory: needs %.3g GB (weights %.3g GB + KV cache %.3g GB + activations "
                       "%.3g GB) in '%s' of %.3g GB",
                       total / 1e9, u->weights[d] / 1e9, u->kv[d] / 1e9, (d == r->dev ? act : 0) / 1e9, m->name,
                       m->capacity_bytes / 1e9);
            return;
        }
    }
}

int eval_run(const struct eval_req *r, struct eval_result *res, struct dse_err *e)
{
    struct scratch s = {0};
    struct usage u, ud;
    struct wl_graph g;
    unsigned used = 0;
    int rc = DSE_OK;
    const struct hw_device *pd = &r->sys->dev[r->dev];
    struct eval_op *keep = res->ops;
    int keep_cap = res->cap_ops;
    memset(res, 0, sizeof *res);
    res->ops = keep;
    res->cap_ops = keep_cap;
    res->feasible = 1;

    if ((rc = model_for(pd->cls)->check(pd, e)))
        return rc;
    int lm = wl_model_is_lm(r->model);
    enum wl_phase ph = lm ? r->phase : PH_NONE;
    if (lm && ph == PH_NONE)
        ph = PH_GENERATE;
    if (r->batch < 1 || r->prompt < 1 || (ph == PH_GENERATE && r->gen < 1))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "batch, prompt and generated tokens must be positive");

    /* The first graph: the whole inference, the prefill, or the single decode step. */
    struct wl_shape sh = {r->batch, r->prompt, 0};
    if (ph == PH_DECODE) {
        sh.tokens = 1;
        sh.past = r->prompt;
    }
    if ((rc = wl_build(r->model, &sh, &g, e)))
        goto out;
    res->t.params = wl_params(&g);
    rc = eval_graph(r, &g, ph == PH_GENERATE ? PH_PREFILL : ph, 0, &s, &u, &used, res, e);
    wl_graph_free(&g);
    if (rc || !res->feasible)
        goto out;
    double act = u.act;
    double first_s = res->t.latency_s;

    if (ph == PH_GENERATE) {
        /* Decode steps, each with one more token in the KV cache; rows accumulate per op. */
        int row0 = res->n_ops;
        struct wl_shape ds = {r->batch, 1, r->prompt};
        if ((rc = wl_build(r->model, &ds, &g, e)))
            goto out;
        for (int64_t i = 0; i < r->gen && !rc && res->feasible; i++) {
            if (i > 0 && (rc = wl_set_past(&g, r->prompt + i, e)))
                break;
            rc = eval_graph(r, &g, PH_DECODE, row0, &s, &ud, &used, res, e);
            if (ud.act > act)
                act = ud.act;
        }
        wl_graph_free(&g);
        if (rc || !res->feasible)
            goto out;
        u = ud; /* the last step holds the largest KV cache */
        /* KV written by the last step is part of its cache too: prompt + gen tokens in all. */
    }
    check_capacity(r, &u, act, res);

    struct eval_totals *T = &res->t;
    double idle = 0;
    for (int d = 0; d < r->sys->n_dev; d++)
        if (used & (1u << d)) {
            idle += r->sys->dev[d].idle_W;
            T->price_USD += r->sys->dev[d].price_USD;
        }
    T->energy_static_J = idle * T->latency_s;
    for (int i = 0; i < res->n_ops; i++)
        res->ops[i].energy_J += idle * res->ops[i].time_s;
    T->energy_J = T->energy_compute_J + T->energy_memory_J + T->energy_static_J + T->energy_link_J;
    T->avg_power_W = T->latency_s > 0 ? T->energy_J / T->latency_s : 0;
    for (int d = 0; d < r->sys->n_dev; d++) {
        T->weight_bytes += u.weights[d];
        T->kv_bytes += u.kv[d];
    }
    T->act_bytes = act;
    T->peak_memory_bytes = T->weight_bytes + T->kv_bytes + act;
    T->throughput_per_s = T->latency_s > 0 ? (double)r->batch / T->latency_s : 0;
    if (!isfinite(T->latency_s) || !isfinite(T->energy_J) || !isfinite(T->peak_memory_bytes)) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL,
                         "numeric overflow: the figures of this point exceed what a double holds (check the hwdesc "
                         "for rates near zero or sizes near the limits)");
        goto out;
    }
    double B = (double)r->batch;
    switch (ph) {
    case PH_GENERATE:
        T->ttft_s = first_s;
        T->tpot_s = (T->latency_s - first_s) / (double)r->gen;
        T->tokens_per_s = B * (double)r->gen / T->latency_s;
        T->decode_tokens_per_s = T->tpot_s > 0 ? B / T->tpot_s : 0;
        T->energy_per_token_J = T->energy_J / (B * (double)r->gen);
        break;
    case PH_DECODE:
        T->tpot_s = T->latency_s;
        T->tokens_per_s = T->decode_tokens_per_s = B / T->latency_s;
        T->energy_per_token_J = T->energy_J / B;
        break;
    case PH_PREFILL:
        T->ttft_s = T->latency_s;
        T->tokens_per_s = B * (double)r->prompt / T->latency_s;
        T->energy_per_token_J = T->energy_J / (B * (double)r->prompt);
        break;
    default:
        break;
    }
out:
    free(s.loc);
    free(s.placed);
    free(s.seen);
    return rc;
}

void eval_result_free(struct eval_result *res)
{
    free(res->ops);
    memset(res, 0, sizeof *res);
}
