/* sweep_run.c -- the searches: grid (every point), random (distinct uniform samples, seeded) and
 * NSGA-II (ask/tell, seeded). Points are evaluated in parallel blocks and handed to the sink in
 * point or ask order, so results do not depend on the thread count; one thread hands block b to the
 * sink while the others evaluate block b + 1. With MPI ranks (dist.h) every rank walks the same
 * blocks; each evaluates the items dealt to it, the rows are gathered at rank 0 (every rank for
 * NSGA-II, whose next generation needs every result) and rank 0's sink gets them in the order one
 * process would give them: the results do not depend on the rank count either. */
#include <math.h>
#include <stdint.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dist.h"
#include "nsga2.h"
#include "sweep.h"

#define BLOCK_ROWS 8192
#define MPI_ROUND_ROWS 65536 /* two buffers of them: 95 MB */
/* A point set starts with room for this many points and doubles as it fills, so its memory follows
 * the distinct points seen (at most the space, or the plan), never the plan alone. */
#define PSET_START (1 << 16)

/* A set of point indices (open addressing, linear probing). */
struct pset {
    long long *slot;
    size_t cap, n;
};

static int pset_init(struct pset *s, size_t expect)
{
    s->cap = 64;
    while (s->cap < expect * 2)
        s->cap *= 2;
    s->n = 0;
    s->slot = malloc(s->cap * sizeof *s->slot);
    if (!s->slot)
        return -1;
    memset(s->slot, 0xff, s->cap * sizeof *s->slot); /* -1: empty */
    return 0;
}

/* Inserts x; returns 1 when it was new, 0 when present, -1 when out of memory. */
static int pset_add(struct pset *s, long long x)
{
    if ((s->n + 1) * 2 > s->cap) {
        struct pset g;
        if (pset_init(&g, s->cap))
            return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slot[i] >= 0)
                pset_add(&g, s->slot[i]);
        free(s->slot);
        *s = g;
    }
    size_t h = (size_t)((unsigned long long)x * 0x9E3779B97F4A7C15ULL) & (s->cap - 1);
    while (s->slot[h] >= 0) {
        if (s->slot[h] == x)
            return 0;
        h = (h + 1) & (s->cap - 1);
    }
    s->slot[h] = x;
    s->n++;
    return 1;
}

long long sweep_planned(const struct sweep_spec *sp)
{
    switch (sp->method) {
    case SEARCH_RANDOM: return sp->samples < sp->points ? sp->samples : sp->points;
    case SEARCH_NSGA2: return sp->population * (sp->generations + 1);
    default: return sp->points;
    }
}

/* Rows between ranks: a row takes 728 bytes in memory, mostly NAN metrics and an unused reason, and
 * the rows of one key (its memory values) differ in little but feasibility. Only the metrics the
 * spec stores travel (sp->stored: objectives, constraints, error bars, its "store" list), which is
 * all the sink and NSGA-II read; the others of an unpacked row are left as they were. On the wire a
 * row is
 *   u8 flags (1 feasible, 2 has a reason, 4 the reason of the row before), i64 point,
 *   [u16 length, the reason's bytes], two u64 masks of the stored metrics (bit j of the spec's j-th
 *   stored metric) that differ bitwise from the row before, and those metrics as doubles,
 * "the row before" being a row of NAN metrics and no reason at the start of each packed run (a grid
 * key's rows, or one point), so a run unpacks on its own. Same binary on every rank: host order.
 * Carrying 6 metrics instead of 64 nearly halved rank 0's unpacking of the 10M grid (perf: 1.7 s to
 * 1.0 s of its time). */
struct wire {
    unsigned char *b;
    size_t n, cap;
};

#define WIRE_ROW_MAX (1 + 8 + 2 + sizeof(((struct sw_row *)0)->reason) + 16 + METRIC_MAX * 8)

static int wire_reserve(struct wire *w, size_t more, struct dse_err *e)
{
    if (w->n + more <= w->cap)
        return DSE_OK;
    size_t cap = w->cap ? w->cap : 1 << 16;
    while (cap < w->n + more)
        cap *= 2;
    unsigned char *p = realloc(w->b, cap);
    if (!p)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    w->b = p;
    w->cap = cap;
    return DSE_OK;
}

