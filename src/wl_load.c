/* wl_load.c -- reading model descriptions: graph JSON (models/README.md), HuggingFace-style
 * transformer configs, CNN builder specs and SCALE-Sim topology CSV files; wl_build() dispatch. */
#include "wl.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonu.h"

/* A shape entry is a positive integer or one of the strings "B" (the batch size), "S" (the step's new
 * tokens) and "P" (tokens already cached). */
static int load_shape(struct ju *j, const cJSON *t, int *rank, int64_t *dim)
{
    const cJSON *arr;
    int n, rc;
    if ((rc = ju_array(j, t, "shape", 0, WL_MAX_RANK, &arr, &n)))
        return rc;
    size_t old = ju_key(j, "shape");
    for (int i = 0; i < n && !rc; i++) {
        const cJSON *v = cJSON_GetArrayItem(arr, i);
        size_t o2 = ju_idx(j, i);
        if (cJSON_IsString(v) && strcmp(v->valuestring, "B") == 0)
            dim[i] = WL_BATCH_DIM;
        else if (cJSON_IsString(v) && strcmp(v->valuestring, "S") == 0)
            dim[i] = WL_SEQ_DIM;
        else if (cJSON_IsString(v) && strcmp(v->valuestring, "P") == 0)
            dim[i] = WL_PAST_DIM;
        else if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1) || v->valuedouble > WL_MAX_DIM ||
                 v->valuedouble != (double)(int64_t)v->valuedouble)
            rc = ju_fail(j, "expected a positive integer up to %g, or \"B\" (batch), \"S\" (new tokens) or \"P\" "
                         "(cached tokens)", WL_MAX_DIM);
        else
            dim[i] = (int64_t)v->valuedouble;
        ju_pop(j, o2);
    }
    ju_pop(j, old);
    *rank = n;
    return rc;
}

/* An attribute given as N or [H, W]. */
static int load_pair(struct ju *j, const cJSON *o, const char *key, int min, int *h, int *w)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v)
        return DSE_OK;
    size_t old = ju_key(j, key);
    int rc = DSE_OK;
    double a, b;
    if (cJSON_IsNumber(v)) {
        a = b = v->valuedouble;
    } else if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2 && cJSON_IsNumber(cJSON_GetArrayItem(v, 0)) &&
               cJSON_IsNumber(cJSON_GetArrayItem(v, 1))) {
        a = cJSON_GetArrayItem(v, 0)->valuedouble;
        b = cJSON_GetArrayItem(v, 1)->valuedouble;
    } else {
        rc = ju_fail(j, "expected an integer or [height, width]");
        goto out;
    }
    /* the range first: converting a double outside int's range is undefined */
    if (!(a >= min && b >= min && a <= 65536 && b <= 65536) || a != (int)a || b != (int)b)
        rc = ju_fail(j, "expected integers in [%d, 65536]", min);
    else {
        *h = (int)a;
        *w = (int)b;
    }
out:
    ju_pop(j, old);
    return rc;
}

static int tensor_refs(struct ju *j, const cJSON *o, const char *key, const struct wl_graph *g, int max, int *idx,
                       int *n)
{
    const cJSON *arr;
    int rc = ju_array(j, o, key, 0, max, &arr, n);
    if (rc)
        return rc;
    size_t old = ju_key(j, key);
    if (*n == 0)
        rc = ju_fail(j, "expected at least one tensor name");
    for (int i = 0; i < *n && !rc; i++) {
        const cJSON *s = cJSON_GetArrayItem(arr, i);
        size_t o2 = ju_idx(j, i);
        if (!cJSON_IsString(s))
            rc = ju_fail(j, "expected a tensor name");
        else if ((idx[i] = wl_find_tensor(g, s->valuestring)) < 0)
            rc = ju_fail(j, "unknown tensor '%.64s' (declare it in tensors)", s->valuestring);
        ju_pop(j, o2);
    }
    ju_pop(j, old);
    return rc;
}

static int load_phases(struct ju *j, const cJSON *root, struct wl_model *m);

