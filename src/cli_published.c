/* cli_published.c -- `dse validate --published` (every case of the published corpus predicted with the
 * case's device, stack and workload; errors per case, per device, per device class and overall, on the
 * fit and held-out halves) and `dse calibrate --published --hw NAME` (one device's efficiencies fitted
 * on its fit half, the held-out error reported before and after, a calibrated hwdesc written). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "outfile.h"
#include "progress.h"
#include "serve.h"
#include "jsonu.h"
#include "validate.h"

/* What the cases name, each loaded once: systems, their stacks and the workloads. */
struct pctx {
    int n_sys, n_sw, n_wl;
    char sys_name[64][HW_NAME_LEN], sys_path[64][1024];
    struct hw_system *sys[64];
    char sw_key[64][HW_NAME_LEN + 64]; /* system name + stack name */
    struct sw_stack sw[64];
    char wl_name[96][160], wl_path[96][1024];
    struct wl_model wl[96];
};

static void pctx_free(struct pctx *x)
{
    for (int i = 0; i < x->n_sys; i++)
        free(x->sys[i]);
    for (int i = 0; i < x->n_wl; i++)
        wl_model_free(&x->wl[i]);
    free(x);
}

static int get_sys(struct pctx *x, const char *name, int *out, struct dse_err *e)
{
    for (int i = 0; i < x->n_sys; i++)
        if (!strcmp(x->sys_name[i], name))
            return *out = i, DSE_OK;
    if (x->n_sys == 64)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "more than 64 devices in the corpus");
    static const char *const ext[] = {".json", NULL};
    int k = x->n_sys, rc;
    if ((rc = cli_resolve("device", "hwdesc", name, ext, x->sys_path[k], sizeof x->sys_path[k], e)))
        return rc;
    if (!(x->sys[k] = malloc(sizeof *x->sys[k])))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    if ((rc = hw_load_file(x->sys_path[k], x->sys[k], e))) {
        free(x->sys[k]);
        return rc;
    }
    dse_strlcpy(x->sys_name[k], name, sizeof x->sys_name[k]);
    x->n_sys++;
    *out = k;
    return DSE_OK;
}

/* The stack of case c on system s: the case's (software "default": the device's own). */
static int get_sw(struct pctx *x, int s, const char *name, const struct sw_stack **out, struct dse_err *e)
{
    const struct hw_system *sys = x->sys[s];
    const struct hw_device *d = &sys->dev[eval_default_device(sys)];
    if (!strcmp(name, "default"))
        name = d->software[0] ? d->software : "none";
    char key[HW_NAME_LEN + 64];
    snprintf(key, sizeof key, "%s/%s", x->sys_name[s], name);
    for (int i = 0; i < x->n_sw; i++)
        if (!strcmp(x->sw_key[i], key))
            return *out = &x->sw[i], DSE_OK;
    if (x->n_sw == 64)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "more than 64 system x stack pairs in the corpus");
    int rc = pass_load_named(name, x->sys_path[s], &x->sw[x->n_sw], e);
    if (rc)
        return rc;
    dse_strlcpy(x->sw_key[x->n_sw], key, sizeof x->sw_key[0]);
    *out = &x->sw[x->n_sw++];
    return DSE_OK;
}

static int get_wl(struct pctx *x, const char *name, const struct wl_model **out, struct dse_err *e)
{
    for (int i = 0; i < x->n_wl; i++)
        if (!strcmp(x->wl_name[i], name))
            return *out = &x->wl[i], DSE_OK;
    if (x->n_wl == 96)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "more than 96 workloads in the corpus");
    static const char *const ext[] = {".json", ".csv", NULL};
    char path[1024];
    int rc = cli_resolve("workload", "models", name, ext, path, sizeof path, e);
    if (rc || (rc = wl_load_file(path, &x->wl[x->n_wl], e)))
        return rc;
    dse_strlcpy(x->wl_name[x->n_wl], name, sizeof x->wl_name[0]);
    dse_strlcpy(x->wl_path[x->n_wl], path, sizeof x->wl_path[0]);
    *out = &x->wl[x->n_wl++];
    return DSE_OK;
}

/* Refuses an output (option opt) that is a file this run read: a corpus file (each case's of pc, or
 * the one file given), or a hwdesc or workload of x; checked before anything is written. */
static int out_not_read(const char *out, const char *opt, const struct pctx *x, const struct pcorpus *pc,
                        const char *corpus_file, struct dse_err *e)
{
    int cap = x->n_sys + x->n_wl + (pc ? pc->n : 0) + 1, n = 0;
    const char **in = malloc(sizeof *in * (size_t)cap), **what = malloc(sizeof *what * (size_t)cap);
    if (!in || !what) {
        free(in);
        free(what);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    for (int i = 0; i < x->n_sys; i++)
        in[n] = x->sys_path[i], what[n++] = "a hwdesc";
    for (int i = 0; i < x->n_wl; i++)
        in[n] = x->wl_path[i], what[n++] = "a workload";
    for (int i = 0; pc && i < pc->n; i++)
        if (!i || strcmp(pc->c[i].file, pc->c[i - 1].file)) /* a file's cases are adjacent */
            in[n] = pc->c[i].file, what[n++] = "a file of the published corpus";
    if (corpus_file)
        in[n] = corpus_file, what[n++] = "the corpus";
    int rc = out_file_not_input(out, opt, in, what, n, 0, e);
    free(in);
    free(what);
    return rc;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The corpus: every .csv of dir (sorted), or the one file given. */
/* The CSV files of a corpus: one given file, or the sorted .csv files of its folder (at most 256). */
struct corpus_list {
    char path[256][600];
    const char *p[256];
    int n;
};

/* *out (malloc'd; free it): where itself when it names a .csv file, else the .csv files of where/sub
 * (where: --corpus; sub NULL: where itself), or of dflt under the data directory without --corpus. */
static int corpus_list_of(const char *where, const char *sub, const char *dflt, struct corpus_list **out,
                          struct dse_err *e)
{
    struct corpus_list *cl = calloc(1, sizeof *cl);
    if (!(*out = cl))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    if (where && strstr(where, ".csv")) {
        cl->p[cl->n++] = where;
        return DSE_OK;
    }
    char dir[540];
    if (where && snprintf(dir, sizeof dir, "%s%s%s", where, sub ? "/" : "", sub ? sub : "") >= (int)sizeof dir)
        return dse_err_set(e, DSE_EINPUT, NULL, "--corpus", "a folder path of more than %zu bytes", sizeof dir - 1);
    if (!where)
        cli_data_dir(dflt, dir, sizeof dir);
    DIR *d = opendir(dir);
    if (!d)
        return dse_err_set(e, DSE_EINPUT, dir, NULL, "cannot open the corpus folder");
    char *names[256];
    int k = 0, rc = DSE_OK;
    struct dirent *de;
    while ((de = readdir(d)) && k < 256) {
        size_t l = strlen(de->d_name);
        if (l > 4 && !strcmp(de->d_name + l - 4, ".csv") && de->d_name[0] != '.' && (names[k] = strdup(de->d_name)))
            k++;
    }
    closedir(d);
    qsort(names, (size_t)k, sizeof *names, cmp_str);
    for (int i = 0; i < k; i++) {
        if (snprintf(cl->path[i], sizeof cl->path[i], "%s/%s", dir, names[i]) >= (int)sizeof cl->path[i] && !rc)
            rc = dse_err_set(e, DSE_EINPUT, dir, NULL, "corpus path of more than %zu bytes", sizeof cl->path[i] - 1);
        cl->p[i] = cl->path[i];
        free(names[i]);
    }
    cl->n = k;
    if (!rc && !k)
        rc = dse_err_set(e, DSE_EINPUT, dir, NULL, "no .csv files");
    return rc;
}

static int load_corpus(const char *where, struct pcorpus *pc, struct dse_err *e)
{
    struct corpus_list *cl;
    int rc = corpus_list_of(where, NULL, "validate/published", &cl, e);
    if (!rc)
        rc = pcorpus_load(cl->p, cl->n, pc, e);
    free(cl);
    return rc;
}

/* Predicts every case (of device `only` when given) with the stacks as the cases name them, or
 * each device's own with software "default". */
static int predict_all(struct pcorpus *pc, struct pctx *x, const char *only, const char *software, enum fidelity f,
                       struct dse_err *e)
{
    struct progress pg;
    progress_begin(&pg, 1, "dse: published cases", "cases", pc->n);
    for (int i = 0; i < pc->n; i++) {
        struct pcase *c = &pc->c[i];
        progress_step(&pg, i);
        c->ok = 0;
        if (only && strcmp(c->device, only)) {
            snprintf(c->reason, sizeof c->reason, "not selected");
            continue;
        }
        int s = 0, rc;
        const struct sw_stack *sw = NULL;
        const struct wl_model *m = NULL;
        char where[DSE_PATH_LEN + 96];
        snprintf(where, sizeof where, "%s line %d (%s)", c->file, c->line, c->id);
        if ((rc = get_sys(x, c->device, &s, e)) || (rc = get_sw(x, s, software ? software : c->software, &sw, e)) ||
            (!c->is_kernel && (rc = get_wl(x, c->workload, &m, e))) || (rc = pcase_predict(c, x->sys[s], m, sw, f, e))) {
            char msg[sizeof e->msg];
            dse_strlcpy(msg, e->msg, sizeof msg);
            progress_end(&pg, 0);
            return dse_err_set(e, rc, NULL, NULL, "%s: %s", where, msg);
        }
    }
    progress_end(&pg, 0);
    return DSE_OK;
}

static int sel_device(const struct pcase *c, const void *ctx) { return !strcmp(c->device, (const char *)ctx); }
static int sel_heldout(const struct pcase *c, const void *ctx) { return c->heldout == *(const int *)ctx; }
static int sel_device_half(const struct pcase *c, const void *ctx)
{
    const char *const *v = ctx;
    return !strcmp(c->device, v[0]) && c->heldout == (v[1][0] == 'h');
}
static int sel_class_half(const struct pcase *c, const void *ctx)
{
    const int *v = ctx;
    return c->dev_class == v[0] && (v[1] < 0 || c->heldout == v[1]);
}
static int sel_class_kind(const struct pcase *c, const void *ctx)
{
    const int *v = ctx;
    return c->heldout && c->dev_class == v[0] && (v[1] < 0 || (int)c->kind == v[1]);
}

static void stats_json(cJSON *o, const char *key, const struct pstats *s)
{
    cJSON *x = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(x, "n", s->n);
    if (!s->n)
        return;
    cJSON_AddNumberToObject(x, "mape_pct", s->mape_pct);
    cJSON_AddNumberToObject(x, "within20_pct", s->within20_pct);
    cJSON_AddNumberToObject(x, "within25_pct", s->within25_pct);
    cJSON_AddNumberToObject(x, "time_error_p10_pct", s->p10_pct);
    cJSON_AddNumberToObject(x, "time_error_median_pct", s->median_pct);
    cJSON_AddNumberToObject(x, "time_error_p90_pct", s->p90_pct);
}

static int show_half = -1; /* --half: 0 fit only, 1 held-out only, -1 all (set once, before printing) */

static void stats_line(const char *label, const struct pstats *all, const struct pstats *fit, const struct pstats *held)
{
    if (show_half == 0) {
        if (fit->n)
            printf("  %-30s %5.1f%% (%d, %3.0f%% <=20%%)\n", label, fit->mape_pct, fit->n, fit->within20_pct);
        return;
    }
    char a[64] = "-", f[64] = "-", h[64] = "-";
    if (all->n)
        snprintf(a, sizeof a, "%5.1f%% (%d, %3.0f%% <=20%%)", all->mape_pct, all->n, all->within20_pct);
    if (fit->n)
        snprintf(f, sizeof f, "%5.1f%% (%d)", fit->mape_pct, fit->n);
    if (held->n)
        snprintf(h, sizeof h, "%5.1f%% (%d, %3.0f%% <=25%%)", held->mape_pct, held->n, held->within25_pct);
    printf("  %-30s %-28s %-16s %s\n", label, a, f, h);
}

/* Writes the error bars of every device class and workload kind with held-out cases to path, as JSON:
 * what dse eval and dse sweep show beside a prediction (eval.h: eval_error_bars). */
static int write_error_bars(const char *path, const struct pcorpus *pc, const char *software, enum fidelity tier,
                            struct dse_err *e)
{
    cJSON *o = cJSON_CreateObject(), *arr;
    char today[16];
    cli_today(today, sizeof today);
    cJSON_AddStringToObject(o, "schema", "dse-error-bars-1");
    cJSON_AddStringToObject(o, "tier", fidelity_names[tier]);
    char src[400];
    snprintf(src, sizeof src,
             "written by dse validate --published --write-error-bars on %s: the 10th and 90th percentile of "
             "predicted / measured time - 1 over the held-out cases of validate/published (stacks: %s)",
             today, software ? software : "each case's");
    cJSON_AddStringToObject(o, "source", src);
    arr = cJSON_AddArrayToObject(o, "classes");
    for (int cls = 0; cls < HW_CLASS_COUNT; cls++)
        for (int k = -1; k < PK_COUNT; k++) {
            int v[2] = {cls, k};
            struct pstats s;
            pstats_of(pc->c, pc->n, sel_class_kind, v, &s);
            if (s.n < EB_MIN_CASES) /* too few for a percentile */
                continue;
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "class", hw_class_names[cls]);
            cJSON_AddStringToObject(x, "kind", k < 0 ? "all" : pkind_names[k]);
            cJSON_AddNumberToObject(x, "n", s.n);
            cJSON_AddNumberToObject(x, "low_pct", round(10 * s.p10_pct) / 10);
            cJSON_AddNumberToObject(x, "high_pct", round(10 * s.p90_pct) / 10);
            cJSON_AddNumberToObject(x, "mape_pct", round(10 * s.mape_pct) / 10);
            cJSON_AddItemToArray(arr, x);
        }
    return cli_write_json(o, path, 0, e);
}

/* The multi-device corpus: --corpus FILE.csv, else CORPUS/multi-device/cases.csv (CORPUS: --corpus or
 * validate/published). */
static void sub_corpus_path(const char *corpus, const char *sub, char *path, size_t n)
{
    if (corpus && strstr(corpus, ".csv"))
        dse_strlcpy(path, corpus, n);
    else
        snprintf(path, n, "%s/%s/cases.csv", corpus ? corpus : "validate/published", sub);
}

static void multi_corpus_path(const char *corpus, char *path, size_t n)
{
    sub_corpus_path(corpus, "multi-device", path, n);
}

/* One predicted (or refused) case of a corpus as the reports show it: kind indexes the report's kinds. */
struct vrow {
    const char *id, *metric, *reason;
    long long devices;
    double value, predicted, error;
    int heldout, ok, kind;
    const char *perf_metric; /* the performance measured with the figure (the power corpus), NULL: none */
    double perf_value, perf_predicted;
};

/* MAPE and the share within +-25 % of the predicted rows of one half (-1: both) and kind (-1: all). */
static void vstats(const struct vrow *c, int n, int half, int kind, int *cnt, double *mape, double *w25)
{
    int k = 0, in = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        if (!c[i].ok || (half >= 0 && c[i].heldout != half) || (kind >= 0 && c[i].kind != kind))
            continue;
        k++;
        sum += fabs(c[i].error);
        in += fabs(c[i].error) <= 0.25;
    }
    *cnt = k;
    *mape = k ? 100 * sum / k : NAN;
    *w25 = k ? 100.0 * in / k : NAN;
}

