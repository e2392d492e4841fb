/* cli_eval.c -- `dse eval`: one design point, per-operator breakdown and totals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "config.h"
#include "gitversion.h"
#include "errbar.h"
#include "eval.h"
#include "jsonu.h"
#include "sweep.h"
#include "eval_layout.h"
#include "metric.h"

static struct cli_opt eval_opts_proto[] = {
    {"hw", 1, "hardware description (hwdesc file or name from dse list hw)", NULL},
    {"workload", 1, "model (models/ file or name, graph JSON, HF config, SCALE-Sim CSV, ONNX)", NULL},
    {"dim", 1, "ONNX: bind dynamic input dimensions NAME=N[,NAME=N] (batch- and sequence-named ones follow --batch and --prompt)", NULL},
    {"unknown-ops", 1, "ONNX: error (default) or memory: operators dse does not model costed as memory-bound, with a warning", NULL},
    {"image", 1, "N or HxW: the input resolution of a CNN generator's workload (models/zoo; default: its spec's)", NULL},
    {"device", 1, "device of the system that runs the model (default: first accelerator)", NULL},
    CLI_OPT_SET,
    CLI_OPT_COST,
    CLI_OPT_THERMAL,
    {"power-W", 1, "a power cap in W on every device, as a sweep's power_W axis: a device over it throttles (DVFS, then "
                   "duty cycle); a system with modes runs in the fastest one that fits", NULL},
    {"placement", 1, "DEV or DEV,TYPE=DEV2,... e.g. npu,attention=cpu (operators by type on other devices)", NULL},
    {"precision", 1, "fp32|tf32|bf16|fp16|fp8|int8|int4, w4a16, w8a8kv8, w=int4,a=fp16,kv=fp8", NULL},
    {"batch", 1, "batch size (default 1)", NULL},
    {"phase", 1, "prefill|decode|generate for decoder LMs (default generate)", NULL},
    {"prompt", 1, "prompt tokens; sequence length for encoders (default 512; BERT 128)", NULL},
    {"generate", 1, "output tokens for --phase generate (default 128)", NULL},
    {"top", 1, "operators shown in the table (default 12)", NULL},
    {"fidelity", 1, "analytical (default) or cycle (the cycle-approximate tier)", NULL},
    {"software", 1, "software stack (software/ file or name from dse list software, or none; default: the "
                    "device's own, named in its hwdesc)", NULL},
    {"cpu-threads", 1, "CPU: cores used (default: all; both tiers)", NULL},
    {"tp", 1, "tensor-parallel devices (a topology's hwdesc; default 1): heads, FFN and vocabulary split, all-reduces added", NULL},
    {"pp", 1, "pipeline stages (default 1): the layers split, activations sent between stages", NULL},
    {"cp", 1, "context parallelism (default 1): the prompt's tokens split, keys and values all-gathered for "
              "attention; decode: the KV cache split, attention's partial results all-reduced", NULL},
    {"dp", 1, "data-parallel replicas, each running --batch (default: the devices tp x pp leave)", NULL},
    {"microbatches", 1, "micro-batches the batch is cut into through the pp stages (default 1)", NULL},
    {"ep", 1, "expert parallelism: a MoE layer's experts spread over ep data-parallel replicas, tokens "
              "dispatched and combined by all-to-all (default 1; ep divides dp)", NULL},
    {"moe-imbalance", 1, "with --ep: the busiest device's routed tokens over the mean (default 1: uniform routing)", NULL},
    {"optimizer", 1, "--phase train: adamw (default) or sgd (with momentum)", NULL},
    {"zero", 1, "--phase train: ZeRO stage 0-3 (default 0; 1 is Megatron-LM's distributed optimizer, 3 FSDP)", NULL},
    {"recompute", 1, "--phase train: activation recomputation none (default), selective or full", NULL},
    {"layout", 1, "auto: search every tp x pp x dp split (and micro-batches) for the best by --objective, then show it", NULL},
    {"objective", 1, "with --layout auto: the metric to rank by (default tokens_per_s_per_device for LMs, else "
                     "throughput_per_s)", NULL},
    {"error-bars", 1, "error-bar table (default: validate/published/error-bars.json, found as software/ is; none: "
                      "no interval)", NULL},
    {"quality-table", 1, "published quality table behind quality_loss_pct (default: validate/quality/"
                         "published-quality.csv, found as the error bars are; none: the measured GEMM error)", NULL},
    {"json", 0, "print one JSON object", NULL},
    {"csv", 0, "print per-operator CSV rows", NULL},
    {"scalesim-csv", 0, "print SCALE-Sim's COMPUTE_REPORT.csv for a SCALE-Sim .cfg (needs --fidelity cycle)", NULL},
    {"scalesim-report", 1, "compute|bandwidth|access: which SCALE-Sim report --scalesim-csv prints (default compute)",
     NULL},
    {"help", 0, "this help", NULL},
    {NULL, 0, NULL, NULL},
};

static void usage(void)
{
    printf("usage: dse eval --hw HW --workload W [options]\n\n"
           "Evaluates one design point with the analytical roofline model: per operator FLOPs, bytes moved,\n"
           "compute / memory / overhead time, the bound and energy; then totals.\n\noptions:\n");
    cli_print_options(eval_opts_proto);
}

static double ms(double s) { return s * 1e3; }

static int cmp_time(const void *a, const void *b)
{
    const struct eval_op *x = *(const struct eval_op *const *)a, *y = *(const struct eval_op *const *)b;
    return x->time_s < y->time_s ? 1 : x->time_s > y->time_s ? -1 : strcmp(x->name, y->name);
}

int cli_ops_by_time(const struct eval_result *res, const struct eval_op **v)
{
    int n = 0;
    for (int i = 0; i < res->n_ops; i++)
        if (res->ops[i].time_s > 0)
            v[n++] = &res->ops[i];
    qsort(v, (size_t)n, sizeof *v, cmp_time);
    return n;
}

/* What is known of this device's error: a calibration's held-out error, else nothing yet. */
static const char *validation_note(const struct hw_device *d, char *buf, size_t n)
{
    if (d->calib_mape_pct >= 0 && d->arch[0])
        snprintf(buf, n, "calibrated (kernel terms of architecture %s, fitted on measured kernels; held-out MAPE "
                         "%.1f%% on its published cases)", d->arch, d->calib_mape_pct);
    else if (d->arch[0])
        snprintf(buf, n, "calibrated (kernel terms of architecture %s, fitted on measured kernels: dse validate "
                         "--measured)", d->arch);
    else if (d->calib_mape_pct >= 0)
        snprintf(buf, n, "calibrated (held-out MAPE %.1f%%)", d->calib_mape_pct);
    else
        snprintf(buf, n, "uncalibrated: no fit of this device's own (dse calibrate)");
    return buf;
}

/* The error bars of the result, in a sentence: the interval, what it is of, and what it means for the
 * latency; an uncalibrated device's interval is its class's, from calibrated devices. */
/* A row's phase: a training step's pass (forward, backward, step: gradient sync and optimizer), else
 * the workload's phase. */
const char *cli_op_phase(const struct eval_op *o)
{
    static const char *const pass[] = {"forward", "backward", "step"};
    return o->phase == PH_TRAIN && o->pass >= 0 && o->pass < 3 ? pass[o->pass] : wl_phase_names[o->phase];
}

