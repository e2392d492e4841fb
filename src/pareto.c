/* pareto.c -- non-dominated sorting, crowding distance, reference point and exact hypervolume. */
#include "pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int pareto_dominates(const double *a, const double *b, int m)
{
    int strict = 0;
    for (int j = 0; j < m; j++) {
        if (a[j] > b[j])
            return 0;
        if (a[j] < b[j])
            strict = 1;
    }
    return strict;
}

/* ---- a stable merge sort with a context (qsort_r is not in C11 or POSIX) ---- */

typedef int (*cmp_fn)(const void *a, const void *b, const void *ctx);

/* Sorts n elements of sz bytes at a; t is scratch of at least ceil(n / 2) elements. Stable. */
static void msort(char *a, char *t, size_t n, size_t sz, cmp_fn cmp, const void *ctx)
{
    if (n < 2)
        return;
    if (n <= 12) { /* insertion sort; t holds the element being placed */
        for (size_t i = 1; i < n; i++) {
            size_t j = i;
            if (cmp(a + (j - 1) * sz, a + j * sz, ctx) <= 0)
                continue;
            memcpy(t, a + i * sz, sz);
            while (j > 0 && cmp(a + (j - 1) * sz, t, ctx) > 0) {
                memcpy(a + j * sz, a + (j - 1) * sz, sz);
                j--;
            }
            memcpy(a + j * sz, t, sz);
        }
        return;
    }
    size_t h = n / 2;
    msort(a, t, h, sz, cmp, ctx);
    msort(a + h * sz, t, n - h, sz, cmp, ctx);
    if (cmp(a + (h - 1) * sz, a + h * sz, ctx) <= 0)
        return; /* already in order */
    /* Merge: the left half moves to t; writing from the front of a never passes the read position
     * of the right half. Equal elements come from the left first (stability). */
    memcpy(t, a, h * sz);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        if (cmp(t + i * sz, a + j * sz, ctx) <= 0)
            memcpy(a + k++ * sz, t + i++ * sz, sz);
        else
            memcpy(a + k++ * sz, a + j++ * sz, sz);
    }
    if (i < h)
        memcpy(a + k * sz, t + i * sz, (h - i) * sz);
}

/* Sorts n elements; returns -1 when scratch cannot be allocated. */
static int sort_any(void *base, size_t n, size_t sz, cmp_fn cmp, const void *ctx)
{
    if (n < 2)
        return 0;
    char *t = malloc((n / 2 + 1) * sz);
    if (!t)
        return -1;
    msort(base, t, n, sz, cmp, ctx);
    free(t);
    return 0;
}

/* A point with up to three keys, sorted by value (m <= 3 paths). */
struct rec3 {
    double k[3];
    int i;
};

static int cmp_rec3_lex(const void *a, const void *b, const void *ctx)
{
    const struct rec3 *x = a, *y = b;
    (void)ctx;
    for (int j = 0; j < 3; j++) {
        if (x->k[j] < y->k[j])
            return -1;
        if (x->k[j] > y->k[j])
            return 1;
    }
    return 0;
}

/* Row indices compared lexicographically on their m objectives. */
struct rows {
    const double *obj;
    int m;
};

static int cmp_row_lex(const void *a, const void *b, const void *ctx)
{
    const struct rows *r = ctx;
    const double *x = r->obj + (size_t)*(const int *)a * (size_t)r->m;
    const double *y = r->obj + (size_t)*(const int *)b * (size_t)r->m;
    for (int j = 0; j < r->m; j++) {
        if (x[j] < y[j])
            return -1;
        if (x[j] > y[j])
            return 1;
    }
    return 0;
}

/* n points of m objectives, none NaN; else DSE_EINPUT naming fn */
static int check_points(const char *fn, const double *obj, int n, int m, struct dse_err *e)
{
    if (n < 0 || m < 1 || m > PARETO_MAX_OBJ)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: need n >= 0 points and 1 to %d objectives (got n = %d, m = %d)",
                           fn, PARETO_MAX_OBJ, n, m);
    for (size_t i = 0; i < (size_t)n * (size_t)m; i++)
        if (isnan(obj[i]))
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: objective %d of point %d is NaN", fn,
                               (int)(i % (size_t)m), (int)(i / (size_t)m));
    return DSE_OK;
}

