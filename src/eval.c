/* eval.c -- evaluating one design point (see eval.h).
 *
 * generate: the prefill graph is evaluated once; the first decode step is evaluated in full and
 * each operator's cost is recorded; later steps re-cost only the operators whose cost depends on the
 * cache length (attention with k_past/v_past), on a one-op copy sized to that step, and reuse the
 * recorded cost of every other operator. The KV cache grows by one token per step, except that a
 * sliding-window layer's rolling cache stops at its window (wl_kv_bytes): its attention reads at most
 * window - 1 cached tokens per step and its cache holds at most window tokens. */
#include "eval_impl.h"
#include "thermal.h"

#include "errbar.h"

#include "kern.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double eval_accuracy_proxy(const struct prec_cfg *p, int has_kv)
{
    double w = kern_gemm_rel_error(p->w, p->a, 128, 128, 128, 1);
    double kv = has_kv ? kern_gemm_rel_error(p->kv, p->a, 128, 128, 128, 2) : 0;
    if (w < 0 || kv < 0)
        return -1;
    return sqrt(w * w + kv * kv);
}

int eval_quality_kind(const struct wl_model *m)
{
    if (wl_model_is_lm(m))
        return QK_LLM;
    if (m->kind == WLM_CNN)
        return QK_CNN;
    if (m->kind == WLM_TRANSFORMER)
        return QK_ENCODER;
    return -1;
}

/* The quality model (quality.h) needs the model's size: its parameters at batch 1 (a decode step of an
 * LM, a 128-token input where the tokens shape the model), as dse list counts them. */
static double model_params(const struct wl_model *m)
{
    int lm = wl_model_is_lm(m);
    int seq = (m->kind == WLM_TRANSFORMER && !lm) || (m->kind == WLM_ONNX && wl_model_takes_tokens(m));
    struct wl_shape s = {.batch = 1, .tokens = lm ? 1 : seq ? 128 : 1, .past = 0, .tp = 1, .train = 0};
    struct wl_graph g;
    struct dse_err e;
    dse_err_clear(&e);
    if (wl_build(m, &s, &g, &e))
        return NAN;
    double n = wl_params(&g);
    wl_graph_free(&g);
    return n;
}

void eval_quality(const struct ql_table *t, const struct wl_model *m, const struct prec_cfg *p, struct ql_est *q)
{
    int kind = eval_quality_kind(m);
    struct ql_est ref;
    if (ql_estimate(NULL, m->name, kind, 0, p, &ref)) { /* a reference format: no graph needed */
        *q = ref;
        q->fam = ql_family_of(t, m->name);
        return;
    }
    if (ql_estimate(t, m->name, kind, t ? model_params(m) : NAN, p, q))
        return;
    int fam = q->fam;
    double err = eval_accuracy_proxy(p, wl_model_is_lm(m));
    memset(q, 0, sizeof *q);
    q->metric = -1;
    q->fam = fam;
    q->loss_pct = 100 * (err >= 0 ? err : prec_accuracy_proxy(p, wl_model_is_lm(m)));
    q->flags = 1u << QL_FALLBACK;
}

int eval_default_device(const struct hw_system *sys)
{
    if (sys->topo.n_level)
        return sys->topo.dev;
    for (int i = 0; i < sys->n_dev; i++)
        if (sys->dev[i].cls != HW_CPU)
            return i;
    return 0;
}

int eval_default_prec(const struct hw_device *d)
{
    /* The fastest float (ties to the narrower: less memory traffic), else int8: a CPU whose bf16 dot
     * products run at half its fp32 FMA rate (measured by dse probe on a Xeon VM) is used in fp32. */
    static const enum prec order[] = {P_FP16, P_BF16, P_FP32};
    int best = -1;
    double best_peak = 0;
    for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++) {
        double pk = hw_gemm_peak(d, order[i], NULL);
        if (pk > best_peak) {
            best_peak = pk;
            best = order[i];
        }
    }
    if (best < 0 && hw_gemm_peak(d, P_INT8, NULL) > 0)
        best = P_INT8;
    return best;
}

int eval_parse_placement(const struct hw_system *sys, const char *s, int *dev, int *type_dev, struct dse_err *e)
{
    char buf[256], *save = NULL;
    for (int t = 0; t < OP_COUNT; t++)
        type_dev[t] = -1;
    if (strlen(s) >= sizeof buf)
        return dse_err_set(e, DSE_EINPUT, NULL, "placement", "'%.40s...' is too long", s);
    strcpy(buf, s);
    int first = 1;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), first = 0) {
        char *eq = strchr(tok, '=');
        const char *dn = eq ? eq + 1 : tok;
        int d = hw_find_device(sys, dn);
        if (d < 0)
            return dse_err_set(e, DSE_EINPUT, NULL, "placement", "'%s': %s has no device '%s'", s, sys->name, dn);
        if (!eq) {
            if (!first)
                return dse_err_set(e, DSE_EINPUT, NULL, "placement",
                                   "'%s': expected DEVICE or DEVICE,TYPE=DEVICE,... (the default device first)", s);
            *dev = d;
            continue;
        }
        if (first)
            return dse_err_set(e, DSE_EINPUT, NULL, "placement", "'%s': name the default device first", s);
        *eq = '\0';
        int t = op_type_from_name(tok);
        if (t < 0)
            return dse_err_set(e, DSE_EINPUT, NULL, "placement", "'%s': unknown operator type '%s'", s, tok);
        type_dev[t] = d;
    }
    if (first)
        return dse_err_set(e, DSE_EINPUT, NULL, "placement", "expected a device name");
    return DSE_OK;
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

/* ---- graphs and scratch ---- */

int eval_graphs_build(const struct wl_model *m, enum wl_phase ph, int64_t batch, int64_t prompt,
                      const struct par_layout *lay, const struct sw_stack *sw, struct eval_graphs *eg,
                      struct dse_err *e)
{
    int tp = lay && lay->n[PAR_TP] > 1 ? lay->n[PAR_TP] : 1, ep = lay && lay->ep > 1 ? lay->ep : 1;
    int cp = lay && lay->n[PAR_CP] > 1 ? lay->n[PAR_CP] : 1;
    double imb = lay && lay->moe_imbalance > 1 ? lay->moe_imbalance : 1;
    memset(eg, 0, sizeof *eg);
    eg->phase = ph;
    eg->batch = batch;
    eg->prompt = prompt;
    eg->tp = tp;
    eg->ep = ep;
    eg->cp = cp;
    eg->sw = sw;
    struct wl_shape sh = {.batch = batch, .tokens = prompt, .past = 0, .tp = tp, .train = ph == PH_TRAIN, .ep = ep,
                          .moe_imbalance = imb, .cp = cp, .tp_pad = sw && sw->tp_padding};
    if (ph == PH_DECODE) {
        sh.tokens = 1;
        sh.past = prompt;
    }
    int rc = wl_build(m, &sh, &eg->first, e);
    struct sw_stack tsw; /* training keeps BatchNorm: its statistics come from the batch, not folded constants */
    if (ph == PH_TRAIN && sw && pass_has(sw, PASS_BN_FOLD)) {
        tsw = *sw;
        tsw.passes &= ~(1u << PASS_BN_FOLD);
    }
    if (!rc)
        rc = pass_apply(ph == PH_TRAIN && sw && pass_has(sw, PASS_BN_FOLD) ? &tsw : sw, &eg->first, e);
    if (rc) {
        wl_graph_free(&eg->first);
        return rc;
    }
    eg->first_params = wl_params(&eg->first);
    eg->model_active_params = wl_active_params(&eg->first);
    eg->first_launches = pass_kernel_launches(&eg->first);
    eval_stage_split(&eg->first, &eg->w_layers, &eg->w_before, &eg->w_after, &eg->boundary_elems);
    eg->model_params = eg->first_params;
    if (tp > 1 || ep > 1) { /* the whole model's counts (a shard's active share is not the model's), and the 6N of MFU */
        struct wl_graph whole;
        struct wl_shape one = {.batch = 1, .tokens = 1, .past = 0, .tp = 1, .train = 0};
        if ((rc = wl_build(m, &one, &whole, e))) {
            wl_graph_free(&eg->first);
            return rc;
        }
        eg->model_params = wl_params(&whole);
        eg->model_active_params = wl_active_params(&whole);
        wl_graph_free(&whole);
    }
    if (ph == PH_TRAIN)
        eval_train_acts(&eg->first, eg);
    if (ph == PH_GENERATE) {
        struct wl_shape ds = {.batch = batch, .tokens = 1, .past = prompt, .tp = tp, .train = 0, .ep = ep,
                              .moe_imbalance = imb, .cp = cp, .tp_pad = sw && sw->tp_padding};
        rc = wl_build(m, &ds, &eg->decode, e);
        if (!rc)
            rc = pass_apply(sw, &eg->decode, e);
        if (rc) {
            wl_graph_free(&eg->first);
            wl_graph_free(&eg->decode);
            return rc;
        }
        eg->decode_params = wl_params(&eg->decode);
        eg->decode_launches = pass_kernel_launches(&eg->decode);
        double wl, wb, wa;
        eval_stage_split(&eg->decode, &wl, &wb, &wa, &eg->decode_boundary_elems);
    }
    return DSE_OK;
}

void eval_graphs_free(struct eval_graphs *eg)
{
    wl_graph_free(&eg->first);
    wl_graph_free(&eg->decode);
}

int eval_scratch_fit(struct eval_scratch *s, const struct eval_graphs *eg, struct dse_err *e)
{
    if ((!s->thr && !(s->thr = malloc(sizeof *s->thr))) || (!s->moded && !(s->moded = malloc(sizeof *s->moded))))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    int nt = eg->first.n_t > eg->decode.n_t ? eg->first.n_t : eg->decode.n_t;
    int no = eg->first.n_op > eg->decode.n_op ? eg->first.n_op : eg->decode.n_op;
    if (!s->mini.t) {
        wl_graph_init(&s->mini, "step");
        s->mini.t = calloc(6, sizeof *s->mini.t);
        s->mini.op = calloc(1, sizeof *s->mini.op);
        if (!s->mini.t || !s->mini.op)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        s->mini.cap_t = 6;
        s->mini.cap_op = 1;
    }
    if (nt > s->cap_t) {
        int *l = realloc(s->loc, sizeof *l * (size_t)nt);
        if (l)
            s->loc = l;
        char *sn = l ? realloc(s->seen, (size_t)nt) : NULL;
        if (sn)
            s->seen = sn;
        signed char *h = sn ? realloc(s->home, (size_t)nt) : NULL;
        if (h)
            s->home = h;
        if (!l || !sn || !h)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        s->cap_t = nt;
    }
    if (no > s->cap_op) {
        int *d = realloc(s->dev_of, sizeof *d * (size_t)no);
        if (d)
            s->dev_of = d;
        char *nf = d ? realloc(s->nofuse, (size_t)no) : NULL;
        if (nf)
            s->nofuse = nf;
        else
            d = NULL;
        double *df = d ? realloc(s->diff, sizeof *df * ((size_t)no + 2)) : NULL;
        if (df)
            s->diff = df;
        struct eval_op_cost *c = df ? realloc(s->contrib, sizeof *c * (size_t)no) : NULL;
        if (c)
            s->contrib = c;
        struct eval_op_cost *ac = c ? realloc(s->acct, sizeof *ac * (size_t)no) : NULL;
        if (ac)
            s->acct = ac;
        if (!d || !df || !c || !ac)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        s->cap_op = no;
    }
    return DSE_OK;
}

