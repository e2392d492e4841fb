/* validate.h -- validation of the cost models against the native kernels measured on this host:
 * suites of kernel cases (validate/NAME.json), the timing harness, the equivalent workload graph of each
 * case and its prediction, and the calibration fit (GSL nonlinear least squares). */
#ifndef DSE_VALIDATE_H
#define DSE_VALIDATE_H

#include "csvu.h"
#include "errbar.h"
#include "eval.h"

struct serve_req; /* serve.h */

enum vk_type { VK_GEMM, VK_CONV, VK_ATTENTION, VK_SOFTMAX, VK_LAYERNORM, VK_RMSNORM, VK_GELU, VK_SILU, VK_ADD,
               VK_COPY, VK_TRIAD, VK_SILU_MUL, VK_ROPE, VK_COUNT };
/* Kinds from VK_NATIVE_END on have no native kernel here: measured elsewhere only (validate/measured). */
#define VK_NATIVE_END VK_SILU_MUL
/* Each kernel kind measures one operator of the operator table (optype.h): the workload graph of a
 * case is that operator at the case's shape (vk_graph). */
struct vk_kind {
    const char *name;
    enum op_type op;
    enum wl_fn fn; /* eltwise: its function */
};
extern const struct vk_kind vk_kinds[VK_COUNT];
int vk_kind_from_name(const char *s); /* -1 when unknown */

/* One kernel case. Shape fields are used per type (gemm M N K and a batch b of them; conv n c h w oc kh kw stride pad
 * groups; attention b h hkv s t d causal; row ops and rope rows cols; streams and element-wise n). */
struct vk {
    enum vk_type type;
    enum prec prec; /* gemm: fp32, bf16, fp16, int8; others fp32 */
    long long M, N, K, n, c, h, w, oc, kh, kw, stride, pad, groups, b, heads, hkv, s, t, d, rows, cols;
    int causal;
    char shape[160];     /* "M=512,N=512,K=512" */
    double measured_ms;  /* median; < 0 until measured (or imported) */
    double spread_pct;   /* (p75 - p25) / median */
    int runs, flagged;   /* flagged: spread still wide after a second try */
    double predicted_ms;
    char device[HW_NAME_LEN]; /* imported: the hwdesc device it ran on ("": the default device) */
    int dev;                  /* that device's index, resolved before predicting */
    double measured_mJ;       /* imported energy of one run; < 0 when not given */
    int cold;                 /* its operands start in main memory (a kernel of a model's run, not one
                                 timed alone over and over: the measured corpora) */
    int burst;                /* timed for milliseconds (a published kernel benchmark): no power limit
                                 throttles it (eval.h, eval_req.burst); 0: as a sustained run */
    double predicted_mJ;
};

struct vsuite {
    char name[64], path[DSE_PATH_LEN];
    int n;
    struct vk *k;
};

/* Loads a suite (JSON: {"name", "kernels": [{"kernel", "precision", "shape": {...}, "measured_ms"?,
 * "measured_mJ"?, "device"?}]}), an import CSV (a header naming the columns kernel, shape,
 * measured_ms and optionally precision, measured_mJ, device, note, p25_ms, p75_ms, runs; shape as
 * "M=1;N=2;K=3"), or the --json result of dse validate or calibrate. A case with measured_ms may use
 * any precision (it ran elsewhere); one to run here, the precisions of the native kernels. */
int vsuite_load(const char *path, struct vsuite *s, struct dse_err *e);
/* The same from text[0..len); path names it in messages, and a name ending in .csv reads as CSV. */
int vsuite_load_buf(const char *text, size_t len, const char *path, struct vsuite *s, struct dse_err *e);
void vsuite_free(struct vsuite *s);

/* Runs case k natively with `threads` OpenMP threads (<= 0: all): warm-up runs, then timed runs with a
 * monotonic clock until at least `min_runs` runs and `min_ms` of timing, median and spread; a spread
 * over 10 % is measured again with twice the runs and flagged if still wide. */
int vk_measure(struct vk *k, int min_runs, double min_ms, int threads, struct dse_err *e);
/* Median of v[0..n) (sorting v in place); 0 when n <= 0. */
double vk_median(double *v, int n);

/* The workload graph equivalent to case k (for predictions). */
int vk_graph(const struct vk *k, struct wl_graph *g, struct dse_err *e);
/* The FLOP rate case k reached (measured_ms) and the device's peak for its operator and precision
 * (the engine the model would use; 0 when the device has none). */
