/* cli_eval.c -- `dse eval`: one design point, per-operator breakdown and totals. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "config.h"
#include "gitversion.h"
#include "eval.h"
#include "metric.h"

static struct cli_opt eval_opts_proto[] = {
    {"hw", 1, "hardware description (hwdesc file or name from dse list hw)", NULL},
    {"workload", 1, "model (models/ file or name, graph JSON, HF config, SCALE-Sim CSV)", NULL},
    {"device", 1, "device of the system that runs the model (default: first accelerator)", NULL},
    {"placement", 1, "DEV or DEV,TYPE=DEV2,... e.g. npu,attention=cpu (operators by type on other devices)", NULL},
    {"precision", 1, "fp32|tf32|bf16|fp16|fp8|int8|int4, w4a16, w8a8kv8, w=int4,a=fp16,kv=fp8", NULL},
    {"batch", 1, "batch size (default 1)", NULL},
    {"phase", 1, "prefill|decode|generate for decoder LMs (default generate)", NULL},
    {"prompt", 1, "prompt tokens; sequence length for encoders (default 512; BERT 128)", NULL},
    {"generate", 1, "output tokens for --phase generate (default 128)", NULL},
    {"top", 1, "operators shown in the table (default 12)", NULL},
    {"fidelity", 1, "analytical (default) or cycle (the cycle-approximate tier)", NULL},
    {"graph-capture", 0, "cycle tier, GPU: kernels replayed from a captured graph (no launch cost)", NULL},
    {"attention", 1, "cycle tier, GPU: flash (default: no score matrix in memory) or materialized", NULL},
    {"cpu-threads", 1, "CPU: cores used (default: all; both tiers)", NULL},
    {"json", 0, "print one JSON object", NULL},
    {"csv", 0, "print per-operator CSV rows", NULL},
    {"scalesim-csv", 0, "print per-layer rows with SCALE-Sim's columns (needs --fidelity cycle)", NULL},
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

/* What is known of this device's error: a calibration's held-out error, else nothing yet. */
static const char *validation_note(const struct hw_device *d, char *buf, size_t n)
{
    if (d->calib_mape_pct >= 0)
        snprintf(buf, n, "calibrated by dse calibrate: expected error about %.1f%% (held-out MAPE)", d->calib_mape_pct);
    else
        snprintf(buf, n, "uncalibrated: no measured error for this device yet (dse validate, dse calibrate)");
    return buf;
}

static void print_human(const struct eval_req *r, const struct eval_result *res, const char *prec, int top)
{
    const struct hw_system *sys = r->sys;
    const struct hw_device *d = &sys->dev[r->dev];
    enum wl_phase ph = wl_model_is_lm(r->model) ? r->phase : PH_NONE;
    printf("dse eval: %s on %s/%s (%s), %s, batch %lld", r->model->name, sys->name, d->name, hw_class_names[d->cls],
           prec, (long long)r->batch);
    if (ph == PH_GENERATE)
        printf(", generate (prompt %lld, %lld new tokens)\n", (long long)r->prompt, (long long)r->gen);
    else if (ph != PH_NONE)
        printf(", %s (%s %lld tokens)\n", wl_phase_names[ph], ph == PH_DECODE ? "context" : "prompt",
               (long long)r->prompt);
    else
        printf("\n");
    char vn[160];
    printf("model: %s; %s\n\n", r->x.fidelity == FID_CYCLE ? "cycle-approximate tier" : "analytical roofline",
           validation_note(d, vn, sizeof vn));
    if (!res->feasible) {
        printf("INFEASIBLE: %s\n", res->reason);
        return;
    }
    if (res->throttle_note[0])
        printf("THROTTLED: %s; %.2fx slower than unthrottled\n\n", res->throttle_note, res->t.throttle_slowdown);
    const struct eval_op **v = malloc(sizeof *v * (size_t)(res->n_ops ? res->n_ops : 1));
    if (!v)
        return;
    int n = 0;
    for (int i = 0; i < res->n_ops; i++)
        if (res->ops[i].time_s > 0)
            v[n++] = &res->ops[i];
    qsort(v, (size_t)n, sizeof *v, cmp_time);
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
               wl_phase_names[o->phase], sys->dev[o->dev].name, o->count, ms(o->time_s),
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
    printf("\ntotals:\n");
    for (int i = 0; i < metric_count; i++) {
        const struct metric *m = &metric_table[i];
        if (!metric_applies(m, ph) || !strcmp(m->name, "weight_bytes"))
            continue;
        double val = metric_value(m, &res->t);
        if ((!strcmp(m->name, "price_USD") && val == 0) || (!strcmp(m->name, "die_area_mm2") && isnan(val)))
            continue;
        if (isnan(val))
            printf("  %-22s %14s  %s\n", m->name, "n/a", "no price or rent in the hwdesc");
        else
            printf("  %-22s %14.6g  %s\n", m->name, val, m->what);
    }
}

