/* plot.c -- a sweep run read through store.h's readers, drawn by gnuplot fed through a pipe.
 *
 * Column names are checked against the points view's columns (a table before schema version 2)
 * before they are asked of the store, and every string that goes into the gnuplot script is
 * single-quoted: gnuplot runs `backquoted` shell commands inside double-quoted strings, never inside
 * single-quoted ones. */
#include "plot.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "metric.h"
#include "sbuf.h"
#include "store.h"

#define MAX_OBJ 64       /* objectives parsed from runs.objectives */
#define MAX_LISTED 12    /* runs named in an "unknown run" message */
#define LOG_SPAN 31.622776601683793 /* 10^1.5: plot_log_axis */
#define MAX_GROUPS 8     /* colours and shapes of the cloud; more groups share the last one, "other" */
#define MAX_LABELS 12    /* front points labelled with their design when the front has at most this many */

/* ---- the database ---- */

struct mdef {
    char name[96];
    char unit[32];
    enum metric_dir dir;
};

struct db {
    const char *file;
    struct store *st;
    char **col; /* columns of points, as the table spells them */
    int n_col;
    struct mdef *m; /* the metrics table: the registry answers for a metric it lacks */
    int n_m;
    int oom; /* in a callback of the store's */
};

struct run {
    long long id;
    char name[256], status[32];
    int n_obj;
    char obj[MAX_OBJ][96];
    enum metric_dir obj_dir[MAX_OBJ];
    cJSON *axes; /* JSON array of axis names, or NULL */
    long long n_points, n_feasible, n_pareto;
};

static const char *const bookkeeping[] = {"run_id", "point", "feasible", "reason", "pareto", "rank", NULL};

static enum metric_dir parse_dir(const char *s)
{
    if (!s)
        return DIR_NONE;
    if (!strncasecmp(s, "min", 3) || !strcasecmp(s, "lower"))
        return DIR_MIN;
    if (!strncasecmp(s, "max", 3) || !strcasecmp(s, "higher"))
        return DIR_MAX;
    return DIR_NONE;
}

