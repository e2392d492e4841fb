/* cli_plot.c -- `dse plot`: a sweep run's Pareto front (or any two metrics) drawn from its database. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "outfile.h"
#include "plot.h"

static struct cli_opt plot_opts_proto[] = {
    {"run", 1, "run id in the database (default: the latest run)", NULL},
    {"x", 1, "metric or numeric axis across (with --y; default: the run's objectives)", NULL},
    {"y", 1, "metric or numeric axis up (with --x)", NULL},
    {"color", 1, "an axis (precision, batch, placement, ...) whose values colour and shape the points (default: system, when the run has several)", NULL},
    {"out", 1, "FILE.png or FILE.svg, also -o FILE (default: DB with .db replaced by -front.png)", NULL},
    {"help", 0, "this help", NULL},
    {NULL, 0, NULL, NULL},
};

static void usage(void)
{
    printf("usage: dse plot DB [--run ID] [--x METRIC --y METRIC] [--color AXIS] [-o|--out FILE.png|FILE.svg]\n\n"
           "Plots a sweep run from its database (results/NAME.db) with gnuplot: the feasible points faded, the\n"
           "Pareto front highlighted and joined by a line, axes labelled with units and the better direction.\n"
           "Two objectives give one plot, more give a matrix of pairwise plots; --x and --y plot any two\n"
           "metrics or numeric axes instead. Axes spanning more than 3 decades are drawn in log scale; above\n"
           "%d feasible points an evenly spaced sample is drawn, and the title says so.\n\noptions:\n",
           PLOT_MAX_CLOUD);
    cli_print_options(plot_opts_proto);
    printf("\nexit status: 0 written, 1 gnuplot missing or failing, 2 usage or input error\n");
}

int cmd_plot(int argc, char **argv)
{
    struct cli_opt opts[sizeof plot_opts_proto / sizeof plot_opts_proto[0]];
    memcpy(opts, plot_opts_proto, sizeof opts);
    struct dse_err e;
    const char *pos[1];
    int npos, rc;
    struct cli_args args = {0};
    char written[4096];
    dse_err_clear(&e);
    if ((rc = cli_short_opts(argc, argv, plot_opts_proto, "plot", &args, &e)) ||
        (rc = cli_parse(argc, args.av, 2, opts, pos, 1, &npos, "plot", &e)))
        goto out;
    if (cli_get(opts, "help")) {
        usage();
        goto out;
    }
    if (npos < 1) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "plot: missing DB (usage: dse plot DB [--run ID] [--x METRIC "
                         "--y METRIC] [-o FILE.png|FILE.svg]; see dse help plot)");
        goto out;
    }
    long long run = 0;
    if (cli_get(opts, "run") && (rc = cli_int("run", cli_get(opts, "run"), 1, LLONG_MAX, &run, &e)))
        goto out;
    if ((rc = plot_run(pos[0], run, cli_get(opts, "x"), cli_get(opts, "y"), cli_get(opts, "color"), cli_get(opts, "out"), written,
                       sizeof written, &e)))
        goto out;
    fprintf(out_file_is_stream(written) ? stderr : stdout, "wrote %s\n", written);
out:
    if (rc)
        dse_err_print(stderr, &e);
    cli_args_free(&args);
    return rc;
}
