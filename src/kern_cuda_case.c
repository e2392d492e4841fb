/* kern_cuda_case.c -- the host side of kern_cuda: names, shape keys, validation, the buffers each case
 * allocates, FLOP and byte counts (dse's conventions, src/wl_graph.c), and the double-precision
 * references kcu_check compares with. Plain C: compiled and tested without a GPU. */
#include "kern_cuda_impl.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

const char *const kcu_kind_names[KCU_KIND_COUNT + 1] = {"gemm",    "gemm_bias_gelu", "add",       "gelu",
                                                        "silu",    "copy",           "triad",     "softmax",
                                                        "layernorm", "rmsnorm",      "attention", "conv2d",
                                                        NULL};
const char *const kcu_prec_names[KCU_PREC_COUNT + 1] = {"fp32", "tf32", "fp16", "bf16", "fp8", "int8", NULL};
const int kcui_dt_bytes[] = {4, 2, 2, 1, 1, 4};

/* ---- shape keys: one table per kind, in suite order ---- */

struct fld {
    const char *name;
    size_t off;          /* offset of the long long in struct kcu_case */
    long long min, max;
};
#define F(n, m, lo, hi) {n, offsetof(struct kcu_case, m), lo, hi}
#define FEND {NULL, 0, 0, 0}

static const struct fld f_gemm[] = {F("M", gemm.M, 1, 1 << 20), F("N", gemm.N, 1, 1 << 20),
                                    F("K", gemm.K, 1, 1 << 20), FEND};
static const struct fld f_ew[] = {F("n", ew.n, 1, 1LL << 36), FEND};
static const struct fld f_row[] = {F("rows", row.rows, 1, (1LL << 31) - 1), F("cols", row.cols, 1, 1 << 24), FEND};
static const struct fld f_attn[] = {F("B", attn.B, 1, 4096),       F("H", attn.H, 1, 1024),
                                    F("Hkv", attn.Hkv, 0, 1024),   F("S", attn.S, 1, 1 << 20),
                                    F("T", attn.T, 0, 1 << 20),    F("D", attn.D, 1, 1024),
                                    F("causal", attn.causal, 0, 1), FEND};
static const struct fld f_conv[] = {F("N", conv.N, 1, 4096),      F("C", conv.C, 1, 1 << 14),
                                    F("H", conv.H, 1, 4096),      F("W", conv.W, 1, 4096),
                                    F("OC", conv.OC, 1, 1 << 14), F("KH", conv.KH, 1, 64),
                                    F("KW", conv.KW, 1, 64),      F("stride", conv.stride, 1, 64),
                                    F("pad", conv.pad, 0, 64),    F("groups", conv.groups, 1, 1 << 14),
                                    FEND};

/* The same keys as kcu_fields returns them (checked against the tables by the tests). */
static const char *const n_gemm[] = {"M", "N", "K", NULL};
static const char *const n_ew[] = {"n", NULL};
static const char *const n_row[] = {"rows", "cols", NULL};
static const char *const n_attn[] = {"B", "H", "Hkv", "S", "T", "D", "causal", NULL};
static const char *const n_conv[] = {"N", "C", "H", "W", "OC", "KH", "KW", "stride", "pad", "groups", NULL};