static int oom(struct dse_err *e) { return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory"); }

static void db_close(struct db *d)
{
    for (int i = 0; i < d->n_col; i++)
        free(d->col[i]);
    free(d->col);
    free(d->m);
    store_close(d->st);
    memset(d, 0, sizeof *d);
}

static void count_col(void *ctx, const char *name)
{
    (void)name;
    ++*(int *)ctx;
}

static void add_col(void *ctx, const char *name)
{
    struct db *d = ctx;
    char **c = d->oom ? NULL : realloc(d->col, sizeof *c * (size_t)(d->n_col + 1));
    if (c)
        d->col = c;
    if (!c || !(c[d->n_col] = strdup(name)))
        d->oom = 1;
    else
        d->n_col++;
}

static void add_metric(void *ctx, const struct store_metric *sm)
{
    struct db *d = ctx;
    if (d->oom || !*sm->name)
        return;
    struct mdef *m = realloc(d->m, sizeof *m * (size_t)(d->n_m + 1));
    if (!m) {
        d->oom = 1;
        return;
    }
    d->m = m;
    dse_strlcpy(m[d->n_m].name, sm->name, sizeof m->name);
    dse_strlcpy(m[d->n_m].unit, sm->unit, sizeof m->unit);
    m[d->n_m].dir = parse_dir(sm->direction);
    d->n_m++;
}

static int db_open(const char *file, struct db *d, struct dse_err *e)
{
    struct stat st;
    int rc, n_runs = 0;
    memset(d, 0, sizeof *d);
    d->file = file;
    if (stat(file, &st) != 0) {
        if (errno == ENOENT)
            return dse_err_set(e, DSE_EINPUT, file, NULL, "no such file");
        return dse_err_set(e, DSE_EINPUT, file, NULL, "cannot read: %s", strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        return dse_err_set(e, DSE_EINPUT, file, NULL, "not a file: expected a sweep database (results/NAME.db)");
    /* one read transaction (the store's): counts and rows come from the same snapshot */
    if ((rc = store_open_read(file, &d->st, e)) || (rc = store_columns(d->st, "runs", count_col, &n_runs, e)) ||
        (rc = store_columns(d->st, "points", add_col, d, e)))
        goto out;
    if (d->oom) {
        rc = oom(e);
        goto out;
    }
    if (!n_runs || !d->n_col) {
        rc = dse_err_set(e, DSE_EINPUT, file, NULL, "not a dse database (no runs and points tables; see docs/sweep-db.md)");
        goto out;
    }
    for (const char *const *b = bookkeeping; *b; b++) {
        if (!strcmp(*b, "reason") || !strcmp(*b, "rank"))
            continue;
        int found = 0;
        for (int i = 0; i < d->n_col && !found; i++)
            found = !strcmp(d->col[i], *b);
        if (!found) {
            rc = dse_err_set(e, DSE_EINPUT, file, NULL, "not a dse database (points has no column %s)", *b);
            goto out;
        }
    }
    /* The metrics table gives units and directions. */
    if (!(rc = store_metrics(d->st, add_metric, d, e)) && d->oom)
        rc = oom(e);
out:
    if (rc)
        db_close(d);
    return rc;
}

/* The metric's unit and direction: the file's metrics table first, then the registry. */
static int meta_find(const struct db *d, const char *name, const char **unit, enum metric_dir *dir)
{
    for (int i = 0; i < d->n_m; i++)
        if (!strcmp(d->m[i].name, name)) {
            *unit = d->m[i].unit;
            *dir = d->m[i].dir;
            return 1;
        }
    const struct metric *m = metric_find(name);
    if (m) {
        *unit = m->unit;
        *dir = m->dir;
        return 1;
    }
    *unit = "";
    *dir = DIR_NONE;
    return 0;
}

static int is_bookkeeping(const char *name)
{
    for (const char *const *b = bookkeeping; *b; b++)
        if (!strcmp(*b, name))
            return 1;
    return 0;
}

/* The points column named name, as the table spells it; NULL for bookkeeping columns or none. */
static const char *find_col(const struct db *d, const char *name)
{
    if (is_bookkeeping(name))
        return NULL;
    for (int i = 0; i < d->n_col; i++)
        if (!strcmp(d->col[i], name))
            return d->col[i];
    return NULL;
}

/* "metrics with values in run N: a, b; axes: x, y" for messages about a name that does not exist. */
static void list_known(const struct db *d, const struct run *r, struct sb *b)
{
    const char *unit;
    enum metric_dir dir;
    const char **mc = malloc(sizeof *mc * (size_t)(d->n_col ? d->n_col : 1));
    long long *n_val = malloc(sizeof *n_val * (size_t)(d->n_col ? d->n_col : 1)), n_all;
    int n_metric = 0;
    for (int i = 0; mc && i < d->n_col; i++)
        if (!is_bookkeeping(d->col[i]) && meta_find(d, d->col[i], &unit, &dir))
            mc[n_metric++] = d->col[i];
    /* a hint inside another message: without the counts it names every metric column */
    struct dse_err ignore;
    dse_err_clear(&ignore);
    int counted = n_metric > 0 && n_val &&
                  store_count_present(d->st, r->id, mc, n_metric, &n_all, n_val, &ignore) == DSE_OK;
    int shown = 0, k = 0;
    if (counted)
        sb_add(b, "metrics with values in run %lld:", r->id);
    else
        sb_add(b, "metric columns:");
    for (int i = 0; i < d->n_col; i++)
        if (!is_bookkeeping(d->col[i]) && meta_find(d, d->col[i], &unit, &dir)) {
            if (!counted || n_val[k] > 0)
                sb_add(b, "%s %s", shown++ ? "," : "", d->col[i]);
            k++;
        }
    if (!shown)
        sb_add(b, " none");
    free(mc);
    free(n_val);
    shown = 0;
    const cJSON *a;
    if (cJSON_IsArray(r->axes)) { /* the run's own axes, in spec order */
        cJSON_ArrayForEach(a, r->axes)
        {
            if (cJSON_IsString(a) && find_col(d, a->valuestring))
                sb_add(b, "%s %s", shown++ ? "," : "; axes of the run:", a->valuestring);
        }
        return;
    }
    for (int i = 0; i < d->n_col; i++)
        if (!is_bookkeeping(d->col[i]) && !meta_find(d, d->col[i], &unit, &dir))
            sb_add(b, "%s %s", shown++ ? "," : "; axes:", d->col[i]);
}

static void run_free(struct run *r)
{
    cJSON_Delete(r->axes);
    r->axes = NULL;
}

/* "1 (name), 2 (name), ..." for a message about a run that does not exist. */
struct run_list {
    struct sb b;
    int n;
};

static void list_run(void *ctx, long long id, const char *name)
{
    struct run_list *l = ctx;
    if (l->n < MAX_LISTED)
        sb_add(&l->b, "%s%lld (%.40s)", l->n ? ", " : "", id, name);
    l->n++;
}

/* The reason most of the infeasible points share (the first of those as common). */
struct top_reason {
    char why[256];
    long long n;
};

static void top_reason(void *ctx, const char *reason, long long n)
{
    struct top_reason *t = ctx;
    if (n > t->n) {
        dse_strlcpy(t->why, reason, sizeof t->why);
        t->n = n;
    }
}

static int load_run(const struct db *d, long long id, struct run *r, struct dse_err *e)
{
    struct store_run sr;
    int rc;
    cJSON *obj = NULL;
    memset(r, 0, sizeof *r);
    if ((rc = store_read_run(d->st, id, &sr, e)))
        return rc;
    if (!sr.id && id <= 0) {
        rc = dse_err_set(e, DSE_EINPUT, d->file, NULL, "holds no runs yet");
        goto out;
    }
    if (!sr.id) { /* name the runs that exist */
        struct run_list l = {{0}, 0};
        struct dse_err ignore;
        dse_err_clear(&ignore);
        store_runs(d->st, list_run, &l, &ignore);
        if (l.n > MAX_LISTED)
            sb_add(&l.b, ", ... %d runs in all", l.n);
        rc = dse_err_set(e, DSE_EINPUT, d->file, "--run", "no run %lld (runs: %s)", id, l.n ? sb_str(&l.b) : "none");
        free(l.b.s);
        goto out;
    }
    r->id = sr.id;
    dse_strlcpy(r->name, sr.name, sizeof r->name);
    dse_strlcpy(r->status, sr.status, sizeof r->status);
    r->axes = cJSON_Parse(sr.axes);
    obj = cJSON_Parse(sr.objectives);
    if (!cJSON_IsArray(obj)) {
        rc = dse_err_set(e, DSE_EINPUT, d->file, "runs.objectives", "run %lld: expected a JSON array of "
                         "{\"metric\": NAME, \"goal\": \"min\"|\"max\"}", r->id);
        goto out;
    }
    const cJSON *o;
    cJSON_ArrayForEach(o, obj)
    {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metric");
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "goal");
        if (!cJSON_IsString(m) || !*m->valuestring) {
            rc = dse_err_set(e, DSE_EINPUT, d->file, "runs.objectives", "run %lld: objective %d has no \"metric\" "
                             "name", r->id, r->n_obj + 1);
            goto out;
        }
        if (r->n_obj == MAX_OBJ)
            break;
        const char *unit;
        enum metric_dir dir;
        meta_find(d, m->valuestring, &unit, &dir);
        dse_strlcpy(r->obj[r->n_obj], m->valuestring, sizeof r->obj[0]);
        r->obj_dir[r->n_obj] = cJSON_IsString(g) ? parse_dir(g->valuestring) : dir;
        r->n_obj++;
    }
    if ((rc = store_count(d->st, &sr, &r->n_points, &r->n_feasible, &r->n_pareto, e)))
        goto out;
    if (r->n_feasible == 0) {
        struct top_reason t = {"", 0};
        struct dse_err ignore; /* a detail of the message below */
        dse_err_clear(&ignore);
        if (r->n_points > 0)
            store_reasons(d->st, r->id, top_reason, &t, &ignore);
        if (r->n_points == 0)
            rc = dse_err_set(e, DSE_EINPUT, d->file, NULL, "run %lld (%s, %s) has no points to plot", r->id, r->name,
                             r->status);
        else
            rc = dse_err_set(e, DSE_EINPUT, d->file, NULL, "run %lld (%s) has no feasible points to plot: all %lld are "
                             "infeasible (most often: %.200s)", r->id, r->name, r->n_points,
                             t.why[0] ? t.why : "no reason stored");
        goto out;
    }
out:
    store_run_free(&sr);
    cJSON_Delete(obj);
    if (rc)
        run_free(r);
    return rc;
}

/* ---- the points ---- */

struct axis {
    const char *col; /* column, as the table spells it */
    char label[256];
    enum metric_dir dir;
    int log;
    double lo, hi; /* of the finite values read */
    long long n_val, n_nonpos;
};

struct pts {
    int k;             /* values per row: the axes' columns, in order */
    double *cloud;     /* sampled feasible rows, k values each; NAN where missing */
    long long n_cloud;
    double *front;     /* every row with pareto = 1 */
    long long n_front, cap_front;
    long long n_rows;  /* feasible rows that qualified */
    int sampled;
    /* colour and shape: the group column (system, or the axis --color names), each row's group */
    char group_col[128];
    int n_groups;
    char group[MAX_GROUPS][64];
    unsigned char *cloud_g;
    /* the front's designs (its points' axis values), while it has at most MAX_LABELS points */
    char (*design)[200];
};

static void pts_free(struct pts *p)
{
    free(p->cloud);
    free(p->front);
    free(p->cloud_g);
    free(p->design);
    memset(p, 0, sizeof *p);
}

/* The group of a text value: its index among those seen, the last slot for any beyond MAX_GROUPS - 1. */
static int group_of(struct pts *p, const char *v)
{
    for (int i = 0; i < p->n_groups; i++)
        if (!strcmp(p->group[i], v))
            return i;
    if (p->n_groups == MAX_GROUPS) {
        dse_strlcpy(p->group[MAX_GROUPS - 1], "other", sizeof p->group[0]);
        return MAX_GROUPS - 1;
    }
    dse_strlcpy(p->group[p->n_groups], v, sizeof p->group[0]);
    return p->n_groups++;
}

/* What store_scan_feasible's rows become: the axes' ranges, the sampled cloud, the front. */
struct reader {
    struct pts *p;
    struct axis *ax;
    int k, n_ax, grouped; /* grouped: txt[0] is the group column; the axes' values follow */
    long long n, want, row, j, next;
    int oom;
};

static void read_one(void *ctx, long long point, int pareto, const double *v, const char *const *txt)
{
    struct reader *rd = ctx;
    struct pts *p = rd->p;
    int k = rd->k;
    (void)point;
    if (rd->oom)
        return;
    for (int i = 0; i < k; i++) {
        struct axis *a = &rd->ax[i];
        if (isnan(v[i]))
            continue;
        a->n_val++;
        a->n_nonpos += v[i] <= 0;
        if (v[i] < a->lo)
            a->lo = v[i];
        if (v[i] > a->hi)
            a->hi = v[i];
    }
    if (rd->row == rd->next && p->n_cloud < rd->want) { /* rows may appear between the count and now: never overrun */
        memcpy(p->cloud + p->n_cloud * k, v, sizeof *v * (size_t)k);
        if (rd->grouped)
            p->cloud_g[p->n_cloud] = (unsigned char)group_of(p, *txt[0] ? txt[0] : "(none)");
        p->n_cloud++;
        rd->j++;
        rd->next = p->sampled ? rd->j * rd->n / PLOT_MAX_CLOUD : rd->j;
    }
    if (pareto) {
        if (p->n_front == p->cap_front) {
            long long cap = p->cap_front ? 2 * p->cap_front : 256;
            double *f = realloc(p->front, sizeof *f * (size_t)k * (size_t)cap);
            if (!f) {
                rd->oom = 1;
                return;
            }
            p->front = f;
            p->cap_front = cap;
        }
        memcpy(p->front + p->n_front * k, v, sizeof *v * (size_t)k);
        if (p->n_front < MAX_LABELS) {
            char *dsg = p->design[p->n_front];
            for (int a = 0; a < rd->n_ax; a++) {
                const char *t = txt[rd->grouped + a];
                size_t at = strlen(dsg);
                snprintf(dsg + at, sizeof p->design[0] - at, "%s%s", a ? " " : "", *t ? t : "?");
            }
        }
        p->n_front++;
    }
    rd->row++;
}

/* Reads the feasible rows of run r: every Pareto row, and an evenly spaced, deterministic sample of at
 * most PLOT_MAX_CLOUD rows (row i of N is taken when i = floor(j N / PLOT_MAX_CLOUD) for some j).
 * all_present: only rows with a value in every column (one scatter plot). */
static int read_points(const struct db *d, const struct run *r, struct axis *ax, int k, int all_present, struct pts *p,
                       struct dse_err *e)
{
    const char *num[PLOT_MAX_OBJECTIVES], *txt[64];
    int rc;
    char gc[sizeof p->group_col];
    memcpy(gc, p->group_col, sizeof gc); /* the caller's choice of group column survives the reset */
    memset(p, 0, sizeof *p);
    memcpy(p->group_col, gc, sizeof gc);
    p->k = k;
    for (int i = 0; i < k; i++)
        num[i] = ax[i].col;
    struct reader rd = {p, ax, k, 0, 0, 0, 0, 0, 0, 0, 0};
    if ((rc = store_count_present(d->st, r->id, num, all_present ? k : 0, &rd.n, NULL, e)))
        goto out;
    rd.want = rd.n > PLOT_MAX_CLOUD ? PLOT_MAX_CLOUD : rd.n;
    p->sampled = rd.n > PLOT_MAX_CLOUD;
    p->cloud = malloc(sizeof *p->cloud * (size_t)k * (size_t)(rd.want ? rd.want : 1));
    if (!p->cloud) {
        rc = oom(e);
        goto out;
    }
    int n_txt = 0;
    if (p->group_col[0]) {
        txt[n_txt++] = p->group_col;
        rd.grouped = 1;
        if (!(p->cloud_g = calloc((size_t)(rd.want ? rd.want : 1), 1))) {
            rc = oom(e);
            goto out;
        }
    }
    rd.n_ax = r->axes ? cJSON_GetArraySize(r->axes) : 0;
    if (rd.n_ax > 63)
        rd.n_ax = 63; /* more than a run can have (SW_MAX_AXES) */
    for (int a = 0; a < rd.n_ax; a++) { /* the design of a front point: every axis value */
        const cJSON *an = cJSON_GetArrayItem(r->axes, a);
        txt[n_txt++] = cJSON_IsString(an) ? an->valuestring : "point";
    }
    if (!(p->design = calloc(MAX_LABELS, sizeof *p->design))) {
        rc = oom(e);
        goto out;
    }
    for (int i = 0; i < k; i++) {
        ax[i].lo = INFINITY;
        ax[i].hi = -INFINITY;
        ax[i].n_val = ax[i].n_nonpos = 0;
    }
    if ((rc = store_scan_feasible(d->st, r->id, num, k, all_present, txt, n_txt, read_one, &rd, e)))
        goto out;
    if (rd.oom) {
        rc = oom(e);
        goto out;
    }
    p->n_rows = rd.row;
out:
    if (rc)
        pts_free(p);
    return rc;
}

int plot_log_axis(double lo, double hi, long long n_nonpos) { return n_nonpos == 0 && lo > 0 && hi / lo > LOG_SPAN; }

/* ---- labels and the front line ---- */

/* "latency (ms, lower is better)": the unit suffix of the name moves into the parentheses. */
static void make_label(const char *name, const char *unit, enum metric_dir dir, char *out, size_t n)
{
    size_t nl = strlen(name), ul = strlen(unit);
    int has_unit = ul && strcmp(unit, "1") != 0;
    size_t base = nl;
    if (has_unit && nl > ul + 1 && name[nl - ul - 1] == '_' && !strcmp(name + nl - ul, unit))
        base = nl - ul - 1;
    const char *better = dir == DIR_MIN ? "lower is better" : dir == DIR_MAX ? "higher is better" : NULL;
    if (has_unit && better)
        snprintf(out, n, "%.*s (%s, %s)", (int)base, name, unit, better);
    else if (has_unit || better)
        snprintf(out, n, "%.*s (%s)", (int)base, name, has_unit ? unit : better);
    else
        snprintf(out, n, "%s", name);
}

struct xy {
    double x, y, sx, sy; /* sx, sy: the values turned so that smaller is better */
};

static int cmp_s(const void *a, const void *b)
{
    const struct xy *p = a, *q = b;
    if (p->sx != q->sx)
        return p->sx < q->sx ? -1 : 1;
    return p->sy < q->sy ? -1 : p->sy > q->sy;
}

static int cmp_x(const void *a, const void *b)
{
    const struct xy *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return p->y < q->y ? -1 : p->y > q->y;
}

/* The line drawn through the front in the plane of columns cx, cy, sorted by x. all: every Pareto row
 * (the plane holds all the run's objectives); else only those not dominated within this plane, which
 * needs both directions. Returns the number of points (0 with *out NULL: no line). */
static long long front_line(const struct pts *p, int cx, int cy, enum metric_dir dx, enum metric_dir dy, int all,
                            struct xy **out)
{
    *out = NULL;
    if (!p->n_front || (!all && (dx == DIR_NONE || dy == DIR_NONE)))
        return 0;
    struct xy *v = malloc(sizeof *v * (size_t)p->n_front);
    if (!v)
        return 0;
    long long n = 0;
    for (long long i = 0; i < p->n_front; i++) {
        double x = p->front[i * p->k + cx], y = p->front[i * p->k + cy];
        if (isnan(x) || isnan(y))
            continue;
        v[n] = (struct xy){x, y, dx == DIR_MAX ? -x : x, dy == DIR_MAX ? -y : y};
        n++;
    }
    if (!all) {
        qsort(v, (size_t)n, sizeof *v, cmp_s);
        long long m = 0;
        double best = INFINITY;
        for (long long i = 0; i < n; i++)
            if (v[i].sy < best) {
                best = v[i].sy;
                v[m++] = v[i];
            }
        n = m;
    }
    qsort(v, (size_t)n, sizeof *v, cmp_x);
    if (!n) {
        free(v);
        return 0;
    }
    *out = v;
    return n;
}

/* ---- the gnuplot script ---- */

/* A gnuplot string literal: single quotes (no backslash escapes, no `command` substitution), a quote
 * doubled, control characters replaced so a newline cannot end the command. */
static void gp_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\'')
            fputs("''", f);
        else if (*p < 0x20 || *p == 0x7f)
            fputc(' ', f);
        else
            fputc(*p, f);
    }
    fputc('\'', f);
}

