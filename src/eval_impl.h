/* eval_impl.h -- what eval.c shares with the files beside it (eval_par.c: a layout's effect on a point;
 * eval_train.c: the training step), not with the rest of dse: one op's recorded cost, a graph's memory
 * use, and the accounting they all add to a result with. */
#ifndef DSE_EVAL_IMPL_H
#define DSE_EVAL_IMPL_H

#include "eval.h"

struct eval_op_cost { /* one op's cost at the first decode step, reused by later steps */
    int dev, dynamic;
    double time_s, compute_s, memory_s, overhead_s, xfer_s, comm_s; /* comm_s: of xfer_s, collectives */
    double comm_total_s; /* the collectives' whole time, of which comm_s is what no overlap hides */
    double cycles_compute, cycles_stall, mapping_efficiency, sram_reads, sram_writes, dram_reads, dram_writes;
    double e_compute, e_memory, e_link, main_bytes, utilization;
    double e_active; /* the device's active power x the time its kernel runs (power.active_W) */
    enum bound bound;
    enum prec cprec;
};

/* Memory use of one graph per device: weights and KV of the ops placed there; activations. */
struct usage {
    double weights[HW_MAX_DEVICES], kv[HW_MAX_DEVICES], act;
};

/* Adds one op's cost, executed op->count times, to the totals and (want_ops) to row `row`: times x
 * res->tscale, the system's energy x res->escale, the device's own x res->dscale. */
int eval_account(const struct eval_req *r, struct eval_result *res, const struct wl_op *op, enum wl_phase ph, int row,
                 const struct eval_op_cost *c, struct dse_err *e);
/* The host and runtime time of one pass that the devices do not hide (eval.c). */
void eval_runtime_step(const struct eval_req *r, struct eval_result *res, double dev_s, double launches, double seqs);

/* eval_par.c: a pass on the pipeline (its micro-batches over pp stages; the model in eval_par.c): the
 * span of g's repeated layers (first and last op with count > 1, -1 without), which part of the graph
 * op i is in, each part's time factor f and device-energy share d from the parts' times t of one pass
 * (decode or not), the slowest stage's share of the layers; the sends between stages of `elems`
 * boundary activations, and the stage split of a graph's weights. */
enum { STAGE_BEFORE, STAGE_LAYERS, STAGE_AFTER, STAGE_COUNT };
void eval_layer_span(const struct wl_graph *g, int *first, int *last);
int eval_stage_of(int i, int first, int last);
void eval_pipe_factors(const struct par_layout *l, int64_t layers, int decode, const double t[STAGE_COUNT],
                       double f[STAGE_COUNT], double d[STAGE_COUNT]);
double eval_stage_share(const struct par_layout *l, int64_t layers);
void eval_stage_scale(struct eval_result *res, int part); /* tscale, dscale of an op of that part */
int64_t eval_layers(const struct eval_req *r);            /* the model's repeated layers (0: none) */
int eval_pipe_sends(const struct eval_req *r, struct eval_result *res, double elems, struct dse_err *e);
void eval_stage_split(const struct wl_graph *g, double *w_layers, double *w_before, double *w_after,
                      double *boundary);
/* eval_par.c: tensor-parallel communication overlap (a stack's tp_comm): the GEMMs beside tp all-reduce
 * op i (the one before: *prev or -1; those after: next[], their count returned, at most max), and the
 * time of an all-reduce of t left exposed by GEMMs of g_prev and g_next. */
int eval_tp_neighbours(const struct wl_graph *g, int i, int *prev, int *next, int max);
double eval_tp_exposed(double t, double g_prev, double g_next);

/* eval_train.c: what a training step's forward keeps (eval_graphs' act_* and fwd_flops), and the rest
 * of the step after its forward (recorded in s->contrib): backward, gradient synchronisation, optimizer,
 * memory per device; wshare is a pipeline stage's share of the weights. */
void eval_train_acts(const struct wl_graph *g, struct eval_graphs *eg);
int eval_train_rest(const struct eval_req *r, const struct eval_graphs *eg, struct eval_scratch *s,
                    struct eval_result *res, const struct usage *u, double wshare, struct dse_err *e);

#endif
