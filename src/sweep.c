/* sweep.c -- preparing a sweep (system variants, graphs, placements) and evaluating its points.
 *
 * Variants: every system x every combination of hw: field values x every power cap is loaded once
 * as its own struct hw_system: hw: values are written into the hwdesc JSON (which is then checked
 * by the same loader; datasheet headlines are dropped, as a changed design no longer has one; a
 * resized systolic array scales its device's matrix engine with its MAC count) and a power cap is
 * applied to every device of the variant (hw_apply_power_cap). The variant count is bounded by the
 * spec loader (SW_MAX_VARIANTS) and checked again, in double, before the array is allocated. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonu.h"
#include "sweep.h"

#ifdef _OPENMP
#include <omp.h>
#endif

struct place {
    int ok, dev;
    int type_dev[OP_COUNT];
    char reason[160];
};

struct sweep_prep {
    const struct sweep_spec *sp;
    int ax_sys, ax_wl, ax_prec, ax_batch, ax_place, ax_mem, ax_power, ax_fid, ax_sw;
    int ax_lay[PAR_DIM_COUNT], ax_mb; /* the layout's axes (tp, dp, pp) and micro-batches, -1: none */
    int ax_rc, ax_ep;                 /* recompute, expert parallelism; -1: none */
    int ax_srv[4];                    /* serving: scheduler, max batched tokens, block size, rate; -1: none */
    int ax_prompt, ax_gen;            /* every workload's prompt and generated tokens; -1: the workload's own */
    int n_pr;                         /* graphs per prompt: the prompt axis's values (or 1) */
    struct serve_req **srv_req;       /* [thread]: a serving workload's requests at the point's rate */
    int ax_hw[SW_MAX_AXES], n_hw;
    int n_sys, n_combo, n_power, n_variants, n_place, n_batch, n_prec, n_tp, n_ep, n_cp;
    int64_t *gbatch;                 /* the graphs' batch sizes (one micro-batch's), sorted, distinct */
    int n_gb;
    struct hw_system *variants;
    struct place *places;            /* [variant][placement value] */
    int *default_dev, *default_prec; /* [variant] */
    struct prec_cfg *precs;          /* [precision value] */
    struct ql_est *quality;          /* [precision value][workload]: the expected quality loss (eval_quality) */
    struct ql_est *dquality;         /* [enum prec][workload]: the same at a variant's default precision */
    /* Graphs, one per slot ([workload][prompt][tp][ep][cp][stack] (a shape) x [graph batch]: one
     * micro-batch (eval_micro_batch), one shard, for the stacks points use), built when points need them
     * (stage) into a cache of entries found by slot through an open-addressing map, of at most
     * SW_GRAPH_BUDGET bytes but for the graphs one chunk of points needs; each shape's first graph (its
     * smallest micro-batch) built by sweep_prepare, which so refuses a workload no point could build. */
    struct gentry {
        size_t slot;
        int state;           /* GE_PENDING (to build this round), GE_BUILT, GE_REFUSED (why) */
        long long stamp;     /* the staging round that last needed it */
        size_t bytes;        /* its graphs' allocations (an estimate while pending) */
        struct eval_graphs g;
        char why[200];       /* GE_REFUSED: why its points are infeasible (a shard that does not split) */
    } *ent;
    int n_ent, cap_ent;
    int *map;                        /* entry index or -1, map_mask + 1 of them */
    size_t map_mask, resident;       /* resident: bytes of the built entries */
    size_t graph_budget;             /* SW_GRAPH_BUDGET unless sweep_set_graph_budget changed it */
    long long round;
    size_t *shape_bytes;             /* [shape]: bytes of its first graph (the estimate for the others) */
    char (*shape_why)[200];          /* [shape]: why it cannot be built at all (a tp that does not divide
                                        the heads: every batch's), "" when it can */
    int *used_stack;                 /* [stack]: points can use it */
    int n_stk;                       /* sp->n_stacks + 1: the last is the built-in none */
    struct sw_stack none;
    struct eval_scratch *scratch;    /* [thread] */
    struct eval_result *results;     /* [thread] */
    /* [thread]: the operators' costs of the thread's last point (eval_point_ops) and that point with
     * its power-cap digit zeroed: the next key that differs only in its power cap (the power axis is
     * the last but memory, so they come in a row) takes them instead of costing every operator again */
    struct raw_cost {
        long long sig; /* -1: none */
        struct eval_result res;
    } *raw;
    long long power_stride;          /* points between two values of the power axis */
    int n_threads;
};

int sweep_mem_count(const struct sweep_spec *sp)
{
    return sp->n_axes && sp->axes[sp->n_axes - 1].kind == AX_MEMORY ? sp->axes[sp->n_axes - 1].n : 1;
}

int sweep_axis_index(const struct sweep_spec *sp, long long point, int a)
{
    for (int i = sp->n_axes - 1; i > a; i--)
        point /= sp->axes[i].n;
    return (int)(point % sp->axes[a].n);
}

/* Finds the value at a dotted path in a hwdesc JSON tree, and its parent. Array elements are chosen
 * by index, by "name", by "precision" (compute entries), or by "engine-precision" (matrix-int8).
 * Returns NULL with why when the path names nothing, or an object or array. */
static cJSON *find_path(cJSON *root, const char *path, cJSON **parent_out, char *why, size_t n)
{
    char buf[SW_HW_PATH_LEN], *save = NULL;
    if (strlen(path) >= sizeof buf) { /* never cut: a prefix names another field */
        snprintf(why, n, "a field path of %zu characters: at most %d", strlen(path), SW_HW_PATH_LEN - 1);
        return NULL;
    }
    dse_strlcpy(buf, path, sizeof buf);
    /* "mode" selects one of a system's modes: a hwdesc with modes and no mode of its own gets the field */
    if (!strcmp(path, "mode") && cJSON_IsObject(root) && !cJSON_GetObjectItemCaseSensitive(root, "modes")) {
        snprintf(why, n, "the system has no operating modes (a hwdesc \"modes\" section: a Jetson's nvpmodel modes)");
        return NULL;
    }
    if (!strcmp(path, "mode") && cJSON_IsObject(root) && cJSON_GetObjectItemCaseSensitive(root, "modes") &&
        !cJSON_GetObjectItemCaseSensitive(root, "mode") && !cJSON_AddStringToObject(root, "mode", "")) {
        snprintf(why, n, "out of memory");
        return NULL;
    }
    /* clocks_locked (hw_system): a hwdesc that leaves it to its default (false) gets the field */
    if (!strcmp(path, "clocks_locked") && cJSON_IsObject(root) &&
        !cJSON_GetObjectItemCaseSensitive(root, "clocks_locked") && !cJSON_AddFalseToObject(root, "clocks_locked")) {
        snprintf(why, n, "out of memory");
        return NULL;
    }
    /* the thermal model's conditions: a thermal section that leaves one to its default gets the field */
    if (!strncmp(path, "thermal.", 8) && cJSON_IsObject(root)) {
        cJSON *th = cJSON_GetObjectItemCaseSensitive(root, "thermal");
        const char *f = path + 8;
        int known = !strcmp(f, "ambient_C") || !strcmp(f, "cooling") || !strcmp(f, "duration_s");
        if (!cJSON_IsObject(th)) {
            snprintf(why, n, "the system has no thermal model (a hwdesc \"thermal\" section: thermal resistance, "
                             "heat capacity, throttle temperature)");
            return NULL;
        }
        if (known && !cJSON_GetObjectItemCaseSensitive(th, f) &&
            !(strcmp(f, "cooling") ? cJSON_AddNumberToObject(th, f, 0) : cJSON_AddStringToObject(th, f, ""))) {
            snprintf(why, n, "out of memory");
            return NULL;
        }
    }
    cJSON *cur = root, *parent = NULL;
    for (char *seg = strtok_r(buf, ".", &save); seg; seg = strtok_r(NULL, ".", &save)) {
        parent = cur;
        if (cJSON_IsObject(cur)) {
            cur = cJSON_GetObjectItemCaseSensitive(cur, seg);
        } else if (cJSON_IsArray(cur)) {
            cJSON *hit = NULL, *el;
            char *end;
            long idx = strtol(seg, &end, 10);
            if (*end == '\0' && end != seg) {
                hit = idx >= 0 && idx <= 1000000 ? cJSON_GetArrayItem(cur, (int)idx) : NULL;
            } else {
                cJSON_ArrayForEach(el, cur)
                {
                    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(el, "name");
                    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(el, "precision");
                    const cJSON *en = cJSON_GetObjectItemCaseSensitive(el, "engine");
                    char ep[64] = "";
                    if (cJSON_IsString(en) && cJSON_IsString(pr))
                        snprintf(ep, sizeof ep, "%s-%s", en->valuestring, pr->valuestring);
                    if ((cJSON_IsString(nm) && !strcmp(nm->valuestring, seg)) || !strcmp(ep, seg) ||
                        (cJSON_IsString(pr) && !strcmp(pr->valuestring, seg))) {
                        hit = el;
                        break;
                    }
                }
            }
            cur = hit;
        } else {
            cur = NULL;
        }
        if (!cur) {
            snprintf(why, n, "no field '%s' at this point of the path", seg);
            return NULL;
        }
    }
    if (!parent || cJSON_IsObject(cur) || cJSON_IsArray(cur)) {
        snprintf(why, n, "the path names an object or array, not a value");
        return NULL;
    }
    *parent_out = parent;
    return cur;
}

