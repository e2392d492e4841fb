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

/* Convolutional networks (NCHW; x a 4-d tensor). gb_conv: a k x k convolution with padding k / 2
 * (stride, groups) and a bias, as deployed networks run it (batch normalisation folded into the
 * weights and bias, as TensorRT, the Hailo and Edge TPU compilers do), then activation act (FN_NONE:
 * none) as its own element-wise op that a stack's fusion folds into the convolution. gb_conv_rect: the
 * same with a kh x kw kernel and padding (ph, pw). */
int gb_conv(struct gb *b, const char *name, int x, int64_t oc, int k, int stride, int groups, enum wl_fn act);
int gb_conv_rect(struct gb *b, const char *name, int x, int64_t oc, int kh, int kw, int stride, int ph, int pw,
                 int groups, enum wl_fn act);
/* Max (max = 1) or average pooling, a k x k window at stride with padding pad; k = 0: global. */
int gb_pool(struct gb *b, const char *name, int x, int max, int k, int stride, int pad);
/* xs[0..n) joined along the channel axis (any n: a chain of concats of at most WL_MAX_IN each). */
int gb_concat(struct gb *b, const char *name, const int *xs, int n);
/* Nearest-neighbour resize of x to oh x ow (a copy: every output element written once). */
int gb_resize(struct gb *b, const char *name, int x, int64_t oh, int64_t ow);
/* x [N, C, H, W] viewed as [N, C, H * W] (free). */
int gb_flatten_hw(struct gb *b, const char *name, int x);
/* Global average pool, flatten and a fully connected layer with bias to `classes` outputs. */
int gb_classifier(struct gb *b, int x, int64_t classes);
/* Squeeze-and-excitation on x (Hu et al., CVPR 2018): global average pool, 1x1 convolutions to `mid`
 * channels (act) and back (sigmoid), x scaled by the result per channel. */
int gb_squeeze_excite(struct gb *b, const char *name, int x, int64_t mid, enum wl_fn act);

#endif
