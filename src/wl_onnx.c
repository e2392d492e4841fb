/* wl_onnx.c -- ONNX import: an ONNX ModelProto (src/onnx.proto, decoded by protobuf-c) read into a
 * compact copy of its main graph, whose shapes are inferred again and turned into dse's operator
 * graph for every build (batch and sequence length are the build's).
 *
 * What is read (docs/onnx.md has the operator table):
 *  - the ai.onnx opset (7 to 21) and com.microsoft's contrib operators that ONNX Runtime's quantizer
 *    and transformer optimizer write (QLinearAdd, Attention, SkipLayerNormalization, ...);
 *  - initializers: their dims always; their contents when small (<= OX_FOLD_MAX elements), for the
 *    shape arithmetic; external data is never read (only dims matter for cost);
 *  - graph inputs: fixed dimensions as written; a dynamic one is bound by --dim name=value, else a
 *    batch-like name (or an unnamed leading dimension) follows the build's batch and a sequence-like
 *    name (or an unnamed second dimension of integer token ids) its tokens; any other is an error.
 *
 * The nodes are sorted topologically here (a cycle is an error); wl_onnx_ops.c infers shapes and maps
 * the operators for each build. */
#include "wl.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"
#include "wl_onnx.h"

/* ---- arena: everything of an import (or of one build's constants) freed at once ---- */

void *ar_alloc(struct ox_chunk **a, size_t n)
{
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (!*a || (*a)->cap - (*a)->used < n) {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        struct ox_chunk *c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = *a;
        c->used = 0;
        c->cap = cap;
        *a = c;
    }
    void *p = (char *)(*a)->data + (*a)->used;
    (*a)->used += n;
    memset(p, 0, n);
    return p;
}

void ar_free(struct ox_chunk *a)
{
    while (a) {
        struct ox_chunk *n = a->next;
        free(a);
        a = n;
    }
}

char *ar_str(struct ox_chunk **a, const char *s)
{
    size_t n = strlen(s ? s : "");
    char *p = ar_alloc(a, n + 1);
    if (p)
        memcpy(p, s ? s : "", n + 1);
    return p;
}

/* ---- loading ---- */

static int load_fail(const char *file, const char *where, struct dse_err *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int load_fail(const char *file, const char *where, struct dse_err *e, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return dse_err_set(e, DSE_EINPUT, file, where, "%s", msg);
}

struct ox_names { /* open addressing, power-of-two size: name -> value index */
    int *slot;
    int cap;
};

static uint64_t str_hash(const char *s) { return dse_fnv1a64(s, strlen(s)); }

static int names_find(const struct wl_onnx *x, const struct ox_names *ix, const char *s)
{
    if (!ix->cap)
        return -1;
    for (uint64_t i = str_hash(s) & (uint64_t)(ix->cap - 1);; i = (i + 1) & (uint64_t)(ix->cap - 1)) {
        int v = ix->slot[i];
        if (v < 0 || strcmp(x->val[v].name, s) == 0)
            return v;
    }
}

static int names_put(const struct wl_onnx *x, struct ox_names *ix, int v)
{
    if (2 * (x->n_val + 1) > ix->cap) {
        int cap = ix->cap ? 2 * ix->cap : 1024;
        int *s = malloc(sizeof *s * (size_t)cap);
        if (!s)
            return -1;
        for (int i = 0; i < cap; i++)
            s[i] = -1;
        for (int i = 0; i < ix->cap; i++)
            if (ix->slot[i] >= 0) {
                uint64_t h = str_hash(x->val[ix->slot[i]].name) & (uint64_t)(cap - 1);
                while (s[h] >= 0)
                    h = (h + 1) & (uint64_t)(cap - 1);
                s[h] = ix->slot[i];
            }
        free(ix->slot);
        ix->slot = s;
        ix->cap = cap;
    }
    uint64_t h = str_hash(x->val[v].name) & (uint64_t)(ix->cap - 1);
    while (ix->slot[h] >= 0)
        h = (h + 1) & (uint64_t)(ix->cap - 1);
    ix->slot[h] = v;
    return 0;
}

/* A new value (name NULL: an anonymous one, such as a tensor attribute's contents). */
static int new_val(struct wl_onnx *x, struct ox_names *ix, const char *name, int src, struct dse_err *e)
{
    if (x->n_val >= 4 * WL_MAX_TENSORS)
        return load_fail(x->file, NULL, e, "more than %d values", 4 * WL_MAX_TENSORS), -1;
    if (x->n_val == x->cap_val) {
        int cap = x->cap_val ? 2 * x->cap_val : 1024;
        struct ox_val *v = realloc(x->val, sizeof *v * (size_t)cap);
        if (!v)
            return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory"), -1;
        x->val = v;
        x->cap_val = cap;
    }
    struct ox_val *v = &x->val[x->n_val];
    memset(v, 0, sizeof *v);
    v->src = src;
    v->producer = -1;
    v->n_c = -1;
    char anon[32];
    snprintf(anon, sizeof anon, "~const%d", x->n_val);
    if (!(v->name = ar_str(&x->arena, name ? name : anon)))
        return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory"), -1;
    x->n_val++;
    if (name && names_put(x, ix, x->n_val - 1))
        return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory"), -1;
    return x->n_val - 1;
}

static double half_to_double(uint16_t h)
{
    int ex = (h >> 10) & 31, m = h & 1023;
    double v = ex == 0 ? ldexp(m, -24) : ex == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, ex - 25);
    return h & 0x8000 ? -v : v;
}

