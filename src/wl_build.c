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
