/* wl_build.c -- graph-building helpers for the generators. */
#include "wl_build.h"

#include <stdio.h>
#include <string.h>

int gb_tensor(struct gb *b, const char *name, enum wl_kind kind, int rank, int64_t d0, int64_t d1, int64_t d2,
              int64_t d3)
{
    if (b->rc)
        return -1;
    char full[WL_NAME_LEN];
    int64_t d[4] = {d0, d1, d2, d3};
    snprintf(full, sizeof full, "%s%s", b->prefix, name);
    int t = wl_add_tensor(b->g, full, kind, rank, d, b->e);
    if (t < 0)
        b->rc = b->e->code ? b->e->code : DSE_EINPUT;
    return t;
}

int gb_op(struct gb *b, const char *name, enum op_type type, const int *in, int n_in, const char *out,
          enum wl_kind okind, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    if (b->rc)
        return -1;
    int y = gb_tensor(b, out, okind, rank, d0, d1, d2, d3);
    if (y < 0)
        return -1;
    char full[WL_NAME_LEN];
    snprintf(full, sizeof full, "%s%s", b->prefix, name);
    int o = wl_add_op(b->g, full, type, in, n_in, &y, 1, b->e);
    if (o < 0) {
        b->rc = b->e->code ? b->e->code : DSE_EINPUT;
        return -1;
    }
    b->g->op[o].count = b->count;
    return y;
}

static void shape_with_last(const struct wl_tensor *t, int64_t last, int64_t *d)
{
    for (int i = 0; i < 4; i++)
        d[i] = i < t->rank ? t->dim[i] : 0;
    d[t->rank - 1] = last;
}

int gb_linear(struct gb *b, const char *name, int x, int64_t n, int bias, enum wl_kind okind)
{
    if (b->rc)
        return -1;
    const struct wl_tensor *t = &b->g->t[x];
    int64_t k = t->dim[t->rank - 1], d[4];
    int rank = t->rank;
    shape_with_last(t, n, d);
    char wn[WL_NAME_LEN], bn[WL_NAME_LEN];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    int in[3] = {x, gb_tensor(b, wn, WL_WEIGHT, 2, k, n, 0, 0), bias ? gb_tensor(b, bn, WL_WEIGHT, 1, n, 0, 0, 0) : -1};
    return gb_op(b, name, OP_MATMUL, in, bias ? 3 : 2, name, okind, rank, d[0], d[1], d[2], d[3]);
}

int gb_eltwise(struct gb *b, const char *name, enum wl_fn fn, int x, int y)
{
    if (b->rc)
        return -1;
    const struct wl_tensor *t = &b->g->t[x];
    int in[2] = {x, y};
    int64_t d[4] = {0, 0, 0, 0};
    for (int i = 0; i < t->rank && i < 4; i++)
        d[i] = t->dim[i];
    int r = gb_op(b, name, OP_ELTWISE, in, y >= 0 ? 2 : 1, name, WL_ACT, t->rank, d[0], d[1], d[2], d[3]);
    if (r >= 0)
        b->g->op[b->g->n_op - 1].fn = fn;
    return r;
}

int gb_norm(struct gb *b, const char *name, int rms, int x)
{
    if (b->rc)
        return -1;
    const struct wl_tensor *t = &b->g->t[x];
    int64_t h = t->dim[t->rank - 1], d[4] = {0, 0, 0, 0};
    for (int i = 0; i < t->rank && i < 4; i++)
        d[i] = t->dim[i];
    char wn[WL_NAME_LEN], bn[WL_NAME_LEN];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    int in[3] = {x, gb_tensor(b, wn, WL_WEIGHT, 1, h, 0, 0, 0), rms ? -1 : gb_tensor(b, bn, WL_WEIGHT, 1, h, 0, 0, 0)};
    return gb_op(b, name, rms ? OP_RMSNORM : OP_LAYERNORM, in, rms ? 2 : 3, name, WL_ACT, t->rank, d[0], d[1], d[2],
                 d[3]);
}

int gb_conv_rect(struct gb *b, const char *name, int x, int64_t oc, int kh, int kw, int stride, int ph, int pw,
                 int groups, enum wl_fn act)
{
    if (b->rc)
        return -1;
    const struct wl_tensor *t = &b->g->t[x];
    if (t->rank != 4 || groups < 1 || t->dim[1] % groups || oc % groups) {
        b->rc = dse_err_set(b->e, DSE_EINPUT, NULL, NULL, "%s: %lld input channels, %lld filters and %d groups do not fit",
                            name, (long long)t->dim[1], (long long)oc, groups);
        return -1;
    }
    int64_t N = t->dim[0], C = t->dim[1], H = t->dim[2], W = t->dim[3]; /* t moves as tensors are added */
    int64_t OH = (H + 2 * ph - kh) / stride + 1, OW = (W + 2 * pw - kw) / stride + 1;
    char n[WL_NAME_LEN];
    snprintf(n, sizeof n, "%s.weight", name);
    int in[3] = {x, gb_tensor(b, n, WL_WEIGHT, 4, oc, C / groups, kh, kw), -1};
    snprintf(n, sizeof n, "%s.bias", name);
    in[2] = gb_tensor(b, n, WL_WEIGHT, 1, oc, 0, 0, 0);
    int y = gb_op(b, name, OP_CONV2D, in, 3, name, WL_ACT, 4, N, oc, OH, OW);
    if (y < 0)
        return -1;
    struct wl_op *op = &b->g->op[b->g->n_op - 1];
    op->sh = op->sw = stride;
    op->ph = ph;
    op->pw = pw;
    op->groups = groups;
    if (act != FN_NONE) {
        snprintf(n, sizeof n, "%s.act", name);
        y = gb_eltwise(b, n, act, y, -1);
    }
    return y;
}

