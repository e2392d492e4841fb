/* cli_serve.c -- `dse serve`: an LLM served under load (serve.h): a request trace through a
 * scheduler on a design point, per-request latency percentiles, throughput, goodput under SLOs, and
 * the capacity search. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "thermal.h"
#include "outfile.h"
#include "progress.h"
#include "eval.h"
#include "jsonu.h"
#include "plot.h"
#include "serve.h"

static void serve_tick(void *ctx, int64_t done, int64_t total)
{
    (void)total;
    progress_step(ctx, done);
}

static struct cli_opt serve_opts_proto[] = {
    {"hw", 1, "hardware description (hwdesc file or name from dse list hw)", NULL},
    CLI_OPT_SET,
    CLI_OPT_COST,
    CLI_OPT_THERMAL_COND,
    {"workload", 1, "decoder LM (models/ file or name)", NULL},
    {"dim", 1, "ONNX: bind dynamic input dimensions NAME=N[,NAME=N] (batch- and sequence-named ones follow --batch and --prompt)", NULL},
    {"unknown-ops", 1, "ONNX: error (default) or memory: operators dse does not model costed as memory-bound, with a warning", NULL},
    {"device", 1, "device of the system that runs the model (default: first accelerator)", NULL},
    {"precision", 1, "fp16|bf16|fp8|int8|w4a16|... (default: the device's fastest float)", NULL},
    {"software", 1, "software stack (default: the device's own)", NULL},
    {"tp", 1, "tensor-parallel devices per replica (a topology's hwdesc)", NULL},
    {"dp", 1, "replicas (default: the devices tp leaves); arrivals are dealt to them round-robin", NULL},
    {"trace", 1, "replay a trace CSV (arrival_s,prompt_tokens,output_tokens; models/traces/); with --rate its "
                 "arrivals are rescaled to that mean rate", NULL},
    {"lengths", 1, "draw each request's (prompt, output) pair from a trace CSV's rows", NULL},
    {"prompt-dist", 1, "prompt tokens: fixed:N, uniform:A-B or normal:MEAN,SD (default fixed:512)", NULL},
    {"output-dist", 1, "output tokens, as --prompt-dist (default fixed:128)", NULL},
    {"arrival", 1, "poisson (default), gamma (bursty: --burstiness) or offline (every request at t = 0)", NULL},
    {"burstiness", 1, "gamma arrivals: the inter-arrival time's coefficient of variation (1 is Poisson; default 2)",
     NULL},
    {"rate", 1, "requests per second (poisson, gamma; a trace: rescaled to it)", NULL},
    {"requests", 1, "requests to simulate (default 1000; a trace: its rows, or its first N)", NULL},
    {"too-long", 1, "requests longer than the model's context: error (default), skip (rejected, as vLLM does: "
                    "counted, not served) or truncate (the prompt cut to what the context leaves after the output)",
     NULL},
    {"seed", 1, "random seed of arrivals and lengths (default 1)", NULL},
    {"scheduler", 1, "continuous (default: vLLM v0, prefills first), inflight (TensorRT-LLM, Orca: prefills beside "
                     "decodes), chunked (chunked prefill) or static (whole batches)", NULL},
    {"max-batch", 1, "running sequences at most (default 256)", NULL},
    {"max-batched-tokens", 1, "tokens an iteration runs at most (default: continuous 8192 or the longest prompt, "
                              "chunked 2048, static unlimited)", NULL},
    {"block-size", 1, "tokens per KV cache block (default 16)", NULL},
    {"admission", 1, "on-demand (KV blocks as a sequence grows; vLLM) or reserve (prompt + output reserved at "
                     "admission, never preempted; TensorRT-LLM's GUARANTEED_NO_EVICT); default: reserve for inflight, "
                     "on-demand otherwise", NULL},
    {"preemption", 1, "recompute (default: a preempted sequence is prefilled again) or swap (its cache copied to the "
                      "host over the device's CPU link and back)", NULL},
    {"prefix-tokens", 1, "prefix caching: each request's first N prompt tokens are shared (a system prompt), cached "
                         "in whole KV blocks after the first request computes them", NULL},
    {"prefix-share", 1, "with --prefix-tokens: the share of requests that carry the prefix (default 1)", NULL},
    {"prefill-replicas", 1, "disaggregation: this many of the --dp replicas prefill, the others decode, the KV cache "
                            "sent over the topology (default 0: every replica does both)", NULL},
    {"mem-util", 1, "share of the device memory the runtime allocates, the device's reserve counted in it (default: the "
                    "software stack's memory.utilization, vllm 0.9; else 1)", NULL},
    {"slo", 1, "per-request limits: ttft_ms=X,tpot_ms=Y,e2e_ms=Z (any of them); goodput counts requests meeting all",
     NULL},
    {"capacity", 0, "search the highest --rate at which --attainment of the requests meet every SLO", NULL},
    {"attainment", 1, "with --capacity: the share of requests that must meet the SLOs (default 0.9)", NULL},
    {"tolerance", 1, "with --capacity: the search stops when its bracket is within this share of the rate "
                     "(default 0.02)", NULL},
    {"plot", 1, "write PREFIX-cdf.png (TTFT, TPOT, end-to-end CDFs), PREFIX-timeline.png (running sequences, KV use) "
                "and PREFIX-load.png (latency against throughput over 10 rates; .svg with PREFIX.svg)", NULL},
    {"json", 0, "print one JSON object", NULL},
    {"help", 0, "this help", NULL},
    {NULL, 0, NULL, NULL},
};

static void usage(void)
{
    printf("usage: dse serve --hw HW --workload LM [options]\n\n"
           "Serves an LLM under load: requests arrive (Poisson, bursty, offline or a trace), a scheduler batches\n"
           "them iteration by iteration over a paged KV cache, and each iteration costs what dse's evaluation of\n"
           "that mixed batch gives (docs/serving.md). Prints per-request TTFT, TPOT and end-to-end percentiles,\n"
           "throughput, goodput under --slo, KV use and preemptions; --capacity finds the highest rate meeting\n"
           "the SLOs.\n\noptions:\n");
    cli_print_options(serve_opts_proto);
}

static int get_num(const struct cli_opt *opts, const char *name, double lo, double hi, double def, double *out,
                   struct dse_err *e)
{
    const char *s = cli_get(opts, name);
    *out = def;
    if (!s)
        return DSE_OK;
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || !(v > lo) || v > hi)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "--%s: expected a number in (%g, %g], got '%s'", name, lo, hi, s);
    *out = v;
    return DSE_OK;
}

/* --slo ttft_ms=X,tpot_ms=Y,e2e_ms=Z: each metric at most once, no empty entry */
static int parse_slo(const char *s, struct serve_cfg *cfg, struct dse_err *e)
{
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return dse_err_set(e, DSE_EINPUT, NULL, "--slo", "longer than %d characters", (int)sizeof buf - 1);
    strcpy(buf, s);
    int seen[3] = {0, 0, 0}, field = 0;
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = 0;
        field++;
        if (!*tok)
            return dse_err_set(e, DSE_EINPUT, NULL, "--slo", "entry %d of '%s' is empty: expected METRIC=LIMIT[,...] "
                               "with METRIC ttft_ms, tpot_ms or e2e_ms", field, s);
        char *eq = strchr(tok, '=');
        if (!eq)
            return dse_err_set(e, DSE_EINPUT, NULL, "--slo", "expected METRIC=LIMIT, got '%s'", tok);
        *eq = 0;
        char *end;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || !isfinite(v) || !(v > 0))
            return dse_err_set(e, DSE_EINPUT, NULL, "--slo", "%s: expected a positive number of milliseconds, got '%s'",
                               tok, eq + 1);
        int which = !strcmp(tok, "ttft_ms") ? 0 : !strcmp(tok, "tpot_ms") ? 1 : !strcmp(tok, "e2e_ms") ? 2 : -1;
        if (which < 0)
            return dse_err_set(e, DSE_EINPUT, NULL, "--slo", "unknown metric '%s': SLOs are on ttft_ms, tpot_ms and "
                               "e2e_ms", tok);
        if (seen[which]++)
            return dse_err_set(e, DSE_EINPUT, NULL, "--slo", "%s given twice in '%s': give each metric once", tok, s);
        double *dst[3] = {&cfg->slo_ttft_s, &cfg->slo_tpot_s, &cfg->slo_e2e_s};
        *dst[which] = v / 1e3;
    }
    return DSE_OK;
}

