/* validate.h -- validation of the cost models against the native kernels measured on this host:
 * suites of kernel cases (validate/NAME.json), the timing harness, the equivalent workload graph of each
 * case and its prediction, and the calibration fit (GSL nonlinear least squares). */
#ifndef DSE_VALIDATE_H
#define DSE_VALIDATE_H

#include "eval.h"

enum vk_type { VK_GEMM, VK_CONV, VK_ATTENTION, VK_SOFTMAX, VK_LAYERNORM, VK_RMSNORM, VK_GELU, VK_SILU, VK_ADD,
               VK_COPY, VK_TRIAD, VK_COUNT };
extern const char *const vk_names[VK_COUNT + 1];

/* One kernel case. Shape fields are used per type (gemm M N K; conv n c h w oc kh kw stride pad
 * groups; attention b h hkv s t d causal; row ops rows cols; streams and element-wise n). */
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
    double predicted_mJ;
};

struct vsuite {
    char name[64], path[512];
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

#endif
