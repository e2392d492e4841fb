/* eval_layout.h -- searching the parallel layouts of a system for the best by one metric: every
 * tp x pp x dp = N split of its topology's devices (dp filling what tp x pp leave) and micro-batch
 * counts: with pipeline stages in inference 1, pp, 2 pp, 4 pp and 8 pp that divide the batch; in a
 * training step the replica's share of the global batch in micro-batches of 1, 2, 4 or 8 sequences.
 * cp (a transformer's sequence, not a decode step) and, for a mixture of experts, ep take the powers of
 * two that divide what the other dimensions leave. Each candidate is a
 * whole evaluation (eval_point) on graphs built for its tp shard and micro-batch; a layout the model or
 * topology refuses (tp not dividing the heads, a group straddling a level) is counted, not ranked. */
#ifndef DSE_EVAL_LAYOUT_H
#define DSE_EVAL_LAYOUT_H

#include "metric.h"

struct layout_choice {
    struct par_layout layout;
    double value;            /* the metric, in its registry unit */
    double latency_s, peak_memory_bytes;
};

struct layout_stats {
    long long searched; /* candidates considered */
    long long refused;  /* rejected by the layout rules before evaluation */
    long long infeasible; /* evaluated, infeasible (memory, precision) or without the metric */
    int kept;           /* entries of best[] filled */
};

/* Searches r's system (r->layout is ignored) for the best layouts by m (its registry direction),
 * writing at most cap of them into best[], best first. */
int eval_layout_search(const struct eval_req *r, const struct metric *m, struct layout_choice *best, int cap,
                       struct layout_stats *st, struct dse_err *e);

#endif
