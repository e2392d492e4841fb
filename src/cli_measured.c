/* cli_measured.c -- `dse validate --measured SOURCE`: every row of a measured-kernel corpus
 * (validate/measured/SOURCE/kernels.csv) predicted on the hwdesc it names; MAPE, the share within
 * +-10 % and +-15 % and the worst shapes per device, kernel class and half; a predicted-vs-measured
 * plot. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "jsonu.h"
#include "model.h"
#include "outfile.h"
#include "plot.h"
#include "sbuf.h"
#include "validate.h"

/* The summary row of a device's rows whose notes do not say suspect (not a kernel class). */
#define KC_TRUSTED "not suspect"

#define KC_MAX_SYS 32
#define KC_WORST 3

struct kc_systems {
    int n;
    char name[KC_MAX_SYS][HW_NAME_LEN], path[KC_MAX_SYS][1024];
    int trace[KC_MAX_SYS]; /* seen as a profiler's trace (kernel rows) or whole (network rows) */
    struct hw_system *sys[KC_MAX_SYS];
};

static int kc_sys(struct kc_systems *x, const char *name, int trace, int *out, struct dse_err *e)
{
    for (int i = 0; i < x->n; i++)
        if (!strcmp(x->name[i], name) && x->trace[i] == trace)
            return *out = i, DSE_OK;
    if (x->n == KC_MAX_SYS)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "more than %d systems in the corpus", KC_MAX_SYS);
    static const char *const ext[] = {".json", NULL};
    char *path = x->path[x->n];
    int rc = cli_resolve("hw", "hwdesc", name, ext, path, sizeof x->path[0], e);
    if (rc)
        return rc;
    struct hw_system *s = malloc(sizeof *s);
    if (!s)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    if ((rc = hw_load_file(path, s, e))) {
        free(s);
        return rc;
    }
    if (trace)
        kc_trace_view(s);
    dse_strlcpy(x->name[x->n], name, sizeof x->name[0]);
    x->trace[x->n] = trace;
    x->sys[x->n] = s;
    *out = x->n++;
    return DSE_OK;
}

/* The workloads and stacks network rows name, each loaded once (a workload dse has no file for is a
 * row's reason, not an error). */
#define KC_MAX_NETS 512
#define KC_MAX_STACKS 32
#define KC_NET_MIN_NETS 5 /* fit-half networks a class needs for its term to be free */
struct kc_nets {
    int n_wl, n_sw;
    char wl_name[KC_MAX_NETS][96], wl_path[KC_MAX_NETS][1024];
    int wl_missing[KC_MAX_NETS];
    struct wl_model *wl; /* [KC_MAX_NETS] */
    char sw_key[KC_MAX_STACKS][HW_NAME_LEN + 64];
    struct sw_stack sw[KC_MAX_STACKS];
};

static void kc_nets_free(struct kc_nets *x)
{
    if (!x)
        return;
    for (int i = 0; x->wl && i < x->n_wl; i++)
        if (!x->wl_missing[i])
            wl_model_free(&x->wl[i]);
    free(x->wl);
    free(x);
}

/* Row c's workload (*wl, -1 when models/ has none: c's reason says so) and stack on system s (path). */
static int kc_net_of(struct kc_nets *x, struct kcase *c, const struct hw_system *sys, const char *path, int *wl,
                     int *sw, struct dse_err *e)
{
    int i, rc;
    for (i = 0; i < x->n_wl && strcmp(x->wl_name[i], c->workload); i++)
        ;
    if (i == x->n_wl) {
        if (x->n_wl == KC_MAX_NETS)
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "more than %d workloads in the corpus", KC_MAX_NETS);
        static const char *const ext[] = {".json", ".csv", ".onnx", NULL};
        struct dse_err le;
        dse_strlcpy(x->wl_name[i], c->workload, sizeof x->wl_name[0]);
        x->wl_missing[i] = cli_resolve("workload", "models", c->workload, ext, x->wl_path[i], sizeof x->wl_path[0], &le) ||
                           access(x->wl_path[i], R_OK) != 0;
        if (!x->wl_missing[i] && (rc = wl_load_file(x->wl_path[i], &x->wl[i], e)))
            return rc;
        x->n_wl++;
    }
    *wl = x->wl_missing[i] ? -1 : i;
    *sw = -1;
    if (*wl < 0) {
        snprintf(c->reason, sizeof c->reason, "no workload %s in models/ (dse has no graph of this network)", c->workload);
        return DSE_OK;
    }
    const struct hw_device *d = &sys->dev[eval_default_device(sys)];
    const char *name = strcmp(c->software, "default") ? c->software : d->software[0] ? d->software : "none";
    char key[HW_NAME_LEN + 64];
    snprintf(key, sizeof key, "%s/%s", sys->name, name);
    for (i = 0; i < x->n_sw && strcmp(x->sw_key[i], key); i++)
        ;
    if (i == x->n_sw) {
        if (x->n_sw == KC_MAX_STACKS)
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "more than %d system x stack pairs in the corpus", KC_MAX_STACKS);
        if ((rc = pass_load_named(name, path, &x->sw[i], e)))
            return rc;
        dse_strlcpy(x->sw_key[i], key, sizeof x->sw_key[0]);
        x->n_sw++;
    }
    *sw = i;
    return DSE_OK;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The corpus files SOURCE names: a folder's kernels.csv, a file, a source under validate/measured, or
 * all of them ('all'). */
/* The kernels*.csv of folder dir (a source is kept in parts under 2 MiB: kernels-01.csv, ...), sorted,
 * appended to files[*n..max); how many. */
static int kc_folder(const char *dir, char (*files)[1024], int max, int *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    int k0 = *n;
    while ((de = readdir(d)) && *n < max) {
        size_t l = strlen(de->d_name);
        struct stat st;
        if (strncmp(de->d_name, "kernels", 7) || l < 11 || strcmp(de->d_name + l - 4, ".csv") ||
            snprintf(files[*n], 1024, "%.800s/%.200s", dir, de->d_name) >= 1024 || stat(files[*n], &st) ||
            !S_ISREG(st.st_mode))
            continue;
        (*n)++;
    }
    closedir(d);
    qsort(files + k0, (size_t)(*n - k0), sizeof *files, name_cmp);
    return *n - k0;
}

/* One source's files: a folder's parts, a file, a source under validate/measured, or every source ('all'),
 * each loaded into mc; case ids unique within a source. */
static int kc_load1(const char *src, struct kcorpus *mc, char (*files)[1024], int max, int *nf, struct dse_err *e)
{
    struct stat st;
    char dir[1024];
    int rc = DSE_OK;
    if (!strcmp(src, "all")) {
        DIR *d = opendir("validate/measured");
        if (!d)
            return dse_err_set(e, DSE_EINPUT, "validate/measured", NULL, "cannot open the folder (run from the "
                                                                         "repository root)");
        struct dirent *de;
        char names[64][256];
        int k = 0;
        while ((de = readdir(d)) && k < 64)
            if (de->d_name[0] != '.')
                dse_strlcpy(names[k++], de->d_name, sizeof names[0]);
        closedir(d);
        qsort(names, (size_t)k, sizeof names[0], name_cmp);
        int before = *nf;
        for (int i = 0; i < k && !rc; i++) {
            char probe[16][1024];
            int np = 0;
            snprintf(dir, sizeof dir, "validate/measured/%.200s", names[i]);
            if (!stat(dir, &st) && S_ISDIR(st.st_mode) && kc_folder(dir, probe, 16, &np) > 0)
                rc = kc_load1(dir, mc, files, max, nf, e);
        }
        return rc ? rc : *nf > before ? DSE_OK
                                      : dse_err_set(e, DSE_EINPUT, "validate/measured", NULL, "no SOURCE/kernels*.csv there");
    }
    char own[16][1024];
    int n = 0, n0 = mc->n;
    if (!strchr(src, '/') && !strstr(src, ".csv"))
        snprintf(dir, sizeof dir, "validate/measured/%.200s", src);
    else
        snprintf(dir, sizeof dir, "%.1000s", src);
    if (!stat(dir, &st) && S_ISDIR(st.st_mode))
        kc_folder(dir, own, 16, &n);
    else if (!stat(dir, &st) && S_ISREG(st.st_mode))
        snprintf(own[n++], 1024, "%s", dir);
    if (!n)
        return dse_err_set(e, DSE_EINPUT, NULL, "--measured", "no corpus '%s' (no %s/kernels*.csv; sources: the folders "
                                                             "of validate/measured, or 'all')", src, dir);
    for (int i = 0; i < n && !rc; i++) {
        rc = kcorpus_load(own[i], mc, e);
        if (files && !rc) {
            if (*nf >= max)
                return dse_err_set(e, DSE_EINPUT, NULL, "--measured", "more than %d corpus files", max);
            for (int k = 0; k < *nf; k++)
                if (!strcmp(files[k], own[i]))
                    return dse_err_set(e, DSE_EINPUT, NULL, "--measured", "%s named twice", own[i]);
            snprintf(files[(*nf)++], 1024, "%s", own[i]);
        }
    }
    return rc ? rc : kcorpus_unique(mc, n0, src, e);
}