/* ---- non-domination ranks ---- */

/* m <= 2 (Jensen, IEEE TEC 7(5), 2003, the two-objective case). After sorting by (f0, f1), every
 * point comes after all points that could dominate it. The members of a front, in that order, have
 * increasing f0 and decreasing f1 (equal f0 means identical), so its last member has the least f1
 * and is the only one that needs checking: p is not dominated by front F iff
 * (p1, p0) <= (last1, last0) lexicographically (p0 >= last0 always holds). Being dominated by front
 * k implies being dominated by every front before it, so the first front that admits p is found by
 * binary search: O(n log n) in all. */
static int rank_2d(const double *obj, int n, int m, int *rank, struct dse_err *e)
{
    struct rec3 *r = malloc((size_t)n * sizeof *r);
    double *l0 = malloc((size_t)n * sizeof *l0), *l1 = malloc((size_t)n * sizeof *l1);
    int rc = DSE_OK;
    if (!r || !l0 || !l1)
        goto oom;
    for (int i = 0; i < n; i++) {
        r[i].k[0] = obj[(size_t)i * (size_t)m];
        r[i].k[1] = m > 1 ? obj[(size_t)i * (size_t)m + 1] : 0;
        r[i].k[2] = 0;
        r[i].i = i;
    }
    if (sort_any(r, (size_t)n, sizeof *r, cmp_rec3_lex, NULL) < 0)
        goto oom;
    int nf = 0;
    for (int t = 0; t < n; t++) {
        double p0 = r[t].k[0], p1 = r[t].k[1];
        int lo = 0, hi = nf;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (p1 < l1[mid] || (p1 == l1[mid] && p0 <= l0[mid]))
                hi = mid; /* front mid admits p */
            else
                lo = mid + 1;
        }
        if (lo == nf)
            nf++;
        l0[lo] = p0;
        l1[lo] = p1;
        rank[r[t].i] = lo;
    }
    goto out;
oom:
    rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "pareto_rank: out of memory for %d points", n);
out:
    free(r);
    free(l0);
    free(l1);
    return rc;
}

/* One front of ENS-BS: objectives 1..m-1 of its members, row after row, in insertion order. */
struct front {
    double *v;
    int len, cap;
};

/* 1 when some member of f dominates p. Members precede p in lexicographic order, so their f0 is at
 * most p0 and they differ from p (duplicates are handled before this): domination reduces to
 * member <= p in objectives 1..m-1. The scan runs from the newest member, the closest to p in f0,
 * as in the authors' implementation. */
static int front_dominates(const struct front *f, const double *p, int w)
{
    for (int q = f->len - 1; q >= 0; q--) {
        const double *v = f->v + (size_t)q * (size_t)w;
        int j = 0;
        while (j < w && v[j] <= p[j])
            j++;
        if (j == w)
            return 1;
    }
    return 0;
}

/* m >= 4: Efficient Non-dominated Sort with binary search, ENS-BS (X. Zhang, Y. Tian, R. Cheng,
 * Y. Jin, "An efficient approach to nondominated sorting for evolutionary multiobjective
 * optimization", IEEE TEC 19(2), 2015); rank_3d below specializes it for m == 3. Points are visited in lexicographic order, so no later point
 * dominates an earlier one and a point's fronts are final when it is placed; each point goes to the
 * first front none of whose members dominates it, found by binary search over the fronts (the same
 * monotonicity as in rank_2d). A point identical to its predecessor takes its rank. */
