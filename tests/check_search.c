/* check_search.c -- Pareto ranks, crowding, hypervolume and NSGA-II, worked by hand or against brute
 * force. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "check_suites.h"
#include "nsga2.h"
#include "pareto.h"

/* ---- brute-force references ---- */

/* Deb's O(m n^2) fast non-dominated sort (Deb et al. 2002, sec. III-A), kept deliberately plain. */
static void brute_rank(const double *obj, int n, int m, int *rank)
{
    char *dom = calloc((size_t)n * (size_t)n, 1); /* dom[p * n + q]: p dominates q */
    int *cnt = calloc((size_t)n, sizeof *cnt), *cur = malloc((size_t)n * sizeof *cur),
        *next = malloc((size_t)n * sizeof *next);
    ck_assert(dom && cnt && cur && next);
    for (int p = 0; p < n; p++)
        for (int q = 0; q < n; q++)
            if (pareto_dominates(obj + (size_t)p * m, obj + (size_t)q * m, m)) {
                dom[(size_t)p * n + q] = 1;
                cnt[q]++;
            }
    int nc = 0;
    for (int p = 0; p < n; p++)
        if (cnt[p] == 0)
            cur[nc++] = p;
    for (int r = 0; nc > 0; r++) {
        int nn = 0;
        for (int t = 0; t < nc; t++) {
            rank[cur[t]] = r;
            for (int q = 0; q < n; q++)
                if (dom[(size_t)cur[t] * n + q] && --cnt[q] == 0)
                    next[nn++] = q;
        }
        memcpy(cur, next, (size_t)nn * sizeof *cur);
        nc = nn;
    }
    free(dom);
    free(cnt);
    free(cur);
    free(next);
}

/* Inclusion-exclusion over all subsets: |U B_i| = sum over S of (-1)^(|S|+1) |intersection of B_i, i in S|,
 * and the boxes [p_i, ref) intersect in [max_i p_i, ref). */
static double brute_hv(const double *obj, int n, int m, const double *ref)
{
    double hv = 0;
    for (unsigned s = 1; s < 1u << n; s++) {
        double v = 1;
        for (int j = 0; j < m; j++) {
            double lo = -INFINITY;
            for (int i = 0; i < n; i++)
                if (s >> i & 1)
                    lo = obj[i * m + j] > lo ? obj[i * m + j] : lo;
            v *= ref[j] > lo ? ref[j] - lo : 0;
        }
        hv += __builtin_popcount(s) % 2 ? v : -v;
    }
    return hv;
}

/* ---- ranks ---- */

START_TEST(rank_2d_by_hand)
{
    /* Front 0: (0,9) (1,5) (2,3) (2,3) (4,1) -- nothing is <= them in both objectives.
     * Front 1: (3,4) only behind (2,3); (4,2) only behind (4,1); (1,6) only behind (1,5).
     * Front 2: (5,5) is behind (1,5), (2,3), (4,1) (rank 0) and (3,4), (4,2) (rank 1).
     * Front 3: the duplicate pair (6,6), behind (5,5). Duplicates share a rank. */
    static const double p[][2] = {{1, 5}, {2, 3}, {4, 1}, {2, 3}, {3, 4}, {5, 5},
                                  {4, 2}, {1, 6}, {6, 6}, {0, 9}, {6, 6}};
    static const int want[] = {0, 0, 0, 0, 1, 2, 1, 1, 3, 0, 3};
    int n = (int)(sizeof p / sizeof p[0]), rank[11];
    struct dse_err e;
    ck_assert_int_eq(pareto_rank(&p[0][0], n, 2, rank, &e), DSE_OK);
    for (int i = 0; i < n; i++)
        ck_assert_msg(rank[i] == want[i], "point %d: rank %d, expected %d", i, rank[i], want[i]);

    /* One objective: dense ranks of the distinct values 1 < 2 < 3. */
    static const double q[] = {3, 1, 2, 1, 3};
    ck_assert_int_eq(pareto_rank(q, 5, 1, rank, &e), DSE_OK);
    ck_assert(rank[0] == 2 && rank[1] == 0 && rank[2] == 1 && rank[3] == 0 && rank[4] == 2);
}
END_TEST