static double ms(double s) { return s * 1e3; }

static void pct_json(cJSON *o, const char *key, const struct serve_pct *p)
{
    cJSON *x = cJSON_AddObjectToObject(o, key);
    if (!x)
        return;
    const double v[5] = {p->mean, p->p50, p->p90, p->p99, p->max};
    static const char *const k[5] = {"mean", "p50", "p90", "p99", "max"};
    for (int i = 0; i < 5; i++)
        if (isfinite(v[i]))
            cJSON_AddNumberToObject(x, k[i], ms(v[i]));
        else
            cJSON_AddNullToObject(x, k[i]);
}

static void num_or_null(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

/* What was done with the requests longer than the context (--too-long). */
struct too_long {
    enum serve_too_long mode;
    int64_t n, offered, context; /* too long, of offered requests, the context's tokens */
};

/* The board's heating over a run (hwdesc thermal; thermal.h): the run's mean power, the time it
 * takes to reach the throttle point at it, and whether the run was served at the sustained point. */
struct serve_thermal {
    int present, applied;
    double power_W, run_s, time_to_throttle_s, limit_W, burst_tokens_per_s;
};

static int print_json(const struct eval_req *r, const struct serve_cfg *cfg, const struct serve_cost *c,
                      const struct serve_result *res, const struct serve_capacity_result *cap, const struct too_long *tl,
                      const struct serve_thermal *th,
                      double sim_s, const char *what_if)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return DSE_ERUNTIME;
    cJSON_AddStringToObject(o, "hw", r->sys->name);
    if (what_if) /* --set: the hwdesc's fields this run changed */
        cJSON_AddStringToObject(o, "what_if", what_if);
    cJSON_AddStringToObject(o, "workload", r->model->name);
    cJSON_AddStringToObject(o, "software", r->sw ? r->sw->name : "none");
    cJSON_AddStringToObject(o, "software_version", r->sw ? r->sw->version : ""); /* "": none */
    cJSON_AddStringToObject(o, "scheduler", serve_sched_names[cfg->sched]);
    cJSON_AddNumberToObject(o, "max_batch", cfg->max_batch);
    cJSON_AddNumberToObject(o, "max_batched_tokens", (double)cfg->max_batched_tokens);
    cJSON_AddNumberToObject(o, "block_tokens", cfg->block_tokens);
    cJSON_AddNumberToObject(o, "replicas", c->replicas);
    cJSON_AddNumberToObject(o, "devices_per_replica", c->devices);
    cJSON_AddNumberToObject(o, "kv_capacity_tokens", c->kv_capacity_tokens);
    cJSON *mem = cJSON_AddObjectToObject(o, "memory"); /* per device: what the KV cache gets */
    if (mem) {
        cJSON_AddNumberToObject(mem, "capacity_GB", c->mem_bytes / 1e9);
        cJSON_AddNumberToObject(mem, "reserved_GB", c->reserved_bytes / 1e9);
        cJSON_AddNumberToObject(mem, "mem_util", c->mem_util);
        cJSON_AddNumberToObject(mem, "usable_GB", c->usable_bytes / 1e9);
        cJSON_AddNumberToObject(mem, "weights_GB", c->weight_bytes / 1e9);
        cJSON_AddNumberToObject(mem, "activations_GB", c->act_bytes / 1e9);
        cJSON_AddNumberToObject(mem, "kv_cache_GB", c->kv_capacity_tokens * c->kv_token_bytes / 1e9);
    }
    cJSON *m = cJSON_AddObjectToObject(o, "metrics");
    if (m) {
        cJSON_AddNumberToObject(m, "requests", (double)res->requests);
        cJSON_AddNumberToObject(m, "too_long_skipped", (double)(tl->mode == TOO_LONG_SKIP ? tl->n : 0));
        cJSON_AddNumberToObject(m, "too_long_truncated", (double)(tl->mode == TOO_LONG_TRUNCATE ? tl->n : 0));
        cJSON_AddNumberToObject(m, "output_tokens", (double)res->output_tokens);
        num_or_null(m, "makespan_s", res->makespan_s);
        num_or_null(m, "throughput_rps", res->throughput_rps);
        num_or_null(m, "output_tokens_per_s", res->output_tokens_per_s);
        num_or_null(m, "goodput_rps", res->goodput_rps);
        num_or_null(m, "slo_attainment", res->slo_attainment);
        pct_json(m, "ttft_ms", &res->ttft_s);
        pct_json(m, "tpot_ms", &res->tpot_s);
        pct_json(m, "e2e_ms", &res->e2e_s);
        num_or_null(m, "kv_use_mean", res->kv_use_mean);
        num_or_null(m, "kv_use_peak", res->kv_use_peak);
        num_or_null(m, "batch_mean", res->batch_mean);
        cJSON_AddNumberToObject(m, "preemptions", (double)res->preemptions);
        if (cfg->prefix_tokens > 0)
            cJSON_AddNumberToObject(m, "prefix_evictions", (double)res->prefix_evictions);
        cJSON_AddNumberToObject(m, "iterations", (double)res->iterations);
        num_or_null(m, "energy_per_token_mJ", res->energy_per_token_J * 1e3);
        num_or_null(m, "cost_per_Mtoken_USD", res->cost_per_Mtoken_USD);
    }
    if (th->present) {
        cJSON *k = cJSON_AddObjectToObject(o, "thermal");
        if (k) {
            char cond[256];
            thermal_describe(&r->sys->thermal, cond, sizeof cond);
            cJSON_AddStringToObject(k, "conditions", cond);
            cJSON_AddNumberToObject(k, "mean_power_W", th->power_W);
            num_or_null(k, "time_to_throttle_s", th->time_to_throttle_s); /* null: never */
            cJSON_AddNumberToObject(k, "sustained_limit_W", th->limit_W);
            cJSON_AddBoolToObject(k, "sustained_point", th->applied);
            cJSON_AddNumberToObject(k, "burst_output_tokens_per_s", th->burst_tokens_per_s);
        }
    }
    if (cap) {
        cJSON *k = cJSON_AddObjectToObject(o, "capacity");
        if (k) {
            cJSON_AddBoolToObject(k, "feasible", cap->feasible);
            if (cap->feasible)
                cJSON_AddNumberToObject(k, "rate_rps", cap->rate_rps);
            else
                cJSON_AddNullToObject(k, "rate_rps");
            cJSON_AddNumberToObject(k, "lower_bound_rps", cap->lower_bound_rps);
            cJSON_AddNumberToObject(k, "upper_bound_rps", cap->top_rps);
            cJSON_AddNumberToObject(k, "simulations", cap->evals);
            if (!cap->feasible)
                cJSON_AddStringToObject(k, "reason", "no rate from the lower bound to the upper bound meets the SLOs for "
                                                     "the attainment asked; the metrics are the run at the lower bound");
        }
    }
    cJSON_AddNumberToObject(o, "simulation_s", sim_s);
    char *txt = ju_print(o, 0);
    cJSON_Delete(o);
    if (!txt)
        return DSE_ERUNTIME;
    printf("%s\n", txt);
    free(txt);
    return DSE_OK;
}

