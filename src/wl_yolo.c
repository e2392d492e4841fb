/* wl_yolo.c -- single-stage detectors, as deployed (batch normalisation folded into each
 * convolution's bias: wl_build.h, gb_conv); the graph ends at the detection heads' raw outputs (box
 * decoding and non-maximum suppression run on the host, outside the accelerator).
 *
 * What every family here shares:
 * - The graph stops at the per-scale box and class convolutions, where the Hailo compiler's parser
 *   cuts these networks (hailo_model_zoo cfg/networks/<name>.yaml, parser nodes; YOLOX's there
 *   include the sigmoids of its objectness and class maps, so its graph does too). An ONNX export for
 *   TensorRT carries the decode after them (YOLOv8/9/10/11: the DFL softmax over 16 bins, its fixed
 *   1x1 convolution and the anchor arithmetic; YOLOX: the grid decode; YOLOv7/9 through trtutils: an
 *   NMS plugin as well): element-wise passes over the head outputs, about 0.01 % of the MACs and a few
 *   small kernels, left out for both targets.
 * - Leaky ReLU (Hailo's yolov5 v2.0 and *_leaky YOLOX, YOLOv7-tiny) is costed as FN_RELU: the same
 *   one compare-and-select per element.
 * - Parameter counts are the folded ones (a bias per convolution in place of BN's scale and shift,
 *   re-parameterised branches merged), as Ultralytics' fused summaries and the exported graphs count
 *   them; sources that count the training model (BN's two parameters per channel) come out up to
 *   0.5 % above. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wl_cnn_gen.h"

struct yolo {
    struct gb *b;
    enum wl_fn act; /* the network's activation (SiLU, or leaky ReLU costed as FN_RELU) */
    int64_t nc;     /* classes */
    int dw;         /* YOLOX-Nano: its 3x3 "Conv"s are DWConv (3x3 depthwise, then 1x1), both with act */
};

/* Writes a tensor or op name into n (WL_NAME_LEN bytes); the names here stay well short of it. */
__attribute__((format(printf, 2, 3))) static char *sub(char *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n, WL_NAME_LEN, fmt, ap);
    va_end(ap);
    return n;
}

static const struct wl_tensor *tens(const struct yolo *y, int x) { return &y->b->g->t[x]; }

static int64_t chans(const struct yolo *y, int x) { return y->b->rc ? 1 : tens(y, x)->dim[1]; }

/* A convolution with its network's activation (act 1) or none (act 0). */
static int conv(struct yolo *y, const char *name, int x, int64_t oc, int k, int s, int g, int act)
{
    return gb_conv(y->b, name, x, oc, k, s, g, act ? y->act : FN_NONE);
}

/* A k x k "Conv" that YOLOX-Nano makes depthwise-separable. */
static int xconv(struct yolo *y, const char *name, int x, int64_t oc, int k, int s)
{
    char nm[WL_NAME_LEN];
    if (!y->dw)
        return conv(y, name, x, oc, k, s, 1, 1);
    int h = conv(y, sub(nm, "%s.dconv", name), x, chans(y, x), k, s, (int)chans(y, x), 1);
    return conv(y, sub(nm, "%s.pconv", name), h, oc, 1, 1, 1, 1);
}

/* A view of c channels of x: a channel split (C2f's chunk, C2PSA's split) reads one part of its input
 * in place; which part is immaterial to the cost. */
static int split(struct yolo *y, const char *name, int x, int64_t c)
{
    if (y->b->rc)
        return -1;
    const struct wl_tensor *t = tens(y, x);
    int r = gb_op(y->b, name, OP_SLICE, &x, 1, name, WL_ACT, 4, t->dim[0], c, t->dim[2], t->dim[3]);
    if (r >= 0)
        y->b->g->op[y->b->g->n_op - 1].axis = 1;
    return r;
}

static int up2(struct yolo *y, const char *name, int x)
{
    if (y->b->rc)
        return -1;
    return gb_resize(y->b, name, x, 2 * tens(y, x)->dim[2], 2 * tens(y, x)->dim[3]);
}

static int cat2(struct yolo *y, const char *name, int a, int c)
{
    int xs[2] = {a, c};
    return gb_concat(y->b, name, xs, 2);
}

/* Bottleneck(c1, c2, shortcut, k = (k1, k2), e): k1 and k2 convolutions through int(c2 e) channels,
 * the input added back when shortcut and c1 == c2. */
static int bottleneck(struct yolo *y, const char *name, int x, int64_t c2, int shortcut, int k1, int k2, double e)
{
    char nm[WL_NAME_LEN];
    int h = conv(y, sub(nm, "%s.cv1", name), x, (int64_t)(c2 * e), k1, 1, 1, 1);
    h = xconv(y, sub(nm, "%s.cv2", name), h, c2, k2, 1);
    if (!shortcut || chans(y, x) != c2)
        return h;
    return gb_eltwise(y->b, sub(nm, "%s.add", name), FN_ADD, h, x);
}

/* C3 (CSP bottleneck with 3 convolutions; YOLOX's CSPLayer; YOLOv9's RepNCSP): cv1 and cv2 1x1 to
 * c2 / 2, n bottlenecks (k1 x k1 then 3x3, e = 1) on cv1's branch, cv3 1x1 over both. k1 = 1 (C3,
 * CSPLayer) or 3 (C3k; RepNCSP, whose RepConvN deploys as one 3x3). */
static int c3(struct yolo *y, const char *name, int x, int64_t c2, int n, int shortcut, int k1)
{
    char nm[WL_NAME_LEN];
    int a = conv(y, sub(nm, "%s.cv1", name), x, c2 / 2, 1, 1, 1, 1);
    int b = conv(y, sub(nm, "%s.cv2", name), x, c2 / 2, 1, 1, 1, 1);
    for (int i = 0; i < n; i++)
        a = bottleneck(y, sub(nm, "%s.m.%d", name, i), a, c2 / 2, shortcut, k1, 3, 1.0);
    int c = cat2(y, sub(nm, "%s.cat", name), a, b);
    return conv(y, sub(nm, "%s.cv3", name), c, c2, 1, 1, 1, 1);
}

/* YOLOv5 v2.0's BottleneckCSP: cv1 (1x1, BN, act) and n bottlenecks, then plain 1x1 convolutions cv3
 * (on that branch) and cv2 (on the input); BN and activation on their concatenation, whose per-channel
 * scale and shift fold into cv3's and cv2's biases; cv4 1x1 to c2. */
static int bottleneck_csp(struct yolo *y, const char *name, int x, int64_t c2, int n, int shortcut)
{
    char nm[WL_NAME_LEN];
    int a = conv(y, sub(nm, "%s.cv1", name), x, c2 / 2, 1, 1, 1, 1);
    for (int i = 0; i < n; i++)
        a = bottleneck(y, sub(nm, "%s.m.%d", name, i), a, c2 / 2, shortcut, 1, 3, 1.0);
    a = conv(y, sub(nm, "%s.cv3", name), a, c2 / 2, 1, 1, 1, 0);
    int b = conv(y, sub(nm, "%s.cv2", name), x, c2 / 2, 1, 1, 1, 0);
    int c = cat2(y, sub(nm, "%s.cat", name), a, b);
    c = gb_eltwise(y->b, sub(nm, "%s.act", name), y->act, c, -1);
    return conv(y, sub(nm, "%s.cv4", name), c, c2, 1, 1, 1, 1);
}

/* YOLOv10's CIB(c, c, shortcut, e = 1, lk): 3x3 depthwise, 1x1 to 2c, 3x3 depthwise (lk: RepVGGDW, a 7x7
 * and a 3x3 depthwise branch that fuse into one 7x7), 1x1 to c, 3x3 depthwise. */
static int cib(struct yolo *y, const char *name, int x, int64_t c2, int shortcut, int lk)
{
    char nm[WL_NAME_LEN];
    int64_t c1 = chans(y, x);
    int h = conv(y, sub(nm, "%s.cv1.0", name), x, c1, 3, 1, (int)c1, 1);
    h = conv(y, sub(nm, "%s.cv1.1", name), h, 2 * c2, 1, 1, 1, 1);
    h = conv(y, sub(nm, "%s.cv1.2", name), h, 2 * c2, lk ? 7 : 3, 1, (int)(2 * c2), 1);
    h = conv(y, sub(nm, "%s.cv1.3", name), h, c2, 1, 1, 1, 1);
    h = conv(y, sub(nm, "%s.cv1.4", name), h, c2, 3, 1, (int)c2, 1);
    if (!shortcut || c1 != c2)
        return h;
    return gb_eltwise(y->b, sub(nm, "%s.add", name), FN_ADD, h, x);
}

/* The inner block of a C2f-style layer: C2f's bottleneck (3x3, 3x3, e = 1); C3k2's plain one keeps
 * Bottleneck's default e = 0.5 (a c / 2 middle); C3k (a C3 of two 3x3-3x3 bottlenecks); CIB. */
enum inner { IN_BOTTLENECK, IN_BOTTLENECK_HALF, IN_C3K, IN_CIB, IN_CIB_LK };

/* C2f (and C3k2, C2fCIB, which differ only in the inner block): cv1 1x1 to 2c (c = c2 e), split in two
 * halves, n inner blocks chained on the second, cv2 1x1 over the (2 + n) c channels. */
