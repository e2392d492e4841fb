/* hw_load.c -- loading and validating hwdesc JSON (schema in hwdesc/README.md).
 *
 * Everything is checked here, once, before any evaluation: types, ranges, unknown fields, a source
 * on every object that carries figures, and derived peaks against datasheet headlines. */
#include "hw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw_memtech.h"
#include "jsonu.h"

static const char *const link_types[] = {"pcie", "nvlink", "noc", "shared_dram", "usb", "ethernet", "ici", NULL};

#define BIG 1e15 /* generous ceiling for any single figure: catches unit slips like GB/s given in B/s */

static int need_source(struct ju *j, const cJSON *o)
{
    char src[1024];
    return ju_str(j, o, "source", 0, src, sizeof src);
}

/* reserved_GiB: what the OS, driver and runtime hold of a main memory before a workload allocates
 * (a CUDA context, a Jetson's OS share); it needs its own reserved_source, and leaves something. */
static int load_reserve(struct ju *j, const cJSON *o, struct hw_mem *m)
{
    double gib = 0;
    char src[1024];
    int rc, has_src = cJSON_GetObjectItemCaseSensitive(o, "reserved_source") != NULL;
    if (!cJSON_GetObjectItemCaseSensitive(o, "reserved_GiB")) {
        if (!has_src)
            return DSE_OK;
        size_t old = ju_key(j, "reserved_source");
        rc = ju_fail(j, "a reserve's source without reserved_GiB");
        ju_pop(j, old);
        return rc;
    }
    if ((rc = ju_num(j, o, "reserved_GiB", JU_NONNEG, BIG / (1024.0 * 1024 * 1024), &gib)))
        return rc;
    size_t old = ju_key(j, "reserved_GiB");
    double b = gib * 1024.0 * 1024 * 1024;
    if (m->kind != MEM_DRAM && m->kind != MEM_HOST)
        rc = ju_fail(j, "only a dram or host level holds a reserve; this level is %s", hw_mem_kind_names[m->kind]);
    else if (!(b < m->capacity_bytes))
        rc = ju_fail(j, "expected less than the level's capacity (%.10g GiB), got %.10g",
                     m->capacity_bytes / (1024.0 * 1024 * 1024), gib);
    else if (gib > 0 && !has_src)
        rc = ju_fail(j, "missing: reserved_source (where the reserve's figure comes from)");
    ju_pop(j, old);
    if (!rc && has_src)
        rc = ju_str(j, o, "reserved_source", 0, src, sizeof src);
    m->reserved_bytes = b;
    return rc;
}

/* One memory level: capacity, bandwidth, energy per byte (the file's, its DRAM technology's or the
 * on-chip size default) and its reserve. */
static int load_mem(struct ju *j, const cJSON *o, double node, struct hw_mem *m)
{
    static const char *const keys[] = {"name", "kind", "capacity_KiB", "capacity_MiB", "capacity_GiB",
                                       "bandwidth_GBps", "latency_ns", "energy_pJ_per_byte", "technology",
                                       "reserved_GiB", "reserved_source", "source", "note", "description", NULL};
    int rc, kind = 0;
    if ((rc = ju_object(j, o, keys)) || (rc = ju_str(j, o, "name", 0, m->name, sizeof m->name)) ||
        (rc = ju_enum(j, o, "kind", 0, hw_mem_kind_names, &kind)))
        return rc;
    m->kind = (enum hw_mem_kind)kind;
    static const char *const cap_keys[] = {"capacity_KiB", "capacity_MiB", "capacity_GiB"};
    static const double cap_mult[] = {1024.0, 1024.0 * 1024, 1024.0 * 1024 * 1024};
    int found = 0;
    for (int i = 0; i < 3; i++) {
        if (!cJSON_GetObjectItemCaseSensitive(o, cap_keys[i]))
            continue;
        double v = 0;
        if ((rc = ju_num(j, o, cap_keys[i], JU_POS, BIG / cap_mult[i], &v)))
            return rc;
        m->capacity_bytes = v * cap_mult[i];
        found++;
    }
    if (found != 1)
        return ju_fail(j, "expected exactly one of capacity_KiB, capacity_MiB, capacity_GiB, got %d", found);
    double bw = 0, lat = 0, en = -1;
    if ((rc = ju_num(j, o, "bandwidth_GBps", JU_POS, 1e7, &bw)) ||
        (rc = ju_num(j, o, "latency_ns", JU_OPT | JU_NONNEG, 1e9, &lat)) ||
        (rc = ju_num(j, o, "energy_pJ_per_byte", JU_OPT | JU_POS, 1e6, &en)) || (rc = need_source(j, o)))
        return rc;
    m->bandwidth_Bps = bw * 1e9;
    m->latency_s = lat * 1e-9;
    /* Energy per byte: the file's figure, else the named DRAM technology's, else (on-chip levels only)
     * the size default. Off-chip energy differs 6x between HBM3 and DDR3, so a dram or host level
     * without either is refused rather than given one technology's figure. */
    const struct hw_memtech *tech = NULL;
    int off_chip = m->kind == MEM_DRAM || m->kind == MEM_HOST;
    if (cJSON_GetObjectItemCaseSensitive(o, "technology")) {
        char t[32], list[256];
        if ((rc = ju_str(j, o, "technology", 0, t, sizeof t)))
            return rc;
        tech = hw_memtech_find(t);
        size_t old = ju_key(j, "technology");
        if (!off_chip) {
            rc = ju_fail(j, "only dram and host levels name a DRAM technology; this level is %s",
                         hw_mem_kind_names[m->kind]);
        } else if (!tech) {
            hw_memtech_list(list, sizeof list);
            rc = ju_fail(j, "unknown DRAM technology '%s' (expected one of: %s)", t, list);
        }
        ju_pop(j, old);
        if (rc)
            return rc;
    } else if (off_chip && en <= 0) {
        char list[256];
        hw_memtech_list(list, sizeof list);
        size_t old = ju_key(j, "technology");
        rc = ju_fail(j, "missing: a %s level needs its DRAM technology (one of: %s) or energy_pJ_per_byte",
                     hw_mem_kind_names[m->kind], list);
        ju_pop(j, old);
        return rc;
    }
    if (en > 0)
        m->energy_J_per_byte = en * 1e-12;
    else if (tech)
        m->energy_J_per_byte = tech->pJ_per_byte * 1e-12;
    else
        m->energy_J_per_byte = hw_default_mem_J_per_byte(m->kind, m->capacity_bytes, node);
    m->shared = -1;
    return load_reserve(j, o, m);
}

static int load_compute(struct ju *j, const cJSON *o, const struct hw_device *d, struct hw_compute *c)
{
    static const char *const keys[] = {"engine", "precision", "units", "unit", "flops_per_cycle_per_unit",
                                       "clock_MHz", "headline_TFLOPS", "headline_TOPS", "energy_pJ_per_mac",
                                       "source", "note", NULL};
    int rc, eng = 0, p = 0;
    long long units = 0;
    double fpc = 0, clk = 0, en = -1;
    char unit[128];
    if ((rc = ju_object(j, o, keys)) || (rc = ju_enum(j, o, "engine", 0, hw_engine_names, &eng)) ||
        (rc = ju_enum(j, o, "precision", 0, prec_names, &p)) ||
        (rc = ju_int(j, o, "units", 0, 1, 10000000, &units)) || (rc = ju_str(j, o, "unit", JU_OPT, unit, sizeof unit)) ||
        (rc = ju_num(j, o, "flops_per_cycle_per_unit", JU_POS, 1e9, &fpc)) ||
        (rc = ju_num(j, o, "clock_MHz", JU_OPT | JU_POS, 1e5, &clk)) ||
        (rc = ju_num(j, o, "energy_pJ_per_mac", JU_OPT | JU_POS, 1e6, &en)) || (rc = need_source(j, o)))
        return rc;
    c->engine = (enum hw_engine)eng;
    c->prec = (enum prec)p;
    c->units = (double)units;
    c->flops_per_cycle_per_unit = fpc;
    c->clock_Hz = clk > 0 ? clk * 1e6 : d->boost_Hz;
    c->peak_flops = c->units * fpc * c->clock_Hz;
    c->energy_J_per_mac = en > 0 ? en * 1e-12 : 0; /* 0: derived from the engine's power (derive_mac_energy) */

    const char *hk = prec_is_int(c->prec) ? "headline_TOPS" : "headline_TFLOPS";
    const char *wrong = prec_is_int(c->prec) ? "headline_TFLOPS" : "headline_TOPS";
    if (cJSON_GetObjectItemCaseSensitive(o, wrong)) {
        size_t old = ju_key(j, wrong);
        rc = ju_fail(j, "use %s for %s", hk, prec_names[c->prec]);
        ju_pop(j, old);
        return rc;
    }
    double head = 0;
    if ((rc = ju_num(j, o, hk, JU_OPT | JU_POS, 1e7, &head)))
        return rc;
    if (head > 0) {
        double derived = c->peak_flops / 1e12;
        if (fabs(derived / head - 1) > HW_HEADLINE_TOL) {
            size_t old = ju_key(j, hk);
            rc = ju_fail(j, "derived peak %lld units x %g ops/cycle x %g MHz = %.4g T differs from the headline %g T by "
                         "%.1f%% (more than %.0f%%)",
                         units, fpc, c->clock_Hz / 1e6, derived, head, 100 * fabs(derived / head - 1),
                         100 * HW_HEADLINE_TOL);
            ju_pop(j, old);
            return rc;
        }
    }
    return DSE_OK;
}

/* A section of a device failed: with the cursor collecting (hw_load_buf), the problem is recorded in
 * *bad and loading goes on, so one run reports every independent problem of a file. Anything else
 * (out of memory, a problem that leaves nothing to go on with) is returned at once. */