static int load_graph_json(const cJSON *root, const char *file, struct wl_model *m, struct dse_err *e)
{
    struct wl_graph *g = &m->graph;
    static const char *const keys[] = {"format", "name", "description", "source", "note", "tensors", "ops", "phases",
                                       NULL};
    static const char *const tkeys[] = {"name", "shape", "kind", "note", NULL};
    static const char *const okeys[] = {"name",   "type", "inputs", "outputs", "fn",    "stride", "padding", "perm",
                                        "groups", "kernel", "pool",  "heads",  "causal", "axis",  "repeat",
                                        "transpose_b", "note", NULL};
    struct ju j;
    int rc, n;
    const cJSON *arr;
    char name[WL_NAME_LEN] = "graph", s[64];
    ju_init(&j, file, e);
    if ((rc = ju_object(&j, root, keys)) || (rc = ju_str(&j, root, "name", JU_OPT, name, sizeof name)))
        return rc;
    if (cJSON_GetObjectItemCaseSensitive(root, "format")) {
        if ((rc = ju_str(&j, root, "format", 0, s, sizeof s)))
            return rc;
        if (strcmp(s, "dse-graph-1") != 0) {
            ju_key(&j, "format");
            return ju_fail(&j, "expected \"dse-graph-1\", got \"%s\"", s);
        }
    }
    wl_graph_init(g, name);

    if ((rc = ju_array(&j, root, "tensors", 0, WL_MAX_TENSORS, &arr, &n)))
        return rc;
    ju_key(&j, "tensors");
    const cJSON *t = arr ? arr->child : NULL; /* walked, not indexed: cJSON_GetArrayItem is O(i) */
    for (int i = 0; i < n; i++, t = t->next) {
        size_t o2 = ju_idx(&j, i);
        char tn[WL_NAME_LEN];
        int rank = 0, kind = WL_ACT;
        int64_t dim[WL_MAX_RANK];
        if ((rc = ju_object(&j, t, tkeys)) || (rc = ju_str(&j, t, "name", 0, tn, sizeof tn)) ||
            (rc = load_shape(&j, t, &rank, dim)))
            return rc;
        if (cJSON_GetObjectItemCaseSensitive(t, "kind")) {
            if ((rc = ju_str(&j, t, "kind", 0, s, sizeof s)))
                return rc;
            if ((kind = ju_lookup(wl_kind_names, s)) < 0) {
                char list[128];
                ju_list_names(wl_kind_names, list, sizeof list);
                ju_key(&j, "kind");
                return ju_fail(&j, "unknown kind '%s' (expected one of: %s)", s, list);
            }
        }
        if (wl_add_tensor(g, tn, (enum wl_kind)kind, rank, dim, e) < 0)
            return ju_fail(&j, "%s", e->msg);
        ju_pop(&j, o2);
    }
    ju_pop(&j, 0);

    if ((rc = ju_array(&j, root, "ops", 0, WL_MAX_OPS, &arr, &n)))
        return rc;
    ju_key(&j, "ops");
    const cJSON *o = arr ? arr->child : NULL;
    for (int i = 0; i < n; i++, o = o->next) {
        size_t o2 = ju_idx(&j, i);
        char on[WL_NAME_LEN];
        int in[WL_MAX_IN], out[WL_MAX_OUT], nin = 0, nout = 0, type;
        if ((rc = ju_object(&j, o, okeys)) || (rc = ju_str(&j, o, "name", 0, on, sizeof on)) ||
            (rc = ju_str(&j, o, "type", 0, s, sizeof s)))
            return rc;
        if ((type = op_type_from_name(s)) < 0) {
            char list[200];
            op_type_list(list, sizeof list);
            ju_key(&j, "type");
            return ju_fail(&j, "unknown operator '%s' (expected one of: %s)", s, list);
        }
        if ((rc = tensor_refs(&j, o, "inputs", g, WL_MAX_IN, in, &nin)) ||
            (rc = tensor_refs(&j, o, "outputs", g, WL_MAX_OUT, out, &nout)))
            return rc;
        int k = wl_add_op(g, on, (enum op_type)type, in, nin, out, nout, e);
        if (k < 0)
            return ju_fail(&j, "%s", e->msg);
        struct wl_op *op = &g->op[k];
        long long v = 0;
        if ((rc = load_pair(&j, o, "stride", 1, &op->sh, &op->sw)) ||
            (rc = load_pair(&j, o, "padding", 0, &op->ph, &op->pw)) ||
            (rc = load_pair(&j, o, "kernel", 1, &op->kh, &op->kw)))
            return rc;
        v = 1;
        if ((rc = ju_int(&j, o, "groups", JU_OPT, 1, 1 << 20, &v)))
            return rc;
        op->groups = (int)v;
        v = 0;
        if ((rc = ju_int(&j, o, "heads", JU_OPT, 1, 1 << 16, &v)))
            return rc;
        op->heads = (int)v;
        if (type == OP_ATTENTION && !op->heads) {
            ju_key(&j, "heads");
            return ju_fail(&j, "missing (attention needs the number of query heads)");
        }
        v = 0;
        if ((rc = ju_int(&j, o, "axis", JU_OPT, 0, WL_MAX_RANK - 1, &v)))
            return rc;
        op->axis = (int)v;
        v = 1;
        if ((rc = ju_int(&j, o, "repeat", JU_OPT, 1, 1 << 20, &v)))
            return rc;
        op->count = (double)v;
        if (type == OP_TRANSPOSE) { /* perm: required, one entry per input axis (checked with the shapes) */
            const cJSON *parr;
            int pn;
            if ((rc = ju_array(&j, o, "perm", 0, WL_MAX_RANK, &parr, &pn)))
                return rc;
            size_t o3 = ju_key(&j, "perm");
            const cJSON *it = parr->child;
            for (int a = 0; a < WL_MAX_RANK; a++)
                op->perm[a] = -1;
            for (int a = 0; a < pn; a++, it = it->next) {
                double d = cJSON_IsNumber(it) ? it->valuedouble : -1;
                if (!(d >= 0 && d < WL_MAX_RANK && d == (double)(int)d)) {
                    ju_idx(&j, a);
                    return ju_fail(&j, "expected an axis index in [0, %d]", WL_MAX_RANK - 1);
                }
                op->perm[a] = (int)d;
            }
            ju_pop(&j, o3);
        } else if (cJSON_GetObjectItemCaseSensitive(o, "perm")) {
            ju_key(&j, "perm");
            return ju_fail(&j, "applies to transpose");
        }
        static const char *const flags[] = {"causal", "transpose_b"};
        for (int f = 0; f < 2; f++) {
            const cJSON *cz = cJSON_GetObjectItemCaseSensitive(o, flags[f]);
            if (!cz)
                continue;
            if (!cJSON_IsBool(cz)) {
                ju_key(&j, flags[f]);
                return ju_fail(&j, "expected true or false");
            }
            *(f ? &op->transb : &op->causal) = cJSON_IsTrue(cz);
        }
        if (cJSON_GetObjectItemCaseSensitive(o, "fn")) {
            if ((rc = ju_str(&j, o, "fn", 0, s, sizeof s)))
                return rc;
            int f = ju_lookup(wl_fn_names, s);
            if (f <= 0) {
                char list[200];
                ju_list_names(wl_fn_names + 1, list, sizeof list);
                ju_key(&j, "fn");
                return ju_fail(&j, "unknown function '%s' (expected one of: %s)", s, list);
            }
            op->fn = (enum wl_fn)f;
        }
        if (type == OP_POOL) {
            op->pool_max = 1;
            if (cJSON_GetObjectItemCaseSensitive(o, "pool")) {
                if ((rc = ju_str(&j, o, "pool", 0, s, sizeof s)))
                    return rc;
                if (strcmp(s, "max") && strcmp(s, "avg")) {
                    ju_key(&j, "pool");
                    return ju_fail(&j, "expected \"max\" or \"avg\", got \"%s\"", s);
                }
                op->pool_max = s[0] == 'm';
            }
            if (!cJSON_GetObjectItemCaseSensitive(o, "kernel"))
                op->kh = op->kw = 0; /* global pooling */
            else if (!cJSON_GetObjectItemCaseSensitive(o, "stride")) {
                op->sh = op->kh;
                op->sw = op->kw;
            }
        }
        ju_pop(&j, o2);
    }
    ju_pop(&j, 0);
    return load_phases(&j, root, m);
}

