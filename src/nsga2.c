/* nsga2.c -- NSGA-II with constrained domination over discrete axes (Deb et al., IEEE TEC 6(2), 2002).
 *
 * One step: binary tournaments on (rank, crowding) pick parents; pairs are crossed uniformly (each
 * gene from either parent with probability 1/2, the second child taking the other) with probability
 * p_crossover; each gene mutates with probability p_mutation to a uniformly random different value;
 * parents and offspring are then ranked together and the best population of them survive: whole
 * fronts in rank order, the last one cut by crowding distance (elitist mu + lambda).
 *
 * One change for discrete spaces: repeats of a genome already in the candidate set (the same design
 * evaluated twice) rank behind the distinct genomes of their front and do not count in its crowding
 * distances. Without it, copies of front members fill the population and crowd out the rest of the
 * front (on the 1000-point test problem, about 26 distinct genomes of 40 survived and the front of 33
 * was never complete). Ranks are untouched, so constrained domination still decides between fronts. */
#include "nsga2.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "pareto.h"

struct nsga2 {
    int na, no, n, gens;
    int nv[NSGA2_MAX_AXES];
    double pc, pm;
    /* The generator lives here, its state malloc'd by us: gsl_rng_alloc would call GSL's error
     * handler (abort by default) when out of memory. */
    gsl_rng rng;
    int gen;        /* offspring generations completed */
    int np;         /* parents: 0 until the initial population is told, then n */
    int have_batch; /* the batch of the current step exists */
    int told;       /* rows of the batch told so far */
    int asked;      /* rows handed out by the last ask, awaiting their tell */
    int failed;
    struct dse_err err;
    /* parents (n rows) */
    int *pg;
    double *po, *pv, *pcrowd;
    int *prank;
    /* current batch (n rows) */
    int *bg;
    double *bo, *bv;
    /* parents + offspring and ranking scratch (2n rows) */
    int *mg, *mrank, *fidx, *frank, *fcnt, *ford;
    double *mo, *mv, *mcrowd, *fobj, *dist;
    char *mdup;
    struct cand *cand;
    struct gkey *gkey;
};

struct cand {
    int rank, dup;
    double crowd;
    int i;
};

struct gkey {
    const int *g;
    int na, i;
};

static int check_cfg(const struct nsga2_cfg *c, struct dse_err *e)
{
    if (!c)
        return dse_err_set(e, DSE_EINPUT, NULL, "nsga2", "no configuration");
    if (c->n_axes < 1 || c->n_axes > NSGA2_MAX_AXES)
        return dse_err_set(e, DSE_EINPUT, NULL, "nsga2", "n_axes must be 1 to %d (got %d)", NSGA2_MAX_AXES, c->n_axes);
    if (!c->n_values)
        return dse_err_set(e, DSE_EINPUT, NULL, "nsga2", "n_values is missing");
    for (int a = 0; a < c->n_axes; a++)
        if (c->n_values[a] < 1)
            return dse_err_set(e, DSE_EINPUT, NULL, "nsga2", "axis %d must have at least 1 value (got %d)", a,
                               c->n_values[a]);
    if (c->n_obj < 1 || c->n_obj > PARETO_MAX_OBJ)
        return dse_err_set(e, DSE_EINPUT, NULL, "nsga2", "n_obj must be 1 to %d (got %d)", PARETO_MAX_OBJ, c->n_obj);
    if (c->population < 4 || c->population % 2 || c->population > NSGA2_MAX_POPULATION)
        return dse_err_set(e, DSE_EINPUT, NULL, "nsga2", "population must be an even number from 4 to %d (got %d)",
                           NSGA2_MAX_POPULATION, c->population);
    if (c->generations < 1)
        return dse_err_set(e, DSE_EINPUT, NULL, "nsga2", "generations must be at least 1 (got %d)", c->generations);
    if (isnan(c->p_crossover) || c->p_crossover > 1)
        return dse_err_set(e, DSE_EINPUT, NULL, "nsga2", "p_crossover must be a probability (got %g)", c->p_crossover);
    if (isnan(c->p_mutation) || c->p_mutation > 1)
        return dse_err_set(e, DSE_EINPUT, NULL, "nsga2", "p_mutation must be a probability (got %g)", c->p_mutation);
    return DSE_OK;
}

void nsga2_free(struct nsga2 *s)
{
    if (!s)
        return;
    free(s->rng.state);
    void *p[] = {s->pg, s->po, s->pv, s->pcrowd, s->prank, s->bg, s->bo, s->bv, s->mg, s->mrank, s->fidx,
                 s->frank, s->fcnt, s->ford, s->mo, s->mv, s->mcrowd, s->fobj, s->dist, s->cand, s->mdup, s->gkey};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        free(p[i]);
    free(s);
}

