/* cost.c -- the cost of a unit of work (cost.h).
 *
 * Work that keeps a system busy for T seconds at utilisation u holds the system T / u seconds: its
 * purchase price is charged for T / u of its amortisation period, its rent and hosting for T / u, and
 * its electricity is the work's energy E plus the idle power over the (1 - u) T / u it waits, both times
 * the PUE (the facility's cooling and distribution) at the electricity price:
 *   cost = (price / (years x 365 x 86400) + (rent + hosting x devices) / 3600) x T / u
 *          + (E + idle_W x T x (1 - u) / u) x PUE x USD/kWh / 3.6e6 */
#include "cost.h"

#include <math.h>
#include <stdio.h>

void cost_default(struct cost_cfg *c)
{
    c->usd_per_kWh = 0.10;
    c->pue = 1.0;
    c->amortize_years = 3;
    c->utilization = 1;
    c->hosting_usd_per_hour = 0;
}

int cost_check(const struct cost_cfg *c, const char *where_prefix, struct dse_err *e)
{
    const char *p = where_prefix ? where_prefix : "";
    if (!(c->usd_per_kWh >= 0 && c->usd_per_kWh <= 100))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%susd_per_kWh: expected a price in [0, 100] USD/kWh, got %g", p,
                           c->usd_per_kWh);
    if (!(c->pue >= 1 && c->pue <= 10))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%spue: expected a PUE in [1, 10] (facility energy over IT "
                           "energy), got %g", p, c->pue);
    if (!(c->amortize_years > 0 && c->amortize_years <= 100))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%samortize_years: expected years in (0, 100], got %g", p,
                           c->amortize_years);
    if (!(c->utilization > 0 && c->utilization <= 1))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%sutilization: expected a share of the time in (0, 1], got %g",
                           p, c->utilization);
    if (!(c->hosting_usd_per_hour >= 0 && c->hosting_usd_per_hour <= 1e6))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%shosting_usd_per_hour: expected USD per device-hour in "
                           "[0, 1e6], got %g", p, c->hosting_usd_per_hour);
    return DSE_OK;
}

double cost_usd(const struct cost_cfg *c, double price, double rent_per_hour, double n_devices, double idle_W,
                double T, double E)
{
    if (!(price > 0) && !(rent_per_hour > 0))
        return NAN;
    double held = T / c->utilization;
    double capital = price > 0 ? price / (c->amortize_years * 365 * 86400) : 0;
    double hourly = (rent_per_hour > 0 ? rent_per_hour : 0) + c->hosting_usd_per_hour * n_devices;
    double energy = (E + idle_W * (held - T)) * c->pue * c->usd_per_kWh / 3.6e6;
    return (capital + hourly / 3600) * held + energy;
}

void cost_describe(const struct cost_cfg *c, int with_util, char *buf, size_t n)
{
    char util[40] = "";
    if (with_util)
        snprintf(util, sizeof util, ", utilization %.0f %%", 100 * c->utilization);
    snprintf(buf, n, "%.3g USD/kWh, PUE %.2f, %.3g years%s, hosting %.3g USD/device-hour", c->usd_per_kWh, c->pue,
             c->amortize_years, util, c->hosting_usd_per_hour);
}