static void print_human(const struct eval_req *r, const struct serve_cfg *cfg, const struct serve_cost *c,
                        const struct serve_result *res, const struct serve_capacity_result *cap, double attain,
                        const struct too_long *tl, const struct serve_thermal *th, double sim_s,
                        const struct cli_opt *opts)
{
    const struct hw_device *d = &r->sys->dev[r->dev];
    printf("dse serve: %s on %s/%s, software %s, %s scheduler (max batch %d, %lld tokens an iteration, KV blocks of "
           "%d)\n", r->model->name, r->sys->name, d->name, pass_label(r->sw, (char[SW_LABEL_LEN]){0}, SW_LABEL_LEN), serve_sched_names[cfg->sched],
           cfg->max_batch, (long long)cfg->max_batched_tokens, cfg->block_tokens);
    cli_print_whatif(opts);
    printf("replicas: %d of %d device%s each; KV cache %.0f tokens a replica (%.3g GB of the %.3g GB usable of %.3g GB "
           "after weights %.3g GB and activations %.3g GB; a %.3g share allocated, less %.3g GB reserved)\n", c->replicas,
           c->devices, c->devices == 1 ? "" : "s", c->kv_capacity_tokens, c->kv_capacity_tokens * c->kv_token_bytes / 1e9,
           c->usable_bytes / 1e9, c->mem_bytes / 1e9, c->weight_bytes / 1e9, c->act_bytes / 1e9, c->mem_util,
           c->reserved_bytes / 1e9);
    printf("model: iterations costed by dse's analytical model (docs/serving.md)%s; the simulation's held-out MAPE "
           "against published serving runs is 16 %% on throughput, 23 %% on TTFT/TPOT (dse validate --published "
           "--serving)\n",
           hw_calibrated(d) ? ", its device calibrated" : ", its device uncalibrated");
    if (r->cost) {
        char cd[200];
        cost_describe(r->cost, 0, cd, sizeof cd); /* without utilisation: the run's is simulated */
        printf("cost: %s (--usd-per-kwh, --pue, --amortize-years, --hosting-usd-per-hour); the run's utilisation is "
               "simulated\n", cd);
    }
    if (cap && cap->feasible)
        printf("capacity: %.4g requests/s with %.0f %% of requests meeting the SLOs (%d simulations)\n", cap->rate_rps,
               100 * res->slo_attainment, cap->evals);
    else if (cap)
        printf("capacity: none: no rate from %.3g requests/s (the search's lower bound, %g x its top) to %.4g "
               "requests/s (its top, 1.25 x the rate that drains every request at once) meets these SLOs for %.0f %% of "
               "the requests (%d simulations); below, the run at the lower bound (%.1f %% meet them)\n",
               cap->lower_bound_rps, SERVE_CAPACITY_FLOOR, cap->top_rps, 100 * attain, cap->evals,
               100 * res->slo_attainment);
    if (th->present) {
        char cond[256], when[64];
        thermal_describe(&r->sys->thermal, cond, sizeof cond);
        if (isnan(th->time_to_throttle_s))
            snprintf(when, sizeof when, "a time unknown (no published heat capacity)");
        else
            snprintf(when, sizeof when, "%.3g s", th->time_to_throttle_s);
        if (th->applied)
            printf("thermal: at its mean %.3g W the board reaches its throttle point after %s of the %.4g s run: "
                   "served at the operating point its cooling sustains, every iteration within %.3g W (%.4g output "
                   "tokens/s unthrottled; %s; docs/models.md, Thermal)\n", th->power_W, when, th->run_s, th->limit_W,
                   th->burst_tokens_per_s, cond);
        else if (isinf(th->time_to_throttle_s))
            printf("thermal: at its mean %.3g W the board settles below its throttle point (%s)\n", th->power_W, cond);
        else
            printf("thermal: at its mean %.3g W the board would throttle after %.3g s, past the %.4g s run (%s)\n",
                   th->power_W, th->time_to_throttle_s, th->run_s, cond);
    }
    if (tl->n)
        printf("too long: %lld of %lld requests exceed the context of %lld tokens: %s (--too-long %s)\n", (long long)tl->n,
               (long long)tl->offered, (long long)tl->context,
               tl->mode == TOO_LONG_SKIP ? "rejected, not served" : "their prompts truncated to fit",
               serve_too_long_names[tl->mode]);
    printf("\n%lld requests in %.4g s simulated (%.3g s to simulate, %lld iterations)\n", (long long)res->requests,
           res->makespan_s, sim_s, (long long)res->iterations);
    printf("%-10s %10s %10s %10s %10s %10s\n", "ms", "mean", "p50", "p90", "p99", "max");
    const struct serve_pct *p[3] = {&res->ttft_s, &res->tpot_s, &res->e2e_s};
    static const char *const lab[3] = {"TTFT", "TPOT", "end-to-end"};
    for (int i = 0; i < 3; i++)
        printf("%-10s %10.4g %10.4g %10.4g %10.4g %10.4g\n", lab[i], ms(p[i]->mean), ms(p[i]->p50), ms(p[i]->p90),
               ms(p[i]->p99), ms(p[i]->max));
    printf("\n  throughput_rps          %10.4g  requests completed per second\n", res->throughput_rps);
    printf("  output_tokens_per_s     %10.4g  generated tokens per second\n", res->output_tokens_per_s);
    if (cfg->slo_ttft_s > 0 || cfg->slo_tpot_s > 0 || cfg->slo_e2e_s > 0)
        printf("  goodput_rps             %10.4g  requests per second meeting every SLO (%.1f %% of them)\n",
               res->goodput_rps, 100 * res->slo_attainment);
    printf("  batch_mean              %10.4g  sequences per decode iteration\n", res->batch_mean);
    printf("  kv_use                  %9.1f%%  of the KV blocks, time-weighted mean (peak %.1f %%)\n",
           100 * res->kv_use_mean, 100 * res->kv_use_peak);
    printf("  preemptions             %10lld  sequences preempted for KV blocks (%s)\n", (long long)res->preemptions,
           cfg->preempt == PREEMPT_SWAP ? "swapped to the host" : "recomputed");
    if (cfg->prefix_tokens > 0)
        printf("  prefix_evictions        %10lld  times the cached prefix's blocks were evicted for others\n",
               (long long)res->prefix_evictions);
    if (cfg->prefill_replicas > 0)
        printf("  disaggregated: %d replica%s prefill, %d decode; the KV cache sent at %.3g GB/s per device\n",
               cfg->prefill_replicas, cfg->prefill_replicas == 1 ? "" : "s", c->replicas - cfg->prefill_replicas,
               c->xfer_Bps / 1e9);
    printf("  energy_per_token_mJ     %10.4g  system energy (idle included) per generated token\n",
           res->energy_per_token_J * 1e3);
    if (isfinite(res->cost_per_Mtoken_USD))
        printf("  cost_per_Mtoken_USD     %10.4g  rent, price over its amortisation and hosting over the run + "
               "electricity x PUE (the cost line above), per million generated tokens\n", res->cost_per_Mtoken_USD);
}

