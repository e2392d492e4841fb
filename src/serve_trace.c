/* serve_trace.c -- request traces for the serving simulation (serve.h): length distributions, seeded
 * arrival processes, trace files, and requests longer than the model's context. */
#include "serve.h"

#include "jsonu.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#define TRACE_MAX_TOKENS 10000000 /* a request longer than any model's context */
#define TRACE_LINE 512
#define TRACE_MAX_BYTES (1u << 30) /* a trace of some 40 M requests */

static int parse_num(const char *s, char **end, double *v)
{
    errno = 0;
    *v = strtod(s, end);
    return *end != s && !errno && isfinite(*v);
}

int serve_dist_parse(const char *opt, const char *s, struct serve_dist *d, struct dse_err *e)
{
    char *end;
    double a = 0, b = 0;
    memset(d, 0, sizeof *d);
    if (!strncmp(s, "fixed:", 6) && parse_num(s + 6, &end, &a) && !*end && a >= 1 && a <= TRACE_MAX_TOKENS &&
        a == floor(a)) {
        d->kind = SD_FIXED;
        d->a = a;
        return DSE_OK;
    }
    if (!strncmp(s, "uniform:", 8) && parse_num(s + 8, &end, &a) && *end == '-' && parse_num(end + 1, &end, &b) &&
        !*end && a >= 1 && b >= a && b <= TRACE_MAX_TOKENS && a == floor(a) && b == floor(b)) {
        d->kind = SD_UNIFORM;
        d->a = a;
        d->b = b;
        return DSE_OK;
    }
    if (!strncmp(s, "normal:", 7) && parse_num(s + 7, &end, &a) && *end == ',' && parse_num(end + 1, &end, &b) &&
        !*end && a >= 1 && a <= TRACE_MAX_TOKENS && b >= 0 && b <= TRACE_MAX_TOKENS) {
        d->kind = SD_NORMAL;
        d->a = a;
        d->b = b;
        return DSE_OK;
    }
    return dse_err_set(e, DSE_EINPUT, NULL, opt,
                       "expected fixed:N, uniform:A-B or normal:MEAN,SD (tokens, 1 to %d), got '%s'", TRACE_MAX_TOKENS,
                       s);
}

int serve_trace_load_buf(const char *text, size_t size, const char *path, int64_t max, struct serve_req **out,
                         int64_t *n, struct dse_err *e)
{
    *out = NULL;
    *n = 0;
    char line[TRACE_LINE];
    int64_t cap = 0, k = 0, ln = 0;
    int rc = DSE_OK, header = 0;
    struct serve_req *v = NULL;
    size_t at = 0;
    /* a UTF-8 byte-order mark opens the file when Excel writes "CSV UTF-8": skipped; UTF-16 is refused */
    if (size >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))
        at = 3;
    else if (size >= 2 && (!memcmp(text, "\xFF\xFE", 2) || !memcmp(text, "\xFE\xFF", 2)))
        return dse_err_set(e, DSE_EINPUT, path, NULL, "line 1: UTF-16 text (it opens with the byte-order mark %s): "
                           "save it as UTF-8 or ASCII", (unsigned char)text[0] == 0xFF ? "FF FE" : "FE FF");
    for (; at < size && !rc;) {
        const char *nl = memchr(text + at, '\n', size - at);
        size_t len = nl ? (size_t)(nl - (text + at)) : size - at;
        ln++;
        if (len >= sizeof line - 1) {
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "line %lld: longer than %d characters", (long long)ln,
                             TRACE_LINE - 2);
            break;
        }
        memcpy(line, text + at, len);
        line[len] = 0;
        at += len + (nl != NULL);
        if (memchr(line, 0, len)) {
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "line %lld: a NUL byte (not a text file)", (long long)ln);
            break;
        }
        while (len && line[len - 1] == '\r')
            line[--len] = 0;
        if (line[0] == '#')
            continue;
        if (!strncmp(line, "\xEF\xBB\xBF", 3)) {
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "line %lld: a UTF-8 byte-order mark (EF BB BF) inside the file "
                             "(one is accepted only at its start: were files joined?)", (long long)ln);
            break;
        }
        if (!header) {
            if (strcmp(line, "arrival_s,prompt_tokens,output_tokens")) {
                rc = dse_err_set(e, DSE_EINPUT, path, NULL,
                                 "line %lld: expected the header arrival_s,prompt_tokens,output_tokens, got '%.80s'",
                                 (long long)ln, line);
                break;
            }
            header = 1;
            continue;
        }
        if (!len) {
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "line %lld: empty line", (long long)ln);
            break;
        }
        char *end;
        double t, p, o;
        if (!parse_num(line, &end, &t) || *end != ',' || !parse_num(end + 1, &end, &p) || *end != ',' ||
            !parse_num(end + 1, &end, &o) || *end) {
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "line %lld: expected arrival_s,prompt_tokens,output_tokens "
                             "numbers, got '%.80s'", (long long)ln, line);
            break;
        }
        if (!(t >= 0) || (k && t < v[k - 1].arrival_s)) {
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "line %lld: arrival_s %g %s", (long long)ln, t,
                             t < 0 ? "is negative" : "is earlier than the line before (times must not decrease)");
            break;
        }
        if (p < 1 || o < 1 || p != floor(p) || o != floor(o) || p > TRACE_MAX_TOKENS || o > TRACE_MAX_TOKENS) {
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "line %lld: tokens must be whole numbers from 1 to %d, got %g "
                             "and %g", (long long)ln, TRACE_MAX_TOKENS, p, o);
            break;
        }
        if (k == max) {
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "more than %lld requests", (long long)max);
            break;
        }
        if (k == cap) {
            int64_t nc = cap ? 2 * cap : 1024;
            struct serve_req *nv = realloc(v, sizeof *nv * (size_t)nc);
            if (!nv) {
                rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                break;
            }
            v = nv;
            cap = nc;
        }
        v[k++] = (struct serve_req){t, (int32_t)p, (int32_t)o};
    }
    if (!rc && !header)
        rc = dse_err_set(e, DSE_EINPUT, path, NULL, "empty: no header arrival_s,prompt_tokens,output_tokens");
    if (!rc && !k)
        rc = dse_err_set(e, DSE_EINPUT, path, NULL, "no requests after the header");
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return DSE_OK;
}

