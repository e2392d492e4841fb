/* validate_suite.c -- suites of kernel cases: the JSON suite files (validate/NAME.json), import CSVs
 * and the --json results of dse validate and calibrate, all checked by one case loader (load_case),
 * with clear errors for bad input. */
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonu.h"

const struct vk_kind vk_kinds[VK_COUNT] = {
    [VK_GEMM] = {"gemm", OP_MATMUL, FN_NONE},
    [VK_CONV] = {"conv2d", OP_CONV2D, FN_NONE},
    [VK_ATTENTION] = {"attention", OP_ATTENTION, FN_NONE},
    [VK_SOFTMAX] = {"softmax", OP_SOFTMAX, FN_NONE},
    [VK_LAYERNORM] = {"layernorm", OP_LAYERNORM, FN_NONE},
    [VK_RMSNORM] = {"rmsnorm", OP_RMSNORM, FN_NONE},
    [VK_GELU] = {"gelu", OP_ELTWISE, FN_GELU},
    [VK_SILU] = {"silu", OP_ELTWISE, FN_SILU},
    [VK_ADD] = {"add", OP_ELTWISE, FN_ADD},
    [VK_COPY] = {"copy", OP_ELTWISE, FN_SCALE}, /* a one-input pass over the data */
    [VK_TRIAD] = {"triad", OP_ELTWISE, FN_ADD}, /* a + s b: two inputs, one output */
    /* measured elsewhere only: vLLM's silu_and_mul (gate and up in, their product out: the traffic of a
     * two-input multiply; the SiLU's few FLOPs per element are not counted) and the rotary embedding of
     * q and k in place */
    [VK_SILU_MUL] = {"silu_mul", OP_ELTWISE, FN_MUL},
    [VK_ROPE] = {"rope", OP_ELTWISE, FN_ROPE},
};
_Static_assert(sizeof vk_kinds / sizeof vk_kinds[0] == VK_COUNT, "one vk_kinds row per enum vk_type");

int vk_kind_from_name(const char *s)
{
    for (int i = 0; i < VK_COUNT; i++)
        if (strcmp(vk_kinds[i].name, s) == 0)
            return i;
    return -1;
}

static void vk_kind_list(char *buf, size_t n)
{
    size_t at = 0;
    for (int i = 0; i < VK_COUNT && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "", vk_kinds[i].name);
}

struct field {
    const char *name;
    size_t off;
    long long min, max, dflt; /* dflt < 0: required */
};
#define FLD(n, f, lo, hi, d) {n, offsetof(struct vk, f), lo, hi, d}

static const struct field fields[VK_COUNT][11] = {
    [VK_GEMM] = {FLD("M", M, 1, 1 << 20, -1), FLD("N", N, 1, 1 << 20, -1), FLD("K", K, 1, 1 << 20, -1),
                 FLD("B", b, 1, 1 << 16, 1)},
    [VK_CONV] = {FLD("N", n, 1, 4096, 1), FLD("C", c, 1, 1 << 14, -1), FLD("H", h, 1, 4096, -1), FLD("W", w, 1, 4096, -1),
                 FLD("OC", oc, 1, 1 << 14, -1), FLD("KH", kh, 1, 64, -1), FLD("KW", kw, 1, 64, -1),
                 FLD("stride", stride, 1, 64, 1), FLD("pad", pad, 0, 64, 0), FLD("groups", groups, 1, 1 << 14, 1)},
    [VK_ATTENTION] = {FLD("B", b, 1, 4096, 1), FLD("H", heads, 1, 1024, -1), FLD("Hkv", hkv, 1, 1024, 0),
                      FLD("S", s, 1, 1 << 17, -1), FLD("T", t, 1, 1 << 17, 0), FLD("D", d, 1, 1024, -1),
                      FLD("causal", causal, 0, 1, 1)},
    [VK_SOFTMAX] = {FLD("rows", rows, 1, 1 << 24, -1), FLD("cols", cols, 1, 1 << 24, -1)},
    [VK_LAYERNORM] = {FLD("rows", rows, 1, 1 << 24, -1), FLD("cols", cols, 1, 1 << 24, -1)},
    [VK_RMSNORM] = {FLD("rows", rows, 1, 1 << 24, -1), FLD("cols", cols, 1, 1 << 24, -1)},
    [VK_GELU] = {FLD("n", n, 1, 1LL << 32, -1)},
    [VK_SILU] = {FLD("n", n, 1, 1LL << 32, -1)},
    [VK_ADD] = {FLD("n", n, 1, 1LL << 32, -1)},
    [VK_COPY] = {FLD("n", n, 1, 1LL << 32, -1)},
    [VK_TRIAD] = {FLD("n", n, 1, 1LL << 32, -1)},
    [VK_SILU_MUL] = {FLD("rows", rows, 1, 1 << 24, -1), FLD("cols", cols, 1, 1 << 24, -1)},
    [VK_ROPE] = {FLD("rows", rows, 1, 1 << 24, -1), FLD("cols", cols, 1, 1 << 24, -1)},
};