static void print_csv(const struct eval_req *r, const struct eval_result *res)
{
    printf("name,type,phase,device,count,time_ms,compute_ms,memory_ms,overhead_ms,transfer_ms,bound,macs,flops,"
           "bytes,energy_mJ,utilization,precision\n");
    for (int i = 0; res->feasible && i < res->n_ops; i++) { /* an infeasible point has no rows, as in --json */
        const struct eval_op *o = &res->ops[i];
        printf("%s,%s,%s,%s,%.0f,%.9g,%.9g,%.9g,%.9g,%.9g,%s,%.0f,%.0f,%.0f,%.9g,%.4f,%s\n", o->name,
               op_type_names[o->type], wl_phase_names[o->phase], r->sys->dev[o->dev].name, o->count, ms(o->time_s),
               ms(o->compute_s), ms(o->memory_s), ms(o->overhead_s), ms(o->xfer_s), bound_names[o->bound], o->macs,
               o->flops, o->bytes, o->energy_J * 1e3, o->utilization, prec_names[o->cprec]);
    }
}

/* Per layer, SCALE-Sim's COMPUTE_REPORT and BANDWIDTH columns: only array (GEMM-like) layers. */
static void print_scalesim(const struct eval_req *r, const struct eval_result *res)
{
    const struct hw_device *d = &r->sys->dev[r->dev];
    printf("layer,compute_cycles,stall_cycles,total_cycles,compute_util_pct,mapping_efficiency_pct,sram_reads,"
           "sram_writes,dram_reads,dram_writes\n");
    for (int i = 0; res->feasible && i < res->n_ops; i++) {
        const struct eval_op *o = &res->ops[i];
        if (o->cycles_compute <= 0)
            continue;
        double total = o->cycles_compute + o->cycles_stall;
        double util = d->array.present ? o->macs / ((double)d->array.rows * d->array.cols * total) : 0;
        printf("%s,%.0f,%.0f,%.0f,%.4f,%.4f,%.0f,%.0f,%.0f,%.0f\n", o->name, o->cycles_compute, o->cycles_stall,
               total, 100 * util, 100 * o->mapping_efficiency, o->sram_reads, o->sram_writes, o->dram_reads,
               o->dram_writes);
    }
}

