/* wl_op.h -- inside the workload layer: the cursor an operator's shape check works on, shared by
 * the graph code (wl_graph.c: ordering, lifetimes) and the operator table (wl_op.c: one check per
 * operator type). Errors name the file, the op's index and its name. */
#ifndef DSE_WL_OP_H
#define DSE_WL_OP_H

#include "wl.h"

struct wl_opcheck {
    struct wl_graph *g;
    const char *file;
    struct dse_err *e;
    int opi;
};

/* Reports an input error at "ops[i] (name)" of c's file; returns DSE_EINPUT. */
int wl_op_fail(struct wl_opcheck *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Checks op c->opi: its input and output counts against the table, then its row's check. */
int wl_op_check(struct wl_opcheck *c);

#endif
