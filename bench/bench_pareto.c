/* bench_pareto.c -- Pareto figures of issue 14, printed (not asserted): the first front of 10^7 points
 * (pareto_front) for two and three objectives, uniform random and on a trade-off (f1 = 1 - f0 +
 * noise: a large front), and full non-domination ranking (pareto_rank) of the same 10^7 for
 * comparison. The points come from a fixed xorshift stream, so every run measures the same sets.
 * Usage: bench/bench_pareto [n] (default 10,000,000; bench/run.sh runs it). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pareto.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 10000000;
    if (n < 1)
        return 2;
    double *o = malloc(sizeof *o * (size_t)n * 3);
    unsigned char *in = malloc((size_t)n);
    int *rank = malloc(sizeof *rank * (size_t)n);
    if (!o || !in || !rank)
        return 1;
    for (int m = 2; m <= 3; m++)
        for (int trade = 0; trade < 2; trade++) {
            unsigned long long s = 88172645463325252ULL;
            for (size_t i = 0; i < (size_t)n * (size_t)m; i++) {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                o[i] = (double)(s >> 11) * (1.0 / 9007199254740992.0);
            }
            if (trade)
                for (size_t i = 0; i < (size_t)n; i++)
                    o[i * m + 1] = 1 - o[i * m] + 0.1 * o[i * m + 1];
            struct dse_err e;
            double t0 = now();
            if (pareto_front(o, n, m, in, &e))
                return 1;
            double t1 = now();
            long front = 0;
            for (int i = 0; i < n; i++)
                front += in[i];
            double t2 = now();
            if (pareto_rank(o, n, m, rank, &e))
                return 1;
            double t3 = now();
            printf("pareto %d objectives, %-9s %9d points: front %6ld points in %5.2f s; all ranks in %6.2f s\n", m,
                   trade ? "trade-off" : "uniform", n, front, t1 - t0, t3 - t2);
        }
    free(o);
    free(in);
    free(rank);
    return 0;
}