#define KEEP(rc)                                                                                               \
    do {                                                                                                       \
        if (rc) {                                                                                              \
            if ((rc) != DSE_EINPUT || !j->collect)                                                             \
                return rc;                                                                                     \
            *bad = 1;                                                                                          \
            rc = DSE_OK;                                                                                       \
        }                                                                                                      \
    } while (0)

/* An optional section: the object under key, with the cursor moved onto it (ju_pop(j, *old) after),
 * or NULL when absent. */
static const cJSON *section(struct ju *j, const cJSON *o, const char *key, size_t *old)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
    if (s)
        *old = ju_key(j, key);
    return s;
}

/* Each section loader reads one member of a device object: it returns DSE_OK (problems collected in
 * *bad) or an error that stops the device. They run in the order of device_sections: memory levels
 * before what refers to them (array SRAMs, per-level efficiencies), the clock before compute peaks. */
typedef int (*section_loader)(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad);

static int load_clock(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *const keys[] = {"base_MHz", "boost_MHz", "source", "note", NULL};
    const cJSON *ck = cJSON_GetObjectItemCaseSensitive(o, "clock");
    size_t old = ju_key(j, "clock");
    double base = 0, boost = 0;
    int rc;
    if (!ck)
        rc = ju_fail(j, "missing (expected an object with base_MHz, boost_MHz, source)");
    else if (!(rc = ju_object(j, ck, keys)) && !(rc = ju_num(j, ck, "base_MHz", JU_POS, 1e5, &base)) &&
             !(rc = ju_num(j, ck, "boost_MHz", JU_POS, 1e5, &boost)) && !(rc = need_source(j, ck)) &&
             boost < base) {
        size_t o2 = ju_key(j, "boost_MHz");
        char bs[32], xs[32];
        rc = ju_fail(j, "expected at least base_MHz (%s), got %s", ju_shortest(bs, sizeof bs, base),
                     ju_shortest(xs, sizeof xs, boost));
        ju_pop(j, o2);
    }
    ju_pop(j, old);
    if (!rc) { /* compute peaks follow the clock: left 0 when it failed, so they are skipped */
        d->base_Hz = base * 1e6;
        d->boost_Hz = boost * 1e6;
    }
    KEEP(rc);
    return DSE_OK;
}

static int load_memories(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    const cJSON *arr;
    int n, rc;
    if ((rc = ju_array(j, o, "memory", 0, HW_MAX_MEM, &arr, &n)))
        return rc;
    size_t old = ju_key(j, "memory");
    if (n == 0) {
        rc = ju_fail(j, "expected at least one memory level");
        ju_pop(j, old);
        return rc;
    }
    for (int i = 0; i < n; i++) {
        const cJSON *m = cJSON_GetArrayItem(arr, i);
        size_t o2 = ju_idx(j, i);
        if (cJSON_IsString(m)) { /* a shared level of the system's memories */
            int k;
            for (k = 0; k < sys->n_memories; k++)
                if (strcmp(sys->memories[k].name, m->valuestring) == 0)
                    break;
            if (k == sys->n_memories)
                rc = ju_fail(j, "'%s' names no level in the top-level memories", m->valuestring);
            else {
                d->mem[i] = sys->memories[k];
                d->mem[i].shared = k;
            }
        } else {
            rc = load_mem(j, m, d->process_nm, &d->mem[i]);
        }
        ju_pop(j, o2);
        KEEP(rc);
    }
    ju_pop(j, old);
    d->n_mem = n;
    return DSE_OK;
}

static int load_computes(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    const cJSON *arr;
    int n, rc;
    if ((rc = ju_array(j, o, "compute", 0, HW_MAX_COMPUTE, &arr, &n)))
        return rc;
    size_t old = ju_key(j, "compute");
    if (n == 0)
        rc = ju_fail(j, "expected at least one compute entry");
    KEEP(rc);
    /* peaks need the clock: without it, they would only add errors that follow from it */
    for (int i = 0; i < n && d->boost_Hz > 0; i++) {
        size_t o2 = ju_idx(j, i);
        rc = load_compute(j, cJSON_GetArrayItem(arr, i), d, &d->compute[i]);
        ju_pop(j, o2);
        KEEP(rc);
    }
    ju_pop(j, old);
    d->n_compute = n;
    for (int i = 0; i < n; i++) {
        const struct hw_compute *c = &d->compute[i];
        if (c->peak_flops > d->peak[c->engine][c->prec])
            d->peak[c->engine][c->prec] = c->peak_flops;
    }
    return DSE_OK;
}

static int load_dvfs(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *const keys[] = {"points", "source", "voltage_source", "note", NULL};
    static const char *const pt_keys[] = {"freq_MHz", "voltage_V", "note", NULL};
    size_t old;
    const cJSON *dv = section(j, o, "dvfs", &old), *arr;
    int n, rc;
    if (!dv)
        return DSE_OK;
    if (!(rc = ju_object(j, dv, keys)) && !(rc = need_source(j, dv)) &&
        !(rc = ju_array(j, dv, "points", 0, HW_MAX_DVFS, &arr, &n))) {
        size_t o2 = ju_key(j, "points");
        if (n == 0)
            rc = ju_fail(j, "expected at least one operating point");
        for (int i = 0; i < n && !rc; i++) {
            const cJSON *pt = cJSON_GetArrayItem(arr, i);
            size_t o3 = ju_idx(j, i);
            double f = 0, v = 0;
            if (!(rc = ju_object(j, pt, pt_keys)) && !(rc = ju_num(j, pt, "freq_MHz", JU_POS, 1e5, &f)) &&
                !(rc = ju_num(j, pt, "voltage_V", JU_OPT | JU_POS, 5, &v))) {
                if (i > 0 && f * 1e6 <= d->dvfs[i - 1].freq_Hz)
                    rc = ju_fail(j, "points must be sorted by increasing freq_MHz (%g after %g)", f,
                                 d->dvfs[i - 1].freq_Hz / 1e6);
                else if (i > 0 && (v > 0) != (d->dvfs[0].voltage_V > 0))
                    rc = ju_fail(j, "give voltage_V on every point or on none (none: unpublished, power scales "
                                 "with the clock alone)");
                d->dvfs[i].freq_Hz = f * 1e6;
                d->dvfs[i].voltage_V = v;
            }
            ju_pop(j, o3);
        }
        ju_pop(j, o2);
        d->n_dvfs = n;
        /* voltages may come from other documents than clocks (or be fitted): their own source, when given;
         * a voltage source for points without voltages sources nothing dse uses */
        char src[1024];
        int has_v = n > 0 && d->dvfs[0].voltage_V > 0;
        if (!rc && cJSON_GetObjectItemCaseSensitive(dv, "voltage_source")) {
            if (has_v) {
                rc = ju_str(j, dv, "voltage_source", 0, src, sizeof src);
            } else {
                size_t o3 = ju_key(j, "voltage_source");
                rc = ju_fail(j, "given, but no point has a voltage_V");
                ju_pop(j, o3);
            }
        }
    }
    ju_pop(j, old);
    KEEP(rc);
    return DSE_OK;
}

/* A compute entry without energy_pJ_per_mac draws its engine's dynamic power at its headline rate:
 * energy per MAC = engine_W / (peak / 2), so every precision of a matrix engine at full rate draws
 * the same power (operand delivery, which scales with operand bytes, dominates the multiplier's own
 * energy: a 2x-rate fp8 MAC costs half an fp16 one). A device without a TDP (a SCALE-Sim .cfg) keeps
 * the multiplier-and-adder figure of Horowitz (ISSCC 2014) at 45 nm, scaled by node. Then fills
 * mac_J with the energy of the entry that gives each engine and precision its peak. */
static void derive_mac_energy(struct hw_device *d)
{
    for (int i = 0; i < d->n_compute; i++) {
        struct hw_compute *c = &d->compute[i];
        if (c->energy_J_per_mac > 0)
            continue;
        if (d->engine_W[c->engine] > 0 && c->peak_flops > 0)
            c->energy_J_per_mac = d->engine_W[c->engine] / (c->peak_flops / 2);
        else
            c->energy_J_per_mac = prec_mac_pJ_45nm(c->prec) * 1e-12 * d->process_nm / 45.0;
    }
    int taken[ENG_COUNT][P_COUNT] = {{0}};
    for (int i = 0; i < d->n_compute; i++) {
        const struct hw_compute *c = &d->compute[i];
        if (c->peak_flops > 0 && c->peak_flops >= d->peak[c->engine][c->prec] && !taken[c->engine][c->prec]) {
            d->mac_J[c->engine][c->prec] = c->energy_J_per_mac;
            taken[c->engine][c->prec] = 1;
        }
    }
}

/* The share of the dynamic budget (tdp_W - idle_W) an active device draws whatever it computes, when
 * power.active_W is not given: an assumption (docs/models.md), which dse calibrate --published --power
 * replaces by a fit; the rest is each engine's power at its headline rate. */
#define HW_ACTIVE_SHARE 0.5