/* The report of a corpus's rows: a JSON object (cases, and per kind x half statistics) or a table and
 * a MAPE summary; kinds[0..nk) name the kinds, "overall" (all) is added. */
static void vrows_report(const struct vrow *c, int n, int json, const char *head, const char *const *kinds, int nk)
{
    int cnt;
    double mape, w25;
    if (json) {
        cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "cases"), *st;
        for (int i = 0; i < n; i++) {
            cJSON *k = cJSON_CreateObject();
            cJSON_AddStringToObject(k, "id", c[i].id);
            cJSON_AddNumberToObject(k, "devices", (double)c[i].devices);
            cJSON_AddStringToObject(k, "kind", kinds[c[i].kind]);
            cJSON_AddStringToObject(k, "metric", c[i].metric);
            cJSON_AddNumberToObject(k, "measured", c[i].value);
            cJSON_AddBoolToObject(k, "heldout", c[i].heldout);
            if (c[i].ok) {
                cJSON_AddNumberToObject(k, "predicted", c[i].predicted);
                cJSON_AddNumberToObject(k, "error_pct", 100 * c[i].error);
            } else {
                cJSON_AddStringToObject(k, "reason", c[i].reason);
            }
            if (c[i].perf_metric) {
                cJSON *pf = cJSON_AddObjectToObject(k, "perf");
                cJSON_AddStringToObject(pf, "metric", c[i].perf_metric);
                cJSON_AddNumberToObject(pf, "measured", c[i].perf_value);
                if (c[i].ok && isfinite(c[i].perf_predicted)) {
                    cJSON_AddNumberToObject(pf, "predicted", c[i].perf_predicted);
                    cJSON_AddNumberToObject(pf, "error_pct", 100 * (c[i].perf_predicted / c[i].perf_value - 1));
                }
            }
            cJSON_AddItemToArray(arr, k);
        }
        for (int kd = -1; kd < nk; kd++)
            for (int h = -1; h <= 1; h++) {
                char key[48];
                snprintf(key, sizeof key, "%s_%s", kd < 0 ? "all" : kinds[kd], h < 0 ? "all" : h ? "heldout" : "fit");
                vstats(c, n, h, kd, &cnt, &mape, &w25);
                st = cJSON_AddObjectToObject(o, key);
                cJSON_AddNumberToObject(st, "n", cnt);
                if (cnt) {
                    cJSON_AddNumberToObject(st, "mape_pct", mape);
                    cJSON_AddNumberToObject(st, "within25_pct", w25);
                }
            }
        char *txt = ju_print(o, 1);
        cJSON_Delete(o);
        if (txt)
            puts(txt);
        free(txt);
        return;
    }
    int pred = 0;
    for (int i = 0; i < n; i++)
        pred += c[i].ok;
    printf("%s, %d predicted\n\n", head, pred);
    int perf = 0;
    for (int i = 0; i < n; i++)
        perf |= c[i].perf_metric != NULL;
    printf("%-46s %-9s %6s %-22s %12s %12s %8s%s\n", "case", "half", "devs", "metric", "measured", "predicted", "error",
           perf ? "   performance at the same time: measured, predicted (error)" : "");
    for (int i = 0; i < n; i++) {
        if (!c[i].ok) {
            printf("%-46.46s %-9s %6lld %-22s %12.5g %12s %8s %s\n", c[i].id, c[i].heldout ? "held-out" : "fit",
                   c[i].devices, c[i].metric, c[i].value, "-", "-", c[i].reason);
            continue;
        }
        printf("%-46.46s %-9s %6lld %-22s %12.5g %12.5g %+7.1f%%", c[i].id, c[i].heldout ? "held-out" : "fit",
               c[i].devices, c[i].metric, c[i].value, c[i].predicted, 100 * c[i].error);
        if (c[i].perf_metric && isfinite(c[i].perf_predicted))
            printf("   %s %.5g, %.5g (%+.1f%%)", c[i].perf_metric, c[i].perf_value, c[i].perf_predicted,
                   100 * (c[i].perf_predicted / c[i].perf_value - 1));
        printf("\n");
    }
    int w = 12; /* the kinds' column: as wide as the longest (a device's hwdesc name) */
    for (int kd = 0; kd < nk; kd++)
        if ((int)strlen(kinds[kd]) > w)
            w = (int)strlen(kinds[kd]);
    printf("\n  %-*s %-26s %-26s %s\n", w, "MAPE", "all (n, within +-25 %)", "fit (n, within +-25 %)",
           "held-out (n, within +-25 %)");
    for (int kd = 0; kd <= nk; kd++) {
        printf("  %-*s", w, kd < nk ? kinds[kd] : "overall");
        for (int h = -1; h <= 1; h++) {
            vstats(c, n, h, kd < nk ? kd : -1, &cnt, &mape, &w25);
            char cell[40];
            if (cnt)
                snprintf(cell, sizeof cell, "%.1f%% (%d, %.0f%%)", mape, cnt, w25);
            else
                snprintf(cell, sizeof cell, "- (0)");
            printf(" %-26s", cell);
        }
        printf("\n");
    }
}

/* One corpus case: its system, stack and workload resolved through the cache, then predicted by fn;
 * an error names the corpus file and the case. */
typedef int (*case_fn)(void *c, const struct hw_system *node, const struct wl_model *m, const struct sw_stack *sw,
                       struct dse_err *e);
static int predict_case(struct pctx *x, const char *path, const char *id, const char *system, const char *software,
                        const char *workload, case_fn fn, void *c, struct dse_err *e)
{
    int si, rc;
    const struct sw_stack *sw;
    const struct wl_model *m;
    if ((rc = get_sys(x, system, &si, e)) || (rc = get_sw(x, si, software, &sw, e)) ||
        (rc = get_wl(x, workload, &m, e)) || (rc = fn(c, x->sys[si], m, sw, e))) {
        char msg[sizeof e->msg];
        dse_strlcpy(msg, e->msg, sizeof msg);
        rc = dse_err_set(e, rc, path, NULL, "%s: %s", id, msg);
    }
    return rc;
}

static int mcase_fn(void *c, const struct hw_system *node, const struct wl_model *m, const struct sw_stack *sw,
                    struct dse_err *e)
{
    return mcase_predict(c, node, m, sw, e);
}

/* A serving case and the trace standing for its lengths' dataset (none: NULL). */
struct scase_arg {
    struct scase *c;
    const struct serve_req *lengths;
    int64_t n_lengths;
};

static int scase_fn(void *arg, const struct hw_system *node, const struct wl_model *m, const struct sw_stack *sw,
                    struct dse_err *e)
{
    struct scase_arg *a = arg;
    return scase_predict(a->c, node, m, sw, a->lengths, a->n_lengths, e);
}

/* The shipped traces the serving cases' datasets stand for, each loaded once. */
struct lengths_cache {
    int n;
    const char *file[4];
    char path[4][1024];
    struct serve_req *req[4];
    int64_t n_req[4];
};

static int lengths_of(struct lengths_cache *lc, const struct scase *c, struct scase_arg *a, struct dse_err *e)
{
    const char *file = scase_lengths_file(c);
    a->lengths = NULL;
    a->n_lengths = 0;
    if (!file)
        return DSE_OK;
    int i = 0;
    while (i < lc->n && strcmp(lc->file[i], file))
        i++;
    if (i == lc->n) {
        if (lc->n == 4)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "more than 4 length traces");
        int rc = cli_resolve("lengths", "models/traces", file, NULL, lc->path[i], sizeof lc->path[i], e);
        if (rc || (rc = serve_trace_load(lc->path[i], 1000000, &lc->req[i], &lc->n_req[i], e)))
            return rc;
        lc->file[lc->n++] = file;
    }
    a->lengths = lc->req[i];
    a->n_lengths = lc->n_req[i];
    return DSE_OK;
}

/* dse validate --published --multi-device: the multi-device corpus predicted case by case. */
static int validate_multi(const struct cli_opt *opts)
{
    struct dse_err e;
    dse_err_clear(&e);
    const char *corpus = cli_get(opts, "corpus");
    char path[1100];
    multi_corpus_path(corpus, path, sizeof path);
    struct mcase *c = NULL;
    struct vrow *v = NULL;
    int n = 0, rc;
    struct pctx *x = calloc(1, sizeof *x);
    if (!x)
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    if ((rc = mcorpus_load(path, &c, &n, &e)))
        goto out;
    struct progress pg;
    progress_begin(&pg, 1, "dse validate: multi-device cases", "cases", n);
    for (int i = 0; i < n; i++) {
        progress_step(&pg, i);
        if ((rc = predict_case(x, path, c[i].id, c[i].system, c[i].software, c[i].workload, mcase_fn, &c[i], &e))) {
            progress_end(&pg, 0);
            goto out;
        }
    }
    progress_end(&pg, 0);
    if (!(v = calloc((size_t)n + 1, sizeof *v))) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        v[i] = (struct vrow){c[i].id, mmetric_name(c[i].metric), c[i].reason, c[i].devices, c[i].value,
                             c[i].predicted, c[i].error, c[i].heldout, c[i].ok, c[i].phase == PH_TRAIN, NULL, 0, 0};
    static const char *const kinds[] = {"inference", "train"};
    char head[1300];
    snprintf(head, sizeof head, "dse validate --published --multi-device: %d cases of %s, analytical tier, each case's "
             "layout and stack", n, path);
    vrows_report(v, n, cli_get(opts, "json") != NULL, head, kinds, 2);
out:
    if (rc)
        dse_err_print(stderr, &e);
    free(v);
    free(c);
    pctx_free(x);
    return rc;
}

