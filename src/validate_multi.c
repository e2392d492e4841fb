/* validate_multi.c -- the published multi-device corpus (validate.h: mcase): training steps and
 * multi-device inference on systems of N devices, each case predicted with its layout on the shipped
 * node or cluster hwdesc resized to the case's node count. The fit/held-out split is the single-device
 * corpus's rule (FNV-1a 32 of the id odd: held-out), fixed before any case was predicted. */
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "jsonu.h"
#include "validate.h"

static const char *const mcols[MC_COUNT + 1] = {
    "id",    "system", "nodes", "devices", "framework", "software", "workload",  "phase",  "batch",
    "seq",   "gen",    "tp",    "pp",      "dp",        "microbatches", "zero", "recompute", "precision",
    "metric", "value", "unit",  "flops",   "source",    "url",      "date",      "note",   NULL};
static const char *const mmetric_names[MM_COUNT + 1] = {"tflops_per_device", "step_time_ms", "tokens_per_s",
                                                        "ttft_ms",           "tpot_ms",      NULL};
const char *const mflops_names[MF_COUNT + 1] = {"", "megatron_hfu", "megatron_mfu", "maxtext", NULL};
/* The unit each metric's value must be written in (a figure in another unit is refused, not misread). */
static const char *const mmetric_units[MM_COUNT] = {"TFLOP/s", "ms", "tokens/s", "ms", "ms"};

static int load_mrow(char **f, const char *file, int line, void *row, struct dse_err *e)
{
    struct mcase *c = row;
    memset(c, 0, sizeof *c);
    char where[32];
    snprintf(where, sizeof where, "line %d", line);
    dse_strlcpy(c->id, f[MC_ID], sizeof c->id);
    dse_strlcpy(c->system, f[MC_SYSTEM], sizeof c->system);
    dse_strlcpy(c->software, f[MC_SOFTWARE], sizeof c->software);
    dse_strlcpy(c->workload, f[MC_WORKLOAD], sizeof c->workload);
    dse_strlcpy(c->precision, f[MC_PRECISION], sizeof c->precision);
    dse_strlcpy(c->recompute, f[MC_RECOMPUTE], sizeof c->recompute);
    dse_strlcpy(c->source, f[MC_SOURCE], sizeof c->source);
    long long *ints[] = {&c->nodes, &c->devices, &c->batch, &c->seq, &c->gen, &c->tp, &c->pp, &c->dp, &c->mb, &c->zero};
    static const int cols[] = {MC_NODES, MC_DEVICES, MC_BATCH, MC_SEQ, MC_GEN, MC_TP, MC_PP, MC_DP, MC_MB, MC_ZERO};
    for (int i = 0; i < 10; i++)
        if (pcsv_int(f[cols[i]], 0, 100000000, ints[i]))
            return dse_err_set(e, DSE_EINPUT, file, where, "%s: expected a non-negative integer, got '%s'",
                               mcols[cols[i]], f[cols[i]]);
    if (!c->id[0] || !c->system[0] || !c->workload[0] || c->devices < 1)
        return dse_err_set(e, DSE_EINPUT, file, where, "id, system, workload and devices are required");
    int ph = ju_lookup(wl_phase_names, f[MC_PHASE]), m = ju_lookup(mmetric_names, f[MC_METRIC]);
    int fl = f[MC_FLOPS][0] ? ju_lookup(mflops_names, f[MC_FLOPS]) : MF_NONE;
    if (ph < 0)
        return dse_err_set(e, DSE_EINPUT, file, where, "phase: unknown '%s'", f[MC_PHASE]);
    if (m < 0)
        return dse_err_set(e, DSE_EINPUT, file, where, "metric: unknown '%s'", f[MC_METRIC]);
    if (fl < 0 || (m == MM_TFLOPS) != (fl != MF_NONE))
        return dse_err_set(e, DSE_EINPUT, file, where,
                           "flops: tflops_per_device needs its source's FLOP count (megatron_hfu, megatron_mfu, "
                           "maxtext), other metrics none; got '%s'",
                           f[MC_FLOPS]);
    if (strcmp(f[MC_UNIT], mmetric_units[m]))
        return dse_err_set(e, DSE_EINPUT, file, where, "unit: %s is given in %s, got '%s'", mmetric_names[m],
                           mmetric_units[m], f[MC_UNIT]);
    c->phase = (enum wl_phase)ph;
    c->metric = (enum mmetric)m;
    c->flops = (enum mflops)fl;
    char *end;
    c->value = strtod(f[MC_VALUE], &end);
    if (end == f[MC_VALUE] || *end || !(c->value > 0) || !isfinite(c->value))
        return dse_err_set(e, DSE_EINPUT, file, where, "value: expected a positive number, got '%s'", f[MC_VALUE]);
    c->heldout = pcase_is_heldout(c->id);
    return DSE_OK;
}