static int elem_bytes(int t)
{
    switch (t) {
    case OXE_UINT8: case OXE_INT8: case OXE_BOOL: return 1;
    case OXE_UINT16: case OXE_INT16: case OXE_FLOAT16: case OXE_BFLOAT16: return 2;
    case OXE_FLOAT: case OXE_INT32: case OXE_UINT32: return 4;
    case OXE_INT64: case OXE_DOUBLE: case OXE_UINT64: return 8;
    default: return 0; /* strings, complex, sub-byte and 8-bit float types: never read */
    }
}

int elem_is_int(int t) { return t != OXE_FLOAT && t != OXE_FLOAT16 && t != OXE_DOUBLE && t != OXE_BFLOAT16; }

/* A TensorProto (initializer or attribute) into value v: dims, type and, when small, contents. */
static int load_tensor(struct wl_onnx *x, int v, const Onnx__TensorProto *t, const char *what, struct dse_err *e)
{
    struct ox_val *o = &x->val[v];
    char where[160];
    snprintf(where, sizeof where, "%s '%.100s'", what, o->name);
    if (t->n_dims > OX_RANK)
        return load_fail(x->file, where, e, "rank %zu exceeds %d", t->n_dims, OX_RANK);
    double elems = 1;
    o->rank = (int)t->n_dims;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0 || (double)t->dims[i] > WL_MAX_DIM)
            return load_fail(x->file, where, e, "dimension %zu is %lld (expected 0..%g)", i, (long long)t->dims[i],
                             WL_MAX_DIM);
        o->dim[i] = t->dims[i];
        elems *= (double)t->dims[i];
    }
    if (elems > OX_MAX_ELEMS)
        return load_fail(x->file, where, e, "%.4g elements: dimension overflow", elems);
    o->elem = t->data_type;
    int eb = elem_bytes(o->elem);
    if (t->has_data_location && t->data_location == 1)
        return DSE_OK; /* external data: dims are all dse needs */
    size_t n = (size_t)elems, have = t->has_raw_data ? (eb ? t->raw_data.len / (size_t)eb : 0)
                                                     : t->n_float_data + t->n_int32_data + t->n_int64_data + t->n_double_data;
    if (t->has_raw_data && eb && t->raw_data.len != n * (size_t)eb)
        return load_fail(x->file, where, e, "raw_data holds %zu bytes; %zu elements of %d bytes need %zu",
                         t->raw_data.len, n, eb, n * (size_t)eb);
    if (!t->has_raw_data && have && have != n)
        return load_fail(x->file, where, e, "holds %zu values; its dims give %zu", have, n);
    if (n > OX_FOLD_MAX || !eb || (!have && n)) /* an empty tensor's contents are known: none */
        return DSE_OK;
    if (!(o->c = ar_alloc(&x->arena, sizeof *o->c * (n ? n : 1))))
        return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory");
    const unsigned char *r = t->raw_data.data;
    for (size_t i = 0; i < n; i++) {
        double d = 0;
        if (t->has_raw_data) { /* little-endian, as the IR specifies */
            const unsigned char *p = r + i * (size_t)eb;
            uint64_t u = 0;
            for (int k = eb - 1; k >= 0; k--)
                u = u << 8 | p[k];
            switch (o->elem) {
            case OXE_FLOAT: { float f; uint32_t w = (uint32_t)u; memcpy(&f, &w, 4); d = f; break; }
            case OXE_DOUBLE: memcpy(&d, &u, 8); break;
            case OXE_FLOAT16: d = half_to_double((uint16_t)u); break;
            case OXE_BFLOAT16: { float f; uint32_t w = (uint32_t)u << 16; memcpy(&f, &w, 4); d = f; break; }
            case OXE_INT8: d = (int8_t)u; break;
            case OXE_INT16: d = (int16_t)u; break;
            case OXE_INT32: d = (int32_t)u; break;
            case OXE_INT64: d = (double)(int64_t)u; break;
            default: d = (double)u; break;
            }
        } else if (t->n_float_data) {
            d = t->float_data[i];
        } else if (t->n_int64_data) {
            d = (double)t->int64_data[i];
        } else if (t->n_double_data) {
            d = t->double_data[i];
        } else {
            d = o->elem == OXE_FLOAT16 ? half_to_double((uint16_t)t->int32_data[i]) : t->int32_data[i];
        }
        o->c[i] = d;
    }
    o->n_c = (long)n;
    return DSE_OK;
}

