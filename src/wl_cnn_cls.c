/* wl_cnn_cls.c -- classification backbones beyond wl_cnn.c's first two, as deployed (batch
 * normalisation folded into each convolution's bias: wl_build.h, gb_conv). The architectures are the
 * papers' and their reference repositories' (facts taken over, not code; each family's comment names
 * its source and what is simplified); models/zoo holds each network to the Hailo Model Zoo's published
 * parameter and operation counts. Three blocks are shared: the residual unit (ResNet, ResNeXt,
 * RegNet), the inverted residual (MobileNetV2/V3, EfficientNet-Lite and -EdgeTPU) and the
 * depthwise-separable pair (MobileNetV1). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wl_cnn_gen.h"

static const char *nf(char *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Formats a name into n (WL_NAME_LEN bytes) and returns it, so that a call can name its op inline. */
static const char *nf(char *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n, WL_NAME_LEN, fmt, ap);
    va_end(ap);
    return n;
}

static int64_t chans(const struct gb *b, int x)
{
    return b->g->t[x].dim[1];
}

/* The generators check their variant against the table's list (wl_cnn_check); a variant that passes
 * the list but not the family's own table is a table out of step with itself. */
static int bad_variant(struct gb *b, const struct wl_cnn *c)
{
    b->rc = dse_err_set(b->e, DSE_EINPUT, NULL, NULL, "generator '%s': no configuration for variant '%s'", c->arch,
                        c->variant);
    return b->rc;
}

/* TF's and torchvision's _make_divisible: v rounded to the nearest multiple of d, at least d, and
 * never more than 10 % below v. */
static int64_t round_ch(double v, int d)
{
    int64_t r = (int64_t)(v + d / 2.0) / d * d;
    if (r < d)
        r = d;
    if ((double)r < 0.9 * v)
        r += d;
    return r;
}

/* ---- Residual units: ResNet, ResNeXt, RegNet ---- */

/* A residual unit (He et al., CVPR 2016, Fig. 2 and 5): basic (two 3x3 convolutions to out) or
 * bottleneck (1x1 to mid, 3x3 in `groups` groups at stride, 1x1 to out: ResNeXt's unit and RegNet's X
 * block are this with groups), added to the shortcut, then ReLU. The shortcut is a strided 1x1
 * projection where the width changes; a width-keeping strided unit (TF-slim's last unit of a block)
 * subsamples its input with a 1x1 max pool. */
static int res_unit(struct gb *b, const char *p, int x, int64_t mid, int64_t out, int stride, int groups, int basic)
{
    char n[WL_NAME_LEN];
    if (b->rc)
        return -1;
    int64_t C = chans(b, x);
    int y;
    if (basic) {
        y = gb_conv(b, nf(n, "%s.conv1", p), x, out, 3, stride, 1, FN_RELU);
        y = gb_conv(b, nf(n, "%s.conv2", p), y, out, 3, 1, 1, FN_NONE);
    } else {
        y = gb_conv(b, nf(n, "%s.conv1", p), x, mid, 1, 1, 1, FN_RELU);
        y = gb_conv(b, nf(n, "%s.conv2", p), y, mid, 3, stride, groups, FN_RELU);
        y = gb_conv(b, nf(n, "%s.conv3", p), y, out, 1, 1, 1, FN_NONE);
    }
    int sc = x;
    if (C != out)
        sc = gb_conv(b, nf(n, "%s.shortcut", p), x, out, 1, stride, 1, FN_NONE);
    else if (stride > 1)
        sc = gb_pool(b, nf(n, "%s.subsample", p), x, 1, 1, stride, 0);
    y = gb_eltwise(b, nf(n, "%s.add", p), FN_ADD, y, sc);
    return gb_eltwise(b, nf(n, "%s.relu", p), FN_RELU, y, -1);
}

/* A stage of n residual units to width out (bottleneck width mid, groups), stride on its first unit,
 * or with at_last on its last (TF-slim's resnet_v1). */
struct res_stage {
    int n;
    int64_t mid, out;
    int groups, stride;
};

static int res_stages(struct gb *b, int x, const struct res_stage *s, int n_stage, int basic, int at_last)
{
    char p[WL_NAME_LEN];
    for (int i = 0; i < n_stage; i++)
        for (int k = 0; k < s[i].n; k++) {
            int stride = k == (at_last ? s[i].n - 1 : 0) ? s[i].stride : 1;
            x = res_unit(b, nf(p, "stage%d.%d", i + 1, k), x, s[i].mid, s[i].out, stride, s[i].groups, basic);
        }
    return x;
}

/* ResNet's stem: a 7x7 stride-2 convolution to 64 and a 3x3 stride-2 max pool. */
static int resnet_stem(struct gb *b, int x)
{
    x = gb_conv(b, "conv1", x, 64, 7, 2, 1, FN_RELU);
    return gb_pool(b, "pool1", x, 1, 3, 2, 1);
}

/* ResNet v1 (He et al., CVPR 2016, Table 1). 18 and 34: basic units, each stage's stride on its first
 * unit (torchvision's layout, as BRECQ's resnet_v1_18: 1.81 G MACs at 224). 50, 101, 152: TF-slim's
 * resnet_v1 (tensorflow/models research/slim/nets/resnet_v1.py): bottleneck units with the stride on
 * the 3x3 of the *last* unit of blocks 1 to 3 (a width-keeping unit, so its shortcut subsamples), which
 * moves one unit a stage to the lower resolution: 3.48 G MACs at 224 for resnet_v1_50 against 4.09
 * for torchvision's v1.5 (stride on the first unit's 3x3) and 3.86 for the stride on its first 1x1. */
static int resnet_depth(struct gb *b, const struct wl_cnn *c, int x, int tf_slim)
{
    static const struct {
        const char *v;
        int n[4];
    } cfg[] = {{"18", {2, 2, 2, 2}}, {"34", {3, 4, 6, 3}}, {"50", {3, 4, 6, 3}}, {"101", {3, 4, 23, 3}},
               {"152", {3, 8, 36, 3}}};
    size_t v = 0;
    while (v < sizeof cfg / sizeof cfg[0] && strcmp(cfg[v].v, c->variant))
        v++;
    if (v == sizeof cfg / sizeof cfg[0])
        return bad_variant(b, c);
    int basic = atoi(c->variant) < 50;
    struct res_stage s[4];
    for (int i = 0; i < 4; i++) {
        int64_t w = 64LL << i;
        int stride = basic || !tf_slim ? (i ? 2 : 1) : (i < 3 ? 2 : 1);
        s[i] = (struct res_stage){cfg[v].n[i], w, basic ? w : 4 * w, 1, stride};
    }
    x = res_stages(b, resnet_stem(b, x), s, 4, basic, tf_slim && !basic);
    gb_classifier(b, x, c->num_classes);
    return b->rc;
}

static int gen_resnet_v1(struct gb *b, const struct wl_cnn *c, int x) { return resnet_depth(b, c, x, 1); }

/* torchvision's ResNets (torchvision/models/resnet.py): the stride on the 3x3 of each stage's first unit
 * (v1.5), 18 to 152 layers; 50 is models/resnet50.json's network. */
static int gen_resnet_tv(struct gb *b, const struct wl_cnn *c, int x) { return resnet_depth(b, c, x, 0); }

/* ResNeXt (Xie et al., CVPR 2017, Table 1) as osmr/imgclsmob's pytorchcv builds it (torchvision's
 * layout): ResNet's stem and bottleneck stages of widths 256 to 2048, the 3x3 in `cardinality` groups
 * of d channels a group in the first stage (doubling each stage), the stride on each stage's first
 * unit. Variant "<layers>_<cardinality>x<d>d"; 26 layers: 2 units a stage. */