/* "phases": {"max_positions": N, "decode": [op names, or prefixes ending in "*"]}: a decoder language
 * model. Its prefill runs every op with S = the prompt and P = 0 (the caches' k_past / v_past inputs
 * dropped); each decode step runs the listed ops (default: all) with S = 1 and P = the tokens so far,
 * reading the kv tensors of P rows; what the listed ops read from the others (an encoder's output) is
 * kept from the prefill. Without it, "P" is refused and "S" is the sequence (--prompt). */
static int load_phases(struct ju *j, const cJSON *root, struct wl_model *m)
{
    static const char *const pkeys[] = {"max_positions", "decode", "note", NULL};
    struct wl_graph *g = &m->graph;
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(root, "phases");
    int rc;
    for (int i = 0; i < g->n_t; i++) { /* P: dimension 1 of a kv tensor, read by attention as its cache */
        const struct wl_tensor *t = &g->t[i];
        for (int k = 0; k < t->rank; k++)
            if (t->dim[k] == WL_PAST_DIM && (!ph || t->kind != WL_KV || k != 1)) {
                ju_key(j, "tensors");
                ju_idx(j, i);
                return ju_fail(j, "'%s': \"P\" (cached tokens) is dimension 1 of a kv tensor of a graph with "
                               "\"phases\"", t->name);
            }
    }
    for (int i = 0; i < g->n_op; i++)
        for (int k = 0; k < g->op[i].n_in; k++) {
            const struct wl_tensor *t = &g->t[g->op[i].in[k]];
            int past = t->rank > 1 && t->dim[1] == WL_PAST_DIM;
            if (past && !(g->op[i].type == OP_ATTENTION && k >= 3)) {
                ju_key(j, "ops");
                ju_idx(j, i);
                return ju_fail(j, "reads the cache '%s' (\"P\" rows): only attention does, as k_past and v_past",
                               t->name);
            }
        }
    if (!ph)
        return DSE_OK;
    size_t old = ju_key(j, "phases");
    if ((rc = ju_object(j, ph, pkeys)))
        return rc;
    long long mp = 0;
    if ((rc = ju_int(j, ph, "max_positions", 0, 1, 100000000, &mp)))
        return rc;
    m->phased = 1;
    m->tf.max_pos = mp;
    m->tf.max_pos_key = "phases.max_positions";
    const cJSON *arr;
    int n;
    if (cJSON_GetObjectItemCaseSensitive(ph, "decode")) {
        if ((rc = ju_array(j, ph, "decode", 1, WL_MAX_OPS, &arr, &n)))
            return rc;
        for (int i = 0; i < g->n_op; i++)
            g->op[i].prefill_only = 1;
        size_t o2 = ju_key(j, "decode");
        const cJSON *it = arr->child;
        for (int k = 0; k < n; k++, it = it->next) {
            size_t o3 = ju_idx(j, k);
            if (!cJSON_IsString(it))
                return ju_fail(j, "expected an op name, or a prefix ending in '*'");
            const char *pat = it->valuestring;
            size_t pl = strlen(pat);
            int star = pl && pat[pl - 1] == '*', hits = 0;
            for (int i = 0; i < g->n_op; i++)
                if (star ? strncmp(g->op[i].name, pat, pl - 1) == 0 : strcmp(g->op[i].name, pat) == 0) {
                    g->op[i].prefill_only = 0;
                    hits++;
                }
            if (!hits)
                return ju_fail(j, "'%s' names no op", pat);
            ju_pop(j, o3);
        }
        ju_pop(j, o2);
    }
    ju_pop(j, old);
    return DSE_OK;
}

