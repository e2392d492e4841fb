/* calib_arch.c -- an architecture's kernel terms fitted to measured kernels (dse calibrate --measured).
 *
 * The terms are those a die and its kernel library set for every board built on it (hwdesc/arch/NAME.json):
 * the achieved compute efficiency of each GEMM-like class the rows cover (matmul, matmul_skinny,
 * attention, attention_decode), the precision factor of each precision beside fp16/bf16 with enough
 * GEMM rows, the GEMM depth term k_half (efficiency x K / (K + k_half): short-K GEMMs spend a larger
 * share in prologue and epilogue), the bandwidth factor of each memory-bound class (element-wise, norm,
 * softmax, decode attention, and one for both GEMM classes) on top of main memory's efficiency (kept: the factors carry
 * the fit), of each element-wise function beside the one with most rows (a library's rotary kernel
 * reaches less bandwidth than its add), and the fixed duration of a kernel as a profiler's trace times it (kernel_us). The tile and wave quantisation
 * of the GPU model stays as derived (model_gpu_tiling): only these terms are free.
 * Fit: gsl_multifit_nlinear (trust region, finite differences) minimises sum log(predicted /
 * measured)^2 over at most KC_PER_CLASS rows per class (per function for element-wise ones), taken at
 * an even stride through its fit-half rows in file order (deterministic; a class of many rows does not drown a small one).
 * Compute efficiencies and precision factors are logistic in (0.02, 1) (the skinny GEMMs' in [1/2, 1] of
 * the full GEMMs': see is_skinny), bandwidth factors in (0.02, 2.5),
 * times and depths exponentials. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

#define KC_PER_CLASS 3000
#define KC_PREC_MIN 20 /* GEMM rows a precision's factor needs */
#define KC_EFF_LO 0.02
#define KC_EFF_HI 2.5

const char *const kc_knob_names[KN_COUNT + 1] = {"compute",     "memory",      "precision", "gemm_k_half",
                                                 "main_memory", "kernel_us",   "function",  "row_iter_ns",
                                                 "gemm_k_fill", "gemm_wave_tail", NULL};

/* A compute efficiency stays at most 1 (no kernel runs above its peak); a bandwidth factor may exceed 1
 * (a level's efficiency is the board's; a kernel whose operands stay in L2 reaches more). */
static double hi_of(int kind) { return kind == KN_CLASS || kind == KN_PREC || kind == KN_TAIL ? 1.0 : KC_EFF_HI; }
static double squash(double u, double hi) { return KC_EFF_LO + (hi - KC_EFF_LO) / (1 + exp(-u)); }
static double unsquash(double v, double hi)
{
    double p = (v - KC_EFF_LO) / (hi - KC_EFF_LO);
    p = p < 1e-4 ? 1e-4 : p > 0.9999 ? 0.9999 : p;
    return log(p / (1 - p));
}

void kc_fit_apply(struct hw_device *d, const struct kc_fit *k)
{
    for (int i = 0; i < k->n; i++) {
        double v = k->value[i];
        switch (k->kind[i]) {
        case KN_CLASS: d->eff_class[k->arg[i]] = v; break;
        case KN_MCLASS: /* a GEMM's factor is both matmul classes': skinny and full GEMMs read operands alike,
                         * and one factor keeps the time monotonic across the class boundary */
            d->eff_mclass[k->arg[i]] = v;
            if (k->arg[i] == EC_MATMUL)
                d->eff_mclass[EC_MATMUL_SKINNY] = v;
            break;
        case KN_PREC: d->eff_prec[k->arg[i]] = v; break;
        case KN_KHALF: d->gemm_k_half = v; break;
        case KN_KFILL: d->gemm_k_fill = v; break;
        case KN_TAIL: d->gemm_wave_tail = v; break;
        case KN_MAIN: d->eff_level[d->n_mem - 1] = v; break;
        case KN_KERNEL: d->kernel_s = v * 1e-6; break;
        case KN_FN: d->eff_fn[k->arg[i]] = v; break;
        case KN_ROW: d->row_iter_s[k->arg[i]] = v * 1e-9; break;
        default: break;
        }
    }
}