static int c2f(struct yolo *y, const char *name, int x, int64_t c2, int n, int shortcut, double e, enum inner in)
{
    char nm[WL_NAME_LEN];
    int64_t c = (int64_t)(c2 * e);
    int parts[2 + 16];
    if (n > 16)
        n = 16;
    int h = conv(y, sub(nm, "%s.cv1", name), x, 2 * c, 1, 1, 1, 1);
    parts[0] = split(y, sub(nm, "%s.chunk0", name), h, c);
    parts[1] = split(y, sub(nm, "%s.chunk1", name), h, c);
    for (int i = 0; i < n; i++) {
        int p = parts[1 + i];
        sub(nm, "%s.m.%d", name, i);
        switch (in) {
        case IN_BOTTLENECK: parts[2 + i] = bottleneck(y, nm, p, c, shortcut, 3, 3, 1.0); break;
        case IN_BOTTLENECK_HALF: parts[2 + i] = bottleneck(y, nm, p, c, shortcut, 3, 3, 0.5); break;
        case IN_C3K: parts[2 + i] = c3(y, nm, p, c, 2, shortcut, 3); break;
        case IN_CIB:
        case IN_CIB_LK: parts[2 + i] = cib(y, nm, p, c, shortcut, in == IN_CIB_LK); break;
        }
    }
    h = gb_concat(y->b, sub(nm, "%s.cat", name), parts, 2 + n);
    return conv(y, sub(nm, "%s.cv2", name), h, c2, 1, 1, 1, 1);
}

/* SPP (parallel max pools 5, 9, 13: YOLOv5 v2.0, YOLOX) or SPPF (three chained 5x5 pools, the same
 * receptive fields: YOLOv5 v6+, v8, v10, v11; YOLOv9's SPPELAN): cv1 1x1 to hid channels, the pools at
 * stride 1, cv2 1x1 over the four. */
static int spp(struct yolo *y, const char *name, int x, int64_t hid, int64_t c2, int fast)
{
    char nm[WL_NAME_LEN];
    static const int ks[3] = {5, 9, 13};
    int p[4];
    p[0] = conv(y, sub(nm, "%s.cv1", name), x, hid, 1, 1, 1, 1);
    for (int i = 0; i < 3; i++) {
        int k = fast ? 5 : ks[i];
        p[i + 1] = gb_pool(y->b, sub(nm, "%s.m.%d", name, i), fast ? p[i] : p[0], 1, k, 1, k / 2);
    }
    int h = gb_concat(y->b, sub(nm, "%s.cat", name), p, 4);
    return conv(y, sub(nm, "%s.cv2", name), h, c2, 1, 1, 1, 1);
}

/* Ultralytics' Attention(dim, heads = dim / 64, attn_ratio 0.5) on x [B, dim, H, W]: qkv 1x1 to
 * dim + 2 heads kd channels (kd = hd / 2 per head for queries and keys, hd = dim / heads for values),
 * scores q^T k per head over the N = H W positions, softmax, v attn^T, plus a 3x3 depthwise positional
 * convolution of v; proj 1x1. The matmuls read q and attn in place (a GEMM takes either layout); the
 * 1 / sqrt(kd) scale folds into the softmax. */
static int attention(struct yolo *y, const char *name, int x)
{
    char nm[WL_NAME_LEN];
    struct gb *b = y->b;
    if (b->rc)
        return -1;
    const struct wl_tensor *t = tens(y, x);
    int64_t B = t->dim[0], C = t->dim[1], H = t->dim[2], W = t->dim[3], N = H * W;
    int64_t heads = C / 64 > 0 ? C / 64 : 1, hd = C / heads, kd = hd / 2;
    int qkv = conv(y, sub(nm, "%s.qkv", name), x, C + 2 * heads * kd, 1, 1, 1, 0);
    qkv = gb_op(b, sub(nm, "%s.qkv.view", name), OP_RESHAPE, &qkv, 1, nm, WL_ACT, 4, B, heads, 2 * kd + hd, N);
    int part[3];
    static const char *const pn[3] = {"q", "k", "v"};
    for (int i = 0; i < 3; i++) {
        int64_t w = i < 2 ? kd : hd;
        part[i] = gb_op(b, sub(nm, "%s.%s", name, pn[i]), OP_SLICE, &qkv, 1, nm, WL_ACT, 4, B, heads, w, N);
        if (part[i] >= 0)
            b->g->op[b->g->n_op - 1].axis = 2;
    }
    int qt = gb_op(b, sub(nm, "%s.qT", name), OP_RESHAPE, &part[0], 1, nm, WL_ACT, 4, B, heads, N, kd);
    int in[2] = {qt, part[1]};
    int s = gb_op(b, sub(nm, "%s.scores", name), OP_MATMUL, in, 2, nm, WL_ACT, 4, B, heads, N, N);
    s = gb_op(b, sub(nm, "%s.softmax", name), OP_SOFTMAX, &s, 1, nm, WL_ACT, 4, B, heads, N, N);
    in[0] = part[2];
    in[1] = s;
    int o = gb_op(b, sub(nm, "%s.av", name), OP_MATMUL, in, 2, nm, WL_ACT, 4, B, heads, hd, N);
    if (o >= 0)
        b->g->op[b->g->n_op - 1].transb = 1; /* v attn^T */
    o = gb_op(b, sub(nm, "%s.av.view", name), OP_RESHAPE, &o, 1, nm, WL_ACT, 4, B, C, H, W);
    int v = gb_op(b, sub(nm, "%s.v.view", name), OP_RESHAPE, &part[2], 1, nm, WL_ACT, 4, B, C, H, W);
    v = conv(y, sub(nm, "%s.pe", name), v, C, 3, 1, (int)C, 0);
    o = gb_eltwise(b, sub(nm, "%s.pe.add", name), FN_ADD, o, v);
    return conv(y, sub(nm, "%s.proj", name), o, C, 1, 1, 1, 0);
}

/* C2PSA (YOLO11; YOLOv10's PSA is the same with n = 1): cv1 1x1 to 2c (c = c1 / 2), split; on the second
 * half n PSABlocks (x + attention(x), then x + ffn(x): 1x1 to 2c and back); cv2 1x1 over both halves. */
static int c2psa(struct yolo *y, const char *name, int x, int n)
{
    char nm[WL_NAME_LEN];
    int64_t c1 = chans(y, x), c = c1 / 2;
    int h = conv(y, sub(nm, "%s.cv1", name), x, 2 * c, 1, 1, 1, 1);
    int a = split(y, sub(nm, "%s.a", name), h, c);
    int v = split(y, sub(nm, "%s.b", name), h, c);
    for (int i = 0; i < n; i++) {
        int t = attention(y, sub(nm, "%s.m.%d.attn", name, i), v);
        v = gb_eltwise(y->b, sub(nm, "%s.m.%d.add1", name, i), FN_ADD, v, t);
        t = conv(y, sub(nm, "%s.m.%d.ffn.0", name, i), v, 2 * c, 1, 1, 1, 1);
        t = conv(y, sub(nm, "%s.m.%d.ffn.1", name, i), t, c, 1, 1, 1, 0);
        v = gb_eltwise(y->b, sub(nm, "%s.m.%d.add2", name, i), FN_ADD, v, t);
    }
    h = cat2(y, sub(nm, "%s.cat", name), a, v);
    return conv(y, sub(nm, "%s.cv2", name), h, c1, 1, 1, 1, 1);
}

/* Focus (YOLOv5 v2.0, YOLOX): the four pixel phases of each 2x2 block stacked as channels (strided
 * slices and a concat: a copy), then a k x k convolution. */
static int focus(struct yolo *y, const char *name, int x, int64_t c2, int k)
{
    char nm[WL_NAME_LEN];
    if (y->b->rc)
        return -1;
    const struct wl_tensor *t = tens(y, x);
    int s = gb_op(y->b, sub(nm, "%s.space_to_depth", name), OP_COPY, &x, 1, nm, WL_ACT, 4, t->dim[0],
                  4 * t->dim[1], t->dim[2] / 2, t->dim[3] / 2);
    return conv(y, sub(nm, "%s.conv", name), s, c2, k, 1, 1, 1);
}

/* YOLOv9's GELAN blocks (models/common.py): ELAN1 (c5 = 0) and RepNCSPELAN4: cv1 1x1 to c3, split in
 * halves; two stages on the second half, each a RepNCSP (C3 of c5 3x3-3x3 bottlenecks; ELAN1: none)
 * then a 3x3 to c4; cv4 1x1 over c3 + 2 c4. */
static int gelan(struct yolo *y, const char *name, int x, int64_t c2, int64_t hid, int64_t c4, int c5)
{
    char nm[WL_NAME_LEN];
    int parts[4];
    int h = conv(y, sub(nm, "%s.cv1", name), x, hid, 1, 1, 1, 1);
    parts[0] = split(y, sub(nm, "%s.chunk0", name), h, hid / 2);
    parts[1] = split(y, sub(nm, "%s.chunk1", name), h, hid / 2);
    for (int i = 0; i < 2; i++) {
        h = parts[1 + i];
        if (c5 > 0)
            h = c3(y, sub(nm, "%s.cv%d.0", name, i + 2), h, c4, c5, 1, 3);
        parts[2 + i] = conv(y, sub(nm, "%s.cv%d.1", name, i + 2), h, c4, 3, 1, 1, 1);
    }
    h = gb_concat(y->b, sub(nm, "%s.cat", name), parts, 4);
    return conv(y, sub(nm, "%s.cv4", name), h, c2, 1, 1, 1, 1);
}