static int load_power(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *const keys[] = {"idle_W", "tdp_W", "active_W", "gap_W", "gap_source", "matrix_W",
                                       "vector_W", "heldout_mape_pct", "min_limit_W", "source", "note", NULL};
    const cJSON *pw = cJSON_GetObjectItemCaseSensitive(o, "power");
    size_t old = ju_key(j, "power");
    double act = -1, eng[ENG_COUNT] = {-1, -1};
    d->power_mape_pct = -1;
    int rc;
    if (!pw)
        rc = ju_fail(j, "missing (expected an object with idle_W, tdp_W, source)");
    else if (!(rc = ju_object(j, pw, keys)) && !(rc = ju_num(j, pw, "idle_W", JU_NONNEG, 1e6, &d->idle_W)) &&
             !(rc = ju_num(j, pw, "tdp_W", JU_POS, 1e6, &d->tdp_W)) &&
             !(rc = ju_num(j, pw, "active_W", JU_OPT | JU_NONNEG, 1e6, &act)) &&
             !(rc = ju_num(j, pw, "gap_W", JU_OPT | JU_NONNEG, 1e6, &d->gap_W)) &&
             !(rc = ju_num(j, pw, "matrix_W", JU_OPT | JU_POS, 1e6, &eng[ENG_MATRIX])) &&
             !(rc = ju_num(j, pw, "vector_W", JU_OPT | JU_POS, 1e6, &eng[ENG_VECTOR])) &&
             !(rc = ju_num(j, pw, "heldout_mape_pct", JU_OPT | JU_NONNEG, 1e6, &d->power_mape_pct)) &&
             !(rc = ju_num(j, pw, "min_limit_W", JU_OPT | JU_POS, 1e6, &d->min_limit_W)) &&
             !(rc = need_source(j, pw))) {
        /* idle_W above the TDP is a contradiction; idle_W + active_W above it is not: such a device throttles
         * (a TDP lowered with --set acts as a limit, not as a smaller chip) */
        char ts[32], is[32];
        if (d->idle_W > d->tdp_W) {
            size_t o2 = ju_key(j, "idle_W");
            rc = ju_fail(j, "expected at most tdp_W (%s), got %s", ju_shortest(ts, sizeof ts, d->tdp_W),
                         ju_shortest(is, sizeof is, d->idle_W));
            ju_pop(j, o2);
        } else if (d->min_limit_W > d->tdp_W) {
            size_t o2 = ju_key(j, "min_limit_W");
            rc = ju_fail(j, "expected at most tdp_W (%s), got %s", ju_shortest(ts, sizeof ts, d->tdp_W),
                         ju_shortest(is, sizeof is, d->min_limit_W));
            ju_pop(j, o2);
        }
    }
    if (!rc) {
        double budget = d->tdp_W - d->idle_W;
        d->active_W = act >= 0 ? act : HW_ACTIVE_SHARE * budget;
        for (int e = 0; e < ENG_COUNT; e++)
            d->engine_W[e] = eng[e] > 0 ? eng[e] : budget - d->active_W > 0 ? budget - d->active_W : 0;
        int has_gs = cJSON_GetObjectItemCaseSensitive(pw, "gap_source") != NULL;
        int has_g = cJSON_GetObjectItemCaseSensitive(pw, "gap_W") != NULL;
        char gsrc[1024];
        if (has_g != has_gs) { /* a figure without its source, or a source of nothing */
            size_t o2 = ju_key(j, has_g ? "gap_source" : "gap_W");
            rc = ju_fail(j, has_g ? "missing (gap_W needs its source: a measurement, or the fit that gave it)"
                                  : "missing (gap_source is given for no gap_W)");
            ju_pop(j, o2);
        } else if (has_gs) {
            rc = ju_str(j, pw, "gap_source", 0, gsrc, sizeof gsrc);
        }
        if (!rc && d->gap_W > d->active_W) { /* clocks up without work cannot draw more than with it */
            char as[32], gs[32];
            size_t o2 = ju_key(j, "gap_W");
            rc = ju_fail(j, "expected at most active_W (%s), got %s", ju_shortest(as, sizeof as, d->active_W),
                         ju_shortest(gs, sizeof gs, d->gap_W));
            ju_pop(j, o2);
        }
    }
    derive_mac_energy(d);
    ju_pop(j, old);
    KEEP(rc);
    return DSE_OK;
}

static int load_cost(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *const keys[] = {"price_USD", "die_area_mm2", "rent_USD_per_hour", "source", "note", NULL};
    size_t old;
    const cJSON *co = section(j, o, "cost", &old);
    int rc;
    if (!co)
        return DSE_OK;
    if (!(rc = ju_object(j, co, keys)) && !(rc = ju_num(j, co, "price_USD", JU_OPT | JU_POS, 1e9, &d->price_USD)) &&
        !(rc = ju_num(j, co, "die_area_mm2", JU_OPT | JU_POS, 1e6, &d->die_area_mm2)) &&
        !(rc = ju_num(j, co, "rent_USD_per_hour", JU_OPT | JU_POS, 1e6, &d->rent_USD_per_hour)) &&
        !(rc = need_source(j, co)) && d->price_USD == 0 && d->die_area_mm2 == 0 && d->rent_USD_per_hour == 0)
        rc = ju_fail(j, "expected price_USD, die_area_mm2 and/or rent_USD_per_hour");
    ju_pop(j, old);
    KEEP(rc);
    return DSE_OK;
}

static int load_array(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *const keys[] = {"rows", "cols", "count", "dataflow", "ifmap_sram_KiB", "filter_sram_KiB",
                                       "ofmap_sram_KiB", "source", "note", NULL};
    long long rows = 0, cols = 0, count = 1;
    double ik = 0, fk = 0, ok = 0;
    int df = 0, rc;
    size_t old;
    const cJSON *ay = section(j, o, "array", &old);
    if (!ay)
        return DSE_OK;
    if (!(rc = ju_object(j, ay, keys)) && !(rc = ju_int(j, ay, "rows", 0, 1, 65536, &rows)) &&
        !(rc = ju_int(j, ay, "cols", 0, 1, 65536, &cols)) && !(rc = ju_int(j, ay, "count", JU_OPT, 1, 4096, &count)) &&
        !(rc = ju_enum(j, ay, "dataflow", 0, hw_dataflow_names, &df)) &&
        !(rc = ju_num(j, ay, "ifmap_sram_KiB", JU_OPT | JU_POS, 1e9, &ik)) &&
        !(rc = ju_num(j, ay, "filter_sram_KiB", JU_OPT | JU_POS, 1e9, &fk)) &&
        !(rc = ju_num(j, ay, "ofmap_sram_KiB", JU_OPT | JU_POS, 1e9, &ok)))
        rc = need_source(j, ay);
    ju_pop(j, old);
    int failed = rc != DSE_OK;
    KEEP(rc);
    if (failed)
        return DSE_OK;
    /* Operand SRAMs not given follow the memory levels, so hw: sweeps of a level reach the cycle tier:
     * inputs in the largest sram level, outputs in the smallest other one (or the same), weights in a
     * FIFO of 4 array-sized tiles (TPU v1's Weight FIFO). */
    int big = -1, small = -1;
    for (int l = 0; l < d->n_mem; l++)
        if (d->mem[l].kind == MEM_SRAM && (big < 0 || d->mem[l].capacity_bytes > d->mem[big].capacity_bytes))
            big = l;
    for (int l = 0; l < d->n_mem; l++)
        if (d->mem[l].kind == MEM_SRAM && l != big && (small < 0 || d->mem[l].capacity_bytes < d->mem[small].capacity_bytes))
            small = l;
    if (small < 0)
        small = big;
    if ((ik <= 0 || ok <= 0) && big < 0) {
        old = ju_key(j, "array");
        rc = ju_fail(j, "ifmap_sram_KiB and ofmap_sram_KiB are needed when the device has no sram level");
        ju_pop(j, old);
        KEEP(rc);
        return DSE_OK;
    }
    if (ik <= 0)
        ik = d->mem[big].capacity_bytes / 1024;
    if (ok <= 0)
        ok = d->mem[small].capacity_bytes / 1024;
    if (fk <= 0)
        fk = 4.0 * rows * cols * count / 1024;
    d->array = (struct hw_array){1, (int)rows, (int)cols, (int)count, (enum hw_dataflow)df, ik * 1024, fk * 1024,
                                 ok * 1024, SA_SHARED, 0};
    return DSE_OK;
}

/* A dataflow NPU's contexts (optional; hw.h, struct hw_contexts). */
static int load_contexts(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *const keys[] = {"capacity_MiB", "switch_us", "source", "note", NULL};
    double cap = 0, sw = 0;
    int rc;
    size_t old;
    const cJSON *cx = section(j, o, "contexts", &old);
    if (!cx)
        return DSE_OK;
    if (!(rc = ju_object(j, cx, keys)) && !(rc = ju_num(j, cx, "capacity_MiB", JU_POS, 1e6, &cap)) &&
        !(rc = ju_num(j, cx, "switch_us", 0, 1e7, &sw)))
        rc = need_source(j, cx);
    if (!rc && d->cls != HW_NPU)
        rc = ju_fail(j, "contexts describe a dataflow NPU; device class is %s", hw_class_names[d->cls]);
    ju_pop(j, old);
    KEEP(rc);
    if (!rc)
        d->ctx = (struct hw_contexts){1, cap * 1024 * 1024, sw * 1e-6};
    return DSE_OK;
}

/* GPU and CPU cycle-tier parameters (optional) */
static int load_gpu(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *const keys[] = {"sms", "ctas_per_sm", "tile_m", "tile_n", "tile_k", "bw_fraction",
                                       "split_k_max", "source", "note", NULL};
    long long sms = 0, ctas = 1, tm = 128, tn = 128, tk = 32, skm = 0;
    double frac = 1;
    int rc;
    size_t old;
    const cJSON *gp = section(j, o, "gpu", &old);
    if (!gp)
        return DSE_OK;
    if (!(rc = ju_object(j, gp, keys)) && !(rc = ju_int(j, gp, "sms", 0, 1, 100000, &sms)) &&
        !(rc = ju_int(j, gp, "ctas_per_sm", JU_OPT, 1, 64, &ctas)) && !(rc = ju_int(j, gp, "tile_m", JU_OPT, 1, 4096, &tm)) &&
        !(rc = ju_int(j, gp, "tile_n", JU_OPT, 1, 4096, &tn)) && !(rc = ju_int(j, gp, "tile_k", JU_OPT, 1, 4096, &tk)) &&
        !(rc = ju_num(j, gp, "bw_fraction", JU_OPT | JU_POS, 1, &frac)) &&
        !(rc = ju_int(j, gp, "split_k_max", JU_OPT, 1, 1024, &skm)))
        rc = need_source(j, gp);
    ju_pop(j, old);
    KEEP(rc);
    d->gpu = (struct hw_gpu){1, (int)sms, (int)ctas, (int)tm, (int)tn, (int)tk, frac, (int)skm};
    return DSE_OK;
}