/* Writes v at a dotted path in a hwdesc JSON tree (find_path). */
static int apply_path(cJSON *root, const char *path, const struct sw_value *v, char *why, size_t n)
{
    cJSON *parent, *cur = find_path(root, path, &parent, why, n);
    if (!cur)
        return -1;
    int truth = !v->is_num && cJSON_IsBool(cur) ? !strcmp(v->s, "true") ? 1 : !strcmp(v->s, "false") ? 0 : -1 : -1;
    cJSON *nv = v->is_num ? cJSON_CreateNumber(v->num) : truth >= 0 ? cJSON_CreateBool(truth) : cJSON_CreateString(v->s);
    int ok = nv && (cJSON_IsObject(parent) ? cJSON_ReplaceItemInObjectCaseSensitive(parent, cur->string, nv)
                                           : cJSON_ReplaceItemViaPointer(parent, cur, nv));
    if (!ok) {
        cJSON_Delete(nv);
        snprintf(why, n, "out of memory");
        return -1;
    }
    return 0;
}

/* Two hw: axes whose paths name one field of a system (devices.tpu.clock.boost_MHz and
 * devices.0.clock.boost_MHz) are one axis given twice: the later would overwrite the earlier, whose
 * values would then label points they did not change. */
static int check_hw_fields(const struct sweep_prep *p, cJSON *root, int s, struct dse_err *e)
{
    const struct sweep_spec *sp = p->sp;
    cJSON *node[SW_MAX_AXES], *parent;
    char why[160];
    for (int h = 0; h < p->n_hw; h++) {
        const struct sw_axis *a = &sp->axes[p->ax_hw[h]];
        if (!(node[h] = find_path(root, a->path, &parent, why, sizeof why)))
            return dse_err_set(e, DSE_EINPUT, sp->path, a->name, "in %s: %s", sp->system_path[s], why);
        for (int k = 0; k < h; k++)
            if (node[k] == node[h])
                return dse_err_set(e, DSE_EINPUT, sp->path, a->name,
                                   "names the same field of %s as axes.%s: the axis is given twice",
                                   sp->system_path[s], sp->axes[p->ax_hw[k]].name);
    }
    return DSE_OK;
}

static void strip_headlines(cJSON *root)
{
    cJSON *dev, *c;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(root, "devices"))
    {
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(dev, "compute"))
        {
            cJSON_DeleteItemFromObjectCaseSensitive(c, "headline_TFLOPS");
            cJSON_DeleteItemFromObjectCaseSensitive(c, "headline_TOPS");
        }
    }
}

/* A variant of base from its JSON (hw: fields already set): loaded as a description of its own (the
 * headline peaks, which the changed fields may contradict, dropped), a resized systolic array's matrix
 * peak scaled with its MAC count. label names the changes in messages. */
static int hw_variant_load(cJSON *dup, const char *path, const char *label, const struct hw_system *base,
                           struct hw_system *v, struct dse_err *e)
{
    strip_headlines(dup);
    char *txt = ju_print(dup, 0);
    char fname[700];
    snprintf(fname, sizeof fname, "%s (%s)", path, label);
    int rc = txt ? hw_load_buf(txt, strlen(txt), fname, v, e) : dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    free(txt);
    for (int d = 0; !rc && d < v->n_dev && d < base->n_dev; d++) {
        const struct hw_array *a0 = &base->dev[d].array, *a1 = &v->dev[d].array;
        if (!a0->present || !a1->present)
            continue;
        double ratio = ((double)a1->rows * a1->cols * a1->count) / ((double)a0->rows * a0->cols * a0->count);
        if (ratio != 1)
            hw_scale_matrix(&v->dev[d], ratio);
    }
    return rc;
}

int sweep_hw_set(const char *text, const char *path, int n, const char *const *fields, const char *const *values,
                 struct hw_system *out, struct dse_err *e)
{
    struct hw_system *base = malloc(sizeof *base);
    cJSON *root = NULL;
    char label[600] = "", why[160];
    int rc;
    if (!base)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    if ((rc = hw_load_buf(text, strlen(text), path, base, e)))
        goto out;
    if (!(root = cJSON_Parse(text))) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < n && !rc; i++) {
        struct sw_value v = {.is_num = 0};
        char *end;
        if (strlen(values[i]) >= sizeof v.s) {
            rc = dse_err_set(e, DSE_EINPUT, NULL, "--set", "hw:%s: a value of %zu characters: at most %zu", fields[i],
                             strlen(values[i]), sizeof v.s - 1);
            break;
        }
        dse_strlcpy(v.s, values[i], sizeof v.s);
        v.num = strtod(values[i], &end);
        v.is_num = end != values[i] && *end == '\0' && isfinite(v.num);
        snprintf(label + strlen(label), sizeof label - strlen(label), "%shw:%s=%s", i ? " " : "", fields[i], v.s);
        cJSON *parent, *node = find_path(root, fields[i], &parent, why, sizeof why);
        for (int k = 0; node && k < i; k++) { /* one field set twice: the later would silently win */
            cJSON *pk, *nk = find_path(root, fields[k], &pk, why, sizeof why);
            if (nk == node) {
                rc = dse_err_set(e, DSE_EINPUT, NULL, "--set", "hw:%s names the same field as hw:%s", fields[i], fields[k]);
                break;
            }
        }
        if (!rc && (!node || apply_path(root, fields[i], &v, why, sizeof why)))
            rc = dse_err_set(e, DSE_EINPUT, path, "--set", "hw:%s: %s", fields[i], why);
    }
    if (!rc)
        rc = hw_variant_load(root, path, label, base, out, e);
out:
    cJSON_Delete(root);
    free(base);
    return rc;
}

static int build_variants(struct sweep_prep *p, struct dse_err *e)
{
    const struct sweep_spec *sp = p->sp;
    int rc = DSE_OK;
    for (int s = 0; s < p->n_sys && !rc; s++) {
        const char *text = sp->system_text[s];
        struct hw_system *base = &p->variants[(size_t)s * p->n_combo * p->n_power];
        if ((rc = hw_load_buf(text, strlen(text), sp->system_path[s], base, e)))
            return rc;
        struct hw_system *orig = NULL; /* the file as written, for comparing hw: variants with */
        if (p->n_hw) {
            if (!(orig = malloc(sizeof *orig)))
                return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
            *orig = *base;
            base = orig;
        }
        cJSON *root = p->n_hw ? cJSON_Parse(text) : NULL;
        if (p->n_hw && !root)
            rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        if (root)
            rc = check_hw_fields(p, root, s, e);
        for (int c = 0; c < p->n_combo && !rc; c++) {
            struct hw_system *v = &p->variants[((size_t)s * p->n_combo + c) * p->n_power];
            if (p->n_hw) {
                cJSON *dup = root ? cJSON_Duplicate(root, 1) : NULL;
                char label[600] = "", why[160];
                int rest = c;
                if (!dup) {
                    rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                    break;
                }
                for (int h = p->n_hw - 1; h >= 0 && !rc; h--) {
                    const struct sw_axis *a = &sp->axes[p->ax_hw[h]];
                    const struct sw_value *val = &a->v[rest % a->n];
                    rest /= a->n;
                    snprintf(label + strlen(label), sizeof label - strlen(label), " %s=%s", a->name, val->s);
                    if (apply_path(dup, a->path, val, why, sizeof why))
                        rc = dse_err_set(e, DSE_EINPUT, sp->path, a->name, "in %s: %s", sp->system_path[s], why);
                }
                if (!rc)
                    rc = hw_variant_load(dup, sp->system_path[s], label + 1, base, v, e);
                cJSON_Delete(dup);
            } else if (c == 0 && v != base) {
                *v = *base;
            }
            for (int w = 1; w < p->n_power && !rc; w++)
                p->variants[((size_t)s * p->n_combo + c) * p->n_power + w] = *v;
            for (int w = 0; w < p->n_power && !rc && p->ax_power >= 0; w++) {
                struct hw_system *pv = &p->variants[((size_t)s * p->n_combo + c) * p->n_power + w];
                for (int d = 0; d < pv->n_dev; d++)
                    hw_apply_power_cap(&pv->dev[d], sp->axes[p->ax_power].v[w].num);
            }
        }
        cJSON_Delete(root);
        free(orig);
    }
    return rc;
}

