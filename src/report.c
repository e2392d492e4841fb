/* report.c -- dse report's HTML page (report.h): static HTML for what does not change (the header, the
 * spec, the reasons, dse compare's tables), one JSON block for the points and breakdowns, and the
 * page's own script (src/report.js, built into report_js.h) that draws the scatter, the legend, the
 * breakdown and the roofline from it. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonu.h"
#include "outfile.h"
#include "plot.h"
#include "sbuf.h"

/* The page's script and style, one string per line (report_js.h is made from src/report.js). */
static const char *const report_js[] = {
#include "report_js.h"
    NULL};

static const char css[] =
    "body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:1.5em auto;max-width:1200px;"
    "color:#222;padding:0 1em}h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{padding:2px 8px;border-bottom:1px solid #e4e4e4;"
    "text-align:left;vertical-align:top}th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:"
    "tabular-nums}pre{background:#f7f7f7;padding:.8em;overflow:auto;max-height:30em}.note{color:#555}"
    ".warn{background:#fff3cd;border:1px solid #e0c060;padding:.5em}.scroll{max-height:28em;overflow:auto}"
    "#tip{position:absolute;display:none;background:#fff;border:1px solid #888;padding:6px 8px;"
    "box-shadow:2px 2px 6px rgba(0,0,0,.2);pointer-events:none;font-size:12px;max-width:420px}"
    "#legend span.sw{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle;"
    "border-radius:6px}svg text{font:11px sans-serif}.controls label{margin-right:1em}"
    "circle.front{cursor:pointer}circle.sel{stroke:#000;stroke-width:2.5}table.compare td{white-space:nowrap}";

/* ---- escaping ---- */

/* Text for HTML element content and attribute values. */
static void html(struct sb *b, const char *s)
{
    for (const char *p = s ? s : ""; *p; p++) {
        const char *r = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '"' ? "&quot;"
                        : *p == '\'' ? "&#39;" : NULL;
        if (r)
            sb_add(b, "%s", r);
        else
            sb_put(b, p, 1);
    }
}

/* A JSON string that is also safe inside <script>: '<', '>' and '&' as \u escapes (no "</script>" or
 * "<!--" can appear), control characters escaped, and U+2028 / U+2029 too (JavaScript line ends). */
static void jstr(struct sb *b, const char *s)
{
    sb_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            sb_add(b, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f)
            sb_add(b, "\\u%04x", *p);
        else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
            sb_add(b, "\\u%04x", p[2] == 0xa8 ? 0x2028 : 0x2029);
            p += 2;
        } else
            sb_put(b, (const char *)p, 1);
    }
    sb_put(b, "\"", 1);
}

/* A JSON string, or null for NULL. */
static void jstr_or_null(struct sb *b, const char *s)
{
    if (s)
        jstr(b, s);
    else
        sb_add(b, "null");
}

/* A JSON number: 7 significant digits (the page shows 5), null for NAN or infinities. */
static void jnum(struct sb *b, double v)
{
    if (isfinite(v))
        sb_add(b, "%.7g", v);
    else
        sb_add(b, "null");
}

/* ---- thinning ---- */

struct range {
    double lo, hi;
    int log;
};

/* The objectives' ranges over every feasible point and plot.c's log rule. */
static void ranges(const struct report_in *in, struct range *rg)
{
    const int m = in->n_obj;
    for (int k = 0; k < m; k++) {
        long long nonpos = 0;
        rg[k].lo = INFINITY;
        rg[k].hi = -INFINITY;
        for (long long i = 0; i < in->pts.n; i++) {
            double v = in->pts.obj[(size_t)i * m + k];
            if (!isfinite(v))
                continue;
            nonpos += v <= 0;
            rg[k].lo = v < rg[k].lo ? v : rg[k].lo;
            rg[k].hi = v > rg[k].hi ? v : rg[k].hi;
        }
        rg[k].log = isfinite(rg[k].lo) && plot_log_axis(rg[k].lo, rg[k].hi, nonpos);
    }
}

/* Cell of v along an objective cut into g equal steps (of log10 v on a log axis). */
static long long cell_of(const struct range *r, double v, long long g)
{
    double a = r->log ? log10(r->lo) : r->lo, z = r->log ? log10(r->hi) : r->hi, x = r->log ? log10(v) : v;
    if (!isfinite(x) || !(z > a))
        return 0;
    long long c = (long long)((x - a) / (z - a) * (double)g);
    return c < 0 ? 0 : c >= g ? g - 1 : c;
}

/* A set of cell keys (open addressing; cap a power of two above twice the points). */
static int key_add(unsigned long long *set, size_t cap, unsigned long long key)
{
    unsigned long long k = key + 1; /* 0 marks an empty slot */
    for (size_t i = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (set[i] == k)
            return 0;
        if (!set[i]) {
            set[i] = k;
            return 1;
        }
    }
}