static const char *const batch_names[] = {"batch", "batch_size", "batchsize", "n", "b", "bs", "nbatch", NULL};
static const char *const seq_names[] = {"sequence", "sequence_length", "seq", "seq_len", "seqlen", "seq_length",
                                        "tokens", "num_tokens", "sentence_length", "input_length", NULL};

static int name_in(const char *s, const char *const *list)
{
    char low[WL_NAME_LEN];
    size_t i = 0;
    for (; s[i] && i + 1 < sizeof low; i++)
        low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
    low[i] = '\0';
    for (int k = 0; list[k]; k++)
        if (strcmp(low, list[k]) == 0)
            return 1;
    return 0;
}

/* A graph input's type and shape: fixed dims as written, dynamic ones bound (see the header). */
static int load_input(struct wl_onnx *x, int v, const Onnx__ValueInfoProto *vi, const struct wl_load_opt *opt,
                      char *used, struct dse_err *e)
{
    struct ox_val *o = &x->val[v];
    char where[160];
    snprintf(where, sizeof where, "input '%.100s'", o->name);
    const Onnx__TypeProto__Tensor *tt = vi->type ? vi->type->tensor_type : NULL;
    if (!tt)
        return load_fail(x->file, where, e, "not a tensor (sequences, maps and optionals are not modelled)");
    if (!tt->shape)
        return load_fail(x->file, where, e, "no shape (dse needs each input's rank; re-export with shapes)");
    if (tt->shape->n_dim > OX_RANK)
        return load_fail(x->file, where, e, "rank %zu exceeds %d", tt->shape->n_dim, OX_RANK);
    o->elem = tt->elem_type;
    o->rank = (int)tt->shape->n_dim;
    for (int i = 0; i < o->rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        const char *p = d->dim_param && d->dim_param[0] ? d->dim_param : NULL;
        if (d->has_dim_value && d->dim_value > 0) {
            if ((double)d->dim_value > WL_MAX_DIM)
                return load_fail(x->file, where, e, "dimension %d is %lld (expected 1..%g)", i,
                                 (long long)d->dim_value, WL_MAX_DIM);
            o->dim[i] = d->dim_value;
            continue;
        }
        if (d->has_dim_value && d->dim_value < 0)
            return load_fail(x->file, where, e, "dimension %d is %lld (expected 1..%g, or a named dynamic dimension)",
                             i, (long long)d->dim_value, WL_MAX_DIM);
        if (d->has_dim_value && !p) /* a literal 0: an empty tensor, not a dynamic (batch) dimension */
            return load_fail(x->file, where, e, "dimension %d is 0: an empty input (expected 1..%g, or a named "
                             "dynamic dimension)", i, WL_MAX_DIM);
        int bound = 0;
        for (int k = 0; p && opt && k < opt->n_dims; k++)
            if (strcmp(opt->dims[k].name, p) == 0) {
                o->dim[i] = opt->dims[k].value;
                used[k] = 1;
                bound = 1;
            }
        if (bound)
            continue;
        if (p ? name_in(p, batch_names) : i == 0)
            o->dim[i] = OXD_BATCH;
        else if (p ? name_in(p, seq_names) : i == 1 && elem_is_int(o->elem))
            o->dim[i] = OXD_TOKENS;
        else if (p)
            return load_fail(x->file, where, e, "dimension %d ('%s') is dynamic: bind it with --dim %s=N", i, p, p);
        else
            return load_fail(x->file, where, e, "dimension %d is dynamic and unnamed: give the model a fixed size "
                             "there", i);
    }
    return DSE_OK;
}