static int gen_resnext(struct gb *b, const struct wl_cnn *c, int x)
{
    int layers = 0, card = 0, d = 0;
    if (sscanf(c->variant, "%d_%dx%dd", &layers, &card, &d) != 3 || (layers != 26 && layers != 50 && layers != 101))
        return bad_variant(b, c);
    static const int units[3][4] = {{2, 2, 2, 2}, {3, 4, 6, 3}, {3, 4, 23, 3}};
    const int *n = units[layers == 26 ? 0 : layers == 50 ? 1 : 2];
    struct res_stage s[4];
    for (int i = 0; i < 4; i++)
        s[i] = (struct res_stage){n[i], (int64_t)card * d << i, 256LL << i, card, i ? 2 : 1};
    x = res_stages(b, resnet_stem(b, x), s, 4, 0, 0);
    gb_classifier(b, x, c->num_classes);
    return b->rc;
}

/* RegNetX (Radosavovic et al., CVPR 2020, section 3.3 and Appendix; pycls regnet.py and
 * configs/dds_baselines/regnetx): unit j's width w0 + wa j is quantised to w0 wm^round(log((w0 + wa j)
 * / w0) / log wm) and rounded to a multiple of 8; units of equal width form a stage, whose width is
 * rounded to a multiple of its group width min(g, w). X unit: the bottleneck residual unit at
 * bottleneck ratio 1 with the 3x3 in w / g groups, stride 2 on each stage's first unit; stem a 3x3
 * stride-2 convolution to 32; no head convolution. numpy's round (half to even) is rint's. */
static int gen_regnetx(struct gb *b, const struct wl_cnn *c, int x)
{
    static const struct {
        const char *v;
        int depth;
        double w0, wa, wm;
        int g;
    } cfg[] = {{"200mf", 13, 24, 36.44, 2.49, 8},   {"400mf", 22, 24, 24.48, 2.54, 16},
               {"600mf", 16, 48, 36.97, 2.24, 24},  {"800mf", 16, 56, 35.73, 2.28, 16},
               {"1.6gf", 18, 80, 34.01, 2.25, 24},  {"3.2gf", 25, 88, 26.31, 2.25, 48},
               {"4.0gf", 23, 96, 38.65, 2.43, 40},  {"6.4gf", 17, 184, 60.83, 2.07, 56},
               {"8.0gf", 23, 80, 49.56, 2.88, 120}, {"12gf", 19, 168, 73.36, 2.37, 112},
               {"16gf", 22, 216, 55.59, 2.1, 128},  {"32gf", 23, 320, 69.86, 2.0, 168}};
    size_t v = 0;
    while (v < sizeof cfg / sizeof cfg[0] && strcmp(cfg[v].v, c->variant))
        v++;
    if (v == sizeof cfg / sizeof cfg[0])
        return bad_variant(b, c);
    struct res_stage s[8];
    int n_stage = 0;
    for (int j = 0; j < cfg[v].depth; j++) {
        double k = rint(log((cfg[v].w0 + cfg[v].wa * j) / cfg[v].w0) / log(cfg[v].wm));
        int64_t w = (int64_t)rint(cfg[v].w0 * pow(cfg[v].wm, k) / 8) * 8;
        if (n_stage && s[n_stage - 1].out == w) {
            s[n_stage - 1].n++;
        } else if (n_stage < 8) {
            s[n_stage++] = (struct res_stage){1, 0, w, 0, 2};
        } else {
            return b->rc = dse_err_set(b->e, DSE_EINPUT, NULL, NULL, "regnetx %s: more than 8 stages", c->variant);
        }
    }
    for (int i = 0; i < n_stage; i++) {
        int64_t g = s[i].out < cfg[v].g ? s[i].out : cfg[v].g;
        int64_t w = (int64_t)rint((double)s[i].out / (double)g) * g;
        s[i].out = s[i].mid = w > g ? w : g;
        s[i].groups = (int)(s[i].out / g);
    }
    x = gb_conv(b, "stem", x, 32, 3, 2, 1, FN_RELU);
    x = res_stages(b, x, s, n_stage, 0, 0);
    gb_classifier(b, x, c->num_classes);
    return b->rc;
}

/* ---- Inverted residuals: MobileNetV2/V3, EfficientNet-Lite and -EdgeTPU ---- */

/* One inverted residual's shape: expansion to hid channels, a k x k depthwise at stride, squeeze-excite
 * to se channels (0: none), a linear projection to out; fused: the expansion is a k x k convolution in
 * the depthwise's place (Gupta & Tan 2019, EfficientNet-EdgeTPU), at stride unless stride_project puts
 * the stride on the projection; skip: the input is added when stride and width allow. */
struct mb {
    int64_t hid, out;
    int k, stride, fused, stride_project, skip;
    int64_t se;
    enum wl_fn act, se_act; /* se_act: SE's inner activation (FN_NONE: ReLU, MobileNetV3's) */
};

/* Inverted residual (Sandler et al., CVPR 2018, Table 1; MobileNetV3 and MBConv the same with SE): the
 * expansion is left out where hid equals the input's width (expansion factor 1), as both TF-slim and
 * TF EfficientNet do; a fused unit without expansion is the projection alone, which then takes the
 * stride (MobileNet-EdgeTPU's first unit). SE's inner activation is ReLU (MobileNetV3's). */
static int mbconv(struct gb *b, const char *p, int x, const struct mb *m)
{
    char n[WL_NAME_LEN];
    if (b->rc)
        return -1;
    int64_t C = chans(b, x);
    int y = x, expand = m->hid != C;
    int s_exp = m->fused && !m->stride_project ? m->stride : 1;
    int s_proj = m->fused && (m->stride_project || !expand) ? m->stride : 1;
    if (expand)
        y = gb_conv(b, nf(n, "%s.expand", p), y, m->hid, m->fused ? m->k : 1, s_exp, 1, m->act);
    if (!m->fused)
        y = gb_conv(b, nf(n, "%s.dw", p), y, m->hid, m->k, m->stride, (int)m->hid, m->act);
    if (m->se)
        y = gb_squeeze_excite(b, nf(n, "%s.se", p), y, m->se, m->se_act != FN_NONE ? m->se_act : FN_RELU);
    y = gb_conv(b, nf(n, "%s.project", p), y, m->out, 1, s_proj, 1, FN_NONE);
    if (m->skip && m->stride == 1 && C == m->out)
        y = gb_eltwise(b, nf(n, "%s.add", p), FN_ADD, y, x);
    return y;
}

/* MobileNetV2 (Sandler et al., CVPR 2018, Table 2) as TF-slim builds it (research/slim/nets/mobilenet/
 * mobilenet_v2.py, the Hailo zoo's mobilenet_v2_1.0 and _1.4 checkpoints, 1001 classes): widths
 * scaled by width_mult and rounded to multiples of 8, expansion 6 x the (rounded) input, ReLU6, the
 * 1280-wide last convolution scaled by width_mult both ways (slim without finegrain_classification_mode;
 * torchvision keeps it at 1280 below 1). wl_cnn.c's mobilenet_v2 is the torchvision network with batch
 * normalisation kept apart. */
static int gen_mobilenet_v2_slim(struct gb *b, const struct wl_cnn *c, int x)
{
    static const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    char p[WL_NAME_LEN];
    double wm = c->width_mult;
    x = gb_conv(b, "conv0", x, round_ch(32 * wm, 8), 3, 2, 1, FN_RELU6);
    for (int s = 0, idx = 1; s < 7; s++)
        for (int k = 0; k < cfg[s][2]; k++, idx++) {
            if (b->rc)
                return b->rc;
            int64_t in = chans(b, x);
            struct mb m = {.hid = cfg[s][0] == 1 ? in : round_ch((double)(in * cfg[s][0]), 8),
                           .out = round_ch(cfg[s][1] * wm, 8),
                           .k = 3,
                           .stride = k ? 1 : cfg[s][3],
                           .skip = 1,
                           .act = FN_RELU6};
            x = mbconv(b, nf(p, "block%d", idx), x, &m);
        }
    x = gb_conv(b, "conv_last", x, round_ch(1280 * wm, 8), 1, 1, 1, FN_RELU6);
    gb_classifier(b, x, c->num_classes);
    return b->rc;
}