START_TEST(rank_3d_by_hand)
{
    /* Front 0: (1,2,3) twice, (3,2,1), (2,2,2), (0,5,5) (least f0), (5,1,6) (least f1): none is
     * behind another, e.g. (2,2,2) vs (1,2,3): 2 > 1; vs (3,2,1): 2 > 1 in f2.
     * Front 1: (2,3,4) behind (1,2,3) and (2,2,2); (3,3,3) behind (2,2,2), (1,2,3), (3,2,1);
     * (1,5,5) behind (0,5,5) and (1,2,3).
     * Front 2: (4,4,4) behind (3,3,3) and (2,3,4) of front 1. */
    static const double p[][3] = {{1, 2, 3}, {3, 2, 1}, {2, 2, 2}, {2, 3, 4}, {3, 3, 3},
                                  {4, 4, 4}, {1, 2, 3}, {0, 5, 5}, {1, 5, 5}, {5, 1, 6}};
    static const int want[] = {0, 0, 0, 1, 1, 2, 0, 0, 1, 0};
    int n = 10, rank[10];
    struct dse_err e;
    ck_assert_int_eq(pareto_rank(&p[0][0], n, 3, rank, &e), DSE_OK);
    for (int i = 0; i < n; i++)
        ck_assert_msg(rank[i] == want[i], "point %d: rank %d, expected %d", i, rank[i], want[i]);

    /* The same points with a constant fourth objective go through ENS-BS's scan (m >= 4) instead of
     * the 3-D staircases; a constant column changes no domination. */
    double p4[10][4];
    for (int i = 0; i < n; i++) {
        memcpy(p4[i], p[i], sizeof p[i]);
        p4[i][3] = 7;
    }
    ck_assert_int_eq(pareto_rank(&p4[0][0], n, 4, rank, &e), DSE_OK);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(rank[i], want[i]);
}
END_TEST

START_TEST(rank_edge_cases)
{
    struct dse_err e;
    int rank[2] = {-1, -1};
    double p[4] = {1, 2, NAN, 0};
    ck_assert_int_eq(pareto_rank(p, 0, 2, rank, &e), DSE_OK); /* no points: nothing written */
    ck_assert_int_eq(rank[0], -1);
    ck_assert_int_eq(pareto_rank(p, 1, 0, rank, &e), DSE_EINPUT);
    ck_assert_int_eq(pareto_rank(p, 1, PARETO_MAX_OBJ + 1, rank, &e), DSE_EINPUT);
    ck_assert_int_eq(pareto_rank(p, -1, 2, rank, &e), DSE_EINPUT);
    ck_assert_int_eq(pareto_rank(p, 2, 2, rank, &e), DSE_EINPUT);
    ck_assert_ptr_nonnull(strstr(e.msg, "objective 0 of point 1 is NaN"));
    /* Infinities are ordinary values: (-inf, 0) is smaller than (1, 2) in both, so dominates it. */
    double q[4] = {1, 2, -INFINITY, 0};
    ck_assert_int_eq(pareto_rank(q, 2, 2, rank, &e), DSE_OK);
    ck_assert(rank[0] == 1 && rank[1] == 0);
    ck_assert(pareto_dominates(&q[2], &q[0], 2) && !pareto_dominates(&q[0], &q[0], 2));
    /* A 16-objective pair: equal but for the last objective. */
    double r[32];
    for (int j = 0; j < 16; j++)
        r[j] = r[16 + j] = j;
    r[31] = 100;
    ck_assert_int_eq(pareto_rank(r, 2, 16, rank, &e), DSE_OK);
    ck_assert(rank[0] == 0 && rank[1] == 1);
}
END_TEST

/* 2000 random points against brute_rank: continuous (few ties) and on a 12-value grid (many ties and
 * duplicates), for m = 2, 3 and 4. */
static void random_ranks(int m)
{
    enum { N = 2000 };
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 20240 + (unsigned long)m);
    double *p = malloc(sizeof(double) * N * (size_t)m);
    int *got = malloc(sizeof(int) * N), *want = malloc(sizeof(int) * N);
    ck_assert(g && p && got && want);
    for (int grid = 0; grid < 2; grid++) {
        for (int i = 0; i < N * m; i++)
            p[i] = grid ? (double)gsl_rng_uniform_int(g, 12) : gsl_rng_uniform(g);
        struct dse_err e;
        ck_assert_int_eq(pareto_rank(p, N, m, got, &e), DSE_OK);
        brute_rank(p, N, m, want);
        int fronts = 0;
        for (int i = 0; i < N; i++) {
            ck_assert_msg(got[i] == want[i], "m %d grid %d point %d: rank %d, expected %d", m, grid, i, got[i],
                          want[i]);
            fronts = want[i] + 1 > fronts ? want[i] + 1 : fronts;
        }
        ck_assert_int_gt(fronts, 5); /* the case is not trivial */
    }
    free(p);
    free(got);
    free(want);
    gsl_rng_free(g);
}

/* pareto_front against brute_rank's rank 0, for m = 1 to 5, continuous and on a 12-value grid (ties and
 * duplicates), and on a trade-off (f1 = 1 - f0 + noise: a front of hundreds). */