static int load_cpu(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *const keys[] = {"mr", "nr", "stream_fraction", "source", "note", NULL};
    long long mr = 6, nr = 16;
    double frac = 1;
    int rc;
    size_t old;
    const cJSON *cp = section(j, o, "cpu", &old);
    if (!cp)
        return DSE_OK;
    if (!(rc = ju_object(j, cp, keys)) && !(rc = ju_int(j, cp, "mr", JU_OPT, 1, 1024, &mr)) &&
        !(rc = ju_int(j, cp, "nr", JU_OPT, 1, 1024, &nr)) &&
        !(rc = ju_num(j, cp, "stream_fraction", JU_OPT | JU_POS, 1, &frac)))
        rc = need_source(j, cp);
    ju_pop(j, old);
    KEEP(rc);
    d->cpu = (struct hw_cpu){1, (int)mr, (int)nr, frac};
    return DSE_OK;
}

static int load_area(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *const keys[] = {"fixed_mm2", "per_mac_mm2", "per_MiB_sram_mm2", "source", "note", NULL};
    int rc;
    size_t old;
    const cJSON *ar = section(j, o, "area", &old);
    if (!ar)
        return DSE_OK;
    if (!(rc = ju_object(j, ar, keys)) && !(rc = ju_num(j, ar, "fixed_mm2", JU_NONNEG, 1e6, &d->area_fixed_mm2)) &&
        !(rc = ju_num(j, ar, "per_mac_mm2", JU_POS, 1e3, &d->area_per_mac_mm2)) &&
        !(rc = ju_num(j, ar, "per_MiB_sram_mm2", JU_POS, 1e4, &d->area_per_MiB_mm2)))
        rc = need_source(j, ar);
    ju_pop(j, old);
    KEEP(rc);
    return DSE_OK;
}

static int load_overhead(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *const keys[] = {"per_op_us", "graph_node_us", "per_step_us", "per_request_us", "fork_join_us",
                                       "gemm_setup_us", "per_group_us", "pack_left_Gelem_per_s", "pack_right_Gelem_per_s",
                                       "source", "note", NULL};
    double us = 0, gn = 0, step = 0, req = 0, pl = 0, pr = 0, setup = 0, fj = 0, pg = 0;
    int rc;
    size_t old;
    const cJSON *ov = section(j, o, "overhead", &old);
    if (!ov)
        return DSE_OK;
    if (!(rc = ju_object(j, ov, keys)) && !(rc = ju_num(j, ov, "per_op_us", JU_NONNEG, 1e6, &us)) &&
        !(rc = ju_num(j, ov, "graph_node_us", JU_OPT | JU_NONNEG, 1e6, &gn)) &&
        !(rc = ju_num(j, ov, "per_step_us", JU_OPT | JU_NONNEG, 1e7, &step)) &&
        !(rc = ju_num(j, ov, "per_request_us", JU_OPT | JU_NONNEG, 1e8, &req)) &&
        !(rc = ju_num(j, ov, "gemm_setup_us", JU_OPT | JU_NONNEG, 1e6, &setup)) &&
        !(rc = ju_num(j, ov, "fork_join_us", JU_OPT | JU_NONNEG, 1e6, &fj)) &&
        !(rc = ju_num(j, ov, "per_group_us", JU_OPT | JU_NONNEG, 1e6, &pg)) &&
        !(rc = ju_num(j, ov, "pack_left_Gelem_per_s", JU_OPT | JU_POS, 1e5, &pl)) &&
        !(rc = ju_num(j, ov, "pack_right_Gelem_per_s", JU_OPT | JU_POS, 1e5, &pr)))
        rc = need_source(j, ov);
    ju_pop(j, old);
    KEEP(rc);
    d->per_op_s = us * 1e-6;
    d->graph_node_s = gn * 1e-6;
    d->per_step_s = step * 1e-6;
    d->per_request_s = req * 1e-6;
    d->pack_elem_per_s[0] = pl * 1e9;
    d->pack_elem_per_s[1] = pr * 1e9;
    d->gemm_setup_s = setup * 1e-6;
    d->fork_join_s = fj * 1e-6;
    d->per_group_s = pg * 1e-6;
    return DSE_OK;
}

/* efficiency.per_level: memory level name -> bandwidth efficiency */
static int load_level_effs(struct ju *j, const cJSON *pl, struct hw_device *d)
{
    int rc = DSE_OK;
    size_t o2 = ju_key(j, "per_level");
    if (!cJSON_IsObject(pl))
        rc = ju_fail(j, "expected an object of memory level name -> efficiency");
    for (const cJSON *it = pl->child; it && !rc; it = it->next) {
        int m;
        for (m = 0; m < d->n_mem; m++)
            if (!strcmp(d->mem[m].name, it->string))
                break;
        if (m == d->n_mem) {
            size_t o3 = ju_key(j, it->string);
            rc = ju_fail(j, "no memory level of this name in the device");
            ju_pop(j, o3);
        } else {
            rc = ju_num(j, pl, it->string, JU_POS, 4, &d->eff_level[m]);
        }
    }
    ju_pop(j, o2);
    return rc;
}

/* efficiency (optional, default: the ideal roofline). Its kernel terms (achieved compute, bandwidth,
 * GEMM depth and size terms, the overlap, a kernel's fixed duration) come from the device's own section,
 * or, for a device naming an "arch", from that architecture's file (hwdesc/arch/NAME.json), shared by
 * every board of the die and kernel library; the board keeps its held-out error. Whole runs' factors
 * (training, prefill, decode, fitted on end-to-end cases) are a software release's (software/NAME.json
 * versions[].efficiency), never a board's: the keys are refused with that reason. */
static const char *const eff_kernel_keys[] = {"compute",         "vector",          "memory",     "per_class",
                                              "per_level",       "per_precision",   "gemm_k_half", "gemm_k_fill", "gemm_wave_tail", "bw_half_MB",
                                              "memory_per_class", "memory_per_function", "serial_fraction", NULL};
static const char *const eff_board_keys[] = {"heldout_mape_pct", NULL};
static const char *const eff_run_keys[] = {"training", "prefill", "decode", "training_heldout_mape_pct",
                                           "inference_heldout_mape_pct", "training_software", "inference_software", NULL};


/* The kernel terms of ef; arch: an architecture file's section, whose memory level is main_memory (the
 * device's outermost, whatever its technology) rather than per_level's names. */
static int eff_kernel_terms(struct ju *j, const cJSON *ef, struct hw_device *d, int arch)
{
    double bw_half_MB = 0, main = -1, kernel_us = 0;
    int rc;
    if (!(rc = ju_num(j, ef, "compute", JU_OPT | JU_POS, 4, &d->eff_compute)) &&
        !(rc = ju_num(j, ef, "vector", JU_OPT | JU_POS, 4, &d->eff_vector)) &&
        !(rc = ju_num(j, ef, "memory", JU_OPT | JU_POS, 4, &d->eff_memory)) &&
        !(rc = ju_num(j, ef, "serial_fraction", JU_OPT | JU_NONNEG, 1, &d->serial_fraction)) &&
        !(rc = ju_num(j, ef, "gemm_k_half", JU_OPT | JU_NONNEG, 1e6, &d->gemm_k_half)) &&
        !(rc = ju_num(j, ef, "gemm_k_fill", JU_OPT | JU_NONNEG, 1e6, &d->gemm_k_fill)) &&
        !(rc = ju_num(j, ef, "gemm_wave_tail", JU_OPT | JU_NONNEG, 1, &d->gemm_wave_tail)) &&
        !(rc = ju_num(j, ef, "bw_half_MB", JU_OPT | JU_NONNEG, 1e6, &bw_half_MB)) && arch &&
        !(rc = ju_num(j, ef, "main_memory", JU_OPT | JU_POS, 4, &main)))
        rc = ju_num(j, ef, "kernel_us", JU_OPT | JU_NONNEG, 1e4, &kernel_us);
    if (rc)
        return rc;
    d->kernel_s = kernel_us * 1e-6;
    for (int c = 0; c < EC_COUNT; c++)
        d->eff_class[c] = c <= EC_ATTENTION_DECODE ? d->eff_compute : d->eff_vector;
    for (int m = 0; m < HW_MAX_MEM; m++)
        d->eff_level[m] = d->eff_memory;
    if (main > 0 && d->n_mem > 0)
        d->eff_level[d->n_mem - 1] = main;
    const cJSON *pc = cJSON_GetObjectItemCaseSensitive(ef, "per_class");
    if (pc && !(rc = ju_object(j, pc, hw_eff_class_names))) {
        size_t o2 = ju_key(j, "per_class");
        for (int c = 0; c < EC_COUNT && !rc; c++)
            rc = ju_num(j, pc, hw_eff_class_names[c], JU_OPT | JU_POS, 4, &d->eff_class[c]);
        if (!cJSON_GetObjectItemCaseSensitive(pc, "matmul_skinny")) /* follows matmul unless given */
            d->eff_class[EC_MATMUL_SKINNY] = d->eff_class[EC_MATMUL];
        if (!cJSON_GetObjectItemCaseSensitive(pc, "attention_decode"))
            d->eff_class[EC_ATTENTION_DECODE] = d->eff_class[EC_ATTENTION];
        ju_pop(j, o2);
    }
    d->bw_half_bytes = bw_half_MB * 1e6;
    const cJSON *pp = rc ? NULL : cJSON_GetObjectItemCaseSensitive(ef, "per_precision");
    if (pp && !(rc = ju_object(j, pp, prec_names))) {
        size_t o2 = ju_key(j, "per_precision");
        for (int p = 0; p < P_COUNT && !rc; p++)
            rc = ju_num(j, pp, prec_names[p], JU_OPT | JU_POS, 4, &d->eff_prec[p]);
        ju_pop(j, o2);
    }
    const cJSON *mc = rc ? NULL : cJSON_GetObjectItemCaseSensitive(ef, "memory_per_class");
    if (mc && !(rc = ju_object(j, mc, hw_eff_class_names))) {
        size_t o2 = ju_key(j, "memory_per_class");
        for (int c = 0; c < EC_COUNT && !rc; c++)
            rc = ju_num(j, mc, hw_eff_class_names[c], JU_OPT | JU_POS, 4, &d->eff_mclass[c]);
        ju_pop(j, o2);
    }
    const cJSON *mf = rc ? NULL : cJSON_GetObjectItemCaseSensitive(ef, "memory_per_function");
    if (mf && !(rc = ju_object(j, mf, wl_fn_names))) {
        size_t o2 = ju_key(j, "memory_per_function");
        for (int f = FN_NONE + 1; f < FN_COUNT && !rc; f++)
            rc = ju_num(j, mf, wl_fn_names[f], JU_OPT | JU_POS, 4, &d->eff_fn[f]);
        ju_pop(j, o2);
    }
    const cJSON *pl = rc || arch ? NULL : cJSON_GetObjectItemCaseSensitive(ef, "per_level");
    if (pl)
        rc = load_level_effs(j, pl, d);
    return rc;
}

