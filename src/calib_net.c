/* calib_net.c -- a device's terms fitted to measured whole networks (dse calibrate --measured SOURCE --hw
 * NAME on a network source: validate/measured/README.md, "Network sources").
 *
 * Free terms, each only where the rows can show it: the achieved compute efficiency of the convolution,
 * depthwise convolution, matmul (both GEMM classes), attention and element-wise classes (norms and
 * softmax with the element-wise one), the efficiency of main memory (a dataflow NPU's host link: its
 * contexts' reloads), the per-kernel launch and per-pass runtime work of a device that pays them, and a
 * dataflow NPU's context
 * capacity and switch time (hw.h, struct hw_contexts). Each row is predicted whole (kcase_predict_net).
 * Fit: coordinate descent, terms in the fixed order above, each by golden-section search of log(value)
 * within [1/4, 4] x its value at the round's start (efficiencies in [0.01, 1]), minimising sum log(predicted
 * / measured)^2 over the fit rows; KN_ROUNDS rounds. A term that leaves the loss where it was stays put
 * (no row shows it). The context capacity makes the loss a step function of it: it is taken from a grid
 * (1 to 128 MiB in steps of 2^(1/8)), the best point of the grid at the round's other terms. Deterministic: the rows are summed in order whatever the threads. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

#define KN_ROUNDS 4
#define KN_GOLDEN 24
#define KN_EFF_LO 0.01 /* an efficiency no fit goes below: a term that far down stands for something else */
#define KN_CAP_GRID 56 /* capacity steps of 2^(1/8) */

enum { NT_CLASS, NT_MAIN, NT_LAUNCH, NT_STEP, NT_CAP, NT_SWITCH };

static double *slot(struct hw_device *d, int kind, int arg)
{
    switch (kind) {
    case NT_CLASS: return &d->eff_class[arg];
    case NT_MAIN: return &d->eff_level[d->n_mem - 1];
    case NT_LAUNCH: return &d->per_op_s;
    case NT_STEP: return &d->per_step_s;
    case NT_CAP: return &d->ctx.capacity_bytes;
    default: return &d->ctx.switch_s;
    }
}

static void set_knob(struct hw_device *d, int kind, int arg, double v)
{
    *slot(d, kind, arg) = v;
    if (kind == NT_CLASS && arg == EC_MATMUL) /* one factor for both GEMM classes: monotonic across them */
        d->eff_class[EC_MATMUL_SKINNY] = v;
    if (kind == NT_CLASS && arg == EC_ELTWISE) { /* the vector unit's other kernels */
        d->eff_class[EC_NORM] = v;
        d->eff_class[EC_SOFTMAX] = v;
    }
}

struct net_ctx {
    struct hw_system *work;
    int dev;
    struct kcase *cs;
    const int *rows;
    int n;
    const struct wl_model *const *m;
    const struct sw_stack *const *sw;
    enum fidelity f;
    double *err; /* [n] */
};

/* sum log(predicted / measured)^2 over the rows; HUGE_VAL when one cannot be predicted. */
static double loss(struct net_ctx *x)
{
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < x->n; i++) {
        struct kcase c = x->cs[x->rows[i]];
        struct dse_err e;
        dse_err_clear(&e);
        if (kcase_predict_net(&c, x->work, x->m[i], x->sw[i], x->f, &e) || !c.ok) {
#pragma omp atomic write
            bad = 1;
            x->err[i] = 0;
            continue;
        }
        double l = log(c.predicted_ms / c.measured_ms);
        x->err[i] = l * l;
    }
    if (bad)
        return HUGE_VAL;
    double s = 0;
    for (int i = 0; i < x->n; i++)
        s += x->err[i];
    return s;
}