START_TEST(front_random)
{
    enum { N = 3000 };
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 77);
    double *p = malloc(sizeof(double) * N * 5);
    int *want = malloc(sizeof(int) * N);
    unsigned char *in = malloc(N);
    ck_assert(g && p && want && in);
    for (int m = 1; m <= 5; m++)
        for (int kind = 0; kind < 3; kind++) {
            for (int i = 0; i < N * m; i++)
                p[i] = kind == 1 ? (double)gsl_rng_uniform_int(g, 12) : gsl_rng_uniform(g);
            if (kind == 2 && m >= 2)
                for (int i = 0; i < N; i++)
                    p[i * m + 1] = 1 - p[i * m] + 0.01 * p[i * m + 1];
            struct dse_err e;
            ck_assert_int_eq(pareto_front(p, N, m, in, &e), DSE_OK);
            brute_rank(p, N, m, want);
            int nfront = 0;
            for (int i = 0; i < N; i++) {
                ck_assert_msg(in[i] == (want[i] == 0), "m %d kind %d point %d: front %d, rank %d", m, kind, i, in[i],
                              want[i]);
                nfront += in[i];
            }
            ck_assert_int_gt(nfront, 0);
        }
    struct dse_err e;
    double nan_p[2] = {0, NAN};
    ck_assert_int_eq(pareto_front(nan_p, 1, 2, in, &e), DSE_EINPUT);
    ck_assert_int_eq(pareto_front(p, 0, 2, in, &e), DSE_OK);
    free(p);
    free(want);
    free(in);
    gsl_rng_free(g);
}
END_TEST

START_TEST(rank_random_2d) { random_ranks(2); }
END_TEST

START_TEST(rank_random_3d) { random_ranks(3); }
END_TEST

START_TEST(rank_random_4d) { random_ranks(4); }
END_TEST

/* ---- crowding ---- */

START_TEST(crowding_by_hand)
{
    /* Front A(0,10) B(1,6) C(3,3) D(6,0), passed in the order C, A, D, B. Ranges: f0 6, f1 10.
     * A and D are the boundary points of both objectives: INFINITY.
     * B: f0 neighbours A, C: (3 - 0) / 6 = 0.5;  f1 neighbours C, A: (10 - 3) / 10 = 0.7;  1.2.
     * C: f0 neighbours B, D: (6 - 1) / 6 = 5/6;   f1 neighbours D, B: (6 - 0) / 10 = 0.6;  5/6 + 0.6. */
    static const double p[][2] = {{0, 10}, {1, 6}, {3, 3}, {6, 0}};
    int idx[4] = {2, 0, 3, 1};
    double d[4];
    pareto_crowding(&p[0][0], 2, idx, 4, d);
    ck_assert_near(d[0], 5.0 / 6 + 0.6, 1e-12);
    ck_assert(isinf(d[1]) && isinf(d[2]));
    ck_assert_near(d[3], 1.2, 1e-12);

    /* f1 constant: it contributes nothing, not even INFINITY. f0 range 3: the middle point gets
     * (3 - 0) / 3 = 1. */
    static const double q[][2] = {{0, 2}, {1, 2}, {3, 2}};
    int qi[3] = {0, 1, 2};
    pareto_crowding(&q[0][0], 2, qi, 3, d);
    ck_assert(isinf(d[0]) && isinf(d[2]));
    ck_assert_near(d[1], 1.0, 1e-12);
    /* A lone point and a front of identical points: every range is 0. */
    pareto_crowding(&q[0][0], 2, qi, 1, d);
    ck_assert(d[0] == 0);
    int same[3] = {1, 1, 1};
    pareto_crowding(&q[0][0], 2, same, 3, d);
    ck_assert(d[0] == 0 && d[1] == 0 && d[2] == 0);
}
END_TEST

START_TEST(crowding_large_front)
{
    /* 40 points (i^2, (39 - i)^2), larger than the scan threshold, passed in a scrambled order. Both
     * ranges are 39^2 = 1521; an interior point i has neighbours i - 1 and i + 1 in both objectives:
     * ((i+1)^2 - (i-1)^2 + (40-i)^2 - (38-i)^2) / 1521 = (4i + 4(39 - i)) / 1521 = 156 / 1521. */
    enum { K = 40 };
    double p[K][2];
    int idx[K];
    for (int i = 0; i < K; i++) {
        p[i][0] = (double)i * i;
        p[i][1] = (double)(39 - i) * (39 - i);
        idx[i] = (i * 17) % K; /* 17 is prime to 40: a permutation */
    }
    double d[K];
    pareto_crowding(&p[0][0], 2, idx, K, d);
    for (int t = 0; t < K; t++) {
        if (idx[t] == 0 || idx[t] == K - 1)
            ck_assert(isinf(d[t]));
        else
            ck_assert_near(d[t], 156.0 / 1521, 1e-12);
    }
}
END_TEST