static long long *fld(struct vk *k, const struct field *f)
{
    return f->off == offsetof(struct vk, causal) ? NULL : (long long *)((char *)k + f->off);
}

static void set_field(struct vk *k, const struct field *f, long long v)
{
    if (f->off == offsetof(struct vk, causal))
        k->causal = (int)v;
    else
        *fld(k, f) = v;
}

static int finish_case(struct vk *k, struct ju *j)
{
    if (k->type == VK_ATTENTION) {
        if (!k->hkv)
            k->hkv = k->heads;
        if (!k->t)
            k->t = k->s;
        if (k->heads % k->hkv || k->t < k->s)
            return ju_fail(j, "attention needs Hkv dividing H and T >= S");
    }
    if (k->type == VK_ROPE || k->type == VK_SILU_MUL)
        k->n = k->rows * k->cols; /* element-wise over rows x cols (one GPU CTA per row: model_row_floor_s) */
    if (k->type == VK_CONV && (k->c % k->groups || k->oc % k->groups || k->h + 2 * k->pad < k->kh ||
                               k->w + 2 * k->pad < k->kw))
        return ju_fail(j, "conv2d: groups must divide C and OC, and the kernel fit the padded input");
    size_t at = 0;
    k->shape[0] = '\0';
    for (int i = 0; i < 11 && fields[k->type][i].name; i++) {
        const struct field *f = &fields[k->type][i];
        long long v = f->off == offsetof(struct vk, causal) ? k->causal : *fld(k, f);
        if (k->type == VK_GEMM && f->off == offsetof(struct vk, b) && v == 1)
            continue; /* one product: the shape as it always read */
        at += (size_t)snprintf(k->shape + at, sizeof k->shape - at, "%s%s=%lld", i ? "," : "", f->name, v);
        if (at >= sizeof k->shape)
            break;
    }
    return DSE_OK;
}