/* One step of a phased graph (load_phases): prefill (past 0) without the caches, or a decode step of
 * the decode ops only, the tensors they read from the others kept as inputs. */
static int graph_phase(struct wl_graph *g, int64_t past, struct dse_err *e)
{
    char *drop = calloc((size_t)g->n_t + 1, 1);
    int *prod = malloc(sizeof *prod * ((size_t)g->n_t + 1));
    int rc = DSE_OK, n = 0;
    if (!drop || !prod) {
        free(drop);
        free(prod);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    if (past == 0) {
        for (int i = 0; i < g->n_op; i++) {
            struct wl_op *o = &g->op[i];
            if (o->type == OP_ATTENTION && o->n_in == 5 && g->t[o->in[3]].kind == WL_KV && g->t[o->in[3]].rank > 1 &&
                g->t[o->in[3]].dim[1] == 0)
                o->n_in = 3;
        }
    } else {
        for (int i = 0; i < g->n_t; i++)
            prod[i] = -1;
        for (int i = 0; i < g->n_op; i++)
            for (int k = 0; k < g->op[i].n_out; k++)
                prod[g->op[i].out[k]] = i;
        for (int i = 0; i < g->n_op; i++) {
            const struct wl_op *o = &g->op[i];
            if (o->prefill_only)
                continue;
            for (int k = 0; k < o->n_in; k++) { /* computed at prefill, kept: read as an input */
                struct wl_tensor *t = &g->t[o->in[k]];
                if (prod[o->in[k]] >= 0 && g->op[prod[o->in[k]]].prefill_only && t->kind == WL_ACT)
                    t->kind = WL_INPUT;
            }
        }
        for (int i = 0; i < g->n_op; i++)
            if (!g->op[i].prefill_only)
                g->op[n++] = g->op[i];
        g->n_op = n;
    }
    for (int i = 0; i < g->n_t; i++)
        drop[i] = 1;
    for (int i = 0; i < g->n_op; i++)
        for (int k = 0; k < g->op[i].n_in + g->op[i].n_out; k++)
            drop[k < g->op[i].n_in ? g->op[i].in[k] : g->op[i].out[k - g->op[i].n_in]] = 0;
    rc = wl_drop_tensors(g, drop, e);
    free(drop);
    free(prod);
    return rc;
}

/* ---- SCALE-Sim topology CSV ----
 * Conv mode (SCALE-Sim v2 topology_utils.py): header row, then "name, ifmap_h, ifmap_w, filter_h,
 * filter_w, channels, num_filters, stride[, stride_w]," with no padding: ofmap = ceil((in - f + s) / s). A name containing "DP" is depthwise (SCALE-Sim runs it channel by channel). GEMM mode: header
 * "Layer, M, N, K". Layers are independent: each reads its input feature map from memory. */
static int csv_fields(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        char *c = strchr(p, ',');
        if (n < max)
            f[n++] = p;
        if (!c)
            break;
        *c = '\0';
        p = c + 1;
    }
    for (int i = 0; i < n; i++) { /* trim */
        while (isspace((unsigned char)*f[i]))
            f[i]++;
        char *end = f[i] + strlen(f[i]);
        while (end > f[i] && isspace((unsigned char)end[-1]))
            *--end = '\0';
    }
    while (n > 0 && f[n - 1][0] == '\0')
        n--;
    return n;
}

static int csv_int(const char *s, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < 1 || v > 1000000000LL)
        return -1;
    *out = v;
    return 0;
}

