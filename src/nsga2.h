/* nsga2.h -- NSGA-II (Deb, Pratap, Agarwal, Meyarivan, IEEE TEC 6(2), 2002) over discrete axes, driven
 * by ask/tell: the search asks for genomes and is told their costs; evaluating them (in parallel or
 * not) is the caller's. A genome is one value index per axis, 0 <= g[a] < n_values[a]. Objectives are
 * minimized (callers negate maximized metrics). All state lives in the caller's struct nsga2; the run
 * is a pure function of the configuration, the seed and the results told. */
#ifndef DSE_NSGA2_H
#define DSE_NSGA2_H

#include "err.h"

#define NSGA2_MAX_AXES 64
#define NSGA2_MAX_POPULATION 1000000

struct nsga2_cfg {
    int n_axes;          /* 1..NSGA2_MAX_AXES */
    const int *n_values; /* values per axis, each >= 1; copied by nsga2_create */
    int n_obj;           /* 1..PARETO_MAX_OBJ */
    int population;      /* even, 4..NSGA2_MAX_POPULATION */
    int generations;     /* offspring generations after the initial population, >= 1 */
    unsigned long seed;  /* of the gsl_rng_mt19937 stream (0 means GSL's default seed, 4357) */
    double p_crossover;  /* probability that a pair of parents is crossed, 0..1; 0.9 when <= 0 */
    double p_mutation;   /* per gene, 0..1; 1 / n_axes when <= 0 */
};

struct nsga2; /* opaque */

/* Validates c and allocates the search: DSE_EINPUT with a message naming the bad field, DSE_ERUNTIME
 * when out of memory. */
int nsga2_create(const struct nsga2_cfg *c, struct nsga2 **out, struct dse_err *e);

/* Genomes to evaluate next, n_axes value indices each, row-major into genomes (room for max rows).
 * Returns how many (at most max), 0 when the run is over, -1 on misuse (max < 1) or after a failure
 * (see nsga2_error). Each step is a batch of population genomes: the first step is the random initial
 * population, each later one the offspring of one generation. A batch may be handed out in several
 * asks, each followed by its tell; an ask whose tell never came is handed out again by the next ask.
 * How the batch is split does not change the run. */
int nsga2_ask(struct nsga2 *s, int *genomes, int max);

/* Results for the genomes of the last ask, in the same order: n_obj objectives per genome (row-major)
 * and a constraint violation per genome (0 feasible, > 0 infeasible, larger is worse; violation may be
 * NULL when every genome is feasible). Negative violations count as 0; a NaN violation, or a NaN
 * objective of a feasible genome, counts as an infinite violation. Objectives of infeasible genomes
 * are kept but never compared. Ranking is by constrained domination (Deb 2002, sec. V): feasible
 * beats infeasible, the lower violation beats the higher, else Pareto dominance; within a front,
 * repeats of a genome rank behind distinct genomes (see nsga2.c). obj must not be NULL. A tell
 * without an ask is ignored. */
void nsga2_tell(struct nsga2 *s, const double *obj, const double *violation);

/* The current parent population (the survivors of the last complete generation, or the initial one):
 * returns its size (0 before the initial population is told) and points genomes (size x n_axes), obj
 * (size x n_obj) and violation (size) at it; any of the pointers may be NULL. Valid until the next
 * nsga2_tell or nsga2_free. */
int nsga2_population(const struct nsga2 *s, const int **genomes, const double **obj, const double **violation);

/* Why the last ask returned -1 ("" when nothing failed). */
const char *nsga2_error(const struct nsga2 *s);

void nsga2_free(struct nsga2 *s);

#endif