/* SOURCE[,SOURCE...], each as kc_load1 reads it; files: every file read (for the outputs' checks). */
static int kc_load(const char *list, struct kcorpus *mc, char (*files)[1024], int max, int *nf, struct dse_err *e)
{
    char buf[1024];
    *nf = 0;
    if (strlen(list) >= sizeof buf)
        return dse_err_set(e, DSE_EINPUT, NULL, "--measured", "too long");
    dse_strlcpy(buf, list, sizeof buf);
    char *save = NULL;
    int rc = DSE_OK;
    for (char *s = strtok_r(buf, ",", &save); s && !rc; s = strtok_r(NULL, ",", &save))
        rc = kc_load1(s, mc, files, max, nf, e);
    return rc ? rc : *nf ? DSE_OK : dse_err_set(e, DSE_EINPUT, NULL, "--measured", "no source named");
}

struct kc_stat {
    int n, w10, w15;
    double sum_abs, *err; /* signed errors, for the median */
    int worst[KC_WORST];  /* case indices, largest |log(predicted / measured)| first; -1 empty */
};

static double kc_err(const struct kcase *c)
{
    return c->predicted_ms / c->measured_ms - 1;
}

static void kc_stat_add(struct kc_stat *s, const struct kcase *cs, int i)
{
    double r = kc_err(&cs[i]), a = fabs(r), lg = fabs(log(cs[i].predicted_ms / cs[i].measured_ms));
    s->err[s->n++] = r;
    s->sum_abs += a;
    s->w10 += a <= 0.10;
    s->w15 += a <= 0.15;
    for (int w = 0; w < KC_WORST; w++) {
        int j = s->worst[w];
        if (j < 0 || lg > fabs(log(cs[j].predicted_ms / cs[j].measured_ms))) {
            memmove(&s->worst[w + 1], &s->worst[w], sizeof s->worst[0] * (size_t)(KC_WORST - 1 - w));
            s->worst[w] = i;
            break;
        }
    }
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double kc_median(struct kc_stat *s)
{
    if (!s->n)
        return 0;
    qsort(s->err, (size_t)s->n, sizeof *s->err, dcmp);
    return s->n % 2 ? s->err[s->n / 2] : (s->err[s->n / 2 - 1] + s->err[s->n / 2]) / 2;
}

/* One row of the report: hw x class x half ("" hw and class: over all of them). */
struct kc_row {
    char hw[HW_NAME_LEN], cls[32];
    int heldout;
    struct kc_stat st;
};

static int kc_row_of(struct kc_row **rows, int *n, int *cap, const char *hw, const char *cls, int heldout)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp((*rows)[i].hw, hw) && !strcmp((*rows)[i].cls, cls) && (*rows)[i].heldout == heldout)
            return i;
    if (*n == *cap) {
        int nc = *cap ? *cap * 2 : 32;
        struct kc_row *r = realloc(*rows, sizeof *r * (size_t)nc);
        if (!r)
            return -1;
        *rows = r;
        *cap = nc;
    }
    struct kc_row *r = &(*rows)[*n];
    memset(r, 0, sizeof *r);
    dse_strlcpy(r->hw, hw, sizeof r->hw);
    dse_strlcpy(r->cls, cls, sizeof r->cls);
    r->heldout = heldout;
    for (int w = 0; w < KC_WORST; w++)
        r->st.worst[w] = -1;
    return (*n)++;
}

static int row_cmp(const void *a, const void *b)
{
    const struct kc_row *x = a, *y = b;
    int all_x = !x->hw[0], all_y = !y->hw[0];
    if (all_x != all_y)
        return all_x - all_y; /* the overall rows last */
    int c = strcmp(x->hw, y->hw);
    if (!c)
        c = strcmp(x->cls, y->cls);
    return c ? c : x->heldout - y->heldout;
}

/* A device's not-suspect row where none of its rows of that half is suspect: the device's own row again. */
static int kc_row_redundant(const struct kc_row *rows, int n_rows, int r)
{
    if (strcmp(rows[r].cls, KC_TRUSTED))
        return 0;
    for (int i = 0; i < n_rows; i++)
        if (!rows[i].cls[0] && !strcmp(rows[i].hw, rows[r].hw) && rows[i].heldout == rows[r].heldout)
            return rows[i].st.n == rows[r].st.n;
    return 0;
}

static void stat_json(cJSON *o, const struct kc_row *r, const struct kcase *cs, double median)
{
    const struct kc_stat *s = &r->st;
    if (r->hw[0])
        cJSON_AddStringToObject(o, "hw", r->hw);
    if (r->cls[0])
        cJSON_AddStringToObject(o, "class", r->cls);
    cJSON_AddStringToObject(o, "half", r->heldout ? "heldout" : "fit");
    cJSON_AddNumberToObject(o, "n", s->n);
    cJSON_AddNumberToObject(o, "mape_pct", s->n ? 100 * s->sum_abs / s->n : 0);
    cJSON_AddNumberToObject(o, "within10_pct", s->n ? 100.0 * s->w10 / s->n : 0);
    cJSON_AddNumberToObject(o, "within15_pct", s->n ? 100.0 * s->w15 / s->n : 0);
    cJSON_AddNumberToObject(o, "median_error_pct", 100 * median);
    cJSON *w = cJSON_AddArrayToObject(o, "worst");
    for (int k = 0; k < KC_WORST && s->worst[k] >= 0; k++) {
        const struct kcase *c = &cs[s->worst[k]];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddStringToObject(x, "case", c->id);
        cJSON_AddStringToObject(x, "shape", c->k.shape);
        cJSON_AddStringToObject(x, "precision", prec_names[c->k.prec]);
        cJSON_AddNumberToObject(x, "measured_ms", c->measured_ms);
        cJSON_AddNumberToObject(x, "predicted_ms", c->predicted_ms);
        cJSON_AddNumberToObject(x, "error_pct", 100 * kc_err(c));
        cJSON_AddItemToArray(w, x);
    }
}

/* Refuses an output (option opt) that is a file this run read: a corpus file, the hwdesc of system si and
 * the architecture file its default device takes its kernel terms from. */
/* Refuses an output that is one of the run's inputs: a corpus file, the hwdesc fitted (si >= 0) and the
 * architecture file it reads, a network row's workload (nets, when given). */