static int load_topo_csv(const char *buf, size_t len, const char *file, struct wl_graph *g, struct dse_err *e)
{
    int rc = ju_text_check(buf, len, file, e);
    if (rc)
        return rc;
    char *text = malloc(len + 1), *save = NULL;
    int line_no = 0, gemm = -1, layers = 0;
    if (!text)
        return dse_err_set(e, DSE_ERUNTIME, file, NULL, "out of memory");
    memcpy(text, buf, len);
    text[len] = '\0';
    const char *base = strrchr(file, '/');
    char name[WL_NAME_LEN];
    dse_strlcpy(name, base ? base + 1 : file, sizeof name);
    char *dot = strrchr(name, '.');
    if (dot)
        *dot = '\0';
    wl_graph_init(g, name);
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[16], where[32];
        line_no++;
        snprintf(where, sizeof where, "line %d", line_no);
        int n = csv_fields(line, f, 16);
        if (n == 0)
            continue;
        if (gemm < 0) { /* header */
            gemm = n >= 4 && strcmp(f[1], "M") == 0 && strcmp(f[2], "N") == 0 && strcmp(f[3], "K") == 0;
            if (!gemm && (n < 8 || strncasecmp(f[1], "IFMAP", 5) != 0)) {
                rc = dse_err_set(e, DSE_EINPUT, file, where,
                                 "expected a SCALE-Sim header (\"Layer name, IFMAP Height, ...\" or \"Layer, M, N, K\")");
                break;
            }
            continue;
        }
        int64_t v[8];
        int need = gemm ? 4 : 8;
        if (n < need) {
            rc = dse_err_set(e, DSE_EINPUT, file, where, "expected at least %d fields, got %d", need, n);
            break;
        }
        int nv = gemm ? 3 : (n >= 9 && f[8][0] && isdigit((unsigned char)f[8][0]) ? 8 : 7);
        for (int i = 0; i < nv && !rc; i++)
            if (csv_int(f[i + 1], &v[i]))
                rc = dse_err_set(e, DSE_EINPUT, file, where, "field %d: expected a positive integer, got '%.20s'",
                                 i + 2, f[i + 1]);
        if (rc)
            break;
        char ln[WL_NAME_LEN], tn[WL_NAME_LEN + 8];
        dse_strlcpy(ln, f[0][0] ? f[0] : where, sizeof ln);
        int in, w, out, op;
        if (gemm) {
            int64_t a[3] = {WL_BATCH_DIM, v[0], v[2]}, b[2] = {v[2], v[1]}, c[3] = {WL_BATCH_DIM, v[0], v[1]};
            snprintf(tn, sizeof tn, "%s.in", ln);
            in = wl_add_tensor(g, tn, WL_INPUT, 3, a, e);
            snprintf(tn, sizeof tn, "%s.w", ln);
            w = in < 0 ? -1 : wl_add_tensor(g, tn, WL_WEIGHT, 2, b, e);
            snprintf(tn, sizeof tn, "%s.out", ln);
            out = w < 0 ? -1 : wl_add_tensor(g, tn, WL_ACT, 3, c, e);
            int ins[2] = {in, w};
            op = out < 0 ? -1 : wl_add_op(g, ln, OP_MATMUL, ins, 2, &out, 1, e);
        } else {
            int64_t H = v[0], W = v[1], FH = v[2], FW = v[3], C = v[4], NF = v[5], SH = v[6], SW = nv == 8 ? v[7] : v[6];
            int dw = strstr(ln, "DP") != NULL;
            if (FH > H || FW > W) {
                rc = dse_err_set(e, DSE_EINPUT, file, where, "filter %lldx%lld larger than the ifmap %lldx%lld",
                                 (long long)FH, (long long)FW, (long long)H, (long long)W);
                break;
            }
            int64_t OC = dw ? C * NF : NF;
            /* SCALE-Sim: ofmap = ceil((ifmap - filter + stride) / stride), no padding. */
            int64_t xs[4] = {WL_BATCH_DIM, C, H, W}, ws[4] = {OC, dw ? 1 : C, FH, FW},
                    ys[4] = {WL_BATCH_DIM, OC, (H - FH + SH - 1) / SH + 1, (W - FW + SW - 1) / SW + 1};
            snprintf(tn, sizeof tn, "%s.in", ln);
            in = wl_add_tensor(g, tn, WL_INPUT, 4, xs, e);
            snprintf(tn, sizeof tn, "%s.w", ln);
            w = in < 0 ? -1 : wl_add_tensor(g, tn, WL_WEIGHT, 4, ws, e);
            snprintf(tn, sizeof tn, "%s.out", ln);
            out = w < 0 ? -1 : wl_add_tensor(g, tn, WL_ACT, 4, ys, e);
            int ins[2] = {in, w};
            op = out < 0 ? -1 : wl_add_op(g, ln, OP_CONV2D, ins, 2, &out, 1, e);
            if (op >= 0) {
                g->op[op].sh = (int)SH;
                g->op[op].sw = (int)SW;
                g->op[op].groups = dw ? (int)C : 1;
                g->op[op].ceil_mode = 1;
            }
        }
        if (op < 0) {
            char msg[sizeof e->msg];
            dse_strlcpy(msg, e->msg, sizeof msg);
            rc = dse_err_set(e, DSE_EINPUT, file, where, "%s", msg);
            break;
        }
        layers++;
    }
    if (!rc && layers == 0)
        rc = dse_err_set(e, DSE_EINPUT, file, NULL, "no layers (expected a SCALE-Sim topology CSV)");
    free(text);
    return rc;
}