/* ---- reference point and hypervolume ---- */

START_TEST(reference_point)
{
    /* f0 over {1, 3, 2}: worst 3, range 2 -> 3.2. f1 all 10: range 0 -> 10 + 10 % of 10 = 11.
     * f2 all 0 -> 0 + 1. f3 all -5 -> -5 + 0.5 = -4.5. */
    static const double p[][4] = {{1, 10, 0, -5}, {3, 10, 0, -5}, {2, 10, 0, -5}};
    double ref[4];
    pareto_reference(&p[0][0], 3, 4, ref);
    ck_assert_near(ref[0], 3.2, 1e-12);
    ck_assert_near(ref[1], 11, 1e-12);
    ck_assert_near(ref[2], 1, 1e-12);
    ck_assert_near(ref[3], -4.5, 1e-12);
}
END_TEST

START_TEST(hypervolume_2d_by_hand)
{
    /* (1,3) (2,2) (3,1), ref (4,4): slabs (4-1)(4-3) + (4-2)(3-2) + (4-3)(2-1) = 3 + 2 + 1 = 6.
     * Adding a dominated point (3,3), a duplicate (2,2), a point on the boundary (4,0) (not strictly
     * inside) and one outside (5,0) changes nothing. */
    static const double p[][2] = {{3, 1}, {1, 3}, {3, 3}, {2, 2}, {2, 2}, {4, 0}, {5, 0}};
    double ref[2] = {4, 4};
    struct dse_err e;
    ck_assert_near(pareto_hypervolume(&p[1][0], 1, 2, ref, &e), 3, 1e-12);
    ck_assert_near(pareto_hypervolume(&p[0][0], 7, 2, ref, &e), 6, 1e-12);
    ck_assert(pareto_hypervolume(&p[5][0], 2, 2, ref, &e) == 0);
    ck_assert(pareto_hypervolume(&p[0][0], 0, 2, ref, &e) == 0);
    /* One objective: the best of {3, 1, 2} below 5 -> 5 - 1 = 4. */
    static const double q[] = {3, 1, 2};
    double r1 = 5;
    ck_assert_near(pareto_hypervolume(q, 3, 1, &r1, &e), 4, 1e-12);
}
END_TEST

START_TEST(hypervolume_3d_by_hand)
{
    struct dse_err e;
    double ref[3] = {4, 4, 4};
    /* One point (1,2,3): (4-1)(4-2)(4-3) = 6. */
    static const double a[] = {1, 2, 3};
    ck_assert_near(pareto_hypervolume(a, 1, 3, ref, &e), 6, 1e-12);
    /* (1,1,2) and (2,2,1), ref (3,3,3): boxes 2*2*1 = 4 and 1*1*2 = 2 overlap in
     * [2,3)^3 = 1: 4 + 2 - 1 = 5. */
    static const double b[] = {1, 1, 2, 2, 2, 1};
    double r3[3] = {3, 3, 3};
    ck_assert_near(pareto_hypervolume(b, 2, 3, r3, &e), 5, 1e-12);
    /* (1,2,3) (2,3,1) (3,1,2), ref (4,4,4): three boxes of 6; pairwise intersections start at
     * (2,3,3), (3,2,3), (3,3,2), 2 each; all three at (3,3,3), 1. 18 - 6 + 1 = 13. */
    static const double c[] = {1, 2, 3, 2, 3, 1, 3, 1, 2};
    ck_assert_near(pareto_hypervolume(c, 3, 3, ref, &e), 13, 1e-12);
    /* Four or more objectives are not computed exactly. */
    static const double d[] = {1, 1, 1, 1};
    double r4[4] = {2, 2, 2, 2};
    ck_assert(pareto_hypervolume(d, 1, 4, r4, &e) == -1);
    ck_assert_int_eq(e.code, DSE_EINPUT);
    ck_assert_ptr_nonnull(strstr(e.msg, "only 2 and 3 objectives"));
    ck_assert(pareto_hypervolume(d, 1, 0, r4, &e) == -1);
}
END_TEST