/* Marks in keep the dominated points drawn: the first (in point order) of each cell of a grid of g cells
 * a side per class of the colour axis, g the finest from REPORT_GRID down (x 3/4 each step) that keeps
 * at most REPORT_MAX_CLOUD. Returns how many, and g in *side; -1 when out of memory. */
static long long thin(const struct report_in *in, const struct range *rg, unsigned char *keep, long long *side)
{
    const int m = in->n_obj;
    long long classes = in->color >= 0 ? in->axis[in->color].n : 1, g = REPORT_GRID, kept;
    while (g > 2 && pow((double)g, m) * (double)classes > 4e18) /* keys stay exact in 64 bits */
        g = g * 3 / 4;
    size_t cap = 1024;
    while (cap < 2 * (size_t)in->pts.n)
        cap *= 2;
    unsigned long long *set = malloc(sizeof *set * cap);
    if (!set)
        return -1;
    for (;;) {
        memset(set, 0, sizeof *set * cap);
        kept = 0;
        for (long long i = 0; i < in->pts.n; i++) {
            keep[i] = 0;
            if (in->pts.front[i])
                continue;
            unsigned long long c = in->color >= 0 ? in->pts.code[(size_t)i * in->n_axes + in->color] : 0;
            for (int k = 0; k < m; k++)
                c = c * (unsigned long long)g + (unsigned long long)cell_of(&rg[k], in->pts.obj[(size_t)i * m + k], g);
            if (key_add(set, cap, c)) {
                keep[i] = 1;
                kept++;
            }
        }
        if (kept <= REPORT_MAX_CLOUD || g <= 2)
            break;
        g = g * 3 / 4 < 2 ? 2 : g * 3 / 4;
    }
    free(set);
    *side = g;
    return kept;
}

/* ---- the page ---- */

static void point_json(struct sb *b, const struct report_in *in, long long i)
{
    const struct report_pts *p = &in->pts;
    sb_add(b, "[%lld", p->point[i]);
    for (int a = 0; a < in->n_axes; a++)
        sb_add(b, ",%u", p->code[(size_t)i * in->n_axes + a]);
    for (int k = 0; k < in->n_obj; k++) {
        sb_put(b, ",", 1);
        jnum(b, p->obj[(size_t)i * in->n_obj + k]);
    }
    sb_put(b, ",", 1);
    jnum(b, p->err[2 * i]);
    sb_put(b, ",", 1);
    jnum(b, p->err[2 * i + 1]);
    sb_put(b, "]", 1);
}

static void bd_json(struct sb *b, const struct report_bd *d)
{
    sb_add(b, "{\"point\":%lld,\"latency_s\":", d->point);
    jnum(b, d->latency_s);
    sb_add(b, ",\"elo\":");
    jnum(b, d->err_low_pct);
    sb_add(b, ",\"ehi\":");
    jnum(b, d->err_high_pct);
    sb_add(b, ",\"devices\":");
    jnum(b, d->devices);
    sb_add(b, ",\"note\":");
    jstr_or_null(b, d->note);
    sb_add(b, ",\"ops\":[");
    for (int i = 0; i < d->n_op; i++) {
        const struct report_op *o = &d->op[i];
        sb_add(b, "%s[", i ? "," : "");
        jstr(b, o->name);
        sb_put(b, ",", 1);
        jstr(b, o->phase);
        sb_put(b, ",", 1);
        jstr(b, o->device);
        sb_put(b, ",", 1);
        jstr(b, o->bound);
        const double v[] = {o->count, o->time_s, o->flops, o->bytes, o->energy_J, o->util};
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
            sb_put(b, ",", 1);
            jnum(b, v[k]);
        }
        sb_put(b, "]", 1);
    }
    sb_add(b, "],\"roofs\":[");
    for (int i = 0; i < d->n_roof; i++) {
        sb_add(b, "%s[", i ? "," : "");
        jstr(b, d->roof[i].device);
        sb_put(b, ",", 1);
        jstr(b, d->roof[i].prec);
        sb_put(b, ",", 1);
        jnum(b, d->roof[i].peak_flops);
        sb_put(b, ",", 1);
        jnum(b, d->roof[i].bw_Bps);
        sb_put(b, "]", 1);
    }
    sb_add(b, "]}");
}