/* row_kernels (an architecture's, optional): the GPU library's one-CTA-per-row kernels, each step through
 * a row costing iter_ns (model_row_floor_s); the SMs' resident threads bound how many rows run at once. */
static int load_row_kernels(struct ju *j, const cJSON *ef, struct hw_device *d)
{
    static const char *const keys[] = {"threads_per_sm", "iter_ns", "source", NULL};
    const cJSON *rk = cJSON_GetObjectItemCaseSensitive(ef, "row_kernels");
    if (!rk)
        return DSE_OK;
    size_t old = ju_key(j, "row_kernels");
    long long th = 0;
    int rc = ju_object(j, rk, keys);
    if (!rc)
        rc = need_source(j, rk);
    if (!rc)
        rc = ju_int(j, rk, "threads_per_sm", 0, 32, 1 << 16, &th);
    const cJSON *it = rc ? NULL : cJSON_GetObjectItemCaseSensitive(rk, "iter_ns");
    if (!rc && !it) {
        ju_key(j, "iter_ns");
        rc = ju_fail(j, "missing (expected an object of nanoseconds per step by row kernel: %s, %s, %s)",
                     row_kind_names[0], row_kind_names[1], row_kind_names[2]);
    }
    if (!rc) {
        size_t o2 = ju_key(j, "iter_ns");
        rc = ju_object(j, it, row_kind_names);
        for (int k = 0; k < RK_COUNT && !rc; k++) {
            double ns = 0;
            rc = ju_num(j, it, row_kind_names[k], JU_OPT | JU_POS, 1e6, &ns);
            d->row_iter_s[k] = ns * 1e-9;
        }
        ju_pop(j, o2);
    }
    d->row_threads_per_sm = (int)th;
    ju_pop(j, old);
    return rc;
}

int hw_arch_path(const char *hwdesc, const char *arch, char *out, size_t n)
{
    const char *slash = hwdesc ? strrchr(hwdesc, '/') : NULL;
    if (snprintf(out, n, "%.*s/arch/%s.json", slash ? (int)(slash - hwdesc) : 1, slash ? hwdesc : ".", arch) < (int)n &&
        !access(out, R_OK))
        return 0;
    char dirs[JU_DATA_DIRS_BYTES];
    const char *bases[1 + JU_MAX_DATA_DIRS] = {"."};
    int nb = 1 + ju_data_dirs(bases + 1, JU_MAX_DATA_DIRS, dirs, sizeof dirs);
    for (int b = 0; b < nb; b++)
        if (snprintf(out, n, "%s/hwdesc/arch/%s.json", bases[b], arch) < (int)n && !access(out, R_OK))
            return 0;
    return -1;
}

/* The architecture file a device names: DIR/arch/NAME.json beside the hwdesc, else hwdesc/arch/NAME.json
 * under the working folder or DSE_PATH's folders (a hwdesc written elsewhere, as calibrate --out does). */
static int load_arch(struct ju *j, const cJSON *o, struct hw_device *d)
{
    static const char *const keys[] = {"schema", "name", "description", "boards", "efficiency", "fit", "source",
                                       "note", NULL};
    int rc = ju_str(j, o, "arch", 0, d->arch, sizeof d->arch);
    if (rc)
        return rc;
    for (const char *c = d->arch; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.') ||
            (c == d->arch && *c == '.')) {
            ju_key(j, "arch");
            return ju_fail(j, "expected an architecture name ([a-z0-9._-], the file hwdesc/arch/NAME.json), got '%s'",
                           d->arch);
        }
    char path[DSE_PATH_LEN];
    if (hw_arch_path(j->file, d->arch, path, sizeof path)) {
        ju_key(j, "arch");
        return ju_fail(j, "no architecture file hwdesc/arch/%s.json beside the hwdesc or under the working folder",
                       d->arch);
    }
    char *text = NULL, schema[32];
    size_t len = 0;
    cJSON *root = NULL;
    struct dse_err *e = j->e;
    if ((rc = ju_read_file(path, JU_MAX_FILE_BYTES, &text, &len, e)) || (rc = ju_parse(text, len, path, &root, e))) {
        free(text);
        j->n_err++;
        return rc;
    }
    free(text);
    struct ju aj;
    ju_init(&aj, path, e);
    aj.collect = j->collect; /* its problems are the hwdesc's: reported with the rest */
    const cJSON *ef = cJSON_GetObjectItemCaseSensitive(root, "efficiency");
    size_t old;
    if (!(rc = ju_object(&aj, root, keys)) && !(rc = ju_str(&aj, root, "schema", 0, schema, sizeof schema))) {
        if (strcmp(schema, "dse-arch-1")) {
            ju_key(&aj, "schema");
            rc = ju_fail(&aj, "expected \"dse-arch-1\", got \"%s\"", schema);
        } else if (!(rc = need_source(&aj, root)) && !ef) {
            rc = ju_fail(&aj, "efficiency: missing (the architecture's kernel terms)");
        }
    }
    if (!rc) {
        static const char *const akeys[] = {"compute",       "vector",          "memory",      "main_memory",
                                            "per_class",     "per_precision",   "gemm_k_half", "gemm_k_fill", "gemm_wave_tail", "bw_half_MB",
                                            "memory_per_class", "memory_per_function", "serial_fraction",
                                            "kernel_us", "row_kernels", "source",
                                            "note",          NULL};
        old = ju_key(&aj, "efficiency");
        if (!(rc = ju_object(&aj, ef, akeys)) && !(rc = need_source(&aj, ef)))
            rc = eff_kernel_terms(&aj, ef, d, 1);
        if (!rc)
            rc = load_row_kernels(&aj, ef, d);
        ju_pop(&aj, old);
    }
    cJSON_Delete(root);
    j->n_err += aj.n_err; /* counted where the loader decides: a bad figure there fails the hwdesc */
    return rc;
}

static int load_efficiency(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    static const char *keys[sizeof eff_kernel_keys / sizeof *eff_kernel_keys + sizeof eff_board_keys /
                             sizeof *eff_board_keys + 2];
    int nk = 0, rc = DSE_OK;
    for (int i = 0; eff_kernel_keys[i]; i++)
        keys[nk++] = eff_kernel_keys[i];
    for (int i = 0; eff_board_keys[i]; i++)
        keys[nk++] = eff_board_keys[i];
    keys[nk++] = "source";
    keys[nk++] = "note";
    keys[nk] = NULL;
    hw_eff_defaults(d);
    int arch = cJSON_GetObjectItemCaseSensitive(o, "arch") != NULL;
    if (arch && (rc = load_arch(j, o, d)))
        return rc; /* its terms are every kernel's: nothing of the device is right without them */
    size_t old;
    const cJSON *ef = section(j, o, "efficiency", &old);
    if (!ef)
        return DSE_OK;
    for (int i = 0; eff_run_keys[i] && !rc; i++)
        if (cJSON_GetObjectItemCaseSensitive(ef, eff_run_keys[i])) {
            ju_key(j, eff_run_keys[i]);
            rc = ju_fail(j, "a whole run's factor is its software release's, not the board's: set it in "
                            "software/NAME.json versions[].efficiency (dse calibrate --published --multi-device "
                            "--software NAME@VERSION fits it)");
        }
    if (!rc && !(rc = ju_object(j, ef, keys)) && arch)
        for (int i = 0; eff_kernel_keys[i] && !rc; i++)
            if (cJSON_GetObjectItemCaseSensitive(ef, eff_kernel_keys[i])) {
                ju_key(j, eff_kernel_keys[i]);
                rc = ju_fail(j, "a kernel term of architecture '%s': set in hwdesc/arch/%s.json, which every board of "
                                "the die shares (dse calibrate --measured fits it)", d->arch, d->arch);
            }
    if (!rc && !arch)
        rc = eff_kernel_terms(j, ef, d, 0);
    if (!rc && !(rc = ju_num(j, ef, "heldout_mape_pct", JU_OPT | JU_NONNEG, 1e6, &d->calib_mape_pct)))
        rc = need_source(j, ef);
    ju_pop(j, old);
    KEEP(rc);
    return DSE_OK;
}