int mcorpus_load(const char *path, struct mcase **out, int *n, struct dse_err *e)
{
    char *buf;
    size_t len;
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    if (rc)
        return rc;
    rc = mcorpus_load_buf(buf, len, path, out, n, e);
    free(buf);
    return rc;
}

int mcorpus_load_buf(const char *text, size_t len, const char *path, struct mcase **out, int *n, struct dse_err *e)
{
    _Static_assert(offsetof(struct mcase, id) == 0, "pcsv_table reads the id at the start of a case");
    void *c;
    int rc = pcsv_table(text, len, path, mcols, MC_COUNT, "multi-device corpus", sizeof(struct mcase), load_mrow, &c, n, e);
    if (!rc)
        *out = c;
    return rc;
}

/* The source's FLOP count of one training step (B sequences of s tokens, l layers of width h,
 * vocabulary V, N parameters, H heads of d), which its TFLOP/s per device divides by:
 *   megatron_hfu  96 B s l h^2 (1 + s / 6h + V / 16 l h)  (Narayanan et al. SC'21, eq. 3: recomputation
 *                                                          counted, attention and logits included)
 *   megatron_mfu  72 B s l h^2 (1 + s / 6h + V / 12 l h)  (the same without the recomputed forward)
 *   maxtext       6 N B s + 12 l H d s^2 B                (MaxText's model FLOPs: attention not halved) */
static double source_flops(enum mflops f, const struct wl_transformer *t, double params, double B, double s)
{
    double l = (double)t->layers, h = (double)t->hidden, V = (double)t->vocab;
    switch (f) {
    case MF_MEGATRON_HFU:
        return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    case MF_MEGATRON_MFU:
        return 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    case MF_MAXTEXT:
        return 6 * params * B * s + 12 * l * (double)t->heads * (double)t->head_dim * s * s * B;
    default:
        return 0;
    }
}

int vcase_resize(struct hw_system *sys, long long nodes, long long devices, char *reason, size_t n)
{
    struct hw_topology *t = &sys->topo;
    /* resize the node or cluster: its outer level to the case's nodes, or its node to the devices */
    if (t->n_level == 0) {
        if (devices == 1 && nodes <= 1)
            return 0;
        snprintf(reason, n, "%s has no topology", sys->name);
        return -1;
    }
    int per_node = t->level[0].count;
    if (nodes > 1 && t->n_level >= 2) {
        t->level[t->n_level - 1].count = (int)nodes;
    } else if (nodes > 1) {
        snprintf(reason, n, "%lld nodes of %s: the network between them is not described", nodes, sys->name);
        return -1;
    } else if (devices < per_node && t->n_level == 1 && t->level[0].kind == TOPO_SWITCH) {
        t->level[0].count = (int)devices; /* a part of a switched node: the same ports each */
    }
    t->devices = 1;
    for (int l = 0; l < t->n_level; l++)
        t->devices *= t->level[l].count;
    if (t->devices != devices) {
        snprintf(reason, n, "%lld devices do not match %s resized to %d", devices, sys->name, t->devices);
        return -1;
    }
    return 0;
}

