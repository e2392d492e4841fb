/* par_layout.c -- completing and checking a parallel layout against a system's topology (par.h). */
#include "par.h"

#include "wl.h"

#include <stdio.h>

const char *const par_dim_names[PAR_DIM_COUNT + 1] = {"tp", "dp", "pp", "cp", NULL};
_Static_assert((int)PAR_TP == (int)WG_TP && (int)PAR_DP == (int)WG_DP && (int)PAR_PP == (int)WG_PP &&
                   (int)PAR_CP == (int)WG_CP && (int)PAR_EP == (int)WG_EP,
               "par.h's layout dimensions and wl.h's collective groups are one numbering");

/* The order ranks vary in, fastest first. */
static const enum par_dim rank_order[PAR_DIM_COUNT] = {PAR_TP, PAR_CP, PAR_DP, PAR_PP};

int par_layout_complete(const struct hw_system *sys, struct par_layout *l, struct dse_err *e)
{
    int N = hw_topo_devices(sys);
    for (int d = 0; d < PAR_DIM_COUNT; d++)
        if (l->n[d] < 0 || l->n[d] > HW_MAX_TOPO_DEVICES)
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: expected 1 to %d devices, got %d", par_dim_names[d],
                               HW_MAX_TOPO_DEVICES, l->n[d]);
    if (l->microbatches < 0 || l->microbatches > 4096)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "microbatches: expected 1 to 4096, got %d", l->microbatches);
    if (!l->microbatches)
        l->microbatches = 1;
    if (!l->ep)
        l->ep = 1;
    if (!(l->moe_imbalance > 0))
        l->moe_imbalance = 1;
    if (!l->n[PAR_TP])
        l->n[PAR_TP] = 1;
    if (!l->n[PAR_PP])
        l->n[PAR_PP] = 1;
    if (!l->n[PAR_CP])
        l->n[PAR_CP] = 1;
    long long rep = (long long)l->n[PAR_TP] * l->n[PAR_CP] * l->n[PAR_PP];
    if (!l->n[PAR_DP])
        l->n[PAR_DP] = rep > 0 && N % rep == 0 ? (int)(N / rep) : 1;
    long long prod = rep * l->n[PAR_DP];
    if (prod != N)
    {
        char cp[24] = "";
        if (l->n[PAR_CP] > 1)
            snprintf(cp, sizeof cp, " x cp %d", l->n[PAR_CP]);
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "tp %d%s x dp %d x pp %d = %lld devices, but '%s' has %d%s",
                           l->n[PAR_TP], cp, l->n[PAR_DP], l->n[PAR_PP], prod, sys->name, N,
                           sys->topo.n_level ? "" : " (it has no topology: one device)");
    }
    if (l->ep < 1 || l->n[PAR_DP] % l->ep)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL,
                           "ep %d must divide dp %d: experts are spread over data-parallel replicas", l->ep, l->n[PAR_DP]);
    /* every group must align with the levels its members span */
    for (int d = 0; d < PAR_DIM_COUNT; d++) {
        int size, stride, p[HW_MAX_TOPO_LEVELS];
        par_group(l, (enum par_dim)d, &size, &stride);
        int rc = par_group_levels(&sys->topo, size, stride, p, e);
        if (rc) {
            char why[sizeof e->msg];
            dse_strlcpy(why, e->msg, sizeof why);
            return dse_err_set(e, rc, NULL, NULL, "%s %d: %s", par_dim_names[d], size, why);
        }
    }
    int size, stride, p[HW_MAX_TOPO_LEVELS];
    par_group(l, PAR_EP, &size, &stride);
    if (par_group_levels(&sys->topo, size, stride, p, e)) {
        char why[sizeof e->msg];
        dse_strlcpy(why, e->msg, sizeof why);
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "ep %d: %s", size, why);
    }
    return DSE_OK;
}

void par_group(const struct par_layout *l, enum par_dim d, int *size, int *stride)
{
    int s = 1, to = d == PAR_EP ? PAR_DP : (int)d; /* an ep group is ep consecutive dp replicas */
    for (int i = 0; i < PAR_DIM_COUNT && rank_order[i] != (enum par_dim)to; i++)
        s *= l->n[rank_order[i]] > 0 ? l->n[rank_order[i]] : 1;
    *size = d == PAR_EP ? (l->ep > 0 ? l->ep : 1) : l->n[d] > 0 ? l->n[d] : 1;
    *stride = s;
}