/* The registry indices of the metrics that travel, ascending, into idx; returns how many. */
static int wire_metrics(const struct sweep_spec *sp, int *idx)
{
    int n = 0;
    for (int m = 0; m < METRIC_MAX && m < metric_count; m++)
        if (sp->stored[m])
            idx[n++] = m;
    return n;
}

/* Packs rows[0..n) as one run; idx[0..nk): wire_metrics'. */
static int pack_rows(struct wire *w, const int *idx, int nk, const struct sw_row *rows, int n, struct dse_err *e)
{
    int rc = wire_reserve(w, (size_t)n * WIRE_ROW_MAX, e);
    const double nan = NAN;
    const char *prev_reason = NULL;
    for (int i = 0; i < n && !rc; i++) {
        const struct sw_row *r = &rows[i];
        unsigned char *o = w->b + w->n, *flags = o++;
        int has = r->reason[0] != 0, same = has && prev_reason && !strcmp(prev_reason, r->reason);
        *flags = (unsigned char)((r->feasible ? 1 : 0) | (has ? 2 : 0) | (same ? 4 : 0));
        memcpy(o, &r->point, 8);
        o += 8;
        if (has && !same) {
            size_t len = strnlen(r->reason, sizeof r->reason - 1);
            uint16_t l16 = (uint16_t)len;
            memcpy(o, &l16, 2);
            memcpy(o + 2, r->reason, len);
            o += 2 + len;
        }
        prev_reason = has ? r->reason : NULL;
        uint64_t mask[2] = {0, 0};
        unsigned char *mp = o;
        o += 16;
        for (int j = 0; j < nk; j++) {
            int m = idx[j];
            const double *before = i ? &rows[i - 1].metric[m] : &nan;
            if (memcmp(&r->metric[m], before, sizeof(double))) {
                mask[j >> 6] |= 1ULL << (j & 63);
                memcpy(o, &r->metric[m], 8);
                o += 8;
            }
        }
        memcpy(mp, mask, 16);
        w->n = (size_t)(o - w->b);
    }
    return rc;
}

/* Reads n rows of one packed run from b[*at..len) into rows[0..n); the run was written by pack_rows. */
static int unpack_rows(const unsigned char *b, size_t len, size_t *at, const int *idx, int nk, struct sw_row *rows,
                       int n, struct dse_err *e)
{
    size_t p = *at;
    uint64_t known[2] = {0, 0};
    for (int j = 0; j < nk; j++)
        known[j >> 6] |= 1ULL << (j & 63);
    for (int i = 0; i < n; i++) {
        struct sw_row *r = &rows[i];
        if (p + 9 > len)
            goto short_read;
        unsigned flags = b[p++];
        r->feasible = flags & 1;
        memcpy(&r->point, b + p, 8);
        p += 8;
        r->reason[0] = 0;
        if ((flags & 6) == 6) {
            if (!i || !rows[i - 1].reason[0])
                goto short_read;
            memcpy(r->reason, rows[i - 1].reason, strlen(rows[i - 1].reason) + 1);
        } else if (flags & 2) {
            uint16_t l16;
            if (p + 2 > len)
                goto short_read;
            memcpy(&l16, b + p, 2);
            if (l16 >= sizeof r->reason || p + 2 + l16 > len)
                goto short_read;
            memcpy(r->reason, b + p + 2, l16);
            r->reason[l16] = 0;
            p += 2 + (size_t)l16;
        }
        uint64_t mask[2];
        if (p + 16 > len)
            goto short_read;
        memcpy(mask, b + p, 16);
        p += 16;
        if ((mask[0] & ~known[0]) || (mask[1] & ~known[1]))
            goto short_read;
        for (int j = 0; j < nk; j++) {
            int m = idx[j];
            if (mask[j >> 6] >> (j & 63) & 1) {
                if (p + 8 > len)
                    goto short_read;
                memcpy(&r->metric[m], b + p, 8);
                p += 8;
            } else {
                r->metric[m] = i ? rows[i - 1].metric[m] : NAN;
            }
        }
    }
    *at = p;
    return DSE_OK;
short_read:
    return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "MPI: a rank's rows arrived cut short or malformed");
}