/* ops (optional, default all) */
static int load_ops(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d, int *bad)
{
    (void)sys;
    const cJSON *arr;
    int n, rc;
    if ((rc = ju_array(j, o, "ops", JU_OPT, OP_COUNT * 2, &arr, &n)))
        return rc;
    if (!arr) {
        d->ops_mask = (1u << OP_COUNT) - 1;
        return DSE_OK;
    }
    size_t old = ju_key(j, "ops");
    for (int i = 0; i < n && !rc; i++) {
        const cJSON *s = cJSON_GetArrayItem(arr, i);
        size_t o2 = ju_idx(j, i);
        int t = cJSON_IsString(s) ? op_type_from_name(s->valuestring) : -1;
        if (t < 0) {
            char list[256];
            op_type_list(list, sizeof list);
            rc = ju_fail(j, "expected an operator name (one of: %s)", list);
        } else {
            d->ops_mask |= 1u << t;
        }
        ju_pop(j, o2);
    }
    ju_pop(j, old);
    KEEP(rc);
    for (int t = 0; t < OP_COUNT; t++) /* views cost nothing anywhere; every device takes part in collectives */
        if (op_info[t].flags & (OPF_VIEW | OPF_COLL))
            d->ops_mask |= 1u << t;
    return DSE_OK;
}

static const section_loader device_sections[] = {load_clock,    load_memories, load_computes, load_dvfs,
                                                 load_power,    load_cost,     load_array,    load_gpu,
                                                 load_cpu,      load_area,     load_overhead, load_efficiency,
                                                 load_ops,      load_contexts};

static int load_device(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_device *d)
{
    static const char *const keys[] = {"name", "class", "model", "process_nm", "clock", "compute", "memory",
                                       "dvfs", "power", "cost", "area", "array", "gpu", "cpu", "overhead",
                                       "arch", "efficiency", "ops", "software", "note", "description", "source",
                                       "contexts", NULL};
    int rc, cls = 0, bad = 0;
    if (!cJSON_IsObject(o))
        return ju_object(j, o, keys);
    rc = ju_object(j, o, keys); /* an unknown field: report it, and the rest */
    if (rc && (rc != DSE_EINPUT || !j->collect))
        return rc;
    bad = rc != DSE_OK;
    if ((rc = ju_str(j, o, "name", 0, d->name, sizeof d->name)) ||
        (rc = ju_enum(j, o, "class", 0, hw_class_names, &cls)) ||
        (rc = ju_str(j, o, "model", JU_OPT, d->model, sizeof d->model)) ||
        (rc = ju_str(j, o, "software", JU_OPT, d->software, sizeof d->software)))
        return rc;
    d->cls = (enum hw_class)cls;
    d->units_share = 1;
    d->process_nm = 45;
    rc = ju_num(j, o, "process_nm", JU_OPT | JU_POS, 1000, &d->process_nm);
    if (rc && (rc != DSE_EINPUT || !j->collect))
        return rc;
    bad |= rc != DSE_OK;
    for (size_t i = 0; i < sizeof device_sections / sizeof device_sections[0]; i++)
        if ((rc = device_sections[i](j, o, sys, d, &bad)))
            return rc;
    return bad ? DSE_EINPUT : DSE_OK;
}

/* quiet_ends: devices had problems, so an endpoint naming none may name one that failed to load: not
 * reported again. */
static int load_link(struct ju *j, const cJSON *o, const struct hw_system *sys, int quiet_ends, struct hw_link *l)
{
    static const char *const keys[] = {"name", "type", "endpoints", "bandwidth_GBps", "latency_us",
                                       "energy_pJ_per_byte", "source", "note", NULL};
    int rc, type = 0, n;
    const cJSON *arr;
    double bw = 0, lat = 0, en = -1;
    if ((rc = ju_object(j, o, keys)) || (rc = ju_str(j, o, "name", 0, l->name, sizeof l->name)) ||
        (rc = ju_enum(j, o, "type", 0, link_types, &type)) || (rc = ju_array(j, o, "endpoints", 0, 2, &arr, &n)) ||
        (rc = ju_num(j, o, "bandwidth_GBps", JU_POS, 1e7, &bw)) ||
        (rc = ju_num(j, o, "latency_us", JU_NONNEG, 1e7, &lat)) ||
        (rc = ju_num(j, o, "energy_pJ_per_byte", JU_OPT | JU_POS, 1e6, &en)) || (rc = need_source(j, o)))
        return rc;
    dse_strlcpy(l->type, link_types[type], sizeof l->type);
    size_t old = ju_key(j, "endpoints");
    if (n != 2)
        rc = ju_fail(j, "expected two device names, got %d entries", n);
    int ends[2] = {-1, -1};
    for (int i = 0; i < 2 && !rc; i++) {
        const cJSON *s = cJSON_GetArrayItem(arr, i);
        size_t o2 = ju_idx(j, i);
        ends[i] = cJSON_IsString(s) ? hw_find_device(sys, s->valuestring) : -1;
        if (ends[i] < 0 && quiet_ends && cJSON_IsString(s))
            rc = DSE_EINPUT; /* the problem is the device's, reported already */
        else if (ends[i] < 0)
            rc = ju_fail(j, "expected the name of a device of this system");
        ju_pop(j, o2);
    }
    if (!rc && ends[0] == ends[1])
        rc = ju_fail(j, "a link joins two different devices");
    ju_pop(j, old);
    if (rc)
        return rc;
    l->a = ends[0];
    l->b = ends[1];
    l->bandwidth_Bps = bw * 1e9;
    l->latency_s = lat * 1e-6;
    /* Default: PCIe-class SerDes, about 5 pJ/bit (assumption documented in docs/models.md). */
    l->energy_J_per_byte = en > 0 ? en * 1e-12 : 40e-12;
    return DSE_OK;
}

/* One level of a topology (hw.h). A torus names its dims (1 to 3, product = count); other kinds none. */
static int load_topo_level(struct ju *j, const cJSON *o, struct hw_topo_level *l)
{
    static const char *const keys[] = {"name", "kind", "count", "dims", "bandwidth_GBps", "latency_us",
                                       "base_latency_us", "efficiency", "energy_pJ_per_byte", "source", "note", NULL};
    int rc, kind = 0, n = 0;
    long long count = 0;
    const cJSON *arr;
    double bw = 0, lat = 0, en = -1, base = 0, eff = 1;
    if ((rc = ju_object(j, o, keys)) || (rc = ju_str(j, o, "name", 0, l->name, sizeof l->name)) ||
        (rc = ju_enum(j, o, "kind", 0, hw_topo_kind_names, &kind)) ||
        (rc = ju_int(j, o, "count", 0, 2, HW_MAX_TOPO_DEVICES, &count)) ||
        (rc = ju_array(j, o, "dims", JU_OPT, 3, &arr, &n)) ||
        (rc = ju_num(j, o, "bandwidth_GBps", JU_POS, 1e7, &bw)) ||
        (rc = ju_num(j, o, "latency_us", JU_NONNEG, 1e7, &lat)) ||
        (rc = ju_num(j, o, "base_latency_us", JU_OPT | JU_NONNEG, 1e7, &base)) ||
        (rc = ju_num(j, o, "efficiency", JU_OPT | JU_POS, 1, &eff)) ||
        (rc = ju_num(j, o, "energy_pJ_per_byte", JU_OPT | JU_POS, 1e6, &en)) || (rc = need_source(j, o)))
        return rc;
    l->kind = (enum hw_topo_kind)kind;
    l->base_latency_s = base * 1e-6;
    l->count = (int)count;
    l->n_dims = 1;
    l->dims[0] = l->count;
    if (arr && l->kind != TOPO_TORUS) {
        ju_key(j, "dims");
        return ju_fail(j, "only a torus has dims (this level is a %s)", hw_topo_kind_names[kind]);
    }
    if (l->kind == TOPO_TORUS) {
        size_t old = ju_key(j, "dims");
        if (!arr || n < 1)
            return ju_fail(j, "a torus needs its dimensions, e.g. [4, 4, 4]");
        long long prod = 1;
        for (int i = 0; i < n; i++) {
            const cJSON *v = cJSON_GetArrayItem(arr, i);
            size_t o2 = ju_idx(j, i);
            if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 2 ||
                v->valuedouble > HW_MAX_TOPO_DEVICES)
                return ju_fail(j, "expected an integer in [2, %d]", HW_MAX_TOPO_DEVICES);
            ju_pop(j, o2);
            l->dims[i] = (int)v->valuedouble;
            prod *= l->dims[i];
        }
        if (prod != count)
            return ju_fail(j, "the dimensions multiply to %lld, but count is %lld", prod, count);
        l->n_dims = n;
        ju_pop(j, old);
    }
    l->bandwidth_Bps = bw * 1e9 * eff; /* what the communication library reaches of the line rate */
    l->line_rate_Bps = bw * 1e9;
    l->latency_s = lat * 1e-6;
    /* Default: the links' default (PCIe-class SerDes, about 5 pJ/bit; docs/models.md). */
    l->energy_J_per_byte = en > 0 ? en * 1e-12 : 40e-12;
    return DSE_OK;
}

static int load_topology(struct ju *j, const cJSON *root, struct hw_system *sys)
{
    static const char *const keys[] = {"device", "levels", "source", "note", NULL};
    struct hw_topology *t = &sys->topo;
    char dev[HW_NAME_LEN];
    const cJSON *arr;
    int rc, n;
    size_t old;
    const cJSON *o = section(j, root, "topology", &old);
    if (!o)
        return DSE_OK;
    if ((rc = ju_object(j, o, keys)) || (rc = ju_str(j, o, "device", 0, dev, sizeof dev)) ||
        (rc = ju_array(j, o, "levels", 0, HW_MAX_TOPO_LEVELS, &arr, &n)))
        return rc;
    int d = hw_find_device(sys, dev);
    if (d < 0) {
        ju_key(j, "device");
        return ju_fail(j, "expected the name of a device of this system, got '%s'", dev);
    }
    size_t o2 = ju_key(j, "levels");
    if (n < 1)
        return ju_fail(j, "expected at least one level");
    double total = 1;
    for (int i = 0; i < n; i++) {
        size_t o3 = ju_idx(j, i);
        if ((rc = load_topo_level(j, cJSON_GetArrayItem(arr, i), &t->level[i])))
            return rc;
        for (int k = 0; k < i; k++)
            if (strcmp(t->level[k].name, t->level[i].name) == 0)
                return ju_fail(j, "level name '%s' used twice", t->level[i].name);
        total *= t->level[i].count;
        if (total > HW_MAX_TOPO_DEVICES)
            return ju_fail(j, "the levels hold %.0f devices so far, more than the %d supported", total,
                           HW_MAX_TOPO_DEVICES);
        ju_pop(j, o3);
    }
    ju_pop(j, o2);
    ju_pop(j, old);
    t->dev = d;
    t->n_level = n;
    t->devices = (int)total;
    return DSE_OK;
}