/* dse validate --published --serving: the serving corpus, each run simulated by dse serve's model. */
static int validate_serving(const struct cli_opt *opts)
{
    struct dse_err e;
    dse_err_clear(&e);
    char path[1100];
    sub_corpus_path(cli_get(opts, "corpus"), "serving", path, sizeof path);
    struct scase *c = NULL;
    struct vrow *v = NULL;
    int n = 0, rc;
    struct lengths_cache lc;
    memset(&lc, 0, sizeof lc);
    struct pctx *x = calloc(1, sizeof *x);
    if (!x)
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    if ((rc = scorpus_load(path, &c, &n, &e)))
        goto out;
    struct progress pg;
    progress_begin(&pg, 1, "dse validate: serving cases", "cases", n);
    for (int i = 0; i < n; i++) {
        progress_step(&pg, i);
        struct scase_arg a = {&c[i], NULL, 0};
        if ((rc = lengths_of(&lc, &c[i], &a, &e)) ||
            (rc = predict_case(x, path, c[i].id, c[i].system, c[i].software, c[i].workload, scase_fn, &a, &e))) {
            progress_end(&pg, 0);
            goto out;
        }
    }
    progress_end(&pg, 0);
    if (!(v = calloc((size_t)n + 1, sizeof *v))) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++)
        v[i] = (struct vrow){c[i].id, smetric_name(c[i].metric), c[i].reason, c[i].devices, c[i].value,
                             c[i].predicted, c[i].error, c[i].heldout, c[i].ok, (int)smetric_kind(c[i].metric), NULL, 0, 0};
    char head[1300];
    snprintf(head, sizeof head, "dse validate --published --serving: %d cases of %s, each run simulated (dse serve's "
             "model: analytical iteration costs, the case's scheduler, seed 1)", n, path);
    vrows_report(v, n, cli_get(opts, "json") != NULL, head, skind_names, SK_COUNT);
out:
    if (rc)
        dse_err_print(stderr, &e);
    free(v);
    free(c);
    for (int i = 0; i < lc.n; i++)
        free(lc.req[i]);
    pctx_free(x);
    return rc;
}

/* The power corpus: --corpus FILE.csv, else the .csv files of CORPUS/power (CORPUS: --corpus or
 * validate/published); *files (may be NULL) keeps the list of what was read (free it). */
static int load_power(const char *where, struct wcase **c, int *n, struct corpus_list **files, struct dse_err *e)
{
    struct corpus_list *cl;
    int rc = corpus_list_of(where, "power", "validate/published/power", &cl, e);
    if (!rc)
        rc = wcorpus_load(cl->p, cl->n, c, n, e);
    if (files && !rc)
        *files = cl;
    else
        free(cl);
    return rc;
}

/* One power case: its device's hwdesc, stack and (but for idle and kernel cases) workload through the
 * cache, then predicted; an error names the corpus file and the case. */
static int predict_power(struct pctx *x, struct wcase *c, struct dse_err *e)
{
    int si, rc;
    const struct sw_stack *sw;
    const struct wl_model *m = NULL;
    if ((rc = get_sys(x, c->device, &si, e)) || (rc = get_sw(x, si, c->software, &sw, e)) ||
        (!c->idle && !c->is_kernel && (rc = get_wl(x, c->workload, &m, e))) || (rc = wcase_predict(c, x->sys[si], m, sw, e))) {
        char msg[sizeof e->msg];
        dse_strlcpy(msg, e->msg, sizeof msg);
        char where[32];
        snprintf(where, sizeof where, "line %d", c->line);
        rc = dse_err_set(e, rc, c->file, where, "%s: %s", c->id, msg);
    }
    return rc;
}

/* dse validate --published --power: the power corpus, each case's power predicted by the power model;
 * MAPE per device and half. */
static int validate_power(const struct cli_opt *opts)
{
    struct dse_err e;
    dse_err_clear(&e);
    struct wcase *c = NULL;
    struct vrow *v = NULL;
    const char **devs = NULL;
    int n = 0, nd = 0, rc;
    const char *only = cli_get(opts, "hw");
    struct pctx *x = calloc(1, sizeof *x);
    if (!x)
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    if ((rc = load_power(cli_get(opts, "corpus"), &c, &n, NULL, &e)))
        goto out;
    if (!(v = calloc((size_t)n + 1, sizeof *v)) || !(devs = calloc((size_t)n + 1, sizeof *devs))) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    int shown = 0;
    struct progress pg;
    progress_begin(&pg, 1, "dse validate: power cases", "cases", n);
    for (int i = 0; i < n; i++) {
        progress_step(&pg, i);
        if (only && strcmp(c[i].device, only))
            continue;
        if ((rc = predict_power(x, &c[i], &e))) {
            progress_end(&pg, 0);
            goto out;
        }
        int d = 0;
        while (d < nd && strcmp(devs[d], c[i].device))
            d++;
        if (d == nd)
            devs[nd++] = c[i].device;
        v[shown++] = (struct vrow){c[i].id, wmetric_names[c[i].metric], c[i].reason, c[i].count, c[i].value,
                                   c[i].predicted, c[i].error, c[i].heldout, c[i].ok, d,
                                   c[i].perf_metric >= 0 ? pmetric_names[c[i].perf_metric] : NULL, c[i].perf_value,
                                   c[i].perf_predicted};
    }
    progress_end(&pg, 0);
    if (only && !shown) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--hw", "no power case ran on '%s'", only);
        goto out;
    }
    char head[1300];
    snprintf(head, sizeof head, "dse validate --published --power: %d cases%s%s of %s, analytical tier, each case's "
             "stack; devs: the devices the figure covers", shown, only ? " on " : "", only ? only : "",
             cli_get(opts, "corpus") ? cli_get(opts, "corpus") : "validate/published/power");
    vrows_report(v, shown, cli_get(opts, "json") != NULL, head, devs, nd);
out:
    if (rc)
        dse_err_print(stderr, &e);
    free(v);
    free(devs);
    free(c);
    pctx_free(x);
    return rc;
}

int cli_validate_published(const struct cli_opt *opts)
{
    if (cli_get(opts, "power"))
        return validate_power(opts);
    if (cli_get(opts, "serving"))
        return validate_serving(opts);
    if (cli_get(opts, "multi-device"))
        return validate_multi(opts);
    struct dse_err e;
    struct pcorpus pc;
    int rc;
    enum fidelity f = FID_ANALYTICAL;
    dse_err_clear(&e);
    struct pctx *x = calloc(1, sizeof *x);
    if (!x)
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    const char *only = cli_get(opts, "hw"), *software = cli_get(opts, "software"), *half = cli_get(opts, "half");
    show_half = -1;
    if (half && strcmp(half, "all")) {
        if (strcmp(half, "fit") && strcmp(half, "heldout")) {
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--half", "expected fit, heldout or all, got '%s'", half);
            dse_err_print(stderr, &e);
            free(x);
            return rc;
        }
        show_half = half[0] == 'h';
    }
    if (only && cli_get(opts, "write-error-bars")) { /* the bars are of whole classes: every device predicted */
        dse_err_set(&e, DSE_EINPUT, NULL, "--write-error-bars", "goes without --hw: error bars come from every "
                                                                 "held-out case of a device class");
        dse_err_print(stderr, &e);
        free(x);
        return DSE_EINPUT;
    }
    if ((cli_get(opts, "fidelity") && (rc = cli_fidelity(cli_get(opts, "fidelity"), &f, &e))) ||
        (rc = load_corpus(cli_get(opts, "corpus"), &pc, &e))) {
        dse_err_print(stderr, &e);
        free(x);
        return rc;
    }
    if (only) { /* a device the corpus has, by its hwdesc name */
        int any = 0;
        for (int i = 0; i < pc.n; i++)
            any |= !strcmp(pc.c[i].device, only);
        if (!any) {
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--hw", "no published case ran on '%s'", only);
            goto out;
        }
    }
    if ((rc = predict_all(&pc, x, only, software, f, &e)) ||
        (cli_get(opts, "write-error-bars") &&
         (rc = out_not_read(cli_get(opts, "write-error-bars"), "--write-error-bars", x, &pc, NULL, &e))))
        goto out;
    int zero = 0, one = 1;
    struct pstats all, fit, held;
    pstats_of(pc.c, pc.n, NULL, NULL, &all);
    pstats_of(pc.c, pc.n, sel_heldout, &zero, &fit);
    pstats_of(pc.c, pc.n, sel_heldout, &one, &held);
    if (cli_get(opts, "json")) {
        cJSON *o = cJSON_CreateObject(), *cases = cJSON_AddArrayToObject(o, "cases"), *per = NULL;
        cJSON_AddStringToObject(o, "software", software ? software : "each case's");
        cJSON_AddStringToObject(o, "model_tier", fidelity_names[f]);
        for (int i = 0; i < pc.n; i++) {
            const struct pcase *c = &pc.c[i];
            if ((only && strcmp(c->device, only)) || (show_half >= 0 && c->heldout != show_half))
                continue;
            cJSON *k = cJSON_CreateObject();
            cJSON_AddStringToObject(k, "id", c->id);
            cJSON_AddStringToObject(k, "device", c->device);
            cJSON_AddStringToObject(k, "software", software ? software : c->software);
            cJSON_AddStringToObject(k, "workload", c->workload);
            cJSON_AddStringToObject(k, "kind", pkind_names[c->kind]);
            if (c->ok)
                cJSON_AddStringToObject(k, "class", hw_class_names[c->dev_class]);
            cJSON_AddStringToObject(k, "metric", pmetric_names[c->metric]);
            cJSON_AddNumberToObject(k, "measured", c->value);
            cJSON_AddBoolToObject(k, "heldout", c->heldout);
            if (c->ok) {
                cJSON_AddNumberToObject(k, "predicted", c->predicted);
                cJSON_AddNumberToObject(k, "error_pct", 100 * c->error);
                cJSON_AddNumberToObject(k, "time_error_pct", 100 * pcase_time_error(c));
            } else {
                cJSON_AddStringToObject(k, "reason", c->reason);
            }
            cJSON_AddStringToObject(k, "source", c->source);
            cJSON_AddItemToArray(cases, k);
        }
        stats_json(o, "all", &all);
        stats_json(o, "fit", &fit);
        stats_json(o, "heldout", &held);
        per = cJSON_AddObjectToObject(o, "devices");
        for (int s = 0; s < x->n_sys; s++) {
            cJSON *d = cJSON_AddObjectToObject(per, x->sys_name[s]);
            struct pstats ds;
            const char *v0[2] = {x->sys_name[s], "f"}, *v1[2] = {x->sys_name[s], "h"};
            pstats_of(pc.c, pc.n, sel_device, x->sys_name[s], &ds);
            stats_json(d, "all", &ds);
            pstats_of(pc.c, pc.n, sel_device_half, v0, &ds);
            stats_json(d, "fit", &ds);
            pstats_of(pc.c, pc.n, sel_device_half, v1, &ds);
            stats_json(d, "heldout", &ds);
        }
        per = cJSON_AddObjectToObject(o, "classes");
        for (int cls = 0; cls < HW_CLASS_COUNT; cls++) {
            int v[2] = {cls, 1};
            struct pstats cs;
            pstats_of(pc.c, pc.n, sel_class_half, v, &cs);
            if (cs.n)
                stats_json(per, hw_class_names[cls], &cs);
        }
        char *txt = ju_print(o, 1);
        cJSON_Delete(o);
        if (txt)
            puts(txt);
        free(txt);
    } else {
        printf("dse validate --published: %d cases%s%s, %s tier, software %s\n\n", all.n, only ? " on " : "",
               only ? only : "", fidelity_names[f], software ? software : "as each case names it");
        printf("%-46s %-12s %-16s %12s %12s %8s %s\n", "case", "half", "metric", "measured", "predicted", "error",
               "kind");
        for (int i = 0; i < pc.n; i++) {
            const struct pcase *c = &pc.c[i];
            if ((only && strcmp(c->device, only)) || (show_half >= 0 && c->heldout != show_half))
                continue;
            if (!c->ok) {
                printf("%-46.46s %-12s %-16s %12.5g %12s %8s %s: %s\n", c->id, c->heldout ? "held-out" : "fit",
                       pmetric_names[c->metric], c->value, "-", "-", pkind_names[c->kind], c->reason);
                continue;
            }
            printf("%-46.46s %-12s %-16s %12.5g %12.5g %+7.1f%% %s\n", c->id, c->heldout ? "held-out" : "fit",
                   pmetric_names[c->metric], c->value, c->predicted, 100 * c->error, pkind_names[c->kind]);
        }
        if (show_half == 0)
            printf("\n  %-30s %s\n", "MAPE", "fit (n, within +-20 %)");
        else
            printf("\n  %-30s %-28s %-16s %s\n", "MAPE", "all (n, within +-20 %)", "fit (n)",
                   "held-out (n, within +-25 %)");
        for (int s = 0; s < x->n_sys; s++) {
            struct pstats ds, df, dh;
            const char *v0[2] = {x->sys_name[s], "f"}, *v1[2] = {x->sys_name[s], "h"};
            pstats_of(pc.c, pc.n, sel_device, x->sys_name[s], &ds);
            pstats_of(pc.c, pc.n, sel_device_half, v0, &df);
            pstats_of(pc.c, pc.n, sel_device_half, v1, &dh);
            stats_line(x->sys_name[s], &ds, &df, &dh);
        }
        for (int cls = 0; cls < HW_CLASS_COUNT; cls++) {
            int va[2] = {cls, -1}, vf[2] = {cls, 0}, vh[2] = {cls, 1};
            struct pstats cs, cf, ch;
            char label[48];
            pstats_of(pc.c, pc.n, sel_class_half, va, &cs);
            pstats_of(pc.c, pc.n, sel_class_half, vf, &cf);
            pstats_of(pc.c, pc.n, sel_class_half, vh, &ch);
            snprintf(label, sizeof label, "class %s", hw_class_names[cls]);
            if (cs.n)
                stats_line(label, &cs, &cf, &ch);
        }
        stats_line("overall", &all, &fit, &held);
    }
    if (cli_get(opts, "write-error-bars") && (rc = write_error_bars(cli_get(opts, "write-error-bars"), &pc, software, f, &e)))
        goto out;
out:
    if (rc)
        dse_err_print(stderr, &e);
    pcorpus_free(&pc);
    pctx_free(x);
    return rc;
}

