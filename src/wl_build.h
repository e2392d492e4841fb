/* wl_build.h -- small helpers shared by the graph generators (transformer, CNN): they add tensors
 * and operators under a name prefix with a repeat count and remember the first error. Internal to
 * the workload layer. */
#ifndef DSE_WL_BUILD_H
#define DSE_WL_BUILD_H

#include "wl.h"

struct gb {
    struct wl_graph *g;
    struct dse_err *e;
    const char *prefix; /* "layers." for the repeated block, "" otherwise */
    double count;       /* multiplicity given to ops added now */
    int rc;             /* first error, DSE_OK while all is well */
};

int gb_tensor(struct gb *b, const char *name, enum wl_kind kind, int rank, int64_t d0, int64_t d1, int64_t d2,
              int64_t d3);
/* Adds op `type` reading in[0..n_in) and writing a new tensor `out` of the given shape and kind. */
int gb_op(struct gb *b, const char *name, enum op_type type, const int *in, int n_in, const char *out,
          enum wl_kind okind, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3);
/* Dense layer on x[..., K] -> [..., N] with a [K, N] weight and optional bias. */
int gb_linear(struct gb *b, const char *name, int x, int64_t n, int bias, enum wl_kind okind);
int gb_eltwise(struct gb *b, const char *name, enum wl_fn fn, int x, int y);
int gb_norm(struct gb *b, const char *name, int rms, int x);

#endif
