/* serve.h -- serving an LLM under load (docs/serving.md): request traces (arrivals and lengths), the
 * time of one scheduler iteration from dse's own evaluation, an event-driven iteration-level
 * simulation of the schedulers serving runtimes use, and its metrics.
 *
 * The cost of an iteration is not re-evaluated from the graph: serve_cost_build evaluates the
 * design point at a grid of batched token counts once and keeps per-shape terms (serve_cost), so
 * an iteration costs a few multiply-adds. The simulation is single-threaded and deterministic: the
 * same requests give the same results on any machine and thread count. */
#ifndef DSE_SERVE_H
#define DSE_SERVE_H

#include <stdint.h>

#include "err.h"

struct eval_req;

/* One request: when it arrives (seconds from any origin; finite) and its lengths. */
struct serve_req {
    double arrival_s;
    int32_t prompt, output; /* tokens, >= 1 */
};

/* What to do with a request longer than the model's context (prompt + output > its positions):
 * refuse the run (error: the message counts them and names the option), skip it (the runtime rejects
 * it, as vLLM answers such a request with an error: counted, not served; the others keep their arrival
 * times) or truncate it (its prompt cut to what the context leaves after its output, as vLLM's
 * truncate_prompt_tokens keeps a prompt's last tokens; an output that alone fills the context is cut
 * to leave one prompt token). */
enum serve_too_long { TOO_LONG_ERROR, TOO_LONG_SKIP, TOO_LONG_TRUNCATE, TOO_LONG_COUNT };
extern const char *const serve_too_long_names[TOO_LONG_COUNT + 1];
/* Applies mode to req[0..*n) for a context of `context` tokens: *too_long receives how many exceed it
 * and *first the index of the first (-1: none). skip removes them (*n shrinks; it may reach 0),
 * truncate cuts them, error changes nothing. */
void serve_fit_context(struct serve_req *req, int64_t *n, int64_t context, enum serve_too_long mode,
                       int64_t *too_long, int64_t *first);

/* A length distribution: fixed:N, uniform:A-B, normal:MEAN,SD (rounded, truncated to [1, max]),
 * or the column of a trace file (empirical: its values drawn uniformly). */
enum serve_dist_kind { SD_FIXED, SD_UNIFORM, SD_NORMAL, SD_EMPIRICAL };
struct serve_dist {
    enum serve_dist_kind kind;
    double a, b;
};

/* The arrival process: poisson at rate, gamma (bursty: inter-arrival coefficient of variation cv, 1 is
 * Poisson) at rate, or all at t = 0 (offline). */
enum serve_arrival { SA_POISSON, SA_GAMMA, SA_OFFLINE, SA_CONSTANT }; /* constant: evenly 1/rate apart */

/* Parses a distribution spec (above); DSE_EINPUT naming opt. */
int serve_dist_parse(const char *opt, const char *s, struct serve_dist *d, struct dse_err *e);
/* Reads a trace CSV (header arrival_s,prompt_tokens,output_tokens, after a UTF-8 byte-order mark if the
 * file starts with one, as Excel writes; '#' comment lines; arrival times non-decreasing, tokens
 * positive integers; at most max rows): *out malloc'd. Errors name the file and line. */
int serve_trace_load(const char *path, int64_t max, struct serve_req **out, int64_t *n, struct dse_err *e);
/* The same from text[0..size) named path (the fuzz target's entry). */
int serve_trace_load_buf(const char *text, size_t size, const char *path, int64_t max, struct serve_req **out,
                         int64_t *n, struct dse_err *e);
/* n requests: arrivals of the process at rate (requests/s; unused offline), lengths drawn from the
 * distributions, or jointly from lengths[0..n_lengths) when given (a trace's rows); seeded (GSL's
 * mt19937). *out malloc'd. */
int serve_trace_make(enum serve_arrival arr, double rate, double cv, int64_t n, const struct serve_dist *prompt,
                     const struct serve_dist *output, const struct serve_req *lengths, int64_t n_lengths,
                     unsigned long seed, struct serve_req **out, struct dse_err *e);

/* The cost of one iteration of a replica (tp devices), from serve_cost_build:
 *   time = lin(N) + logits(L) + tok_s x L + dec_ctx_s x C + pre_pair_s x P
 * N the tokens the iteration runs (decode tokens + prefill chunk tokens), L the sequences that
 * produce a token, C the keys the decoding sequences attend to beyond a 1-token cache (a sequence
 * with c cached tokens adds c - 1), P the (query, key) pairs of the prefill chunks' causal attention.
 * lin is a decode step of N sequences over 1-token caches less its logits (GEMMs, norms, collectives,
 * the runtime's per-step work), logits the vocabulary projection of L sequences, both interpolated
 * piecewise linearly over a grid of token counts (and extended beyond it along the last segment);
 * tok_s the runtime's host work per emitted token (the stack's per_token_us), its devices waiting.
 * Energy likewise (dynamic), plus the system's idle power over the time. */
