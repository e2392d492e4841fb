/* validate.c -- the timing harness of the native kernel cases, their prediction, and calibration
 * (the suites themselves: validate_suite.c).
 *
 * Timing: 2 warm-up runs, then runs timed with CLOCK_MONOTONIC until min_runs and min_ms are both
 * reached; the median is the measurement and (p75 - p25) / median its spread. A spread over 10 % is
 * measured again with twice the runs; still over 10 %, the case is flagged.
 * Calibration: gsl_multifit_nlinear (trust region, Levenberg-Marquardt, finite-difference Jacobian)
 * minimizes sum (predicted / measured - 1)^2 over the training cases, a relative error that weighs
 * microsecond and second kernels alike. Free parameters: the compute efficiency of every operator
 * class the training cases cover, the bandwidth efficiency of every memory level, the serial
 * fraction, the per-call overhead and, on a CPU, the packing rates and GEMM set-up, the fork/join and
 * the per-group cost (each when the training cases can show it); efficiencies are a scaled logistic
 * in (0.001, 4) (above 1 when the hwdesc's figure understates the hardware), fractions a logistic in
 * (0, 1), times and rates exponentials held below the loader's limits. Each class starts at the
 * median fraction of peak its training kernels reached. */
#include "validate.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>

#include "jsonu.h"
#include "kern.h"

/* ---- timing ---- */

struct bufs {
    void *a, *b, *c, *d, *e;
};