#define P(x) (1u << KCU_##x)
/* One row per kind: its shape keys and the precisions it runs. */
static const struct kind_info {
    const struct fld *f;
    const char *const *names;
    unsigned precs;
} kinds[] = {
    [KCU_GEMM] = {f_gemm, n_gemm, P(FP32) | P(TF32) | P(FP16) | P(BF16) | P(FP8) | P(INT8)},
    [KCU_GEMM_BIAS_GELU] = {f_gemm, n_gemm, P(FP16) | P(BF16)},
    [KCU_ADD] = {f_ew, n_ew, P(FP32) | P(FP16)},
    [KCU_GELU] = {f_ew, n_ew, P(FP32) | P(FP16)},
    [KCU_SILU] = {f_ew, n_ew, P(FP32) | P(FP16)},
    [KCU_COPY] = {f_ew, n_ew, P(FP32)},
    [KCU_TRIAD] = {f_ew, n_ew, P(FP32)},
    [KCU_SOFTMAX] = {f_row, n_row, P(FP16)},
    [KCU_LAYERNORM] = {f_row, n_row, P(FP16)},
    [KCU_RMSNORM] = {f_row, n_row, P(FP16)},
    [KCU_ATTENTION] = {f_attn, n_attn, P(FP16) | P(BF16)},
    [KCU_CONV2D] = {f_conv, n_conv, P(FP16)},
};
_Static_assert(sizeof kinds / sizeof kinds[0] == KCU_KIND_COUNT, "one kinds[] row per enum kcu_kind");
_Static_assert(sizeof kcu_kind_names / sizeof kcu_kind_names[0] == KCU_KIND_COUNT + 1, "a name per kind");
_Static_assert(sizeof kcu_prec_names / sizeof kcu_prec_names[0] == KCU_PREC_COUNT + 1, "a name per precision");
_Static_assert(sizeof kcui_dt_bytes / sizeof kcui_dt_bytes[0] == KCUI_I32 + 1, "a size per element type");

