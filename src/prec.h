/* prec.h -- numeric precisions and the per-role precision of a design point.
 *
 * A design point assigns a precision to three tensor roles: weights, activations and the KV cache.
 * Storage size follows each role's precision; the arithmetic precision of an operator is derived
 * from the roles it combines (prec_compute). Sizes are bytes per element (int4 is 0.5). */
#ifndef DSE_PREC_H
#define DSE_PREC_H

#include "err.h"

enum prec { P_FP64, P_FP32, P_TF32, P_BF16, P_FP16, P_FP8, P_INT8, P_INT4, P_COUNT };

extern const char *const prec_names[P_COUNT + 1]; /* NULL-terminated */

struct prec_cfg {
    enum prec w, a, kv; /* weights, activations, KV cache */
};

double prec_bytes(enum prec p);
int prec_is_int(enum prec p);
int prec_from_name(const char *s); /* -1 when unknown */
/* Parses "fp16", "w4a16", "w8a8", "w4a16kv8" or "w=int4,a=fp16,kv=fp8". */
int prec_parse(const char *s, struct prec_cfg *out, struct dse_err *e);
/* Writes the canonical short form of a configuration ("fp16" or "w=int4,a=fp16,kv=fp16"). */
void prec_format(const struct prec_cfg *c, char *buf, unsigned n);
/* Arithmetic precision for operands x and y: the wider one (low-precision weights are dequantized
 * to the activation precision, as weight-only kernels do); on a tie, y. */
enum prec prec_compute(enum prec x, enum prec y);
/* Default energy of one multiply-accumulate at 45 nm in pJ (Horowitz, ISSCC 2014, Fig. 1.1.9). */
double prec_mac_pJ_45nm(enum prec p);

/* Relative error a value stored at precision p carries (the accuracy proxy's building block):
 * floats: unit roundoff 2^-t, t = significand bits (Higham, Accuracy and Stability of Numerical
 * Algorithms, 2002, sec. 2.1); integers: symmetric uniform quantization with noise step / sqrt(12)
 * (Widrow and Kollar, Quantization Noise, 2008) relative to a signal whose peak is c times its RMS,
 * c = 4 for int8 per-channel and 2.5 for int4 with groups of 128 (assumed crest factors). */
double prec_rel_error(enum prec p);
/* Accuracy proxy of a configuration: the relative error of a GEMM output combining weights and
 * activations, and the KV cache when the workload has one: sqrt(e_w^2 + e_a^2 [+ e_kv^2]). */
double prec_accuracy_proxy(const struct prec_cfg *c, int has_kv);

#endif