static int print_json(const struct eval_req *r, const struct eval_result *res, const char *prec)
{
    enum wl_phase ph = wl_model_is_lm(r->model) ? r->phase : PH_NONE;
    cJSON *o = cJSON_CreateObject(), *t, *ops, *val;
    if (!o)
        return DSE_ERUNTIME;
    cJSON_AddStringToObject(o, "dse_version", PACKAGE_VERSION);
    cJSON_AddStringToObject(o, "git", DSE_GIT_HASH);
    cJSON_AddStringToObject(o, "hw", r->sys->name);
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
    cJSON_AddBoolToObject(o, "feasible", res->feasible);
    if (!res->feasible)
        cJSON_AddStringToObject(o, "reason", res->reason);
    if (res->feasible && res->throttle_note[0])
        cJSON_AddStringToObject(o, "throttled", res->throttle_note);
    val = cJSON_AddObjectToObject(o, "validation");
    if (val) {
        const struct hw_device *d = &r->sys->dev[r->dev];
        char vn[160];
        cJSON_AddBoolToObject(val, "calibrated", d->calib_mape_pct >= 0);
        if (d->calib_mape_pct >= 0)
            cJSON_AddNumberToObject(val, "expected_error_pct", d->calib_mape_pct);
        else
            cJSON_AddNullToObject(val, "expected_error_pct");
        cJSON_AddStringToObject(val, "note", validation_note(d, vn, sizeof vn));
    }
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
        cJSON_AddStringToObject(x, "type", op_type_names[p->type]);
        cJSON_AddStringToObject(x, "phase", wl_phase_names[p->phase]);
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
        cJSON_AddItemToArray(ops, x);
    }
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    if (!s)
        return DSE_ERUNTIME;
    puts(s);
    free(s);
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
    char hwp[1024], wlp[1024];
    dse_err_clear(&e);
    if ((rc = cli_parse(argc, argv, 2, opts, pos, 0, &npos, "eval", &e)))
        goto out;
    if (cli_get(opts, "help")) {
        usage();
        return 0;
    }
    const char *hw = cli_get(opts, "hw"), *wl = cli_get(opts, "workload");
    if (!hw || !wl) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "eval: --hw and --workload are required (see dse help eval)");
        goto out;
    }
    if (!!cli_get(opts, "json") + !!cli_get(opts, "csv") + !!cli_get(opts, "scalesim-csv") > 1) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "eval: choose one of --json, --csv and --scalesim-csv");
        goto out;
    }
    static const char *const hw_ext[] = {".json", ".cfg", NULL}, *const wl_ext[] = {".json", ".csv", NULL};
    if ((rc = cli_resolve("--hw", "hwdesc", hw, hw_ext, hwp, sizeof hwp, &e)) ||
        (rc = cli_resolve("--workload", "models", wl, wl_ext, wlp, sizeof wlp, &e)))
        goto out;
    sys = malloc(sizeof *sys);
    if (!sys) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    if ((rc = cli_load_hw(hwp, sys, &e)) || (rc = wl_load_file(wlp, &model, &e)))
        goto out;
    have_model = 1;

    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = sys;
    r.model = &model;
    const char *dn = cli_get(opts, "device"), *pl = cli_get(opts, "placement");
    for (int t = 0; t < OP_COUNT; t++)
        r.type_dev[t] = -1;
    r.want_ops = 1;
    if (dn && pl) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "eval: choose one of --device and --placement");
        goto out;
    }
    if (pl && (rc = eval_parse_placement(sys, pl, &r.dev, r.type_dev, &e)))
        goto out;
    if (!pl)
        r.dev = dn ? hw_find_device(sys, dn) : eval_default_device(sys);
    if (r.dev < 0) {
        char names[256] = "";
        for (int i = 0; i < sys->n_dev; i++) {
            strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
            strncat(names, sys->dev[i].name, sizeof names - strlen(names) - 1);
        }
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--device", "'%s' is not a device of %s (devices: %s)", dn, sys->name,
                         names);
        goto out;
    }
    const char *ps = cli_get(opts, "precision");
    char prec[64];
    if (ps) {
        if ((rc = prec_parse(ps, &r.x.prec, &e)))
            goto out;
    } else {
        int p = eval_default_prec(&sys->dev[r.dev]);
        if (p < 0)
            p = P_FP32;
        r.x.prec.w = r.x.prec.a = r.x.prec.kv = (enum prec)p;
    }
    prec_format(&r.x.prec, prec, sizeof prec);

    if ((rc = cli_workload_opts(opts, &model, &r, &e)) ||
        (rc = wl_check_context(&model, r.phase, r.prompt, r.gen, NULL, "--prompt", &e)))
        goto out;
    r.x.fidelity = FID_ANALYTICAL;
    if (cli_get(opts, "fidelity") && (rc = cli_fidelity(cli_get(opts, "fidelity"), &r.x.fidelity, &e)))
        goto out;
    r.x.graph_capture = cli_get(opts, "graph-capture") != NULL;
    if (cli_get(opts, "attention")) {
        const char *a = cli_get(opts, "attention");
        if (strcmp(a, "flash") && strcmp(a, "materialized")) {
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--attention", "expected flash or materialized, got '%s'", a);
            goto out;
        }
        r.x.attn_materialized = a[0] == 'm';
    }
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
    if ((r.x.graph_capture || r.x.attn_materialized) && r.x.fidelity != FID_CYCLE) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL,
                         "eval: --graph-capture and --attention shape the cycle tier: add --fidelity cycle");
        goto out;
    }
    if (cli_get(opts, "scalesim-csv") && r.x.fidelity != FID_CYCLE) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--scalesim-csv", "needs --fidelity cycle (cycles come from the cycle tier)");
        goto out;
    }
    long long top = 12;
    if (cli_get(opts, "top") && (rc = cli_int("top", cli_get(opts, "top"), 1, 100000, &top, &e)))
        goto out;

    r.accuracy_proxy = eval_accuracy_proxy(&r.x.prec, wl_model_is_lm(&model));
    if ((rc = eval_run(&r, &res, &e)))
        goto out;
    if (cli_get(opts, "json"))
        rc = print_json(&r, &res, prec);
    else if (cli_get(opts, "scalesim-csv")) {
        if (!res.feasible)
            fprintf(stderr, "dse: infeasible: %s\n", res.reason);
        print_scalesim(&r, &res);
    }
    else if (cli_get(opts, "csv")) {
        if (!res.feasible)
            fprintf(stderr, "dse: infeasible: %s\n", res.reason);
        print_csv(&r, &res);
    } else
        print_human(&r, &res, prec, (int)top);
    if (rc)
        dse_err_set(&e, rc, NULL, NULL, "out of memory while printing");
out:
    if (rc)
        dse_err_print(stderr, &e);
    eval_result_free(&res);
    if (have_model)
        wl_model_free(&model);
    free(sys);
    return rc;
}
