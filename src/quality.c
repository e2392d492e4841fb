/* quality.c -- the published quality table and the expected quality loss of a format (quality.h).
 *
 * Unit: quality_loss_pct, the relative loss of a model's quality figure against its 16-bit (or fp32)
 * baseline in percent, positive worse: perplexity (q / b - 1) x 100, accuracy and F1 (b - q) / b x 100.
 * Both are "percent of the baseline's quality lost", one scale for ranking the formats of one model;
 * perplexity and accuracy rows are never mixed in one estimate (each metric is tried in turn, the
 * kind's most published first).
 *
 * Estimate for a model of family F, N parameters, format X (docs/models.md, "Quality loss"):
 *   0. every role 16-bit or wider: 0 (the tables' baselines);
 *   1. F's rows of X: averaged per published size; at a size within 10 % of N that size's mean, else
 *      linear in log N between the two sizes around N, else (N outside) the nearest size's;
 *   2. else F's rows of X's weights-and-activations part (KV cache 16-bit) + F's KV-cache-only rows;
 *   3. else scaled: F's figure for an anchor format A x the median over the other families of the kind
 *      of (their X / their A), each at N by 1-2; A is the format shared with the most such families
 *      (ties: the nearest in bits, then the larger figure);
 *   4. else the median over the other families of the kind of their 1-3 estimates at N;
 *   5. else (every metric tried) an upper bound: the smallest 1-2 figure of a format no wider than X in
 *      every role and narrower in one, of F, else the median of the other families' bounds;
 *   else not covered (the caller's fallback). */
#include "quality.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "csvu.h"
#include "jsonu.h"

const char *const ql_kind_names[QK_COUNT + 1] = {"llm", "encoder", "cnn", NULL};
const char *const ql_basis_names[QL_BASIS_COUNT + 1] = {
    "reference", "published", "interpolated", "nearest size", "additive", "scaled from another format",
    "other models of its kind", "upper bound", "fallback: measured GEMM error", NULL};

const struct ql_metric ql_metrics[] = {
    {"wikitext2_ppl", 1, "WikiText-2 perplexity"},
    {"mmlu_acc", 0, "MMLU accuracy"},
    {"imagenet_top1", 0, "ImageNet top-1 accuracy"},
    {"mrpc_f1", 0, "GLUE MRPC F1"},
};
const int ql_metric_count = (int)(sizeof ql_metrics / sizeof ql_metrics[0]);

enum { Q_ID, Q_KIND, Q_FAMILY, Q_MODEL, Q_PARAMS, Q_PREC, Q_METHOD, Q_METRIC, Q_BASE_PREC, Q_BASE, Q_QUANT, Q_LOSS,
       Q_SOURCE, Q_URL, Q_NOTE, Q_COUNT };
static const char *const qcols[Q_COUNT] = {"id",        "kind",   "family",      "model",
                                           "params_B",  "precision", "method",   "metric",
                                           "baseline_precision", "baseline", "quantized", "loss_pct",
                                           "source",    "url",    "note"};

#define README "validate/quality/README.md"
#define LOSS_TOL 0.005 /* loss_pct is written to 2 decimals */

static int cls_of(enum prec p)
{
    switch (p) {
    case P_FP8: return QC_FP8;
    case P_INT8: return QC_INT8;
    case P_INT4: return QC_INT4;
    default: return QC_REF; /* fp64, fp32, tf32, bf16, fp16 */
    }
}

static int cls_bits(int c) { return c == QC_REF ? 16 : c == QC_INT4 ? 4 : 8; }

int ql_key(const struct prec_cfg *p, int kind)
{
    int kv = kind == QK_LLM ? cls_of(p->kv) : QC_REF;
    return (cls_of(p->w) * QC_COUNT + cls_of(p->a)) * QC_COUNT + kv;
}

static void key_cls(int key, int c[3])
{
    c[2] = key % QC_COUNT;
    c[1] = key / QC_COUNT % QC_COUNT;
    c[0] = key / (QC_COUNT * QC_COUNT);
}

static int make_key(const int c[3]) { return (c[0] * QC_COUNT + c[1]) * QC_COUNT + c[2]; }

/* ---- loading ---- */

static size_t group_of(const struct ql_row *r)
{
    return ((size_t)r->fam * (size_t)ql_metric_count + (size_t)r->metric) * QL_KEYS + (size_t)r->key;
}