static int kc_out_checked(const char *out, const char *opt, char (*files)[1024], int nf, const struct kc_systems *xs,
                          int si, const struct kc_nets *nets, struct dse_err *e)
{
    int cap = nf + 2 + (nets ? nets->n_wl : 0), n = 0;
    const char **in = malloc(sizeof *in * (size_t)cap), **what = malloc(sizeof *what * (size_t)cap);
    char arch[1024];
    if (!in || !what) {
        free(in);
        free(what);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    for (int i = 0; i < nf; i++)
        in[n] = files[i], what[n++] = "a corpus file";
    if (si >= 0) {
        const struct hw_device *d = &xs->sys[si]->dev[eval_default_device(xs->sys[si])];
        in[n] = xs->path[si], what[n++] = "the hwdesc";
        if (d->arch[0] && !hw_arch_path(xs->path[si], d->arch, arch, sizeof arch))
            in[n] = arch, what[n++] = "the architecture file the hwdesc reads";
    }
    for (int i = 0; nets && i < nets->n_wl; i++)
        if (!nets->wl_missing[i])
            in[n] = nets->wl_path[i], what[n++] = "a network row's workload";
    int rc = out_file_not_input(out, opt, in, what, n, 0, e);
    free(in);
    free(what);
    return rc;
}

int cli_validate_measured(const struct cli_opt *opts)
{
    struct dse_err e;
    dse_err_clear(&e);
    const char *src = cli_get(opts, "measured"), *hw = cli_get(opts, "hw"), *half = cli_get(opts, "half");
    int json = cli_get(opts, "json") != NULL, rc = DSE_OK, nf = 0, want = -1; /* want: -1 both halves */
    enum fidelity f = FID_ANALYTICAL;
    char (*files)[1024] = malloc(sizeof *files * 64);
    struct kcorpus mc = {0};
    struct kc_systems xs = {0};
    struct kc_row *rows = NULL;
    int n_rows = 0, cap_rows = 0, *sysof = NULL, *wlof = NULL, *swof = NULL;
    struct kc_nets *nets = NULL;
    double *m = NULL, *p = NULL;
    if (!files)
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    if (half && !strcmp(half, "fit"))
        want = 0;
    else if (half && !strcmp(half, "heldout"))
        want = 1;
    else if (half && strcmp(half, "all")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--half", "expected fit, heldout or all, got '%s'", half);
        goto out;
    }
    if (cli_get(opts, "fidelity") && (rc = cli_fidelity(cli_get(opts, "fidelity"), &f, &e)))
        goto out;
    for (const char *bad[] = {"published", "import", "suite", "corpus", "software", "write-error-bars", "db", NULL},
                    **b = bad;
         *b; b++)
        if (cli_get(opts, *b)) {
            rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "validate: --measured does not go with --%s", *b);
            goto out;
        }
    if ((rc = kc_load(src, &mc, files, 64, &nf, &e)))
        goto out;
    if (!(sysof = malloc(sizeof *sysof * (size_t)mc.n))) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    int n_sel = 0;
    if (!(wlof = malloc(sizeof *wlof * (size_t)mc.n * 2)) || !(nets = calloc(1, sizeof *nets)) ||
        !(nets->wl = calloc(KC_MAX_NETS, sizeof *nets->wl))) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    swof = wlof + mc.n;
    for (int i = 0; i < mc.n && !rc; i++) { /* systems, workloads and stacks loaded once, before anything runs */
        struct kcase *c = &mc.c[i];
        sysof[i] = wlof[i] = swof[i] = -1;
        if ((hw && strcmp(hw, c->hw)) || (want >= 0 && c->heldout != want))
            continue;
        rc = kc_sys(&xs, c->hw, !c->net, &sysof[i], &e);
        if (!rc && c->net)
            rc = kc_net_of(nets, c, xs.sys[sysof[i]], xs.path[sysof[i]], &wlof[i], &swof[i], &e);
        n_sel++;
    }
    if (rc)
        goto out;
    if (!n_sel) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "no case of %s ran on %s%s%s", src, hw ? hw : "any device",
                         half ? " in half " : "", half ? half : "");
        goto out;
    }
    int failed = 0;
    struct dse_err fe;
    dse_err_clear(&fe);
#pragma omp parallel for schedule(dynamic, 64)
    for (int i = 0; i < mc.n; i++) {
        if (sysof[i] < 0 || failed)
            continue;
        struct dse_err le;
        dse_err_clear(&le);
        struct kcase *c = &mc.c[i];
        if (c->net && wlof[i] < 0) /* no graph: its reason is set */
            continue;
        if (c->net ? kcase_predict_net(c, xs.sys[sysof[i]], &nets->wl[wlof[i]], &nets->sw[swof[i]], f, &le)
                   : kcase_predict(c, xs.sys[sysof[i]], f, &le)) {
#pragma omp critical(kc_fail)
            if (!failed) {
                failed = 1;
                fe = le;
            }
        }
    }
    if (failed) {
        e = fe;
        rc = e.code ? e.code : DSE_ERUNTIME;
        goto out;
    }
    int n_ok = 0, n_skip = 0;
    m = malloc(sizeof *m * (size_t)n_sel);
    p = malloc(sizeof *p * (size_t)n_sel);
    if (!m || !p) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < mc.n; i++) {
        const struct kcase *c = &mc.c[i];
        if (sysof[i] < 0)
            continue;
        if (!c->ok) {
            n_skip++;
            continue;
        }
        m[n_ok] = c->measured_ms;
        p[n_ok++] = c->predicted_ms;
        /* rows: its class, its device, everything; and its device's rows that its source's README does not
         * doubt (a note without "suspect"), the figure a target is judged on where some rows are doubted */
        const char *keys[4][2] = {{c->hw, kcase_class(c)}, {c->hw, ""}, {"", ""}, {c->hw, KC_TRUSTED}};
        int nk = strstr(c->note, "suspect") ? 3 : 4;
        for (int k = 0; k < nk; k++) {
            int r = kc_row_of(&rows, &n_rows, &cap_rows, keys[k][0], keys[k][1], c->heldout);
            if (r < 0) {
                rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                goto out;
            }
            if (!rows[r].st.err && !(rows[r].st.err = malloc(sizeof(double) * (size_t)n_sel))) {
                rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                goto out;
            }
            kc_stat_add(&rows[r].st, mc.c, i);
        }
    }
    qsort(rows, (size_t)n_rows, sizeof *rows, row_cmp);
    const char *csv = cli_get(opts, "cases-csv");
    if (csv) { /* every predicted row, written whole or not at all, never over an input */
        struct sb b = {0};
        sb_add(&b, "case,hw,class,half,precision,shape,measured_ms,predicted_ms,error_pct\n");
        for (int i = 0; i < mc.n; i++) {
            const struct kcase *c = &mc.c[i];
            if (sysof[i] < 0 || !c->ok)
                continue;
            char shape[sizeof c->k.shape];
            dse_strlcpy(shape, c->k.shape, sizeof shape);
            for (char *q = shape; *q; q++)
                if (*q == ',')
                    *q = ';';
            sb_add(&b, "%s,%s,%s,%s,%s,%s,%.6g,%.6g,%.2f\n", c->id, c->hw, kcase_class(c),
                   c->heldout ? "heldout" : "fit", prec_names[c->k.prec], shape, c->measured_ms, c->predicted_ms,
                   100 * kc_err(c));
        }
        rc = b.oom ? dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory")
                   : kc_out_checked(csv, "--cases-csv", files, nf, &xs, -1, nets, &e);
        if (!rc)
            rc = out_file_write(csv, b.s, b.len, NULL, NULL, NULL, &e);
        free(b.s);
        if (rc)
            goto out;
    }
    char title[300], plot_path[1024] = "";
    snprintf(title, sizeof title, "dse validate --measured %s (%s tier)%s%s", src, fidelity_names[f],
             half ? ": " : "", half ? half : "");
    const char *pl = cli_get(opts, "plot");
    if (pl && strcmp(pl, "none") && (rc = kc_out_checked(pl, "--plot", files, nf, &xs, -1, nets, &e)))
        goto out;
    if (pl && strcmp(pl, "none") && n_ok) {
        struct dse_err pe;
        if (plot_pred_vs_meas(m, p, n_ok, title, pl, &pe))
            fprintf(stderr, "dse: plot not written: %s\n", pe.msg);
        else
            dse_strlcpy(plot_path, pl, sizeof plot_path);
    }
    if (json) {
        cJSON *o = cJSON_CreateObject(), *arr;
        cJSON_AddStringToObject(o, "measured", src);
        cJSON_AddStringToObject(o, "fidelity", fidelity_names[f]);
        cJSON_AddNumberToObject(o, "n", n_sel);
        cJSON_AddNumberToObject(o, "n_predicted", n_ok);
        arr = cJSON_AddArrayToObject(o, "rows");
        for (int r = 0; r < n_rows; r++) {
            if (kc_row_redundant(rows, n_rows, r))
                continue;
            cJSON *x = cJSON_CreateObject();
            double med = kc_median(&rows[r].st);
            stat_json(x, &rows[r], mc.c, med);
            cJSON_AddItemToArray(arr, x);
        }
        arr = cJSON_AddArrayToObject(o, "not_predicted");
        for (int i = 0, shown = 0; i < mc.n && shown < 20; i++)
            if (sysof[i] >= 0 && !mc.c[i].ok) {
                cJSON *x = cJSON_CreateObject();
                cJSON_AddStringToObject(x, "case", mc.c[i].id);
                cJSON_AddStringToObject(x, "reason", mc.c[i].reason);
                cJSON_AddItemToArray(arr, x);
                shown++;
            }
        cJSON_AddNumberToObject(o, "n_not_predicted", n_skip);
        if (plot_path[0])
            cJSON_AddStringToObject(o, "plot", plot_path);
        char *txt = ju_print(o, 1);
        if (txt)
            puts(txt);
        free(txt);
        cJSON_Delete(o);
    } else {
        printf("%s: %d rows from %d file%s, %d predicted", title, n_sel, nf, nf > 1 ? "s" : "", n_ok);
        int n_nograph = 0, n_missing = 0;
        for (int i = 0; i < mc.n; i++)
            n_nograph += sysof[i] >= 0 && mc.c[i].net && wlof[i] < 0;
        for (int i = 0; i < nets->n_wl; i++)
            n_missing += nets->wl_missing[i];
        if (n_skip > n_nograph) {
            int k = -1;
            for (int i = 0; i < mc.n && k < 0; i++)
                if (sysof[i] >= 0 && !mc.c[i].ok && !(mc.c[i].net && wlof[i] < 0))
                    k = i;
            printf(", %d not (first: %s: %s)", n_skip - n_nograph, mc.c[k].id, mc.c[k].reason);
        }
        if (n_nograph) {
            printf(";\n%d rows of %d networks dse has no graph of (models/ has no such workload):", n_nograph, n_missing);
            for (int i = 0, shown = 0; i < nets->n_wl; i++)
                if (nets->wl_missing[i] && shown++ < 40)
                    printf(" %s", nets->wl_name[i]);
            if (n_missing > 40)
                printf(" ...");
        }
        printf("\n\n%-28s %-18s %-8s %8s %8s %9s %9s %9s\n", "hw", "class", "half", "n", "MAPE", "within10", "within15",
               "median");
        for (int r = 0; r < n_rows; r++) {
            struct kc_row *x = &rows[r];
            if (kc_row_redundant(rows, n_rows, r))
                continue;
            double med = kc_median(&x->st);
            printf("%-28s %-18s %-8s %8d %7.1f%% %8.0f%% %8.0f%% %+8.1f%%\n", x->hw[0] ? x->hw : "all",
                   x->cls[0] ? x->cls : "all", x->heldout ? "heldout" : "fit", x->st.n, 100 * x->st.sum_abs / x->st.n,
                   100.0 * x->st.w10 / x->st.n, 100.0 * x->st.w15 / x->st.n, 100 * med);
        }
        printf("\nworst shapes per device and class (|log(predicted / measured)| largest first):\n");
        for (int r = 0; r < n_rows; r++) {
            struct kc_row *x = &rows[r];
            if (!x->cls[0] || !strcmp(x->cls, KC_TRUSTED))
                continue;
            for (int k = 0; k < KC_WORST && x->st.worst[k] >= 0; k++) {
                const struct kcase *c = &mc.c[x->st.worst[k]];
                printf("  %-26s %-18s %-7s %-5s %-44s measured %10.4f ms predicted %10.4f ms %+7.1f%%\n", c->hw,
                       kcase_class(c), c->heldout ? "heldout" : "fit", prec_names[c->k.prec], c->k.shape,
                       c->measured_ms, c->predicted_ms, 100 * kc_err(c));
            }
        }
        if (plot_path[0])
            printf("\nplot: %s\n", plot_path);
    }