static void gp_num(FILE *f, double v)
{
    if (isnan(v))
        fputs("?", f);
    else
        fprintf(f, "%.10g", v);
}

static void gp_axis(FILE *f, const char *xy, const struct axis *a)
{
    fprintf(f, "set %slabel ", xy);
    gp_str(f, a->label);
    fputc('\n', f);
    double lo = a->lo, hi = a->hi;
    if (a->log) {
        double pad = pow(hi / lo, 0.03);
        fprintf(f, "set logscale %s 10\nset %srange [%.10g:%.10g]\n", xy, xy, lo / pad, hi * pad);
    } else {
        double pad = (hi - lo) * 0.04;
        if (pad == 0)
            pad = fabs(lo) > 0 ? fabs(lo) * 0.05 : 1;
        fprintf(f, "unset logscale %s\nset %srange [%.10g:%.10g]\n", xy, xy, lo - pad, hi + pad);
    }
    fprintf(f, "set format %s '%%g'\n", xy);
}

struct plot_job {
    const struct run *r;
    struct axis *ax;
    int k, matrix, exact, svg;
    int no_labels; /* the main panel of a crowded front: its labels go to the magnified inset */
    const struct pts *p;
    const char *tmp;
};

/* Title lines: the run (name, id, status unless complete); its counts; any sampling. */
static int title_lines(const struct plot_job *j, char l[3][192])
{
    size_t nl = strlen(j->r->name);
    const char *more = "";
    if (nl > 90) { /* cut long names on a UTF-8 character boundary */
        nl = 90;
        while (nl > 0 && ((unsigned char)j->r->name[nl] & 0xc0) == 0x80)
            nl--;
        more = "...";
    }
    char st[48] = "";
    if (strcmp(j->r->status, "complete") != 0)
        snprintf(st, sizeof st, " [%.31s]", j->r->status[0] ? j->r->status : "status unknown");
    snprintf(l[0], sizeof l[0], "%.*s%s (run %lld)%s", (int)nl, j->r->name, more, j->r->id, st);
    snprintf(l[1], sizeof l[1], "%lld feasible of %lld points, %lld on the Pareto front", j->r->n_feasible,
             j->r->n_points, j->r->n_pareto);
    if (!j->p->sampled)
        return 2;
    snprintf(l[2], sizeof l[2], "(drawn: an evenly spaced sample of %d of the %lld feasible points)", PLOT_MAX_CLOUD,
             j->p->n_rows);
    return 3;
}