static const struct sw_stack *stack_of(const struct sweep_prep *p, int si)
{
    return si < p->sp->n_stacks ? &p->sp->stack[si] : &p->none;
}

static size_t shape_of(const struct sweep_prep *p, int w, int pi, int ti, int ei, int ci, int si)
{
    return (((((size_t)w * p->n_pr + pi) * p->n_tp + ti) * p->n_ep + ei) * p->n_cp + ci) * p->n_stk + si;
}

static size_t shape_count(const struct sweep_prep *p)
{
    return (size_t)p->sp->n_workloads * p->n_pr * p->n_tp * p->n_ep * p->n_cp * p->n_stk;
}

static size_t graph_of(const struct sweep_prep *p, int w, int pi, int gi, int ti, int ei, int ci, int si)
{
    return shape_of(p, w, pi, ti, ei, ci, si) * (size_t)p->n_gb + (size_t)gi;
}

/* A workload's prompt (or generated tokens) at value index i of the axis, or its own without one. */
static int64_t wl_tokens(const struct sweep_prep *p, int axis, int i, int64_t own)
{
    return axis >= 0 ? (int64_t)p->sp->axes[axis].v[i].num : own;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int axis_num(const struct sweep_prep *p, int a, int i, int dflt)
{
    return a >= 0 ? (int)p->sp->axes[a].v[i].num : dflt;
}

/* Sorts a[0..n) and drops repeats; returns how many are left. */
static int dedup_i64(int64_t *a, int n)
{
    if (n < 2)
        return n;
    qsort(a, (size_t)n, sizeof *a, cmp_i64);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (!u || a[u - 1] != a[i])
            a[u++] = a[i];
    return u;
}

/* The micro-batch sizes the points' graphs need (eval_micro_batch): batch / micro-batches, and in a
 * training step the global batch / (dp x micro-batches), dp filling what tp x pp leave of each
 * variant's devices; combinations that do not divide are left out (their points are refused). */
static int collect_gbatch(struct sweep_prep *p, struct dse_err *e)
{
    const struct sweep_spec *sp = p->sp;
    int train = 0, nN = 0, Ns[64];
    for (int w = 0; w < sp->n_workloads; w++)
        train |= sp->wl[w].phase == PH_TRAIN;
    for (int v = 0; v < p->n_variants; v++) {
        int N = hw_topo_devices(&p->variants[v]), k = 0;
        while (k < nN && Ns[k] != N)
            k++;
        if (k == nN && nN < 64)
            Ns[nN++] = N;
    }
    int ax_tp = p->ax_lay[PAR_TP], ax_pp = p->ax_lay[PAR_PP], ax_dp = p->ax_lay[PAR_DP];
    int ntp = p->n_tp, npp = ax_pp >= 0 ? sp->axes[ax_pp].n : 1, ndp = ax_dp >= 0 ? sp->axes[ax_dp].n : 1;
    int ax_cp = p->ax_lay[PAR_CP], ncp = p->n_cp;
    int nmb = p->ax_mb >= 0 ? sp->axes[p->ax_mb].n : 1, cap = 0;
    p->n_gb = 0;
    for (int b = 0; b < p->n_batch; b++)
        for (int m = 0; m < nmb; m++)
            for (int t = 0; t < (train ? ntp : 1); t++)
                for (int q = 0; q < (train ? npp : 1); q++)
                    for (int d = 0; d < (train ? ndp : 1); d++)
                        for (int k = 0; k < (train ? nN : 1); k++)
                            for (int cc = 0; cc < (train ? ncp : 1); cc++) {
                            int64_t batch = axis_num(p, p->ax_batch, b, 1), M = axis_num(p, p->ax_mb, m, 1);
                            int64_t reps = 1;
                            if (train) {
                                int64_t rep = (int64_t)axis_num(p, ax_tp, t, 1) * axis_num(p, ax_pp, q, 1) *
                                              axis_num(p, ax_cp, cc, 1);
                                reps = ax_dp >= 0 ? axis_num(p, ax_dp, d, 1) : Ns[k] % rep ? 0 : Ns[k] / rep;
                            }
                            if (reps < 1 || batch % reps || (batch / reps) % M)
                                continue;
                            int64_t g = batch / reps / M;
                            if (p->n_gb == cap && (p->n_gb = dedup_i64(p->gbatch, p->n_gb)) >= cap / 2) {
                                cap = cap ? 2 * cap : 16; /* half full of distinct sizes (repeats dropped first) */
                                int64_t *n = cap < INT32_MAX / 2 ? realloc(p->gbatch, sizeof *n * (size_t)cap) : NULL;
                                if (!n)
                                    return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                                p->gbatch = n;
                            }
                            p->gbatch[p->n_gb++] = g;
                        }
    if (!p->n_gb)
        return dse_err_set(e, DSE_EINPUT, sp->path, "axes",
                           "no batch of the space divides into its micro-batches (and, training, its replicas)");
    p->n_gb = dedup_i64(p->gbatch, p->n_gb);
    return DSE_OK;
}

static int variant_of(const struct sweep_prep *p, long long point)
{
    const struct sweep_spec *sp = p->sp;
    int s = p->ax_sys >= 0 ? sweep_axis_index(sp, point, p->ax_sys) : 0;
    int c = 0;
    for (int h = 0; h < p->n_hw; h++)
        c = c * sp->axes[p->ax_hw[h]].n + sweep_axis_index(sp, point, p->ax_hw[h]);
    int w = p->ax_power >= 0 ? sweep_axis_index(sp, point, p->ax_power) : 0;
    return (s * p->n_combo + c) * p->n_power + w;
}

/* ---- the graph cache (struct sweep_prep: ent, map) ----
 * Points need one graph each, of their slot; sweeps of many batch, micro-batch or layout values need
 * more than memory should hold at once. Before each parallel region the runner stages its chunk of
 * points (sweep_stage_keys, sweep_stage_points): the slots they need are looked up, those missing
 * added as pending entries while their estimated size (their shape's first graph) keeps the needed
 * entries within SW_GRAPH_BUDGET (the chunk ends at the point that would pass it, one point at least),
 * entries no point of the chunk needs evicted least recently needed first while over the budget, then
 * the pending ones built (and every thread's scratch fitted to them). During the region the cache is
 * read only; each graph depends on its slot alone, so which graphs happen to be resident changes no
 * result, on 1 or N threads. */
enum { GE_PENDING, GE_BUILT, GE_REFUSED };

static int in_parallel(void)
{
#ifdef _OPENMP
    return omp_in_parallel();
#else
    return 0;
#endif
}

static size_t graph_bytes(const struct wl_graph *g)
{
    return (size_t)g->cap_t * sizeof *g->t + (size_t)g->cap_op * sizeof *g->op + (size_t)g->ix_cap * sizeof *g->ix;
}

static size_t slot_hash(size_t slot)
{
    unsigned long long h = (unsigned long long)slot * 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29));
}

static int lookup(const struct sweep_prep *p, size_t slot)
{
    if (!p->map)
        return -1;
    for (size_t h = slot_hash(slot) & p->map_mask;; h = (h + 1) & p->map_mask) {
        int k = p->map[h];
        if (k < 0 || p->ent[k].slot == slot)
            return k;
    }
}

static void map_put(struct sweep_prep *p, int k)
{
    size_t h = slot_hash(p->ent[k].slot) & p->map_mask;
    while (p->map[h] >= 0)
        h = (h + 1) & p->map_mask;
    p->map[h] = k;
}

/* The map again for every entry, at most half full with room more. */
static int map_resize(struct sweep_prep *p, int room, struct dse_err *e)
{
    size_t n = 16;
    while (n < 2 * ((size_t)p->n_ent + (size_t)room))
        n *= 2;
    if (!p->map || n != p->map_mask + 1) {
        int *m = realloc(p->map, sizeof *m * n);
        if (!m)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        p->map = m;
        p->map_mask = n - 1;
    }
    for (size_t i = 0; i < n; i++)
        p->map[i] = -1;
    for (int k = 0; k < p->n_ent; k++)
        map_put(p, k);
    return DSE_OK;
}