/* One mode's devices: device name -> {clock_MHz, units_share}. */
static int load_mode_devices(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_mode *m)
{
    static const char *const keys[] = {"clock_MHz", "units_share", "note", NULL};
    int rc = DSE_OK;
    size_t old = ju_key(j, "devices");
    if (!cJSON_IsObject(o))
        rc = ju_fail(j, "expected an object of device name -> {clock_MHz, units_share}");
    for (const cJSON *it = o->child; it && !rc; it = it->next) {
        size_t o2 = ju_key(j, it->string);
        int d = hw_find_device(sys, it->string);
        double f = 0, u = 0;
        if (d < 0)
            rc = ju_fail(j, "no device of this name in the system");
        else if (!(rc = ju_object(j, it, keys)) && !(rc = ju_num(j, it, "clock_MHz", JU_OPT | JU_POS, 1e5, &f)) &&
                 !(rc = ju_num(j, it, "units_share", JU_OPT | JU_POS, 1, &u)) && f <= 0 && u <= 0)
            rc = ju_fail(j, "expected clock_MHz, units_share or both");
        if (!rc) {
            m->clock_Hz[d] = f * 1e6;
            m->units_share[d] = u;
        }
        ju_pop(j, o2);
    }
    ju_pop(j, old);
    return rc;
}

/* One mode's shared memories: level name -> bandwidth in GB/s. */
static int load_mode_memories(struct ju *j, const cJSON *o, struct hw_system *sys, struct hw_mode *m)
{
    int rc = DSE_OK;
    size_t old = ju_key(j, "memory_GBps");
    if (!cJSON_IsObject(o))
        rc = ju_fail(j, "expected an object of top-level memory name -> bandwidth in GB/s");
    for (const cJSON *it = o->child; it && !rc; it = it->next) {
        int l;
        for (l = 0; l < sys->n_memories; l++)
            if (!strcmp(sys->memories[l].name, it->string))
                break;
        double bw = 0;
        if (l == sys->n_memories) {
            size_t o2 = ju_key(j, it->string);
            rc = ju_fail(j, "no level of this name in the top-level memories");
            ju_pop(j, o2);
        } else if (!(rc = ju_num(j, o, it->string, JU_POS, 1e7, &bw))) {
            m->mem_Bps[l] = bw * 1e9;
        }
    }
    ju_pop(j, old);
    return rc;
}