/* Writes the calibrated device d (of the hwdesc at in) to out: its efficiency per class, main memory's
 * and decode kernels' bandwidth efficiency, its low-precision engines, its launch and per-step
 * overheads, with the fit's source and held-out error. Everything else of the file is kept. */
static int write_published(const char *in, const char *out, const struct hw_device *d, const char *src,
                           double heldout_mape, struct dse_err *e)
{
    cJSON *root, *dv;
    int rc = cli_hwdesc_device(in, d->name, &root, &dv, e);
    if (rc)
        return rc;
    cJSON *ef = cJSON_GetObjectItemCaseSensitive(dv, "efficiency");
    if (!ef)
        ef = cJSON_AddObjectToObject(dv, "efficiency");
    cJSON *pc = cJSON_CreateObject(), *pl = cJSON_GetObjectItemCaseSensitive(ef, "per_level");
    for (int k = 0; k < EC_COUNT; k++)
        cJSON_AddNumberToObject(pc, hw_eff_class_names[k], d->eff_class[k]);
    cJSON_DeleteItemFromObjectCaseSensitive(ef, "per_class");
    cJSON_AddItemToObject(ef, "per_class", pc);
    if (!pl)
        pl = cJSON_AddObjectToObject(ef, "per_level");
    cJSON_DeleteItemFromObjectCaseSensitive(pl, d->mem[d->n_mem - 1].name);
    cJSON_AddNumberToObject(pl, d->mem[d->n_mem - 1].name, d->eff_level[d->n_mem - 1]);
    cJSON *mc = cJSON_CreateObject(), *pp = cJSON_CreateObject();
    cJSON_AddNumberToObject(mc, "matmul_skinny", d->eff_mclass[EC_MATMUL_SKINNY]);
    cJSON_AddNumberToObject(mc, "attention_decode", d->eff_mclass[EC_ATTENTION_DECODE]);
    cJSON_DeleteItemFromObjectCaseSensitive(ef, "memory_per_class");
    cJSON_AddItemToObject(ef, "memory_per_class", mc);
    static const enum prec low[] = {P_FP8, P_INT8, P_INT4};
    for (size_t i = 0; i < sizeof low / sizeof low[0]; i++)
        cJSON_AddNumberToObject(pp, prec_names[low[i]], d->eff_prec[low[i]]);
    cJSON_DeleteItemFromObjectCaseSensitive(ef, "per_precision");
    cJSON_AddItemToObject(ef, "per_precision", pp);
    cJSON_DeleteItemFromObjectCaseSensitive(ef, "heldout_mape_pct");
    cJSON_AddNumberToObject(ef, "heldout_mape_pct", heldout_mape);
    cJSON_DeleteItemFromObjectCaseSensitive(ef, "source");
    cJSON_AddStringToObject(ef, "source", src);
    cJSON *ov = cJSON_GetObjectItemCaseSensitive(dv, "overhead");
    if (!ov)
        ov = cJSON_AddObjectToObject(dv, "overhead");
    cJSON_DeleteItemFromObjectCaseSensitive(ov, "per_op_us");
    cJSON_DeleteItemFromObjectCaseSensitive(ov, "per_step_us");
    cJSON_DeleteItemFromObjectCaseSensitive(ov, "per_request_us");
    cJSON_AddNumberToObject(ov, "per_op_us", d->per_op_s * 1e6);
    cJSON_AddNumberToObject(ov, "per_step_us", d->per_step_s * 1e6);
    cJSON_AddNumberToObject(ov, "per_request_us", d->per_request_s * 1e6);
    const cJSON *os = cJSON_GetObjectItemCaseSensitive(ov, "source");
    char osrc[2048];
    snprintf(osrc, sizeof osrc, "%s%s%s", cJSON_IsString(os) ? os->valuestring : "", cJSON_IsString(os) ? "; " : "",
             "per_op_us, per_step_us and per_request_us: see efficiency.source");
    cJSON_DeleteItemFromObjectCaseSensitive(ov, "source");
    cJSON_AddStringToObject(ov, "source", osrc);
    return cli_write_json(root, out, 1, e);
}

/* One predicted case's error (predicted / measured - 1) into a fit's loss: its squared log error (the same
 * whether the figure is a time or a rate) and the sums a MAPE comes from. */
static void err_add(double err, double *sum, double *ape, int *k)
{
    double l = log(1 + err);
    *sum += l * l;
    *ape += fabs(err);
    (*k)++;
}

/* Single-device case c predicted again under its release, after set(ctx, st) put a fit's trial terms on
 * st, the copy of the release's stack that x caches (the one every case of that system and release reads). */
static int pcase_repredict(struct pctx *x, struct pcase *c, void (*set)(void *ctx, struct sw_stack *st), void *ctx,
                           struct dse_err *e)
{
    int si, rc;
    const struct sw_stack *sw;
    const struct wl_model *wm = NULL;
    if ((rc = get_sys(x, c->device, &si, e)) || (rc = get_sw(x, si, c->software, &sw, e)) ||
        (!c->is_kernel && (rc = get_wl(x, c->workload, &wm, e))))
        return rc;
    set(ctx, (struct sw_stack *)sw);
    return pcase_predict(c, x->sys[si], wm, sw, FID_ANALYTICAL, e);
}

/* The factors a multi-device calibration fits, each the share of the architecture's kernel rate a kind of
 * case's kernels reach under one software release (what its framework adds: a training step's backward
 * and optimizer, an inference runtime's prefill or decode kernels): versions[].efficiency.training,
 * .prefill, .decode of the stack file. */
enum { FAC_TRAIN = SW_TRAIN, FAC_PREFILL = SW_PREFILL, FAC_DECODE = SW_DECODE, FAC_COUNT = SW_RUN_COUNT };
static const char *const mf_kind_name[2] = {"training", "inference"};

static int mcase_kind(const struct mcase *c) { return c->phase != PH_TRAIN; } /* 0 training, 1 inference */

static int phase_uses(enum wl_phase ph, int k)
{
    if (k == FAC_TRAIN)
        return ph == PH_TRAIN;
    return ph == PH_GENERATE || ph == (k == FAC_PREFILL ? PH_PREFILL : PH_DECODE);
}

static int mcase_uses(const struct mcase *c, int k) { return phase_uses(c->phase, k); }

/* A single-device case's factor: its phase's (a time to first token: the prefill's alone; a time per
 * output token, (latency - TTFT) / tokens, the decode's alone). */
static int pcase_uses(const struct pcase *c, int k)
{
    if (c->metric == PM_TTFT)
        return k == FAC_PREFILL;
    if (c->metric == PM_TPOT)
        return k == FAC_DECODE;
    return phase_uses(c->phase, k);
}

#define MF_MAX_RELEASES 8

/* Releases of one stack fitted together (--software NAME@VERSION[,...]). */
struct releases {
    int n;
    char rel[MF_MAX_RELEASES][SW_LABEL_LEN];
};

static int releases_has(const struct releases *r, const char *sw)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->rel[i], sw))
            return 1;
    return 0;
}

/* The versions[] entry of the stack file's tree root that release label (NAME@VERSION) names, or NULL. */
static cJSON *release_entry(cJSON *root, const char *label)
{
    const char *ver = strchr(label, '@') + 1;
    cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "versions"))
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "version");
        if (cJSON_IsString(nm) && !strcmp(nm->valuestring, ver))
            return it;
    }
    return NULL;
}

/* The releases fitted together and the cases that ran them. */
struct mfit {
    struct mcase *c;
    int n;
    struct pcorpus *pc; /* the single-device corpus: its cases of the releases are fitted too */
    struct releases rel;
    struct pctx *x;
    double f[FAC_COUNT];
    int failed; /* a prediction failed (the error in *e) */
    struct dse_err *e;
};

/* The factors under fit on st, the cache's own copy of a release's stack. */
static void mfit_set(void *ctx, struct sw_stack *st)
{
    const struct mfit *m = ctx;
    for (int f = 0; f < FAC_COUNT; f++)
        st->eff[f] = m->f[f];
}

/* The squared log time errors of the releases' predicted cases of one kind and half (-1: both) of one
 * corpus (which: 0 multi-device, 1 single-device, -1 both), re-predicted with the factors m->f set on
 * every loaded copy of the releases; returns the count (their MAPE in *mape), -1 on an error. */
static int mfit_cost(struct mfit *m, int kind, int half, int which, double *cost, double *mape)
{
    int k = 0;
    double sum = 0, ape = 0;
    for (int i = 0; m->pc && which != 0 && i < m->pc->n; i++) {
        struct pcase *c = &m->pc->c[i];
        if (!releases_has(&m->rel, c->software) || (c->phase != PH_TRAIN) != kind || c->is_kernel ||
            (half >= 0 && c->heldout != half))
            continue;
        if (pcase_repredict(m->x, c, mfit_set, m, m->e)) {
            m->failed = 1;
            return -1;
        }
        if (!c->ok)
            continue;
        err_add(c->error, &sum, &ape, &k);
    }
    for (int i = 0; which != 1 && i < m->n; i++) {
        struct mcase *c = &m->c[i];
        if (!releases_has(&m->rel, c->software) || mcase_kind(c) != kind || (half >= 0 && c->heldout != half))
            continue;
        int si;
        const struct sw_stack *sw;
        const struct wl_model *wm;
        if (get_sys(m->x, c->system, &si, m->e) || get_sw(m->x, si, c->software, &sw, m->e) ||
            get_wl(m->x, c->workload, &wm, m->e)) {
            m->failed = 1;
            return -1;
        }
        mfit_set(m, (struct sw_stack *)sw);
        if (mcase_predict(c, m->x->sys[si], wm, sw, m->e)) {
            m->failed = 1;
            return -1;
        }
        if (!c->ok)
            continue;
        err_add(c->error, &sum, &ape, &k);
    }
    *cost = sum;
    *mape = k ? 100 * ape / k : NAN;
    return k;
}

/* Golden-section search of cost(f, ctx) over log f in [log lo, log hi], 40 steps (cost's own failure
 * flag stops nothing: the caller checks it); the minimum rounded to three digits, as fits ship. */
