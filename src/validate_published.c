/* validate_published.c -- the corpus of published measurements (the CSV files of validate/published; schema and
 * split rule in its README): reading and checking the CSV files, predicting a case with dse's default
 * settings for it (the case's device, software stack, workload, phase, batch and precision), the
 * held-out split, and error statistics.
 *
 * A case's metric is predicted as dse computes it: latency_ms the phase's latency; throughput_per_s
 * batch / latency; tokens_per_s generated tokens / latency (phase generate), batch / time per output
 * token (phase decode: a generate run of `gen` tokens, 128 when 0, after the prompt) or prompt tokens /
 * latency (phase prefill); ttft_ms the prefill's latency; tpot_ms the mean decode step of a generate
 * run; kernel_ms the kernel's time; tflops the kernel's FLOPs counted as its source does (a GEMM
 * 2 M N K; attention, as FlashAttention's papers count it, 4 B H S T D, halved when causal) over the
 * predicted time. The error is predicted / measured - 1 of the metric as published. */
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "jsonu.h"

const char *const pmetric_names[PM_COUNT + 1] = {"latency_ms", "throughput_per_s", "tokens_per_s", "ttft_ms",
                                                 "tpot_ms",    "kernel_ms",        "tflops",       NULL};

/* Units a metric may be published in (the same quantity under the names sources use). */
static const char *const metric_units[PM_COUNT][6] = {
    [PM_LATENCY] = {"ms", NULL},
    [PM_THROUGHPUT] = {"1/s", "images/s", "sequences/s", "samples/s", "inferences/s", NULL},
    [PM_TOKENS] = {"tokens/s", "token/s", NULL},
    [PM_TTFT] = {"ms", NULL},
    [PM_TPOT] = {"ms", NULL},
    [PM_KERNEL_MS] = {"ms", NULL},
    [PM_TFLOPS] = {"TFLOPS", "TOPS", NULL},
};

int pcase_is_heldout(const char *id)
{
    unsigned h = 2166136261u; /* FNV-1a 32, the rule fixed in validate/published/README.md */
    for (const unsigned char *c = (const unsigned char *)id; *c; c++)
        h = (h ^ *c) * 16777619u;
    return (int)(h & 1u);
}

int pmetric_is_rate(enum pmetric m) { return m == PM_THROUGHPUT || m == PM_TOKENS || m == PM_TFLOPS; }

double pcase_time_error(const struct pcase *c)
{
    return pmetric_is_rate(c->metric) ? 1 / (1 + c->error) - 1 : c->error;
}

/* ---- reading ---- */

enum { C_ID, C_DEVICE, C_FRAMEWORK, C_SOFTWARE, C_WORKLOAD, C_PHASE, C_BATCH, C_PROMPT, C_GEN, C_PREC, C_METRIC,
       C_VALUE, C_UNIT, C_SOURCE, C_URL, C_DATE, C_NOTE, C_INSTANCES, C_COUNT };
#define C_REQUIRED C_INSTANCES /* the columns before it must be there; instances may be left out */
static const char *const col_names[C_COUNT + 1] = {"id",     "device", "framework", "software", "workload", "phase",
                                                   "batch",  "prompt", "gen",       "precision", "metric",  "value",
                                                   "unit",   "source", "url",       "date",      "note",    "instances",
                                                   NULL};

/* A kernel workload "gemm:M=..,N=..,K=.." or "attention:B=..,H=..,Hkv=..,S=..,T=..,D=..,causal=..":
 * read as the kernel suites read a case, so one checker serves both. */
int pcase_kernel(const char *spec, const char *prec, const char *file, const char *where, struct vk *k,
                       struct dse_err *e)
{
    const char *colon = strchr(spec, ':');
    char kind[32], shape[200], json[512];
    if (!colon || (size_t)(colon - spec) >= sizeof kind || strlen(colon + 1) >= sizeof shape)
        return dse_err_set(e, DSE_EINPUT, file, where, "workload: expected KERNEL:NAME=VALUE,..., got '%.60s'", spec);
    snprintf(kind, sizeof kind, "%.*s", (int)(colon - spec), spec);
    size_t at = (size_t)snprintf(json, sizeof json, "{\"kernels\":[{\"kernel\":\"%s\",\"precision\":\"%s\","
                                                    "\"measured_ms\":1,\"shape\":{", kind, prec);
    dse_strlcpy(shape, colon + 1, sizeof shape);
    char *save = NULL;
    int first = 1;
    for (char *kv = strtok_r(shape, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '='), *end;
        if (!eq)
            return dse_err_set(e, DSE_EINPUT, file, where, "workload: expected NAME=VALUE, got '%.40s'", kv);
        *eq = '\0';
        strtoll(eq + 1, &end, 10);
        if (end == eq + 1 || *end || strpbrk(kv, "\"\\"))
            return dse_err_set(e, DSE_EINPUT, file, where, "workload: %.20s: expected an integer", kv);
        at += (size_t)snprintf(json + at, at < sizeof json ? sizeof json - at : 0, "%s\"%s\":%s", first ? "" : ",", kv,
                               eq + 1);
        first = 0;
    }
    if (at + 8 >= sizeof json)
        return dse_err_set(e, DSE_EINPUT, file, where, "workload: too long");
    snprintf(json + at, sizeof json - at, "}}]}");
    struct vsuite s;
    char name[300];
    snprintf(name, sizeof name, "%s: %s", file, where);
    int rc = vsuite_load_buf(json, strlen(json), name, &s, e);
    if (rc)
        return rc;
    *k = s.k[0];
    vsuite_free(&s);
    return DSE_OK;
}

