/* cli.h -- the command layer: one function per command, plus the small helpers they share
 * (option parsing, finding shipped data files). Only this layer prints to stdout. */
#ifndef DSE_CLI_H
#define DSE_CLI_H

#include "err.h"
#include "model.h"
#include "store.h"
#include "metric.h"
#include "sweep.h"

struct cli_opt {
    const char *name; /* long name without "--" */
    int has_arg;
    const char *help;
    const char *value; /* set by cli_parse: the argument, or "1" for flags */
};

/* Parses argv[first..argc) into opts (NULL-name terminated); positional arguments go to pos. */
int cli_parse(int argc, char **argv, int first, struct cli_opt *opts, const char **pos, int max_pos, int *n_pos,
              const char *cmd, struct dse_err *e);
const char *cli_get(const struct cli_opt *opts, const char *name);
/* DSE_EINPUT when the comma-separated list s of option opt is empty or has an empty item ("a,,b",
 * ",a", "a,"): strtok would skip it, and the user meant something by it. */
int cli_list_check(const char *opt, const char *s, struct dse_err *e);
/* Parses a whole positive integer option value. */
int cli_int(const char *opt, const char *s, long long min, long long max, long long *out, struct dse_err *e);
/* Resolves a data file given to option opt: an existing path as given, else DIR/NAME or DIR/NAME.ext
 * (exts: NULL-terminated) under the current directory, else under the installed data directory. */
int cli_resolve(const char *opt, const char *dir, const char *name, const char *const *exts, char *out, unsigned n,
                struct dse_err *e);
/* The data directory for listings: ./DIR when present, else the installed one. */
void cli_data_dir(const char *dir, char *out, unsigned n);
void cli_print_options(const struct cli_opt *opts);
/* Short forms become long ones for cli_parse (dse plot, dse report): -o FILE, -oFILE, -h; args->av[i]
 * gets argv[i] or its long form. Values of options are left alone (--x -o is the value "-o"); any other
 * "-x" is an unknown option of cmd. cli_args_free releases args (also after an error). */
struct cli_args {
    char **av, **owned;
    int n;
};
int cli_short_opts(int argc, char **argv, const struct cli_opt *opts, const char *cmd, struct cli_args *args,
                   struct dse_err *e);
void cli_args_free(struct cli_args *args);
struct wl_model;
struct eval_req;
/* Reads --batch, --phase, --prompt and --generate for workload m into r, refusing options that do
 * not apply to it. */
/* --dim NAME=N[,NAME=N] and --unknown-ops error|memory (ONNX models) into lo; absent options: none. */
struct wl_load_opt;
int cli_load_opt(const struct cli_opt *opts, struct wl_load_opt *lo, struct dse_err *e);
int cli_workload_opts(const struct cli_opt *opts, const struct wl_model *m, struct eval_req *r, struct dse_err *e);

struct hw_system;
/* Loads a hwdesc JSON, or a SCALE-Sim .cfg as a one-array system. */
int cli_load_hw(const char *path, struct hw_system *sys, struct dse_err *e);
/* --set hw:PATH=VALUE[,hw:PATH=VALUE...], the what-if every command that loads a hwdesc takes (eval,
 * serve, compare, validate): *sys reloaded from the hwdesc at hwp with those fields changed, as a
 * sweep's hw: axes change them (sweep_hw_set); nothing when opts has no --set. cli_load_hw_opts is
 * cli_load_hw, then that. */
#define CLI_OPT_SET                                                                                                    \
    {"set", 1, "what-if: hw:PATH=VALUE[,hw:PATH=VALUE] sets hwdesc fields as a sweep's hw: axes do (e.g. "          \
               "hw:devices.gpu.memory.hbm3.bandwidth_GBps=4000); the header says what was set", NULL}
int cli_set_hw(const struct cli_opt *opts, const char *hwp, struct hw_system *sys, struct dse_err *e);
/* The cost assumptions' options (cost.h), shared by eval, serve and sweep. */
#define CLI_OPT_COST                                                                                                   \
    {"usd-per-kwh", 1, "cost: electricity price in USD/kWh (default 0.10)", NULL},                                    \
        {"pue", 1, "cost: power usage effectiveness, facility / IT energy, >= 1 (default 1.0: the IT load alone)", NULL}, \
        {"amortize-years", 1, "cost: years over which a purchase price is spread (default 3)", NULL},                  \
        {"utilization", 1, "cost: share of the time the system runs this work, (0, 1] (default 1); it idles, paid for, " \
                           "the rest", NULL},                                                                          \
        {"hosting-usd-per-hour", 1, "cost: hosting per device-hour beyond electricity (default 0)", NULL}
