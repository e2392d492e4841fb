/* cli_sweep.c -- `dse sweep SPEC`: evaluates the spec's space in parallel, streams every point to
 * SQLite, ranks the feasible points, prints the Pareto front and writes its plot. Ctrl-C stops after
 * the current block with everything evaluated saved; --resume finishes such a run, and refuses when
 * an input (the spec, a hwdesc, a model, dse itself) changed since it started: the run would hold
 * points of two different models. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli.h"
#include "config.h"
#include "dist.h"
#include "gitversion.h"
#include "jsonu.h"
#include "pareto.h"
#include "progress.h"
#include "plot.h"
#include "outfile.h"
#include "store.h"
#include "sweep.h"

/* The one piece of process-wide mutable state: set by the SIGINT handler, read between blocks. */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static struct cli_opt sweep_opts_proto[] = {
    {"db", 1, "SQLite database to write (default results/<name>.db)", NULL},
    {"threads", 1, "evaluation threads (default: OpenMP's, i.e. the cores)", NULL},
    {"resume", 0, "finish the newest interrupted run of this spec in the database", NULL},
    {"limit", 1, "most evaluations planned: grid points, random samples, NSGA-II population x (generations + 1) "
                 "(default 5,000,000)",
     NULL},
    {"no-plot", 0, "do not write the front plot, nor the HTML report (dse report)", NULL},
    {"no-db", 0, "keep results in memory only: front on screen, nothing written (benchmarks)", NULL},
    {"top", 1, "front rows shown (default 40)", NULL},
    {"json", 0, "print the front as JSON", NULL},
    {"csv", 0, "print the front as CSV", NULL},
    {"quiet", 0, "no progress bar", NULL},
    {"keep-points", 1, "points held in memory before the dominated ones are dropped, the front kept (default 4,000,000; "
                       "0: hold every point)", NULL},
    {"help", 0, "this help", NULL},
    {NULL, 0, NULL, NULL},
};

/* Everything the sink needs. */
struct run {
    const struct sweep_spec *sp;
    struct store *st;
    long long run_id;
    int order[SW_MAX_AXES]; /* spec position -> axis index */
    /* points of this run: new and (resume) stored; stored ones sorted by point */
    long long n, cap, n_stored;
    long long *point;
    unsigned char *feasible;
    double *obj;
    double *err; /* per point: expected_error_low_pct, expected_error_high_pct (NAN: none) */
    long long n_feasible;
    long long n_total;  /* points evaluated or loaded; n: those still held */
    long long keep, keep_at; /* --keep-points, and when the next pruning is due (0: never) */
    int pruned;         /* dominated points were dropped: ranks beyond the front are unknown */
    int wa;             /* the workload axis (each workload has its own front), -1: none */
    /* per workload: the range of the feasible points' objectives, for the hypervolume's reference */
    double gmin[SW_MAX_WORKLOADS][SW_MAX_OBJ], gmax[SW_MAX_WORKLOADS][SW_MAX_OBJ];
    int progress;
    int log_tenths, logged; /* MPI batch runs (stderr not a terminal): a line at each tenth of the plan */
    struct progress bar; /* on a terminal (progress) */
    int store_failed; /* the database refused a write (disk full, I/O): what was committed can be resumed */
    double t0, last;
    struct cli_why why; /* while nothing is feasible, the reasons by kind: an all-infeasible run says why */
    const struct hw_system *sys0; /* the spec's first system (its first variant), for the axes' notes */
};

/* A hw: axis on a topology level's count counts that level's units, nodes of the levels below it (a
 * cluster's InfiniBand level counts DGX nodes of 8 GPUs), not devices: its front-table column is
 * headed LEVEL.nodes (LEVEL.devices for the innermost level) and a note under the table says what a
 * value is in devices. Returns the level index, or -1 for another axis. */
static int topo_count_level(const struct run *r, const struct sw_axis *a, int *per_unit)
{
    char lv[HW_NAME_LEN + 32];
    const char *pre = "topology.levels.", *name = a->name;
    if (!strncmp(name, "hw:", 3))
        name += 3;
    size_t n = strlen(name), lp = strlen(pre);
    if (a->kind != AX_HW || !r->sys0 || n < lp + 7 || strncmp(name, pre, lp) || strcmp(name + n - 6, ".count"))
        return -1;
    snprintf(lv, sizeof lv, "%.*s", (int)(n - 6 - lp), name + lp);
    const struct hw_topology *t = &r->sys0->topo;
    *per_unit = 1;
    for (int l = 0; l < t->n_level; l++) {
        char idx[16];
        snprintf(idx, sizeof idx, "%d", l);
        if (!strcmp(t->level[l].name, lv) || !strcmp(idx, lv))
            return l;
        *per_unit *= t->level[l].count;
    }
    return -1;
}

static void tally_reason(struct run *r, const char *reason)
{
    if (!r->n_feasible && reason)
        cli_why_add(&r->why, reason, 1);
}

#define WHY_SHOWN 8 /* kinds of reason listed; the rest are summed */

/* Why nothing is feasible: the commonest kinds of reason with their counts. */
static void print_reasons(struct run *r, const char *db, int no_db)
{
    long long other = r->why.other;
    cli_why_sort(&r->why);
    fprintf(stderr, "dse: no feasible point among %lld; the reasons:\n", r->n_total);
    for (int i = 0; i < CLI_WHY_KINDS && r->why.k[i].n; i++) {
        const struct cli_why_kind *w = &r->why.k[i];
        if (i >= WHY_SHOWN)
            other += w->n;
        else
            fprintf(stderr, "  %lld point%s: %s%s\n", w->n, w->n == 1 ? "" : "s", w->varied ? "e.g. " : "", w->example);
    }
    if (other)
        fprintf(stderr, "  %lld point%s: other reasons\n", other, other == 1 ? "" : "s");
    if (!no_db)
        fprintf(stderr, "  (each point's reason is in the reason column of %s)\n", db);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int grow(struct run *r, long long need, struct dse_err *e)
{
    if (need <= r->cap)
        return DSE_OK;
    long long cap = r->cap ? r->cap : 4096;
    while (cap < need)
        cap *= 2;
    long long *p = realloc(r->point, sizeof *p * (size_t)cap);
    if (p)
        r->point = p;
    unsigned char *f = p ? realloc(r->feasible, (size_t)cap) : NULL;
    if (f)
        r->feasible = f;
    double *o = f ? realloc(r->obj, sizeof *o * (size_t)cap * r->sp->n_obj) : NULL;
    if (o)
        r->obj = o;
    double *er = o ? realloc(r->err, sizeof *er * (size_t)cap * 2) : NULL;
    if (er)
        r->err = er;
    if (!er)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    r->cap = cap;
    return DSE_OK;
}

/* A held point's objectives joined its workload's range (feasible points only). */
static void track_range(struct run *r, long long i)
{
    int g = r->wa >= 0 ? sweep_axis_index(r->sp, r->point[i], r->wa) : 0;
    const double *o = r->obj + (size_t)i * r->sp->n_obj;
    for (int k = 0; k < r->sp->n_obj; k++) {
        if (o[k] < r->gmin[g][k])
            r->gmin[g][k] = o[k];
        if (o[k] > r->gmax[g][k])
            r->gmax[g][k] = o[k];
    }
}

/* Keeps what the front needs: the held points beyond the resumed ones (which lookups need) that are
 * feasible and non-dominated within their workload; their ranges were tracked as they came. */
static int prune(struct run *r, struct dse_err *e)
{
    const int m = r->sp->n_obj, groups = r->wa >= 0 ? r->sp->axes[r->wa].n : 1;
    double *o = malloc(sizeof *o * (size_t)m * (size_t)(r->n ? r->n : 1));
    long long *idx = malloc(sizeof *idx * (size_t)(r->n ? r->n : 1));
    unsigned char *in = malloc((size_t)(r->n ? r->n : 1)), *keep = calloc((size_t)(r->n ? r->n : 1), 1);
    int rc = DSE_OK;
    if (!o || !idx || !in || !keep || r->n > 2147483647LL) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory pruning the held points");
        goto out;
    }
    for (int g = 0; g < groups && !rc; g++) {
        long long k = 0;
        for (long long i = 0; i < r->n; i++)
            if (r->feasible[i] && (r->wa < 0 || sweep_axis_index(r->sp, r->point[i], r->wa) == g)) {
                memcpy(o + (size_t)k * m, r->obj + (size_t)i * m, sizeof *o * (size_t)m);
                idx[k++] = i;
            }
        if (k && !(rc = pareto_front(o, (int)k, m, in, e)))
            for (long long i = 0; i < k; i++)
                keep[idx[i]] = in[i];
    }
    if (!rc) {
        long long n = r->n_stored;
        for (long long i = r->n_stored; i < r->n; i++)
            if (keep[i]) {
                r->point[n] = r->point[i];
                r->feasible[n] = r->feasible[i];
                memmove(r->obj + (size_t)n * m, r->obj + (size_t)i * m, sizeof *r->obj * (size_t)m);
                r->err[2 * n] = r->err[2 * i];
                r->err[2 * n + 1] = r->err[2 * i + 1];
                n++;
            }
        r->pruned |= n < r->n;
        r->n = n;
        r->keep_at = 2 * n > r->keep ? 2 * n : r->keep;
    }
out:
    free(o);
    free(idx);
    free(in);
    free(keep);
    return rc;
}

