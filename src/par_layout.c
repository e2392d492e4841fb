/* par_layout.c -- completing and checking a parallel layout against a system's topology (par.h). */
#include "par.h"

#include <stdio.h>

const char *const par_dim_names[PAR_DIM_COUNT + 1] = {"tp", "dp", "pp", NULL};

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
    long long rep = (long long)l->n[PAR_TP] * l->n[PAR_PP];
    if (!l->n[PAR_DP])
        l->n[PAR_DP] = rep > 0 && N % rep == 0 ? (int)(N / rep) : 1;
    long long prod = rep * l->n[PAR_DP];
    if (prod != N)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "tp %d x dp %d x pp %d = %lld devices, but '%s' has %d%s",
                           l->n[PAR_TP], l->n[PAR_DP], l->n[PAR_PP], prod, sys->name, N,
                           sys->topo.n_level ? "" : " (it has no topology: one device)");
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

int par_replica_devices(const struct par_layout *l) { return l->n[PAR_TP] * l->n[PAR_PP]; }

void par_group(const struct par_layout *l, enum par_dim d, int *size, int *stride)
{
    if (d == PAR_EP) {
        *size = l->ep > 0 ? l->ep : 1;
        *stride = l->n[PAR_TP] > 0 ? l->n[PAR_TP] : 1;
        return;
    }
    int s = 1;
    for (int k = 0; k < (int)d; k++)
        s *= l->n[k] > 0 ? l->n[k] : 1;
    *size = l->n[d] > 0 ? l->n[d] : 1;
    *stride = s;
}