/* The thermal model's conditions (hwdesc thermal; thermal.h): eval takes all three, serve the last two
 * (its run's length is simulated). */
#define CLI_OPT_THERMAL_COND                                                                                           \
    {"ambient", 1, "thermal: ambient temperature in degC (default: the hwdesc's, 25)", NULL},                        \
        {"cooling", 1, "thermal: the cooling in use, one of the hwdesc's (e.g. passive, fan)", NULL}
#define CLI_OPT_THERMAL                                                                                                \
    {"duration", 1, "thermal: seconds of the run from a cold start: burst and sustained throughput, time to throttle, "  \
                    "steady temperature (needs a hwdesc thermal model)", NULL},                                       \
        CLI_OPT_THERMAL_COND
/* Sets sys's thermal conditions from --duration, --ambient and --cooling; DSE_EINPUT naming the option
 * (a system without a thermal model, an unknown cooling; with need_duration, --ambient or --cooling
 * without --duration). */
int cli_thermal(const struct cli_opt *opts, struct hw_system *sys, int need_duration, struct dse_err *e);
struct cost_cfg;
/* *c: base (NULL: cost_default) with each cost option given set; DSE_EINPUT naming the option. */
int cli_cost(const struct cli_opt *opts, const struct cost_cfg *base, struct cost_cfg *c, struct dse_err *e);
int cli_load_hw_opts(const struct cli_opt *opts, const char *path, struct hw_system *sys, struct dse_err *e);
/* Prints "what-if: --set TEXT" on its own line when opts has a --set. */
void cli_print_whatif(const struct cli_opt *opts);
/* Parses --fidelity analytical|cycle (enum fidelity of model.h). */
int cli_fidelity(const char *s, enum fidelity *out, struct dse_err *e);

struct cJSON;
/* Today's UTC date as YYYY-MM-DD (buf of at least 11 bytes): what calibrations are stamped with. */
void cli_today(char *buf, unsigned n);
/* Reads the hwdesc at path and finds device `name` in its "devices": *root (the caller frees it with
 * cJSON_Delete) and *dev within it; DSE_EINPUT naming the file when there is no such device. */
int cli_hwdesc_device(const char *path, const char *name, struct cJSON **root, struct cJSON **dev,
                      struct dse_err *e);
/* Writes root as JSON in the shipped files' layout (two-space indents, "key": value) to path through a
 * temporary file renamed into place, so a failure leaves path as it was; of kind CLI_JSON_HWDESC
 * (CLI_JSON_STACK) the temporary must load as a hwdesc (a software stack file) first. root is deleted. */
enum { CLI_JSON_ANY, CLI_JSON_HWDESC, CLI_JSON_STACK };
/* Prints o on stdout (indented) and deletes it. */
void cli_print_json(struct cJSON *o);
int cli_write_json(struct cJSON *root, const char *path, int kind, struct dse_err *e);

struct eval_req;
/* A design point's system, workload, device (--device or --placement) and precision from --hw,
 * --workload and their options, into r (cleared first): *sys is malloc'd (the caller frees it, also on
 * an error), *model loaded on success only; hwp receives the hwdesc's path. cmd names the command in
 * messages. */
int cli_point_open(const struct cli_opt *opts, const char *cmd, char *hwp, size_t hwp_n, struct hw_system **sys,
                   struct wl_model *model, struct eval_req *r, struct dse_err *e);
/* --tp, --dp, --pp, --cp, --microbatches, --ep and --moe-imbalance into r->layout (not completed). */
int cli_point_layout(const struct cli_opt *opts, struct eval_req *r, struct dse_err *e);

/* Infeasibility reasons counted by kind: the text up to its first digit, so that "needs 2.47 GB ..." and
 * "needs 3.1 GB ..." are one kind; each kind keeps its first reason as the example and whether its
 * reasons vary. Kinds beyond CLI_WHY_KINDS are counted in other. */
