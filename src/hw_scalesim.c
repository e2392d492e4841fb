/* hw_scalesim.c -- SCALE-Sim configuration files (.cfg, INI) read as a one-device systolic system.
 *
 * Read: ArrayHeight, ArrayWidth, IfmapSramSzkB, FilterSramSzkB, OfmapSramSzkB, Dataflow (os|ws|is)
 * and Bandwidth from [architecture_presets], InterfaceBandwidth (USER|CALC) from [run_presets],
 * run_name from [general]. As SCALE-Sim v2 (scale_config.py, commit 22f88b1) does: USER gives each of
 * the three SRAM interfaces (ifmap, filter, ofmap) Bandwidth words per cycle (one integer; SCALE-Sim
 * uses a list's first value for all three, so a list is refused here rather than half-read); CALC
 * sizes them so that nothing stalls, and Bandwidth is not read. SCALE-Sim's other keys (offsets,
 * banks, ...) change no cycle count and are ignored. SCALE-Sim counts cycles of 1-byte words and has
 * no clock: the device gets an int8 engine of 2 x H x W ops per cycle at an assumed 1 GHz, so times
 * in ms equal cycles / 1e6; its DRAM level (for the analytical tier) moves 3 x Bandwidth bytes per
 * cycle with USER (the three interfaces together) and is unbounded with CALC. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hw.h"
#include "hw_memtech.h"
#include "jsonu.h"

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

int hw_load_scalesim_buf(const char *buf, unsigned long len, const char *fname, struct hw_system *sys,
                         struct dse_err *e)
{
    static const char *const need[] = {"arrayheight", "arraywidth", "ifmapsramszkb", "filtersramszkb",
                                       "ofmapsramszkb", "dataflow", NULL};
    double val[6] = {0}, bw = 0;
    int have[6] = {0}, rc = DSE_OK, line_no = 0, df = -1, mode = -1, bw_line = 0;
    char bw_text[32] = "";
    char name[HW_NAME_LEN] = "", section[64] = "";
    char *text = malloc(len + 1), *save = NULL;
    if (!text)
        return dse_err_set(e, DSE_ERUNTIME, fname, NULL, "out of memory");
    memcpy(text, buf, len);
    text[len] = '\0';
    memset(sys, 0, sizeof *sys);
    for (char *line = strtok_r(text, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save)) {
        char where[32];
        line_no++;
        snprintf(where, sizeof where, "line %d", line_no);
        char *l = trim(line);
        if (!*l || *l == '#' || *l == ';')
            continue;
        if (*l == '[') {
            char *end = strchr(l, ']');
            if (!end) {
                rc = dse_err_set(e, DSE_EINPUT, fname, where, "expected a [section] header");
                break;
            }
            *end = '\0';
            dse_strlcpy(section, trim(l + 1), sizeof section);
            continue;
        }
        char *sep = strpbrk(l, ":=");
        if (!sep) {
            rc = dse_err_set(e, DSE_EINPUT, fname, where, "expected 'key: value' or 'key = value'");
            break;
        }
        *sep = '\0';
        char *k = trim(l), *v = trim(sep + 1);
        for (char *p = k; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        if (!strcasecmp(section, "general") && !strcmp(k, "run_name")) {
            dse_strlcpy(name, v, sizeof name);
            continue;
        }
        if (!strcasecmp(section, "run_presets") && !strcmp(k, "interfacebandwidth")) {
            mode = !strcasecmp(v, "USER") ? SA_USER : !strcasecmp(v, "CALC") ? SA_CALC : -2;
            if (mode == -2)
                rc = dse_err_set(e, DSE_EINPUT, fname, where, "InterfaceBandwidth: expected USER or CALC, got '%.20s'",
                                 v);
            continue;
        }
        if (strcasecmp(section, "architecture_presets"))
            continue;
        if (!strcmp(k, "bandwidth")) { /* checked once the mode is known: CALC does not read it */
            dse_strlcpy(bw_text, v, sizeof bw_text);
            bw_line = line_no;
            continue;
        }
        int i = ju_lookup(need, k);
        if (i < 0)
            continue;
        have[i] = 1;
        if (i == 5) {
            for (char *p = v; *p; p++)
                *p = (char)tolower((unsigned char)*p);
            if ((df = ju_lookup(hw_dataflow_names, v)) < 0)
                rc = dse_err_set(e, DSE_EINPUT, fname, where, "Dataflow: expected os, ws or is, got '%.20s'", v);
            continue;
        }
        char *end;
        val[i] = strtod(v, &end);
        double max = i < 2 ? 65536 : 1e9;
        if (end == v || *end || !(val[i] >= 1) || val[i] > max || (i < 2 && val[i] != (int)val[i]))
            rc = dse_err_set(e, DSE_EINPUT, fname, where, "%s: expected a positive %s up to %g, got '%.20s'", k,
                             i < 2 ? "integer" : "number", max, v);
    }
    free(text);
    for (int i = 0; i < 6 && !rc; i++)
        if (!have[i])
            rc = dse_err_set(e, DSE_EINPUT, fname, "architecture_presets", "missing %s (SCALE-Sim key, any case)",
                             need[i]);
    if (!rc && mode < 0)
        rc = dse_err_set(e, DSE_EINPUT, fname, "run_presets",
                         "missing InterfaceBandwidth (USER: Bandwidth words per cycle per interface; CALC: no stalls)");
    if (!rc && mode == SA_USER) {
        char where[32], *end;
        snprintf(where, sizeof where, "line %d", bw_line);
        long long b = strtoll(bw_text, &end, 10);
        if (!bw_line)
            rc = dse_err_set(e, DSE_EINPUT, fname, "architecture_presets",
                             "missing Bandwidth (words per cycle; InterfaceBandwidth is USER)");
        else if (strchr(bw_text, ','))
            rc = dse_err_set(e, DSE_EINPUT, fname, where,
                             "Bandwidth: one integer expected, got the list '%.20s' (SCALE-Sim v2 would use its first "
                             "value for all three interfaces)", bw_text);
        else if (end == bw_text || *end || b < 1 || b > 1000000)
            rc = dse_err_set(e, DSE_EINPUT, fname, where,
                             "Bandwidth: expected a positive integer of words per cycle up to 1e6, got '%.20s'",
                             bw_text);
        bw = (double)b;
    }
    if (rc) {
        memset(sys, 0, sizeof *sys);
        return rc;
    }
    const char *base = strrchr(fname, '/');
    if (!name[0]) {
        dse_strlcpy(name, base ? base + 1 : fname, sizeof name);
        char *dot = strrchr(name, '.');
        if (dot)
            *dot = '\0';
    }
    dse_strlcpy(sys->name, name, sizeof sys->name);
    char bws[80] = "CALC bandwidth";
    if (mode == SA_USER)
        snprintf(bws, sizeof bws, "USER bandwidth %g words/cycle per interface", bw);
    snprintf(sys->description, sizeof sys->description, "SCALE-Sim configuration %s: %gx%g %s array, %s",
             base ? base + 1 : fname, val[0], val[1], hw_dataflow_names[df], bws);
    struct hw_device *d = &sys->dev[0];
    sys->n_dev = 1;
    dse_strlcpy(d->name, "array", sizeof d->name);
    dse_strlcpy(d->model, "SCALE-Sim systolic array", sizeof d->model);
    d->cls = HW_SYSTOLIC;
    d->units_share = 1;
    d->power_mape_pct = -1;
    sys->mode = -1;
    d->process_nm = 45;
    d->base_Hz = d->boost_Hz = 1e9;
    struct hw_compute *c = &d->compute[0];
    d->n_compute = 1;
    c->engine = ENG_MATRIX;
    c->prec = P_INT8;
    c->units = 1;
    c->flops_per_cycle_per_unit = 2 * val[0] * val[1];
    c->clock_Hz = 1e9;
    c->peak_flops = c->flops_per_cycle_per_unit * c->clock_Hz;
    c->energy_J_per_mac = prec_mac_pJ_45nm(P_INT8) * 1e-12;
    d->peak[ENG_MATRIX][P_INT8] = c->peak_flops;
    d->mac_J[ENG_MATRIX][P_INT8] = c->energy_J_per_mac;
    double sram = (val[2] + val[3] + val[4]) * 1024;
    d->n_mem = 2;
    d->mem[0] = (struct hw_mem){.name = "sram", .kind = MEM_SRAM, .capacity_bytes = sram, .bandwidth_Bps = 1e18,
                                .energy_J_per_byte = hw_default_mem_J_per_byte(MEM_SRAM, sram, 45), .shared = -1};
    /* SCALE-Sim names no DRAM: taken as DDR3, the 45 nm-era technology of the other figures here. */
    d->mem[1] = (struct hw_mem){.name = "dram", .kind = MEM_DRAM, .capacity_bytes = 1099511627776.0,
                                .bandwidth_Bps = mode == SA_USER ? 3 * bw * 1e9 : 1e18,
                                .energy_J_per_byte = hw_memtech_find("ddr3")->pJ_per_byte * 1e-12, .shared = -1};
    hw_eff_defaults(d);
    d->ops_mask = (1u << OP_COUNT) - 1;
    d->array = (struct hw_array){1, (int)val[0], (int)val[1], 1, (enum hw_dataflow)df, val[2] * 1024, val[3] * 1024,
                                 val[4] * 1024, (enum hw_sa_interface)mode, mode == SA_USER ? bw : 0};
    return DSE_OK;
}

int hw_load_scalesim_cfg(const char *path, struct hw_system *sys, struct dse_err *e)
{
    char *buf;
    size_t len;
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    if (rc)
        return rc;
    rc = hw_load_scalesim_buf(buf, len, path, sys, e);
    free(buf);
    return rc;
}
