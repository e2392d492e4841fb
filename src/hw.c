/* hw.c -- what is derived from a loaded hardware description, and the transforms sweeps apply to
 * one (power caps, clock and array scaling): lookups of devices, links and peaks, die area, the
 * default energy of on-chip memories. The loader (hw_load.c) only reads and checks. */
#include "hw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const hw_class_names[HW_CLASS_COUNT + 1] = {"cpu", "gpu", "systolic", "npu", NULL};
const char *const hw_engine_names[ENG_COUNT + 1] = {"matrix", "vector", NULL};
const char *const hw_mem_kind_names[MEM_KIND_COUNT + 1] = {"register", "sram", "cache", "dram", "host", NULL};
const char *const hw_dataflow_names[DF_COUNT + 1] = {"os", "ws", "is", NULL};
const char *const hw_topo_kind_names[TOPO_KIND_COUNT + 1] = {"switch", "ring", "torus", "fat_tree", NULL};

double hw_default_mem_J_per_byte(enum hw_mem_kind k, double capacity_bytes, double process_nm)
{
    double scale = process_nm / 45.0;
    switch (k) {
    case MEM_REGISTER:
        return 0.625e-12 * scale; /* half of an 8 KB SRAM access (assumption, docs/models.md) */
    case MEM_SRAM:
    case MEM_CACHE: {
        /* Horowitz ISSCC 2014, 64-bit SRAM read: 8 KB 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ -> 1.25, 2.5,
         * 12.5 pJ/byte; piecewise linear in log2(size). A level's capacity is its aggregate over the
         * chip; arrays beyond 1 MiB are banked (an access reads one bank), so the 1 MiB figure is the
         * most a byte costs (extrapolating the slope charged a TPU v5e's 128 MiB VMEM 26.5 pJ/B, which
         * alone put its modelled power past its TDP). */
        double lg = log2(capacity_bytes > 1 ? capacity_bytes : 1);
        if (lg > 20)
            lg = 20;
        double pj;
        if (lg <= 15)
            pj = 1.25 + (lg - 13) * (2.5 - 1.25) / 2;
        else
            pj = 2.5 + (lg - 15) * (12.5 - 2.5) / 5;
        if (pj < 0.5)
            pj = 0.5;
        return pj * 1e-12 * scale;
    }
    case MEM_DRAM:
    case MEM_HOST:
    default:
        return 0; /* none: DRAM energy depends on its technology, which the level names (hw_memtech.c) */
    }
}

void hw_apply_power_cap(struct hw_device *d, double cap_W)
{
    d->power_cap_W = cap_W;
    if (cap_W > 0 && cap_W <= d->idle_W)
        snprintf(d->disabled, sizeof d->disabled, "power cap %g W is at or below the idle power %g W of device '%s'",
                 cap_W, d->idle_W, d->name);
    else if (cap_W > 0 && cap_W < d->min_limit_W)
        snprintf(d->disabled, sizeof d->disabled, "power cap %g W is below the lowest limit device '%s' accepts, %g W "
                 "(power.min_limit_W: the board's configurable range)", cap_W, d->name, d->min_limit_W);
}

void hw_scale_clock(struct hw_device *d, double f, double v2)
{
    d->base_Hz *= f;
    d->boost_Hz *= f;
    d->active_W *= f * v2;
    d->gap_W *= f * v2;
    for (int e = 0; e < ENG_COUNT; e++)
        d->engine_W[e] *= f * v2;
    for (int i = 0; i < d->n_compute; i++) {
        d->compute[i].clock_Hz *= f;
        d->compute[i].peak_flops *= f;
        d->compute[i].energy_J_per_mac *= v2;
    }
    for (int e = 0; e < ENG_COUNT; e++)
        for (int p = 0; p < P_COUNT; p++) {
            d->peak[e][p] *= f;
            d->mac_J[e][p] *= v2;
        }
}

int hw_mode_find(const struct hw_system *sys, const char *name)
{
    for (int k = 0; k < sys->n_modes; k++)
        if (!strcmp(sys->modes[k].name, name))
            return k;
    return -1;
}

/* Scales a device's units online by u: its peaks and its active and engine power (a unit off draws
 * nothing; its idle power is the board's, kept). */
