/* eval.h -- evaluating one design point: a workload on a system with a primary device, precision,
 * batch and phase, giving totals and a per-operator breakdown.
 *
 * Operators run one after another on the primary device; an operator the primary device does not
 * support falls back to another device of the system, paying link transfers for its inputs. An
 * infeasible point (unsupported precision, does not fit in memory, no device for an operator) is a
 * result with feasible = 0 and a reason, not an error. Times in seconds, energy in joules, sizes in
 * bytes; the metric registry converts units for output. */
#ifndef DSE_EVAL_H
#define DSE_EVAL_H

#include "model.h"

struct eval_req {
    const struct hw_system *sys;
    int dev; /* primary device index */
    const struct wl_model *model;
    struct exec_cfg x;
    int64_t batch;
    enum wl_phase phase; /* PH_NONE for non-LM workloads */
    int64_t prompt;      /* prompt tokens (prefill) or sequence length (encoders) */
    int64_t gen;         /* generated tokens (generate) */
};

struct eval_op {
    char name[WL_NAME_LEN];
    enum op_type type;
    enum wl_phase phase;
    int dev;
    double count;      /* executions summed into this row (repeat count x decode steps) */
    double time_s, compute_s, memory_s, overhead_s, xfer_s;
    enum bound bound;  /* of one execution (the last, for decode rows) */
    double macs, flops;
    double bytes;      /* bytes served by the device's main memory (its last level) */
    double energy_J;
    double utilization;
    enum prec cprec;
};

struct eval_totals {
    double latency_s, throughput_per_s, energy_J, avg_power_W;
    double peak_memory_bytes, weight_bytes, kv_bytes, act_bytes;
    double macs, flops, params;
    double ttft_s, tpot_s, tokens_per_s, decode_tokens_per_s, energy_per_token_J;
    double compute_s, memory_s, overhead_s, xfer_s;
    double energy_compute_J, energy_memory_J, energy_static_J, energy_link_J;
    double main_bytes;
    double price_USD; /* of the devices used */
};

struct eval_result {
    int feasible;
    char reason[320];
    struct eval_totals t;
    struct eval_op *ops;
    int n_ops, cap_ops;
};

/* Picks the primary device when none is named: the first that is not a CPU, else the first. */
int eval_default_device(const struct hw_system *sys);
/* Picks a precision the device computes GEMMs in: fp16, bf16, int8, fp32, in that order. */
int eval_default_prec(const struct hw_device *d);
int eval_run(const struct eval_req *r, struct eval_result *res, struct dse_err *e);
void eval_result_free(struct eval_result *res);

#endif