static int load_row(char **f, const char *file, int line, struct pcase *c, struct dse_err *e)
{
    char where[32];
    snprintf(where, sizeof where, "line %d", line);
    memset(c, 0, sizeof *c);
    dse_strlcpy(c->file, file, sizeof c->file);
    c->line = line;
    const size_t lim[C_COUNT] = {sizeof c->id,   sizeof c->device, sizeof c->framework, sizeof c->software,
                                 sizeof c->workload, 16,            24,                  24,
                                 24,             sizeof c->precision, 24,                32,
                                 24,             sizeof c->source, sizeof c->url,       sizeof c->date,
                                 sizeof c->note, 24};
    for (int i = 0; i < C_COUNT; i++) {
        if (strlen(f[i]) >= lim[i])
            return dse_err_set(e, DSE_EINPUT, file, where, "%s: longer than %zu characters", col_names[i], lim[i] - 1);
        if (!f[i][0] && i != C_NOTE && i != C_FRAMEWORK && i != C_INSTANCES)
            return dse_err_set(e, DSE_EINPUT, file, where, "%s: empty", col_names[i]);
    }
    for (const char *p = f[C_ID]; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
            return dse_err_set(e, DSE_EINPUT, file, where, "id: '%s': use a-z, 0-9, '.' and '-'", f[C_ID]);
    dse_strlcpy(c->id, f[C_ID], sizeof c->id);
    dse_strlcpy(c->device, f[C_DEVICE], sizeof c->device);
    dse_strlcpy(c->framework, f[C_FRAMEWORK], sizeof c->framework);
    dse_strlcpy(c->software, f[C_SOFTWARE], sizeof c->software);
    dse_strlcpy(c->workload, f[C_WORKLOAD], sizeof c->workload);
    dse_strlcpy(c->precision, f[C_PREC], sizeof c->precision);
    dse_strlcpy(c->source, f[C_SOURCE], sizeof c->source);
    dse_strlcpy(c->url, f[C_URL], sizeof c->url);
    dse_strlcpy(c->date, f[C_DATE], sizeof c->date);
    dse_strlcpy(c->note, f[C_NOTE], sizeof c->note);
    int ph = ju_lookup(wl_phase_names, f[C_PHASE]);
    c->is_kernel = !strcmp(f[C_PHASE], "kernel");
    if (ph < 0 && !c->is_kernel)
        return dse_err_set(e, DSE_EINPUT, file, where, "phase: expected none, prefill, decode, generate or kernel, got '%s'",
                           f[C_PHASE]);
    c->phase = c->is_kernel ? PH_NONE : (enum wl_phase)ph;
    if (pcsv_int(f[C_BATCH], c->is_kernel ? 0 : 1, 1000000, &c->batch) ||
        pcsv_int(f[C_PROMPT], 0, 10000000, &c->prompt) || pcsv_int(f[C_GEN], 0, 1000000, &c->gen))
        return dse_err_set(e, DSE_EINPUT, file, where,
                           "batch, prompt, gen: expected whole numbers (batch >= 1 but for kernels), got %s, %s, %s",
                           f[C_BATCH], f[C_PROMPT], f[C_GEN]);
    c->instances = 1;
    if (f[C_INSTANCES][0] && pcsv_int(f[C_INSTANCES], 1, 4096, &c->instances))
        return dse_err_set(e, DSE_EINPUT, file, where, "instances: expected a whole number in [1, 4096], got '%s'",
                           f[C_INSTANCES]);
    int m = ju_lookup(pmetric_names, f[C_METRIC]);
    if (m < 0) {
        char list[200];
        ju_list_names(pmetric_names, list, sizeof list);
        return dse_err_set(e, DSE_EINPUT, file, where, "metric: '%s' (expected one of: %s)", f[C_METRIC], list);
    }
    c->metric = (enum pmetric)m;
    if (c->is_kernel != (c->metric == PM_KERNEL_MS || c->metric == PM_TFLOPS))
        return dse_err_set(e, DSE_EINPUT, file, where, "metric %s %s phase kernel", f[C_METRIC],
                           c->is_kernel ? "does not go with" : "needs");
    int unit_ok = 0;
    for (int u = 0; metric_units[m][u]; u++)
        unit_ok |= !strcmp(metric_units[m][u], f[C_UNIT]);
    if (!unit_ok)
        return dse_err_set(e, DSE_EINPUT, file, where, "unit: '%s' is not a unit of %s (%s)", f[C_UNIT], f[C_METRIC],
                           metric_units[m][0]);
    char *end;
    c->value = strtod(f[C_VALUE], &end);
    if (end == f[C_VALUE] || *end || !(c->value > 0) || !isfinite(c->value))
        return dse_err_set(e, DSE_EINPUT, file, where, "value: expected a positive number, got '%s'", f[C_VALUE]);
    struct prec_cfg pc;
    if (prec_parse(c->precision, &pc, e))
        return dse_err_set(e, DSE_EINPUT, file, where, "precision: %s", e->msg);
    if (c->is_kernel && pcase_kernel(c->workload, prec_names[pc.w], file, where, &c->k, e))
        return e->code;
    c->k.burst = c->is_kernel; /* a kernel benchmark's figure: milliseconds of one kernel */
    c->heldout = pcase_is_heldout(c->id);
    return DSE_OK;
}

/* Reads the cases of one file, buf (len bytes, NUL-terminated, modified in place), into pc. */
static int load_buf(char *buf, size_t len, const char *path, struct pcorpus *pc, struct dse_err *e)
{
    char *f[C_COUNT + 1], *next;
    int rc, line = 0, header = 0, col[C_COUNT];
    if ((rc = ju_text_check(buf, len, path, e)))
        return rc;
    for (char *l = buf; l && !rc; l = next) {
        line++; /* every line counts, empty ones too, so that messages name the file's own line */
        next = strchr(l, '\n');
        if (next)
            *next++ = '\0';
        if (!*l || *l == '#' || !strcmp(l, "\r"))
            continue;
        char where[32], *raw[C_COUNT + 1];
        snprintf(where, sizeof where, "line %d", line);
        int n = pcsv_record(l, raw, C_COUNT + 1);
        if (n < 0) {
            rc = dse_err_set(e, DSE_EINPUT, path, where, "not a CSV record of at most %d fields (quotes?)", C_COUNT);
            break;
        }
        if (!header) {
            for (int c = 0; c < C_COUNT; c++)
                col[c] = -1;
            for (int i = 0; i < n && !rc; i++) {
                int c = ju_lookup(col_names, raw[i]);
                if (c < 0 || col[c] >= 0)
                    rc = dse_err_set(e, DSE_EINPUT, path, where, "column '%.40s': %s", raw[i],
                                     c < 0 ? "unknown (validate/published/README.md lists them)" : "named twice");
                else
                    col[c] = i;
            }
            for (int c = 0; c < C_REQUIRED && !rc; c++)
                if (col[c] < 0)
                    rc = dse_err_set(e, DSE_EINPUT, path, where, "the header lacks column '%s'", col_names[c]);
            header = n;
            continue;
        }
        if (n != header) {
            rc = dse_err_set(e, DSE_EINPUT, path, where, "%d fields where the header has %d", n, header);
            break;
        }
        static char none[] = "";
        for (int c = 0; c < C_COUNT; c++)
            f[c] = col[c] >= 0 ? raw[col[c]] : none;
        if (pc->n == pc->cap) {
            int cap = pc->cap ? 2 * pc->cap : 64;
            struct pcase *nc = realloc(pc->c, sizeof *nc * (size_t)cap);
            if (!nc) {
                rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                break;
            }
            pc->c = nc;
            pc->cap = cap;
        }
        if (!(rc = load_row(f, path, line, &pc->c[pc->n], e)))
            pc->n++;
    }
    if (!rc && !header)
        rc = dse_err_set(e, DSE_EINPUT, path, NULL, "no header line");
    return rc;
}

static int load_file(const char *path, struct pcorpus *pc, struct dse_err *e)
{
    char *buf;
    size_t len;
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    if (rc)
        return rc;
    rc = load_buf(buf, len, path, pc, e);
    free(buf);
    return rc;
}

static int cmp_id(const void *a, const void *b)
{
    return strcmp(((const struct pcase *)a)->id, ((const struct pcase *)b)->id);
}

/* The checks across files: some case, and ids unique. */
static int corpus_check(const char *first, struct pcorpus *pc, struct dse_err *e);

int pcorpus_load_buf(const char *text, size_t len, const char *fname, struct pcorpus *pc, struct dse_err *e)
{
    memset(pc, 0, sizeof *pc);
    if (len > JU_MAX_FILE_BYTES)
        return dse_err_set(e, DSE_EINPUT, fname, NULL, "larger than %u bytes", JU_MAX_FILE_BYTES);
    char *buf = malloc(len + 1);
    if (!buf)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    memcpy(buf, text, len);
    buf[len] = '\0';
    int rc = load_buf(buf, len, fname, pc, e);
    free(buf);
    return rc ? (pcorpus_free(pc), rc) : corpus_check(fname, pc, e);
}

int pcorpus_load(const char *const *paths, int n, struct pcorpus *pc, struct dse_err *e)
{
    memset(pc, 0, sizeof *pc);
    int rc = DSE_OK;
    for (int i = 0; i < n && !rc; i++)
        rc = load_file(paths[i], pc, e);
    if (rc) {
        pcorpus_free(pc);
        return rc;
    }
    return corpus_check(n ? paths[0] : NULL, pc, e);
}

static int corpus_check(const char *first, struct pcorpus *pc, struct dse_err *e)
{
    int rc = DSE_OK;
    if (pc->n == 0)
        rc = dse_err_set(e, DSE_EINPUT, first, NULL, "no published cases");
    if (!rc) { /* ids are unique across files: a duplicate would count one measurement twice */
        struct pcase *sorted = malloc(sizeof *sorted * (size_t)pc->n);
        if (!sorted)
            rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        else {
            memcpy(sorted, pc->c, sizeof *sorted * (size_t)pc->n);
            qsort(sorted, (size_t)pc->n, sizeof *sorted, cmp_id);
            for (int i = 1; i < pc->n && !rc; i++)
                if (!strcmp(sorted[i].id, sorted[i - 1].id)) {
                    char where[32];
                    snprintf(where, sizeof where, "line %d", sorted[i].line);
                    rc = dse_err_set(e, DSE_EINPUT, sorted[i].file, where, "id '%s' is also %s line %d", sorted[i].id,
                                     sorted[i - 1].file, sorted[i - 1].line);
                }
            free(sorted);
        }
    }
    if (rc)
        pcorpus_free(pc);
    return rc;
}

void pcorpus_free(struct pcorpus *pc)
{
    free(pc->c);
    memset(pc, 0, sizeof *pc);
}

/* ---- prediction ---- */

static int predict_one(struct pcase *c, const struct hw_system *sys, int dev, int threads, const struct wl_model *m,
                       const struct sw_stack *sw, enum fidelity f, struct dse_err *e);

/* A kernel's FLOPs as its source counts them (see the header). */
static double source_flops(const struct vk *k)
{
    if (k->type == VK_ATTENTION)
        return 4.0 * k->b * k->heads * k->s * k->t * k->d * (k->causal ? 0.5 : 1);
    return 2.0 * (k->b > 1 ? (double)k->b : 1) * k->M * k->N * k->K;
}

static enum pkind kind_of(const struct pcase *c, const struct wl_model *m)
{
    if (c->is_kernel)
        return PK_KERNEL;
    if (wl_model_is_lm(m) && c->metric == PM_TTFT) /* the prefill of a generate run */
        return PK_LLM_PREFILL;
    if (wl_model_is_lm(m) && c->metric == PM_TPOT)
        return PK_LLM_DECODE;
    return eb_kind_of(m, c->phase);
}

/* One of n instances of sys: the primary device's share of it (a CPU runs an instance on cores / n:
 * threads; an accelerator's compute peaks and memory bandwidths are divided by n). */
void pcase_share_device(struct hw_system *one, int dev, long long n, int *threads)
{
    struct hw_device *d = &one->dev[dev];
    *threads = 0;
    if (n <= 1)
        return;
    if (d->cls == HW_CPU) {
        double cores = model_cpu_cores(d);
        *threads = cores / (double)n >= 1 ? (int)floor(cores / (double)n) : 1;
        return;
    }
    hw_scale_clock(d, 1.0 / (double)n, 1);
    for (int l = 0; l < d->n_mem; l++) {
        d->mem[l].bandwidth_Bps /= (double)n;
        d->mem[l].capacity_bytes /= (double)n;
    }
}

int pcase_predict(struct pcase *c, const struct hw_system *sys, const struct wl_model *m, const struct sw_stack *sw,
                  enum fidelity f, struct dse_err *e)
{
    int dev = eval_default_device(sys), rc, threads = 0;
    struct hw_system *one = NULL;
    if (c->instances > 1) {
        if (!(one = malloc(sizeof *one)))
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        *one = *sys;
        pcase_share_device(one, dev, c->instances, &threads);
        sys = one;
    }
    rc = predict_one(c, sys, dev, threads, m, sw, f, e);
    free(one);
    if (!rc && c->ok && pmetric_is_rate(c->metric) && c->metric != PM_TFLOPS) { /* rates add up over instances */
        c->predicted *= (double)c->instances;
        c->error = c->predicted / c->value - 1;
    }
    return rc;
}

int pcase_eval(const struct pcase *c, const struct hw_system *sys, int dev, int threads, const struct wl_model *m,
               const struct sw_stack *sw, enum fidelity f, struct eval_req *r, struct eval_result *res, struct dse_err *e)
{
    int rc;
    memset(r, 0, sizeof *r);
    memset(res, 0, sizeof *res);
    r->sys = sys;
    r->sw = sw;
    r->model = m;
    r->dev = dev;
    for (int t = 0; t < OP_COUNT; t++)
        r->type_dev[t] = -1;
    if ((rc = prec_parse(c->precision, &r->x.prec, e)))
        return rc;
    r->x.fidelity = f;
    r->x.threads = threads;
    r->batch = c->batch;
    int lm = wl_model_is_lm(m);
    r->prompt = c->prompt > 0 ? c->prompt : lm ? 1 : 128;
    r->gen = c->gen > 0 ? c->gen : 128;
    r->phase = PH_NONE;
    if (lm) { /* the run a metric is read from (see the header) */
        r->phase = c->phase == PH_NONE ? PH_GENERATE : c->phase;
        if (c->metric == PM_TPOT || (c->metric == PM_TOKENS && c->phase == PH_DECODE))
            r->phase = PH_GENERATE;
        if (c->metric == PM_TTFT && c->phase != PH_GENERATE)
            r->phase = PH_PREFILL;
    }
    if ((rc = wl_check_context(m, r->phase, r->prompt, r->gen, c->file, c->id, e)))
        return rc;
    if (c->tp > 1) {
        struct dse_err le;
        r->layout.n[PAR_TP] = c->tp;
        r->dev = sys->topo.dev;
        if (par_layout_complete(sys, &r->layout, &le) || eval_check_layout(r, &le)) {
            res->feasible = 0;
            dse_strlcpy(res->reason, le.msg, sizeof res->reason);
            return DSE_OK;
        }
    }
    return eval_run(r, res, e);
}

static int predict_one(struct pcase *c, const struct hw_system *sys, int dev, int threads, const struct wl_model *m,
                       const struct sw_stack *sw, enum fidelity f, struct dse_err *e)
{
    int rc;
    c->ok = 0;
    c->reason[0] = '\0';
    c->dev_class = sys->dev[dev].cls;
    c->kind = kind_of(c, m);
    if (sw && pass_check_target(sw, &sys->dev[dev], e)) {
        dse_strlcpy(c->reason, e->msg, sizeof c->reason);
        dse_err_clear(e);
        return DSE_OK;
    }
    if (c->is_kernel) {
        struct wl_graph g;
        double ms;
        if ((rc = vk_graph(&c->k, &g, e)))
            return rc;
        rc = vk_predict(&c->k, &g, sys, dev, f, threads, &ms, NULL, e);
        wl_graph_free(&g);
        if (rc == DSE_EINPUT) { /* infeasible on this device (its precision): a reason, not an error */
            dse_strlcpy(c->reason, e->msg, sizeof c->reason);
            dse_err_clear(e);
            return DSE_OK;
        }
        if (rc)
            return rc;
        c->predicted = c->metric == PM_TFLOPS ? source_flops(&c->k) / (ms * 1e-3) / 1e12 : ms;
    } else {
        struct eval_req r;
        struct eval_result res;
        if ((rc = pcase_eval(c, sys, dev, threads, m, sw, f, &r, &res, e)))
            return rc;
        if (!res.feasible) {
            dse_strlcpy(c->reason, res.reason, sizeof c->reason);
            eval_result_free(&res);
            return DSE_OK;
        }
        const struct eval_totals *t = &res.t;
        switch (c->metric) {
        case PM_LATENCY: c->predicted = t->latency_s * 1e3; break;
        case PM_THROUGHPUT: c->predicted = (double)r.batch / t->latency_s; break;
        case PM_TTFT: c->predicted = (r.phase == PH_GENERATE ? t->ttft_s : t->latency_s) * 1e3; break;
        case PM_TPOT: c->predicted = t->tpot_s * 1e3; break;
        default: /* tokens_per_s */
            c->predicted = c->phase == PH_DECODE    ? t->decode_tokens_per_s
                           : r.phase == PH_PREFILL ? (double)r.batch * (double)r.prompt / t->latency_s
                                                   : t->tokens_per_s;
            break;
        }
        eval_result_free(&res);
    }
    c->error = c->predicted / c->value - 1;
    c->ok = isfinite(c->error);
    if (!c->ok)
        snprintf(c->reason, sizeof c->reason, "no finite prediction");
    return DSE_OK;
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of v[0..n) (sorted here), linearly interpolated between order statistics. */
static double quantile(double *v, int n, double q)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double pos = q * (n - 1);
    int i = (int)floor(pos);
    if (i >= n - 1)
        return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

void pstats_of(const struct pcase *c, int n, int (*want)(const struct pcase *, const void *), const void *ctx,
               struct pstats *s)
{
    memset(s, 0, sizeof *s);
    double *te = malloc(sizeof *te * (size_t)(n ? n : 1));
    double sum = 0;
    for (int i = 0; i < n; i++) {
        if (!c[i].ok || (want && !want(&c[i], ctx)))
            continue;
        double a = fabs(c[i].error);
        sum += a;
        s->within20 += a <= 0.20;
        s->within25 += a <= 0.25;
        if (te)
            te[s->n] = pcase_time_error(&c[i]);
        s->n++;
    }
    if (s->n) {
        s->mape_pct = 100 * sum / s->n;
        s->within20_pct = 100.0 * s->within20 / s->n;
        s->within25_pct = 100.0 * s->within25 / s->n;
        if (te) {
            s->p10_pct = 100 * quantile(te, s->n, 0.10);
            s->p90_pct = 100 * quantile(te, s->n, 0.90);
            s->median_pct = 100 * quantile(te, s->n, 0.50);
        }
    }
    free(te);
}

/* ---- calibration on the fit half ---- */

/* What a published calibration may move (validate.h: enum pparam), each a log-scale factor on the
 * hwdesc's own value: the compute efficiency of GEMM-like classes, of attention, of vector ops; main
 * memory's bandwidth efficiency, and that of decode-shaped kernels (skinny matmuls, decode attention)
 * beside it; the fp8 engines, and the int8 and int4 ones, against their peaks (separate paths: tensor
 * cores' fp8 and integer pipelines, an NPU's int8 array); the launch per kernel and the
 * runtime's work per step. */
const char *const pparam_names[PP_COUNT + 1] = {"gemm_efficiency",   "attention_efficiency", "vector_efficiency",
                                                "memory_efficiency", "decode_memory_efficiency",
                                                "fp8_efficiency",    "int8_efficiency",      "launch_us", "per_step_us",
                                                "per_request_us",    NULL};

static const enum hw_eff_class gemm_classes[] = {EC_MATMUL, EC_MATMUL_SKINNY, EC_CONV, EC_CONV_DW};
static const enum hw_eff_class attn_classes[] = {EC_ATTENTION, EC_ATTENTION_DECODE};
static const enum hw_eff_class vec_classes[] = {EC_SOFTMAX, EC_NORM, EC_ELTWISE};
static const enum prec low_precs[] = {P_FP8, P_INT8, P_INT4};
static enum pparam prec_param(enum prec p) { return p == P_FP8 ? PP_FP8 : PP_INT8; }

/* A fitted efficiency stays in (0.001, 1]: a rate above the hwdesc's peak would be a wrong answer that
 * looks right (the hwdesc's peaks are datasheet figures, which published measurements do not exceed).
 * While fitting, the cap is 4 and a steep penalty past 1 keeps the fit below it (a hard cap would stop
 * the search at the boundary, where every uncalibrated efficiency starts). */
static double clamp_eff(double v, double cap) { return v < 1e-3 ? 1e-3 : v > cap ? cap : v; }

/* The largest of the efficiencies factor k scales (for the penalty past 1). */
static double param_max_eff(const struct hw_device *d, int k)
{
    double m = 0;
    switch (k) {
    case PP_GEMM:
        for (size_t i = 0; i < sizeof gemm_classes / sizeof gemm_classes[0]; i++)
            m = fmax(m, d->eff_class[gemm_classes[i]]);
        return m;
    case PP_ATTENTION:
        for (size_t i = 0; i < sizeof attn_classes / sizeof attn_classes[0]; i++)
            m = fmax(m, d->eff_class[attn_classes[i]]);
        return m;
    case PP_VECTOR:
        for (size_t i = 0; i < sizeof vec_classes / sizeof vec_classes[0]; i++)
            m = fmax(m, d->eff_class[vec_classes[i]]);
        return m;
    case PP_MEMORY: return d->eff_level[d->n_mem - 1];
    case PP_DECODE_MEMORY:
        return fmax(d->eff_mclass[EC_MATMUL_SKINNY], d->eff_mclass[EC_ATTENTION_DECODE]) * d->eff_level[d->n_mem - 1];
    case PP_FP8:
    case PP_INT8:
        for (size_t i = 0; i < sizeof low_precs / sizeof low_precs[0]; i++)
            if (prec_param(low_precs[i]) == (enum pparam)k)
                m = fmax(m, d->eff_prec[low_precs[i]]);
        return m;
    default: return 0;
    }
}

/* Applies the factors with efficiencies held at or below cap (the fit lets them pass 1 and pays for
 * it in its residuals; a calibrated device keeps them at most 1). */
static void apply_capped(struct hw_device *d, const double *factor, double cap)
{
    for (size_t i = 0; i < sizeof gemm_classes / sizeof gemm_classes[0]; i++)
        d->eff_class[gemm_classes[i]] = clamp_eff(d->eff_class[gemm_classes[i]] * factor[PP_GEMM], cap);
    for (size_t i = 0; i < sizeof attn_classes / sizeof attn_classes[0]; i++)
        d->eff_class[attn_classes[i]] = clamp_eff(d->eff_class[attn_classes[i]] * factor[PP_ATTENTION], cap);
    for (size_t i = 0; i < sizeof vec_classes / sizeof vec_classes[0]; i++)
        d->eff_class[vec_classes[i]] = clamp_eff(d->eff_class[vec_classes[i]] * factor[PP_VECTOR], cap);
    d->eff_level[d->n_mem - 1] = clamp_eff(d->eff_level[d->n_mem - 1] * factor[PP_MEMORY], cap);
    d->eff_mclass[EC_MATMUL_SKINNY] = clamp_eff(d->eff_mclass[EC_MATMUL_SKINNY] * factor[PP_DECODE_MEMORY], cap);
    d->eff_mclass[EC_ATTENTION_DECODE] = clamp_eff(d->eff_mclass[EC_ATTENTION_DECODE] * factor[PP_DECODE_MEMORY], cap);
    for (size_t i = 0; i < sizeof low_precs / sizeof low_precs[0]; i++)
        d->eff_prec[low_precs[i]] = clamp_eff(d->eff_prec[low_precs[i]] * factor[prec_param(low_precs[i])], cap);
    /* times: factors on the hwdesc's, or on 1 us when it has none */
    d->per_op_s = (d->per_op_s > 0 ? d->per_op_s : 1e-6) * factor[PP_LAUNCH];
    d->per_step_s = (d->per_step_s > 0 ? d->per_step_s : 1e-6) * factor[PP_STEP];
    d->per_request_s = (d->per_request_s > 0 ? d->per_request_s : 1e-6) * factor[PP_REQUEST];
}

void pcalib_apply(struct hw_device *d, const double *factor) { apply_capped(d, factor, 1); }

/* Three significant digits: what a calibrated hwdesc ships, so the held-out error reported is that of the
 * file as written, and the file does not carry the fit's noise as fifteen digits. */
static double round_sig3(double v)
{
    if (!(v > 0) || !isfinite(v))
        return v;
    double m = pow(10, 2 - floor(log10(v)));
    return round(v * m) / m;
}

void pcalib_round(struct hw_device *d)
{
    for (int k = 0; k < EC_COUNT; k++)
        d->eff_class[k] = round_sig3(d->eff_class[k]);
    d->eff_level[d->n_mem - 1] = round_sig3(d->eff_level[d->n_mem - 1]);
    d->eff_mclass[EC_MATMUL_SKINNY] = round_sig3(d->eff_mclass[EC_MATMUL_SKINNY]);
    d->eff_mclass[EC_ATTENTION_DECODE] = round_sig3(d->eff_mclass[EC_ATTENTION_DECODE]);
    for (size_t i = 0; i < sizeof low_precs / sizeof low_precs[0]; i++)
        d->eff_prec[low_precs[i]] = round_sig3(d->eff_prec[low_precs[i]]);
    d->per_op_s = round_sig3(d->per_op_s * 1e6) * 1e-6;
    d->per_step_s = round_sig3(d->per_step_s * 1e6) * 1e-6;
    d->per_request_s = round_sig3(d->per_request_s * 1e6) * 1e-6;
}

struct pfit {
    struct pcase *c;
    const int *idx; /* the fit cases */
    int n;
    const struct hw_system *sys;
    int dev;
    struct hw_system *work;
    const struct wl_model *const *model;
    const struct sw_stack *const *sw;
    enum fidelity f;
    int free_param[PP_COUNT], n_free;
    double ridge;
    int failed;
    char why[1200];
};

static void factors_of(const struct pfit *pf, const gsl_vector *x, double *factor)
{
    for (int k = 0, i = 0; k < PP_COUNT; k++)
        factor[k] = pf->free_param[k] ? exp(gsl_vector_get(x, (size_t)i++)) : 1;
}

/* The pull of parameter k towards the hwdesc's value: PCALIB_RIDGE, but for a time the hwdesc does
 * not give (a runtime overhead fitted from 1 us) only PCALIB_RIDGE_UNSOURCED, which keeps it
 * determined without preferring one overhead over another because of a placeholder. */
static double param_ridge(const struct pfit *pf, int k)
{
    const struct hw_device *d = &pf->sys->dev[pf->dev];
    double base = k == PP_LAUNCH ? d->per_op_s : k == PP_STEP ? d->per_step_s : k == PP_REQUEST ? d->per_request_s : 1;
    return base > 0 ? pf->ridge : PCALIB_RIDGE_UNSOURCED;
}

/* Residuals: log(predicted / measured) of each fit case, then sqrt(ridge) x each free log-factor (a
 * weak pull towards the hwdesc's values, so a factor the few cases cannot tell stays put), then for
 * each free efficiency 10 x how far past 1 (in log) it would take the largest efficiency it scales (and
 * for a sourced launch latency, 10 x how far past PCALIB_LAUNCH_SPAN it would move it). */
static int pfit_residuals(const gsl_vector *x, void *data, gsl_vector *f)
{
    struct pfit *pf = data;
    double factor[PP_COUNT];
    factors_of(pf, x, factor);
    *pf->work = *pf->sys;
    apply_capped(&pf->work->dev[pf->dev], factor, 4);
    for (int i = 0; i < pf->n; i++) {
        struct pcase c = pf->c[pf->idx[i]];
        struct dse_err e;
        if (pcase_predict(&c, pf->work, pf->model[pf->idx[i]], pf->sw[pf->idx[i]], pf->f, &e) || !c.ok) {
            pf->failed = 1;
            snprintf(pf->why, sizeof pf->why, "%s: %s", c.id, c.ok ? e.msg : c.reason);
            return GSL_EDOM;
        }
        gsl_vector_set(f, (size_t)i, log(c.predicted / c.value));
    }
    for (int k = 0, i = 0; k < PP_COUNT; k++) {
        if (!pf->free_param[k])
            continue;
        double th = gsl_vector_get(x, (size_t)i), past = 0;
        gsl_vector_set(f, (size_t)(pf->n + i), sqrt(param_ridge(pf, k)) * th);
        if (k < PP_TIMES) {
            past = log(param_max_eff(&pf->sys->dev[pf->dev], k)) + th;
            past = past > 0 ? 10 * past : 0;
        } else if (k == PP_LAUNCH && pf->sys->dev[pf->dev].per_op_s > 0) {
            /* a launch latency the hwdesc has from a measurement moves at most PCALIB_LAUNCH_SPAN either
             * way: the fit must not turn a runtime's per-request or per-step cost into a launch cost
             * that every kernel of every workload would then pay */
            past = fabs(th) - log(PCALIB_LAUNCH_SPAN);
            past = past > 0 ? 10 * past : 0;
        }
        gsl_vector_set(f, (size_t)(pf->n + pf->n_free + i), past);
        i++;
    }
    return GSL_SUCCESS;
}

int pcalib_fit(struct pcase *c, const int *idx, int n, const struct hw_system *sys,
               const struct wl_model *const *model, const struct sw_stack *const *sw, enum fidelity f, double *factor,
               int *free_param, struct dse_err *e)
{
    struct pfit pf;
    memset(&pf, 0, sizeof pf);
    pf.c = c;
    pf.idx = idx;
    pf.n = n;
    pf.sys = sys;
    pf.dev = eval_default_device(sys);
    pf.model = model;
    pf.sw = sw;
    pf.f = f;
    pf.ridge = PCALIB_RIDGE;
    for (int k = 0; k < PP_COUNT; k++)
        factor[k] = 1;
    if (!(pf.work = malloc(sizeof *pf.work)))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    /* A factor is free when it moves a fit case: its prediction changes by more than 0.1 % when the
     * factor halves (an efficiency: most start at the cap) or doubles (a time). */
    double base[PCALIB_MAX_CASES];
    int rc = DSE_OK;
    if (n > PCALIB_MAX_CASES)
        rc = dse_err_set(e, DSE_EINPUT, NULL, NULL, "more than %d fit cases for one device", PCALIB_MAX_CASES);
    for (int i = 0; i < n && !rc; i++) {
        struct pcase cc = c[idx[i]];
        if ((rc = pcase_predict(&cc, sys, model[idx[i]], sw[idx[i]], f, e)))
            break;
        if (!cc.ok)
            rc = dse_err_set(e, DSE_EINPUT, NULL, NULL, "fit case %s is not predicted: %s", cc.id, cc.reason);
        base[i] = cc.predicted;
    }
    for (int k = 0; k < PP_COUNT && !rc; k++) {
        double fk[PP_COUNT];
        for (int q = 0; q < PP_COUNT; q++)
            fk[q] = q != k ? 1 : k < PP_TIMES ? 0.5 : 2;
        *pf.work = *sys;
        pcalib_apply(&pf.work->dev[pf.dev], fk);
        for (int i = 0; i < n && !pf.free_param[k] && !rc; i++) {
            struct pcase cc = c[idx[i]];
            if ((rc = pcase_predict(&cc, pf.work, model[idx[i]], sw[idx[i]], f, e)))
                break;
            pf.free_param[k] = cc.ok && fabs(cc.predicted / base[i] - 1) > 1e-3;
        }
        pf.n_free += pf.free_param[k];
    }
    if (!rc && pf.n_free == 0)
        rc = dse_err_set(e, DSE_EINPUT, NULL, NULL, "no efficiency or overhead moves the fit cases");
    if (rc) {
        free(pf.work);
        return rc;
    }
    gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof fdf);
    fdf.f = pfit_residuals;
    fdf.n = (size_t)(n + 2 * pf.n_free);
    fdf.p = (size_t)pf.n_free;
    fdf.params = &pf;
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, fdf.n, fdf.p);
    gsl_vector *x0 = gsl_vector_calloc(fdf.p);
    if (!w || !x0) {
        if (w)
            gsl_multifit_nlinear_free(w);
        gsl_vector_free(x0);
        free(pf.work);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    int info = 0, st = gsl_multifit_nlinear_init(x0, &fdf, w);
    if (st == GSL_SUCCESS)
        st = gsl_multifit_nlinear_driver(200, 1e-10, 1e-10, 1e-10, NULL, NULL, &info, w);
    if (pf.failed)
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "calibration: a prediction failed during the fit: %s", pf.why);
    else if (st != GSL_SUCCESS && st != GSL_EMAXITER)
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "calibration: the fit did not converge: %s", gsl_strerror(st));
    else
        factors_of(&pf, gsl_multifit_nlinear_position(w), factor);
    for (int k = 0; k < PP_COUNT; k++)
        free_param[k] = pf.free_param[k];
    gsl_multifit_nlinear_free(w);
    gsl_vector_free(x0);
    free(pf.work);
    return rc;
}