static void axis_values(const struct run *r, long long point, const char **vals)
{
    const struct sweep_spec *sp = r->sp;
    for (int pos = 0; pos < sp->n_axes; pos++) {
        int a = r->order[pos];
        vals[pos] = sp->axes[a].v[sweep_axis_index(sp, point, a)].s;
    }
}

static int sink_rows(void *ctx, const struct sw_row *rows, int n, struct dse_err *e)
{
    struct run *r = ctx;
    int rc = grow(r, r->n + n, e);
    if (rc || (r->st && (rc = store_tx_begin(r->st, e))))
        return rc;
    for (int i = 0; i < n && !rc; i++) {
        if (r->st)
            rc = store_insert(r->st, r->run_id, rows[i].point, rows[i].metric, rows[i].feasible, rows[i].reason, e);
        if (!rows[i].feasible)
            tally_reason(r, rows[i].reason);
        r->point[r->n] = rows[i].point;
        r->feasible[r->n] = (unsigned char)rows[i].feasible;
        sweep_objectives(r->sp, &rows[i], r->obj + (size_t)r->n * r->sp->n_obj);
        r->err[2 * r->n] = rows[i].metric[r->sp->err_low_m];
        r->err[2 * r->n + 1] = rows[i].metric[r->sp->err_high_m];
        r->n_feasible += rows[i].feasible;
        if (rows[i].feasible)
            track_range(r, r->n);
        r->n++;
        r->n_total++;
    }
    if (!rc && r->keep_at && r->n >= r->keep_at)
        rc = prune(r, e);
    if (!r->st)
        return rc;
    if (rc) {
        struct dse_err ignore;
        store_tx_commit(r->st, &ignore);
        r->store_failed = 1;
        return rc;
    }
    rc = store_tx_commit(r->st, e);
    r->store_failed = rc != DSE_OK;
    return rc;
}