static double golden_log(double lo, double hi, double (*cost)(double f, void *ctx), void *ctx)
{
    double a = log(lo), b = log(hi), g = (sqrt(5) - 1) / 2, x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = cost(exp(x1), ctx), f2 = cost(exp(x2), ctx);
    for (int it = 0; it < 40; it++) {
        if (f1 < f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            f1 = cost(exp(x1), ctx);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            f2 = cost(exp(x2), ctx);
        }
    }
    return floor(exp((a + b) / 2) * 1000 + 0.5) / 1000;
}

struct mfit_at {
    struct mfit *m;
    int kind, k;
};

static double mfit_cost_at(double f, void *ctx)
{
    struct mfit_at *a = ctx;
    double c = INFINITY, junk;
    a->m->f[a->k] = f;
    if (!a->m->failed)
        mfit_cost(a->m, a->kind, 0, -1, &c, &junk);
    return c;
}

/* Factor k fitted on the fit half of its kind, the others held: log f in [log 0.1, 0]. */
static void mfit_golden(struct mfit *m, int kind, int k)
{
    struct mfit_at a = {m, kind, k};
    m->f[k] = golden_log(0.1, 1, mfit_cost_at, &a);
}

/* note with its clause of kind replaced by text (the other clauses kept); malloc'd, NULL when out of memory */
static char *note_with_clause(const char *old, const char *clause, const char *text)
{
    size_t cap = strlen(old) + strlen(text) + 4, k = 0, len = strlen(clause);
    char *note = malloc(cap);
    if (!note)
        return NULL;
    for (const char *p = old; *p;) {
        const char *end = strstr(p, "; ");
        size_t cl = end ? (size_t)(end - p) : strlen(p);
        if (strncmp(p, clause, len)) {
            memcpy(note + k, p, cl);
            k += cl;
            memcpy(note + k, "; ", 2);
            k += 2;
        }
        p += cl + (end ? 2 : 0);
    }
    snprintf(note + k, cap - k, "%s", text);
    return note;
}

/* obj's "note" with its clause starting with key replaced by clause (the other clauses kept). */
static int set_note_clause(cJSON *obj, const char *key, const char *clause, struct dse_err *e)
{
    const cJSON *old = cJSON_GetObjectItemCaseSensitive(obj, "note");
    char *note = note_with_clause(cJSON_IsString(old) ? old->valuestring : "", key, clause);
    if (!note)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "note");
    cJSON *n = cJSON_AddStringToObject(obj, "note", note);
    free(note);
    return n ? DSE_OK : dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
}

/* The JSON file at path (a hwdesc, a stack file) as a tree (*root; NULL and an error when it does not parse). */
static int read_json_tree(const char *path, cJSON **root, struct dse_err *e)
{
    char *text;
    size_t len;
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &text, &len, e);
    if (rc)
        return rc;
    *root = cJSON_ParseWithLength(text, len);
    free(text);
    return *root ? DSE_OK : dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot parse it again (out of memory?)");
}

/* --software NAME@VERSION[,NAME@VERSION...]: up to MF_MAX_RELEASES releases of one stack into *m. */
static int parse_releases(const char *rels, struct releases *m, struct dse_err *e)
{
    int rc = cli_list_check("--software", rels, e);
    if (rc)
        return rc;
    char name0[SW_NAME_LEN] = "";
    for (const char *p = rels; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *at = memchr(p, '@', len);
        if (m->n == MF_MAX_RELEASES || len >= sizeof m->rel[0] || !at || at == p || at + 1 == p + len)
            return dse_err_set(e, DSE_EINPUT, NULL, "--software", "expected up to %d releases NAME@VERSION of one "
                               "stack, comma-separated, got '%s'", MF_MAX_RELEASES, rels);
        snprintf(m->rel[m->n], sizeof m->rel[0], "%.*s", (int)len, p);
        char nm[SW_NAME_LEN];
        snprintf(nm, sizeof nm, "%.*s", (int)(at - p), p);
        if (!name0[0])
            dse_strlcpy(name0, nm, sizeof name0);
        else if (strcmp(name0, nm))
            return dse_err_set(e, DSE_EINPUT, NULL, "--software", "'%s' and '%s' are releases of different stacks: "
                               "one stack file is written", m->rel[0], m->rel[m->n]);
        m->n++;
        p += len + (end ? 1 : 0);
    }
    return DSE_OK;
}

/* dse calibrate --published --multi-device --software NAME@VERSION[,NAME@VERSION...] --out FILE: the whole-run
 * factors (training; prefill and decode) that the fit-half cases which ran those releases of one stack
 * determine, on whatever systems they ran (at least two cases using a factor): training's alone, prefill's
 * and decode's together (coordinate descent: a generate case uses both); their held-out error before and
 * after; the stack file written with them in each release's versions[].efficiency. A software effect is
 * never fitted into a board: the hwdesc is not touched. A kind whose held-out error gets worse is not
 * written unless --force. */
static int calibrate_multi(const struct cli_opt *opts)
{
    struct dse_err e;
    dse_err_clear(&e);
    const char *rels = cli_get(opts, "software"), *out = cli_get(opts, "out"), *corpus = cli_get(opts, "corpus");
    struct mcase *c = NULL;
    int n = 0, rc;
    char path[1100], stack_path[DSE_PATH_LEN] = "";
    cJSON *root = NULL;
    struct pctx *x = calloc(1, sizeof *x);
    struct mfit m;
    memset(&m, 0, sizeof m);
    struct pcorpus pc;
    memset(&pc, 0, sizeof pc);
    if (!x)
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    if (cli_get(opts, "hw")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--hw", "a whole run's factor is its software release's, not a board's: "
                         "give --software NAME@VERSION (the releases the cases ran: dse validate --published "
                         "--multi-device lists them) and --out FILE for the stack file");
        goto out;
    }
    if (!rels || !out) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "calibrate --published --multi-device: --software NAME@VERSION[,...] "
                                                     "and --out FILE are required");
        goto out;
    }
    if ((rc = parse_releases(rels, &m.rel, &e)))
        goto out;
    multi_corpus_path(corpus, path, sizeof path);
    /* the single-device corpus beside it: none when --corpus names one multi-device file */
    if ((rc = mcorpus_load(path, &c, &n, &e)) || (!(corpus && strstr(corpus, ".csv")) && (rc = load_corpus(corpus, &pc, &e))))
        goto out;
    m.c = c;
    m.n = n;
    m.pc = &pc;
    m.x = x;
    m.e = &e;
    for (int f = 0; f < FAC_COUNT; f++)
        m.f[f] = 1;
    double junk, m0[2][2][2], m1[2][2][2]; /* [corpus: multi-device, single-device][kind][half] MAPE before, after */
    int cnt[2][2][2], uses[FAC_COUNT] = {0}, fitk[2] = {0}, ran = 0;
    for (int w = 0; w < 2; w++)
        for (int kind = 0; kind < 2; kind++)
            for (int h = 0; h < 2; h++)
                cnt[w][kind][h] = mfit_cost(&m, kind, h, w, &junk, &m0[w][kind][h]);
    if (m.failed) {
        rc = e.code ? e.code : DSE_ERUNTIME;
        goto out;
    }
    for (int i = 0; i < n; i++) {
        ran += releases_has(&m.rel, c[i].software);
        for (int k = 0; k < FAC_COUNT; k++)
            uses[k] += releases_has(&m.rel, c[i].software) && !c[i].heldout && c[i].ok && mcase_uses(&c[i], k);
    }
    for (int i = 0; i < pc.n; i++) {
        ran += releases_has(&m.rel, pc.c[i].software);
        for (int k = 0; k < FAC_COUNT; k++)
            uses[k] += releases_has(&m.rel, pc.c[i].software) && !pc.c[i].heldout && pc.c[i].ok &&
                       !pc.c[i].is_kernel && pcase_uses(&pc.c[i], k);
    }
    for (int i = 0; i < x->n_sw && !stack_path[0]; i++)
        if (releases_has(&m.rel, strchr(x->sw_key[i], '/') + 1))
            dse_strlcpy(stack_path, x->sw[i].path, sizeof stack_path);
    fitk[0] = uses[FAC_TRAIN] >= 2;
    fitk[1] = uses[FAC_PREFILL] >= 2 || uses[FAC_DECODE] >= 2;
    if (!fitk[0] && !fitk[1]) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--software", "'%s': %d cases of %s and the single-device corpus ran it, "
                         "%d predicted fit-half training ones and %d prefill and %d decode ones: a factor needs at least "
                         "2 to fit", rels, ran, path, uses[FAC_TRAIN], uses[FAC_PREFILL], uses[FAC_DECODE]);
        goto out;
    }
    if ((rc = out_not_read(out, "--out", x, &pc, path, &e))) /* nor a file of the single-device corpus */
        goto out;
    const char *in_stack[] = {stack_path}, *in_what[] = {"the stack file this run reads"};
    if (stack_path[0] && (rc = out_file_not_input(out, "--out", in_stack, in_what, 1, 0, &e)))
        goto out;
    if (fitk[0])
        mfit_golden(&m, 0, FAC_TRAIN);
    for (int round = 0; round < 4 && fitk[1]; round++) /* a generate case ties prefill to decode */
        for (int k = FAC_PREFILL; k <= FAC_DECODE; k++)
            if (uses[k] >= 2)
                mfit_golden(&m, 1, k);
    for (int w = 0; w < 2; w++)
        for (int kind = 0; kind < 2; kind++)
            for (int h = 0; h < 2; h++)
                mfit_cost(&m, kind, h, w, &junk, &m1[w][kind][h]);
    if (m.failed) {
        rc = e.code ? e.code : DSE_ERUNTIME;
        goto out;
    }
    static const char *const wname[2] = {"", "single-device "};
    printf("dse calibrate --published --multi-device: %s, cases of %s: %d fit and %d held-out training, %d fit and %d "
           "held-out inference; of the single-device corpus: %d fit and %d held-out training, %d fit and %d held-out "
           "inference\n", rels, path, cnt[0][0][0], cnt[0][0][1], cnt[0][1][0], cnt[0][1][1], cnt[1][0][0],
           cnt[1][0][1], cnt[1][1][0], cnt[1][1][1]);
    int worse = 0;
    for (int kind = 0; kind < 2; kind++) {
        if (!fitk[kind])
            continue;
        for (int k = 0; k < FAC_COUNT; k++)
            if ((k == FAC_TRAIN) == (kind == 0) && uses[k] >= 2)
                printf("  efficiency.%s: 1 -> %.3g (%d fit cases use it)\n", sw_run_keys[k], m.f[k], uses[k]);
        for (int w = 0; w < 2; w++) {
            if (!cnt[w][kind][0] && !cnt[w][kind][1])
                continue;
            printf("  %s%s MAPE, fit half:      %.1f %% -> %.1f %%\n", wname[w], mf_kind_name[kind], m0[w][kind][0],
                   m1[w][kind][0]);
            if (cnt[w][kind][1])
                printf("  %s%s MAPE, held-out half: %.1f %% -> %.1f %%\n", wname[w], mf_kind_name[kind],
                       m0[w][kind][1], m1[w][kind][1]);
            else
                printf("  no held-out %s%s case: the fit's error there is unknown\n", wname[w], mf_kind_name[kind]);
            /* never ship a factor worse than none unasked, on either corpus */
            if (cnt[w][kind][1] && m1[w][kind][1] > m0[w][kind][1] && !worse) {
                worse = 1;
                if (!cli_get(opts, "force")) {
                    rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL,
                                     "calibrate: the %s fit is worse on the held-out %s cases (%.1f%% against %.1f%% "
                                     "uncalibrated): %s not written (--force writes it anyway)", mf_kind_name[kind],
                                     w ? "single-device" : "multi-device", m1[w][kind][1], m0[w][kind][1], out);
                    goto out;
                }
            }
        }
    }
    /* the stack file with the factors (and their held-out error) in each release's efficiency */
    if ((rc = read_json_tree(stack_path, &root, &e)))
        goto out;
    static const char *const mape_key[2] = {"training_heldout_mape_pct", "inference_heldout_mape_pct"};
    for (int r = 0; r < m.rel.n; r++) {
        cJSON *v = release_entry(root, m.rel.rel[r]);
        if (!v) { /* get_sw loaded the release, so the file lists it */
            rc = dse_err_set(&e, DSE_ERUNTIME, stack_path, NULL, "no versions[] entry for '%s' to write", m.rel.rel[r]);
            goto out;
        }
        cJSON *ef = cJSON_GetObjectItemCaseSensitive(v, "efficiency");
        if (!ef && !(ef = cJSON_AddObjectToObject(v, "efficiency"))) {
            rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
            goto out;
        }
        char src[1200] = "";
        for (int kind = 0; kind < 2; kind++) {
            if (!fitk[kind])
                continue;
            for (int k = 0; k < FAC_COUNT; k++)
                if ((k == FAC_TRAIN) == (kind == 0)) {
                    cJSON_DeleteItemFromObjectCaseSensitive(ef, sw_run_keys[k]);
                    if (uses[k] >= 2)
                        cJSON_AddNumberToObject(ef, sw_run_keys[k], m.f[k]);
                }
            /* the held-out error shipped: both corpora's cases of the kind together */
            double hm;
            int hn = mfit_cost(&m, kind, 1, -1, &junk, &hm);
            cJSON_DeleteItemFromObjectCaseSensitive(ef, mape_key[kind]);
            if (hn > 0)
                cJSON_AddNumberToObject(ef, mape_key[kind], floor(hm * 10 + 0.5) / 10);
            char single[200] = "";
            if (cnt[1][kind][0] || cnt[1][kind][1])
                snprintf(single, sizeof single, " and %d of the single-device corpus validate/published (held-out %d)",
                         cnt[1][kind][0], cnt[1][kind][1]);
            snprintf(src + strlen(src), sizeof src - strlen(src), "%s%s: fitted by dse calibrate --published "
                     "--multi-device --software %s on %d fit-half %s cases of validate/published/multi-device "
                     "(held-out %d)%s%s", src[0] ? "; " : "", mf_kind_name[kind], rels, cnt[0][kind][0],
                     mf_kind_name[kind], cnt[0][kind][1], single,
                     worse ? " (written with --force: worse on the held-out cases than none)" : "");
        }
        const cJSON *old = cJSON_GetObjectItemCaseSensitive(ef, "source");
        char *keep = NULL; /* the other kind's clause of an earlier fit */
        if (cJSON_IsString(old)) {
            for (int kind = 0; kind < 2; kind++)
                if (!fitk[kind] && strstr(old->valuestring, mf_kind_name[kind]) == old->valuestring)
                    keep = old->valuestring;
        }
        char both[2600];
        snprintf(both, sizeof both, "%s%s%s", src, keep ? "; " : "", keep ? keep : "");
        cJSON_DeleteItemFromObjectCaseSensitive(ef, "source");
        cJSON_AddStringToObject(ef, "source", both);
    }
    rc = cli_write_json(root, out, CLI_JSON_STACK, &e); /* it frees root */
    root = NULL;
    if (!rc)
        printf("wrote %s (%s; put it in place of %s)\n", out, rels, stack_path);