/* YOLOv9's AConv: a 2x2 average pool at stride 1, then a 3x3 stride-2 convolution. */
static int aconv(struct yolo *y, const char *name, int x, int64_t c2)
{
    char nm[WL_NAME_LEN];
    int h = gb_pool(y->b, sub(nm, "%s.avgpool", name), x, 0, 2, 1, 0);
    return conv(y, sub(nm, "%s.cv1", name), h, c2, 3, 2, 1, 1);
}

/* YOLOv9's ADown: the 2x2 average pool, then one half of the channels through a 3x3 stride-2
 * convolution and the other through a 3x3 stride-2 max pool and a 1x1, each to c2 / 2. */
static int adown(struct yolo *y, const char *name, int x, int64_t c2)
{
    char nm[WL_NAME_LEN];
    int h = gb_pool(y->b, sub(nm, "%s.avgpool", name), x, 0, 2, 1, 0);
    int64_t half = chans(y, h) / 2;
    int a = split(y, sub(nm, "%s.chunk0", name), h, half);
    int c = split(y, sub(nm, "%s.chunk1", name), h, half);
    a = conv(y, sub(nm, "%s.cv1", name), a, c2 / 2, 3, 2, 1, 1);
    c = gb_pool(y->b, sub(nm, "%s.maxpool", name), c, 1, 3, 2, 1);
    c = conv(y, sub(nm, "%s.cv2", name), c, c2 / 2, 1, 1, 1, 1);
    return cat2(y, sub(nm, "%s.cat", name), a, c);
}

/* Anchor-free DFL heads, per scale a box branch (two 3x3, then 1x1 to 4 x 16 distribution bins) and a
 * class branch (then 1x1 to nc):
 * - HD_V8 (YOLOv8's Detect): box width c2 = max(16, ch0 / 4, 64), class width c3 = max(ch0, min(nc,
 *   100)), the class branch two 3x3;
 * - HD_DW (YOLOv10's v10Detect, YOLO11's Detect): the class branch two depthwise-3x3 + 1x1 pairs;
 *   YOLOv10 deploys its one-to-one head only, the same shape (the one-to-many copy trains it);
 * - HD_V9 (YOLOv9's DDetect): c2 rounded up to a multiple of 4, the second 3x3 and the 1x1 of the box
 *   branch in 4 groups, c3 = max(ch0, min(2 nc, 128)). */
enum head { HD_ANCHOR, HD_V8, HD_DW, HD_V9 };

static int detect_dfl(struct yolo *y, const char *name, const int *p, enum head kind)
{
    char nm[WL_NAME_LEN];
    int64_t ch0 = chans(y, p[0]);
    int64_t cmin = kind == HD_V9 ? (2 * y->nc < 128 ? 2 * y->nc : 128) : (y->nc < 100 ? y->nc : 100);
    int64_t c2 = ch0 / 4 > 64 ? ch0 / 4 : 64, c3 = ch0 > cmin ? ch0 : cmin;
    int g = kind == HD_V9 ? 4 : 1;
    if (kind == HD_V9)
        c2 = (c2 + 3) / 4 * 4;
    for (int i = 0; i < 3; i++) {
        int64_t x = chans(y, p[i]);
        int h = conv(y, sub(nm, "%s.cv2.%d.0", name, i), p[i], c2, 3, 1, 1, 1);
        h = conv(y, sub(nm, "%s.cv2.%d.1", name, i), h, c2, 3, 1, g, 1);
        conv(y, sub(nm, "%s.cv2.%d.2", name, i), h, 64, 1, 1, g, 0);
        h = p[i];
        if (kind == HD_DW) {
            h = conv(y, sub(nm, "%s.cv3.%d.0.0", name, i), h, x, 3, 1, (int)x, 1);
            h = conv(y, sub(nm, "%s.cv3.%d.0.1", name, i), h, c3, 1, 1, 1, 1);
            h = conv(y, sub(nm, "%s.cv3.%d.1.0", name, i), h, c3, 3, 1, (int)c3, 1);
            h = conv(y, sub(nm, "%s.cv3.%d.1.1", name, i), h, c3, 1, 1, 1, 1);
        } else {
            h = conv(y, sub(nm, "%s.cv3.%d.0", name, i), h, c3, 3, 1, 1, 1);
            h = conv(y, sub(nm, "%s.cv3.%d.1", name, i), h, c3, 3, 1, 1, 1);
        }
        conv(y, sub(nm, "%s.cv3.%d.2", name, i), h, y->nc, 1, 1, 1, 0);
    }
    return y->b->rc;
}

/* Anchor-based (YOLOv5, YOLOv7): per scale one 1x1 convolution to 3 anchors x (5 + nc + extra); extra:
 * YOLOv5's Segment adds 32 mask coefficients per anchor. */
static int detect_anchor(struct yolo *y, const char *name, const int *p, int64_t extra)
{
    char nm[WL_NAME_LEN];
    for (int i = 0; i < 3; i++)
        conv(y, sub(nm, "%s.m.%d", name, i), p[i], 3 * (5 + y->nc + extra), 1, 1, 1, 0);
    return y->b->rc;
}

static int detect(struct yolo *y, const char *name, const int *p, enum head kind)
{
    return kind == HD_ANCHOR ? detect_anchor(y, name, p, 0) : detect_dfl(y, name, p, kind);
}

/* ---- Model yamls (Ultralytics: YOLOv5 v2.0 and v6+, YOLOv8, YOLOv10, YOLO11; YOLOv9's GELAN) ----
 * A table row is one yaml line [from, repeats, module, args] (from: the previous layer, and for a
 * concat another); parse_model's scaling applies: output channels c -> ceil(min(c, max_channels) x
 * width / 8) x 8, repeats n > 1 -> max(round(n x depth), 1), half to even as Python rounds. */
enum umod {
    U_CONV, U_FOCUS, U_CSP, U_C3, U_C2F, U_C3K2, U_CIB, U_SPP, U_SPPF, U_C2PSA, U_SCDOWN, U_UP, U_CAT,
    U_ELAN1, U_GELAN, U_ACONV, U_ADOWN, U_SPPELAN
};

struct ulayer {
    unsigned char mod, n; /* module, repeats as the yaml gives them */
    short c;              /* output channels before scaling */
    signed char k, s, p;  /* Conv, SCDown: kernel, stride; Conv: padding (0: k / 2) */
    signed char arg;      /* U_CAT: the other input's layer; C3, C2f, CSP: shortcut; C3k2: c3k;
                             RepNCSPELAN4: its RepNCSP's bottlenecks (c5) */
    float e;              /* C3k2: expansion (0: 0.5) */
    const char *alt;      /* variants on which the row takes its alternative: C2f -> C2fCIB with
                             shortcut (YOLOv10's per-size yamls), C3k2 -> c3k (parse_model: m, l, x) */
    const char *lk;       /* YOLOv10: variants whose CIB takes the large 7x7 kernel */
    short c3, c4;         /* YOLOv9: ELAN1, RepNCSPELAN4 and SPPELAN's inner widths (unscaled) */
};

struct uscale {
    char v[4];
    double depth, width;
    int max_ch;
};

/* Task heads beside Detect (Ultralytics head.py): Segment adds the mask prototypes (Proto: a 3x3 to npr,
 * a 2x2 stride-2 transposed convolution, a 3x3, a 1x1 to nm = 32 masks at P3's twice resolution) and per
 * scale a branch of two 3x3 to c4 = max(ch0 / 4, nm) and a 1x1 to the nm mask coefficients; npr is 256
 * scaled as the yaml's widths are (parse_model). Pose adds per scale two 3x3 to c4 = max(ch0 / 4, nk) and
 * a 1x1 to nk = 17 x 3 keypoint terms. YOLOv5's Segment (ultralytics/yolov5 v7.0 models/yolo.py and
 * models/common.py Proto) puts the 32 coefficients in each anchor's output instead and upsamples its
 * prototypes by nearest neighbour, not a transposed convolution. */
enum task { TK_DETECT, TK_SEGMENT, TK_POSE };

struct ufamily {
    const struct ulayer *l;
    int n;
    int head_from[3]; /* the layers the Detect head reads (P3, P4, P5) */
    enum head head;
    enum wl_fn act;
    const struct uscale *scales; /* ends with v "" */
    enum task task;
};

static int deconv2(struct yolo *y, const char *name, int x, int64_t c);

/* The Segment or Pose head's own convolutions beside Detect's (above); width: the scale's. */
static int task_head(struct yolo *y, const char *name, const int *p, enum task task, int anchor, double width,
                     int max_ch)
{
    char nm[WL_NAME_LEN];
    if (task == TK_DETECT || y->b->rc)
        return y->b->rc;
    int64_t ch0 = chans(y, p[0]), nk = task == TK_SEGMENT ? 32 : 17 * 3, c4 = ch0 / 4 > nk ? ch0 / 4 : nk;
    if (task == TK_SEGMENT) {
        int64_t npr = (int64_t)ceil((256 < max_ch ? 256 : max_ch) * width / 8) * 8;
        int h = conv(y, sub(nm, "%s.proto.cv1", name), p[0], npr, 3, 1, 1, 1);
        sub(nm, "%s.proto.upsample", name);
        h = anchor ? up2(y, nm, h) : deconv2(y, nm, h, npr);
        h = conv(y, sub(nm, "%s.proto.cv2", name), h, npr, 3, 1, 1, 1);
        conv(y, sub(nm, "%s.proto.cv3", name), h, 32, 1, 1, 1, 1);
    }
    for (int i = 0; i < 3 && !anchor; i++) {
        int h = conv(y, sub(nm, "%s.cv4.%d.0", name, i), p[i], c4, 3, 1, 1, 1);
        h = conv(y, sub(nm, "%s.cv4.%d.1", name, i), h, c4, 3, 1, 1, 1);
        conv(y, sub(nm, "%s.cv4.%d.2", name, i), h, nk, 1, 1, 1, 0);
    }
    return y->b->rc;
}