void eval_scratch_free(struct eval_scratch *s)
{
    free(s->loc);
    free(s->dev_of);
    free(s->seen);
    free(s->nofuse);
    free(s->home);
    free(s->diff);
    free(s->contrib);
    free(s->acct);
    wl_graph_free(&s->mini);
    free(s->thr);
    free(s->moded);
    free(s->modes);
    free(s->therm);
    free(s->sus);
    memset(s, 0, sizeof *s);
}

/* ---- accounting ---- */

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
    res->n_ops++;
    return DSE_OK;
}

/* Adds one op's cost, executed op->count times, to the totals and (want_ops) to row `row`. */
int eval_account(const struct eval_req *r, struct eval_result *res, const struct wl_op *op, enum wl_phase ph,
                   int row, const struct eval_op_cost *c, struct dse_err *e)
{
    double n = op->count, ts = n * res->tscale, es = n * res->escale, ks = ts * (res->kscale > 0 ? res->kscale : 1);
    struct eval_totals *T = &res->t;
    T->compute_s += c->compute_s * ks;
    T->memory_s += c->memory_s * ks;
    T->overhead_s += c->overhead_s * ks;
    T->xfer_s += c->xfer_s * ts;
    T->comm_s += c->comm_s * ts;
    T->comm_total_s += c->comm_total_s * ts;
    T->latency_s += c->time_s * ks + c->xfer_s * ts;
    T->energy_compute_J += c->e_compute * es;
    T->energy_memory_J += c->e_memory * es;
    T->energy_link_J += c->e_link * es;
    T->energy_active_J += c->e_active * es;
    T->macs += op->macs * es;
    T->flops += op->flops * es;
    T->main_bytes += c->main_bytes * es;
    res->dev_dyn_J[c->dev] += (c->e_compute + c->e_memory + c->e_link + c->e_active) * n * res->dscale;
    res->dev_busy_s[res->part][c->dev] += c->time_s * ks + c->xfer_s * ts;
    if (!r->want_ops)
        return DSE_OK;
    if (row == res->n_ops) {
        int rc = push_op(res, e);
        if (rc)
            return rc;
        struct eval_op *o = &res->ops[row];
        dse_strlcpy(o->name, op->name, sizeof o->name);
        o->type = op->type;
        o->phase = ph;
        o->dev = c->dev;
        o->kernel = op->kernel;
        o->cprec = c->cprec;
        o->pass = res->pass;
    }
    struct eval_op *o = &res->ops[row];
    o->count += n;
    o->time_s += c->time_s * ks + c->xfer_s * ts;
    o->compute_s += c->compute_s * ks;
    o->memory_s += c->memory_s * ks;
    o->overhead_s += c->overhead_s * ks;
    o->xfer_s += c->xfer_s * ts;
    o->bound = c->bound;
    o->macs += op->macs * es;
    o->flops += op->flops * es;
    o->bytes += c->main_bytes * es;
    o->energy_J += (c->e_compute + c->e_memory + c->e_link + c->e_active) * es;
    o->utilization = c->utilization;
    o->cycles_compute += c->cycles_compute * n;
    o->cycles_stall += c->cycles_stall * n;
    o->mapping_efficiency = c->mapping_efficiency;
    o->sram_reads += c->sram_reads * n;
    o->sram_writes += c->sram_writes * n;
    o->dram_reads += c->dram_reads * n;
    o->dram_writes += c->dram_writes * n;
    return DSE_OK;
}

static void fill_cost(struct eval_op_cost *k, int dev, const struct op_cost *c, const struct hw_device *d)
{
    k->dev = dev;
    k->time_s = c->time_s;
    k->compute_s = c->compute_s;
    k->memory_s = c->memory_s;
    k->overhead_s = c->overhead_s;
    k->e_compute = c->energy_compute_J;
    k->e_memory = c->energy_memory_J;
    /* Active power while the kernel runs (not its launch gap), on the units it uses. */
    double run_s = c->time_s - c->overhead_s;
    k->e_active = d->active_W * (run_s > 0 ? run_s : 0) * (1 - c->idle_share);
    k->main_bytes = c->bytes[d->n_mem - 1];
    k->utilization = c->utilization;
    k->bound = c->bound;
    k->cprec = c->cprec;
    k->cycles_compute = c->cycles_compute;
    k->cycles_stall = c->cycles_stall;
    k->mapping_efficiency = c->mapping_efficiency;
    k->sram_reads = c->sram_reads;
    k->sram_writes = c->sram_writes;
    k->dram_reads = c->dram_reads;
    k->dram_writes = c->dram_writes;
}

/* Whether device d runs op at precisions p (its operator set and an engine for the precision). */
static int runs(const struct hw_device *d, const struct wl_graph *g, const struct wl_op *op, const struct prec_cfg *p)
{
    enum hw_engine eng;
    double peak;
    return !d->disabled[0] && (d->ops_mask & (1u << op->type)) && model_op_prec(d, g, op, p, &eng, &peak) >= 0;
}

/* Where each op of g runs (s->dev_of; -1: no device of the system runs it) and which ops are cut out
 * of their fused kernel because it spans devices (s->nofuse). An op runs on the device its placement
 * names unless that device lacks the operator: then on a linked device that runs it. With a stack that
 * partitions by prefix (the Edge TPU compiler), once an op has fallen back, every later op that would
 * run on the primary device runs where the graph fell back to. */
static void place_ops(const struct eval_req *r, const struct wl_graph *g, struct eval_scratch *s)
{
    const struct hw_system *sys = r->sys;
    int fell = -1, prefix = r->sw && r->sw->partition == PART_PREFIX;
    for (int i = 0; i < g->n_op; i++) {
        const struct wl_op *op = &g->op[i];
        int want = r->type_dev[op->type] >= 0 ? r->type_dev[op->type] : r->dev, dev = want;
        const struct hw_device *d = &sys->dev[want];
        if (prefix && fell >= 0 && want == r->dev && runs(&sys->dev[fell], g, op, &r->x.prec))
            dev = fell;
        else if (!d->disabled[0] && !(d->ops_mask & (1u << op->type))) {
            dev = -1;
            for (int k = 0; k < sys->n_dev && dev < 0; k++)
                if (k != want && hw_link_between(sys, want, k) >= 0 && runs(&sys->dev[k], g, op, &r->x.prec))
                    dev = k;
            if (dev >= 0 && want == r->dev && fell < 0 && !wl_op_is_view(op))
                fell = dev;
        }
        s->dev_of[i] = dev;
        s->nofuse[i] = 0;
    }
    for (int i = 0, k0 = 0; i <= g->n_op; i++) { /* per kernel [k0, i): one device, or each op on its own */
        if (i < g->n_op && g->op[i].kernel == g->op[k0].kernel)
            continue;
        int split = 0;
        for (int j = k0 + 1; j < i; j++)
            split |= s->dev_of[j] != s->dev_of[k0] && !wl_op_is_view(&g->op[j]);
        for (int j = k0; j < i && split; j++)
            s->nofuse[j] = 1;
        k0 = i;
    }
}

/* Bytes of a KV-cache tensor as the stack's runtime allocates it once `grow` more tokens joined it: a
 * paged cache rounds each sequence's tokens (rows, dim 1) up to whole blocks (vLLM: blocks of 16, the
 * last partly filled); contiguous and concatenated caches hold the tokens exactly. (A decode step's
 * new token is counted unrounded beside the past it joins: at most one block's rounding is missed.) */
static double kv_alloc_bytes(const struct sw_stack *sw, const struct wl_tensor *t, const struct prec_cfg *p,
                             int64_t grow)
{
    double b = wl_kv_bytes(t, p, grow);
    if (!sw || sw->kv != KV_PAGED || sw->kv_block_tokens < 1 || t->rank < 2 || t->dim[1] < 1)
        return b;
    double rows = (double)t->dim[1] + (double)grow, blk = sw->kv_block_tokens;
    if (t->max_rows > 0 && rows > (double)t->max_rows)
        rows = (double)t->max_rows;
    return b * ceil(rows / blk) * blk / rows;
}

/* The host and runtime time of one forward pass (a step) that the devices do not hide: issuing its
 * `launches` kernels (the stack's host_us_per_kernel each, none when they are replayed from a captured
 * graph) runs ahead of an accelerator, which waits only when issuing takes longer than its dev_s of
 * work, and adds to a CPU's own time; the runtime's per-step work (scheduling, sampling, sync) adds, and
 * its work for each of the step's `seqs` sequences (per_token_us: the token each one emits is sampled,
 * detokenised and streamed by the engine between steps; none in a training step), during which each
 * device of the layout runs the runtime's small kernels for its per_token_device_share of the time, at
 * its active power (the rest of the time it waits at its gap_W: eval_ops). */
void eval_runtime_step(const struct eval_req *r, struct eval_result *res, double dev_s, double launches, double seqs)
{
    const struct sw_stack *sw = r->sw;
    const struct hw_device *d = &r->sys->dev[r->dev];
    double extra = d->per_step_s; /* the system's own runtime work per pass (overhead.per_step_us) */
    if (sw) {
        double host = pass_has(sw, PASS_LAUNCH) ? 0 : launches * sw->host_kernel_s;
        extra += (d->cls == HW_CPU ? host : host > dev_s ? host - dev_s : 0) + sw->per_step_s;
        if (!r->no_token_cost && seqs > 0 && sw->per_token_s > 0) {
            double t = seqs * sw->per_token_s, J = sw->token_busy * d->active_W * t;
            const struct hw_system *sys = r->sys;
            double n = sys->topo.n_level && r->dev == sys->topo.dev ? res->t.devices : 1;
            extra += t;
            res->t.energy_active_J += n * J;
            res->dev_dyn_J[r->dev] += J;
        }
    }
    if (!(extra > 0))
        return;
    res->t.latency_s += extra;
    res->t.runtime_s += extra;
}