out:
    if (rc)
        dse_err_print(stderr, &e);
    cJSON_Delete(root);
    free(c);
    pcorpus_free(&pc);
    pctx_free(x);
    return rc;
}

/* ---- dse calibrate --published --serving --software NAME@VERSION[,...] ---- */

/* A serving release's runtime costs under fit: per_step_us (every forward pass: scheduling, input
 * preparation, sampling, output processing) and per_request_us (before a request's first token: the API
 * server, tokenisation), in microseconds. */
enum { SF_STEP, SF_REQUEST, SF_COUNT };
static const char *const sf_key[SF_COUNT] = {"per_step_us", "per_request_us"};

struct sfit {
    struct scase *c;
    int n;
    struct mcase *mc; /* the multi-device cases: a release's costs serve every corpus, fitted on all three */
    int mn;
    struct pcorpus *pc; /* the single-device corpus (one device, a batch of requests at once) */
    struct releases rel;
    struct pctx *x;
    struct lengths_cache *lc;
    double us[SF_COUNT];
    int failed;
    struct dse_err *e;
};

/* The runtime costs under fit on the cache's own copy of the stack (system si, release sw). */
static void sfit_set(void *ctx, struct sw_stack *st)
{
    const struct sfit *m = ctx;
    st->per_step_s = m->us[SF_STEP] * 1e-6;
    st->per_request_s = m->us[SF_REQUEST] * 1e-6;
}

/* The squared log errors of the releases' predicted cases of one half (-1: both) of one corpus (which: 0
 * serving, 1 multi-device, 2 single-device, -1 all three), predicted with the runtime costs m->us set on
 * every loaded copy of the releases; the count (their MAPE in *mape). */
static int sfit_cost(struct sfit *m, int half, int which, double *cost, double *mape)
{
    int k = 0;
    double sum = 0, ape = 0;
    for (int i = 0; m->pc && i < m->pc->n && (which == 2 || which < 0); i++) {
        struct pcase *c = &m->pc->c[i];
        if (!releases_has(&m->rel, c->software) || (half >= 0 && c->heldout != half))
            continue;
        if (pcase_repredict(m->x, c, sfit_set, m, m->e)) {
            m->failed = 1;
            return -1;
        }
        if (!c->ok)
            continue;
        err_add(c->error, &sum, &ape, &k);
    }
    for (int i = 0; i < m->mn && (which == 1 || which < 0); i++) {
        struct mcase *c = &m->mc[i];
        if (!releases_has(&m->rel, c->software) || (half >= 0 && c->heldout != half))
            continue;
        int si;
        const struct sw_stack *sw;
        const struct wl_model *wm;
        if (get_sys(m->x, c->system, &si, m->e) || get_sw(m->x, si, c->software, &sw, m->e) ||
            get_wl(m->x, c->workload, &wm, m->e)) {
            m->failed = 1;
            return -1;
        }
        sfit_set(m, (struct sw_stack *)sw);
        if (mcase_predict(c, m->x->sys[si], wm, sw, m->e)) {
            m->failed = 1;
            return -1;
        }
        if (!c->ok)
            continue;
        err_add(c->error, &sum, &ape, &k);
    }
    for (int i = 0; i < m->n && (which == 0 || which < 0); i++) {
        struct scase *c = &m->c[i];
        if (!releases_has(&m->rel, c->software) || (half >= 0 && c->heldout != half))
            continue;
        int si;
        const struct sw_stack *sw;
        const struct wl_model *wm;
        struct scase_arg a = {c, NULL, 0};
        if (get_sys(m->x, c->system, &si, m->e) || get_sw(m->x, si, c->software, &sw, m->e) ||
            get_wl(m->x, c->workload, &wm, m->e) || lengths_of(m->lc, c, &a, m->e)) {
            m->failed = 1;
            return -1;
        }
        sfit_set(m, (struct sw_stack *)sw);
        if (scase_predict(c, m->x->sys[si], wm, sw, a.lengths, a.n_lengths, m->e)) {
            m->failed = 1;
            return -1;
        }
        if (!c->ok)
            continue;
        err_add(c->error, &sum, &ape, &k);
    }
    *cost = sum;
    *mape = k ? 100 * ape / k : NAN;
    return k;
}

struct sfit_at {
    struct sfit *m;
    int k;
};

static double sfit_cost_at(double f, void *ctx)
{
    struct sfit_at *a = ctx;
    double c = INFINITY, junk;
    a->m->us[a->k] = f;
    if (!a->m->failed)
        sfit_cost(a->m, 0, -1, &c, &junk);
    return c;
}

/* dse calibrate --published --serving --software NAME@VERSION[,...] --out FILE: a release's per-step and
 * per-request runtime costs fitted on the fit-half cases that ran it, of all three corpora (serving,
 * multi-device, single-device: the same costs reach each) (golden-section
 * search of the squared log error over 1 us - 50 ms a step and 1 us - 1 s a request, coordinate descent,
 * 3 rounds), their held-out error before and after, the stack file written with them in each release's
 * runtime (its other runtime keys kept). A fit worse on the held-out half than the release's present
 * costs is refused unless --force. */