static void scale_units(struct hw_device *d, double u)
{
    for (int i = 0; i < d->n_compute; i++) {
        d->compute[i].units *= u;
        d->compute[i].peak_flops *= u;
    }
    for (int e = 0; e < ENG_COUNT; e++) {
        d->engine_W[e] *= u;
        for (int p = 0; p < P_COUNT; p++)
            d->peak[e][p] *= u;
    }
    d->active_W *= u;
    d->gap_W *= u;
    d->units_share *= u;
    if (d->gpu.present) /* the cycle tier's waves: SMs online */
        d->gpu.sms = d->gpu.sms * u >= 1 ? (int)lround(d->gpu.sms * u) : 1;
}

double hw_mode_tdp_W(const struct hw_system *sys, int k, int d)
{
    const struct hw_device *dv = &sys->dev[d];
    if (k < 0)
        return dv->tdp_W;
    const struct hw_mode *m = &sys->modes[k];
    return (m->clock_Hz[d] > 0 || m->units_share[d] > 0) && m->budget_W > dv->idle_W ? m->budget_W : dv->tdp_W;
}

void hw_apply_mode(struct hw_system *sys, int k)
{
    const struct hw_mode *m = &sys->modes[k];
    for (int d = 0; d < sys->n_dev; d++) {
        struct hw_device *dv = &sys->dev[d];
        dv->tdp_W = hw_mode_tdp_W(sys, k, d); /* the module's budget is the limit, not a share of it */
        if (m->clock_Hz[d] > 0 && dv->boost_Hz > 0)
            hw_scale_clock(dv, m->clock_Hz[d] / dv->boost_Hz, 1);
        if (m->units_share[d] > 0 && dv->units_share > 0)
            scale_units(dv, m->units_share[d] / dv->units_share);
    }
    for (int l = 0; l < sys->n_memories; l++) {
        if (!(m->mem_Bps[l] > 0))
            continue;
        sys->memories[l].bandwidth_Bps = m->mem_Bps[l];
        for (int d = 0; d < sys->n_dev; d++)
            for (int i = 0; i < sys->dev[d].n_mem; i++)
                if (sys->dev[d].mem[i].shared == l)
                    sys->dev[d].mem[i].bandwidth_Bps = m->mem_Bps[l];
    }
    sys->mode = k;
}

void hw_scale_matrix(struct hw_device *d, double ratio)
{
    for (int i = 0; i < d->n_compute; i++)
        if (d->compute[i].engine == ENG_MATRIX) {
            d->compute[i].flops_per_cycle_per_unit *= ratio;
            d->compute[i].peak_flops *= ratio;
        }
    for (int p = 0; p < P_COUNT; p++)
        d->peak[ENG_MATRIX][p] *= ratio;
}

double hw_die_area_mm2(const struct hw_device *d)
{
    if (d->area_per_mac_mm2 <= 0)
        return d->die_area_mm2 > 0 ? d->die_area_mm2 : NAN;
    double macs = 0, mib = 0;
    for (int i = 0; i < d->n_compute; i++)
        if (d->compute[i].engine == ENG_MATRIX && d->compute[i].units * d->compute[i].flops_per_cycle_per_unit / 2 > macs)
            macs = d->compute[i].units * d->compute[i].flops_per_cycle_per_unit / 2;
    for (int l = 0; l < d->n_mem; l++)
        if (d->mem[l].shared < 0 && d->mem[l].kind <= MEM_CACHE)
            mib += d->mem[l].capacity_bytes / (1024.0 * 1024);
    return d->area_fixed_mm2 + macs * d->area_per_mac_mm2 + mib * d->area_per_MiB_mm2;
}

int hw_find_device(const struct hw_system *sys, const char *name)
{
    for (int i = 0; i < sys->n_dev; i++)
        if (strcmp(sys->dev[i].name, name) == 0)
            return i;
    return -1;
}

double hw_gemm_peak(const struct hw_device *d, enum prec p, enum hw_engine *used)
{
    enum hw_engine e = d->peak[ENG_MATRIX][p] >= d->peak[ENG_VECTOR][p] ? ENG_MATRIX : ENG_VECTOR;
    if (used)
        *used = e;
    return d->peak[e][p];
}

double hw_vector_peak(const struct hw_device *d, enum prec p, enum hw_engine *used)
{
    /* Pure MAC-array NPUs have no separate vector engine: their element-wise work runs in the
     * array's pipeline, so the matrix figure stands in (docs/models.md). */
    enum hw_engine e = d->peak[ENG_VECTOR][p] > 0 ? ENG_VECTOR : ENG_MATRIX;
    if (used)
        *used = e;
    return d->peak[e][p];
}