static int sink_stored(void *ctx, long long point, int *feasible, double *obj)
{
    const struct run *r = ctx;
    long long lo = 0, hi = r->n_stored - 1;
    while (lo <= hi) {
        long long mid = (lo + hi) / 2;
        if (r->point[mid] == point) {
            *feasible = r->feasible[mid];
            memcpy(obj, r->obj + (size_t)mid * r->sp->n_obj, sizeof *obj * (size_t)r->sp->n_obj);
            return 1;
        }
        if (r->point[mid] < point)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

static void sink_progress(void *ctx, long long done, long long total)
{
    struct run *r = ctx;
    if (r->log_tenths && total > 0 && done * 10 / total > r->logged) {
        double t = now_s() - r->t0;
        r->logged = (int)(done * 10 / total);
        fprintf(stderr, "dse sweep: %d %% (%lld of %lld points) in %.1f s, %.0f points/s\n", r->logged * 10, done,
                total, t, done / (t > 1e-9 ? t : 1e-9));
    }
    if (!r->progress)
        return;
    if (!r->bar.on && !r->bar.total) { /* the first call: the phase began with the run */
        progress_begin(&r->bar, 1, "dse sweep", "points", total);
        r->bar.t0 = r->t0;
    }
    progress_step(&r->bar, done);
    if (done >= total)
        progress_end(&r->bar, 1);
}

/* Stored points of a resumed run go first, sorted by point (store_load returns them so). */
struct load_ctx {
    struct run *r;
    int rc;
    struct dse_err *e;
};

static void load_one(void *ctx, long long point, int feasible, const char *reason, const double *vals)
{
    struct load_ctx *l = ctx;
    struct run *r = l->r;
    if (l->rc || (l->rc = grow(r, r->n + 1, l->e)))
        return;
    if (!feasible)
        tally_reason(r, reason);
    r->point[r->n] = point;
    r->feasible[r->n] = (unsigned char)feasible;
    /* vals: the objectives, then the error bars (cmd_sweep's column list); ranked as sink ranks */
    const struct sweep_spec *sp = r->sp;
    struct sw_row row;
    for (int i = 0; i < metric_count; i++)
        row.metric[i] = NAN;
    for (int i = 0; i < sp->n_obj; i++)
        row.metric[sp->obj[i].m - metric_table] = vals[i];
    row.metric[sp->err_low_m] = r->err[2 * r->n] = vals[sp->n_obj];
    row.metric[sp->err_high_m] = r->err[2 * r->n + 1] = vals[sp->n_obj + 1];
    sweep_objectives(sp, &row, r->obj + (size_t)r->n * sp->n_obj);
    r->n_feasible += feasible;
    if (feasible)
        track_range(r, r->n);
    r->n++;
    r->n_total++;
}

/* What is known of the results' error: each system's calibration (its primary device's held-out
 * error, or none), and the error bars every point carries. */
static void print_accuracy(const struct sweep_prep *prep)
{
    const struct sweep_spec *sp = sweep_prep_spec(prep);
    printf("accuracy:");
    for (int i = 0; i < sp->n_systems; i++) {
        const struct hw_system *sys = sweep_prep_system(prep, i);
        const struct hw_device *d = &sys->dev[eval_default_device(sys)];
        if (d->calib_mape_pct >= 0)
            printf("%s %s calibrated (held-out MAPE %.1f%%)", i ? ";" : "", sys->name, d->calib_mape_pct);
        else if (d->arch[0])
            printf("%s %s calibrated (architecture %s)", i ? ";" : "", sys->name, d->arch);
        else
            printf("%s %s uncalibrated", i ? ";" : "", sys->name);
    }
    /* the whole-run calibration of each stack release the sweep runs, for each kind of phase it runs, where
     * a system runs layouts (single-device points carry the published corpus's error bars) */
    int multi = 0;
    for (int i = 0; i < sp->n_systems; i++)
        multi |= sweep_prep_system(prep, i)->topo.n_level > 0;
    for (int k = 0; k < sp->n_stacks && multi; k++) {
        const struct sw_stack *st = &sp->stack[k];
        char lab[SW_NAME_LEN + SW_VERSION_LEN + 2];
        pass_label(st, lab, sizeof lab);
        for (int train = 0; train < 2; train++) {
            int runs = 0;
            for (int w = 0; w < sp->n_workloads; w++)
                runs |= (sp->wl[w].phase == PH_TRAIN) == train;
            if (runs && st->mape_pct[train] >= 0)
                printf("; stack %s: multi-device %s held-out MAPE %.1f%%", lab, train ? "training" : "inference",
                       st->mape_pct[train]);
            else if (runs && (!train || st->trains))
                printf("; stack %s: %s runs unvalidated on the multi-device corpus", lab, train ? "training" : "inference");
        }
    }
    /* the power model's standing on each system, as dse eval prints it beside energy */
    printf("\n  power (energy objectives; docs/models.md, Power and energy; dse validate --published --power gives "
           "the error per device):");
    for (int i = 0; i < sp->n_systems; i++) {
        const struct hw_system *sys = sweep_prep_system(prep, i);
        const struct hw_device *d = &sys->dev[eval_default_device(sys)];
        if (d->power_mape_pct >= 0)
            printf("%s %s calibrated (held-out MAPE %.1f%%)", i ? ";" : "", sys->name, d->power_mape_pct);
        else
            printf("%s %s uncalibrated", i ? ";" : "", sys->name);
        if (sys->encl.present)
            printf(" at the meter's input (enclosure)");
    }
    int serving = 0;
    for (int w = 0; w < sp->n_workloads; w++)
        serving |= sp->wl[w].serving.on;
    if (serving)
        printf("\n  serving points are simulated runs (docs/serving.md): held-out MAPE 14 %% on throughput, 13 %% on "
               "TTFT/TPOT against published serving runs (dse validate --published --serving); they carry no error "
               "bars");
    for (int w = 0; w < sp->n_workloads; w++) { /* what "too_long" did */
        const struct sw_serving *sv = &sp->wl[w].serving;
        if (sv->on && sv->too_long)
            printf("\n  workload %s: %lld of its %lld requests exceed the model's context: %s (\"too_long\": \"%s\")",
                   sp->wl[w].model.name, (long long)sv->too_long,
                   (long long)(sv->n + (sv->too_long_mode == TOO_LONG_SKIP ? sv->too_long : 0)),
                   sv->too_long_mode == TOO_LONG_SKIP ? "rejected, not served" : "their prompts truncated to fit",
                   serve_too_long_names[sv->too_long_mode]);
    }
    if (sp->have_errbars)
        printf("\n  every %spoint has expected_error_low_pct / expected_error_high_pct: the 10th-90th percentile of the "
               "time error over held-out published cases of its device class and workload kind (%s%s); ranked on %s\n",
               serving ? "evaluated (not served) " : "",
               sp->errbars.path, "; an uncalibrated device's own error may be larger",
               sp->pessimistic ? "the pessimistic end (\"rank\": \"pessimistic\")" : "predicted values");
    else
        printf("\n  no error bars (\"error_bars\": \"none\", or no validate/published/error-bars.json found)\n");
}

/* Where quality_loss_pct comes from, for each precision and workload, when the run ranks or bounds by it:
 * the published figures (their basis) or the measured GEMM error (FALLBACK, not a quality figure). */
static void print_quality(const struct sweep_prep *prep)
{
    const struct sweep_spec *sp = sweep_prep_spec(prep);
    const struct metric *m = metric_find("quality_loss_pct");
    int ax = -1;
    for (int a = 0; a < sp->n_axes; a++)
        if (sp->axes[a].kind == AX_PRECISION)
            ax = a;
    if (!sp->stored[m - metric_table] || ax < 0)
        return;
    const struct ql_table *qt = sp->have_quality ? &sp->quality : NULL;
    printf("quality_loss_pct (%s; docs/models.md):", qt ? qt->path : "no validate/quality/published-quality.csv found");
    for (int w = 0; w < sp->n_workloads; w++) {
        printf("%s %s:", w ? ";" : "", sp->wl[w].model.name);
        for (int i = 0; i < sp->axes[ax].n; i++) {
            const struct ql_est *q = sweep_prep_quality(prep, i, w);
            if (!q)
                continue;
            printf("%s %s %.3g (%s)", i ? "," : "", sp->axes[ax].v[i].s, q->loss_pct,
                   q->flags & (1u << QL_FALLBACK) ? "FALLBACK: measured GEMM error, no published figure" : ql_basis_of(q));
        }
    }
    printf("\n");
}

static char *json_inputs(const struct sweep_spec *sp)
{
    cJSON *o = cJSON_CreateObject();
    char h[24];
    snprintf(h, sizeof h, "%016llx", sp->hash);
    cJSON_AddStringToObject(o, sp->path, h);
    for (int i = 0; i < sp->n_systems; i++) {
        snprintf(h, sizeof h, "%016llx", sp->system_hash[i]);
        cJSON_AddStringToObject(o, sp->system_path[i], h);
    }
    for (int i = 0; i < sp->n_workloads; i++) {
        snprintf(h, sizeof h, "%016llx", sp->wl[i].hash);
        cJSON_AddStringToObject(o, sp->wl[i].path, h);
    }
    for (int i = 0; i < sp->n_stacks; i++)
        if (sp->stack[i].path[0] && !cJSON_GetObjectItemCaseSensitive(o, sp->stack[i].path)) { /* a file once, its
                                                                                                 releases in the spec */
            snprintf(h, sizeof h, "%016llx", sp->stack_hash[i]);
            cJSON_AddStringToObject(o, sp->stack[i].path, h);
        }
    if (sp->have_errbars) { /* the intervals stored with every point */
        snprintf(h, sizeof h, "%016llx", sp->errbars_hash);
        cJSON_AddStringToObject(o, sp->errbars.path, h);
    }
    if (sp->have_quality) { /* the published figures behind quality_loss_pct */
        snprintf(h, sizeof h, "%016llx", sp->quality.hash);
        cJSON_AddStringToObject(o, sp->quality.path, h);
    }
    char *s = ju_print(o, 0);
    cJSON_Delete(o);
    return s;
}

/* The run's outputs (the database, and beside it the front plot and the HTML page) must be none of its
 * inputs (the spec, the hwdescs, workloads, stacks and error bars it reads): refused before anything
 * is written. */
static int outputs_not_inputs(const struct sweep_spec *sp, const char *db, int plots, struct dse_err *e)
{
    const char *in[2 + SW_MAX_SYSTEMS + SW_MAX_WORKLOADS + SW_MAX_STACKS], *what[sizeof in / sizeof in[0]];
    int n = 0;
    in[n] = sp->path, what[n++] = "the sweep spec";
    for (int i = 0; i < sp->n_systems; i++)
        in[n] = sp->system_path[i], what[n++] = "a hwdesc of the sweep";
    for (int i = 0; i < sp->n_workloads; i++)
        in[n] = sp->wl[i].path, what[n++] = "a workload of the sweep";
    for (int i = 0; i < sp->n_stacks; i++)
        if (sp->stack[i].path[0])
            in[n] = sp->stack[i].path, what[n++] = "a software stack of the sweep";
    if (sp->have_errbars)
        in[n] = sp->errbars.path, what[n++] = "the error-bar table";
    int rc = out_file_not_input(db, "--db", in, what, n, 0, e);
    size_t l = strlen(db);
    if (l > 3 && !strcmp(db + l - 3, ".db"))
        l -= 3;
    static const char *const sfx[] = {"-front.png", "-front.html"};
    for (int k = 0; k < 2 && plots && !rc; k++) {
        char out[OUT_PATH_MAX];
        if (snprintf(out, sizeof out, "%.*s%s", (int)l, db, sfx[k]) >= (int)sizeof out)
            return dse_err_set(e, DSE_EINPUT, db, "--db", "too long a path for the plot beside it");
        rc = out_file_not_input(out, "--db", in, what, n, 0, e);
    }
    return rc;
}

/* --resume: what changed since the run started, listed in buf (empty when nothing did). The spec is
 * compared by its stored hash; the other inputs (runs.inputs: path -> hash) by path, else by content
 * (the same file reached by another path, from another directory); dse itself by version and git
 * commit, as its models are an input too. */
static void changed_inputs(const struct sweep_spec *sp, const struct store_resumable *rs, char *buf, size_t n)
{
    char *now_txt = json_inputs(sp), h[24];
    cJSON *was = cJSON_Parse(rs->inputs_json), *now = now_txt ? cJSON_Parse(now_txt) : NULL;
    const cJSON *w[64], *x;
    int nw = 0, used[64] = {0};
    buf[0] = '\0';
#define ADD(...) snprintf(buf + strlen(buf), n - strlen(buf), __VA_ARGS__)
    snprintf(h, sizeof h, "%016llx", sp->hash);
    if (strcmp(h, rs->spec_hash))
        ADD("%s", sp->path);
    if (!cJSON_IsObject(was) || !cJSON_IsObject(now)) {
        ADD("%sthe inputs of run %lld (unreadable)", buf[0] ? ", " : "", rs->id);
    } else {
        cJSON_ArrayForEach(x, was) /* the run's inputs but its spec */
            if (nw < 64 && cJSON_IsString(x) && strcmp(x->valuestring, rs->spec_hash))
                w[nw++] = x;
        cJSON_ArrayForEach(x, now)
        {
            if (!strcmp(x->string, sp->path) || !cJSON_IsString(x))
                continue;
            int hit = -1;
            for (int i = 0; i < nw && hit < 0; i++)
                if (!used[i] && !strcmp(w[i]->string, x->string))
                    hit = i;
            for (int i = 0; i < nw && hit < 0; i++)
                if (!used[i] && !strcmp(w[i]->valuestring, x->valuestring))
                    hit = i;
            if (hit < 0)
                ADD("%s%s (not an input of run %lld)", buf[0] ? ", " : "", x->string, rs->id);
            else if (strcmp(w[hit]->valuestring, x->valuestring))
                ADD("%s%s", buf[0] ? ", " : "", x->string);
            if (hit >= 0)
                used[hit] = 1;
        }
        for (int i = 0; i < nw; i++)
            if (!used[i])
                ADD("%s%s (an input of run %lld, not now)", buf[0] ? ", " : "", w[i]->string, rs->id);
    }
    if (strcmp(rs->version, PACKAGE_VERSION) || strcmp(rs->git, DSE_GIT_HASH))
        ADD("%sdse (run %lld: %s, git %s; now %s, git %s)", buf[0] ? ", " : "", rs->id, rs->version, rs->git,
            PACKAGE_VERSION, DSE_GIT_HASH);
#undef ADD
    cJSON_Delete(was);
    cJSON_Delete(now);
    free(now_txt);
}

static char *json_objectives(const struct sweep_spec *sp)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < sp->n_obj; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "metric", sp->obj[i].m->name);
        cJSON_AddStringToObject(o, "goal", sp->obj[i].maximize ? "max" : "min");
        cJSON_AddItemToArray(a, o);
    }
    char *s = ju_print(a, 0);
    cJSON_Delete(a);
    return s;
}

