/* eval.h -- evaluating one design point: a workload on a system with a placement, precision, batch
 * and phase, giving totals and (optionally) a per-operator breakdown.
 *
 * Operators run one after another, each on the device its placement names (the primary device
 * unless its operator type is placed elsewhere); an operator that device does not support falls
 * back to another linked device of the system, paying link transfers for its inputs. An infeasible
 * point (unsupported precision, does not fit in memory, no device for an operator, power cap below
 * the device's floor) is a result with feasible = 0 and a reason, not an error.
 *
 * Hot path: graphs are built once per (workload, batch, prompt) into struct eval_graphs and shared
 * read-only; struct eval_scratch is per thread and sized once; eval_point allocates nothing unless
 * per-operator rows are requested. Times in seconds, energy in joules, sizes in bytes. */
#ifndef DSE_EVAL_H
#define DSE_EVAL_H

#include "model.h"
#include "par.h"
#include "pass.h"
#include "cost.h"
#include "quality.h"


struct eb_table;

/* The training step (phase train; docs/models.md, "Training"): the optimizer, the ZeRO stage
 * (0: every replica holds everything; 1: optimizer states sharded over dp; 2: and gradients;
 * 3: and weights, FSDP) and activation recomputation (selective: attention's inner products again in
 * the backward, their scores not kept; full: every layer's forward again, only layer inputs kept). */
enum train_opt { OPT_ADAMW, OPT_SGD, OPT_COUNT };
enum train_recompute { RC_NONE, RC_SELECTIVE, RC_FULL, RC_COUNT };
extern const char *const train_opt_names[OPT_COUNT + 1];
extern const char *const train_recompute_names[RC_COUNT + 1];
struct train_cfg {
    enum train_opt optimizer;
    int zero;
    enum train_recompute recompute;
};

struct eval_req {
    const struct hw_system *sys;
    const struct sw_stack *sw; /* the software stack its graphs were built with (NULL: none) */
    int dev;               /* primary device index */
    int type_dev[OP_COUNT]; /* device per operator type, -1: the primary device */
    const struct wl_model *model;
    struct exec_cfg x;
    int64_t batch;
    enum wl_phase phase; /* PH_NONE for non-LM workloads */
    int64_t prompt;      /* prompt tokens (prefill) or sequence length (encoders) */
    int64_t gen;         /* generated tokens (generate) */
    double capacity_bytes; /* > 0: overrides the primary device's main memory capacity */
    int skip_capacity;     /* leave the capacity check to the caller (eval_capacity) */
    int no_request_cost;   /* leave the request's own runtime work (per_request_us) out: a serving iteration's
                              cost, the simulator adding it to each request's time to first token */
    int no_token_cost;     /* leave the runtime's work per emitted token (per_token_us) out: a serving
                              iteration's cost, the simulator charging it per sequence that emits one */
    int want_ops;          /* fill per-operator rows */
    int burst;             /* a kernel timed alone for milliseconds: it runs before a board's power limiter
                              brings its clocks down, so its power is reported and no limit throttles it */
    const struct ql_est *quality; /* the expected quality loss of this precision for this model
                                     (eval_quality); NULL: quality_loss_pct is NAN (not estimated) */
    const struct eb_table *errbars; /* the error bars (errbar.h) the result carries; NULL: none */
    /* How the system's topology runs the workload (par.h): tp x dp x pp devices, completed by
     * par_layout_complete (zeros: one device). batch is one replica's (a dp group member's) in
     * inference, the global batch of a training step (eval_replica_batch); a replica's sequences are
     * cut into layout.microbatches micro-batches (through the pp stages, or accumulated); the graphs are
     * built for one micro-batch, sharded tp ways. */
    struct par_layout layout;
    struct train_cfg train; /* phase train only */
    const struct cost_cfg *cost; /* the cost metrics' assumptions (cost.h); NULL: cost_default */
    long long share_sig; /* > 0: requests with the same value differ in power caps alone (a sweep's keys),
                            so a cap's evaluations of the system's modes are reused; 0: none */
};

/* Graphs for one (workload, phase, batch, prompt, software stack): built once, the stack's passes
 * applied, then read-only. */