/* MobileNetV3 (Howard et al., ICCV 2019, Tables 1 and 2) and MobileNet-EdgeTPU, as TF-slim's
 * research/slim/nets/mobilenet/mobilenet_v3.py defines them (V3_LARGE, V3_SMALL, their minimalistic
 * forms, V3_EDGETPU; 1001 classes): expansion sizes the input x ef rounded to multiples of 8, SE to the
 * expansion / 4 rounded to 8, widths scaled by width_mult. The minimalistic forms are the same rows with
 * 3x3 kernels, ReLU and no SE. Hard-swish is costed as SiLU and the SE gate's hard-sigmoid as sigmoid
 * (element-wise ops of the same class). */
struct v3_row {
    double ef;                          /* expansion factor */
    int n, k, s, se, hs, fused, noskip; /* width, kernel, stride, SE, hard-swish inside, fused, no residual */
};

static const struct v3_row v3_large[] = {
    {1, 16, 3, 1, 0, 0, 0, 0},       {4, 24, 3, 2, 0, 0, 0, 0},       {3, 24, 3, 1, 0, 0, 0, 0},
    {3, 40, 5, 2, 1, 0, 0, 0},       {3, 40, 5, 1, 1, 0, 0, 0},       {3, 40, 5, 1, 1, 0, 0, 0},
    {6, 80, 3, 2, 0, 1, 0, 0},       {2.5, 80, 3, 1, 0, 1, 0, 0},     {184 / 80., 80, 3, 1, 0, 1, 0, 0},
    {184 / 80., 80, 3, 1, 0, 1, 0, 0}, {6, 112, 3, 1, 1, 1, 0, 0},    {6, 112, 3, 1, 1, 1, 0, 0},
    {6, 160, 5, 2, 1, 1, 0, 0},      {6, 160, 5, 1, 1, 1, 0, 0},      {6, 160, 5, 1, 1, 1, 0, 0},
};

static const struct v3_row v3_small[] = {
    {1, 16, 3, 2, 1, 0, 0, 0}, {72 / 16., 24, 3, 2, 0, 0, 0, 0}, {88 / 24., 24, 3, 1, 0, 0, 0, 0},
    {4, 40, 5, 2, 1, 1, 0, 0}, {6, 40, 5, 1, 1, 1, 0, 0},        {6, 40, 5, 1, 1, 1, 0, 0},
    {3, 48, 5, 1, 1, 1, 0, 0}, {3, 48, 5, 1, 1, 1, 0, 0},        {6, 96, 5, 2, 1, 1, 0, 0},
    {6, 96, 5, 1, 1, 1, 0, 0}, {6, 96, 5, 1, 1, 1, 0, 0},
};

static const struct v3_row v3_edgetpu[] = {
    {1, 16, 3, 1, 0, 0, 1, 0}, {8, 32, 3, 2, 0, 0, 1, 0},  {4, 32, 3, 1, 0, 0, 1, 0},  {4, 32, 3, 1, 0, 0, 1, 0},
    {4, 32, 3, 1, 0, 0, 1, 0}, {8, 48, 3, 2, 0, 0, 1, 0},  {4, 48, 3, 1, 0, 0, 1, 0},  {4, 48, 3, 1, 0, 0, 1, 0},
    {4, 48, 3, 1, 0, 0, 1, 0}, {8, 96, 3, 2, 0, 0, 0, 0},  {4, 96, 3, 1, 0, 0, 0, 0},  {4, 96, 3, 1, 0, 0, 0, 0},
    {4, 96, 3, 1, 0, 0, 0, 0}, {8, 96, 3, 1, 0, 0, 0, 1},  {4, 96, 3, 1, 0, 0, 0, 0},  {4, 96, 3, 1, 0, 0, 0, 0},
    {4, 96, 3, 1, 0, 0, 0, 0}, {8, 160, 5, 2, 0, 0, 0, 0}, {4, 160, 5, 1, 0, 0, 0, 0}, {4, 160, 5, 1, 0, 0, 0, 0},
    {4, 160, 5, 1, 0, 0, 0, 0}, {8, 192, 3, 1, 0, 0, 0, 0},
};

static int gen_mobilenet_v3(struct gb *b, const struct wl_cnn *c, int x)
{
    static const struct {
        const char *v;
        const struct v3_row *rows;
        int n_rows, minimal, hs, stem, last, head; /* hs: hard-swish in the stem and the tail; head: the
                                                      1x1 after the pool (0: none) */
    } cfg[] = {
        {"large", v3_large, sizeof v3_large / sizeof v3_large[0], 0, 1, 16, 960, 1280},
        {"small", v3_small, sizeof v3_small / sizeof v3_small[0], 0, 1, 16, 576, 1024},
        {"large_min", v3_large, sizeof v3_large / sizeof v3_large[0], 1, 0, 16, 960, 1280},
        {"small_min", v3_small, sizeof v3_small / sizeof v3_small[0], 1, 0, 16, 576, 1024},
        {"edgetpu", v3_edgetpu, sizeof v3_edgetpu / sizeof v3_edgetpu[0], 0, 0, 32, 1280, 0},
    };
    size_t v = 0;
    while (v < sizeof cfg / sizeof cfg[0] && strcmp(cfg[v].v, c->variant))
        v++;
    if (v == sizeof cfg / sizeof cfg[0])
        return bad_variant(b, c);
    char p[WL_NAME_LEN];
    double wm = c->width_mult;
    int minimal = cfg[v].minimal;
    enum wl_fn hs = cfg[v].hs ? FN_SILU : FN_RELU;
    x = gb_conv(b, "conv0", x, round_ch(cfg[v].stem * wm, 8), 3, 2, 1, hs);
    for (int i = 0; i < cfg[v].n_rows; i++) {
        const struct v3_row *r = &cfg[v].rows[i];
        if (b->rc)
            return b->rc;
        int64_t hid = round_ch((double)chans(b, x) * r->ef, 8);
        struct mb m = {.hid = hid,
                       .out = round_ch(r->n * wm, 8),
                       .k = minimal ? 3 : r->k,
                       .stride = r->s,
                       .fused = r->fused,
                       .skip = !r->noskip,
                       .se = r->se && !minimal ? round_ch((double)hid / 4, 8) : 0,
                       .act = r->hs && !minimal ? FN_SILU : FN_RELU};
        x = mbconv(b, nf(p, "block%d", i + 1), x, &m);
    }
    x = gb_conv(b, "conv_last", x, round_ch(cfg[v].last * wm, 8), 1, 1, 1, hs);
    if (cfg[v].head) {
        x = gb_pool(b, "pool_head", x, 0, 0, 1, 0);
        x = gb_conv(b, "conv_head", x, round_ch(cfg[v].head * wm, 8), 1, 1, 1, hs);
    }
    gb_classifier(b, x, c->num_classes);
    return b->rc;
}

/* EfficientNet's block arguments (Tan & Le, ICML 2019, Table 1, as tensorflow/tpu
 * models/official/efficientnet writes them): r units, kernel k, stride s, expansion e, input and
 * output widths i and o before scaling; fused (conv_type 1) and noskip as in the EdgeTPU table. */
struct eff_block {
    int r, k, s, e, i, o, fused, noskip;
};

/* EfficientNet's body: the stem (3x3 stride 2 to 32), the blocks with widths scaled by wc (rounded to
 * 8) and unit counts by dc (rounded up), a 1x1 head to 1280 and the classifier; fix_head_stem keeps the
 * stem, the head and the first and last blocks' unit counts unscaled (EfficientNet-Lite); stride_project
 * puts a fused unit's stride on its projection. No SE (neither Lite nor EdgeTPU has it); the expansion
 * is e x the block's scaled input width. */