static int map_rebuild(struct sweep_prep *p, struct dse_err *e) { return map_resize(p, 1, e); }

/* A pending entry for slot, its size estimated as est bytes; its index, or -1 when out of memory. */
static int add_entry(struct sweep_prep *p, size_t slot, size_t est, struct dse_err *e)
{
    if (p->n_ent == p->cap_ent) {
        int cap = p->cap_ent ? 2 * p->cap_ent : 64;
        struct gentry *n = cap < INT32_MAX / 2 ? realloc(p->ent, sizeof *n * (size_t)cap) : NULL;
        if (!n)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory"), -1;
        p->ent = n;
        p->cap_ent = cap;
    }
    if (p->map && 2 * ((size_t)p->n_ent + 1) > p->map_mask + 1 && map_resize(p, 64, e)) /* at most half full */
        return -1;
    struct gentry *g = &p->ent[p->n_ent];
    memset(g, 0, sizeof *g);
    g->slot = slot;
    g->state = GE_PENDING;
    g->stamp = p->round;
    g->bytes = est;
    if (p->map)
        map_put(p, p->n_ent);
    return p->n_ent++;
}

/* Builds entry k's graphs. strict (sweep_prepare's first graph of each shape): an input error other
 * than a shard's that does not split the model is the spec's, returned; otherwise any input error
 * makes the entry GE_REFUSED with its message, which its points report. */
static int build_entry(struct sweep_prep *p, int k, int strict, struct dse_err *e)
{
    const struct sweep_spec *sp = p->sp;
    struct gentry *g = &p->ent[k];
    size_t sh = g->slot / (size_t)p->n_gb, rest = sh;
    int gi = (int)(g->slot % (size_t)p->n_gb), si = (int)(rest % (size_t)p->n_stk);
    rest /= (size_t)p->n_stk;
    int ci = (int)(rest % (size_t)p->n_cp);
    rest /= (size_t)p->n_cp;
    int ei = (int)(rest % (size_t)p->n_ep);
    rest /= (size_t)p->n_ep;
    int ti = (int)(rest % (size_t)p->n_tp);
    rest /= (size_t)p->n_tp;
    int pi = (int)(rest % (size_t)p->n_pr), w = (int)(rest / (size_t)p->n_pr);
    if (!strict && p->shape_why[sh][0]) { /* no batch of this shard splits the model */
        g->state = GE_REFUSED;
        dse_strlcpy(g->why, p->shape_why[sh], sizeof g->why);
        g->bytes = sizeof *g;
        return DSE_OK;
    }
    struct par_layout lay = {{axis_num(p, p->ax_lay[PAR_TP], ti, 1), 1, 1, axis_num(p, p->ax_lay[PAR_CP], ci, 1)},
                             1, axis_num(p, p->ax_ep, ei, 1), 1};
    int rc = eval_graphs_build(&sp->wl[w].model, sp->wl[w].phase, p->gbatch[gi],
                               wl_tokens(p, p->ax_prompt, pi, sp->wl[w].prompt), &lay, stack_of(p, si), &g->g, e);
    if (rc == DSE_EINPUT && (!strict || lay.n[PAR_TP] > 1 || lay.ep > 1 || lay.n[PAR_CP] > 1)) {
        g->state = GE_REFUSED; /* its points are infeasible with this reason */
        dse_strlcpy(g->why, e->msg, sizeof g->why);
        dse_err_clear(e);
        memset(&g->g, 0, sizeof g->g);
        g->bytes = sizeof *g;
        return DSE_OK;
    }
    if (rc)
        return rc;
    g->state = GE_BUILT;
    g->bytes = sizeof *g + graph_bytes(&g->g.first) + graph_bytes(&g->g.decode);
    p->resident += g->bytes;
    for (int t = 0; t < p->n_threads; t++)
        if ((rc = eval_scratch_fit(&p->scratch[t], &g->g, e)))
            return rc;
    return DSE_OK;
}

struct stamp_ix {
    long long stamp;
    int k;
};

static int cmp_stamp_ix(const void *a, const void *b)
{
    const struct stamp_ix *x = a, *y = b;
    return x->stamp < y->stamp ? -1 : x->stamp > y->stamp ? 1 : x->k - y->k;
}

static int point_req_slot(const struct sweep_prep *p, long long key, size_t *slot, struct dse_err *e);

/* Stages the graphs of keys: the n points pts[i] (step 0: each point's key is it less its memory
 * index), or the keys (pts[0] + i) x step of a grid block; skip[i] set (may be NULL): not this process's.
 * Returns how many of the n it staged from the first (the chunk: fewer when their graphs would pass the
 * budget), or -1 on a runtime error (e set). Outside parallel regions only. */
static long long stage(struct sweep_prep *p, const long long *pts, long long n, long long step, const char *skip,
                       struct dse_err *e)
{
    int n_mem = sweep_mem_count(p->sp), rc = DSE_OK;
    long long i;
    size_t need = 0; /* bytes of the entries this chunk needs: resident ones and the pending estimates */
    p->round++;
    for (i = 0; i < n; i++) {
        if (skip && skip[i])
            continue;
        long long key = step ? (pts[0] + i) * step : pts[i] - pts[i] % n_mem;
        size_t slot;
        if (point_req_slot(p, key, &slot, e))
            return -1;
        if (slot == SIZE_MAX)
            continue;
        int k = lookup(p, slot);
        if (k >= 0) {
            if (p->ent[k].stamp != p->round) {
                p->ent[k].stamp = p->round;
                need += p->ent[k].bytes;
            }
            continue;
        }
        size_t est = p->shape_bytes[slot / (size_t)p->n_gb];
        if (i > 0 && need + est > p->graph_budget)
            break; /* the chunk ends before this point */
        if (add_entry(p, slot, est, e) < 0)
            return -1;
        need += est;
    }
    /* evict what no point of the chunk needs, the least recently needed first, while over the budget */
    size_t pending = 0;
    for (int k = 0; k < p->n_ent; k++)
        pending += p->ent[k].state == GE_PENDING ? p->ent[k].bytes : 0;
    if (p->resident + pending > p->graph_budget) {
        struct stamp_ix *c = malloc(sizeof *c * (size_t)(p->n_ent > 0 ? p->n_ent : 1));
        if (!c)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory"), -1;
        int nc = 0;
        for (int k = 0; k < p->n_ent; k++)
            if (p->ent[k].stamp != p->round)
                c[nc++] = (struct stamp_ix){p->ent[k].stamp, k};
        qsort(c, (size_t)nc, sizeof *c, cmp_stamp_ix);
        for (int j = 0; j < nc && p->resident + pending > p->graph_budget; j++) {
            struct gentry *g = &p->ent[c[j].k];
            if (g->state == GE_BUILT)
                p->resident -= g->bytes;
            eval_graphs_free(&g->g);
            g->state = -1; /* evicted */
        }
        free(c);
        int u = 0;
        for (int k = 0; k < p->n_ent; k++)
            if (p->ent[k].state >= 0)
                p->ent[u++] = p->ent[k];
        p->n_ent = u;
        if ((rc = map_rebuild(p, e)))
            return -1;
    }
    for (int k = 0; k < p->n_ent && !rc; k++)
        if (p->ent[k].state == GE_PENDING)
            rc = build_entry(p, k, 0, e);
    return rc ? -1 : i;
}

void sweep_set_graph_budget(struct sweep_prep *p, size_t bytes) { p->graph_budget = bytes; }

long long sweep_stage_keys(struct sweep_prep *p, long long k0, long long n, const char *skip, struct dse_err *e)
{
    return n > 0 ? stage(p, &k0, n, sweep_mem_count(p->sp), skip, e) : 0;
}

long long sweep_stage_points(struct sweep_prep *p, const long long *pts, long long n, const char *skip,
                             struct dse_err *e)
{
    return n > 0 ? stage(p, pts, n, 0, skip, e) : 0;
}

