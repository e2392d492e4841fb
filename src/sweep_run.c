/* sweep_run.c -- the searches: grid (every point), random (distinct uniform samples, seeded) and
 * NSGA-II (ask/tell, seeded). Points are evaluated in parallel blocks and handed to the sink in
 * point or ask order, so results do not depend on the thread count. With MPI ranks (dist.h) every
 * rank walks the same blocks; each evaluates its share of a block, the shares are gathered at rank 0
 * (every rank for NSGA-II, whose next generation needs every result) and rank 0's sink gets the rows
 * in the order one process would give them: the results do not depend on the rank count either. */
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
 * the rows of one key (its memory values) differ in little but feasibility. On the wire a row is
 *   u8 flags (1 feasible, 2 has a reason, 4 the reason of the row before), i64 point,
 *   [u16 length, the reason's bytes], u64 mask of the metrics that differ bitwise from the row before,
 *   and those metrics as doubles,
 * "the row before" being a row of NAN metrics and no reason at the start of each packed run (a key,
 * or a rank's share of points), so a run unpacks on its own. Same binary on every rank: host order. */
struct wire {
    unsigned char *b;
    size_t n, cap;
};

#define WIRE_ROW_MAX (1 + 8 + 2 + sizeof(((struct sw_row *)0)->reason) + 8 + 64 * 8)

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

static int pack_rows(struct wire *w, const struct sw_row *rows, int n, struct dse_err *e)
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
        uint64_t mask = 0;
        unsigned char *mp = o;
        o += 8;
        for (int m = 0; m < 64; m++) {
            const double *before = i ? &rows[i - 1].metric[m] : &nan;
            if (memcmp(&r->metric[m], before, sizeof(double))) {
                mask |= 1ULL << m;
                memcpy(o, &r->metric[m], 8);
                o += 8;
            }
        }
        memcpy(mp, &mask, 8);
        w->n = (size_t)(o - w->b);
    }
    return rc;
}

/* Reads n rows of one packed run from b[*at..len) into rows[0..n); the run was written by pack_rows. */
static int unpack_rows(const unsigned char *b, size_t len, size_t *at, struct sw_row *rows, int n, struct dse_err *e)
{
    size_t p = *at;
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
            memcpy(r->reason, rows[i - 1].reason, sizeof r->reason);
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
        uint64_t mask;
        if (p + 8 > len)
            goto short_read;
        memcpy(&mask, b + p, 8);
        p += 8;
        for (int m = 0; m < 64; m++)
            if (mask >> m & 1) {
                if (p + 8 > len)
                    goto short_read;
                memcpy(&r->metric[m], b + p, 8);
                p += 8;
            } else {
                r->metric[m] = i ? rows[i - 1].metric[m] : NAN;
            }
    }
    *at = p;
    return DSE_OK;
short_read:
    return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "MPI: a rank's rows arrived cut short or malformed");
}

/* Rank 0 also unpacks the rows and hands them to the sink (the database): it takes a smaller share
 * of each block, sized from its timings of the block before so that it finishes when the others do.
 * A share says only who evaluates a point, never what comes out. */
struct balance {
    int permille;             /* rank 0's share, in thousandths of an equal share (agreed each block) */
    double t_item, t_other;   /* rank 0: seconds per item it evaluated, seconds of unpacking and sink */
    double t0, t_evaluated, t_gathered;
    long long n, mine;        /* the block's items, rank 0's */
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
    if (flags[0])
        *stopped = 1;
    return flags[0];
}

/* The end of a block on rank 0: the share of the next one, balancing rank 0's evaluation plus its
 * overhead O against the others' evaluation: n0 t + O = (n - n0) t / (R - 1). */
static void round_end(const struct dist *d, struct balance *b)
{
    if (!d || d->size == 1 || d->rank != 0 || b->n <= 0)
        return;
    double t = now_s();
    if (b->mine > 0)
        b->t_item = (b->t_evaluated - b->t0) / (double)b->mine;
    b->t_other = t - b->t_gathered;
    if (b->t_item <= 0)
        return;
    double R = d->size, n = (double)b->n, n0 = (n * b->t_item - b->t_other * (R - 1)) / (b->t_item * R);
    double want = n0 <= 0 ? 0 : n0 >= n / R ? 1000 : 1000 * n0 / (n / R);
    b->permille = (int)((b->permille + want) / 2);
}