static int lookup(const char *const *names, const char *name)
{
    for (int i = 0; name && names[i]; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

int kcu_kind_from_name(const char *name) { return lookup(kcu_kind_names, name); }
int kcu_prec_from_name(const char *name) { return lookup(kcu_prec_names, name); }

static int valid_kind(const struct kcu_case *c) { return (unsigned)c->kind < KCU_KIND_COUNT; }

static long long *field_ptr(struct kcu_case *c, const struct fld *f) { return (long long *)((char *)c + f->off); }
static long long field_val(const struct kcu_case *c, const struct fld *f)
{
    return *(const long long *)((const char *)c + f->off);
}

void kcu_case_init(struct kcu_case *c, enum kcu_kind k, enum kcu_prec p)
{
    memset(c, 0, sizeof *c);
    c->kind = k;
    c->prec = p;
    c->conv.N = c->conv.stride = c->conv.groups = 1;
    c->attn.B = c->attn.causal = 1;
}

const char *const *kcu_fields(enum kcu_kind k) { return (unsigned)k < KCU_KIND_COUNT ? kinds[k].names : NULL; }

static const struct fld *find(const struct kcu_case *c, const char *name)
{
    if (!valid_kind(c) || !name)
        return NULL;
    for (const struct fld *f = kinds[c->kind].f; f->name; f++)
        if (!strcmp(f->name, name))
            return f;
    return NULL;
}

int kcu_set_field(struct kcu_case *c, const char *name, long long v)
{
    const struct fld *f = find(c, name);
    if (!f)
        return -1;
    *field_ptr(c, f) = v;
    return 0;
}

int kcu_get_field(const struct kcu_case *c, const char *name, long long *v)
{
    const struct fld *f = find(c, name);
    if (!f)
        return -1;
    *v = field_val(c, f);
    return 0;
}

/* The case with its defaults resolved (attention Hkv 0 -> H, T 0 -> S). */
static struct kcu_case resolved(const struct kcu_case *c)
{
    struct kcu_case r = *c;
    if (r.kind == KCU_ATTENTION) {
        if (!r.attn.Hkv)
            r.attn.Hkv = r.attn.H;
        if (!r.attn.T)
            r.attn.T = r.attn.S;
    }
    return r;
}

int kcu_shape(const struct kcu_case *c, char *buf, size_t n)
{
    if (n && buf)
        buf[0] = '\0';
    if (!valid_kind(c))
        return 0;
    struct kcu_case r = resolved(c);
    int at = 0;
    for (const struct fld *f = kinds[c->kind].f; f->name; f++) {
        size_t room = (size_t)at < n ? n - (size_t)at : 0;
        int w = snprintf(room ? buf + at : NULL, room, "%s%s=%lld", at ? ";" : "", f->name, field_val(&r, f));
        if (w < 0)
            return -1;
        at += w;
    }
    return at;
}

static int bad(char *err, size_t errn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errn, const char *fmt, ...)
{
    if (err && errn) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errn, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static long long conv_out(long long in, long long k, long long stride, long long pad)
{
    return (in + 2 * pad - k) / stride + 1;
}

int kcu_validate(const struct kcu_case *c, char *err, size_t errn)
{
    if (!c)
        return bad(err, errn, "no case");
    if (!valid_kind(c))
        return bad(err, errn, "unknown kind %d", (int)c->kind);
    if ((unsigned)c->prec >= KCU_PREC_COUNT || !(kinds[c->kind].precs & (1u << c->prec))) {
        char list[80] = "";
        for (int p = 0; p < KCU_PREC_COUNT; p++)
            if (kinds[c->kind].precs & (1u << p))
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "", kcu_prec_names[p]);
        if (err && errn)
            snprintf(err, errn, "%s runs %s, not %s", kcu_kind_names[c->kind], list,
                     (unsigned)c->prec < KCU_PREC_COUNT ? kcu_prec_names[c->prec] : "that precision");
        return -1;
    }
    for (const struct fld *f = kinds[c->kind].f; f->name; f++) {
        long long v = field_val(c, f);
        if (v < f->min || v > f->max) {
            if (err && errn)
                snprintf(err, errn, "%s: %s = %lld, expected %lld .. %lld", kcu_kind_names[c->kind], f->name, v, f->min,
                         f->max);
            return -1;
        }
    }
    struct kcu_case r = resolved(c);
    switch (c->kind) {
    case KCU_GEMM:
    case KCU_GEMM_BIAS_GELU:
        if ((c->prec == KCU_FP8 || c->prec == KCU_INT8) && (r.gemm.N % 16 || r.gemm.K % 16))
            return bad(err, errn, "fp8 and int8 GEMMs (cuBLASLt) need N and K multiples of 16, got N = %lld, K = %lld",
                       r.gemm.N, r.gemm.K);
        break;
    case KCU_ATTENTION:
        if (r.attn.H % r.attn.Hkv)
            return bad(err, errn, "attention: Hkv = %lld must divide H = %lld", r.attn.Hkv, r.attn.H);
        if (r.attn.T < r.attn.S)
            return bad(err, errn, "attention: T = %lld must be at least S = %lld", r.attn.T, r.attn.S);
        if (r.attn.D != 32 && r.attn.D != 64 && r.attn.D != 96 && r.attn.D != 128)
            return bad(err, errn, "attention: D = %lld, expected 32, 64, 96 or 128", r.attn.D);
        break;
    case KCU_CONV2D: {
        const long long g = r.conv.groups;
        if (r.conv.C % g || r.conv.OC % g)
            return bad(err, errn, "conv2d: groups = %lld must divide C = %lld and OC = %lld", g, r.conv.C,
                       r.conv.OC);
        if (r.conv.H + 2 * r.conv.pad < r.conv.KH || r.conv.W + 2 * r.conv.pad < r.conv.KW)
            return bad(err, errn, "conv2d: the %lld x %lld kernel does not fit the padded input", r.conv.KH, r.conv.KW);
        long long p = r.conv.N * conv_out(r.conv.H, r.conv.KH, r.conv.stride, r.conv.pad) *
                      conv_out(r.conv.W, r.conv.KW, r.conv.stride, r.conv.pad);
        if (p > (1LL << 31) - 1)
            return bad(err, errn, "conv2d: %lld output pixels, at most %lld (cuBLAS dimensions are int)", p,
                       (1LL << 31) - 1);
        break;
    }
    default:
        break;
    }
    return 0;
}

/* ---- buffers, counts ---- */

static enum kcui_dt dt_of(enum kcu_prec p)
{
    static const enum kcui_dt t[KCU_PREC_COUNT] = {KCUI_F32, KCUI_F32, KCUI_F16, KCUI_BF16, KCUI_FP8, KCUI_I8};
    return t[p];
}

static void add_buf(struct kcui_plan *p, const char *name, long long n, enum kcui_dt dt)
{
    p->name[p->nbuf] = name;
    p->n[p->nbuf] = n;
    p->dt[p->nbuf++] = dt;
}

/* Key splits the decode kernel may use for T keys (kern_cuda_nn.cu picks at most this many). */
static long long fd_max_splits(long long T)
{
    long long s = (T + KCUI_FD_CHUNK_MIN - 1) / KCUI_FD_CHUNK_MIN;
    return s < KCUI_FD_MAX_SPLITS ? s : KCUI_FD_MAX_SPLITS;
}

void kcui_plan(const struct kcu_case *c0, struct kcui_plan *p)
{
    struct kcu_case r = resolved(c0);
    const struct kcu_case *c = &r;
    memset(p, 0, sizeof *p);
    enum kcui_dt in = dt_of(c->prec);
    switch (c->kind) {
    case KCU_GEMM:
    case KCU_GEMM_BIAS_GELU: {
        /* fp8 writes bf16, int8 int32; the rest the input type. */
        enum kcui_dt out = c->prec == KCU_FP8 ? KCUI_BF16 : c->prec == KCU_INT8 ? KCUI_I32 : in;
        add_buf(p, "A", c->gemm.M * c->gemm.K, in);
        add_buf(p, "B", c->gemm.N * c->gemm.K, in);
        if (c->kind == KCU_GEMM_BIAS_GELU)
            add_buf(p, "bias", c->gemm.N, in);
        add_buf(p, "C", c->gemm.M * c->gemm.N, out);
        if (c->kind == KCU_GEMM_BIAS_GELU || c->prec == KCU_FP8 || c->prec == KCU_INT8)
            p->ws_bytes = KCUI_LT_WS_BYTES;
        break;
    }
    case KCU_ADD:
    case KCU_TRIAD:
        add_buf(p, "a", c->ew.n, in);
        add_buf(p, "b", c->ew.n, in);
        add_buf(p, "y", c->ew.n, in);
        break;
    case KCU_GELU:
    case KCU_SILU:
    case KCU_COPY:
        add_buf(p, "x", c->ew.n, in);
        add_buf(p, "y", c->ew.n, in);
        break;
    case KCU_SOFTMAX:
    case KCU_LAYERNORM:
    case KCU_RMSNORM:
        add_buf(p, "x", c->row.rows * c->row.cols, KCUI_F16);
        if (c->kind != KCU_SOFTMAX)
            add_buf(p, "g", c->row.cols, KCUI_F16);
        if (c->kind == KCU_LAYERNORM)
            add_buf(p, "b", c->row.cols, KCUI_F16);
        add_buf(p, "y", c->row.rows * c->row.cols, KCUI_F16);
        break;
    case KCU_ATTENTION: {
        const long long q = c->attn.B * c->attn.S * c->attn.H * c->attn.D,
                        kv = c->attn.B * c->attn.T * c->attn.Hkv * c->attn.D;
        add_buf(p, "q", q, in);
        add_buf(p, "k", kv, in);
        add_buf(p, "v", kv, in);
        add_buf(p, "o", q, in);
        if (c->attn.S <= KCUI_FD_MAX_S) /* decode: partial outputs, maxima and sums of every split */
            p->ws_bytes = 4.0 * c->attn.B * c->attn.S * c->attn.H * fd_max_splits(c->attn.T) * (c->attn.D + 2);
        break;
    }
    case KCU_CONV2D: {
        const long long oh = conv_out(c->conv.H, c->conv.KH, c->conv.stride, c->conv.pad),
                        ow = conv_out(c->conv.W, c->conv.KW, c->conv.stride, c->conv.pad);
        add_buf(p, "x", c->conv.N * c->conv.H * c->conv.W * c->conv.C, KCUI_F16);
        add_buf(p, "w", c->conv.OC * c->conv.KH * c->conv.KW * (c->conv.C / c->conv.groups), KCUI_F16);
        add_buf(p, "y", c->conv.N * oh * ow * c->conv.OC, KCUI_F16);
        int depthwise = c->conv.groups == c->conv.C && c->conv.groups > 1;
        int direct = c->conv.KH == 1 && c->conv.KW == 1 && c->conv.stride == 1 && c->conv.pad == 0 &&
                     c->conv.groups == 1;
        if (!depthwise && !direct) /* im2col: [groups][pixels][KH KW C/groups] */
            p->ws_bytes = 2.0 * c->conv.N * oh * ow * c->conv.KH * c->conv.KW * c->conv.C;
        break;
    }
    default:
        break;
    }
}

static int uses_blas(const struct kcu_case *c) { return c->kind <= KCU_GEMM_BIAS_GELU || c->kind == KCU_CONV2D; }

double kcu_min_bytes(const struct kcu_case *c)
{
    if (kcu_validate(c, NULL, 0))
        return 0;
    struct kcui_plan p;
    kcui_plan(c, &p);
    double b = 0;
    for (int i = 0; i < p.nbuf; i++)
        b += (double)p.n[i] * kcui_dt_bytes[p.dt[i]];
    return b;
}

double kcu_bytes(const struct kcu_case *c)
{
    if (kcu_validate(c, NULL, 0))
        return 0;
    struct kcui_plan p;
    kcui_plan(c, &p);
    return kcu_min_bytes(c) + p.ws_bytes + (uses_blas(c) ? KCUI_LIB_BYTES : 0);
}

/* Query-key pairs attention scores: S queries at the last S of T positions see S (T - S + 1) +
 * S (S - 1) / 2 keys under the causal mask (wl_attention_pairs with no window). */
static double attn_pairs(const struct kcu_case *r)
{
    double S = (double)r->attn.S, T = (double)r->attn.T;
    return r->attn.causal ? S * (T - S + 1) + S * (S - 1) / 2 : S * T;
}

double kcu_flops(const struct kcu_case *c)
{
    if (kcu_validate(c, NULL, 0))
        return 0;
    struct kcu_case r = resolved(c);
    const double mnk = 2.0 * r.gemm.M * r.gemm.N * r.gemm.K, n = (double)r.ew.n,
                 rc = (double)r.row.rows * r.row.cols;
    switch (c->kind) {
    case KCU_GEMM: return mnk;
    case KCU_GEMM_BIAS_GELU: return mnk + 18.0 * r.gemm.M * r.gemm.N; /* bias add 1, GELU 17 (wl_fn_flops) */
    case KCU_ADD: return n;
    case KCU_GELU: return 17 * n;
    case KCU_SILU: return 13 * n;
    case KCU_COPY: return n;  /* dse's graph: a scale by 1 */
    case KCU_TRIAD: return n; /* dse's graph: a 2-input add */
    case KCU_SOFTMAX: return 5 * rc;
    case KCU_LAYERNORM: return 8 * rc;
    case KCU_RMSNORM: return 4 * rc;
    case KCU_ATTENTION: return (double)r.attn.B * r.attn.H * attn_pairs(&r) * (4.0 * r.attn.D + 5);
    case KCU_CONV2D: {
        const double oh = (double)conv_out(r.conv.H, r.conv.KH, r.conv.stride, r.conv.pad),
                     ow = (double)conv_out(r.conv.W, r.conv.KW, r.conv.stride, r.conv.pad);
        return 2.0 * r.conv.N * r.conv.OC * oh * ow * r.conv.KH * r.conv.KW * (double)(r.conv.C / r.conv.groups);
    }
    default: return 0;
    }
}

/* ---- references (double) ---- */

static double gelu(double x) { return 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
static double silu(double x) { return x / (1 + exp(-x)); }

#define KCUI_EPS 1e-5 /* the norms' epsilon (kern_cuda.h) */

static void ref_rows(const struct kcu_case *c, const float *const *in, double *out)
{
    const long long cols = c->row.cols;
    for (long long i = 0; i < c->row.rows; i++) {
        const float *x = in[0] + i * cols;
        double *y = out + i * cols, a = 0, b = 0;
        if (c->kind == KCU_SOFTMAX) {
            double m = x[0];
            for (long long j = 1; j < cols; j++)
                m = x[j] > m ? x[j] : m;
            for (long long j = 0; j < cols; j++)
                a += y[j] = exp(x[j] - m);
            for (long long j = 0; j < cols; j++)
                y[j] /= a;
        } else if (c->kind == KCU_LAYERNORM) {
            for (long long j = 0; j < cols; j++)
                a += x[j];
            a /= (double)cols;
            for (long long j = 0; j < cols; j++)
                b += (x[j] - a) * (x[j] - a);
            b = 1 / sqrt(b / (double)cols + KCUI_EPS);
            for (long long j = 0; j < cols; j++)
                y[j] = (x[j] - a) * b * in[1][j] + in[2][j];
        } else {
            for (long long j = 0; j < cols; j++)
                b += (double)x[j] * x[j];
            b = 1 / sqrt(b / (double)cols + KCUI_EPS);
            for (long long j = 0; j < cols; j++)
                y[j] = x[j] * b * in[1][j];
        }
    }
}

static double dot(const float *a, const float *b, long long n)
{
    double d = 0;
    for (long long e = 0; e < n; e++)
        d += (double)a[e] * b[e];
    return d;
}

/* Two passes over the keys (the maximum, then the weights), so no buffer of T scores is needed. */
static void ref_attention(const struct kcu_case *r, const float *const *in, double *out)
{
    const long long B = r->attn.B, H = r->attn.H, Hkv = r->attn.Hkv, S = r->attn.S, T = r->attn.T, D = r->attn.D;
    const double scale = 1 / sqrt((double)D);
    for (long long b = 0; b < B; b++)
        for (long long s = 0; s < S; s++)
            for (long long h = 0; h < H; h++) {
                const float *q = in[0] + ((b * S + s) * H + h) * D;
                const long long kvh = h / (H / Hkv), lim = r->attn.causal ? T - S + s + 1 : T;
                double m = -INFINITY, l = 0, *o = out + ((b * S + s) * H + h) * D;
                for (long long t = 0; t < lim; t++) {
                    double d = dot(q, in[1] + ((b * T + t) * Hkv + kvh) * D, D) * scale;
                    m = d > m ? d : m;
                }
                for (long long e = 0; e < D; e++)
                    o[e] = 0;
                for (long long t = 0; t < lim; t++) {
                    const long long at = ((b * T + t) * Hkv + kvh) * D;
                    double p = exp(dot(q, in[1] + at, D) * scale - m);
                    l += p;
                    for (long long e = 0; e < D; e++)
                        o[e] += p * in[2][at + e];
                }
                for (long long e = 0; e < D; e++)
                    o[e] /= l;
            }
}

static void ref_conv(const struct kcu_case *r, const float *const *in, double *out)
{
    const long long N = r->conv.N, C = r->conv.C, H = r->conv.H, W = r->conv.W, OC = r->conv.OC, KH = r->conv.KH,
                    KW = r->conv.KW, st = r->conv.stride, pad = r->conv.pad, G = r->conv.groups;
    const long long OH = conv_out(H, KH, st, pad), OW = conv_out(W, KW, st, pad), Cg = C / G, OCg = OC / G;
    for (long long n = 0; n < N; n++)
        for (long long oh = 0; oh < OH; oh++)
            for (long long ow = 0; ow < OW; ow++)
                for (long long oc = 0; oc < OC; oc++) {
                    const long long g = oc / OCg;
                    double a = 0;
                    for (long long kh = 0; kh < KH; kh++)
                        for (long long kw = 0; kw < KW; kw++) {
                            const long long ih = oh * st - pad + kh, iw = ow * st - pad + kw;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                continue;
                            const float *x = in[0] + ((n * H + ih) * W + iw) * C + g * Cg,
                                        *w = in[1] + ((oc * KH + kh) * KW + kw) * Cg;
                            for (long long ci = 0; ci < Cg; ci++)
                                a += (double)x[ci] * w[ci];
                        }
                    out[((n * OH + oh) * OW + ow) * OC + oc] = a;
                }
}

void kcui_reference(const struct kcu_case *c, const float *const *in, double *out)
{
    struct kcu_case r = resolved(c);
    const long long M = r.gemm.M, N = r.gemm.N, K = r.gemm.K, n = r.ew.n;
    switch (c->kind) {
    case KCU_GEMM:
    case KCU_GEMM_BIAS_GELU:
        for (long long i = 0; i < M; i++)
            for (long long j = 0; j < N; j++) {
                double a = 0;
                for (long long k = 0; k < K; k++)
                    a += (double)in[0][i * K + k] * in[1][j * K + k];
                out[i * N + j] = c->kind == KCU_GEMM ? a : gelu(a + in[2][j]);
            }
        break;
    case KCU_ADD:
        for (long long i = 0; i < n; i++)
            out[i] = (double)in[0][i] + in[1][i];
        break;
    case KCU_TRIAD:
        for (long long i = 0; i < n; i++)
            out[i] = in[0][i] + 3.0 * in[1][i];
        break;
    case KCU_GELU:
    case KCU_SILU:
    case KCU_COPY:
        for (long long i = 0; i < n; i++)
            out[i] = c->kind == KCU_GELU ? gelu(in[0][i]) : c->kind == KCU_SILU ? silu(in[0][i]) : in[0][i];
        break;
    case KCU_SOFTMAX:
    case KCU_LAYERNORM:
    case KCU_RMSNORM:
        ref_rows(&r, in, out);
        break;
    case KCU_ATTENTION:
        ref_attention(&r, in, out);
        break;
    case KCU_CONV2D:
        ref_conv(&r, in, out);
        break;
    default:
        break;
    }
}

/* Bounds, relative to |ref| + rms(ref): the output's rounding (fp16 2^-11, bf16 2^-8 of the value) with
 * room for fp32 accumulation in another order, TF32's 10-bit inputs (about 2^-11 per product, random
 * signs), fast exponentials and, for attention, P rounded to the input type before P V. */
double kcui_tol(const struct kcu_case *c)
{
    const int half = c->prec == KCU_FP16, bf = c->prec == KCU_BF16;
    switch (c->kind) {
    case KCU_GEMM:
        return c->prec == KCU_INT8 ? 0 : c->prec == KCU_FP32 ? 1e-5 : c->prec == KCU_TF32 ? 5e-3 : half ? 2e-3 : 8e-3;
    case KCU_GEMM_BIAS_GELU: return bf ? 1e-2 : 5e-3;
    case KCU_ATTENTION: return bf ? 2e-2 : 5e-3;
    case KCU_SOFTMAX:
    case KCU_LAYERNORM:
    case KCU_RMSNORM: return 5e-3;
    case KCU_CONV2D: return 3e-3;
    default: return half ? 2e-3 : 1e-5;
    }
}

double kcui_compare(const double *ref, const double *y, long long n, long long *worst)
{
    double ss = 0, e = 0;
    for (long long i = 0; i < n; i++)
        ss += ref[i] * ref[i];
    const double rms = n ? sqrt(ss / (double)n) : 0;
    if (worst)
        *worst = 0;
    for (long long i = 0; i < n; i++) {
        double d = fabs(y[i] - ref[i]) / (fabs(ref[i]) + rms + 1e-300);
        if (!(d <= e)) { /* NaN counts as the worst */
            e = isnan(d) ? INFINITY : d;
            if (worst)
                *worst = i;
            if (isnan(d))
                break;
        }
    }
    return e;
}