double hw_max_peak(const struct hw_device *d, enum prec *p)
{
    double best = 0;
    for (int e = 0; e < ENG_COUNT; e++)
        for (int q = 0; q < P_COUNT; q++)
            if (d->peak[e][q] > best) {
                best = d->peak[e][q];
                if (p)
                    *p = (enum prec)q;
            }
    return best;
}

double hw_main_capacity(const struct hw_device *d) { return d->n_mem ? d->mem[d->n_mem - 1].capacity_bytes : 0; }

double hw_usable_bytes(const struct hw_mem *m, double capacity_bytes, double util)
{
    double cap = capacity_bytes > 0 ? capacity_bytes : m->capacity_bytes;
    return (util > 0 && util < 1 ? util * cap : cap) - m->reserved_bytes;
}

int hw_link_between(const struct hw_system *sys, int a, int b)
{
    for (int i = 0; i < sys->n_link; i++)
        if ((sys->link[i].a == a && sys->link[i].b == b) || (sys->link[i].a == b && sys->link[i].b == a))
            return i;
    return -1;
}

int hw_topo_devices(const struct hw_system *sys) { return sys->topo.n_level > 0 ? sys->topo.devices : 1; }

int hw_first_shared_level(const struct hw_device *d) { return d->n_mem >= 3 ? 1 : 0; }

int hw_calibrated(const struct hw_device *d) { return d->calib_mape_pct >= 0 || d->arch[0]; }

/* Every efficiency term at its uncalibrated value (1, the half-points and floors 0): one place for
 * every loader, so a term added later cannot be left at zero by one of them. */
void hw_eff_defaults(struct hw_device *d)
{
    d->eff_compute = d->eff_vector = d->eff_memory = 1.0;
    d->calib_mape_pct = -1;
    d->serial_fraction = 0;
    d->kernel_s = 0;
    d->arch[0] = 0;
    for (int c = 0; c < EC_COUNT; c++)
        d->eff_class[c] = d->eff_mclass[c] = 1;
    for (int f = 0; f < FN_COUNT; f++)
        d->eff_fn[f] = 1;
    for (int m = 0; m < HW_MAX_MEM; m++)
        d->eff_level[m] = 1;
    for (int p = 0; p < P_COUNT; p++)
        d->eff_prec[p] = 1;
    d->gemm_k_half = d->gemm_k_fill = d->gemm_wave_tail = d->bw_half_bytes = 0;
    for (int k = 0; k < RK_COUNT; k++)
        d->row_iter_s[k] = 0;
    d->row_threads_per_sm = 0;
}

double hw_enclosures(const struct hw_system *sys, double devices)
{
    const struct hw_enclosure *en = &sys->encl;
    if (!en->present || en->devices <= 0 || !(devices > en->devices))
        return 1;
    return ceil(devices / en->devices);
}

double hw_enclosure_efficiency(const struct hw_enclosure *en, double dc_W)
{
    if (!en->present || en->n_eff == 0)
        return 1;
    double x = en->rating_W > 0 ? dc_W / en->rating_W : 0;
    if (en->n_eff == 1 || x <= en->eff_load[0])
        return en->eff[0];
    for (int i = 1; i < en->n_eff; i++)
        if (x <= en->eff_load[i]) {
            double t = (x - en->eff_load[i - 1]) / (en->eff_load[i] - en->eff_load[i - 1]);
            return en->eff[i - 1] + t * (en->eff[i] - en->eff[i - 1]);
        }
    return en->eff[en->n_eff - 1];
}

double hw_rails_W(const struct hw_system *sys, double n, double dev_W, double idle_W)
{
    const struct hw_enclosure *en = &sys->encl;
    if (!en->present)
        return dev_W;
    double dyn = dev_W > idle_W ? dev_W - idle_W : 0;
    return dev_W + n * (en->base_W + en->chassis_idle_W) + en->cooling_W_per_W * dyn;
}

double hw_input_W(const struct hw_system *sys, double n, double dev_W, double idle_W)
{
    double dc = hw_rails_W(sys, n, dev_W, idle_W);
    return dc / hw_enclosure_efficiency(&sys->encl, n > 0 ? dc / n : dc);
}

