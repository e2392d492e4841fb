/* errbar.h -- error bars: what a prediction's error is likely to be, from the held-out residuals of
 * the published corpus (validate/published) for the device class and workload kind.
 *
 * The table is written by `dse validate --published --write-error-bars` (validate/published/
 * error-bars.json ships one) and read by dse eval and dse sweep. An interval is the 10th to 90th
 * percentile of the time error, predicted / measured time - 1 (negative: dse predicts too fast), over
 * the held-out cases of one class and kind; a kind with too few cases falls back to its class's
 * interval over all kinds. Read-only once loaded; lookups allocate nothing. */
#ifndef DSE_ERRBAR_H
#define DSE_ERRBAR_H

#include "err.h"
#include "hw.h"
#include "wl.h"

/* Workload kinds, for reporting and error bars. */
enum pkind { PK_KERNEL, PK_LLM_PREFILL, PK_LLM_DECODE, PK_LLM_GENERATE, PK_CNN, PK_ENCODER, PK_OTHER, PK_COUNT };
extern const char *const pkind_names[PK_COUNT + 1];

#define EB_KIND_ALL (-1)  /* a row over every kind of its class */
#define EB_MIN_CASES 3    /* fewer held-out cases give no percentile worth printing */
#define EB_MAX_ROWS (HW_CLASS_COUNT * (PK_COUNT + 1))

struct eb_row {
    int cls;                 /* enum hw_class */
    int kind;                /* enum pkind, or EB_KIND_ALL */
    int n;                   /* held-out cases */
    double low_pct, high_pct; /* 10th and 90th percentile of the time error, % */
    double mape_pct;
};

struct eb_table {
    int n;
    struct eb_row row[EB_MAX_ROWS];
    char tier[16];     /* the model tier the residuals are of ("analytical") */
    char source[512];
    char path[DSE_PATH_LEN];
};

/* The kind of an evaluation of model m in phase ph. */
enum pkind eb_kind_of(const struct wl_model *m, enum wl_phase ph);

int eb_load_file(const char *path, struct eb_table *t, struct dse_err *e);
int eb_load_buf(const char *buf, unsigned long len, const char *fname, struct eb_table *t, struct dse_err *e);
/* Finds validate/published/error-bars.json under the current directory, the directory above
 * near_file's folder (a hwdesc's or a sweep spec's) or the installed data directory; writes its path
 * to out. Returns 1 when found, 0 when not. */
int eb_resolve(const char *near_file, char *out, size_t n);

/* The interval for a prediction on a device of class cls for kind k: the (class, kind) row when it
 * has one, else the class's row over all kinds; NULL when the table has neither. *fallback is set
 * when the class's row answered. */
const struct eb_row *eb_find(const struct eb_table *t, enum hw_class cls, enum pkind k, int *fallback);

/* A quantity scaling as time^e (e = 1: a latency or a cost of time, e = -1: a rate), predicted as v,
 * at the interval's pessimistic end: the true time is predicted / (1 + error), slowest where the
 * error is lowest. */
double eb_pessimistic(double v, int e, double low_pct);

#endif