int serve_trace_load(const char *path, int64_t max, struct serve_req **out, int64_t *n, struct dse_err *e)
{
    char *text;
    size_t len;
    *out = NULL;
    *n = 0;
    int rc = ju_read_file(path, TRACE_MAX_BYTES, &text, &len, e);
    if (rc)
        return rc;
    rc = serve_trace_load_buf(text, len, path, max, out, n, e);
    free(text);
    return rc;
}

static int32_t draw(gsl_rng *g, const struct serve_dist *d)
{
    double x;
    switch (d->kind) {
    case SD_UNIFORM:
        x = d->a + (double)gsl_rng_uniform_int(g, (unsigned long)(d->b - d->a + 1));
        break;
    case SD_NORMAL:
        x = floor(d->a + gsl_ran_gaussian(g, d->b) + 0.5);
        break;
    default:
        x = d->a;
        break;
    }
    return (int32_t)(x < 1 ? 1 : x > TRACE_MAX_TOKENS ? TRACE_MAX_TOKENS : x);
}

int serve_trace_make(enum serve_arrival arr, double rate, double cv, int64_t n, const struct serve_dist *prompt,
                     const struct serve_dist *output, const struct serve_req *lengths, int64_t n_lengths,
                     unsigned long seed, struct serve_req **out, struct dse_err *e)
{
    *out = NULL;
    if (n < 1)
        return dse_err_set(e, DSE_EINPUT, NULL, "--requests", "expected at least 1 request");
    if (arr != SA_OFFLINE && !(rate > 0 && isfinite(rate)))
        return dse_err_set(e, DSE_EINPUT, NULL, "--rate", "expected a positive number of requests per second, got %g",
                           rate);
    if (arr == SA_GAMMA && !(cv > 0 && cv <= 100))
        return dse_err_set(e, DSE_EINPUT, NULL, "--burstiness", "expected a coefficient of variation in (0, 100], got %g",
                           cv);
    struct serve_req *v = malloc(sizeof *v * (size_t)n);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    if (!v || !g) {
        free(v);
        if (g)
            gsl_rng_free(g);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    gsl_rng_set(g, seed);
    /* gamma inter-arrivals of mean 1/rate and coefficient of variation cv: shape 1/cv^2, scale cv^2/rate */
    double t = 0, shape = arr == SA_GAMMA ? 1 / (cv * cv) : 1, scale = arr == SA_GAMMA ? cv * cv / rate : 0;
    for (int64_t i = 0; i < n; i++) {
        if (i && arr == SA_POISSON)
            t += gsl_ran_exponential(g, 1 / rate);
        else if (i && arr == SA_CONSTANT)
            t = (double)i / rate;
        else if (i && arr == SA_GAMMA)
            t += gsl_ran_gamma(g, shape, scale);
        v[i].arrival_s = t;
        if (lengths) {
            const struct serve_req *l = &lengths[gsl_rng_uniform_int(g, (unsigned long)n_lengths)];
            v[i].prompt = l->prompt;
            v[i].output = l->output;
        } else {
            v[i].prompt = draw(g, prompt);
            v[i].output = draw(g, output);
        }
    }
    gsl_rng_free(g);
    *out = v;
    return DSE_OK;
}

void serve_fit_context(struct serve_req *req, int64_t *n, int64_t context, enum serve_too_long mode,
                       int64_t *too_long, int64_t *first)
{
    int64_t w = 0, k = 0;
    *first = -1;
    for (int64_t i = 0; i < *n; i++) {
        struct serve_req q = req[i];
        if ((int64_t)q.prompt + q.output > context) {
            if (!k++)
                *first = i;
            if (mode == TOO_LONG_SKIP)
                continue;
            if (mode == TOO_LONG_TRUNCATE) { /* the prompt's last tokens kept; one at least */
                if (q.output >= context)
                    q.output = (int32_t)(context - 1);
                q.prompt = (int32_t)(context - q.output);
            }
        }
        req[w++] = q;
    }
    *too_long = k;
    if (mode == TOO_LONG_SKIP)
        *n = w;
}
