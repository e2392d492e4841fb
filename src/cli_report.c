/* cli_report.c -- `dse report DB [--run ID] [--color AXIS] [-o FILE.html]`: one sweep run as a
 * self-contained HTML page (report.h, docs/report.md). The points come from the database (store); the
 * breakdowns and dse compare's table from the first front points evaluated again with dse show's
 * machinery (cli_rerun_open), only when the run's inputs are unchanged and the evaluation reproduces
 * the stored objectives: the page never shows numbers other than the sweep's. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "outfile.h"
#include "pareto.h"
#include "report.h"

#define BD_MAX 200     /* front points evaluated again, in dse sweep's front order */
#define DICT_SLOTS 2048 /* > 2 x SW_MAX_VALUES: the open-addressing table never fills */

/* An axis's distinct values as stored, in the order first met, and their hash table. */
struct dict {
    int n;
    char *v[SW_MAX_VALUES];
    short slot[DICT_SLOTS]; /* value index + 1, 0: empty */
};

/* What store_scan_feasible hands over, gathered. */
struct gather {
    int n_axes, n_obj, rc;
    struct dict *d;
    long long n, cap;
    long long *point;
    unsigned char *front;
    unsigned short *code;
    double *obj, *err;
    const char *const *axis_name;
    struct dse_err *e;
};

static int dict_code(struct dict *d, const char *s)
{
    unsigned h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 16777619u;
    for (unsigned k = h % DICT_SLOTS;; k = (k + 1) % DICT_SLOTS) {
        if (!d->slot[k]) {
            if (d->n == SW_MAX_VALUES || !(d->v[d->n] = strdup(s)))
                return -1;
            d->slot[k] = (short)++d->n;
            return d->n - 1;
        }
        if (!strcmp(d->v[d->slot[k] - 1], s))
            return d->slot[k] - 1;
    }
}

static void gather_one(void *ctx, long long point, int pareto, const double *num, const char *const *txt)
{
    struct gather *g = ctx;
    if (g->rc)
        return;
    if (g->n == g->cap) {
        long long cap = g->cap ? 2 * g->cap : 4096;
        long long *p = realloc(g->point, sizeof *p * (size_t)cap);
        g->point = p ? p : g->point;
        unsigned char *f = p ? realloc(g->front, (size_t)cap) : NULL;
        g->front = f ? f : g->front;
        unsigned short *c = f ? realloc(g->code, sizeof *c * (size_t)cap * (size_t)(g->n_axes ? g->n_axes : 1)) : NULL;
        g->code = c ? c : g->code;
        double *o = c ? realloc(g->obj, sizeof *o * (size_t)cap * (size_t)g->n_obj) : NULL;
        g->obj = o ? o : g->obj;
        double *er = o ? realloc(g->err, sizeof *er * (size_t)cap * 2) : NULL;
        g->err = er ? er : g->err;
        if (!er) {
            g->rc = dse_err_set(g->e, DSE_ERUNTIME, NULL, NULL, "out of memory reading the points");
            return;
        }
        g->cap = cap;
    }
    long long i = g->n;
    g->point[i] = point;
    g->front[i] = (unsigned char)pareto;
    memcpy(g->obj + (size_t)i * g->n_obj, num, sizeof *num * (size_t)g->n_obj);
    g->err[2 * i] = num[g->n_obj];
    g->err[2 * i + 1] = num[g->n_obj + 1];
    for (int a = 0; a < g->n_axes; a++) {
        int c = dict_code(&g->d[a], txt[a]);
        if (c < 0) {
            g->rc = dse_err_set(g->e, DSE_ERUNTIME, NULL, NULL, "axis %s: more than %d values, or out of memory",
                                g->axis_name[a], SW_MAX_VALUES);
            return;
        }
        g->code[(size_t)i * g->n_axes + a] = (unsigned short)c;
    }
    g->n++;
}

static void reason_one(void *ctx, const char *reason, long long n) { cli_why_add(ctx, reason, n); }

/* A front point evaluated again, with what its page entry points into. */
struct bd_keep {
    struct report_op *op;
    char (*name)[WL_NAME_LEN];
    struct report_roof roof[HW_MAX_DEVICES];
    char note[400];
    struct eval_totals t;
    int feasible, calibrated;
    char eb[32];
    long long i; /* index in the gathered points */
};