static int efficientnet(struct gb *b, int x, const struct eff_block *blk, int n_blk, double wc, double dc, int fix,
                        int stride_project, int se, enum wl_fn act, int64_t classes)
{
    char p[WL_NAME_LEN];
    x = gb_conv(b, "stem", x, fix ? 32 : round_ch(32 * wc, 8), 3, 2, 1, act);
    for (int i = 0; i < n_blk; i++) {
        int64_t in = round_ch(blk[i].i * wc, 8), out = round_ch(blk[i].o * wc, 8);
        int r = fix && (i == 0 || i == n_blk - 1) ? blk[i].r : (int)ceil(dc * blk[i].r);
        for (int j = 0; j < r; j++) {
            if (b->rc)
                return b->rc;
            int64_t hid = blk[i].e == 1 ? chans(b, x) : (j ? out : in) * blk[i].e, sq = chans(b, x) / 4;
            struct mb m = {.hid = hid,
                           .se = se ? (sq > 1 ? sq : 1) : 0,
                           .se_act = act,
                           .out = out,
                           .k = blk[i].k,
                           .stride = j ? 1 : blk[i].s,
                           .fused = blk[i].fused,
                           .stride_project = stride_project,
                           .skip = !blk[i].noskip,
                           .act = act};
            x = mbconv(b, nf(p, "block%d.%d", i + 1, j), x, &m);
        }
    }
    x = gb_conv(b, "head", x, fix ? 1280 : round_ch(1280 * wc, 8), 1, 1, 1, act);
    gb_classifier(b, x, classes);
    return b->rc;
}

/* EfficientNet-Lite0..4 (tensorflow/tpu models/official/efficientnet/lite/efficientnet_lite_builder.py):
 * EfficientNet-B0's blocks without SE, ReLU6, the stem and head fixed; (width, depth) per variant, the
 * resolution (224, 240, 260, 280, 300) from the spec. */
static int gen_efficientnet_lite(struct gb *b, const struct wl_cnn *c, int x)
{
    static const struct eff_block b0[] = {{1, 3, 1, 1, 32, 16, 0, 0},   {2, 3, 2, 6, 16, 24, 0, 0},
                                          {2, 5, 2, 6, 24, 40, 0, 0},   {3, 3, 2, 6, 40, 80, 0, 0},
                                          {3, 5, 1, 6, 80, 112, 0, 0},  {4, 5, 2, 6, 112, 192, 0, 0},
                                          {1, 3, 1, 6, 192, 320, 0, 0}};
    static const double coef[5][2] = {{1.0, 1.0}, {1.0, 1.1}, {1.1, 1.2}, {1.2, 1.4}, {1.4, 1.8}};
    int v = c->variant[0] - '0';
    if (v < 0 || v > 4 || c->variant[1])
        return bad_variant(b, c);
    return efficientnet(b, x, b0, sizeof b0 / sizeof b0[0], coef[v][0], coef[v][1], 1, 0, 0, FN_RELU6, c->num_classes);
}

/* EfficientNet-B0 (Tan and Le, ICML 2019, Table 1) as torchvision builds it (torchvision/models/
 * efficientnet.py): B0's seven MBConv stages with squeeze-excitation to a quarter of each unit's input
 * channels (max(1, input // 4)), SiLU throughout (SE's inner activation too, its gate a sigmoid), the
 * 32-wide stem and 1280-wide head; stochastic depth and dropout are training only. */
static int gen_efficientnet(struct gb *b, const struct wl_cnn *c, int x)
{
    static const struct eff_block b0[] = {{1, 3, 1, 1, 32, 16, 0, 0},   {2, 3, 2, 6, 16, 24, 0, 0},
                                          {2, 5, 2, 6, 24, 40, 0, 0},   {3, 3, 2, 6, 40, 80, 0, 0},
                                          {3, 5, 1, 6, 80, 112, 0, 0},  {4, 5, 2, 6, 112, 192, 0, 0},
                                          {1, 3, 1, 6, 192, 320, 0, 0}};
    if (strcmp(c->variant, "b0"))
        return bad_variant(b, c);
    return efficientnet(b, x, b0, sizeof b0 / sizeof b0[0], 1, 1, 0, 0, 1, FN_SILU, c->num_classes);
}

/* EfficientNet-EdgeTPU-S/M/L (Gupta & Tan 2019; tensorflow/tpu models/official/efficientnet/edgetpu/
 * efficientnet_edgetpu_builder.py): fused (expansion 3x3, no depthwise) units in the first three
 * blocks, ReLU, no SE, 1001 classes; (width, depth) (1.0, 1.0), (1.0, 1.1), (1.2, 1.4) at 224, 240,
 * 300, stem and head scaled. The first block's expansion is 4 x its nominal input of 24 applied to the
 * stem's 32 channels, as the builder does. A fused unit's stride is on its 1x1 projection, the 3x3
 * expansion running at the input's resolution: so efficientnet_model.py built the released checkpoints
 * (tensorflow/tpu, July 2019 to commit 32572cb of December 2020, which moved the stride onto the
 * expansion); the same weights with the later placement cost 24 % fewer MACs for S. */
static int gen_efficientnet_edgetpu(struct gb *b, const struct wl_cnn *c, int x)
{
    static const struct eff_block tpu[] = {{1, 3, 1, 4, 24, 24, 1, 1}, {2, 3, 2, 8, 24, 32, 1, 0},
                                           {4, 3, 2, 8, 32, 48, 1, 0}, {5, 5, 2, 8, 48, 96, 0, 0},
                                           {4, 5, 1, 8, 96, 144, 0, 0}, {2, 5, 2, 8, 144, 192, 0, 0}};
    static const double coef[3][2] = {{1.0, 1.0}, {1.0, 1.1}, {1.2, 1.4}};
    const char *at = strchr("sml", c->variant[0]);
    if (!c->variant[0] || !at || c->variant[1])
        return bad_variant(b, c);
    int v = (int)(at - "sml");
    return efficientnet(b, x, tpu, sizeof tpu / sizeof tpu[0], coef[v][0], coef[v][1], 0, 1, 0, FN_RELU,
                        c->num_classes);
}

/* ---- Plain and multi-branch networks ---- */

/* A depthwise-separable unit (Howard et al. 2017, Fig. 3): a 3x3 depthwise at stride and a 1x1
 * pointwise to out, each followed by act. */
static int dw_sep(struct gb *b, const char *p, int x, int64_t out, int stride, enum wl_fn act)
{
    char n[WL_NAME_LEN];
    if (b->rc)
        return -1;
    int64_t C = chans(b, x);
    x = gb_conv(b, nf(n, "%s.dw", p), x, C, 3, stride, (int)C, act);
    return gb_conv(b, nf(n, "%s.pw", p), x, out, 1, 1, 1, act);
}

/* TF-slim mobilenet_v1's depth(): the width times the multiplier, truncated, at least 8. */
static int64_t slim_depth(double d, double wm)
{
    int64_t v = (int64_t)(d * wm);
    return v > 8 ? v : 8;
}

/* MobileNetV1's 13 depthwise-separable units (Howard et al. 2017, Table 1): pointwise width, stride. */
static const int mnv1_units[13][2] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2},  {512, 1},
                                      {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};

/* MobileNetV1 (Howard et al. 2017, Table 1; TF-slim research/slim/nets/mobilenet_v1.py, 1001 classes): a
 * 3x3 stride-2 convolution to 32 and 13 depthwise-separable units, ReLU6, widths x width_mult; slim's
 * logits, a 1x1 convolution on the pooled features, cost as the classifier's fully connected layer. */
static int gen_mobilenet_v1(struct gb *b, const struct wl_cnn *c, int x)
{
    char p[WL_NAME_LEN];
    x = gb_conv(b, "conv0", x, slim_depth(32, c->width_mult), 3, 2, 1, FN_RELU6);
    for (int i = 0; i < 13; i++)
        x = dw_sep(b, nf(p, "unit%d", i + 1), x, slim_depth(mnv1_units[i][0], c->width_mult), mnv1_units[i][1],
                   FN_RELU6);
    gb_classifier(b, x, c->num_classes);
    return b->rc;
}