double vk_gflops(const struct vk *k, const struct wl_graph *g);
double vk_peak_gflops(const struct vk *k, const struct wl_graph *g, const struct hw_device *d);
/* Whether device d has an engine for every operator of k's graph g at k's precision: a kernel it lacks
 * one for cannot be predicted (dse validate and calibrate skip it and say so). */
int vk_supported(const struct vk *k, const struct wl_graph *g, const struct hw_device *d);
/* Predicts case k (graph g) on device dev of sys, its tensors warm (repeated runs), run on `threads`
 * cores of a CPU (<= 0: all; what --threads measured with). */
int vk_predict(const struct vk *k, const struct wl_graph *g, const struct hw_system *sys, int dev, enum fidelity f,
               int threads, double *ms, double *mJ, struct dse_err *e);

/* Calibration: achieved compute efficiency per operator class, bandwidth efficiency per memory
 * level, the share of compute and memory time that does not overlap, the per-call overhead of a
 * device and, on a CPU whose training cases include GEMMs or convolutions, the rates of packing GEMM
 * operands. fit_class marks the classes the training cases
 * cover. */
struct calib {
    double eff_class[EC_COUNT];
    double eff_level[HW_MAX_MEM];
    int n_levels;
    int fit_class[EC_COUNT];
    int fit_pack;
    double pack_elem_per_s[2];
    double gemm_setup_s;
    int fit_fork;
    double fork_join_s;
    int fit_group;
    double per_group_s;
    double serial_fraction;
    double per_op_s;
};
/* Fits c to the measured cases train[0..n) (minimizing the squared log error of the predictions). */
int calib_fit(const struct hw_system *sys, int dev, const struct vk *k, const struct wl_graph *g, const int *train,
              int n, enum fidelity f, int threads, struct calib *c, struct dse_err *e);
/* Applies c to a device. */
void calib_apply(struct hw_device *d, const struct calib *c);

/* ---- published measurements (validate_published.c; validate/published/README.md) ---- */

enum pmetric { PM_LATENCY, PM_THROUGHPUT, PM_TOKENS, PM_TTFT, PM_TPOT, PM_KERNEL_MS, PM_TFLOPS, PM_COUNT };
extern const char *const pmetric_names[PM_COUNT + 1];

struct pcase {
    char id[64], file[DSE_PATH_LEN];
    int line;
    char device[HW_NAME_LEN], framework[128], software[64], workload[160], precision[32];
    char source[512], url[320], date[16], note[1024];
    enum wl_phase phase;
    int is_kernel;           /* the workload is a kernel (phase kernel): k */
    struct vk k;
    long long batch, prompt, gen, instances;
    int tp;                  /* devices one instance spans, tensor-parallel (the power corpus; 0 or 1: one) */
    enum pmetric metric;
    double value;            /* as published, in the metric's unit */
    int heldout;             /* the split rule: FNV-1a 32 of the id is odd */
    /* set by pcase_predict */
    int ok;                  /* predicted (else reason says why not) */
    char reason[320];
    enum pkind kind;
    int dev_class;           /* enum hw_class of the device it ran on */
    double predicted, error; /* the metric as dse predicts it; predicted / value - 1 */
};

struct pcorpus {
    struct pcase *c;
    int n, cap;
};

/* Reads the corpus files (the columns of validate/published/README.md, in any order): every field
 * checked, ids unique across files. */
int pcorpus_load(const char *const *paths, int n, struct pcorpus *pc, struct dse_err *e);
/* The same from one file's text[0..len) named fname (the fuzz target's entry). */
int pcorpus_load_buf(const char *text, size_t len, const char *fname, struct pcorpus *pc, struct dse_err *e);
void pcorpus_free(struct pcorpus *pc);
int pcase_is_heldout(const char *id);

/* ---- measured kernels (validate_measured.c; validate/measured/README.md) ---- */