int nsga2_create(const struct nsga2_cfg *c, struct nsga2 **out, struct dse_err *e)
{
    *out = NULL;
    int rc = check_cfg(c, e);
    if (rc)
        return rc;
    struct nsga2 *s = calloc(1, sizeof *s);
    if (!s)
        goto oom;
    s->na = c->n_axes;
    s->no = c->n_obj;
    s->n = c->population;
    s->gens = c->generations;
    memcpy(s->nv, c->n_values, (size_t)s->na * sizeof *s->nv);
    s->pc = c->p_crossover > 0 ? c->p_crossover : 0.9;
    s->pm = c->p_mutation > 0 ? c->p_mutation : 1.0 / s->na;
    s->rng.type = gsl_rng_mt19937;
    s->rng.state = calloc(1, gsl_rng_mt19937->size);
    if (!s->rng.state)
        goto oom;
    gsl_rng_set(&s->rng, c->seed);
    dse_err_clear(&s->err);

    size_t n = (size_t)s->n, na = (size_t)s->na, no = (size_t)s->no;
    s->pg = malloc(n * na * sizeof *s->pg);
    s->po = malloc(n * no * sizeof *s->po);
    s->pv = malloc(n * sizeof *s->pv);
    s->pcrowd = malloc(n * sizeof *s->pcrowd);
    s->prank = malloc(n * sizeof *s->prank);
    s->bg = malloc(n * na * sizeof *s->bg);
    s->bo = malloc(n * no * sizeof *s->bo);
    s->bv = malloc(n * sizeof *s->bv);
    s->mg = malloc(2 * n * na * sizeof *s->mg);
    s->mrank = malloc(2 * n * sizeof *s->mrank);
    s->fidx = malloc(2 * n * sizeof *s->fidx);
    s->frank = malloc(2 * n * sizeof *s->frank);
    s->fcnt = malloc((2 * n + 1) * sizeof *s->fcnt);
    s->ford = malloc(2 * n * sizeof *s->ford);
    s->mo = malloc(2 * n * no * sizeof *s->mo);
    s->mv = malloc(2 * n * sizeof *s->mv);
    s->mcrowd = malloc(2 * n * sizeof *s->mcrowd);
    s->fobj = malloc(2 * n * no * sizeof *s->fobj);
    s->dist = malloc(2 * n * sizeof *s->dist);
    s->cand = malloc(2 * n * sizeof *s->cand);
    s->mdup = malloc(2 * n * sizeof *s->mdup);
    s->gkey = malloc(2 * n * sizeof *s->gkey);
    if (!s->pg || !s->po || !s->pv || !s->pcrowd || !s->prank || !s->bg || !s->bo || !s->bv || !s->mg ||
        !s->mrank || !s->fidx || !s->frank || !s->fcnt || !s->ford || !s->mo || !s->mv || !s->mcrowd || !s->fobj ||
        !s->dist || !s->cand || !s->mdup || !s->gkey)
        goto oom;
    *out = s;
    return DSE_OK;
oom:
    nsga2_free(s);
    return dse_err_set(e, DSE_ERUNTIME, NULL, "nsga2", "out of memory for a population of %d", c->population);
}