static char *json_axes(const struct run *r)
{
    cJSON *a = cJSON_CreateArray();
    for (int pos = 0; pos < r->sp->n_axes; pos++)
        cJSON_AddItemToArray(a, cJSON_CreateString(r->sp->axes[r->order[pos]].name));
    char *s = ju_print(a, 0);
    cJSON_Delete(a);
    return s;
}

static double shown(const struct sweep_spec *sp, int k, double v) { return sp->obj[k].maximize ? -v : v; }

static void print_front(const struct run *r, const long long *front, long long nf, int top, int json, int csv,
                        const char *db, double hv)
{
    const struct sweep_spec *sp = r->sp;
    const char *vals[SW_MAX_AXES];
    if (json) {
        cJSON *o = cJSON_CreateObject(), *fa;
        cJSON_AddStringToObject(o, "name", sp->name);
        cJSON_AddStringToObject(o, "db", db);
        cJSON_AddNumberToObject(o, "run_id", (double)r->run_id);
        cJSON_AddNumberToObject(o, "points", (double)r->n_total);
        cJSON_AddNumberToObject(o, "feasible", (double)r->n_feasible);
        if (isfinite(hv))
            cJSON_AddNumberToObject(o, "hypervolume", hv);
        cJSON_AddStringToObject(o, "rank", sp->pessimistic ? "pessimistic" : "predicted");
        fa = cJSON_AddArrayToObject(o, "front");
        for (long long i = 0; i < nf; i++) {
            cJSON *p = cJSON_CreateObject();
            long long x = front[i];
            cJSON_AddNumberToObject(p, "point", (double)r->point[x]);
            axis_values(r, r->point[x], vals);
            for (int pos = 0; pos < sp->n_axes; pos++) {
                const struct sw_axis *a = &sp->axes[r->order[pos]];
                if (a->numeric)
                    cJSON_AddNumberToObject(p, a->name, strtod(vals[pos], NULL));
                else
                    cJSON_AddStringToObject(p, a->name, vals[pos]);
            }
            for (int k = 0; k < sp->n_obj; k++)
                cJSON_AddNumberToObject(p, sp->obj[k].m->name, shown(sp, k, r->obj[(size_t)x * sp->n_obj + k]));
            if (isfinite(r->err[2 * x])) { /* of the time: predicted / measured - 1 */
                cJSON *ee = cJSON_AddObjectToObject(p, "expected_error_pct");
                cJSON_AddNumberToObject(ee, "low", r->err[2 * x]);
                cJSON_AddNumberToObject(ee, "high", r->err[2 * x + 1]);
            } else {
                cJSON_AddNullToObject(p, "expected_error_pct");
            }
            cJSON_AddItemToArray(fa, p);
        }
        char *s = ju_print(o, 1);
        if (s)
            puts(s);
        free(s);
        cJSON_Delete(o);
        return;
    }
    if (csv) {
        printf("point");
        for (int pos = 0; pos < sp->n_axes; pos++)
            printf(",%s", sp->axes[r->order[pos]].name);
        for (int k = 0; k < sp->n_obj; k++)
            printf(",%s", sp->obj[k].m->name);
        printf(",expected_error_low_pct,expected_error_high_pct\n");
        for (long long i = 0; i < nf; i++) {
            long long x = front[i];
            axis_values(r, r->point[x], vals);
            printf("%lld", r->point[x]);
            for (int pos = 0; pos < sp->n_axes; pos++)
                printf(",%s", vals[pos]);
            for (int k = 0; k < sp->n_obj; k++)
                printf(",%.9g", shown(sp, k, r->obj[(size_t)x * sp->n_obj + k]));
            if (isfinite(r->err[2 * x]))
                printf(",%.4g,%.4g\n", r->err[2 * x], r->err[2 * x + 1]);
            else
                printf(",,\n");
        }
        return;
    }
    /* The best point per objective is marked with '*'. */
    long long best[SW_MAX_OBJ];
    for (int k = 0; k < sp->n_obj; k++) {
        best[k] = front[0];
        for (long long i = 1; i < nf; i++)
            if (r->obj[(size_t)front[i] * sp->n_obj + k] < r->obj[(size_t)best[k] * sp->n_obj + k])
                best[k] = front[i];
    }
    printf("Pareto front: %lld points (sorted by %s, %s is better; * = best per objective%s)\n", nf,
           sp->obj[0].m->name, sp->obj[0].maximize ? "higher" : "lower",
           sp->pessimistic ? "; time-scaled objectives at the pessimistic end of their error bars" : "");
    /* Column widths from the header (hw: axes show their last path segment) and the values. */
    int width[SW_MAX_AXES];
    const char *head[SW_MAX_AXES];
    char unit_head[SW_MAX_AXES][HW_NAME_LEN + 16];
    for (int pos = 0; pos < sp->n_axes; pos++) {
        const struct sw_axis *a = &sp->axes[r->order[pos]];
        const char *dot = a->kind == AX_HW ? strrchr(a->name, '.') : NULL;
        int per, lvl = topo_count_level(r, a, &per);
        head[pos] = dot ? dot + 1 : a->name;
        if (lvl >= 0) { /* a level's count: its units are nodes (or devices) */
            snprintf(unit_head[pos], sizeof unit_head[pos], "%s.%s", r->sys0->topo.level[lvl].name,
                     lvl ? "nodes" : "devices");
            head[pos] = unit_head[pos];
        }
        width[pos] = (int)strlen(head[pos]);
        for (int v = 0; v < a->n; v++)
            if ((int)strlen(a->v[v].s) > width[pos])
                width[pos] = (int)strlen(a->v[v].s);
    }
    for (int pos = 0; pos < sp->n_axes; pos++)
        printf("%-*s ", width[pos], head[pos]);
    for (int k = 0; k < sp->n_obj; k++)
        printf("%20s ", sp->obj[k].m->name);
    printf(" %-13s ties\n", "error_%");
    /* Points with identical objectives (e.g. differing only in a memory size that fits) share a
     * row: the first is shown, "ties" counts the others (all are in the database). */
    long long rows = 0, i = 0;
    int ties = 0;
    while (i < nf && rows < top) {
        long long x = front[i], j = i + 1;
        while (j < nf && !memcmp(r->obj + (size_t)front[j] * sp->n_obj, r->obj + (size_t)x * sp->n_obj,
                                 sizeof(double) * (size_t)sp->n_obj))
            j++;
        axis_values(r, r->point[x], vals);
        for (int pos = 0; pos < sp->n_axes; pos++)
            printf("%-*s ", width[pos], vals[pos]);
        for (int k = 0; k < sp->n_obj; k++) {
            int star = 0;
            for (long long q = i; q < j; q++)
                star |= best[k] == front[q];
            printf("%19.5g%c ", shown(sp, k, r->obj[(size_t)x * sp->n_obj + k]), star ? '*' : ' ');
        }
        char eb[32] = "n/a";
        if (isfinite(r->err[2 * x]))
            snprintf(eb, sizeof eb, "%+.0f..%+.0f", r->err[2 * x], r->err[2 * x + 1]);
        printf(" %-13s", eb);
        if (j - i > 1)
            printf(" +%lld", j - i - 1);
        ties |= j - i > 1;
        printf("\n");
        rows++;
        i = j;
    }
    if (i < nf)
        printf("(%lld more front points in %s)\n", nf - i, db);
    if (ties)
        printf("ties: +N front points with the same objectives as the row shown (they differ only in axes that "
               "change nothing measured, such as a memory size that fits)%s%s\n", strcmp(db, "(memory)") ? ", all in " : "",
               strcmp(db, "(memory)") ? db : "");
    for (int pos = 0; pos < sp->n_axes; pos++) {
        const struct sw_axis *a = &sp->axes[r->order[pos]];
        int per, lvl = topo_count_level(r, a, &per);
        if (lvl < 1)
            continue;
        double lo = a->v[0].num, hi = lo;
        for (int v = 1; v < a->n; v++) {
            lo = a->v[v].num < lo ? a->v[v].num : lo;
            hi = a->v[v].num > hi ? a->v[v].num : hi;
        }
        printf("%s: %s, the %s level's nodes of %d device%s '%s' each (%.0f to %.0f nodes: %.0f to %.0f devices)\n",
               head[pos], a->name, r->sys0->topo.level[lvl].name, per, per == 1 ? "" : "s",
               r->sys0->dev[r->sys0->topo.dev].name, lo, hi, lo * per, hi * per);
    }
}