static int rank_ens_bs(const double *obj, int n, int m, int *rank, struct dse_err *e)
{
    int *ord = malloc((size_t)n * sizeof *ord);
    struct front *f = NULL;
    int nf = 0, rc = DSE_OK, w = m - 1;
    if (!ord)
        goto oom;
    for (int i = 0; i < n; i++)
        ord[i] = i;
    struct rows ctx = {obj, m};
    if (sort_any(ord, (size_t)n, sizeof *ord, cmp_row_lex, &ctx) < 0)
        goto oom;
    f = calloc(1, sizeof *f); /* grown as fronts appear */
    int fcap = 1;
    if (!f)
        goto oom;
    for (int t = 0; t < n; t++) {
        const double *p = obj + (size_t)ord[t] * (size_t)m;
        if (t > 0 && cmp_row_lex(&ord[t - 1], &ord[t], &ctx) == 0) {
            rank[ord[t]] = rank[ord[t - 1]];
            continue;
        }
        int lo = 0, hi = nf;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (front_dominates(&f[mid], p + 1, w))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == nf) {
            if (nf == fcap) {
                struct front *g = realloc(f, (size_t)fcap * 2 * sizeof *g);
                if (!g)
                    goto oom;
                f = g;
                fcap *= 2;
            }
            f[nf++] = (struct front){NULL, 0, 0};
        }
        struct front *F = &f[lo];
        if (F->len == F->cap) {
            int cap = F->cap ? F->cap * 2 : 8;
            double *v = realloc(F->v, (size_t)cap * (size_t)w * sizeof *v);
            if (!v)
                goto oom;
            F->v = v;
            F->cap = cap;
        }
        memcpy(F->v + (size_t)F->len * (size_t)w, p + 1, (size_t)w * sizeof *p);
        F->len++;
        rank[ord[t]] = lo;
    }
    goto out;
oom:
    rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "pareto_rank: out of memory for %d points", n);
out:
    for (int k = 0; k < nf; k++)
        free(f[k].v);
    free(f);
    free(ord);
    return rc;
}

/* m == 3: the ENS-BS scheme above, with the test "does a member of front F dominate p" answered in
 * O(log |F|) instead of O(|F|). Members precede p in f0, so one dominates p iff it is <= p in (f1, f2);
 * it suffices to keep each front's 2-D staircase: the members not weakly dominated in (f1, f2) by a
 * later member (a removed member's dominatees are dominated by the member that removed it). This is
 * the sweep of Kung, Luccio and Preparata (J. ACM 22(4), 1975) for 3-D maxima, one staircase per front.
 * Each staircase is a treap keyed on f1 (f2 then decreases along it); priorities hash the node number
 * so the run is deterministic. O(n log^2 n) whatever the shape of the fronts. (On 1,000,000 uniform
 * random 3-D points, 232 fronts: about 45 s with ENS-BS's scan, about 1.3 s with staircases.) */
struct tnode {
    double x, y; /* f1, f2 */
    unsigned pri;
    int l, r;
};

static unsigned tnode_pri(unsigned i)
{
    i ^= i >> 16; /* a 32-bit integer hash (Wellons' lowbias32) */
    i *= 0x7feb352dU;
    i ^= i >> 15;
    i *= 0x846ca68bU;
    return i ^ (i >> 16);
}

/* Splits t into the nodes with x < kx (*a) and the rest (*b). */
static void treap_split_x(struct tnode *nd, int t, double kx, int *a, int *b)
{
    if (t < 0) {
        *a = *b = -1;
    } else if (nd[t].x < kx) {
        treap_split_x(nd, nd[t].r, kx, &nd[t].r, b);
        *a = t;
    } else {
        treap_split_x(nd, nd[t].l, kx, a, &nd[t].l);
        *b = t;
    }
}

/* Splits t, whose y decreases in order, into the leading nodes with y >= ky (*a) and the rest (*b). */
static void treap_split_y(struct tnode *nd, int t, double ky, int *a, int *b)
{
    if (t < 0) {
        *a = *b = -1;
    } else if (nd[t].y >= ky) {
        treap_split_y(nd, nd[t].r, ky, &nd[t].r, b);
        *a = t;
    } else {
        treap_split_y(nd, nd[t].l, ky, a, &nd[t].l);
        *b = t;
    }
}