static const char *errbar_note(const struct eval_req *r, const struct eval_result *res, enum wl_phase ph, char *buf,
                               size_t n)
{
    const struct eval_totals *t = &res->t;
    const struct hw_device *d = &r->sys->dev[r->dev];
    const char *cls = hw_class_names[d->cls], *kind = pkind_names[eb_kind_of(r->model, ph)];
    const struct sw_stack *st = r->sw;
    char sw[SW_NAME_LEN + SW_VERSION_LEN + 2] = "none";
    if (st)
        pass_label(st, sw, sizeof sw);
    double train_mape = st ? st->mape_pct[0] : -1, infer_mape = st ? st->mape_pct[1] : -1;
    if (ph == PH_TRAIN && train_mape >= 0)
        snprintf(buf, n, "training step: %s's efficiency.training %.3g calibrated on the multi-device corpus, held-out "
                 "MAPE %.1f %% over the cases that ran it (dse validate --published --multi-device); no interval", sw,
                 st->eff[SW_TRAIN], train_mape);
    else if (ph == PH_TRAIN)
        snprintf(buf, n, "no error bars: training with %s is not calibrated on the multi-device corpus, so this "
                         "step time is unvalidated", sw);
    else if (!r->errbars)
        snprintf(buf, n, "no error bars (no validate/published/error-bars.json found; dse validate --published "
                         "--write-error-bars writes one)");
    else if (strcmp(r->errbars->tier, fidelity_names[r->x.fidelity]))
        snprintf(buf, n, "no error bars for the %s tier (%.300s holds the %s tier's)", fidelity_names[r->x.fidelity],
                 r->errbars->path, r->errbars->tier);
    else if (isnan(t->err_low_pct))
        snprintf(buf, n, "no error bars: the published corpus has under %d held-out %s cases (%.300s)", EB_MIN_CASES, cls,
                 r->errbars->path);
    else
        snprintf(buf, n,
                 "expected error of the time %+.0f%% to %+.0f%% (10th-90th percentile over %d held-out %s %s cases "
                 "of validate/published): latency_ms likely %.4g to %.4g%s",
                 t->err_low_pct, t->err_high_pct, t->err_n, cls, t->err_fallback ? "(all kinds)" : kind,
                 ms(t->latency_s) / (1 + t->err_high_pct / 100), ms(t->latency_s) / (1 + t->err_low_pct / 100),
                 hw_calibrated(d) ? "" : "; this device is uncalibrated: the interval is its class's, from "
                                               "calibrated devices, and its own error may be larger");
    int inference = ph == PH_PREFILL || ph == PH_DECODE || ph == PH_GENERATE;
    if (inference && infer_mape >= 0) { /* the release's own multi-device cases */
        size_t at = strlen(buf);
        snprintf(buf + at, n - at, "; %s's runs calibrated on the multi-device corpus (efficiency.prefill %.3g, decode "
                 "%.3g): held-out MAPE %.1f %% over the cases that ran it (dse validate --published --multi-device)",
                 sw, st->eff[SW_PREFILL], st->eff[SW_DECODE], infer_mape);
    } else if (t->devices > 1 && r->errbars && !(ph == PH_TRAIN && train_mape >= 0)) { /* single-device cases */
        size_t at = strlen(buf);
        snprintf(buf + at, n - at, "; these are single-device cases: a layout's own error, larger, is what dse validate "
                                   "--published --multi-device reports");
    }
    return buf;
}

/* The stack's fused kernels (two or more operators that are not views), most time first: which graph
 * operators each holds. Rows of one kernel are consecutive within their phase (pass.c). */
static void print_kernels(const struct eval_req *r, const struct eval_result *res, int top)
{
    struct kern {
        int first, n;
        double time_s;
    };
    struct kern *k = malloc(sizeof *k * (size_t)(res->n_ops ? res->n_ops : 1));
    int nk = 0, fused_ops = 0;
    if (!k)
        return;
    for (int i = 0; i < res->n_ops;) {
        int j = i, members = 0;
        double t = 0;
        for (; j < res->n_ops && res->ops[j].kernel == res->ops[i].kernel && res->ops[j].phase == res->ops[i].phase; j++) {
            members += res->ops[j].type != OP_RESHAPE && res->ops[j].type != OP_SLICE;
            t += res->ops[j].time_s;
        }
        if (members > 1) {
            k[nk++] = (struct kern){i, j - i, t};
            fused_ops += j - i;
        }
        i = j;
    }
    if (nk == 0) {
        free(k);
        return;
    }
    for (int a = 1; a < nk; a++) /* insertion sort by time, descending (few kernels shown) */
        for (int b = a; b > 0 && k[b].time_s > k[b - 1].time_s; b--) {
            struct kern tmp = k[b];
            k[b] = k[b - 1];
            k[b - 1] = tmp;
        }
    printf("\nfused kernels (software %s): %d kernels hold %d operators\n", pass_label(r->sw, (char[SW_LABEL_LEN]){0}, SW_LABEL_LEN), nk, fused_ops);
    printf("%-8s %11s  %s\n", "phase", "time_ms", "operators");
    for (int a = 0; a < nk && a < top; a++) {
        printf("%-8s %11.4f  ", cli_op_phase(&res->ops[k[a].first]), ms(k[a].time_s));
        for (int m = 0; m < k[a].n; m++)
            printf("%s%s", m ? " + " : "", res->ops[k[a].first + m].name);
        printf("\n");
    }
    if (nk > top)
        printf("(%d more kernels)\n", nk - top);
    free(k);
}

/* The primary device's main memory as the capacity check saw it (its pool's, when shared). */
struct mem_view {
    const struct hw_mem *m;
    double need, cap, usable, util;
};

static struct mem_view mem_view_of(const struct eval_req *r, const struct eval_result *res)
{
    struct mem_view v;
    const struct hw_device *d = &r->sys->dev[r->dev];
    v.m = &d->mem[d->n_mem - 1];
    v.util = eval_mem_util(r->sys, r->sw, r->dev);
    v.usable = eval_capacity_of(r->sys, r->sw, r->dev, r->capacity_bytes, res, r->dev, &v.need, &v.cap);
    return v;
}

