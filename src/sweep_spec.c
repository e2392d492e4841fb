/* sweep_spec.c -- reading and checking a sweep spec (sweeps/README.md). Paths in a spec are taken
 * as given, else relative to the directory above the spec's folder (the repository root for
 * sweeps/x.json), else under the installed data directory; a bare name NAME means
 * hwdesc/NAME.json or models/NAME.json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonu.h"
#include "sweep.h"

#ifndef DSE_DATADIR
#define DSE_DATADIR "/usr/local/share/dse"
#endif

static unsigned long long fnv1a(const char *s, size_t n)
{
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Resolves name (a path or a bare name in dir) against the spec's location. */
static int resolve(const char *spec_path, const char *dir, const char *name, const char *const *exts, char *out,
                   size_t n)
{
    char root[512];
    const char *slash = strrchr(spec_path, '/');
    if (slash) { /* the directory above the spec's folder */
        snprintf(root, sizeof root, "%.*s/..", (int)(slash - spec_path), spec_path);
    } else {
        snprintf(root, sizeof root, "..");
    }
    const char *bases[3] = {".", root, DSE_DATADIR};
    for (int b = 0; b < 3; b++) {
        snprintf(out, n, "%s/%s", bases[b], name);
        if (b == 0)
            snprintf(out, n, "%s", name);
        if (is_file(out))
            return 0;
        for (int k = 0; exts[k] && !strchr(name, '/'); k++) {
            snprintf(out, n, "%s/%s/%s%s", bases[b], dir, name, exts[k]);
            if (is_file(out))
                return 0;
        }
    }
    snprintf(out, n, "%s", name);
    return -1;
}

static int load_workload(struct ju *j, const cJSON *o, const char *spec_path, struct sw_workload *w)
{
    static const char *const keys[] = {"model", "phase", "prompt", "generate", "note", NULL};
    static const char *const exts[] = {".json", ".csv", NULL};
    char name[256], ph[32];
    int rc;
    long long v;
    struct dse_err *e = j->e;
    if ((rc = ju_object(j, o, keys)) || (rc = ju_str(j, o, "model", 0, name, sizeof name)))
        return rc;
    if (resolve(spec_path, "models", name, exts, w->path, sizeof w->path)) {
        size_t old = ju_key(j, "model");
        rc = ju_fail(j, "no such workload '%s' (a path, or a name in models/)", name);
        ju_pop(j, old);
        return rc;
    }
    if ((rc = wl_load_file(w->path, &w->model, e)))
        return rc;
    char *text;
    size_t len;
    if ((rc = ju_read_file(w->path, JU_MAX_FILE_BYTES, &text, &len, e)))
        return rc;
    w->hash = fnv1a(text, len);
    free(text);
    int lm = wl_model_is_lm(&w->model);
    w->phase = lm ? PH_GENERATE : PH_NONE;
    if (cJSON_GetObjectItemCaseSensitive(o, "phase")) {
        if ((rc = ju_str(j, o, "phase", 0, ph, sizeof ph)))
            return rc;
        int p = ju_lookup(wl_phase_names, ph);
        if (p <= 0 || !lm) {
            size_t old = ju_key(j, "phase");
            rc = ju_fail(j, lm ? "expected prefill, decode or generate, got '%s'"
                               : "'%s': phases apply to decoder language models only",
                         ph);
            ju_pop(j, old);
            return rc;
        }
        w->phase = (enum wl_phase)p;
    }
    v = lm ? 512 : 128;
    if ((rc = ju_int(j, o, "prompt", JU_OPT, 1, 10000000, &v)))
        return rc;
    w->prompt = v;
    v = 128;
    if ((rc = ju_int(j, o, "generate", JU_OPT, 1, 100000, &v)))
        return rc;
    w->gen = v;
    return DSE_OK;
}

static int axis_kind(const char *name, enum sw_axis_kind *k)
{
    static const char *const names[] = {"precision", "batch", "placement", "memory_GB", "power_W", "fidelity", NULL};
    static const enum sw_axis_kind kinds[] = {AX_PRECISION, AX_BATCH, AX_PLACEMENT, AX_MEMORY, AX_POWER, AX_FIDELITY};
    int i = ju_lookup(names, name);
    if (i >= 0) {
        *k = kinds[i];
        return 0;
    }
    if (!strncmp(name, "hw:", 3) && name[3]) {
        *k = AX_HW;
        return 0;
    }
    return -1;
}