/* Whether variant v (one letter here) is in set. */
static int in_set(const char *set, const char *v) { return set && v[0] && strstr(set, v) != NULL; }

static int yaml_model(struct gb *b, const struct wl_cnn *cfg, int x, const struct ufamily *f)
{
    struct yolo y = {b, f->act, cfg->num_classes, 0};
    const struct uscale *sc = f->scales;
    while (sc->v[0] && strcmp(sc->v, cfg->variant))
        sc++;
    if (!sc->v[0])
        return b->rc = dse_err_set(b->e, DSE_EINPUT, NULL, NULL, "no scale '%s'", cfg->variant);
    int out[32];
    char nm[WL_NAME_LEN];
    if (f->n > 32)
        return b->rc = dse_err_set(b->e, DSE_EINPUT, NULL, NULL, "a model table of %d rows (at most 32)", f->n);
    for (int i = 0; i < f->n && !b->rc; i++) {
        const struct ulayer *l = &f->l[i];
        int64_t c = (int64_t)ceil((l->c < sc->max_ch ? l->c : sc->max_ch) * sc->width / 8) * 8;
        int n = l->n > 1 ? (int)nearbyint(l->n * sc->depth) : l->n, alt = in_set(l->alt, cfg->variant);
        enum inner cibk = in_set(l->lk, cfg->variant) ? IN_CIB_LK : IN_CIB;
        int in = i ? out[i - 1] : x, pad = l->p ? l->p : l->k / 2;
        if (n < 1)
            n = 1;
        sub(nm, "m%d", i);
        switch ((enum umod)l->mod) {
        case U_CONV: out[i] = gb_conv_rect(b, nm, in, c, l->k, l->k, l->s, pad, pad, 1, y.act); break;
        case U_FOCUS: out[i] = focus(&y, nm, in, c, l->k); break;
        case U_CSP: out[i] = bottleneck_csp(&y, nm, in, c, n, l->arg); break;
        case U_C3: out[i] = c3(&y, nm, in, c, n, l->arg, 1); break;
        case U_C2F: out[i] = c2f(&y, nm, in, c, n, alt || l->arg, 0.5, alt ? cibk : IN_BOTTLENECK); break;
        case U_C3K2:
            out[i] = c2f(&y, nm, in, c, n, 1, l->e > 0 ? l->e : 0.5, l->arg || alt ? IN_C3K : IN_BOTTLENECK_HALF);
            break;
        case U_CIB: out[i] = c2f(&y, nm, in, c, n, 1, 0.5, cibk); break;
        case U_SPP: out[i] = spp(&y, nm, in, chans(&y, in) / 2, c, 0); break;
        case U_SPPF: out[i] = spp(&y, nm, in, chans(&y, in) / 2, c, 1); break;
        case U_SPPELAN: out[i] = spp(&y, nm, in, l->c3, c, 1); break;
        case U_C2PSA: out[i] = c2psa(&y, nm, in, n); break;
        case U_SCDOWN: /* 1x1, then a strided depthwise k x k without activation */
            out[i] = conv(&y, sub(nm, "m%d.cv1", i), in, c, 1, 1, 1, 1);
            out[i] = conv(&y, sub(nm, "m%d.cv2", i), out[i], c, l->k, l->s, (int)c, 0);
            break;
        case U_UP: out[i] = up2(&y, nm, in); break;
        case U_CAT: out[i] = cat2(&y, nm, in, out[l->arg]); break;
        case U_ELAN1: out[i] = gelan(&y, nm, in, c, l->c3, l->c4, 0); break;
        case U_GELAN: out[i] = gelan(&y, nm, in, c, l->c3, l->c4, l->arg); break;
        case U_ACONV: out[i] = aconv(&y, nm, in, c); break;
        case U_ADOWN: out[i] = adown(&y, nm, in, c); break;
        }
    }
    if (b->rc)
        return b->rc;
    int p[3] = {out[f->head_from[0]], out[f->head_from[1]], out[f->head_from[2]]};
    int anchor = f->head == HD_ANCHOR;
    if (anchor ? detect_anchor(&y, sub(nm, "m%d", f->n), p, f->task == TK_SEGMENT ? 32 : 0)
               : detect(&y, sub(nm, "m%d", f->n), p, f->head))
        return b->rc;
    return task_head(&y, sub(nm, "m%d", f->n), p, f->task, anchor, sc->width, sc->max_ch);
}

/* Row shorthands: R(module, repeats, channels, arg) for blocks, CV(channels, k, s) for Conv. */
#define R(m, n, c, a) {m, n, c, 0, 0, 0, a, 0, NULL, NULL, 0, 0}
#define CV(c, k, s) {U_CONV, 1, c, k, s, 0, 0, 0, NULL, NULL, 0, 0}
#define UP {U_UP, 1, 0, 0, 0, 0, 0, 0, NULL, NULL, 0, 0}
#define CAT(f) {U_CAT, 1, 0, 0, 0, 0, f, 0, NULL, NULL, 0, 0}
#define ALT(m, n, c, a, alt, lk) {m, n, c, 0, 0, 0, a, 0, alt, lk, 0, 0}
#define GE(c2, c3, c4, c5) {U_GELAN, 1, c2, 0, 0, 0, c5, 0, NULL, NULL, c3, c4}
#define ROWS(t) (int)(sizeof t / sizeof t[0])

/* YOLOv8: ultralytics/ultralytics ultralytics/cfg/models/v8/yolov8.yaml (commit 023641f5), modules in
 * ultralytics/nn/modules/{block,head}.py; Detect's class branch as in v8 (two 3x3). */
static const struct ulayer yolov8_l[] = {
    CV(64, 3, 2),
    CV(128, 3, 2),
    R(U_C2F, 3, 128, 1),
    CV(256, 3, 2),
    R(U_C2F, 6, 256, 1),
    CV(512, 3, 2),
    R(U_C2F, 6, 512, 1),
    CV(1024, 3, 2),
    R(U_C2F, 3, 1024, 1),
    R(U_SPPF, 1, 1024, 0),
    UP,
    CAT(6),
    R(U_C2F, 3, 512, 0),
    UP,
    CAT(4),
    R(U_C2F, 3, 256, 0),
    CV(256, 3, 2),
    CAT(12),
    R(U_C2F, 3, 512, 0),
    CV(512, 3, 2),
    CAT(9),
    R(U_C2F, 3, 1024, 0),
};
static const struct uscale yolov8_s[] = {{"n", 0.33, 0.25, 1024}, {"s", 0.33, 0.50, 1024}, {"m", 0.67, 0.75, 768},
                                         {"l", 1.00, 1.00, 512},  {"x", 1.00, 1.25, 512},  {"", 0, 0, 0}};
static const struct ufamily yolov8 = {yolov8_l, ROWS(yolov8_l), {15, 18, 21}, HD_V8, FN_SILU, yolov8_s, TK_DETECT};

/* YOLO11: ultralytics/ultralytics ultralytics/cfg/models/11/yolo11.yaml (commit 0a2ae50b): C3k2 (C2f
 * whose inner blocks are C3k where the yaml or parse_model's m/l/x rule sets c3k), C2PSA at P5 (its
 * attention's two matmuls are costed; Ultralytics' FLOPs, counted by thop over modules, leave them out:
 * 0.9 % of YOLO11n's MACs, 0.2 % of YOLO11x's), Detect with depthwise class branches. */
static const struct ulayer yolo11_l[] = {
    CV(64, 3, 2),
    CV(128, 3, 2),
    {U_C3K2, 2, 256, 0, 0, 0, 0, 0.25f, "mlx", NULL, 0, 0},
    CV(256, 3, 2),
    {U_C3K2, 2, 512, 0, 0, 0, 0, 0.25f, "mlx", NULL, 0, 0},
    CV(512, 3, 2),
    R(U_C3K2, 2, 512, 1),
    CV(1024, 3, 2),
    R(U_C3K2, 2, 1024, 1),
    R(U_SPPF, 1, 1024, 0),
    R(U_C2PSA, 2, 1024, 0),
    UP,
    CAT(6),
    ALT(U_C3K2, 2, 512, 0, "mlx", NULL),
    UP,
    CAT(4),
    ALT(U_C3K2, 2, 256, 0, "mlx", NULL),
    CV(256, 3, 2),
    CAT(13),
    ALT(U_C3K2, 2, 512, 0, "mlx", NULL),
    CV(512, 3, 2),
    CAT(10),
    R(U_C3K2, 2, 1024, 1),
};
static const struct uscale yolo11_s[] = {{"n", 0.50, 0.25, 1024}, {"s", 0.50, 0.50, 1024}, {"m", 0.50, 1.00, 512},
                                         {"l", 1.00, 1.00, 512},  {"x", 1.00, 1.50, 512},  {"", 0, 0, 0}};