int sweep_prepare(const struct sweep_spec *sp, struct sweep_prep **out, struct dse_err *e)
{
    struct sweep_prep *p = calloc(1, sizeof *p);
    int rc = DSE_OK;
    if (!p)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    if (metric_count > METRIC_MAX || metric_count > (int)(sizeof ((struct sw_row *)0)->metric / sizeof(double)))
        return free(p), dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "metric registry larger than a row");
    p->sp = sp;
    p->graph_budget = SW_GRAPH_BUDGET;
    p->ax_sys = p->ax_wl = p->ax_prec = p->ax_batch = p->ax_place = p->ax_mem = p->ax_power = p->ax_fid = p->ax_sw = -1;
    p->ax_lay[PAR_TP] = p->ax_lay[PAR_DP] = p->ax_lay[PAR_PP] = p->ax_lay[PAR_CP] = p->ax_mb = p->ax_rc = p->ax_ep = -1;
    p->ax_srv[0] = p->ax_srv[1] = p->ax_srv[2] = p->ax_srv[3] = -1;
    p->ax_prompt = p->ax_gen = -1;
    for (int a = 0; a < sp->n_axes; a++) {
        switch (sp->axes[a].kind) {
        case AX_SYSTEM: p->ax_sys = a; break;
        case AX_WORKLOAD: p->ax_wl = a; break;
        case AX_PRECISION: p->ax_prec = a; break;
        case AX_BATCH: p->ax_batch = a; break;
        case AX_PLACEMENT: p->ax_place = a; break;
        case AX_MEMORY: p->ax_mem = a; break;
        case AX_POWER: p->ax_power = a; break;
        case AX_HW: p->ax_hw[p->n_hw++] = a; break;
        case AX_FIDELITY: p->ax_fid = a; break;
        case AX_SOFTWARE: p->ax_sw = a; break;
        case AX_TP: p->ax_lay[PAR_TP] = a; break;
        case AX_DP: p->ax_lay[PAR_DP] = a; break;
        case AX_PP: p->ax_lay[PAR_PP] = a; break;
        case AX_MICRO: p->ax_mb = a; break;
        case AX_RECOMPUTE: p->ax_rc = a; break;
        case AX_EP: p->ax_ep = a; break;
        case AX_CP: p->ax_lay[PAR_CP] = a; break;
        case AX_SCHED: p->ax_srv[0] = a; break;
        case AX_MBT: p->ax_srv[1] = a; break;
        case AX_BLOCK: p->ax_srv[2] = a; break;
        case AX_RATE: p->ax_srv[3] = a; break;
        case AX_PROMPT: p->ax_prompt = a; break;
        case AX_GENERATE: p->ax_gen = a; break;
        }
    }
    /* Counted in double (16 axes of 1024 values would be 2^160) before any int holds them. */
    double combos = 1;
    for (int h = 0; h < p->n_hw; h++)
        combos *= sp->axes[p->ax_hw[h]].n;
    p->n_power = p->ax_power >= 0 ? sp->axes[p->ax_power].n : 1;
    p->power_stride = 1;
    for (int a = sp->n_axes - 1; p->ax_power >= 0 && a > p->ax_power; a--)
        p->power_stride *= sp->axes[a].n;
    double nv = sp->n_systems * combos * p->n_power;
    if (nv > SW_MAX_VARIANTS) {
        rc = dse_err_set(e, DSE_EINPUT, sp->path, "axes",
                         "%.3g hardware variants (systems x hw: values x power caps), more than %d", nv,
                         SW_MAX_VARIANTS);
        goto fail;
    }
    p->n_sys = sp->n_systems;
    p->n_combo = (int)combos;
    p->n_variants = (int)nv;
    p->n_place = p->ax_place >= 0 ? sp->axes[p->ax_place].n : 0;
    p->n_batch = p->ax_batch >= 0 ? sp->axes[p->ax_batch].n : 1;
    p->n_prec = p->ax_prec >= 0 ? sp->axes[p->ax_prec].n : 0;
    p->n_tp = p->ax_lay[PAR_TP] >= 0 ? sp->axes[p->ax_lay[PAR_TP]].n : 1;
    p->n_ep = p->ax_ep >= 0 ? sp->axes[p->ax_ep].n : 1;
    p->n_cp = p->ax_lay[PAR_CP] >= 0 ? sp->axes[p->ax_lay[PAR_CP]].n : 1;
    p->n_pr = p->ax_prompt >= 0 ? sp->axes[p->ax_prompt].n : 1;
    p->variants = calloc((size_t)p->n_variants, sizeof *p->variants);
    p->places = calloc((size_t)p->n_variants * (p->n_place ? p->n_place : 1), sizeof *p->places);
    p->default_dev = calloc((size_t)p->n_variants, sizeof *p->default_dev);
    p->default_prec = calloc((size_t)p->n_variants, sizeof *p->default_prec);
    p->precs = calloc((size_t)(p->n_prec ? p->n_prec : 1), sizeof *p->precs);
    p->quality = calloc((size_t)(p->n_prec ? p->n_prec : 1) * sp->n_workloads, sizeof *p->quality);
    p->dquality = calloc((size_t)P_COUNT * sp->n_workloads, sizeof *p->dquality);
    p->n_stk = sp->n_stacks + 1;
    pass_none(&p->none);
    if (!p->variants || !p->places || !p->default_dev || !p->default_prec || !p->precs || !p->quality ||
        !p->dquality) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto fail;
    }
    if ((rc = build_variants(p, e)) || (rc = collect_gbatch(p, e)))
        goto fail;
    p->shape_bytes = calloc(shape_count(p), sizeof *p->shape_bytes);
    p->shape_why = calloc(shape_count(p), sizeof *p->shape_why);
    p->used_stack = calloc((size_t)p->n_stk, sizeof *p->used_stack);
    if (!p->shape_bytes || !p->shape_why || !p->used_stack) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto fail;
    }
    const struct ql_table *qt = sp->have_quality ? &sp->quality : NULL;
    unsigned defaults = 0; /* the default precisions used, bit per enum prec */
    for (int v = 0; v < p->n_variants; v++) {
        p->default_dev[v] = eval_default_device(&p->variants[v]);
        p->default_prec[v] = eval_default_prec(&p->variants[v].dev[p->default_dev[v]]);
        if (p->default_prec[v] >= 0)
            defaults |= 1u << p->default_prec[v];
    }
    for (int i = 0; i < p->n_prec; i++) {
        if ((rc = prec_parse(sp->axes[p->ax_prec].v[i].s, &p->precs[i], e)))
            goto fail;
        for (int w = 0; w < sp->n_workloads; w++) /* once per precision, before the parallel region */
            eval_quality(qt, &sp->wl[w].model, &p->precs[i], &p->quality[i * sp->n_workloads + w]);
    }
    for (int d = 0; d < P_COUNT && p->ax_prec < 0; d++)
        for (int w = 0; w < sp->n_workloads && (defaults & (1u << d)); w++) {
            struct prec_cfg c = {(enum prec)d, (enum prec)d, (enum prec)d};
            eval_quality(qt, &sp->wl[w].model, &c, &p->dquality[d * sp->n_workloads + w]);
        }
    for (int k = 0; k < p->n_place; k++) {
        int anywhere = 0;
        for (int v = 0; v < p->n_variants; v++) {
            struct place *pl = &p->places[(size_t)v * p->n_place + k];
            struct dse_err pe;
            pl->ok = !eval_parse_placement(&p->variants[v], sp->axes[p->ax_place].v[k].s, &pl->dev, pl->type_dev, &pe);
            if (!pl->ok)
                dse_strlcpy(pl->reason, pe.msg, sizeof pl->reason);
            anywhere |= pl->ok;
        }
        if (!anywhere) {
            struct dse_err pe;
            eval_parse_placement(&p->variants[0], sp->axes[p->ax_place].v[k].s, &(int){0}, (int[OP_COUNT]){0}, &pe);
            rc = dse_err_set(e, DSE_EINPUT, sp->path, "axes.placement", "%s", pe.msg);
            goto fail;
        }
    }
    for (int w = 0; w < sp->n_workloads; w++) /* prompt + generated tokens within the positions */
        for (int pi = 0; pi < p->n_pr; pi++)
            for (int gi = 0; gi < (p->ax_gen >= 0 ? sp->axes[p->ax_gen].n : 1); gi++) {
                char jp[48];
                if (p->ax_prompt >= 0 || p->ax_gen >= 0)
                    snprintf(jp, sizeof jp, "axes.%s", p->ax_gen >= 0 && gi == sp->axes[p->ax_gen].n - 1 ? "generate" : "prompt");
                else
                    snprintf(jp, sizeof jp, sp->n_workloads > 1 ? "workload[%d].prompt" : "workload.prompt", w);
                if ((rc = wl_check_context(&sp->wl[w].model, sp->wl[w].phase, wl_tokens(p, p->ax_prompt, pi, sp->wl[w].prompt),
                                           wl_tokens(p, p->ax_gen, gi, sp->wl[w].gen), sp->path, jp, e)))
                    goto fail;
            }
    /* The stacks points can use: the axis's, the spec's, else the defaults of the devices that can be
     * primary (a placement's device, or the default device of each variant). */
    char used[SW_MAX_STACKS + 1] = {0};
    if (p->ax_sw >= 0)
        for (int i = 0; i < sp->axes[p->ax_sw].n; i++)
            used[sp->axes[p->ax_sw].v[i].ref] = 1;
    else if (sp->sw_fixed >= 0)
        used[sp->sw_fixed] = 1;
    else
        for (int v = 0; v < p->n_variants; v++)
            for (int k = 0; k < (p->n_place ? p->n_place : 1); k++) {
                int d = p->n_place ? p->places[(size_t)v * p->n_place + k].dev : p->default_dev[v];
                int si = sp->dev_stack[v / (p->n_combo * p->n_power)][d];
                used[si >= 0 ? si : p->n_stk - 1] = 1;
            }
    for (int si = 0; si < p->n_stk; si++)
        p->used_stack[si] = used[si];
    /* each shape's first graph (the smallest micro-batch): a workload no batch can build is refused
     * here, a shard that cannot split the model (tp that does not divide the heads) makes its points
     * infeasible; the other micro-batches are built when points need them (stage) */
    for (int w = 0; w < sp->n_workloads; w++)
        for (int pi = 0; pi < p->n_pr; pi++)
            for (int ti = 0; ti < p->n_tp; ti++)
                for (int ei = 0; ei < p->n_ep; ei++)
                for (int ci = 0; ci < p->n_cp; ci++)
                for (int si = 0; si < p->n_stk; si++) {
                    size_t sh = shape_of(p, w, pi, ti, ei, ci, si);
                    if (!used[si])
                        continue;
                    int en = add_entry(p, sh * (size_t)p->n_gb, 0, e);
                    if (en < 0 || (rc = build_entry(p, en, 1, e))) {
                        rc = rc ? rc : DSE_ERUNTIME;
                        goto fail;
                    }
                    if (p->ent[en].state == GE_REFUSED)
                        dse_strlcpy(p->shape_why[sh], p->ent[en].why, sizeof p->shape_why[sh]);
                    p->shape_bytes[sh] = p->ent[en].bytes;
                }
    if ((rc = map_rebuild(p, e)))
        goto fail;
    *out = p;
    return DSE_OK;