int kc_fit_net(struct hw_system *work, int dev, struct kcase *cs, const int *rows, int n,
               const struct wl_model *const *m, const struct sw_stack *const *sw, const int *classes, enum fidelity f,
               struct kc_net_fit *out, struct dse_err *e)
{
    struct net_ctx x = {work, dev, cs, rows, n, m, sw, f, malloc(sizeof(double) * (size_t)(n > 0 ? n : 1))};
    if (!x.err)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    struct hw_device *d = &work->dev[dev];
    memset(out, 0, sizeof *out);
    static const int order[] = {EC_CONV, EC_CONV_DW, EC_MATMUL, EC_ATTENTION, EC_ELTWISE};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        if (classes[order[k]] > 0) /* the rows' graphs hold the class: its term can move the loss */
            out->kind[out->n] = NT_CLASS, out->arg[out->n++] = order[k];
    out->kind[out->n++] = NT_MAIN;
    if (d->per_op_s > 0)
        out->kind[out->n++] = NT_LAUNCH;
    if (d->per_step_s > 0)
        out->kind[out->n++] = NT_STEP;
    if (d->ctx.present) {
        out->kind[out->n++] = NT_CAP;
        out->kind[out->n++] = NT_SWITCH;
        if (!(d->ctx.switch_s > 0))
            d->ctx.switch_s = 1e-4; /* a start the search can scale */
    }
    double best = loss(&x);
    out->loss_before = best;
    if (!isfinite(best)) {
        free(x.err);
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "a fit row cannot be predicted on %s", work->name);
    }
    const double gr = (sqrt(5) - 1) / 2;
    for (int round = 0; round < KN_ROUNDS; round++) {
        for (int k = 0; k < out->n; k++) {
            int kind = out->kind[k], arg = out->arg[k];
            double v0 = *slot(d, kind, arg), lo = log(v0 / 4), hi = log(v0 * 4);
            if (kind == NT_CAP) { /* a step function of the capacity: a grid over 1-128 MiB, not a search */
                double bv = v0, bf = best;
                for (int g = 0; g <= KN_CAP_GRID; g++) {
                    double v = 1024.0 * 1024 * pow(2, 7.0 * g / KN_CAP_GRID), fv;
                    set_knob(d, kind, arg, v);
                    fv = loss(&x);
                    if (fv < bf - 1e-9 * (1 + bf))
                        bv = v, bf = fv;
                }
                set_knob(d, kind, arg, bv);
                best = bf;
                continue;
            }
            if (kind == NT_CLASS || kind == NT_MAIN) { /* an efficiency stays in [KN_EFF_LO, 1] */
                if (hi > 0)
                    hi = 0;
                if (lo < log(KN_EFF_LO))
                    lo = log(KN_EFF_LO);
                if (lo > hi - 0.05)
                    lo = hi - 0.05;
            }
            double a = lo, b = hi, c1 = b - gr * (b - a), c2 = a + gr * (b - a), f1, f2;
            set_knob(d, kind, arg, exp(c1));
            f1 = loss(&x);
            set_knob(d, kind, arg, exp(c2));
            f2 = loss(&x);
            for (int it = 0; it < KN_GOLDEN; it++) {
                if (f1 <= f2) {
                    b = c2, c2 = c1, f2 = f1, c1 = b - gr * (b - a);
                    set_knob(d, kind, arg, exp(c1));
                    f1 = loss(&x);
                } else {
                    a = c1, c1 = c2, f1 = f2, c2 = a + gr * (b - a);
                    set_knob(d, kind, arg, exp(c2));
                    f2 = loss(&x);
                }
            }
            double vb = f1 <= f2 ? exp(c1) : exp(c2), fb = f1 <= f2 ? f1 : f2;
            if (fb < best - 1e-9 * (1 + best)) {
                set_knob(d, kind, arg, vb);
                best = fb;
            } else {
                set_knob(d, kind, arg, v0);
            }
        }
    }
    for (int k = 0; k < out->n; k++)
        out->value[k] = *slot(d, out->kind[k], out->arg[k]);
    out->loss_after = best;
    free(x.err);
    return DSE_OK;
}

void kc_net_fit_names(const struct kc_net_fit *k, int i, char *buf, size_t n)
{
    switch (k->kind[i]) {
    case NT_CLASS: snprintf(buf, n, "compute %s", hw_eff_class_names[k->arg[i]]); break;
    case NT_MAIN: snprintf(buf, n, "main memory"); break;
    case NT_LAUNCH: snprintf(buf, n, "per_op_us"); break;
    case NT_STEP: snprintf(buf, n, "per_step_us"); break;
    case NT_CAP: snprintf(buf, n, "contexts.capacity_MiB"); break;
    default: snprintf(buf, n, "contexts.switch_us"); break;
    }
}

double kc_net_fit_shown(const struct kc_net_fit *k, int i)
{
    switch (k->kind[i]) {
    case NT_LAUNCH: return k->value[i] * 1e6;
    case NT_STEP: return k->value[i] * 1e6;
    case NT_CAP: return k->value[i] / (1024.0 * 1024);
    case NT_SWITCH: return k->value[i] * 1e6;
    default: return k->value[i];
    }
}

void kc_net_fit_apply(struct hw_device *d, const struct kc_net_fit *k)
{
    for (int i = 0; i < k->n; i++)
        set_knob(d, k->kind[i], k->arg[i], k->value[i]);
}
