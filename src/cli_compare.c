/* cli_compare.c -- `dse compare HW1 [HW2 ...] --workload W [--software S1,S2]`: one workload on
 * several hardware proposals and software stacks side by side (a row per system x stack), each on its
 * default (or --device) device, precision and stack, with ratios to the first row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "errbar.h"
#include "jsonu.h"
#include "eval.h"
#include "metric.h"

#define MAX_HW 16
#define MAX_SW 8
#define MAX_ROWS (MAX_HW * MAX_SW)

static struct cli_opt compare_opts_proto[] = {
    {"workload", 1, "model (models/ file or name)", NULL},
    {"precision", 1, "one precision for all (default: each device's own: fp16, bf16, int8 or fp32)", NULL},
    {"device", 1, "device name to use in every system that has it (default: first accelerator)", NULL},
    {"batch", 1, "batch size (default 1)", NULL},
    {"phase", 1, "prefill|decode|generate for decoder LMs (default generate)", NULL},
    {"prompt", 1, "prompt tokens; sequence length for encoders", NULL},
    {"generate", 1, "output tokens for --phase generate (default 128)", NULL},
    {"fidelity", 1, "analytical (default) or cycle", NULL},
    CLI_OPT_SET,
    CLI_OPT_COST,
    {"software", 1, "software stacks, comma-separated (a row per system and stack; default: each device's own)",
     NULL},
    {"json", 0, "print one JSON object", NULL},
    {"csv", 0, "print one CSV row per system (hw, device, software, precision, feasible, error bounds, metrics)", NULL},
    {"help", 0, "this help", NULL},
    {NULL, 0, NULL, NULL},
};

static const char *const columns[CLI_CMP_COLS + 1] = {"latency_ms",      "tokens_per_s",     "throughput_per_s",
                                                       "energy_mJ",       "avg_power_W",      "tokens_per_J",
                                                       "inferences_per_J", "peak_memory_MB",  "price_USD",
                                                       "cost_per_Mtoken_USD", "cost_per_Minference_USD",
                                                       "tokens_per_USD",  "inferences_per_USD", NULL};

int cli_compare_columns(enum wl_phase ph, const struct metric **cols)
{
    int n = 0;
    for (int k = 0; columns[k]; k++)
        if (metric_applies(metric_find(columns[k]), ph))
            cols[n++] = metric_find(columns[k]);
    return n;
}

void cli_compare_cell(const struct metric *m, const struct eval_totals *t, const struct eval_totals *first, char *buf,
                      size_t n)
{
    double v = metric_value(m, t), v0 = first ? metric_value(m, first) : NAN;
    if (isnan(v) || (v == 0 && !strcmp(m->name, "price_USD"))) /* a price of 0: none known */
        snprintf(buf, n, "n/a");
    else if (isfinite(v0) && v0 != 0)
        snprintf(buf, n, "%.4g (x%.2f)", v, v / v0);
    else
        snprintf(buf, n, "%.4g", v);
}

void cli_compare_errbar(const struct eval_result *res, int calibrated, char *buf, size_t n)
{
    if (res->feasible && isfinite(res->t.err_low_pct))
        snprintf(buf, n, "%+.0f..%+.0f%s", res->t.err_low_pct, res->t.err_high_pct, calibrated ? "" : "*");
    else
        snprintf(buf, n, "n/a");
}

