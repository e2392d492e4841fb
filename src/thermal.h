/* thermal.h -- a board's lumped thermal model (hwdesc "thermal"; docs/models.md, "Thermal").
 *
 * One node of heat capacity C (J/degC) joined to the ambient air through one resistance R (degC/W, the
 * cooling in use): at a constant power P from a cold start (the node at ambient Ta),
 *     T(t) = Ta + P R (1 - exp(-t / tau)),  tau = R C,
 * so it settles at Ta + P R and reaches a temperature Tx < Ta + P R after tau ln(P R / (P R - (Tx - Ta))).
 * A board whose settled temperature passes its throttle point runs, once it gets there, at the fastest
 * operating point whose power holds it at or below the point: P <= (T_throttle - Ta) / R. Assumed: one
 * node (die, package and heatsink at one temperature; a real heatsink adds slower time constants), R
 * constant (no fan curve), the transient of throttling itself instantaneous. */
#ifndef DSE_THERMAL_H
#define DSE_THERMAL_H
#include "hw.h"

/* The resistance of the cooling in use, degC/W. */
double thermal_R(const struct hw_thermal *t);
/* The power at which the board settles at its throttle temperature: (throttle_C - ambient_C) / R. */
double thermal_limit_W(const struct hw_thermal *t);
/* The temperature it settles at under P watts. */
double thermal_steady_C(const struct hw_thermal *t, double P_W);
/* The temperature after s seconds at P watts from a cold start; NAN when the cooling's heat capacity is
 * unpublished. */
double thermal_temp_at(const struct hw_thermal *t, double P_W, double s);
/* Seconds from a cold start at P watts to reach T_C; INFINITY when it settles below T_C; NAN when it
 * gets there but the cooling's heat capacity is unpublished (no time constant). */
double thermal_time_to(const struct hw_thermal *t, double P_W, double T_C);
/* Sets power caps on the devices of sys's thermal path for its sustained operating point: a system with
 * modes (a Jetson's power manager budgets the module) caps every device at limit_W, which the mode pick
 * reads as the whole system's cap; otherwise each device of the path gets its share of limit_W in
 * proportion to its power at the burst point (dev_W). An existing lower cap stays. */
void thermal_apply_cap(struct hw_system *sys, double limit_W, const double *dev_W);
/* "ambient 25 degC, cooling fan (1.8 degC/W), throttles at 80 degC" for messages. */
void thermal_describe(const struct hw_thermal *t, char *buf, size_t n);

#endif
