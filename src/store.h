/* store.h -- sweep results in SQLite (schema: docs/sweep-db.md). One writer (the command layer's
 * thread); batched transactions; WAL journal so readers (dse plot, sqlite3) never block it.
 * The store knows column names and values, not what they mean. */
#ifndef DSE_STORE_H
#define DSE_STORE_H

#include "err.h"

struct store;

struct store_col {
    const char *name;
    int numeric; /* REAL, else TEXT */
};

struct store_run_info {
    const char *name, *spec, *spec_hash, *version, *git, *host, *inputs_json, *objectives_json, *axes_json;
    int openmp, threads;
    long long points_total;
};

struct store_metric {
    const char *name, *unit, *direction, *description;
};

int store_open(const char *path, struct store **out, struct dse_err *e);
void store_close(struct store *s);
/* Registers the metric registry (metrics table) and makes sure points has these columns. */
int store_prepare(struct store *s, const struct store_col *axes, int n_axes, const struct store_metric *metrics,
                  int n_metrics, struct dse_err *e);
int store_begin_run(struct store *s, const struct store_run_info *ri, long long *run_id, struct dse_err *e);
/* The newest run with this spec hash that did not complete (status running or interrupted), or 0. */
long long store_find_resumable(struct store *s, const char *spec_hash);
int store_tx_begin(struct store *s, struct dse_err *e);
int store_tx_commit(struct store *s, struct dse_err *e);
/* One point: axis values as text (bound as REAL for numeric columns), metrics (NAN -> NULL). */
int store_insert(struct store *s, long long run_id, long long point, const char *const *axis_values,
                 const double *metrics, int feasible, const char *reason, struct dse_err *e);
/* Calls fn(ctx, point, feasible, values) for every stored point of the run, values being the named
 * columns (NAN for NULL). */
int store_load(struct store *s, long long run_id, const char *const *cols, int n_cols,
               void (*fn)(void *ctx, long long point, int feasible, const double *values), void *ctx,
               struct dse_err *e);
/* Sets rank (rank < 0: NULL) and pareto (rank == 0) of the given points, in one transaction. */
int store_set_ranks(struct store *s, long long run_id, const long long *points, const int *rank, long long n,
                    struct dse_err *e);
int store_finish_run(struct store *s, long long run_id, const char *status, double hypervolume,
                     struct dse_err *e);

#endif