#define SERVE_GRID 24
struct serve_cost {
    int n_grid;
    double tok[SERVE_GRID], lin_s[SERVE_GRID], lin_J[SERVE_GRID], lg_s[SERVE_GRID], lg_J[SERVE_GRID];
    double dec_ctx_s, dec_ctx_J, pre_pair_s, pre_pair_J;
    double tok_s, tok_J;     /* per emitted token: the runtime's host work, and the devices' gap power over it */
    double idle_W;           /* the replica's devices' idle power */
    double usd_per_s;        /* its price over the amortisation period, rent and hosting, per second of the
                                run (NAN: none known; r->cost's, the run's idle time being simulated) */
    double usd_per_J;        /* electricity: the price x PUE of r->cost, per joule of IT energy */
    double kv_token_bytes;   /* KV cache per token, per device */
    double kv_capacity_tokens; /* what the usable memory holds beyond weights and activations */
    double weight_bytes, act_bytes, mem_bytes; /* per device */
    double reserved_bytes, mem_util, usable_bytes; /* usable: mem_util x mem_bytes less the reserve */
    int devices;             /* of one replica */
    int replicas;            /* dp: the arrivals are dealt round-robin to this many replicas */
    double swap_Bps;         /* the primary device's link to a host CPU (swap preemption; 0: none) */
    double xfer_Bps;         /* between replicas (disaggregation's KV transfer: the topology's first
                                level, per device and direction; 0: none) */
};

/* Builds the cost of r's design point (an LM, its layout completed, phase and batch ignored) for
 * iterations of up to max_tokens tokens; the runtime allocates mem_util x the device memory's
 * capacity less its reserve (hwdesc reserved_GiB; mem_util is vLLM's gpu_memory_utilization, 0: the
 * stack's memory.utilization, else 1). An infeasible point (weights do not fit, no engine) is
 * DSE_EINPUT with the reason. */
int serve_cost_build(const struct eval_req *r, int64_t max_tokens, double mem_util, struct serve_cost *c,
                     struct dse_err *e);
/* One iteration's time and dynamic energy (the terms above). */
double serve_iter_s(const struct serve_cost *c, double N, double L, double C, double P, double *J);

/* Schedulers (docs/serving.md): static batches (a batch admitted when the last one has finished,
 * padded to its longest prompt and output), continuous batching (vLLM v0: iterations of new
 * requests' whole prefills first, else one decode step of every running sequence), chunked prefill
 * (Sarathi-Serve / vLLM: every iteration decodes the running sequences and fills the rest of its
 * token budget with prefill chunks), in-flight batching (Orca, TensorRT-LLM: every iteration decodes
 * the running sequences and adds whole prefills of new requests in what the budget leaves). */
enum serve_sched { SCHED_STATIC, SCHED_CONTINUOUS, SCHED_CHUNKED, SCHED_INFLIGHT, SCHED_COUNT };
extern const char *const serve_sched_names[SCHED_COUNT + 1];

/* What a preempted sequence loses (docs/serving.md): recompute (its cache freed, prefilled again
 * later) or swap (its cache copied to host memory over swap_Bps and back when it resumes). */
enum serve_preempt { PREEMPT_RECOMPUTE, PREEMPT_SWAP, PREEMPT_COUNT };
extern const char *const serve_preempt_names[PREEMPT_COUNT + 1];

/* How KV blocks are granted: on demand (vLLM: as a sequence grows, preempting when short) or reserved
 * whole at admission for prompt + output (TensorRT-LLM's default GUARANTEED_NO_EVICT: never preempted);
 * the default is the scheduler's (reserve for inflight, on demand otherwise). */
enum serve_admit { ADMIT_DEFAULT, ADMIT_ON_DEMAND, ADMIT_RESERVE, ADMIT_COUNT };
extern const char *const serve_admit_names[ADMIT_COUNT + 1];

struct serve_cfg {
    enum serve_sched sched;
    enum serve_preempt preempt;
    enum serve_admit admit;
    int64_t prefix_tokens;     /* > 0: prefix caching: this many leading prompt tokens are shared (a system
                                  prompt; shorter than every prompt carrying it), cached in whole blocks after
                                  the first request computes them, evicted when no running sequence uses
                                  them and others need the blocks */
    double prefix_share;       /* the share of requests that carry the prefix (0: all) */
    int prefill_replicas;      /* > 0: disaggregation: this many replicas prefill (each request's first
                                  token), the others decode, the KV cache sent between over xfer_Bps */
    int max_batch;             /* running sequences at most (vLLM max_num_seqs) */
    int64_t max_batched_tokens; /* tokens an iteration runs at most (vLLM max_num_batched_tokens) */
    int block_tokens;          /* the paged KV cache's block (vLLM block_size); static: contiguous */
    int sched_steps;           /* continuous: decode steps run back to back once scheduled, waiting requests
                                  admitted only between such runs (vLLM's --num-scheduler-steps, multi-step
                                  scheduling; 0 or 1: every iteration schedules) */
    double slo_ttft_s, slo_tpot_s, slo_e2e_s; /* per-request limits for goodput (0: none) */
    double per_request_s;      /* the runtime's own work per request before its first token (tokenisation, the
                                  API server: the stack's and the system's per_request_us), off the GPU: each
                                  request's TTFT and end-to-end time gain it, the schedule does not change */
    int timeline;              /* keep up to this many (time, running, KV use) samples (0: none) */
    /* called every 4,096 iterations with the requests completed and all of them (NULL: never) */
    void (*progress)(void *ctx, int64_t done, int64_t total);
    void *progress_ctx;
};

