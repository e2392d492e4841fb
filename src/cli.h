/* cli.h -- the command layer: one function per command, plus the small helpers they share
 * (option parsing, finding shipped data files). Only this layer prints to stdout. */
#ifndef DSE_CLI_H
#define DSE_CLI_H

#include "err.h"
#include "model.h"

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
/* Parses a whole positive integer option value. */
int cli_int(const char *opt, const char *s, long long min, long long max, long long *out, struct dse_err *e);
/* Resolves a data file given to option opt: an existing path as given, else DIR/NAME or DIR/NAME.ext
 * (exts: NULL-terminated) under the current directory, else under the installed data directory. */
int cli_resolve(const char *opt, const char *dir, const char *name, const char *const *exts, char *out, unsigned n,
                struct dse_err *e);
/* The data directory for listings: ./DIR when present, else the installed one. */
void cli_data_dir(const char *dir, char *out, unsigned n);
void cli_print_options(const struct cli_opt *opts);
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
 * temporary file renamed into place, so a failure leaves path as it was; with is_hwdesc the
 * temporary must load as a hwdesc first. root is deleted. */
/* Prints o on stdout (indented) and deletes it. */
void cli_print_json(struct cJSON *o);
int cli_write_json(struct cJSON *root, const char *path, int is_hwdesc, struct dse_err *e);

struct eval_req;
/* A design point's system, workload, device (--device or --placement) and precision from --hw,
 * --workload and their options, into r (cleared first): *sys is malloc'd (the caller frees it, also on
 * an error), *model loaded on success only; hwp receives the hwdesc's path. cmd names the command in
 * messages. */
int cli_point_open(const struct cli_opt *opts, const char *cmd, char *hwp, size_t hwp_n, struct hw_system **sys,
                   struct wl_model *model, struct eval_req *r, struct dse_err *e);
/* --tp, --dp, --pp, --cp, --microbatches, --ep and --moe-imbalance into r->layout (not completed). */
int cli_point_layout(const struct cli_opt *opts, struct eval_req *r, struct dse_err *e);

int cmd_eval(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
/* dse validate --published, dse calibrate --published (cli_published.c), with the parsed options. */
int cli_validate_published(const struct cli_opt *opts);
int cli_calibrate_published(const struct cli_opt *opts);

#endif