static int load_attr(struct wl_onnx *x, struct ox_names *ix, struct ox_attr *a, const Onnx__AttributeProto *p,
                     struct dse_err *e)
{
    a->name = ar_str(&x->arena, p->name);
    a->type = p->type;
    a->i = p->i;
    a->f = p->f;
    a->t = -1;
    a->n_ints = (int)p->n_ints;
    a->n_floats = (int)p->n_floats;
    if (p->n_ints > 1u << 20 || p->n_floats > 1u << 20)
        return load_fail(x->file, a->name, e, "attribute too long");
    a->s = p->has_s ? NULL : "";
    if (p->has_s) {
        char *s = ar_alloc(&x->arena, p->s.len + 1);
        if (!s)
            return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory");
        if (p->s.len)
            memcpy(s, p->s.data, p->s.len);
        a->s = s;
    }
    if (a->n_ints && !(a->ints = ar_alloc(&x->arena, sizeof *a->ints * (size_t)a->n_ints)))
        return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory");
    for (int i = 0; i < a->n_ints; i++)
        a->ints[i] = p->ints[i];
    if (a->n_floats && !(a->floats = ar_alloc(&x->arena, sizeof *a->floats * (size_t)a->n_floats)))
        return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory");
    for (int i = 0; i < a->n_floats; i++)
        a->floats[i] = p->floats[i];
    if (!a->name)
        return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory");
    if (p->t) {
        int v = new_val(x, ix, NULL, OXV_INIT, e);
        if (v < 0 || load_tensor(x, v, p->t, "attribute", e))
            return e->code ? e->code : DSE_EINPUT;
        a->t = v;
    }
    return DSE_OK;
}

/* Kahn's algorithm over the nodes' value dependencies: x->node in an order where every input is
 * produced before it is read. */