out:
    if (rc)
        dse_err_print(stderr, &e);
    for (int r = 0; r < n_rows; r++)
        free(rows[r].st.err);
    free(rows);
    for (int i = 0; i < xs.n; i++)
        free(xs.sys[i]);
    free(sysof);
    free(wlof);
    kc_nets_free(nets);
    free(m);
    free(p);
    free(files);
    kcorpus_free(&mc);
    return rc;
}

/* MAPE and the share within +-10 % of the predicted rows among idx[0..n) whose class is cls ("": all). */
static void kc_summary(const struct kcase *cs, const int *idx, int n, const char *cls, int *count, double *mape,
                       double *w10)
{
    int k = 0, w = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        const struct kcase *c = &cs[idx[i]];
        if (!c->ok || (cls[0] && strcmp(kcase_class(c), cls)))
            continue;
        double a = fabs(kc_err(c));
        sum += a;
        w += a <= 0.10;
        k++;
    }
    *count = k;
    *mape = k ? 100 * sum / k : 0;
    *w10 = k ? 100.0 * w / k : 0;
}

static int kc_predict_all(struct kcorpus *mc, const int *idx, int n, const struct hw_system *sys, enum fidelity f,
                          struct dse_err *e)
{
    int failed = 0;
    struct dse_err fe;
    dse_err_clear(&fe);
#pragma omp parallel for schedule(dynamic, 64)
    for (int i = 0; i < n; i++) {
        if (failed)
            continue;
        struct dse_err le;
        dse_err_clear(&le);
        if (kcase_predict(&mc->c[idx[i]], sys, f, &le)) {
#pragma omp critical(kc_fail)
            if (!failed) {
                failed = 1;
                fe = le;
            }
        }
    }
    if (failed)
        *e = fe;
    return failed ? (fe.code ? fe.code : DSE_ERUNTIME) : DSE_OK;
}


/* The source of an architecture file's row_kernels (its resident threads' citation), or "". */
static void arch_row_source(const char *arch, char *buf, size_t n)
{
    char path[DSE_PATH_LEN], *text = NULL;
    size_t len = 0;
    cJSON *root = NULL;
    struct dse_err e;
    dse_err_clear(&e);
    buf[0] = '\0';
    if (!arch[0] || hw_arch_path(NULL, arch, path, sizeof path) || ju_read_file(path, JU_MAX_FILE_BYTES, &text, &len, &e) ||
        ju_parse(text, len, path, &root, &e)) {
        free(text);
        return;
    }
    free(text);
    const cJSON *ef = cJSON_GetObjectItemCaseSensitive(root, "efficiency");
    const cJSON *rk = cJSON_GetObjectItemCaseSensitive(ef, "row_kernels");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(rk, "source");
    if (cJSON_IsString(src)) {
        const char *at = strstr(src->valuestring, ": ");
        /* a file this writer wrote: its citation follows the kept-from clause */
        snprintf(buf, n, "%s", strncmp(src->valuestring, "iter_ns fitted", 14) == 0 && at ? at + 2 : src->valuestring);
    }
    cJSON_Delete(root);
}

/* dse calibrate --measured SOURCES --hw SYSTEM --level NAME --out FILE: a topology level's collective terms
 * fitted to the fit-half collective rows it carries: the innermost level's to the rows within one node of
 * SYSTEM, an outer level's to the rows spread over more than one node (the levels inside it as they stand,
 * fitted first). */
