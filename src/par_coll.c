/* par_coll.c -- collectives over a topology: an alpha-beta cost per level, composed hierarchically
 * (par.h states the algorithms). Notation: p members of a group at a level, a the level's latency
 * per message step, B its bandwidth per device and direction, n the bytes the step works on.
 * Assumptions, also in docs/models.md: every group of a layout dimension runs its collective at the
 * same time (all tp groups all-reduce together), so groups interleaved on a ring or torus (members s
 * apart) share its links s ways; switches and fat trees are non-blocking (each device has its own
 * injection bandwidth); a step's latency is paid once per message and once per hop; the reduction's
 * arithmetic and the kernel's memory traffic are the device's (the collective op's own cost), not
 * counted here. Bandwidth terms after Thakur, Rabenseifner, Gropp (IJHPCA 2005) for the ring and
 * tree; dimension-ordered torus rings as TPU pods run them (Jouppi et al., ISCA 2023). */
#include "par.h"

#include <math.h>
#include <string.h>

const char *const coll_names[COLL_COUNT + 1] = {"allreduce", "allgather", "reducescatter", "alltoall", "sendrecv",
                                                NULL};

/* Splits a group (size, stride) over radices counts[0..n) (fastest first): p[i] members differ in
 * digit i, s[i] the distance between them in that digit. 0, or 1 + the index of a radix it straddles. */
static int split(const int *counts, int n, int size, int stride, int *p, int *s)
{
    double inner = 1, lo_all = stride, hi_all = (double)stride * size, prod = 1;
    for (int i = 0; i < n; i++) {
        double outer = inner * counts[i];
        double lo = lo_all > inner ? lo_all : inner, hi = hi_all < outer ? hi_all : outer;
        p[i] = 1;
        s[i] = 1;
        if (hi > lo) {
            if (fmod(hi, lo) != 0 || fmod(lo, inner) != 0)
                return i + 1;
            p[i] = (int)(hi / lo);
            s[i] = (int)(lo / inner);
        }
        prod *= p[i];
        inner = outer;
    }
    return prod == size ? 0 : n;
}

int par_group_levels(const struct hw_topology *t, int size, int stride, int p[HW_MAX_TOPO_LEVELS],
                     struct dse_err *e)
{
    int counts[HW_MAX_TOPO_LEVELS], s[HW_MAX_TOPO_LEVELS], n = t->n_level;
    for (int l = 0; l < HW_MAX_TOPO_LEVELS; l++)
        p[l] = 1;
    if (size <= 1)
        return DSE_OK;
    for (int l = 0; l < n; l++)
        counts[l] = t->level[l].count;
    int bad = n > 0 ? split(counts, n, size, stride, p, s) : 1;
    for (int l = 0; !bad && l < n; l++) { /* within a torus the group must split by its dimensions too */
        int pd[3], sd[3];
        const struct hw_topo_level *L = &t->level[l];
        if (p[l] > 1 && L->n_dims > 1 && split(L->dims, L->n_dims, p[l], s[l], pd, sd)) {
            char dims[48];
            int at = 0;
            for (int i = 0; i < L->n_dims; i++)
                at += snprintf(dims + at, sizeof dims - (size_t)at, "%s%d", i ? "x" : "", L->dims[i]);
            return dse_err_set(e, DSE_EINPUT, NULL, NULL,
                               "a group of %d devices %d apart straddles a dimension of level '%s' (a %s torus): choose "
                               "sizes that divide its dimensions",
                               size, stride, L->name, dims);
        }
    }
    if (!bad)
        return DSE_OK;
    if (n == 0)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "a group of %d devices needs a topology (this system has none)",
                           size);
    int l = bad - 1 < n ? bad - 1 : n - 1;
    return dse_err_set(e, DSE_EINPUT, NULL, NULL,
                       "a group of %d devices %d apart straddles level '%s' (%d per unit): some members share a "
                       "unit and some do not; choose sizes that divide it",
                       size, stride, t->level[l].name, t->level[l].count);
}

/* A reduce-scatter (or all-gather) of n bytes over p members s apart on a ring of `ring` units with
 * links of B per direction: both ways round when they close the ring, sharing links s ways. */
static double ring_rs(const struct hw_topo_level *L, int ring, int p, int s, double n)
{
    double bw = (p * s == ring ? 2 : 1) * L->bandwidth_Bps / s;
    return (p - 1) * s * L->latency_s + (p - 1) / (double)p * n / bw;
}

/* An all-to-all in which each member sends b bytes in all, b / (p - 1) to each other, over a ring as
 * above: by shortest paths; the busiest link carries b S / (2 (p - 1)) with S the sum of the distances
 * min(d, p - d) when the members close the ring, else (a line) the middle link carries
 * floor(p/2) ceil(p/2) b / (p - 1). */
static double ring_a2a(const struct hw_topo_level *L, int ring, int p, int s, double b)
{
    double load;
    if (p * s == ring) {
        double S = 0;
        for (int d = 1; d < p; d++)
            S += d < p - d ? d : p - d;
        load = b * S / (2.0 * (p - 1));
    } else {
        load = floor(p / 2.0) * ceil(p / 2.0) * b / (p - 1);
    }
    return (p - 1) * s * L->latency_s + load * s / L->bandwidth_Bps;
}

/* One level's share of a collective: p members (s apart in the level's index) on n bytes. op is
 * COLL_REDUCESCATTER (or all-gather: the same cost), COLL_ALLREDUCE or COLL_ALLTOALL (n: the bytes each
 * member sends across this level). Adds the bytes a member sends to *sent. (par_coll_cost adds the
 * fixed cost per collective: the largest base latency of the levels the group spans.) */