/* ---- CNN builder spec ---- */
static int load_cnn_spec(const cJSON *root, const char *file, struct wl_cnn *c, struct dse_err *e)
{
    static const char *const keys[] = {"generator", "variant", "name", "description", "source", "note",
                                       "image_size", "image_height", "image_width", "image_channels", "num_classes",
                                       "width_mult", "depth_mult", "published_params", "published_GMACs", NULL};
    struct ju j;
    int rc;
    long long v;
    char msg[200];
    ju_init(&j, file, e);
    if ((rc = ju_object(&j, root, keys)) || (rc = ju_str(&j, root, "generator", 0, c->arch, sizeof c->arch)) ||
        (rc = ju_str(&j, root, "variant", JU_OPT, c->variant, sizeof c->variant)))
        return rc;
    if (wl_cnn_check(c->arch, c->variant, msg, sizeof msg)) {
        ju_key(&j, c->variant[0] && wl_cnn_check(c->arch, "", msg, 0) == 0 ? "variant" : "generator");
        return ju_fail(&j, "%s", msg);
    }
    v = 224;
    if ((rc = ju_int(&j, root, "image_size", JU_OPT, 32, 4096, &v)))
        return rc;
    long long h = v, w = v;
    if ((rc = ju_int(&j, root, "image_height", JU_OPT, 32, 4096, &h)) ||
        (rc = ju_int(&j, root, "image_width", JU_OPT, 32, 4096, &w)))
        return rc;
    c->image_h = h;
    c->image_w = w;
    v = 3;
    if ((rc = ju_int(&j, root, "image_channels", JU_OPT, 1, 16, &v)))
        return rc;
    c->channels = v;
    v = 1000;
    if ((rc = ju_int(&j, root, "num_classes", JU_OPT, 1, 1000000, &v)))
        return rc;
    c->num_classes = v;
    c->width_mult = c->depth_mult = 1.0;
    c->published_params = c->published_GMACs = 0;
    if ((rc = ju_num(&j, root, "width_mult", JU_OPT | JU_POS, 8, &c->width_mult)) ||
        (rc = ju_num(&j, root, "depth_mult", JU_OPT | JU_POS, 8, &c->depth_mult)) ||
        (rc = ju_num(&j, root, "published_params", JU_OPT | JU_POS, 1e13, &c->published_params)))
        return rc;
    return ju_num(&j, root, "published_GMACs", JU_OPT | JU_POS, 1e9, &c->published_GMACs);
}

void wl_model_free(struct wl_model *m)
{
    wl_graph_free(&m->graph);
    wl_onnx_free(m->onnx);
    m->onnx = NULL;
}

int wl_model_takes_tokens(const struct wl_model *m)
{
    if (wl_model_is_lm(m))
        return 1;
    if (m->kind == WLM_TRANSFORMER)
        return strcmp(m->tf.model_type, "vit") != 0;
    if (m->kind == WLM_ONNX)
        return wl_onnx_takes_tokens(m->onnx);
    for (int i = 0; m->kind == WLM_GRAPH && i < m->graph.n_t; i++)
        for (int k = 0; k < m->graph.t[i].rank; k++)
            if (m->graph.t[i].dim[k] == WL_SEQ_DIM)
                return 1;
    return 0;
}

int wl_model_is_lm(const struct wl_model *m)
{
    return (m->kind == WLM_TRANSFORMER && m->tf.decoder) || (m->kind == WLM_GRAPH && m->phased);
}

