/* serve_cost.c -- the time and energy of one serving iteration, from dse's evaluation of the design
 * point (serve.h, docs/serving.md).
 *
 * An iteration runs N tokens: some sequences' next token (decode) and some prompts' chunks (prefill).
 * Everything but attention and the vocabulary projection costs the same for N tokens however they
 * split into sequences (the GEMMs see M = N rows; norms and element-wise ops are per token), so
 *   lin(N)    = a decode step of batch N over 1-token caches, less its logits rows,
 *   logits(L) = those rows at batch L (the lm_head and its gather: only sequences that emit a token),
 * evaluated at N = 1, 2, 4, ... up to the token budget and interpolated linearly between (the
 * roofline makes them flat while weights dominate and linear once compute does). The terms that
 * depend on how the tokens split:
 *   decode attention: per key attended beyond a 1-token cache, the attention rows' growth from a
 *     1-token to a long cache at batch 1 (memory-bound: it reads the cache);
 *   prefill attention: per causal (query, key) pair, the attention rows of a batch-1 prefill over
 *     their P (P + 1) / 2 pairs (the prefill tokens' own 1-token attention in lin counted twice).
 * Assumed: these terms add (no overlap between them within an iteration), the runtime's per-step
 * work is the decode step's (in lin), and a window's cap on the KV cache is not applied. */
#include "serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"

/* The rows of res: attention's and the logits' time and dynamic energy (idle share removed). */
static void split_rows(const struct eval_result *res, double idle_W, double *attn_s, double *attn_J, double *lg_s,
                       double *lg_J)
{
    *attn_s = *attn_J = *lg_s = *lg_J = 0;
    for (int i = 0; i < res->n_ops; i++) {
        const struct eval_op *o = &res->ops[i];
        double dyn = o->energy_J - idle_W * o->time_s;
        if (o->type == OP_ATTENTION) {
            *attn_s += o->time_s;
            *attn_J += dyn;
        } else if (!strncmp(o->name, "lm_head", 7) || !strncmp(o->name, "logits", 6)) {
            *lg_s += o->time_s;
            *lg_J += dyn;
        }
    }
}

static int run_at(const struct eval_req *base, enum wl_phase ph, int64_t batch, int64_t prompt, struct eval_result *res,
                  struct dse_err *e)
{
    struct eval_req q = *base;
    q.phase = ph;
    q.batch = batch;
    q.prompt = prompt;
    q.gen = 0;
    q.want_ops = 1;
    q.share_sig = 0;     /* another batch and length: nothing of the caller's to share (eval.c: pick_mode) */
    q.skip_capacity = 1; /* the KV cache's room is the simulation's to manage */
    q.no_request_cost = 1; /* an iteration's cost: each request's own runtime work is the simulator's */
    q.no_token_cost = 1;   /* and its work per emitted token: serve_iter_s charges it per sequence */
    int rc = eval_run(&q, res, e);
    if (rc) {
        char why[sizeof e->msg];
        dse_strlcpy(why, e->msg, sizeof why);
        return dse_err_set(e, rc, NULL, NULL, "serving cost: a %s of batch %lld over %lld tokens: %s",
                           ph == PH_PREFILL ? "prefill" : "decode step", (long long)batch, (long long)prompt, why);
    }
    if (!res->feasible)
        rc = dse_err_set(e, DSE_EINPUT, NULL, NULL, "the design point is infeasible: %s", res->reason);
    return rc;
}