/* The three files of --plot PREFIX: PREFIX-cdf, -timeline and -load, .png unless PREFIX ends in .svg. */
static int plot_names(const char *prefix, char names[3][OUT_PATH_MAX], struct dse_err *e)
{
    static const char *const part[3] = {"cdf", "timeline", "load"};
    const char *ext = strlen(prefix) > 4 && !strcmp(prefix + strlen(prefix) - 4, ".svg") ? ".svg" : ".png";
    size_t pl = strlen(prefix) - (strlen(prefix) > 4 && (!strcmp(prefix + strlen(prefix) - 4, ".svg") ||
                                                         !strcmp(prefix + strlen(prefix) - 4, ".png")) ? 4 : 0);
    for (int k = 0; k < 3; k++)
        if (snprintf(names[k], OUT_PATH_MAX, "%.*s-%s%s", (int)pl, prefix, part[k], ext) >= OUT_PATH_MAX)
            return dse_err_set(e, DSE_EINPUT, NULL, "--plot", "a prefix of %zu bytes: too long for its files", pl);
    return DSE_OK;
}

/* The run's plots (--plot PREFIX): CDFs of the sorted per-request figures, the timeline of replica 0,
 * and the load curve: the same requests at 10 rates from 0.1 to 1 x the drain rate. */