static const struct ufamily yolo11 = {yolo11_l, ROWS(yolo11_l), {16, 19, 22}, HD_DW, FN_SILU, yolo11_s, TK_DETECT};

/* YOLOv10: THU-MIG/yolov10 ultralytics/cfg/models/v10/yolov10{n,s,m,b,l,x}.yaml and
 * ultralytics/nn/modules/block.py (commit 453c6e38, the one trtutils exports): SCDown, C2fCIB where
 * the size's yaml has it (alt; lk: RepVGGDW, deployed fused as one 7x7 depthwise), PSA at P5 (C2PSA
 * with one block; its matmuls costed as in YOLO11), v10Detect's one-to-one head. */
static const struct ulayer yolov10_l[] = {
    CV(64, 3, 2),
    CV(128, 3, 2),
    R(U_C2F, 3, 128, 1),
    CV(256, 3, 2),
    R(U_C2F, 6, 256, 1),
    {U_SCDOWN, 1, 512, 3, 2, 0, 0, 0, NULL, NULL, 0, 0},
    ALT(U_C2F, 6, 512, 1, "x", NULL),
    {U_SCDOWN, 1, 1024, 3, 2, 0, 0, 0, NULL, NULL, 0, 0},
    ALT(U_C2F, 3, 1024, 1, "smblx", "s"),
    R(U_SPPF, 1, 1024, 0),
    R(U_C2PSA, 1, 1024, 0),
    UP,
    CAT(6),
    ALT(U_C2F, 3, 512, 0, "blx", NULL),
    UP,
    CAT(4),
    R(U_C2F, 3, 256, 0),
    CV(256, 3, 2),
    CAT(13),
    ALT(U_C2F, 3, 512, 0, "mblx", NULL),
    {U_SCDOWN, 1, 512, 3, 2, 0, 0, 0, NULL, NULL, 0, 0},
    CAT(10),
    ALT(U_CIB, 3, 1024, 1, NULL, "ns"),
};
static const struct uscale yolov10_s[] = {{"n", 0.33, 0.25, 1024}, {"s", 0.33, 0.50, 1024}, {"m", 0.67, 0.75, 768},
                                          {"b", 0.67, 1.00, 512},  {"l", 1.00, 1.00, 512},  {"x", 1.00, 1.25, 512},
                                          {"", 0, 0, 0}};
static const struct ufamily yolov10 = {yolov10_l, ROWS(yolov10_l), {16, 19, 22}, HD_DW, FN_SILU, yolov10_s, TK_DETECT};

/* YOLOv5 v6.0+: ultralytics/yolov5 models/yolov5{n,s,m,l,x}.yaml (tag v6.0, 956be8e6): a 6x6 stride-2
 * stem, C3, SPPF, SiLU, the anchor-based Detect. No channel cap. */
static const struct ulayer yolov5_l[] = {
    {U_CONV, 1, 64, 6, 2, 2, 0, 0, NULL, NULL, 0, 0},
    CV(128, 3, 2),
    R(U_C3, 3, 128, 1),
    CV(256, 3, 2),
    R(U_C3, 6, 256, 1),
    CV(512, 3, 2),
    R(U_C3, 9, 512, 1),
    CV(1024, 3, 2),
    R(U_C3, 3, 1024, 1),
    R(U_SPPF, 1, 1024, 0),
    CV(512, 1, 1),
    UP,
    CAT(6),
    R(U_C3, 3, 512, 0),
    CV(256, 1, 1),
    UP,
    CAT(4),
    R(U_C3, 3, 256, 0),
    CV(256, 3, 2),
    CAT(14),
    R(U_C3, 3, 512, 0),
    CV(512, 3, 2),
    CAT(10),
    R(U_C3, 3, 1024, 0),
};
static const struct uscale yolov5_s[] = {{"n", 0.33, 0.25, 1 << 30}, {"s", 0.33, 0.50, 1 << 30},
                                         {"m", 0.67, 0.75, 1 << 30}, {"l", 1.00, 1.00, 1 << 30},
                                         {"x", 1.33, 1.25, 1 << 30}, {"", 0, 0, 0}};
static const struct ufamily yolov5 = {yolov5_l, ROWS(yolov5_l), {17, 20, 23}, HD_ANCHOR, FN_SILU, yolov5_s, TK_DETECT};

/* YOLOv5 v2.0, the one Hailo retrains and deploys as yolov5s / yolov5m (hailo_model_zoo
 * training/yolov5/Dockerfile: hailo-ai/yolov5 branch v2.0.1 from the v2.0 weights): ultralytics/yolov5
 * models/yolov5{s,m,l,x}.yaml and models/common.py at tag v2.0 (2a149a48): Focus stem, BottleneckCSP,
 * SPP (5, 9, 13), LeakyReLU(0.1). */
static const struct ulayer yolov5v2_l[] = {
    {U_FOCUS, 1, 64, 3, 1, 0, 0, 0, NULL, NULL, 0, 0},
    CV(128, 3, 2),
    R(U_CSP, 3, 128, 1),
    CV(256, 3, 2),
    R(U_CSP, 9, 256, 1),
    CV(512, 3, 2),
    R(U_CSP, 9, 512, 1),
    CV(1024, 3, 2),
    R(U_SPP, 1, 1024, 0),
    R(U_CSP, 3, 1024, 0),
    CV(512, 1, 1),
    UP,
    CAT(6),
    R(U_CSP, 3, 512, 0),
    CV(256, 1, 1),
    UP,
    CAT(4),
    R(U_CSP, 3, 256, 0),
    CV(256, 3, 2),
    CAT(14),
    R(U_CSP, 3, 512, 0),
    CV(512, 3, 2),
    CAT(10),
    R(U_CSP, 3, 1024, 0),
};
static const struct uscale yolov5v2_s[] = {{"s", 0.33, 0.50, 1 << 30}, {"m", 0.67, 0.75, 1 << 30},
                                           {"l", 1.00, 1.00, 1 << 30}, {"x", 1.33, 1.25, 1 << 30}, {"", 0, 0, 0}};
static const struct ufamily yolov5v2 = {yolov5v2_l, ROWS(yolov5v2_l), {17, 20, 23}, HD_ANCHOR, FN_RELU, yolov5v2_s,
                                        TK_DETECT};

/* YOLOv9 as deployed: the *-converted weights trtutils fetches are GELAN (the auxiliary PGI branch
 * dropped): WongKinYiu/yolov9 models/detect/gelan-{t,s,m,c}.yaml (commit 5b1ea9a8, the one trtutils
 * exports), width and depth 1 (parse_model still rounds output channels up to a multiple of 8:
 * gelan-m's AConv 180 has 184), RepConvN fused, DDetect. One table per size. */
static const struct ulayer gelan_t[] = {
    CV(16, 3, 2),
    CV(32, 3, 2),
    {U_ELAN1, 1, 32, 0, 0, 0, 0, 0, NULL, NULL, 32, 16},
    R(U_ACONV, 1, 64, 0),
    GE(64, 64, 32, 3),
    R(U_ACONV, 1, 96, 0),
    GE(96, 96, 48, 3),
    R(U_ACONV, 1, 128, 0),
    GE(128, 128, 64, 3),
    {U_SPPELAN, 1, 128, 0, 0, 0, 0, 0, NULL, NULL, 64, 0},
    UP,
    CAT(6),
    GE(96, 96, 48, 3),
    UP,
    CAT(4),
    GE(64, 64, 32, 3),
    R(U_ACONV, 1, 48, 0),
    CAT(12),
    GE(96, 96, 48, 3),
    R(U_ACONV, 1, 64, 0),
    CAT(9),
    GE(128, 128, 64, 3),
};
static const struct ulayer gelan_s[] = {
    CV(32, 3, 2),
    CV(64, 3, 2),
    {U_ELAN1, 1, 64, 0, 0, 0, 0, 0, NULL, NULL, 64, 32},
    R(U_ACONV, 1, 128, 0),
    GE(128, 128, 64, 3),
    R(U_ACONV, 1, 192, 0),
    GE(192, 192, 96, 3),
    R(U_ACONV, 1, 256, 0),
    GE(256, 256, 128, 3),
    {U_SPPELAN, 1, 256, 0, 0, 0, 0, 0, NULL, NULL, 128, 0},
    UP,
    CAT(6),
    GE(192, 192, 96, 3),
    UP,
    CAT(4),
    GE(128, 128, 64, 3),
    R(U_ACONV, 1, 96, 0),
    CAT(12),
    GE(192, 192, 96, 3),
    R(U_ACONV, 1, 128, 0),
    CAT(9),
    GE(256, 256, 128, 3),
};
static const struct ulayer gelan_m[] = {
    CV(32, 3, 2),
    CV(64, 3, 2),
    GE(128, 128, 64, 1),
    R(U_ACONV, 1, 240, 0),
    GE(240, 240, 120, 1),
    R(U_ACONV, 1, 360, 0),
    GE(360, 360, 180, 1),
    R(U_ACONV, 1, 480, 0),
    GE(480, 480, 240, 1),
    {U_SPPELAN, 1, 480, 0, 0, 0, 0, 0, NULL, NULL, 240, 0},
    UP,
    CAT(6),
    GE(360, 360, 180, 1),
    UP,
    CAT(4),
    GE(240, 240, 120, 1),
    R(U_ACONV, 1, 180, 0),
    CAT(12),
    GE(360, 360, 180, 1),
    R(U_ACONV, 1, 240, 0),
    CAT(9),
    GE(480, 480, 240, 1),
};
static const struct ulayer gelan_c[] = {
    CV(64, 3, 2),
    CV(128, 3, 2),
    GE(256, 128, 64, 1),
    R(U_ADOWN, 1, 256, 0),
    GE(512, 256, 128, 1),
    R(U_ADOWN, 1, 512, 0),
    GE(512, 512, 256, 1),
    R(U_ADOWN, 1, 512, 0),
    GE(512, 512, 256, 1),
    {U_SPPELAN, 1, 512, 0, 0, 0, 0, 0, NULL, NULL, 256, 0},
    UP,
    CAT(6),
    GE(512, 512, 256, 1),
    UP,
    CAT(4),
    GE(256, 256, 128, 1),
    R(U_ADOWN, 1, 256, 0),
    CAT(12),
    GE(512, 512, 256, 1),
    R(U_ADOWN, 1, 512, 0),
    CAT(9),
    GE(512, 512, 256, 1),
};
_Static_assert(ROWS(gelan_t) == 22 && ROWS(gelan_s) == 22 && ROWS(gelan_m) == 22 && ROWS(gelan_c) == 22,
               "one GELAN row per yaml line, the head reading rows 15, 18, 21");