struct kcase {
    char id[64], hw[HW_NAME_LEN], group[96], note[384];
    int coll;         /* enum coll_kind (par.h) of a collective row, or -1: a kernel (k) */
    int net;          /* a network row (kernel "network"): workload run whole, batch net_b */
    char workload[96], software[64]; /* a network row's workload name ("zoo/yolov8n") and stack ("default":
                                        the device's own) */
    long long net_b, net_h, net_w, net_s; /* its batch, input height and width (0: the workload's own), and
                                             sequence length (text models; 0: none) */
    struct vk k;      /* the kernel, its shape and precision (a collective: precision and shape text) */
    double bytes;     /* a collective's buffer per rank */
    int ranks, nodes; /* a collective's group: ranks spread evenly over nodes */
    double measured_ms;
    int heldout;      /* the row's half, by its folder's split rule */
    /* set by kcase_predict */
    int ok;           /* predicted (else reason says why not) */
    char reason[200];
    double predicted_ms;
};

struct kcorpus {
    struct kcase *c;
    int n, cap;
};

/* Appends the rows of a kernels.csv (every field checked; case ids unique within the file). */
int kcorpus_load(const char *path, struct kcorpus *mc, struct dse_err *e);
int kcorpus_load_buf(const char *text, size_t len, const char *fname, struct kcorpus *mc, struct dse_err *e);
void kcorpus_free(struct kcorpus *mc);
/* DSE_EINPUT naming `what` when two of the cases from index `from` on share an id (a source kept in
 * several files checks its whole range). */
int kcorpus_unique(const struct kcorpus *mc, int from, const char *what, struct dse_err *e);
/* The class errors are reported by: the kernel's name, attention split into prefill and decode (S = 1),
 * a collective's name. */
const char *kcase_class(const struct kcase *c);
/* Predicts c on sys (the hwdesc c->hw): a kernel on the system's default device at tier f, a collective
 * over its topology. A case the model cannot take (a precision without an engine, a group the topology
 * does not hold) gets ok = 0 and the reason; other errors are returned. */
int kcase_predict(struct kcase *c, const struct hw_system *sys, enum fidelity f, struct dse_err *e);
/* Predicts network row c on sys (not a profiler's view: the host's launches count) with its workload m
 * and stack sw: the time of one batch in steady state (batch / the predicted throughput). A workload
 * that cannot take the row's input size (not a CNN generator) or a point dse finds infeasible leaves
 * c->ok 0 with the reason. */
int kcase_predict_net(struct kcase *c, const struct hw_system *sys, const struct wl_model *m, const struct sw_stack *sw,
                      enum fidelity f, struct dse_err *e);
/* sys as the corpora time kernels (a profiler's trace): each kernel costs its device's fixed duration
 * (kernel_s) in place of the host's launch (per_op_s, graph_node_s). */
void kc_trace_view(struct hw_system *sys);

/* An architecture's kernel terms fitted to measured kernels (calib_arch.c): which terms are free (kind,
 * and the class or precision each is of) and their fitted values. */
enum kc_knob { KN_CLASS, KN_MCLASS, KN_PREC, KN_KHALF, KN_MAIN, KN_KERNEL, KN_FN, KN_ROW, KN_KFILL, KN_TAIL, KN_COUNT };
extern const char *const kc_knob_names[KN_COUNT + 1];
#define KC_MAX_KNOBS 24
struct kc_fit {
    int n;
    int kind[KC_MAX_KNOBS], arg[KC_MAX_KNOBS];
    double value[KC_MAX_KNOBS];
};
/* Fits the terms the kernel rows cs[fit[0..n_fit)] can show to their measurements on sys's default
 * device at tier f (collective rows are skipped); *n_used: the rows the fit ran on (a stride sample). */
int kc_fit_arch(const struct hw_system *sys, const struct kcase *cs, const int *fit, int n_fit, enum fidelity f,
                struct kc_fit *out, int *n_used, struct dse_err *e);
void kc_fit_apply(struct hw_device *d, const struct kc_fit *k);
/* Fits topology level `level` of sys (efficiency, latency_us, base_latency_us: out[0..2]) to the
 * collective rows cs[rows[0..n)]; kc_topo_apply sets them on a system. */
int kc_fit_topo(const struct hw_system *sys, int level, struct kcase *cs, const int *rows, int n, double out[3],
                struct dse_err *e);
void kc_topo_apply(struct hw_system *sys, int level, const double v[3]);
/* A device's terms fitted to measured networks (calib_net.c): which are free and their fitted values. */
#define KC_NET_KNOBS 12
struct kc_net_fit {
    int n;
    int kind[KC_NET_KNOBS], arg[KC_NET_KNOBS];
    double value[KC_NET_KNOBS]; /* as the device holds them (seconds, bytes, efficiencies) */
    double loss_before, loss_after;
};
/* Fits the terms network rows cs[rows[0..n)] can show (classes[ec] > 0: a row's graph has ops of class ec)
 * on device dev of work (changed in place to the fitted values), row i with workload m[i] and stack sw[i]. */