static int serve_plots(const char *prefix, const struct serve_cost *c, const struct serve_cfg *cfg,
                       const struct serve_req *req, int64_t n, const struct serve_result *res, const char *title,
                       struct dse_err *e)
{
    char names[3][OUT_PATH_MAX];
    const char *out;
    int rc = plot_names(prefix, names, e);
    if (rc)
        return rc;
    double *buf = malloc(sizeof *buf * (size_t)(3 * n + 3 * res->n_timeline + 64));
    struct serve_req *v = malloc(sizeof *v * (size_t)n);
    if (!buf || !v) {
        free(buf);
        free(v);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    /* CDFs: the sorted figures against their rank */
    int64_t nt = res->completed, np = 0;
    for (int64_t i = 0; i < n; i++)
        np += req[i].output > 1;
    double *ry = buf, *ms3 = buf + n;
    for (int64_t i = 0; i < nt; i++)
        ry[i] = (double)(i + 1) / (double)nt;
    double *t1 = ms3, *t2 = ms3 + n;
    for (int64_t i = 0; i < nt; i++) {
        t1[i] = 1e3 * res->ttft_all[i];
        t2[i] = 1e3 * res->e2e_all[i];
    }
    double *ryp = malloc(sizeof *ryp * (size_t)(np ? np : 1)), *t3 = malloc(sizeof *t3 * (size_t)(np ? np : 1));
    if (!ryp || !t3) {
        free(ryp);
        free(t3);
        free(buf);
        free(v);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    for (int64_t i = 0; i < np; i++) {
        ryp[i] = (double)(i + 1) / (double)np;
        t3[i] = 1e3 * res->tpot_all[i];
    }
    struct plot_series cdf[3] = {{"TTFT", t1, ry, (int)nt, 0, 0}, {"TPOT", t3, ryp, (int)np, 0, 0},
                                 {"end-to-end", t2, ry, (int)nt, 0, 0}};
    out = names[0];
    rc = plot_lines(cdf, 3, title, "latency (ms)", "share of requests", NULL, PLOT_LOGX, out, e);
    if (!rc)
        printf("wrote %s\n", out);
    /* the timeline of replica 0 */
    double *tx = buf + 3 * n, *tr = tx + res->n_timeline, *tk = tr + res->n_timeline;
    for (int i = 0; i < res->n_timeline; i++) {
        tx[i] = res->timeline[i].t_s;
        tr[i] = res->timeline[i].running;
        tk[i] = 100 * res->timeline[i].kv_use;
    }
    struct plot_series tl[2] = {{"running sequences", tx, tr, res->n_timeline, 0, 0},
                                {"KV cache in use (%)", tx, tk, res->n_timeline, 1, 0}};
    out = names[1];
    if (!rc && !(rc = plot_lines(tl, 2, title, "time (s)", "running sequences", "KV cache in use (%)", 0, out, e)))
        printf("wrote %s\n", out);
    /* the load curve: the same requests at 10 rates */
    struct serve_cfg q = *cfg;
    q.timeline = 0;
    struct serve_result r;
    double span = req[n - 1].arrival_s - req[0].arrival_s, r0 = n > 1 && span > 0 ? (double)(n - 1) / span : 0;
    for (int64_t i = 0; i < n; i++)
        v[i] = (struct serve_req){0, req[i].prompt, req[i].output};
    if (!rc && !(rc = serve_run(c, &q, v, n, 0, &r, e))) {
        double drain = r.throughput_rps, *lx = buf + 3 * n + 3 * res->n_timeline, pts[4][10];
        serve_result_free(&r);
        for (int k = 0; k < 10 && !rc; k++) {
            double rate = drain * (k + 1) / 10;
            for (int64_t i = 0; i < n; i++)
                v[i].arrival_s = r0 > 0 ? (req[i].arrival_s - req[0].arrival_s) * r0 / rate : (double)i / rate;
            if ((rc = serve_run(c, &q, v, n, 0, &r, e)))
                break;
            pts[0][k] = r.throughput_rps;
            pts[1][k] = 1e3 * r.ttft_s.p50;
            pts[2][k] = 1e3 * r.ttft_s.p99;
            pts[3][k] = 1e3 * r.tpot_s.p50;
            serve_result_free(&r);
        }
        for (int k = 0; k < 10; k++)
            lx[k] = pts[0][k];
        struct plot_series lc[3] = {{"TTFT p50", lx, pts[1], 10, 0, 1}, {"TTFT p99", lx, pts[2], 10, 0, 1},
                                    {"TPOT p50", lx, pts[3], 10, 0, 1}};
        out = names[2];
        if (!rc && !(rc = plot_lines(lc, 3, title, "throughput (requests/s)", "latency (ms)", NULL, PLOT_LOGY, out, e)))
            printf("wrote %s\n", out);
    }
    free(ryp);
    free(t3);
    free(buf);
    free(v);
    return rc;
}

/* Builds the iterations' cost of r and runs the requests (or the capacity search); *sim_s: CPU time. */
static int simulate(const struct cli_opt *opts, const struct eval_req *r, struct serve_cfg *cfg,
                    const struct serve_req *req, int64_t n, int64_t max_tokens, double mem_util, int capacity,
                    double attain, double tol, struct serve_cost *cost, struct serve_capacity_result *cap,
                    struct serve_result *res, double *sim_s, struct dse_err *e)
{
    int rc;
    if ((rc = serve_cost_build(r, max_tokens, mem_util, cost, e)))
        return rc;
    clock_t t0 = clock();
    memset(cap, 0, sizeof *cap);
    if (capacity)
        rc = serve_capacity(cost, cfg, req, n, attain, tol, cap, res, e);
    else {
        if (cli_get(opts, "plot"))
            cfg->timeline = 4096;
        struct progress pg; /* a bar on a terminal while the requests complete */
        progress_begin(&pg, !cli_get(opts, "json"), "dse serve: simulating", "requests", n);
        cfg->progress = serve_tick;
        cfg->progress_ctx = &pg;
        rc = serve_run(cost, cfg, req, n, cli_get(opts, "plot") != NULL, res, e);
        progress_end(&pg, 0);
        cfg->progress = NULL;
    }
    *sim_s += (double)(clock() - t0) / CLOCKS_PER_SEC;
    return rc;
}

int cmd_serve(int argc, char **argv)
{
    struct cli_opt opts[sizeof serve_opts_proto / sizeof serve_opts_proto[0]];
    memcpy(opts, serve_opts_proto, sizeof opts);
    struct dse_err e;
    const char *pos[1];
    int npos, rc, have_model = 0;
    struct hw_system *sys = NULL, *capped = NULL;
    struct wl_model model;
    struct sw_stack sw;
    struct serve_req *req = NULL, *lengths = NULL, *trace = NULL;
    struct serve_result res;
    memset(&res, 0, sizeof res);
    char hwp[1024];
    dse_err_clear(&e);
    if ((rc = cli_parse(argc, argv, 2, opts, pos, 0, &npos, "serve", &e)))
        goto out;
    if (cli_get(opts, "help")) {
        usage();
        return 0;
    }
    struct eval_req r;
    if ((rc = cli_point_open(opts, "serve", hwp, sizeof hwp, &sys, &model, &r, &e)))
        goto out;
    have_model = 1;
    if (!wl_model_is_lm(&model)) {
        rc = dse_err_set(&e, DSE_EINPUT, model.path, NULL, "dse serve simulates decoder language models; %s has no "
                         "prefill and decode phases", model.name);
        goto out;
    }
    const char *swn = cli_get(opts, "software");
    if (!swn)
        swn = sys->dev[r.dev].software[0] ? sys->dev[r.dev].software : "none";
    if ((rc = pass_load_named(swn, cli_get(opts, "software") ? NULL : hwp, &sw, &e)))
        goto out;
    r.sw = &sw;
    struct cost_cfg costa;
    if ((rc = cli_cost(opts, NULL, &costa, &e)))
        goto out;
    if (cli_get(opts, "utilization")) { /* the run's idle time is simulated: a stated share would count it twice */
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--utilization", "dse serve simulates the system's busy and idle time "
                         "under its arrivals; lower --rate to run it less busy");
        goto out;
    }
    r.cost = &costa;
    if ((rc = cli_thermal(opts, sys, 0, &e)))
        goto out;
    if (cli_get(opts, "plot")) { /* the plots must be none of the run's inputs: checked before it runs */
        char names[3][OUT_PATH_MAX];
        const char *in[] = {hwp, model.path, sw.path, cli_get(opts, "trace"), cli_get(opts, "lengths")},
                   *what[] = {"the hwdesc", "the workload", "the software stack", "the trace", "the lengths' trace"};
        if ((rc = plot_names(cli_get(opts, "plot"), names, &e)))
            goto out;
        for (int k = 0; k < 3 && !rc; k++)
            rc = out_file_not_input(names[k], "--plot", in, what, 5, 0, &e);
        if (rc)
            goto out;
    }
    r.x.fidelity = FID_ANALYTICAL;
    if ((rc = cli_point_layout(opts, &r, &e)))
        goto out;
    if ((rc = par_layout_complete(sys, &r.layout, &e))) {
        char why[sizeof e.msg];
        dse_strlcpy(why, e.msg, sizeof why);
        rc = dse_err_set(&e, rc, hwp, sys->topo.n_level ? "topology" : "devices", "%s", why);
        goto out;
    }
    r.phase = PH_DECODE;
    r.batch = 1;
    r.prompt = 1;
    if ((rc = eval_check_layout(&r, &e)))
        goto out;

    /* the scheduler */
    struct serve_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.sched = SCHED_CONTINUOUS;
    const char *sc = cli_get(opts, "scheduler");
    if (sc && (int)(cfg.sched = (enum serve_sched)ju_lookup(serve_sched_names, sc)) < 0) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--scheduler", "expected static, continuous, chunked or inflight, got '%s'", sc);
        goto out;
    }
    long long v;
    if ((cli_get(opts, "max-batch") && (rc = cli_int("max-batch", cli_get(opts, "max-batch"), 1, 1 << 20, &v, &e))) ||
        (cli_get(opts, "max-batch") && ((cfg.max_batch = (int)v), 0)) ||
        (cli_get(opts, "block-size") && (rc = cli_int("block-size", cli_get(opts, "block-size"), 1, 1 << 16, &v, &e))) ||
        (cli_get(opts, "block-size") && ((cfg.block_tokens = (int)v), 0)))
        goto out;
    if (cfg.sched == SCHED_STATIC)
        cfg.block_tokens = 1; /* a static batch reserves its padded length: contiguous, no blocks */
    const char *adm = cli_get(opts, "admission");
    if (adm && ((int)(cfg.admit = (enum serve_admit)ju_lookup(serve_admit_names, adm)) <= 0)) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--admission", "expected on-demand or reserve, got '%s'", adm);
        goto out;
    }
    const char *pre = cli_get(opts, "preemption");
    if (pre && (int)(cfg.preempt = (enum serve_preempt)ju_lookup(serve_preempt_names, pre)) < 0) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--preemption", "expected recompute or swap, got '%s'", pre);
        goto out;
    }
    if (cli_get(opts, "prefix-tokens")) {
        if ((rc = cli_int("prefix-tokens", cli_get(opts, "prefix-tokens"), 1, 10000000, &v, &e)))
            goto out;
        cfg.prefix_tokens = v;
    }
    if (cli_get(opts, "prefix-share")) {
        if (!cfg.prefix_tokens) {
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--prefix-share", "applies to --prefix-tokens");
            goto out;
        }
        if ((rc = get_num(opts, "prefix-share", 0, 1, 1, &cfg.prefix_share, &e)))
            goto out;
    }
    if (cli_get(opts, "prefill-replicas")) {
        if ((rc = cli_int("prefill-replicas", cli_get(opts, "prefill-replicas"), 1, HW_MAX_TOPO_DEVICES, &v, &e)))
            goto out;
        cfg.prefill_replicas = (int)v;
    }
    if (cli_get(opts, "slo") && (rc = parse_slo(cli_get(opts, "slo"), &cfg, &e)))
        goto out;
    double mem_util, rate = 0, cv, attain, tol;
    if ((rc = get_num(opts, "mem-util", 0, 1, 0, &mem_util, &e)) || (rc = get_num(opts, "rate", 0, 1e9, 0, &rate, &e)) ||
        (rc = get_num(opts, "burstiness", 0, 100, 2, &cv, &e)) || (rc = get_num(opts, "attainment", 0, 1, 0.9, &attain, &e)) ||
        (rc = get_num(opts, "tolerance", 0, 0.5, 0.02, &tol, &e)))
        goto out;

    /* the requests */
    long long nreq = 1000, seed = 1;
    if ((cli_get(opts, "requests") && (rc = cli_int("requests", cli_get(opts, "requests"), 1, 100000000, &nreq, &e))) ||
        (cli_get(opts, "seed") && (rc = cli_int("seed", cli_get(opts, "seed"), 0, 4294967295LL, &seed, &e))))
        goto out;
    const char *tr = cli_get(opts, "trace"), *ln = cli_get(opts, "lengths"), *arr = cli_get(opts, "arrival");
    enum serve_arrival ak = SA_POISSON;
    if (arr && strcmp(arr, "poisson")) {
        if (!strcmp(arr, "gamma"))
            ak = SA_GAMMA;
        else if (!strcmp(arr, "offline"))
            ak = SA_OFFLINE;
        else {
            rc = dse_err_set(&e, DSE_EINPUT, NULL, "--arrival", "expected poisson, gamma or offline, got '%s'", arr);
            goto out;
        }
    }
    if (tr && (ln || cli_get(opts, "prompt-dist") || cli_get(opts, "output-dist") || arr)) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--trace", "replays its own arrivals and lengths: give none of --lengths, "
                         "--prompt-dist, --output-dist and --arrival");
        goto out;
    }
    if (ln && (cli_get(opts, "prompt-dist") || cli_get(opts, "output-dist"))) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--lengths", "draws both lengths from the file: give neither "
                         "--prompt-dist nor --output-dist");
        goto out;
    }
    if (cli_get(opts, "burstiness") && ak != SA_GAMMA) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--burstiness", "applies to --arrival gamma");
        goto out;
    }
    int capacity = !!cli_get(opts, "capacity");
    if (!capacity && (cli_get(opts, "attainment") || cli_get(opts, "tolerance"))) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, cli_get(opts, "attainment") ? "--attainment" : "--tolerance",
                         "applies to --capacity");
        goto out;
    }
    if (capacity && (cli_get(opts, "rate") || ak == SA_OFFLINE)) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--capacity", "searches the rate: give no --rate and no offline arrival");
        goto out;
    }
    if (!capacity && !tr && ak != SA_OFFLINE && !cli_get(opts, "rate")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--rate", "required (requests per second), unless --arrival offline, "
                         "--trace or --capacity");
        goto out;
    }
    if (ak == SA_OFFLINE && cli_get(opts, "rate")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--rate", "does not apply to --arrival offline (every request at t = 0)");
        goto out;
    }
    int64_t n = nreq;
    if (tr) {
        int64_t nt;
        if ((rc = serve_trace_load(tr, 100000000, &trace, &nt, &e)))
            goto out;
        n = cli_get(opts, "requests") && nreq < nt ? nreq : nt;
        req = trace;
        trace = NULL;
        double span = req[n - 1].arrival_s - req[0].arrival_s;
        if ((cli_get(opts, "rate") || capacity) && n > 1 && !(span > 0)) {
            rc = dse_err_set(&e, DSE_EINPUT, tr, NULL, "its arrivals span no time: there is no rate to rescale");
            goto out;
        }
        /* from the first arrival; --rate: rescaled to that mean rate; --capacity: to rate 1 (then scaled) */
        double t0 = req[0].arrival_s, to_rate = capacity ? 1 : cli_get(opts, "rate") ? rate : 0;
        double f = to_rate > 0 && n > 1 ? (double)(n - 1) / span / to_rate : 1;
        for (int64_t i = 0; i < n; i++)
            req[i].arrival_s = (req[i].arrival_s - t0) * f;
    } else {
        struct serve_dist pd = {SD_FIXED, 512, 0}, od = {SD_FIXED, 128, 0};
        int64_t nl = 0;
        if ((cli_get(opts, "prompt-dist") && (rc = serve_dist_parse("--prompt-dist", cli_get(opts, "prompt-dist"), &pd, &e))) ||
            (cli_get(opts, "output-dist") && (rc = serve_dist_parse("--output-dist", cli_get(opts, "output-dist"), &od, &e))) ||
            (ln && (rc = serve_trace_load(ln, 100000000, &lengths, &nl, &e))))
            goto out;
        if ((rc = serve_trace_make(ak, capacity ? 1 : rate, cv, n, &pd, &od, lengths, nl, (unsigned long)seed, &req, &e)))
            goto out;
    }
    /* every request within the model's context, or skipped or truncated (--too-long) */
    struct too_long tl = {TOO_LONG_ERROR, 0, n, model.tf.max_pos};
    const char *tls = cli_get(opts, "too-long");
    if (tls && (int)(tl.mode = (enum serve_too_long)ju_lookup(serve_too_long_names, tls)) < 0) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--too-long", "expected error, skip or truncate, got '%s'", tls);
        goto out;
    }
    int64_t first_long;
    serve_fit_context(req, &n, tl.context < 2 ? 2 : tl.context, tl.mode, &tl.n, &first_long);
    if (tl.n && tl.mode == TOO_LONG_ERROR) {
        const struct serve_req *q = &req[first_long];
        rc = dse_err_set(&e, DSE_EINPUT, tr ? tr : ln ? ln : model.path, NULL, "%lld of %lld requests exceed %s %lld of %s, the first "
                         "request %lld (prompt %d + output %d tokens): --too-long skip rejects them, --too-long truncate "
                         "cuts their prompts", (long long)tl.n, (long long)tl.offered, model.tf.max_pos_key,
                         (long long)tl.context, model.name, (long long)first_long + 1, q->prompt, q->output);
        goto out;
    }
    if (!n) {
        rc = dse_err_set(&e, DSE_EINPUT, tr ? tr : ln ? ln : model.path, NULL, "all %lld requests exceed %s %lld of %s: none left to "
                         "serve after --too-long skip", (long long)tl.offered, model.tf.max_pos_key,
                         (long long)tl.context, model.name);
        goto out;
    }
    if (cfg.prefix_tokens > 0 && (rc = serve_prefix_check(&cfg, req, n, NULL, "--prefix-tokens", &e)))
        goto out;
    int64_t longest = 0;
    for (int64_t i = 0; i < n; i++)
        longest = req[i].prompt > longest ? req[i].prompt : longest;
    if (cli_get(opts, "max-batched-tokens")) {
        if ((rc = cli_int("max-batched-tokens", cli_get(opts, "max-batched-tokens"), 1, 1 << 22, &v, &e)))
            goto out;
        cfg.max_batched_tokens = v;
    }
    cfg.sched_steps = sw.sched_steps; /* the stack release's scheduler */
    cfg.per_request_s = sw.per_request_s + r.sys->dev[r.dev].per_request_s;
    serve_cfg_defaults(&cfg, longest);
    int64_t max_tokens = serve_grid_tokens(&cfg);
    struct serve_cost cost;
    struct serve_capacity_result cap;
    double sim_s = 0;
    if ((rc = simulate(opts, &r, &cfg, req, n, max_tokens, mem_util, capacity, attain, tol, &cost, &cap, &res, &sim_s,
                       &e)))
        goto out;
    struct serve_thermal th;
    memset(&th, 0, sizeof th);
    if (sys->thermal.present && hw_topo_devices(sys) == 1 && res.makespan_s > 0) {
        /* the board heats at the run's mean power; one that reaches its throttle point before the run
         * ends serves it at the operating point its cooling sustains (thermal.h), every iteration capped */
        const struct hw_thermal *t = &sys->thermal;
        th.present = 1;
        th.power_W = res.energy_J / res.makespan_s;
        th.run_s = res.makespan_s;
        th.time_to_throttle_s = thermal_time_to(t, th.power_W, t->throttle_C);
        th.limit_W = thermal_limit_W(t);
        th.burst_tokens_per_s = res.output_tokens_per_s;
        if (!isinf(th.time_to_throttle_s) && !(th.time_to_throttle_s >= res.makespan_s)) { /* NAN: unknown, it may */
            double w[HW_MAX_DEVICES], idle = 0;
            for (int d = 0; d < sys->n_dev; d++) {
                w[d] = sys->dev[d].tdp_W > 0 ? sys->dev[d].tdp_W : 1; /* the cap's split without modes */
                idle += t->devices & (1u << d) ? sys->dev[d].idle_W : 0;
            }
            char cond[256];
            thermal_describe(t, cond, sizeof cond);
            if (idle >= th.limit_W) {
                rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "%s cannot serve this run at %s: its idle power %.3g W "
                                 "alone settles at %.3g degC, past its throttle point", sys->name, cond, idle,
                                 thermal_steady_C(t, idle));
                goto out;
            }
            if (!(capped = malloc(sizeof *capped))) {
                rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                goto out;
            }
            *capped = *sys;
            thermal_apply_cap(capped, th.limit_W, w);
            r.sys = capped;
            serve_result_free(&res);
            th.applied = 1;
            if ((rc = simulate(opts, &r, &cfg, req, n, max_tokens, mem_util, capacity, attain, tol, &cost, &cap, &res,
                               &sim_s, &e)))
                goto out;
        }
    }
    if (cli_get(opts, "json"))
        rc = print_json(&r, &cfg, &cost, &res, capacity ? &cap : NULL, &tl, &th, sim_s, cli_get(opts, "set"))
                 ? dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory") : DSE_OK;
    else
        print_human(&r, &cfg, &cost, &res, capacity ? &cap : NULL, attain, &tl, &th, sim_s, opts);
    if (!rc && cli_get(opts, "plot")) {
        char title[512];
        snprintf(title, sizeof title, "%s on %s, %s scheduler", model.name, sys->name, serve_sched_names[cfg.sched]);
        if (capacity) { /* the plots of the run at the capacity (none: at the search's lower bound) */
            serve_result_free(&res);
            for (int64_t i = 0; i < n; i++)
                req[i].arrival_s /= cap.feasible ? cap.rate_rps : cap.lower_bound_rps;
            cfg.timeline = 4096;
            rc = serve_run(&cost, &cfg, req, n, 1, &res, &e);
        }
        if (!rc)
            rc = serve_plots(cli_get(opts, "plot"), &cost, &cfg, req, n, &res, title, &e);
    }
out:
    if (rc)
        dse_err_print(stderr, &e);
    serve_result_free(&res);
    free(req);
    free(lengths);
    free(trace);
    if (have_model)
        wl_model_free(&model);
    free(sys);
    free(capped);
    return rc;
}
