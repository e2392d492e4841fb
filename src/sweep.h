/* sweep.h -- design-space sweeps: the spec (sweeps/NAME.json, documented in sweeps/README.md), the
 * space of axes, evaluation of every point in parallel, and the Pareto front of the feasible ones.
 *
 * Everything is parsed and prepared before the parallel region: the systems (one loaded variant per
 * system x hw-field values x power cap), the workloads, the graphs for each workload x batch, the
 * placements per system. Evaluation threads share these read-only and keep their own scratch. A
 * point's results depend on the point only, so 1 and N threads give identical results. */
#ifndef DSE_SWEEP_H
#define DSE_SWEEP_H

#include <signal.h>

#include "errbar.h"
#include "cost.h"
#include "eval.h"
#include "metric.h"
#include "serve.h"

#define SW_MAX_AXES 16
#define SW_MAX_VALUES 1024
#define SW_MAX_SYSTEMS 16
#define SW_HW_PATH_LEN 112 /* a hw: axis's field path (devices.gpu.clock.boost_MHz), its NUL included */
#define SW_MAX_WORKLOADS 8
/* Above this many feasible points of a workload, the sweep finds only the front (pareto_front, O(n log n))
 * and leaves the other points' rank NULL: full ranking of 3 objectives is O(n log^2 n) over all fronts. */
#define SW_RANK_ALL_MAX 2000000
#define SW_MAX_OBJ 8
#define SW_MAX_CONSTRAINTS 16
/* Evaluations a run may plan (grid points, random samples, NSGA-II population x (generations + 1))
 * unless --limit raises it: the command keeps 8 + 1 + 8 x objectives bytes per point in memory. */
#define SW_DEFAULT_GRID_LIMIT 5000000LL
/* Point indices are SQLite 64-bit integers and mixed-radix sums in long long: a space may hold at
 * most 2^62 points, so index arithmetic (k0 + block, pt x n + i) never nears 2^63. */
#define SW_MAX_POINTS (1LL << 62)
/* Hardware variants (systems x hw: value combinations x power caps), each a loaded struct
 * hw_system of about 70 KB: 4096 of them are about 290 MB. */
#define SW_MAX_VARIANTS 4096
/* NSGA-II may plan at most this many evaluations per point of the space: beyond it a grid, which
 * evaluates each point once, is cheaper and exact. */
#define SW_NSGA2_EVALS_PER_POINT 10

enum sw_axis_kind { AX_SYSTEM, AX_WORKLOAD, AX_PRECISION, AX_BATCH, AX_PLACEMENT, AX_MEMORY, AX_POWER, AX_HW, AX_FIDELITY,
                    AX_SOFTWARE, AX_TP, AX_PP, AX_DP, AX_MICRO, AX_RECOMPUTE, AX_EP, AX_CP,
                    AX_SCHED, AX_MBT, AX_BLOCK, AX_RATE, /* these four: a serving workload's options */
                    AX_PROMPT, AX_GENERATE };            /* every workload's prompt and generated tokens */
/* Bytes of built graphs (struct eval_graphs) a sweep keeps (sweep.c, the graph cache): more only while
 * one chunk of points needs them; the least recently needed are freed first. */
#define SW_GRAPH_BUDGET ((size_t)256 << 20)
#define SW_MAX_STACKS 16 /* software stacks a spec reaches (axis values, "software", devices' defaults) */
enum sw_method { SEARCH_GRID, SEARCH_RANDOM, SEARCH_NSGA2 };

struct sw_value {
    char s[96];  /* the value as text (numbers formatted with %.17g) */
    double num;  /* the number, for numeric axes */
    int is_num;
    int ref;     /* AX_SOFTWARE: its index in sweep_spec.stack */
};

struct sw_axis {
    char name[128];
    enum sw_axis_kind kind;
    int n;
    struct sw_value *v;
    char path[SW_HW_PATH_LEN]; /* AX_HW: the hwdesc path after "hw:" */
    int numeric;       /* every value is a number (REAL column) */
    int spec_pos;      /* position in the spec: SQLite column order */
};

/* A workload's "serving" block (sweeps/README.md): each point is a serving run (serve.h) of these
 * requests, drawn once at rate 1 and their arrivals divided by the point's rate. */
struct sw_serving {
    int on;
    struct serve_cfg cfg;     /* scheduler, max batch, token budget, block (0: the scheduler's default), SLOs */
    double rate, mem_util;    /* mem_util 0: the stack's memory.utilization, else 1 (the reserve alone) */
    struct serve_req *unit;   /* malloc'd */
    int64_t n, longest;       /* requests (less those skipped as too long), the longest prompt */
    enum serve_too_long too_long_mode; /* "too_long": requests longer than the model's context */
    int64_t too_long;         /* how many were (skipped or truncated) */
};

struct sw_workload {
    char path[DSE_PATH_LEN];
    unsigned long long hash; /* FNV-1a 64 of the file */
    struct wl_model model;
    enum wl_phase phase;
    int64_t prompt, gen;
    struct train_cfg train; /* phase train: "optimizer", "zero", "recompute" of the workload object */
    struct sw_serving serving;
};