static void gp_title(FILE *f, char l[3][192], int n)
{
    for (int i = 0; i < n; i++) {
        if (i)
            fputs(".\"\\n\".", f);
        gp_str(f, l[i]);
    }
}

/* 1200 x 900 pixels; a matrix grows with the number of its rows and columns. */
static void canvas(const struct plot_job *j, int *w, int *h)
{
    int cells = j->matrix ? j->k - 1 : 1;
    *w = 520 * cells > 1200 ? 520 * cells : 1200;
    *h = 450 * cells > 900 ? 450 * cells : 900;
}

/* One panel: columns cx (x) and cy (y) of the datablocks. */
static void gp_panel(FILE *f, const struct plot_job *j, int cx, int cy, int key, int key_line)
{
    const struct pts *p = j->p;
    struct xy *line = NULL;
    long long nl = front_line(p, cx, cy, j->ax[cx].dir, j->ax[cy].dir, j->exact, &line);
    if (nl) {
        fprintf(f, "$line_%d_%d << EOD\n", cx, cy);
        for (long long i = 0; i < nl; i++) {
            gp_num(f, line[i].x);
            fputc(' ', f);
            gp_num(f, line[i].y);
            fputc('\n', f);
        }
        fputs("EOD\n", f);
    }
    free(line);
    gp_axis(f, "x", &j->ax[cx]);
    gp_axis(f, "y", &j->ax[cy]);
    int w, h;
    canvas(j, &w, &h);
    if (!key)
        fputs("unset key\n", f);
    else if (j->matrix) /* the legend sits in the empty upper-right cell of the matrix */
        fprintf(f, "set key at screen %.4f, %.4f right top vertical box opaque spacing 1.4 width 1\n", 1 - 30.0 / w,
                1 - (60.0 + 22 * (j->p->sampled ? 3 : 2)) / h); /* below the title_lines() */
    else
        fputs("set key outside top center horizontal box spacing 1.3 width 2\n", f);
    if (!j->matrix && !j->no_labels && p->n_front <= MAX_LABELS && p->design) /* a small front: its designs */
        for (long long i = 0; i < p->n_front; i++) {
            double lx = p->front[i * p->k + cx], ly = p->front[i * p->k + cy];
            if (isnan(lx) || isnan(ly) || !p->design[i][0])
                continue;
            fprintf(f, "set label %lld ", i + 1);
            gp_str(f, p->design[i]);
            fprintf(f, " at %.10g,%.10g offset char 1,0.6 font ',9' tc rgb '#8b1a1a' front\n", lx, ly);
        }
    char t[160];
    if (p->n_groups > 1) { /* a colour and a shape per system (or --color's axis value) */
        static const char *const col[MAX_GROUPS] = {"#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd",
                                                    "#8c564b", "#e377c2", "#17becf", "#7f7f7f"};
        static const int pt[MAX_GROUPS] = {7, 5, 9, 11, 13, 15, 6, 4};
        fputs("plot ", f);
        for (int g = 0; g < p->n_groups; g++) {
            fprintf(f, "%s$cloud using %d:(column(%d) == %d ? column(%d) : NaN) with points pt %d ps 0.6 lc rgb '%s' title ",
                    g ? ", \\\n  " : "", cx + 1, p->k + 1, g, cy + 1, pt[g], col[g]);
            snprintf(t, sizeof t, "%s: %s", p->group_col, p->group[g]);
            gp_str(f, t);
        }
    } else {
        fprintf(f, "plot $cloud using %d:%d with points pt 7 ps 0.5 lc rgb '#c4c4c4' title ", cx + 1, cy + 1);
        snprintf(t, sizeof t, "feasible points (%lld%s)", p->sampled ? (long long)PLOT_MAX_CLOUD : p->n_rows,
                 p->sampled ? " sampled" : "");
        gp_str(f, t);
    }
    if (j->exact && nl) {
        snprintf(t, sizeof t, "Pareto front (%lld)", j->r->n_pareto);
        fprintf(f, ", \\\n  $line_%d_%d using 1:2 with linespoints pt 7 ps 1.1 lw 2 lc rgb '#d62728' title ", cx, cy);
        gp_str(f, t);
    } else if (p->n_front) {
        if (j->r->n_obj > 0)
            snprintf(t, sizeof t, "Pareto front of the run (%d objectives)", j->r->n_obj);
        else
            snprintf(t, sizeof t, "Pareto front of the run");
        fprintf(f, ", \\\n  $front using %d:%d with points pt 7 ps 0.9 lc rgb '#d62728' title ", cx + 1, cy + 1);
        gp_str(f, t);
        /* One point makes no line: drawn only where the legend needs the entry for the other panels. */
        if (nl > 1 || (nl == 1 && key && key_line)) {
            fprintf(f, ", \\\n  $line_%d_%d using 1:2 with lines lw 2 lc rgb '#1f4e9c' title ", cx, cy);
            gp_str(f, "non-dominated in this pair");
        }
    }
    fputc('\n', f);
}