static void usage(void)
{
    printf("usage: dse sweep SPEC [options]\n\n"
           "Evaluates every point of the spec's space (or random / NSGA-II samples of it) in parallel, stores\n"
           "them in SQLite, and prints the Pareto front of the feasible points; writes the front plot and the\n"
           "HTML report (dse report) beside the database. Each point stores its objectives, constraints and\n"
           "error bars (the spec's \"store\" adds more; dse show DB POINT recomputes them all). A build with\n"
           "MPI (./configure --with-mpi) spreads the points over ranks: mpirun -np N dse sweep SPEC gives the\n"
           "same database (docs/mpi.md). Spec format: sweeps/README.md. Metrics:\n");
    for (int i = 0; i < metric_count; i++)
        printf("  %-24s %-8s %-4s %s\n", metric_table[i].name, metric_table[i].unit,
               metric_table[i].dir == DIR_MIN ? "min" : metric_table[i].dir == DIR_MAX ? "max" : "", metric_table[i].what);
    printf("\noptions:\n");
    cli_print_options(sweep_opts_proto);
}

/* The database refused a write (disk full, an I/O error): what was committed stays, and the message
 * says how to finish the run (db: the --db given, NULL for the default). */
static void resume_hint(struct dse_err *e, long long run_id, const char *spec, const char *db)
{
    char msg[2 * sizeof e->msg + 1200];
    snprintf(msg, sizeof msg, "%s; the points stored so far are kept (run %lld): free space, then finish with dse sweep "
             "%s --resume%s%s", e->msg, run_id, spec, db ? " --db " : "", db ? db : "");
    dse_strlcpy(e->msg, msg, sizeof e->msg);
}

/* MPI: rank 0's resumed points (what the searches skip) sent to the other ranks. */
static int share_resumed(struct run *r, const struct dist *d, struct dse_err *e)
{
    long long n = r->n_stored;
    int rc = dist_bcast(d, &n, sizeof n, 0, e);
    if (rc || d->size == 1 || !n)
        return rc;
    if (d->rank != 0 && (rc = grow(r, n, e))) /* out of memory here: the job ends at mpirun */
        return rc;
    r->n_stored = n;
    if ((rc = dist_bcast(d, r->point, sizeof *r->point * (size_t)n, 0, e)) ||
        (rc = dist_bcast(d, r->feasible, (size_t)n, 0, e)))
        return rc;
    return dist_bcast(d, r->obj, sizeof *r->obj * (size_t)n * r->sp->n_obj, 0, e);
}