/* A fused kernel runs as one roofline, not as its ops' rooflines one after another: its lead op (a GEMM,
 * a convolution, the first of a chain) and the element-wise, norm or softmax ops joined to it issue
 * their arithmetic and their memory traffic together, so the kernel takes
 *   max(sum compute_j, sum memory_j x f_j / f_lead) + serial x min(...) + sum of the ops' overheads,
 * where memory_j is what op j moves (the intermediates it keeps on chip already left out: pass.h,
 * fused_in / fused_out) and f the class's bandwidth factor (model_mem_factor): a joined op's bytes move
 * at its lead kernel's rate, an epilogue's stores at the GEMM's, not at a stand-alone element-wise
 * kernel's. Never more than the ops' separate times. The ops keep their own rows; each one's roofline
 * part is scaled by the kernel's saving. Ops whose time is not a roofline (a cycle tier's stalls, an
 * NPU's DMA pipeline), a kernel cut across devices, collectives and cache-length-dependent ops (re-costed
 * per decode step) are left as they are; rec, when given, gets the new costs. */
static void kernel_rooflines(const struct eval_req *r, const struct wl_graph *g, struct eval_scratch *s,
                             struct eval_op_cost *rec)
{
    for (int i = 0, k0 = 0; i <= g->n_op; i++) {
        if (i < g->n_op && g->op[i].kernel == g->op[k0].kernel)
            continue;
        int lead = -1, n = 0, ok = 1;
        double sc = 0, sm = 0, roof = 0;
        for (int j = k0; j < i && ok; j++) {
            const struct wl_op *op = &g->op[j];
            struct eval_op_cost *k = &s->acct[j];
            if (wl_op_is_view(op) || !(k->time_s > 0))
                continue;
            if (s->dev_of[j] < 0 || s->nofuse[j] || k->dynamic || (op_info[op->type].flags & OPF_COLL) ||
                (lead >= 0 && k->dev != s->acct[lead].dev)) {
                ok = 0;
                break;
            }
            const struct hw_device *d = &r->sys->dev[k->dev];
            double busy = model_busy_s(d, k->compute_s, k->memory_s);
            if (fabs(k->time_s - k->overhead_s - busy) > 1e-9 * k->time_s + 1e-15) {
                ok = 0; /* not a roofline */
                break;
            }
            if (lead < 0)
                lead = j;
            double fl = model_mem_factor(d, &g->op[lead]), fj = model_mem_factor(d, op);
            sc += k->compute_s;
            sm += fl > 0 && fj > 0 ? k->memory_s * fj / fl : k->memory_s;
            roof += busy;
            n++;
        }
        if (ok && n >= 2 && roof > 0) {
            double one = model_busy_s(&r->sys->dev[s->acct[lead].dev], sc, sm);
            double f = one < roof ? one / roof : 1;
            for (int j = k0; j < i && f < 1; j++) {
                struct eval_op_cost *k = &s->acct[j];
                if (wl_op_is_view(&g->op[j]) || !(k->time_s > 0))
                    continue;
                double run = k->time_s - k->overhead_s, now = run * f;
                if (run > 0)
                    k->e_active *= f;
                k->time_s = k->overhead_s + now;
                if (rec) /* what later decode steps reuse */
                    rec[j] = *k;
            }
        }
        k0 = i;
    }
}

/* A dataflow NPU's contexts (hw.h, struct hw_contexts; docs/models.md, "Dataflow NPUs"). What one
 * configuration of the chip must hold: the graph's weights and each layer's line buffers, the input rows
 * a windowed layer keeps while frames stream through it (a k x k convolution or pooling window: k rows of
 * its input, k x W x C elements of one frame), and an attention layer's keys and values of one sequence.
 * n = ceil(that / capacity) contexts. One context is loaded once and costs nothing per pass; n > 1 run
 * one after another, each switched in once per pass (so per batch: a batch amortises them), which costs
 * every weight's reload from the host (the device's main memory level, at its efficiency) and n
 * reconfigurations of switch_s. The layers' activations stay on chip inside a context; those crossing
 * from one context to the next are not counted (assumed small beside the weights). */
static void eval_contexts(const struct eval_req *r, const struct wl_graph *g, struct eval_result *res)
{
    const struct hw_device *d = &r->sys->dev[r->dev];
    if (!d->ctx.present)
        return;
    double w = 0, buf = 0;
    for (int i = 0; i < g->n_t; i++)
        if (g->t[i].kind == WL_WEIGHT)
            w += wl_tensor_bytes(&g->t[i], &r->x.prec) * g->t[i].count;
    double eb = prec_bytes(r->x.prec.a);
    for (int i = 0; i < g->n_op; i++) {
        const struct wl_op *op = &g->op[i];
        const struct wl_tensor *x = &g->t[op->in[0]];
        if ((op->type == OP_CONV2D || (op->type == OP_POOL && op->kh > 0)) && x->rank == 4)
            buf += op->count * op->kh * (double)x->dim[3] * x->dim[1] * eb;
        else if (op->type == OP_ATTENTION && op->n_in >= 3)
            buf += op->count * (wl_tensor_bytes(&g->t[op->in[1]], &r->x.prec) + wl_tensor_bytes(&g->t[op->in[2]], &r->x.prec)) /
                   (g->t[op->in[1]].dim[0] > 0 ? (double)g->t[op->in[1]].dim[0] : 1);
    }
    double n = ceil((w + buf) / d->ctx.capacity_bytes);
    res->t.contexts = n > 1 ? n : 1;
    if (n <= 1)
        return;
    int last = d->n_mem - 1;
    double t = w / (d->mem[last].bandwidth_Bps * d->eff_level[last]) + n * d->ctx.switch_s;
    double J = w * d->mem[last].energy_J_per_byte;
    res->t.contexts_s += t * res->tscale;
    res->t.latency_s += t * res->tscale;
    res->t.energy_memory_J += J * res->escale;
    res->dev_dyn_J[r->dev] += J * res->dscale;
    res->dev_busy_s[res->part][r->dev] += t * res->tscale;
}

/* Evaluates every op of g once; records per-op costs into rec when given (first decode step).
 * kv_grow: tokens the cache tensors read as inputs (the past) gain after this graph (generate: the
 * decode steps after the first), so that u->kv is the cache at its largest. */
