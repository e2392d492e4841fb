/* quality.h -- the expected quality loss of a precision configuration, from published figures.
 *
 * The table (validate/quality/published-quality.csv, columns in validate/quality/README.md) holds one row
 * per published measurement: a model of a family and size, a format (a dse precision), the method that
 * produced it, the metric and the relative loss against the model's 16-bit (or fp32) baseline in percent.
 * ql_estimate maps (model name, kind, parameter count, precision) to quality_loss_pct by the rules of
 * docs/models.md ("Quality loss"); it is a lookup over a read-only table and allocates nothing. A case
 * no row covers is left to the caller (eval_quality: the measured GEMM error, flagged). Below eval:
 * includes only core headers. */
#ifndef DSE_QUALITY_H
#define DSE_QUALITY_H

#include <stddef.h>

#include "err.h"
#include "prec.h"

/* What a model is, for the families its rows may stand in for: decoder (and encoder-decoder) language
 * models, encoders (BERT-like, ViT), convolutional networks. */
enum ql_kind { QK_LLM, QK_ENCODER, QK_CNN, QK_COUNT };
extern const char *const ql_kind_names[QK_COUNT + 1];

/* A tensor role's number format as far as quality goes: every float of 16 bits or more is the
 * reference the published deltas are measured against. */
enum ql_cls { QC_REF, QC_FP8, QC_INT8, QC_INT4, QC_COUNT };

/* The metrics rows are measured in; perplexity is better lower, the others higher. */
struct ql_metric {
    const char *name;
    int lower_is_better;
    const char *what;
};
extern const struct ql_metric ql_metrics[];
extern const int ql_metric_count;

#define QL_ID_LEN 64
#define QL_FAMILY_LEN 32
#define QL_MAX_ROWS 2048
#define QL_MAX_FAMILIES 128
#define QL_KEYS 64 /* formats: QC_COUNT^3 classes of weights, activations and KV cache */

struct ql_row {
    char id[QL_ID_LEN];
    int kind;   /* enum ql_kind */
    int fam;    /* index into ql_table.fam */
    char model[64];
    double params_B;
    struct prec_cfg prec;
    int key;    /* the format: ql_key of the classes of w, a, kv (kv the reference for non-LLMs) */
    char method[128];
    int metric; /* index into ql_metrics */
    int base_prec;             /* enum prec of the baseline (fp32, tf32, bf16, fp16, fp64) */
    double baseline, quantized; /* NAN when the source gives the loss only */
    double loss_pct;           /* relative loss, % of the baseline's figure; positive: worse */
    char source[256], url[256], note[256];
    int line;
};

struct ql_table {
    int n;
    struct ql_row *row; /* malloc'd */
    int n_fam;
    struct {
        char name[QL_FAMILY_LEN];
        int kind;
    } fam[QL_MAX_FAMILIES];
    int metric_order[QK_COUNT][8]; /* per kind: metric indices by row count, most first; -1 ends */
    /* The rows of each (family, metric, format): gorder[gstart[g]..gstart[g + 1]) for group
     * g = (fam x ql_metric_count + metric) x QL_KEYS + key (malloc'd), so that a lookup reads only its own */
    int *gstart, *gorder;
    char path[512];
    unsigned long long hash; /* FNV-1a 64 of the file's bytes (a sweep's inputs record it) */
};

/* How an estimate was reached (docs/models.md); an estimate's flags are bits 1 << basis. */
enum ql_basis {
    QL_REFERENCE,    /* every role 16-bit or wider: 0 by definition */
    QL_PUBLISHED,    /* rows of the model's family at its size (within 10 %) */
    QL_INTERPOLATED, /* linear in log(parameters) between the two published sizes around it */
    QL_NEAREST_SIZE, /* the model is outside the family's published sizes: the nearest one's figure */
    QL_ADDITIVE,     /* weights-and-activations rows + KV-cache-only rows */
    QL_SCALED,       /* the family's figure for another format x the median ratio of the two formats in
                        other families of its kind */
    QL_OTHER_MODELS, /* the family has no usable row: the median of the other families of its kind */
    QL_UPPER_BOUND,  /* only a format at least as narrow in every role is published: its figure */
    QL_FALLBACK,     /* no published figure: the measured GEMM error in % (eval_quality), not a quality figure */
    QL_BASIS_COUNT
};
extern const char *const ql_basis_names[QL_BASIS_COUNT + 1];

#define QL_MAX_USED 32
struct ql_est {
    double loss_pct;
    unsigned flags;         /* bits 1 << enum ql_basis */
    int metric;             /* of the rows used; -1 none */
    int fam;                /* the model's family in the table; -1 none */
    int n_used, n_used_all; /* rows used (their indices in used[], at most QL_MAX_USED), and all of them */
    int used[QL_MAX_USED];
};

/* Loads the table from len bytes of CSV named path (messages: "path: line N: ..."). */
int ql_load_buf(const char *text, size_t len, const char *path, struct ql_table *t, struct dse_err *e);
int ql_load_file(const char *path, struct ql_table *t, struct dse_err *e);
void ql_free(struct ql_table *t);
/* Finds validate/quality/published-quality.csv under the current directory, the directory above
 * near_file's folder (a hwdesc's or a sweep spec's) or the data directories (DSE_PATH, installed); writes
 * its path to out. 1 when found, 0 when not. */
int ql_resolve(const char *near_file, char *out, size_t n);

/* The family whose name begins model_name (case-insensitive) followed by its end, '-', '.' or '_';
 * the longest such; -1 when none (or t is NULL). */
int ql_family_of(const struct ql_table *t, const char *model_name);
/* The classes of a configuration as a format key; kv counts only for LLMs. */
int ql_key(const struct prec_cfg *p, int kind);
/* The estimate for a model named model_name, of kind (enum ql_kind; -1 unknown: its family's), with
 * params parameters, at precision p. Returns 1 with *q filled, 0 when no row covers the case (then
 * q->flags is 0); t may be NULL (only the reference formats are covered). */
int ql_estimate(const struct ql_table *t, const char *model_name, int kind, double params, const struct prec_cfg *p,
                struct ql_est *q);
/* One line saying how q was reached: its basis, family, metric and the ids of the rows used (at most
 * max_ids of them, then how many more). */
void ql_describe(const struct ql_table *t, const struct ql_est *q, int max_ids, char *buf, size_t n);
/* The name of q's principal basis (the least certain of its flags). */
const char *ql_basis_of(const struct ql_est *q);

#endif