struct eval_graphs {
    enum wl_phase phase;
    int64_t batch, prompt; /* batch: of one micro-batch */
    int tp;                /* the graphs are one device's shard of tp (wl_shard_transformer) */
    int ep;                /* and of ep for a MoE layer's experts (wl_expert_parallel) */
    int cp;                /* and of cp for the sequence (prefill) or the KV cache (decode) */
    const struct sw_stack *sw; /* the stack whose passes were applied (NULL: none) */
    struct wl_graph first;  /* the whole inference, the prefill, or the single decode step */
    struct wl_graph decode; /* generate: the first decode step (prompt tokens cached); else empty */
    double first_params, decode_params;
    double model_active_params; /* parameters a token uses (MoE: the routed experts it picks), of the whole model */
    double first_launches, decode_launches; /* kernel launches of one execution (pass_kernel_launches) */
    /* For pipeline stages (par.h): weight elements of the repeated layers (split over the stages) and
     * of the rest read before them (the first stage: embeddings) and after them (the last: the head; a
     * tied table is in both); elements of the activation entering the layers of the first graph and
     * of a decode step (what crosses a stage boundary). */
    double w_layers, w_before, w_after, boundary_elems, decode_boundary_elems;
    double model_params;   /* parameters of the whole model (the shard's times tp but for what each keeps) */
    /* Training (phase train): activation elements the forward keeps for the backward (outputs of every
     * op that is not a view), of them the attention score matrices of unfused attention, and the
     * layer inputs (what full recomputation keeps); the forward's FLOPs. */
    double act_saved_elems, act_scores_elems, act_layer_in_elems, fwd_flops;
    double act_whole_elems; /* of act_saved_elems, the layers' tensors a tp shard holds whole */
};

/* Per-thread working memory, reused across points. */
struct eval_op_cost;
struct eval_scratch {
    int *loc, *dev_of;
    char *seen, *nofuse;
    signed char *home;    /* the stack's memory plan of the graph being evaluated (per tensor) */
    double *diff;
    struct eval_op_cost *contrib;
    struct eval_op_cost *acct; /* a graph's costs as accounted (its tp all-reduces less what overlap hides) */
    int cap_t, cap_op;
    struct wl_graph mini; /* one attention op and its tensors, re-sized per decode step */
    struct hw_system *thr; /* a copy of the system with throttled clocks (power limits) */
    struct hw_system *moded; /* a copy in the mode a power cap picked (hw_system.modes) */
    struct eval_mode_cache *modes; /* each mode's evaluation for the points of one share_sig (eval.c) */
    struct hw_system *therm;       /* a copy capped at what its cooling sustains (thermal.h) */
    struct eval_result *sus;       /* its evaluation */
};

struct eval_op {
    char name[WL_NAME_LEN];
    enum op_type type;
    enum wl_phase phase;
    int dev;
    int kernel;        /* the kernel it runs in (the stack's fusion; pass.h), within its phase's graph */
    int pass;          /* training: 0 forward, 1 backward (recomputation included), 2 gradient sync and
                          optimizer; 0 otherwise */
    double count;      /* executions summed into this row (repeat count x decode steps) */
    double time_s, compute_s, memory_s, overhead_s, xfer_s;
    enum bound bound;  /* of one execution (the last, for decode rows) */
    double macs, flops;
    double bytes;      /* bytes served by the device's main memory (its last level) */
    double energy_J;
    double utilization;
    enum prec cprec;
    /* cycle tier (0 in the analytical tier): cycles, mapping efficiency, SRAM and DRAM elements */
    double cycles_compute, cycles_stall, mapping_efficiency, sram_reads, sram_writes, dram_reads, dram_writes;
};