static int calibrate_serving(const struct cli_opt *opts)
{
    struct dse_err e;
    dse_err_clear(&e);
    const char *rels = cli_get(opts, "software"), *out = cli_get(opts, "out");
    struct scase *c = NULL;
    int n = 0, rc;
    char path[1100], stack_path[DSE_PATH_LEN] = "";
    cJSON *root = NULL;
    struct pctx *x = calloc(1, sizeof *x);
    struct lengths_cache lc;
    memset(&lc, 0, sizeof lc);
    struct sfit m;
    memset(&m, 0, sizeof m);
    struct pcorpus pc;
    memset(&pc, 0, sizeof pc);
    if (!x)
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    if (!rels || !out) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "calibrate --published --serving: --software NAME@VERSION[,...] "
                                                     "and --out FILE are required");
        goto out;
    }
    if ((rc = parse_releases(rels, &m.rel, &e)))
        goto out;
    int want[SF_COUNT] = {1, 1}; /* --terms: which costs are fitted */
    const char *terms = cli_get(opts, "terms");
    if (terms) {
        if ((rc = cli_list_check("--terms", terms, &e)))
            goto out;
        want[SF_STEP] = want[SF_REQUEST] = 0;
        for (const char *t = terms; *t;) {
            size_t l = strcspn(t, ",");
            int k = 0;
            while (k < SF_COUNT && (strlen(sf_key[k]) != l || strncmp(t, sf_key[k], l)))
                k++;
            if (k == SF_COUNT) {
                rc = dse_err_set(&e, DSE_EINPUT, NULL, "--terms", "'%.*s': expected per_step_us or per_request_us",
                                 (int)l, t);
                goto out;
            }
            want[k] = 1;
            t += l + (t[l] == ',');
        }
    }
    sub_corpus_path(cli_get(opts, "corpus"), "serving", path, sizeof path);
    if ((rc = scorpus_load(path, &c, &n, &e)))
        goto out;
    char mpath[1100];
    multi_corpus_path(cli_get(opts, "corpus"), mpath, sizeof mpath);
    const char *cw = cli_get(opts, "corpus"); /* one file given: no single-device corpus beside it */
    if ((rc = mcorpus_load(mpath, &m.mc, &m.mn, &e)) || (!(cw && strstr(cw, ".csv")) && (rc = load_corpus(cw, &pc, &e))))
        goto out;
    m.pc = &pc;
    m.c = c;
    m.n = n;
    m.x = x;
    m.lc = &lc;
    m.e = &e;
    /* start from the releases' present costs (the first that any case loads) */
    int ran = 0;
    for (int i = 0; i < n; i++)
        ran += releases_has(&m.rel, c[i].software);
    for (int i = 0; i < m.mn; i++)
        ran += releases_has(&m.rel, m.mc[i].software);
    for (int i = 0; i < pc.n; i++)
        ran += releases_has(&m.rel, pc.c[i].software);
    double junk, m0[3][2], m1[3][2]; /* [corpus: serving, multi-device, single-device][half] */
    int cnt[3][2];
    for (int i = 0; i < n + m.mn + pc.n && !stack_path[0]; i++) {
        int si;
        const struct sw_stack *sw;
        const char *rel = i < n ? c[i].software : i < n + m.mn ? m.mc[i - n].software : pc.c[i - n - m.mn].software;
        const char *sys = i < n ? c[i].system : i < n + m.mn ? m.mc[i - n].system : pc.c[i - n - m.mn].device;
        if (!releases_has(&m.rel, rel))
            continue;
        if ((rc = get_sys(x, sys, &si, &e)) || (rc = get_sw(x, si, rel, &sw, &e)))
            goto out;
        dse_strlcpy(stack_path, sw->path, sizeof stack_path);
        m.us[SF_STEP] = sw->per_step_s * 1e6;
        m.us[SF_REQUEST] = sw->per_request_s * 1e6;
    }
    for (int w = 0; w < 3; w++)
        for (int h = 0; h < 2; h++)
            cnt[w][h] = sfit_cost(&m, h, w, &junk, &m0[w][h]);
    if (m.failed) {
        rc = e.code ? e.code : DSE_ERUNTIME;
        goto out;
    }
    int fit_n = cnt[0][0] + cnt[1][0] + cnt[2][0];
    if (fit_n < 3) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--software", "'%s': %d cases of the three corpora ran it, %d of them "
                         "predicted in the fit half: the two costs need at least 3", rels, ran, fit_n);
        goto out;
    }
    /* never over one of the three corpora's files read */
    if ((rc = out_not_read(out, "--out", x, &pc, path, &e)) || (rc = out_not_read(out, "--out", x, NULL, mpath, &e)))
        goto out;
    const char *in_stack[] = {stack_path}, *in_what[] = {"the stack file this run reads"};
    if ((rc = out_file_not_input(out, "--out", in_stack, in_what, 1, 0, &e)))
        goto out;
    double before[SF_COUNT] = {m.us[SF_STEP], m.us[SF_REQUEST]};
    static const double hi[SF_COUNT] = {5e4, 1e6};
    /* a request's own cost shows only in its time to first token and end to end: fitted where at least two
     * fit-half cases report one (throughput over a run's makespan cannot tell it) */
    int lat = 0;
    for (int i = 0; i < n; i++)
        lat += releases_has(&m.rel, c[i].software) && !c[i].heldout && c[i].ok &&
               (c[i].metric == SM_TTFT_P50 || c[i].metric == SM_TTFT_P99 || c[i].metric == SM_TTFT_MEAN ||
                c[i].metric == SM_E2E_P50 || c[i].metric == SM_E2E_MEAN);
    for (int i = 0; i < pc.n; i++) /* a single-device case's latency or time to first token of a prefill */
        lat += releases_has(&m.rel, pc.c[i].software) && !pc.c[i].heldout && pc.c[i].ok &&
               (pc.c[i].metric == PM_TTFT || (pc.c[i].metric == PM_LATENCY && pc.c[i].phase != PH_DECODE));
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < SF_COUNT; k++) {
            if (!want[k] || (k == SF_REQUEST && lat < 2))
                continue;
            struct sfit_at a = {&m, k};
            m.us[k] = golden_log(1, hi[k], sfit_cost_at, &a);
        }
    for (int w = 0; w < 3; w++)
        for (int h = 0; h < 2; h++)
            sfit_cost(&m, h, w, &junk, &m1[w][h]);
    if (m.failed) {
        rc = e.code ? e.code : DSE_ERUNTIME;
        goto out;
    }
    printf("dse calibrate --published --serving: %s, cases of %s: %d fit, %d held-out predicted; of %s (the same "
           "costs, fitted with them): %d fit, %d held-out; single-device: %d fit, %d held-out\n", rels, path, cnt[0][0],
           cnt[0][1], mpath, cnt[1][0], cnt[1][1], cnt[2][0], cnt[2][1]);
    for (int k = 0; k < SF_COUNT; k++)
        if (!want[k])
            printf("  runtime.%s: %.4g, not fitted (--terms)\n", sf_key[k], before[k]);
        else if (k == SF_REQUEST && lat < 2)
            printf("  runtime.%s: %.4g, not fitted (%d fit-half cases report a time to first token or end to end: "
                   "2 needed)\n", sf_key[k], before[k], lat);
        else
            printf("  runtime.%s: %.4g -> %.4g\n", sf_key[k], before[k], m.us[k]);
    static const char *const wname[3] = {"serving", "multi-device", "single-device"};
    int worse = 0;
    for (int w = 0; w < 3; w++) {
        if (!cnt[w][0] && !cnt[w][1])
            continue;
        printf("  %s MAPE, fit half:      %.1f %% -> %.1f %%\n", wname[w], m0[w][0], m1[w][0]);
        if (cnt[w][1] > 0)
            printf("  %s MAPE, held-out half: %.1f %% -> %.1f %%\n", wname[w], m0[w][1], m1[w][1]);
        else
            printf("  no held-out %s case: the fit's error there is unknown\n", wname[w]);
    }
    for (int w = 0; w < 3 && !worse; w++) /* worse on any corpus's held-out half: refused */
        if (cnt[w][1] > 0 && m1[w][1] > m0[w][1]) {
            worse = 1;
            if (!cli_get(opts, "force")) {
                rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "calibrate: the fit is worse on the held-out %s cases "
                                 "(%.1f%% against %.1f%% before): %s not written (--force writes it anyway)", wname[w],
                                 m1[w][1], m0[w][1], out);
                goto out;
            }
        }
    if ((rc = read_json_tree(stack_path, &root, &e)))
        goto out;
    for (int r = 0; r < m.rel.n; r++) {
        cJSON *v = release_entry(root, m.rel.rel[r]);
        cJSON *rt = v ? cJSON_GetObjectItemCaseSensitive(v, "runtime") : NULL;
        if (v && !rt)
            rt = cJSON_AddObjectToObject(v, "runtime");
        if (!rt) {
            rc = dse_err_set(&e, DSE_ERUNTIME, stack_path, NULL, "no versions[] entry for '%s' to write", m.rel.rel[r]);
            goto out;
        }
        for (int k = 0; k < SF_COUNT; k++) {
            cJSON_DeleteItemFromObjectCaseSensitive(rt, sf_key[k]);
            cJSON_AddNumberToObject(rt, sf_key[k], m.us[k]);
        }
        const cJSON *old = cJSON_GetObjectItemCaseSensitive(rt, "source");
        char src[2400], *keep = cJSON_IsString(old) ? old->valuestring : "";
        const char *cut = strstr(keep, "per_step_us and per_request_us: fitted by dse calibrate --published --serving");
        int klen = cut ? (int)(cut - keep) - (cut - keep >= 2 ? 2 : 0) : (int)strlen(keep);
        /* the corpora the fit saw, each with its fit and held-out counts */
        static const char *const wfile[3] = {"validate/published/serving", "validate/published/multi-device",
                                             "the single-device corpus validate/published"};
        char seen[900] = "";
        for (int w = 0, first = 1; w < 3; w++) {
            if (!cnt[w][0] && !cnt[w][1])
                continue;
            size_t l = strlen(seen);
            if (cnt[w][1] > 0)
                snprintf(seen + l, sizeof seen - l, "%s%d fit-half cases of %s (held-out %d: MAPE %.1f %% -> %.1f %%)",
                         first ? "" : "; ", cnt[w][0], wfile[w], cnt[w][1], m0[w][1], m1[w][1]);
            else
                snprintf(seen + l, sizeof seen - l, "%s%d fit-half cases of %s (none held out)", first ? "" : "; ",
                         cnt[w][0], wfile[w]);
            first = 0;
        }
        snprintf(src, sizeof src, "%.*s%sper_step_us and per_request_us: fitted by dse calibrate --published --serving "
                 "--software %s on %s%s%s", klen, keep, klen ? "; " : "", rels, seen,
                 !want[SF_REQUEST] || lat < 2 ? (!want[SF_REQUEST] ? "; per_request_us kept: not fitted (--terms)"
                                                 : "; per_request_us kept: no fit-half case reports a time to first token")
                                              : !want[SF_STEP] ? "; per_step_us kept: not fitted (--terms)" : "",
                 worse ? " (written with --force: worse on the held-out cases)" : "");
        cJSON_DeleteItemFromObjectCaseSensitive(rt, "source");
        cJSON_AddStringToObject(rt, "source", src);
    }
    rc = cli_write_json(root, out, CLI_JSON_STACK, &e);
    root = NULL;
    if (!rc)
        printf("wrote %s (%s; put it in place of %s)\n", out, rels, stack_path);
out:
    if (rc)
        dse_err_print(stderr, &e);
    cJSON_Delete(root);
    for (int i = 0; i < lc.n; i++)
        free(lc.req[i]);
    free(m.mc);
    free(c);
    pcorpus_free(&pc);
    pctx_free(x);
    return rc;
}

/* ---- dse calibrate --published --power ---- */

/* The power terms a calibration fits, each a factor on the device's figure: idle power, active power,
 * and the engines' power (every MAC energy with it). */
enum { PWF_IDLE, PWF_ACTIVE, PWF_ENGINE, PWF_COUNT };
static const char *const pwf_name[PWF_COUNT] = {"idle_W", "active_W", "matrix_W and vector_W (MAC energies)"};

struct pwfit {
    struct wcase *c;
    int n, si, dev;
    const char *name;
    struct pctx *x;
    struct hw_system *base; /* the device's hwdesc as loaded */
    double f[PWF_COUNT];
    int failed; /* a prediction failed (the error in *e) */
    struct dse_err *e;
};

/* The device of sys scaled by the factors f (from base). */
static void pwfit_apply(struct hw_system *sys, const struct hw_system *base, int dev, const double *f)
{
    *sys = *base;
    struct hw_device *d = &sys->dev[dev];
    d->idle_W *= f[PWF_IDLE];
    d->active_W *= f[PWF_ACTIVE];
    for (int e = 0; e < ENG_COUNT; e++) {
        d->engine_W[e] *= f[PWF_ENGINE];
        for (int p = 0; p < P_COUNT; p++)
            d->mac_J[e][p] *= f[PWF_ENGINE];
    }
    for (int i = 0; i < d->n_compute; i++)
        d->compute[i].energy_J_per_mac *= f[PWF_ENGINE];
}

/* The squared log errors of the device's predicted power_W cases of one half (-1: both), re-predicted
 * with the factors; the count (their MAPE in *mape), -1 on an error. Energy per inference or token is
 * left out of the fit: it carries the time model's error too. */
static int pwfit_cost(struct pwfit *m, int half, double *cost, double *mape)
{
    pwfit_apply(m->x->sys[m->si], m->base, m->dev, m->f);
    int k = 0;
    double sum = 0, ape = 0;
    for (int i = 0; i < m->n; i++) {
        struct wcase *c = &m->c[i];
        if (strcmp(c->device, m->name) || c->metric != WM_POWER || (half >= 0 && c->heldout != half))
            continue;
        if (predict_power(m->x, c, m->e)) {
            m->failed = 1;
            return -1;
        }
        if (!c->ok)
            continue;
        err_add(c->error, &sum, &ape, &k);
    }
    for (int f = 0; f < PWF_COUNT; f++) /* the pull towards the hwdesc's figures */
        sum += PCALIB_RIDGE * log(m->f[f]) * log(m->f[f]);
    *cost = sum;
    *mape = k ? 100 * ape / k : NAN;
    return k;
}

struct pwfit_at {
    struct pwfit *m;
    int k;
};

static double pwfit_cost_at(double f, void *ctx)
{
    struct pwfit_at *a = ctx;
    double c = INFINITY, junk;
    a->m->f[a->k] = f;
    if (!a->m->failed)
        pwfit_cost(a->m, 0, &c, &junk);
    return c;
}

/* Factor k fitted on the fit half, the others held: log f in [log 0.25, log 4]; active_W no lower than
 * the device's gap_W (clocks up without work draw no more than with it: hw.h). */
static void pwfit_golden(struct pwfit *m, int k)
{
    struct pwfit_at a = {m, k};
    const struct hw_device *d = &m->base->dev[m->dev];
    double lo = 0.25;
    if (k == PWF_ACTIVE && d->active_W > 0 && d->gap_W / d->active_W > lo)
        lo = d->gap_W / d->active_W;
    m->f[k] = golden_log(lo, lo < 4 ? 4 : lo, pwfit_cost_at, &a);
}

static double sig3(double v)
{
    if (!(v > 0))
        return v;
    double p = pow(10, 2 - floor(log10(v)));
    return floor(v * p + 0.5) / p;
}

/* dse calibrate --published --power --hw NAME --out FILE: the device's idle (where its fit half has an
 * idle case), active and engine power fitted to its fit-half power_W cases (coordinate descent, a pull
 * towards the hwdesc's figures), the held-out error before and after, the hwdesc written with them. */