static int calibrate_level(const struct cli_opt *opts)
{
    struct dse_err e;
    dse_err_clear(&e);
    const char *src = cli_get(opts, "measured"), *hw = cli_get(opts, "hw"), *lname = cli_get(opts, "level"),
               *out = cli_get(opts, "out");
    char (*files)[1024] = malloc(sizeof *files * 64), hwpath[1024];
    struct kcorpus mc = {0};
    struct kc_systems xs = {0};
    int rc = DSE_OK, nf = 0, si = -1, *fit = NULL, *all = NULL, nfit = 0, nall = 0, level = -1;
    struct hw_system *cal = malloc(sizeof *cal);
    cJSON *root = NULL;
    if (!files || !cal) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    if (!hw || !out) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "calibrate --measured --level needs --hw SYSTEM and --out FILE");
        goto out;
    }
    if ((rc = kc_load(src, &mc, files, 64, &nf, &e)) || (rc = kc_sys(&xs, hw, 1, &si, &e)) ||
        (rc = kc_out_checked(out, "--out", files, nf, &xs, si, NULL, &e)))
        goto out;
    const struct hw_system *base = xs.sys[si];
    for (int l = 0; l < base->topo.n_level; l++)
        if (!strcmp(base->topo.level[l].name, lname))
            level = l;
    if (level < 0) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--level", "%s has no topology level '%s'", hw, lname);
        goto out;
    }
    const struct hw_topo_level *L0 = &base->topo.level[level];
    const char *span = level ? "across nodes" : "within one node";
    fit = malloc(sizeof *fit * (size_t)(mc.n ? mc.n : 1));
    all = malloc(sizeof *all * (size_t)(mc.n ? mc.n : 1));
    if (!fit || !all) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < mc.n; i++) {
        const struct kcase *c = &mc.c[i];
        if (strcmp(c->hw, base->name) || c->coll < 0 || strstr(c->note, "suspect") ||
            (level == 0 ? c->nodes != 1 || c->ranks > base->topo.level[0].count : c->nodes < 2))
            continue;
        all[nall++] = i;
        if (!c->heldout)
            fit[nfit++] = i;
    }
    static const char *const classes[] = {"", "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv",
                                          NULL};
    int bn[8][2], an[8][2];
    double bm[8][2], bw[8][2], am[8][2], aw[8][2];
    int *held = malloc(sizeof *held * (size_t)(nall ? nall : 1)), nheld = 0;
    if (!held) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < nall; i++)
        if (mc.c[all[i]].heldout)
            held[nheld++] = all[i];
    if ((rc = kc_predict_all(&mc, all, nall, base, FID_ANALYTICAL, &e)))
        goto held_out;
    for (int k = 0; classes[k]; k++) {
        kc_summary(mc.c, fit, nfit, classes[k], &bn[k][0], &bm[k][0], &bw[k][0]);
        kc_summary(mc.c, held, nheld, classes[k], &bn[k][1], &bm[k][1], &bw[k][1]);
    }
    double v[3];
    if ((rc = kc_fit_topo(base, level, mc.c, fit, nfit, v, &e)))
        goto held_out;
    *cal = *base;
    kc_topo_apply(cal, level, v);
    if ((rc = kc_predict_all(&mc, all, nall, cal, FID_ANALYTICAL, &e)))
        goto held_out;
    printf("dse calibrate --measured %s: %s level %s, fitted on %d fit-half collective rows %s; %d "
           "held out\n\n  efficiency %.3f (was %.3f), latency_us %.3g (was %.3g), base_latency_us %.3g (was %.3g)\n\n",
           src, hw, lname, nfit, span, nheld, v[0], L0->bandwidth_Bps / L0->line_rate_Bps, v[1], L0->latency_s * 1e6,
           v[2], L0->base_latency_s * 1e6);
    printf("%-16s %7s %9s %9s %9s %9s %9s\n", "collective", "fit n", "MAPE", "-> after", "held n", "MAPE", "-> after");
    for (int k = 0; classes[k]; k++) {
        kc_summary(mc.c, fit, nfit, classes[k], &an[k][0], &am[k][0], &aw[k][0]);
        kc_summary(mc.c, held, nheld, classes[k], &an[k][1], &am[k][1], &aw[k][1]);
        if (an[k][0] || an[k][1])
            printf("%-16s %7d %8.1f%% %8.1f%% %9d %8.1f%% %8.1f%%\n", classes[k][0] ? classes[k] : "all", an[k][0],
                   bm[k][0], am[k][0], an[k][1], bm[k][1], am[k][1]);
    }
    /* the system's hwdesc with the level's three figures replaced and their provenance appended */
    static const char *const ext[] = {".json", NULL};
    char *text = NULL;
    size_t len = 0;
    if ((rc = cli_resolve("hw", "hwdesc", hw, ext, hwpath, sizeof hwpath, &e)) ||
        (rc = ju_read_file(hwpath, JU_MAX_FILE_BYTES, &text, &len, &e)) || (rc = ju_parse(text, len, hwpath, &root, &e))) {
        free(text);
        goto held_out;
    }
    free(text);
    cJSON *lv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "topology"),
                                                                     "levels"), level);
    if (!cJSON_IsObject(lv)) {
        rc = dse_err_set(&e, DSE_EINPUT, hwpath, NULL, "topology.levels[%d]: not an object", level);
        goto held_out;
    }
    char date[16], note[700];
    time_t now = time(NULL);
    struct tm tmv;
    strftime(date, sizeof date, "%Y-%m-%d", gmtime_r(&now, &tmv));
    snprintf(note, sizeof note, "; efficiency, latency_us and base_latency_us fitted by dse calibrate --measured %s "
             "--hw %s --level %s (%s) on %d fit-half collective rows %s (held-out MAPE over %d rows "
             "%.1f %% before, %.1f %% after; before: %.3f, %.3g us, %.3g us)",
             src, hw, lname, date, nfit, span, nheld, bm[0][1], am[0][1], L0->bandwidth_Bps / L0->line_rate_Bps,
             L0->latency_s * 1e6, L0->base_latency_s * 1e6);
    /* the fit's provenance in the level's note (its source keeps the line rate's derivation) */
    static const char *const keys[3] = {"efficiency", "latency_us", "base_latency_us"};
    static const double scale[3] = {1e4, 1e3, 1e3};
    for (int k = 0; k < 3; k++) { /* set, whether the level had the key or not */
        cJSON_DeleteItemFromObjectCaseSensitive(lv, keys[k]);
        cJSON_AddNumberToObject(lv, keys[k], round(v[k] * scale[k]) / scale[k]);
    }
    /* the level's note keeps what it said before the first fit; a refit's clause replaces the last one's */
    const cJSON *on = cJSON_GetObjectItemCaseSensitive(lv, "note");
    char *old = cJSON_IsString(on) ? strdup(on->valuestring) : strdup("");
    if (!old) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto held_out;
    }
    char *cut = strstr(old, "efficiency, latency_us and base_latency_us fitted by dse calibrate --measured");
    if (cut)
        *(cut > old + 1 && cut[-2] == ';' ? cut - 2 : cut) = 0;
    size_t nl = strlen(old) + strlen(note) + 1;
    char *merged = malloc(nl);
    if (!merged) {
        free(old);
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto held_out;
    }
    snprintf(merged, nl, "%s%s", old, old[0] ? note : note + 2);
    cJSON_DeleteItemFromObjectCaseSensitive(lv, "note");
    cJSON_AddStringToObject(lv, "note", merged);
    free(merged);
    free(old);
    if (am[0][1] > bm[0][1] && !cli_get(opts, "force")) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "calibrate: %s not written: held-out MAPE %.1f %% after fitting, "
                         "%.1f %% before (--force writes it anyway)", out, am[0][1], bm[0][1]);
        goto held_out;
    }
    rc = cli_write_json(root, out, 1, &e);
    root = NULL;
    if (!rc)
        printf("\nwrote %s\n", out);
held_out:
    free(held);
out:
    if (rc)
        dse_err_print(stderr, &e);
    cJSON_Delete(root);
    for (int i = 0; i < xs.n; i++)
        free(xs.sys[i]);
    free(files);
    free(cal);
    free(fit);
    free(all);
    kcorpus_free(&mc);
    return rc;
}

/* The rows idx[0..n) of mc predicted whole on sys (network rows: workloads and stacks from nets). */
static int kc_predict_nets(struct kcorpus *mc, const int *idx, int n, const struct hw_system *sys,
                           const struct wl_model *const *m, const struct sw_stack *const *sw, enum fidelity f,
                           struct dse_err *e)
{
    for (int i = 0; i < n; i++) {
        int rc = kcase_predict_net(&mc->c[idx[i]], sys, m[i], sw[i], f, e);
        if (rc)
            return rc;
    }
    return DSE_OK;
}

/* dse calibrate --measured SOURCE --hw NAME --out FILE on a network source: the device's terms fitted to its
 * fit-half network rows (calib_net.c), written into a copy of the hwdesc; refused when the held-out rows come
 * out worse than before (--force writes it, marked). */
