/* sweep_run.c -- the searches: grid (every point), random (distinct uniform samples, seeded) and
 * NSGA-II (ask/tell, seeded). Points are evaluated in parallel blocks and handed to the sink in
 * point or ask order, so results do not depend on the thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>
#ifdef _OPENMP
#include <omp.h>
#endif

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

/* Evaluates points[0..n) (any order) into out[0..n), in parallel, one point at a time (a key's other
 * memory values are not wanted here). */
static int eval_points(const struct sweep_prep *p, const long long *pts, int n, int threads, struct sw_row *out,
                       struct dse_err *e)
{
    int failed = 0;
    (void)threads;
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads)
    for (int i = 0; i < n; i++) {
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
    return failed ? DSE_ERUNTIME : DSE_OK;
}

static int run_grid(const struct sweep_prep *p, const struct sweep_spec *sp, int threads, const struct sweep_sink *k,
                    int *stopped, struct dse_err *e)
{
    int n_mem = sweep_mem_count(sp);
    long long keys = sp->points / n_mem, per_block = BLOCK_ROWS / n_mem ? BLOCK_ROWS / n_mem : 1, done = 0;
    struct sw_row *rows = malloc(sizeof *rows * (size_t)(per_block * n_mem));
    char *todo = malloc((size_t)per_block);
    int rc = DSE_OK;
    if (!rows || !todo) {
        free(rows);
        free(todo);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    for (long long k0 = 0; k0 < keys && !rc; k0 += per_block) {
        if (k->stop && *k->stop) {
            *stopped = 1;
            break;
        }
        int nb = (int)(keys - k0 < per_block ? keys - k0 : per_block), failed = 0;
        for (int i = 0; i < nb; i++) { /* resume: a key is evaluated when any of its points is missing */
            todo[i] = 0;
            for (int m = 0; m < n_mem && !todo[i]; m++) {
                int f;
                double o[SW_MAX_OBJ];
                todo[i] = !k->stored || !k->stored(k->ctx, (k0 + i) * n_mem + m, &f, o);
            }
        }
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
        for (int i = 0; i < nb; i++) {
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
        if (failed) {
            rc = DSE_ERUNTIME;
            break;
        }
        /* Hand over the rows not already stored, in point order. */
        int w = 0;
        for (int i = 0; i < nb; i++)
            for (int m = 0; todo[i] && m < n_mem; m++) {
                int f;
                double o[SW_MAX_OBJ];
                if (k->stored && k->stored(k->ctx, (k0 + i) * n_mem + m, &f, o))
                    continue;
                if (w != i * n_mem + m)
                    rows[w] = rows[i * n_mem + m];
                w++;
            }
        if (w && (rc = k->rows(k->ctx, rows, w, e)))
            break;
        done += (long long)nb * n_mem;
        if (k->progress)
            k->progress(k->ctx, done, sp->points);
    }
    free(rows);
    free(todo);
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

static int run_random(const struct sweep_prep *p, const struct sweep_spec *sp, int threads,
                      const struct sweep_sink *k, int *stopped, struct dse_err *e)
{
    long long want = sweep_planned(sp), have = 0, done = 0;
    int rc = DSE_OK;
    struct pset seen;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    long long *pts = malloc(sizeof *pts * BLOCK_ROWS);
    struct sw_row *out = malloc(sizeof *out * BLOCK_ROWS);
    if (!r || !pts || !out || pset_init(&seen, (size_t)(want < PSET_START ? want : PSET_START))) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    gsl_rng_set(r, sp->seed);
    while (have < want && !rc) {
        if (k->stop && *k->stop) {
            *stopped = 1;
            break;
        }
        int n = 0, nd = 0;
        while (n < BLOCK_ROWS && have < want) { /* distinct points, in draw order */
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
        if ((rc = eval_points(p, pts, n, threads, out, e)))
            break;
        if (n && (rc = k->rows(k->ctx, out, n, e)))
            break;
        done += nd;
        if (k->progress)
            k->progress(k->ctx, done, want);
    }
out:
    free(seen.slot);
    free(pts);
    free(out);
    if (r)
        gsl_rng_free(r);
    return rc;
}

static int run_nsga2(const struct sweep_prep *p, const struct sweep_spec *sp, int threads, const struct sweep_sink *k,
                     int *stopped, struct dse_err *e)
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
    if (!gen || !pts || !out || !obj || !viol || !fresh ||
        pset_init(&emitted, (size_t)(planned < PSET_START ? planned : PSET_START))) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (;;) {
        if (k->stop && *k->stop) {
            *stopped = 1;
            break;
        }
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
        rc = eval_points(p, ev, ne, threads, out, e);
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
        if (rc || (w && (rc = k->rows(k->ctx, out, w, e))))
            break;
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
    return rc;
}

int sweep_run(struct sweep_prep *p, int threads, const struct sweep_sink *k, int *stopped, struct dse_err *e)
{
    const struct sweep_spec *sp = sweep_prep_spec(p);
    *stopped = 0;
    switch (sp->method) {
    case SEARCH_RANDOM: return run_random(p, sp, threads, k, stopped, e);
    case SEARCH_NSGA2: return run_nsga2(p, sp, threads, k, stopped, e);
    default: return run_grid(p, sp, threads, k, stopped, e);
    }
}