int mcase_predict(struct mcase *c, const struct hw_system *node, const struct wl_model *m, const struct sw_stack *sw,
                  struct dse_err *e)
{
    c->ok = 0;
    struct hw_system *sys = malloc(sizeof *sys);
    if (!sys)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    *sys = *node;
    if (vcase_resize(sys, c->nodes, c->devices, c->reason, sizeof c->reason))
        goto done;
    if (!c->batch) {
        snprintf(c->reason, sizeof c->reason, "the source does not state the batch");
        goto done;
    }
    if (!c->seq) {
        snprintf(c->reason, sizeof c->reason, "the source's sequence lengths vary by request");
        goto done;
    }
    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = sys;
    r.dev = sys->topo.dev;
    for (int k = 0; k < OP_COUNT; k++)
        r.type_dev[k] = -1;
    r.model = m;
    r.sw = sw;
    r.phase = c->phase == PH_DECODE || c->phase == PH_PREFILL ? PH_GENERATE : c->phase;
    r.batch = c->batch;
    r.prompt = c->seq;
    r.gen = c->gen > 0 ? c->gen : 1;
    r.skip_capacity = 0;
    int rc = prec_parse(c->precision, &r.x.prec, e);
    if (rc)
        goto fail;
    r.layout.n[PAR_TP] = (int)c->tp;
    r.layout.n[PAR_PP] = (int)c->pp;
    r.layout.n[PAR_DP] = (int)c->dp;
    r.layout.microbatches = (int)c->mb;
    r.train.zero = (int)c->zero;
    r.train.recompute = !strcmp(c->recompute, "full") ? RC_FULL : !strcmp(c->recompute, "selective") ? RC_SELECTIVE : RC_NONE;
    if (r.phase == PH_TRAIN && !c->mb) { /* micro-batches of one sequence, as the sources' runs use */
        long long dp = c->dp ? c->dp : c->devices / ((c->tp ? c->tp : 1) * (c->pp ? c->pp : 1));
        r.layout.microbatches = dp > 0 && c->batch % dp == 0 ? (int)(c->batch / dp) : 1;
    }
    struct dse_err le;
    if (par_layout_complete(sys, &r.layout, &le) || eval_check_layout(&r, &le)) {
        dse_strlcpy(c->reason, le.msg, sizeof c->reason);
        goto done;
    }
    struct eval_result res = {0};
    if ((rc = eval_run(&r, &res, e)))
        goto fail;
    if (!res.feasible) {
        dse_strlcpy(c->reason, res.reason, sizeof c->reason);
        eval_result_free(&res);
        goto done;
    }
    const struct eval_totals *T = &res.t;
    switch (c->metric) {
    case MM_TFLOPS:
        c->predicted = source_flops(c->flops, &m->tf, T->params, (double)c->batch, (double)c->seq) / T->latency_s /
                       T->devices / 1e12;
        break;
    case MM_STEP: c->predicted = T->latency_s * 1e3; break;
    case MM_TOKENS: c->predicted = T->tokens_per_s; break;
    case MM_TTFT: c->predicted = T->ttft_s * 1e3; break;
    case MM_TPOT: c->predicted = T->tpot_s * 1e3; break;
    default: break;
    }
    eval_result_free(&res);
    c->ok = isfinite(c->predicted) && c->predicted > 0;
    c->error = c->predicted / c->value - 1;
    if (!c->ok)
        snprintf(c->reason, sizeof c->reason, "no prediction of %s", mmetric_names[c->metric]);
done:
    free(sys);
    return DSE_OK;
fail:
    free(sys);
    return rc;
}

const char *mmetric_name(enum mmetric m) { return (unsigned)m < MM_COUNT ? mmetric_names[m] : "?"; }
int mmetric_is_rate(enum mmetric m) { return m == MM_TFLOPS || m == MM_TOKENS; }