int gb_conv(struct gb *b, const char *name, int x, int64_t oc, int k, int stride, int groups, enum wl_fn act)
{
    return gb_conv_rect(b, name, x, oc, k, k, stride, k / 2, k / 2, groups, act);
}

int gb_pool(struct gb *b, const char *name, int x, int max, int k, int stride, int pad)
{
    if (b->rc)
        return -1;
    const struct wl_tensor *t = &b->g->t[x];
    int64_t OH = k ? (t->dim[2] + 2 * pad - k) / stride + 1 : 1, OW = k ? (t->dim[3] + 2 * pad - k) / stride + 1 : 1;
    int y = gb_op(b, name, OP_POOL, &x, 1, name, WL_ACT, 4, t->dim[0], t->dim[1], OH, OW);
    if (y < 0)
        return -1;
    struct wl_op *op = &b->g->op[b->g->n_op - 1];
    op->kh = op->kw = k;
    op->sh = op->sw = k ? stride : 1;
    op->ph = op->pw = k ? pad : 0;
    op->pool_max = max;
    return y;
}

int gb_concat(struct gb *b, const char *name, const int *xs, int n)
{
    if (b->rc)
        return -1;
    int cur[WL_MAX_IN], m = 0, y = -1, part = 0;
    for (int i = 0; i < n;) {
        m = 0;
        if (y >= 0)
            cur[m++] = y;
        while (m < WL_MAX_IN && i < n)
            cur[m++] = xs[i++];
        if (m == 1)
            return cur[0];
        const struct wl_tensor *t0 = &b->g->t[cur[0]];
        int64_t C = 0;
        for (int k = 0; k < m; k++)
            C += b->g->t[cur[k]].dim[1];
        char on[WL_NAME_LEN];
        if (part++ || i < n)
            snprintf(on, sizeof on, "%s.%d", name, part);
        else
            snprintf(on, sizeof on, "%s", name);
        y = gb_op(b, on, OP_CONCAT, cur, m, on, WL_ACT, 4, t0->dim[0], C, t0->dim[2], t0->dim[3]);
        if (y < 0)
            return -1;
        b->g->op[b->g->n_op - 1].axis = 1;
    }
    return y;
}

int gb_resize(struct gb *b, const char *name, int x, int64_t oh, int64_t ow)
{
    if (b->rc)
        return -1;
    const struct wl_tensor *t = &b->g->t[x];
    return gb_op(b, name, OP_COPY, &x, 1, name, WL_ACT, 4, t->dim[0], t->dim[1], oh, ow);
}

int gb_flatten_hw(struct gb *b, const char *name, int x)
{
    if (b->rc)
        return -1;
    const struct wl_tensor *t = &b->g->t[x];
    return gb_op(b, name, OP_RESHAPE, &x, 1, name, WL_ACT, 3, t->dim[0], t->dim[1], t->dim[2] * t->dim[3], 0);
}

int gb_classifier(struct gb *b, int x, int64_t classes)
{
    if (b->rc)
        return -1;
    int p = gb_pool(b, "avgpool", x, 0, 0, 1, 0);
    if (p < 0)
        return -1;
    int64_t N = b->g->t[p].dim[0], C = b->g->t[p].dim[1];
    int f = gb_op(b, "flatten", OP_RESHAPE, &p, 1, "flatten", WL_ACT, 2, N, C, 0, 0);
    return gb_linear(b, "fc", f, classes, 1, WL_ACT);
}

int gb_squeeze_excite(struct gb *b, const char *name, int x, int64_t mid, enum wl_fn act)
{
    if (b->rc)
        return -1;
    char n[WL_NAME_LEN];
    int64_t C = b->g->t[x].dim[1];
    snprintf(n, sizeof n, "%s.pool", name);
    int p = gb_pool(b, n, x, 0, 0, 1, 0);
    snprintf(n, sizeof n, "%s.fc1", name);
    p = gb_conv(b, n, p, mid, 1, 1, 1, act);
    snprintf(n, sizeof n, "%s.fc2", name);
    p = gb_conv(b, n, p, C, 1, 1, 1, FN_SIGMOID);
    snprintf(n, sizeof n, "%s.scale", name);
    return gb_eltwise(b, n, FN_MUL, x, p);
}