static double level_steps(const struct hw_topo_level *L, enum coll_kind op, int p, int s, double n, double *sent)
{
    if (L->kind == TOPO_SWITCH || L->kind == TOPO_FAT_TREE) {
        double a = L->latency_s, B = L->bandwidth_Bps;
        if (op == COLL_ALLTOALL) {
            *sent += n;
            return (p - 1) * a + n / B;
        }
        double rs = (p - 1) * a + (p - 1) / (double)p * n / B;
        if (op != COLL_ALLREDUCE) {
            *sent += (p - 1) / (double)p * n;
            return rs;
        }
        double lg = ceil(log2((double)p)), tree = 2 * lg * a + 2 * n / B;
        if (tree < 2 * rs) {
            *sent += 2 * n;
            return tree;
        }
        *sent += 2 * (p - 1) / (double)p * n;
        return 2 * rs;
    }
    /* ring or torus: dimension by dimension (a ring is a torus of one dimension) */
    int pd[3], sd[3];
    if (split(L->dims, L->n_dims, p, s, pd, sd))
        return NAN; /* par_group_levels split the level already; its dims split as well */
    double t = 0, m = n;
    for (int i = 0; i < L->n_dims; i++) {
        if (pd[i] <= 1)
            continue;
        if (op == COLL_ALLTOALL) {
            /* of the level's p - 1 destinations, (pd - 1) p / pd differ in this coordinate */
            double b = n * (pd[i] - 1) * p / ((double)pd[i] * (p - 1));
            t += ring_a2a(L, L->dims[i], pd[i], sd[i], b);
            *sent += b;
            continue;
        }
        double rs = ring_rs(L, L->dims[i], pd[i], sd[i], m);
        *sent += (pd[i] - 1) / (double)pd[i] * m * (op == COLL_ALLREDUCE ? 2 : 1);
        t += op == COLL_ALLREDUCE ? 2 * rs : rs;
        m /= pd[i];
    }
    return t;
}

static double level_cost(const struct hw_topo_level *L, enum coll_kind op, int p, int s, double n, double *sent)
{
    return p <= 1 ? 0 : level_steps(L, op, p, s, n, sent);
}

int par_coll_cost(const struct hw_topology *t, enum coll_kind k, int size, int stride, double bytes,
                  struct coll_cost *c, struct dse_err *e)
{
    memset(c, 0, sizeof *c);
    if (size <= 1 || !(bytes > 0))
        return DSE_OK;
    int p[HW_MAX_TOPO_LEVELS], s[HW_MAX_TOPO_LEVELS], counts[HW_MAX_TOPO_LEVELS] = {0};
    int rc = par_group_levels(t, size, stride, p, e);
    if (rc)
        return rc;
    for (int l = 0; l < t->n_level; l++)
        counts[l] = t->level[l].count;
    split(counts, t->n_level, size, stride, p, s);
    int outer = -1;
    double base = 0; /* one fixed cost per collective: the largest of the levels it spans */
    for (int l = 0; l < t->n_level; l++)
        if (p[l] > 1) {
            outer = l;
            base = t->level[l].base_latency_s > base ? t->level[l].base_latency_s : base;
        }
    double time = base, n = bytes;
    if (k == COLL_SENDRECV) { /* one message over the outermost level the pair spans */
        const struct hw_topo_level *L = &t->level[outer];
        int hops = 1, pd[3], sd[3];
        if ((L->kind == TOPO_RING || L->kind == TOPO_TORUS) && !split(L->dims, L->n_dims, 2, s[outer], pd, sd)) {
            hops = 0;
            for (int i = 0; i < L->n_dims; i++) /* the shorter way round each dimension it moves in */
                if (pd[i] > 1)
                    hops += sd[i] < L->dims[i] - sd[i] ? sd[i] : L->dims[i] - sd[i];
        }
        c->time_s = base + hops * L->latency_s + bytes / L->bandwidth_Bps;
        c->energy_J = bytes * L->energy_J_per_byte;
        return DSE_OK;
    }
    if (k == COLL_ALLTOALL) { /* each level carries the bytes whose destination differs first there */
        double inner = 1;
        for (int l = 0; l < t->n_level; l++) {
            double sent = 0, b = bytes * (p[l] - 1) * inner / size;
            time += level_cost(&t->level[l], COLL_ALLTOALL, p[l], s[l], b, &sent);
            c->energy_J += sent * t->level[l].energy_J_per_byte;
            inner *= p[l];
        }
        c->time_s = time;
        return DSE_OK;
    }
    /* reduce-scatter inner to outer (all-reduce: up to the outermost, which all-reduces what is left),
     * all-gather the mirror image: the same bytes per level, so one pass costs both */
    for (int l = 0; l <= outer; l++) {
        if (p[l] <= 1)
            continue;
        double sent = 0;
        enum coll_kind op = k == COLL_ALLREDUCE && l == outer ? COLL_ALLREDUCE : COLL_REDUCESCATTER;
        double lt = level_cost(&t->level[l], op, p[l], s[l], n, &sent);
        int twice = k == COLL_ALLREDUCE && l != outer ? 2 : 1; /* its reduce-scatter and, after, its all-gather */
        time += twice * lt;
        c->energy_J += twice * sent * t->level[l].energy_J_per_byte;
        n /= p[l];
    }
    c->time_s = time;
    return DSE_OK;
}