/* The roofs of the devices that ran operators: each one's GEMM peak at the precision of its operator
 * with the most FLOPs, and its main memory's bandwidth. */
static int roofs(const struct sweep_detail *d, struct report_roof *roof)
{
    int n = 0;
    for (int dv = 0; dv < d->sys->n_dev; dv++) {
        const struct eval_op *top = NULL;
        for (int i = 0; i < d->res.n_ops; i++)
            if (d->res.ops[i].dev == dv && d->res.ops[i].flops > 0 && (!top || d->res.ops[i].flops > top->flops))
                top = &d->res.ops[i];
        const struct hw_device *hd = &d->sys->dev[dv];
        if (!top || !hd->n_mem)
            continue;
        roof[n++] = (struct report_roof){hd->name, prec_names[top->cprec], hw_gemm_peak(hd, top->cprec, NULL),
                                         hd->mem[hd->n_mem - 1].bandwidth_Bps};
    }
    return n;
}

/* Evaluates front point pts index i again into k; a note into why when it cannot be shown. */
static int break_down(const struct cli_rerun *rr, const struct gather *g, const struct report_obj *obj, long long i,
                      struct sweep_detail *det, struct bd_keep *k, struct report_bd *bd, char *why, size_t wn,
                      struct dse_err *e)
{
    struct sw_row row;
    long long point = g->point[i];
    if (sweep_eval_detail(rr->prep, point, 0, &row, det, e))
        return e->code ? e->code : DSE_ERUNTIME;
    /* the numbers must be the sweep's: every objective as stored, bit for bit up to rounding */
    for (int o = 0; o < g->n_obj && !why[0]; o++) {
        const struct metric *m = metric_find(obj[o].name);
        double now = m ? row.metric[m - metric_table] : NAN, was = g->obj[(size_t)i * g->n_obj + o];
        if (!row.feasible || !(fabs(now - was) <= 1e-9 * fabs(was)))
            snprintf(why, wn, "Evaluated again, point %lld gives %s = %.9g where the run stored %.9g: the "
                     "breakdowns and comparisons are omitted, since they would not be the sweep's numbers.",
                     point, obj[o].name, row.feasible ? now : NAN, was);
    }
    if (why[0])
        return DSE_OK;
    const struct eval_result *res = &det->res;
    const struct eval_op **v = malloc(sizeof *v * (size_t)(res->n_ops ? res->n_ops : 1));
    k->op = malloc(sizeof *k->op * (size_t)(res->n_ops ? res->n_ops : 1));
    k->name = malloc(sizeof *k->name * (size_t)(res->n_ops ? res->n_ops : 1));
    if (!v || !k->op || !k->name) {
        free(v);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    int n = cli_ops_by_time(res, v);
    for (int j = 0; j < n; j++) {
        const struct eval_op *o = v[j];
        dse_strlcpy(k->name[j], o->name, sizeof k->name[j]);
        k->op[j] = (struct report_op){k->name[j], cli_op_phase(o), det->sys->dev[o->dev].name, bound_names[o->bound],
                                      o->count, o->time_s, o->flops, o->bytes, o->energy_J, o->utilization};
    }
    free(v);
    k->t = res->t;
    k->feasible = res->feasible;
    k->calibrated = hw_calibrated(&det->sys->dev[det->dev]);
    k->i = i;
    cli_compare_errbar(res, k->calibrated, k->eb, sizeof k->eb);
    if (det->serving)
        snprintf(k->note, sizeof k->note, "a serving point: a simulated run of requests (docs/serving.md), no "
                 "per-operator rows; dse show gives its metrics");
    else if (res->throttle_note[0])
        snprintf(k->note, sizeof k->note, "THROTTLED: %.300s; %.2fx slower than unthrottled", res->throttle_note,
                 res->t.throttle_slowdown);
    *bd = (struct report_bd){point, res->t.latency_s, res->t.err_low_pct, res->t.err_high_pct, res->t.devices,
                             k->note[0] ? k->note : NULL, det->serving ? 0 : n, k->op, roofs(det, k->roof), k->roof};
    return DSE_OK;
}

/* dse compare's table of the points broken down, one per workload: a row per point (its design, error
 * bars, then the compare columns as dse compare prints them, ratios to the group's first row). */
struct tables {
    struct report_table t[SW_MAX_WORKLOADS];
    const char **col[SW_MAX_WORKLOADS], **cell[SW_MAX_WORKLOADS];
    char (*txt)[48];
    char title[SW_MAX_WORKLOADS][160];
    int n;
};

static int compare_tables(const struct cli_rerun *rr, const struct gather *g, const struct bd_keep *k, int nk,
                          struct tables *tb, struct dse_err *e)
{
    const struct sweep_spec *sp = &rr->sp;
    int wa = -1, groups = 1;
    for (int a = 0; a < sp->n_axes; a++)
        if (sp->axes[a].kind == AX_WORKLOAD) {
            wa = a;
            groups = sp->axes[a].n;
        }
    if (!(tb->txt = malloc(sizeof *tb->txt * (size_t)(nk ? nk : 1) * (CLI_CMP_COLS + 1))))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    int used = 0;
    for (int w = 0; w < groups; w++) {
        const struct metric *cols[CLI_CMP_COLS];
        int wl = wa >= 0 ? w : 0, ncol = cli_compare_columns(sp->wl[wl].phase, cols), first = -1, rows = 0;
        int nc = 2 + g->n_axes + ncol;
        tb->col[tb->n] = malloc(sizeof(char *) * (size_t)nc);
        tb->cell[tb->n] = malloc(sizeof(char *) * (size_t)nc * (size_t)(nk ? nk : 1));
        if (!tb->col[tb->n] || !tb->cell[tb->n]) {
            free(tb->col[tb->n]);
            free(tb->cell[tb->n]);
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        }
        const char **col = tb->col[tb->n], **cell = tb->cell[tb->n];
        col[0] = "point";
        for (int a = 0; a < g->n_axes; a++)
            col[1 + a] = g->axis_name[a];
        col[1 + g->n_axes] = "error_%";
        for (int c = 0; c < ncol; c++)
            col[2 + g->n_axes + c] = cols[c]->name;
        for (int j = 0; j < nk; j++) {
            if (wa >= 0 && sweep_axis_index(sp, g->point[k[j].i], wa) != w)
                continue;
            if (first < 0)
                first = j;
            const char **r = cell + (size_t)rows * nc;
            snprintf(tb->txt[used], sizeof tb->txt[0], "%lld", g->point[k[j].i]);
            r[0] = tb->txt[used++];
            for (int a = 0; a < g->n_axes; a++)
                r[1 + a] = g->d[a].v[g->code[(size_t)k[j].i * g->n_axes + a]];
            r[1 + g->n_axes] = k[j].eb;
            for (int c = 0; c < ncol; c++) {
                cli_compare_cell(cols[c], &k[j].t, j != first && k[first].feasible ? &k[first].t : NULL,
                                 tb->txt[used], sizeof tb->txt[0]);
                r[2 + g->n_axes + c] = tb->txt[used++];
            }
            rows++;
        }
        if (!rows) {
            free(tb->col[tb->n]);
            free(tb->cell[tb->n]);
            continue;
        }
        snprintf(tb->title[tb->n], sizeof tb->title[0], "%s%s", groups > 1 ? "workload " : "the front points evaluated again",
                 groups > 1 ? sp->axes[wa].v[w].s : "");
        tb->t[tb->n] = (struct report_table){tb->title[tb->n],
                                             "Ratios are to the first row (the first of these front points in dse "
                                             "sweep's order). error_%: the expected error of the time, the 10th-90th "
                                             "percentile of held-out published cases of the device's class and "
                                             "workload kind; * when the device is uncalibrated; n/a: no error bars.",
                                             nc, rows, col, cell};
        tb->n++;
    }
    return DSE_OK;
}

/* The output: -o, else results/<run name>.html; refused (an input error, nothing written) when it is
 * the database it reports (or one of its -wal/-shm files), when its folder is missing or not writable,
 * or it is a folder. A FIFO or character device (-o /dev/stdout) is written through (outfile.h). */
static int output_path(const char *db, const char *out, const char *name, char *buf, size_t n, struct dse_err *e)
{
    if (out) {
        if (strlen(out) >= n)
            return dse_err_set(e, DSE_EINPUT, NULL, "-o", "a path of %zu bytes: at most %zu", strlen(out), n - 1);
        dse_strlcpy(buf, out, n);
    } else {
        mkdir("results", 0777);
        snprintf(buf, n, "results/%s.html", name);
        for (char *c = buf + strlen("results/"); *c; c++)
            *c = *c == '/' ? '_' : *c;
    }
    static const char *const what[] = {"the sweep database"};
    int rc = out_file_not_input(buf, "-o", &db, what, 1, 1, e);
    if (rc)
        return rc;
    struct stat st;
    if (buf[0] && stat(buf, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
        return DSE_OK;
    char dir[4096];
    const char *slash = strrchr(buf, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - buf) + (slash == buf) : 1, slash ? buf : ".");
    if (!buf[0] || (stat(buf, &st) == 0 && S_ISDIR(st.st_mode)))
        return dse_err_set(e, DSE_EINPUT, buf, "-o", "is a folder: expected FILE.html");
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return dse_err_set(e, DSE_EINPUT, buf, "-o", "no folder %s to write it in", dir);
    if (access(dir, W_OK) != 0)
        return dse_err_set(e, DSE_EINPUT, buf, "-o", "folder %s is not writable", dir);
    return DSE_OK;
}

int cli_report(const char *db, long long run_id, const char *color, const char *out, char *written, size_t wn,
               struct dse_err *e)
{
    struct store *st = NULL;
    struct store_run run = {0};
    struct cli_rerun rr = {0};
    struct cli_why why = {0};
    struct gather g = {0};
    struct sweep_detail det = {0};
    struct bd_keep *keep = NULL;
    struct report_bd *bd = NULL;
    struct tables tb = {0};
    cJSON *objs = NULL, *axes = NULL, *spec = NULL;
    struct report_obj obj[SW_MAX_OBJ];
    struct report_axis ax[SW_MAX_AXES];
    const char *axis_name[SW_MAX_AXES], *num[SW_MAX_OBJ + 2];
    char path[4096], note[1200] = "";
    long long n_pts = 0, n_feas = 0, n_front = 0, nbd = 0, *fidx = NULL;
    double *fobj = NULL;
    int rc, nk = 0, made = 0, color_axis = -1;
    if (written && wn)
        written[0] = '\0';
    if ((rc = store_open_read(db, &st, e)) || (rc = store_read_run(st, run_id, &run, e)))
        goto out;
    if (!run.id) {
        rc = run_id > 0 ? dse_err_set(e, DSE_EINPUT, db, "--run", "no run %lld", run_id)
                        : dse_err_set(e, DSE_EINPUT, db, NULL, "holds no runs yet");
        goto out;
    }
    /* the run's objectives and axes, as it stored them */
    objs = cJSON_Parse(run.objectives);
    axes = cJSON_Parse(run.axes);
    int m = cJSON_IsArray(objs) ? cJSON_GetArraySize(objs) : 0, na = cJSON_IsArray(axes) ? cJSON_GetArraySize(axes) : -1;
    if (m < 1 || m > SW_MAX_OBJ || na < 0 || na > SW_MAX_AXES) {
        rc = dse_err_set(e, DSE_EINPUT, db, "runs.objectives", "run %lld: expected 1 to %d objectives and at most %d "
                         "axes", run.id, SW_MAX_OBJ, SW_MAX_AXES);
        goto out;
    }
    for (int k = 0; k < m; k++) {
        const cJSON *o = cJSON_GetArrayItem(objs, k), *mt = cJSON_GetObjectItemCaseSensitive(o, "metric"),
                    *goal = cJSON_GetObjectItemCaseSensitive(o, "goal");
        if (!cJSON_IsString(mt)) {
            rc = dse_err_set(e, DSE_EINPUT, db, "runs.objectives", "run %lld: objective %d has no metric", run.id, k + 1);
            goto out;
        }
        const struct metric *mm = metric_find(mt->valuestring);
        /* a name the registry has since replaced (accuracy_proxy) keeps its old meaning: no unit of the new one */
        obj[k] = (struct report_obj){mt->valuestring, mm && !strcmp(mm->name, mt->valuestring) ? mm->unit : "",
                                     cJSON_IsString(goal) && !strcmp(goal->valuestring, "max")};
        num[k] = mt->valuestring;
    }
    num[m] = "expected_error_low_pct";
    num[m + 1] = "expected_error_high_pct";
    for (int a = 0; a < na; a++) {
        const cJSON *x = cJSON_GetArrayItem(axes, a);
        axis_name[a] = cJSON_IsString(x) ? x->valuestring : "?";
        if (!strcmp(axis_name[a], color ? color : "system"))
            color_axis = a;
    }
    if (color && color_axis < 0) {
        char list[600] = "";
        for (int a = 0; a < na; a++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", a ? ", " : "", axis_name[a]);
        rc = dse_err_set(e, DSE_EINPUT, db, "--color", "'%s' is not an axis of run %lld (axes: %s)", color, run.id,
                         na ? list : "none");
        goto out;
    }
    if ((rc = output_path(db, out, run.name, path, sizeof path, e)))
        goto out;

    /* the points, the reasons */
    if ((rc = store_count(st, &run, &n_pts, &n_feas, &n_front, e)) ||
        (rc = store_reasons(st, run.id, reason_one, &why, e)))
        goto out;
    if (!(g.d = calloc((size_t)(na ? na : 1), sizeof *g.d))) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    g.n_axes = na;
    g.n_obj = m;
    g.axis_name = axis_name;
    g.e = e;
    if ((rc = store_scan_feasible(st, run.id, num, m + 2, 0, axis_name, na, gather_one, &g, e)) || (rc = g.rc))
        goto out;
    cli_why_sort(&why);

    /* the front in dse sweep's order: minimized objectives, then the point */
    long long nf = 0;
    fidx = malloc(sizeof *fidx * (size_t)(g.n ? g.n : 1));
    fobj = malloc(sizeof *fobj * (size_t)(g.n ? g.n : 1) * (size_t)m);
    if (!fidx || !fobj) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (long long i = 0; i < g.n; i++) {
        for (int k = 0; k < m; k++)
            fobj[(size_t)i * m + k] = obj[k].maximize ? -g.obj[(size_t)i * m + k] : g.obj[(size_t)i * m + k];
        if (g.front[i])
            fidx[nf++] = i;
    }
    if (pareto_sort(fobj, m, g.point, fidx, nf)) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }

    /* breakdowns: dse show's machinery, only if the inputs are as they were */
    struct dse_err le;
    dse_err_clear(&le);
    nbd = nf < BD_MAX ? nf : BD_MAX;
    if (nbd && cli_rerun_open(&run, 1, &rr, &le))
        snprintf(note, sizeof note, "The run cannot be evaluated again (%.900s): no breakdowns or comparisons.", le.msg);
    else if (nbd && rr.changed[0])
        snprintf(note, sizeof note, "The run's inputs changed since the sweep (%.900s): its points cannot be evaluated "
                 "again as they were, so the breakdowns and comparisons are omitted (they would not be the stored "
                 "numbers).", rr.changed);
    keep = calloc((size_t)(nbd ? nbd : 1), sizeof *keep);
    bd = calloc((size_t)(nbd ? nbd : 1), sizeof *bd);
    if (!keep || !bd) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (long long j = 0; j < nbd && !note[0]; j++) {
        if ((rc = break_down(&rr, &g, obj, fidx[j], &det, &keep[made], &bd[made], note, sizeof note, e)))
            goto out;
        made += !note[0];
    }
    nk = note[0] ? 0 : made; /* nothing of an evaluation that did not reproduce the run */
    if (nk && (rc = compare_tables(&rr, &g, keep, nk, &tb, e)))
        goto out;

    for (int a = 0; a < na; a++)
        ax[a] = (struct report_axis){axis_name[a], g.d[a].n, (const char *const *)g.d[a].v};
    spec = cJSON_Parse(run.spec);
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(spec, "description");
    struct report_reason rs[CLI_WHY_KINDS];
    int n_rs = 0;
    long long other = why.other;
    for (int i = 0; i < CLI_WHY_KINDS && why.k[i].n; i++) {
        if (i < 12)
            rs[n_rs++] = (struct report_reason){why.k[i].example, why.k[i].n, why.k[i].varied};
        else
            other += why.k[i].n;
    }
    struct report_in in = {
        db, run.name, cJSON_IsString(desc) ? desc->valuestring : "", run.version, run.git, run.host, run.started,
        run.finished, run.status, run.spec, run.id, run.points_total, n_pts, n_feas, n_front, run.hypervolume, na, ax,
        color_axis, m, obj, {g.n, g.point, g.front, g.code, g.obj, g.err}, n_rs, rs, other, note[0] ? note : NULL,
        BD_MAX, nk, bd, tb.n, tb.t};
    if ((rc = report_write(&in, path, e)))
        goto out;
    if (written && wn)
        dse_strlcpy(written, path, wn);
out:
    for (int i = 0; i < tb.n; i++) {
        free(tb.col[i]);
        free(tb.cell[i]);
    }
    free(tb.txt);
    for (long long i = 0; keep && i <= made && i < nbd; i++) { /* made, and one a failure left half made */
        free(keep[i].op);
        free(keep[i].name);
    }
    free(keep);
    free(bd);
    eval_result_free(&det.res);
    cli_rerun_close(&rr);
    for (int a = 0; g.d && a < g.n_axes; a++)
        for (int v = 0; v < g.d[a].n; v++)
            free(g.d[a].v[v]);
    free(g.d);
    free(g.point);
    free(g.front);
    free(g.code);
    free(g.obj);
    free(g.err);
    free(fidx);
    free(fobj);
    cJSON_Delete(objs);
    cJSON_Delete(axes);
    cJSON_Delete(spec);
    store_run_free(&run);
    store_close(st);
    return rc;
}

static struct cli_opt report_opts_proto[] = {
    {"run", 1, "run id in the database (default: the newest run)", NULL},
    {"color", 1, "the axis whose values colour the points at first, and whose classes the cloud is thinned by "
                 "(default: system, when the run has several)", NULL},
    {"out", 1, "FILE.html, also -o FILE (default: results/<run name>.html)", NULL},
    {"help", 0, "this help", NULL},
    {NULL, 0, NULL, NULL},
};

int cmd_report(int argc, char **argv)
{
    struct cli_opt opts[sizeof report_opts_proto / sizeof report_opts_proto[0]];
    memcpy(opts, report_opts_proto, sizeof opts);
    struct dse_err e;
    const char *pos[1];
    int npos, rc;
    struct cli_args args = {0};
    char written[4096];
    long long run = 0;
    dse_err_clear(&e);
    if ((rc = cli_short_opts(argc, argv, report_opts_proto, "report", &args, &e)) ||
        (rc = cli_parse(argc, args.av, 2, opts, pos, 1, &npos, "report", &e)))
        goto out;
    if (cli_get(opts, "help")) {
        printf("usage: dse report DB [--run ID] [--color AXIS] [-o FILE.html]\n\n"
               "Writes one self-contained HTML page of a sweep run (no network: inline SVG, CSS and script): its\n"
               "header and spec, the Pareto front as an interactive scatter over the dominated points (every front\n"
               "point; the cloud thinned to one per grid cell, the page says how many of how many), the commonest\n"
               "infeasibility reasons, per-operator breakdowns and rooflines of the first %d front points and\n"
               "dse compare's table of them, evaluated again from the run's spec when its inputs are unchanged.\n"
               "dse sweep writes it beside the front plot (not with --no-plot). docs/report.md.\n\noptions:\n",
               BD_MAX);
        cli_print_options(report_opts_proto);
        printf("\nexit status: 0 written, 1 runtime failure, 2 usage or input error (nothing written)\n");
        goto out;
    }
    if (npos != 1) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "report: expected one database (see dse help report)");
        goto out;
    }
    if (cli_get(opts, "run") && (rc = cli_int("run", cli_get(opts, "run"), 1, LLONG_MAX, &run, &e)))
        goto out;
    if ((rc = cli_report(pos[0], run, cli_get(opts, "color"), cli_get(opts, "out"), written, sizeof written, &e)))
        goto out;
    fprintf(out_file_is_stream(written) ? stderr : stdout, "wrote %s\n", written);
out:
    if (rc)
        dse_err_print(stderr, &e);
    cli_args_free(&args);
    return rc;
}