static int eval_graph(const struct eval_req *r, const struct wl_graph *g, double params, enum wl_phase ph,
                      int64_t kv_grow, struct eval_scratch *s, struct usage *u, unsigned *used,
                      struct eval_op_cost *rec, struct eval_result *res, struct dse_err *e)
{
    const struct hw_system *sys = r->sys;
    int rc, row0 = res->n_ops;
    for (int i = 0; i < g->n_t; i++) {
        s->loc[i] = r->dev;
        s->seen[i] = 0;
    }
    memset(u, 0, sizeof *u);
    u->act = wl_peak_act_bytes(g, &r->x.prec, s->diff);
    struct exec_cfg x = r->x;
    x.graph_weight_bytes = params * prec_bytes(r->x.prec.w);
    x.graph_capture |= pass_has(r->sw, PASS_LAUNCH);
    int planned = pass_plan_memory(r->sw, &sys->dev[r->dev], g, &r->x.prec, s->home), has_past = 0;
    place_ops(r, g, s);
    for (int i = 0; i < g->n_t && !has_past; i++)
        has_past = g->t[i].kind == WL_KV && g->t[i].producer < 0;
    for (int i = 0; i < g->n_op; i++) {
        const struct wl_op *op = &g->op[i];
        struct op_cost c;
        int dev = s->dev_of[i];
        enum op_status st = OPS_UNSUPPORTED_OP;
        if (dev < 0)
            dev = r->type_dev[op->type] >= 0 ? r->type_dev[op->type] : r->dev; /* for the message */
        else if (!sys->dev[dev].disabled[0]) {
            x.home = planned && dev == r->dev ? s->home : NULL; /* the plan is the primary device's */
            x.nofuse = s->nofuse[i];
            st = model_cost(&sys->dev[dev], g, op, &x, &c);
        }
        if (st == OPS_NO_TIER)
            return dse_err_set(e, DSE_EINPUT, NULL, "--fidelity",
                               "cycle: device '%s' (%s) lacks the description the cycle tier needs (\"array\" for "
                               "systolic, \"gpu\" for GPUs, \"cpu\" for CPUs, a scratchpad sram level for NPUs; "
                               "hwdesc/README.md) (op '%s')",
                               sys->dev[dev].name, hw_class_names[sys->dev[dev].cls], op->name);
        if (st == OPS_TOO_LARGE)
            return dse_err_set(e, DSE_EINPUT, NULL, "--fidelity",
                               "cycle: op '%s' is too large to replay SCALE-Sim's memory on '%s' (over %g steps: "
                               "folds, prefetches, drains); use InterfaceBandwidth CALC, larger SRAMs or the analytical "
                               "tier", op->name, sys->dev[dev].name, MODEL_SA_MAX_STEPS);
        if (st == OPS_UNSUPPORTED_PREC) {
            char pb[48];
            prec_format(&r->x.prec, pb, sizeof pb);
            infeasible(res, "device '%s' cannot compute %s (op '%s') at precision %s", sys->dev[dev].name,
                       op_type_name(op->type), op->name, pb);
            return DSE_OK;
        }
        if (st != OPS_OK) {
            if (sys->dev[dev].disabled[0])
                infeasible(res, "%s", sys->dev[dev].disabled);
            else
                infeasible(res, "no device of '%s' runs %s (op '%s') at this precision: '%s' does not support it",
                           sys->name, op_type_name(op->type), op->name, sys->dev[dev].name);
            return DSE_OK;
        }
        *used |= 1u << dev;
        struct eval_op_cost k;
        fill_cost(&k, dev, &c, &sys->dev[dev]);
        k.dynamic = (op_info[op->type].flags & OPF_KV) && op->n_in == 5;
        k.xfer_s = k.e_link = k.comm_s = k.comm_total_s = 0;
        if (op_info[op->type].flags & OPF_COLL) { /* its link time over the layout's group (par.h) */
            struct coll_cost cc;
            int size, stride;
            par_group(&r->layout, (enum par_dim)op->coll_dim, &size, &stride);
            double bi = wl_tensor_bytes(&g->t[op->in[0]], &r->x.prec), bo = wl_tensor_bytes(&g->t[op->out[0]], &r->x.prec);
            enum coll_kind ck = op->type == OP_ALLGATHER ? COLL_ALLGATHER : op->type == OP_ALLTOALL ? COLL_ALLTOALL
                                                                                                       : COLL_ALLREDUCE;
            /* all-gather: the gathered result; all-to-all: the larger of what is sent and received */
            double b = ck == COLL_ALLGATHER ? bo : ck == COLL_ALLTOALL && bo > bi ? bo : bi;
            if ((rc = par_coll_cost(&sys->topo, ck, size, stride, b, &cc, e)))
                return rc;
            k.xfer_s = k.comm_s = k.comm_total_s = cc.time_s;
            k.e_link = cc.energy_J;
            /* its kernel (NCCL's) keeps the device clocked and its channels' SMs busy while the data crosses
             * the links: active power over the link time (less what an overlap hides under other kernels) */
            k.e_active += sys->dev[dev].active_W * cc.time_s;
            if (cc.time_s > k.time_s)
                k.bound = BOUND_NETWORK; /* the links, not the kernel's compute, memory or launch, set its time */
        }
        for (int m = 0; m < op->n_in; m++) {
            int t = op->in[m];
            const struct wl_tensor *tt = &g->t[t];
            if (tt->kind == WL_WEIGHT || tt->kind == WL_KV) {
                if (!s->seen[t]) {
                    if (tt->kind == WL_WEIGHT)
                        u->weights[dev] += wl_tensor_bytes(tt, &r->x.prec) * tt->count;
                    else
                        u->kv[dev] += kv_alloc_bytes(r->sw, tt, &r->x.prec, tt->producer < 0 ? kv_grow : 0) * tt->count;
                    s->seen[t] = 1;
                }
                continue;
            }
            if (s->loc[t] != dev) { /* the input lives on another device: cross the link */
                int l = hw_link_between(sys, s->loc[t], dev);
                double b = wl_tensor_bytes(tt, &r->x.prec);
                if (l < 0) {
                    infeasible(res, "no link between '%s' and '%s' for tensor '%s'", sys->dev[s->loc[t]].name,
                               sys->dev[dev].name, tt->name);
                    return DSE_OK;
                }
                k.xfer_s += sys->link[l].latency_s + b / sys->link[l].bandwidth_Bps;
                k.e_link += b * sys->link[l].energy_J_per_byte;
            }
        }
        for (int m = 0; m < op->n_out; m++) {
            int t = op->out[m];
            s->loc[t] = dev;
            if (g->t[t].kind == WL_KV && !s->seen[t]) {
                /* a step's new K and V: the whole cache of a prefill; appended to the cache (its last
                 * block, already counted with the cache) when the graph reads a past */
                u->kv[dev] += (has_past ? wl_kv_bytes(&g->t[t], &r->x.prec, 0)
                                        : kv_alloc_bytes(r->sw, &g->t[t], &r->x.prec, 0)) *
                              g->t[t].count;
                s->seen[t] = 1;
            }
        }
        if (rec)
            rec[i] = k; /* a collective's whole time: the backward hides its own share */
        if (ph == PH_TRAIN && r->sw && r->sw->overlap_tp && rec && (op_info[op->type].flags & OPF_COLL) &&
            op->coll_dim == PAR_TP && k.xfer_s > 0) { /* under the GEMMs beside it (eval_par.c) */
            int prev, next[8], nn = eval_tp_neighbours(g, i, &prev, next, 8);
            double gp = prev >= 0 ? rec[prev].time_s : 0, gn = 0, ks = res->kscale > 0 ? res->kscale : 1;
            for (int j = 0; j < nn; j++) { /* not costed yet: ahead of this op */
                int dj = s->dev_of[next[j]];
                struct op_cost cj;
                if (dj < 0 || sys->dev[dj].disabled[0])
                    continue;
                x.home = planned && dj == r->dev ? s->home : NULL;
                x.nofuse = s->nofuse[next[j]];
                if (model_cost(&sys->dev[dj], g, &g->op[next[j]], &x, &cj) == OPS_OK)
                    gn += cj.time_s;
            }
            double whole = k.xfer_s;
            k.xfer_s = k.comm_s = eval_tp_exposed(k.xfer_s, gp * ks, gn * ks);
            k.e_active -= sys->dev[dev].active_W * (whole - k.xfer_s);
        }
        s->acct[i] = k;
    }
    kernel_rooflines(r, g, s, rec);
    /* the pipeline's factors from this pass's parts (eval_par.c): fixed by the first graph and by a
     * generate's first decode step; a training step's backward and later decode steps reuse them */
    int first, last;
    eval_layer_span(g, &first, &last);
    double t[STAGE_COUNT] = {0}, ks = res->kscale > 0 ? res->kscale : 1;
    for (int i = 0; i < g->n_op; i++)
        t[eval_stage_of(i, first, last)] += g->op[i].count * (s->acct[i].time_s * ks + s->acct[i].xfer_s);
    eval_pipe_factors(&r->layout, eval_layers(r), ph == PH_DECODE, t, res->stage_f, res->stage_d);
    for (int i = 0; i < g->n_op; i++) {
        eval_stage_scale(res, eval_stage_of(i, first, last));
        if ((rc = eval_account(r, res, &g->op[i], ph, row0 + i, &s->acct[i], e)))
            return rc;
    }
    eval_contexts(r, g, res);
    return DSE_OK;
}

/* Re-costs a cache-length-dependent op with `past` cached tokens, on a one-op copy. */
static int step_cost(const struct eval_req *r, const struct wl_graph *g, const struct wl_op *op, int64_t past,
                     const struct eval_op_cost *at0, double params, struct eval_scratch *s,
                     struct eval_op_cost *out, struct dse_err *e)
{
    struct wl_graph *m = &s->mini;
    for (int k = 0; k < 5; k++)
        m->t[k] = g->t[op->in[k]];
    m->t[5] = g->t[op->out[0]];
    if (op->window > 0 && past > op->window - 1) /* a rolling cache: the last window - 1 tokens */
        past = op->window - 1;
    for (int k = 3; k < 5; k++) {
        m->t[k].dim[1] = past;
        m->t[k].elems = (double)m->t[k].dim[0] * (double)past * (double)m->t[k].dim[2];
    }
    m->op[0] = *op;
    for (int k = 0; k < 5; k++)
        m->op[0].in[k] = k;
    m->op[0].out[0] = 5;
    m->n_t = 6;
    m->n_op = 1;
    int rc = wl_op_derive(m, 0, e);
    if (rc)
        return rc;
    struct exec_cfg x = r->x;
    x.graph_weight_bytes = params * prec_bytes(r->x.prec.w);
    x.graph_capture |= pass_has(r->sw, PASS_LAUNCH);
    struct op_cost c;
    const struct hw_device *d = &r->sys->dev[at0->dev];
    if (model_cost(d, m, &m->op[0], &x, &c) != OPS_OK)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "decode step: op '%s' stopped being supported", op->name);
    fill_cost(out, at0->dev, &c, d);
    out->dynamic = 1;
    out->xfer_s = at0->xfer_s;
    out->e_link = at0->e_link;
    return DSE_OK;
}

double eval_mem_util(const struct hw_system *sys, const struct sw_stack *sw, int d)
{
    return sw && sw->mem_util > 0 && (sw->targets & (1u << sys->dev[d].cls)) ? sw->mem_util : 0;
}

double eval_capacity_of(const struct hw_system *sys, const struct sw_stack *sw, int primary, double capacity_bytes,
                        const struct eval_result *res, int d, double *total_bytes, double *cap_bytes)
{
    const struct hw_mem *pm = &sys->dev[primary].mem[sys->dev[primary].n_mem - 1];
    const struct hw_mem *m = &sys->dev[d].mem[sys->dev[d].n_mem - 1];
    double total = res->need_bytes[d], cap = m->capacity_bytes;
    if (m->shared >= 0) {
        total = 0;
        for (int k = 0; k < sys->n_dev; k++)
            if (sys->dev[k].mem[sys->dev[k].n_mem - 1].shared == m->shared)
                total += res->need_bytes[k];
    }
    if (capacity_bytes > 0 && (d == primary || (m->shared >= 0 && m->shared == pm->shared)))
        cap = capacity_bytes;
    *total_bytes = total;
    *cap_bytes = cap;
    return hw_usable_bytes(m, cap, eval_mem_util(sys, sw, d));
}

int eval_capacity_short(const struct hw_system *sys, const struct sw_stack *sw, int primary, double capacity_bytes,
                        const struct eval_result *res, double *total_bytes, double *cap_bytes)
{
    for (int d = 0; d < sys->n_dev; d++) {
        double use = eval_capacity_of(sys, sw, primary, capacity_bytes, res, d, total_bytes, cap_bytes);
        if (*total_bytes > 0 && *total_bytes > use)
            return d;
    }
    return -1;
}

void eval_capacity_suffix(const struct hw_system *sys, const struct sw_stack *sw, int d, double cap, char *buf,
                          size_t n)
{
    const struct hw_mem *m = &sys->dev[d].mem[sys->dev[d].n_mem - 1];
    double util = eval_mem_util(sys, sw, d), use = hw_usable_bytes(m, cap, util);
    if (m->reserved_bytes <= 0 && util <= 0) {
        snprintf(buf, n, "%.3g GB", cap / 1e9);
        return;
    }
    char ru[200] = "";
    if (m->reserved_bytes > 0 && util > 0)
        snprintf(ru, sizeof ru, "software '%s' allocates %.3g of it, less %.3g GB reserved for the OS and runtime "
                 "(hwdesc reserved_GiB)", sw->name, util, m->reserved_bytes / 1e9);
    else if (m->reserved_bytes > 0)
        snprintf(ru, sizeof ru, "%.3g GB reserved for the OS and runtime (hwdesc reserved_GiB)", m->reserved_bytes / 1e9);
    else
        snprintf(ru, sizeof ru, "software '%s' allocates %.3g of it", sw->name, util);
    if (use > 0)
        snprintf(buf, n, "%.3g GB: %.3g GB usable, %s", cap / 1e9, use / 1e9, ru);
    else
        snprintf(buf, n, "%.3g GB: nothing usable, %s", cap / 1e9, ru);
}