static double knob_now(const struct hw_device *d, int kind, int arg)
{
    switch (kind) {
    case KN_CLASS: return d->eff_class[arg];
    case KN_MCLASS: return d->eff_mclass[arg];
    case KN_PREC: return d->eff_prec[arg];
    case KN_KHALF: return d->gemm_k_half > 1 ? d->gemm_k_half : 64;
    case KN_KFILL: return d->gemm_k_fill > 1 ? d->gemm_k_fill : 256;
    case KN_TAIL: return d->gemm_wave_tail > 0.05 ? d->gemm_wave_tail : 0.3;
    case KN_MAIN: return d->eff_level[d->n_mem - 1];
    case KN_FN: return d->eff_fn[arg];
    case KN_ROW: return d->row_iter_s[arg] > 0 ? d->row_iter_s[arg] * 1e9 : 500;
    default: return d->kernel_s > 0 ? d->kernel_s * 1e6 : 2;
    }
}

static int is_log_knob(int kind) { return kind == KN_KHALF || kind == KN_KFILL || kind == KN_KERNEL || kind == KN_ROW; }

struct kc_ctx {
    const struct hw_system *sys;
    struct hw_system *work;
    int dev;
    const struct kcase *c;
    const struct wl_graph *g;
    const int *rows;
    int n;
    enum fidelity f;
    struct kc_fit shape;
    int failed;
};

/* The skinny GEMMs' compute efficiency is kept in [1/2, 1] of the full GEMMs': a GEMM of 32 rows runs
 * tiles of 32 at it where one of 33 runs tiles of 64 at the full class's, so below half its time would
 * fall as M grows across the class boundary (the invariant tests' monotonic GEMM time). */
static int is_skinny(const struct kc_fit *k, int i) { return k->kind[i] == KN_CLASS && k->arg[i] == EC_MATMUL_SKINNY; }
static double full_gemm_eff(const struct kc_fit *k, const struct hw_device *d)
{
    for (int i = 0; i < k->n; i++)
        if (k->kind[i] == KN_CLASS && k->arg[i] == EC_MATMUL)
            return k->value[i];
    return d->eff_class[EC_MATMUL];
}

static void unmap(const struct kc_ctx *x, const gsl_vector *v, struct kc_fit *out)
{
    *out = x->shape;
    for (int i = 0; i < out->n; i++) {
        double u = gsl_vector_get(v, (size_t)i);
        out->value[i] = is_log_knob(out->kind[i]) ? exp(u < 12 ? u : 12) : squash(u, hi_of(out->kind[i]));
    }
    for (int i = 0; i < out->n; i++)
        if (is_skinny(out, i))
            out->value[i] = full_gemm_eff(out, &x->sys->dev[x->dev]) * (0.5 + 0.5 / (1 + exp(-gsl_vector_get(v, (size_t)i))));
}

static int resid(const gsl_vector *v, void *data, gsl_vector *r)
{
    struct kc_ctx *x = data;
    struct kc_fit k;
    unmap(x, v, &k);
    *x->work = *x->sys;
    kc_fit_apply(&x->work->dev[x->dev], &k);
    kc_trace_view(x->work);
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(| : bad)
    for (int i = 0; i < x->n; i++) {
        const struct kcase *c = &x->c[x->rows[i]];
        struct dse_err e;
        double ms = 0;
        dse_err_clear(&e);
        if (vk_predict(&c->k, &x->g[i], x->work, x->dev, x->f, 0, &ms, NULL, &e) || !(ms > 0)) {
            bad = 1;
            continue;
        }
        gsl_vector_set(r, (size_t)i, log(ms / c->measured_ms));
    }
    if (bad) {
        x->failed = 1;
        return GSL_EDOM;
    }
    return GSL_SUCCESS;
}

/* Minimises sum r_i(x)^2 from x[0..p) (n residuals, f: the residual function over params), leaving the
 * solution in x; *failed: set by f when a prediction failed. */