int cmd_compare(int argc, char **argv)
{
    struct cli_opt opts[sizeof compare_opts_proto / sizeof compare_opts_proto[0]];
    memcpy(opts, compare_opts_proto, sizeof opts);
    struct dse_err e;
    const char *hw[MAX_HW];
    int nhw, rc, have_model = 0;
    struct wl_model model;
    struct hw_system *sys = NULL;
    struct sw_stack *stacks = NULL;
    int nsw = 0, nrow = 0;
    static struct eval_result res[MAX_ROWS];
    static char devname[MAX_ROWS][HW_NAME_LEN], prec[MAX_ROWS][64], sysname[MAX_ROWS][HW_NAME_LEN],
        swname[MAX_ROWS][SW_LABEL_LEN];
    static int calibrated[MAX_ROWS];
    struct eval_req base;
    struct cost_cfg cost;
    struct eb_table ebt;
    char ebpath[1024];
    memset(res, 0, sizeof res);
    memset(&base, 0, sizeof base);
    dse_err_clear(&e);
    if ((rc = cli_parse(argc, argv, 2, opts, hw, MAX_HW, &nhw, "compare", &e)))
        goto out;
    if (!cli_get(opts, "help") && (rc = cli_cost(opts, NULL, &cost, &e)))
        goto out;
    base.cost = &cost;
    if (cli_get(opts, "help")) {
        printf("usage: dse compare HW1 HW2 [...] --workload W [options]\n\n"
               "Evaluates one workload on several hardware descriptions (and, with --software, software stacks)\n"
               "and prints them side by side with the ratio of each to the first row.\n\noptions:\n");
        cli_print_options(compare_opts_proto);
        return 0;
    }
    const char *wl = cli_get(opts, "workload");
    stacks = calloc(MAX_SW, sizeof *stacks);
    if (!stacks) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    if (cli_get(opts, "software")) { /* loaded once, each used on every system */
        char list[1024], *save = NULL;
        if (strlen(cli_get(opts, "software")) >= sizeof list)
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--software", "%zu characters: at most %zu",
                             strlen(cli_get(opts, "software")), sizeof list - 1);
        if (rc || (rc = cli_list_check("--software", cli_get(opts, "software"), &e)))
            goto out;
        dse_strlcpy(list, cli_get(opts, "software"), sizeof list);
        for (char *t = strtok_r(list, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
            if (nsw == MAX_SW)
                rc = dse_err_set(&e, DSE_EINPUT, NULL, "--software", "at most %d stacks", MAX_SW);
            else
                rc = pass_load_named(t, NULL, &stacks[nsw++], &e);
            for (int k = 0; k < nsw - 1 && !rc; k++)
                if (!strcmp(stacks[k].name, stacks[nsw - 1].name) && !strcmp(stacks[k].version, stacks[nsw - 1].version))
                    rc = dse_err_set(&e, DSE_EINPUT, NULL, "--software", "stack '%s' given twice", t);
        }
        if (rc)
            goto out;
    }
    if (nhw * (nsw ? nsw : 1) < 2 || !wl) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL,
                         "compare: expected --workload and two or more hardware descriptions, or one with two or more "
                         "--software stacks (see dse help compare)");
        goto out;
    }
    static const char *const wl_ext[] = {".json", ".csv", NULL}, *const hw_ext[] = {".json", ".cfg", NULL};
    char path[1024];
    if ((rc = cli_resolve("--workload", "models", wl, wl_ext, path, sizeof path, &e)) ||
        (rc = wl_load_file(path, &model, &e)))
        goto out;
    have_model = 1;
    base.model = &model;
    if ((rc = cli_workload_opts(opts, &model, &base, &e)) ||
        (rc = wl_check_context(&model, base.phase, base.prompt, base.gen, NULL, "--prompt", &e)))
        goto out;
    if (cli_get(opts, "fidelity") && (rc = cli_fidelity(cli_get(opts, "fidelity"), &base.x.fidelity, &e)))
        goto out;
    /* the error bars dse eval shows, found the same way (the shipped table) */
    if (eb_resolve(NULL, ebpath, sizeof ebpath)) {
        if ((rc = eb_load_file(ebpath, &ebt, &e)))
            goto out;
        base.errbars = &ebt;
    }
    sys = malloc(sizeof *sys * (size_t)nhw);
    if (!sys) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < nhw; i++) {
        char hwpath[1024];
        if ((rc = cli_resolve("compare", "hwdesc", hw[i], hw_ext, hwpath, sizeof hwpath, &e)) ||
            (rc = cli_load_hw_opts(opts, hwpath, &sys[i], &e)))
            goto out;
        for (int k = 0; k < (nsw ? nsw : 1); k++) {
        struct eval_req r = base;
        r.sys = &sys[i];
        for (int t = 0; t < OP_COUNT; t++)
            r.type_dev[t] = -1;
        const char *dn = cli_get(opts, "device");
        r.dev = dn ? hw_find_device(&sys[i], dn) : eval_default_device(&sys[i]);
        if (r.dev < 0) {
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--device", "%s has no device '%s'", sys[i].name, dn);
            goto out;
        }
        if (cli_get(opts, "precision")) {
            if ((rc = prec_parse(cli_get(opts, "precision"), &r.x.prec, &e)))
                goto out;
        } else {
            int p = eval_default_prec(&sys[i].dev[r.dev]);
            r.x.prec.w = r.x.prec.a = r.x.prec.kv = (enum prec)(p < 0 ? P_FP32 : p);
        }
        struct sw_stack own;
        if (!nsw && (rc = pass_load_named(sys[i].dev[r.dev].software[0] ? sys[i].dev[r.dev].software : "none", hwpath,
                                          &own, &e)))
            goto out;
        r.sw = nsw ? &stacks[k] : &own;
        int row = nrow++;
        prec_format(&r.x.prec, prec[row], sizeof prec[row]);
        dse_strlcpy(devname[row], sys[i].dev[r.dev].name, sizeof devname[row]);
        dse_strlcpy(sysname[row], sys[i].name, sizeof sysname[row]);
        pass_label(r.sw, swname[row], sizeof swname[row]);
        calibrated[row] = hw_calibrated(&sys[i].dev[r.dev]);
        if ((rc = eval_run(&r, &res[row], &e)))
            goto out;
        }
    }
    enum wl_phase ph = wl_model_is_lm(&model) ? base.phase : PH_NONE;
    if (cli_get(opts, "json") && cli_get(opts, "csv")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "compare: --json and --csv: choose one");
        goto out;
    }
    if (cli_get(opts, "json")) {
        cJSON *o = cJSON_CreateObject(), *a;
        if (cli_get(opts, "set")) /* --set: the fields every system's hwdesc had changed */
            cJSON_AddStringToObject(o, "what_if", cli_get(opts, "set"));
        a = cJSON_AddArrayToObject(o, "systems");
        cJSON_AddStringToObject(o, "workload", model.name);
        cJSON_AddStringToObject(o, "model_tier", fidelity_names[base.x.fidelity]);
        for (int i = 0; i < nrow; i++) {
            cJSON *s = cJSON_CreateObject(), *t;
            cJSON_AddStringToObject(s, "hw", sysname[i]);
            cJSON_AddStringToObject(s, "device", devname[i]);
            cJSON_AddStringToObject(s, "software", swname[i]);
            cJSON_AddStringToObject(s, "precision", prec[i]);
            cJSON_AddBoolToObject(s, "feasible", res[i].feasible);
            cJSON_AddBoolToObject(s, "calibrated", calibrated[i]);
            if (!res[i].feasible)
                cJSON_AddStringToObject(s, "reason", res[i].reason);
            else if (isfinite(res[i].t.err_low_pct)) { /* of the time: predicted / measured - 1 */
                cJSON *x = cJSON_AddObjectToObject(s, "expected_error_pct");
                cJSON_AddNumberToObject(x, "low", res[i].t.err_low_pct);
                cJSON_AddNumberToObject(x, "high", res[i].t.err_high_pct);
            } else {
                cJSON_AddNullToObject(s, "expected_error_pct");
            }
            t = cJSON_AddObjectToObject(s, "totals");
            for (int k = 0; res[i].feasible && columns[k]; k++) {
                const struct metric *m = metric_find(columns[k]);
                if (metric_applies(m, ph))
                    cJSON_AddNumberToObject(t, m->name, metric_value(m, &res[i].t));
            }
            cJSON_AddItemToArray(a, s);
        }
        char *txt = ju_print(o, 1);
        if (txt)
            puts(txt);
        free(txt);
        cJSON_Delete(o);
        goto out;
    }
    if (cli_get(opts, "csv")) { /* the metrics as numbers, no ratios; empty cells where none applies */
        printf("hw,device,software,precision,feasible,reason,expected_error_low_pct,expected_error_high_pct");
        for (int k = 0; columns[k]; k++)
            if (metric_applies(metric_find(columns[k]), ph))
                printf(",%s", columns[k]);
        printf("\n");
        for (int i = 0; i < nrow; i++) {
            char reason[sizeof res[i].reason + 2];
            size_t at = 0;
            for (const char *c = res[i].feasible ? "" : res[i].reason; *c && at + 2 < sizeof reason; c++)
                reason[at++] = *c == ',' || *c == '"' || *c == '\n' ? ';' : *c; /* one CSV field */
            reason[at] = '\0';
            printf("%s,%s,%s,%s,%d,%s,", sysname[i], devname[i], swname[i], prec[i], res[i].feasible, reason);
            if (res[i].feasible && isfinite(res[i].t.err_low_pct))
                printf("%.4g,%.4g", res[i].t.err_low_pct, res[i].t.err_high_pct);
            else
                printf(",");
            for (int k = 0; columns[k]; k++) {
                const struct metric *m = metric_find(columns[k]);
                if (!metric_applies(m, ph))
                    continue;
                double v = res[i].feasible ? metric_value(m, &res[i].t) : NAN;
                if (isfinite(v))
                    printf(",%.10g", v);
                else
                    printf(",");
            }
            printf("\n");
        }
        goto out;
    }
    printf("dse compare: %s, batch %lld%s (%s tier; ratios are to the first row; error_%%: the expected time error, "
           "10th-90th percentile of held-out published cases of the device's class and workload kind, * when the "
           "device is uncalibrated%s)\n\n",
           model.name, (long long)base.batch, ph == PH_GENERATE ? ", generate" : "", fidelity_names[base.x.fidelity],
           base.errbars ? "" : "; no validate/published/error-bars.json found");
    cli_print_whatif(opts);
    char cd[200];
    cost_describe(&cost, 1, cd, sizeof cd);
    printf("cost: %s; tokens_per_J and inferences_per_J: performance per watt, tokens_per_USD and inferences_per_USD: "
           "per dollar\n\n", cd);
    const struct metric *cols[CLI_CMP_COLS];
    int ncol = cli_compare_columns(ph, cols);
    printf("%-30s %-8s %-14s %-22s %-12s", "hw", "device", "software", "precision", "error_%");
    for (int k = 0; k < ncol; k++)
        printf(" %22s", cols[k]->name);
    printf("\n");
    for (int i = 0; i < nrow; i++) {
        char eb[32], cell[40];
        cli_compare_errbar(&res[i], calibrated[i], eb, sizeof eb);
        printf("%-30.30s %-8.8s %-14.14s %-22.22s %-12s", sysname[i], devname[i], swname[i], prec[i], eb);
        if (!res[i].feasible) {
            printf(" infeasible: %s\n", res[i].reason);
            continue;
        }
        for (int k = 0; k < ncol; k++) {
            cli_compare_cell(cols[k], &res[i].t, i > 0 && res[0].feasible ? &res[0].t : NULL, cell, sizeof cell);
            printf(" %22s", cell);
        }
        printf("\n");
    }
out:
    if (rc)
        dse_err_print(stderr, &e);
    for (int i = 0; i < nrow; i++)
        eval_result_free(&res[i]);
    free(stacks);
    if (have_model)
        wl_model_free(&model);
    free(sys);
    return rc;
}
