/* validate_serving.c -- the published serving corpus (validate.h: scase): serving runs of a stated
 * rate, lengths and scheduler, each simulated with dse serve's model on the shipped system resized to
 * the case's devices. The fit/held-out split is the other corpora's rule (FNV-1a 32 of the id odd:
 * held-out), fixed before any case was predicted.
 *
 * What the sources leave unstated is filled by rules fixed before the first prediction: a continuous
 * or chunked scheduler's unstated maximum batch is the KV cache's (no other limit); an unstated
 * request count is 1,000 (static batching: one batch); requests are drawn with seed 1. */
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "jsonu.h"
#include "serve.h"
#include "validate.h"

static const char *const scols[SC_COUNT + 1] = {
    "id",          "system",  "devices",  "tp",       "framework",   "software", "workload", "precision",
    "scheduler",   "max_batch", "arrival", "rate_rps", "requests",    "prompt_dist", "output_dist", "metric",
    "value",       "unit",    "source",   "url",      "date",        "note",     NULL};
static const char *const smetric_names[SM_COUNT + 1] = {
    "throughput_tokens_per_s", "throughput_rps", "total_tokens_per_s", "ttft_p50_ms", "ttft_p99_ms", "ttft_mean_ms",
    "tpot_p50_ms", "tpot_p99_ms", "tpot_mean_ms", "itl_p50_ms", "e2e_p50_ms", "e2e_mean_ms", NULL};
static const char *const smetric_units[SM_COUNT] = {"tokens/s", "requests/s", "tokens/s", "ms", "ms", "ms",
                                                    "ms",       "ms",         "ms",       "ms", "ms", "ms"};
const char *const skind_names[SK_COUNT + 1] = {"throughput", "latency", "tail", NULL};

const char *smetric_name(enum smetric m) { return smetric_names[m]; }

enum skind smetric_kind(enum smetric m)
{
    switch (m) {
    case SM_TPUT_TOKENS:
    case SM_TPUT_RPS:
    case SM_TOTAL_TOKENS:
        return SK_THROUGHPUT;
    case SM_TTFT_P99:
    case SM_TPOT_P99:
        return SK_TAIL;
    default:
        return SK_LATENCY;
    }
}

static int load_srow(char **f, const char *file, int line, void *row, struct dse_err *e)
{
    struct scase *c = row;
    memset(c, 0, sizeof *c);
    char where[32];
    snprintf(where, sizeof where, "line %d", line);
    static const int strs[] = {SC_ID,        SC_SYSTEM,  SC_SOFTWARE, SC_WORKLOAD, SC_PRECISION,
                               SC_SCHEDULER, SC_ARRIVAL, SC_PROMPT,   SC_OUTPUT};
    char *dst[] = {c->id, c->system, c->software, c->workload, c->precision, c->scheduler, c->arrival, c->prompt, c->output};
    size_t cap[] = {sizeof c->id, sizeof c->system, sizeof c->software, sizeof c->workload, sizeof c->precision,
                    sizeof c->scheduler, sizeof c->arrival, sizeof c->prompt, sizeof c->output};
    for (int i = 0; i < 9; i++) {
        if (strlen(f[strs[i]]) >= cap[i])
            return dse_err_set(e, DSE_EINPUT, file, where, "%s: longer than %zu characters", scols[strs[i]], cap[i] - 1);
        dse_strlcpy(dst[i], f[strs[i]], cap[i]);
    }
    long long *ints[] = {&c->devices, &c->tp, &c->max_batch, &c->requests};
    static const int icol[] = {SC_DEVICES, SC_TP, SC_MAX_BATCH, SC_REQUESTS};
    for (int i = 0; i < 4; i++)
        if (pcsv_int(f[icol[i]], 0, 100000000, ints[i]))
            return dse_err_set(e, DSE_EINPUT, file, where, "%s: expected a non-negative integer, got '%s'",
                               scols[icol[i]], f[icol[i]]);
    if (!c->id[0] || !c->system[0] || !c->workload[0] || c->devices < 1)
        return dse_err_set(e, DSE_EINPUT, file, where, "id, system, workload and devices are required");
    int m = ju_lookup(smetric_names, f[SC_METRIC]);
    if (m < 0)
        return dse_err_set(e, DSE_EINPUT, file, where, "metric: unknown '%s'", f[SC_METRIC]);
    if (strcmp(f[SC_UNIT], smetric_units[m]))
        return dse_err_set(e, DSE_EINPUT, file, where, "unit: %s is given in %s, got '%s'", smetric_names[m],
                           smetric_units[m], f[SC_UNIT]);
    c->metric = (enum smetric)m;
    char *end;
    c->value = strtod(f[SC_VALUE], &end);
    if (end == f[SC_VALUE] || *end || !(c->value > 0) || !isfinite(c->value))
        return dse_err_set(e, DSE_EINPUT, file, where, "value: expected a positive number, got '%s'", f[SC_VALUE]);
    c->rate = strtod(f[SC_RATE], &end);
    if (end == f[SC_RATE] || *end || !(c->rate >= 0) || !isfinite(c->rate))
        return dse_err_set(e, DSE_EINPUT, file, where, "rate_rps: expected a non-negative number, got '%s'", f[SC_RATE]);
    c->heldout = pcase_is_heldout(c->id);
    return DSE_OK;
}