/* rows of k values, each with its group index after them when g is given */
static void gp_block(FILE *f, const char *name, const double *v, long long rows, int k, const unsigned char *g)
{
    fprintf(f, "$%s << EOD\n", name);
    for (long long i = 0; i < rows; i++) {
        for (int c = 0; c < k; c++) {
            if (c)
                fputc(' ', f);
            gp_num(f, v[i * k + c]);
        }
        if (g)
            fprintf(f, " %d", g[i]);
        fputc('\n', f);
    }
    fputs("EOD\n", f);
}

/* A 2-D front crowded into a corner: its box (on the plotted scale: log10 of a log axis) under a fifth
 * of the cloud's span in both directions. zoom receives the axes of a magnified view (10 % margins),
 * (qx, qy) the front's centre in the main panel's unit square. */
static int crowded(const struct plot_job *j, struct axis *zoom, double *qx, double *qy)
{
    const struct pts *p = j->p;
    if (p->n_front < 2)
        return 0;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (long long i = 0; i < p->n_front; i++)
        for (int c = 0; c < 2; c++) {
            double v = p->front[i * p->k + c];
            if (isnan(v))
                continue;
            lo[c] = v < lo[c] ? v : lo[c];
            hi[c] = v > hi[c] ? v : hi[c];
        }
    double frac[2], mid[2];
    for (int c = 0; c < 2; c++) {
        const struct axis *a = &j->ax[c];
        if (!(hi[c] >= lo[c]) || !(a->hi > a->lo))
            return 0;
        double L = a->log ? log10(a->lo) : a->lo, H = a->log ? log10(a->hi) : a->hi;
        double fl = a->log ? log10(lo[c]) : lo[c], fh = a->log ? log10(hi[c]) : hi[c];
        frac[c] = (fh - fl) / (H - L);
        mid[c] = ((fl + fh) / 2 - L) / (H - L);
        zoom[c] = *a;
        double pad = fh > fl ? (fh - fl) * 0.1 : fabs(fl) > 0 ? fabs(fl) * 0.01 : 1;
        zoom[c].lo = a->log ? pow(10, fl - pad) : fl - pad;
        zoom[c].hi = a->log ? pow(10, fh + pad) : fh + pad;
        if (a->log && zoom[c].hi / zoom[c].lo <= LOG_SPAN) /* a narrow log window reads better linearly */
            zoom[c].log = 0;
    }
    snprintf(zoom[0].label, sizeof zoom[0].label, "the front, magnified");
    zoom[1].label[0] = '\0';
    *qx = mid[0];
    *qy = mid[1];
    return frac[0] < 0.2 && frac[1] < 0.2;
}