/* Rank 0 also unpacks the rows and hands them to the sink (the database): it keeps a smaller share of
 * each block, sized from its totals so far so that it finishes when the others do (docs/mpi.md).
 * A share says only who evaluates a point, never what comes out. */
struct balance {
    int permille;             /* rank 0's share, in thousandths of an equal share (agreed each block) */
    int threads;
    double t0, t_evaluated, t_gathered, t_sink; /* this block's times; t_sink: the block before's sink */
    long long n, mine;        /* the block's items, rank 0's */
    /* rank 0's totals over the blocks so far: evaluation seconds and items, overhead seconds, items
     * of the blocks, blocks (a block's cost swings with the region of the space it covers; totals,
     * with the items dealt round-robin, do not) */
    double busy, over, items, blocks, own;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The start of a block: whether the run stops (the stop flag, Ctrl-C, of any rank stops every rank),
 * and rank 0's share, which it decides. */
static int round_begin(const struct sweep_sink *k, const struct dist *d, struct balance *b, int *stopped, int *rc,
                       struct dse_err *e)
{
    int flags[2] = {k->stop && *k->stop, d && d->rank == 0 ? b->permille : 0};
    if ((*rc = dist_max(d, flags, 2, e)))
        return 1;
    b->permille = flags[1];
    b->t0 = now_s();
    b->t_sink = 0;
    if (flags[0])
        *stopped = 1;
    return flags[0];
}

/* The end of a block on rank 0: the share of the next one, balancing rank 0's evaluation plus its
 * overhead O per block (the sink, which runs beside the evaluation, and the unpacking) against the
 * others' evaluation: n0 t + O = (n - n0) t / (R - 1), with t the seconds per item. */
static void round_end(const struct dist *d, struct balance *b)
{
    if (!d || d->size == 1 || d->rank != 0 || b->n <= 0)
        return;
    double busy = b->t_evaluated - b->t0 - (b->threads == 1 ? b->t_sink : 0);
    b->busy += busy > 0 ? busy : 0;
    b->own += (double)b->mine;
    b->over += b->t_sink + (now_s() - b->t_gathered);
    b->items += (double)b->n;
    b->blocks++;
    if (b->own <= 0 || b->busy <= 0)
        return;
    double t = b->busy / b->own, O = b->over / b->blocks, n = b->items / b->blocks, R = d->size;
    double n0 = (n * t - O * (R - 1)) / (t * R);
    b->permille = n0 <= 0 ? 0 : n0 >= n / R ? 1000 : (int)(1000 * n0 / (n / R));
}

/* Whether this rank evaluates item i of the batch (dist_owner); one process evaluates everything. */
static int mine(const struct dist *d, long long i, const struct balance *b)
{
    return !d || d->size == 1 || dist_owner(d, i, b->permille) == d->rank;
}

/* The items of rank 0 in a batch of n (those wanted), for the balance. */
static long long root_items(const struct dist *d, int n, const char *want, const struct balance *b)
{
    long long c = 0;
    for (int i = 0; d && d->size > 1 && i < n; i++)
        c += (!want || want[i]) && dist_owner(d, i, b->permille) == 0;
    return c;
}

/* The rows of a batch's items to rank 0 (to_all: every rank): item i is rows[i * per, (i + 1) * per),
 * evaluated by its owner when want[i] (want NULL: every item). Each owner packs its items in order,
 * one packed run per item, into w; the receivers get every rank's bytes in all, rank r's at
 * [seg[r], seg[r + 1]) (seg: ranks + 1 entries), for unpack_dealt. */
static int gather_dealt(const struct dist *d, const struct sweep_spec *sp, const struct sw_row *rows, int per,
                        const char *want, int n, int to_all, struct balance *b, struct wire *w, struct wire *all,
                        size_t *seg, struct dse_err *e)
{
    int rc = DSE_OK, idx[METRIC_MAX], nk = wire_metrics(sp, idx);
    w->n = 0;
    for (int i = 0; i < n && !rc; i++)
        if ((!want || want[i]) && mine(d, i, b))
            rc = pack_rows(w, idx, nk, rows + (size_t)i * per, per, e);
    if (!rc)
        rc = dist_gather_bytes(d, w->b, w->n, &all->b, &all->cap, &all->n, seg, to_all, e);
    b->t_gathered = now_s();
    return rc;
}

/* The gathered rows back in place (the shares as dealt with root_permille). */
static int unpack_dealt(const struct dist *d, const struct sweep_spec *sp, struct sw_row *rows, int per,
                        const char *want, int n, int root_permille, const struct wire *all, const size_t *seg,
                        struct dse_err *e)
{
    int idx[METRIC_MAX], nk = wire_metrics(sp, idx);
    size_t *cur = malloc(sizeof *cur * (size_t)d->size);
    int rc = cur ? DSE_OK : dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (int r = 0; cur && r < d->size; r++)
        cur[r] = seg[r];
    for (int i = 0; i < n && !rc; i++)
        if (!want || want[i]) {
            int r = dist_owner(d, i, root_permille);
            rc = unpack_rows(all->b, seg[r + 1], &cur[r], idx, nk, rows + (size_t)i * per, per, e);
        }
    free(cur);
    return rc;
}

/* Rows of the block before (random, NSGA-II), handed to the sink by one thread while the others
 * evaluate the next block. */
struct held {
    const struct sw_row *rows;
    int n;
    long long done, total; /* the progress once handed over; done < 0: nothing held */
};

static int emit(const struct sweep_sink *k, const struct dist *d, const struct sw_row *rows, int n, struct dse_err *e);

static int flush_held(const struct sweep_sink *k, const struct dist *d, struct held *h, struct balance *b,
                      struct dse_err *e)
{
    double t = now_s();
    int rc = emit(k, d, h->rows, h->n, e);
    if (!rc && k->progress && (!d || d->rank == 0))
        k->progress(k->ctx, h->done, h->total);
    h->n = 0;
    h->done = -1;
    b->t_sink = now_s() - t;
    return rc;
}

/* Evaluates this rank's items of points[0..n) (any order) into out[0..n), in parallel, one point at a
 * time (a key's other memory values are not wanted here), while one thread hands the block before (h)
 * to the sink; then every rank has the first failure, and rank 0 (to_all: every rank) has all n rows. */
static int eval_points(struct sweep_prep *p, const long long *pts, int n, int threads, const struct dist *d,
                       int to_all, const struct sweep_sink *k, struct held *h, struct balance *b, struct wire *w,
                       struct wire *all, char *skip, struct sw_row *out, struct dse_err *e)
{
    int failed = 0, sink_rc = DSE_OK;
    struct dse_err se;
    (void)threads;
    b->n = n;
    b->mine = root_items(d, n, NULL, b);
    for (int i = 0; i < n; i++)
        skip[i] = !mine(d, i, b);
    /* in chunks whose graphs are built before each parallel region (sweep_stage_points); the sink takes
     * the block before during the first */
    for (int c0 = 0, c1; c0 < n && !failed; c0 = c1) {
        long long got = sweep_stage_points(p, pts + c0, n - c0, skip + c0, e);
        if (got < 0) {
            failed = 1;
            break;
        }
        c1 = c0 + (int)got;
#pragma omp parallel num_threads(threads)
        {
#pragma omp single nowait
            if (c0 == 0 && h->done >= 0)
                sink_rc = flush_held(k, d, h, b, &se);
#pragma omp for schedule(dynamic, 8)
            for (int i = c0; i < c1; i++) {
                int t = 0;
#ifdef _OPENMP
                t = omp_get_thread_num();
#endif
                struct dse_err le;
                if (failed || skip[i])
                    continue;
                if (sweep_eval_point(p, pts[i], t, &out[i], &le) < 0) {
#pragma omp critical(sweep_err)
                    if (!failed) {
                        failed = 1;
                        *e = le;
                    }
                }
            }
        }
    }
    if (h->done >= 0 && !sink_rc) /* no region ran (no points, or the first chunk's graphs failed) */
        sink_rc = flush_held(k, d, h, b, &se);
    b->t_evaluated = now_s();
    if (sink_rc && !failed) { /* the database refused the block before: every rank stops */
        failed = 1;
        *e = se;
    }
    int rc = dist_agree_error(d, failed, e);
    if (rc || !d || d->size == 1)
        return rc;
    size_t *seg = malloc(sizeof *seg * (size_t)(d->size + 1));
    if (!seg)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    const struct sweep_spec *sp = sweep_prep_spec(p);
    if (!(rc = gather_dealt(d, sp, out, 1, NULL, n, to_all, b, w, all, seg, e)) && (to_all || d->rank == 0))
        rc = unpack_dealt(d, sp, out, 1, NULL, n, b->permille, all, seg, e);
    free(seg);
    return rc;
}

/* Rank 0 hands rows to the sink; the other ranks only evaluate. */
static int emit(const struct sweep_sink *k, const struct dist *d, const struct sw_row *rows, int n, struct dse_err *e)
{
    return n && (!d || d->rank == 0) ? k->rows(k->ctx, rows, n, e) : DSE_OK;
}

static int ranks(const struct dist *d)
{
    return d ? d->size : 1;
}

/* Items (grid keys of rows_per_item rows, or points) of a round: a block of BLOCK_ROWS rows in one
 * process; across ranks four blocks per rank, at most MPI_ROUND_ROWS rows, so that a round's work
 * evens out over more items and the rounds' meetings cost less. */
static long long round_items(const struct dist *d, int rows_per_item)
{
    long long block = BLOCK_ROWS / rows_per_item ? BLOCK_ROWS / rows_per_item : 1, R = ranks(d);
    if (R == 1)
        return block;
    long long n = block * R * 4, cap = MPI_ROUND_ROWS / rows_per_item;
    return n <= cap ? n : cap > block ? cap : block;
}

static struct balance balance_start(int threads)
{
    struct balance b = {0};
    b.permille = 1000; /* an equal share until rank 0 has timed one */
    b.threads = threads;
    return b;
}

/* A grid block evaluated and waiting for the sink, which takes it while the next block is evaluated:
 * on rank 0 of several it first unpacks the other ranks' rows, then drops the rows a resumed run
 * already has, then hands the rest over in point order. */
struct pending {
    int on;
    struct sw_row *rows;
    char *todo, *skip;   /* keys to evaluate (resume); those not this rank's either */
    long long k0, done;  /* the block's first key; the progress once it is handed over */
    int nb, permille;    /* keys; rank 0's share as dealt */
    struct wire all;     /* the ranks' packed rows (rank 0 of several) */
    size_t *seg;
};

static int flush(const struct sweep_sink *k, const struct dist *d, const struct sweep_spec *sp, struct pending *pd,
                 struct balance *b, struct dse_err *e)
{
    double t = now_s();
    int rc = DSE_OK, n_mem = sweep_mem_count(sp), nw = 0;
    pd->on = 0;
    if (d && d->rank != 0)
        return DSE_OK;
    if (d && d->size > 1)
        rc = unpack_dealt(d, sp, pd->rows, n_mem, pd->todo, pd->nb, pd->permille, &pd->all, pd->seg, e);
    for (int i = 0; i < pd->nb && !rc; i++)
        for (int m = 0; pd->todo[i] && m < n_mem; m++) {
            int f;
            double o[SW_MAX_OBJ];
            if (k->stored && k->stored(k->ctx, (pd->k0 + i) * n_mem + m, &f, o))
                continue;
            if (nw != i * n_mem + m)
                pd->rows[nw] = pd->rows[i * n_mem + m];
            nw++;
        }
    if (!rc)
        rc = emit(k, d, pd->rows, nw, e);
    if (!rc && k->progress)
        k->progress(k->ctx, pd->done, sp->points);
    b->t_sink = now_s() - t;
    return rc;
}

static int run_grid(struct sweep_prep *p, const struct sweep_spec *sp, int threads, const struct dist *d,
                    const struct sweep_sink *k, int *stopped, struct dse_err *e)
{
    int n_mem = sweep_mem_count(sp), R = ranks(d);
    long long keys = sp->points / n_mem, done = 0, per_block = round_items(d, n_mem);
    struct pending pend[2];
    struct wire w = {0};
    struct balance bal = balance_start(threads);
    int rc = DSE_OK, cur = 0;
    memset(pend, 0, sizeof pend);
    for (int j = 0; j < 2 && !rc; j++) {
        pend[j].rows = malloc(sizeof(struct sw_row) * (size_t)(per_block * n_mem));
        pend[j].todo = malloc((size_t)per_block);
        pend[j].skip = malloc((size_t)per_block);
        pend[j].seg = malloc(sizeof(size_t) * (size_t)(R + 1));
        if (!pend[j].rows || !pend[j].todo || !pend[j].skip || !pend[j].seg)
            rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    for (long long k0 = 0; k0 < keys && !rc; k0 += per_block, cur ^= 1) {
        if (round_begin(k, d, &bal, stopped, &rc, e))
            break;
        struct pending *pc = &pend[cur], *pp = &pend[cur ^ 1];
        struct sw_row *rows = pc->rows;
        char *todo = pc->todo, *skip = pc->skip;
        int nb = (int)(keys - k0 < per_block ? keys - k0 : per_block), failed = 0, sink_rc = DSE_OK;
        struct dse_err se;
        for (int i = 0; i < nb; i++) { /* resume: a key is evaluated when any of its points is missing */
            todo[i] = 0;
            for (int m = 0; m < n_mem && !todo[i]; m++) {
                int f;
                double o[SW_MAX_OBJ];
                todo[i] = !k->stored || !k->stored(k->ctx, (k0 + i) * n_mem + m, &f, o);
            }
        }
        bal.n = nb;
        bal.mine = root_items(d, nb, todo, &bal);
        for (int i = 0; i < nb; i++)
            skip[i] = !todo[i] || !mine(d, i, &bal);
        /* in chunks whose graphs are built before each parallel region (sweep_stage_keys); the sink
         * takes the block before during the first */
        for (int c0 = 0, c1; c0 < nb && !failed; c0 = c1) {
            long long got = sweep_stage_keys(p, k0 + c0, nb - c0, skip + c0, e);
            if (got < 0) {
                failed = 1;
                break;
            }
            c1 = c0 + (int)got;
#pragma omp parallel num_threads(threads)
            {
#pragma omp single nowait
                if (c0 == 0 && pp->on)
                    sink_rc = flush(k, d, sp, pp, &bal, &se);
#pragma omp for schedule(dynamic, 4)
                for (int i = c0; i < c1; i++) {
                    int t = 0;
#ifdef _OPENMP
                    t = omp_get_thread_num();
#endif
                    struct dse_err le;
                    if (skip[i] || failed)
                        continue;
                    if (sweep_eval_key(p, (k0 + i) * n_mem, t, rows + (size_t)i * n_mem, &le) < 0) {
#pragma omp critical(sweep_err)
                        if (!failed) {
                            failed = 1;
                            *e = le;
                        }
                    }
                }
            }
        }
        if (pp->on && !sink_rc) /* no region ran (no keys, or the first chunk's graphs failed) */
            sink_rc = flush(k, d, sp, pp, &bal, &se);
        bal.t_evaluated = now_s();
        if (sink_rc && !failed) { /* the database refused the block before: every rank stops */
            failed = 1;
            *e = se;
        }
        if ((rc = dist_agree_error(d, failed, e)) ||
            (R > 1 && (rc = gather_dealt(d, sp, rows, n_mem, todo, nb, 0, &bal, &w, &pc->all, pc->seg, e))))
            break;
        done += (long long)nb * n_mem;
        pc->on = 1;
        pc->k0 = k0;
        pc->nb = nb;
        pc->permille = bal.permille;
        pc->done = done;
        round_end(d, &bal);
    }
    if (!rc && pend[cur ^ 1].on) /* the last block (or the one before a stop) */
        rc = flush(k, d, sp, &pend[cur ^ 1], &bal, e);
    for (int j = 0; j < 2; j++) {
        free(pend[j].rows);
        free(pend[j].todo);
        free(pend[j].skip);
        free(pend[j].seg);
        free(pend[j].all.b);
    }
    free(w.b);
    return rc;
}

/* Draws a uniformly random point: one uniform index per axis. */
static long long draw(gsl_rng *r, const struct sweep_spec *sp)
{
    long long pt = 0;
    for (int a = 0; a < sp->n_axes; a++)
        pt = pt * sp->axes[a].n + (long long)gsl_rng_uniform_int(r, (unsigned long)sp->axes[a].n);
    return pt;
}

static int run_random(struct sweep_prep *p, const struct sweep_spec *sp, int threads, const struct dist *d,
                      const struct sweep_sink *k, int *stopped, struct dse_err *e)
{
    long long want = sweep_planned(sp), have = 0, done = 0;
    int rc = DSE_OK, block = (int)round_items(d, 1);
    struct pset seen;
    struct wire w = {0}, all = {0};
    struct balance bal = balance_start(threads);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    long long *pts = malloc(sizeof *pts * (size_t)block);
    char *skip = malloc((size_t)block);
    struct sw_row *buf[2] = {malloc(sizeof(struct sw_row) * (size_t)block), malloc(sizeof(struct sw_row) * (size_t)block)};
    struct held h = {NULL, 0, -1, want};
    int cur = 0;
    if (!r || !pts || !skip || !buf[0] || !buf[1] || pset_init(&seen, (size_t)(want < PSET_START ? want : PSET_START))) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    gsl_rng_set(r, sp->seed);
    while (have < want && !rc) {
        if (round_begin(k, d, &bal, stopped, &rc, e))
            break;
        int n = 0, nd = 0;
        while (n < block && have < want) { /* distinct points, in draw order */
            long long pt = draw(r, sp);
            int added = pset_add(&seen, pt);
            if (added < 0) {
                rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
                goto out;
            }
            if (!added)
                continue;
            have++;
            nd++;
            int f;
            double o[SW_MAX_OBJ];
            if (!k->stored || !k->stored(k->ctx, pt, &f, o))
                pts[n++] = pt;
        }
        if ((rc = eval_points(p, pts, n, threads, d, 0, k, &h, &bal, &w, &all, skip, buf[cur], e)))
            break;
        round_end(d, &bal);
        done += nd;
        h.rows = buf[cur];
        h.n = n;
        h.done = done;
        cur ^= 1;
    }
    if (!rc && h.done >= 0) /* the last block (or the one before a stop) */
        rc = flush_held(k, d, &h, &bal, e);
out:
    free(seen.slot);
    free(pts);
    free(skip);
    free(buf[0]);
    free(buf[1]);
    free(w.b);
    free(all.b);
    if (r)
        gsl_rng_free(r);
    return rc;
}

static int run_nsga2(struct sweep_prep *p, const struct sweep_spec *sp, int threads, const struct dist *d,
                     const struct sweep_sink *k, int *stopped, struct dse_err *e)
{
    int n_values[SW_MAX_AXES], pop = (int)sp->population, rc;
    for (int a = 0; a < sp->n_axes; a++)
        n_values[a] = sp->axes[a].n;
    struct nsga2_cfg cfg = {sp->n_axes, n_values, sp->n_obj, pop, (int)sp->generations, sp->seed, 0, 0};
    struct nsga2 *ga = NULL;
    if (sp->n_axes < 1)
        return dse_err_set(e, DSE_EINPUT, sp->path, "search", "nsga2 needs at least one axis");
    if ((rc = nsga2_create(&cfg, &ga, e)))
        return rc;
    int *gen = malloc(sizeof *gen * (size_t)pop * sp->n_axes);
    long long *pts = malloc(sizeof *pts * (size_t)pop), done = 0, planned = sweep_planned(sp);
    struct sw_row *buf[2] = {malloc(sizeof(struct sw_row) * (size_t)pop), malloc(sizeof(struct sw_row) * (size_t)pop)};
    struct held h = {NULL, 0, -1, planned};
    int cur = 0;
    double *obj = malloc(sizeof *obj * (size_t)pop * sp->n_obj), *viol = malloc(sizeof *viol * (size_t)pop);
    int *fresh = malloc(sizeof *fresh * (size_t)pop);
    char *skip = malloc((size_t)pop);
    struct pset emitted = {0};
    struct wire wire = {0}, all = {0};
    struct balance bal = balance_start(threads);
    if (!gen || !pts || !buf[0] || !buf[1] || !obj || !viol || !fresh || !skip ||
        pset_init(&emitted, (size_t)(planned < PSET_START ? planned : PSET_START))) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (;;) {
        if (round_begin(k, d, &bal, stopped, &rc, e))
            break;
        int n = nsga2_ask(ga, gen, pop);
        if (n < 0) {
            rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "nsga2: %s", nsga2_error(ga));
            break;
        }
        if (n == 0)
            break;
        int ne = 0;
        for (int i = 0; i < n; i++) {
            long long pt = 0;
            for (int a = 0; a < sp->n_axes; a++)
                pt = pt * sp->axes[a].n + gen[(size_t)i * sp->n_axes + a];
            pts[i] = pt;
            int f;
            fresh[i] = !(k->stored && k->stored(k->ctx, pt, &f, obj + (size_t)i * sp->n_obj));
            if (!fresh[i])
                viol[i] = f ? 0 : 1;
        }
        /* Evaluate the fresh genomes (gathered at the front of a copy). */
        long long *ev = malloc(sizeof *ev * (size_t)n);
        int *where = malloc(sizeof *where * (size_t)n);
        if (!ev || !where) {
            free(ev);
            free(where);
            rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
            break;
        }
        for (int i = 0; i < n; i++)
            if (fresh[i]) {
                where[ne] = i;
                ev[ne++] = pts[i];
            }
        struct sw_row *out = buf[cur];
        rc = eval_points(p, ev, ne, threads, d, 1, k, &h, &bal, &wire, &all, skip, out, e);
        int w = 0;
        for (int j = 0; j < ne && !rc; j++) {
            int i = where[j];
            sweep_objectives(sp, &out[j], obj + (size_t)i * sp->n_obj);
            viol[i] = out[j].feasible ? 0 : 1;
            if (!out[j].feasible)
                for (int o = 0; o < sp->n_obj; o++)
                    obj[(size_t)i * sp->n_obj + o] = 0;
            int added = pset_add(&emitted, out[j].point);
            if (added < 0)
                rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
            else if (added)
                out[w++] = out[j];
        }
        free(ev);
        free(where);
        if (rc)
            break;
        round_end(d, &bal);
        nsga2_tell(ga, obj, viol);
        done += n;
        h.rows = out; /* the sink takes them while the next generation is evaluated */
        h.n = w;
        h.done = done;
        cur ^= 1;
    }
    if (!rc && h.done >= 0) /* the last generation (or the one before a stop) */
        rc = flush_held(k, d, &h, &bal, e);
out:
    nsga2_free(ga);
    free(gen);
    free(pts);
    free(buf[0]);
    free(buf[1]);
    free(obj);
    free(viol);
    free(fresh);
    free(skip);
    free(emitted.slot);
    free(wire.b);
    free(all.b);
    return rc;
}

int sweep_run(struct sweep_prep *p, int threads, const struct dist *d, const struct sweep_sink *k, int *stopped,
              struct dse_err *e)
{
    const struct sweep_spec *sp = sweep_prep_spec(p);
    *stopped = 0;
    switch (sp->method) {
    case SEARCH_RANDOM: return run_random(p, sp, threads, d, k, stopped, e);
    case SEARCH_NSGA2: return run_nsga2(p, sp, threads, d, k, stopped, e);
    default: return run_grid(p, sp, threads, d, k, stopped, e);
    }
}