int serve_cost_build(const struct eval_req *r0, int64_t max_tokens, double mem_util, struct serve_cost *c,
                     struct dse_err *e)
{
    memset(c, 0, sizeof *c);
    /* The simulation holds the system for its whole makespan, idle time included: its cost is per second
     * of the run at utilisation 1, whatever share of the time the caller's assumptions give. */
    struct cost_cfg cc;
    if (r0->cost)
        cc = *r0->cost;
    else
        cost_default(&cc);
    cc.utilization = 1;
    struct eval_req rq = *r0;
    rq.cost = &cc;
    const struct eval_req *r = &rq;
    c->usd_per_J = cc.pue * cc.usd_per_kWh / 3.6e6;
    const struct wl_model *m = r->model;
    const struct par_layout *L = &r->layout;
    if (!wl_model_is_lm(m))
        return dse_err_set(e, DSE_EINPUT, m->path, NULL, "serving simulates decoder language models; %s has no "
                           "prefill and decode phases", m->name);
    if ((L->n[PAR_PP] > 1) || (L->n[PAR_CP] > 1) || L->ep > 1)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "serving models tp and dp replicas only: pipeline (pp), context "
                           "(cp) and expert (ep) parallelism in a serving runtime are not modelled");
    if (mem_util == 0 && !((mem_util = eval_mem_util(r->sys, r->sw, r->dev)) > 0))
        mem_util = 1; /* no share given or stated by the stack: all the reserve leaves */
    if (max_tokens < 1 || !(mem_util > 0 && mem_util <= 1))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "serving cost: token budget %lld and memory share %g",
                           (long long)max_tokens, mem_util);
    int64_t ctx = m->tf.max_pos > 2 ? m->tf.max_pos : 2;
    int64_t Ld = ctx - 1 < 4096 ? ctx - 1 : 4096, Pp = ctx < 2048 ? ctx : 2048;
    if (Ld < 2) /* the per-key slope needs two cache lengths */
        return dse_err_set(e, DSE_EINPUT, m->path, NULL, "%s has %lld positions: too few to serve", m->name,
                           (long long)m->tf.max_pos);
    struct eval_result a = {0}, b = {0};
    int rc;
    /* the grid: 1, 2, 4, ... below the budget, and the budget */
    int n = 0;
    for (int64_t t = 1; t < max_tokens && n < SERVE_GRID - 1; t *= 2)
        c->tok[n++] = (double)t;
    c->tok[n++] = (double)max_tokens;
    c->n_grid = n;
    double dp = L->n[PAR_DP] > 0 ? L->n[PAR_DP] : 1;
    rc = DSE_OK;
    for (int i = 0; i < n && !rc; i++) {
        if ((rc = run_at(r, PH_DECODE, (int64_t)c->tok[i], 1, &a, e)))
            break;
        double idle = a.t.energy_static_J / a.t.latency_s, as, aJ, ls, lJ;
        split_rows(&a, idle, &as, &aJ, &ls, &lJ);
        double dyn = (a.t.energy_J - a.t.energy_static_J) / dp; /* one replica's */
        (void)as;
        (void)aJ;
        c->lin_s[i] = a.t.latency_s - ls;
        c->lin_J[i] = dyn - lJ / dp;
        c->lg_s[i] = ls;
        c->lg_J[i] = lJ / dp;
        if (i == n - 1) { /* the system: idle power, price or rent, memory at the largest iteration */
            c->idle_W = idle;
            double energy_usd = a.t.energy_J * c->usd_per_J;
            c->usd_per_s = isnan(a.t.cost_USD) ? NAN : (a.t.cost_USD - energy_usd) / a.t.latency_s;
            c->weight_bytes = a.t.weight_bytes;
            c->act_bytes = a.t.act_bytes;
            c->devices = (int)(a.t.devices / dp + 0.5);
            /* per emitted token: the stack's host work, the replica's devices keeping their clocks up */
            const struct hw_system *sys = r->sys;
            c->tok_s = r->sw ? r->sw->per_token_s : 0;
            double busy = r->sw ? r->sw->token_busy : 0;
            for (int d = 0; d < sys->n_dev; d++) /* waiting at gap_W, the runtime's kernels (primary device) at active_W */
                if (a.used & (1u << d))
                    c->tok_J += c->tok_s * (sys->dev[d].gap_W + (d == r->dev ? busy * sys->dev[d].active_W : 0)) *
                                (sys->topo.n_level && d == sys->topo.dev ? a.t.devices / dp : 1);
        }
    }
    /* decode attention per cached token, and the KV cache per token (per device) */
    if (!rc && !(rc = run_at(r, PH_DECODE, 1, 1, &a, e)) && !(rc = run_at(r, PH_DECODE, 1, Ld, &b, e))) {
        double i0 = a.t.energy_static_J / a.t.latency_s, i1 = b.t.energy_static_J / b.t.latency_s;
        double as0, aJ0, as1, aJ1, junk[2];
        split_rows(&a, i0, &as0, &aJ0, &junk[0], &junk[1]);
        split_rows(&b, i1, &as1, &aJ1, &junk[0], &junk[1]);
        c->dec_ctx_s = (as1 - as0) / (double)(Ld - 1);
        c->dec_ctx_J = (aJ1 - aJ0) / dp / (double)(Ld - 1);
        c->kv_token_bytes = (b.t.kv_bytes - a.t.kv_bytes) / (double)(Ld - 1);
    }
    /* prefill attention per causal pair */
    if (!rc && !(rc = run_at(r, PH_PREFILL, 1, Pp, &a, e))) {
        double idle = a.t.energy_static_J / a.t.latency_s, as, aJ, junk[2];
        split_rows(&a, idle, &as, &aJ, &junk[0], &junk[1]);
        double pairs = (double)Pp * (double)(Pp + 1) / 2;
        c->pre_pair_s = as / pairs;
        c->pre_pair_J = aJ / dp / pairs;
    }
    eval_result_free(&a);
    eval_result_free(&b);
    if (rc)
        return rc;
    const struct hw_device *d = &r->sys->dev[r->dev];
    const struct hw_mem *mm = &d->mem[d->n_mem - 1];
    const struct hw_mem *pool = mm->shared >= 0 ? &r->sys->memories[mm->shared] : mm;
    double cap = r->capacity_bytes > 0 ? r->capacity_bytes : pool->capacity_bytes;
    c->mem_bytes = cap;
    c->reserved_bytes = pool->reserved_bytes;
    c->mem_util = mem_util;
    c->usable_bytes = hw_usable_bytes(pool, cap, mem_util);
    c->replicas = (int)dp;
    for (int k = 0; k < r->sys->n_dev; k++) { /* a host to swap to: a CPU linked to the primary device */
        int l = r->sys->dev[k].cls == HW_CPU && k != r->dev ? hw_link_between(r->sys, r->dev, k) : -1;
        if (l >= 0 && r->sys->link[l].bandwidth_Bps > c->swap_Bps)
            c->swap_Bps = r->sys->link[l].bandwidth_Bps;
    }
    c->xfer_Bps = r->sys->topo.n_level ? r->sys->topo.level[0].bandwidth_Bps : 0;
    if (!(c->kv_token_bytes > 0))
        return dse_err_set(e, DSE_EINPUT, m->path, NULL, "%s keeps no KV cache: nothing to serve", m->name);
    double room = c->usable_bytes - c->weight_bytes - c->act_bytes;
    c->kv_capacity_tokens = room > 0 ? floor(room / c->kv_token_bytes) : 0;
    if (c->kv_capacity_tokens < 1)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL,
                           "no room for a KV cache: weights %.3g GB + activations %.3g GB per device of '%s' exceed the "
                           "%.3g GB usable of its %.3g GB (a %.3g share allocated, --mem-util, less %.3g GB reserved for the OS "
                           "and runtime, hwdesc reserved_GiB)", c->weight_bytes / 1e9, c->act_bytes / 1e9, d->name,
                           c->usable_bytes / 1e9, cap / 1e9, mem_util, c->reserved_bytes / 1e9);
    return DSE_OK;
}

/* y at x on the grid (piecewise linear; beyond the last point along its segment) */
static double on_grid(const struct serve_cost *c, const double *y, double x)
{
    if (!(x > 0))
        return 0;
    if (c->n_grid == 1)
        return y[0] * x / c->tok[0];
    int i = 0;
    while (i < c->n_grid - 2 && x > c->tok[i + 1])
        i++;
    double f = (x - c->tok[i]) / (c->tok[i + 1] - c->tok[i]);
    return y[i] + f * (y[i + 1] - y[i]);
}

double serve_iter_s(const struct serve_cost *c, double N, double L, double C, double P, double *J)
{
    if (J)
        *J = on_grid(c, c->lin_J, N) + on_grid(c, c->lg_J, L) + c->tok_J * L + c->dec_ctx_J * C + c->pre_pair_J * P;
    return on_grid(c, c->lin_s, N) + on_grid(c, c->lg_s, L) + c->tok_s * L + c->dec_ctx_s * C + c->pre_pair_s * P;
}