static const struct uscale gelan_scale[] = {{"t", 1, 1, 1 << 30}, {"s", 1, 1, 1 << 30}, {"m", 1, 1, 1 << 30},
                                            {"c", 1, 1, 1 << 30}, {"", 0, 0, 0}};

static int gen_yolov9(struct gb *b, const struct wl_cnn *c, int x)
{
    static const struct ulayer *const tables[4] = {gelan_t, gelan_s, gelan_m, gelan_c}; /* 22 rows each */
    static const char sizes[] = "tsmc";
    const char *at = c->variant[0] ? strchr(sizes, c->variant[0]) : NULL;
    struct ufamily f = {tables[at ? at - sizes : 0], ROWS(gelan_t), {15, 18, 21}, HD_V9, FN_SILU, gelan_scale,
                        TK_DETECT};
    return yaml_model(b, c, x, &f);
}

static int gen_yolov8(struct gb *b, const struct wl_cnn *c, int x) { return yaml_model(b, c, x, &yolov8); }
static int gen_yolov8_seg(struct gb *b, const struct wl_cnn *c, int x)
{
    struct ufamily f = yolov8;
    f.task = TK_SEGMENT;
    return yaml_model(b, c, x, &f);
}
static int gen_yolov8_pose(struct gb *b, const struct wl_cnn *c, int x)
{
    struct ufamily f = yolov8;
    f.task = TK_POSE;
    return yaml_model(b, c, x, &f);
}
static int gen_yolo11(struct gb *b, const struct wl_cnn *c, int x) { return yaml_model(b, c, x, &yolo11); }
static int gen_yolov10(struct gb *b, const struct wl_cnn *c, int x) { return yaml_model(b, c, x, &yolov10); }
static int gen_yolov5(struct gb *b, const struct wl_cnn *c, int x) { return yaml_model(b, c, x, &yolov5); }
static int gen_yolov5_seg(struct gb *b, const struct wl_cnn *c, int x)
{
    struct ufamily f = yolov5;
    f.task = TK_SEGMENT;
    return yaml_model(b, c, x, &f);
}
static int gen_yolov5v2(struct gb *b, const struct wl_cnn *c, int x) { return yaml_model(b, c, x, &yolov5v2); }

/* ---- YOLOX: Megvii-BaseDetection/YOLOX yolox/models/{darknet,yolo_pafpn,yolo_head,network_blocks}.py
 * and exps/default/yolox_*.py (commit 6ddff482) ----
 * CSPDarknet (Focus stem, CSPLayer = C3, SPP at P5), a PAFPN of CSPLayers, and the decoupled head: per
 * scale a 1x1 stem to 256 w, two 3x3 for classes and two for boxes, 1x1 predictions of nc classes,
 * 4 box terms and 1 objectness, sigmoids on the class and objectness maps. Widths are int(c x width),
 * not rounded to 8. Nano's 3x3 convolutions outside the stem, SPP and head stems are depthwise-
 * separable. */
struct yolox_scale {
    char v[8];
    double depth, width;
    int dw;
};
static const struct yolox_scale yolox_scales[] = {{"nano", 0.33, 0.25, 1}, {"tiny", 0.33, 0.375, 0},
                                                  {"s", 0.33, 0.50, 0},    {"m", 0.67, 0.75, 0},
                                                  {"l", 1.00, 1.00, 0},    {"x", 1.33, 1.25, 0},
                                                  {"", 0, 0, 0}};

static int yolox(struct gb *b, const struct wl_cnn *cfg, int x, enum wl_fn act)
{
    const struct yolox_scale *sc = yolox_scales;
    while (sc->v[0] && strcmp(sc->v, cfg->variant))
        sc++;
    if (!sc->v[0])
        return b->rc = dse_err_set(b->e, DSE_EINPUT, NULL, NULL, "no scale '%s'", cfg->variant);
    struct yolo y = {b, act, cfg->num_classes, sc->dw};
    char nm[WL_NAME_LEN];
    int64_t c0 = (int64_t)(64 * sc->width), d0 = (int64_t)nearbyint(3 * sc->depth);
    int64_t c1 = (int64_t)(256 * sc->width), c2 = (int64_t)(512 * sc->width), c3w = (int64_t)(1024 * sc->width);
    int bd = d0 > 1 ? (int)d0 : 1, n = (int)d0;
    int d[4];
    int h = focus(&y, "stem", x, c0, 3);
    for (int s = 0; s < 4; s++) { /* dark2 .. dark5 */
        int64_t c = c0 << (s + 1);
        h = xconv(&y, sub(nm, "dark%d.0", s + 2), h, c, 3, 2);
        if (s == 3)
            h = spp(&y, "dark5.spp", h, c / 2, c, 0);
        h = c3(&y, sub(nm, "dark%d.csp", s + 2), h, c, s == 0 || s == 3 ? bd : 3 * bd, s < 3, 1);
        d[s] = h;
    }
    int fpn0 = conv(&y, "lateral_conv0", d[3], c2, 1, 1, 1, 1);
    h = c3(&y, "C3_p4", cat2(&y, "cat_p4", up2(&y, "up_p4", fpn0), d[2]), c2, n, 0, 1);
    int fpn1 = conv(&y, "reduce_conv1", h, c1, 1, 1, 1, 1);
    int p[3];
    p[0] = c3(&y, "C3_p3", cat2(&y, "cat_p3", up2(&y, "up_p3", fpn1), d[1]), c1, n, 0, 1);
    h = xconv(&y, "bu_conv2", p[0], c1, 3, 2);
    p[1] = c3(&y, "C3_n3", cat2(&y, "cat_n3", h, fpn1), c2, n, 0, 1);
    h = xconv(&y, "bu_conv1", p[1], c2, 3, 2);
    p[2] = c3(&y, "C3_n4", cat2(&y, "cat_n4", h, fpn0), c3w, n, 0, 1);
    int64_t hc = (int64_t)(256 * sc->width);
    for (int i = 0; i < 3; i++) {
        int s = conv(&y, sub(nm, "head.stems.%d", i), p[i], hc, 1, 1, 1, 1);
        int c = xconv(&y, sub(nm, "head.cls_convs.%d.0", i), s, hc, 3, 1);
        c = xconv(&y, sub(nm, "head.cls_convs.%d.1", i), c, hc, 3, 1);
        c = conv(&y, sub(nm, "head.cls_preds.%d", i), c, y.nc, 1, 1, 1, 0);
        gb_eltwise(b, sub(nm, "head.cls_preds.%d.sigmoid", i), FN_SIGMOID, c, -1);
        int r = xconv(&y, sub(nm, "head.reg_convs.%d.0", i), s, hc, 3, 1);
        r = xconv(&y, sub(nm, "head.reg_convs.%d.1", i), r, hc, 3, 1);
        conv(&y, sub(nm, "head.reg_preds.%d", i), r, 4, 1, 1, 1, 0);
        c = conv(&y, sub(nm, "head.obj_preds.%d", i), r, 1, 1, 1, 1, 0);
        gb_eltwise(b, sub(nm, "head.obj_preds.%d.sigmoid", i), FN_SIGMOID, c, -1);
    }
    return b->rc;
}

static int gen_yolox(struct gb *b, const struct wl_cnn *c, int x) { return yolox(b, c, x, FN_SILU); }

/* Hailo's *_leaky YOLOX: the same networks retrained with LeakyReLU(0.1). */
static int gen_yolox_leaky(struct gb *b, const struct wl_cnn *c, int x) { return yolox(b, c, x, FN_RELU); }

/* ---- YOLOv7: WongKinYiu/yolov7 cfg/deploy/yolov7.yaml and yolov7-tiny.yaml, models/common.py (commit
 * a207844b, the one trtutils exports) ----
 * ELAN blocks (two 1x1 from the input, a chain of 3x3 on the second, a concat of both 1x1 outputs and
 * some of the chain, a 1x1 over it), MP down-sampling (a 2x2 max pool and 1x1 beside a 1x1 and a 3x3
 * stride-2), SPPCSPC at P5, RepConv (deployed fused as one 3x3) before the anchor-based Detect.
 * YOLOv7-tiny: ELAN of two 3x3, max-pool down-sampling, a small SPP-CSP, LeakyReLU(0.1). */