size_t eval_capacity_reason(const struct hw_system *sys, const struct sw_stack *sw, const struct eval_result *res,
                            int d, double total, double cap, char *buf, size_t n)
{
    char who[200] = "", train[96] = "";
    const struct par_layout *l = &res->layout;
    if (res->t.devices > 1 && d == sys->topo.dev)
        snprintf(who, sizeof who, "%s '%s' of the %d of tp %d x dp %d x pp %d ",
                 l->n[PAR_PP] > 1 ? "the most loaded (a first or last pipeline stage)" : "each", sys->dev[d].name,
                 (int)res->t.devices, l->n[PAR_TP], l->n[PAR_DP], l->n[PAR_PP]);
    if (res->t.grad_bytes > 0 || res->t.optimizer_bytes > 0)
        snprintf(train, sizeof train, " + gradients %.3g GB + optimizer states %.3g GB", res->t.grad_bytes / 1e9,
                 res->t.optimizer_bytes / 1e9);
    int k = snprintf(buf, n,
                     "does not fit in memory: %sneeds %.3g GB (weights %.3g GB + KV cache %.3g GB + activations "
                     "%.3g GB%s) in '%s' of ",
                     who, total / 1e9, res->t.weight_bytes / 1e9, res->t.kv_bytes / 1e9, res->t.act_bytes / 1e9, train,
                     sys->dev[d].mem[sys->dev[d].n_mem - 1].name);
    size_t prefix = k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
    eval_capacity_suffix(sys, sw, d, cap, buf + prefix, n - prefix);
    return prefix;
}

void eval_capacity(const struct hw_system *sys, const struct sw_stack *sw, int primary, double capacity_bytes,
                   struct eval_result *res)
{
    double total, cap;
    int d;
    if (!res->feasible || (d = eval_capacity_short(sys, sw, primary, capacity_bytes, res, &total, &cap)) < 0)
        return;
    eval_capacity_reason(sys, sw, res, d, total, cap, res->reason, sizeof res->reason);
    res->feasible = 0;
}

/* The kernels' time factor of a phase (links are not scaled): 1 / the stack version's whole-run factor for
 * it (versions[].efficiency.training, .prefill, .decode, fitted by dse calibrate --published --multi-device
 * --software on the fit-half cases that ran that release: what its runs reach of the architecture's
 * kernel rate), 1 where none is fitted or no stack is named. Encoders and CNNs (phase none) are not
 * scaled: no case fitted them. The factor is the software's, never the board's: a board of the same
 * architecture under the same release gets the same one. */
static double kernel_scale(const struct sw_stack *sw, enum wl_phase ph)
{
    double f = !sw ? 1 : ph == PH_TRAIN ? sw->eff[SW_TRAIN] : ph == PH_PREFILL ? sw->eff[SW_PREFILL]
                       : ph == PH_DECODE ? sw->eff[SW_DECODE] : 1;
    return f > 0 ? 1 / f : 1;
}

/* Costs every operator of the point (the prefill or whole graph, then each decode step) and the
 * memory each device needs: raw sums, before power limits, capacity and derived metrics. On return
 * res->feasible is 0 when an operator cannot run (graph-level infeasibility). */
static int eval_ops_run(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                        struct eval_result *res, struct dse_err *e);

/* A point's operators, then its gaps: between a run's kernels (a runtime's host work, launch gaps, waits
 * for another device) a device the run uses keeps its clocks up, a governor lowering them only after a
 * longer idle, and draws its gap_W (hw.h); with clocks pinned at their maximum (hw_system.clocks_locked)
 * every device, used or not, runs the clock trees and issue logic that active_W stands for. Both at the
 * system's clock and mode as evaluated, so a power limit sees them. */
static void add_gap(const struct hw_system *sys, struct eval_result *res, int d, double gap)
{
    double w = sys->clocks_locked ? sys->dev[d].active_W : res->used & (1u << d) ? sys->dev[d].gap_W : 0;
    if (!(gap > 0) || !(w > 0))
        return;
    double n = sys->topo.n_level && d == sys->topo.dev ? res->t.devices : 1;
    res->t.energy_active_J += n * w * gap;
    res->dev_dyn_J[d] += w * gap;
}

static int eval_ops(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                    struct eval_result *res, struct dse_err *e)
{
    int rc = eval_ops_run(r, eg, s, res, e);
    if (rc || !res->feasible || !(res->t.latency_s > 0))
        return rc;
    for (int d = 0; d < r->sys->n_dev; d++)
        add_gap(r->sys, res, d, res->t.latency_s - (res->dev_busy_s[0][d] + res->dev_busy_s[1][d]));
    return rc;
}

static int eval_ops_run(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                        struct eval_result *res, struct dse_err *e)
{
    struct usage u, ud;
    unsigned used = 0;
    int rc;
    const struct hw_system *sys = r->sys;
    const struct hw_device *pd = &sys->dev[r->dev];
    struct eval_op *keep = res->ops;
    int keep_cap = res->cap_ops;
    memset(res, 0, sizeof *res);
    res->ops = keep;
    res->cap_ops = keep_cap;
    res->feasible = 1;
    const struct par_layout *L = &r->layout;
    double M = L->microbatches > 0 ? L->microbatches : 1, pp = L->n[PAR_PP] > 0 ? L->n[PAR_PP] : 1;
    double tp = L->n[PAR_TP] > 0 ? L->n[PAR_TP] : 1, dp = L->n[PAR_DP] > 0 ? L->n[PAR_DP] : 1;
    double cp = L->n[PAR_CP] > 0 ? L->n[PAR_CP] : 1;
    res->layout = *L;
    res->t.devices = tp * cp * dp * pp;
    res->escale = dp * tp * cp * M;
    res->dscale = res->tscale = 1; /* set per op from the pipeline's factors (eval_graph) */
    res->kscale = kernel_scale(r->sw, eg->phase == PH_GENERATE ? PH_PREFILL : eg->phase);
    if ((rc = model_for(pd->cls)->check(pd, e)))
        return rc;
    enum wl_phase ph = eg->phase;
    res->t.params = eg->model_params;
    res->t.active_params = eg->model_active_params;
    if (r->sw && r->sw != eg->sw)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "graphs built for stack '%s' evaluated with '%s'",
                           eg->sw ? eg->sw->name : "none", r->sw->name);
    if (r->sw && (rc = pass_check_target(r->sw, pd, e))) {
        infeasible(res, "%s", e->msg); /* a design point, not an input error: this stack does not target it */
        dse_err_clear(e);
        return DSE_OK;
    }
    if (ph == PH_TRAIN && r->sw && !r->sw->trains) {
        infeasible(res, "software stack '%s' is for inference only (it runs no backward pass): train with megatron, "
                   "compiled or eager", r->sw->name);
        return DSE_OK;
    }
    if (ph == PH_TRAIN && eval_check_train_prec(r, e)) { /* a design point: this precision does not train here */
        infeasible(res, "%s", e->msg);
        dse_err_clear(e);
        return DSE_OK;
    }
    rc = eval_graph(r, &eg->first, eg->first_params, ph == PH_GENERATE ? PH_PREFILL : ph, 0, s, &u, &used,
                    ph == PH_TRAIN ? s->contrib : NULL, res, e);
    if (rc || !res->feasible)
        return rc;
    if ((rc = eval_pipe_sends(r, res, eg->boundary_elems, e)))
        return rc;
    double act = u.act;
    /* the request's own runtime work, once before its first token: a decode step or a training step is no
     * request's start */
    double req = r->no_request_cost || ph == PH_DECODE || ph == PH_TRAIN
                     ? 0
                     : pd->per_request_s + (r->sw ? r->sw->per_request_s : 0);
    res->t.latency_s += req;
    res->t.runtime_s += req;
    /* the sequences that emit a token in this pass: a prefill's (its first token) */
    double seqs = ph == PH_PREFILL || ph == PH_GENERATE || ph == PH_DECODE ? (double)eval_replica_batch(r) : 0;
    eval_runtime_step(r, res, res->t.latency_s - res->t.runtime_s, eg->first_launches, seqs);
    res->first_s = res->t.latency_s;
    res->t.kernels = eg->first_launches;
    double wshare = 1;
    double share = eval_stage_share(L, eval_layers(r)); /* the slowest stage's ceil(L / pp) of L layers */
    if (pp > 1 && eg->first_params > 0)
        wshare = (eg->w_layers * share + (eg->w_before > eg->w_after ? eg->w_before : eg->w_after)) / eg->first_params;
    if (ph == PH_TRAIN) {
        res->t.kernels = 3 * eg->first_launches;
        res->used = used;
        return eval_train_rest(r, eg, s, res, &u, wshare, e);
    }

    if (ph == PH_GENERATE) {
        const struct wl_graph *g = &eg->decode;
        int row0 = res->n_ops;
        res->part = 1;
        res->kscale = kernel_scale(r->sw, PH_DECODE);
        /* the cache at the last step: prompt + gen - 1 past tokens (a window's fewer) and the new one */
        double t0 = res->t.latency_s;
        rc = eval_graph(r, g, eg->decode_params, PH_DECODE, (r->gen - 1 + eg->cp - 1) / eg->cp, s, &ud, &used, s->contrib,
                        res, e);
        if (rc || !res->feasible || (rc = eval_pipe_sends(r, res, eg->decode_boundary_elems, e)))
            return rc;
        eval_runtime_step(r, res, res->t.latency_s - t0, eg->decode_launches, seqs);
        /* The later steps: an operator whose cost does not depend on the cache length costs the same
         * every step, so it is accounted once for all gen - 1 of them (its count scaled: every total
         * is linear in it); only the cache-dependent ones are costed step by step. static_s is one
         * step's share of the former, for the per-step runtime terms. */
        double static_s = 0;
        int dfirst, dlast;
        eval_layer_span(g, &dfirst, &dlast);
        if (r->gen > 1) {
            double before = res->t.latency_s;
            for (int k = 0; k < g->n_op; k++)
                if (!s->contrib[k].dynamic) {
                    struct wl_op all = g->op[k];
                    all.count *= (double)(r->gen - 1);
                    eval_stage_scale(res, eval_stage_of(k, dfirst, dlast));
                    if ((rc = eval_account(r, res, &all, PH_DECODE, row0 + k, &s->contrib[k], e)))
                        return rc;
                }
            static_s = (res->t.latency_s - before) / (double)(r->gen - 1);
        }
        for (int64_t i = 1; i < r->gen; i++) {
            t0 = res->t.latency_s - static_s;
            for (int k = 0; k < g->n_op; k++) {
                if (!s->contrib[k].dynamic)
                    continue;
                struct eval_op_cost c = s->contrib[k];
                if ((rc = step_cost(r, g, &g->op[k], (eg->prompt + i + eg->cp - 1) / eg->cp, &s->contrib[k],
                                    eg->decode_params, s, &c, e)))
                    return rc;
                /* the op as derived at this step's cache length (s->mini): its MACs and FLOPs grow
                 * with the cache as its time does */
                eval_stage_scale(res, eval_stage_of(k, dfirst, dlast));
                if ((rc = eval_account(r, res, &s->mini.op[0], PH_DECODE, row0 + k, &c, e)))
                    return rc;
            }
            if ((rc = eval_pipe_sends(r, res, eg->decode_boundary_elems, e)))
                return rc;
            eval_runtime_step(r, res, res->t.latency_s - t0, eg->decode_launches, seqs);
        }
        res->t.kernels += eg->decode_launches * (double)r->gen;
        if (ud.act > act)
            act = ud.act;
        u = ud;
    }
    res->used = used;

    /* Memory of the most loaded device: a pp stage holds ceil(L / pp) of the L layers' weights and of
     * the cache of every micro-batch, the first stage the embeddings and the last the head (the larger
     * counts), one micro-batch's activations. */
    struct eval_totals *T = &res->t;
    for (int d = 0; d < sys->n_dev; d++) {
        double w = u.weights[d] * (d == r->dev ? wshare : 1), kv = u.kv[d] * (d == r->dev ? M * share : 1);
        res->need_bytes[d] = w + kv + (d == r->dev ? act : 0);
        T->weight_bytes += w;
        T->kv_bytes += kv;
    }
    T->act_bytes = act;
    return DSE_OK;
}