fail:
    sweep_prep_free(p);
    return rc;
}

const struct sweep_spec *sweep_prep_spec(const struct sweep_prep *p) { return p->sp; }

const struct ql_est *sweep_prep_quality(const struct sweep_prep *p, int prec_value, int w)
{
    if (w < 0 || w >= p->sp->n_workloads || prec_value < 0 || prec_value >= p->n_prec)
        return NULL;
    return &p->quality[prec_value * p->sp->n_workloads + w];
}

const struct hw_system *sweep_prep_system(const struct sweep_prep *p, int s)
{
    return s >= 0 && s < p->n_sys ? &p->variants[(size_t)s * p->n_combo * p->n_power] : NULL;
}

int sweep_scratch_init(struct sweep_prep *p, int threads, struct dse_err *e)
{
    p->scratch = calloc((size_t)threads, sizeof *p->scratch);
    p->results = calloc((size_t)threads, sizeof *p->results);
    p->raw = calloc((size_t)threads, sizeof *p->raw);
    if (!p->scratch || !p->results || !p->raw)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (int t = 0; t < threads; t++)
        p->raw[t].sig = -1;
    p->n_threads = threads;
    int64_t nreq = 0; /* the largest serving workload's requests, rescaled per point into a thread's buffer */
    for (int w = 0; w < p->sp->n_workloads; w++)
        if (p->sp->wl[w].serving.on && p->sp->wl[w].serving.n > nreq)
            nreq = p->sp->wl[w].serving.n;
    if (nreq) {
        if (!(p->srv_req = calloc((size_t)threads, sizeof *p->srv_req)))
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        for (int t = 0; t < threads; t++)
            if (!(p->srv_req[t] = malloc(sizeof **p->srv_req * (size_t)nreq)))
                return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    for (int t = 0; t < threads; t++)
        for (int k = 0; k < p->n_ent; k++) {
            int rc = p->ent[k].state == GE_BUILT ? eval_scratch_fit(&p->scratch[t], &p->ent[k].g, e) : DSE_OK;
            if (rc)
                return rc;
        }
    return DSE_OK;
}

void sweep_prep_free(struct sweep_prep *p)
{
    if (!p)
        return;
    for (int k = 0; k < p->n_ent; k++)
        eval_graphs_free(&p->ent[k].g);
    free(p->ent);
    free(p->map);
    free(p->shape_bytes);
    free(p->shape_why);
    free(p->used_stack);
    free(p->gbatch);
    for (int t = 0; t < p->n_threads; t++) {
        eval_scratch_free(&p->scratch[t]);
        eval_result_free(&p->results[t]);
        if (p->srv_req)
            free(p->srv_req[t]);
    }
    free(p->srv_req);
    free(p->scratch);
    free(p->results);
    free(p->raw);
    free(p->variants);
    free(p->places);
    free(p->default_dev);
    free(p->default_prec);
    free(p->precs);
    free(p->quality);
    free(p->dquality);
    free(p);
}

static void row_infeasible(struct sw_row *r, const char *why)
{
    r->feasible = 0;
    dse_strlcpy(r->reason, why, sizeof r->reason);
}

/* What the hwdesc lacks when a metric has no value (NaN) for a point that ran: eval.c leaves the cost
 * metrics NaN when no device of the system has a price or a rent (a system is priced whole), and
 * die_area_mm2 when a device used has neither an area model nor a datasheet area (hw_die_area_mm2).
 * Other metrics are NaN only where they do not apply, which the spec loader refuses for objectives. */
static const char *metric_needs(const struct metric *m)
{
    static const struct {
        const char *metric, *needs;
    } needs[] = {
        {"die_area_mm2", ": a device used has no area model and no cost.die_area_mm2 in its hwdesc"},
        {"cost_per_Mtoken_USD", ": no device of the system has cost.price_USD or cost.rent_USD_per_hour in its hwdesc"},
        {"cost_USD", ": no device of the system has cost.price_USD or cost.rent_USD_per_hour in its hwdesc"},
        {"cost_per_Minference_USD",
         ": no device of the system has cost.price_USD or cost.rent_USD_per_hour in its hwdesc"},
    };
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++)
        if (!strcmp(needs[i].metric, m->name))
            return needs[i].needs;
    return "";
}

/* Applies constraints and checks that every objective has a value (and, ranking pessimistically, an
 * interval). */
static void judge(const struct sweep_spec *sp, struct sw_row *r)
{
    for (int i = 0; i < sp->n_con && r->feasible; i++) {
        const struct sw_constraint *c = &sp->con[i];
        double v = r->metric[c->m - metric_table];
        char why[200];
        if (isnan(v)) {
            snprintf(why, sizeof why, "constraint on %s: not available for this point%s", c->m->name,
                     metric_needs(c->m));
            row_infeasible(r, why);
        } else if (c->le ? !(v <= c->bound) : !(v >= c->bound)) {
            snprintf(why, sizeof why, "constraint %s %s %g violated (%.4g)", c->m->name, c->le ? "<=" : ">=", c->bound,
                     v);
            row_infeasible(r, why);
        }
    }
    for (int i = 0; i < sp->n_obj && r->feasible; i++) {
        char why[200];
        if (isnan(r->metric[sp->obj[i].m - metric_table])) {
            snprintf(why, sizeof why, "objective %s not available for this point%s", sp->obj[i].m->name,
                     metric_needs(sp->obj[i].m));
            row_infeasible(r, why);
        } else if (sp->pessimistic && sp->obj[i].m->time_exp && isnan(r->metric[sp->err_low_m])) {
            snprintf(why, sizeof why, "objective %s: no error bars for this device class and workload kind "
                                      "(rank: pessimistic)", sp->obj[i].m->name);
            row_infeasible(r, why);
        }
    }
}

/* Evaluates the key point once and writes the rows of memory values m0..m1) into rows[0..m1 - m0). */
/* A serving point: the workload's requests at the point's rate through its scheduler (the axes' values
 * over the block's), each iteration costed from r's evaluation (serve_cost_build). Its totals are the
 * serve_* metrics, the devices and the price; *why is set when it cannot run (not an error). Unlike an
 * evaluation, it allocates: the cost builds its graphs and the run its state. Returns -1 only when out
 * of memory. */