static int load_case(struct ju *j, const cJSON *o, struct vk *k)
{
    static const char *const keys[] = {"kernel", "precision", "shape", "measured_ms", "measured_mJ", "device", "note", NULL};
    char name[32], p[16];
    int rc;
    memset(k, 0, sizeof *k);
    k->measured_ms = k->measured_mJ = -1;
    k->prec = P_FP32;
    if ((rc = ju_object(j, o, keys)) || (rc = ju_str(j, o, "kernel", 0, name, sizeof name)) ||
        (rc = ju_str(j, o, "device", JU_OPT, k->device, sizeof k->device)))
        return rc;
    int elsewhere = cJSON_GetObjectItemCaseSensitive(o, "measured_ms") != NULL; /* imported: no native run */
    int t = vk_kind_from_name(name);
    if (t < 0) {
        char list[200];
        vk_kind_list(list, sizeof list);
        return ju_fail(j, "unknown kernel '%s' (known: %s)", name, list);
    }
    k->type = (enum vk_type)t;
    if (cJSON_GetObjectItemCaseSensitive(o, "precision")) {
        if ((rc = ju_str(j, o, "precision", 0, p, sizeof p)))
            return rc;
        int pi = prec_from_name(p);
        int ok = pi == P_FP32 || (k->type == VK_GEMM && (pi == P_BF16 || pi == P_FP16 || pi == P_INT8));
        if (pi < 0)
            return ju_fail(j, "unknown precision '%s'", p);
        if (!ok && !elsewhere)
            return ju_fail(j, "precision '%s': the native %s kernel runs %s (a measurement from elsewhere, with "
                              "measured_ms, may use any)",
                           p, name, k->type == VK_GEMM ? "fp32, bf16, fp16 or int8" : "fp32");
        k->prec = (enum prec)pi;
    }
    if (!elsewhere && t >= VK_NATIVE_END)
        return ju_fail(j, "kernel '%s' has no native kernel here: only a measurement from elsewhere (with measured_ms)",
                       name);
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(o, "shape");
    size_t old = ju_key(j, "shape");
    const char *allowed[12];
    int na = 0;
    for (int i = 0; i < 11 && fields[t][i].name; i++)
        allowed[na++] = fields[t][i].name;
    allowed[na] = NULL;
    if ((rc = ju_object(j, sh, allowed)))
        return rc;
    for (int i = 0; i < na; i++) {
        const struct field *f = &fields[t][i];
        long long v = f->dflt;
        if (f->off == offsetof(struct vk, causal) && cJSON_GetObjectItemCaseSensitive(sh, "causal")) {
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(sh, "causal");
            int num = cJSON_IsNumber(c) && (c->valuedouble == 0 || c->valuedouble == 1); /* as shape strings print it */
            if (!cJSON_IsBool(c) && !num) {
                ju_key(j, "causal");
                return ju_fail(j, "expected true or false");
            }
            v = num ? c->valuedouble == 1 : cJSON_IsTrue(c);
        } else if ((rc = ju_int(j, sh, f->name, f->dflt < 0 ? 0 : JU_OPT, f->min, f->max, &v))) {
            return rc;
        }
        set_field(k, f, v);
    }
    rc = finish_case(k, j);
    ju_pop(j, old);
    if (rc)
        return rc;
    if (!elsewhere && k->type == VK_GEMM && k->b > 1)
        return ju_fail(j, "gemm: the native kernel runs one product (B = 1); a batch B > 1 only as a measurement from "
                          "elsewhere (with measured_ms)");
    if ((rc = ju_num(j, o, "measured_ms", JU_OPT | JU_POS, 1e9, &k->measured_ms)))
        return rc;
    return ju_num(j, o, "measured_mJ", JU_OPT | JU_POS, 1e12, &k->measured_mJ);
}

/* CSV import: a header names the columns (any order): kernel, shape ("M=1;N=2;K=3"), measured_ms, and
 * optionally precision (default fp32), measured_mJ, device, note, and p25_ms, p75_ms, runs (the spread
 * and count of the timed runs, as validate/gpu/kcu_run writes them: read past, not used). Each row is
 * re-expressed as a suite case, so that one checker serves both formats. */
enum { CSV_KERNEL, CSV_SHAPE, CSV_PREC, CSV_MS, CSV_MJ, CSV_DEVICE, CSV_NOTE, CSV_P25, CSV_P75, CSV_RUNS, CSV_COLS };
static const char *const csv_names[CSV_COLS + 1] = {"kernel", "shape",  "precision", "measured_ms", "measured_mJ",
                                                    "device", "note",   "p25_ms",    "p75_ms",      "runs",
                                                    NULL};
#define CSV_MAX_FIELDS 16