static int cmp_cand_viol(const void *a, const void *b)
{
    const struct cand *x = a, *y = b; /* crowd holds the violation here */
    if (x->crowd != y->crowd)
        return x->crowd < y->crowd ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Survival order: lower rank, then distinct before repeated, then larger crowding distance, then
 * earlier row (parents before offspring): a total order, so the result does not depend on qsort. */
static int cmp_cand_survive(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->dup != y->dup)
        return x->dup - y->dup;
    if (x->crowd != y->crowd)
        return x->crowd > y->crowd ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int cmp_gkey(const void *a, const void *b)
{
    const struct gkey *x = a, *y = b;
    for (int t = 0; t < x->na; t++)
        if (x->g[t] != y->g[t])
            return x->g[t] < y->g[t] ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* dup[i] = 1 when row i of the k genomes g repeats an earlier row. */
static void mark_repeats(struct nsga2 *s, const int *g, int k, char *dup)
{
    for (int i = 0; i < k; i++)
        s->gkey[i] = (struct gkey){g + (size_t)i * (size_t)s->na, s->na, i};
    qsort(s->gkey, (size_t)k, sizeof *s->gkey, cmp_gkey);
    for (int t = 0; t < k; t++)
        dup[s->gkey[t].i] = t > 0 && memcmp(s->gkey[t].g, s->gkey[t - 1].g, (size_t)s->na * sizeof *g) == 0;
}

/* Constrained non-domination rank and crowding distance of the k rows of obj/viol. Feasible rows are
 * ranked by pareto_rank; the infeasible ones follow, one front per distinct violation in increasing
 * order (between infeasible rows, domination is by violation alone). Crowding is computed within the
 * feasible fronts over their rows not marked in dup; infeasible and repeated rows get 0. */
static int rank_constrained(struct nsga2 *s, const double *obj, const double *viol, const char *dup, int k,
                            int *rank, double *crowd)
{
    int nf = 0, nfront = 0, no = s->no;
    for (int i = 0; i < k; i++) {
        crowd[i] = 0;
        if (viol[i] == 0) {
            memcpy(s->fobj + (size_t)nf * (size_t)no, obj + (size_t)i * (size_t)no, (size_t)no * sizeof *obj);
            s->fidx[nf++] = i;
        }
    }
    if (pareto_rank(s->fobj, nf, no, s->frank, &s->err) != DSE_OK)
        return -1;
    for (int t = 0; t < nf; t++) {
        rank[s->fidx[t]] = s->frank[t];
        nfront = s->frank[t] + 1 > nfront ? s->frank[t] + 1 : nfront;
    }
    /* Crowding front by front: members gathered by a counting sort on rank, in row order. */
    int *cnt = s->fcnt, *ord = s->ford;
    memset(cnt, 0, (size_t)(nfront + 1) * sizeof *cnt);
    for (int t = 0; t < nf; t++)
        cnt[s->frank[t] + 1] += !dup[s->fidx[t]];
    for (int f = 0; f < nfront; f++)
        cnt[f + 1] += cnt[f];
    for (int t = 0; t < nf; t++)
        if (!dup[s->fidx[t]])
            ord[cnt[s->frank[t]]++] = s->fidx[t];
    for (int f = 0, lo = 0; f < nfront; f++) { /* cnt[f] is now the end of front f */
        pareto_crowding(obj, no, ord + lo, cnt[f] - lo, s->dist);
        for (int t = lo; t < cnt[f]; t++)
            crowd[ord[t]] = s->dist[t - lo];
        lo = cnt[f];
    }
    int ni = 0;
    for (int i = 0; i < k; i++)
        if (viol[i] != 0)
            s->cand[ni++] = (struct cand){0, 0, viol[i], i};
    qsort(s->cand, (size_t)ni, sizeof *s->cand, cmp_cand_viol);
    for (int t = 0, r = nfront - 1; t < ni; t++) {
        if (t == 0 || s->cand[t].crowd != s->cand[t - 1].crowd)
            r++;
        rank[s->cand[t].i] = r;
    }
    return 0;
}

static int rand_below(struct nsga2 *s, int k) { return (int)gsl_rng_uniform_int(&s->rng, (unsigned long)k); }

/* Binary tournament between two random parents: lower rank wins, then larger crowding distance,
 * then the first drawn. */
static int tournament(struct nsga2 *s)
{
    int a = rand_below(s, s->np), b = rand_below(s, s->np);
    if (s->prank[b] < s->prank[a] || (s->prank[b] == s->prank[a] && s->pcrowd[b] > s->pcrowd[a]))
        return b;
    return a;
}

/* Per-gene mutation to a uniformly random different value of the axis. */
static void mutate(struct nsga2 *s, int *g)
{
    for (int a = 0; a < s->na; a++) {
        if (s->nv[a] < 2 || !(gsl_rng_uniform(&s->rng) < s->pm))
            continue;
        int v = rand_below(s, s->nv[a] - 1);
        g[a] = v >= g[a] ? v + 1 : v;
    }
}

static void make_batch(struct nsga2 *s)
{
    int na = s->na;
    if (s->np == 0) { /* the initial population: every gene uniform over its axis */
        for (int i = 0; i < s->n; i++)
            for (int a = 0; a < na; a++)
                s->bg[(size_t)i * (size_t)na + (size_t)a] = rand_below(s, s->nv[a]);
        return;
    }
    for (int i = 0; i < s->n; i += 2) {
        int *c1 = s->bg + (size_t)i * (size_t)na, *c2 = c1 + na;
        int p1 = tournament(s), p2 = tournament(s);
        memcpy(c1, s->pg + (size_t)p1 * (size_t)na, (size_t)na * sizeof *c1);
        memcpy(c2, s->pg + (size_t)p2 * (size_t)na, (size_t)na * sizeof *c2);
        if (gsl_rng_uniform(&s->rng) < s->pc)
            for (int a = 0; a < na; a++)
                if (gsl_rng_uniform(&s->rng) < 0.5) {
                    int t = c1[a];
                    c1[a] = c2[a];
                    c2[a] = t;
                }
        mutate(s, c1);
        mutate(s, c2);
    }
}

int nsga2_ask(struct nsga2 *s, int *genomes, int max)
{
    if (!s || s->failed || !genomes || max < 1)
        return -1;
    if (s->np > 0 && s->gen >= s->gens)
        return 0;
    if (!s->have_batch) {
        make_batch(s);
        s->have_batch = 1;
        s->told = 0;
    }
    int k = s->n - s->told < max ? s->n - s->told : max;
    memcpy(genomes, s->bg + (size_t)s->told * (size_t)s->na, (size_t)k * (size_t)s->na * sizeof *genomes);
    s->asked = k;
    return k;
}

static void fail(struct nsga2 *s)
{
    s->failed = 1;
    s->have_batch = 0;
    s->asked = 0;
}

/* Elitist survival: the k candidate rows of mg/mo/mv (parents then offspring) are ranked together and
 * the first n in survival order become the parents, keeping the rank and crowding distance they had
 * among the candidates (as in Deb's code; the tournaments use them). */
static void survive(struct nsga2 *s, int k)
{
    size_t n = (size_t)s->n, na = (size_t)s->na, no = (size_t)s->no;
    mark_repeats(s, s->mg, k, s->mdup);
    if (rank_constrained(s, s->mo, s->mv, s->mdup, k, s->mrank, s->mcrowd) < 0) {
        fail(s);
        return;
    }
    for (int i = 0; i < k; i++)
        s->cand[i] = (struct cand){s->mrank[i], s->mdup[i], s->mcrowd[i], i};
    qsort(s->cand, (size_t)k, sizeof *s->cand, cmp_cand_survive);
    for (size_t t = 0; t < n; t++) {
        size_t i = (size_t)s->cand[t].i;
        memcpy(s->pg + t * na, s->mg + i * na, na * sizeof *s->pg);
        memcpy(s->po + t * no, s->mo + i * no, no * sizeof *s->po);
        s->pv[t] = s->mv[i];
        s->prank[t] = s->mrank[i];
        s->pcrowd[t] = s->mcrowd[i];
    }
    s->np = s->n;
}

void nsga2_tell(struct nsga2 *s, const double *obj, const double *violation)
{
    if (!s || s->failed || !s->have_batch || s->asked == 0)
        return;
    int no = s->no;
    for (int t = 0; t < s->asked; t++) {
        size_t row = (size_t)(s->told + t);
        double v = violation ? violation[t] : 0, *o = s->bo + row * (size_t)no;
        memcpy(o, obj + (size_t)t * (size_t)no, (size_t)no * sizeof *o);
        if (isnan(v))
            v = INFINITY;
        else if (v < 0)
            v = 0;
        for (int j = 0; j < no && v == 0; j++)
            if (isnan(o[j]))
                v = INFINITY;
        s->bv[row] = v;
    }
    s->told += s->asked;
    s->asked = 0;
    if (s->told < s->n)
        return;
    s->have_batch = 0;
    /* Candidates: the parents (none for the initial population), then the batch. */
    size_t np = (size_t)s->np, n = (size_t)s->n, na = (size_t)s->na;
    memcpy(s->mg, s->pg, np * na * sizeof *s->mg);
    memcpy(s->mg + np * na, s->bg, n * na * sizeof *s->mg);
    memcpy(s->mo, s->po, np * (size_t)no * sizeof *s->mo);
    memcpy(s->mo + np * (size_t)no, s->bo, n * (size_t)no * sizeof *s->mo);
    memcpy(s->mv, s->pv, np * sizeof *s->mv);
    memcpy(s->mv + np, s->bv, n * sizeof *s->mv);
    int initial = np == 0;
    survive(s, (int)(np + n));
    if (!s->failed && !initial)
        s->gen++;
}

int nsga2_population(const struct nsga2 *s, const int **genomes, const double **obj, const double **violation)
{
    if (genomes)
        *genomes = s->pg;
    if (obj)
        *obj = s->po;
    if (violation)
        *violation = s->pv;
    return s->np;
}

const char *nsga2_error(const struct nsga2 *s) { return s && s->failed ? s->err.msg : ""; }