static void gp_script(FILE *f, const struct plot_job *j)
{
    int cells = j->matrix ? j->k - 1 : 1, w, h;
    canvas(j, &w, &h);
    /* A file terminal comes first, so gnuplot never opens a window. */
    if (j->svg)
        fprintf(f, "set terminal svg size %d,%d dynamic noenhanced font 'sans,12' background rgb 'white'\n", w, h);
    else
        fprintf(f,
                "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                "  set terminal pngcairo size %d,%d noenhanced font 'sans,11'\n"
                "} else {\n"
                "  set terminal png size %d,%d noenhanced\n"
                "}\n",
                w, h, w, h);
    fputs("set output ", f);
    gp_str(f, j->tmp);
    fputs("\nset encoding utf8\nset datafile missing '?'\nset grid lc rgb '#e0e0e0'\nset tics nomirror out\n", f);
    gp_block(f, "cloud", j->p->cloud, j->p->n_cloud, j->k, j->p->n_groups > 1 ? j->p->cloud_g : NULL);
    if (j->p->n_front)
        gp_block(f, "front", j->p->front, j->p->n_front, j->k, NULL);
    char l[3][192];
    int nt = title_lines(j, l);
    if (!j->matrix) {
        struct axis zoom[2];
        double qx = 0, qy = 0;
        int inset = crowded(j, zoom, &qx, &qy);
        if (inset)
            fputs("set multiplot\n", f);
        fputs("set title ", f);
        gp_title(f, l, nt);
        fputs(" font ',13'\n", f);
        struct plot_job m = *j;
        m.no_labels = inset;
        gp_panel(f, &m, 0, 1, 1, 0);
        if (inset) { /* the front's corner again, magnified, in the opposite quadrant */
            struct plot_job z = *j;
            z.ax = zoom;
            fprintf(f, "unset title\nunset label\nset origin %.3f,%.3f\nset size 0.40,0.36\n"
                       "set object 1 rectangle from graph 0,0 to graph 1,1 behind fc rgb 'white' fs solid 1.0\n",
                    qx > 0.5 ? 0.12 : 0.55, qy > 0.5 ? 0.10 : 0.50);
            gp_panel(f, &z, 0, 1, 0, 0);
            fputs("unset object 1\nunset multiplot\n", f);
        }
    } else {
        /* Lower triangle: row r plots objective r+1 over objectives 0..r. */
        /* Fixed margins in pixels: the automatic layout lets the title run into the top row. */
        fprintf(f, "set multiplot layout %d,%d margins %.4f,%.4f,%.4f,%.4f spacing %.4f,%.4f title ", cells, cells,
                110.0 / w, 1 - 30.0 / w, 70.0 / h, 1 - (50.0 + 22 * nt) / h, 120.0 / w, 95.0 / h);
        gp_title(f, l, nt);
        fputs(" font ',13'\nunset title\n", f);
        int key_line = 0; /* does any panel draw a line? then the legend (first panel) names it */
        for (int r = 0; r < cells && !key_line; r++)
            for (int c = 0; c <= r && !key_line; c++) {
                struct xy *v;
                key_line = front_line(j->p, c, r + 1, j->ax[c].dir, j->ax[r + 1].dir, j->exact, &v) > 1;
                free(v);
            }
        for (int r = 0; r < cells; r++)
            for (int c = 0; c < cells; c++) {
                if (c > r)
                    fputs("set multiplot next\n", f);
                else
                    gp_panel(f, j, c, r + 1, r == 0 && c == 0, key_line);
            }
        fputs("unset multiplot\n", f);
    }
    fputs("unset output\n", f);
}

/* ---- running gnuplot ---- */

static int gnuplot_on_path(void)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/bin:/bin";
    for (const char *p = path;;) {
        const char *c = strchr(p, ':');
        size_t l = c ? (size_t)(c - p) : strlen(p);
        char exe[4096];
        struct stat st;
        if (l < sizeof exe - 16) {
            snprintf(exe, sizeof exe, "%.*s/gnuplot", (int)l, l ? p : ".");
            if (stat(exe, &st) == 0 && S_ISREG(st.st_mode) && access(exe, X_OK) == 0)
                return 1;
        }
        if (!c)
            return 0;
        p = c + 1;
    }
}

static int gnuplot_missing(const char *db, struct dse_err *e)
{
    return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "gnuplot not found: install it (apt-get install gnuplot-nox); "
                       "results are in %s", db);
}

/* Runs gnuplot on the script of j, writing j->tmp. SIGPIPE is ignored meanwhile: a gnuplot that dies
 * early shows as a write error and an exit status, not as the death of dse. */
static int gnuplot_exec(void (*script)(FILE *, const void *), const void *ctx, const char *db, const char *out,
                        struct dse_err *e);
static void job_script(FILE *f, const void *ctx) { gp_script(f, ctx); }

static int gnuplot_run(const struct plot_job *j, const char *db, const char *out, struct dse_err *e)
{
    return gnuplot_exec(job_script, j, db, out, e);
}

static int gnuplot_exec(void (*script)(FILE *, const void *), const void *ctx, const char *db, const char *out,
                        struct dse_err *e)
{
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGPIPE, &ign, &old);
    fflush(NULL); /* the child must not inherit unwritten buffers */
    /* -d: no ~/.gnuplot; stdout to stderr: dse's stdout stays clean for JSON consumers. */
    FILE *f = popen("exec gnuplot -d 1>&2", "w");
    int rc = DSE_OK;
    if (!f) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "cannot start gnuplot: %s", strerror(errno));
        goto out;
    }
    script(f, ctx);
    int werr = ferror(f);
    int st = pclose(f);
    if (st == -1)
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "gnuplot: %s", strerror(errno));
    else if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        rc = gnuplot_missing(db, e);
    else if (WIFSIGNALED(st))
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "gnuplot was killed by signal %d while writing %s",
                         WTERMSIG(st), out);
    else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "gnuplot failed (exit status %d) while writing %s; its "
                         "messages are above", WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
    else if (werr)
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "gnuplot stopped reading its script while writing %s", out);
out:
    sigaction(SIGPIPE, &old, NULL);
    return rc;
}

/* ---- output names ---- */

static const char *ext_of(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    return dot && (!slash || dot > slash) && dot[1] ? dot : NULL;
}

static int resolve_axis(const struct db *d, const struct run *r, const char *name, const char *what, struct axis *a,
                        struct dse_err *e)
{
    memset(a, 0, sizeof *a);
    a->col = find_col(d, name);
    const struct metric *m = metric_find(name);
    if (!a->col && m && strcmp(m->name, name)) /* an earlier name (accuracy_proxy): the column of its successor */
        a->col = find_col(d, m->name);
    if (!a->col && m)
        return dse_err_set(e, DSE_EINPUT, d->file, what,
                           "metric '%s' is not stored by run %lld: a sweep stores its objectives, constraints and error "
                           "bars (docs/sweep-db.md); add it to the spec's \"store\" list (or \"store\": \"all\") "
                           "and run again, or see one point's with dse show %s POINT",
                           name, r->id, d->file);
    if (!a->col) {
        struct sb b = {0};
        list_known(d, r, &b);
        int rc = dse_err_set(e, DSE_EINPUT, d->file, what, "no metric or axis '%s' among the points' columns (%s)", name,
                             sb_str(&b));
        free(b.s);
        return rc;
    }
    const char *unit;
    meta_find(d, a->col, &unit, &a->dir);
    for (int i = 0; i < r->n_obj; i++)
        if (!strcmp(r->obj[i], a->col))
            a->dir = r->obj_dir[i]; /* the run's goal wins over the registry's direction */
    make_label(a->col, unit, a->dir, a->label, sizeof a->label);
    return DSE_OK;
}