static void print_human(const struct eval_req *r, const struct eval_result *res, const char *prec, int top,
                        const struct ql_table *qt, const struct cli_opt *opts)
{
    const struct hw_system *sys = r->sys;
    const struct hw_device *d = &sys->dev[r->dev];
    enum wl_phase ph = r->phase == PH_TRAIN || wl_model_is_lm(r->model) ? r->phase : PH_NONE;
    printf("dse eval: %s on %s/%s (%s), %s, batch %lld", r->model->name, sys->name, d->name, hw_class_names[d->cls],
           prec, (long long)r->batch);
    if (ph == PH_GENERATE)
        printf(", generate (prompt %lld, %lld new tokens)\n", (long long)r->prompt, (long long)r->gen);
    else if (ph == PH_TRAIN && (r->model->kind == WLM_CNN || (r->model->kind == WLM_TRANSFORMER &&
                                                              !strcmp(r->model->tf.model_type, "vit"))))
        printf(", train (images %lld x %lld)\n", /* no prompt: what a sample is */
               (long long)(r->model->kind == WLM_CNN ? r->model->cnn.image_h : r->model->tf.image_size),
               (long long)(r->model->kind == WLM_CNN ? r->model->cnn.image_w : r->model->tf.image_size));
    else if (ph == PH_TRAIN && !wl_model_is_lm(r->model) && r->model->kind != WLM_TRANSFORMER &&
             !(r->model->kind == WLM_ONNX && wl_onnx_takes_tokens(r->model->onnx)))
        printf(", train\n");
    else if (ph == PH_TRAIN) /* every token of each sequence is trained on: a sequence, not a prompt */
        printf(", train (sequence %lld tokens)\n", (long long)r->prompt);
    else if (ph != PH_NONE)
        printf(", %s (%s %lld tokens)\n", wl_phase_names[ph], ph == PH_DECODE ? "context" : "prompt",
               (long long)r->prompt);
    else if (r->model->kind == WLM_ONNX && wl_onnx_takes_tokens(r->model->onnx))
        printf(", sequence %lld\n", (long long)r->prompt);
    else
        printf("\n");
    cli_print_whatif(opts);
    if (sys->topo.n_level) { /* the layout over the topology, innermost level first */
        const struct par_layout *l = &r->layout;
        if (l->n[PAR_CP] > 1)
            printf("layout: tp %d x cp %d x dp %d x pp %d", l->n[PAR_TP], l->n[PAR_CP], l->n[PAR_DP], l->n[PAR_PP]);
        else
            printf("layout: tp %d x dp %d x pp %d", l->n[PAR_TP], l->n[PAR_DP], l->n[PAR_PP]);
        if (l->ep > 1)
            printf(" (experts over ep %d, the busiest with %.3gx the mean of tokens)", l->ep, l->moe_imbalance);
        if (l->n[PAR_PP] > 1 || l->microbatches > 1)
            printf(" (%d micro-batches of %lld%s)", l->microbatches, (long long)eval_micro_batch(r),
                   l->n[PAR_PP] > 1 ? "" : ", accumulated");
        printf(" = %d devices '%s' on", hw_topo_devices(sys), d->name);
        for (int i = 0; i < sys->topo.n_level; i++) {
            const struct hw_topo_level *L = &sys->topo.level[i];
            printf("%s %s %s of %d at %g GB/s%s", i ? "," : "", L->name, hw_topo_kind_names[L->kind], L->count,
                   L->bandwidth_Bps / 1e9, L->bandwidth_Bps < L->line_rate_Bps ? " achieved" : "");
        }
        if (r->phase == PH_TRAIN)
            printf("; global batch %lld, %lld per replica, metrics for the whole system\n", (long long)r->batch,
                   (long long)eval_replica_batch(r));
        else
            printf("; batch %lld per replica, metrics for the whole system (latency: one replica's)\n",
                   (long long)r->batch);
    }
    char vn[320], eb[900];
    printf("model: %s; software: %s; %s\n", r->x.fidelity == FID_CYCLE ? "cycle-approximate tier" : "analytical roofline",
           pass_label(r->sw, (char[SW_LABEL_LEN]){0}, SW_LABEL_LEN), validation_note(d, vn, sizeof vn));
    if (r->model->kind == WLM_ONNX && wl_onnx_quantized(r->model->onnx) && r->x.prec.w != P_INT8)
        printf("note: a quantized ONNX model (%s): its operators are costed at %s, not as stored; --precision int8 "
               "costs them at 8 bits\n", wl_onnx_quantized(r->model->onnx), prec);
    if (res->feasible)
        printf("%s\n", errbar_note(r, res, ph, eb, sizeof eb));
    if (d->power_mape_pct >= 0)
        printf("power: calibrated (held-out MAPE %.1f%% of its power_W cases in validate/published/power): avg_power_W "
               "%.4g, energy_mJ %.6g\n", d->power_mape_pct, res->t.avg_power_W, res->t.energy_J * 1e3);
    else
        printf("power: uncalibrated (docs/models.md, Power and energy: the default rule; dse validate --published "
               "--power reports its error per device)\n");
    if (r->sys->encl.present)
        printf("power at the meter's input: the enclosure (hwdesc enclosure: %.4g W beside the devices idle, fans %.3g W "
               "per W, conversion efficiency %.3g at this load) is in avg_power_W and every energy figure "
               "(energy_enclosure_mJ); the module (devices and base_W, what a cap limits) draws %.4g W; its error is "
               "that of the hwdesc's scope-system cases in dse validate --published --power\n",
               r->sys->encl.base_W + r->sys->encl.chassis_idle_W, r->sys->encl.cooling_W_per_W,
               res->t.encl_efficiency, res->t.module_W);
    if (r->cost) {
        char cd[200];
        cost_describe(r->cost, 1, cd, sizeof cd);
        printf("cost: %s (--usd-per-kwh, --pue, --amortize-years, --utilization, --hosting-usd-per-hour)\n", cd);
    }
    struct mem_view mv = {0};
    if (d->n_mem && (mv = mem_view_of(r, res)).need > 0) {
        char suf[400];
        eval_capacity_suffix(sys, r->sw, r->dev, mv.cap, suf, sizeof suf);
        printf("memory: %.3g GB needed of %s '%s' %s\n", mv.need / 1e9, mv.m->shared >= 0 ? "the shared" : "main memory",
               mv.m->name, suf);
    }
    if (r->quality) {
        char qn[1024];
        cli_quality_note(qt, r->quality, qn, sizeof qn);
        printf("quality: %s\n", qn);
    }
    printf("\n");
    if (!res->feasible) {
        printf("INFEASIBLE: %s\n", res->reason);
        return;
    }
    int mi = res->mode >= 0 ? res->mode : r->sys->mode;
    if (mi >= 0) {
        const struct hw_mode *md = &r->sys->modes[mi];
        printf("mode %s (hwdesc modes%s): the module draws %.3g W of the %.3g W budget the mode's clocks are set for\n\n",
               md->name, res->mode >= 0 ? ", picked under the power cap" : "", res->t.module_W, md->budget_W);
    }
    if (res->throttle_note[0])
        printf("THROTTLED: %s; %.2fx slower than unthrottled\n\n", res->throttle_note, res->t.throttle_slowdown);
    if (res->thermal_note[0]) {
        const struct eval_totals *T = &res->t;
        char ttt[32];
        if (isinf(T->time_to_throttle_s))
            snprintf(ttt, sizeof ttt, "never");
        else
            snprintf(ttt, sizeof ttt, "%.4g s", T->time_to_throttle_s);
        printf("thermal (a %.4g s run from a cold start; docs/models.md, Thermal; no measured thermal case checks it): "
               "%s\n  burst %.4g/s, sustained %.4g/s, mean over the run %.4g/s; time to throttle %s; settles at %.3g "
               "degC\n\n", r->sys->thermal.duration_s, res->thermal_note, T->throughput_per_s, T->sus_throughput_per_s,
               T->mean_throughput_per_s, ttt, T->steady_temp_C);
    }
    const struct eval_op **v = malloc(sizeof *v * (size_t)(res->n_ops ? res->n_ops : 1));
    if (!v)
        return;
    int n = cli_ops_by_time(res, v);
    int cyc = r->x.fidelity == FID_CYCLE;
    printf("%-28s %-8s %-6s %9s %11s %6s %-8s %10s %10s %10s %5s%s\n", "operator", "phase", "device", "count",
           "time_ms", "share", "bound", "GFLOP", "main_MB", "energy_mJ", "util", cyc ? "   map" : "");
    if (cyc)
        printf("(map: mapping efficiency of the array, or tile efficiency of GPU waves and CPU micro-tiles)\n");
    double other_t = 0;
    int shown = 0;
    for (int i = 0; i < n; i++) {
        const struct eval_op *o = v[i];
        if (shown >= top) {
            other_t += o->time_s;
            continue;
        }
        shown++;
        printf("%-28.28s %-8s %-6.6s %9.0f %11.4f %5.1f%% %-8s %10.3f %10.3f %10.4f %4.0f%%", o->name,
               cli_op_phase(o), sys->dev[o->dev].name, o->count, ms(o->time_s),
               100 * o->time_s / res->t.latency_s, bound_names[o->bound], o->flops / 1e9, o->bytes / 1e6,
               o->energy_J * 1e3, 100 * o->utilization);
        if (cyc && o->mapping_efficiency > 0)
            printf(" %4.0f%%", 100 * o->mapping_efficiency);
        printf("\n");
    }
    if (n > shown)
        printf("%-28s %-8s %-6s %9s %11.4f %5.1f%%\n", "(other operators)", "", "", "", ms(other_t),
               100 * other_t / res->t.latency_s);
    free(v);
    print_kernels(r, res, top);
    printf("\ntotals:\n");
    for (int i = 0; i < metric_count; i++) {
        const struct metric *m = &metric_table[i];
        if (!metric_applies(m, ph) || !strcmp(m->name, "weight_bytes"))
            continue;
        double val = metric_value(m, &res->t);
        if ((!strcmp(m->name, "price_USD") && val == 0) || (isnan(val) && strstr(m->name, "cost_per_") != m->name))
            continue; /* (n/a areas and error bars are said above or have no row) */
        if (isnan(val))
            printf("  %-22s %14s  %s\n", m->name, "n/a", "no price or rent in the hwdesc");
        else
            printf("  %-22s %14.6g  %s\n", m->name, val, m->what);
    }
}