static int solve(int (*f)(const gsl_vector *, void *, gsl_vector *), void *params, const int *failed, size_t n,
                 size_t p, double *x, struct dse_err *e)
{
    gsl_vector_view xv = gsl_vector_view_array(x, p);
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof fdf);
    fdf.f = f; /* finite-difference Jacobian */
    fdf.n = n;
    fdf.p = p;
    fdf.params = params;
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, n, p);
    if (!w)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    gsl_error_handler_t *old = gsl_set_error_handler_off(); /* GSL's default handler aborts */
    int info = 0, rc = DSE_OK, st = gsl_multifit_nlinear_init(&xv.vector, &fdf, w);
    if (st == GSL_SUCCESS)
        st = gsl_multifit_nlinear_driver(100, 1e-8, 1e-8, 1e-8, NULL, NULL, &info, w);
    gsl_set_error_handler(old);
    if (*failed)
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "calibrate --measured: a prediction failed during the fit");
    else if (st != GSL_SUCCESS && st != GSL_EMAXITER)
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "calibrate --measured: the fit did not converge: %s",
                         gsl_strerror(st));
    else
        memcpy(x, gsl_vector_const_ptr(gsl_multifit_nlinear_position(w), 0), sizeof *x * p);
    gsl_multifit_nlinear_free(w);
    return rc;
}

/* Adds a knob unless there. */
static void knob(struct kc_fit *k, int kind, int arg)
{
    for (int i = 0; i < k->n; i++)
        if (k->kind[i] == kind && k->arg[i] == arg)
            return;
    if (k->n < KC_MAX_KNOBS) {
        k->kind[k->n] = kind;
        k->arg[k->n++] = arg;
    }
}

