/* wl_onnx.h -- inside the ONNX importer: the compact copy of an ONNX graph that wl_onnx.c reads from
 * the protobuf (values, nodes, attributes) and wl_onnx_ops.c turns into dse operators for each build
 * (shape inference, constant folding, the operator table). */
#ifndef DSE_WL_ONNX_H
#define DSE_WL_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "wl.h"

#define OX_OPSET_MIN 7
#define OX_OPSET_MAX 21
#define OX_RANK 8           /* ONNX value ranks handled; dse tensors take WL_MAX_RANK */
#define OX_FOLD_MAX 65536   /* elements of a static value whose contents are computed */
#define OX_MAX_NODES WL_MAX_OPS
#define OX_MAX_ELEMS 9007199254740992.0 /* 2^53: element counts stay exact doubles */

enum ox_src { OXV_NONE, OXV_INPUT, OXV_INIT, OXV_NODE };
enum { OXD_BATCH = -1, OXD_TOKENS = -2 }; /* symbolic graph-input dimensions */
enum ox_elem { OXE_FLOAT = 1, OXE_UINT8, OXE_INT8, OXE_UINT16, OXE_INT16, OXE_INT32, OXE_INT64, OXE_STRING,
               OXE_BOOL, OXE_FLOAT16, OXE_DOUBLE, OXE_UINT32, OXE_UINT64, OXE_BFLOAT16 = 16 };

struct ox_attr {
    const char *name;
    int type;          /* AttributeProto.AttributeType */
    int64_t i;
    double f;
    const char *s;
    int n_ints, n_floats;
    int64_t *ints;
    double *floats;
    int t;             /* value holding a tensor attribute's contents, -1 */
};

struct ox_op;
struct ox_node {
    const char *name, *op;
    int n_in, n_out, n_attr;
    int *in, *out;     /* value indices; -1: an omitted optional input or output */
    struct ox_attr *attr;
    const struct ox_op *h; /* NULL: not modelled (--unknown-ops=memory) */
    int arg;               /* the handler's parameter */
};

struct ox_val {
    const char *name;
    int src, elem, rank, producer;
    int64_t dim[OX_RANK]; /* graph inputs may hold OXD_* */
    long n_c;             /* contents known (initializers, constants): n_c elements in c; -1 unknown */
    double *c;
    int uses, user;       /* readers (node inputs, graph outputs); the reading node when there is one */
};

struct ox_chunk {
    struct ox_chunk *next;
    size_t used, cap;
    max_align_t data[];
};

struct wl_onnx {
    struct ox_chunk *arena;
    struct ox_val *val;
    int n_val, cap_val;
    struct ox_node *node; /* topologically sorted */
    int n_node;
    int opset, unknown_memory;
    const char *quant;    /* first quantized operator type, or NULL */
    char file[512];
};

/* Everything of an import (or of one build's computed contents) lives in an arena, freed at once. */
void *ar_alloc(struct ox_chunk **a, size_t n); /* zeroed; NULL when out of memory */
void ar_free(struct ox_chunk *a);
char *ar_str(struct ox_chunk **a, const char *s);
int elem_is_int(int t); /* an ONNX element type other than the floating-point ones */

/* The operator table (wl_onnx_ops.c): a handler per ONNX operator type. */

struct ox_b;
typedef int (*ox_fn)(struct ox_b *b, const struct ox_node *n, int arg);
#define OXF_SHAPE 1u /* static whatever its input (Shape, Size) */
#define OXF_MS 2u    /* com.microsoft domain */
#define OXF_QUANT 4u /* a quantized operator */
struct ox_op {
    const char *name;
    ox_fn fn;
    unsigned flags;
    int arg;            /* handler parameter (an enum wl_fn, a pooling kind, ...) */
    int min_in, max_in; /* inputs a node may list (the ONNX or contrib spec; -1: any number), checked before
                         * the handler runs, so a handler never reads an input past the node's list */
};
const struct ox_op *ox_find_op(const char *name, int ms, int *arg);

#endif
