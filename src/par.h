/* par.h -- parallel layouts over a topology (hw.h: struct hw_topology) and the cost of the
 * collectives they imply, by an alpha-beta model per topology level.
 *
 * A layout splits a system's N identical devices as tp x cp x dp x pp = N. Ranks vary fastest in tp,
 * then cp, dp and pp (Megatron-LM's order), so a tp group is tp consecutive ranks (inside a node when
 * tp divides it) and a pp stage boundary crosses the slowest level. Sizes in bytes, times in seconds,
 * energy in joules. Everything here is pure arithmetic on read-only data: no allocation, no state. */
#ifndef DSE_PAR_H
#define DSE_PAR_H

#include "hw.h"

/* The dimensions of a layout, fastest-varying rank first. */
/* Values as wl.h's enum wl_group. Ranks vary fastest in tp, then cp, dp and pp (par_group). */
enum par_dim { PAR_TP, PAR_DP, PAR_PP, PAR_CP, PAR_DIM_COUNT, PAR_EP = PAR_DIM_COUNT /* not a factor of N: a part of dp */ };
extern const char *const par_dim_names[PAR_DIM_COUNT + 1]; /* "tp", "dp", "pp", "cp" */

struct par_layout {
    int n[PAR_DIM_COUNT]; /* devices along each dimension; 0 in a request: fill (dp takes what is left) */
    int microbatches;     /* pp: micro-batches a batch is cut into (0: 1) */
    int ep;               /* expert parallelism: a MoE layer's experts spread over ep consecutive dp
                             replicas (Megatron-LM's and DeepSpeed-MoE's rule: ep divides dp; 0: 1) */
    double moe_imbalance; /* with ep: the busiest device's routed rows over the mean (0: 1) */
};

/* Completes and checks a layout for a system: unset (0) tp and pp become 1, an unset dp takes the
 * devices left (N / (tp pp)); every dimension must be >= 1 and their product N (the topology's devices,
 * 1 without one). Errors name the numbers: "tp 3 x dp 1 x pp 1 = 3 devices, but 'x' has 8". */
int par_layout_complete(const struct hw_system *sys, struct par_layout *l, struct dse_err *e);
/* The group of dimension d (or PAR_EP: ep consecutive dp replicas): its size and the rank distance
 * between consecutive members. */
void par_group(const struct par_layout *l, enum par_dim d, int *size, int *stride);
/* Members of a group (size, stride) per topology level: p[l] of them differ at level l (1: none), with
 * p[0] x p[1] x ... = size. Returns DSE_OK, or DSE_EINPUT when the group straddles a level (some of its
 * members share a unit of that level and some do not, e.g. a group of 3 in nodes of 8), naming it. */
int par_group_levels(const struct hw_topology *t, int size, int stride, int p[HW_MAX_TOPO_LEVELS],
                     struct dse_err *e);

/* Collectives: one row each in coll_names, the bytes argument of par_coll_cost being
 *   allreduce      the buffer every member holds and ends with, reduced (n)
 *   allgather      the gathered result (n; each member contributes n / p)
 *   reducescatter  the buffer every member starts with (n; each ends with its n / p, reduced)
 *   alltoall       what each member holds (n; it sends n / p to each other member)
 *   sendrecv       what one member sends to the next (n) */
enum coll_kind { COLL_ALLREDUCE, COLL_ALLGATHER, COLL_REDUCESCATTER, COLL_ALLTOALL, COLL_SENDRECV, COLL_COUNT };
extern const char *const coll_names[COLL_COUNT + 1];

struct coll_cost {
    double time_s;       /* the collective's duration (every member finishes together) */
    double energy_J;     /* link energy of one member's sends */
};

/* Cost of collective k over a group (size, stride) of topology t on `bytes`; a group of one costs
 * nothing. The algorithm per level follows its kind (docs/models.md, "Collectives"):
 *   switch, fat_tree  ring:  reduce-scatter / all-gather (p-1) a + (p-1)/p n / B; all-reduce the
 *                     faster of the ring (2x that) and a tree (2 ceil(log2 p) a + 2 n / B)
 *   ring              the same ring, run both ways round when the group closes the ring (2B), over
 *                     every s-th member sharing links with s-1 other groups (B / s, a s)
 *   torus             dimension by dimension, each dimension a ring as above
 * and across levels hierarchically: reduce-scatter inner to outer (n, n/p0, n/(p0 p1) ...), the
 * outermost level's all-reduce on what is left, all-gather back. All-to-all sends each level the
 * bytes whose destination differs first there; send/recv crosses the outermost level the pair spans.
 * Returns par_group_levels's error for a group that straddles a level. */
int par_coll_cost(const struct hw_topology *t, enum coll_kind k, int size, int stride, double bytes,
                  struct coll_cost *c, struct dse_err *e);

#endif