int cmd_sweep(int argc, char **argv)
{
    struct cli_opt opts[sizeof sweep_opts_proto / sizeof sweep_opts_proto[0]];
    memcpy(opts, sweep_opts_proto, sizeof opts);
    struct dse_err e;
    const char *pos[1];
    int npos, rc, stopped = 0;
    struct sweep_spec sp;
    int have_spec = 0;
    struct sweep_prep *prep = NULL;
    struct store *st = NULL;
    struct run r;
    char *inputs = NULL, *objs = NULL, *axes = NULL;
    const char **col_txt = NULL;
    double *col_num = NULL;
    int *rank = NULL;
    double *fobj = NULL;
    long long *fidx = NULL, *fpoints = NULL, *front = NULL;
    struct dist d = {0, 1, 0};
    int agreed = 0; /* MPI: the ranks met after the setup (an error before it is every rank's) */
    int root = 1;   /* rank 0 writes the database and prints; the others only evaluate */
    memset(&r, 0, sizeof r);
    dse_err_clear(&e);
    if ((rc = cli_parse(argc, argv, 2, opts, pos, 1, &npos, "sweep", &e)) || (rc = dist_init(&d, &e)))
        goto out;
    root = d.rank == 0;
    if (cli_get(opts, "help")) {
        if (root)
            usage();
        goto out;
    }
    if (npos != 1) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "sweep: expected one spec file (see dse help sweep)");
        goto out;
    }
    if (cli_get(opts, "json") && cli_get(opts, "csv")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "sweep: choose one of --json and --csv");
        goto out;
    }
    long long limit = SW_DEFAULT_GRID_LIMIT, threads = 1, top = 40;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    if ((cli_get(opts, "limit") && (rc = cli_int("limit", cli_get(opts, "limit"), 1, 1LL << 40, &limit, &e))) ||
        (cli_get(opts, "threads") && (rc = cli_int("threads", cli_get(opts, "threads"), 1, 1024, &threads, &e))) ||
        (cli_get(opts, "top") && (rc = cli_int("top", cli_get(opts, "top"), 1, 1000000, &top, &e))))
        goto out;
    static const char *const spec_ext[] = {".json", NULL};
    char spec_path[1024]; /* a path, or a shipped name (sweeps/NAME.json here, in DSE_PATH or installed) */
    if ((rc = cli_resolve("spec", "sweeps", pos[0], spec_ext, spec_path, sizeof spec_path, &e)) ||
        (rc = sweep_spec_load(spec_path, &sp, &e)))
        goto out;
    have_spec = 1;
    /* Every method's plan is bounded: the run keeps each point it evaluates in memory. */
    if (sp.method == SEARCH_GRID && sp.points > limit) {
        rc = dse_err_set(&e, DSE_EINPUT, sp.path, "search",
                         "the grid has %lld points, more than the limit of %lld: use \"search\": {\"method\": "
                         "\"random\", \"samples\": N} or {\"method\": \"nsga2\", \"population\": P, \"generations\": "
                         "G}, or raise --limit",
                         sp.points, limit);
        goto out;
    }
    if (sp.method != SEARCH_GRID && sweep_planned(&sp) > limit) {
        rc = dse_err_set(&e, DSE_EINPUT, sp.path, sp.method == SEARCH_RANDOM ? "search.samples" : "search",
                         "%lld evaluations planned%s, more than the limit of %lld: plan fewer, or raise --limit",
                         sweep_planned(&sp), sp.method == SEARCH_NSGA2 ? " (population x (generations + 1))" : "",
                         limit);
        goto out;
    }
    if ((rc = sweep_prepare(&sp, &prep, &e)) || (rc = sweep_scratch_init(prep, (int)threads, &e)))
        goto out;

    /* Database: results/<name>.db unless --db. */
    char db[OUT_PATH_MAX - 16];
    if (cli_get(opts, "db")) {
        if (strlen(cli_get(opts, "db")) >= sizeof db) {
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--db", "a path of %zu bytes: at most %zu", strlen(cli_get(opts, "db")),
                             sizeof db - 1);
            goto out;
        }
        snprintf(db, sizeof db, "%s", cli_get(opts, "db"));
    } else {
        mkdir("results", 0777);
        snprintf(db, sizeof db, "results/%s.db", sp.name);
    }
    if ((rc = outputs_not_inputs(&sp, db, !cli_get(opts, "no-plot"), &e)))
        goto out;
    r.sp = &sp;
    r.sys0 = sweep_prep_system(prep, 0);
    r.keep = 4000000; /* about 200 MB of points with three objectives */
    if (cli_get(opts, "keep-points") &&
        (rc = cli_int("keep-points", cli_get(opts, "keep-points"), 0, 1LL << 40, &r.keep, &e)))
        goto out;
    r.keep_at = r.keep;
    r.wa = -1;
    for (int a = 0; a < sp.n_axes; a++)
        if (sp.axes[a].kind == AX_WORKLOAD)
            r.wa = a;
    for (int g = 0; g < SW_MAX_WORKLOADS; g++)
        for (int k = 0; k < SW_MAX_OBJ; k++) {
            r.gmin[g][k] = INFINITY;
            r.gmax[g][k] = -INFINITY;
        }
    for (int a = 0; a < sp.n_axes; a++)
        r.order[sp.axes[a].spec_pos] = a;
    /* The run's axes in the spec's order, each with its place in the point index (sweep.h): the store
     * keeps them once, not per point. */
    struct store_col cols[SW_MAX_AXES];
    size_t slots = (size_t)(sp.n_axes > 0 && sp.n_axes <= SW_MAX_AXES ? sp.n_axes : 1) * SW_MAX_VALUES;
    col_txt = malloc(sizeof *col_txt * slots);
    col_num = malloc(sizeof *col_num * slots);
    if (!col_txt || !col_num) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int p = 0; p < sp.n_axes; p++) {
        int a = r.order[p];
        const struct sw_axis *ax = &sp.axes[a];
        cols[p].name = ax->name;
        cols[p].n = ax->n;
        cols[p].stride = 1;
        for (int i = a + 1; i < sp.n_axes; i++)
            cols[p].stride *= sp.axes[i].n;
        cols[p].text = col_txt + (size_t)p * SW_MAX_VALUES;
        cols[p].num = col_num + (size_t)p * SW_MAX_VALUES;
        cols[p].numeric = ax->numeric;
        cols[p].integer = ax->numeric;
        for (int v = 0; v < ax->n; v++) {
            double x = ax->v[v].num;
            col_txt[(size_t)p * SW_MAX_VALUES + v] = ax->v[v].s;
            col_num[(size_t)p * SW_MAX_VALUES + v] = x;
            cols[p].integer &= x == floor(x) && fabs(x) < 9e15;
        }
    }
    struct store_metric ms[METRIC_MAX];
    for (int i = 0; i < metric_count; i++) {
        ms[i].name = metric_table[i].name;
        ms[i].unit = metric_table[i].unit;
        ms[i].direction = metric_table[i].dir == DIR_MIN ? "min" : metric_table[i].dir == DIR_MAX ? "max" : "none";
        ms[i].description = metric_table[i].what;
    }
    int no_db = cli_get(opts, "no-db") != NULL;
    if (no_db && cli_get(opts, "resume")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "sweep: --resume needs the database (drop --no-db)");
        goto out;
    }
    if (!root) /* no database, no output: those are rank 0's */
        no_db = 1;
    if (no_db)
        snprintf(db, sizeof db, "(memory)");
    if (!no_db && (rc = store_open(db, &st, &e)))
        goto out;
    /* --resume: the run must have started from the same inputs, checked before anything is written. */
    struct store_resumable rs = {0};
    if (st && cli_get(opts, "resume") && (rc = store_find_resumable(st, sp.name, &rs, &e)))
        goto out;
    if (rs.id > 0) {
        char changed[600];
        changed_inputs(&sp, &rs, changed, sizeof changed);
        if (changed[0]) {
            rc = dse_err_set(&e, DSE_EINPUT, sp.path, NULL,
                             "cannot resume run %lld of %s: changed since it started: %s (its points would mix with "
                             "new ones); run without --resume to start anew in the same database, or use another --db",
                             rs.id, db, changed);
            store_resumable_free(&rs);
            goto out;
        }
        if (rs.v1) { /* the same dse version and git (a build from a tarball): its rows are version 1's */
            rc = dse_err_set(&e, DSE_EINPUT, sp.path, NULL,
                             "cannot resume run %lld of %s: it was written in schema version 1 (docs/sweep-db.md), "
                             "whose rows take no new points; run without --resume to start anew in the same database",
                             rs.id, db);
            store_resumable_free(&rs);
            goto out;
        }
    }
    long long resume_id = rs.id;
    store_resumable_free(&rs);
    if (!no_db && (rc = store_prepare(st, ms, metric_count, sp.stored, &e)))
        goto out;
    r.st = st;
    char hash[24];
    snprintf(hash, sizeof hash, "%016llx", sp.hash);
    if ((r.run_id = resume_id) > 0) {
        const char *names[SW_MAX_OBJ + 2];
        for (int k = 0; k < sp.n_obj; k++)
            names[k] = sp.obj[k].m->name;
        names[sp.n_obj] = metric_table[sp.err_low_m].name;
        names[sp.n_obj + 1] = metric_table[sp.err_high_m].name;
        struct load_ctx lc = {&r, DSE_OK, &e};
        if ((rc = store_load(st, r.run_id, names, sp.n_obj + 2, load_one, &lc, &e)) || (rc = lc.rc))
            goto out;
        r.n_stored = r.n;
        fprintf(stderr, "dse: resuming run %lld of %s: %lld points already stored\n", r.run_id, db, r.n);
    } else if (!no_db) {
        if (cli_get(opts, "resume"))
            fprintf(stderr, "dse: no interrupted run of sweep %s in %s: starting a new run\n", sp.name, db);
        char host[256] = "unknown";
        gethostname(host, sizeof host - 1);
        if (d.size > 1) /* the runs row is rank 0's; threads is per rank */
            snprintf(host + strlen(host), sizeof host - strlen(host), " (MPI: %d ranks)", d.size);
        inputs = json_inputs(&sp);
        objs = json_objectives(&sp);
        axes = json_axes(&r);
#ifdef _OPENMP
        int omp = 1;
#else
        int omp = 0;
#endif
        struct store_run_info ri = {sp.name, sp.text, hash, PACKAGE_VERSION, DSE_GIT_HASH, host,
                                    inputs ? inputs : "{}", objs ? objs : "[]", axes ? axes : "[]", omp,
                                    (int)threads, sweep_planned(&sp), sp.points, cols, sp.n_axes};
        if ((rc = store_begin_run(st, &ri, &r.run_id, &e)))
            goto out;
    }

    /* Every rank is ready (an error before this point, on any rank, ends every rank with rank 0's or the
     * lowest failing rank's message); the others learn which points a resumed run already has. */
    agreed = 1;
    if ((rc = dist_agree_error(&d, 0, &e)) || (rc = share_resumed(&r, &d, &e)))
        goto out;
    struct sigaction sa, old_sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);
    interrupted = 0;
    r.progress = root && isatty(STDERR_FILENO) && !cli_get(opts, "quiet");
    /* under mpirun stderr is a pipe to the launcher: a long batch job logs its progress in tenths */
    r.log_tenths = root && d.size > 1 && !r.progress && !cli_get(opts, "quiet");
    r.t0 = r.last = now_s();
    struct sweep_sink sink = {&r, sink_rows, r.n_stored ? sink_stored : NULL, sink_progress, &interrupted};
    rc = sweep_run(prep, (int)threads, &d, &sink, &stopped, &e);
    sigaction(SIGINT, &old_sa, NULL);
    if (!root) /* its share is in rank 0's database (or its error in rank 0's message) */
        goto out;
    double elapsed = now_s() - r.t0;
    if (rc) {
        struct dse_err ignore;
        if (st)
            store_finish_run(st, r.run_id, "interrupted", NAN, &ignore);
        if (r.store_failed) /* disk full or an I/O error: what was committed stays, and can be finished */
            resume_hint(&e, r.run_id, sp.path, cli_get(opts, "db"));
        goto out;
    }
    if (stopped) {
        if (r.progress)
            fputc('\n', stderr);
        rc = st ? store_finish_run(st, r.run_id, "interrupted", NAN, &e) : DSE_OK;
        fprintf(stderr, "dse: interrupted: %lld points saved in %s (run %lld); finish with dse sweep %s --resume%s%s\n",
                r.n_total, db, r.run_id, sp.path, cli_get(opts, "db") ? " --db " : "", cli_get(opts, "db") ? db : "");
        if (!rc)
            rc = DSE_ERUNTIME;
        dse_err_set(&e, rc, NULL, NULL, "interrupted");
        goto out;
    }

    /* Rank the feasible points. */
    long long nf = 0, nfront = 0; /* the feasible points held (all of them unless pruned) */
    for (long long i = 0; i < r.n; i++)
        nf += r.feasible[i];
    int m = sp.n_obj;
    fobj = malloc(sizeof *fobj * (size_t)(nf ? nf : 1) * m);
    fidx = malloc(sizeof *fidx * (size_t)(nf ? nf : 1));
    fpoints = malloc(sizeof *fpoints * (size_t)(nf ? nf : 1));
    rank = malloc(sizeof *rank * (size_t)(nf ? nf : 1));
    front = malloc(sizeof *front * (size_t)(nf ? nf : 1));
    if (!fobj || !fidx || !fpoints || !rank || !front) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (long long i = 0, k = 0; i < r.n; i++)
        if (r.feasible[i]) {
            memcpy(fobj + (size_t)k * m, r.obj + (size_t)i * m, sizeof *fobj * (size_t)m);
            fidx[k] = i;
            fpoints[k++] = r.point[i];
        }
    /* With several workloads, each has its own front: points are compared only with points of the
     * same workload (a design point is not better because its model is smaller). */
    int wa = -1, groups = 1;
    for (int a = 0; a < sp.n_axes; a++)
        if (sp.axes[a].kind == AX_WORKLOAD) {
            wa = a;
            groups = sp.axes[a].n;
        }
    long long gstart[SW_MAX_WORKLOADS + 1] = {0};
    double hv = NAN, ghv[SW_MAX_WORKLOADS];
    int ranked_front_only = 0;
    if (nf > 2147483647LL) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "too many feasible points to rank");
        goto out;
    }
    double *gobj = malloc(sizeof *gobj * (size_t)(nf ? nf : 1) * m);
    long long *gk = malloc(sizeof *gk * (size_t)(nf ? nf : 1));
    int *grank = malloc(sizeof *grank * (size_t)(nf ? nf : 1));
    if (!gobj || !gk || !grank) {
        free(gobj);
        free(gk);
        free(grank);
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int g = 0; g < groups && !rc; g++) {
        long long ng = 0, f0 = nfront;
        for (long long k = 0; k < nf; k++)
            if (wa < 0 || sweep_axis_index(&sp, fpoints[k], wa) == g) {
                memcpy(gobj + (size_t)ng * m, fobj + (size_t)k * m, sizeof *gobj * (size_t)m);
                gk[ng++] = k;
            }
        ghv[g] = NAN;
        if (ng > SW_RANK_ALL_MAX || r.pruned) { /* the front alone, O(n log n): further ranks are left NULL */
            unsigned char *in = malloc((size_t)ng);
            if (!in)
                rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
            else if (!(rc = pareto_front(gobj, (int)ng, m, in, &e)))
                for (long long i = 0; i < ng; i++)
                    grank[i] = in[i] ? 0 : -1;
            free(in);
            ranked_front_only = 1;
        } else if (ng > 0) {
            rc = pareto_rank(gobj, (int)ng, m, grank, &e);
        }
        if (ng > 0 && !rc) {
            for (long long i = 0; i < ng; i++) {
                rank[gk[i]] = grank[i];
                if (grank[i] == 0)
                    front[nfront++] = fidx[gk[i]];
            }
            if (m <= 3) { /* reference from this group's feasible points; volume of its front */
                double ref[SW_MAX_OBJ];
                struct dse_err he;
                pareto_reference(gobj, (int)ng, m, ref);
                for (int k = 0; k < m && r.pruned; k++) { /* the range tracked over every feasible point */
                    double lo = r.gmin[g][k], hi = r.gmax[g][k], span = hi - lo;
                    ref[k] = hi + (span > 0 ? 0.1 * span : hi != 0 ? 0.1 * fabs(hi) : 1);
                }
                for (int k = 0; k < m && sp.obj[0].has_ref; k++) /* fixed by the spec (minimised: max negated) */
                    ref[k] = sp.obj[k].maximize ? -sp.obj[k].ref : sp.obj[k].ref;
                for (long long i = f0; i < nfront; i++)
                    memcpy(gobj + (size_t)(i - f0) * m, r.obj + (size_t)front[i] * m, sizeof *gobj * (size_t)m);
                ghv[g] = pareto_hypervolume(gobj, (int)(nfront - f0), m, ref, &he);
            }
            if (pareto_sort(r.obj, m, r.point, front + f0, nfront - f0))
                rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        }
        gstart[g + 1] = nfront;
    }
    free(gobj);
    free(gk);
    free(grank);
    if (rc)
        goto out;
    if (nf && st && (rc = store_set_ranks(st, r.run_id, fpoints, rank, nf, !r.pruned, &e))) {
        resume_hint(&e, r.run_id, sp.path, cli_get(opts, "db")); /* every point is stored: --resume ranks them */
        goto out;
    }
    if (groups == 1)
        hv = ghv[0];
    if (st && (rc = store_finish_run(st, r.run_id, "complete", hv, &e))) {
        resume_hint(&e, r.run_id, sp.path, cli_get(opts, "db"));
        goto out;
    }
    /* The writer stays open while the plot and the report read the database, and closes last: the
     * last connection to close removes the -wal and -shm files, which read-only ones cannot. */

    int json = cli_get(opts, "json") != NULL, csv = cli_get(opts, "csv") != NULL;
    if (!json && !csv) {
        char ranks_s[48] = "";
        if (d.size > 1)
            snprintf(ranks_s, sizeof ranks_s, " x %d MPI ranks", d.size);
        printf("dse sweep %s: %lld points evaluated in %.2f s (%.0f points/s, %lld threads%s), %lld feasible, run %lld "
               "in %s\n",
               sp.name, r.n_total - r.n_stored, elapsed, (r.n_total - r.n_stored) / (elapsed > 1e-9 ? elapsed : 1e-9),
               threads, ranks_s, r.n_feasible, r.run_id, db);
        int fid_axis = 0;
        for (int a = 0; a < sp.n_axes; a++)
            fid_axis |= sp.axes[a].kind == AX_FIDELITY;
        printf("model: %s (docs/models.md)\n", fid_axis ? "analytical and cycle-approximate tiers (the fidelity axis)"
                                                 : sp.fidelity == FID_CYCLE ? "cycle-approximate tier"
                                                                            : "analytical roofline");
        print_accuracy(prep);
        print_quality(prep);
        char cd[200];
        cost_describe(&sp.cost, 1, cd, sizeof cd);
        printf("cost: %s (the spec's \"cost\"; docs/models.md, Cost)\n", cd);
        if (r.pruned)
            printf("ranks: more than %lld points were held in memory, so the dominated ones were dropped as the run "
                   "went (--keep-points): the front is exact, the database's rank is NULL beyond it\n", r.keep);
        else if (ranked_front_only)
            printf("ranks: over %d feasible points of a workload, only the front is found (rank 0); the database's "
                   "rank is NULL for the other feasible points\n", SW_RANK_ALL_MAX);
        for (int g = 0; g < groups; g++)
            if (isfinite(ghv[g]))
                printf("hypervolume of the front%s%s: %.6g (reference: %s)\n", groups > 1 ? " of " : "",
                       groups > 1 ? sp.axes[wa].v[g].s : "", ghv[g],
                       sp.obj[0].has_ref ? "fixed by the spec's objectives" : "worst feasible value + 10% of the range, "
                                                                              "per objective");
        printf("\n");
    }
    if (nfront == 0) {
        print_reasons(&r, db, no_db);
        if (json || csv)
            print_front(&r, front, 0, (int)top, json, csv, db, hv);
    } else if (json || csv || groups == 1) {
        print_front(&r, front, nfront, (int)top, json, csv, db, hv);
    } else {
        for (int g = 0; g < groups; g++) {
            printf("workload %s: ", sp.axes[wa].v[g].s);
            if (gstart[g + 1] > gstart[g])
                print_front(&r, front + gstart[g], gstart[g + 1] - gstart[g], (int)top, 0, 0, db, ghv[g]);
            else
                printf("no feasible point\n");
            printf("\n");
        }
    }
    if (!cli_get(opts, "no-plot") && !no_db && nfront > 0) {
        char written[1024];
        struct dse_err pe;
        if (plot_run(db, r.run_id, NULL, NULL, NULL, NULL, written, sizeof written, &pe))
            fprintf(stderr, "dse: plot not written: %s\n", pe.msg);
        else if (!json && !csv)
            printf("\nplot: %s\n", written);
    }
    if (!cli_get(opts, "no-plot") && !no_db) { /* beside the plot, also when nothing is feasible: it says why */
        char html[1024], written[4096];
        size_t l = strlen(db);
        struct dse_err pe;
        if (l > 3 && !strcmp(db + l - 3, ".db"))
            l -= 3;
        snprintf(html, sizeof html, "%.*s-front.html", (int)l, db);
        if (cli_report(db, r.run_id, NULL, html, written, sizeof written, &pe))
            fprintf(stderr, "dse: report not written: %s\n", pe.msg);
        else if (!json && !csv)
            printf("%sreport: %s\n", nfront > 0 ? "" : "\n", written);
    }