static void print_csv(const struct eval_req *r, const struct eval_result *res)
{
    printf("name,type,phase,device,count,time_ms,compute_ms,memory_ms,overhead_ms,transfer_ms,bound,macs,flops,"
           "bytes,energy_mJ,utilization,precision,kernel\n");
    for (int i = 0; res->feasible && i < res->n_ops; i++) { /* an infeasible point has no rows, as in --json */
        const struct eval_op *o = &res->ops[i];
        printf("%s,%s,%s,%s,%.0f,%.9g,%.9g,%.9g,%.9g,%.9g,%s,%.0f,%.0f,%.0f,%.9g,%.4f,%s,%d\n", o->name,
               op_type_name(o->type), cli_op_phase(o), r->sys->dev[o->dev].name, o->count, ms(o->time_s),
               ms(o->compute_s), ms(o->memory_s), ms(o->overhead_s), ms(o->xfer_s), bound_names[o->bound], o->macs,
               o->flops, o->bytes, o->energy_J * 1e3, o->utilization, prec_names[o->cprec], o->kernel);
    }
}

/* A number as SCALE-Sim's Python prints it: integers of its int fields bare, floats by repr (the
 * shortest text that reads back, "10.0" for a whole one). */
static void py_float(double v)
{
    if (v == floor(v) && fabs(v) < 1e16) {
        printf("%.1f", v);
        return;
    }
    char b[40];
    printf("%s", ju_shortest(b, sizeof b, v));
}

enum ss_report { SS_COMPUTE, SS_BANDWIDTH, SS_ACCESS, SS_COUNT };
static const char *const ss_report_names[SS_COUNT + 1] = {"compute", "bandwidth", "access", NULL};

/* SCALE-Sim's report files, row for row: one row per GEMM the array runs (LayerID counts them from 0:
 * a depthwise layer is one layer per channel, attention QK^T then PV per batch x head, as SCALE-Sim
 * lists them), with its header and its number formats. */
static int print_scalesim(const struct eval_req *r, const struct eval_result *res, enum ss_report kind,
                          struct dse_err *e)
{
    static const char *const head[SS_COUNT] = {
        "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,",
        "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM BW, "
        "Avg OFMAP DRAM BW,",
        "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, SRAM Filter Start Cycle, SRAM "
        "Filter Stop Cycle, SRAM Filter Reads, SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, "
        "DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, DRAM Filter Start Cycle, DRAM Filter Stop "
        "Cycle, DRAM Filter Reads, DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,"};
    const struct hw_device *d = &r->sys->dev[r->dev];
    enum wl_phase ph = r->phase == PH_TRAIN || wl_model_is_lm(r->model) ? r->phase : PH_NONE;
    struct eval_graphs eg;
    int rc = eval_graphs_build(r->model, ph, r->batch, r->prompt, NULL, r->sw, &eg, e);
    if (rc)
        return rc;
    printf("%s\n", head[kind]);
    long long id = 0;
    for (int i = 0; res->feasible && i < eg.first.n_op && i < res->n_ops; i++) {
        const struct wl_op *op = &eg.first.op[i];
        if (!op_type_is_gemm(op->type) || res->ops[i].dev != r->dev)
            continue;
        double dims[2][3], times;
        struct sa_report rep[2];
        int n = model_systolic_gemms(op, dims, &times);
        for (int k = 0; k < n; k++)
            if (model_systolic_layer(d, dims[k][0], dims[k][1], dims[k][2], prec_bytes(res->ops[i].cprec), &rep[k])) {
                rc = dse_err_set(e, DSE_EINPUT, NULL, "--scalesim-csv", "layer '%s' is too large to replay", op->name);
                goto out;
            }
        for (double t = 0; t < op->count * times; t++)
            for (int k = 0; k < n; k++, id++) {
                const struct sa_report *p = &rep[k];
                printf("%lld, ", id);
                if (kind == SS_COMPUTE) {
                    printf("%.0f, %.0f, ", p->total_cycles, p->stall_cycles);
                    py_float(p->overall_util_pct);
                    printf(", ");
                    py_float(p->mapping_efficiency_pct);
                    printf(", ");
                    py_float(p->compute_util_pct);
                    printf(",\n");
                    continue;
                }
                for (int j = 0; j < 6; j++) { /* SRAM words per total cycle; DRAM words per cycle of its span */
                    int o = j % 3;
                    double v = j < 3 ? p->sram_acc[o] / p->total_cycles
                                     : p->dram_acc[o] / (p->dram_stop[o] - p->dram_start[o] + 1);
                    if (kind == SS_BANDWIDTH) {
                        py_float(v);
                        printf(",%s", j < 5 ? " " : "\n");
                    }
                }
                if (kind == SS_BANDWIDTH)
                    continue;
                for (int j = 0; j < 6; j++) {
                    int o = j % 3;
                    double a = j < 3 ? p->sram_start[o] : p->dram_start[o], b = j < 3 ? p->sram_stop[o] : p->dram_stop[o];
                    py_float(a);
                    printf(", ");
                    py_float(b);
                    printf(", %.0f,%s", j < 3 ? p->sram_acc[o] : p->dram_acc[o], j < 5 ? " " : "\n");
                }
            }
    }
out:
    eval_graphs_free(&eg);
    return rc;
}

/* The search's summary and its best layouts as a JSON member of o. */
static void add_layouts_json(cJSON *o, const struct metric *m, const struct layout_choice *best,
                             const struct layout_stats *st)
{
    cJSON *ls = cJSON_AddObjectToObject(o, "layout_search"), *arr;
    if (!ls)
        return;
    cJSON_AddStringToObject(ls, "objective", m->name);
    cJSON_AddStringToObject(ls, "goal", m->dir == DIR_MAX ? "max" : "min");
    cJSON_AddNumberToObject(ls, "searched", (double)st->searched);
    cJSON_AddNumberToObject(ls, "refused", (double)st->refused);
    cJSON_AddNumberToObject(ls, "infeasible", (double)st->infeasible);
    if (!(arr = cJSON_AddArrayToObject(ls, "best")))
        return;
    for (int i = 0; i < st->kept; i++) {
        cJSON *x = cJSON_CreateObject();
        if (!x)
            return;
        for (int k = 0; k < PAR_DIM_COUNT; k++)
            cJSON_AddNumberToObject(x, par_dim_names[k], best[i].layout.n[k]);
        cJSON_AddNumberToObject(x, "microbatches", best[i].layout.microbatches);
        cJSON_AddNumberToObject(x, "ep", best[i].layout.ep);
        cJSON_AddNumberToObject(x, m->name, best[i].value);
        cJSON_AddNumberToObject(x, "latency_ms", ms(best[i].latency_s));
        cJSON_AddNumberToObject(x, "peak_memory_MB", best[i].peak_memory_bytes / 1e6);
        cJSON_AddItemToArray(arr, x);
    }
}