int scorpus_load_buf(const char *text, size_t len, const char *path, struct scase **out, int *n, struct dse_err *e)
{
    _Static_assert(offsetof(struct scase, id) == 0, "pcsv_table reads the id at the start of a case");
    void *c;
    int rc = pcsv_table(text, len, path, scols, SC_COUNT, "serving corpus", sizeof(struct scase), load_srow, &c, n, e);
    if (!rc)
        *out = c;
    return rc;
}

int scorpus_load(const char *path, struct scase **out, int *n, struct dse_err *e)
{
    char *buf;
    size_t len;
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    if (rc)
        return rc;
    rc = scorpus_load_buf(buf, len, path, out, n, e);
    free(buf);
    return rc;
}

#define SC_MAX_REQUESTS 50000 /* a source's longer run is simulated over its first 50,000 requests */

/* Datasets a source names for its lengths whose rows a shipped trace stands for. "sharegpt": vLLM's
 * benchmark_serving sampling (the first human turn as prompt, the first reply's length as output, prompt
 * 4..1024 and prompt + output <= 2048); the trace holds the first turns of Sarathi-Serve's ShareGPT turns
 * under the same filter: a proxy (another ShareGPT subset, Llama-2's tokenizer; models/traces/README-sharegpt.md). */
static const struct {
    const char *name, *file;
} named_lengths[] = {{"sharegpt", "sharegpt-first-turns.csv"}};

const char *scase_lengths_file(const struct scase *c)
{
    for (size_t i = 0; i < sizeof named_lengths / sizeof named_lengths[0]; i++)
        if (!strcmp(c->prompt, named_lengths[i].name) && !strcmp(c->output, named_lengths[i].name))
            return named_lengths[i].file;
    return NULL;
}