/* Percentiles of a per-request figure. */
struct serve_pct {
    double mean, p50, p90, p99, max;
};
struct serve_sample {
    double t_s;     /* since the first request's arrival */
    double kv_use;
    int running;
};
struct serve_result {
    int64_t requests, completed, preemptions, iterations, output_tokens;
    int64_t prefix_evictions;  /* times the cached prefix's blocks were evicted for others (prefix caching) */
    double makespan_s;         /* first arrival to last completion */
    struct serve_pct ttft_s, tpot_s, e2e_s;
    double throughput_rps, output_tokens_per_s, goodput_rps, slo_attainment;
    double kv_use_mean, kv_use_peak; /* share of the KV blocks in use, time-weighted mean and peak */
    double batch_mean;         /* sequences per decode iteration, mean */
    double energy_J, energy_per_token_J, cost_per_Mtoken_USD;
    struct serve_sample *timeline; /* malloc'd, n_timeline samples (cfg.timeline) */
    int n_timeline;
    double *ttft_all, *tpot_all, *e2e_all; /* per request, completed ones, sorted (keep_all) */
};

/* The scheduler's defaults beside cfg->sched for requests whose longest prompt is longest: the token
 * budget (continuous 8192 or the longest prompt, chunked 2048, static a whole padded batch), 256
 * sequences, blocks of 16 tokens (static: contiguous), the admission (inflight: reserve); and the largest iteration the cost must cover
 * (at most 65,536 tokens: serve_iter_s extends the grid beyond). Fields already set (non-zero) stay. */
void serve_cfg_defaults(struct serve_cfg *cfg, int64_t longest);
int64_t serve_grid_tokens(const struct serve_cfg *cfg);

/* Simulates the requests (sorted by arrival) on c's replicas with cfg. A request that cannot ever fit
 * (its prompt and output exceed the KV capacity, or its prompt the token budget of a scheduler that
 * does not chunk), an arrival that is not a finite time, and a shared prefix not shorter than the
 * prompt of a request carrying it (serve_prefix_check) are DSE_EINPUT naming the request. keep_all keeps
 * the sorted per-request figures (for CDFs). serve_result_free releases what it holds.
 *
 * Time is kept relative, so no step is lost to the magnitude of the arrival times: a replica's clock
 * counts from the arrival that opened its busy period (re-based whenever it is idle), and each
 * request's times from its own arrival. The KV blocks are checked at every change: none is ever
 * granted beyond the cache (free blocks >= 0); a breach is DSE_ERUNTIME, an internal error. */
int serve_run(const struct serve_cost *c, const struct serve_cfg *cfg, const struct serve_req *req, int64_t n,
              int keep_all, struct serve_result *res, struct dse_err *e);
void serve_result_free(struct serve_result *res);

/* Prefix caching's requests: which carry the prefix (request i, 0-based, of the trace), and whether
 * every carrier's prompt is longer than the prefix (a prefix is part of each prompt carrying it, which
 * computes at least its last token): DSE_EINPUT naming the first that is not, with file and path (the
 * option or key that set the prefix) for the message. */
int serve_carries_prefix(const struct serve_cfg *cfg, int64_t i);
int serve_prefix_check(const struct serve_cfg *cfg, const struct serve_req *req, int64_t n, const char *file,
                       const char *path, struct dse_err *e);

/* A capacity search's answer. The search covers [lower_bound_rps, top_rps]: the top is 1.25 x the rate
 * the system drains when every request is there at once, the lower bound SERVE_CAPACITY_FLOOR of the
 * top. feasible 0: no rate in that range meets the SLOs (rate_rps 0; the run returned is at the lower
 * bound). */
#define SERVE_CAPACITY_FLOOR 1e-6
struct serve_capacity_result {
    int feasible;
    double rate_rps, lower_bound_rps, top_rps;
    int evals; /* simulations run */
};
/* The highest arrival rate (requests/s) at which the share of requests meeting every SLO of cfg is at
 * least attainment: requests drawn once at rate 1 (arrivals then scaled, so every rate sees the same
 * requests), bisection until the bracket is within tol (relative); *at the run at the rate found (or at
 * the lower bound when none is). */
int serve_capacity(const struct serve_cost *c, const struct serve_cfg *cfg, const struct serve_req *unit, int64_t n,
                   double attainment, double tol, struct serve_capacity_result *cap, struct serve_result *at,
                   struct dse_err *e);

#endif