static int print_json(const struct eval_req *r, const struct eval_result *res, const char *prec,
                      const struct layout_choice *best, const struct metric *lobj, const struct layout_stats *lst,
                      const struct ql_table *qt, const char *what_if)
{
    enum wl_phase ph = r->phase == PH_TRAIN || wl_model_is_lm(r->model) ? r->phase : PH_NONE;
    cJSON *o = cJSON_CreateObject(), *t, *ops, *val;
    if (!o)
        return DSE_ERUNTIME;
    if (lobj)
        add_layouts_json(o, lobj, best, lst);
    cJSON_AddStringToObject(o, "dse_version", PACKAGE_VERSION);
    cJSON_AddStringToObject(o, "git", DSE_GIT_HASH);
    cJSON_AddStringToObject(o, "hw", r->sys->name);
    if (what_if) /* --set: the hwdesc's fields this result changed */
        cJSON_AddStringToObject(o, "what_if", what_if);
    cJSON_AddStringToObject(o, "device", r->sys->dev[r->dev].name);
    cJSON_AddStringToObject(o, "workload", r->model->name);
    cJSON_AddStringToObject(o, "precision", prec);
    cJSON_AddNumberToObject(o, "batch", (double)r->batch);
    cJSON_AddStringToObject(o, "phase", wl_phase_names[ph]);
    if (ph != PH_NONE || r->model->kind == WLM_TRANSFORMER)
        cJSON_AddNumberToObject(o, "prompt", (double)r->prompt);
    if (ph == PH_GENERATE)
        cJSON_AddNumberToObject(o, "generate", (double)r->gen);
    cJSON_AddStringToObject(o, "model_tier", fidelity_names[r->x.fidelity]);
    cJSON_AddStringToObject(o, "software", r->sw ? r->sw->name : "none");
    cJSON_AddStringToObject(o, "software_version", r->sw ? r->sw->version : ""); /* "": none */
    cJSON *lay = cJSON_AddObjectToObject(o, "layout");
    if (lay) {
        for (int k = 0; k < PAR_DIM_COUNT; k++)
            cJSON_AddNumberToObject(lay, par_dim_names[k], r->layout.n[k] > 0 ? r->layout.n[k] : 1);
        cJSON_AddNumberToObject(lay, "microbatches", r->layout.microbatches > 0 ? r->layout.microbatches : 1);
        cJSON_AddNumberToObject(lay, "ep", r->layout.ep > 0 ? r->layout.ep : 1);
        cJSON_AddNumberToObject(lay, "moe_imbalance", r->layout.moe_imbalance > 0 ? r->layout.moe_imbalance : 1);
        cJSON_AddNumberToObject(lay, "devices", hw_topo_devices(r->sys));
    }
    cJSON_AddBoolToObject(o, "feasible", res->feasible);
    if (!res->feasible)
        cJSON_AddStringToObject(o, "reason", res->reason);
    if (res->feasible && res->throttle_note[0])
        cJSON_AddStringToObject(o, "throttled", res->throttle_note);
    if (r->cost) {
        cJSON *ca = cJSON_AddObjectToObject(o, "cost_assumptions");
        cJSON_AddNumberToObject(ca, "usd_per_kWh", r->cost->usd_per_kWh);
        cJSON_AddNumberToObject(ca, "pue", r->cost->pue);
        cJSON_AddNumberToObject(ca, "amortize_years", r->cost->amortize_years);
        cJSON_AddNumberToObject(ca, "utilization", r->cost->utilization);
        cJSON_AddNumberToObject(ca, "hosting_usd_per_hour", r->cost->hosting_usd_per_hour);
    }
    cJSON *pm = cJSON_AddObjectToObject(o, "power_model");
    cJSON_AddBoolToObject(pm, "calibrated", r->sys->dev[r->dev].power_mape_pct >= 0);
    if (r->sys->dev[r->dev].power_mape_pct >= 0)
        cJSON_AddNumberToObject(pm, "heldout_mape_pct", r->sys->dev[r->dev].power_mape_pct);
    if (res->feasible) { /* each device the point uses: its average power and the limit it obeys (one device of a
                            topology's layout) */
        cJSON *dv = cJSON_AddArrayToObject(pm, "devices");
        for (int d = 0; dv && d < r->sys->n_dev; d++) {
            if (!(res->used & (1u << d)))
                continue;
            cJSON *x = cJSON_CreateObject();
            if (!x || !cJSON_AddItemToArray(dv, x))
                break;
            cJSON_AddStringToObject(x, "name", r->sys->dev[d].name);
            cJSON_AddNumberToObject(x, "power_W", res->dev_power_W[d]);
            if (isfinite(res->dev_limit_W[d]) && res->dev_limit_W[d] > 0)
                cJSON_AddNumberToObject(x, "limit_W", res->dev_limit_W[d]);
        }
    }
    if (r->sys->encl.present && res->feasible) {
        cJSON_AddNumberToObject(pm, "module_W", res->t.module_W);
        cJSON_AddNumberToObject(pm, "enclosure_efficiency", res->t.encl_efficiency);
    }
    int mi = res->feasible && res->mode >= 0 ? res->mode : r->sys->mode;
    if (mi >= 0) {
        cJSON *md = cJSON_AddObjectToObject(o, "mode");
        cJSON_AddStringToObject(md, "name", r->sys->modes[mi].name);
        cJSON_AddNumberToObject(md, "budget_W", r->sys->modes[mi].budget_W);
        cJSON_AddBoolToObject(md, "picked_by_cap", res->feasible && res->mode >= 0);
    }
    if (r->sys->dev[r->dev].n_mem) {
        struct mem_view mv = mem_view_of(r, res);
        cJSON *mem = cJSON_AddObjectToObject(o, "memory");
        cJSON_AddStringToObject(mem, "level", mv.m->name);
        cJSON_AddBoolToObject(mem, "shared", mv.m->shared >= 0);
        cJSON_AddNumberToObject(mem, "capacity_GB", mv.cap / 1e9);
        cJSON_AddNumberToObject(mem, "reserved_GB", mv.m->reserved_bytes / 1e9);
        cJSON_AddNumberToObject(mem, "mem_util", mv.util > 0 ? mv.util : 1);
        cJSON_AddNumberToObject(mem, "usable_GB", mv.usable > 0 ? mv.usable / 1e9 : 0);
        if (mv.need > 0)
            cJSON_AddNumberToObject(mem, "need_GB", mv.need / 1e9);
        else
            cJSON_AddNullToObject(mem, "need_GB");
    }
    val = cJSON_AddObjectToObject(o, "validation");
    if (val) {
        const struct hw_device *d = &r->sys->dev[r->dev];
        char vn[320], eb[900];
        cJSON_AddBoolToObject(val, "calibrated", hw_calibrated(d));
        cJSON_AddBoolToObject(val, "layout_validated", res->t.devices <= 1); /* the multi-device corpus: below */
        const struct sw_stack *st = r->sw;
        if (ph == PH_TRAIN && st && st->mape_pct[0] >= 0)
            cJSON_AddNumberToObject(val, "training_heldout_mape_pct", st->mape_pct[0]);
        if ((ph == PH_PREFILL || ph == PH_DECODE || ph == PH_GENERATE) && st && st->mape_pct[1] >= 0)
            cJSON_AddNumberToObject(val, "inference_heldout_mape_pct", st->mape_pct[1]);
        if (d->calib_mape_pct >= 0)
            cJSON_AddNumberToObject(val, "heldout_mape_pct", d->calib_mape_pct);
        else
            cJSON_AddNullToObject(val, "heldout_mape_pct");
        cJSON *x = res->feasible && !isnan(res->t.err_low_pct) ? cJSON_AddObjectToObject(val, "expected_error_pct")
                                                               : (cJSON_AddNullToObject(val, "expected_error_pct"), NULL);
        if (x) { /* of the time: predicted / measured - 1 */
            cJSON_AddNumberToObject(x, "low", res->t.err_low_pct);
            cJSON_AddNumberToObject(x, "high", res->t.err_high_pct);
            cJSON_AddNumberToObject(x, "n", res->t.err_n);
            cJSON_AddStringToObject(x, "class", hw_class_names[d->cls]);
            cJSON_AddStringToObject(x, "kind", res->t.err_fallback ? "all" : pkind_names[eb_kind_of(r->model, ph)]);
            cJSON_AddNumberToObject(x, "latency_ms_low", ms(res->t.latency_s) / (1 + res->t.err_high_pct / 100));
            cJSON_AddNumberToObject(x, "latency_ms_high", ms(res->t.latency_s) / (1 + res->t.err_low_pct / 100));
            cJSON_AddStringToObject(x, "source", r->errbars->path);
        }
        cJSON_AddStringToObject(val, "note", validation_note(d, vn, sizeof vn));
        if (res->feasible)
            cJSON_AddStringToObject(val, "error_bars", errbar_note(r, res, ph, eb, sizeof eb));
    }
    if (r->quality)
        cli_quality_json(o, qt, r->quality);
    t = cJSON_AddObjectToObject(o, "totals");
    for (int i = 0; t && res->feasible && i < metric_count; i++)
        if (metric_applies(&metric_table[i], ph))
            cJSON_AddNumberToObject(t, metric_table[i].name, metric_value(&metric_table[i], &res->t));
    ops = cJSON_AddArrayToObject(o, "ops");
    for (int i = 0; ops && res->feasible && i < res->n_ops; i++) {
        const struct eval_op *p = &res->ops[i];
        cJSON *x = cJSON_CreateObject();
        if (!x)
            break;
        cJSON_AddStringToObject(x, "name", p->name);
        cJSON_AddStringToObject(x, "type", op_type_name(p->type));
        cJSON_AddStringToObject(x, "phase", cli_op_phase(p));
        cJSON_AddStringToObject(x, "device", r->sys->dev[p->dev].name);
        cJSON_AddNumberToObject(x, "count", p->count);
        cJSON_AddNumberToObject(x, "time_ms", ms(p->time_s));
        cJSON_AddNumberToObject(x, "compute_ms", ms(p->compute_s));
        cJSON_AddNumberToObject(x, "memory_ms", ms(p->memory_s));
        cJSON_AddNumberToObject(x, "overhead_ms", ms(p->overhead_s));
        cJSON_AddNumberToObject(x, "transfer_ms", ms(p->xfer_s));
        cJSON_AddStringToObject(x, "bound", bound_names[p->bound]);
        cJSON_AddNumberToObject(x, "macs", p->macs);
        cJSON_AddNumberToObject(x, "flops", p->flops);
        cJSON_AddNumberToObject(x, "bytes", p->bytes);
        cJSON_AddNumberToObject(x, "energy_mJ", p->energy_J * 1e3);
        cJSON_AddNumberToObject(x, "utilization", p->utilization);
        cJSON_AddStringToObject(x, "precision", prec_names[p->cprec]);
        cJSON_AddNumberToObject(x, "kernel", p->kernel);
        cJSON_AddItemToArray(ops, x);
    }
    char *s = ju_print(o, 1);
    cJSON_Delete(o);
    if (!s)
        return DSE_ERUNTIME;
    puts(s);
    free(s);
    return DSE_OK;
}

