/* pareto.h -- Pareto tools over minimized objectives: non-domination ranks, crowding distance, exact
 * hypervolume and the reference point the sweep measures it from.
 *
 * A point set is a row-major array obj of n rows x m columns (1 <= m <= PARETO_MAX_OBJ). Every
 * objective is minimized: callers negate maximized metrics. a dominates b iff a <= b in every
 * objective and a < b in at least one. Nothing here keeps state between calls: every function may be
 * called from many threads at once. Memory is the caller's except for scratch freed before return. */
#ifndef DSE_PARETO_H
#define DSE_PARETO_H

#include "err.h"

#define PARETO_MAX_OBJ 16

/* 1 when a dominates b (m objectives), else 0; identical vectors do not dominate each other. */
int pareto_dominates(const double *a, const double *b, int m);

/* Non-domination rank of every point into rank[0..n): 0 for the points nothing dominates (the first
 * front), 1 for the points only rank-0 points dominate, and so on. Identical vectors share a rank.
 * All use a lexicographic presort and a binary search over the fronts for the first one that admits
 * each point (ENS-BS, Zhang et al. 2015); the test "does front F dominate p" is: m <= 2, one compare
 * with F's last member, O(n log n) in all; m = 3, a query on F's 2-D staircase, O(n log^2 n); m >= 4,
 * a scan of F, O(m n^2) at worst. n may be 0. Returns DSE_OK; DSE_EINPUT for n < 0,
 * m outside 1..PARETO_MAX_OBJ or a NaN objective; DSE_ERUNTIME when out of memory. */
int pareto_rank(const double *obj, int n, int m, int *rank, struct dse_err *e);

/* The first front alone: in[i] = 1 when nothing dominates point i (pareto_rank's rank 0), else 0.
 * O(n log n) for m <= 3, where full ranking of 3 objectives is O(n log^2 n) over all fronts. The same
 * errors as pareto_rank. */
int pareto_front(const double *obj, int n, int m, unsigned char *in, struct dse_err *e);

/* Crowding distance (Deb et al. 2002) of the k points idx[0..k) (rows of obj) of one front, into
 * dist[0..k): the sum over objectives of the gap between each point's two neighbours along that
 * objective, divided by the objective's range over the front. The two boundary points of each
 * objective get INFINITY. An objective whose range over the front is 0 (or not finite) contributes
 * nothing, to boundary points as well; so a lone point, or a front of identical points, gets 0.
 * Ties are ordered by position in idx, so the result is deterministic. Never fails: when scratch
 * memory is short it falls back to an O(m k^2) scan that needs none. */
void pareto_crowding(const double *obj, int m, const int *idx, int k, double *dist);

/* The reference point of the sweep, into ref[0..m): for each objective, the worst (largest) value over
 * the n points (pass the feasible points) plus 10 % of its range over them, so that the boundary
 * points of the front contribute to the hypervolume. A zero range adds 10 % of |worst|, or 1 when the
 * worst is 0. n = 0 gives 0 everywhere. */
void pareto_reference(const double *obj, int n, int m, double *ref);

/* Exact hypervolume of the region dominated by the points and bounded by ref (minimization: the union
 * of the boxes [p, ref)). Points not strictly better than ref in every objective contribute nothing;
 * dominated and duplicate points are harmless. m = 1; m = 2: sort and sweep, O(n log n); m = 3:
 * sweep over the third objective keeping the 2-D front of the points seen so far and its area
 * incrementally (the dimension-sweep of Fonseca, Paquete and Lopez-Ibanez, CEC 2006),
 * O(n log n + n s) for a 2-D front of at most s points. Returns -1 with an error for m > 3 (exact only
 * for 2 and 3 objectives), m < 1, n < 0, or when out of memory. */
double pareto_hypervolume(const double *obj, int n, int m, const double *ref, struct dse_err *e);

/* Sorts idx[0..n) (rows of obj, m minimized objectives, and of point) by the objectives in order, then
 * by point: the order dse sweep lists a front in, which dse report's breakdowns follow too. Returns 0,
 * or -1 when out of memory (idx then unchanged). */
int pareto_sort(const double *obj, int m, const long long *point, long long *idx, long long n);

#endif
