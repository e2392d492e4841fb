/* report.h -- dse report's page: one self-contained HTML file (inline CSS, SVG and JavaScript; nothing
 * fetched, no fonts) of one sweep run: its header and spec, the Pareto front as an interactive scatter
 * over the dominated cloud, the infeasibility reasons, per-operator breakdowns with rooflines and
 * dse compare's table of the front (docs/report.md).
 *
 * report.c lays out what it is given and computes no model number: every figure is one the database
 * stores or the caller evaluated again (cli_report.c). Every string is escaped for where it goes (HTML
 * text, or the page's JSON, where '<' is written \u003c so no text can close the script). */
#ifndef DSE_REPORT_H
#define DSE_REPORT_H

#include "err.h"

/* The dominated cloud is thinned to at most one point per cell of a grid over the objectives (each cut
 * in REPORT_GRID equal steps, of log10 where the axis is logarithmic: about 3 pixels of the plot) per
 * class of the initial colour axis; the grid coarsens (x 3/4) until at most REPORT_MAX_CLOUD remain. */
#define REPORT_GRID 256
#define REPORT_MAX_CLOUD 30000

struct report_axis {
    const char *name;
    int n;                     /* distinct values */
    const char *const *values; /* as stored */
};

struct report_obj {
    const char *name, *unit;
    int maximize;
};

/* The feasible points: a value index per axis (n x n_axes), the objectives as stored (n x n_obj) and
 * expected_error_low_pct / _high_pct (n x 2, NAN: no error bars). */
struct report_pts {
    long long n;
    const long long *point;
    const unsigned char *front; /* pareto = 1 */
    const unsigned short *code;
    const double *obj, *err;
};

struct report_reason {
    const char *example;
    long long n;
    int varied; /* the kind's reasons differ in their numbers: the example is one of them */
};

/* One operator as dse eval lists it (times in s, energy in J, bytes of main memory). */
struct report_op {
    const char *name, *phase, *device, *bound;
    double count, time_s, flops, bytes, energy_J, util;
};

/* A device's roofs: its GEMM peak at the precision its operators computed in, and its main memory. */
struct report_roof {
    const char *device, *prec;
    double peak_flops, bw_Bps;
};

/* A front point evaluated again. */
struct report_bd {
    long long point;
    double latency_s, err_low_pct, err_high_pct; /* NAN: no error bars */
    double devices;                              /* of the layout: achieved FLOP/s are per device */
    const char *note;                            /* a serving point, throttling, ...; NULL: none */
    int n_op;
    const struct report_op *op;
    int n_roof;
    const struct report_roof *roof;
};

/* A table already formatted (dse compare's cells): n_row x n_col cells. */
struct report_table {
    const char *title, *note;
    int n_col, n_row;
    const char *const *col, *const *cell;
};

struct report_in {
    const char *db, *name, *description, *version, *git, *host, *started, *finished, *status, *spec;
    long long run_id, points_total, n_points, n_feasible, n_front;
    double hypervolume; /* NAN: none */
    int n_axes;
    const struct report_axis *axis;
    int color; /* the initial colouring (and the thinning's classes): an axis index, -1: none */
    int n_obj;
    const struct report_obj *obj;
    struct report_pts pts;
    int n_reason; /* the commonest kinds first */
    const struct report_reason *reason;
    long long reason_other; /* infeasible points of the kinds not listed */
    const char *bd_note;    /* why there are no breakdowns (the inputs changed), NULL when there are */
    long long bd_limit;     /* front points evaluated again at most */
    int n_bd;
    const struct report_bd *bd;
    int n_table;
    const struct report_table *table;
};

/* Writes the page of in to out (outfile.h: a failure leaves nothing; a FIFO or /dev/stdout is written through). */
int report_write(const struct report_in *in, const char *out, struct dse_err *e);

#endif