int kc_fit_net(struct hw_system *work, int dev, struct kcase *cs, const int *rows, int n,
               const struct wl_model *const *m, const struct sw_stack *const *sw, const int *classes, enum fidelity f,
               struct kc_net_fit *out, struct dse_err *e);
void kc_net_fit_apply(struct hw_device *d, const struct kc_net_fit *k);
/* Term i's name as the hwdesc writes it, and its value in the hwdesc's unit. */
void kc_net_fit_names(const struct kc_net_fit *k, int i, char *buf, size_t n);
double kc_net_fit_shown(const struct kc_net_fit *k, int i);
/* Whether the metric grows as the system gets faster (throughput, tokens/s, TFLOPS). */
int pmetric_is_rate(enum pmetric m);
/* The error of the predicted time: predicted / measured time - 1 (negative: dse too fast). */
double pcase_time_error(const struct pcase *c);
/* Predicts case c on the default device of sys with workload m (NULL for a kernel) and stack sw. A
 * point dse finds infeasible, or a stack that does not target the device, leaves c->ok 0 with the
 * reason; DSE_OK unless evaluation fails outright. */
int pcase_predict(struct pcase *c, const struct hw_system *sys, const struct wl_model *m, const struct sw_stack *sw,
                  enum fidelity f, struct dse_err *e);

/* Reads a corpus kernel (workload "gemm:M=..,N=..,K=.." and the like) at precision prec into k; an error
 * names file and where (a line). */
int pcase_kernel(const char *spec, const char *prec, const char *file, const char *where, struct vk *k,
                 struct dse_err *e);
/* The evaluation case c (not a kernel) asks for, on device dev of sys run on `threads` CPU cores (0:
 * all), tensor-parallel over c->tp devices of sys's topology where c->tp > 1 (a layout the system cannot
 * run: res->feasible 0 with the reason): *r the request, *res its result (eval_result_free by the
 * caller, also on an error). */
int pcase_eval(const struct pcase *c, const struct hw_system *sys, int dev, int threads, const struct wl_model *m,
               const struct sw_stack *sw, enum fidelity f, struct eval_req *r, struct eval_result *res, struct dse_err *e);
/* Makes `one` (a copy of a system) one of n instances sharing device dev: a CPU runs an instance on
 * cores / n (*threads); an accelerator's compute peaks, engine and active power and memory bandwidths
 * and capacities are divided by n (its idle power is not: the device idles once). */
void pcase_share_device(struct hw_system *one, int dev, long long n, int *threads);

struct pstats {
    int n, within20, within25;
    double mape_pct, within20_pct, within25_pct;
    double p10_pct, median_pct, p90_pct; /* of the time error (pcase_time_error) */
};
/* A published calibration: one device's efficiencies and overheads fitted to its fit-half cases
 * (validate_published.c), each a factor on the hwdesc's value. */
enum pparam { PP_GEMM, PP_ATTENTION, PP_VECTOR, PP_MEMORY, PP_DECODE_MEMORY, PP_FP8, PP_INT8, PP_LAUNCH, PP_STEP,
              PP_REQUEST, PP_COUNT };
#define PP_TIMES PP_LAUNCH /* the factors from here on scale times; the ones before, efficiencies */
extern const char *const pparam_names[PP_COUNT + 1];
#define PCALIB_RIDGE 0.02     /* weight of the pull of each log-factor towards 0 (the hwdesc's value) */
#define PCALIB_RIDGE_UNSOURCED 1e-4 /* the same for an overhead the hwdesc does not give */
#define PCALIB_LAUNCH_SPAN 2  /* a sourced per-kernel launch latency moves by at most this factor */
#define PCALIB_MAX_CASES 512
/* Multiplies d's efficiencies and overheads by factor[PP_*] (efficiencies held in (0.001, 1]). */
void pcalib_apply(struct hw_device *d, const double *factor);
/* Rounds a calibrated device's fitted values to three significant digits, as they ship. */
void pcalib_round(struct hw_device *d);
/* Fits factor[] to cases c[idx[0..n)] on sys's default device, each with its workload model[i] and
 * stack sw[i] (indexed like c), minimizing the squared log error plus PCALIB_RIDGE x the squared
 * log-factors; free_param[k] tells which factors the cases could move (the others stay 1). */