static int sort_nodes(struct wl_onnx *x, struct dse_err *e)
{
    int n = x->n_node, rc = DSE_OK;
    int *deg = calloc((size_t)n + 1, sizeof *deg), *head = malloc(sizeof *head * (size_t)x->n_val);
    int *next = NULL, *edge = NULL, *queue = malloc(sizeof *queue * ((size_t)n + 1));
    size_t n_edge = 0;
    for (int i = 0; i < n; i++)
        n_edge += (size_t)x->node[i].n_in;
    next = malloc(sizeof *next * (n_edge + 1));
    edge = malloc(sizeof *edge * (n_edge + 1));
    struct ox_node *sorted = malloc(sizeof *sorted * ((size_t)n + 1));
    if (!deg || !head || !next || !edge || !queue || !sorted) {
        rc = dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory");
        goto out;
    }
    for (int v = 0; v < x->n_val; v++)
        head[v] = -1;
    size_t k = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < x->node[i].n_in; j++) {
            int v = x->node[i].in[j];
            if (v < 0 || x->val[v].src != OXV_NODE)
                continue;
            deg[i]++;
            edge[k] = i; /* value v's reader i */
            next[k] = head[v];
            head[v] = (int)k++;
        }
    int qh = 0, qt = 0, done = 0;
    for (int i = 0; i < n; i++)
        if (!deg[i])
            queue[qt++] = i;
    while (qh < qt) {
        int i = queue[qh++];
        sorted[done++] = x->node[i];
        for (int j = 0; j < x->node[i].n_out; j++) {
            int v = x->node[i].out[j];
            for (int q = v >= 0 ? head[v] : -1; q >= 0; q = next[q])
                if (--deg[edge[q]] == 0)
                    queue[qt++] = edge[q];
        }
    }
    if (done < n) {
        int i = 0;
        while (deg[i] == 0)
            i++;
        char where[160];
        snprintf(where, sizeof where, "node '%.80s' (%.40s)", x->node[i].name, x->node[i].op);
        rc = load_fail(x->file, where, e, "is on a cycle: the graph is not acyclic (%d of %d nodes can run)", done, n);
        goto out;
    }
    for (int i = 0; i < n; i++) {
        x->node[i] = sorted[i];
        for (int j = 0; j < x->node[i].n_out; j++)
            if (x->node[i].out[j] >= 0)
                x->val[x->node[i].out[j]].producer = i;
    }
    for (int i = 0; i < n; i++) /* readers, for the attention pattern (wl_onnx_ops.c) */
        for (int j = 0; j < x->node[i].n_in; j++)
            if (x->node[i].in[j] >= 0) {
                x->val[x->node[i].in[j]].uses++;
                x->val[x->node[i].in[j]].user = i;
            }
out:
    free(deg);
    free(head);
    free(next);
    free(edge);
    free(queue);
    free(sorted);
    return rc;
}

/* a set of node names: 1 when s is new (and now in it), 0 when already there or out of memory */
struct ox_seen {
    const char **slot;
    size_t cap, n;
};

static int seen_name(struct ox_seen *st, const char *s, struct ox_chunk **a)
{
    if (2 * (st->n + 1) > st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 1024;
        const char **sl = calloc(cap, sizeof *sl);
        if (!sl)
            return 0;
        for (size_t i = 0; i < st->cap; i++)
            if (st->slot[i]) {
                size_t h = str_hash(st->slot[i]) & (cap - 1);
                while (sl[h])
                    h = (h + 1) & (cap - 1);
                sl[h] = st->slot[i];
            }
        free(st->slot);
        st->slot = sl;
        st->cap = cap;
    }
    size_t h = str_hash(s) & (st->cap - 1);
    for (; st->slot[h]; h = (h + 1) & (st->cap - 1))
        if (!strcmp(st->slot[h], s))
            return 0;
    if (!(st->slot[h] = ar_str(a, s)))
        return 0;
    st->n++;
    return 1;
}