START_TEST(hypervolume_random_vs_inclusion_exclusion)
{
    /* 12 random points in [0,1)^m with ref 0.9 (so some points fall outside), 30 sets per m,
     * against inclusion-exclusion over all 4095 subsets. Values on a 0.05 grid in half the sets
     * bring ties in every objective. */
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 7);
    double p[12 * 3], ref[3] = {0.9, 0.9, 0.9};
    struct dse_err e;
    for (int m = 2; m <= 3; m++)
        for (int set = 0; set < 30; set++) {
            for (int i = 0; i < 12 * m; i++)
                p[i] = set % 2 ? 0.05 * (double)gsl_rng_uniform_int(g, 20) : gsl_rng_uniform(g);
            double want = brute_hv(p, 12, m, ref), got = pareto_hypervolume(p, 12, m, ref, &e);
            ck_assert_msg(fabs(got - want) <= 1e-12, "m %d set %d: %.15g, expected %.15g", m, set, got, want);
        }
    gsl_rng_free(g);
}
END_TEST

START_TEST(hypervolume_3d_front)
{
    /* 2000 points on the sphere octant x^2 + y^2 + z^2 = 1 (all mutually non-dominated), ref (1,1,1):
     * the dominated volume is the unit cube minus the eighth of the unit ball, 1 - pi/6 = 0.476401;
     * with 2000 points the staircase misses a little: the result lies just below it. */
    enum { N = 2000 };
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 11);
    double *p = malloc(sizeof(double) * 3 * N), ref[3] = {1, 1, 1};
    ck_assert_ptr_nonnull(p);
    for (int i = 0; i < N; i++) {
        double x = fabs(gsl_rng_uniform(g) - 0.5) + 1e-9, y = fabs(gsl_rng_uniform(g) - 0.5) + 1e-9,
               z = fabs(gsl_rng_uniform(g) - 0.5) + 1e-9, r = sqrt(x * x + y * y + z * z);
        p[3 * i] = x / r;
        p[3 * i + 1] = y / r;
        p[3 * i + 2] = z / r;
    }
    struct dse_err e;
    double hv = pareto_hypervolume(p, N, 3, ref, &e);
    ck_assert(hv < 1 - M_PI / 6 && hv > 1 - M_PI / 6 - 0.02);
    free(p);
    gsl_rng_free(g);
}
END_TEST

/* ---- NSGA-II ---- */

/* A small design space: three axes of 10 values. Two conflicting objectives; a, b small favour f0,
 * large favour f1; c pulls f0 towards 3 and f1 towards 6. a + b > 14 is infeasible by a + b - 14. */
static void toy_eval(const int *g, double *f, double *viol)
{
    int a = g[0], b = g[1], c = g[2];
    f[0] = a + 0.5 * b + 0.3 * (c - 3) * (c - 3);
    f[1] = 0.2 * (9 - a) * (9 - a) + (9 - b) + abs(c - 6);
    *viol = a + b > 14 ? a + b - 14 : 0;
}

static const int toy_nv[3] = {10, 10, 10};

static struct nsga2 *toy_create(unsigned long seed, int pop, int gens)
{
    struct nsga2_cfg c = {3, toy_nv, 2, pop, gens, seed, 0, 0};
    struct nsga2 *s;
    struct dse_err e;
    ck_assert_msg(nsga2_create(&c, &s, &e) == DSE_OK, "%s", e.msg);
    return s;
}

/* Runs a search to the end asking up to `chunk` genomes at a time; appends every genome asked to
 * log (room for cap ints) and returns how many ints were logged. */
static int toy_run(struct nsga2 *s, int chunk, int *log, int cap)
{
    int g[40 * 3], nlog = 0, k;
    double f[40 * 2], v[40];
    while ((k = nsga2_ask(s, g, chunk)) > 0) {
        for (int i = 0; i < k; i++)
            toy_eval(g + 3 * i, f + 2 * i, v + i);
        ck_assert_int_le(nlog + 3 * k, cap);
        memcpy(log + nlog, g, sizeof(int) * 3 * (size_t)k);
        nlog += 3 * k;
        nsga2_tell(s, f, v);
    }
    ck_assert_int_eq(k, 0);
    return nlog;
}