int pcalib_fit(struct pcase *c, const int *idx, int n, const struct hw_system *sys,
               const struct wl_model *const *model, const struct sw_stack *const *sw, enum fidelity f, double *factor,
               int *free_param, struct dse_err *e);

/* Statistics of the predicted cases for which want(case, ctx) holds (want NULL: all). */
void pstats_of(const struct pcase *c, int n, int (*want)(const struct pcase *, const void *), const void *ctx,
               struct pstats *s);

/* The published multi-device corpus (validate/published/multi-device/cases.csv, columns in
 * validate/published/README.md): a training step or an inference on a system of N devices with the
 * layout its source states (validate_multi.c). */
enum mcol { MC_ID, MC_SYSTEM, MC_NODES, MC_DEVICES, MC_FRAMEWORK, MC_SOFTWARE, MC_WORKLOAD, MC_PHASE, MC_BATCH, MC_SEQ,
            MC_GEN, MC_TP, MC_PP, MC_DP, MC_MB, MC_ZERO, MC_RECOMPUTE, MC_PRECISION, MC_METRIC, MC_VALUE, MC_UNIT,
            MC_FLOPS, MC_SOURCE, MC_URL, MC_DATE, MC_NOTE, MC_COUNT };
enum mmetric { MM_TFLOPS, MM_STEP, MM_TOKENS, MM_TTFT, MM_TPOT, MM_COUNT };
/* How a source counts the FLOPs of its TFLOP/s per device (validate_multi.c: source_flops). */
enum mflops { MF_NONE, MF_MEGATRON_HFU, MF_MEGATRON_MFU, MF_MAXTEXT, MF_COUNT };
extern const char *const mflops_names[MF_COUNT + 1];
struct mcase {
    char id[96], system[HW_NAME_LEN], software[64], workload[96], precision[32], recompute[16], source[512];
    long long nodes, devices, batch, seq, gen, tp, pp, dp, mb, zero;
    enum wl_phase phase;
    enum mmetric metric;
    enum mflops flops;
    double value;
    int heldout;
    int ok;            /* predicted (else reason) */
    char reason[320];
    double predicted, error;
};
/* Reads the corpus: every field checked, ids unique. *out is malloc'd. */
int mcorpus_load(const char *path, struct mcase **out, int *n, struct dse_err *e);
/* The same from text[0..len) named path (the fuzz target's entry). */
int mcorpus_load_buf(const char *text, size_t len, const char *path, struct mcase **out, int *n, struct dse_err *e);
/* Predicts c on node (the system's hwdesc, resized: its outer level to c->nodes, or a switched node to
 * c->devices) with workload m and stack sw. A case dse cannot predict (no batch stated, a layout the
 * model refuses, a network not described) leaves c->ok 0 with the reason. */
int mcase_predict(struct mcase *c, const struct hw_system *node, const struct wl_model *m, const struct sw_stack *sw,
                  struct dse_err *e);
/* Resizes sys (a copy of a shipped node or cluster) to a case's nodes (its outer level) or, a switched
 * node, to its devices; -1 with the reason when it cannot (a single device system serves a case of one). */
int vcase_resize(struct hw_system *sys, long long nodes, long long devices, char *reason, size_t n);
const char *mmetric_name(enum mmetric m);

/* The published serving corpus (validate/published/serving/cases.csv, columns in its README): a
 * serving run at a stated rate, lengths and scheduler on a system, and one figure of it, simulated by
 * dse serve's model (validate_serving.c). */
enum scol { SC_ID, SC_SYSTEM, SC_DEVICES, SC_TP, SC_FRAMEWORK, SC_SOFTWARE, SC_WORKLOAD, SC_PRECISION, SC_SCHEDULER,
            SC_MAX_BATCH, SC_ARRIVAL, SC_RATE, SC_REQUESTS, SC_PROMPT, SC_OUTPUT, SC_METRIC, SC_VALUE, SC_UNIT,
            SC_SOURCE, SC_URL, SC_DATE, SC_NOTE, SC_COUNT };
enum smetric { SM_TPUT_TOKENS, SM_TPUT_RPS, SM_TOTAL_TOKENS, SM_TTFT_P50, SM_TTFT_P99, SM_TTFT_MEAN, SM_TPOT_P50,
               SM_TPOT_P99, SM_TPOT_MEAN, SM_ITL_P50, SM_E2E_P50, SM_E2E_MEAN, SM_COUNT };
