/* store.h -- sweep results in SQLite (schema: docs/sweep-db.md). One writer (the command layer's
 * thread); batched transactions; WAL journal so readers (dse plot, sqlite3) never block it.
 * The store knows column names and values, not what they mean.
 *
 * A dse database says so in its header: PRAGMA application_id = STORE_APPLICATION_ID and
 * user_version = STORE_SCHEMA_VERSION. store_open writes only to a new (absent or empty) database or
 * to one of dse's (its application_id, or from dse versions before it, the runs / metrics / points
 * tables with their columns: marked as dse's at the first write); any other file is refused, as an
 * input error, before anything is written to it. */
#ifndef DSE_STORE_H
#define DSE_STORE_H

#include "err.h"

struct store;

/* An axis of a run. A point stores no axis values: its index in the space is the mixed-radix number of
 * its axes' value indices (sweep.h), so value index = point / stride % n, and the run's axes and
 * values (tables run_axes, axis_values) give every point's design. A run's axes come in the spec's
 * order, the points view's column order. */
struct store_col {
    const char *name;
    int n;                   /* values */
    long long stride;        /* product of the value counts of the axes after it in the point index */
    const char *const *text; /* the n values as text */
    const double *num;       /* as numbers (numeric axes) */
    int numeric;             /* stored as numbers (INTEGER when every value is an integer), else TEXT */
    int integer;
};

struct store_run_info {
    const char *name, *spec, *spec_hash, *version, *git, *host, *inputs_json, *objectives_json, *axes_json;
    int openmp, threads;
    long long points_total;  /* evaluations planned */
    long long space;         /* points of the space: the run's key range */
    const struct store_col *axes;
    int n_axes;
};

struct store_metric {
    const char *name, *unit, *direction, *description;
};

#define STORE_APPLICATION_ID 0x44534531 /* "DSE1" in ASCII */
#define STORE_SCHEMA_VERSION 2

/* Process-wide SQLite settings, called once by main() before any database is opened. */
void store_init(void);
int store_open(const char *path, struct store **out, struct dse_err *e);
void store_close(struct store *s);
/* Registers the metric registry (metrics table) and makes sure point_rows has a column per stored metric
 * (stored[i] for metric i; NULL: every one). store_insert then binds those; a column an earlier run
 * added and this one does not store stays NULL in its rows. A database of schema version 1 is
 * migrated here, in the same transaction (docs/sweep-db.md). */
int store_prepare(struct store *s, const struct store_metric *metrics, int n_metrics, const unsigned char *stored,
                  struct dse_err *e);
/* A new run: its runs row, a key range of ri->space points, its axes and their values. */
int store_begin_run(struct store *s, const struct store_run_info *ri, long long *run_id, struct dse_err *e);
/* A run that did not complete, as it was started. */
struct store_resumable {
    long long id;            /* 0: none */
    char spec_hash[32];      /* runs.spec_hash */
    char version[64], git[64];
    char *inputs_json;       /* runs.inputs (malloc'd): input file path -> hash */
    int v1;                  /* written in schema version 1: its rows take no new points */
};
/* The newest run of the sweep named name that did not complete (status running or interrupted), into
 * r (r->id = 0 when there is none); reads only. store_resumable_free releases it. */
int store_find_resumable(struct store *s, const char *name, struct store_resumable *r, struct dse_err *e);
void store_resumable_free(struct store_resumable *r);
int store_tx_begin(struct store *s, struct dse_err *e);
int store_tx_commit(struct store *s, struct dse_err *e);
/* One point: metrics (all n_metrics of store_prepare; the stored ones are bound, NAN -> NULL). Points are
 * written several at a time: reason must stay valid until store_tx_commit, which writes the rest
 * (and reports an insert's failure if this call did not). */
int store_insert(struct store *s, long long run_id, long long point, const double *metrics, int feasible,
                 const char *reason, struct dse_err *e);
/* Calls fn(ctx, point, feasible, reason, values) for every stored point of the run, values being the
 * named columns (NAN for NULL), reason NULL for a feasible point. */
int store_load(struct store *s, long long run_id, const char *const *cols, int n_cols,
               void (*fn)(void *ctx, long long point, int feasible, const char *reason, const double *values),
               void *ctx, struct dse_err *e);
