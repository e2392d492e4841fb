/* errbar.c -- reading the error-bar table (validate/published/error-bars.json, written by dse validate
 * --published --write-error-bars) and looking up a prediction's interval. */
#include "errbar.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonu.h"


const char *const pkind_names[PK_COUNT + 1] = {"kernel", "llm-prefill", "llm-decode", "llm-generate", "cnn", "encoder",
                                               "other", NULL};

enum pkind eb_kind_of(const struct wl_model *m, enum wl_phase ph)
{
    if (wl_model_is_lm(m))
        return ph == PH_PREFILL ? PK_LLM_PREFILL : ph == PH_DECODE ? PK_LLM_DECODE : PK_LLM_GENERATE;
    if (m->kind == WLM_CNN)
        return PK_CNN;
    return m->kind == WLM_TRANSFORMER ? PK_ENCODER : PK_OTHER;
}

static int load_row(struct ju *j, const cJSON *x, struct eb_table *t)
{
    static const char *const keys[] = {"class", "kind", "n", "low_pct", "high_pct", "mape_pct", NULL};
    char cls[16], kind[16];
    long long n;
    struct eb_row *r = &t->row[t->n];
    int rc;
    if ((rc = ju_object(j, x, keys)) || (rc = ju_str(j, x, "class", 0, cls, sizeof cls)) ||
        (rc = ju_str(j, x, "kind", 0, kind, sizeof kind)) ||
        (rc = ju_int(j, x, "n", 0, EB_MIN_CASES, 1000000, &n)) ||
        (rc = ju_num(j, x, "high_pct", 0, 1e6, &r->high_pct)) ||
        (rc = ju_num(j, x, "mape_pct", JU_NONNEG, 1e6, &r->mape_pct)))
        return rc;
    /* low_pct may be negative (down to, not including, -100 %): read it by hand */
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(x, "low_pct");
    size_t old = ju_key(j, "low_pct");
    if (!cJSON_IsNumber(lo))
        rc = ju_fail(j, "%s (expected a number above -100)", lo ? "not a number" : "missing");
    else if (!(lo->valuedouble > -100) || !(lo->valuedouble <= r->high_pct)) {
        char hs[32], ls[32];
        rc = ju_fail(j, "expected a number above -100 and at most high_pct (%s), got %s",
                     ju_shortest(hs, sizeof hs, r->high_pct), ju_shortest(ls, sizeof ls, lo->valuedouble));
    }
    ju_pop(j, old);
    if (rc)
        return rc;
    r->low_pct = lo->valuedouble;
    r->n = (int)n;
    if ((r->cls = ju_lookup(hw_class_names, cls)) < 0) {
        char list[64];
        ju_list_names(hw_class_names, list, sizeof list);
        old = ju_key(j, "class");
        rc = ju_fail(j, "expected a device class (one of: %s), got '%s'", list, cls);
        ju_pop(j, old);
        return rc;
    }
    int k = strcmp(kind, "all") ? ju_lookup(pkind_names, kind) : PK_COUNT; /* (-1: unknown) */
    r->kind = k == PK_COUNT ? EB_KIND_ALL : k;
    if (k < 0) {
        char list[128];
        ju_list_names(pkind_names, list, sizeof list);
        old = ju_key(j, "kind");
        rc = ju_fail(j, "expected all or a workload kind (one of: %s), got '%s'", list, kind);
        ju_pop(j, old);
        return rc;
    }
    for (int i = 0; i < t->n; i++)
        if (t->row[i].cls == r->cls && t->row[i].kind == r->kind)
            return ju_fail(j, "class %s, kind %s is given twice (rows %d and %d)", cls, kind, i, t->n);
    t->n++;
    return DSE_OK;
}

int eb_load_buf(const char *buf, unsigned long len, const char *fname, struct eb_table *t, struct dse_err *e)
{
    static const char *const keys[] = {"schema", "tier", "source", "classes", NULL};
    cJSON *root = NULL;
    struct ju j;
    char schema[32];
    const cJSON *arr;
    int n, rc;
    memset(t, 0, sizeof *t);
    if ((rc = ju_parse(buf, len, fname, &root, e)))
        return rc;
    ju_init(&j, fname, e);
    if ((rc = ju_object(&j, root, keys)) || (rc = ju_str(&j, root, "schema", 0, schema, sizeof schema)))
        goto out;
    if (strcmp(schema, "dse-error-bars-1")) {
        ju_key(&j, "schema");
        rc = ju_fail(&j, "expected \"dse-error-bars-1\", got \"%s\"", schema);
        goto out;
    }
    if ((rc = ju_str(&j, root, "tier", 0, t->tier, sizeof t->tier)) ||
        (rc = ju_str(&j, root, "source", 0, t->source, sizeof t->source)) ||
        (rc = ju_array(&j, root, "classes", 0, EB_MAX_ROWS, &arr, &n)))
        goto out;
    if (strcmp(t->tier, "analytical") && strcmp(t->tier, "cycle")) {
        ju_key(&j, "tier");
        rc = ju_fail(&j, "expected analytical or cycle, got '%s'", t->tier);
        goto out;
    }
    size_t old = ju_key(&j, "classes");
    for (int i = 0; i < n && !rc; i++) {
        size_t o2 = ju_idx(&j, i);
        rc = load_row(&j, cJSON_GetArrayItem(arr, i), t);
        ju_pop(&j, o2);
    }
    ju_pop(&j, old);
    dse_strlcpy(t->path, fname, sizeof t->path);
out:
    cJSON_Delete(root);
    if (rc)
        memset(t, 0, sizeof *t);
    return rc;
}

int eb_load_file(const char *path, struct eb_table *t, struct dse_err *e)
{
    char *buf;
    size_t len;
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    if (rc)
        return rc;
    rc = eb_load_buf(buf, len, path, t, e);
    free(buf);
    return rc;
}

int eb_resolve(const char *near_file, char *out, size_t n)
{
    char root[512] = "..";
    const char *slash = near_file ? strrchr(near_file, '/') : NULL;
    if (slash)
        snprintf(root, sizeof root, "%.*s/..", (int)(slash - near_file), near_file);
    const char *bases[2 + JU_MAX_DATA_DIRS] = {".", root};
    char dirs[JU_DATA_DIRS_BYTES];
    int nb = 2 + ju_data_dirs(bases + 2, JU_MAX_DATA_DIRS, dirs, sizeof dirs);
    for (int b = 0; b < nb; b++) {
        struct stat st;
        snprintf(out, n, "%s/validate/published/error-bars.json", bases[b]);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
            return 1;
    }
    out[0] = '\0';
    return 0;
}

const struct eb_row *eb_find(const struct eb_table *t, enum hw_class cls, enum pkind k, int *fallback)
{
    const struct eb_row *all = NULL;
    *fallback = 0;
    for (int i = 0; t && i < t->n; i++) {
        if (t->row[i].cls != (int)cls)
            continue;
        if (t->row[i].kind == (int)k)
            return &t->row[i];
        if (t->row[i].kind == EB_KIND_ALL)
            all = &t->row[i];
    }
    *fallback = all != NULL;
    return all;
}

double eb_pessimistic(double v, int e, double low_pct)
{
    if (!e || !isfinite(v))
        return v;
    double f = 1 + low_pct / 100; /* predicted / true time at that end */
    return e > 0 ? v / f : v * f;
}