int kc_fit_arch(const struct hw_system *sys, const struct kcase *cs, const int *fit, int n_fit, enum fidelity f,
                struct kc_fit *out, int *n_used, struct dse_err *e)
{
    int dev = eval_default_device(sys), rc = DSE_OK;
    const struct hw_device *d = &sys->dev[dev];
    int *rows = malloc(sizeof *rows * (size_t)(n_fit ? n_fit : 1)), n = 0;
    struct wl_graph *g = calloc((size_t)(n_fit ? n_fit : 1), sizeof *g);
    int per[EC_COUNT] = {0}, gemm_prec[P_COUNT] = {0}, per_fn[FN_COUNT] = {0}, per_key[EC_COUNT * FN_COUNT] = {0}, per_rk[RK_COUNT] = {0}, *cls = malloc(sizeof *cls * (size_t)(n_fit ? n_fit : 1));
    struct kc_ctx x;
    memset(&x, 0, sizeof x);
    memset(out, 0, sizeof *out);
    if (!rows || !g || !cls || !(x.work = malloc(sizeof *x.work))) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto done;
    }
    for (int i = 0; i < n_fit; i++) { /* the class of each kernel row, and how many there are */
        struct wl_graph gi;
        cls[i] = -1;
        if (cs[fit[i]].coll >= 0 || vk_graph(&cs[fit[i]].k, &gi, e))
            continue;
        cls[i] = model_eff_class(&gi.op[0]) * FN_COUNT + (gi.op[0].type == OP_ELTWISE ? (int)gi.op[0].fn : 0);
        per[cls[i] / FN_COUNT]++;
        per_key[cls[i]]++;
        if (gi.op[0].type == OP_ELTWISE && gi.op[0].fn > FN_NONE && gi.op[0].fn < FN_COUNT)
            per_fn[gi.op[0].fn]++;
        if (model_row_kind(&gi.op[0]) >= 0)
            per_rk[model_row_kind(&gi.op[0])]++;
        wl_graph_free(&gi);
    }
    dse_err_clear(e);
    int seen[EC_COUNT * FN_COUNT] = {0};
    for (int i = 0; i < n_fit; i++) { /* an even stride through each class (and element-wise function) */
        int c = cls[i];
        if (c < 0)
            continue;
        int stride = per_key[c] > KC_PER_CLASS ? (per_key[c] + KC_PER_CLASS - 1) / KC_PER_CLASS : 1;
        if (seen[c]++ % stride)
            continue;
        if ((rc = vk_graph(&cs[fit[i]].k, &g[n], e)))
            goto done;
        rows[n++] = fit[i];
        if (op_type_is_gemm(g[n - 1].op[0].type) && g[n - 1].op[0].type != OP_ATTENTION)
            gemm_prec[cs[fit[i]].k.prec]++;
    }
    /* A precision whose GEMM rows the stride thinned below what its factor needs is taken whole: a few
     * rows of one precision (DeepGEMM's FP8 tables) among thousands of another's. */
    int all_prec[P_COUNT] = {0};
    for (int i = 0; i < n_fit; i++)
        if (cls[i] >= 0 && (cls[i] / FN_COUNT == EC_MATMUL || cls[i] / FN_COUNT == EC_MATMUL_SKINNY))
            all_prec[cs[fit[i]].k.prec]++;
    for (int p = 0; p < P_COUNT; p++) {
        if (p == P_FP16 || p == P_BF16 || gemm_prec[p] >= KC_PREC_MIN || all_prec[p] < KC_PREC_MIN)
            continue;
        for (int i = 0, c; i < n_fit; i++) {
            if ((c = cls[i]) < 0 || (int)cs[fit[i]].k.prec != p ||
                (c / FN_COUNT != EC_MATMUL && c / FN_COUNT != EC_MATMUL_SKINNY))
                continue;
            int have = 0;
            for (int j = 0; j < n && !have; j++)
                have = rows[j] == fit[i];
            if (have)
                continue;
            if ((rc = vk_graph(&cs[fit[i]].k, &g[n], e)))
                goto done;
            rows[n++] = fit[i];
            gemm_prec[p]++;
        }
    }
    for (int c = 0; c < EC_COUNT; c++) {
        if (!per[c])
            continue;
        if (c == EC_MATMUL || c == EC_MATMUL_SKINNY || c == EC_ATTENTION || c == EC_ATTENTION_DECODE || c == EC_CONV)
            knob(out, KN_CLASS, c);
        if (c == EC_MATMUL || c == EC_MATMUL_SKINNY)
            knob(out, KN_MCLASS, EC_MATMUL);
        if (c == EC_ATTENTION_DECODE || c == EC_NORM || c == EC_SOFTMAX || c == EC_ELTWISE)
            knob(out, KN_MCLASS, c);
    }
    int ref = -1; /* the element-wise function with most rows carries the class's factor; the others their own */
    for (int fn = FN_NONE + 1; fn < FN_COUNT; fn++)
        if (per_fn[fn] && (ref < 0 || per_fn[fn] > per_fn[ref]))
            ref = fn;
    for (int fn = FN_NONE + 1; fn < FN_COUNT; fn++)
        if (per_fn[fn] && fn != ref)
            knob(out, KN_FN, fn);
    int base_prec = gemm_prec[P_FP16] >= gemm_prec[P_BF16] ? P_FP16 : P_BF16;
    for (int p = 0; p < P_COUNT; p++)
        if (p != P_FP16 && p != P_BF16 && gemm_prec[p] >= KC_PREC_MIN)
            knob(out, KN_PREC, p);
    if (gemm_prec[base_prec] > 0)
        knob(out, KN_KHALF, 0);
    if (gemm_prec[base_prec] > 0 && d->cls == HW_GPU && d->gpu.present) {
        knob(out, KN_KFILL, 0);
        knob(out, KN_TAIL, 0);
    }
    /* a row kernel's step time, on a GPU whose architecture names its resident threads (row_kernels) */
    for (int k = 0; k < RK_COUNT; k++)
        if (per_rk[k] && d->cls == HW_GPU && d->gpu.present && d->row_threads_per_sm > 0)
            knob(out, KN_ROW, k);
    knob(out, KN_KERNEL, 0); /* main memory's efficiency stays the board's: the classes' factors carry the fit */
    if (n < 2 * out->n) {
        rc = dse_err_set(e, DSE_EINPUT, NULL, NULL, "%d kernel rows to fit %d terms: at least %d needed", n, out->n,
                         2 * out->n);
        goto done;
    }
    x.sys = sys;
    x.dev = dev;
    x.c = cs;
    x.g = g;
    x.rows = rows;
    x.n = n;
    x.f = f;
    x.shape = *out;
    double x0[KC_MAX_KNOBS];
    for (int i = 0; i < out->n; i++) {
        double now = knob_now(d, out->kind[i], out->arg[i]);
        x0[i] = is_log_knob(out->kind[i]) ? log(now) : unsquash(now < 0.98 * hi_of(out->kind[i]) ? now : 0.98 * hi_of(out->kind[i]), hi_of(out->kind[i]));
        if (is_skinny(out, i)) { /* its share of the full GEMMs' efficiency, in [1/2, 1] */
            double r = 2 * now / d->eff_class[EC_MATMUL] - 1;
            r = r < 1e-3 ? 1e-3 : r > 0.999 ? 0.999 : r;
            x0[i] = log(r / (1 - r));
        }
    }
    if ((rc = solve(resid, &x, &x.failed, (size_t)n, (size_t)out->n, x0, e)))
        goto done;
    gsl_vector_view xv = gsl_vector_view_array(x0, (size_t)out->n);
    unmap(&x, &xv.vector, out);
    *n_used = n;