/* SSD with a MobileNetV1 base (Liu et al., ECCV 2016; Huang et al., CVPR 2017) as the TensorFlow Object
 * Detection API builds ssd_mobilenet_v1_coco (research/object_detection: models/ssd_mobilenet_v1_feature_
 * extractor.py, samples/configs/ssd_mobilenet_v1_coco.config): the base at depth 1.0 to Conv2d_13; six
 * feature maps, Conv2d_11 and Conv2d_13's outputs and four extra layers of a 1x1 convolution to half the
 * depth and a 3x3 stride-2 one to 512, 256, 256 and 128 (ReLU6); per map a 1x1 box convolution to
 * anchors x 4 and a 1x1 class convolution to anchors x classes (3 anchors on the first map, 6 on the
 * rest: reduce_boxes_in_lowest_layer). num_classes counts the background (91 for COCO). The graph ends
 * there: anchor decoding and non-maximum suppression (TFLite_Detection_PostProcess) run on the host. */
static int gen_ssd_mobilenet_v1(struct gb *b, const struct wl_cnn *c, int x)
{
    static const int extra[4] = {512, 256, 256, 128};
    char p[WL_NAME_LEN];
    int maps[6];
    x = gb_conv(b, "conv0", x, slim_depth(32, c->width_mult), 3, 2, 1, FN_RELU6);
    for (int i = 0; i < 13; i++) {
        x = dw_sep(b, nf(p, "unit%d", i + 1), x, slim_depth(mnv1_units[i][0], c->width_mult), mnv1_units[i][1],
                   FN_RELU6);
        if (i == 10)
            maps[0] = x;
    }
    maps[1] = x;
    for (int i = 0; i < 4; i++) {
        x = gb_conv(b, nf(p, "extra%d.1x1", i + 1), x, extra[i] / 2, 1, 1, 1, FN_RELU6);
        x = maps[2 + i] = gb_conv(b, nf(p, "extra%d.3x3", i + 1), x, extra[i], 3, 2, 1, FN_RELU6);
    }
    for (int i = 0; i < 6; i++) {
        int64_t anchors = i ? 6 : 3;
        gb_conv(b, nf(p, "box%d", i), maps[i], anchors * 4, 1, 1, 1, FN_NONE);
        gb_conv(b, nf(p, "class%d", i), maps[i], anchors * c->num_classes, 1, 1, 1, FN_NONE);
    }
    return b->rc;
}

/* GoogLeNet / Inception v1 (Szegedy et al., CVPR 2015, Table 1) as TF-slim builds it
 * (research/slim/nets/inception_v1.py, 1001 classes): batch-normalised convolutions, and the "5x5"
 * branch a 3x3 (slim's Conv2d_0b_3x3), no auxiliary heads; the 7x7 average pool is the classifier's
 * global pool at 224. Each mixed module: 1x1; 1x1 -> 3x3; 1x1 -> 3x3; 3x3 max pool -> 1x1. */
static int gen_inception_v1(struct gb *b, const struct wl_cnn *c, int x)
{
    static const int mixed[9][6] = {{64, 96, 128, 16, 32, 32},     {128, 128, 192, 32, 96, 64},
                                    {192, 96, 208, 16, 48, 64},    {160, 112, 224, 24, 64, 64},
                                    {128, 128, 256, 24, 64, 64},   {112, 144, 288, 32, 64, 64},
                                    {256, 160, 320, 32, 128, 128}, {256, 160, 320, 32, 128, 128},
                                    {384, 192, 384, 48, 128, 128}};
    static const char *const names[9] = {"3b", "3c", "4b", "4c", "4d", "4e", "4f", "5b", "5c"};
    char n[WL_NAME_LEN];
    x = gb_conv(b, "conv1a", x, 64, 7, 2, 1, FN_RELU);
    x = gb_pool(b, "pool2a", x, 1, 3, 2, 1);
    x = gb_conv(b, "conv2b", x, 64, 1, 1, 1, FN_RELU);
    x = gb_conv(b, "conv2c", x, 192, 3, 1, 1, FN_RELU);
    x = gb_pool(b, "pool3a", x, 1, 3, 2, 1);
    for (int i = 0; i < 9; i++) {
        const int *m = mixed[i];
        if (i == 2)
            x = gb_pool(b, "pool4a", x, 1, 3, 2, 1);
        if (i == 7)
            x = gb_pool(b, "pool5a", x, 1, 2, 2, 0);
        int br[4];
        br[0] = gb_conv(b, nf(n, "mixed%s.b0", names[i]), x, m[0], 1, 1, 1, FN_RELU);
        br[1] = gb_conv(b, nf(n, "mixed%s.b1a", names[i]), x, m[1], 1, 1, 1, FN_RELU);
        br[1] = gb_conv(b, nf(n, "mixed%s.b1b", names[i]), br[1], m[2], 3, 1, 1, FN_RELU);
        br[2] = gb_conv(b, nf(n, "mixed%s.b2a", names[i]), x, m[3], 1, 1, 1, FN_RELU);
        br[2] = gb_conv(b, nf(n, "mixed%s.b2b", names[i]), br[2], m[4], 3, 1, 1, FN_RELU);
        br[3] = gb_pool(b, nf(n, "mixed%s.b3pool", names[i]), x, 1, 3, 1, 1);
        br[3] = gb_conv(b, nf(n, "mixed%s.b3", names[i]), br[3], m[5], 1, 1, 1, FN_RELU);
        x = gb_concat(b, nf(n, "mixed%s", names[i]), br, 4);
    }
    gb_classifier(b, x, c->num_classes);
    return b->rc;
}

/* Max pool k at stride 2 with ceil rounding (Caffe's, torchvision's ceil_mode): a 1-pixel pad where the
 * last window would overhang gives the same output size (square maps). */
static int pool_ceil2(struct gb *b, const char *name, int x, int k)
{
    if (b->rc)
        return -1;
    return gb_pool(b, name, x, 1, k, 2, (b->g->t[x].dim[2] - k) % 2 ? 1 : 0);
}

/* SqueezeNet 1.0 (Iandola et al. 2016, Table 1) and 1.1 (the authors' repository; osmr/imgclsmob's
 * pytorchcv squeezenet.py, as the Hailo zoo's squeezenet_v1.1): an unpadded stride-2 stem (7x7 to 96,
 * or 3x3 to 64), fire modules (1x1 squeeze to out / 8, 1x1 and 3x3 expands to out / 2 each,
 * concatenated) in three stages each after a 3x3 stride-2 max pool (ceil rounding), and no fully
 * connected layer: a 1x1 convolution to the classes with ReLU, then the global average. */
static int gen_squeezenet(struct gb *b, const struct wl_cnn *c, int x)
{
    static const int v10[3][4] = {{128, 128, 256}, {256, 384, 384, 512}, {512}};
    static const int v11[3][4] = {{128, 128}, {256, 256}, {384, 384, 512, 512}};
    int v11_on = !strcmp(c->variant, "1.1");
    if (!v11_on && strcmp(c->variant, "1.0"))
        return bad_variant(b, c);
    const int(*st)[4] = v11_on ? v11 : v10;
    char n[WL_NAME_LEN];
    int k = v11_on ? 3 : 7;
    x = gb_conv_rect(b, "conv1", x, v11_on ? 64 : 96, k, k, 2, 0, 0, 1, FN_RELU);
    for (int s = 0, f = 2; s < 3; s++) {
        x = pool_ceil2(b, nf(n, "pool%d", s + 1), x, 3);
        for (int u = 0; u < 4 && st[s][u]; u++, f++) {
            int out = st[s][u], e[2];
            int q = gb_conv(b, nf(n, "fire%d.squeeze", f), x, out / 8, 1, 1, 1, FN_RELU);
            e[0] = gb_conv(b, nf(n, "fire%d.expand1x1", f), q, out / 2, 1, 1, 1, FN_RELU);
            e[1] = gb_conv(b, nf(n, "fire%d.expand3x3", f), q, out / 2, 3, 1, 1, FN_RELU);
            x = gb_concat(b, nf(n, "fire%d", f), e, 2);
        }
    }
    x = gb_conv(b, "conv10", x, c->num_classes, 1, 1, 1, FN_RELU);
    x = gb_pool(b, "avgpool", x, 0, 0, 1, 0);
    if (x >= 0)
        gb_op(b, "flatten", OP_RESHAPE, &x, 1, "flatten", WL_ACT, 2, b->g->t[x].dim[0], c->num_classes, 0, 0);
    return b->rc;
}