static int load_buf(const char *buf, unsigned long len, const char *fname, int kind, const struct wl_load_opt *opt,
                    struct wl_model *m, struct dse_err *e)
{
    int rc, csv = kind == 1;
    memset(m, 0, sizeof *m);
    dse_strlcpy(m->path, fname, sizeof m->path);
    const char *base = strrchr(fname, '/');
    dse_strlcpy(m->name, base ? base + 1 : fname, sizeof m->name);
    char *dot = strrchr(m->name, '.');
    if (dot)
        *dot = '\0';
    if (kind == 2) {
        m->kind = WLM_ONNX;
        rc = wl_onnx_load(buf, len, fname, opt, &m->onnx, e);
    } else if (csv) {
        m->kind = WLM_TOPO;
        rc = load_topo_csv(buf, len, fname, &m->graph, e);
    } else {
        cJSON *root;
        if ((rc = ju_parse(buf, len, fname, &root, e)))
            return rc;
        if (!cJSON_IsObject(root)) {
            rc = dse_err_set(e, DSE_EINPUT, fname, NULL, "expected a JSON object");
        } else if (cJSON_GetObjectItemCaseSensitive(root, "ops") || cJSON_GetObjectItemCaseSensitive(root, "tensors")) {
            m->kind = WLM_GRAPH;
            rc = load_graph_json(root, fname, m, e);
        } else if (cJSON_GetObjectItemCaseSensitive(root, "generator")) {
            m->kind = WLM_CNN;
            rc = load_cnn_spec(root, fname, &m->cnn, e);
        } else if (cJSON_GetObjectItemCaseSensitive(root, "model_type")) {
            m->kind = WLM_TRANSFORMER;
            rc = wl_parse_transformer(root, fname, &m->tf, e);
        } else {
            rc = dse_err_set(e, DSE_EINPUT, fname, NULL,
                             "not a workload: expected a graph (tensors, ops), a CNN builder spec (generator) or "
                             "a HuggingFace-style config (model_type)");
        }
        cJSON_Delete(root);
    }
    if (!rc && m->kind == WLM_ONNX) {
        struct wl_graph probe; /* batch 1 and a 16-token sequence: a bad file fails at load */
        struct wl_shape s = {.batch = 1, .tokens = 16, .past = 0, .tp = 1, .train = 0};
        rc = wl_build(m, &s, &probe, e);
        wl_graph_free(&probe);
    } else if (!rc && (m->kind == WLM_GRAPH || m->kind == WLM_TOPO)) {
        /* Validate once at batch 1 so a bad file fails at load time, not at evaluation (a phased graph's
         * prefill of 8 tokens and a decode step after them). */
        struct wl_graph probe;
        struct wl_shape s = {.batch = 1, .tokens = m->phased ? 8 : 1, .past = 0, .tp = 1, .train = 0};
        rc = wl_build(m, &s, &probe, e);
        wl_graph_free(&probe);
        if (!rc && m->phased) {
            struct wl_shape d = {.batch = 1, .tokens = 1, .past = 8, .tp = 1, .train = 0};
            rc = wl_build(m, &d, &probe, e);
            wl_graph_free(&probe);
        }
    } else if (!rc) {
        struct wl_graph probe;
        struct wl_shape s = {.batch = 1, .tokens = wl_model_is_lm(m) ? 8 : 1, .past = 0, .tp = 1, .train = 0};
        rc = wl_build(m, &s, &probe, e);
        wl_graph_free(&probe);
    }
    if (rc)
        wl_model_free(m);
    return rc;
}

int wl_load_buf(const char *buf, unsigned long len, const char *fname, int csv, struct wl_model *m,
                struct dse_err *e)
{
    return load_buf(buf, len, fname, csv == 2 ? 2 : csv ? 1 : 0, NULL, m, e);
}

static int has_ext(const char *path, const char *ext)
{
    size_t pl = strlen(path), el = strlen(ext);
    return pl > el && strcasecmp(path + pl - el, ext) == 0;
}

int wl_load_file_opt(const char *path, const struct wl_load_opt *opt, struct wl_model *m, struct dse_err *e)
{
    char *buf;
    size_t len;
    int onnx = has_ext(path, ".onnx");
    if (!onnx && opt && opt->n_dims)
        return dse_err_set(e, DSE_EINPUT, path, NULL, "--dim binds an ONNX model's dynamic dimensions; %s is not one",
                           path);
    if (!onnx && opt && opt->unknown_memory)
        return dse_err_set(e, DSE_EINPUT, path, NULL, "--unknown-ops applies to ONNX models' operators; %s is not one",
                           path);
    /* protobuf's own limit is 2 GiB; large weights live in external data, which is never read */
    int rc = ju_read_file(path, onnx ? (2u << 30) - 1 : JU_MAX_FILE_BYTES, &buf, &len, e);
    if (rc)
        return rc;
    rc = load_buf(buf, len, path, onnx ? 2 : has_ext(path, ".csv"), opt, m, e);
    free(buf);
    return rc;
}

int wl_load_file(const char *path, struct wl_model *m, struct dse_err *e) { return wl_load_file_opt(path, NULL, m, e); }