START_TEST(nsga2_config_errors)
{
    int nv[2] = {3, 0};
    struct nsga2 *s = (struct nsga2 *)(void *)nv; /* a non-NULL sentinel: must be reset to NULL */
    struct dse_err e;
    struct {
        struct nsga2_cfg c;
        const char *msg;
    } bad[] = {
        {{0, toy_nv, 2, 40, 10, 1, 0, 0}, "n_axes must be 1 to 64 (got 0)"},
        {{65, toy_nv, 2, 40, 10, 1, 0, 0}, "n_axes must be 1 to 64 (got 65)"},
        {{3, NULL, 2, 40, 10, 1, 0, 0}, "n_values is missing"},
        {{2, nv, 2, 40, 10, 1, 0, 0}, "axis 1 must have at least 1 value (got 0)"},
        {{3, toy_nv, 0, 40, 10, 1, 0, 0}, "n_obj must be 1 to 16 (got 0)"},
        {{3, toy_nv, 17, 40, 10, 1, 0, 0}, "n_obj must be 1 to 16 (got 17)"},
        {{3, toy_nv, 2, 2, 10, 1, 0, 0}, "population must be an even number from 4"},
        {{3, toy_nv, 2, 41, 10, 1, 0, 0}, "(got 41)"},
        {{3, toy_nv, 2, 40, 0, 1, 0, 0}, "generations must be at least 1 (got 0)"},
        {{3, toy_nv, 2, 40, 10, 1, 1.5, 0}, "p_crossover must be a probability (got 1.5)"},
        {{3, toy_nv, 2, 40, 10, 1, 0, NAN}, "p_mutation must be a probability"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(nsga2_create(&bad[i].c, &s, &e), DSE_EINPUT);
        ck_assert_ptr_null(s);
        ck_assert_msg(strstr(e.msg, bad[i].msg) && strncmp(e.msg, "nsga2: ", 7) == 0, "case %zu: '%s'", i, e.msg);
    }
}
END_TEST

START_TEST(nsga2_protocol)
{
    /* population 4, 2 generations: three batches of 4 (initial + 2 offspring), then 0. */
    struct nsga2 *s = toy_create(5, 4, 2);
    int g[4 * 3], batches = 0, k;
    double f[4 * 2], v[4];
    const int *pg;
    ck_assert_int_eq(nsga2_population(s, &pg, NULL, NULL), 0);
    ck_assert_int_eq(nsga2_ask(s, g, 0), -1);
    nsga2_tell(s, f, v); /* a tell with nothing asked is ignored */
    while ((k = nsga2_ask(s, g, 4)) > 0) {
        ck_assert_int_eq(k, 4);
        for (int i = 0; i < 4; i++) {
            for (int a = 0; a < 3; a++)
                ck_assert(g[3 * i + a] >= 0 && g[3 * i + a] < 10);
            toy_eval(g + 3 * i, f + 2 * i, v + i);
        }
        nsga2_tell(s, f, NULL); /* NULL violation: all feasible */
        batches++;
        ck_assert_int_eq(nsga2_population(s, NULL, NULL, NULL), 4);
    }
    ck_assert_int_eq(batches, 3);
    ck_assert_int_eq(nsga2_ask(s, g, 4), 0);
    ck_assert_str_eq(nsga2_error(s), "");
    nsga2_free(s);

    /* An axis of one value stays 0; an ask without its tell is handed out again. */
    int nv[2] = {1, 5};
    struct nsga2_cfg c = {2, nv, 1, 6, 3, 9, 0, 0.5};
    struct dse_err e;
    ck_assert_int_eq(nsga2_create(&c, &s, &e), DSE_OK);
    int h[6 * 2], h2[6 * 2];
    double fo[6];
    ck_assert_int_eq(nsga2_ask(s, h, 6), 6);
    ck_assert_int_eq(nsga2_ask(s, h2, 6), 6);
    ck_assert_int_eq(memcmp(h, h2, sizeof h), 0);
    while ((k = nsga2_ask(s, h, 6)) > 0) {
        for (int i = 0; i < k; i++) {
            ck_assert_int_eq(h[2 * i], 0);
            ck_assert(h[2 * i + 1] >= 0 && h[2 * i + 1] < 5);
            fo[i] = h[2 * i + 1];
        }
        nsga2_tell(s, fo, NULL);
    }
    nsga2_free(s);
}
END_TEST

START_TEST(nsga2_deterministic)
{
    /* Same seed: identical asks, whether the batches are asked whole or 7 genomes at a time. A
     * different seed: a different run. 40 x (1 + 10) genomes of 3 genes. */
    enum { CAP = 40 * 11 * 3 };
    int *a = malloc(sizeof(int) * CAP), *b = malloc(sizeof(int) * CAP), *c = malloc(sizeof(int) * CAP);
    ck_assert(a && b && c);
    struct nsga2 *s1 = toy_create(42, 40, 10), *s2 = toy_create(42, 40, 10), *s3 = toy_create(43, 40, 10);
    int na = toy_run(s1, 40, a, CAP), nb = toy_run(s2, 7, b, CAP), nc = toy_run(s3, 40, c, CAP);
    ck_assert_int_eq(na, CAP);
    ck_assert_int_eq(nb, CAP);
    ck_assert_int_eq(nc, CAP);
    ck_assert_int_eq(memcmp(a, b, sizeof(int) * CAP), 0);
    ck_assert_int_ne(memcmp(a, c, sizeof(int) * CAP), 0);
    nsga2_free(s1);
    nsga2_free(s2);
    nsga2_free(s3);
    free(a);
    free(b);
    free(c);
}
END_TEST

START_TEST(nsga2_reaches_exhaustive_front)
{
    /* Enumerate all 1000 genomes: the feasible ones (a + b <= 14) give the reference point and the
     * true front's hypervolume (a front of 33 points). 40 x 40 generations (1640 evaluations, repeats
     * included) must reach 99 % of it, measured from the same reference point, for each of five seeds
     * (they reach 99.9 % to 100 %). */
    double all[1000 * 2], feas[1000 * 2], v;
    int nf = 0;
    for (int i = 0; i < 1000; i++) {
        int g[3] = {i / 100, i / 10 % 10, i % 10};
        toy_eval(g, all + 2 * i, &v);
        if (v == 0) {
            memcpy(feas + 2 * nf, all + 2 * i, sizeof(double) * 2);
            nf++;
        }
    }
    ck_assert_int_eq(nf, 1000 - 10 * (4 + 3 + 2 + 1)); /* a + b = 15, 16, 17, 18: 4 + 3 + 2 + 1 pairs, x 10 c */
    double ref[2];
    struct dse_err e;
    pareto_reference(feas, nf, 2, ref);
    double best = pareto_hypervolume(feas, nf, 2, ref, &e);
    ck_assert(best > 0);
    for (unsigned long seed = 1; seed <= 5; seed++) {
        struct nsga2 *s = toy_create(seed, 40, 40);
        int *log = malloc(sizeof(int) * 40 * 41 * 3);
        ck_assert_ptr_nonnull(log);
        toy_run(s, 40, log, 40 * 41 * 3);
        const double *po, *pv;
        int np = nsga2_population(s, NULL, &po, &pv);
        ck_assert_int_eq(np, 40);
        for (int i = 0; i < np; i++)
            ck_assert(pv[i] == 0);
        double hv = pareto_hypervolume(po, np, 2, ref, &e);
        ck_assert_msg(hv >= 0.99 * best, "seed %lu: hypervolume %.6g < 99 %% of %.6g", seed, hv, best);
        free(log);
        nsga2_free(s);
    }
}
END_TEST

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

START_TEST(nsga2_infeasible_never_survive)
{
    /* A space where most genomes are infeasible (a + b + c > 6 violates by the excess; 84 of the 1000
     * genomes, C(6 + 3, 3), are feasible). Under constrained domination the survivors of parents +
     * offspring are the population with the least violations: so after every generation the sorted
     * violations of the new parents equal the smallest 20 of the 40 candidates' -- in particular it
     * holds min(20, feasible candidates) feasible genomes and no infeasible genome takes a feasible
     * one's place. */
    struct nsga2 *s = toy_create(3, 20, 30);
    int g[20 * 3], k, gens = 0;
    double f[20 * 2], cand[40], kept[20];
    while ((k = nsga2_ask(s, g, 20)) > 0) {
        ck_assert_int_eq(k, 20);
        const double *pv;
        int np = nsga2_population(s, NULL, NULL, &pv), feas = 0;
        memcpy(cand, pv, sizeof(double) * (size_t)np);
        for (int i = 0; i < k; i++) {
            double v;
            toy_eval(g + 3 * i, f + 2 * i, &v);
            int sum = g[3 * i] + g[3 * i + 1] + g[3 * i + 2];
            cand[np + i] = sum > 6 ? sum - 6 : 0;
        }
        nsga2_tell(s, f, cand + np);
        int nc = np + k;
        for (int i = 0; i < nc; i++)
            feas += cand[i] == 0;
        qsort(cand, (size_t)nc, sizeof *cand, cmp_double);
        ck_assert_int_eq(nsga2_population(s, NULL, NULL, &pv), 20);
        memcpy(kept, pv, sizeof kept);
        qsort(kept, 20, sizeof *kept, cmp_double);
        int now = 0;
        for (int i = 0; i < 20; i++) {
            ck_assert(kept[i] == cand[i]);
            now += kept[i] == 0;
        }
        ck_assert_int_eq(now, feas < 20 ? feas : 20);
        gens++;
    }
    ck_assert_int_eq(gens, 31);
    const double *pv;
    nsga2_population(s, NULL, NULL, &pv);
    for (int i = 0; i < 20; i++)
        ck_assert(pv[i] == 0); /* the run found 20 feasible genomes */
    nsga2_free(s);
}
END_TEST

START_TEST(nsga2_repeats_give_way)
{
    /* One axis of 8 values v with objectives (v, 7 - v): every value is on the front. With a
     * population of 6, after 20 generations the parents are 6 distinct values -- repeated genomes rank
     * behind distinct members of their front, so copies never crowd out the front. A second axis of
     * one value rides along and stays 0. */
    int nv[2] = {8, 1};
    struct nsga2_cfg c = {2, nv, 2, 6, 20, 77, 0, 0};
    struct nsga2 *s;
    struct dse_err e;
    ck_assert_int_eq(nsga2_create(&c, &s, &e), DSE_OK);
    int g[6 * 2], k;
    double f[6 * 2];
    while ((k = nsga2_ask(s, g, 6)) > 0) {
        for (int i = 0; i < k; i++) {
            ck_assert_int_eq(g[2 * i + 1], 0);
            f[2 * i] = g[2 * i];
            f[2 * i + 1] = 7 - g[2 * i];
        }
        nsga2_tell(s, f, NULL);
    }
    const int *pg;
    ck_assert_int_eq(nsga2_population(s, &pg, NULL, NULL), 6);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < i; j++)
            ck_assert_int_ne(pg[2 * i], pg[2 * j]);
    nsga2_free(s);
}
END_TEST

