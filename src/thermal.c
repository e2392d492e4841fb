/* thermal.c -- the lumped thermal model (thermal.h). */
#include "thermal.h"

#include <math.h>
#include <stdio.h>

double thermal_R(const struct hw_thermal *t) { return t->R_C_per_W[t->cooling]; }

double thermal_limit_W(const struct hw_thermal *t) { return (t->throttle_C - t->ambient_C) / thermal_R(t); }

double thermal_steady_C(const struct hw_thermal *t, double P_W) { return t->ambient_C + P_W * thermal_R(t); }

double thermal_temp_at(const struct hw_thermal *t, double P_W, double s)
{
    double R = thermal_R(t), C = t->C_J_per_C[t->cooling];
    return C > 0 ? t->ambient_C + P_W * R * -expm1(-s / (R * C)) : NAN;
}

double thermal_time_to(const struct hw_thermal *t, double P_W, double T_C)
{
    double R = thermal_R(t), C = t->C_J_per_C[t->cooling], rise = P_W * R, need = T_C - t->ambient_C;
    if (need <= 0)
        return 0;
    if (!(rise > need))
        return INFINITY;
    return C > 0 ? R * C * log(rise / (rise - need)) : NAN;
}

void thermal_apply_cap(struct hw_system *sys, double limit_W, const double *dev_W)
{
    const struct hw_thermal *t = &sys->thermal;
    double sum = 0;
    for (int d = 0; d < sys->n_dev; d++)
        if (t->devices & (1u << d))
            sum += dev_W[d];
    for (int d = 0; d < sys->n_dev; d++) {
        if (!(t->devices & (1u << d)))
            continue;
        double cap = sys->n_modes || !(sum > 0) ? limit_W : limit_W * dev_W[d] / sum;
        if (sys->dev[d].power_cap_W > 0 && sys->dev[d].power_cap_W < cap)
            continue;
        hw_apply_power_cap(&sys->dev[d], cap);
    }
}

void thermal_describe(const struct hw_thermal *t, char *buf, size_t n)
{
    char cap[64] = "heat capacity unpublished", off[48] = "no published shutdown point";
    double C = t->C_J_per_C[t->cooling];
    if (C > 0)
        snprintf(cap, sizeof cap, "heat capacity %.3g J/degC", C);
    if (t->shutdown_C > 0)
        snprintf(off, sizeof off, "shuts down at %.3g degC", t->shutdown_C);
    snprintf(buf, n, "ambient %.3g degC, cooling %s (%.3g degC/W, %s), throttles at %.3g degC, %s", t->ambient_C,
             t->cooling_name[t->cooling], thermal_R(t), cap, t->throttle_C, off);
}