struct eval_totals {
    double latency_s, throughput_per_s, energy_J, avg_power_W;
    double peak_memory_bytes, weight_bytes, kv_bytes, act_bytes;
    double grad_bytes, optimizer_bytes; /* training: fp32 gradients and optimizer states per device */
    double macs, flops, params, active_params;
    double ttft_s, tpot_s, tokens_per_s, decode_tokens_per_s, energy_per_token_J, energy_per_inference_J;
    double compute_s, memory_s, overhead_s, xfer_s;
    double energy_compute_J, energy_memory_J, energy_static_J, energy_link_J;
    double energy_active_J; /* active devices' power beyond idle, not per operation (power.active_W) */
    double energy_enclosure_J; /* the enclosure's fans, regulators and conversion losses on the devices' dynamic
                                  energy (hw_enclosure; its static draw is in energy_static_J) */
    double encl_efficiency;    /* the enclosure's conversion efficiency at the point's load (1 without one) */
    double module_W;           /* the devices' average power and the enclosure's base_W: what a module's budget (a
                                  power cap on a system with modes) counts; avg_power_W is at the meter's input */
    double tokens_per_J, inferences_per_J, tokens_per_USD, inferences_per_USD; /* per watt and per dollar */
    double main_bytes;
    double price_USD;               /* of the system, every device (0: none known) */
    double die_area_mm2;            /* of the devices used; NAN when one has no area figure */
    double cost_per_Mtoken_USD;     /* NAN when no price or rent is known */
    double cost_per_Minference_USD; /* NAN when no price or rent is known */
    double cost_USD;                /* of the evaluated phase (a training step): the same terms, NAN as above */
    double quality_loss_pct;        /* expected quality loss of the precision configuration (eval_quality) */
    double err_low_pct, err_high_pct; /* the expected time error's interval (errbar.h), NAN when none:
                                         no table, none for the device's class, or another tier */
    int err_n, err_fallback;          /* its held-out cases; 1 when the class's all-kinds row gave it */
    double throttle_slowdown;       /* latency / latency unthrottled: 1 when no device hit its power limit */
    double kernels;                 /* kernel launches of the evaluated phase (every step) */
    double devices;                 /* devices of the layout (tp x dp x pp; 1 without a topology) */
    double comm_s;                  /* of xfer_s: collectives and pipeline sends over the topology, what adds to
                                       the latency (comm_exposed_ms) */
    double comm_total_s;            /* the same collectives and sends whole, hidden under compute or not
                                       (comm_total_ms >= comm_exposed_ms) */
    double pipe_s, pipe_J;          /* of comm_s and energy_link_J: the sends between pipeline stages
                                       (no operator's row holds them) */
    double contexts, contexts_s;    /* a dataflow NPU's contexts (hw.h, hw_contexts) and what switching them in
                                       costs per pass (in latency_s; no operator's row holds it) */
    double tokens_per_s_per_device; /* tokens_per_s / devices */
    double mfu_pct;                 /* training: model FLOPs (6 N per token for transformers, 3 x the forward's
                                       FLOPs otherwise) / (step time x devices x GEMM peak) */
    double tflops_per_device;       /* training: model FLOPs / step time / devices, in TFLOP/s */
    double runtime_s;               /* host and runtime time not hidden by the devices: kernel issue beyond
                                       device time, per-step and per-request work (pass.h) */
    /* A sweep's serving point (serve.h: the run of its workload's "serving" block), NAN elsewhere */
    double srv_rps, srv_tokens_per_s, srv_goodput_rps, srv_attainment, srv_ttft_p50_s, srv_ttft_p99_s;
    double srv_tpot_p50_s, srv_tpot_p99_s, srv_e2e_p50_s, srv_e2e_p99_s, srv_cost_per_Mtoken_USD;
    double srv_energy_per_token_J, srv_goodput_per_USD, srv_kv_use, srv_preemptions;
    /* A run of the board's thermal.duration_s from a cold start (thermal.h; NAN when the system has no
     * thermal model or no duration is asked): the rate once throttled to what its cooling holds at the
     * throttle point (the burst rate when it never gets there), the mean rate over the run, the seconds
     * until it throttles (INFINITY: never), and the temperature it settles at. */
    double sus_throughput_per_s, sus_tokens_per_s, mean_throughput_per_s, time_to_throttle_s, steady_temp_C;
};

