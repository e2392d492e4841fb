/* main.c -- command dispatch only. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "jsonu.h"
#include "plot.h"
#include "probe.h"
#include "store.h"
#include "config.h"
#include "gitversion.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv); /* NULL: planned, not built yet */
    const char *summary;
};

static const struct command commands[] = {
    {"eval", cmd_eval, "evaluate one workload on one device: per-operator breakdown and totals"},
    {"list", cmd_list, "list shipped hardware, models, sweeps or software stacks: dse list hw|models|sweeps|software"},
    {"sweep", cmd_sweep, "explore a design space: every point to SQLite, the Pareto front on screen and plotted"},
    {"plot", cmd_plot, "plot a sweep database with gnuplot: dse plot DB [--x M --y M] [-o FILE.png|.svg]"},
    {"serve", cmd_serve, "serve an LLM under load: arrivals, batching, TTFT/TPOT percentiles, goodput, capacity"},
    {"show", cmd_show, "a stored sweep point evaluated again, every metric: dse show DB POINT [--run ID] [--json]"},
    {"report", cmd_report, "a sweep run as one self-contained HTML page: dse report DB [--run ID] [--color AXIS] [-o FILE]"},
    {"compare", cmd_compare, "one workload on several hardware proposals side by side, with ratios"},
    {"validate", cmd_validate, "measure native kernels on this host and report the models' error"},
    {"calibrate", cmd_calibrate, "fit the host's efficiencies to measured kernels, report held-out error"},
    {"probe", cmd_probe, "detect and measure this host, write its hwdesc (hwdesc/host.json)"},
    {NULL, NULL, NULL},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: dse <command> [options]    dse help [command]    dse --version\n\ncommands:\n");
    for (const struct command *c = commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
}

static const struct command *find(const char *name)
{
    for (const struct command *c = commands; c->name; c++)
        if (!strcmp(c->name, name))
            return c;
    return NULL;
}

static int not_built(const struct command *c)
{
    fprintf(stderr, "dse: '%s' is not built yet: %s\n", c->name, c->summary);
    return 2;
}

int main(int argc, char **argv)
{
    store_init();
    if (argc < 2) {
        fprintf(stderr, "dse: missing command\n");
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("dse %s (git %s; built with", PACKAGE_VERSION, DSE_GIT_HASH);
        static const char *const built[] = {
#ifdef _OPENMP
            " OpenMP",
#endif
#ifdef HAVE_MPI
            " MPI",
#endif
#ifdef HAVE_CUDA
            " CUDA",
#endif
            NULL};
        for (int i = 0; built[i]; i++)
            fputs(built[i], stdout);
        printf("%s)\n", built[0] ? "" : " none of OpenMP, MPI, CUDA");
        return 0;
    }
    if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        const struct command *c = find(argv[2]);
        if (!c) {
            fprintf(stderr, "dse: unknown command '%s'\n", argv[2]);
            usage(stderr);
            return 2;
        }
        if (!c->run)
            return not_built(c);
        if (!strcmp(c->name, "list")) {
            printf("usage: dse list hw|models|sweeps|software [--json | --csv]\n  %s\n  --json: one JSON array of "
                   "the rows; --csv: the same rows as CSV with a header\n", c->summary);
            return 0;
        }
        char *hargv[3] = {argv[0], (char *)c->name, "--help"};
        return c->run(3, hargv);
    }
    struct dse_err e; /* a DSE_PATH dse would search only in part */
    dse_err_clear(&e);
    if (ju_data_path_check(&e)) {
        dse_err_print(stderr, &e);
        return 2;
    }
    const struct command *c = find(argv[1]);
    if (!c) {
        fprintf(stderr, "dse: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    return c->run ? c->run(argc, argv) : not_built(c);
}
