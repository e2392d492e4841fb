/* plot.h -- plots of a sweep database (docs/sweep-db.md) through a gnuplot pipe, PNG or SVG.
 *
 * Reads the database read-only; writes one image per call to a temporary file beside the output and
 * renames it into place only when gnuplot succeeded, so a failed plot leaves nothing half-written.
 * Axis values are plotted in the units stored in the metrics table (the registry's units). */
#ifndef DSE_PLOT_H
#define DSE_PLOT_H

#include "err.h"

#define PLOT_MAX_CLOUD 50000 /* feasible points drawn; more are sampled evenly, and the title says so */
#define PLOT_MAX_OBJECTIVES 8 /* a matrix of more pairs than 8 objectives make is unreadable */

/* Plots run run_id of db_path (run_id <= 0: the latest run). The feasible cloud is coloured and shaped by
 * an axis (color: its name; NULL: the system axis when the run has one), with a legend; a front of at
 * most 12 points is labelled with each point's design (its axis values); an axis whose positive values
 * span more than 1.5 decades is logarithmic. With x and y (columns of the points view:
 * metrics or numeric axes) one scatter plot of y over x; with both NULL, the run's objectives: one plot
 * for two, a matrix of pairwise plots for more. out ends in .png or .svg; NULL means the DB path with
 * ".db" replaced by "-front.png". written (may be NULL) receives the path written.
 * Returns DSE_OK, DSE_EINPUT (no such DB, not a dse database, unknown run or metric, nothing feasible
 * to plot, bad output name) or DSE_ERUNTIME (gnuplot missing or failing, output not writable). */
int plot_run(const char *db_path, long long run_id, const char *x, const char *y, const char *color, const char *out,
             char *written, unsigned n, struct dse_err *e);

/* The log-scale rule of every sweep plot (dse plot, dse report): an axis is logarithmic when its values
 * are all positive (n_nonpos, the count of those <= 0, is 0) and span more than 1.5 decades (hi / lo >
 * 10^1.5), so that a range of small values is not squashed against the axis. */
int plot_log_axis(double lo, double hi, long long n_nonpos);

/* Predicted against measured times (dse validate): log-log, the identity line and the +-10 % band. */
int plot_pred_vs_meas(const double *measured_ms, const double *predicted_ms, int n, const char *title, const char *out,
                      struct dse_err *e);

/* Line plots of series (x[i], y[i]) in one chart, written as plot_run writes (dse serve's CDFs, timeline
 * and load curve): PLOT_LOGX / PLOT_LOGY log axes; a series with y2 on the right axis (y2label). */
#define PLOT_LOGX 1u
#define PLOT_LOGY 2u
struct plot_series {
    const char *name;
    const double *x, *y;
    int n, y2, points;
};
int plot_lines(const struct plot_series *s, int n, const char *title, const char *xlabel, const char *ylabel,
               const char *y2label, unsigned flags, const char *out, struct dse_err *e);

/* `dse plot DB [--run ID] [--x METRIC --y METRIC] [-o|--out FILE.png|FILE.svg]`; argv[1] is "plot".
 * Returns the process exit status: 0, 1 (gnuplot missing or failing) or 2 (usage or input error). */
int cmd_plot(int argc, char **argv);

#endif