START_TEST(nsga2_three_objectives)
{
    /* Three objectives on the same space (f2 favours b = 4 and small c); 40 x 40 reaches 95 % of the
     * exhaustive front's hypervolume (about 96 %: the 3-D front has 151 points, more than the population
     * holds, so all of it is out of reach by construction). */
    double feas[1000 * 3], v;
    int nf = 0;
    for (int i = 0; i < 1000; i++) {
        int g[3] = {i / 100, i / 10 % 10, i % 10};
        double f[2];
        toy_eval(g, f, &v);
        if (v > 0)
            continue;
        feas[3 * nf] = f[0];
        feas[3 * nf + 1] = f[1];
        feas[3 * nf + 2] = (g[1] - 4) * (g[1] - 4) + 0.5 * g[2];
        nf++;
    }
    double ref[3];
    struct dse_err e;
    pareto_reference(feas, nf, 3, ref);
    double best = pareto_hypervolume(feas, nf, 3, ref, &e);
    struct nsga2_cfg c = {3, toy_nv, 3, 40, 40, 1, 0, 0};
    struct nsga2 *s;
    ck_assert_int_eq(nsga2_create(&c, &s, &e), DSE_OK);
    int g[40 * 3], k;
    double f[40 * 3], vv[40], f2[2];
    while ((k = nsga2_ask(s, g, 40)) > 0) {
        for (int i = 0; i < k; i++) {
            toy_eval(g + 3 * i, f2, vv + i);
            f[3 * i] = f2[0];
            f[3 * i + 1] = f2[1];
            f[3 * i + 2] = (g[3 * i + 1] - 4) * (g[3 * i + 1] - 4) + 0.5 * g[3 * i + 2];
        }
        nsga2_tell(s, f, vv);
    }
    const double *po;
    int np = nsga2_population(s, NULL, &po, NULL);
    double hv = pareto_hypervolume(po, np, 3, ref, &e);
    ck_assert_msg(hv >= 0.95 * best, "hypervolume %.6g < 95 %% of %.6g", hv, best);
    nsga2_free(s);
}
END_TEST