/* ELAN: a = 1x1 (x), b = 1x1 (x), n 3x3 of hid chained on b; concatenated: every `every`-th chain output
 * counted back from the last (all: every = 1), then b and a; 1x1 to out. */
static int elan(struct yolo *y, const char *name, int x, int64_t mid, int64_t hid, int n, int every, int64_t out)
{
    char nm[WL_NAME_LEN];
    int parts[8], h[8], np = 0;
    int a = conv(y, sub(nm, "%s.a", name), x, mid, 1, 1, 1, 1);
    int bb = conv(y, sub(nm, "%s.b", name), x, mid, 1, 1, 1, 1);
    h[0] = bb;
    for (int i = 1; i <= n; i++)
        h[i] = conv(y, sub(nm, "%s.h%d", name, i), h[i - 1], hid, 3, 1, 1, 1);
    for (int i = n; i >= 1; i -= every)
        parts[np++] = h[i];
    parts[np++] = bb;
    parts[np++] = a;
    int c = gb_concat(y->b, sub(nm, "%s.cat", name), parts, np);
    return conv(y, sub(nm, "%s.out", name), c, out, 1, 1, 1, 1);
}

/* MP down-sampling to 2c channels: [3x3 stride 2 (1x1 (x)), 1x1 (maxpool 2x2 (x))] and, in the head, the
 * earlier pyramid level `skip` (-1: none). */
static int mp_down(struct yolo *y, const char *name, int x, int64_t c, int skip)
{
    char nm[WL_NAME_LEN];
    int m = gb_pool(y->b, sub(nm, "%s.mp", name), x, 1, 2, 2, 0);
    m = conv(y, sub(nm, "%s.mp.conv", name), m, c, 1, 1, 1, 1);
    int s = conv(y, sub(nm, "%s.conv1", name), x, c, 1, 1, 1, 1);
    s = conv(y, sub(nm, "%s.conv2", name), s, c, 3, 2, 1, 1);
    int parts[3] = {s, m, skip};
    return gb_concat(y->b, sub(nm, "%s.cat", name), parts, skip >= 0 ? 3 : 2);
}

/* SPPCSPC(c2): cv1 1x1, cv3 3x3, cv4 1x1, the SPP pools (5, 9, 13) of that, cv5 1x1, cv6 3x3; beside it
 * cv2 1x1 of the input; cv7 1x1 over both; every width c2. */
static int sppcspc(struct yolo *y, const char *name, int x, int64_t c)
{
    char nm[WL_NAME_LEN];
    int h = conv(y, sub(nm, "%s.cv1", name), x, c, 1, 1, 1, 1);
    h = conv(y, sub(nm, "%s.cv3", name), h, c, 3, 1, 1, 1);
    h = conv(y, sub(nm, "%s.cv4", name), h, c, 1, 1, 1, 1);
    int p[4] = {h, -1, -1, -1};
    for (int i = 0; i < 3; i++)
        p[i + 1] = gb_pool(y->b, sub(nm, "%s.m.%d", name, i), h, 1, 5 + 4 * i, 1, (5 + 4 * i) / 2);
    h = gb_concat(y->b, sub(nm, "%s.cat1", name), p, 4);
    h = conv(y, sub(nm, "%s.cv5", name), h, c, 1, 1, 1, 1);
    h = conv(y, sub(nm, "%s.cv6", name), h, c, 3, 1, 1, 1);
    int b2 = conv(y, sub(nm, "%s.cv2", name), x, c, 1, 1, 1, 1);
    h = cat2(y, sub(nm, "%s.cat2", name), h, b2);
    return conv(y, sub(nm, "%s.cv7", name), h, c, 1, 1, 1, 1);
}

/* Lateral merge of the top-down path: 1x1 of the coarser map, upsampled, beside a 1x1 of the backbone's. */
static int lateral(struct yolo *y, const char *name, int top, int backbone, int64_t c)
{
    char nm[WL_NAME_LEN];
    int t = conv(y, sub(nm, "%s.conv", name), top, c, 1, 1, 1, 1);
    t = up2(y, sub(nm, "%s.up", name), t);
    int l = conv(y, sub(nm, "%s.route", name), backbone, c, 1, 1, 1, 1);
    return cat2(y, sub(nm, "%s.cat", name), l, t);
}

static int yolov7(struct yolo *y, int x)
{
    char nm[WL_NAME_LEN];
    int h = conv(y, "b0", x, 32, 3, 1, 1, 1);
    h = conv(y, "b1", h, 64, 3, 2, 1, 1);
    h = conv(y, "b2", h, 64, 3, 1, 1, 1);
    h = conv(y, "b3", h, 128, 3, 2, 1, 1);
    int e[4];
    for (int s = 0; s < 4; s++) { /* ELAN at P2..P5 (outputs 256, 512, 1024, 1024), MP between */
        int64_t mid = s < 3 ? 64 << s : 256;
        if (s > 0)
            h = mp_down(y, sub(nm, "b.mp%d", s), h, (int64_t)chans(y, h) / 2, -1);
        h = e[s] = elan(y, sub(nm, "b.elan%d", s), h, mid, mid, 4, 2, s < 3 ? 4 * mid : 1024);
    }
    int spp5 = sppcspc(y, "sppcspc", h, 512);
    int h63 = elan(y, "h.elan_p4", lateral(y, "h.lat_p4", spp5, e[2], 256), 256, 128, 4, 1, 256);
    int h75 = elan(y, "h.elan_p3", lateral(y, "h.lat_p3", h63, e[1], 128), 128, 64, 4, 1, 128);
    int h88 = elan(y, "h.elan_n4", mp_down(y, "h.mp_n4", h75, 128, h63), 256, 128, 4, 1, 256);
    int h101 = elan(y, "h.elan_n5", mp_down(y, "h.mp_n5", h88, 256, spp5), 512, 256, 4, 1, 512);
    int p[3] = {conv(y, "h.repconv_p3", h75, 256, 3, 1, 1, 1), conv(y, "h.repconv_p4", h88, 512, 3, 1, 1, 1),
                conv(y, "h.repconv_p5", h101, 1024, 3, 1, 1, 1)};
    return detect(y, "detect", p, HD_ANCHOR);
}

static int yolov7_tiny(struct yolo *y, int x)
{
    char nm[WL_NAME_LEN];
    int h = conv(y, "b0", x, 32, 3, 2, 1, 1);
    h = conv(y, "b1", h, 64, 3, 2, 1, 1);
    int e[4];
    for (int s = 0; s < 4; s++) { /* ELAN at P2..P5 (64 .. 512), a 2x2 max pool between */
        if (s > 0)
            h = gb_pool(y->b, sub(nm, "b.mp%d", s), h, 1, 2, 2, 0);
        h = e[s] = elan(y, sub(nm, "b.elan%d", s), h, 32 << s, 32 << s, 2, 1, 64 << s);
    }
    /* SPP-CSP: a 1x1, and a 1x1 whose max pools (5, 9, 13) join it, then a 1x1; concatenated, a 1x1 */
    int a = conv(y, "sppcsp.cv1", h, 256, 1, 1, 1, 1), bb = conv(y, "sppcsp.cv2", h, 256, 1, 1, 1, 1);
    int pp[4] = {-1, -1, -1, bb};
    for (int i = 0; i < 3; i++)
        pp[2 - i] = gb_pool(y->b, sub(nm, "sppcsp.m.%d", i), bb, 1, 5 + 4 * i, 1, (5 + 4 * i) / 2);
    h = conv(y, "sppcsp.cv3", gb_concat(y->b, "sppcsp.cat1", pp, 4), 256, 1, 1, 1, 1);
    int h37 = conv(y, "sppcsp.cv4", cat2(y, "sppcsp.cat2", h, a), 256, 1, 1, 1, 1);
    int h47 = elan(y, "h.elan_p4", lateral(y, "h.lat_p4", h37, e[2], 128), 64, 64, 2, 1, 128);
    int h57 = elan(y, "h.elan_p3", lateral(y, "h.lat_p3", h47, e[1], 64), 32, 32, 2, 1, 64);
    h = cat2(y, "h.cat_n4", conv(y, "h.down_n4", h57, 128, 3, 2, 1, 1), h47);
    int h65 = elan(y, "h.elan_n4", h, 64, 64, 2, 1, 128);
    h = cat2(y, "h.cat_n5", conv(y, "h.down_n5", h65, 256, 3, 2, 1, 1), h37);
    int h73 = elan(y, "h.elan_n5", h, 128, 128, 2, 1, 256);
    int p[3] = {conv(y, "h.out_p3", h57, 128, 3, 1, 1, 1), conv(y, "h.out_p4", h65, 256, 3, 1, 1, 1),
                conv(y, "h.out_p5", h73, 512, 3, 1, 1, 1)};
    return detect(y, "detect", p, HD_ANCHOR);
}

static int gen_yolov7(struct gb *b, const struct wl_cnn *c, int x)
{
    int tiny = !strcmp(c->variant, "tiny");
    struct yolo y = {b, tiny ? FN_RELU : FN_SILU, c->num_classes, 0};
    return tiny ? yolov7_tiny(&y, x) : yolov7(&y, x);
}

