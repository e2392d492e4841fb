/* prec.c -- precision names, sizes, parsing and default MAC energies. */
#include "prec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const prec_names[P_COUNT + 1] = {"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", NULL};

double prec_bytes(enum prec p)
{
    static const double b[P_COUNT] = {8, 4, 4, 2, 2, 1, 1, 0.5}; /* tf32 is stored as fp32 */
    return (unsigned)p < P_COUNT ? b[p] : 0;
}

int prec_is_int(enum prec p) { return p == P_INT8 || p == P_INT4; }

int prec_from_name(const char *s)
{
    for (int i = 0; i < P_COUNT; i++)
        if (strcmp(prec_names[i], s) == 0)
            return i;
    return -1;
}

/* Short integer/float codes used by the "w4a16" form: 4 -> int4, 8 -> int8, 16 -> fp16, 32 -> fp32. */
static int prec_from_bits(const char *s, char **end)
{
    long v = strtol(s, end, 10);
    if (*end == s)
        return -1;
    switch (v) {
    case 4: return P_INT4;
    case 8: return P_INT8;
    case 16: return P_FP16;
    case 32: return P_FP32;
    default: return -1;
    }
}

int prec_parse(const char *s, struct prec_cfg *out, struct dse_err *e)
{
    char buf[96];
    const char *usage = "expected a precision (fp32, tf32, bf16, fp16, fp8, int8, int4), a short form such as "
                        "w4a16 or w8a8kv8, or w=int4,a=fp16,kv=fp8";
    int p = prec_from_name(s);
    if (p >= 0) {
        out->w = out->a = out->kv = (enum prec)p;
        /* Integer activations are not used for the KV cache and norms: an all-int8 point keeps
         * int8 storage everywhere, which is what int8 NPUs do. */
        return DSE_OK;
    }
    if (strlen(s) >= sizeof buf)
        return dse_err_set(e, DSE_EINPUT, NULL, "--precision", "'%.40s...': %s", s, usage);
    if (s[0] == 'w' && s[1] != '=') { /* w4a16[kv8] */
        char *end;
        int w = prec_from_bits(s + 1, &end);
        if (w < 0 || *end != 'a')
            goto bad;
        int a = prec_from_bits(end + 1, &end);
        if (a < 0)
            goto bad;
        int kv = a;
        if (strncmp(end, "kv", 2) == 0) {
            kv = prec_from_bits(end + 2, &end);
            if (kv < 0)
                goto bad;
        }
        if (*end)
            goto bad;
        out->w = (enum prec)w;
        out->a = (enum prec)a;
        out->kv = (enum prec)kv;
        return DSE_OK;
    }
    /* w=..,a=..,kv=.. in any order; a missing kv follows a, a missing w follows a. */
    {
        int w = -1, a = -1, kv = -1;
        strcpy(buf, s);
        for (char *tok = buf, *next; tok; tok = next) {
            next = strchr(tok, ',');
            if (next)
                *next++ = '\0';
            char *eq = strchr(tok, '=');
            if (!eq)
                goto bad; /* an empty item too: "w=int4,,a=fp16" */
            *eq = '\0';
            int v = prec_from_name(eq + 1);
            if (v < 0)
                goto bad;
            int *slot = strcmp(tok, "w") == 0 ? &w : strcmp(tok, "a") == 0 ? &a : strcmp(tok, "kv") == 0 ? &kv : NULL;
            if (!slot)
                goto bad;
            if (*slot >= 0) /* "w=int4,...,w=int8" is a slip, not "the last one wins" */
                return dse_err_set(e, DSE_EINPUT, NULL, "--precision", "'%s': %s= given twice", s, tok);
            *slot = v;
        }
        if (a < 0)
            goto bad;
        out->a = (enum prec)a;
        out->w = (enum prec)(w < 0 ? a : w);
        out->kv = (enum prec)(kv < 0 ? a : kv);
        return DSE_OK;
    }
bad:
    return dse_err_set(e, DSE_EINPUT, NULL, "--precision", "'%s': %s", s, usage);
}

void prec_format(const struct prec_cfg *c, char *buf, unsigned n)
{
    if (c->w == c->a && c->a == c->kv)
        snprintf(buf, n, "%s", prec_names[c->a]);
    else
        snprintf(buf, n, "w=%s,a=%s,kv=%s", prec_names[c->w], prec_names[c->a], prec_names[c->kv]);
}

enum prec prec_compute(enum prec x, enum prec y)
{
    return prec_bytes(x) > prec_bytes(y) ? x : y;
}

double prec_mac_pJ_45nm(enum prec p)
{
    /* Horowitz ISSCC 2014: fp32 mult 3.7 + add 0.9; fp16 mult 1.1 + add 0.4; int8 mult 0.2 + add 0.03;
     * int32 add 0.1. Not in the figure, derived by scaling multiplier energy with mantissa width
     * squared: fp64 (53/24)^2 x 3.7 + 2 x 0.9 = 19.8; bf16 (8/11)^2 x 1.1 + 0.4 = 0.98; tf32 uses the
     * fp16-sized multiplier (11-bit mantissa) + fp32 add = 2.0; fp8 (4/11)^2 x 1.1 + 0.4 = 0.55 (fp16
     * accumulate); int4 (4/8)^2 x 0.2 + 0.03 = 0.08. */
    static const double pj[P_COUNT] = {19.8, 4.6, 2.0, 0.98, 1.5, 0.55, 0.23, 0.08};
    return (unsigned)p < P_COUNT ? pj[p] : 0;
}

double prec_rel_error(enum prec p)
{
    switch (p) {
    case P_FP64: return ldexp(1, -53);
    case P_FP32: return ldexp(1, -24);
    case P_TF32: return ldexp(1, -11);
    case P_BF16: return ldexp(1, -8);
    case P_FP16: return ldexp(1, -11);
    case P_FP8: return ldexp(1, -4); /* e4m3: 3 stored + 1 implicit significand bits */
    case P_INT8: return 4.0 / (127 * sqrt(12.0));
    case P_INT4: return 2.5 / (7 * sqrt(12.0));
    default: return 1;
    }
}

double prec_accuracy_proxy(const struct prec_cfg *c, int has_kv)
{
    double w = prec_rel_error(c->w), a = prec_rel_error(c->a), kv = has_kv ? prec_rel_error(c->kv) : 0;
    return sqrt(w * w + a * a + kv * kv);
}