struct eval_result {
    int feasible;
    char reason[320];
    char throttle_note[512]; /* non-empty: which device throttled, to what clock, for which limit */
    int mode;                /* the system's mode a power cap picked (hw_system.modes), -1: none picked */
    char thermal_note[1024];  /* a run with a thermal model: when it throttles and where it settles */
    int sus_mode;            /* the mode of the sustained point (-1: none picked) */
    struct eval_totals t;
    double need_bytes[HW_MAX_DEVICES]; /* memory each device needs (weights + KV + activations) */
    /* Power per device: its dynamic energy (compute, memory, links into it) and busy time (first
     * graph, decode steps), its average power over the latency (idle included) and its limit (the
     * lower of TDP and power cap). */
    unsigned used;      /* bit d: device d ran an operator */
    int part;           /* 0 while the first graph is accounted, 1 for decode steps */
    /* While a pass is accounted (eval.c): its times x tscale (the pipeline's schedule of its
     * micro-batches over pp stages), the system's energy x escale (every device and micro-batch), a
     * device's own dynamic energy x dscale (its share of the stages): tscale and dscale set per op from
     * stage_f and stage_d, the factors of the ops before, in and after the repeated layers
     * (eval_pipe_factors), fixed by the first graph's pass and by a generate's first decode step */
    double tscale, escale, dscale;
    double stage_f[3], stage_d[3];
    int pass;                 /* training: the pass rows are accounted to (eval_op.pass) */
    double kscale;            /* the kernels' time x this (not links'): 1 / the phase's efficiency.training, .prefill or .decode */
    struct par_layout layout; /* the request's, for messages */
    double first_s;     /* latency of the first graph (the prefill of a generate) */
    double dev_dyn_J[HW_MAX_DEVICES], dev_busy_s[2][HW_MAX_DEVICES];
    double dev_power_W[HW_MAX_DEVICES], dev_limit_W[HW_MAX_DEVICES];
    struct eval_op *ops;
    int n_ops, cap_ops;
};

/* The measured numerical error of a configuration (a fraction): the relative output error of a 128^3
 * GEMM with the weights and activations at their precisions (kern_gemm_rel_error, fp64 reference),
 * combined with the KV cache's when the workload has one: sqrt(e(w, a)^2 + e(kv, a)^2); -1 when a
 * precision cannot be emulated. About 10 ms. The fallback of eval_quality. */
double eval_accuracy_proxy(const struct prec_cfg *p, int has_kv);
/* The kind of model m for the quality table (enum ql_kind): LMs, encoders, CNNs; -1 for graphs,
 * SCALE-Sim topologies and ONNX models (their family, if their name has one, says). */
int eval_quality_kind(const struct wl_model *m);
/* The expected quality loss of precision p on model m (quality.h; t NULL: no table): the published
 * estimate, else (flag QL_FALLBACK) 100 x the measured GEMM error of eval_accuracy_proxy, or of its
 * unit-roundoff estimate prec_accuracy_proxy where a precision cannot be emulated. Builds one graph
 * of m for its parameter count (a model that cannot be built at batch 1 gets the fallback). Call before
 * any parallel region. */
void eval_quality(const struct ql_table *t, const struct wl_model *m, const struct prec_cfg *p, struct ql_est *q);

/* A training step's precision (phase train; eval_train.c): weights and activations at one float the
 * stack trains in (its training_precisions) and the primary device has a matrix engine for. DSE_OK, or
 * DSE_EINPUT naming what would be accepted ("training at int4: ..."); other phases DSE_OK. */
int eval_check_train_prec(const struct eval_req *r, struct dse_err *e);

/* Picks the primary device when none is named: the first that is not a CPU, else the first. */
int eval_default_device(const struct hw_system *sys);
/* Picks the precision a device computes GEMMs in by default: the float (fp16, bf16, fp32) with the
 * highest GEMM peak, ties to the narrower; int8 for integer-only devices; -1 if none. */
int eval_default_prec(const struct hw_device *d);
/* Parses a placement: "DEV" or "DEV,TYPE=DEV2,..." (TYPE an operator type); fills dev and type_dev.
 * Returns DSE_EINPUT with a message naming the unknown device or type. */
int eval_parse_placement(const struct hw_system *sys, const char *s, int *dev, int *type_dev, struct dse_err *e);

/* Builds the graphs and applies the stack's passes (sw NULL: none); sw must outlive eg. */
/* lay: the layout whose tp shard and expert parallelism the graphs are of (NULL: one device). */
int eval_graphs_build(const struct wl_model *m, enum wl_phase ph, int64_t batch, int64_t prompt,
                      const struct par_layout *lay, const struct sw_stack *sw, struct eval_graphs *eg,
                      struct dse_err *e);
