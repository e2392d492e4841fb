/* wl_cnn.c -- CNN graph builders: ResNet-50 (torchvision v1.5: stride on the 3x3 convolution) and
 * MobileNetV2 (Sandler et al., CVPR 2018; torchvision layout). Batch normalisation is kept as an
 * element-wise scale-and-shift with its 2 x C parameters, as the published parameter counts include
 * them; convolutions have no bias. */
#include <stdio.h>
#include <string.h>

#include "wl_cnn_gen.h"

struct cnn {
    struct gb b;
    int64_t B;
};

/* conv -> batchnorm [-> activation]; returns the output tensor. */
static int conv_bn(struct cnn *c, const char *name, int x, int64_t oc, int k, int stride, int groups, enum wl_fn act)
{
    struct gb *b = &c->b;
    if (b->rc)
        return -1;
    const struct wl_tensor *t = &b->g->t[x];
    int64_t C = t->dim[1], H = t->dim[2], W = t->dim[3];
    int pad = k / 2;
    int64_t OH = (H + 2 * pad - k) / stride + 1, OW = (W + 2 * pad - k) / stride + 1;
    char n[WL_NAME_LEN], on[WL_NAME_LEN];
    snprintf(n, sizeof n, "%s.weight", name);
    int in[2] = {x, gb_tensor(b, n, WL_WEIGHT, 4, oc, C / groups, k, k)};
    int y = gb_op(b, name, OP_CONV2D, in, 2, name, WL_ACT, 4, c->B, oc, OH, OW);
    if (y < 0)
        return -1;
    struct wl_op *op = &b->g->op[b->g->n_op - 1];
    op->sh = op->sw = stride;
    op->ph = op->pw = pad;
    op->groups = groups;
    snprintf(n, sizeof n, "%s.bn.params", name);
    snprintf(on, sizeof on, "%s.bn", name);
    in[0] = y;
    in[1] = gb_tensor(b, n, WL_WEIGHT, 2, 2, oc, 0, 0);
    y = gb_op(b, on, OP_ELTWISE, in, 2, on, WL_ACT, 4, c->B, oc, OH, OW);
    if (y < 0)
        return -1;
    b->g->op[b->g->n_op - 1].fn = FN_BATCHNORM;
    if (act != FN_NONE) {
        snprintf(on, sizeof on, "%s.act", name);
        y = gb_eltwise(b, on, act, y, -1);
    }
    return y;
}

static int classifier(struct cnn *c, int x, int64_t classes)
{
    struct gb *b = &c->b;
    if (b->rc)
        return -1;
    int64_t C = b->g->t[x].dim[1];
    int p = gb_op(b, "avgpool", OP_POOL, &x, 1, "avgpool", WL_ACT, 4, c->B, C, 1, 1);
    if (p < 0)
        return -1;
    b->g->op[b->g->n_op - 1].kh = 0; /* global */
    int f = gb_op(b, "flatten", OP_RESHAPE, &p, 1, "flatten", WL_ACT, 2, c->B, C, 0, 0);
    return gb_linear(b, "fc", f, classes, 1, WL_ACT);
}

static int resnet50(struct cnn *c, int64_t classes)
{
    struct gb *b = &c->b;
    int x = b->g->n_t - 1;
    x = conv_bn(c, "conv1", x, 64, 7, 2, 1, FN_RELU);
    if (b->rc)
        return b->rc;
    const struct wl_tensor *t = &b->g->t[x];
    int p = gb_op(b, "maxpool", OP_POOL, &x, 1, "maxpool", WL_ACT, 4, c->B, 64, (t->dim[2] + 2 - 3) / 2 + 1,
                  (t->dim[3] + 2 - 3) / 2 + 1);
    if (p < 0)
        return b->rc;
    struct wl_op *op = &b->g->op[b->g->n_op - 1];
    op->kh = op->kw = 3;
    op->sh = op->sw = 2;
    op->ph = op->pw = 1;
    op->pool_max = 1;
    x = p;
    static const int blocks[4] = {3, 4, 6, 3};
    for (int s = 0; s < 4; s++) {
        int64_t planes = 64LL << s;
        for (int k = 0; k < blocks[s]; k++) {
            int stride = (k == 0 && s > 0) ? 2 : 1;
            char n[WL_NAME_LEN];
            snprintf(n, sizeof n, "layer%d.%d.conv1", s + 1, k);
            int y = conv_bn(c, n, x, planes, 1, 1, 1, FN_RELU);
            snprintf(n, sizeof n, "layer%d.%d.conv2", s + 1, k);
            y = conv_bn(c, n, y, planes, 3, stride, 1, FN_RELU);
            snprintf(n, sizeof n, "layer%d.%d.conv3", s + 1, k);
            y = conv_bn(c, n, y, planes * 4, 1, 1, 1, FN_NONE);
            int sc = x;
            if (k == 0) {
                snprintf(n, sizeof n, "layer%d.%d.downsample", s + 1, k);
                sc = conv_bn(c, n, x, planes * 4, 1, stride, 1, FN_NONE);
            }
            snprintf(n, sizeof n, "layer%d.%d.add", s + 1, k);
            y = gb_eltwise(b, n, FN_ADD, y, sc);
            snprintf(n, sizeof n, "layer%d.%d.relu", s + 1, k);
            x = gb_eltwise(b, n, FN_RELU, y, -1);
            if (b->rc)
                return b->rc;
        }
    }
    classifier(c, x, classes);
    return b->rc;
}