/* RepVGG (Ding et al., CVPR 2021, Table 2; DingXiaoH/RepVGG repvgg.py) in its deployed form: every
 * block one 3x3 convolution with bias and ReLU, the training-time 1x1 and identity branches folded
 * in. Stage 0 one stride-2 block to min(64, 64a); stages 1 to 4 of n units to 64a, 128a, 256a and 512b,
 * each starting at stride 2. The grouped B variants (g2, g4) are not built. */
static int gen_repvgg(struct gb *b, const struct wl_cnn *c, int x)
{
    static const struct {
        const char *v;
        int n[4];
        double a, bw;
    } cfg[] = {{"a0", {2, 4, 14, 1}, 0.75, 2.5}, {"a1", {2, 4, 14, 1}, 1, 2.5}, {"a2", {2, 4, 14, 1}, 1.5, 2.75},
               {"b0", {4, 6, 16, 1}, 1, 2.5},    {"b1", {4, 6, 16, 1}, 2, 4},   {"b2", {4, 6, 16, 1}, 2.5, 5},
               {"b3", {4, 6, 16, 1}, 3, 5}};
    size_t v = 0;
    while (v < sizeof cfg / sizeof cfg[0] && strcmp(cfg[v].v, c->variant))
        v++;
    if (v == sizeof cfg / sizeof cfg[0])
        return bad_variant(b, c);
    char n[WL_NAME_LEN];
    int64_t w0 = (int64_t)(64 * cfg[v].a);
    x = gb_conv(b, "stage0", x, w0 < 64 ? w0 : 64, 3, 2, 1, FN_RELU);
    for (int s = 0; s < 4; s++) {
        int64_t w = (int64_t)((64 << s) * (s < 3 ? cfg[v].a : cfg[v].bw));
        for (int k = 0; k < cfg[v].n[s]; k++)
            x = gb_conv(b, nf(n, "stage%d.%d", s + 1, k), x, w, 3, k ? 1 : 2, 1, FN_RELU);
    }
    gb_classifier(b, x, c->num_classes);
    return b->rc;
}

/* HarDNet (Chao et al., ICCV 2019, Fig. 4 and Table 1; PingoLH/Pytorch-HarDNet hardnet.py): harmonic
 * dense blocks, in which layer l (from 1; layer 0 is the block's input) reads the concatenated outputs
 * of layers l - 2^i for every 2^i dividing l and has growth x grmul^(links - 1) channels, floored to
 * even; the block emits its odd layers and its last, concatenated. A 1x1 transition follows each block,
 * then, where the stage downsamples, a 2x2 max pool. ReLU6 throughout. The ds variants make each layer
 * a 1x1 convolution followed by a 3x3 depthwise without activation, the stem's second convolution a
 * 1x1, and every downsampling (the stem's 3x3 max pool too) a 3x3 stride-2 depthwise. */
static int hard_block(struct gb *b, const char *p, int x, int gr, double grmul, int n_layers, int ds)
{
    char n[WL_NAME_LEN];
    int t[17], in[5], outs[17], n_out = 0; /* 16 layers at most: 5 links each */
    if (n_layers > 16)
        return b->rc = dse_err_set(b->e, DSE_EINPUT, NULL, NULL, "%s: %d layers, at most 16", p, n_layers);
    t[0] = x;
    for (int l = 1; l <= n_layers; l++) {
        int m = 0;
        double ch = gr;
        for (int i = 0; (1 << i) <= l; i++)
            if (l % (1 << i) == 0) {
                in[m++] = t[l - (1 << i)];
                if (i)
                    ch *= grmul;
            }
        int64_t oc = (int64_t)(ch + 1) / 2 * 2;
        int y = m > 1 ? gb_concat(b, nf(n, "%s.cat%d", p, l), in, m) : in[0];
        if (ds) {
            y = gb_conv(b, nf(n, "%s.layer%d", p, l), y, oc, 1, 1, 1, FN_RELU6);
            y = gb_conv(b, nf(n, "%s.layer%d.dw", p, l), y, oc, 3, 1, (int)oc, FN_NONE);
        } else {
            y = gb_conv(b, nf(n, "%s.layer%d", p, l), y, oc, 3, 1, 1, FN_RELU6);
        }
        t[l] = y;
        if (l % 2 || l == n_layers)
            outs[n_out++] = y;
    }
    return gb_concat(b, nf(n, "%s.out", p), outs, n_out);
}

static int gen_hardnet(struct gb *b, const struct wl_cnn *c, int x)
{
    static const struct {
        const char *v;
        int ds, stem0, stem1, n_blk;
        double grmul;
        int ch[6], gr[6], layers[6], down[6];
    } cfg[] = {
        {"39ds", 1, 24, 48, 4, 1.6, {96, 320, 640, 1024}, {16, 20, 64, 160}, {4, 16, 8, 4}, {1, 1, 1, 0}},
        {"68", 0, 32, 64, 5, 1.7, {128, 256, 320, 640, 1024}, {14, 16, 20, 40, 160}, {8, 16, 16, 16, 4},
         {1, 0, 1, 1, 0}},
        {"68ds", 1, 32, 64, 5, 1.7, {128, 256, 320, 640, 1024}, {14, 16, 20, 40, 160}, {8, 16, 16, 16, 4},
         {1, 0, 1, 1, 0}},
        {"85", 0, 48, 96, 6, 1.7, {192, 256, 320, 480, 720, 1280}, {24, 24, 28, 36, 48, 256},
         {8, 16, 16, 16, 16, 4}, {1, 0, 1, 0, 1, 0}},
    };
    size_t v = 0;
    while (v < sizeof cfg / sizeof cfg[0] && strcmp(cfg[v].v, c->variant))
        v++;
    if (v == sizeof cfg / sizeof cfg[0])
        return bad_variant(b, c);
    char n[WL_NAME_LEN];
    int ds = cfg[v].ds;
    x = gb_conv(b, "stem1", x, cfg[v].stem0, 3, 2, 1, FN_RELU6);
    x = gb_conv(b, "stem2", x, cfg[v].stem1, ds ? 1 : 3, 1, 1, FN_RELU6);
    x = ds ? gb_conv(b, "stem_down", x, cfg[v].stem1, 3, 2, cfg[v].stem1, FN_NONE)
           : gb_pool(b, "stem_pool", x, 1, 3, 2, 1);
    for (int i = 0; i < cfg[v].n_blk; i++) {
        x = hard_block(b, nf(n, "block%d", i + 1), x, cfg[v].gr[i], cfg[v].grmul, cfg[v].layers[i], ds);
        x = gb_conv(b, nf(n, "trans%d", i + 1), x, cfg[v].ch[i], 1, 1, 1, FN_RELU6);
        if (cfg[v].down[i])
            x = ds ? gb_conv(b, nf(n, "down%d", i + 1), x, cfg[v].ch[i], 3, 2, cfg[v].ch[i], FN_NONE)
                   : gb_pool(b, nf(n, "down%d", i + 1), x, 1, 2, 2, 0);
    }
    gb_classifier(b, x, c->num_classes);
    return b->rc;
}