/* Evaluates this rank's share of points[0..n) (any order) into out[0..n), in parallel, one point at a
 * time (a key's other memory values are not wanted here); then every rank has the first failure, and
 * rank 0 (to_all: every rank) has all n rows. */
static int eval_points(const struct sweep_prep *p, const long long *pts, int n, int threads, const struct dist *d,
                       int to_all, struct balance *b, struct wire *w, struct wire *all, struct sw_row *out,
                       struct dse_err *e)
{
    int failed = 0;
    long long lo = 0, hi = n;
    (void)threads;
    if (d)
        dist_share(d, n, b->permille, d->rank, &lo, &hi);
    b->n = n;
    b->mine = hi - lo;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads)
    for (int i = (int)lo; i < (int)hi; i++) {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        struct dse_err le;
        if (failed || sweep_eval_point(p, pts[i], t, &out[i], &le) < 0) {
#pragma omp critical(sweep_err)
            if (!failed) {
                failed = 1;
                *e = le;
            }
            continue;
        }
    }
    b->t_evaluated = now_s();
    int rc = dist_agree_error(d, failed, e);
    if (rc || !d || d->size == 1)
        return rc;
    w->n = 0;
    if ((rc = pack_rows(w, out + lo, (int)(hi - lo), e)) ||
        (rc = dist_gather_bytes(d, w->b, w->n, &all->b, &all->cap, &all->n, to_all, e)))
        return rc;
    b->t_gathered = now_s();
    if (!to_all && d->rank != 0)
        return DSE_OK;
    size_t at = 0;
    for (int r = 0; r < d->size && !rc; r++) {
        dist_share(d, n, b->permille, r, &lo, &hi);
        rc = unpack_rows(all->b, all->n, &at, out + lo, (int)(hi - lo), e);
    }
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

/* Grid: this rank's keys [lo, hi) of a block (n_mem rows each, those marked todo evaluated) to rank 0. */
static int gather_keys(const struct dist *d, struct sw_row *rows, const char *todo, int nb, int n_mem, long long lo,
                       long long hi, struct balance *b, struct wire *w, struct wire *all, struct dse_err *e)
{
    int rc = DSE_OK;
    if (!d || d->size == 1)
        return DSE_OK;
    w->n = 0;
    for (long long i = lo; i < hi && !rc; i++)
        if (todo[i])
            rc = pack_rows(w, rows + (size_t)i * n_mem, n_mem, e);
    if (rc || (rc = dist_gather_bytes(d, w->b, w->n, &all->b, &all->cap, &all->n, 0, e)))
        return rc;
    b->t_gathered = now_s();
    if (d->rank != 0)
        return rc;
    size_t at = 0; /* the ranks' shares follow one another in key order */
    for (int i = 0; i < nb && !rc; i++)
        if (todo[i])
            rc = unpack_rows(all->b, all->n, &at, rows + (size_t)i * n_mem, n_mem, e);
    return rc;
}