static int treap_merge(struct tnode *nd, int a, int b)
{
    if (a < 0)
        return b;
    if (b < 0)
        return a;
    if (nd[a].pri > nd[b].pri) {
        nd[a].r = treap_merge(nd, nd[a].r, b);
        return a;
    }
    nd[b].l = treap_merge(nd, a, nd[b].l);
    return b;
}

/* 1 when the staircase t has a point <= (x, y): the last point with f1 <= x has the least f2 of those. */
static int stair_dominates(const struct tnode *nd, int t, double x, double y)
{
    int best = -1;
    while (t >= 0) {
        if (nd[t].x <= x) {
            best = t;
            t = nd[t].r;
        } else {
            t = nd[t].l;
        }
    }
    return best >= 0 && nd[best].y <= y;
}

static int rank_3d(const double *obj, int n, int *rank, struct dse_err *e)
{
    struct rec3 *r = malloc((size_t)n * sizeof *r);
    struct tnode *nd = malloc((size_t)n * sizeof *nd);
    int *root = malloc((size_t)n * sizeof *root), rc = DSE_OK;
    if (!r || !nd || !root)
        goto oom;
    for (int i = 0; i < n; i++) {
        memcpy(r[i].k, obj + (size_t)i * 3, sizeof r[i].k);
        r[i].i = i;
    }
    if (sort_any(r, (size_t)n, sizeof *r, cmp_rec3_lex, NULL) < 0)
        goto oom;
    int nf = 0, nn = 0;
    for (int t = 0; t < n; t++) {
        double x = r[t].k[1], y = r[t].k[2];
        if (t > 0 && cmp_rec3_lex(&r[t - 1], &r[t], NULL) == 0) {
            rank[r[t].i] = rank[r[t - 1].i];
            continue;
        }
        int lo = 0, hi = nf;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (stair_dominates(nd, root[mid], x, y))
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == nf)
            root[nf++] = -1;
        /* Insert p, dropping the members it weakly dominates in (f1, f2): a run starting at the first
         * f1 >= x (none of them is <= p, so their f2 >= y means they are dominated). */
        int a, b, drop, c;
        treap_split_x(nd, root[lo], x, &a, &b);
        treap_split_y(nd, b, y, &drop, &c);
        nd[nn] = (struct tnode){x, y, tnode_pri((unsigned)nn), -1, -1};
        root[lo] = treap_merge(nd, treap_merge(nd, a, nn), c);
        nn++;
        rank[r[t].i] = lo;
    }
    goto out;
oom:
    rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "pareto_rank: out of memory for %d points", n);
out:
    free(r);
    free(nd);
    free(root);
    return rc;
}

int pareto_rank(const double *obj, int n, int m, int *rank, struct dse_err *e)
{
    int rc = check_points("pareto_rank", obj, n, m, e);
    if (rc)
        return rc;
    if (n == 0)
        return DSE_OK;
    if (m <= 2)
        return rank_2d(obj, n, m, rank, e);
    return m == 3 ? rank_3d(obj, n, rank, e) : rank_ens_bs(obj, n, m, rank, e);
}

/* ---- the first front alone ---- */

/* In lexicographic order no later point dominates an earlier one, so a point is on the front iff no
 * front point seen before dominates it: m <= 2, the least f1 so far decides; m = 3, one staircase
 * (rank_3d's treap) of the front's (f1, f2); m >= 4, a scan of the front so far. A point identical to
 * its predecessor shares its verdict. O(n log n) for m <= 3 (the sort dominates: rank_3d's search over
 * all fronts is what makes full ranking O(n log^2 n)). */