/* Each used device's average power over the latency T (its dynamic energy, its gaps' among it: eval_ops,
 * plus its idle power for the whole of T: it idles while others work) and its limit; returns the mask
 * of devices over it. */
static unsigned power_check_in(const struct hw_system *sys, int mode, struct eval_result *res);
static unsigned power_check(const struct hw_system *sys, struct eval_result *res) { return power_check_in(sys, -1, res); }

/* The same with each device's TDP that of mode (hw_mode_tdp_W; -1: as the system stands), for a
 * result evaluated in the mode without a copy of the system in it. */
static unsigned power_check_in(const struct hw_system *sys, int mode, struct eval_result *res)
{
    unsigned over = 0;
    double T = res->t.latency_s;
    for (int d = 0; d < sys->n_dev; d++) {
        const struct hw_device *dv = &sys->dev[d];
        res->dev_power_W[d] = res->dev_limit_W[d] = 0;
        if (!(res->used & (1u << d)) || !(T > 0))
            continue;
        double tdp = hw_mode_tdp_W(sys, mode, d);
        double lim = tdp > 0 ? tdp : INFINITY; /* no TDP known (a SCALE-Sim .cfg): no limit */
        if (dv->power_cap_W > 0 && dv->power_cap_W < lim)
            lim = dv->power_cap_W;
        res->dev_power_W[d] = res->dev_dyn_J[d] / T + dv->idle_W;
        res->dev_limit_W[d] = lim;
        if (res->dev_power_W[d] > lim * (1 + 1e-9))
            over |= 1u << d;
    }
    return over;
}

/* Device d of the throttled copy at DVFS point k + x (x in [0, 1): that far towards point k + 1, clock
 * and voltage interpolated linearly, as a governor steps through the fine clock bins between the
 * points a table lists): a copy of the original scaled to that clock (peaks x f / f_top) and voltage
 * (MAC energies x V^2 / V_top^2; 1 where the table publishes no voltages). Returns the clock. */
static double set_point(const struct hw_system *sys, struct hw_system *ts, int d, int k, double x)
{
    const struct hw_device *o = &sys->dev[d];
    const struct hw_dvfs_point *top = &o->dvfs[o->n_dvfs - 1], *p = &o->dvfs[k];
    const struct hw_dvfs_point *q = k + 1 < o->n_dvfs ? p + 1 : p;
    double f = p->freq_Hz + x * (q->freq_Hz - p->freq_Hz), v = p->voltage_V + x * (q->voltage_V - p->voltage_V);
    ts->dev[d] = *o;
    hw_scale_clock(&ts->dev[d], f / top->freq_Hz, top->voltage_V > 0 ? (v * v) / (top->voltage_V * top->voltage_V) : 1);
    return f;
}

/* The lowest power cap on a device of sys (0: none). */
static double lowest_cap(const struct hw_system *sys)
{
    double cap = 0;
    for (int d = 0; d < sys->n_dev; d++)
        if (sys->dev[d].power_cap_W > 0 && (cap == 0 || sys->dev[d].power_cap_W < cap))
            cap = sys->dev[d].power_cap_W;
    return cap;
}

/* Each mode's evaluation of one sweep key (eval_req.share_sig): the points that differ in their power cap
 * alone evaluate the modes once. Results are kept without operator rows (a sweep keeps none). */
struct eval_mode_cache {
    long long sig;
    unsigned have; /* bit k: res[k] holds mode k's evaluation */
    struct eval_result res[HW_MAX_MODES];
};

/* res <- c (its own operator rows kept). */
static void res_restore(struct eval_result *res, const struct eval_result *c)
{
    struct eval_op *ops = res->ops;
    int cap = res->cap_ops;
    *res = *c;
    res->ops = ops;
    res->cap_ops = cap;
}

/* Whether the evaluation res of mode k of sys fits: every used device within its limit in the mode
 * (power_check_in) and the whole system, idle included, within the lowest cap; *P the system's power. */
static int mode_fits(const struct hw_system *sys, int k, struct eval_result *res, double cap, double *P)
{
    unsigned over = power_check_in(sys, k, res);
    *P = sys->encl.base_W; /* a module's budget counts its shared parts (hw_enclosure.base_W) beside its devices */
    for (int d = 0; d < sys->n_dev; d++) /* an unused device idles, or runs its clocks when they are locked */
        *P += res->used & (1u << d) && res->t.latency_s > 0 ? res->dev_power_W[d]
              : sys->dev[d].idle_W + (sys->clocks_locked && res->t.latency_s > 0 ? res->dev_dyn_J[d] / res->t.latency_s : 0);
    return !over && *P <= cap * (1 + 1e-9);
}

/* 0. A system with modes (a Jetson's nvpmodel modes) under a power cap runs in the fastest of its modes
 * in which the whole system fits the cap (the module's budget is one: every device's power, idle
 * included) and each device its own limit; where none fits, in the one that draws least, and throttles
 * on from there. res is left evaluated in it; *pick: the mode (-1: none runs), *exact: it fits (no
 * further throttling), else s->moded holds the system in it. */
static int pick_mode(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                     struct eval_result *res, int *pick, int *exact, struct dse_err *e)
{
    const struct hw_system *sys = r->sys;
    double cap = lowest_cap(sys), best_T = INFINITY, least_P = INFINITY;
    int best = -1, least = -1, rc;
    struct eval_mode_cache *mc = NULL;
    if (r->share_sig > 0 && !r->want_ops) {
        if (!s->modes && !(s->modes = calloc(1, sizeof *s->modes)))
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        mc = s->modes;
        if (mc->sig != r->share_sig) {
            mc->sig = r->share_sig;
            mc->have = 0;
        }
    }
    struct eval_req rr = *r;
    rr.sys = s->moded;
    *pick = -1;
    *exact = 0;
    for (int k = 0; k < sys->n_modes; k++) {
        if (mc && (mc->have & (1u << k))) {
            res_restore(res, &mc->res[k]);
        } else {
            *s->moded = *sys;
            hw_apply_mode(s->moded, k);
            if ((rc = eval_ops(&rr, eg, s, res, e)))
                return rc;
            if (mc) {
                mc->res[k] = *res;
                mc->res[k].ops = NULL;
                mc->res[k].cap_ops = 0;
                mc->res[k].n_ops = 0;
                mc->have |= 1u << k;
            }
        }
        if (!res->feasible)
            continue;
        double P;
        if (mode_fits(sys, k, res, cap, &P) && res->t.latency_s < best_T) {
            best_T = res->t.latency_s;
            best = k;
        }
        if (P < least_P) {
            least_P = P;
            least = k;
        }
    }
    *pick = best >= 0 ? best : least;
    *exact = best >= 0;
    if (*pick < 0) { /* no mode runs it: as the system stands */
        rr.sys = sys;
        return eval_ops(&rr, eg, s, res, e);
    }
    if (mc && *exact) { /* fits: its evaluation is the point's, no copy of the system needed */
        res_restore(res, &mc->res[*pick]);
        return DSE_OK;
    }
    *s->moded = *sys; /* the system in the mode, for the limits that follow */
    hw_apply_mode(s->moded, *pick);
    if (mc) {
        res_restore(res, &mc->res[*pick]);
        return DSE_OK;
    }
    return eval_ops(&rr, eg, s, res, e);
}

static int throttle_limits(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                           struct eval_result *res, struct dse_err *e);

/* The power limits: a mode picked under a cap (pick_mode), then DVFS and duty cycle (throttle_limits);
 * throttle_slowdown is against the point as first evaluated, the note names the mode first. */
static int throttle(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                    struct eval_result *res, struct dse_err *e)
{
    double T0 = res->t.latency_s;
    int rc, mode = -1;
    struct eval_req rm = *r;
    int exact = 0;
    if (r->sys->n_modes && lowest_cap(r->sys) > 0) {
        if ((rc = pick_mode(r, eg, s, res, &mode, &exact, e)) || !res->feasible)
            return rc;
        if (mode >= 0 && !exact)
            rm.sys = s->moded;
    }
    if (exact) /* it fits: no device throttles; each device's power and its limit in the mode */
        power_check_in(r->sys, mode, res);
    else if ((rc = throttle_limits(&rm, eg, s, res, e))) {
        return rc;
    }
    res->mode = mode;
    if (mode >= 0) {
        char note[2 * sizeof res->throttle_note];
        if (exact)
            snprintf(note, sizeof note, "mode %s picked: the fastest of %s's modes whose module power (devices and "
                     "base_W) fits the %.3g W power cap%s", r->sys->modes[mode].name, r->sys->name, lowest_cap(r->sys),
                     res->throttle_note[0] ? "; then " : "");
        else
            snprintf(note, sizeof note, "mode %s picked: no mode of %s fits the %.3g W power cap with its module power "
                     "(devices and base_W); the least drawing runs, each device held to the cap%s",
                     r->sys->modes[mode].name, r->sys->name, lowest_cap(r->sys), res->throttle_note[0] ? "; then " : "");
        dse_strlcpy(note + strlen(note), res->throttle_note, sizeof note - strlen(note));
        dse_strlcpy(res->throttle_note, note, sizeof res->throttle_note);
    }
    res->t.throttle_slowdown = res->t.latency_s / T0;
    return DSE_OK;
}