done:
    for (int i = 0; i < n; i++)
        wl_graph_free(&g[i]);
    free(g);
    free(rows);
    free(cls);
    free(x.work);
    return rc;
}

/* ---- a topology level's collective terms (dse calibrate --measured --level) ----
 * Free: the level's efficiency (its achieved share of the line rate), its latency per message step and
 * its base latency per collective (docs/models.md, "Collectives"), fitted as exponentials (efficiency
 * capped at 1) to sum log(predicted / measured)^2 over the collective rows given, each predicted by
 * kcase_predict over the system's topology. */
struct kt_ctx {
    const struct hw_system *sys;
    struct hw_system *work;
    struct kcase *c;
    const int *rows;
    int n, level, failed;
};

static void kt_apply(struct hw_system *s, int level, const double *v)
{
    struct hw_topo_level *L = &s->topo.level[level];
    L->bandwidth_Bps = L->line_rate_Bps * v[0];
    L->latency_s = v[1] * 1e-6;
    L->base_latency_s = v[2] * 1e-6;
}

static void kt_unmap(const gsl_vector *x, double *v)
{
    double u0 = gsl_vector_get(x, 0);
    v[0] = 1 / (1 + exp(-u0)); /* efficiency in (0, 1) */
    for (int i = 1; i < 3; i++) {
        double u = gsl_vector_get(x, (size_t)i);
        v[i] = exp(u < 10 ? u : 10);
    }
}

static int kt_resid(const gsl_vector *x, void *data, gsl_vector *r)
{
    struct kt_ctx *k = data;
    double v[3];
    kt_unmap(x, v);
    *k->work = *k->sys;
    kt_apply(k->work, k->level, v);
    for (int i = 0; i < k->n; i++) {
        struct kcase c = k->c[k->rows[i]]; /* a copy: the fit leaves the cases' predictions alone */
        struct dse_err e;
        dse_err_clear(&e);
        if (kcase_predict(&c, k->work, FID_ANALYTICAL, &e) || !c.ok) {
            k->failed = 1;
            return GSL_EDOM;
        }
        gsl_vector_set(r, (size_t)i, log(c.predicted_ms / c.measured_ms));
    }
    return GSL_SUCCESS;
}

int kc_fit_topo(const struct hw_system *sys, int level, struct kcase *cs, const int *rows, int n, double out[3],
                struct dse_err *e)
{
    if (level < 0 || level >= sys->topo.n_level)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s has no topology level %d", sys->name, level);
    if (n < 6)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%d collective rows to fit 3 terms: at least 6 needed", n);
    const struct hw_topo_level *L = &sys->topo.level[level];
    struct kt_ctx k = {sys, malloc(sizeof *k.work), cs, rows, n, level, 0};
    if (!k.work)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    double eff = L->line_rate_Bps > 0 ? L->bandwidth_Bps / L->line_rate_Bps : 0.8;
    eff = eff > 0.98 ? 0.98 : eff < 0.05 ? 0.05 : eff;
    double x0[3] = {log(eff / (1 - eff)), log(L->latency_s > 0 ? L->latency_s * 1e6 : 1),
                    log(L->base_latency_s > 0 ? L->base_latency_s * 1e6 : 5)};
    int rc = solve(kt_resid, &k, &k.failed, (size_t)n, 3, x0, e);
    if (!rc) {
        gsl_vector_view xv = gsl_vector_view_array(x0, 3);
        kt_unmap(&xv.vector, out);
    }
    free(k.work);
    return rc;
}

void kc_topo_apply(struct hw_system *sys, int level, const double v[3]) { kt_apply(sys, level, v); }