static int calibrate_power(const struct cli_opt *opts)
{
    struct dse_err e;
    dse_err_clear(&e);
    const char *name = cli_get(opts, "hw"), *out = cli_get(opts, "out");
    struct wcase *c = NULL;
    struct hw_system *base = NULL;
    struct corpus_list *files = NULL;
    cJSON *root = NULL;
    int n = 0, rc, si = -1;
    struct pctx *x = calloc(1, sizeof *x);
    if (!x)
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    if (!name || !out) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "calibrate --published --power: --hw NAME (a device of the power "
                                                     "corpus) and --out FILE are required");
        goto out;
    }
    if ((rc = load_power(cli_get(opts, "corpus"), &c, &n, &files, &e)) || (rc = get_sys(x, name, &si, &e)))
        goto out;
    { /* --out may be none of what the fit read: the hwdesc and the corpus files */
        const char *in[257], *what[257];
        in[0] = x->sys_path[si];
        what[0] = "the hwdesc calibrated";
        for (int i = 0; i < files->n; i++) {
            in[i + 1] = files->p[i];
            what[i + 1] = "a power corpus file";
        }
        if ((rc = out_file_not_input(out, "--out", in, what, files->n + 1, 0, &e)))
            goto out;
    }
    if (!(base = malloc(sizeof *base))) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    *base = *x->sys[si];
    struct pwfit m = {c, n, si, eval_default_device(base), name, x, base, {1, 1, 1}, 0, &e};
    double junk, m0[2], m1[2];
    int cnt[2], idle_fit = 0, busy_fit = 0;
    for (int h = 0; h < 2; h++)
        cnt[h] = pwfit_cost(&m, h, &junk, &m0[h]);
    if (m.failed) {
        rc = e.code ? e.code : DSE_ERUNTIME;
        goto out;
    }
    for (int i = 0; i < n; i++)
        if (!strcmp(c[i].device, name) && c[i].metric == WM_POWER && !c[i].heldout && c[i].ok) {
            idle_fit += c[i].idle;
            busy_fit += !c[i].idle;
        }
    if (busy_fit < 2) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--hw", "'%s' has %d predicted fit-half power_W cases that run a workload "
                         "(and %d idle): the active and engine power need at least 2", name, busy_fit, idle_fit);
        goto out;
    }
    for (int round = 0; round < 4 && !m.failed; round++)
        for (int k = idle_fit ? PWF_IDLE : PWF_ACTIVE; k < PWF_COUNT; k++)
            pwfit_golden(&m, k);
    for (int h = 0; h < 2 && !m.failed; h++)
        pwfit_cost(&m, h, &junk, &m1[h]);
    if (m.failed) {
        rc = e.code ? e.code : DSE_ERUNTIME;
        goto out;
    }
    const struct hw_device *d0 = &base->dev[m.dev];
    printf("dse calibrate --published --power: %s, power_W cases of the power corpus: %d fit (%d idle), %d held-out\n",
           name, cnt[0], idle_fit, cnt[1]);
    double was[PWF_COUNT] = {d0->idle_W, d0->active_W, d0->engine_W[ENG_MATRIX] > 0 ? d0->engine_W[ENG_MATRIX]
                                                                                      : d0->engine_W[ENG_VECTOR]};
    for (int k = 0; k < PWF_COUNT; k++)
        if (k != PWF_IDLE || idle_fit)
            printf("  power.%s: x %.3g (%.4g -> %.4g W)\n", pwf_name[k], m.f[k], was[k], sig3(was[k] * m.f[k]));
    printf("  power MAPE, fit half:      %.1f %% -> %.1f %%\n", m0[0], m1[0]);
    if (cnt[1])
        printf("  power MAPE, held-out half: %.1f %% -> %.1f %%\n", m0[1], m1[1]);
    else
        printf("  no held-out power_W case: the fit's error is unknown\n");
    int worse = cnt[1] && m1[1] > m0[1];
    if (worse && !cli_get(opts, "force")) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "calibrate: the power fit is worse on the held-out cases (%.1f%% "
                         "against %.1f%% uncalibrated): %s not written (--force writes it anyway)", m1[1], m0[1], out);
        goto out;
    }
    /* the hwdesc with the fitted figures in the device's power section */
    if ((rc = read_json_tree(x->sys_path[si], &root, &e)))
        goto out;
    cJSON *devs = root ? cJSON_GetObjectItemCaseSensitive(root, "devices") : NULL;
    cJSON *dev = devs ? cJSON_GetArrayItem(devs, m.dev) : NULL;
    cJSON *pw = dev ? cJSON_GetObjectItemCaseSensitive(dev, "power") : NULL;
    if (!pw) {
        rc = dse_err_set(&e, DSE_EINPUT, x->sys_path[si], NULL, "device %d has no power section", m.dev);
        goto out;
    }
    struct {
        const char *key;
        double v;
    } set[] = {{"idle_W", sig3(d0->idle_W * m.f[PWF_IDLE])},
               {"active_W", sig3(d0->active_W * m.f[PWF_ACTIVE])},
               {"matrix_W", d0->engine_W[ENG_MATRIX] > 0 ? sig3(d0->engine_W[ENG_MATRIX] * m.f[PWF_ENGINE]) : 0},
               {"vector_W", d0->engine_W[ENG_VECTOR] > 0 ? sig3(d0->engine_W[ENG_VECTOR] * m.f[PWF_ENGINE]) : 0},
               {"heldout_mape_pct", cnt[1] ? floor(m1[1] * 10 + 0.5) / 10 : -1}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++) { /* in place where the key is there, else added */
        int keep = set[i].v >= 0 && (set[i].v > 0 || !strcmp(set[i].key, "active_W"));
        cJSON *nv = keep ? cJSON_CreateNumber(set[i].v) : NULL;
        if (keep && !nv) {
            rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
            goto out;
        }
        if (cJSON_GetObjectItemCaseSensitive(pw, set[i].key)) {
            if (nv)
                cJSON_ReplaceItemInObjectCaseSensitive(pw, set[i].key, nv);
            else
                cJSON_DeleteItemFromObjectCaseSensitive(pw, set[i].key);
        } else if (nv) {
            cJSON_AddItemToObject(pw, set[i].key, nv);
        }
    }
    char clause[400];
    snprintf(clause, sizeof clause, "power: fitted by dse calibrate --published --power on %d fit-half power_W cases of "
             "validate/published/power (held-out %d)%s", cnt[0], cnt[1],
             worse ? " (written with --force: worse on the held-out cases than the uncalibrated model)" : "");
    if ((rc = set_note_clause(pw, "power: fitted", clause, &e)))
        goto out;
    rc = cli_write_json(root, out, 1, &e); /* it frees root */
    root = NULL;
    if (!rc)
        printf("wrote %s\n", out);
out:
    if (rc)
        dse_err_print(stderr, &e);
    cJSON_Delete(root);
    free(files);
    free(base);
    free(c);
    pctx_free(x);
    return rc;
}

int cli_calibrate_published(const struct cli_opt *opts)
{
    if (cli_get(opts, "power"))
        return calibrate_power(opts);
    if (cli_get(opts, "multi-device"))
        return calibrate_multi(opts);
    if (cli_get(opts, "serving"))
        return calibrate_serving(opts);
    struct dse_err e;
    struct pcorpus pc;
    int rc, *idx = NULL, n_fit = 0;
    enum fidelity f = FID_ANALYTICAL;
    const struct wl_model **models = NULL;
    const struct sw_stack **stacks = NULL;
    struct hw_system *after = NULL;
    dse_err_clear(&e);
    memset(&pc, 0, sizeof pc);
    struct pctx *x = calloc(1, sizeof *x);
    if (!x)
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    const char *name = cli_get(opts, "hw"), *out = cli_get(opts, "out"), *software = cli_get(opts, "software");
    if (!name || !out) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "calibrate --published: --hw NAME (a device of the corpus) and "
                                                     "--out FILE are required");
        goto done;
    }
    if ((cli_get(opts, "fidelity") && (rc = cli_fidelity(cli_get(opts, "fidelity"), &f, &e))) ||
        (rc = load_corpus(cli_get(opts, "corpus"), &pc, &e)) || (rc = predict_all(&pc, x, name, software, f, &e)) ||
        (rc = out_not_read(out, "--out", x, &pc, NULL, &e)))
        goto done;
    int s = -1;
    for (int i = 0; i < x->n_sys; i++)
        if (!strcmp(x->sys_name[i], name))
            s = i;
    if (s < 0) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--hw", "no published case ran on '%s'", name);
        goto done;
    }
    idx = malloc(sizeof *idx * (size_t)pc.n);
    models = calloc((size_t)pc.n, sizeof *models);
    stacks = calloc((size_t)pc.n, sizeof *stacks);
    after = malloc(sizeof *after);
    if (!idx || !models || !stacks || !after) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto done;
    }
    for (int i = 0; i < pc.n; i++) { /* the fit cases, each with its workload and stack */
        struct pcase *c = &pc.c[i];
        if (strcmp(c->device, name))
            continue;
        int si;
        if ((rc = get_sys(x, c->device, &si, &e)) || (rc = get_sw(x, si, software ? software : c->software, &stacks[i], &e)) ||
            (!c->is_kernel && (rc = get_wl(x, c->workload, &models[i], &e))))
            goto done;
        if (!c->heldout && c->ok)
            idx[n_fit++] = i;
    }
    const char *v0[2] = {name, "f"}, *v1[2] = {name, "h"};
    struct pstats fit0, held0, fit1, held1;
    pstats_of(pc.c, pc.n, sel_device_half, v0, &fit0);
    pstats_of(pc.c, pc.n, sel_device_half, v1, &held0);
    if (n_fit < 2) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--hw", "'%s' has %d predicted fit cases: too few to fit", name, n_fit);
        goto done;
    }
    const char *arch = x->sys[s]->dev[eval_default_device(x->sys[s])].arch;
    if (arch[0]) { /* its kernel terms are the die's, fitted on kernels: an end-to-end fit would put a stack's
                    * effects into them */
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--hw", "'%s' takes its kernel terms from its architecture, "
                         "hwdesc/arch/%s.json, shared by every board of the die: fit them to measured kernels "
                         "(dse calibrate --measured ... --arch %s), not to end-to-end cases", name, arch, arch);
        goto done;
    }
    double factor[PP_COUNT];
    int free_param[PP_COUNT];
    if ((rc = pcalib_fit(pc.c, idx, n_fit, x->sys[s], models, stacks, f, factor, free_param, &e)))
        goto done;
    *after = *x->sys[s];
    int dev = eval_default_device(after);
    pcalib_apply(&after->dev[dev], factor);
    pcalib_round(&after->dev[dev]);
    for (int i = 0; i < pc.n; i++)
        if (!strcmp(pc.c[i].device, name) && (rc = pcase_predict(&pc.c[i], after, models[i], stacks[i], f, &e)))
            goto done;
    pstats_of(pc.c, pc.n, sel_device_half, v0, &fit1);
    pstats_of(pc.c, pc.n, sel_device_half, v1, &held1);
    printf("dse calibrate --published: %s (device '%s'), %d fit cases, %d held out\n", name, after->dev[dev].name,
           fit0.n, held0.n);
    printf("  fitted factors (x the hwdesc's value):");
    for (int k = 0; k < PP_COUNT; k++)
        if (free_param[k])
            printf(" %s %.3g", pparam_names[k], factor[k]);
    printf("\n  MAPE       fit: %.1f%% -> %.1f%%   ", fit0.mape_pct, fit1.mape_pct);
    if (held0.n)
        printf("held-out: %.1f%% -> %.1f%% (within +-25 %%: %.0f%% -> %.0f%%)\n", held0.mape_pct, held1.mape_pct,
               held0.within25_pct, held1.within25_pct);
    else /* nothing to measure the fit against: say so rather than print 0 % */
        printf("held-out: no cases of this device\n");
    printf("  fit cases after the fit:\n");
    for (int i = 0; i < n_fit; i++) {
        const struct pcase *c = &pc.c[idx[i]];
        printf("    %-46.46s %-16s %12.5g %12.5g %+7.1f%%\n", c->id, pmetric_names[c->metric], c->value, c->predicted,
               100 * c->error);
    }
    int worse = held0.n && held1.mape_pct > held0.mape_pct;
    if (worse && !cli_get(opts, "force")) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL,
                         "calibrate: the fit is worse on the held-out cases (%.1f%% against %.1f%% before): %s not "
                         "written (--force writes it anyway)",
                         held1.mape_pct, held0.mape_pct, out);
        goto done;
    }
    char today[16], src[1024];
    cli_today(today, sizeof today);
    snprintf(src, sizeof src,
             "fitted by dse calibrate --published %s on the %d fit-half cases of validate/published for this device "
             "(GSL nonlinear least squares on log(predicted / measured), a weak pull to the uncalibrated values); "
             "held-out MAPE on %d cases: %.1f%% before, %.1f%% after (heldout_mape_pct)%s",
             today, fit0.n, held0.n, held0.mape_pct, held1.mape_pct,
             worse ? " (written with --force: worse than the uncalibrated model)" : "");
    if ((rc = write_published(x->sys_path[s], out, &after->dev[dev], src, held1.n ? held1.mape_pct : fit1.mape_pct, &e)))
        goto done;
    printf("  wrote %s\n", out);
done:
    if (rc)
        dse_err_print(stderr, &e);
    free(idx);
    free(models);
    free(stacks);
    free(after);
    pcorpus_free(&pc);
    pctx_free(x);
    return rc;
}