struct sw_objective {
    const struct metric *m;
    int maximize;
    int has_ref;  /* the spec fixes the hypervolume's reference point (every objective then has one) */
    double ref;   /* in the metric's units */
};

struct sw_constraint {
    const struct metric *m;
    int le; /* 1: metric <= bound, 0: metric >= bound */
    double bound;
};

struct sweep_spec {
    char name[64], description[256], path[DSE_PATH_LEN];
    char *text;           /* the spec file as read */
    unsigned long long hash; /* FNV-1a 64 of text */
    int n_systems;
    char system_path[SW_MAX_SYSTEMS][DSE_PATH_LEN];
    char *system_text[SW_MAX_SYSTEMS];
    unsigned long long system_hash[SW_MAX_SYSTEMS];
    int n_workloads;
    struct sw_workload wl[SW_MAX_WORKLOADS];
    /* Axes in evaluation order: the memory axis, when present, last (it only changes feasibility,
     * so each evaluation serves all its values). spec_pos keeps the spec's order for output. */
    int n_axes;
    struct sw_axis axes[SW_MAX_AXES];
    int n_obj;
    struct sw_objective obj[SW_MAX_OBJ];
    int n_con;
    struct sw_constraint con[SW_MAX_CONSTRAINTS];
    enum fidelity fidelity; /* when there is no fidelity axis */
    /* Software stacks, loaded with the spec: a software axis's values, the spec's "software" (sw_fixed,
     * -1 when absent) and every device's default (dev_stack[system][device], -1: none, the built-in). */
    int n_stacks;
    struct sw_stack stack[SW_MAX_STACKS];
    unsigned long long stack_hash[SW_MAX_STACKS]; /* FNV-1a 64 of each stack's file (0: built-in) */
    int sw_fixed;
    int dev_stack[SW_MAX_SYSTEMS][HW_MAX_DEVICES];
    /* Error bars (errbar.h): the spec's "error_bars" file, else validate/published/error-bars.json
     * found as software/ is; have_errbars 0 when there is none or the spec says "none". With
     * "rank": "pessimistic" objectives that scale with time are ranked at the interval's slow end. */
    struct eb_table errbars;
    struct cost_cfg cost; /* the spec's "cost" (cost.h), the CLI's options over it; cost_default where silent */
    int have_errbars;
    unsigned long long errbars_hash;
    int pessimistic;
    /* The published quality table (quality.h) behind quality_loss_pct: the spec's "quality_table", else
     * the shipped one found as error-bars.json is; have_quality 0 when there is none or "none". Its
     * path and hash (quality.hash) are recorded with the run's inputs. */
    struct ql_table quality;
    int have_quality;
    int err_low_m, err_high_m; /* registry indices of expected_error_low_pct and _high_pct */
    /* The metrics each point stores (by registry index): objectives, constraints, error bars and the
     * spec's "store" list ("all": every one); the others are recomputed on demand (dse show). */
    unsigned char stored[METRIC_MAX];
    int n_stored;
    enum sw_method method;
    long long samples, population, generations;
    unsigned long seed;
    long long points;     /* size of the space (the product of the axes' value counts), <= SW_MAX_POINTS */
    long long n_variants; /* systems x hw: value combinations x power caps, <= SW_MAX_VARIANTS */
};

/* Prepared, read-only state shared by evaluation threads. */
struct sweep_prep;

/* The result of one point. */
struct sw_row {
    long long point;
    int feasible;
    char reason[200];
    double metric[METRIC_MAX]; /* by registry index; NAN where not applicable */
};

/* Reads and checks a spec: every field, duplicates (a system, workload, axis value, axis or objective
 * given twice is an input error naming both), and the sizes (space, variants, NSGA-II plan) before
 * anything is allocated by them. */
int sweep_spec_load(const char *path, struct sweep_spec *sp, struct dse_err *e);
/* The same from text[0..len) (need not be NUL-terminated) named path (for messages, and paths in it
 * resolve against path's location as for a file). With SW_LOAD_SHIPPED_ONLY, systems and workloads
 * must be shipped names (NAME, hwdesc/NAME.json, models/NAME.ext) found under the current directory:
 * the fuzz target reads nothing else. */
#define SW_LOAD_SHIPPED_ONLY 1u
int sweep_spec_load_buf(const char *text, size_t len, const char *path, unsigned flags, struct sweep_spec *sp,
                        struct dse_err *e);
void sweep_spec_free(struct sweep_spec *sp);

/* Builds variants, graphs and placements. */
int sweep_prepare(const struct sweep_spec *sp, struct sweep_prep **out, struct dse_err *e);
void sweep_prep_free(struct sweep_prep *p);
const struct sweep_spec *sweep_prep_spec(const struct sweep_prep *p);
/* The expected quality loss of the precision axis's value prec_value on workload w (NULL without a
 * precision axis or out of range). */