static int calibrate_network(const struct cli_opt *opts, struct kcorpus *mc, char (*files)[1024], int nf)
{
    struct dse_err e;
    dse_err_clear(&e);
    const char *src = cli_get(opts, "measured"), *hw = cli_get(opts, "hw"), *outp = cli_get(opts, "out");
    enum fidelity f = FID_ANALYTICAL;
    struct kc_systems xs = {0};
    struct kc_nets *nets = calloc(1, sizeof *nets);
    int rc = DSE_OK, si = -1, n = 0, nfit = 0, nheld = 0, n_nograph = 0, *hidx = NULL;
    int *rows = malloc(sizeof *rows * (size_t)(mc->n + 1)), *fit = malloc(sizeof *fit * (size_t)(mc->n + 1));
    const struct wl_model **m = malloc(sizeof *m * (size_t)(mc->n + 1)), **mf = malloc(sizeof *mf * (size_t)(mc->n + 1));
    const struct sw_stack **sw = malloc(sizeof *sw * (size_t)(mc->n + 1)), **swf = malloc(sizeof *swf * (size_t)(mc->n + 1));
    struct hw_system *cal = malloc(sizeof *cal);
    cJSON *root = NULL, *dv;
    if (!nets || !rows || !fit || !m || !mf || !sw || !swf || !cal || !(nets->wl = calloc(KC_MAX_NETS, sizeof *nets->wl))) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    if (!outp) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--out", "calibrate --measured on a network source needs --out FILE (the "
                                                      "hwdesc to write)");
        goto out;
    }
    if (cli_get(opts, "fidelity") && (rc = cli_fidelity(cli_get(opts, "fidelity"), &f, &e)))
        goto out;
    if ((rc = kc_sys(&xs, hw, 0, &si, &e)))
        goto out;
    const struct hw_system *base = xs.sys[si];
    int dev = eval_default_device(base), classes[EC_COUNT] = {0};
    for (int i = 0; i < mc->n && !rc; i++) {
        struct kcase *c = &mc->c[i];
        int wi, swi;
        if (strcmp(c->hw, hw) || !c->net || strstr(c->note, "suspect"))
            continue;
        if ((rc = kc_net_of(nets, c, base, xs.path[si], &wi, &swi, &e)))
            goto out;
        if (wi < 0) {
            n_nograph++;
            continue;
        }
        rows[n] = i;
        m[n] = &nets->wl[wi];
        sw[n++] = &nets->sw[swi];
        if (!c->heldout)
            fit[nfit] = i, mf[nfit] = &nets->wl[wi], swf[nfit++] = &nets->sw[swi];
        else
            nheld++;
    }
    /* which classes a term can be fitted for: those at least KC_NET_MIN_NETS fit-half networks hold ops of */
    int seen[KC_MAX_NETS] = {0};
    for (int i = 0; i < nfit; i++)
        seen[mf[i] - nets->wl] = 1;
    for (int i = 0; i < nets->n_wl; i++) {
        struct wl_graph g;
        struct wl_shape sh = {.batch = 1, .tokens = 128, .tp = 1};
        int has[EC_COUNT] = {0};
        if (!seen[i] || nets->wl_missing[i] || wl_build(&nets->wl[i], &sh, &g, &e)) {
            dse_err_clear(&e);
            continue;
        }
        for (int k = 0; k < g.n_op; k++)
            if (!wl_op_is_view(&g.op[k]))
                has[model_eff_class(&g.op[k])] = 1;
        for (int k = 0; k < EC_COUNT; k++)
            classes[k] += has[k];
        wl_graph_free(&g);
    }
    for (int k = 0; k < EC_COUNT; k++)
        classes[k] = classes[k] >= KC_NET_MIN_NETS;
    if ((rc = kc_out_checked(outp, "--out", files, nf, &xs, si, nets, &e)))
        goto out;
    if (nfit < 4 || !nheld) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "%s has %d fit-half and %d held-out network rows dse has graphs of in "
                                                     "%s: at least 4 and 1 are needed", hw, nfit, nheld, src);
        goto out;
    }
    if ((rc = kc_predict_nets(mc, rows, n, base, m, sw, f, &e)))
        goto out;
    int cnt[2][2];
    double mape[2][2], w10[2][2];
    if (!(hidx = malloc(sizeof *hidx * (size_t)(n + 1)))) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    int nh = 0;
    for (int i = 0; i < n; i++)
        if (mc->c[rows[i]].heldout)
            hidx[nh++] = rows[i];
    kc_summary(mc->c, fit, nfit, "", &cnt[0][0], &mape[0][0], &w10[0][0]);
    kc_summary(mc->c, hidx, nh, "", &cnt[1][0], &mape[1][0], &w10[1][0]);
    *cal = *base;
    struct kc_net_fit kf;
    fprintf(stderr, "dse calibrate: fitting %s's terms to %d fit-half network rows of %s\n", hw, nfit, src);
    if ((rc = kc_fit_net(cal, dev, mc->c, fit, nfit, mf, swf, classes, f, &kf, &e)))
        goto out;
    rc = kc_predict_nets(mc, rows, n, cal, m, sw, f, &e);
    kc_summary(mc->c, fit, nfit, "", &cnt[0][1], &mape[0][1], &w10[0][1]);
    kc_summary(mc->c, hidx, nh, "", &cnt[1][1], &mape[1][1], &w10[1][1]);
    if (rc)
        goto out;
    printf("dse calibrate --measured %s --hw %s: %d fit and %d held-out rows predicted (%d of its rows have no "
           "graph)\n  fitted:", src, hw, cnt[0][0], cnt[1][0], n_nograph);
    for (int k = 0; k < kf.n; k++) {
        char nm[64];
        kc_net_fit_names(&kf, k, nm, sizeof nm);
        printf("%s %s %.4g", k ? "," : "", nm, kc_net_fit_shown(&kf, k));
    }
    printf("\n  MAPE  fit: %.1f%% -> %.1f%%  held-out: %.1f%% -> %.1f%% (within +-10 %%: %.0f%% -> %.0f%%)\n",
           mape[0][0], mape[0][1], mape[1][0], mape[1][1], w10[1][0], w10[1][1]);
    int worse = mape[1][1] > mape[1][0];
    if (worse && !cli_get(opts, "force")) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "calibrate: the fit is worse on the held-out rows (%.1f%% against "
                                                       "%.1f%% before): %s not written (--force writes it anyway)",
                         mape[1][1], mape[1][0], outp);
        goto out;
    }
    if ((rc = cli_hwdesc_device(xs.path[si], cal->dev[dev].name, &root, &dv, &e)))
        goto out;
    char today[16], note[1024];
    cli_today(today, sizeof today);
    snprintf(note, sizeof note,
             "fitted by dse calibrate --measured %s --hw %s (%s, %s tier) on its %d fit-half network rows (the split rules "
             "of validate/measured/README.md; coordinate descent on log(predicted / measured), src/calib_net.c); held-out "
             "MAPE over %d rows %.1f%% before, %.1f%% after; fit half %.1f%% -> %.1f%%%s",
             src, hw, today, fidelity_names[f], cnt[0][0], cnt[1][0], mape[1][0], mape[1][1], mape[0][0], mape[0][1],
             worse ? " (written with --force: worse held out than before)" : "");
    const struct hw_device *d = &cal->dev[dev];
    cJSON *ef = cJSON_GetObjectItemCaseSensitive(dv, "efficiency");
    if (!ef)
        ef = cJSON_AddObjectToObject(dv, "efficiency");
    cJSON *pc = cJSON_CreateObject(), *pl = cJSON_GetObjectItemCaseSensitive(ef, "per_level");
    for (int k = 0; k < EC_COUNT; k++)
        cJSON_AddNumberToObject(pc, hw_eff_class_names[k], round(d->eff_class[k] * 1e4) / 1e4);
    cJSON_DeleteItemFromObjectCaseSensitive(ef, "per_class");
    cJSON_AddItemToObject(ef, "per_class", pc);
    if (!pl)
        pl = cJSON_AddObjectToObject(ef, "per_level");
    cJSON_DeleteItemFromObjectCaseSensitive(pl, d->mem[d->n_mem - 1].name);
    cJSON_AddNumberToObject(pl, d->mem[d->n_mem - 1].name, round(d->eff_level[d->n_mem - 1] * 1e4) / 1e4);
    cJSON_DeleteItemFromObjectCaseSensitive(ef, "heldout_mape_pct");
    cJSON_AddNumberToObject(ef, "heldout_mape_pct", round(mape[1][1] * 10) / 10);
    cJSON_DeleteItemFromObjectCaseSensitive(ef, "source");
    cJSON_AddStringToObject(ef, "source", note);
    if (d->per_op_s > 0) {
        cJSON *ov = cJSON_GetObjectItemCaseSensitive(dv, "overhead");
        if (!ov)
            ov = cJSON_AddObjectToObject(dv, "overhead");
        cJSON_DeleteItemFromObjectCaseSensitive(ov, "per_op_us");
        cJSON_AddNumberToObject(ov, "per_op_us", round(d->per_op_s * 1e6 * 1000) / 1000);
        if (cJSON_GetObjectItemCaseSensitive(ov, "per_step_us")) {
            cJSON_DeleteItemFromObjectCaseSensitive(ov, "per_step_us");
            cJSON_AddNumberToObject(ov, "per_step_us", round(d->per_step_s * 1e6 * 1000) / 1000);
        }
    }
    if (d->ctx.present) {
        cJSON *cx = cJSON_GetObjectItemCaseSensitive(dv, "contexts");
        cJSON_DeleteItemFromObjectCaseSensitive(cx, "capacity_MiB");
        cJSON_DeleteItemFromObjectCaseSensitive(cx, "switch_us");
        cJSON_DeleteItemFromObjectCaseSensitive(cx, "source");
        cJSON_AddNumberToObject(cx, "capacity_MiB", round(d->ctx.capacity_bytes / (1024.0 * 1024) * 100) / 100);
        cJSON_AddNumberToObject(cx, "switch_us", round(d->ctx.switch_s * 1e6 * 10) / 10);
        cJSON_AddStringToObject(cx, "source", note);
    }
    if ((rc = cli_write_json(root, outp, 1, &e)))
        goto out;
    root = NULL;
    printf("  wrote %s\n", outp);