/* torchvision's _make_divisible: round to a multiple of 8, never below 90% of the request. */
static int64_t divisible(double v)
{
    int64_t r = (int64_t)(v + 4) / 8 * 8;
    if (r < 8)
        r = 8;
    if ((double)r < 0.9 * v)
        r += 8;
    return r;
}

static int mobilenet_v2(struct cnn *c, int64_t classes, double wm)
{
    struct gb *b = &c->b;
    static const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                  {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    int x = b->g->n_t - 1;
    int64_t in_c = divisible(32 * wm), last = divisible(1280 * (wm > 1 ? wm : 1));
    x = conv_bn(c, "features.0", x, in_c, 3, 2, 1, FN_RELU6);
    int idx = 1;
    for (int s = 0; s < 7; s++) {
        int64_t out_c = divisible(cfg[s][1] * wm);
        for (int k = 0; k < cfg[s][2]; k++, idx++) {
            int stride = k == 0 ? cfg[s][3] : 1;
            int64_t hid = in_c * cfg[s][0];
            char n[WL_NAME_LEN];
            int y = x;
            if (cfg[s][0] != 1) {
                snprintf(n, sizeof n, "features.%d.expand", idx);
                y = conv_bn(c, n, y, hid, 1, 1, 1, FN_RELU6);
            }
            snprintf(n, sizeof n, "features.%d.dw", idx);
            y = conv_bn(c, n, y, hid, 3, stride, (int)hid, FN_RELU6);
            snprintf(n, sizeof n, "features.%d.project", idx);
            y = conv_bn(c, n, y, out_c, 1, 1, 1, FN_NONE);
            if (stride == 1 && in_c == out_c) {
                snprintf(n, sizeof n, "features.%d.add", idx);
                y = gb_eltwise(b, n, FN_ADD, y, x);
            }
            x = y;
            in_c = out_c;
            if (b->rc)
                return b->rc;
        }
    }
    x = conv_bn(c, "features.18", x, last, 1, 1, 1, FN_RELU6);
    classifier(c, x, classes);
    return b->rc;
}

static int gen_resnet50(struct gb *b, const struct wl_cnn *cfg, int x)
{
    struct cnn c = {*b, b->g->t[x].dim[0]};
    int rc = resnet50(&c, cfg->num_classes);
    b->rc = c.b.rc;
    return rc;
}

static int gen_mobilenet_v2(struct gb *b, const struct wl_cnn *cfg, int x)
{
    struct cnn c = {*b, b->g->t[x].dim[0]};
    int rc = mobilenet_v2(&c, cfg->num_classes, cfg->width_mult);
    b->rc = c.b.rc;
    return rc;
}

static const struct wl_cnn_gen first_gens[] = {
    {"resnet50", NULL, gen_resnet50},
    {"mobilenet_v2", NULL, gen_mobilenet_v2},
    {NULL, NULL, NULL},
};

static const struct wl_cnn_gen *const gen_tables[] = {first_gens, wl_cnn_cls_gens, wl_yolo_gens};

static const struct wl_cnn_gen *find_gen(const char *arch)
{
    for (size_t t = 0; t < sizeof gen_tables / sizeof gen_tables[0]; t++)
        for (const struct wl_cnn_gen *g = gen_tables[t]; g->name; g++)
            if (!strcmp(g->name, arch))
                return g;
    return NULL;
}

/* Whether `v` is one of the comma-separated names in list. */
static int in_list(const char *list, const char *v)
{
    size_t n = strlen(v);
    for (const char *p = list; p && *p;) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (len == n && !strncmp(p, v, n))
            return 1;
        p = q ? q + 1 : NULL;
    }
    return 0;
}

int wl_cnn_check(const char *arch, const char *variant, char *msg, size_t n)
{
    const struct wl_cnn_gen *g = find_gen(arch);
    if (!g) {
        size_t off = (size_t)snprintf(msg, n, "unknown generator '%s' (expected one of", arch);
        for (size_t t = 0; t < sizeof gen_tables / sizeof gen_tables[0]; t++)
            for (const struct wl_cnn_gen *k = gen_tables[t]; k->name && off < n; k++)
                off += (size_t)snprintf(msg + off, n - off, " %s", k->name);
        if (off < n)
            snprintf(msg + off, n - off, ", or a transformer config with model_type)");
        return -1;
    }
    if (!g->variants && variant[0]) {
        snprintf(msg, n, "generator '%s' takes no variant, got '%s'", arch, variant);
        return -1;
    }
    if (g->variants && !in_list(g->variants, variant)) {
        snprintf(msg, n, "generator '%s' needs a variant, one of %s; got '%s'", arch, g->variants, variant);
        return -1;
    }
    return 0;
}

int wl_build_cnn(const struct wl_cnn *cfg, const char *name, const struct wl_shape *s, struct wl_graph *g,
                 struct dse_err *e)
{
    wl_graph_init(g, name);
    struct gb b = {g, e, "", 1, DSE_OK};
    const struct wl_cnn_gen *gen = find_gen(cfg->arch);
    if (!gen)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "unknown CNN generator '%s'", cfg->arch);
    int x = gb_tensor(&b, "image", WL_INPUT, 4, s->batch, cfg->channels, cfg->image_h, cfg->image_w);
    if (x < 0)
        return b.rc;
    return gen->build(&b, cfg, x);
}