/* Splits line l at commas into at most CSV_MAX_FIELDS fields (in place); returns the count, or -1. */
static int csv_split(char *l, char **f)
{
    int n = 0;
    for (char *p = l;;) {
        if (n == CSV_MAX_FIELDS)
            return -1;
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    size_t len = strlen(f[n - 1]);
    if (len && f[n - 1][len - 1] == '\r')
        f[n - 1][len - 1] = '\0';
    return n;
}

static int load_csv(char *text, const char *path, struct vsuite *s, struct dse_err *e)
{
    char *save = NULL, *f[CSV_MAX_FIELDS];
    int line = 0, cap = 0, col[CSV_COLS], ncols = 0;
    for (int c = 0; c < CSV_COLS; c++)
        col[c] = -1;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        line++;
        if (!*l || *l == '#' || !strcmp(l, "\r"))
            continue;
        char where[32];
        snprintf(where, sizeof where, "line %d", line);
        int n = csv_split(l, f);
        if (n < 0)
            return dse_err_set(e, DSE_EINPUT, path, where, "more than %d columns", CSV_MAX_FIELDS);
        if (!ncols) { /* the header */
            for (int i = 0; i < n; i++) {
                int c = ju_lookup(csv_names, f[i]);
                if (c < 0 || col[c] >= 0) {
                    char list[160];
                    ju_list_names(csv_names, list, sizeof list);
                    return dse_err_set(e, DSE_EINPUT, path, where, "column '%.40s': %s (known: %s)", f[i],
                                       c < 0 ? "unknown" : "named twice", list);
                }
                col[c] = i;
            }
            if (col[CSV_KERNEL] < 0 || col[CSV_SHAPE] < 0 || col[CSV_MS] < 0)
                return dse_err_set(e, DSE_EINPUT, path, where,
                                   "the header must name kernel, shape and measured_ms (and may name precision, "
                                   "measured_mJ, device, note, p25_ms, p75_ms, runs)");
            ncols = n;
            continue;
        }
        if (n != ncols)
            return dse_err_set(e, DSE_EINPUT, path, where, "%d fields where the header names %d", n, ncols);
        const char *prec = col[CSV_PREC] >= 0 && *f[col[CSV_PREC]] ? f[col[CSV_PREC]] : "fp32";
        char json[1024];
        size_t at = (size_t)snprintf(json, sizeof json, "{\"kernel\":\"%.31s\",\"precision\":\"%.15s\",\"shape\":{",
                                     f[col[CSV_KERNEL]], prec);
        char *sv = NULL;
        int first = 1;
        for (char *kv = strtok_r(f[col[CSV_SHAPE]], ";", &sv); kv && at < sizeof json; kv = strtok_r(NULL, ";", &sv)) {
            char *eq = strchr(kv, '=');
            if (!eq)
                return dse_err_set(e, DSE_EINPUT, path, where, "shape: expected NAME=VALUE;..., got '%.40s'", kv);
            *eq = '\0';
            const char *val = eq + 1;
            int is_bool = !strcmp(val, "true") || !strcmp(val, "false");
            char *end;
            strtoll(val, &end, 10);
            if (!is_bool && (end == val || *end))
                return dse_err_set(e, DSE_EINPUT, path, where, "shape: %.20s: expected an integer", kv);
            at += (size_t)snprintf(json + at, sizeof json - at, "%s\"%.20s\":%.20s", first ? "" : ",", kv, val);
            first = 0;
        }
        char *end;
        const char *ms_s = f[col[CSV_MS]];
        double ms = strtod(ms_s, &end);
        if (end == ms_s || *end || !(ms > 0) || !isfinite(ms))
            return dse_err_set(e, DSE_EINPUT, path, where, "measured_ms: expected a positive number, got '%.30s'", ms_s);
        if (at < sizeof json)
            at += (size_t)snprintf(json + at, sizeof json - at, "},\"measured_ms\":%.17g", ms);
        if (col[CSV_MJ] >= 0 && *f[col[CSV_MJ]]) {
            const char *mj_s = f[col[CSV_MJ]];
            double mj = strtod(mj_s, &end);
            if (end == mj_s || *end || !(mj > 0) || !isfinite(mj))
                return dse_err_set(e, DSE_EINPUT, path, where, "measured_mJ: expected a positive number, got '%.30s'",
                                   mj_s);
            if (at < sizeof json)
                at += (size_t)snprintf(json + at, sizeof json - at, ",\"measured_mJ\":%.17g", mj);
        }
        if (col[CSV_DEVICE] >= 0 && *f[col[CSV_DEVICE]]) {
            const char *dv = f[col[CSV_DEVICE]];
            for (const char *c = dv; *c; c++)
                if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
                    return dse_err_set(e, DSE_EINPUT, path, where, "device: unexpected character in '%.40s'", dv);
            if (at < sizeof json)
                at += (size_t)snprintf(json + at, sizeof json - at, ",\"device\":\"%.63s\"", dv);
        }
        if (at < sizeof json)
            snprintf(json + at, sizeof json - at, "}");
        if (at >= sizeof json)
            return dse_err_set(e, DSE_EINPUT, path, where, "row too long");
        cJSON *o;
        int rc = ju_parse(json, strlen(json), path, &o, e);
        if (rc)
            return dse_err_set(e, DSE_EINPUT, path, where, "cannot read the row");
        if (s->n == cap) {
            cap = cap ? cap * 2 : 16;
            struct vk *nk = realloc(s->k, sizeof *nk * (size_t)cap);
            if (!nk) {
                cJSON_Delete(o);
                return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
            }
            s->k = nk;
        }
        struct ju j;
        ju_init(&j, path, e);
        ju_key(&j, where);
        rc = load_case(&j, o, &s->k[s->n]);
        cJSON_Delete(o);
        if (rc)
            return rc;
        s->n++;
    }
    return s->n ? DSE_OK : dse_err_set(e, DSE_EINPUT, path, NULL, "no rows");
}