out:
    if (rc)
        dse_err_print(stderr, &e);
    cJSON_Delete(root);
    for (int i = 0; i < xs.n; i++)
        free(xs.sys[i]);
    kc_nets_free(nets);
    free(hidx);
    free(rows);
    free(fit);
    free(m);
    free(mf);
    free(sw);
    free(swf);
    free(cal);
    return rc;
}

int cli_calibrate_measured(const struct cli_opt *opts)
{
    if (cli_get(opts, "level"))
        return calibrate_level(opts);
    if (!cli_get(opts, "arch") && cli_get(opts, "hw") && cli_get(opts, "measured")) { /* a network source? */
        struct kcorpus mc = {0};
        char(*files)[1024] = malloc(sizeof *files * 64);
        struct dse_err e;
        int nf = 0, rc, net = 0;
        if (!files)
            return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
        if ((rc = kc_load(cli_get(opts, "measured"), &mc, files, 64, &nf, &e))) {
            dse_err_print(stderr, &e);
            free(files);
            return rc;
        }
        for (int i = 0; i < mc.n && !net; i++)
            net = mc.c[i].net && !strcmp(mc.c[i].hw, cli_get(opts, "hw"));
        if (net)
            rc = calibrate_network(opts, &mc, files, nf);
        kcorpus_free(&mc);
        free(files);
        if (net)
            return rc;
    }
    struct dse_err e;
    dse_err_clear(&e);
    const char *src = cli_get(opts, "measured"), *hw = cli_get(opts, "hw"), *arch = cli_get(opts, "arch");
    enum fidelity f = FID_ANALYTICAL;
    char (*files)[1024] = malloc(sizeof *files * 64), out[1024];
    struct kcorpus mc = {0};
    struct kc_systems xs = {0};
    int rc = DSE_OK, nf = 0, *fit = NULL, *held = NULL, *all = NULL, nfit = 0, nheld = 0, nall = 0, si = -1, n_suspect = 0;
    struct hw_system *cal = malloc(sizeof *cal);
    if (!files || !cal) {
        free(files);
        free(cal);
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    }
    if (!hw || !arch) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "calibrate --measured needs --hw NAME (the board whose rows are "
                                                     "fitted) and --arch NAME (the architecture file written)");
        goto out;
    }
    for (const char *c = arch; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.') || *arch == '.') {
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--arch", "expected a name of [a-z0-9._-], got '%s'", arch);
            goto out;
        }
    if (!cli_get(opts, "out") || snprintf(out, sizeof out, "%s", cli_get(opts, "out")) >= (int)sizeof out) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--out", "calibrate --measured --arch needs --out FILE (the architecture "
                                                        "file to write: not the one the board reads, which stays "
                                                        "until the new one is checked and copied there)");
        goto out;
    }
    if (cli_get(opts, "fidelity") && (rc = cli_fidelity(cli_get(opts, "fidelity"), &f, &e)))
        goto out;
    if ((rc = kc_load(src, &mc, files, 64, &nf, &e)) || (rc = kc_sys(&xs, hw, 0, &si, &e)) ||
        (rc = kc_out_checked(out, "--out", files, nf, &xs, si, NULL, &e)))
        goto out;
    fit = malloc(sizeof *fit * (size_t)mc.n);
    held = malloc(sizeof *held * (size_t)mc.n);
    all = malloc(sizeof *all * (size_t)mc.n);
    if (!fit || !held || !all) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < mc.n; i++) {
        if (strcmp(mc.c[i].hw, hw) || mc.c[i].coll >= 0)
            continue;
        if (strstr(mc.c[i].note, "suspect")) { /* a row its source README doubts: not fitted, not scored */
            n_suspect++;
            continue;
        }
        all[nall++] = i;
        if (mc.c[i].heldout)
            held[nheld++] = i;
        else
            fit[nfit++] = i;
    }
    if (!nfit || !nheld) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "%s has %d fit-half and %d held-out kernel rows in %s: both "
                                                     "halves are needed", hw, nfit, nheld, src);
        goto out;
    }
    const struct hw_system *base = xs.sys[si];
    *cal = *base;
    kc_trace_view(cal);
    if ((rc = kc_predict_all(&mc, all, nall, cal, f, &e)))
        goto out;
    static const char *const classes[] = {"", "gemm", "attention_prefill", "attention_decode", "rmsnorm", "layernorm",
                                          "softmax", "silu_mul", "gelu", "silu", "add", "rope", NULL};
    int bn[16][2];
    double bm[16][2], bw[16][2];
    for (int k = 0; classes[k]; k++) {
        kc_summary(mc.c, fit, nfit, classes[k], &bn[k][0], &bm[k][0], &bw[k][0]);
        kc_summary(mc.c, held, nheld, classes[k], &bn[k][1], &bm[k][1], &bw[k][1]);
    }
    struct kc_fit kf;
    int used = 0;
    int dev = eval_default_device(base);
    fprintf(stderr, "dse calibrate: fitting %s's kernel terms to %d fit-half rows of %s on %s\n", arch, nfit, src, hw);
    if ((rc = kc_fit_arch(base, mc.c, fit, nfit, f, &kf, &used, &e)))
        goto out;
    *cal = *base;
    kc_fit_apply(&cal->dev[dev], &kf);
    const struct hw_device fitted = cal->dev[dev];
    kc_trace_view(cal);
    if ((rc = kc_predict_all(&mc, all, nall, cal, f, &e)))
        goto out;
    printf("dse calibrate --measured %s: architecture %s, fitted on %d of %d fit-half kernel rows of %s (%s tier); "
           "%d rows held out; %d rows whose note says suspect left out of both\n\nfitted terms:\n", src, arch, used, nfit, hw,
           fidelity_names[f], nheld, n_suspect);
    for (int i = 0; i < kf.n; i++) {
        const char *what = kf.kind[i] == KN_CLASS || kf.kind[i] == KN_MCLASS ? hw_eff_class_names[kf.arg[i]]
                           : kf.kind[i] == KN_PREC                           ? prec_names[kf.arg[i]]
                           : kf.kind[i] == KN_FN                             ? wl_fn_names[kf.arg[i]]
                           : kf.kind[i] == KN_ROW                            ? row_kind_names[kf.arg[i]]
                                                                             : "";
        printf("  %-12s %-18s %10.4g\n", kc_knob_names[kf.kind[i]], what, kf.value[i]);
    }
    printf("\n%-18s %7s %9s %9s %10s %9s %9s %10s\n", "class", "fit n", "MAPE", "-> after", "within10", "held n",
           "MAPE", "-> after");
    double after[2] = {0, 0};
    for (int k = 0; classes[k]; k++) {
        int an[2];
        double am[2], aw[2];
        kc_summary(mc.c, fit, nfit, classes[k], &an[0], &am[0], &aw[0]);
        kc_summary(mc.c, held, nheld, classes[k], &an[1], &am[1], &aw[1]);
        if (!k) {
            after[0] = am[0];
            after[1] = am[1];
        }
        if (!an[0] && !an[1])
            continue;
        printf("%-18s %7d %8.1f%% %8.1f%% %4.0f->%3.0f%% %9d %8.1f%% %8.1f%% (within10 %.0f -> %.0f %%)\n",
               classes[k][0] ? classes[k] : "all", an[0], bm[k][0], am[0], bw[k][0], aw[0], an[1], bm[k][1], am[1],
               bw[k][1], aw[1]);
    }
    /* The architecture file: every kernel term of the device as fitted (the ones the rows could not show
     * kept from the board it was fitted on, and said so). */
    cJSON *root = cJSON_CreateObject(), *ef, *pc, *mcl, *pp;
    char date[16], srcline[1400], kept[400] = "";
    time_t now = time(NULL);
    struct tm tmv;
    strftime(date, sizeof date, "%Y-%m-%d", gmtime_r(&now, &tmv));
    cJSON_AddStringToObject(root, "schema", "dse-arch-1");
    cJSON_AddStringToObject(root, "name", arch);
    cJSON_AddStringToObject(root, "description", fitted.model[0] ? fitted.model : arch);
    ef = cJSON_AddObjectToObject(root, "efficiency");
    pc = cJSON_AddObjectToObject(ef, "per_class");
    mcl = cJSON_AddObjectToObject(ef, "memory_per_class");
    for (int c = 0; c < EC_COUNT; c++) {
        cJSON_AddNumberToObject(pc, hw_eff_class_names[c], round(fitted.eff_class[c] * 1e4) / 1e4);
        cJSON_AddNumberToObject(mcl, hw_eff_class_names[c], round(fitted.eff_mclass[c] * 1e4) / 1e4);
    }
    cJSON *mf = cJSON_AddObjectToObject(ef, "memory_per_function");
    for (int fn = FN_NONE + 1; fn < FN_COUNT; fn++)
        if (fitted.eff_fn[fn] != 1)
            cJSON_AddNumberToObject(mf, wl_fn_names[fn], round(fitted.eff_fn[fn] * 1e4) / 1e4);
    pp = cJSON_AddObjectToObject(ef, "per_precision");
    for (int p = 0; p < P_COUNT; p++)
        if (fitted.eff_prec[p] != 1)
            cJSON_AddNumberToObject(pp, prec_names[p], round(fitted.eff_prec[p] * 1e4) / 1e4);
    cJSON_AddNumberToObject(ef, "gemm_k_half", round(fitted.gemm_k_half * 10) / 10);
    if (fitted.gemm_k_fill > 0)
        cJSON_AddNumberToObject(ef, "gemm_k_fill", round(fitted.gemm_k_fill * 10) / 10);
    if (fitted.gemm_wave_tail > 0)
        cJSON_AddNumberToObject(ef, "gemm_wave_tail", round(fitted.gemm_wave_tail * 1e4) / 1e4);
    cJSON_AddNumberToObject(ef, "main_memory", round(fitted.eff_level[fitted.n_mem - 1] * 1e4) / 1e4);
    if (fitted.bw_half_bytes > 0)
        cJSON_AddNumberToObject(ef, "bw_half_MB", fitted.bw_half_bytes * 1e-6);
    if (fitted.serial_fraction > 0)
        cJSON_AddNumberToObject(ef, "serial_fraction", fitted.serial_fraction);
    cJSON_AddNumberToObject(ef, "kernel_us", round(fitted.kernel_s * 1e8) / 100);
    if (fitted.row_threads_per_sm > 0) { /* the row kernels: resident threads kept, step times as fitted */
        char rsrc[1024], rline[1400];
        arch_row_source(fitted.arch, rsrc, sizeof rsrc);
        cJSON *rk = cJSON_AddObjectToObject(ef, "row_kernels"), *it;
        cJSON_AddNumberToObject(rk, "threads_per_sm", fitted.row_threads_per_sm);
        it = cJSON_AddObjectToObject(rk, "iter_ns");
        for (int k = 0; k < RK_COUNT; k++)
            if (fitted.row_iter_s[k] > 0)
                cJSON_AddNumberToObject(it, row_kind_names[k], round(fitted.row_iter_s[k] * 1e10) / 10);
        snprintf(rline, sizeof rline, "iter_ns fitted with the terms above; threads_per_sm kept from hwdesc/arch/%s.json: %s",
                 fitted.arch, rsrc[0] ? rsrc : "(no source there)");
        cJSON_AddStringToObject(rk, "source", rline);
    }
    for (int c = 0; c < EC_COUNT; c++) {
        int free_c = 0;
        for (int i = 0; i < kf.n; i++)
            free_c |= (kf.kind[i] == KN_CLASS || kf.kind[i] == KN_MCLASS) && kf.arg[i] == c;
        if (!free_c)
            snprintf(kept + strlen(kept), sizeof kept - strlen(kept), "%s%s", kept[0] ? ", " : "",
                     hw_eff_class_names[c]);
    }
    snprintf(srcline, sizeof srcline,
             "fitted by dse calibrate --measured %s --hw %s --arch %s (%s, %s tier) on %d of the %d fit-half kernel "
             "rows (validate/measured: the split rules of its README); held-out MAPE over %d rows %.1f %% before, "
             "%.1f %% after; fit half %.1f %% -> %.1f %%. Classes without kernel rows (%s) keep %s's values from its "
             "end-to-end fit",
             src, hw, arch, date, fidelity_names[f], used, nfit, nheld, bm[0][1], after[1], bm[0][0], after[0],
             kept[0] ? kept : "none", hw);
    cJSON_AddStringToObject(ef, "source", srcline);
    cJSON *fo = cJSON_AddObjectToObject(root, "fit");
    cJSON_AddStringToObject(fo, "measured", src);
    cJSON_AddStringToObject(fo, "hw", hw);
    cJSON_AddStringToObject(fo, "date", date);
    cJSON_AddNumberToObject(fo, "fit_rows", nfit);
    cJSON_AddNumberToObject(fo, "rows_used", used);
    cJSON_AddNumberToObject(fo, "heldout_rows", nheld);
    cJSON_AddNumberToObject(fo, "heldout_mape_before_pct", round(bm[0][1] * 10) / 10);
    cJSON_AddNumberToObject(fo, "heldout_mape_after_pct", round(after[1] * 10) / 10);
    cJSON_AddStringToObject(root, "source", "dse calibrate --measured (src/calib_arch.c; docs/models.md, "
                                            "\"Architecture terms\")");
    if (after[1] > bm[0][1] && !cli_get(opts, "force")) { /* a fit worse held out than what it replaces */
        cJSON_Delete(root);
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "calibrate: %s not written: held-out MAPE %.1f %% after fitting, "
                         "%.1f %% before (--force writes it anyway)", out, after[1], bm[0][1]);
        goto out;
    }
    if ((rc = cli_write_json(root, out, 0, &e)))
        goto out;
    printf("\nwrote %s\n", out);
out:
    if (rc)
        dse_err_print(stderr, &e);
    for (int i = 0; i < xs.n; i++)
        free(xs.sys[i]);
    free(files);
    free(cal);
    free(fit);
    free(held);
    free(all);
    kcorpus_free(&mc);
    return rc;
}