int scase_predict(struct scase *c, const struct hw_system *node, const struct wl_model *m, const struct sw_stack *sw,
                  const struct serve_req *lengths, int64_t n_lengths, struct dse_err *e)
{
    c->ok = 0;
    struct serve_dist pd, od;
    memset(&pd, 0, sizeof pd);
    memset(&od, 0, sizeof od);
    struct dse_err le;
    int sched = ju_lookup(serve_sched_names, c->scheduler);
    enum serve_arrival arr = !strcmp(c->arrival, "poisson")    ? SA_POISSON
                             : !strcmp(c->arrival, "offline")  ? SA_OFFLINE
                             : !strcmp(c->arrival, "constant") ? SA_CONSTANT
                                                               : (enum serve_arrival)-1;
    if (c->metric == SM_ITL_P50) {
        snprintf(c->reason, sizeof c->reason, "inter-token latency percentiles need each token's gap; dse reports a "
                 "request's mean (TPOT)");
        return DSE_OK;
    }
    if (sched < 0) {
        snprintf(c->reason, sizeof c->reason, "scheduler '%s' is not one dse simulates", c->scheduler);
        return DSE_OK;
    }
    if ((int)arr < 0) {
        snprintf(c->reason, sizeof c->reason, "arrivals '%s' (closed-loop clients) are not modelled", c->arrival);
        return DSE_OK;
    }
    if (!scase_lengths_file(c))
        lengths = NULL, n_lengths = 0;
    else if (!lengths || n_lengths < 1) {
        snprintf(c->reason, sizeof c->reason, "the trace standing for the source's lengths ('%s') was not given",
                 c->prompt);
        return DSE_OK;
    }
    if (!lengths &&
        (serve_dist_parse("prompt_dist", c->prompt, &pd, &le) || serve_dist_parse("output_dist", c->output, &od, &le))) {
        snprintf(c->reason, sizeof c->reason, "the source's lengths ('%s', '%s') are a dataset's whose distribution "
                 "is not shipped", c->prompt, c->output);
        return DSE_OK;
    }
    if (arr != SA_OFFLINE && !(c->rate > 0)) {
        snprintf(c->reason, sizeof c->reason, "no arrival rate stated");
        return DSE_OK;
    }
    if (sched == SCHED_STATIC && !c->max_batch) {
        snprintf(c->reason, sizeof c->reason, "a static batch of unstated size");
        return DSE_OK;
    }
    struct hw_system *sys = malloc(sizeof *sys);
    if (!sys)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    *sys = *node;
    struct serve_req *req = NULL;
    struct serve_result res;
    memset(&res, 0, sizeof res);
    int rc = DSE_OK;
    if (vcase_resize(sys, 1, c->devices, c->reason, sizeof c->reason))
        goto done;
    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = sys;
    r.dev = sys->topo.n_level ? sys->topo.dev : eval_default_device(sys);
    for (int k = 0; k < OP_COUNT; k++)
        r.type_dev[k] = -1;
    r.model = m;
    r.sw = sw;
    r.x.fidelity = FID_ANALYTICAL;
    if ((rc = prec_parse(c->precision, &r.x.prec, e)))
        goto done;
    long long tp = c->tp > 0 ? c->tp : 1;
    r.layout.n[PAR_TP] = (int)tp;
    r.layout.n[PAR_DP] = (int)(c->devices / tp);
    r.phase = PH_DECODE;
    r.batch = 1;
    r.prompt = 1;
    if (par_layout_complete(sys, &r.layout, &le) || eval_check_layout(&r, &le)) {
        dse_strlcpy(c->reason, le.msg, sizeof c->reason);
        goto done;
    }
    struct serve_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.sched = (enum serve_sched)sched;
    cfg.max_batch = c->max_batch ? (int)c->max_batch : 1 << 20; /* unstated: the KV cache's limit */
    int64_t n = c->requests ? c->requests : sched == SCHED_STATIC ? c->max_batch : 1000;
    if (n > SC_MAX_REQUESTS)
        n = SC_MAX_REQUESTS;
    if ((rc = serve_trace_make(arr, arr == SA_OFFLINE ? 0 : c->rate, 0, n, &pd, &od, lengths, n_lengths, 1, &req, e)))
        goto done;
    int64_t longest = 0;
    for (int64_t i = 0; i < n; i++)
        longest = req[i].prompt > longest ? req[i].prompt : longest;
    cfg.sched_steps = sw ? sw->sched_steps : 0; /* the stack release's scheduler */
    cfg.per_request_s = (sw ? sw->per_request_s : 0) + sys->dev[r.dev].per_request_s;
    serve_cfg_defaults(&cfg, longest);
    struct serve_cost cost;
    if (serve_cost_build(&r, serve_grid_tokens(&cfg), 0, &cost, &le) || serve_run(&cost, &cfg, req, n, 0, &res, &le)) {
        dse_strlcpy(c->reason, le.msg, sizeof c->reason);
        goto done;
    }
    double v;
    switch (c->metric) {
    case SM_TPUT_TOKENS: v = res.output_tokens_per_s; break;
    case SM_TPUT_RPS: v = res.throughput_rps; break;
    case SM_TOTAL_TOKENS: {
        double in = 0;
        for (int64_t i = 0; i < n; i++)
            in += req[i].prompt;
        v = (in + (double)res.output_tokens) / res.makespan_s;
        break;
    }
    case SM_TTFT_P50: v = 1e3 * res.ttft_s.p50; break;
    case SM_TTFT_P99: v = 1e3 * res.ttft_s.p99; break;
    case SM_TTFT_MEAN: v = 1e3 * res.ttft_s.mean; break;
    case SM_TPOT_P50: v = 1e3 * res.tpot_s.p50; break;
    case SM_TPOT_P99: v = 1e3 * res.tpot_s.p99; break;
    case SM_TPOT_MEAN: v = 1e3 * res.tpot_s.mean; break;
    case SM_E2E_P50: v = 1e3 * res.e2e_s.p50; break;
    default: v = 1e3 * res.e2e_s.mean; break;
    }
    if (!isfinite(v) || !(v > 0)) {
        snprintf(c->reason, sizeof c->reason, "the run has no %s", smetric_names[c->metric]);
        goto done;
    }
    c->predicted = v;
    c->error = v / c->value - 1;
    c->ok = 1;
done:
    serve_result_free(&res);
    free(req);
    free(sys);
    return rc;
}