/* The kernels[] of a `dse validate --json` or `dse calibrate --json` result (name, shape as
 * "M=1,N=2,K=3", precision, measured_ms) become CSV rows, so that one checker serves all formats. */
static int load_result(const cJSON *root, const char *path, struct vsuite *s, struct dse_err *e)
{
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "kernels");
    int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1;
    if (n < 1 || n > 100000)
        return dse_err_set(e, DSE_EINPUT, path, "kernels", "expected an array of 1 to 100000 measured kernels");
    size_t cap = 64 + (size_t)n * 420, at = 0;
    char *csv = malloc(cap);
    if (!csv)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    at += (size_t)snprintf(csv, cap, "kernel,shape,precision,measured_ms,measured_mJ,device\n");
    const cJSON *k = arr->child; /* walked, not indexed: cJSON_GetArrayItem is O(i) */
    for (int i = 0; i < n; i++, k = k->next) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(k, "name"),
                    *sh = cJSON_GetObjectItemCaseSensitive(k, "shape"),
                    *pr = cJSON_GetObjectItemCaseSensitive(k, "precision"),
                    *ms = cJSON_GetObjectItemCaseSensitive(k, "measured_ms"),
                    *mj = cJSON_GetObjectItemCaseSensitive(k, "measured_mJ"),
                    *dv = cJSON_GetObjectItemCaseSensitive(k, "device");
        if (!cJSON_IsString(nm) || !cJSON_IsString(sh) || !cJSON_IsString(pr) || !cJSON_IsNumber(ms) ||
            strlen(nm->valuestring) > 31 || strlen(sh->valuestring) > 200 || strlen(pr->valuestring) > 15 ||
            strpbrk(nm->valuestring, ",\n") || strpbrk(sh->valuestring, ";\n") || strpbrk(pr->valuestring, ",\n") ||
            (mj && !cJSON_IsNumber(mj)) ||
            (dv && (!cJSON_IsString(dv) || strlen(dv->valuestring) >= HW_NAME_LEN || strpbrk(dv->valuestring, ",\n")))) {
            char where[32];
            snprintf(where, sizeof where, "kernels[%d]", i);
            free(csv);
            return dse_err_set(e, DSE_EINPUT, path, where,
                               "expected name, shape, precision (short strings), measured_ms and optionally measured_mJ "
                               "and device, as dse validate --json writes");
        }
        char shape[208];
        dse_strlcpy(shape, sh->valuestring, sizeof shape);
        for (char *c = strchr(shape, ','); c; c = strchr(c, ','))
            *c = ';';
        char mjs[32] = "";
        if (mj)
            snprintf(mjs, sizeof mjs, "%.17g", mj->valuedouble);
        at += (size_t)snprintf(csv + at, cap - at, "%s,%s,%s,%.17g,%s,%s\n", nm->valuestring, shape, pr->valuestring,
                               ms->valuedouble, mjs, dv ? dv->valuestring : "");
    }
    int rc = load_csv(csv, path, s, e);
    free(csv);
    return rc;
}