/* --optimizer, --zero, --recompute: the training step's configuration, refused for other phases. */
static int cli_train_opts(const struct cli_opt *opts, struct eval_req *r, struct dse_err *e)
{
    const char *o = cli_get(opts, "optimizer"), *z = cli_get(opts, "zero"), *rc = cli_get(opts, "recompute");
    if ((o || z || rc) && r->phase != PH_TRAIN)
        return dse_err_set(e, DSE_EINPUT, NULL, o ? "--optimizer" : z ? "--zero" : "--recompute",
                           "configures a training step: add --phase train");
    int k;
    if (o && (k = ju_lookup(train_opt_names, o)) < 0)
        return dse_err_set(e, DSE_EINPUT, NULL, "--optimizer", "expected adamw or sgd, got '%s'", o);
    if (o)
        r->train.optimizer = (enum train_opt)k;
    if (rc && (k = ju_lookup(train_recompute_names, rc)) < 0)
        return dse_err_set(e, DSE_EINPUT, NULL, "--recompute", "expected none, selective or full, got '%s'", rc);
    if (rc)
        r->train.recompute = (enum train_recompute)k;
    long long v;
    if (z && cli_int("zero", z, 0, 3, &v, e))
        return DSE_EINPUT;
    if (z)
        r->train.zero = (int)v;
    if (eval_check_train_prec(r, e)) { /* a usage error here, an infeasible point in a sweep */
        char why[sizeof e->msg];
        dse_strlcpy(why, e->msg, sizeof why);
        return dse_err_set(e, DSE_EINPUT, NULL, "--precision", "%s", why);
    }
    return DSE_OK;
}

/* --layout auto: searches r's system for the best layouts by --objective and sets r->layout to the
 * best (left as given when nothing is feasible: *m set, st->kept 0). Without --layout, *m stays NULL. */
static int layout_auto(const struct cli_opt *opts, struct eval_req *r, const struct metric **m,
                       struct layout_choice *best, struct layout_stats *st, struct dse_err *e)
{
    if (!cli_get(opts, "layout"))
        return DSE_OK;
    int lm = wl_model_is_lm(r->model);
    const char *on = cli_get(opts, "objective");
    if (!on)
        on = lm ? "tokens_per_s_per_device" : "throughput_per_s";
    *m = metric_find(on);
    if (!*m)
        return dse_err_set(e, DSE_EINPUT, NULL, "--objective", "unknown metric '%s' (dse list metrics)", on);
    if ((*m)->dir == DIR_NONE)
        return dse_err_set(e, DSE_EINPUT, NULL, "--objective", "%s has no direction to rank by", on);
    /* A metric this evaluation does not produce (a serving run's, another phase's) would make every layout
     * "infeasible" and the answer "no feasible layout": a usage error instead. */
    if (!metric_applies_to(*m, r->phase, 0))
        return dse_err_set(e, DSE_EINPUT, NULL, "--objective", "%s is not a metric of %s %s (%s)%s", on,
                           r->phase != PH_NONE ? wl_phase_names[r->phase] : "this",
                           r->phase != PH_NONE ? "points" : "evaluation", (*m)->what,
                           ((*m)->phases & METRIC_SERVE) ? "; dse eval runs no serving simulation (dse serve and a "
                                                           "sweep's serving block do)" : "");
    int rc = eval_layout_search(r, *m, best, 8, st, e);
    if (!rc && st->kept) {
        r->layout = best[0].layout;
        return DSE_OK;
    }
    if (!rc) /* nothing feasible: tp x 1 x 1 over every device shows why */
        r->layout = (struct par_layout){{hw_topo_devices(r->sys), 1, 1}, 1, 1, 1};
    return rc;
}

static void print_layouts(const struct eval_req *r, const struct metric *m, const struct layout_choice *best,
                          const struct layout_stats *st)
{
    printf("layout search: %lld layouts of %d devices searched (%lld refused by the layout rules, %lld infeasible), "
           "ranked by %s (%s)\n",
           st->searched, hw_topo_devices(r->sys), st->refused, st->infeasible, m->name,
           m->dir == DIR_MAX ? "higher is better" : "lower is better");
    if (!st->kept) {
        printf("no feasible layout\n\n");
        return;
    }
    printf("  %4s %4s %4s %4s %4s %12s %24s %12s %16s\n", "tp", "cp", "dp", "pp", "ep", "microbatches", m->name,
           "latency_ms", "peak_memory_MB");
    for (int i = 0; i < st->kept; i++)
        printf("  %4d %4d %4d %4d %4d %12d %24.6g %12.6g %16.6g%s\n", best[i].layout.n[PAR_TP], best[i].layout.n[PAR_CP],
               best[i].layout.n[PAR_DP], best[i].layout.n[PAR_PP], best[i].layout.ep, best[i].layout.microbatches,
               best[i].value, ms(best[i].latency_s), best[i].peak_memory_bytes / 1e6, i ? "" : "  <- shown below");
    printf("\n");
}

static int print_layouts_json(const struct eval_req *r, const struct metric *m, const struct layout_choice *best,
                              const struct layout_stats *st)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return DSE_ERUNTIME;
    cJSON_AddStringToObject(o, "hw", r->sys->name);
    cJSON_AddStringToObject(o, "workload", r->model->name);
    cJSON_AddBoolToObject(o, "feasible", 0);
    cJSON_AddStringToObject(o, "reason", "no layout of the search is feasible");
    add_layouts_json(o, m, best, st);
    char *s = ju_print(o, 1);
    cJSON_Delete(o);
    if (!s)
        return DSE_ERUNTIME;
    puts(s);
    free(s);
    return DSE_OK;
}

