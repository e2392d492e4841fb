/* metric.h -- the one registry of metrics: name (with its unit), unit, direction, meaning.
 * The CLI's JSON keys and tables, sweep objectives, SQLite columns and plot axes all come from here. */
#ifndef DSE_METRIC_H
#define DSE_METRIC_H

#include "eval.h"

enum metric_dir { DIR_MIN, DIR_MAX, DIR_NONE };

/* metric.phases bit of the metrics a serving run defines (a sweep workload's "serving" block: serve.h);
 * they apply to no single phase, and a serving point defines only them and those also carrying it. */
#define METRIC_SERVE (1u << 31)
/* The most metrics the registry may hold: the size of every array indexed by a metric (a sweep row's
 * values, what a spec stores, what travels between MPI ranks: two 64-bit masks). */
#define METRIC_MAX 96

struct metric {
    const char *name; /* e.g. "latency_ms" */
    const char *unit; /* "ms" */
    enum metric_dir dir;
    const char *what;
    size_t offset;    /* of the double in struct eval_totals */
    double scale;     /* value = field x scale */
    unsigned phases;  /* bit (1 << wl_phase) where the metric is defined; 0 = always */
    int time_exp;     /* the metric scales as time^time_exp (1: a latency or a cost of time, -1: a rate,
                         0: neither), for ranking on the pessimistic end of the error bars */
};

extern const struct metric metric_table[];
extern const int metric_count;

/* By name, or by an earlier name of an entry (accuracy_proxy: quality_loss_pct); NULL when unknown. */
const struct metric *metric_find(const char *name);
double metric_value(const struct metric *m, const struct eval_totals *t);
int metric_applies(const struct metric *m, enum wl_phase ph);
/* Whether m is defined for a point of a serving workload (serving != 0) or of phase ph. */
int metric_applies_to(const struct metric *m, enum wl_phase ph, int serving);
/* A point's value of m at the pessimistic end of its error bars (errbar.h: eb_pessimistic), from its
 * expected_error_low_pct; the value itself when m does not scale with time or there is no interval. */
double metric_pessimistic(const struct metric *m, double v, double low_pct);

#endif