static void *fill(size_t bytes, unsigned seed)
{
    float *p = malloc(bytes > 0 ? bytes : 1);
    if (!p)
        return NULL;
    unsigned x = seed * 2654435761u + 1;
    size_t n = bytes / sizeof(float);
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (float)((x >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
    return p;
}

static size_t esz(enum prec p) { return p == P_INT8 ? 1 : (p == P_BF16 || p == P_FP16) ? 2 : 4; }

static int alloc_bufs(const struct vk *k, struct bufs *b)
{
    size_t sa = 0, sb = 0, sc = 0, sd = 0, se = 0;
    switch (k->type) {
    case VK_GEMM:
        sa = (size_t)(k->M * k->K) * esz(k->prec);
        sb = (size_t)(k->K * k->N) * esz(k->prec);
        sc = (size_t)(k->M * k->N) * 4;
        break;
    case OP_CONV2D: {
        long long oh = (k->h + 2 * k->pad - k->kh) / k->stride + 1, ow = (k->w + 2 * k->pad - k->kw) / k->stride + 1;
        sa = (size_t)(k->n * k->c * k->h * k->w) * 4;
        sb = (size_t)(k->oc * (k->c / k->groups) * k->kh * k->kw) * 4;
        sc = (size_t)(k->n * k->oc * oh * ow) * 4;
        break;
    }
    case VK_ATTENTION:
        sa = (size_t)(k->b * k->s * k->heads * k->d) * 4;
        sb = sc = (size_t)(k->b * k->t * k->hkv * k->d) * 4;
        sd = sa;
        break;
    case VK_SOFTMAX:
    case VK_LAYERNORM:
    case VK_RMSNORM:
        sa = sb = (size_t)(k->rows * k->cols) * 4;
        sc = sd = (size_t)k->cols * 4;
        break;
    default:
        sa = sb = sc = (size_t)k->n * 4;
        break;
    }
    memset(b, 0, sizeof *b);
    b->a = fill(sa, 1);
    b->b = fill(sb, 2);
    b->c = fill(sc, 3);
    b->d = fill(sd, 4);
    b->e = fill(se, 5);
    return b->a && b->b && b->c && b->d && b->e ? 0 : -1;
}

static void free_bufs(struct bufs *b)
{
    free(b->a);
    free(b->b);
    free(b->c);
    free(b->d);
    free(b->e);
}

static void run_once(const struct vk *k, struct bufs *b, int th)
{
    switch (k->type) {
    case VK_GEMM:
        if (k->prec == P_BF16)
            kern_gemm_bf16((int)k->M, (int)k->N, (int)k->K, b->a, b->b, b->c, th);
        else if (k->prec == P_FP16)
            kern_gemm_f16((int)k->M, (int)k->N, (int)k->K, b->a, b->b, b->c, th);
        else if (k->prec == P_INT8)
            kern_gemm_i8((int)k->M, (int)k->N, (int)k->K, b->a, b->b, b->c, th);
        else
            kern_gemm_f32((int)k->M, (int)k->N, (int)k->K, b->a, b->b, b->c, th);
        break;
    case VK_CONV:
        kern_conv2d_f32((int)k->n, (int)k->c, (int)k->h, (int)k->w, (int)k->oc, (int)k->kh, (int)k->kw, (int)k->stride,
                        (int)k->pad, (int)k->groups, b->a, b->b, b->c, th);
        break;
    case VK_ATTENTION:
        kern_attention_f32((int)k->b, (int)k->heads, (int)k->hkv, (int)k->s, (int)k->t, (int)k->d, b->a, b->b, b->c,
                           b->d, k->causal, th);
        break;
    case VK_SOFTMAX: kern_softmax_f32((int)k->rows, (int)k->cols, b->a, b->b, th); break;
    case VK_LAYERNORM: kern_layernorm_f32((int)k->rows, (int)k->cols, b->a, b->c, b->d, b->b, 1e-5f, th); break;
    case VK_RMSNORM: kern_rmsnorm_f32((int)k->rows, (int)k->cols, b->a, b->c, b->b, 1e-5f, th); break;
    case VK_GELU: kern_gelu_f32((long)k->n, b->a, b->b, th); break;
    case VK_SILU: kern_silu_f32((long)k->n, b->a, b->b, th); break;
    case VK_ADD: kern_add_f32((long)k->n, b->a, b->b, b->c, th); break;
    case VK_COPY: kern_copy_f32((long)k->n, b->a, b->b, th); break;
    case VK_TRIAD: kern_triad_f32((long)k->n, b->a, b->b, b->c, 3.0f, th); break;
    default: break;
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double vk_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int time_runs(const struct vk *k, struct bufs *b, int th, int min_runs, double min_ms, double *median,
                     double *spread, int *runs)
{
    int cap = 1024, n = 0;
    double *t = malloc(sizeof *t * (size_t)cap), total = 0;
    if (!t)
        return -1;
    while (n < cap && (n < min_runs || total < min_ms)) {
        double t0 = now_ms();
        run_once(k, b, th);
        t[n] = now_ms() - t0;
        total += t[n++];
    }
    *median = vk_median(t, n);
    *spread = *median > 0 ? (t[(3 * n) / 4] - t[n / 4]) / *median : 0;
    *runs = n;
    free(t);
    return 0;
}

int vk_measure(struct vk *k, int min_runs, double min_ms, int threads, struct dse_err *e)
{
    struct bufs b;
    if (alloc_bufs(k, &b)) {
        free_bufs(&b);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory for %s %s", vk_kinds[k->type].name, k->shape);
    }
    run_once(k, &b, threads); /* warm-up: page faults, caches, OpenMP pool */
    run_once(k, &b, threads);
    int rc = time_runs(k, &b, threads, min_runs, min_ms, &k->measured_ms, &k->spread_pct, &k->runs);
    if (!rc && k->spread_pct > 0.10)
        rc = time_runs(k, &b, threads, 2 * min_runs, 2 * min_ms, &k->measured_ms, &k->spread_pct, &k->runs);
    k->spread_pct *= 100;
    k->flagged = k->spread_pct > 10;
    free_bufs(&b);
    return rc ? dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory") : DSE_OK;
}

/* ---- prediction ---- */

static int tensor(struct wl_graph *g, const char *name, enum wl_kind kind, int rank, int64_t d0, int64_t d1,
                  int64_t d2, int64_t d3, struct dse_err *e)
{
    int64_t d[4] = {d0, d1, d2, d3};
    return wl_add_tensor(g, name, kind, rank, d, e);
}

int vk_graph(const struct vk *k, struct wl_graph *g, struct dse_err *e)
{
    int in[5], out, op = -1, n_in = 0;
    const struct vk_kind *vk = &vk_kinds[k->type];
    wl_graph_init(g, vk->name);
    switch (vk->op) {
    case OP_MATMUL:
        if (k->b > 1) { /* a batch of independent products: both operands [B, ., .] */
            in[0] = tensor(g, "A", WL_INPUT, 3, k->b, k->M, k->K, 0, e);
            in[1] = tensor(g, "B", WL_INPUT, 3, k->b, k->K, k->N, 0, e);
            out = tensor(g, "C", WL_ACT, 3, k->b, k->M, k->N, 0, e);
        } else {
            in[0] = tensor(g, "A", WL_INPUT, 2, k->M, k->K, 0, 0, e);
            in[1] = tensor(g, "B", WL_WEIGHT, 2, k->K, k->N, 0, 0, e);
            out = tensor(g, "C", WL_ACT, 2, k->M, k->N, 0, 0, e);
        }
        n_in = 2;
        op = wl_add_op(g, "gemm", OP_MATMUL, in, n_in, &out, 1, e);
        break;
    case OP_CONV2D: {
        long long oh = (k->h + 2 * k->pad - k->kh) / k->stride + 1, ow = (k->w + 2 * k->pad - k->kw) / k->stride + 1;
        in[0] = tensor(g, "x", WL_INPUT, 4, k->n, k->c, k->h, k->w, e);
        in[1] = tensor(g, "w", WL_WEIGHT, 4, k->oc, k->c / k->groups, k->kh, k->kw, e);
        out = tensor(g, "y", WL_ACT, 4, k->n, k->oc, oh, ow, e);
        op = wl_add_op(g, "conv2d", OP_CONV2D, in, 2, &out, 1, e);
        if (op >= 0) {
            g->op[op].sh = g->op[op].sw = (int)k->stride;
            g->op[op].ph = g->op[op].pw = (int)k->pad;
            g->op[op].groups = (int)k->groups;
        }
        break;
    }
    case OP_ATTENTION:
        in[0] = tensor(g, "q", WL_INPUT, 3, k->b, k->s, k->heads * k->d, 0, e);
        in[1] = tensor(g, "k", WL_INPUT, 3, k->b, k->s, k->hkv * k->d, 0, e);
        in[2] = tensor(g, "v", WL_INPUT, 3, k->b, k->s, k->hkv * k->d, 0, e);
        n_in = 3;
        if (k->t > k->s) {
            in[3] = tensor(g, "k_past", WL_KV, 3, k->b, k->t - k->s, k->hkv * k->d, 0, e);
            in[4] = tensor(g, "v_past", WL_KV, 3, k->b, k->t - k->s, k->hkv * k->d, 0, e);
            n_in = 5;
        }
        out = tensor(g, "o", WL_ACT, 3, k->b, k->s, k->heads * k->d, 0, e);
        op = wl_add_op(g, "attention", OP_ATTENTION, in, n_in, &out, 1, e);
        if (op >= 0) {
            g->op[op].heads = (int)k->heads;
            g->op[op].causal = k->causal;
        }
        break;
    case OP_SOFTMAX:
    case OP_LAYERNORM:
    case OP_RMSNORM: /* rows x cols, with the norm's per-column scale (and layernorm's shift) */
        in[0] = tensor(g, "x", WL_INPUT, 2, k->rows, k->cols, 0, 0, e);
        n_in = 1;
        for (; n_in < op_info[vk->op].max_in; n_in++)
            in[n_in] = tensor(g, n_in == 1 ? "g" : "b", WL_WEIGHT, 1, k->cols, 0, 0, 0, e);
        out = tensor(g, "y", WL_ACT, 2, k->rows, k->cols, 0, 0, e);
        op = wl_add_op(g, vk->name, vk->op, in, n_in, &out, 1, e);
        break;
    default: { /* element-wise and streams: copy is a 1-input pass, add and triad 2-input */
        int binary = wl_fn_binary(vk->fn), rank = k->rows > 0 ? 2 : 1; /* rope, silu_mul: rows x cols */
        int64_t d0 = rank == 2 ? k->rows : k->n, d1 = rank == 2 ? k->cols : 0;
        in[0] = tensor(g, "a", WL_INPUT, rank, d0, d1, 0, 0, e);
        if (binary)
            in[1] = tensor(g, "b", WL_INPUT, rank, d0, d1, 0, 0, e);
        out = tensor(g, "y", WL_ACT, rank, d0, d1, 0, 0, e);
        op = wl_add_op(g, vk->name, vk->op, in, binary ? 2 : 1, &out, 1, e);
        if (op >= 0)
            g->op[op].fn = vk->fn;
        break;
    }
    }
    int rc = op < 0 ? (e->code ? e->code : DSE_ERUNTIME) : wl_finalize(g, vk_kinds[k->type].name, e);
    if (rc)
        wl_graph_free(g);
    return rc;
}

/* The precisions case k runs in on device d: a CPU's bf16 and fp16 GEMMs widen their inputs to fp32
 * while packing (dse's kernels, and CPUs without half-precision FMA); elsewhere they run as given. */
static struct prec_cfg vk_prec(const struct vk *k, const struct hw_device *d)
{
    struct prec_cfg p = {k->prec, k->prec, k->prec};
    if (d->cls == HW_CPU && k->type == VK_GEMM && (k->prec == P_BF16 || k->prec == P_FP16))
        p.a = P_FP32;
    return p;
}

double vk_gflops(const struct vk *k, const struct wl_graph *g)
{
    return k->measured_ms > 0 && g->n_op > 0 ? g->op[0].flops / (k->measured_ms * 1e6) : 0;
}

int vk_supported(const struct vk *k, const struct wl_graph *g, const struct hw_device *d)
{
    struct prec_cfg pc = vk_prec(k, d);
    for (int i = 0; i < g->n_op; i++) {
        enum hw_engine eng;
        double peak = 0;
        if ((d->ops_mask & (1u << g->op[i].type)) && model_op_prec(d, g, &g->op[i], &pc, &eng, &peak) < 0)
            return 0;
    }
    return 1;
}

double vk_peak_gflops(const struct vk *k, const struct wl_graph *g, const struct hw_device *d)
{
    struct prec_cfg pc = vk_prec(k, d);
    enum hw_engine eng;
    double peak = 0;
    if (g->n_op < 1 || model_op_prec(d, g, &g->op[0], &pc, &eng, &peak) < 0)
        return 0;
    return peak * 1e-9;
}

int vk_predict(const struct vk *k, const struct wl_graph *g, const struct hw_system *sys, int dev, enum fidelity f,
               int threads, double *ms, double *mJ, struct dse_err *e)
{
    struct eval_graphs eg;
    struct eval_scratch s;
    struct eval_result res;
    struct wl_model m;
    struct eval_req r;
    memset(&eg, 0, sizeof eg);
    memset(&s, 0, sizeof s);
    memset(&res, 0, sizeof res);
    memset(&m, 0, sizeof m);
    memset(&r, 0, sizeof r);
    eg.phase = PH_NONE;
    eg.batch = eg.prompt = 1;
    eg.first = *g; /* borrowed: not freed here */
    eg.first_params = wl_params(g);
    m.kind = WLM_GRAPH;
    r.sys = sys;
    r.dev = dev;
    for (int t = 0; t < OP_COUNT; t++)
        r.type_dev[t] = -1;
    r.model = &m;
    r.x.prec = vk_prec(k, &sys->dev[dev]);
    r.x.fidelity = f;
    r.x.threads = threads > 0 ? threads : 0;
    r.x.warm = !k->cold;
    r.batch = r.prompt = 1;
    r.skip_capacity = 1;
    r.burst = k->burst;
    int rc = eval_scratch_fit(&s, &eg, e);
    if (!rc)
        rc = eval_point(&r, &eg, &s, &res, e);
    if (!rc && !res.feasible)
        rc = dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s %s: %s", vk_kinds[k->type].name, k->shape, res.reason);
    if (!rc)
        *ms = res.t.latency_s * 1e3;
    if (!rc && mJ)
        *mJ = res.t.energy_J * 1e3;
    eval_scratch_free(&s);
    eval_result_free(&res);
    return rc;
}

/* ---- calibration ---- */

void calib_apply(struct hw_device *d, const struct calib *c)
{
    for (int k = 0; k < EC_COUNT; k++)
        if (c->fit_class[k])
            d->eff_class[k] = c->eff_class[k];
    for (int l = 0; l < c->n_levels && l < d->n_mem; l++)
        d->eff_level[l] = c->eff_level[l];
    if (c->fit_pack) {
        memcpy(d->pack_elem_per_s, c->pack_elem_per_s, sizeof d->pack_elem_per_s);
        d->gemm_setup_s = c->gemm_setup_s;
    }
    if (c->fit_fork)
        d->fork_join_s = c->fork_join_s;
    if (c->fit_group)
        d->per_group_s = c->per_group_s;
    d->serial_fraction = c->serial_fraction;
    d->per_op_s = c->per_op_s;
}

struct fit_ctx {
    const struct hw_system *sys;
    struct hw_system *work;
    int dev;
    const struct vk *k;
    const struct wl_graph *g;
    const int *train;
    int n;
    enum fidelity f;
    int threads; /* cores the kernels ran on (0: all) */
    int failed;
    struct calib shape; /* which parameters are free */
};

/* Efficiencies may exceed 1 when the hwdesc's figure is below what the hardware reaches (a probe that
 * could not isolate a cache level): the fit allows up to EFF_MAX. */
#define EFF_MAX 4.0
/* and at least EFF_MIN: a step of the trust region far into the tail must still give finite times */
#define EFF_MIN 1e-3
static double logistic(double u) { return EFF_MIN + (EFF_MAX - EFF_MIN) / (1 + exp(-u)); }
/* exp(u) for a log-mapped rate or time, held below the hwdesc loader's limits: a fit that finds a
 * term useless drives it towards infinity. */
static double exp_capped(double u, double cap) { return u < log(cap) ? exp(u) : cap; }

/* Parameter vector: the fitted classes, then every memory level, then log(pack rates in G elements/s,
 * left and right) and log(GEMM setup in us) when they are fitted, log(fork/join in us) on a CPU of
 * several cores, log(per-group cost in us) when grouped convolutions are trained on, then the serial fraction (a logistic in (0, 1)), then
 * log(overhead in us). */
static void unmap(const struct fit_ctx *fc, const gsl_vector *x, struct calib *c)
{
    *c = fc->shape;
    size_t i = 0;
    for (int k = 0; k < EC_COUNT; k++)
        if (c->fit_class[k])
            c->eff_class[k] = logistic(gsl_vector_get(x, i++));
    for (int l = 0; l < c->n_levels; l++)
        c->eff_level[l] = logistic(gsl_vector_get(x, i++));
    for (int s = 0; s < 2 * c->fit_pack; s++)
        c->pack_elem_per_s[s] = exp_capped(gsl_vector_get(x, i++), 1e4) * 1e9;
    if (c->fit_pack)
        c->gemm_setup_s = exp_capped(gsl_vector_get(x, i++), 1e5) * 1e-6;
    if (c->fit_fork)
        c->fork_join_s = exp_capped(gsl_vector_get(x, i++), 1e5) * 1e-6;
    if (c->fit_group)
        c->per_group_s = exp_capped(gsl_vector_get(x, i++), 1e5) * 1e-6;
    c->serial_fraction = 1 / (1 + exp(-gsl_vector_get(x, i++)));
    c->per_op_s = exp_capped(gsl_vector_get(x, i), 1e5) * 1e-6;
}

static int residuals(const gsl_vector *x, void *data, gsl_vector *f)
{
    struct fit_ctx *fc = data;
    struct calib c;
    unmap(fc, x, &c);
    *fc->work = *fc->sys;
    calib_apply(&fc->work->dev[fc->dev], &c);
    for (int i = 0; i < fc->n; i++) {
        const struct vk *k = &fc->k[fc->train[i]];
        double ms;
        struct dse_err e;
        if (vk_predict(k, &fc->g[fc->train[i]], fc->work, fc->dev, fc->f, fc->threads, &ms, NULL, &e) || !(ms > 0)) {
            fc->failed = 1;
            return GSL_EDOM;
        }
        gsl_vector_set(f, (size_t)i, ms / k->measured_ms - 1);
    }
    return GSL_SUCCESS;
}

/* The inverse of logistic() (eff in its range), or of 1 / (1 + exp(-u)) with lo = 0, hi = 1. */
static double logit_in(double eff, double lo, double hi)
{
    double p = (eff - lo) / (hi - lo);
    if (p > 0.999)
        p = 0.999;
    if (p < 1e-4)
        p = 1e-4;
    return log(p / (1 - p));
}

static double logit(double eff) { return logit_in(eff, EFF_MIN, EFF_MAX); }

int calib_fit(const struct hw_system *sys, int dev, const struct vk *k, const struct wl_graph *g, const int *train,
              int n, enum fidelity f, int threads, struct calib *out, struct dse_err *e)
{
    struct fit_ctx fc;
    memset(&fc, 0, sizeof fc);
    fc.sys = sys;
    fc.dev = dev;
    fc.k = k;
    fc.g = g;
    fc.train = train;
    fc.n = n;
    fc.f = f;
    fc.threads = threads;
    const struct hw_device *d = &sys->dev[dev];
    fc.shape.n_levels = d->n_mem;
    for (int i = 0; i < n; i++)
        fc.shape.fit_class[model_eff_class(&g[train[i]].op[0])] = 1;
    fc.shape.fit_pack = d->cls == HW_CPU && (fc.shape.fit_class[EC_MATMUL] || fc.shape.fit_class[EC_CONV]);
    fc.shape.fit_fork = d->cls == HW_CPU && model_cpu_cores(d) > 1;
    fc.shape.fit_group = d->cls == HW_CPU && fc.shape.fit_class[EC_CONV_DW];
    size_t p = 2 + (size_t)d->n_mem + 3 * (size_t)fc.shape.fit_pack + (size_t)fc.shape.fit_fork +
               (size_t)fc.shape.fit_group;
    for (int c = 0; c < EC_COUNT; c++)
        p += (size_t)fc.shape.fit_class[c];
    if ((size_t)n < p)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "calibration needs at least %zu training kernels for %zu parameters, got %d",
                           p, p, n);
    if (!(fc.work = malloc(sizeof *fc.work)))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    /* Start each class at the median fraction of peak its training kernels achieved, as if each were
     * compute-bound: a class started where the memory term binds for all its kernels would see a
     * zero gradient (the model takes the larger of compute and memory time) and never move. */
    double x0[EC_COUNT + HW_MAX_MEM + 7], frac[EC_COUNT][64];
    int nfrac[EC_COUNT] = {0};
    for (int t = 0; t < n; t++) {
        const struct vk *kk = &k[train[t]];
        const struct wl_op *op = &g[train[t]].op[0];
        struct prec_cfg pc = vk_prec(kk, d);
        enum hw_engine eng;
        double peak = 0;
        int c = model_eff_class(op);
        if (model_op_prec(d, &g[train[t]], op, &pc, &eng, &peak) >= 0 && peak > 0 && kk->measured_ms > 0 &&
            nfrac[c] < 64)
            frac[c][nfrac[c]++] = op->flops / (peak * kk->measured_ms * 1e-3);
    }
    size_t i = 0;
    for (int c = 0; c < EC_COUNT; c++)
        if (fc.shape.fit_class[c]) {
            double start = 0.5;
            if (nfrac[c] > 0) {
                qsort(frac[c], (size_t)nfrac[c], sizeof frac[c][0], cmp_d);
                start = frac[c][nfrac[c] / 2];
            }
            x0[i++] = logit(start);
        }
    for (int l = 0; l < d->n_mem; l++)
        x0[i++] = logit(d->eff_level[l] < 0.8 ? d->eff_level[l] : 0.8);
    for (int s = 0; s < 2 * fc.shape.fit_pack; s++) /* the hwdesc's rate, else main memory's in fp32 elements */
        x0[i++] = log((d->pack_elem_per_s[s] > 0 ? d->pack_elem_per_s[s] : d->mem[d->n_mem - 1].bandwidth_Bps / 4) * 1e-9);
    if (fc.shape.fit_pack) /* the hwdesc's setup cost, else 5 us (a parallel region and a few barriers) */
        x0[i++] = log(d->gemm_setup_s > 0 ? d->gemm_setup_s * 1e6 : 5);
    if (fc.shape.fit_fork) /* the hwdesc's fork/join, else 2 us (an OpenMP parallel region on a few cores) */
        x0[i++] = log(d->fork_join_s > 0 ? d->fork_join_s * 1e6 : 2);
    if (fc.shape.fit_group) /* the hwdesc's, else 0.01 us (a loop set-up) */
        x0[i++] = log(d->per_group_s > 0 ? d->per_group_s * 1e6 : 0.01);
    x0[i++] = logit_in(d->serial_fraction > 0.05 ? d->serial_fraction : 0.05, 0, 1);
    x0[i] = log((d->per_op_s > 0 ? d->per_op_s : 5e-6) * 1e6);
    gsl_vector_view xv = gsl_vector_view_array(x0, p);
    gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof fdf);
    fdf.f = residuals;
    fdf.df = NULL; /* finite differences */
    fdf.n = (size_t)n;
    fdf.p = p;
    fdf.params = &fc;
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, (size_t)n, p);
    int rc = DSE_OK;
    if (!w) {
        free(fc.work);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    int info = 0;
    int st = gsl_multifit_nlinear_init(&xv.vector, &fdf, w);
    if (st == GSL_SUCCESS)
        st = gsl_multifit_nlinear_driver(500, 1e-12, 1e-12, 1e-12, NULL, NULL, &info, w);
    if (fc.failed)
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "calibration: a prediction failed during the fit");
    else if (st != GSL_SUCCESS && st != GSL_EMAXITER)
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "calibration: the fit did not converge: %s", gsl_strerror(st));
    else
        unmap(&fc, gsl_multifit_nlinear_position(w), out);
    gsl_multifit_nlinear_free(w);
    free(fc.work);
    return rc;
}