const struct ql_est *sweep_prep_quality(const struct sweep_prep *p, int prec_value, int w);
/* System s of the spec: its first variant (the first values of its hw: axes, the first power cap). */
const struct hw_system *sweep_prep_system(const struct sweep_prep *p, int s);
/* Number of threads' scratch the prep holds; evaluation uses thread-local scratch by index. */
int sweep_scratch_init(struct sweep_prep *p, int threads, struct dse_err *e);

/* Builds the graphs the next points to evaluate need (outside a parallel region; sweep.c, "the graph
 * cache"): the grid keys (k0 + i) x n_mem, or the points pts[i], i < n, except where skip[i] (may be
 * NULL) is set. Returns how many of the n, from the first, are staged (fewer when their graphs would pass
 * SW_GRAPH_BUDGET; 1 at least), or -1 on a runtime error (e set). Evaluating a point not staged outside
 * a parallel region builds its graph then; inside one it is an error. */
long long sweep_stage_keys(struct sweep_prep *p, long long k0, long long n, const char *skip, struct dse_err *e);
long long sweep_stage_points(struct sweep_prep *p, const long long *pts, long long n, const char *skip,
                             struct dse_err *e);
/* The graph cache's budget in bytes (default SW_GRAPH_BUDGET): results do not depend on it (tests run
 * it at 1 byte: one point a chunk, a graph evicted at every other). */
void sweep_set_graph_budget(struct sweep_prep *p, size_t bytes);

/* Value index of axis a for a point (mixed radix, last axis fastest). */
int sweep_axis_index(const struct sweep_spec *sp, long long point, int a);
/* Evaluates all points sharing key (the point with memory index 0) and writes one row per memory
 * value into rows[0..n_mem); returns the count or -1 on a runtime error (e set). thread picks the
 * scratch. */
int sweep_eval_key(const struct sweep_prep *p, long long key_point, int thread, struct sw_row *rows,
                   struct dse_err *e);
/* Evaluates one point into *row (what random and NSGA-II need: the key's evaluation, and the
 * capacity check of this point's memory value only); returns 0, or -1 on a runtime error (e set). */
int sweep_eval_point(const struct sweep_prep *p, long long point, int thread, struct sw_row *row,
                     struct dse_err *e);
/* A point evaluated again with its per-operator rows (dse report's breakdowns): the system variant and
 * primary device it ran on, its precision and tier, whether it is a serving point (which has no rows),
 * and the evaluation in res (the caller's: zeroed before the first call, eval_result_free after the
 * last; its rows are reused from call to call). */
struct sweep_detail {
    const struct hw_system *sys;
    int dev;
    struct prec_cfg prec;
    enum fidelity fidelity;
    int serving;
    struct eval_result res;
};
/* sweep_eval_point, also filling d. A point made infeasible before evaluation (a placement or layout
 * it cannot use) leaves d->res without rows. */
int sweep_eval_detail(const struct sweep_prep *p, long long point, int thread, struct sw_row *row,
                      struct sweep_detail *d, struct dse_err *e);
/* Number of values of the memory axis (1 when absent). */
int sweep_mem_count(const struct sweep_spec *sp);

/* Objective vector of a row, minimized (maximized metrics negated). */
void sweep_objectives(const struct sweep_spec *sp, const struct sw_row *r, double *obj);

/* Where a run's results go (the command layer: database, screen). All calls come from one thread,
 * rows in a deterministic order whatever the thread count. */
struct sweep_sink {
    void *ctx;
    int (*rows)(void *ctx, const struct sw_row *rows, int n, struct dse_err *e);
    /* Resume: 1 when the point is already stored, with its feasibility and minimized objectives. */
    int (*stored)(void *ctx, long long point, int *feasible, double *obj);
    void (*progress)(void *ctx, long long done, long long total);
    volatile sig_atomic_t *stop; /* set asynchronously (Ctrl-C): the run ends after the current block */
};
/* Number of evaluations the spec's search plans (grid: the space; random: samples, at most the
 * space; nsga2: population x (generations + 1), at most SW_NSGA2_EVALS_PER_POINT x the space). */
long long sweep_planned(const struct sweep_spec *sp);
/* Runs the spec's search with `threads` OpenMP threads (sweep_scratch_init first) on this rank of d
 * (NULL: one process; dist.h). Every rank calls it with the same spec and stored points; rows reach
 * the sink of rank 0 only, and progress is reported by the sink of whoever has one. *stopped is set
 * when the stop flag (of any rank) ended it early. */
struct dist;
int sweep_run(struct sweep_prep *p, int threads, const struct dist *d, const struct sweep_sink *k, int *stopped,
              struct dse_err *e);

/* dse eval --set: the system of hwdesc text (read from path) with n fields (hw: paths without the
 * prefix, as a sweep's hw: axes name them) set to values (numbers where they parse as one, else
 * strings), loaded as a sweep loads its hw: variants; errors name the field. */
int sweep_hw_set(const char *text, const char *path, int n, const char *const *fields, const char *const *values,
                 struct hw_system *out, struct dse_err *e);

#endif