static int load_nodes_seen(struct wl_onnx *x, struct ox_names *ix, const Onnx__GraphProto *g, struct ox_seen *seen,
                           struct dse_err *e)
{
    if (g->n_node > OX_MAX_NODES)
        return load_fail(x->file, NULL, e, "%zu nodes (at most %d)", g->n_node, OX_MAX_NODES);
    if (!(x->node = ar_alloc(&x->arena, sizeof *x->node * (g->n_node + 1))))
        return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory");
    x->n_node = (int)g->n_node;
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *p = g->node[i];
        struct ox_node *n = &x->node[i];
        char nm[WL_NAME_LEN + 32], where[160];
        const char *op = p->op_type ? p->op_type : "";
        if (p->name && p->name[0] && strlen(p->name) < WL_NAME_LEN - 8)
            dse_strlcpy(nm, p->name, sizeof nm);
        else if (p->name && p->name[0]) /* shortened: the index keeps it unique */
            snprintf(nm, sizeof nm, "%.40s~n%zu", p->name, i);
        else
            snprintf(nm, sizeof nm, "%.40s_%zu", op, i);
        if (!seen_name(seen, nm, &x->arena)) { /* a name given twice (ONNX does not forbid it) */
            char again[WL_NAME_LEN + 32];
            snprintf(again, sizeof again, "%.40s~n%zu", nm, i);
            memcpy(nm, again, sizeof nm);
        }
        nm[WL_NAME_LEN - 8] = '\0';
        n->name = ar_str(&x->arena, nm);
        n->op = ar_str(&x->arena, op);
        n->in = ar_alloc(&x->arena, sizeof *n->in * (p->n_input + 1));
        n->out = ar_alloc(&x->arena, sizeof *n->out * (p->n_output + 1));
        n->attr = ar_alloc(&x->arena, sizeof *n->attr * (p->n_attribute + 1));
        if (!n->name || !n->op || !n->in || !n->out || !n->attr)
            return dse_err_set(e, DSE_ERUNTIME, x->file, NULL, "out of memory");
        snprintf(where, sizeof where, "node '%.80s' (%.40s)", n->name, n->op);
        const char *dom = p->domain ? p->domain : "";
        int ms = strcmp(dom, "com.microsoft") == 0;
        if (!ms && dom[0] && strcmp(dom, "ai.onnx"))
            return load_fail(x->file, where, e, "domain '%.60s' is not read (dse reads ai.onnx and com.microsoft)", dom);
        n->h = ox_find_op(op, ms, &n->arg);
        if (p->n_input > 64 || p->n_output > 16)
            return load_fail(x->file, where, e, "%zu inputs and %zu outputs: too many", p->n_input, p->n_output);
        n->n_in = (int)p->n_input;
        n->n_out = (int)p->n_output;
        for (int k = 0; k < n->n_in; k++) {
            const char *s = p->input[k];
            if (!s || !s[0]) {
                n->in[k] = -1;
                continue;
            }
            int v = names_find(x, ix, s);
            if (v < 0 && (v = new_val(x, ix, s, OXV_NONE, e)) < 0)
                return e->code;
            n->in[k] = v;
        }
        n->n_attr = (int)p->n_attribute;
        for (int k = 0; k < n->n_attr; k++)
            if (load_attr(x, ix, &n->attr[k], p->attribute[k], e))
                return e->code;
    }
    /* outputs after every input is named: a value read before (in file order) its producer is fine */
    for (int i = 0; i < x->n_node; i++) {
        const Onnx__NodeProto *p = g->node[i];
        struct ox_node *n = &x->node[i];
        for (int k = 0; k < n->n_out; k++) {
            const char *s = p->output[k];
            if (!s || !s[0]) {
                n->out[k] = -1;
                continue;
            }
            int v = names_find(x, ix, s);
            if (v >= 0 && x->val[v].src != OXV_NONE) {
                char where[160];
                snprintf(where, sizeof where, "node '%.80s' (%.40s)", n->name, n->op);
                return load_fail(x->file, where, e, "output '%.80s' is already %s", s,
                                 x->val[v].src == OXV_NODE ? "another node's output" : "an initializer or graph input");
            }
            if (v < 0 && (v = new_val(x, ix, s, OXV_NODE, e)) < 0)
                return e->code;
            x->val[v].src = OXV_NODE;
            x->val[v].producer = i;
            n->out[k] = v;
        }
    }
    for (int i = 0; i < x->n_node; i++)
        if (x->node[i].n_out < 1 || x->node[i].out[0] < 0) { /* optional outputs are trailing ones */
            char where[160];
            snprintf(where, sizeof where, "node '%.80s' (%.40s)", x->node[i].name, x->node[i].op);
            return load_fail(x->file, where, e, "has no first output");
        }
    for (int i = 0; i < x->n_node; i++)
        for (int k = 0; k < x->node[i].n_in; k++) {
            int v = x->node[i].in[k];
            if (v >= 0 && x->val[v].src == OXV_NONE) {
                char where[160];
                snprintf(where, sizeof where, "node '%.80s' (%.40s)", x->node[i].name, x->node[i].op);
                return load_fail(x->file, where, e, "input '%.80s' is no initializer, graph input or node output "
                                 "(a missing initializer?)", x->val[v].name);
            }
        }
    return DSE_OK;
}