int wl_load_opt_dim(struct wl_load_opt *opt, const char *arg, struct dse_err *e)
{
    const char *eq = strchr(arg, '=');
    char *end;
    if (!eq || eq == arg || (size_t)(eq - arg) >= WL_NAME_LEN)
        return dse_err_set(e, DSE_EINPUT, NULL, "--dim", "expected NAME=VALUE, got '%.80s'", arg);
    long long v = strtoll(eq + 1, &end, 10);
    if (end == eq + 1 || *end || v < 1 || (double)v > WL_MAX_DIM)
        return dse_err_set(e, DSE_EINPUT, NULL, "--dim", "%.*s: expected a positive integer up to %g, got '%.40s'",
                           (int)(eq - arg), arg, WL_MAX_DIM, eq + 1);
    if (opt->n_dims >= WL_MAX_BIND)
        return dse_err_set(e, DSE_EINPUT, NULL, "--dim", "more than %d bindings", WL_MAX_BIND);
    for (int i = 0; i < opt->n_dims; i++)
        if ((size_t)(eq - arg) == strlen(opt->dims[i].name) && !strncmp(opt->dims[i].name, arg, (size_t)(eq - arg)))
            return dse_err_set(e, DSE_EINPUT, NULL, "--dim", "%s bound twice", opt->dims[i].name);
    memcpy(opt->dims[opt->n_dims].name, arg, (size_t)(eq - arg));
    opt->dims[opt->n_dims].name[eq - arg] = '\0';
    opt->dims[opt->n_dims++].value = v;
    return DSE_OK;
}

int wl_check_split(const struct wl_model *m, int tp, int cp, int ep, struct dse_err *e)
{
    int tf = m->kind == WLM_TRANSFORMER;
    if ((tp > 1 || cp > 1) && tf && !strcmp(m->tf.model_type, "t5"))
        return dse_err_set(e, DSE_EINPUT, m->path, NULL, "%s parallelism (%s %d) of T5 (an encoder-decoder) is not "
                           "modelled: use dp", tp > 1 ? "tensor" : "context", tp > 1 ? "tp" : "cp", tp > 1 ? tp : cp);
    if (tp > 1 && !tf)
        return dse_err_set(e, DSE_EINPUT, m->path, NULL,
                           "tensor parallelism (tp %d) splits transformer configs (heads, FFN, vocabulary); %s is not "
                           "one: use dp", tp, m->name);
    if (cp > 1 && (!tf || !strcmp(m->tf.model_type, "vit")))
        return dse_err_set(e, DSE_EINPUT, m->path, NULL,
                           "context parallelism (cp %d) splits a transformer's token sequence; %s has none to split", cp,
                           m->name);
    if (ep > 1 && (!tf || m->tf.experts < 1))
        return dse_err_set(e, DSE_EINPUT, m->path, NULL,
                           "expert parallelism (ep %d) spreads a mixture of experts' experts; %s has none", ep, m->name);
    return DSE_OK;
}

int wl_build(const struct wl_model *m, const struct wl_shape *s, struct wl_graph *g, struct dse_err *e)
{
    int rc;
    if (s->batch < 1 || s->batch > 1000000 || s->tokens < 1 || s->tokens > 10000000 || s->past < 0 ||
        s->past > 100000000)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "batch, tokens or context out of range");
    if ((rc = wl_check_split(m, s->tp, s->cp, s->ep, e)))
        return rc;
    struct wl_shape cs = *s; /* context parallelism: this device's part of the sequence or the cache */
    if (s->cp > 1 && s->tokens > 1) {
        int64_t seq = s->tokens;
        if (seq % s->cp)
            return dse_err_set(e, DSE_EINPUT, m->path, NULL, "a sequence of %lld tokens does not split over cp %d (cp "
                               "must divide it)", (long long)seq, s->cp);
        cs.tokens = s->tokens / s->cp;
    } else if (s->cp > 1) {
        cs.past = (s->past + s->cp - 1) / s->cp;
    }
    s = &cs;
    switch (m->kind) {
    case WLM_TRANSFORMER: {
        struct wl_transformer sc;
        if ((rc = wl_shard_transformer(&m->tf, s->tp, s->tp_pad, m->path, &sc, e)) ||
            (rc = wl_expert_parallel(&sc, s->ep, s->moe_imbalance > 0 ? s->moe_imbalance : 1, m->path, e)))
            return rc;
        sc.cp = s->cp;
        rc = wl_build_transformer(&sc, m->name, s, g, e);
        break;
    }
    case WLM_CNN:
        rc = wl_build_cnn(&m->cnn, m->name, s, g, e);
        break;
    case WLM_ONNX:
        rc = wl_onnx_build(m->onnx, m->name, s, g, e);
        break;
    default:
        if ((rc = wl_graph_copy(g, &m->graph, e)))
            return rc;
        for (int i = 0; i < g->n_t; i++) {
            struct wl_tensor *t = &g->t[i];
            t->elems = 1;
            for (int k = 0; k < t->rank; k++) {
                if (t->dim[k] == WL_BATCH_DIM)
                    t->dim[k] = s->batch;
                else if (t->dim[k] == WL_SEQ_DIM)
                    t->dim[k] = s->tokens;
                else if (t->dim[k] == WL_PAST_DIM)
                    t->dim[k] = s->train ? 0 : s->past;
                t->elems *= (double)t->dim[k];
            }
        }
        if (m->phased && (rc = graph_phase(g, s->train ? 0 : s->past, e)))
            wl_graph_free(g);
        if (rc)
            return rc;
        break;
    }
    if (!rc)
        rc = wl_finalize(g, m->path, e);
    if (rc)
        wl_graph_free(g);
    return rc;
}