static int load_axis(struct ju *j, const cJSON *arr, const char *name, struct sw_axis *a)
{
    int n = cJSON_GetArraySize(arr), rc = DSE_OK;
    if (!cJSON_IsArray(arr) || n < 1 || n > SW_MAX_VALUES)
        return ju_fail(j, "expected an array of 1 to %d values", SW_MAX_VALUES);
    a->v = calloc((size_t)n, sizeof *a->v);
    if (!a->v)
        return dse_err_set(j->e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    a->n = n;
    a->numeric = 1;
    dse_strlcpy(a->name, name, sizeof a->name);
    if (a->kind == AX_HW)
        dse_strlcpy(a->path, name + 3, sizeof a->path);
    for (int i = 0; i < n && !rc; i++) {
        const cJSON *x = cJSON_GetArrayItem(arr, i);
        struct sw_value *v = &a->v[i];
        size_t old = ju_idx(j, i);
        if (cJSON_IsNumber(x)) {
            v->is_num = 1;
            v->num = x->valuedouble;
            snprintf(v->s, sizeof v->s, "%.17g", v->num);
            int need_int = a->kind == AX_BATCH;
            if (need_int && (v->num != (long long)v->num || v->num < 1 || v->num > 1000000))
                rc = ju_fail(j, "expected an integer batch size in [1, 1000000], got %g", v->num);
            else if ((a->kind == AX_MEMORY || a->kind == AX_POWER) && !(v->num > 0 && v->num < 1e9))
                rc = ju_fail(j, "expected a positive number, got %g", v->num);
            else if (a->kind == AX_PRECISION || a->kind == AX_PLACEMENT || a->kind == AX_FIDELITY)
                rc = ju_fail(j, "expected a string");
        } else if (cJSON_IsString(x) && x->valuestring[0] && strlen(x->valuestring) < sizeof v->s) {
            a->numeric = 0;
            dse_strlcpy(v->s, x->valuestring, sizeof v->s);
            if (a->kind == AX_BATCH || a->kind == AX_MEMORY || a->kind == AX_POWER)
                rc = ju_fail(j, "expected a number, got \"%s\"", v->s);
            else if (a->kind == AX_FIDELITY && ju_lookup(fidelity_names, v->s) < 0)
                rc = ju_fail(j, "expected analytical or cycle, got \"%s\"", v->s);
            else if (a->kind == AX_PRECISION) {
                struct prec_cfg pc;
                if (prec_parse(v->s, &pc, j->e))
                    rc = ju_fail(j, "%s", strstr(j->e->msg, "'") ? strstr(j->e->msg, "'") : j->e->msg);
            }
        } else {
            rc = ju_fail(j, "expected a number or a non-empty string of at most %zu characters", sizeof v->s - 1);
        }
        for (int k = 0; k < i && !rc; k++)
            if (!strcmp(a->v[k].s, v->s))
                rc = ju_fail(j, "value %s given twice", v->s);
        ju_pop(j, old);
    }
    return rc;
}

static int add_list_axis(struct sweep_spec *sp, enum sw_axis_kind kind, const char *name, int n, int spec_pos,
                         struct dse_err *e)
{
    struct sw_axis *a = &sp->axes[sp->n_axes++];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->n = n;
    a->spec_pos = spec_pos;
    dse_strlcpy(a->name, name, sizeof a->name);
    a->v = calloc((size_t)n, sizeof *a->v);
    if (!a->v)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (int i = 0; i < n; i++) {
        const char *p = kind == AX_SYSTEM ? sp->system_path[i] : sp->wl[i].path;
        const char *base = strrchr(p, '/');
        dse_strlcpy(a->v[i].s, base ? base + 1 : p, sizeof a->v[i].s);
        char *dot = strrchr(a->v[i].s, '.');
        if (dot)
            *dot = '\0';
    }
    return DSE_OK;
}

int sweep_spec_load(const char *path, struct sweep_spec *sp, struct dse_err *e)
{
    static const char *const keys[] = {"name", "description", "note", "workload", "system", "axes", "objectives",
                                       "constraints", "search", "fidelity", NULL};
    char *buf = NULL;
    size_t len;
    cJSON *root = NULL;
    struct ju j;
    int rc;
    memset(sp, 0, sizeof *sp);
    dse_strlcpy(sp->path, path, sizeof sp->path);
    if ((rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e)))
        return rc;
    sp->text = buf;
    sp->hash = fnv1a(buf, len);
    if ((rc = ju_parse(buf, len, path, &root, e)))
        goto out;
    ju_init(&j, path, e);
    if ((rc = ju_object(&j, root, keys)) || (rc = ju_str(&j, root, "name", 0, sp->name, sizeof sp->name)) ||
        (rc = ju_str(&j, root, "description", JU_OPT, sp->description, sizeof sp->description)))
        goto out;
    for (const char *c = sp->name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
              *c == '-' || *c == '.')) {
            ju_key(&j, "name");
            rc = ju_fail(&j, "use letters, digits, '_', '-' and '.' only (it names results/<name>.db)");
            goto out;
        }

    if (cJSON_GetObjectItemCaseSensitive(root, "fidelity")) {
        char f[16];
        if ((rc = ju_str(&j, root, "fidelity", 0, f, sizeof f)))
            goto out;
        int fi = ju_lookup(fidelity_names, f);
        if (fi < 0) {
            ju_key(&j, "fidelity");
            rc = ju_fail(&j, "expected \"analytical\" or \"cycle\", got \"%s\"", f);
            goto out;
        }
        sp->fidelity = (enum fidelity)fi;
    }

    /* system: one path or a list (then an axis) */
    const cJSON *sys = cJSON_GetObjectItemCaseSensitive(root, "system");
    static const char *const hw_ext[] = {".json", NULL};
    ju_key(&j, "system");
    if (!sys) {
        rc = ju_fail(&j, "missing (a hwdesc path or name, or a list of them)");
        goto out;
    }
    int ns = cJSON_IsArray(sys) ? cJSON_GetArraySize(sys) : 1;
    if (ns < 1 || ns > SW_MAX_SYSTEMS) {
        rc = ju_fail(&j, "expected 1 to %d systems", SW_MAX_SYSTEMS);
        goto out;
    }
    for (int i = 0; i < ns; i++) {
        const cJSON *s = cJSON_IsArray(sys) ? cJSON_GetArrayItem(sys, i) : sys;
        size_t o2 = cJSON_IsArray(sys) ? ju_idx(&j, i) : j.len;
        if (!cJSON_IsString(s) || !s->valuestring[0]) {
            rc = ju_fail(&j, "expected a hwdesc path or name");
            goto out;
        }
        if (resolve(path, "hwdesc", s->valuestring, hw_ext, sp->system_path[i], sizeof sp->system_path[i])) {
            rc = ju_fail(&j, "no such hwdesc '%s' (a path, or a name in hwdesc/)", s->valuestring);
            goto out;
        }
        size_t slen;
        if ((rc = ju_read_file(sp->system_path[i], JU_MAX_FILE_BYTES, &sp->system_text[i], &slen, e)))
            goto out;
        sp->system_hash[i] = fnv1a(sp->system_text[i], slen);
        ju_pop(&j, o2);
    }
    sp->n_systems = ns;
    ju_pop(&j, 0);

    /* workload: one object or a list (then an axis) */
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(root, "workload");
    ju_key(&j, "workload");
    if (!wl) {
        rc = ju_fail(&j, "missing (an object with model, phase, prompt, generate, or a list of them)");
        goto out;
    }
    int nw = cJSON_IsArray(wl) ? cJSON_GetArraySize(wl) : 1;
    if (nw < 1 || nw > SW_MAX_WORKLOADS) {
        rc = ju_fail(&j, "expected 1 to %d workloads", SW_MAX_WORKLOADS);
        goto out;
    }
    for (int i = 0; i < nw; i++) {
        size_t o2 = cJSON_IsArray(wl) ? ju_idx(&j, i) : j.len;
        sp->n_workloads = i + 1; /* so that a half-loaded model is freed on error */
        if ((rc = load_workload(&j, cJSON_IsArray(wl) ? cJSON_GetArrayItem(wl, i) : wl, path, &sp->wl[i])))
            goto out;
        ju_pop(&j, o2);
    }
    ju_pop(&j, 0);

    /* axes, in spec order; system and workload lists come first */
    int pos = 0;
    if (ns > 1 && (rc = add_list_axis(sp, AX_SYSTEM, "system", ns, pos++, e)))
        goto out;
    if (nw > 1 && (rc = add_list_axis(sp, AX_WORKLOAD, "workload", nw, pos++, e)))
        goto out;
    const cJSON *axes = cJSON_GetObjectItemCaseSensitive(root, "axes");
    ju_key(&j, "axes");
    if (axes && !cJSON_IsObject(axes)) {
        rc = ju_fail(&j, "expected an object of axis name -> list of values");
        goto out;
    }
    int mem_axis = -1;
    for (const cJSON *a = axes ? axes->child : NULL; a; a = a->next) {
        size_t o2 = ju_key(&j, a->string);
        enum sw_axis_kind k;
        if (axis_kind(a->string, &k)) {
            rc = ju_fail(&j, "unknown axis (known: precision, batch, placement, memory_GB, power_W, fidelity, hw:PATH)");
            goto out;
        }
        for (int i = 0; i < sp->n_axes; i++)
            if (!strcmp(sp->axes[i].name, a->string)) {
                rc = ju_fail(&j, "axis given twice");
                goto out;
            }
        if (sp->n_axes >= SW_MAX_AXES) {
            rc = ju_fail(&j, "more than %d axes", SW_MAX_AXES);
            goto out;
        }
        struct sw_axis *ax = &sp->axes[sp->n_axes];
        memset(ax, 0, sizeof *ax);
        ax->kind = k;
        ax->spec_pos = pos++;
        sp->n_axes++;
        if ((rc = load_axis(&j, a, a->string, ax)))
            goto out;
        if (k == AX_MEMORY)
            mem_axis = sp->n_axes - 1;
        ju_pop(&j, o2);
    }
    ju_pop(&j, 0);
    if (mem_axis >= 0 && mem_axis != sp->n_axes - 1) { /* evaluation order: memory last */
        struct sw_axis m = sp->axes[mem_axis];
        memmove(&sp->axes[mem_axis], &sp->axes[mem_axis + 1], sizeof m * (size_t)(sp->n_axes - 1 - mem_axis));
        sp->axes[sp->n_axes - 1] = m;
    }
    double pts = 1;
    for (int i = 0; i < sp->n_axes; i++)
        pts *= sp->axes[i].n;
    sp->points = pts > 9e18 ? 9000000000000000000LL : (long long)pts; /* checked against the limit before use */

    /* objectives */
    const cJSON *arr;
    int n;
    if ((rc = ju_array(&j, root, "objectives", 0, SW_MAX_OBJ, &arr, &n)))
        goto out;
    ju_key(&j, "objectives");
    if (n < 1) {
        rc = ju_fail(&j, "expected 1 to %d objectives", SW_MAX_OBJ);
        goto out;
    }
    static const char *const okeys[] = {"metric", "goal", NULL};
    for (int i = 0; i < n; i++) {
        const cJSON *o = cJSON_GetArrayItem(arr, i);
        char m[64], g[8];
        size_t o2 = ju_idx(&j, i);
        if ((rc = ju_object(&j, o, okeys)) || (rc = ju_str(&j, o, "metric", 0, m, sizeof m)) ||
            (rc = ju_str(&j, o, "goal", 0, g, sizeof g)))
            goto out;
        const struct metric *mt = metric_find(m);
        if (!mt) {
            rc = ju_fail(&j, "unknown metric '%s' (see docs/models.md or dse help sweep for the registry)", m);
            goto out;
        }
        if (strcmp(g, "min") && strcmp(g, "max")) {
            rc = ju_fail(&j, "goal: expected \"min\" or \"max\", got \"%s\"", g);
            goto out;
        }
        for (int w = 0; w < sp->n_workloads; w++)
            if (!metric_applies(mt, sp->wl[w].phase)) {
                rc = ju_fail(&j, "metric %s does not apply to workload %s (phase %s)", m, sp->wl[w].model.name,
                             wl_phase_names[sp->wl[w].phase]);
                goto out;
            }
        sp->obj[i].m = mt;
        sp->obj[i].maximize = g[1] == 'a';
        ju_pop(&j, o2);
    }
    sp->n_obj = n;
    ju_pop(&j, 0);

    /* constraints */
    if ((rc = ju_array(&j, root, "constraints", JU_OPT, SW_MAX_CONSTRAINTS, &arr, &n)))
        goto out;
    ju_key(&j, "constraints");
    static const char *const ckeys[] = {"metric", "le", "ge", NULL};
    for (int i = 0; i < n; i++) {
        const cJSON *o = cJSON_GetArrayItem(arr, i);
        char m[64];
        size_t o2 = ju_idx(&j, i);
        if ((rc = ju_object(&j, o, ckeys)) || (rc = ju_str(&j, o, "metric", 0, m, sizeof m)))
            goto out;
        if (!(sp->con[i].m = metric_find(m))) {
            rc = ju_fail(&j, "unknown metric '%s'", m);
            goto out;
        }
        int hl = cJSON_GetObjectItemCaseSensitive(o, "le") != NULL, hg = cJSON_GetObjectItemCaseSensitive(o, "ge") != NULL;
        if (hl == hg) {
            rc = ju_fail(&j, "expected exactly one of le and ge");
            goto out;
        }
        sp->con[i].le = hl;
        if ((rc = ju_num(&j, o, hl ? "le" : "ge", 0, 0, &sp->con[i].bound)))
            goto out;
        ju_pop(&j, o2);
    }
    sp->n_con = n;
    ju_pop(&j, 0);

    /* search */
    const cJSON *se = cJSON_GetObjectItemCaseSensitive(root, "search");
    sp->method = SEARCH_GRID;
    sp->seed = 1;
    if (se) {
        static const char *const skeys[] = {"method", "samples", "seed", "population", "generations", "limit", NULL};
        static const char *const methods[] = {"grid", "random", "nsga2", NULL};
        char m[16];
        long long v;
        ju_key(&j, "search");
        if ((rc = ju_object(&j, se, skeys)) || (rc = ju_str(&j, se, "method", 0, m, sizeof m)))
            goto out;
        int mi = ju_lookup(methods, m);
        if (mi < 0) {
            rc = ju_fail(&j, "method: expected grid, random or nsga2, got \"%s\"", m);
            goto out;
        }
        sp->method = (enum sw_method)mi;
        v = 1;
        if ((rc = ju_int(&j, se, "seed", JU_OPT, 0, 4294967295LL, &v)))
            goto out;
        sp->seed = (unsigned long)v;
        if (mi == SEARCH_RANDOM && (rc = ju_int(&j, se, "samples", 0, 1, 100000000LL, &sp->samples)))
            goto out;
        if (mi == SEARCH_NSGA2 && ((rc = ju_int(&j, se, "population", 0, 4, 100000, &sp->population)) ||
                                   (rc = ju_int(&j, se, "generations", 0, 1, 100000, &sp->generations))))
            goto out;
        if (mi == SEARCH_NSGA2 && sp->population % 2) {
            ju_key(&j, "population");
            rc = ju_fail(&j, "expected an even number, got %lld", sp->population);
            goto out;
        }
        for (const char *k = mi == SEARCH_GRID ? "samples" : NULL; k; k = NULL)
            if (cJSON_GetObjectItemCaseSensitive(se, k)) {
                rc = ju_fail(&j, "samples applies to method random");
                goto out;
            }
        ju_pop(&j, 0);
    }
out:
    cJSON_Delete(root);
    if (rc)
        sweep_spec_free(sp);
    return rc;
}

void sweep_spec_free(struct sweep_spec *sp)
{
    free(sp->text);
    for (int i = 0; i < SW_MAX_SYSTEMS; i++)
        free(sp->system_text[i]);
    for (int i = 0; i < sp->n_workloads; i++)
        wl_model_free(&sp->wl[i].model);
    for (int i = 0; i < sp->n_axes; i++)
        free(sp->axes[i].v);
    memset(sp, 0, sizeof *sp);
}