/* Sets rank (rank < 0: NULL) and pareto (rank == 0) of the given points, in one transaction; complete:
 * points are every feasible point of the run (a point left out has no rank then, also between two). */
int store_set_ranks(struct store *s, long long run_id, const long long *points, const int *rank, long long n,
                    int complete, struct dse_err *e);
int store_finish_run(struct store *s, long long run_id, const char *status, double hypervolume,
                     struct dse_err *e);

/* ---- reading (dse show, dse report, dse plot) ---- */
/* Opens path read-only: a dse database, also one of an earlier dse; anything else (no such file, not
 * SQLite or damaged, another program's, no tables) is DSE_EINPUT, and the file is never altered. Reads run in one
 * transaction, so counts and rows agree even while a sweep writes. */
int store_open_read(const char *path, struct store **out, struct dse_err *e);
/* A row of runs (docs/sweep-db.md): every string malloc'd and never NULL ("" for NULL), hypervolume
 * NAN for NULL. */
struct store_run {
    long long id, points_total;
    int openmp, threads;
    double hypervolume;
    char *name, *spec, *spec_hash, *version, *git, *host, *started, *finished, *status, *inputs, *objectives, *axes;
};
/* Run run_id (<= 0: the newest) into r; r->id = 0 when there is none. store_run_free releases it. */
int store_read_run(struct store *s, long long run_id, struct store_run *r, struct dse_err *e);
void store_run_free(struct store_run *r);
/* The run's points: all, the feasible ones, those on the front. Counts that contradict the run's row
 * (more points than planned, a front without feasible points, a hypervolume without a front, a complete
 * run with feasible points but no front) are a damaged database: DSE_EINPUT, saying which. */
int store_count(struct store *s, const struct store_run *run, long long *n, long long *feasible, long long *pareto,
                struct dse_err *e);
/* fn(ctx, reason, n) once per distinct reason of the run's infeasible points, with how many have it. */
int store_reasons(struct store *s, long long run_id, void (*fn)(void *ctx, const char *reason, long long n), void *ctx,
                  struct dse_err *e);
/* fn(ctx, point, pareto, num, txt) for every feasible point of the run in point order (all_num: only
 * those with a value in every num column): num the values of the n_num columns (NAN for NULL, text or
 * a non-finite number), txt the n_txt columns as text ("" for NULL); at most 64 each. */
int store_scan_feasible(struct store *s, long long run_id, const char *const *num, int n_num, int all_num,
                        const char *const *txt, int n_txt,
                        void (*fn)(void *ctx, long long point, int pareto, const double *num, const char *const *txt),
                        void *ctx, struct dse_err *e);
/* The run's feasible points with a value (not NULL) in every column of cols into *n_all (all of them
 * when n_cols is 0), and, when present is not NULL, those with a value in cols[i] into present[i]. */
int store_count_present(struct store *s, long long run_id, const char *const *cols, int n_cols, long long *n_all,
                        long long *present, struct dse_err *e);
/* fn(ctx, name) for every column of table, in table order (none when there is no such table). */
int store_columns(struct store *s, const char *table, void (*fn)(void *ctx, const char *name), void *ctx,
                  struct dse_err *e);
/* fn(ctx, m) for every row of the metrics table (the strings "" for NULL, valid during the call). */
int store_metrics(struct store *s, void (*fn)(void *ctx, const struct store_metric *m), void *ctx,
                  struct dse_err *e);
/* fn(ctx, id, name) for every run, in id order (name "" for NULL). */
int store_runs(struct store *s, void (*fn)(void *ctx, long long id, const char *name), void *ctx,
               struct dse_err *e);

/* dse validate's results (docs/sweep-db.md, "Validation tables"): a run of a suite and each of its
 * cases, appended to the validation tables of path (created when absent) in one transaction. A case's
 * energy is stored only when measured (measured_mJ > 0). */
struct store_vrun {
    const char *hw, *suite, *fidelity, *environment;
    int n_kernels;
    double mape_pct, within10_pct, within20_pct;
};
struct store_vcase {
    const char *kernel, *shape, *precision, *device;
    double measured_ms, predicted_ms, spread_pct, measured_mJ, predicted_mJ;
    int runs, flagged;
};
int store_validation(const char *path, const struct store_vrun *r, const struct store_vcase *c, int n,
                     struct dse_err *e);

#endif