/* modes (optional): the system's operating points; mode (optional): the one the file is in. */
static int load_modes(struct ju *j, const cJSON *root, struct hw_system *sys)
{
    static const char *const keys[] = {"points", "source", "note", NULL};
    static const char *const pt_keys[] = {"name", "budget_W", "devices", "memory_GBps", "note", NULL};
    size_t old;
    const cJSON *o = section(j, root, "modes", &old), *arr;
    int rc = DSE_OK, n = 0;
    sys->mode = -1;
    if (o) {
        if ((rc = ju_object(j, o, keys)) || (rc = need_source(j, o)) ||
            (rc = ju_array(j, o, "points", 0, HW_MAX_MODES, &arr, &n)))
            return rc;
        size_t o2 = ju_key(j, "points");
        if (n < 1)
            return ju_fail(j, "expected at least one mode");
        for (int i = 0; i < n; i++) {
            const cJSON *pt = cJSON_GetArrayItem(arr, i);
            struct hw_mode *m = &sys->modes[i];
            memset(m, 0, sizeof *m);
            size_t o3 = ju_idx(j, i);
            if ((rc = ju_object(j, pt, pt_keys)) || (rc = ju_str(j, pt, "name", 0, m->name, sizeof m->name)) ||
                (rc = ju_num(j, pt, "budget_W", JU_POS, 1e6, &m->budget_W)))
                return rc;
            for (int k = 0; k < i; k++)
                if (!strcmp(sys->modes[k].name, m->name))
                    return ju_fail(j, "mode name '%s' used twice", m->name);
            const cJSON *dv = cJSON_GetObjectItemCaseSensitive(pt, "devices"),
                        *mem = cJSON_GetObjectItemCaseSensitive(pt, "memory_GBps");
            if (!dv && !mem)
                return ju_fail(j, "a mode sets devices, memory_GBps or both");
            if ((dv && (rc = load_mode_devices(j, dv, sys, m))) || (mem && (rc = load_mode_memories(j, mem, sys, m))))
                return rc;
            ju_pop(j, o3);
        }
        ju_pop(j, o2);
        ju_pop(j, old);
        sys->n_modes = n;
    }
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(root, "mode");
    if (!sel)
        return DSE_OK;
    char name[32];
    if ((rc = ju_str(j, root, "mode", 0, name, sizeof name)))
        return rc;
    int k = hw_mode_find(sys, name);
    if (k < 0) {
        char list[HW_MAX_MODES * 34] = "";
        for (int i = 0; i < sys->n_modes; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", sys->modes[i].name);
        ju_key(j, "mode");
        return ju_fail(j, "no mode '%s' in the system's modes (%s)", name, sys->n_modes ? list : "it has none");
    }
    hw_apply_mode(sys, k);
    return DSE_OK;
}

/* thermal (optional): the board's lumped thermal model and the conditions of the run (struct hw_thermal). */
static int load_thermal(struct ju *j, const cJSON *root, struct hw_system *sys)
{
    static const char *const keys[] = {"coolings", "cooling", "throttle_C", "shutdown_C", "ambient_C", "duration_s",
                                       "devices", "source", "note", NULL};
    static const char *const c_keys[] = {"resistance_C_per_W", "heat_capacity_J_per_C", "source", "note", NULL};
    size_t old;
    const cJSON *o = section(j, root, "thermal", &old), *arr;
    struct hw_thermal *t = &sys->thermal;
    int rc, n = 0;
    memset(t, 0, sizeof *t);
    if (!o)
        return DSE_OK;
    t->ambient_C = 25; /* the datasheets' reference room; printed with every result */
    if ((rc = ju_object(j, o, keys)) || (rc = need_source(j, o)) ||
        (rc = ju_num(j, o, "throttle_C", JU_POS, 200, &t->throttle_C)) ||
        (rc = ju_num(j, o, "shutdown_C", JU_OPT | JU_POS, 250, &t->shutdown_C)) ||
        (rc = ju_num(j, o, "ambient_C", JU_OPT, 0, &t->ambient_C)) ||
        (rc = ju_num(j, o, "duration_s", JU_OPT | JU_NONNEG, 1e9, &t->duration_s)))
        return rc;
    if (t->shutdown_C > 0 && t->shutdown_C <= t->throttle_C) {
        ju_key(j, "shutdown_C");
        return ju_fail(j, "expected above throttle_C (%g), got %g", t->throttle_C, t->shutdown_C);
    }
    if (!(t->ambient_C >= -60 && t->ambient_C < t->throttle_C)) {
        ju_key(j, "ambient_C");
        return ju_fail(j, "expected from -60 up to below throttle_C (%g), got %g", t->throttle_C, t->ambient_C);
    }
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(o, "coolings");
    size_t o2 = ju_key(j, "coolings");
    if (!cJSON_IsObject(cs) || !cs->child)
        return ju_fail(j, "expected an object of cooling name -> {resistance_C_per_W, heat_capacity_J_per_C, source}");
    for (const cJSON *it = cs->child; it; it = it->next) {
        size_t o3 = ju_key(j, it->string);
        int k = t->n_cooling;
        if (k == HW_MAX_COOLING)
            return ju_fail(j, "at most %d coolings", HW_MAX_COOLING);
        if (strlen(it->string) == 0 || strlen(it->string) >= sizeof t->cooling_name[0])
            return ju_fail(j, "expected a name of 1 to %zu bytes", sizeof t->cooling_name[0] - 1);
        if ((rc = ju_object(j, it, c_keys)) || (rc = need_source(j, it)) ||
            (rc = ju_num(j, it, "resistance_C_per_W", JU_POS, 1e4, &t->R_C_per_W[k])) ||
            (rc = ju_num(j, it, "heat_capacity_J_per_C", JU_OPT | JU_POS, 1e9, &t->C_J_per_C[k])))
            return rc;
        dse_strlcpy(t->cooling_name[t->n_cooling++], it->string, sizeof t->cooling_name[0]);
        ju_pop(j, o3);
    }
    ju_pop(j, o2);
    char name[24] = "";
    if ((rc = ju_str(j, o, "cooling", t->n_cooling == 1 ? JU_OPT : 0, name, sizeof name)))
        return rc;
    t->cooling = 0;
    if (name[0]) {
        for (t->cooling = 0; t->cooling < t->n_cooling && strcmp(t->cooling_name[t->cooling], name); t->cooling++)
            ;
        if (t->cooling == t->n_cooling) {
            char list[HW_MAX_COOLING * 26] = "";
            for (int i = 0; i < t->n_cooling; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", t->cooling_name[i]);
            ju_key(j, "cooling");
            return ju_fail(j, "no cooling '%s' in coolings (%s)", name, list);
        }
    }
    if ((rc = ju_array(j, o, "devices", JU_OPT, HW_MAX_DEVICES, &arr, &n)))
        return rc;
    if (!arr) {
        t->devices = (1u << sys->n_dev) - 1;
    } else {
        size_t o3 = ju_key(j, "devices");
        if (n == 0)
            return ju_fail(j, "expected at least one device name");
        for (int i = 0; i < n; i++) {
            const cJSON *it = cJSON_GetArrayItem(arr, i);
            int d = cJSON_IsString(it) ? hw_find_device(sys, it->valuestring) : -1;
            size_t o4 = ju_idx(j, i);
            if (d < 0)
                return ju_fail(j, "expected the name of a device of the system");
            ju_pop(j, o4);
            t->devices |= 1u << d;
        }
        ju_pop(j, o3);
    }
    ju_pop(j, old);
    t->present = 1;
    return DSE_OK;
}

/* enclosure (optional): what the system draws beyond its devices and the conversion from the meter's input
 * (struct hw_enclosure). "efficiency" is a number in (0, 1] or a list of {load, efficiency} points at
 * increasing load fractions of rating_W. */
static int load_enclosure(struct ju *j, const cJSON *root, struct hw_system *sys)
{
    static const char *const keys[] = {"base_W", "chassis_idle_W", "cooling_W_per_W", "cooling_source", "efficiency",
                                       "efficiency_source", "rating_W", "devices", "source", "note", NULL};
    static const char *const p_keys[] = {"load", "efficiency", NULL};
    size_t old;
    const cJSON *o = section(j, root, "enclosure", &old);
    struct hw_enclosure *en = &sys->encl;
    int rc;
    memset(en, 0, sizeof *en);
    if (!o)
        return DSE_OK;
    double devices = 0;
    if ((rc = ju_object(j, o, keys)) || (rc = need_source(j, o)) ||
        (rc = ju_num(j, o, "base_W", JU_OPT | JU_NONNEG, 1e7, &en->base_W)) ||
        (rc = ju_num(j, o, "chassis_idle_W", JU_OPT | JU_NONNEG, 1e7, &en->chassis_idle_W)) ||
        (rc = ju_num(j, o, "cooling_W_per_W", JU_OPT | JU_NONNEG, 10, &en->cooling_W_per_W)) ||
        (rc = ju_num(j, o, "rating_W", JU_OPT | JU_POS, 1e8, &en->rating_W)) ||
        (rc = ju_num(j, o, "devices", JU_OPT | JU_POS | JU_INT, HW_MAX_TOPO_DEVICES, &devices)))
        return rc;
    en->devices = (int)devices;
    /* the fans' and the supplies' figures come from other documents than the enclosure's: each its source */
    char src[1024];
    const cJSON *ef = cJSON_GetObjectItemCaseSensitive(o, "efficiency");
    if ((en->cooling_W_per_W > 0 && (rc = ju_str(j, o, "cooling_source", 0, src, sizeof src))) ||
        (ef && (rc = ju_str(j, o, "efficiency_source", 0, src, sizeof src))))
        return rc;
    size_t o2 = ju_key(j, "efficiency");
    if (cJSON_IsNumber(ef)) {
        en->eff[0] = ef->valuedouble;
        en->n_eff = 1;
        if (!(en->eff[0] > 0 && en->eff[0] <= 1))
            return ju_fail(j, "expected a number in (0, 1], got %g", en->eff[0]);
    } else if (cJSON_IsArray(ef)) {
        int n = cJSON_GetArraySize(ef);
        if (n < 1 || n > HW_MAX_EFF_POINTS)
            return ju_fail(j, "expected 1 to %d {load, efficiency} points, got %d", HW_MAX_EFF_POINTS, n);
        if (!(en->rating_W > 0)) {
            ju_pop(j, o2);
            ju_key(j, "rating_W");
            return ju_fail(j, "missing (efficiency points are at load fractions of rating_W)");
        }
        for (int i = 0; i < n; i++) {
            size_t o3 = ju_idx(j, i);
            const cJSON *it = cJSON_GetArrayItem(ef, i);
            if ((rc = ju_object(j, it, p_keys)) || (rc = ju_num(j, it, "load", JU_POS, 2, &en->eff_load[i])) ||
                (rc = ju_num(j, it, "efficiency", JU_POS, 1, &en->eff[i])))
                return rc;
            if (i > 0 && !(en->eff_load[i] > en->eff_load[i - 1])) {
                ju_key(j, "load");
                return ju_fail(j, "expected above the previous point's load (%g), got %g", en->eff_load[i - 1],
                               en->eff_load[i]);
            }
            ju_pop(j, o3);
        }
        en->n_eff = n;
    } else if (ef) {
        return ju_fail(j, "expected a number in (0, 1] or a list of {load, efficiency} points");
    }
    ju_pop(j, o2);
    if (en->rating_W > 0 && !cJSON_IsArray(ef)) { /* a rating only scales efficiency points: never ignored */
        ju_key(j, "rating_W");
        return ju_fail(j, "given without efficiency points ({load, efficiency} at load fractions of it)");
    }
    ju_pop(j, old);
    en->present = 1;
    return DSE_OK;
}

int hw_load_buf(const char *buf, unsigned long len, const char *fname, struct hw_system *sys, struct dse_err *e)
{
    static const char *const keys[] = {"schema", "name", "description", "memories", "devices", "links",
                                       "topology", "modes", "mode", "thermal", "enclosure", "clocks_locked", "note", "source",
                                       NULL};
    cJSON *root = NULL;
    struct ju j;
    int rc, n;
    const cJSON *arr;
    char schema[32];
    memset(sys, 0, sizeof *sys);
    if ((rc = ju_parse(buf, len, fname, &root, e)))
        return rc;
    ju_init(&j, fname, e);
    dse_err_clear(e);
    j.collect = 1; /* report every independent problem of the file in one run */
    if ((rc = ju_object(&j, root, keys)) || (rc = ju_str(&j, root, "schema", 0, schema, sizeof schema)))
        goto out;
    if (strcmp(schema, "dse-hwdesc-1") != 0) {
        ju_key(&j, "schema");
        rc = ju_fail(&j, "expected \"dse-hwdesc-1\", got \"%s\"", schema);
        goto out;
    }
    if ((rc = ju_str(&j, root, "name", 0, sys->name, sizeof sys->name)) ||
        (rc = ju_str(&j, root, "description", JU_OPT, sys->description, sizeof sys->description)))
        goto out;

    if ((rc = ju_array(&j, root, "memories", JU_OPT, HW_MAX_MEM, &arr, &n)))
        goto out;
    ju_key(&j, "memories");
    for (int i = 0; i < n; i++) {
        size_t o2 = ju_idx(&j, i);
        /* Shared memories are off-chip: no node scaling applies to their default energy. */
        int r2 = load_mem(&j, cJSON_GetArrayItem(arr, i), 45, &sys->memories[i]);
        for (int k = 0; k < i && !r2; k++)
            if (strcmp(sys->memories[k].name, sys->memories[i].name) == 0)
                r2 = ju_fail(&j, "memory name '%s' used twice", sys->memories[i].name);
        ju_pop(&j, o2);
        if (r2 && r2 != DSE_EINPUT) {
            rc = r2;
            goto out;
        }
    }
    ju_pop(&j, 0);
    sys->n_memories = n;

    if ((rc = ju_array(&j, root, "devices", 0, HW_MAX_DEVICES, &arr, &n)))
        goto out;
    ju_key(&j, "devices");
    if (n == 0)
        rc = ju_fail(&j, "expected at least one device");
    int dev_errors = j.n_err;
    for (int i = 0; i < n && !rc; i++) {
        size_t o2 = ju_idx(&j, i);
        int r2 = load_device(&j, cJSON_GetArrayItem(arr, i), sys, &sys->dev[i]);
        if (!r2 && hw_find_device(sys, sys->dev[i].name) >= 0)
            r2 = ju_fail(&j, "device name '%s' used twice", sys->dev[i].name);
        if (r2 && r2 != DSE_EINPUT)
            rc = r2;
        sys->n_dev = i + 1; /* a device with problems is still one its links may name */
        ju_pop(&j, o2);
    }
    ju_pop(&j, 0);
    if (rc)
        goto out;
    dev_errors = j.n_err > dev_errors;

    if ((rc = ju_array(&j, root, "links", JU_OPT, HW_MAX_LINKS, &arr, &n)))
        goto out;
    ju_key(&j, "links");
    for (int i = 0; i < n && !rc; i++) {
        size_t o2 = ju_idx(&j, i);
        int r2 = load_link(&j, cJSON_GetArrayItem(arr, i), sys, dev_errors, &sys->link[i]);
        if (r2 && r2 != DSE_EINPUT)
            rc = r2;
        ju_pop(&j, o2);
    }
    ju_pop(&j, 0);
    if (rc)
        goto out;
    sys->n_link = n;
    if (!dev_errors && (rc = load_topology(&j, root, sys)) && rc != DSE_EINPUT)
        goto out;
    if (!dev_errors && (rc = load_modes(&j, root, sys)) && rc != DSE_EINPUT)
        goto out;
    if (!dev_errors && (rc = load_thermal(&j, root, sys)) && rc != DSE_EINPUT)
        goto out;
    ju_pop(&j, 0);
    if ((rc = load_enclosure(&j, root, sys)) && rc != DSE_EINPUT)
        goto out;
    const cJSON *lk = cJSON_GetObjectItemCaseSensitive(root, "clocks_locked");
    if (lk && !cJSON_IsBool(lk)) {
        ju_pop(&j, 0);
        ju_key(&j, "clocks_locked");
        ju_fail(&j, "expected true or false");
    }
    sys->clocks_locked = cJSON_IsTrue(lk);
    if (j.n_err)
        rc = DSE_EINPUT;
out:
    cJSON_Delete(root);
    if (rc)
        memset(sys, 0, sizeof *sys);
    return rc;
}

int hw_load_file(const char *path, struct hw_system *sys, struct dse_err *e)
{
    char *buf;
    size_t len;
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    if (rc)
        return rc;
    rc = hw_load_buf(buf, len, path, sys, e);
    free(buf);
    return rc;
}