int pareto_front(const double *obj, int n, int m, unsigned char *in, struct dse_err *e)
{
    int rc0 = check_points("pareto_front", obj, n, m, e);
    if (rc0)
        return rc0;
    if (n == 0)
        return DSE_OK;
    int rc = DSE_OK, nfr = 0, root = -1, nn = 0, *ord = NULL, *fr = NULL;
    struct rec3 *r = NULL; /* m <= 3: the keys beside the index, so the sort reads them in place */
    struct tnode *nd = NULL;
    struct rows rw = {obj, m};
    if (m <= 3) {
        if (!(r = malloc((size_t)n * sizeof *r)))
            goto oom;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < 3; j++)
                r[i].k[j] = j < m ? obj[(size_t)i * (size_t)m + (size_t)j] : 0;
            r[i].i = i;
        }
        if (sort_any(r, (size_t)n, sizeof *r, cmp_rec3_lex, NULL) < 0 || (m == 3 && !(nd = malloc((size_t)n * sizeof *nd))))
            goto oom;
    } else {
        if (!(ord = malloc((size_t)n * sizeof *ord)) || !(fr = malloc((size_t)n * sizeof *fr)))
            goto oom;
        for (int i = 0; i < n; i++)
            ord[i] = i;
        if (sort_any(ord, (size_t)n, sizeof *ord, cmp_row_lex, &rw) < 0)
            goto oom;
    }
    double best1 = INFINITY;
    for (int t = 0; t < n; t++) {
        int id = r ? r[t].i : ord[t], dom;
        if (t > 0 && (r ? cmp_rec3_lex(&r[t - 1], &r[t], NULL) : cmp_row_lex(&ord[t - 1], &ord[t], &rw)) == 0) {
            in[id] = in[r ? r[t - 1].i : ord[t - 1]];
            continue;
        }
        if (m == 1) {
            dom = t > 0; /* every later distinct value is larger */
        } else if (m == 2) {
            dom = r[t].k[1] >= best1; /* an earlier distinct point with f1 <= p1 has f0 <= p0 too */
            if (!dom)
                best1 = r[t].k[1];
        } else if (m == 3) {
            double x = r[t].k[1], y = r[t].k[2];
            dom = stair_dominates(nd, root, x, y);
            if (!dom) {
                int a, b, drop, c;
                treap_split_x(nd, root, x, &a, &b);
                treap_split_y(nd, b, y, &drop, &c);
                nd[nn] = (struct tnode){x, y, tnode_pri((unsigned)nn), -1, -1};
                root = treap_merge(nd, treap_merge(nd, a, nn), c);
                nn++;
            }
        } else {
            const double *p = obj + (size_t)id * (size_t)m;
            dom = 0;
            for (int q = nfr - 1; q >= 0 && !dom; q--) {
                const double *v = obj + (size_t)fr[q] * (size_t)m;
                int j = 1;
                while (j < m && v[j] <= p[j])
                    j++;
                dom = j == m;
            }
            if (!dom)
                fr[nfr++] = id;
        }
        in[id] = (unsigned char)!dom;
    }
    goto out;
oom:
    rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "pareto_front: out of memory for %d points", n);
out:
    free(r);
    free(ord);
    free(nd);
    free(fr);
    return rc;
}

/* ---- crowding distance ---- */

struct col {
    const double *obj;
    int m, j;
    const int *idx;
};

static double col_at(const struct col *c, int pos) { return c->obj[(size_t)c->idx[pos] * (size_t)c->m + (size_t)c->j]; }

static int cmp_col(const void *a, const void *b, const void *ctx)
{
    double x = col_at(ctx, *(const int *)a), y = col_at(ctx, *(const int *)b);
    return x < y ? -1 : x > y ? 1 : 0;
}

/* Fronts up to this size use the scan below; larger ones sort (and scan only when out of memory). */
#define CROWD_SCAN_MAX 16