#define CLI_WHY_KINDS 32
struct cli_why {
    struct cli_why_kind {
        char kind[64], example[200];
        long long n;
        int varied; /* the kind's reasons are not all the example */
    } k[CLI_WHY_KINDS];
    long long other;
};
/* Counts n points of reason into w. */
void cli_why_add(struct cli_why *w, const char *reason, long long n);
/* Sorts w's kinds, the commonest first (ties: the kind seen first). */
void cli_why_sort(struct cli_why *w);

/* A stored sweep run reopened to evaluate its points again (dse show, dse report): its spec loaded from
 * the database's copy (its paths resolving from the spec's own, the first of runs.inputs), and compared
 * with the inputs as they are now: the spec, every input file, dse itself. When something differs,
 * changed names it and prep is NULL (the points cannot be evaluated as they were); else prep holds
 * scratch for threads evaluation threads. An error (a spec or input that no longer loads) leaves rr
 * closed. */
struct cli_rerun {
    struct sweep_spec sp;
    int have_spec;
    struct sweep_prep *prep;
    int order[SW_MAX_AXES]; /* spec position (the database's column order) -> axis index */
    char changed[2048];
};
int cli_rerun_open(const struct store_run *run, int threads, struct cli_rerun *rr, struct dse_err *e);
void cli_rerun_close(struct cli_rerun *rr);

/* dse compare's table (cli_compare.c), which dse report shows for a front too: the metric columns that
 * apply to phase ph into cols, returning how many; a row's cell of metric m as dse compare prints it
 * ("n/a", the value, or "v (xR)", the ratio to first: the first row's totals, NULL in the first row);
 * its error_% cell ("-28..+29", "*" appended when the device is uncalibrated; "n/a": none). */
#define CLI_CMP_COLS 13
int cli_compare_columns(enum wl_phase ph, const struct metric **cols);
void cli_compare_cell(const struct metric *m, const struct eval_totals *t, const struct eval_totals *first, char *buf,
                      size_t n);
void cli_compare_errbar(const struct eval_result *res, int calibrated, char *buf, size_t n);

/* The published quality table (quality.h) a command reads: its --quality-table FILE, none with
 * "none", else validate/quality/published-quality.csv found as the error bars are (ql_resolve near
 * near_file); *qt stays empty (n 0) when there is none. A table that does not load is an input error. */
int cli_quality_table(const struct cli_opt *opts, const char *near_file, struct ql_table *qt, struct dse_err *e);
/* One line: q's loss in % and how it was reached (the fallback said as such). */
void cli_quality_note(const struct ql_table *qt, const struct ql_est *q, char *buf, size_t n);
/* The same as o's "quality" object: loss_pct, basis, fallback, flags, family, metric, rows, table, note. */
void cli_quality_json(struct cJSON *o, const struct ql_table *qt, const struct ql_est *q);

/* dse eval's operator rows (cli_eval.c), which dse report's breakdowns list too: the rows of res that took
 * time, most first (ties by name), into v (room for res->n_ops), returning how many; a row's phase as
 * printed (a training step's pass: forward, backward, step; else the workload's phase). */
int cli_ops_by_time(const struct eval_result *res, const struct eval_op **v);
const char *cli_op_phase(const struct eval_op *o);

/* dse report's page of run run_id (<= 0: the newest) of db (cli_report.c, report.h): coloured at first by
 * the axis color (NULL: system, when the run has one), written to out (NULL: results/<run name>.html),
 * whose path goes to written. Input errors (no such database or run, an unknown axis, an output that
 * cannot be written) write nothing. */
int cli_report(const char *db, long long run_id, const char *color, const char *out, char *written, size_t wn,
               struct dse_err *e);

int cmd_eval(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
/* dse validate --published, dse calibrate --published (cli_published.c), with the parsed options. */
int cli_validate_published(const struct cli_opt *opts);
int cli_calibrate_published(const struct cli_opt *opts);
/* dse validate --measured SOURCE (cli_measured.c). */
int cli_validate_measured(const struct cli_opt *opts);
int cli_calibrate_measured(const struct cli_opt *opts);

#endif