/* The rows of (fam, m, key): *rows and their count. */
static int group(const struct ql_table *t, int fam, int m, int key, const int **rows)
{
    size_t g = ((size_t)fam * (size_t)ql_metric_count + (size_t)m) * QL_KEYS + (size_t)key;
    *rows = t->gorder + t->gstart[g];
    return t->gstart[g + 1] - t->gstart[g];
}

struct qload {
    struct ql_table *t;
    const char *path;
    int cap;
};

static int slug(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n >= max || !islower((unsigned char)s[0]))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '.' && s[i] != '-')
            return 0;
    return 1;
}

/* A whole finite decimal number, no spaces. */
static int num(const char *s, double *out)
{
    char *end;
    if (!s[0] || isspace((unsigned char)s[0]))
        return 0;
    double v = strtod(s, &end);
    if (*end || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

static int text_field(const char *s, size_t max, int required)
{
    size_t n = strlen(s);
    if ((required && !n) || n >= max)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20)
            return 0;
    return 1;
}

static int qrow(char **f, int line, void *ctx, struct dse_err *e)
{
    struct qload *L = ctx;
    struct ql_table *t = L->t;
    char where[48];
    snprintf(where, sizeof where, "line %d", line);
#define BAD(...) return dse_err_set(e, DSE_EINPUT, L->path, where, __VA_ARGS__)
    if (t->n == QL_MAX_ROWS)
        BAD("more than %d rows", QL_MAX_ROWS);
    if (t->n == L->cap) {
        int cap = L->cap ? 2 * L->cap : 64;
        struct ql_row *nr = realloc(t->row, sizeof *nr * (size_t)cap);
        if (!nr)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        t->row = nr;
        L->cap = cap;
    }
    struct ql_row *r = &t->row[t->n];
    memset(r, 0, sizeof *r);
    r->line = line;
    if (!slug(f[Q_ID], sizeof r->id))
        BAD("id '%.80s': expected a slug of lower-case letters, digits, '.' and '-', starting with a letter, "
            "at most %d characters", f[Q_ID], QL_ID_LEN - 1);
    dse_strlcpy(r->id, f[Q_ID], sizeof r->id);
    for (int k = 0; k < t->n; k++)
        if (!strcmp(t->row[k].id, r->id))
            BAD("id '%s' given twice (first on line %d)", r->id, t->row[k].line);
    if ((r->kind = ju_lookup(ql_kind_names, f[Q_KIND])) < 0)
        BAD("kind '%.40s': expected llm, encoder or cnn", f[Q_KIND]);
    if (!slug(f[Q_FAMILY], QL_FAMILY_LEN))
        BAD("family '%.80s': expected a slug of lower-case letters, digits, '.' and '-', starting with a letter, "
            "at most %d characters (a workload belongs to it when its name starts with it)",
            f[Q_FAMILY], QL_FAMILY_LEN - 1);
    r->fam = -1;
    for (int k = 0; k < t->n_fam; k++)
        if (!strcmp(t->fam[k].name, f[Q_FAMILY]))
            r->fam = k;
    if (r->fam < 0) {
        if (t->n_fam == QL_MAX_FAMILIES)
            BAD("more than %d families", QL_MAX_FAMILIES);
        r->fam = t->n_fam++;
        dse_strlcpy(t->fam[r->fam].name, f[Q_FAMILY], QL_FAMILY_LEN);
        t->fam[r->fam].kind = r->kind;
    } else if (t->fam[r->fam].kind != r->kind) {
        BAD("family '%s' is of kind %s on its earlier rows, %s here", f[Q_FAMILY], ql_kind_names[t->fam[r->fam].kind],
            ql_kind_names[r->kind]);
    }
    if (!text_field(f[Q_MODEL], sizeof r->model, 1))
        BAD("model: expected the model's published name (at most %d characters, no control characters)",
            (int)sizeof r->model - 1);
    dse_strlcpy(r->model, f[Q_MODEL], sizeof r->model);
    if (!num(f[Q_PARAMS], &r->params_B) || !(r->params_B > 0 && r->params_B <= 1e4))
        BAD("params_B '%.40s': expected the model's parameters in billions, above 0 and at most 10000",
            f[Q_PARAMS]);
    struct dse_err pe;
    dse_err_clear(&pe);
    if (prec_parse(f[Q_PREC], &r->prec, &pe))
        BAD("precision: %s", pe.msg);
    r->key = ql_key(&r->prec, r->kind);
    if (r->key == 0)
        BAD("precision '%s' quantizes nothing%s: its loss is 0 by definition (the rows' baselines are 16-bit or "
            "wider floats)", f[Q_PREC], r->kind == QK_LLM ? "" : " that counts for this kind (no KV cache)");
    if (!text_field(f[Q_METHOD], sizeof r->method, 1))
        BAD("method: expected the quantization method as published (at most %d characters)",
            (int)sizeof r->method - 1);
    dse_strlcpy(r->method, f[Q_METHOD], sizeof r->method);
    r->metric = -1;
    for (int k = 0; k < ql_metric_count; k++)
        if (!strcmp(ql_metrics[k].name, f[Q_METRIC]))
            r->metric = k;
    if (r->metric < 0)
        BAD("metric '%.40s': expected wikitext2_ppl, mmlu_acc, imagenet_top1 or mrpc_f1", f[Q_METRIC]);
    r->base_prec = prec_from_name(f[Q_BASE_PREC]);
    if (r->base_prec < 0 || cls_of((enum prec)r->base_prec) != QC_REF)
        BAD("baseline_precision '%.40s': expected the float the baseline ran at (fp32, tf32, bf16, fp16, fp64)",
            f[Q_BASE_PREC]);
    if (!num(f[Q_LOSS], &r->loss_pct) || !(r->loss_pct > -100 && r->loss_pct <= 1e5))
        BAD("loss_pct '%.40s': expected the relative loss in %% of the baseline, above -100 and at most 100000",
            f[Q_LOSS]);
    r->baseline = r->quantized = NAN;
    if (f[Q_BASE][0] || f[Q_QUANT][0]) {
        if (!num(f[Q_BASE], &r->baseline) || !num(f[Q_QUANT], &r->quantized) || !(r->baseline > 0) ||
            !(r->quantized > 0))
            BAD("baseline '%.40s', quantized '%.40s': expected both figures, positive (or both empty when the source "
                "gives the loss only)", f[Q_BASE], f[Q_QUANT]);
        int low = ql_metrics[r->metric].lower_is_better;
        double want = low ? (r->quantized / r->baseline - 1) * 100 : (r->baseline - r->quantized) / r->baseline * 100;
        if (!(fabs(want - r->loss_pct) <= LOSS_TOL + 1e-9))
            BAD("loss_pct %g disagrees with baseline %g and quantized %g: %s = %.4f", r->loss_pct, r->baseline,
                r->quantized, low ? "(quantized / baseline - 1) x 100" : "(baseline - quantized) / baseline x 100",
                want);
    }
    if (!text_field(f[Q_SOURCE], sizeof r->source, 1))
        BAD("source: expected the paper with its table, or the document and section (at most %d characters)",
            (int)sizeof r->source - 1);
    dse_strlcpy(r->source, f[Q_SOURCE], sizeof r->source);
    if (!text_field(f[Q_URL], sizeof r->url, 1) || (strncmp(f[Q_URL], "https://", 8) && strncmp(f[Q_URL], "http://", 7)))
        BAD("url '%.60s': expected where the figure is published (http:// or https://, at most %d characters)",
            f[Q_URL], (int)sizeof r->url - 1);
    dse_strlcpy(r->url, f[Q_URL], sizeof r->url);
    if (!text_field(f[Q_NOTE], sizeof r->note, 0))
        BAD("note: at most %d characters, no control characters", (int)sizeof r->note - 1);
    dse_strlcpy(r->note, f[Q_NOTE], sizeof r->note);
    for (int k = 0; k < t->n; k++) {
        const struct ql_row *o = &t->row[k];
        if (o->fam == r->fam && o->key == r->key && o->metric == r->metric && !strcmp(o->model, r->model) &&
            !strcmp(o->method, r->method) && !strcmp(o->source, r->source))
            BAD("the same measurement as line %d (family, model, precision, method, metric and source)", o->line);
    }
#undef BAD
    t->n++;
    return DSE_OK;
}

int ql_load_buf(const char *text, size_t len, const char *path, struct ql_table *t, struct dse_err *e)
{
    memset(t, 0, sizeof *t);
    struct qload L = {t, path, 0};
    int rc = pcsv_rows_doc(text, len, path, qcols, Q_COUNT, "published quality table", README, qrow, &L, e);
    if (!rc && !t->n)
        rc = dse_err_set(e, DSE_EINPUT, path, NULL, "no rows (columns in " README ")");
    if (rc) {
        ql_free(t);
        return rc;
    }
    dse_strlcpy(t->path, path, sizeof t->path);
    t->hash = dse_fnv1a64(text, len);
    size_t ng = (size_t)t->n_fam * (size_t)ql_metric_count * QL_KEYS;
    t->gstart = calloc(ng + 1, sizeof *t->gstart);
    t->gorder = malloc(sizeof *t->gorder * (size_t)t->n);
    if (!t->gstart || !t->gorder) {
        ql_free(t);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    for (int i = 0; i < t->n; i++) /* counting sort of the rows by group, table order within one */
        t->gstart[group_of(&t->row[i]) + 1]++;
    for (size_t g = 0; g < ng; g++)
        t->gstart[g + 1] += t->gstart[g];
    int *fill = calloc(ng, sizeof *fill);
    if (!fill) {
        ql_free(t);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    for (int i = 0; i < t->n; i++) {
        size_t g = group_of(&t->row[i]);
        t->gorder[t->gstart[g] + fill[g]++] = i;
    }
    free(fill);
    for (int k = 0; k < QK_COUNT; k++) { /* metrics by row count, most first (ties: table order) */
        int cnt[8] = {0}, n = 0;
        for (int i = 0; i < t->n; i++)
            if (t->row[i].kind == k)
                cnt[t->row[i].metric]++;
        for (int m = 0; m < 8; m++)
            t->metric_order[k][m] = -1;
        for (;;) {
            int best = -1;
            for (int m = 0; m < ql_metric_count; m++)
                if (cnt[m] > 0 && (best < 0 || cnt[m] > cnt[best]))
                    best = m;
            if (best < 0)
                break;
            t->metric_order[k][n++] = best;
            cnt[best] = 0;
        }
    }
    return DSE_OK;
}

int ql_load_file(const char *path, struct ql_table *t, struct dse_err *e)
{
    char *buf;
    size_t len;
    memset(t, 0, sizeof *t);
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    if (rc)
        return rc;
    rc = ql_load_buf(buf, len, path, t, e);
    free(buf);
    return rc;
}

void ql_free(struct ql_table *t)
{
    free(t->row);
    free(t->gstart);
    free(t->gorder);
    t->row = NULL;
    t->gstart = t->gorder = NULL;
    t->n = 0;
}

int ql_resolve(const char *near_file, char *out, size_t n)
{
    char root[512] = "..";
    const char *slash = near_file ? strrchr(near_file, '/') : NULL;
    if (slash)
        snprintf(root, sizeof root, "%.*s/..", (int)(slash - near_file), near_file);
    const char *bases[2 + JU_MAX_DATA_DIRS] = {".", root};
    char dirs[2048];
    int nb = 2 + ju_data_dirs(bases + 2, JU_MAX_DATA_DIRS, dirs, sizeof dirs);
    for (int b = 0; b < nb; b++) {
        struct stat st;
        snprintf(out, n, "%s/validate/quality/published-quality.csv", bases[b]);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
            return 1;
    }
    out[0] = '\0';
    return 0;
}

int ql_family_of(const struct ql_table *t, const char *model_name)
{
    int best = -1;
    size_t best_len = 0;
    for (int k = 0; t && model_name && k < t->n_fam; k++) {
        size_t n = strlen(t->fam[k].name);
        if (n <= best_len || strncasecmp(model_name, t->fam[k].name, n))
            continue;
        char c = model_name[n];
        if (c == '\0' || c == '-' || c == '.' || c == '_') {
            best = k;
            best_len = n;
        }
    }
    return best;
}

/* ---- estimating ---- */

/* A value with the rows behind it and its flags. */
struct qv {
    double v;
    unsigned flags;
    int n, over; /* rows in used[], and those that did not fit */
    int used[QL_MAX_USED];
};

static void qv_row(struct qv *a, int row)
{
    for (int k = 0; k < a->n; k++)
        if (a->used[k] == row)
            return;
    if (a->n < QL_MAX_USED)
        a->used[a->n++] = row;
    else
        a->over++;
}

static void qv_rows(struct qv *a, const struct qv *b)
{
    for (int i = 0; i < b->n; i++)
        qv_row(a, b->used[i]);
    a->over += b->over;
}

#define SIZE_TOL 0.0953101798 /* ln 1.1: a published size within 10 % counts as the model's */
#define MAX_SIZES 64

/* Rule 1: family fam's rows of format key in metric m, at N parameters. */
static int fam_value(const struct ql_table *t, int fam, int m, int key, double N, struct qv *out)
{
    double size[MAX_SIZES], sum[MAX_SIZES];
    int cnt[MAX_SIZES], ns = 0;
    const int *gr;
    int ng = group(t, fam, m, key, &gr);
    for (int gi = 0; gi < ng; gi++) {
        const struct ql_row *r = &t->row[gr[gi]];
        int s = 0;
        while (s < ns && size[s] != r->params_B)
            s++;
        if (s == ns) {
            if (ns == MAX_SIZES)
                continue;
            size[ns] = r->params_B;
            sum[ns] = 0;
            cnt[ns++] = 0;
        }
        sum[s] += r->loss_pct;
        cnt[s]++;
    }
    if (!ns)
        return 0;
    double N_B = N / 1e9;
    int lo = -1, hi = -1, at = -1;
    for (int s = 0; s < ns; s++) {
        if (fabs(log(N_B / size[s])) <= SIZE_TOL && (at < 0 || fabs(log(N_B / size[s])) < fabs(log(N_B / size[at]))))
            at = s;
        if (size[s] <= N_B && (lo < 0 || size[s] > size[lo]))
            lo = s;
        if (size[s] >= N_B && (hi < 0 || size[s] < size[hi]))
            hi = s;
    }
    memset(out, 0, sizeof *out);
    double wlo = 0;
    if (at >= 0) {
        lo = hi = at;
        out->flags = 1u << QL_PUBLISHED;
    } else if (lo < 0 || hi < 0) {
        lo = hi = lo < 0 ? hi : lo;
        out->flags = 1u << QL_NEAREST_SIZE;
    } else { /* between two sizes: linear in log N */
        wlo = log(size[hi] / N_B) / log(size[hi] / size[lo]);
        out->flags = 1u << QL_INTERPOLATED;
    }
    out->v = lo == hi ? sum[lo] / cnt[lo] : wlo * sum[lo] / cnt[lo] + (1 - wlo) * sum[hi] / cnt[hi];
    for (int gi = 0; gi < ng; gi++)
        if (t->row[gr[gi]].params_B == size[lo] || t->row[gr[gi]].params_B == size[hi])
            qv_row(out, gr[gi]);
    return 1;
}

/* Rules 1-2. */
static int direct(const struct ql_table *t, int fam, int m, int key, double N, struct qv *out)
{
    if (fam_value(t, fam, m, key, N, out))
        return 1;
    int c[3], wa[3], kv[3];
    key_cls(key, c);
    if (c[2] == QC_REF || (c[0] == QC_REF && c[1] == QC_REF))
        return 0;
    wa[0] = c[0], wa[1] = c[1], wa[2] = QC_REF;
    kv[0] = kv[1] = QC_REF, kv[2] = c[2];
    struct qv a, b;
    if (!fam_value(t, fam, m, make_key(wa), N, &a) || !fam_value(t, fam, m, make_key(kv), N, &b))
        return 0;
    *out = a;
    out->v = a.v + b.v;
    out->flags |= b.flags | 1u << QL_ADDITIVE;
    qv_rows(out, &b);
    return 1;
}

static double bit_dist(int ka, int kb)
{
    int a[3], b[3];
    key_cls(ka, a);
    key_cls(kb, b);
    double d = 0;
    for (int r = 0; r < 3; r++) {
        d += fabs(log2((double)cls_bits(a[r])) - log2((double)cls_bits(b[r])));
        if (a[r] != b[r] && cls_bits(a[r]) == cls_bits(b[r]))
            d += 0.25; /* fp8 against int8 */
    }
    return d;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define ANCHOR_MIN 0.05 /* a ratio's denominator of less than 0.05 % says nothing */

/* Rule 3: family fam lacks key; scale its figure for an anchor format. */
static int scaled(const struct ql_table *t, int fam, int kind, int m, int key, double N, struct qv *out)
{
    int best_a = -1, best_np = 0;
    double best_d = 0, best_v = 0;
    struct qv best_fa;
    memset(&best_fa, 0, sizeof best_fa);
    for (int ak = 1; ak < QL_KEYS; ak++) { /* each format fam has rows of in metric m */
        const int *gr;
        struct qv fa;
        if (ak == key || !group(t, fam, m, ak, &gr) || !direct(t, fam, m, ak, N, &fa))
            continue;
        int np = 0;
        for (int p = 0; p < t->n_fam; p++) {
            struct qv px, pa;
            if (p != fam && t->fam[p].kind == kind && direct(t, p, m, key, N, &px) && direct(t, p, m, ak, N, &pa) &&
                fabs(pa.v) >= ANCHOR_MIN)
                np++;
        }
        double d = bit_dist(ak, key);
        if (np > best_np || (np == best_np && np > 0 && (d < best_d || (d == best_d && fabs(fa.v) > fabs(best_v))))) {
            best_a = ak;
            best_np = np;
            best_d = d;
            best_v = fa.v;
            best_fa = fa;
        }
    }
    if (best_np == 0)
        return 0;
    double ratio[QL_MAX_FAMILIES];
    int nr = 0;
    *out = best_fa;
    for (int p = 0; p < t->n_fam; p++) {
        struct qv px, pa;
        if (p != fam && t->fam[p].kind == kind && direct(t, p, m, key, N, &px) && direct(t, p, m, best_a, N, &pa) &&
            fabs(pa.v) >= ANCHOR_MIN) {
            ratio[nr++] = px.v / pa.v;
            qv_rows(out, &px);
            qv_rows(out, &pa);
        }
    }
    out->v = best_fa.v * median(ratio, nr);
    out->flags |= 1u << QL_SCALED;
    return 1;
}

/* Rule 4 over families other than fam (rules 1-3 for each). */
static int others(const struct ql_table *t, int fam, int kind, int m, int key, double N, struct qv *out)
{
    double v[QL_MAX_FAMILIES];
    int n = 0;
    memset(out, 0, sizeof *out);
    for (int p = 0; p < t->n_fam; p++) {
        struct qv q;
        if (p == fam || t->fam[p].kind != kind)
            continue;
        if (direct(t, p, m, key, N, &q) || scaled(t, p, kind, m, key, N, &q)) {
            v[n++] = q.v;
            out->flags |= q.flags;
            qv_rows(out, &q);
        }
    }
    if (!n)
        return 0;
    out->v = median(v, n);
    out->flags |= 1u << QL_OTHER_MODELS;
    return 1;
}

/* Whether format ka is no wider than kb in every role and narrower in one. */
static int narrower(int ka, int kb)
{
    int a[3], b[3], strict = 0;
    key_cls(ka, a);
    key_cls(kb, b);
    for (int r = 0; r < 3; r++) {
        if (a[r] != b[r] && cls_bits(a[r]) >= cls_bits(b[r]))
            return 0;
        strict |= a[r] != b[r];
    }
    return strict;
}

/* Rule 5 for family fam: the smallest figure of a narrower format. */
static int bound_of(const struct ql_table *t, int fam, int m, int key, double N, struct qv *out)
{
    int found = 0;
    for (int k = 1; k < QL_KEYS; k++) {
        const int *gr;
        struct qv q;
        if (!narrower(k, key) || !group(t, fam, m, k, &gr) || !direct(t, fam, m, k, N, &q))
            continue;
        if (!found || q.v < out->v) {
            *out = q;
            found = 1;
        }
    }
    if (found)
        out->flags |= 1u << QL_UPPER_BOUND;
    return found;
}

int ql_estimate(const struct ql_table *t, const char *model_name, int kind, double params, const struct prec_cfg *p,
                struct ql_est *q)
{
    memset(q, 0, sizeof *q);
    q->metric = q->fam = -1;
    int fam = ql_family_of(t, model_name);
    q->fam = fam;
    if (fam >= 0 && (kind < 0 || kind >= QK_COUNT))
        kind = t->fam[fam].kind;
    if (fam >= 0 && t->fam[fam].kind != kind)
        fam = q->fam = -1; /* "bert-tiny-cnn": the name says bert, the model is not an encoder */
    int key = ql_key(p, kind >= 0 && kind < QK_COUNT ? kind : QK_LLM);
    if (key == 0) {
        q->flags = 1u << QL_REFERENCE;
        return 1;
    }
    if (!t || kind < 0 || kind >= QK_COUNT || !(params > 0) || !isfinite(params))
        return 0;
    struct qv v;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < 8 && t->metric_order[kind][k] >= 0; k++) {
            int m = t->metric_order[kind][k], ok;
            if (pass == 0)
                ok = (fam >= 0 && (direct(t, fam, m, key, params, &v) || scaled(t, fam, kind, m, key, params, &v))) ||
                     others(t, fam, kind, m, key, params, &v);
            else if (fam >= 0 && bound_of(t, fam, m, key, params, &v))
                ok = 1;
            else { /* the other families' bounds */
                double b[QL_MAX_FAMILIES];
                int n = 0;
                struct qv acc;
                memset(&acc, 0, sizeof acc);
                for (int f2 = 0; f2 < t->n_fam; f2++) {
                    struct qv x;
                    if (f2 != fam && t->fam[f2].kind == kind && bound_of(t, f2, m, key, params, &x)) {
                        b[n++] = x.v;
                        acc.flags |= x.flags;
                        qv_rows(&acc, &x);
                    }
                }
                ok = n > 0;
                if (ok) {
                    v = acc;
                    v.v = median(b, n);
                    v.flags |= 1u << QL_OTHER_MODELS;
                }
            }
            if (ok) {
                q->loss_pct = v.v;
                q->flags = v.flags;
                q->metric = m;
                q->n_used = v.n;
                q->n_used_all = v.n + v.over;
                memcpy(q->used, v.used, sizeof q->used);
                return 1;
            }
        }
    return 0;
}

const char *ql_basis_of(const struct ql_est *q)
{
    static const int order[] = {QL_FALLBACK, QL_UPPER_BOUND, QL_OTHER_MODELS, QL_SCALED, QL_ADDITIVE, QL_NEAREST_SIZE,
                                QL_INTERPOLATED, QL_PUBLISHED, QL_REFERENCE};
    for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++)
        if (q->flags & (1u << order[i]))
            return ql_basis_names[order[i]];
    return "none";
}

void ql_describe(const struct ql_table *t, const struct ql_est *q, int max_ids, char *buf, size_t n)
{
    size_t at = 0;
#define PUT(...)                                                                                                       \
    do {                                                                                                               \
        int w_ = snprintf(buf + at, at < n ? n - at : 0, __VA_ARGS__);                                                  \
        if (w_ > 0)                                                                                                    \
            at += (size_t)w_;                                                                                          \
    } while (0)
    if (n)
        buf[0] = '\0';
    if (q->flags & (1u << QL_REFERENCE)) {
        PUT("reference: every role 16-bit or wider, 0 by definition (the published deltas' baseline)");
        return;
    }
    if (q->flags & (1u << QL_FALLBACK)) {
        PUT("no published figure covers this model and format: the measured relative output error of an emulated "
            "GEMM in %%, not a quality figure");
        return;
    }
    PUT("%s", ql_basis_of(q));
    for (int b = QL_PUBLISHED; b < QL_FALLBACK; b++)
        if ((q->flags & (1u << b)) && strcmp(ql_basis_names[b], ql_basis_of(q)))
            PUT(", %s", ql_basis_names[b]);
    if (t && q->fam >= 0)
        PUT("; family %s", t->fam[q->fam].name);
    else
        PUT("; no family of the table");
    if (q->metric >= 0)
        PUT("; %s", ql_metrics[q->metric].name);
    PUT("; rows");
    int shown = 0;
    for (int i = 0; t && i < q->n_used && shown < max_ids; i++, shown++)
        PUT("%s%s", i ? ", " : " ", t->row[q->used[i]].id);
    if (q->n_used_all > shown)
        PUT(" (+%d more)", q->n_used_all - shown);
    if (at >= n && n > 4)
        memcpy(buf + n - 4, "...", 4);
#undef PUT
}