/* VGG (Simonyan and Zisserman, ICLR 2015, Table 1, configurations A, B, D, E) as torchvision builds it
 * (torchvision/models/vgg.py, without batch normalisation): 3x3 convolutions with biases and ReLU in five
 * blocks of 64, 128, 256, 512 and 512 channels, each ended by a 2x2 stride-2 max pool; then the 512 x 7 x 7
 * map flattened (torchvision's adaptive pool to 7 x 7 is the identity at 224 x 224, and refused at other
 * sizes) into fully connected layers of 4096, 4096 (ReLU; dropout is training only) and the classes. */
static int gen_vgg(struct gb *b, const struct wl_cnn *c, int x)
{
    static const struct {
        const char *v;
        int n[5];
    } cfg[] = {{"11", {1, 1, 2, 2, 2}}, {"13", {2, 2, 2, 2, 2}}, {"16", {2, 2, 3, 3, 3}}, {"19", {2, 2, 4, 4, 4}}};
    size_t v = 0;
    while (v < sizeof cfg / sizeof cfg[0] && strcmp(cfg[v].v, c->variant))
        v++;
    if (v == sizeof cfg / sizeof cfg[0])
        return bad_variant(b, c);
    char n[WL_NAME_LEN];
    for (int s = 0; s < 5; s++) {
        int64_t w = s < 4 ? 64LL << s : 512;
        for (int k = 0; k < cfg[v].n[s]; k++)
            x = gb_conv(b, nf(n, "features.%d.%d", s + 1, k), x, w, 3, 1, 1, FN_RELU);
        x = gb_pool(b, nf(n, "pool%d", s + 1), x, 1, 2, 2, 0);
    }
    if (b->rc)
        return b->rc;
    const struct wl_tensor *t = &b->g->t[x];
    if (t->dim[2] != 7 || t->dim[3] != 7)
        return b->rc = dse_err_set(b->e, DSE_EINPUT, NULL, NULL,
                                   "generator 'vgg': a %lld x %lld input ends its features at %lld x %lld; torchvision "
                                   "pools them to 7 x 7 adaptively, which is modelled only where it is the identity "
                                   "(inputs of 224 to 255 pixels a side)",
                                   (long long)c->image_h, (long long)c->image_w, (long long)t->dim[2],
                                   (long long)t->dim[3]);
    int64_t N = t->dim[0], C = t->dim[1] * 49;
    int f = gb_op(b, "flatten", OP_RESHAPE, &x, 1, "flatten", WL_ACT, 2, N, C, 0, 0);
    f = gb_linear(b, "classifier.0", f, 4096, 1, WL_ACT);
    f = gb_eltwise(b, "classifier.1", FN_RELU, f, -1);
    f = gb_linear(b, "classifier.3", f, 4096, 1, WL_ACT);
    f = gb_eltwise(b, "classifier.4", FN_RELU, f, -1);
    gb_linear(b, "classifier.6", f, c->num_classes, 1, WL_ACT);
    return b->rc;
}

/* Inception-v4 (Szegedy et al., AAAI 2017, Figs. 3-9) as TF-slim builds it (research/slim/nets/
 * inception_v4.py, 1001 classes; the graph Coral's inception_v4_299_quant runs): batch-normalised
 * convolutions (SAME-padded unless marked VALID below), no auxiliary head (training only). Stem: 3x3/2 32
 * VALID, 3x3 32 VALID, 3x3 64; Mixed_3a 3x3/2 max pool VALID | 3x3/2 96 VALID; Mixed_4a 1x1 64 -> 3x3 96
 * VALID | 1x1 64 -> 1x7 64 -> 7x1 64 -> 3x3 96 VALID; Mixed_5a 3x3/2 192 VALID | 3x3/2 max pool VALID.
 * Then 4 Inception-A, Reduction-A, 7 Inception-B, Reduction-B, 3 Inception-C (each block's branches
 * below), the 8x8 average pool and the classifier. */
static int v4_conv(struct gb *b, const char *n, int x, int64_t oc, int kh, int kw, int s, int valid)
{
    return gb_conv_rect(b, n, x, oc, kh, kw, s, valid ? 0 : kh / 2, valid ? 0 : kw / 2, 1, FN_RELU);
}