static int point_device_prec(const struct cli_opt *opts, const char *cmd, struct hw_system *sys, struct wl_model *model,
                             struct eval_req *r, struct dse_err *e);

/* The system, workload, device (or placement) and precision of a design point from --hw, --workload,
 * --device, --placement and --precision (cli.h): *sys is malloc'd (the caller frees it, also on an
 * error), *model loaded on success only (the caller frees it then). */
/* --image N or HxW: a CNN generator's input resolution (models/README.md); other workloads refuse it. */
static int image_opt(const char *v, struct wl_model *m, struct dse_err *e)
{
    if (!v)
        return DSE_OK;
    long long h, w;
    char x, end;
    int n = sscanf(v, "%lld%c%lld%c", &h, &x, &w, &end);
    if (n == 1)
        w = h;
    else if (n != 3 || x != 'x')
        return dse_err_set(e, DSE_EINPUT, NULL, "--image", "expected N or HxW, got '%s'", v);
    if (h < 32 || h > 4096 || w < 32 || w > 4096)
        return dse_err_set(e, DSE_EINPUT, NULL, "--image", "expected sizes in [32, 4096], got '%s'", v);
    if (m->kind != WLM_CNN) {
        wl_model_free(m);
        return dse_err_set(e, DSE_EINPUT, NULL, "--image", "%s is not built by a CNN generator: its input size is its "
                                                         "file's", m->name);
    }
    m->cnn.image_h = h;
    m->cnn.image_w = w;
    return DSE_OK;
}

int cli_point_open(const struct cli_opt *opts, const char *cmd, char *hwp, size_t hwp_n, struct hw_system **sys,
                   struct wl_model *model, struct eval_req *r, struct dse_err *e)
{
    static const char *const hw_ext[] = {".json", ".cfg", NULL}, *const wl_ext[] = {".json", ".csv", ".onnx", NULL};
    const char *hw = cli_get(opts, "hw"), *wl = cli_get(opts, "workload");
    char wlp[1024];
    int rc;
    *sys = NULL;
    if (!hw || !wl)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: --hw and --workload are required (see dse help %s)", cmd, cmd);
    if ((rc = cli_resolve("--hw", "hwdesc", hw, hw_ext, hwp, (unsigned)hwp_n, e)) ||
        (rc = cli_resolve("--workload", "models", wl, wl_ext, wlp, sizeof wlp, e)))
        return rc;
    if (!(*sys = malloc(sizeof **sys)))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    struct wl_load_opt lo;
    if ((rc = cli_load_opt(opts, &lo, e)) || (rc = cli_load_hw_opts(opts, hwp, *sys, e)) ||
        (rc = wl_load_file_opt(wlp, &lo, model, e)) || (rc = image_opt(cli_get(opts, "image"), model, e)))
        return rc;
    if ((rc = point_device_prec(opts, cmd, *sys, model, r, e)))
        wl_model_free(model);
    return rc;
}

static int point_device_prec(const struct cli_opt *opts, const char *cmd, struct hw_system *sys, struct wl_model *model,
                             struct eval_req *r, struct dse_err *e)
{
    int rc = DSE_OK;
    memset(r, 0, sizeof *r);
    r->sys = sys;
    r->model = model;
    const char *dn = cli_get(opts, "device"), *pl = cli_get(opts, "placement");
    for (int t = 0; t < OP_COUNT; t++)
        r->type_dev[t] = -1;
    if (dn && pl)
        rc = dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: choose one of --device and --placement", cmd);
    else if (pl)
        rc = eval_parse_placement(sys, pl, &r->dev, r->type_dev, e);
    else
        r->dev = dn ? hw_find_device(sys, dn) : eval_default_device(sys);
    if (!rc && r->dev < 0) {
        char names[256] = "";
        for (int i = 0; i < sys->n_dev; i++) {
            strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
            strncat(names, sys->dev[i].name, sizeof names - strlen(names) - 1);
        }
        rc = dse_err_set(e, DSE_EINPUT, NULL, "--device", "'%s' is not a device of %s (devices: %s)", dn, sys->name,
                         names);
    }
    if (rc)
        return rc;
    const char *ps = cli_get(opts, "precision");
    if (ps)
        return prec_parse(ps, &r->x.prec, e);
    int p = eval_default_prec(&sys->dev[r->dev]);
    if (p < 0)
        p = P_FP32;
    r->x.prec.w = r->x.prec.a = r->x.prec.kv = (enum prec)p;
    return DSE_OK;
}

/* --tp, --dp, --pp, --cp, --microbatches, --ep and --moe-imbalance into r->layout (cli.h); not
 * completed against the topology (par_layout_complete). */
int cli_point_layout(const struct cli_opt *opts, struct eval_req *r, struct dse_err *e)
{
    int rc;
    static const char *const lay_opt[PAR_DIM_COUNT] = {"tp", "dp", "pp", "cp"};
    for (int d = 0; d < PAR_DIM_COUNT; d++) {
        long long v;
        if (cli_get(opts, lay_opt[d]) &&
            (rc = cli_int(lay_opt[d], cli_get(opts, lay_opt[d]), 1, HW_MAX_TOPO_DEVICES, &v, e)))
            return rc;
        r->layout.n[d] = cli_get(opts, lay_opt[d]) ? (int)v : 0;
    }
    if (cli_get(opts, "microbatches")) {
        long long v;
        if ((rc = cli_int("microbatches", cli_get(opts, "microbatches"), 1, 4096, &v, e)))
            return rc;
        r->layout.microbatches = (int)v;
    }
    if (cli_get(opts, "ep")) {
        long long v;
        if ((rc = cli_int("ep", cli_get(opts, "ep"), 1, HW_MAX_TOPO_DEVICES, &v, e)))
            return rc;
        r->layout.ep = (int)v;
    }
    if (cli_get(opts, "moe-imbalance")) {
        char *end;
        const char *s = cli_get(opts, "moe-imbalance");
        r->layout.moe_imbalance = strtod(s, &end);
        if (!cli_get(opts, "ep"))
            return dse_err_set(e, DSE_EINPUT, NULL, "--moe-imbalance", "applies to expert parallelism: add --ep");
        /* the busiest of ep devices routes at most every token: ep times the mean */
        if (end == s || *end || !(r->layout.moe_imbalance >= 1) || r->layout.moe_imbalance > r->layout.ep)
            return dse_err_set(e, DSE_EINPUT, NULL, "--moe-imbalance",
                               "expected a number from 1 (uniform routing) to the ep degree %d (every token on one "
                               "device), got '%s'", r->layout.ep, s);
    }
    return DSE_OK;
}