static int serve_point(const struct sweep_prep *p, long long key, struct eval_req *r, const struct sw_serving *sv,
                       int thread, struct eval_result *res, const char **why)
{
    const struct sweep_spec *sp = p->sp;
    struct serve_cfg cfg = sv->cfg;
    double rate = sv->rate;
    if (p->ax_srv[0] >= 0)
        cfg.sched = (enum serve_sched)ju_lookup(serve_sched_names, sp->axes[p->ax_srv[0]].v[sweep_axis_index(sp, key, p->ax_srv[0])].s);
    if (p->ax_srv[1] >= 0)
        cfg.max_batched_tokens = (int64_t)sp->axes[p->ax_srv[1]].v[sweep_axis_index(sp, key, p->ax_srv[1])].num;
    if (p->ax_srv[2] >= 0)
        cfg.block_tokens = (int)sp->axes[p->ax_srv[2]].v[sweep_axis_index(sp, key, p->ax_srv[2])].num;
    if (p->ax_srv[3] >= 0)
        rate = sp->axes[p->ax_srv[3]].v[sweep_axis_index(sp, key, p->ax_srv[3])].num;
    if (cfg.sched == SCHED_STATIC)
        cfg.block_tokens = 1;
    cfg.sched_steps = r->sw ? r->sw->sched_steps : 0; /* the stack release's scheduler */
    cfg.per_request_s = (r->sw ? r->sw->per_request_s : 0) + r->sys->dev[r->dev].per_request_s;
    serve_cfg_defaults(&cfg, sv->longest);
    struct serve_req *q = p->srv_req[thread];
    for (int64_t i = 0; i < sv->n; i++) {
        q[i] = sv->unit[i];
        q[i].arrival_s = sv->unit[i].arrival_s / rate;
    }
    struct serve_cost c;
    struct serve_result sr;
    struct dse_err le;
    memset(&res->t, 0, sizeof res->t);
    res->feasible = 1;
    res->reason[0] = 0;
    int rc = serve_cost_build(r, serve_grid_tokens(&cfg), sv->mem_util, &c, &le);
    if (!rc)
        rc = serve_run(&c, &cfg, q, sv->n, 0, &sr, &le);
    if (rc) {
        if (rc == DSE_ERUNTIME && strstr(le.msg, "out of memory"))
            return -1;
        res->feasible = 0;
        dse_strlcpy(res->reason, le.msg, sizeof res->reason);
        *why = res->reason;
        return 0;
    }
    struct eval_totals *t = &res->t;
    t->devices = (double)c.devices * c.replicas;
    t->srv_rps = sr.throughput_rps;
    t->srv_tokens_per_s = sr.output_tokens_per_s;
    t->srv_goodput_rps = sr.goodput_rps;
    t->srv_attainment = sr.slo_attainment;
    t->srv_ttft_p50_s = sr.ttft_s.p50;
    t->srv_ttft_p99_s = sr.ttft_s.p99;
    t->srv_tpot_p50_s = sr.tpot_s.p50;
    t->srv_tpot_p99_s = sr.tpot_s.p99;
    t->srv_e2e_p50_s = sr.e2e_s.p50;
    t->srv_e2e_p99_s = sr.e2e_s.p99;
    t->srv_cost_per_Mtoken_USD = sr.cost_per_Mtoken_USD;
    t->srv_energy_per_token_J = sr.energy_per_token_J;
    t->srv_goodput_per_USD = c.usd_per_s > 0 ? sr.goodput_rps / c.usd_per_s : NAN;
    t->srv_kv_use = sr.kv_use_mean;
    t->srv_preemptions = (double)sr.preemptions;
    serve_result_free(&sr);
    return 0;
}

/* A point's request (its key's: the memory index is the capacity check's), why it is infeasible before
 * any evaluation (a placement or layout it cannot use), else the slot of its graphs. -1 on a runtime
 * error (e set). */
struct point_req {
    struct eval_req r;
    int v, w, pr, ti, ei, ci, si;
    const char *why;
    char lwhy[sizeof ((struct dse_err *)0)->msg];
    size_t slot; /* SIZE_MAX: none (why set) */
};

static int point_req(const struct sweep_prep *p, long long key, struct point_req *q, struct dse_err *e)
{
    const struct sweep_spec *sp = p->sp;
    int v = variant_of(p, key);
    const struct hw_system *sys = &p->variants[v];
    int w = p->ax_wl >= 0 ? sweep_axis_index(sp, key, p->ax_wl) : 0;
    int b = p->ax_batch >= 0 ? sweep_axis_index(sp, key, p->ax_batch) : 0;
    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = sys;
    r.model = &sp->wl[w].model;
    r.phase = sp->wl[w].phase;
    int pr = p->ax_prompt >= 0 ? sweep_axis_index(sp, key, p->ax_prompt) : 0;
    r.prompt = wl_tokens(p, p->ax_prompt, pr, sp->wl[w].prompt);
    r.gen = wl_tokens(p, p->ax_gen, p->ax_gen >= 0 ? sweep_axis_index(sp, key, p->ax_gen) : 0, sp->wl[w].gen);
    r.batch = p->ax_batch >= 0 ? (int64_t)sp->axes[p->ax_batch].v[b].num : 1;
    r.skip_capacity = 1;
    r.errbars = sp->have_errbars ? &sp->errbars : NULL;
    r.cost = &sp->cost;
    r.x.fidelity = sp->fidelity;
    if (p->ax_fid >= 0)
        r.x.fidelity = (enum fidelity)ju_lookup(fidelity_names, sp->axes[p->ax_fid].v[sweep_axis_index(sp, key, p->ax_fid)].s);
    const char *why = NULL;
    if (p->ax_place >= 0) {
        const struct place *pl = &p->places[(size_t)v * p->n_place + sweep_axis_index(sp, key, p->ax_place)];
        if (!pl->ok)
            why = pl->reason;
        r.dev = pl->dev;
        memcpy(r.type_dev, pl->type_dev, sizeof r.type_dev);
    } else {
        r.dev = p->default_dev[v];
        for (int t = 0; t < OP_COUNT; t++)
            r.type_dev[t] = -1;
    }
    if (p->ax_prec >= 0) {
        int pi = sweep_axis_index(sp, key, p->ax_prec);
        r.x.prec = p->precs[pi];
        r.quality = &p->quality[pi * sp->n_workloads + w];
    } else if (p->default_prec[v] >= 0) {
        r.x.prec.w = r.x.prec.a = r.x.prec.kv = (enum prec)p->default_prec[v];
        r.quality = &p->dquality[p->default_prec[v] * sp->n_workloads + w];
    } else {
        why = "the default device has no GEMM precision";
    }
    int si = p->ax_sw >= 0 ? sp->axes[p->ax_sw].v[sweep_axis_index(sp, key, p->ax_sw)].ref : sp->sw_fixed;
    if (si < 0) { /* the primary device's own stack */
        si = sp->dev_stack[v / (p->n_combo * p->n_power)][r.dev];
        if (si < 0)
            si = p->n_stk - 1;
    }
    r.sw = stack_of(p, si);
    /* the layout: the axes' values, dp filling what tp x pp leave of the system's devices */
    int ti = p->ax_lay[PAR_TP] >= 0 ? sweep_axis_index(sp, key, p->ax_lay[PAR_TP]) : 0;
    for (int d = 0; d < PAR_DIM_COUNT; d++)
        r.layout.n[d] = p->ax_lay[d] >= 0 ? (int)sp->axes[p->ax_lay[d]].v[sweep_axis_index(sp, key, p->ax_lay[d])].num : 0;
    r.layout.microbatches = p->ax_mb >= 0 ? (int)sp->axes[p->ax_mb].v[sweep_axis_index(sp, key, p->ax_mb)].num : 0;
    int ei = p->ax_ep >= 0 ? sweep_axis_index(sp, key, p->ax_ep) : 0;
    r.layout.ep = axis_num(p, p->ax_ep, ei, 0);
    if (sp->wl[w].phase == PH_TRAIN)
        r.train = sp->wl[w].train;
    if (p->ax_rc >= 0 && !why) {
        if (sp->wl[w].phase != PH_TRAIN)
            why = "the recompute axis applies to training steps (phase train)";
        else
            r.train.recompute =
                (enum train_recompute)ju_lookup(train_recompute_names, sp->axes[p->ax_rc].v[sweep_axis_index(sp, key, p->ax_rc)].s);
    }
    struct dse_err le;
    q->slot = SIZE_MAX;
    if (!why && (par_layout_complete(sys, &r.layout, &le) || eval_check_layout(&r, &le))) {
        dse_strlcpy(q->lwhy, le.msg, sizeof q->lwhy);
        why = q->lwhy;
    }
    int ci = p->ax_lay[PAR_CP] >= 0 ? sweep_axis_index(sp, key, p->ax_lay[PAR_CP]) : 0;
    if (!why) { /* the graphs of this point's micro-batch */
        int64_t g = eval_micro_batch(&r);
        const int64_t *hit = bsearch(&g, p->gbatch, (size_t)p->n_gb, sizeof g, cmp_i64);
        if (!hit)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "no graph for micro-batch %lld", (long long)g), -1;
        q->slot = graph_of(p, w, pr, (int)(hit - p->gbatch), ti, ei, ci, si);
    }
    q->r = r;
    q->v = v;
    q->w = w;
    q->pr = pr;
    q->ti = ti;
    q->ei = ei;
    q->ci = ci;
    q->si = si;
    q->why = why;
    return 0;
}