void pareto_crowding(const double *obj, int m, const int *idx, int k, double *dist)
{
    if (k <= 0)
        return;
    for (int i = 0; i < k; i++)
        dist[i] = 0;
    int *ord = k > CROWD_SCAN_MAX ? malloc((size_t)k * sizeof *ord) : NULL;
    for (int j = 0; j < m; j++) {
        struct col c = {obj, m, j, idx};
        double lo = col_at(&c, 0), hi = lo;
        for (int i = 1; i < k; i++) {
            double v = col_at(&c, i);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        double range = hi - lo;
        if (!(range > 0) || !isfinite(range))
            continue;
        /* Neighbours along objective j in the order (value, position in idx). */
        if (ord) {
            for (int i = 0; i < k; i++)
                ord[i] = i;
            if (sort_any(ord, (size_t)k, sizeof *ord, cmp_col, &c) == 0) {
                dist[ord[0]] = dist[ord[k - 1]] = INFINITY;
                for (int t = 1; t < k - 1; t++)
                    dist[ord[t]] += (col_at(&c, ord[t + 1]) - col_at(&c, ord[t - 1])) / range;
                continue;
            }
            free(ord);
            ord = NULL;
        }
        for (int i = 0; i < k; i++) { /* O(k^2) scan for the nearest neighbour on each side */
            double v = col_at(&c, i);
            int below = -1, above = -1;
            for (int q = 0; q < k; q++) {
                if (q == i)
                    continue;
                double u = col_at(&c, q);
                if (u < v || (u == v && q < i)) {
                    if (below < 0 || u > col_at(&c, below) || (u == col_at(&c, below) && q > below))
                        below = q;
                } else if (above < 0 || u < col_at(&c, above) || (u == col_at(&c, above) && q < above)) {
                    above = q;
                }
            }
            if (below < 0 || above < 0)
                dist[i] = INFINITY;
            else
                dist[i] += (col_at(&c, above) - col_at(&c, below)) / range;
        }
    }
    free(ord);
}

/* ---- reference point and hypervolume ---- */

void pareto_reference(const double *obj, int n, int m, double *ref)
{
    for (int j = 0; j < m; j++) {
        if (n <= 0) {
            ref[j] = 0;
            continue;
        }
        double lo = obj[j], hi = obj[j];
        for (int i = 1; i < n; i++) {
            double v = obj[(size_t)i * (size_t)m + (size_t)j];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        double range = hi - lo;
        ref[j] = hi + (range > 0 ? 0.1 * range : hi != 0 ? 0.1 * fabs(hi) : 1.0);
    }
}

static int cmp_rec3_z(const void *a, const void *b, const void *ctx)
{
    const struct rec3 *x = a, *y = b;
    (void)ctx;
    return x->k[2] < y->k[2] ? -1 : x->k[2] > y->k[2] ? 1 : cmp_rec3_lex(a, b, NULL);
}

/* Adds (x, y) to the 2-D staircase sx/sy (x increasing, y strictly decreasing, *s points, bounded by
 * rx, ry) and returns the area the staircase gains. The points p weakly dominates form a run starting
 * at the first x >= px; the gain is swept column by column over [px, right end of that run). */
static double stair_add(double *sx, double *sy, int *s, double px, double py, double rx, double ry)
{
    int n = *s, lo = 0, hi = n;
    while (lo < hi) { /* lo = first index with sx >= px */
        int mid = lo + (hi - lo) / 2;
        if (sx[mid] < px)
            lo = mid + 1;
        else
            hi = mid;
    }
    if ((lo > 0 && sy[lo - 1] <= py) || (lo < n && sx[lo] == px && sy[lo] <= py))
        return 0; /* weakly dominated: nothing new */
    hi = lo;
    while (hi < n && sy[hi] >= py)
        hi++;
    double ytop = lo > 0 ? sy[lo - 1] : ry, xr = hi < n ? sx[hi] : rx;
    double gain = ((lo < hi ? sx[lo] : xr) - px) * (ytop - py);
    for (int t = lo; t < hi; t++)
        gain += ((t + 1 < hi ? sx[t + 1] : xr) - sx[t]) * (sy[t] - py);
    /* Replace the run [lo, hi) by p. */
    memmove(sx + lo + 1, sx + hi, (size_t)(n - hi) * sizeof *sx);
    memmove(sy + lo + 1, sy + hi, (size_t)(n - hi) * sizeof *sy);
    sx[lo] = px;
    sy[lo] = py;
    *s = n - (hi - lo) + 1;
    return gain;
}

double pareto_hypervolume(const double *obj, int n, int m, const double *ref, struct dse_err *e)
{
    if (m < 1 || m > 3) {
        dse_err_set(e, DSE_EINPUT, NULL, NULL,
                    "pareto_hypervolume: exact hypervolume supports only 2 and 3 objectives (and 1), got %d", m);
        return -1;
    }
    if (n < 0) {
        dse_err_set(e, DSE_EINPUT, NULL, NULL, "pareto_hypervolume: negative point count %d", n);
        return -1;
    }
    struct rec3 *r = malloc(((size_t)n + 1) * sizeof *r);
    if (!r)
        goto oom;
    int c = 0; /* points strictly better than ref in every objective (NaN rows fail the test) */
    for (int i = 0; i < n; i++) {
        const double *p = obj + (size_t)i * (size_t)m;
        int in = 1;
        for (int j = 0; j < m; j++)
            in &= p[j] < ref[j];
        if (!in)
            continue;
        r[c].k[0] = p[0];
        r[c].k[1] = m > 1 ? p[1] : 0;
        r[c].k[2] = m > 2 ? p[2] : 0;
        r[c++].i = i;
    }
    double hv = 0;
    if (c == 0 || m == 1) {
        double best = ref[0];
        for (int t = 0; t < c; t++)
            best = r[t].k[0] < best ? r[t].k[0] : best;
        hv = ref[0] - best;
    } else if (m == 2) {
        /* Sorted by f0, each point that lowers the running minimum of f1 adds the slab
         * [f0, ref0) x [f1, previous minimum). */
        if (sort_any(r, (size_t)c, sizeof *r, cmp_rec3_lex, NULL) < 0)
            goto oom;
        double ymin = ref[1];
        for (int t = 0; t < c; t++)
            if (r[t].k[1] < ymin) {
                hv += (ref[0] - r[t].k[0]) * (ymin - r[t].k[1]);
                ymin = r[t].k[1];
            }
    } else {
        /* Sweep f2 upward; between consecutive f2 levels the dominated volume grows by the area of
         * the 2-D front of the points seen so far times the height of the slab. */
        double *sx = malloc((size_t)c * 2 * sizeof *sx);
        if (!sx || sort_any(r, (size_t)c, sizeof *r, cmp_rec3_z, NULL) < 0) {
            free(sx);
            goto oom;
        }
        double *sy = sx + c, area = 0;
        int s = 0;
        for (int t = 0; t < c; t++) {
            area += stair_add(sx, sy, &s, r[t].k[0], r[t].k[1], ref[0], ref[1]);
            double znext = t + 1 < c ? r[t + 1].k[2] : ref[2];
            hv += area * (znext - r[t].k[2]);
        }
        free(sx);
    }
    free(r);
    return hv;
oom:
    free(r);
    dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "pareto_hypervolume: out of memory for %d points", n);
    return -1;
}

struct sorted {
    const double *key;
    long long point, idx;
    int m;
};

static int cmp_sorted(const void *a, const void *b)
{
    const struct sorted *x = a, *y = b;
    for (int k = 0; k < x->m; k++)
        if (x->key[k] != y->key[k])
            return x->key[k] < y->key[k] ? -1 : 1;
    return x->point < y->point ? -1 : x->point > y->point;
}

int pareto_sort(const double *obj, int m, const long long *point, long long *idx, long long n)
{
    struct sorted *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
    if (!v)
        return -1;
    for (long long i = 0; i < n; i++)
        v[i] = (struct sorted){obj + (size_t)idx[i] * m, point[idx[i]], idx[i], m};
    qsort(v, (size_t)n, sizeof *v, cmp_sorted);
    for (long long i = 0; i < n; i++)
        idx[i] = v[i].idx;
    free(v);
    return 0;
}