out:
    if (d.active && !agreed) { /* this rank failed before the meeting point: so do the others */
        agreed = 1;
        rc = dist_agree_error(&d, rc != DSE_OK, &e);
    }
    if (rc && strcmp(e.msg, "interrupted") && root)
        dse_err_print(stderr, &e);
    dist_finish(&d);
    store_close(st);
    sweep_prep_free(prep);
    if (have_spec)
        sweep_spec_free(&sp);
    free(r.point);
    free(r.feasible);
    free(r.obj);
    free(r.err);
    free(inputs);
    free(objs);
    free(axes);
    free(col_txt);
    free(col_num);
    free(rank);
    free(fobj);
    free(fidx);
    free(fpoints);
    free(front);
    return rc;
}

int cli_rerun_open(const struct store_run *run, int threads, struct cli_rerun *rr, struct dse_err *e)
{
    memset(rr, 0, sizeof *rr);
    cJSON *in = cJSON_Parse(run->inputs);
    char path[1024] = "spec.json";
    if (cJSON_IsObject(in) && in->child && in->child->string)
        dse_strlcpy(path, in->child->string, sizeof path); /* the spec's own path comes first */
    cJSON_Delete(in);
    int rc = sweep_spec_load_buf(run->spec, strlen(run->spec), path, 0, &rr->sp, e);
    if (rc)
        return rc;
    rr->have_spec = 1;
    for (int a = 0; a < rr->sp.n_axes; a++)
        rr->order[rr->sp.axes[a].spec_pos] = a;
    struct store_resumable rs = {.id = run->id, .inputs_json = run->inputs};
    dse_strlcpy(rs.spec_hash, run->spec_hash, sizeof rs.spec_hash);
    dse_strlcpy(rs.version, run->version, sizeof rs.version);
    dse_strlcpy(rs.git, run->git, sizeof rs.git);
    changed_inputs(&rr->sp, &rs, rr->changed, sizeof rr->changed);
    if (rr->changed[0])
        return DSE_OK;
    if ((rc = sweep_prepare(&rr->sp, &rr->prep, e)) || (rc = sweep_scratch_init(rr->prep, threads, e)))
        cli_rerun_close(rr);
    return rc;
}