static int point_req_slot(const struct sweep_prep *p, long long key, size_t *slot, struct dse_err *e)
{
    struct point_req q;
    if (point_req(p, key, &q, e))
        return -1;
    *slot = q.why ? SIZE_MAX : q.slot;
    return 0;
}

/* det (NULL on the sweep's hot path): the evaluation with its per-operator rows, into det->res. */
static int eval_rows(const struct sweep_prep *p, long long key, int m0, int m1, int thread, struct sw_row *rows,
                     struct sweep_detail *det, struct dse_err *e)
{
    const struct sweep_spec *sp = p->sp;
    struct point_req q;
    if (point_req(p, key, &q, e))
        return -1;
    struct eval_req r = q.r;
    const struct hw_system *sys = r.sys;
    int w = q.w;
    const char *why = q.why;
    const struct eval_graphs *eg = NULL;
    if (!why) { /* its graphs, staged before a parallel region, else built now (one point: dse show) */
        int en = lookup(p, q.slot);
        if (en < 0 && in_parallel())
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "point %lld: its graphs were not built before the "
                               "parallel region", key), -1;
        if (en < 0) {
            struct sweep_prep *mp = (struct sweep_prep *)p; /* the graph cache: changed outside parallel regions only */
            long long one = key;
            if (stage(mp, &one, 1, 0, NULL, e) < 0)
                return -1;
            en = lookup(p, q.slot);
        }
        if (en < 0)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "point %lld: no graph for it", key), -1;
        if (p->ent[en].state == GE_REFUSED)
            why = p->ent[en].why;
        else
            eg = &p->ent[en].g;
    }
    struct eval_result *res = det ? &det->res : &p->results[thread];
    const struct sw_serving *sv = &sp->wl[w].serving;
    if (det) {
        r.want_ops = 1;
        det->sys = sys;
        det->dev = r.dev;
        det->prec = r.x.prec;
        det->fidelity = r.x.fidelity;
        det->serving = sv->on;
        det->res.n_ops = 0;
    }
    if (!sv->on)
        for (int k = 0; k < 4 && !why; k++)
            if (p->ax_srv[k] >= 0)
                why = "the serving axes (scheduler, max_batched_tokens, block_size, rate) apply to serving workloads "
                      "(a \"serving\" block)";
    if (!why && sv->on) { /* a serving run (serve.h), not one evaluation */
        if (serve_point(p, key, &r, sv, thread, res, &why))
            return -1;
    } else if (!why) {
        int rc;
        /* a power cap at or below a device's idle power disables it (hw_apply_power_cap), which the
         * operators' placement does see: such a variant neither gives nor takes costs */
        int any_disabled = 0;
        for (int d = 0; d < sys->n_dev; d++)
            any_disabled |= sys->dev[d].disabled[0] != 0;
        struct raw_cost *rw = det || p->ax_power < 0 || any_disabled ? NULL : &p->raw[thread];
        long long sig = rw ? key - sweep_axis_index(sp, key, p->ax_power) * p->power_stride : -1;
        r.share_sig = rw ? sig + 1 : 0; /* a cap's modes evaluated once per key (eval.c: pick_mode) */
        if (rw && rw->sig == sig) { /* the same operators' costs as the last point, but for the power cap */
            struct eval_op *ops = res->ops;
            int cap_ops = res->cap_ops;
            *res = rw->res;
            res->ops = ops;
            res->cap_ops = cap_ops;
            rc = eval_point_limits(&r, eg, &p->scratch[thread], res, e);
        } else {
            rc = eval_point_ops(&r, eg, &p->scratch[thread], res, e);
            if (rw) {
                rw->sig = rc ? -1 : sig;
                rw->res = *res;
                rw->res.ops = NULL; /* the costs only: a sweep keeps no operator rows */
                rw->res.cap_ops = 0;
            }
            if (!rc)
                rc = eval_point_limits(&r, eg, &p->scratch[thread], res, e);
        }
        if (rc == DSE_EINPUT) { /* a device this point cannot use (class check): infeasible, not fatal */
            res->feasible = 0;
            dse_strlcpy(res->reason, e->msg, sizeof res->reason);
        } else if (rc) {
            return -1;
        }
        if (!res->feasible)
            why = res->reason;
    }
    char cap_why[sizeof res->reason], judge_why[sizeof rows[0].reason];
    int judged = 0; /* 1: this key's rows pass the constraints and objectives, 2: they fail (judge_why) */
    size_t cap_prefix = 0;
    int cap_dev = -1;
    double cap_total = 0;
    for (int m = m0; m < m1; m++) {
        struct sw_row *row = &rows[m - m0];
        row->point = key + m;
        row->feasible = 1;
        row->reason[0] = '\0';
        if (why) {
            for (int i = 0; i < metric_count; i++)
                row->metric[i] = NAN;
            row_infeasible(row, why);
            continue;
        }
        /* One evaluation serves every memory value: the metrics are the first row's, and only the
         * capacity check differs, whose reason differs only in the capacity figure at its end. */
        if (m > m0)
            memcpy(row->metric, rows[0].metric, sizeof row->metric[0] * (size_t)metric_count);
        else
            for (int i = 0; i < metric_count; i++)
                row->metric[i] = metric_applies_to(&metric_table[i], r.phase, sv->on)
                                     ? metric_value(&metric_table[i], &res->t)
                                     : NAN;
        if (!sv->on) { /* (a serving run managed its own memory: the KV cache's blocks) */
            double total, cap;
            int d = eval_capacity_short(sys, r.sw, r.dev, p->ax_mem >= 0 ? sp->axes[p->ax_mem].v[m].num * 1e9 : 0,
                                        res, &total, &cap);
            if (d >= 0) {
                if (d == cap_dev && total == cap_total)
                    eval_capacity_suffix(sys, r.sw, d, cap, cap_why + cap_prefix, sizeof cap_why - cap_prefix);
                else
                    cap_prefix = eval_capacity_reason(sys, r.sw, res, d, total, cap, cap_why, sizeof cap_why);
                cap_dev = d;
                cap_total = total;
                row_infeasible(row, cap_why);
            }
        }
        /* the constraints and objectives see the metrics only, the same for every memory value: judged
         * once per key, on its first row that fits */
        if (row->feasible && !judged) {
            judge(sp, row);
            judged = row->feasible ? 1 : 2;
            if (judged == 2)
                dse_strlcpy(judge_why, row->reason, sizeof judge_why);
        } else if (row->feasible && judged == 2) {
            row_infeasible(row, judge_why);
        }
    }
    return m1 - m0;
}

int sweep_eval_key(const struct sweep_prep *p, long long key, int thread, struct sw_row *rows, struct dse_err *e)
{
    return eval_rows(p, key, 0, sweep_mem_count(p->sp), thread, rows, NULL, e);
}

int sweep_eval_point(const struct sweep_prep *p, long long point, int thread, struct sw_row *row, struct dse_err *e)
{
    int m = (int)(point % sweep_mem_count(p->sp));
    return eval_rows(p, point - m, m, m + 1, thread, row, NULL, e) < 0 ? -1 : 0;
}

int sweep_eval_detail(const struct sweep_prep *p, long long point, int thread, struct sw_row *row,
                      struct sweep_detail *d, struct dse_err *e)
{
    int m = (int)(point % sweep_mem_count(p->sp));
    return eval_rows(p, point - m, m, m + 1, thread, row, d, e) < 0 ? -1 : 0;
}

void sweep_objectives(const struct sweep_spec *sp, const struct sw_row *r, double *obj)
{
    double low = sp->pessimistic ? r->metric[sp->err_low_m] : NAN;
    for (int i = 0; i < sp->n_obj; i++) {
        double v = metric_pessimistic(sp->obj[i].m, r->metric[sp->obj[i].m - metric_table], low);
        obj[i] = sp->obj[i].maximize ? -v : v;
    }
}