int plot_run(const char *db_path, long long run_id, const char *x, const char *y, const char *color, const char *out,
             char *written, unsigned n, struct dse_err *e)
{
    struct db d;
    struct run r;
    struct pts p;
    struct axis ax[PLOT_MAX_OBJECTIVES];
    char outbuf[4096];
    struct out_file of = {.slot = -1, .fd = -1};
    int rc, have_run = 0, have_pts = 0;
    memset(&p, 0, sizeof p);
    if (written && n)
        written[0] = '\0';
    if (!db_path || !*db_path)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "plot: no database given");
    if (!x != !y)
        return dse_err_set(e, DSE_EINPUT, NULL, x ? "--y" : "--x", "give both --x and --y, or neither to plot the "
                           "run's objectives");
    if (x && !strcmp(x, y))
        return dse_err_set(e, DSE_EINPUT, NULL, "--y", "'%s' is also --x: choose two different metrics", y);

    /* The output name is checked before any work. */
    if (!out) {
        size_t l = strlen(db_path);
        if (l > 3 && !strcmp(db_path + l - 3, ".db"))
            l -= 3;
        if (snprintf(outbuf, sizeof outbuf, "%.*s-front.png", (int)l, db_path) >= (int)sizeof outbuf)
            return dse_err_set(e, DSE_EINPUT, db_path, NULL, "path too long");
        out = outbuf;
    }
    const char *ext = ext_of(out);
    int svg = ext && !strcasecmp(ext, ".svg");
    if (!ext || (!svg && strcasecmp(ext, ".png") != 0))
        return dse_err_set(e, DSE_EINPUT, out, "--out", "expected a file name ending in .png or .svg");
    for (const unsigned char *c = (const unsigned char *)out; *c; c++)
        if (*c < 0x20 || *c == 0x7f) /* gnuplot's command line could not name it */
            return dse_err_set(e, DSE_EINPUT, out, "--out", "contains control characters");
    static const char *const db_what[] = {"the sweep database"};
    if ((rc = out_file_not_input(out, "--out", &db_path, db_what, 1, 1, e)))
        return rc;

    if ((rc = db_open(db_path, &d, e)))
        return rc;
    if ((rc = load_run(&d, run_id, &r, e)))
        goto out;
    have_run = 1;

    int k, matrix = 0, exact = 0;
    if (x) {
        k = 2;
        if ((rc = resolve_axis(&d, &r, x, "--x", &ax[0], e)) || (rc = resolve_axis(&d, &r, y, "--y", &ax[1], e)))
            goto out;
        if (ax[0].col == ax[1].col) {
            rc = dse_err_set(e, DSE_EINPUT, d.file, "--y", "'%s' is also --x: choose two different metrics", y);
            goto out;
        }
        /* The stored front is the front of this plane only when the plane holds every objective. */
        int hits = 0;
        for (int i = 0; i < r.n_obj; i++)
            hits += !strcmp(r.obj[i], ax[0].col) || !strcmp(r.obj[i], ax[1].col);
        exact = r.n_obj == 2 && hits == 2;
    } else {
        k = r.n_obj;
        char names[256] = "";
        for (int i = 0; i < r.n_obj; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", r.obj[i]);
        if (k < 2) {
            rc = dse_err_set(e, DSE_EINPUT, d.file, NULL, "run %lld (%s) has %d objective%s%s%s%s: a front plot needs "
                             "two; choose the axes with --x and --y", r.id, r.name, k, k == 1 ? "" : "s",
                             k ? " (" : "", names, k ? ")" : "");
            goto out;
        }
        if (k > PLOT_MAX_OBJECTIVES) {
            rc = dse_err_set(e, DSE_EINPUT, d.file, NULL, "run %lld has %d objectives (%s): too many for a matrix of "
                             "plots (at most %d); choose two with --x and --y", r.id, k, names, PLOT_MAX_OBJECTIVES);
            goto out;
        }
        for (int i = 0; i < k; i++) {
            char what[64];
            snprintf(what, sizeof what, "objective %d", i + 1);
            if ((rc = resolve_axis(&d, &r, r.obj[i], what, &ax[i], e)))
                goto out;
        }
        matrix = k > 2;
        exact = k == 2;
    }

    /* colour by --color's axis, else by system when the run has several */
    int n_ax = r.axes ? cJSON_GetArraySize(r.axes) : 0, found = 0;
    for (int a = 0; a < n_ax; a++) {
        const cJSON *an = cJSON_GetArrayItem(r.axes, a);
        if (cJSON_IsString(an) && !strcmp(an->valuestring, color ? color : "system"))
            found = 1;
    }
    if (color && !found) {
        rc = dse_err_set(e, DSE_EINPUT, d.file, "--color", "'%s' is not an axis of run %lld", color, r.id);
        goto out;
    }
    if (found)
        dse_strlcpy(p.group_col, color ? color : "system", sizeof p.group_col);
    if ((rc = read_points(&d, &r, ax, k, !matrix, &p, e)))
        goto out;
    have_pts = 1;
    for (int i = 0; i < k; i++) {
        if (ax[i].n_val == 0) {
            struct sb b = {0};
            list_known(&d, &r, &b);
            if (!matrix && p.n_rows == 0)
                rc = dse_err_set(e, DSE_EINPUT, d.file, NULL, "run %lld: no feasible point has values of both %s and %s "
                                 "(%s)", r.id, ax[0].col, ax[1].col, sb_str(&b));
            else
                rc = dse_err_set(e, DSE_EINPUT, d.file, NULL, "run %lld: %s has no numeric values on the "
                                 "feasible points (%s)", r.id, ax[i].col, sb_str(&b));
            free(b.s);
            goto out;
        }
        ax[i].log = plot_log_axis(ax[i].lo, ax[i].hi, ax[i].n_nonpos);
    }

    if (!gnuplot_on_path()) {
        rc = gnuplot_missing(db_path, e);
        goto out;
    }
    if ((rc = out_file_begin(&of, out, e)))
        goto out;
    struct plot_job j = {&r, ax, k, matrix, exact, svg, 0, &p, out_file_child_path(&of)};
    struct stat st;
    if ((rc = gnuplot_run(&j, db_path, out, e)))
        goto out;
    if (stat(of.tmp, &st) != 0 || st.st_size == 0) {
        rc = dse_err_set(e, DSE_ERUNTIME, out, NULL, "gnuplot wrote nothing");
        goto out;
    }
    if ((rc = out_file_commit(&of, e)))
        goto out;
    if (written && n)
        dse_strlcpy(written, out, n);
out:
    out_file_abort(&of);
    if (have_pts)
        pts_free(&p);
    if (have_run)
        run_free(&r);
    db_close(&d);
    return rc;
}