static void data_json(struct sb *b, const struct report_in *in, const struct range *rg, const unsigned char *keep,
                      long long kept, long long side)
{
    sb_add(b, "{\"name\":");
    jstr(b, in->name);
    sb_add(b, ",\"db\":");
    jstr(b, in->db);
    sb_add(b, ",\"run\":%lld,\"color\":%d,\"axes\":[", in->run_id, in->color);
    for (int a = 0; a < in->n_axes; a++) {
        sb_add(b, "%s{\"name\":", a ? "," : "");
        jstr(b, in->axis[a].name);
        sb_add(b, ",\"values\":[");
        for (int v = 0; v < in->axis[a].n; v++) {
            if (v)
                sb_put(b, ",", 1);
            jstr(b, in->axis[a].values[v]);
        }
        sb_add(b, "]}");
    }
    sb_add(b, "],\"obj\":[");
    for (int k = 0; k < in->n_obj; k++) {
        sb_add(b, "%s{\"name\":", k ? "," : "");
        jstr(b, in->obj[k].name);
        sb_add(b, ",\"unit\":");
        jstr(b, in->obj[k].unit);
        sb_add(b, ",\"max\":%s,\"log\":%s,\"lo\":", in->obj[k].maximize ? "true" : "false", rg[k].log ? "true" : "false");
        jnum(b, rg[k].lo);
        sb_add(b, ",\"hi\":");
        jnum(b, rg[k].hi);
        sb_add(b, "}");
    }
    sb_add(b, "],\"front\":[");
    for (long long i = 0, n = 0; i < in->pts.n; i++)
        if (in->pts.front[i]) {
            if (n++)
                sb_put(b, ",", 1);
            point_json(b, in, i);
        }
    sb_add(b, "],\"cloud\":[");
    for (long long i = 0, n = 0; i < in->pts.n; i++)
        if (keep[i]) {
            if (n++)
                sb_put(b, ",", 1);
            point_json(b, in, i);
        }
    sb_add(b, "],\"cloudShown\":%lld,\"cloudAll\":%lld,\"grid\":%lld,\"bdLimit\":%lld,\"bdNote\":", kept,
           in->pts.n - in->n_front, side, in->bd_limit);
    jstr_or_null(b, in->bd_note);
    sb_add(b, ",\"bd\":[");
    for (int i = 0; i < in->n_bd; i++) {
        if (i)
            sb_put(b, ",", 1);
        bd_json(b, &in->bd[i]);
    }
    sb_add(b, "]}");
}

static void row2(struct sb *b, const char *k, const char *v)
{
    sb_add(b, "<tr><th>");
    html(b, k);
    sb_add(b, "</th><td>");
    html(b, v);
    sb_add(b, "</td></tr>\n");
}

static void header(struct sb *b, const struct report_in *in)
{
    char t[160];
    sb_add(b, "<h1>dse report: ");
    html(b, in->name);
    sb_add(b, "</h1>\n<p class=\"note\">");
    html(b, in->description);
    sb_add(b, "</p>\n<table id=\"run\">\n");
    snprintf(t, sizeof t, "%lld", in->run_id);
    row2(b, "run", t);
    row2(b, "database", in->db);
    snprintf(t, sizeof t, "%.60s (git %.60s)", in->version, in->git);
    row2(b, "dse", t);
    snprintf(t, sizeof t, "%.40s to %.40s", in->started, in->finished[0] ? in->finished : "(not finished)");
    row2(b, "date (UTC)", t);
    row2(b, "host", in->host);
    row2(b, "status", in->status);
    snprintf(t, sizeof t, "%lld of %lld planned", in->n_points, in->points_total);
    row2(b, "points evaluated", t);
    snprintf(t, sizeof t, "%lld feasible, %lld infeasible", in->n_feasible, in->n_points - in->n_feasible);
    row2(b, "feasibility", t);
    snprintf(t, sizeof t, "%lld points", in->n_front);
    row2(b, "Pareto front", t);
    if (isfinite(in->hypervolume))
        snprintf(t, sizeof t, "%.6g", in->hypervolume);
    else
        snprintf(t, sizeof t, "none (only for 2 or 3 objectives and one workload)");
    row2(b, "hypervolume", t);
    sb_add(b, "</table>\n<details><summary>the sweep spec (JSON, as stored in the database)</summary><pre id=\"spec\">");
    html(b, in->spec);
    sb_add(b, "</pre></details>\n");
}

static void reasons(struct sb *b, const struct report_in *in)
{
    long long inf = in->n_points - in->n_feasible;
    sb_add(b, "<h2>Feasibility</h2>\n<p>%lld of %lld points feasible, %lld infeasible.", in->n_feasible, in->n_points,
           inf);
    if (!inf) {
        sb_add(b, "</p>\n");
        return;
    }
    sb_add(b, " The commonest reasons, counted by kind (the text up to its first number, as dse sweep groups "
              "them; &quot;e.g.&quot; where a kind's numbers vary):</p>\n<table id=\"reasons\"><tr><th>points</th>"
              "<th>reason</th></tr>\n");
    for (int i = 0; i < in->n_reason; i++) {
        sb_add(b, "<tr><td class=\"n\">%lld</td><td>%s", in->reason[i].n, in->reason[i].varied ? "e.g. " : "");
        html(b, in->reason[i].example);
        sb_add(b, "</td></tr>\n");
    }
    if (in->reason_other)
        sb_add(b, "<tr><td class=\"n\">%lld</td><td>other reasons</td></tr>\n", in->reason_other);
    sb_add(b, "</table>\n");
}