/* ---- YOLOv6 0.1.0: meituan/YOLOv6 yolov6/models/{efficientrep,reppan,effidehead,yolo}.py and
 * configs/yolov6{n,_tiny,s}.py (tag 0.1.0, e7269211), the release Hailo deploys as yolov6n ----
 * EfficientRep backbone and Rep-PAN neck of RepVGG blocks (deployed fused: one 3x3 with bias, ReLU),
 * SimSPPF and the neck's SimConvs (ReLU), 2x2 stride-2 transposed convolutions for the upsampling, and
 * the efficient decoupled head (SiLU: a 1x1 stem, one 3x3 each for classes and boxes, 1x1 predictions
 * of nc classes, 4 box terms and 1 objectness, sigmoids on class and objectness). Widths
 * ceil(c x width / 8) x 8, repeats max(round(n x depth), 1). */

/* ConvTranspose2d(k = 2, s = 2) to c: every input pixel feeds its own 2x2 output block, so it costs a 1x1
 * convolution to 4c whose outputs the deconvolution writes interleaved (the view); the 1x1 carries 4c
 * biases where the deconvolution has c (3c parameters over, under 0.01 %). */
static int deconv2(struct yolo *y, const char *name, int x, int64_t c)
{
    char nm[WL_NAME_LEN];
    int h = conv(y, sub(nm, "%s.taps", name), x, 4 * c, 1, 1, 1, 0);
    if (y->b->rc)
        return -1;
    const struct wl_tensor *t = tens(y, h);
    return gb_op(y->b, name, OP_RESHAPE, &h, 1, name, WL_ACT, 4, t->dim[0], c, 2 * t->dim[2], 2 * t->dim[3]);
}

/* RepBlock: n RepVGG blocks (fused 3x3 + ReLU), the first from c1 to c. */
static int rep_block(struct yolo *y, const char *name, int x, int64_t c, int n)
{
    char nm[WL_NAME_LEN];
    for (int i = 0; i < n; i++)
        x = conv(y, sub(nm, "%s.%d", name, i), x, c, 3, 1, 1, 1);
    return x;
}

static int gen_yolov6(struct gb *b, const struct wl_cnn *cfg, int x)
{
    static const int bc[5] = {64, 128, 256, 512, 1024}, br[5] = {1, 6, 12, 18, 6};
    static const int nc_[6] = {256, 128, 128, 256, 256, 512}, nr[4] = {12, 12, 12, 12};
    double depth = 0.33, width = !strcmp(cfg->variant, "n") ? 0.25 : 0.50;
    if (!strcmp(cfg->variant, "t"))
        depth = 0.25;
    struct yolo y = {b, FN_RELU, cfg->num_classes, 0};
    char nm[WL_NAME_LEN];
    int64_t ch[11];
    int rep[9];
    for (int i = 0; i < 11; i++)
        ch[i] = (int64_t)ceil((i < 5 ? bc[i] : nc_[i - 5]) * width / 8) * 8;
    for (int i = 0; i < 9; i++) {
        int n = i < 5 ? br[i] : nr[i - 5];
        rep[i] = n > 1 ? (int)nearbyint(n * depth) : n;
        if (rep[i] < 1)
            rep[i] = 1;
    }
    int h = conv(&y, "backbone.stem", x, ch[0], 3, 2, 1, 1), f[3];
    for (int s = 1; s < 5; s++) {
        h = conv(&y, sub(nm, "backbone.ERBlock_%d.0", s + 1), h, ch[s], 3, 2, 1, 1);
        h = rep_block(&y, sub(nm, "backbone.ERBlock_%d.1", s + 1), h, ch[s], rep[s]);
        if (s >= 2)
            f[s - 2] = h;
    }
    f[2] = spp(&y, "backbone.SimSPPF", f[2], ch[4] / 2, ch[4], 1);
    int fpn0 = conv(&y, "neck.reduce_layer0", f[2], ch[5], 1, 1, 1, 1);
    h = cat2(&y, "neck.cat0", deconv2(&y, "neck.upsample0", fpn0, ch[5]), f[1]);
    h = rep_block(&y, "neck.Rep_p4", h, ch[5], rep[5]);
    int fpn1 = conv(&y, "neck.reduce_layer1", h, ch[6], 1, 1, 1, 1);
    h = cat2(&y, "neck.cat1", deconv2(&y, "neck.upsample1", fpn1, ch[6]), f[0]);
    int p[3];
    p[0] = rep_block(&y, "neck.Rep_p3", h, ch[6], rep[6]);
    h = cat2(&y, "neck.cat2", conv(&y, "neck.downsample2", p[0], ch[7], 3, 2, 1, 1), fpn1);
    p[1] = rep_block(&y, "neck.Rep_n3", h, ch[8], rep[7]);
    h = cat2(&y, "neck.cat3", conv(&y, "neck.downsample1", p[1], ch[9], 3, 2, 1, 1), fpn0);
    p[2] = rep_block(&y, "neck.Rep_n4", h, ch[10], rep[8]);
    y.act = FN_SILU; /* the head's Conv */
    for (int i = 0; i < 3; i++) {
        int64_t c = chans(&y, p[i]);
        int s = conv(&y, sub(nm, "detect.stems.%d", i), p[i], c, 1, 1, 1, 1);
        int k = conv(&y, sub(nm, "detect.cls_convs.%d", i), s, c, 3, 1, 1, 1);
        k = conv(&y, sub(nm, "detect.cls_preds.%d", i), k, y.nc, 1, 1, 1, 0);
        gb_eltwise(b, sub(nm, "detect.cls_preds.%d.sigmoid", i), FN_SIGMOID, k, -1);
        int r = conv(&y, sub(nm, "detect.reg_convs.%d", i), s, c, 3, 1, 1, 1);
        conv(&y, sub(nm, "detect.reg_preds.%d", i), r, 4, 1, 1, 1, 0);
        r = conv(&y, sub(nm, "detect.obj_preds.%d", i), r, 1, 1, 1, 1, 0);
        gb_eltwise(b, sub(nm, "detect.obj_preds.%d.sigmoid", i), FN_SIGMOID, r, -1);
    }
    return b->rc;
}

/* ---- YOLOv3 (Redmon and Farhadi, arXiv 1804.02767; pjreddie/darknet cfg/yolov3.cfg): Darknet-53 (a 3x3
 * to 32, then five stages of a 3x3 stride-2 convolution to 64, 128, 256, 512, 1024 and 1, 2, 8, 8, 4
 * residual units of a 1x1 to half and a 3x3 back), leaky ReLU (costed as ReLU), batch normalisation
 * folded; three detection scales, each five convolutions alternating 1x1 to c and 3x3 to 2c (c = 512,
 * 256, 128), a 3x3 to 2c and a 1x1 to 3 anchors x (5 + nc); between scales a 1x1 to c / 2, a 2x upsample
 * and the concatenation with the backbone's stage-4 (then stage-3) output. ---- */
static int gen_yolov3(struct gb *b, const struct wl_cnn *c, int x)
{
    struct yolo y = {b, FN_RELU, c->num_classes, 0};
    static const int units[5] = {1, 2, 8, 8, 4};
    char nm[WL_NAME_LEN];
    int route[2] = {-1, -1};
    x = conv(&y, "conv0", x, 32, 3, 1, 1, 1);
    for (int s = 0; s < 5; s++) {
        int64_t w = 64LL << s;
        x = conv(&y, sub(nm, "stage%d.down", s + 1), x, w, 3, 2, 1, 1);
        for (int k = 0; k < units[s]; k++)
            x = bottleneck(&y, sub(nm, "stage%d.%d", s + 1, k), x, w, 1, 1, 3, 0.5);
        if (s == 2 || s == 3)
            route[s - 2] = x;
    }
    for (int i = 0; i < 3; i++) {
        int64_t w = 512 >> i;
        if (i) {
            x = conv(&y, sub(nm, "head%d.reduce", i), x, w, 1, 1, 1, 1);
            x = cat2(&y, sub(nm, "head%d.cat", i), up2(&y, sub(nm, "head%d.up", i), x), route[2 - i]);
        }
        for (int k = 0; k < 5; k++)
            x = conv(&y, sub(nm, "head%d.conv%d", i, k), x, k % 2 ? 2 * w : w, k % 2 ? 3 : 1, 1, 1, 1);
        int h = conv(&y, sub(nm, "head%d.out3x3", i), x, 2 * w, 3, 1, 1, 1);
        conv(&y, sub(nm, "head%d.pred", i), h, 3 * (5 + y.nc), 1, 1, 1, 0);
    }
    return b->rc;
}

const struct wl_cnn_gen wl_yolo_gens[] = {
    {"yolov8", "n,s,m,l,x", gen_yolov8},
    {"yolov8_seg", "n,s,m,l,x", gen_yolov8_seg},
    {"yolov8_pose", "n,s,m,l,x", gen_yolov8_pose},
    {"yolo11", "n,s,m,l,x", gen_yolo11},
    {"yolov10", "n,s,m,b,l,x", gen_yolov10},
    {"yolov5", "n,s,m,l,x", gen_yolov5},
    {"yolov5_seg", "n,s,m,l,x", gen_yolov5_seg},
    {"yolov5_v2", "s,m,l,x", gen_yolov5v2},
    {"yolov9", "t,s,m,c", gen_yolov9},
    {"yolox", "nano,tiny,s,m,l,x", gen_yolox},
    {"yolox_leaky", "nano,tiny,s,m,l,x", gen_yolox_leaky},
    {"yolov7", "tiny,base", gen_yolov7},
    {"yolov3", NULL, gen_yolov3},
    {"yolov6", "n,t,s", gen_yolov6},
    {NULL, NULL, NULL},
};