/* Sequences one replica (a dp group member) runs: the batch, except in a training step, whose batch is
 * the global one (every replica's, per optimizer step) and must divide by dp. */
int64_t eval_replica_batch(const struct eval_req *r);
/* Sequences of one micro-batch: the replica's batch / layout.microbatches (the graphs' batch). */
int64_t eval_micro_batch(const struct eval_req *r);
/* Checks that r's layout can run its workload: pp needs repeated layers to split (a transformer) and
 * no more stages than layers, the micro-batches must divide the batch, and tp must shard the model
 * (wl_shard_transformer's errors). */
int eval_check_layout(const struct eval_req *r, struct dse_err *e);
void eval_graphs_free(struct eval_graphs *eg);
int eval_scratch_fit(struct eval_scratch *s, const struct eval_graphs *eg, struct dse_err *e);
void eval_scratch_free(struct eval_scratch *s);

/* Evaluates r with graphs built for its workload, phase, batch and prompt. A device whose average
 * power would exceed its limit (TDP, or a lower power cap) throttles: it steps down its DVFS table to
 * the fastest point that fits (a re-evaluation per step tried: clocks and peaks scale with f, MAC
 * energies with V^2), and where none fits (or it has no table) idles part of the time (duty cycle),
 * stretching its operators until (dynamic energy + idle x latency) / latency equals the limit. The
 * result says so (throttle_note, t.throttle_slowdown); a limit at or below idle power is infeasible. */
int eval_point(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
               struct eval_result *res, struct dse_err *e);
/* eval_point in its two steps, for a sweep whose neighbouring points differ only in power caps: the
 * operators' costs (eval_point_ops; no power cap enters them), then the power limits (throttling),
 * the capacity check and the derived totals (eval_point_limits) on that result or a copy of it. */
int eval_point_ops(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                   struct eval_result *res, struct dse_err *e);
int eval_point_limits(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                      struct eval_result *res, struct dse_err *e);
/* Checks res->need_bytes against what each device's main memory leaves a workload (shared pools
 * summed): its capacity less its reserve (hwdesc reserved_GiB), and at most the share sw allocates
 * (memory.utilization) on devices it targets; capacity_bytes > 0 replaces the primary device's main
 * memory capacity (or its shared pool's). Marks res infeasible. */
void eval_capacity(const struct hw_system *sys, const struct sw_stack *sw, int primary, double capacity_bytes,
                   struct eval_result *res);
/* Device d's main memory as eval_capacity sees it: what it needs (its pool's sum, when shared) and
 * its capacity (capacity_bytes on the primary or its pool), returning what is usable of it. */
double eval_capacity_of(const struct hw_system *sys, const struct sw_stack *sw, int primary, double capacity_bytes,
                        const struct eval_result *res, int d, double *total_bytes, double *cap_bytes);
/* The share of device d's main memory stack sw allocates at most (0: no cap). */
double eval_mem_util(const struct hw_system *sys, const struct sw_stack *sw, int d);
/* eval_capacity in two steps, for a sweep's memory axis (one evaluation, many capacities): the first
 * device the point overflows with capacity_bytes on the primary (0: as described), -1 when all fit,
 * with its need and its main memory's capacity; then why, into buf, returning the length of the text
 * before the capacity figures (the part that is the same for every capacity), which
 * eval_capacity_suffix writes for a capacity. */
int eval_capacity_short(const struct hw_system *sys, const struct sw_stack *sw, int primary, double capacity_bytes,
                        const struct eval_result *res, double *total_bytes, double *cap_bytes);
size_t eval_capacity_reason(const struct hw_system *sys, const struct sw_stack *sw, const struct eval_result *res,
                            int d, double total, double cap, char *buf, size_t n);
void eval_capacity_suffix(const struct hw_system *sys, const struct sw_stack *sw, int d, double cap, char *buf,
                          size_t n);
/* Builds graphs and scratch, then eval_point: the one-off path used by dse eval. */
int eval_run(const struct eval_req *r, struct eval_result *res, struct dse_err *e);
void eval_result_free(struct eval_result *res);

#endif