Suite *make_search_suite(void); /* also in check_suites.h once the suite is registered there */

Suite *make_search_suite(void)
{
    Suite *s = suite_create("search");
    TCase *t = tcase_create("pareto");
    tcase_add_test(t, rank_2d_by_hand);
    tcase_add_test(t, rank_3d_by_hand);
    tcase_add_test(t, rank_edge_cases);
    tcase_add_test(t, rank_random_2d);
    tcase_add_test(t, rank_random_3d);
    tcase_add_test(t, rank_random_4d);
    tcase_add_test(t, front_random);
    tcase_add_test(t, crowding_by_hand);
    tcase_add_test(t, crowding_large_front);
    tcase_add_test(t, reference_point);
    tcase_add_test(t, hypervolume_2d_by_hand);
    tcase_add_test(t, hypervolume_3d_by_hand);
    tcase_add_test(t, hypervolume_random_vs_inclusion_exclusion);
    tcase_add_test(t, hypervolume_3d_front);
    tcase_set_timeout(t, 60); /* the random fronts take about a second alone; a loaded 2-core host, several */
    suite_add_tcase(s, t);
    TCase *n = tcase_create("nsga2");
    tcase_add_test(n, nsga2_config_errors);
    tcase_add_test(n, nsga2_protocol);
    tcase_add_test(n, nsga2_deterministic);
    tcase_add_test(n, nsga2_reaches_exhaustive_front);
    tcase_add_test(n, nsga2_infeasible_never_survive);
    tcase_add_test(n, nsga2_repeats_give_way);
    tcase_add_test(n, nsga2_three_objectives);
    tcase_set_timeout(n, 60);
    suite_add_tcase(s, n);
    return s;
}
