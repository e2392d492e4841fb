/* cost.h -- what a unit of work costs to own and run (docs/models.md, "Cost"): the purchase price spread
 * over an amortisation period, rent or hosting per device-hour, and electricity at a price and a PUE,
 * all at a stated utilisation (the share of the time the system does this work; while it waits it is
 * still paid for and idles). One struct serves dse eval, dse sweep (the spec's "cost") and dse serve. */
#ifndef DSE_COST_H
#define DSE_COST_H

#include <stddef.h>

#include "err.h"

struct cost_cfg {
    double usd_per_kWh;          /* electricity price */
    double pue;                  /* power usage effectiveness: facility energy / IT energy, >= 1 */
    double amortize_years;       /* over which a purchase price is spread */
    double utilization;          /* share of the time the system runs this work, (0, 1] */
    double hosting_usd_per_hour; /* per device-hour (rack space, cooling, staff), beyond electricity */
};

/* The defaults, each printed with a result: 0.10 USD/kWh, PUE 1.0 (the IT load alone), 3 years, 100 %,
 * no hosting (docs/models.md gives the reasons and typical figures). */
void cost_default(struct cost_cfg *c);
/* DSE_EINPUT naming the field (with where, e.g. "--pue" or "cost.pue") when a figure is out of range. */
int cost_check(const struct cost_cfg *c, const char *where_prefix, struct dse_err *e);
/* The cost in USD of work that keeps the system busy for T seconds and uses E joules (IT energy), on
 * a system bought at price (0: none) or rented at rent_per_hour (0: none), of n devices idling at
 * idle_W in all while no work runs. NAN when neither a price nor a rent is known. */
double cost_usd(const struct cost_cfg *c, double price, double rent_per_hour, double n_devices, double idle_W,
                double T, double E);
/* "0.10 USD/kWh, PUE 1.00, 3 years, utilization 100 %, hosting 0 USD/device-hour" into buf; without the
 * utilisation when with_util is 0 (dse serve simulates its own). */
void cost_describe(const struct cost_cfg *c, int with_util, char *buf, size_t n);

#endif