static void tables(struct sb *b, const struct report_in *in)
{
    sb_add(b, "<h2>The front compared (dse compare)</h2>\n");
    if (!in->n_table) {
        sb_add(b, "<p class=\"warn\">");
        html(b, in->bd_note ? in->bd_note : "no feasible point: nothing to compare");
        sb_add(b, "</p>\n");
    }
    for (int t = 0; t < in->n_table; t++) {
        const struct report_table *x = &in->table[t];
        sb_add(b, "<h3>");
        html(b, x->title);
        sb_add(b, "</h3>\n<p class=\"note\">");
        html(b, x->note);
        sb_add(b, "</p>\n<div class=\"scroll\"><table class=\"compare\"><tr>");
        for (int c = 0; c < x->n_col; c++) {
            sb_add(b, "<th>");
            html(b, x->col[c]);
            sb_add(b, "</th>");
        }
        sb_add(b, "</tr>\n");
        for (int r = 0; r < x->n_row; r++) {
            sb_add(b, "<tr>");
            for (int c = 0; c < x->n_col; c++) {
                sb_add(b, "<td>");
                html(b, x->cell[(size_t)r * x->n_col + c]);
                sb_add(b, "</td>");
            }
            sb_add(b, "</tr>\n");
        }
        sb_add(b, "</table></div>\n");
    }
}

int report_write(const struct report_in *in, const char *out, struct dse_err *e)
{
    struct sb b = {0};
    struct range rg[64];
    long long side = 0;
    if (in->n_obj < 1 || in->n_obj > 64)
        return dse_err_set(e, DSE_EINPUT, in->db, NULL, "run %lld has %d objectives: a report needs 1 to 64", in->run_id,
                           in->n_obj);
    unsigned char *keep = malloc((size_t)(in->pts.n ? in->pts.n : 1));
    if (!keep)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    ranges(in, rg);
    long long kept = thin(in, rg, keep, &side);
    if (kept < 0) {
        free(keep);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    sb_add(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>dse report: ");
    html(&b, in->name);
    sb_add(&b, "</title>\n<style>%s</style>\n</head>\n<body data-status=\"loading\">\n", css);
    header(&b, in);
    sb_add(&b, "<h2>The Pareto front</h2>\n<div class=\"controls\" id=\"controls\"></div>\n"
               "<svg id=\"scatter\" width=\"860\" height=\"540\" role=\"img\" aria-label=\"Pareto front\"></svg>\n"
               "<div id=\"legend\"></div>\n<p class=\"note\" id=\"cloudnote\">Every front point is drawn (%lld, "
               "dark outline; click one for its breakdown). Dominated feasible points (lighter): %lld of %lld shown, "
               "at most one per cell of a grid of %lld cells per objective",
           in->n_front, kept, in->pts.n - in->n_front, side);
    if (in->color >= 0) {
        sb_add(&b, " per value of ");
        html(&b, in->axis[in->color].name);
    }
    sb_add(&b, " (the first point of each cell, in point order; log10 steps on log axes); axes spanning more than "
               "1.5 decades are logarithmic.</p>\n<div id=\"tip\"></div>\n");
    reasons(&b, in);
    sb_add(&b, "<h2>Breakdown of a front point</h2>\n<div id=\"breakdown\"></div>\n"
               "<svg id=\"roofline\" width=\"860\" height=\"420\" role=\"img\" aria-label=\"roofline\"></svg>\n");
    tables(&b, in);
    sb_add(&b, "<p class=\"note\">Every number on this page is stored in the database or evaluated again from the "
               "run's stored spec by the same dse (docs/report.md); none is computed by the page.</p>\n");
    sb_add(&b, "<script type=\"application/json\" id=\"dse-data\">");
    data_json(&b, in, rg, keep, kept, side);
    sb_add(&b, "</script>\n<script>\n");
    for (const char *const *l = report_js; *l; l++)
        sb_add(&b, "%s", *l);
    sb_add(&b, "</script>\n</body></html>\n");
    free(keep);
    int rc = b.oom ? dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory writing the report")
                   : out_file_write(out, b.s, b.len, NULL, NULL, NULL, e);
    free(b.s);
    return rc;
}