void cli_rerun_close(struct cli_rerun *rr)
{
    sweep_prep_free(rr->prep);
    if (rr->have_spec)
        sweep_spec_free(&rr->sp);
    memset(rr, 0, sizeof *rr);
}

/* dse show DB POINT [--run ID] [--json]: a stored point evaluated again from its run's spec (the run's
 * inputs must be unchanged: the same spec, files and dse give the same numbers) with every metric of
 * the registry, those the database does not keep as well. */
static struct cli_opt show_opts_proto[] = {
    {"run", 1, "run id in the database (default: the newest run)", NULL},
    {"json", 0, "print one JSON object", NULL},
    {"help", 0, "this help", NULL},
    {NULL, 0, NULL, NULL},
};

int cmd_show(int argc, char **argv)
{
    struct cli_opt opts[sizeof show_opts_proto / sizeof show_opts_proto[0]];
    memcpy(opts, show_opts_proto, sizeof opts);
    struct dse_err e;
    const char *pos[2];
    int npos, rc;
    long long run = 0, point = -1;
    struct store *st = NULL;
    struct store_run sr = {0};
    struct cli_rerun rr = {0};
    struct sw_row row;
    dse_err_clear(&e);
    if ((rc = cli_parse(argc, argv, 2, opts, pos, 2, &npos, "show", &e)))
        goto out;
    if (cli_get(opts, "help")) {
        printf("usage: dse show DB POINT [--run ID] [--json]\n\nEvaluates a stored point of a sweep again from its run's "
               "spec and prints every metric of the registry\n(the database keeps the columns the run asked for). The run's "
               "inputs must be unchanged.\n\noptions:\n");
        cli_print_options(show_opts_proto);
        return 0;
    }
    if (npos != 2) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "show: expected a database and a point (see dse help show)");
        goto out;
    }
    if ((rc = cli_int("point", pos[1], 0, 1LL << 62, &point, &e)) ||
        (cli_get(opts, "run") && (rc = cli_int("run", cli_get(opts, "run"), 1, 1LL << 62, &run, &e))))
        goto out;
    if ((rc = store_open_read(pos[0], &st, &e)) || (rc = store_read_run(st, run, &sr, &e)))
        goto out;
    if (!sr.id) {
        rc = dse_err_set(&e, DSE_EINPUT, pos[0], NULL, run > 0 ? "no run %lld" : "no run%.0lld", run);
        goto out;
    }
    if ((rc = cli_rerun_open(&sr, 1, &rr, &e)))
        goto out;
    const struct sweep_spec *sp = &rr.sp;
    if (rr.changed[0]) {
        rc = dse_err_set(&e, DSE_EINPUT, pos[0], NULL, "run %lld's inputs changed since it ran (%s): its points cannot be "
                         "evaluated again as they were", sr.id, rr.changed);
        goto out;
    }
    if (point >= sp->points) {
        rc = dse_err_set(&e, DSE_EINPUT, pos[0], NULL, "point %lld: run %lld's space has %lld points (0 to %lld)", point,
                         sr.id, sp->points, sp->points - 1);
        goto out;
    }
    if (sweep_eval_point(rr.prep, point, 0, &row, &e)) {
        rc = e.code ? e.code : DSE_ERUNTIME;
        goto out;
    }
    struct run r = {.sp = sp};
    memcpy(r.order, rr.order, sizeof r.order);
    const char *vals[SW_MAX_AXES];
    axis_values(&r, point, vals);
    if (cli_get(opts, "json")) {
        cJSON *o = cJSON_CreateObject(), *d = cJSON_AddObjectToObject(o, "design"), *m = cJSON_AddObjectToObject(o, "metrics");
        cJSON_AddNumberToObject(o, "run_id", (double)sr.id);
        cJSON_AddNumberToObject(o, "point", (double)point);
        for (int q = 0; q < sp->n_axes; q++)
            cJSON_AddStringToObject(d, sp->axes[r.order[q]].name, vals[q]);
        cJSON_AddBoolToObject(o, "feasible", row.feasible);
        if (!row.feasible)
            cJSON_AddStringToObject(o, "reason", row.reason);
        for (int i = 0; i < metric_count; i++)
            if (isfinite(row.metric[i]))
                cJSON_AddNumberToObject(m, metric_table[i].name, row.metric[i]);
        cli_print_json(o);
    } else {
        printf("dse show: point %lld of run %lld (%s) in %s, evaluated again\n", point, sr.id, sp->name, pos[0]);
        for (int q = 0; q < sp->n_axes; q++)
            printf("  %-28s %s\n", sp->axes[r.order[q]].name, vals[q]);
        printf("%s%s\n\n", row.feasible ? "feasible" : "infeasible: ", row.feasible ? "" : row.reason);
        printf("%-28s %16s  %-8s %s\n", "metric", "value", "unit", "description");
        for (int i = 0; i < metric_count; i++)
            if (isfinite(row.metric[i]))
                printf("%-28s %16.6g  %-8s %s\n", metric_table[i].name, row.metric[i], metric_table[i].unit,
                       metric_table[i].what);
    }
out:
    if (rc)
        dse_err_print(stderr, &e);
    cli_rerun_close(&rr);
    store_run_free(&sr);
    store_close(st);
    return rc;
}