int cmd_eval(int argc, char **argv)
{
    struct cli_opt opts[sizeof eval_opts_proto / sizeof eval_opts_proto[0]];
    memcpy(opts, eval_opts_proto, sizeof opts);
    struct dse_err e;
    const char *pos[1];
    int npos, rc;
    struct hw_system *sys = NULL;
    struct wl_model model;
    int have_model = 0;
    struct eval_result res = {0};
    struct sw_stack sw;
    struct eb_table ebt;
    struct ql_table qt = {0};
    struct ql_est qe;
    char hwp[1024];
    dse_err_clear(&e);
    if ((rc = cli_parse(argc, argv, 2, opts, pos, 0, &npos, "eval", &e)))
        goto out;
    if (cli_get(opts, "help")) {
        usage();
        return 0;
    }
    int ss_kind = -1;
    if (cli_get(opts, "scalesim-report") &&
        (ss_kind = ju_lookup(ss_report_names, cli_get(opts, "scalesim-report"))) < 0) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--scalesim-report", "expected compute, bandwidth or access, got '%s'",
                         cli_get(opts, "scalesim-report"));
        goto out;
    }
    if (cli_get(opts, "scalesim-csv") && ss_kind < 0)
        ss_kind = SS_COMPUTE;
    if (!!cli_get(opts, "json") + !!cli_get(opts, "csv") + (ss_kind >= 0) > 1) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "eval: choose one of --json, --csv and --scalesim-csv");
        goto out;
    }
    struct eval_req r;
    char prec[64];
    if ((rc = cli_point_open(opts, "eval", hwp, sizeof hwp, &sys, &model, &r, &e)))
        goto out;
    have_model = 1;
    r.want_ops = 1;
    prec_format(&r.x.prec, prec, sizeof prec);

    if ((rc = cli_workload_opts(opts, &model, &r, &e)) ||
        (rc = wl_check_context(&model, r.phase, r.prompt, r.gen, NULL, "--prompt", &e)))
        goto out;
    r.x.fidelity = FID_ANALYTICAL;
    if (cli_get(opts, "fidelity") && (rc = cli_fidelity(cli_get(opts, "fidelity"), &r.x.fidelity, &e)))
        goto out;
    /* the software stack: --software, else the primary device's own, else none */
    const char *swn = cli_get(opts, "software");
    if (!swn)
        swn = sys->dev[r.dev].software[0] ? sys->dev[r.dev].software : "none";
    if ((rc = pass_load_named(swn, cli_get(opts, "software") ? NULL : hwp, &sw, &e)))
        goto out;
    if (r.phase == PH_TRAIN && !cli_get(opts, "software") && !sw.trains && /* an inference stack: the class's trainer */
        (rc = pass_load_named(pass_train_default(sys->dev[r.dev].cls), hwp, &sw, &e)))
        goto out;
    r.sw = &sw;
    struct cost_cfg cost;
    if ((rc = cli_cost(opts, NULL, &cost, &e)))
        goto out;
    r.cost = &cost;
    if (cli_get(opts, "power-W")) {
        char *end;
        const char *v = cli_get(opts, "power-W");
        double cap = strtod(v, &end);
        if (end == v || *end || !(cap > 0) || cap > 1e6) {
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--power-W", "expected a power in (0, 1e6] W, got '%s'", v);
            goto out;
        }
        for (int d = 0; d < sys->n_dev; d++)
            hw_apply_power_cap(&sys->dev[d], cap);
    }
    if ((rc = cli_thermal(opts, sys, 1, &e)))
        goto out;
    if (cli_get(opts, "cpu-threads")) {
        long long t;
        if ((rc = cli_int("cpu-threads", cli_get(opts, "cpu-threads"), 1, 100000, &t, &e)))
            goto out;
        int cpus = 0;
        for (int d = 0; d < sys->n_dev && !rc; d++)
            if (sys->dev[d].cls == HW_CPU && ++cpus && (double)t > model_cpu_cores(&sys->dev[d]))
                rc = dse_err_set(&e, DSE_EINPUT, NULL, "--cpu-threads", "%lld: device '%s' of %s has %.0f cores", t,
                                 sys->dev[d].name, sys->name, model_cpu_cores(&sys->dev[d]));
        if (!rc && !cpus)
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--cpu-threads", "%s has no cpu device", sys->name);
        if (rc)
            goto out;
        r.x.threads = (int)t;
    }
    if (ss_kind >= 0) { /* SCALE-Sim's reports describe its own array and memory: a .cfg, one pass */
        const struct hw_device *d = &sys->dev[r.dev];
        if (r.x.fidelity != FID_CYCLE)
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--scalesim-csv", "needs --fidelity cycle (cycles come from the cycle tier)");
        else if (!d->array.present || d->array.interface == SA_SHARED)
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--scalesim-csv",
                             "needs a SCALE-Sim configuration (--hw x.cfg): '%s' is not one", sys->name);
        else if (ss_kind != SS_COMPUTE && d->array.interface == SA_CALC)
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--scalesim-report",
                             "%s: with InterfaceBandwidth CALC SCALE-Sim estimates the DRAM traffic itself, which dse "
                             "does not model; use USER bandwidth or the compute report", ss_report_names[ss_kind]);
        else if (wl_model_is_lm(&model) && r.phase == PH_GENERATE)
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--scalesim-csv",
                             "reports one pass: add --phase prefill or --phase decode");
        if (rc)
            goto out;
    }
    if ((rc = cli_point_layout(opts, &r, &e)))
        goto out;
    if ((rc = cli_train_opts(opts, &r, &e)))
        goto out;
    const char *lay = cli_get(opts, "layout");
    if (lay && strcmp(lay, "auto")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--layout", "expected auto, got '%s' (or give --tp, --pp, --dp)", lay);
        goto out;
    }
    if (lay && (cli_get(opts, "tp") || cli_get(opts, "pp") || cli_get(opts, "dp") || cli_get(opts, "cp") ||
                cli_get(opts, "microbatches"))) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--layout", "auto searches tp, pp, dp and micro-batches: give none of them");
        goto out;
    }
    if (!lay && cli_get(opts, "objective")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--objective", "ranks the layouts of --layout auto");
        goto out;
    }
    if (!lay && (rc = par_layout_complete(sys, &r.layout, &e))) { /* where the devices come from: the topology */
        char why[sizeof e.msg];
        dse_strlcpy(why, e.msg, sizeof why);
        rc = dse_err_set(&e, rc, hwp, sys->topo.n_level ? "topology" : "devices", "%s", why);
        goto out;
    }
    long long top = 12;
    if (cli_get(opts, "top") && (rc = cli_int("top", cli_get(opts, "top"), 1, 100000, &top, &e)))
        goto out;

    /* the error bars: --error-bars FILE (none: without), else the table found beside the hwdesc */
    const char *ebp = cli_get(opts, "error-bars");
    char ebpath[1024];
    if (!ebp || strcmp(ebp, "none")) {
        if (ebp)
            dse_strlcpy(ebpath, ebp, sizeof ebpath);
        if ((ebp || eb_resolve(hwp, ebpath, sizeof ebpath)) && (rc = eb_load_file(ebpath, &ebt, &e)))
            goto out;
        r.errbars = ebpath[0] ? &ebt : NULL;
    }
    if ((rc = cli_quality_table(opts, hwp, &qt, &e)))
        goto out;
    eval_quality(qt.n ? &qt : NULL, &model, &r.x.prec, &qe);
    r.quality = &qe;
    struct layout_choice best[8];
    struct layout_stats lst = {0};
    const struct metric *lobj = NULL;
    if ((rc = layout_auto(opts, &r, &lobj, best, &lst, &e)))
        goto out;
    if (lobj && !cli_get(opts, "json"))
        print_layouts(&r, lobj, best, &lst);
    if (lobj && !lst.kept) { /* nothing fits: the first split shows why */
        if (cli_get(opts, "json"))
            rc = print_layouts_json(&r, lobj, best, &lst);
        goto out;
    }
    if ((rc = eval_run(&r, &res, &e)))
        goto out;
    if (cli_get(opts, "json"))
        rc = print_json(&r, &res, prec, lobj ? best : NULL, lobj, &lst, qt.n ? &qt : NULL, cli_get(opts, "set"));
    else if (ss_kind >= 0) {
        if (!res.feasible)
            fprintf(stderr, "dse: infeasible: %s\n", res.reason);
        if ((rc = print_scalesim(&r, &res, (enum ss_report)ss_kind, &e)))
            goto out;
    }
    else if (cli_get(opts, "csv")) {
        if (!res.feasible)
            fprintf(stderr, "dse: infeasible: %s\n", res.reason);
        print_csv(&r, &res);
    } else
        print_human(&r, &res, prec, (int)top, qt.n ? &qt : NULL, opts);
    if (rc)
        dse_err_set(&e, rc, NULL, NULL, "out of memory while printing");
out:
    if (rc)
        dse_err_print(stderr, &e);
    eval_result_free(&res);
    ql_free(&qt);
    if (have_model)
        wl_model_free(&model);
    free(sys);
    return rc;
}