static int run_grid(const struct sweep_prep *p, const struct sweep_spec *sp, int threads, const struct dist *d,
                    const struct sweep_sink *k, int *stopped, struct dse_err *e)
{
    int n_mem = sweep_mem_count(sp);
    /* a block per rank per round, so each rank's share is a whole block */
    long long keys = sp->points / n_mem, per_block = (BLOCK_ROWS / n_mem ? BLOCK_ROWS / n_mem : 1) * ranks(d), done = 0;
    struct sw_row *rows = malloc(sizeof *rows * (size_t)(per_block * n_mem));
    char *todo = malloc((size_t)per_block);
    struct wire w = {0}, all = {0};
    struct balance bal = {1000, 0, 0, 0, 0, 0, 0, 0};
    int rc = DSE_OK;
    if (!rows || !todo) {
        free(rows);
        free(todo);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    for (long long k0 = 0; k0 < keys && !rc; k0 += per_block) {
        if (round_begin(k, d, &bal, stopped, &rc, e))
            break;
        int nb = (int)(keys - k0 < per_block ? keys - k0 : per_block), failed = 0;
        long long lo = 0, hi = nb;
        if (d)
            dist_share(d, nb, bal.permille, d->rank, &lo, &hi);
        bal.n = nb;
        bal.mine = hi - lo;
        for (int i = 0; i < nb; i++) { /* resume: a key is evaluated when any of its points is missing */
            todo[i] = 0;
            for (int m = 0; m < n_mem && !todo[i]; m++) {
                int f;
                double o[SW_MAX_OBJ];
                todo[i] = !k->stored || !k->stored(k->ctx, (k0 + i) * n_mem + m, &f, o);
            }
        }
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
        for (int i = (int)lo; i < (int)hi; i++) {
            int t = 0;
#ifdef _OPENMP
            t = omp_get_thread_num();
#endif
            struct dse_err le;
            if (!todo[i] || failed)
                continue;
            if (sweep_eval_key(p, (k0 + i) * n_mem, t, rows + (size_t)i * n_mem, &le) < 0) {
#pragma omp critical(sweep_err)
                if (!failed) {
                    failed = 1;
                    *e = le;
                }
            }
        }
        bal.t_evaluated = now_s();
        if ((rc = dist_agree_error(d, failed, e)) ||
            (rc = gather_keys(d, rows, todo, nb, n_mem, lo, hi, &bal, &w, &all, e)))
            break;
        /* Hand over the rows not already stored, in point order. */
        int nw = 0;
        for (int i = 0; i < nb; i++)
            for (int m = 0; todo[i] && m < n_mem; m++) {
                int f;
                double o[SW_MAX_OBJ];
                if (k->stored && k->stored(k->ctx, (k0 + i) * n_mem + m, &f, o))
                    continue;
                if (nw != i * n_mem + m)
                    rows[nw] = rows[i * n_mem + m];
                nw++;
            }
        if ((rc = emit(k, d, rows, nw, e)))
            break;
        round_end(d, &bal);
        done += (long long)nb * n_mem;
        if (k->progress)
            k->progress(k->ctx, done, sp->points);
    }
    free(rows);
    free(todo);
    free(w.b);
    free(all.b);
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

static int run_random(const struct sweep_prep *p, const struct sweep_spec *sp, int threads, const struct dist *d,
                      const struct sweep_sink *k, int *stopped, struct dse_err *e)
{
    long long want = sweep_planned(sp), have = 0, done = 0;
    int rc = DSE_OK, block = BLOCK_ROWS * ranks(d);
    struct pset seen;
    struct wire w = {0}, all = {0};
    struct balance bal = {1000, 0, 0, 0, 0, 0, 0, 0};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    long long *pts = malloc(sizeof *pts * (size_t)block);
    struct sw_row *out = malloc(sizeof *out * (size_t)block);
    if (!r || !pts || !out || pset_init(&seen, (size_t)(want < PSET_START ? want : PSET_START))) {
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
        if ((rc = eval_points(p, pts, n, threads, d, 0, &bal, &w, &all, out, e)) || (rc = emit(k, d, out, n, e)))
            break;
        round_end(d, &bal);
        done += nd;
        if (k->progress)
            k->progress(k->ctx, done, want);
    }
out:
    free(seen.slot);
    free(pts);
    free(out);
    free(w.b);
    free(all.b);
    if (r)
        gsl_rng_free(r);
    return rc;
}

static int run_nsga2(const struct sweep_prep *p, const struct sweep_spec *sp, int threads, const struct dist *d,
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
    struct sw_row *out = malloc(sizeof *out * (size_t)pop);
    double *obj = malloc(sizeof *obj * (size_t)pop * sp->n_obj), *viol = malloc(sizeof *viol * (size_t)pop);
    int *fresh = malloc(sizeof *fresh * (size_t)pop);
    struct pset emitted = {0};
    struct wire wire = {0}, all = {0};
    struct balance bal = {1000, 0, 0, 0, 0, 0, 0, 0};
    if (!gen || !pts || !out || !obj || !viol || !fresh ||
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
        rc = eval_points(p, ev, ne, threads, d, 1, &bal, &wire, &all, out, e);
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
        if (rc || (rc = emit(k, d, out, w, e)))
            break;
        round_end(d, &bal);
        nsga2_tell(ga, obj, viol);
        done += n;
        if (k->progress)
            k->progress(k->ctx, done, planned);
    }
out:
    nsga2_free(ga);
    free(gen);
    free(pts);
    free(out);
    free(obj);
    free(viol);
    free(fresh);
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