/* The kinds the report groups them by: throughput, typical latency (p50 and mean), tail latency (p99). */
enum skind { SK_THROUGHPUT, SK_LATENCY, SK_TAIL, SK_COUNT };
extern const char *const skind_names[SK_COUNT + 1];
struct scase {
    char id[96], system[HW_NAME_LEN], software[64], workload[96], precision[32], scheduler[16], arrival[40];
    char prompt[64], output[64];
    long long devices, tp, max_batch, requests;
    double rate, value;
    enum smetric metric;
    int heldout;
    int ok; /* predicted (else reason) */
    char reason[320];
    double predicted, error;
};
int scorpus_load(const char *path, struct scase **out, int *n, struct dse_err *e);
int scorpus_load_buf(const char *text, size_t len, const char *path, struct scase **out, int *n, struct dse_err *e);
/* Simulates c's run on node (resized to c->devices) with workload m and stack sw; a case dse cannot
 * simulate (lengths from a dataset not shipped, closed-loop clients, a figure it does not report)
 * leaves c->ok 0 with the reason. */
int scase_predict(struct scase *c, const struct hw_system *node, const struct wl_model *m, const struct sw_stack *sw,
                  const struct serve_req *lengths, int64_t n_lengths, struct dse_err *e);
/* The shipped trace (a file of models/traces) whose rows stand for the dataset c's lengths name, or NULL
 * when none is shipped. scase_predict draws both lengths of each request jointly from its rows (lengths,
 * n_lengths) and refuses such a case without them. */
const char *scase_lengths_file(const struct scase *c);
const char *smetric_name(enum smetric m);
enum skind smetric_kind(enum smetric m);
int mmetric_is_rate(enum mmetric m);

/* The published power corpus (every CSV file of validate/published/power, columns and split in its README):
 * average power or energy per inference or token measured while a device or system ran a workload,
 * with the performance measured at the same time (validate_power.c). */
enum wcol { WC_ID, WC_DEVICE, WC_FRAMEWORK, WC_SOFTWARE, WC_WORKLOAD, WC_PHASE, WC_BATCH, WC_PROMPT, WC_GEN,
            WC_INSTANCES, WC_PRECISION, WC_MODE, WC_SCOPE, WC_NDEV, WC_METRIC, WC_VALUE, WC_UNIT, WC_PERF_METRIC,
            WC_PERF_VALUE, WC_SOURCE, WC_URL, WC_DATE, WC_NOTE, WC_COUNT };
enum wmetric { WM_POWER, WM_J_INFERENCE, WM_J_TOKEN, WM_COUNT };
extern const char *const wmetric_names[WM_COUNT + 1];
enum wscope { WS_DEVICE, WS_SYSTEM, WS_CORES, WS_MODULE, WS_COUNT };
struct wcase {
    char id[96], file[DSE_PATH_LEN];
    int line;
    char device[HW_NAME_LEN], software[64], workload[160], precision[32], mode[32];
    enum wl_phase phase;
    int idle, is_kernel; /* phase idle (nothing runs), phase kernel (workload gemm:...: k) */
    struct vk k;
    long long batch, prompt, gen, instances, count;
    enum wscope scope;
    enum wmetric metric;
    double value;
    int perf_metric; /* enum pmetric, -1: none given */
    double perf_value;
    int heldout;
    /* set by wcase_predict */
    int ok; /* predicted (else reason) */
    char reason[320];
    double predicted, error, perf_predicted; /* perf_predicted: NAN when none */
};
/* Reads every case of the files paths[0..n): every field checked, ids unique across files; *out is
 * malloc'd. */
int wcorpus_load(const char *const *paths, int n, struct wcase **out, int *count, struct dse_err *e);
/* The same from text[0..len) named path (the fuzz target's entry). */
int wcorpus_load_buf(const char *text, size_t len, const char *path, struct wcase **out, int *count, struct dse_err *e);
/* Predicts c on sys (its hwdesc) with workload m (NULL for idle and kernel cases) and stack sw. A case
 * dse cannot predict (an operating point the hwdesc does not name, devices at once in a layout, a
 * server whose hosts the hwdesc does not pair) leaves c->ok 0 with the reason. */
int wcase_predict(struct wcase *c, const struct hw_system *sys, const struct wl_model *m, const struct sw_stack *sw,
                  struct dse_err *e);

#endif