static int load_nodes(struct wl_onnx *x, struct ox_names *ix, const Onnx__GraphProto *g, struct dse_err *e)
{
    struct ox_seen seen = {NULL, 0, 0};
    int rc = load_nodes_seen(x, ix, g, &seen, e);
    free(seen.slot);
    return rc;
}

int wl_onnx_load(const void *buf, unsigned long len, const char *fname, const struct wl_load_opt *opt,
                 struct wl_onnx **out, struct dse_err *e)
{
    *out = NULL;
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    if (!mp)
        return load_fail(fname, NULL, e, "not a valid ONNX model (truncated, or not an ONNX protobuf ModelProto)");
    struct wl_onnx *x = calloc(1, sizeof *x);
    struct ox_names ix = {NULL, 0};
    char used[WL_MAX_BIND] = {0};
    int rc = DSE_OK;
    if (!x) {
        rc = dse_err_set(e, DSE_ERUNTIME, fname, NULL, "out of memory");
        goto out;
    }
    dse_strlcpy(x->file, fname, sizeof x->file);
    x->unknown_memory = opt && opt->unknown_memory;
    const Onnx__GraphProto *g = mp->graph;
    if (!g || (!g->n_node && !g->n_input)) {
        rc = load_fail(fname, NULL, e, "no graph (not an ONNX model, or an empty one)");
        goto out;
    }
    if (mp->ir_version < 3) {
        rc = load_fail(fname, "ir_version", e, "%lld: dse reads ONNX IR version 3 and later", (long long)mp->ir_version);
        goto out;
    }
    /* the version is 64-bit in the protobuf: compared whole, never narrowed before it is in range */
    int64_t opset = 0;
    int n_ai = 0;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const char *d = mp->opset_import[i]->domain ? mp->opset_import[i]->domain : "";
        if (!d[0] || !strcmp(d, "ai.onnx")) {
            if (n_ai++ && mp->opset_import[i]->version != opset) {
                char where[48];
                snprintf(where, sizeof where, "opset_import[%zu]", i);
                rc = load_fail(fname, where, e, "ai.onnx imported twice, as opsets %lld and %lld", (long long)opset,
                               (long long)mp->opset_import[i]->version);
                goto out;
            }
            opset = mp->opset_import[i]->version;
        }
    }
    if (!n_ai || opset < OX_OPSET_MIN || opset > OX_OPSET_MAX) {
        rc = !n_ai ? load_fail(fname, "opset_import", e, "no ai.onnx opset imported (dse reads opsets %d to %d)",
                               OX_OPSET_MIN, OX_OPSET_MAX)
                   : load_fail(fname, "opset_import", e, "ai.onnx opset %lld: dse reads opsets %d to %d",
                               (long long)opset, OX_OPSET_MIN, OX_OPSET_MAX);
        goto out;
    }
    x->opset = (int)opset;
    for (size_t i = 0; i < g->n_initializer; i++) {
        const char *nm = g->initializer[i]->name ? g->initializer[i]->name : "";
        if (!nm[0] || names_find(x, &ix, nm) >= 0) {
            char where[160];
            snprintf(where, sizeof where, "initializer %zu", i);
            rc = load_fail(fname, where, e, nm[0] ? "name '%.80s' given twice" : "no name%.0s", nm);
            goto out;
        }
        int v;
        if ((v = new_val(x, &ix, nm, OXV_INIT, e)) < 0 || (rc = load_tensor(x, v, g->initializer[i], "initializer", e))) {
            rc = e->code ? e->code : DSE_EINPUT;
            goto out;
        }
    }
    for (size_t i = 0; i < g->n_input; i++) {
        const char *nm = g->input[i]->name ? g->input[i]->name : "";
        int was = names_find(x, &ix, nm);
        if (was >= 0 && x->val[was].src == OXV_INPUT) {
            char where[160];
            snprintf(where, sizeof where, "input %zu", i);
            rc = load_fail(fname, where, e, "graph input '%.80s' listed twice (each input is listed once)", nm);
            goto out;
        }
        if (was >= 0)
            continue; /* an initializer also listed as an input (IR 3): a weight */
        int v = new_val(x, &ix, nm, OXV_INPUT, e);
        if (v < 0 || (rc = load_input(x, v, g->input[i], opt, used, e))) {
            rc = e->code ? e->code : DSE_EINPUT;
            goto out;
        }
    }
    for (int k = 0; opt && k < opt->n_dims; k++)
        if (!used[k]) {
            rc = load_fail(fname, NULL, e, "--dim %s: no dynamic input dimension of the model is named '%s'",
                           opt->dims[k].name, opt->dims[k].name);
            goto out;
        }
    if ((rc = load_nodes(x, &ix, g, e)) || (rc = sort_nodes(x, e)))
        goto out;
    for (size_t i = 0; i < g->n_output; i++) { /* a graph output is read outside: never fused away */
        int v = g->output[i]->name ? names_find(x, &ix, g->output[i]->name) : -1;
        if (v >= 0)
            x->val[v].uses += 2;
    }
    for (int i = 0; i < x->n_node; i++) {
        const struct ox_node *n = &x->node[i];
        if (!n->h && !x->unknown_memory) {
            char where[160];
            snprintf(where, sizeof where, "node '%.80s' (%.40s)", n->name, n->op);
            rc = load_fail(fname, where, e, "operator %s is not modelled (see docs/onnx.md; --unknown-ops=memory "
                           "costs it as memory-bound)", n->op);
            goto out;
        }
        if (!n->h) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = !x->node[j].h && !strcmp(x->node[j].op, n->op);
            if (!seen)
                fprintf(stderr, "dse: %s: node '%s' (%s): operator not modelled; costed as memory-bound "
                        "(--unknown-ops=memory)\n", fname, n->name, n->op);
        } else if ((n->h->flags & OXF_QUANT) && !x->quant) {
            x->quant = n->h->name;
        }
    }
out:
    free(ix.slot);
    onnx__model_proto__free_unpacked(mp, NULL);
    if (rc) {
        wl_onnx_free(x);
        return rc;
    }
    *out = x;
    return DSE_OK;
}

void wl_onnx_free(struct wl_onnx *x)
{
    if (!x)
        return;
    ar_free(x->arena);
    free(x->val);
    free(x);
}

const char *wl_onnx_quantized(const struct wl_onnx *x) { return x ? x->quant : NULL; }