static int gen_inception_v4(struct gb *b, const struct wl_cnn *c, int x)
{
    char n[WL_NAME_LEN];
    int br[4];
    x = v4_conv(b, "stem.1a", x, 32, 3, 3, 2, 1);
    x = v4_conv(b, "stem.2a", x, 32, 3, 3, 1, 1);
    x = v4_conv(b, "stem.2b", x, 64, 3, 3, 1, 0);
    br[0] = gb_pool(b, "mixed3a.pool", x, 1, 3, 2, 0);
    br[1] = v4_conv(b, "mixed3a.conv", x, 96, 3, 3, 2, 1);
    x = gb_concat(b, "mixed3a", br, 2);
    br[0] = v4_conv(b, "mixed4a.b0a", x, 64, 1, 1, 1, 0);
    br[0] = v4_conv(b, "mixed4a.b0b", br[0], 96, 3, 3, 1, 1);
    br[1] = v4_conv(b, "mixed4a.b1a", x, 64, 1, 1, 1, 0);
    br[1] = v4_conv(b, "mixed4a.b1b", br[1], 64, 1, 7, 1, 0);
    br[1] = v4_conv(b, "mixed4a.b1c", br[1], 64, 7, 1, 1, 0);
    br[1] = v4_conv(b, "mixed4a.b1d", br[1], 96, 3, 3, 1, 1);
    x = gb_concat(b, "mixed4a", br, 2);
    br[0] = v4_conv(b, "mixed5a.conv", x, 192, 3, 3, 2, 1);
    br[1] = gb_pool(b, "mixed5a.pool", x, 1, 3, 2, 0);
    x = gb_concat(b, "mixed5a", br, 2);
    for (int i = 0; i < 4; i++) { /* Inception-A, 35x35: 96 | 64 -> 96 | 64 -> 96 -> 96 | avg -> 96 */
        br[0] = v4_conv(b, nf(n, "a%d.b0", i), x, 96, 1, 1, 1, 0);
        br[1] = v4_conv(b, nf(n, "a%d.b1a", i), x, 64, 1, 1, 1, 0);
        br[1] = v4_conv(b, nf(n, "a%d.b1b", i), br[1], 96, 3, 3, 1, 0);
        br[2] = v4_conv(b, nf(n, "a%d.b2a", i), x, 64, 1, 1, 1, 0);
        br[2] = v4_conv(b, nf(n, "a%d.b2b", i), br[2], 96, 3, 3, 1, 0);
        br[2] = v4_conv(b, nf(n, "a%d.b2c", i), br[2], 96, 3, 3, 1, 0);
        br[3] = gb_pool(b, nf(n, "a%d.b3pool", i), x, 0, 3, 1, 1);
        br[3] = v4_conv(b, nf(n, "a%d.b3", i), br[3], 96, 1, 1, 1, 0);
        x = gb_concat(b, nf(n, "a%d", i), br, 4);
    }
    /* Reduction-A: 3x3/2 384 VALID | 192 -> 3x3 224 -> 3x3/2 256 VALID | 3x3/2 max pool VALID */
    br[0] = v4_conv(b, "ra.b0", x, 384, 3, 3, 2, 1);
    br[1] = v4_conv(b, "ra.b1a", x, 192, 1, 1, 1, 0);
    br[1] = v4_conv(b, "ra.b1b", br[1], 224, 3, 3, 1, 0);
    br[1] = v4_conv(b, "ra.b1c", br[1], 256, 3, 3, 2, 1);
    br[2] = gb_pool(b, "ra.pool", x, 1, 3, 2, 0);
    x = gb_concat(b, "ra", br, 3);
    for (int i = 0; i < 7; i++) { /* Inception-B, 17x17 */
        br[0] = v4_conv(b, nf(n, "b%d.b0", i), x, 384, 1, 1, 1, 0);
        br[1] = v4_conv(b, nf(n, "b%d.b1a", i), x, 192, 1, 1, 1, 0);
        br[1] = v4_conv(b, nf(n, "b%d.b1b", i), br[1], 224, 1, 7, 1, 0);
        br[1] = v4_conv(b, nf(n, "b%d.b1c", i), br[1], 256, 7, 1, 1, 0);
        br[2] = v4_conv(b, nf(n, "b%d.b2a", i), x, 192, 1, 1, 1, 0);
        br[2] = v4_conv(b, nf(n, "b%d.b2b", i), br[2], 192, 7, 1, 1, 0);
        br[2] = v4_conv(b, nf(n, "b%d.b2c", i), br[2], 224, 1, 7, 1, 0);
        br[2] = v4_conv(b, nf(n, "b%d.b2d", i), br[2], 224, 7, 1, 1, 0);
        br[2] = v4_conv(b, nf(n, "b%d.b2e", i), br[2], 256, 1, 7, 1, 0);
        br[3] = gb_pool(b, nf(n, "b%d.b3pool", i), x, 0, 3, 1, 1);
        br[3] = v4_conv(b, nf(n, "b%d.b3", i), br[3], 128, 1, 1, 1, 0);
        x = gb_concat(b, nf(n, "b%d", i), br, 4);
    }
    /* Reduction-B: 192 -> 3x3/2 192 VALID | 256 -> 1x7 256 -> 7x1 320 -> 3x3/2 320 VALID | max pool */
    br[0] = v4_conv(b, "rb.b0a", x, 192, 1, 1, 1, 0);
    br[0] = v4_conv(b, "rb.b0b", br[0], 192, 3, 3, 2, 1);
    br[1] = v4_conv(b, "rb.b1a", x, 256, 1, 1, 1, 0);
    br[1] = v4_conv(b, "rb.b1b", br[1], 256, 1, 7, 1, 0);
    br[1] = v4_conv(b, "rb.b1c", br[1], 320, 7, 1, 1, 0);
    br[1] = v4_conv(b, "rb.b1d", br[1], 320, 3, 3, 2, 1);
    br[2] = gb_pool(b, "rb.pool", x, 1, 3, 2, 0);
    x = gb_concat(b, "rb", br, 3);
    for (int i = 0; i < 3; i++) { /* Inception-C, 8x8: 256 | 384 -> (1x3 | 3x1) 256 | 384 -> 3x1 448 -> 1x3
                                     512 -> (1x3 | 3x1) 256 | avg -> 256 */
        int cc[6], k = 0, h;
        cc[k++] = v4_conv(b, nf(n, "c%d.b0", i), x, 256, 1, 1, 1, 0);
        h = v4_conv(b, nf(n, "c%d.b1a", i), x, 384, 1, 1, 1, 0);
        cc[k++] = v4_conv(b, nf(n, "c%d.b1b", i), h, 256, 1, 3, 1, 0);
        cc[k++] = v4_conv(b, nf(n, "c%d.b1c", i), h, 256, 3, 1, 1, 0);
        h = v4_conv(b, nf(n, "c%d.b2a", i), x, 384, 1, 1, 1, 0);
        h = v4_conv(b, nf(n, "c%d.b2b", i), h, 448, 3, 1, 1, 0);
        h = v4_conv(b, nf(n, "c%d.b2c", i), h, 512, 1, 3, 1, 0);
        cc[k++] = v4_conv(b, nf(n, "c%d.b2d", i), h, 256, 1, 3, 1, 0);
        cc[k++] = v4_conv(b, nf(n, "c%d.b2e", i), h, 256, 3, 1, 1, 0);
        h = gb_pool(b, nf(n, "c%d.b3pool", i), x, 0, 3, 1, 1);
        cc[k++] = v4_conv(b, nf(n, "c%d.b3", i), h, 256, 1, 1, 1, 0);
        x = gb_concat(b, nf(n, "c%d", i), cc, k);
    }
    gb_classifier(b, x, c->num_classes);
    return b->rc;
}

/* DnCNN (Zhang et al., IEEE TIP 2017, Fig. 1; the blind 20-layer models DnCNN-3 and CDnCNN-B): a 3x3
 * convolution to 64 with ReLU, 18 of 3x3 64 -> 64 with batch normalisation (folded) and ReLU, a 3x3 back to
 * the image's channels, and the residual learning's output: the input less the predicted noise. */
static int gen_dncnn(struct gb *b, const struct wl_cnn *c, int x)
{
    char n[WL_NAME_LEN];
    int h = gb_conv(b, "conv0", x, 64, 3, 1, 1, FN_RELU);
    for (int i = 1; i <= 18; i++)
        h = gb_conv(b, nf(n, "conv%d", i), h, 64, 3, 1, 1, FN_RELU);
    h = gb_conv(b, "conv19", h, c->channels, 3, 1, 1, FN_NONE);
    gb_eltwise(b, "denoised", FN_SUB, x, h);
    return b->rc;
}

/* ESPCN (Shi et al., CVPR 2016, Sec. 2 and 3.1: l = 3, (f, n) = (5, 64), (3, 32), 3): a 5x5 convolution to 64
 * and a 3x3 to 32 with tanh, a 3x3 to r^2 x the image's channels at low resolution, and the periodic
 * shuffle to the r-times-larger image (a view: each output pixel is one input element). Variant: r. */
static int gen_espcn(struct gb *b, const struct wl_cnn *c, int x)
{
    int r = c->variant[0] - '0';
    if (r < 2 || r > 4 || c->variant[1])
        return bad_variant(b, c);
    int64_t C = c->channels;
    int h = gb_conv(b, "conv1", x, 64, 5, 1, 1, FN_TANH);
    h = gb_conv(b, "conv2", h, 32, 3, 1, 1, FN_TANH);
    h = gb_conv(b, "conv3", h, (int64_t)r * r * C, 3, 1, 1, FN_NONE);
    if (b->rc)
        return b->rc;
    const struct wl_tensor *t = &b->g->t[h];
    gb_op(b, "pixel_shuffle", OP_RESHAPE, &h, 1, "pixel_shuffle", WL_ACT, 4, t->dim[0], C, r * t->dim[2], r * t->dim[3]);
    return b->rc;
}

const struct wl_cnn_gen wl_cnn_cls_gens[] = {
    {"resnet_v1", "18,34,50,101,152", gen_resnet_v1},
    {"resnet", "18,34,50,101,152", gen_resnet_tv},
    {"vgg", "11,13,16,19", gen_vgg},
    {"dncnn", NULL, gen_dncnn},
    {"espcn", "2,3,4", gen_espcn},
    {"resnext", "26_32x4d,50_32x4d,101_32x4d,101_64x4d", gen_resnext},
    {"regnetx", "200mf,400mf,600mf,800mf,1.6gf,3.2gf,4.0gf,6.4gf,8.0gf,12gf,16gf,32gf", gen_regnetx},
    {"mobilenet_v1", NULL, gen_mobilenet_v1},
    {"ssd_mobilenet_v1", NULL, gen_ssd_mobilenet_v1},
    {"mobilenet_v2_slim", NULL, gen_mobilenet_v2_slim},
    {"mobilenet_v3", "large,small,large_min,small_min,edgetpu", gen_mobilenet_v3},
    {"efficientnet_lite", "0,1,2,3,4", gen_efficientnet_lite},
    {"efficientnet", "b0", gen_efficientnet},
    {"efficientnet_edgetpu", "s,m,l", gen_efficientnet_edgetpu},
    {"inception_v1", NULL, gen_inception_v1},
    {"inception_v4", NULL, gen_inception_v4},
    {"squeezenet", "1.0,1.1", gen_squeezenet},
    {"repvgg", "a0,a1,a2,b0,b1,b2,b3", gen_repvgg},
    {"hardnet", "39ds,68,68ds,85", gen_hardnet},
    {NULL, NULL, NULL},
};