/* ---- predicted against measured (dse validate) ---- */

struct pvm {
    const double *meas, *pred;
    int n;
    const char *title, *tmp;
    int svg;
};

static void pvm_script(FILE *f, const void *ctx)
{
    const struct pvm *p = ctx;
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < p->n; i++) {
        double a = p->meas[i] < p->pred[i] ? p->meas[i] : p->pred[i], b = p->meas[i] > p->pred[i] ? p->meas[i] : p->pred[i];
        if (a > 0 && a < lo)
            lo = a;
        if (b > hi)
            hi = b;
    }
    if (!(lo < hi)) {
        lo = 1e-3;
        hi = 1;
    }
    lo /= 2;
    hi *= 2;
    if (p->svg)
        fputs("set terminal svg size 900,800 dynamic font 'sans,12'\n", f);
    else
        fputs("if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 900,800 font 'sans,11' } "
              "else { set terminal png size 900,800 }\n", f);
    fputs("set output ", f);
    gp_str(f, p->tmp);
    fputs("\nset title ", f);
    gp_str(f, p->title);
    fprintf(f, "\nset logscale xy\nset xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\n", lo, hi, lo, hi);
    fputs("set xlabel 'measured (ms)'\nset ylabel 'predicted (ms)'\nset grid\nset key top left\n", f);
    fputs("$d << EOD\n", f);
    for (int i = 0; i < p->n; i++)
        fprintf(f, "%.10g %.10g\n", p->meas[i], p->pred[i]);
    fputs("EOD\n", f);
    fputs("plot x with lines lw 2 lc rgb '#333333' title 'predicted = measured', "
          "1.1*x with lines dt 2 lc rgb '#888888' title '+-10 %', 0.9*x with lines dt 2 lc rgb '#888888' notitle, "
          "$d using 1:2 with points pt 7 ps 1.2 lc rgb '#d62728' title 'kernels'\n", f);
}

/* Runs script(f, ctx) into out (.png or .svg) through a temporary put in place by outfile.h; *tmp and
 * *svg, fields of the caller's ctx, receive the temporary's path and the SVG flag before script runs. */
static int plot_to(const char *out, void (*script)(FILE *, const void *), void *ctx, const char **tmp, int *svg,
                   const char *what, struct dse_err *e)
{
    const char *ext = ext_of(out);
    if (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg")))
        return dse_err_set(e, DSE_EINPUT, out, NULL, "expected a file name ending in .png or .svg");
    if (!gnuplot_on_path())
        return gnuplot_missing(what, e);
    struct out_file of;
    int rc = out_file_begin(&of, out, e);
    if (rc)
        return rc;
    *tmp = out_file_child_path(&of);
    *svg = !strcmp(ext, ".svg");
    rc = gnuplot_exec(script, ctx, what, out, e);
    struct stat st;
    if (!rc && (stat(of.tmp, &st) != 0 || st.st_size == 0))
        rc = dse_err_set(e, DSE_ERUNTIME, out, NULL, "gnuplot wrote nothing");
    if (!rc)
        rc = out_file_commit(&of, e);
    out_file_abort(&of);
    return rc;
}

int plot_pred_vs_meas(const double *measured_ms, const double *predicted_ms, int n, const char *title, const char *out,
                      struct dse_err *e)
{
    struct pvm p = {measured_ms, predicted_ms, n, title, NULL, 0};
    return plot_to(out, pvm_script, &p, &p.tmp, &p.svg, "the validation database", e);
}

/* ---- line plots (dse serve) ---- */

struct lines_job {
    const struct plot_series *s;
    int n;
    const char *title, *xlabel, *ylabel, *y2label, *tmp;
    unsigned flags;
    int svg;
};

static void lines_script(FILE *f, const void *ctx)
{
    const struct lines_job *j = ctx;
    static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
    if (j->svg)
        fputs("set terminal svg size 1000,650 dynamic font 'sans,12'\n", f);
    else
        fputs("if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) { set terminal pngcairo size 1000,650 font 'sans,11' } "
              "else { set terminal png size 1000,650 }\n", f);
    fputs("set output ", f);
    gp_str(f, j->tmp);
    fputs("\nset title ", f);
    gp_str(f, j->title);
    fputs("\nset xlabel ", f);
    gp_str(f, j->xlabel);
    fputs("\nset ylabel ", f);
    gp_str(f, j->ylabel);
    fputs("\nset grid\nset key outside right top\n", f);
    if (j->flags & PLOT_LOGX)
        fputs("set logscale x\n", f);
    if (j->flags & PLOT_LOGY)
        fputs("set logscale y\n", f);
    if (j->y2label) {
        fputs("set y2label ", f);
        gp_str(f, j->y2label);
        fputs("\nset y2tics\nset ytics nomirror\n", f);
    }
    for (int k = 0; k < j->n; k++) {
        fprintf(f, "$s%d << EOD\n", k);
        for (int i = 0; i < j->s[k].n; i++)
            if (isfinite(j->s[k].x[i]) && isfinite(j->s[k].y[i]) &&
                (!(j->flags & PLOT_LOGX) || j->s[k].x[i] > 0) && (!(j->flags & PLOT_LOGY) || j->s[k].y[i] > 0))
                fprintf(f, "%.10g %.10g\n", j->s[k].x[i], j->s[k].y[i]);
        fputs("EOD\n", f);
    }
    fputs("plot ", f);
    for (int k = 0; k < j->n; k++) {
        fprintf(f, "%s$s%d using 1:2 %s with %s lw 2 lc rgb '%s' title ", k ? ", " : "", k, j->s[k].y2 ? "axes x1y2" : "",
                j->s[k].points ? "linespoints pt 7 ps 0.8" : "lines", colours[k % 6]);
        gp_str(f, j->s[k].name);
    }
    fputs("\n", f);
}

int plot_lines(const struct plot_series *s, int n, const char *title, const char *xlabel, const char *ylabel,
               const char *y2label, unsigned flags, const char *out, struct dse_err *e)
{
    struct lines_job j = {s, n, title, xlabel, ylabel, y2label, NULL, flags, 0};
    return plot_to(out, lines_script, &j, &j.tmp, &j.svg, "the run's figures", e);
}