static int throttle_limits(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                           struct eval_result *res, struct dse_err *e)
{
    const struct hw_system *sys = r->sys;
    unsigned over = power_check(sys, res);
    int rc;
    if (over && r->burst) { /* above its limit, but not for long enough to be throttled */
        dse_strlcpy(res->throttle_note, "a burst of milliseconds: above its power limit, not throttled",
                    sizeof res->throttle_note);
        return DSE_OK;
    }
    if (!over)
        return DSE_OK;
    double T0 = res->t.latency_s, P0[HW_MAX_DEVICES];
    memcpy(P0, res->dev_power_W, sizeof P0);
    int point[HW_MAX_DEVICES];
    double clk[HW_MAX_DEVICES];
    struct hw_system *ts = s->thr;
    struct eval_req rr = *r;
    rr.sys = ts;
    int copied = 0;
    /* 1. DVFS: each device over its limit takes the fastest point of its table at which it fits
     * (power falls monotonically with the point: MAC energy with V^2, and the same energy spread
     * over a longer time), found by bisection, then the fastest clock between it and the next point
     * that fits (DVFS_REFINE bisection steps), the other devices as they stand. */
    enum { DVFS_REFINE = 6 }; /* 1/64 of a step between listed points */
    for (int d = 0; d < sys->n_dev; d++) {
        point[d] = sys->dev[d].n_dvfs - 1;
        clk[d] = sys->dev[d].n_dvfs ? sys->dev[d].dvfs[point[d]].freq_Hz : 0;
        if (!(over & (1u << d)) || sys->dev[d].n_dvfs < 2)
            continue;
        if (!copied) {
            *ts = *sys;
            copied = 1;
        }
        int lo = 0, hi = point[d] - 1, best = -1;
        while (lo <= hi) {
            int mid = (lo + hi) / 2;
            set_point(sys, ts, d, mid, 0);
            if ((rc = eval_ops(&rr, eg, s, res, e)))
                return rc;
            if (!res->feasible)
                return DSE_OK; /* an operator stopped being supported: cannot happen for a clock change */
            if (!(power_check(ts, res) & (1u << d))) {
                best = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        point[d] = best >= 0 ? best : 0;
        double xlo = 0, xhi = 1;
        for (int it = 0; best >= 0 && it < DVFS_REFINE; it++) { /* point[d] fits, point[d] + 1 does not */
            double x = (xlo + xhi) / 2;
            set_point(sys, ts, d, point[d], x);
            if ((rc = eval_ops(&rr, eg, s, res, e)))
                return rc;
            if (!res->feasible)
                return DSE_OK;
            if (!(power_check(ts, res) & (1u << d)))
                xlo = x;
            else
                xhi = x;
        }
        clk[d] = set_point(sys, ts, d, point[d], xlo);
    }
    if (copied && ((rc = eval_ops(&rr, eg, s, res, e)) || !res->feasible))
        return rc;
    const struct hw_system *cur = copied ? ts : sys;
    over = power_check(cur, res);

    /* 2. Duty cycle: a device still over its limit idles part of the time. Its dynamic energy E (its
     * gaps' included: they keep their length, the stretch being its busy time's, and the limiter's
     * idling is at idle power) is unchanged, so the latency T' it needs solves (E + idle x T') / T' =
     * limit: T' = E / (limit - idle); its operators stretch by 1 + (T' - T) / (its busy time).
     * Stretching the device that needs the longest T' lowers every other device's average power too. */
    int dstar = -1;
    double Tneed = res->t.latency_s;
    for (int d = 0; d < sys->n_dev; d++) {
        if (!(over & (1u << d)))
            continue;
        double idle = cur->dev[d].idle_W, lim = res->dev_limit_W[d];
        if (lim <= idle) {
            infeasible(res, "device '%s' cannot run within %.3g W: it idles at %.3g W", cur->dev[d].name, lim, idle);
            return DSE_OK;
        }
        double t = res->dev_dyn_J[d] / (lim - idle);
        if (t > Tneed) {
            Tneed = t;
            dstar = d;
        }
    }
    double duty = 1;
    if (dstar >= 0) {
        double busy = res->dev_busy_s[0][dstar] + res->dev_busy_s[1][dstar];
        double k = 1 + (Tneed - res->t.latency_s) / busy;
        duty = 1 / k;
        for (int d = 0; d < sys->n_dev; d++) /* the others wait the longer run out, clocks up (eval_ops) */
            if (d != dstar)
                add_gap(cur, res, d, Tneed - res->t.latency_s);
        res->first_s += (k - 1) * res->dev_busy_s[0][dstar];
        res->t.latency_s = Tneed;
        res->dev_busy_s[0][dstar] *= k;
        res->dev_busy_s[1][dstar] *= k;
        for (int i = 0; i < res->n_ops; i++)
            if (res->ops[i].dev == dstar)
                res->ops[i].time_s *= k;
        power_check(cur, res);
    }
    res->t.throttle_slowdown = res->t.latency_s / T0;

    /* The note names each device that throttled: its clock step and, for the one that idles, its
     * duty cycle. */
    for (int d = 0; d < sys->n_dev; d++) {
        const struct hw_device *o = &sys->dev[d];
        int stepped = point[d] < o->n_dvfs - 1;
        if (!stepped && d != dstar)
            continue;
        char clock[64] = "", busy[48] = "";
        if (stepped)
            snprintf(clock, sizeof clock, ": clock %.0f of %.0f MHz", clk[d] / 1e6, o->dvfs[o->n_dvfs - 1].freq_Hz / 1e6);
        if (d == dstar)
            snprintf(busy, sizeof busy, "%s busy %.0f %% of the time", stepped ? "," : ":", 100 * duty);
        size_t at = strlen(res->throttle_note);
        snprintf(res->throttle_note + at, sizeof res->throttle_note - at,
                 "%sdevice '%s' throttled to fit its %.3g W %s (%.3g W unthrottled)%s%s", at ? "; " : "", o->name,
                 res->dev_limit_W[d], o->power_cap_W > 0 && o->power_cap_W < o->tdp_W ? "power cap" : "TDP", P0[d],
                 clock, busy);
    }
    return DSE_OK;
}

/* The interval the error-bar table gives this point: its primary device's class and its workload's
 * kind, for the tier the table's residuals are of. */
static void error_bars(const struct eval_req *r, enum wl_phase ph, struct eval_totals *T)
{
    T->err_low_pct = T->err_high_pct = NAN;
    T->err_n = T->err_fallback = 0;
    if (!r->errbars || strcmp(r->errbars->tier, fidelity_names[r->x.fidelity]) || ph == PH_TRAIN)
        return; /* no training case in the corpus yet */
    const struct eb_row *row =
        eb_find(r->errbars, r->sys->dev[r->dev].cls, eb_kind_of(r->model, ph), &T->err_fallback);
    if (row) {
        T->err_low_pct = row->low_pct;
        T->err_high_pct = row->high_pct;
        T->err_n = row->n;
    }
}

/* Totals derived from the raw sums: static energy, power, rates, costs. */
static int finish(const struct eval_req *r, const struct eval_graphs *eg, struct eval_result *res, struct dse_err *e)
{
    const struct hw_system *sys = r->sys;
    struct eval_totals *T = &res->t;
    enum wl_phase ph = eg->phase;
    /* A system is bought, rented and powered whole: a card's host idles while the card works and is
     * part of its price (the hwdesc puts a module's or an instance's price on one device); idle power,
     * price and rent sum over every device. */
    double idle = 0, price = 0, rent = 0, ndev = 0;
    for (int d = 0; d < sys->n_dev; d++) { /* a topology's device once per device of the layout */
        double n = sys->topo.n_level && d == sys->topo.dev ? T->devices : 1;
        idle += n * sys->dev[d].idle_W;
        price += n * sys->dev[d].price_USD;
        rent += n * sys->dev[d].rent_USD_per_hour;
        ndev += n;
    }
    T->price_USD = price;
    T->die_area_mm2 = 0;
    for (int d = 0; d < sys->n_dev; d++)
        if (res->used & (1u << d))
            T->die_area_mm2 += hw_die_area_mm2(&sys->dev[d]) * (sys->topo.n_level && d == sys->topo.dev ? T->devices : 1);
    /* The enclosure (hw_enclosure): its static draw joins the devices' idle power; its fans and regulators
     * track the devices' dynamic power; the conversion from the meter's input divides both, at the
     * efficiency of each enclosure's average load. */
    double dyn = T->energy_compute_J + T->energy_memory_J + T->energy_link_J + T->energy_active_J;
    T->energy_enclosure_J = 0;
    T->encl_efficiency = 1;
    T->module_W = T->latency_s > 0 ? idle + dyn / T->latency_s + hw_enclosures(sys, T->devices) * sys->encl.base_W : 0;
    if (sys->encl.present && T->latency_s > 0) {
        const struct hw_enclosure *en = &sys->encl;
        double n = hw_enclosures(sys, T->devices), dyn_W = dyn / T->latency_s;
        double rails = hw_rails_W(sys, n, idle + dyn_W, idle);
        double eff = T->encl_efficiency = hw_enclosure_efficiency(en, rails / n);
        idle = (idle + n * (en->base_W + en->chassis_idle_W)) / eff;
        T->energy_enclosure_J = dyn * ((1 + en->cooling_W_per_W) / eff - 1);
    }
    T->energy_static_J = idle * T->latency_s;
    error_bars(r, eg->phase, T);
    /* each op: its share of the static power over its time, and of the enclosure's load-following part in
     * proportion to its dynamic energy */
    double encl = dyn > 0 ? T->energy_enclosure_J / dyn : 0;
    for (int i = 0; i < res->n_ops; i++)
        res->ops[i].energy_J += idle * res->ops[i].time_s + encl * res->ops[i].energy_J;
    T->energy_J = dyn + T->energy_static_J + T->energy_enclosure_J;
    T->avg_power_W = T->latency_s > 0 ? T->energy_J / T->latency_s : 0;
    T->peak_memory_bytes = T->weight_bytes + T->kv_bytes + T->act_bytes + T->grad_bytes + T->optimizer_bytes;
    double dp = r->layout.n[PAR_DP] > 0 ? r->layout.n[PAR_DP] : 1; /* replicas, each running its batch */
    T->throughput_per_s = T->latency_s > 0 ? dp * (double)eval_replica_batch(r) / T->latency_s : 0;
    if (!isfinite(T->latency_s) || !isfinite(T->energy_J) || !isfinite(T->peak_memory_bytes))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL,
                           "numeric overflow: the figures of this point exceed what a double holds (check the hwdesc "
                           "for rates near zero or sizes near the limits)");
    double B = dp * (double)eval_replica_batch(r), tokens = 0, first_s = res->first_s;
    switch (ph) {
    case PH_GENERATE:
        T->ttft_s = first_s;
        T->tpot_s = (T->latency_s - first_s) / (double)r->gen;
        tokens = B * (double)r->gen;
        T->decode_tokens_per_s = T->tpot_s > 0 ? B / T->tpot_s : 0;
        break;
    case PH_DECODE:
        T->tpot_s = T->latency_s;
        tokens = B;
        T->decode_tokens_per_s = B / T->latency_s;
        break;
    case PH_PREFILL:
        T->ttft_s = T->latency_s;
        tokens = B * (double)eg->prompt;
        break;
    case PH_TRAIN: { /* model FLOPs: 6 N per token (transformers), else 3 x the forward's */
        int tf = r->model->kind == WLM_TRANSFORMER;
        double seq = tf && strcmp(r->model->tf.model_type, "vit") ? (double)eg->prompt : 0;
        tokens = B * seq;
        double M = r->layout.microbatches > 0 ? r->layout.microbatches : 1;
        double model_flops = tf ? 6 * eg->model_params * B * (seq > 0 ? seq : (double)r->model->tf.max_pos)
                                : 3 * eg->fwd_flops * M * dp;
        enum hw_engine eng;
        double peak = hw_gemm_peak(&sys->dev[r->dev], prec_compute(r->x.prec.w, r->x.prec.a), &eng);
        T->tflops_per_device = model_flops / T->latency_s / T->devices / 1e12;
        T->mfu_pct = peak > 0 ? 100 * model_flops / (T->latency_s * T->devices * peak) : NAN;
        break;
    }
    default:
        break;
    }
    if (tokens > 0) {
        T->tokens_per_s = tokens / T->latency_s;
        T->tokens_per_s_per_device = T->tokens_per_s / (T->devices > 0 ? T->devices : 1);
        T->energy_per_token_J = T->energy_J / tokens;
    }
    T->energy_per_inference_J = T->energy_J / B;
    struct cost_cfg dflt;
    const struct cost_cfg *cc = r->cost;
    if (!cc) {
        cost_default(&dflt);
        cc = &dflt;
    }
    double cost = cost_usd(cc, price, rent, ndev, idle, T->latency_s, T->energy_J);
    T->cost_per_Mtoken_USD = tokens > 0 ? cost / tokens * 1e6 : NAN;
    T->tokens_per_J = tokens > 0 && T->energy_J > 0 ? tokens / T->energy_J : NAN;
    T->inferences_per_J = T->energy_J > 0 ? B / T->energy_J : NAN;
    T->tokens_per_USD = tokens > 0 && cost > 0 ? tokens / cost : NAN;
    T->inferences_per_USD = cost > 0 ? B / cost : NAN;
    T->cost_per_Minference_USD = cost / B * 1e6;
    T->cost_USD = cost;
    T->quality_loss_pct = r->quality ? r->quality->loss_pct : NAN;
    return DSE_OK;
}

int eval_point_ops(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                   struct eval_result *res, struct dse_err *e)
{
    return eval_ops(r, eg, s, res, e);
}

/* The board's power through its thermal path: each device of it at its power in res (idle when unused). */
static double path_power(const struct hw_system *sys, const struct eval_result *res, double *dev_W, double *idle)
{
    double P = 0;
    *idle = 0;
    for (int d = 0; d < sys->n_dev; d++) {
        dev_W[d] = 0;
        if (!(sys->thermal.devices & (1u << d)))
            continue;
        dev_W[d] = res->used & (1u << d) && res->t.latency_s > 0 ? res->dev_power_W[d] : sys->dev[d].idle_W;
        P += dev_W[d];
        *idle += sys->dev[d].idle_W;
    }
    return P;
}

/* The thermal figures of a run of thermal.duration_s from a cold start (thermal.h): res is the burst
 * (the point as evaluated) until the board reaches its throttle temperature, then the sustained point,
 * the system evaluated again under the cap that holds it at that temperature (thermal_apply_cap: a mode,
 * a DVFS point or a duty cycle, as any cap). A run that ends before it throttles is all burst; one that
 * throttles where not even idling holds the board below its throttle point is infeasible. Without a
 * published heat capacity the time to throttle, and so the mean over the run, is unknown (NAN). */
static int thermal(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                   struct eval_result *res, struct dse_err *e)
{
    const struct hw_system *sys = r->sys;
    const struct hw_thermal *th = &sys->thermal;
    struct eval_totals *T = &res->t;
    double dev_W[HW_MAX_DEVICES], idle, P = path_power(sys, res, dev_W, &idle), D = th->duration_s;
    double lim = thermal_limit_W(th), t1 = thermal_time_to(th, P, th->throttle_C);
    int ends_first = t1 >= D; /* false for NAN: it may throttle within the run */
    char cond[256], when[96];
    thermal_describe(th, cond, sizeof cond);
    T->time_to_throttle_s = t1;
    T->steady_temp_C = thermal_steady_C(th, P);
    if (isinf(t1)) { /* it settles below its throttle point */
        T->sus_throughput_per_s = T->mean_throughput_per_s = T->throughput_per_s;
        T->sus_tokens_per_s = T->tokens_per_s;
        snprintf(res->thermal_note, sizeof res->thermal_note, "at %.3g W it settles at %.3g degC, below its throttle "
                 "point: sustained = burst (%s)", P, T->steady_temp_C, cond);
        return DSE_OK;
    }
    if (isnan(t1))
        snprintf(when, sizeof when, "throttles after a time unknown (no published heat capacity)");
    else
        snprintf(when, sizeof when, "throttles after %.3g s%s", t1, ends_first ? ", past the run" : "");
    if (idle >= lim) {
        if (ends_first) { /* all burst; no sustained point exists */
            T->mean_throughput_per_s = T->throughput_per_s;
            snprintf(res->thermal_note, sizeof res->thermal_note, "at %.3g W it would settle at %.3g degC: %s; its "
                     "idle power %.3g W alone would hold it past its throttle point (%s)", P, T->steady_temp_C, when,
                     idle, cond);
            return DSE_OK;
        }
        infeasible(res, "the board cannot run for %.3g s at %s: its idle power %.3g W alone settles at %.3g degC, "
                   "past its throttle point", D, cond, idle, thermal_steady_C(th, idle));
        return DSE_OK;
    }
    if ((!s->therm && !(s->therm = malloc(sizeof *s->therm))) || (!s->sus && !(s->sus = calloc(1, sizeof *s->sus))))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    *s->therm = *sys;
    s->therm->thermal.duration_s = 0; /* its own evaluation asks no thermal figures */
    thermal_apply_cap(s->therm, lim, dev_W);
    struct eval_req rr = *r;
    rr.sys = s->therm;
    rr.want_ops = 0;
    struct eval_result *u = s->sus;
    int rc;
    if ((rc = eval_point(&rr, eg, s, u, e)))
        return rc;
    if (!u->feasible) {
        if (ends_first) {
            T->mean_throughput_per_s = T->throughput_per_s;
            return DSE_OK;
        }
        infeasible(res, "the board %s of the %.3g s run and must then hold %.3g degC (%s): %s", when, D, th->throttle_C,
                   cond, u->reason);
        return DSE_OK;
    }
    double uw[HW_MAX_DEVICES], ui, Ps = path_power(sys, u, uw, &ui);
    T->sus_throughput_per_s = u->t.throughput_per_s;
    T->sus_tokens_per_s = u->t.tokens_per_s;
    T->steady_temp_C = thermal_steady_C(th, Ps);
    T->mean_throughput_per_s = ends_first ? T->throughput_per_s
                               : isnan(t1) ? NAN
                                           : (T->throughput_per_s * t1 + u->t.throughput_per_s * (D - t1)) / D;
    res->sus_mode = u->mode;
    snprintf(res->thermal_note, sizeof res->thermal_note, "at %.3g W it would settle at %.3g degC: %s, then sustains "
             "%.3g W (%.3gx the burst rate; %.240s) at %.3g degC (%s)", P, thermal_steady_C(th, P), when, Ps,
             u->t.throughput_per_s / T->throughput_per_s, u->throttle_note[0] ? u->throttle_note : "no device throttled",
             T->steady_temp_C, cond);
    return DSE_OK;
}

int eval_point_limits(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                      struct eval_result *res, struct dse_err *e)
{
    int rc;
    struct eval_totals *T = &res->t;
    T->sus_throughput_per_s = T->sus_tokens_per_s = T->mean_throughput_per_s = NAN;
    T->time_to_throttle_s = T->steady_temp_C = NAN;
    res->thermal_note[0] = '\0';
    res->sus_mode = -1;
    if (!res->feasible)
        return DSE_OK;
    if ((rc = throttle(r, eg, s, res, e)) || !res->feasible)
        return rc;
    if (!r->skip_capacity)
        eval_capacity(r->sys, r->sw, r->dev, r->capacity_bytes, res);
    if ((rc = finish(r, eg, res, e)) || !res->feasible)
        return rc;
    return r->sys->thermal.present && r->sys->thermal.duration_s > 0 ? thermal(r, eg, s, res, e) : DSE_OK;
}

int eval_point(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
               struct eval_result *res, struct dse_err *e)
{
    int rc = eval_ops(r, eg, s, res, e);
    return rc ? rc : eval_point_limits(r, eg, s, res, e);
}

int eval_run(const struct eval_req *r, struct eval_result *res, struct dse_err *e)
{
    struct eval_graphs eg;
    struct eval_scratch s;
    memset(&s, 0, sizeof s);
    int lm = wl_model_is_lm(r->model);
    enum wl_phase ph = r->phase == PH_TRAIN ? PH_TRAIN : lm ? (r->phase == PH_NONE ? PH_GENERATE : r->phase) : PH_NONE;
    if (r->batch < 1 || r->prompt < 1 || (ph == PH_GENERATE && r->gen < 1))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "batch, prompt and generated tokens must be positive");
    int rc = eval_check_layout(r, e);
    if (rc)
        return rc;
    if ((rc = eval_graphs_build(r->model, ph, eval_micro_batch(r), r->prompt, &r->layout, r->sw, &eg, e)))
        return rc;
    if (!(rc = eval_scratch_fit(&s, &eg, e)))
        rc = eval_point(r, &eg, &s, res, e);
    eval_scratch_free(&s);
    eval_graphs_free(&eg);
    return rc;
}

void eval_result_free(struct eval_result *res)
{
    free(res->ops);
    memset(res, 0, sizeof *res);
}