int vsuite_load(const char *path, struct vsuite *s, struct dse_err *e)
{
    char *buf;
    size_t len;
    memset(s, 0, sizeof *s);
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    if (!rc)
        rc = vsuite_load_buf(buf, len, path, s, e);
    free(buf);
    return rc;
}

int vsuite_load_buf(const char *text, size_t len, const char *path, struct vsuite *s, struct dse_err *e)
{
    int rc;
    memset(s, 0, sizeof *s);
    dse_strlcpy(s->path, path, sizeof s->path);
    size_t pl = strlen(path);
    const char *base = strrchr(path, '/');
    dse_strlcpy(s->name, base ? base + 1 : path, sizeof s->name);
    if (pl > 4 && !strcmp(path + pl - 4, ".csv")) {
        char *buf = malloc(len + 1); /* load_csv cuts the text in place */
        if (!buf)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        memcpy(buf, text, len);
        buf[len] = '\0';
        if (!(rc = ju_text_check(buf, len, path, e)))
            rc = load_csv(buf, path, s, e);
        free(buf);
        if (rc)
            vsuite_free(s);
        return rc;
    }
    cJSON *root;
    rc = ju_parse(text, len, path, &root, e);
    if (rc)
        return rc;
    const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "kernels"), 0);
    if (cJSON_GetObjectItemCaseSensitive(first, "name") && !cJSON_GetObjectItemCaseSensitive(first, "kernel")) {
        /* a result of dse validate --json or dse calibrate --json */
        rc = load_result(root, path, s, e);
        cJSON_Delete(root);
        if (rc)
            vsuite_free(s);
        return rc;
    }
    static const char *const keys[] = {"name", "description", "note", "kernels", NULL};
    struct ju j;
    const cJSON *arr;
    int n;
    ju_init(&j, path, e);
    if ((rc = ju_object(&j, root, keys)) || (rc = ju_str(&j, root, "name", JU_OPT, s->name, sizeof s->name)) ||
        (rc = ju_array(&j, root, "kernels", 0, 100000, &arr, &n)))
        goto out;
    s->k = calloc((size_t)(n ? n : 1), sizeof *s->k);
    if (!s->k) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    ju_key(&j, "kernels");
    if (n == 0)
        rc = ju_fail(&j, "expected at least one kernel case");
    const cJSON *kc = arr ? arr->child : NULL;
    for (int i = 0; i < n && !rc; i++, kc = kc->next) {
        size_t o2 = ju_idx(&j, i);
        rc = load_case(&j, kc, &s->k[i]);
        ju_pop(&j, o2);
        if (!rc)
            s->n = i + 1;
    }
out:
    cJSON_Delete(root);
    if (rc)
        vsuite_free(s);
    return rc;
}

void vsuite_free(struct vsuite *s)
{
    free(s->k);
    memset(s, 0, sizeof *s);
}

