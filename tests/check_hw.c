/* check_hw.c -- hardware descriptions: every shipped file loads; derived peaks; defaults; errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_fixtures.h"
#include "check_suites.h"
#include "hw.h"
#include "hw_memtech.h"
#include "jsonu.h"

static const char *const shipped[] = {
    "nvidia-a100-sxm4-80gb", "nvidia-h100-sxm5-80gb", "nvidia-h200-sxm-141gb", "nvidia-jetson-orin-nano-8gb",
    "nvidia-jetson-agx-orin-64gb", "google-tpu-v1", "google-tpu-v4", "google-tpu-v5e", "aws-inferentia2",
    "google-coral-edge-tpu", "raspberry-pi-5", "raspberry-pi-5-hailo-8l", "intel-xeon-8480"};

static struct hw_system *load(const char *name)
{
    char rel[256], p[512];
    struct dse_err e;
    struct hw_system *s = malloc(sizeof *s);
    ck_assert_ptr_nonnull(s);
    snprintf(rel, sizeof rel, "hwdesc/%s.json", name);
    int rc = hw_load_file(src_path(p, sizeof p, rel), s, &e);
    ck_assert_msg(rc == DSE_OK, "%s", e.msg);
    return s;
}

START_TEST(shipped_files_load)
{
    struct hw_system *s = load(shipped[_i]);
    ck_assert_str_eq(s->name, shipped[_i]); /* the file stem is the name */
    ck_assert_int_ge(s->n_dev, 1);
    for (int d = 0; d < s->n_dev; d++) {
        ck_assert(s->dev[d].n_compute >= 1 && s->dev[d].n_mem >= 1);
        ck_assert(hw_max_peak(&s->dev[d], NULL) > 0);
        ck_assert(s->dev[d].tdp_W > 0);
        for (int m = 0; m < s->dev[d].n_mem; m++)
            ck_assert(s->dev[d].mem[m].energy_J_per_byte > 0);
    }
    free(s);
}
END_TEST

/* Published headline figures, dense, derived here from units x ops/cycle x clock by the loader. */
START_TEST(shipped_headline_peaks)
{
    struct hw_system *s = load("nvidia-a100-sxm4-80gb");
    /* A100 datasheet: 312 TFLOPS fp16 tensor (108 SMs x 4 TC x 512 FLOP/cycle x 1410 MHz = 311.9). */
    ck_assert_near(hw_gemm_peak(&s->dev[0], P_FP16, NULL), 312e12, 0.01);
    /* A100 datasheet: 2039 GB/s HBM2e, 80 GB. */
    ck_assert_near(s->dev[0].mem[s->dev[0].n_mem - 1].bandwidth_Bps, 2039e9, 1e-9);
    free(s);
    s = load("google-tpu-v1");
    /* Jouppi et al., ISCA 2017: 65,536 MACs x 2 x 700 MHz = 91.7504 TOPS ("92 TOPS"). */
    ck_assert_near(hw_gemm_peak(&s->dev[0], P_INT8, NULL), 91.7504e12, 1e-9);
    free(s);
    s = load("nvidia-jetson-orin-nano-8gb");
    ck_assert_int_eq(s->n_dev, 2);
    /* CPU and GPU share one LPDDR5 pool. */
    ck_assert_int_ge(s->dev[0].mem[s->dev[0].n_mem - 1].shared, 0);
    ck_assert_int_eq(s->dev[0].mem[s->dev[0].n_mem - 1].shared, s->dev[1].mem[s->dev[1].n_mem - 1].shared);
    ck_assert_int_ge(hw_link_between(s, 0, 1), 0);
    free(s);
}
END_TEST

START_TEST(fixture_derived_values)
{
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    ck_assert_int_eq(hw_load_buf(FIX_GPU, sizeof FIX_GPU - 1, "fix", s, &e), DSE_OK);
    const struct hw_device *d = &s->dev[0];
    /* 10 units x 1000 FLOP/cycle x 1000 MHz = 1e13 FLOP/s */
    ck_assert_near(d->peak[ENG_MATRIX][P_FP16], 1e13, 1e-12);
    ck_assert_near(d->peak[ENG_VECTOR][P_FP16], 1e12, 1e-12);
    ck_assert(d->peak[ENG_MATRIX][P_INT8] == 0);
    ck_assert_near(d->mem[0].capacity_bytes, 1048576, 1e-12);
    ck_assert_near(d->mem[1].capacity_bytes, 16.0 * 1073741824, 1e-12);
    ck_assert_near(d->mem[1].bandwidth_Bps, 1e11, 1e-12);
    ck_assert_near(d->per_op_s, 5e-6, 1e-12);
    ck_assert_near(d->mac_J[ENG_MATRIX][P_FP16], 0.5e-12, 1e-12);
    ck_assert(d->eff_compute == 1 && d->eff_memory == 1);
    ck_assert(d->ops_mask == (1u << OP_COUNT) - 1);
    free(s);
}
END_TEST

START_TEST(default_energies)
{
    /* Horowitz ISSCC 2014, 64-bit SRAM reads: 8 KB 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ -> per byte
     * 1.25, 2.5, 12.5 pJ at 45 nm. */
    ck_assert_near(hw_default_mem_J_per_byte(MEM_SRAM, 8192, 45), 1.25e-12, 1e-9);
    ck_assert_near(hw_default_mem_J_per_byte(MEM_CACHE, 32768, 45), 2.5e-12, 1e-9);
    ck_assert_near(hw_default_mem_J_per_byte(MEM_SRAM, 1048576, 45), 12.5e-12, 1e-9);
    /* Node scaling is linear: 1 MB at 9 nm = 12.5 x 9/45 = 2.5 pJ/B. */
    ck_assert_near(hw_default_mem_J_per_byte(MEM_SRAM, 1048576, 9), 2.5e-12, 1e-9);
    /* Off-chip levels have no default: their energy comes from the DRAM technology they name. */
    ck_assert(hw_default_mem_J_per_byte(MEM_DRAM, 1e9, 7) == 0);
    ck_assert(hw_default_mem_J_per_byte(MEM_HOST, 1e9, 45) == 0);

    /* A compute entry without energy_pJ_per_mac draws its engine's power at its headline rate. The
     * NPU system's CPU: idle 2 W, TDP 10 W, no active_W: half of the 8 W budget is active power (4 W),
     * the other half the vector engine's: fp32 4 x 32 x 2 GHz = 256 GFLOP/s = 128 G MAC/s: 4 W /
     * 128e9 = 31.25 pJ per MAC; int8 4 x 128 x 2 GHz = 512 G MAC/s: 7.8125 pJ. */
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    ck_assert_int_eq(hw_load_buf(FIX_NPU_SYSTEM, sizeof FIX_NPU_SYSTEM - 1, "fix", s, &e), DSE_OK);
    ck_assert_near(s->dev[0].active_W, 4, 1e-12);
    ck_assert_near(s->dev[0].mac_J[ENG_VECTOR][P_FP32], 31.25e-12, 1e-9);
    ck_assert_near(s->dev[0].mac_J[ENG_VECTOR][P_INT8], 7.8125e-12, 1e-9);
    /* npu: idle 0.5, TDP 2: active 0.75 W, matrix 0.75 W at 4 TOPS = 2e12 MAC/s: 0.375 pJ */
    ck_assert_near(s->dev[1].mac_J[ENG_MATRIX][P_INT8], 0.375e-12, 1e-9);
    /* Given: active_W 0.5 and matrix_W 1: 1 W / 2e12 MAC/s = 0.5 pJ per MAC. */
    static const char from[] = "\"idle_W\":0.5,\"tdp_W\":2,";
    char v[sizeof FIX_NPU_SYSTEM + 64];
    const char *at = strstr(FIX_NPU_SYSTEM, from);
    ck_assert(at != NULL);
    snprintf(v, sizeof v, "%.*s%s\"active_W\":0.5,\"matrix_W\":1,%s", (int)(at - FIX_NPU_SYSTEM), FIX_NPU_SYSTEM, from,
             at + strlen(from));
    ck_assert_msg(hw_load_buf(v, strlen(v), "fix", s, &e) == DSE_OK, "%s", e.msg);
    ck_assert_near(s->dev[1].active_W, 0.5, 1e-12);
    ck_assert_near(s->dev[1].mac_J[ENG_MATRIX][P_INT8], 0.5e-12, 1e-9);
    ck_assert(!(s->dev[1].ops_mask & (1u << OP_SOFTMAX)));
    ck_assert(s->dev[1].ops_mask & (1u << OP_RESHAPE)); /* views run anywhere */
    ck_assert_near(s->link[0].latency_s, 2e-6, 1e-12);
    free(s);
}
END_TEST

/* A system with modes: a CPU (vector fp32 4 cores x 32 FLOP/cycle x 2000 MHz = 256 GFLOP/s) and a GPU
 * (matrix fp16 8 units x 1000 FLOP/cycle x 1000 MHz = 8 TFLOP/s, active 4 W), sharing DRAM at 50 GB/s;
 * mode "low" runs the GPU at 500 MHz with half its units and the DRAM at 25 GB/s, and leaves the CPU. */
static const char MODES_SYS[] =
    "{\"schema\":\"dse-hwdesc-1\",\"name\":\"fix-modes\",\"memories\":[{\"name\":\"dram\",\"kind\":\"dram\","
    "\"capacity_GiB\":4,\"bandwidth_GBps\":50,\"energy_pJ_per_byte\":20,\"source\":\"test fixture\"}],\"devices\":["
    "{\"name\":\"cpu\",\"class\":\"cpu\",\"clock\":{\"base_MHz\":2000,\"boost_MHz\":2000,\"source\":\"test fixture\"},"
    "\"compute\":[{\"engine\":\"vector\",\"precision\":\"fp32\",\"units\":4,\"flops_per_cycle_per_unit\":32,"
    "\"source\":\"test fixture\"}],\"memory\":[\"dram\"],\"power\":{\"idle_W\":1,\"tdp_W\":5,\"source\":\"test fixture\"}},"
    "{\"name\":\"gpu\",\"class\":\"gpu\",\"clock\":{\"base_MHz\":1000,\"boost_MHz\":1000,\"source\":\"test fixture\"},"
    "\"compute\":[{\"engine\":\"matrix\",\"precision\":\"fp16\",\"units\":8,\"flops_per_cycle_per_unit\":1000,"
    "\"source\":\"test fixture\"}],\"memory\":[\"dram\"],\"power\":{\"idle_W\":0.5,\"tdp_W\":8,\"active_W\":4,"
    "\"source\":\"test fixture\"}}],"
    "\"modes\":{\"source\":\"test fixture\",\"points\":[{\"name\":\"low\",\"budget_W\":6,\"devices\":{\"gpu\":"
    "{\"clock_MHz\":500,\"units_share\":0.5}},\"memory_GBps\":{\"dram\":25}},{\"name\":\"high\",\"budget_W\":12,"
    "\"devices\":{\"gpu\":{\"clock_MHz\":1500}}}]}%s}";

START_TEST(modes_apply)
{
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    char txt[sizeof MODES_SYS + 64];
    snprintf(txt, sizeof txt, MODES_SYS, "");
    ck_assert_msg(hw_load_buf(txt, strlen(txt), "m.json", s, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_eq(s->n_modes, 2);
    ck_assert_int_eq(s->mode, -1);
    ck_assert_int_eq(hw_mode_find(s, "high"), 1);
    ck_assert_int_eq(hw_mode_find(s, "turbo"), -1);
    /* low: GPU f 0.5 x units 0.5: 8e12 x 0.25 = 2e12 FLOP/s, active 4 x 0.25 = 1 W, its TDP the 6 W budget;
     * DRAM 25 GB/s in the system's level and in both devices' copies; the CPU is untouched. */
    hw_apply_mode(s, 0);
    ck_assert_int_eq(s->mode, 0);
    ck_assert_double_eq_tol(s->dev[1].peak[ENG_MATRIX][P_FP16], 2e12, 1);
    ck_assert_double_eq_tol(s->dev[1].active_W, 1, 1e-12);
    ck_assert_double_eq_tol(s->dev[1].tdp_W, 6, 1e-12);
    ck_assert_double_eq_tol(s->memories[0].bandwidth_Bps, 25e9, 1);
    ck_assert_double_eq_tol(s->dev[0].mem[0].bandwidth_Bps, 25e9, 1);
    ck_assert_double_eq_tol(s->dev[1].mem[0].bandwidth_Bps, 25e9, 1);
    ck_assert_double_eq_tol(s->dev[0].peak[ENG_VECTOR][P_FP32], 256e9, 1);
    /* then high, on top: absolute figures, from 500 MHz and half the units to 1500 MHz (f 3) and, as high
     * leaves the units, half of them still: 8e12 x 1.5 x 0.5 = 6e12; active 4 x 1.5 x 0.5 = 3 W */
    hw_apply_mode(s, 1);
    ck_assert_double_eq_tol(s->dev[1].peak[ENG_MATRIX][P_FP16], 6e12, 1);
    ck_assert_double_eq_tol(s->dev[1].active_W, 3, 1e-12);
    ck_assert_double_eq_tol(s->dev[1].tdp_W, 12, 1e-12);
    /* "mode" in the file applies it at load */
    snprintf(txt, sizeof txt, MODES_SYS, ",\"mode\":\"low\"");
    ck_assert_msg(hw_load_buf(txt, strlen(txt), "m.json", s, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_eq(s->mode, 0);
    ck_assert_double_eq_tol(s->dev[1].peak[ENG_MATRIX][P_FP16], 2e12, 1);
    /* an unknown one is refused, naming those there are */
    snprintf(txt, sizeof txt, MODES_SYS, ",\"mode\":\"turbo\"");
    ck_assert_int_eq(hw_load_buf(txt, strlen(txt), "m.json", s, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "m.json: mode: no mode 'turbo' in the system's modes (low, high)"), "%s", e.msg);
    free(s);
}
END_TEST

/* Each bad variant of the modes fixture and the message expected. */
static const struct {
    const char *from, *to, *msg;
} bad_modes[] = {
    {"{\"gpu\":{\"clock_MHz\":500", "{\"npu\":{\"clock_MHz\":500", "modes.points[0].devices.npu: no device of this name"},
    {"\"units_share\":0.5", "\"units_share\":1.5", "units_share: expected at most 1"},
    {"\"name\":\"high\"", "\"name\":\"low\"", "mode name 'low' used twice"},
    {"{\"dram\":25}", "{\"hbm\":25}", "memory_GBps.hbm: no level of this name in the top-level memories"},
    {"\"budget_W\":6,", "", "budget_W: missing"},
    {"{\"gpu\":{\"clock_MHz\":1500}}", "{\"gpu\":{}}", "devices.gpu: expected clock_MHz, units_share or both"},
    {"\"modes\":{\"source\":\"test fixture\",", "\"modes\":{", "modes.source: missing"},
};

START_TEST(modes_bad)
{
    char txt[sizeof MODES_SYS + 64], buf[sizeof MODES_SYS + 128];
    snprintf(txt, sizeof txt, MODES_SYS, "");
    const char *at = strstr(txt, bad_modes[_i].from);
    ck_assert_msg(at != NULL, "fixture lacks '%s'", bad_modes[_i].from);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - txt), txt, bad_modes[_i].to, at + strlen(bad_modes[_i].from));
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    ck_assert_int_eq(hw_load_buf(buf, strlen(buf), "m.json", s, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, bad_modes[_i].msg) != NULL, "case %d: got '%s', expected '%s'", _i, e.msg,
                  bad_modes[_i].msg);
    free(s);
}
END_TEST

/* Each bad variant of the GPU fixture, made by replacing one substring, and the message expected. */
static const struct {
    const char *from, *to, *msg;
} bad[] = {
    {"\"bandwidth_GBps\":100,", "\"bandwidth_GBps\":-3,", "devices[0].memory[1].bandwidth_GBps: expected a positive number, got -3"},
    {"\"bandwidth_GBps\":100,", "\"bandwidth_GBps\":1e300,", "expected at most"},
    {"\"bandwidth_GBps\":100,", "\"bandwidth_GBps\":\"fast\",", "expected a number, got a string"},
    {"\"headline_TFLOPS\":10", "\"headline_TFLOPS\":11", "differs from the headline"},
    {"\"headline_TFLOPS\":10", "\"headline_TOPS\":10", "use headline_TFLOPS"},
    {"\"units\":10,\"flops_per_cycle_per_unit\":1000", "\"units\":10.5,\"flops_per_cycle_per_unit\":1000", "expected an integer"},
    {"\"class\":\"gpu\"", "\"class\":\"fpga\"", "unknown value 'fpga'"},
    {"\"precision\":\"fp16\",\"units\":10,\"flops_per_cycle_per_unit\":1000", "\"precision\":\"fp12\",\"units\":10,\"flops_per_cycle_per_unit\":1000", "unknown value 'fp12'"},
    {"\"capacity_MiB\":1,", "\"capacity_MiB\":1,\"capacity_KiB\":1,", "exactly one of capacity"},
    {"\"boost_MHz\":1000", "\"boost_MHz\":500", "expected at least base_MHz"},
    {"\"idle_W\":10", "\"idle_W\":1000", "expected at most tdp_W"},
    {"\"idle_W\":10", "\"idle_W\":10,\"active_W\":-5", "devices[0].power.active_W: expected a non-negative number, got -5"},
    {"\"idle_W\":10", "\"idle_W\":10,\"matrix_W\":-1", "devices[0].power.matrix_W: expected a positive number, got -1"},
    {"\"power\":{", "\"powr\":{", "unknown field"},
    {",\"source\":\"test fixture\"}],\"power\"", "}],\"power\"", "source: missing"},
    {"\"schema\":\"dse-hwdesc-1\"", "\"schema\":\"dse-hwdesc-2\"", "expected \"dse-hwdesc-1\""},
    {"\"memory\":[", "\"memory\":[\"shared0\",", "names no level"},
    /* A dram level with neither a technology nor its own energy; an unknown or mistyped technology;
     * a technology on an on-chip level ("energy_pJ_per_byte":1, is the L2's, :10, the DRAM's). */
    {"\"energy_pJ_per_byte\":10,", "", "devices[0].memory[1].technology: missing: a dram level needs its DRAM technology"},
    {"\"energy_pJ_per_byte\":10,", "\"technology\":\"ddr9\",", "devices[0].memory[1].technology: unknown DRAM technology 'ddr9' (expected one of: ddr3, "},
    {"\"energy_pJ_per_byte\":10,", "\"technology\":\"HBM2\",", "unknown DRAM technology 'HBM2'"},
    {"\"energy_pJ_per_byte\":10,", "\"technology\":[],", "devices[0].memory[1].technology: expected a string, got an array"},
    {"\"energy_pJ_per_byte\":1,", "\"technology\":\"hbm2\",", "devices[0].memory[0].technology: only dram and host levels"},
};

START_TEST(bad_inputs)
{
    char buf[sizeof FIX_GPU + 256];
    const char *at = strstr(FIX_GPU, bad[_i].from);
    ck_assert_msg(at != NULL, "fixture lacks '%s'", bad[_i].from);
    size_t pre = (size_t)(at - FIX_GPU);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)pre, FIX_GPU, bad[_i].to, at + strlen(bad[_i].from));
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    ck_assert_int_eq(hw_load_buf(buf, strlen(buf), "bad.json", s, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, bad[_i].msg) != NULL, "case %d: got '%s', expected '%s'", _i, e.msg, bad[_i].msg);
    ck_assert_msg(strncmp(e.msg, "bad.json: ", 10) == 0, "%s", e.msg);
    free(s);
}
END_TEST

START_TEST(bad_system_structure)
{
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    char buf[sizeof FIX_NPU_SYSTEM + 64];
    /* A link to a device that does not exist. */
    const char *at = strstr(FIX_NPU_SYSTEM, "[\"cpu\",\"npu\"]");
    snprintf(buf, sizeof buf, "%.*s[\"cpu\",\"gpu\"]%s", (int)(at - FIX_NPU_SYSTEM), FIX_NPU_SYSTEM, at + 13);
    ck_assert_int_eq(hw_load_buf(buf, strlen(buf), "b.json", s, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "links[0].endpoints[1]") != NULL, "%s", e.msg);
    /* Two devices of one name. */
    at = strstr(FIX_NPU_SYSTEM, "{\"name\":\"npu\"");
    snprintf(buf, sizeof buf, "%.*s{\"name\":\"cpu\"%s", (int)(at - FIX_NPU_SYSTEM), FIX_NPU_SYSTEM,
             at + strlen("{\"name\":\"npu\""));
    ck_assert_int_eq(hw_load_buf(buf, strlen(buf), "b.json", s, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "used twice") != NULL, "%s", e.msg);
    ck_assert_int_eq(hw_load_buf("[]", 2, "b.json", s, &e), DSE_EINPUT);
    ck_assert_int_eq(hw_load_buf("", 0, "b.json", s, &e), DSE_EINPUT);
    free(s);
}
END_TEST

/* The DRAM technology table: lookup, listing, and each published or derived figure recomputed from the
 * equation its source states (src/hw_memtech.c), within the table's 0.1 pJ/B rounding. */
START_TEST(memtech_table)
{
    int n = 0;
    const struct hw_memtech *t = hw_memtech_table(&n);
    ck_assert_int_ge(n, 12);
    char list[512];
    hw_memtech_list(list, sizeof list);
    static const char *const need[] = {"ddr3", "ddr4", "ddr5", "lpddr4", "lpddr4x", "lpddr5", "lpddr5x",
                                       "gddr6", "hbm2", "hbm2e", "hbm3", "hbm3e"};
    for (unsigned i = 0; i < sizeof need / sizeof need[0]; i++) {
        const struct hw_memtech *m = hw_memtech_find(need[i]);
        ck_assert_msg(m != NULL, "no row %s", need[i]);
        ck_assert_str_eq(m->name, need[i]);
        ck_assert_msg(strstr(list, need[i]) != NULL, "%s not listed in '%s'", need[i], list);
    }
    for (int i = 0; i < n; i++) {
        ck_assert_msg(t[i].pJ_per_byte > 0 && t[i].pJ_per_byte < 1000, "%s: %g", t[i].name, t[i].pJ_per_byte);
        ck_assert_msg(t[i].source && t[i].source[0], "%s has no source", t[i].name);
        /* an estimate says so in its source */
        ck_assert_msg(!t[i].estimate || strncmp(t[i].source, "estimate", 8) == 0, "%s: %s", t[i].name, t[i].source);
        ck_assert_ptr_eq(hw_memtech_find(t[i].name), &t[i]); /* names are unique */
    }
    ck_assert_ptr_null(hw_memtech_find("DDR4")); /* exact, lower case, as in hwdesc */
    ck_assert_ptr_null(hw_memtech_find("ddr9"));
    ck_assert_ptr_null(hw_memtech_find(""));
    ck_assert_ptr_null(hw_memtech_find(NULL));

    /* Published: Horowitz ISSCC 2014, DRAM 1.3 nJ per 64-bit access: 1300 / 8 = 162.5 pJ/B. */
    ck_assert_near(hw_memtech_find("ddr3")->pJ_per_byte, 1300.0 / 8, 1e-9);
    /* O'Connor et al. MICRO 2017: HBM2 3.9 pJ/bit x 8 = 31.2 pJ/B; GDDR5 14 pJ/bit x 8 = 112. */
    ck_assert_near(hw_memtech_find("hbm2")->pJ_per_byte, 3.9 * 8, 1e-9);
    ck_assert_near(hw_memtech_find("gddr5")->pJ_per_byte, 14.0 * 8, 1e-9);
    /* LPDDR4 from Micron 6Gb LPDDR4-3200 x16 currents: burst (1.1 V x (275 - 30) mA + 1.1 V x
     * (150 - 0.75) mA) / (16 x 3.2 Gb/s) = 5.264 + 3.207 pJ/bit; activation 1.1006 nJ / 16384 bits =
     * 0.067; total 8.537 pJ/bit x 8 = 68.3 pJ/B. */
    double lp4_core = 1.1 * (275 - 30) / 51.2 + 1100.6 / 16384, lp4_io = 1.1 * (150 - 0.75) / 51.2;
    ck_assert(fabs(hw_memtech_find("lpddr4")->pJ_per_byte - 8 * (lp4_core + lp4_io)) < 0.05);
    /* LPDDR4X: VDDQ 1.1 -> 0.6 V: I/O x (0.6 / 1.1)^2; LPDDR5: core x (1.05 / 1.1)^2, I/O x (0.5 / 1.1)^2;
     * LPDDR5X: LPDDR5 x 0.8. */
    double lp4x = lp4_core + lp4_io * (0.6 / 1.1) * (0.6 / 1.1);
    double lp5 = lp4_core * (1.05 / 1.1) * (1.05 / 1.1) + lp4_io * (0.5 / 1.1) * (0.5 / 1.1);
    ck_assert(fabs(hw_memtech_find("lpddr4x")->pJ_per_byte - 8 * lp4x) < 0.05);
    ck_assert(fabs(hw_memtech_find("lpddr5")->pJ_per_byte - 8 * lp5) < 0.05);
    ck_assert(fabs(hw_memtech_find("lpddr5x")->pJ_per_byte - 8 * lp5 * 0.8) < 0.05);
    /* DDR4 from Micron 4Gb DDR4-2400 x8 (tCK 0.8333 ns): burst 1.2 V x (184.5 - 44.0) mA / 19.2 Gb/s;
     * activation 1.2 V x (60.75 x 55 - 44.0 x 39 - 38.25 x 16) mA x tCK + 2.5 V x 4.05 mA x 55 tCK over
     * 8192 bits; I/O: DDR3's (20.31 - 15.82 - 0.442) pJ/bit x (1.2 / 1.5)^2. DDR5: DDR4 x (1.1 / 1.2)^2. */
    double tck = 1 / 1.2, ddr3_io = 1300.0 / 64 - 1.5 * 135 / 12.8 - 1.5 * (95 * 47.5 - 45 * 35 - 42 * 12.5) / 8192;
    double ddr4 = 1.2 * (184.5 - 44.0) / 19.2 +
                  (1.2 * (60.75 * 55 - 44.0 * 39 - 38.25 * 16) * tck + 2.5 * 4.05 * 55 * tck) / 8192 +
                  ddr3_io * (1.2 / 1.5) * (1.2 / 1.5);
    ck_assert(fabs(hw_memtech_find("ddr4")->pJ_per_byte - 8 * ddr4) < 0.05);
    ck_assert(fabs(hw_memtech_find("ddr5")->pJ_per_byte - 8 * ddr4 * (1.1 / 1.2) * (1.1 / 1.2)) < 0.05);
    /* HBM2E as HBM2; HBM3 and HBM3E: HBM2 x (1.1 / 1.2)^2 = 26.2 pJ/B. GDDR6: GDDR5 x (1.35 / 1.5)^2. */
    ck_assert_near(hw_memtech_find("hbm2e")->pJ_per_byte, 31.2, 1e-9);
    ck_assert(fabs(hw_memtech_find("hbm3")->pJ_per_byte - 31.2 * (1.1 / 1.2) * (1.1 / 1.2)) < 0.05);
    ck_assert(fabs(hw_memtech_find("hbm3e")->pJ_per_byte - 31.2 * (1.1 / 1.2) * (1.1 / 1.2)) < 0.05);
    ck_assert(fabs(hw_memtech_find("gddr6")->pJ_per_byte - 112 * (1.35 / 1.5) * (1.35 / 1.5)) < 0.05);
    /* The ordering the sources claim: HBM < LPDDR < DDR per byte, and each generation below the last. */
    ck_assert(hw_memtech_find("hbm3")->pJ_per_byte < hw_memtech_find("lpddr5x")->pJ_per_byte);
    ck_assert(hw_memtech_find("lpddr5")->pJ_per_byte < hw_memtech_find("ddr5")->pJ_per_byte);
    ck_assert(hw_memtech_find("ddr5")->pJ_per_byte < hw_memtech_find("ddr4")->pJ_per_byte);
    ck_assert(hw_memtech_find("ddr4")->pJ_per_byte < hw_memtech_find("ddr3")->pJ_per_byte);
}
END_TEST

/* A level's energy: its own energy_pJ_per_byte, else its technology's, on the GPU fixture's DRAM. */
START_TEST(technology_sets_energy)
{
    char buf[sizeof FIX_GPU + 64];
    const char *at = strstr(FIX_GPU, "\"energy_pJ_per_byte\":10,");
    ck_assert_ptr_nonnull(at);
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    /* technology lpddr5 alone: 44.2 pJ/B (hw_memtech.c) */
    snprintf(buf, sizeof buf, "%.*s\"technology\":\"lpddr5\",%s", (int)(at - FIX_GPU), FIX_GPU,
             at + strlen("\"energy_pJ_per_byte\":10,"));
    ck_assert_msg(hw_load_buf(buf, strlen(buf), "t.json", s, &e) == DSE_OK, "%s", e.msg);
    ck_assert_near(s->dev[0].mem[1].energy_J_per_byte, 44.2e-12, 1e-9);
    /* both: the file's 10 pJ/B wins (a host level adds its link's energy this way) */
    snprintf(buf, sizeof buf, "%.*s\"technology\":\"lpddr5\",%s", (int)(at - FIX_GPU), FIX_GPU, at);
    ck_assert_msg(hw_load_buf(buf, strlen(buf), "t.json", s, &e) == DSE_OK, "%s", e.msg);
    ck_assert_near(s->dev[0].mem[1].energy_J_per_byte, 10e-12, 1e-9);
    /* the on-chip L2 keeps its own figure either way */
    ck_assert_near(s->dev[0].mem[0].energy_J_per_byte, 1e-12, 1e-9);
    free(s);
}
END_TEST

/* Checks one memory level object o of a shipped file against the level l the loader made of it. */
static void check_level(const char *file, const cJSON *o, const struct hw_mem *l)
{
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
    const cJSON *tech = cJSON_GetObjectItemCaseSensitive(o, "technology");
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(o, "energy_pJ_per_byte");
    ck_assert(cJSON_IsString(kind));
    if (strcmp(kind->valuestring, "dram") && strcmp(kind->valuestring, "host"))
        return;
    /* every shipped off-chip level names its technology, even where it also gives its own energy */
    ck_assert_msg(cJSON_IsString(tech), "%s: level %s names no technology", file, l->name);
    const struct hw_memtech *m = hw_memtech_find(tech->valuestring);
    ck_assert_ptr_nonnull(m);
    if (cJSON_IsNumber(en)) { /* its own figure, at least the DRAM's (host levels add their link) */
        ck_assert_near(l->energy_J_per_byte, en->valuedouble * 1e-12, 1e-12);
        ck_assert_msg(en->valuedouble >= m->pJ_per_byte, "%s: %s below its %s", file, l->name, m->name);
    } else {
        ck_assert_msg(fabs(l->energy_J_per_byte - m->pJ_per_byte * 1e-12) < 1e-18, "%s: %s has %g J/B, %s is %g pJ/B",
                      file, l->name, l->energy_J_per_byte, m->name, m->pJ_per_byte);
    }
    /* the source says where the energy came from */
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(o, "source");
    ck_assert_msg(cJSON_IsString(src) && strstr(src->valuestring, "energy"), "%s: %s source says nothing of energy",
                  file, l->name);
}

START_TEST(shipped_dram_technologies)
{
    char rel[256], p[512];
    struct dse_err e;
    snprintf(rel, sizeof rel, "hwdesc/%s.json", shipped[_i]);
    char *buf;
    size_t len;
    ck_assert_int_eq(ju_read_file(src_path(p, sizeof p, rel), JU_MAX_FILE_BYTES, &buf, &len, &e), DSE_OK);
    cJSON *root = cJSON_ParseWithLength(buf, len);
    ck_assert_ptr_nonnull(root);
    struct hw_system *s = load(shipped[_i]);
    const cJSON *mems = cJSON_GetObjectItemCaseSensitive(root, "memories"), *o;
    int k = 0;
    cJSON_ArrayForEach(o, mems) check_level(shipped[_i], o, &s->memories[k++]);
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(root, "devices"), *dv;
    int d = 0;
    cJSON_ArrayForEach(dv, devs)
    {
        k = 0;
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(dv, "memory"))
        {
            if (cJSON_IsObject(o)) /* a string names a shared level, checked above */
                check_level(shipped[_i], o, &s->dev[d].mem[k]);
            k++;
        }
        d++;
    }
    cJSON_Delete(root);
    free(buf);
    free(s);
}
END_TEST

/* Accelerator cards ship with their hosts (issue 9, item 19): a CPU device linked to the card. */
START_TEST(cards_ship_with_hosts)
{
    static const char *const cards[] = {"google-tpu-v1", "google-coral-edge-tpu", "aws-inferentia2",
                                        "raspberry-pi-5-hailo-8l"};
    for (unsigned i = 0; i < sizeof cards / sizeof cards[0]; i++) {
        struct hw_system *s = load(cards[i]);
        int cpu = -1, card = -1;
        for (int d = 0; d < s->n_dev; d++)
            if (s->dev[d].cls == HW_CPU)
                cpu = d;
            else
                card = d;
        ck_assert_msg(cpu >= 0 && card >= 0 && hw_link_between(s, cpu, card) >= 0, "%s", cards[i]);
        ck_assert(s->dev[cpu].ops_mask == (1u << OP_COUNT) - 1); /* the host runs every operator */
        free(s);
    }
    /* TPU v1's host, Jouppi et al. ISCA 2017 Table 2 (Haswell E5-2699 v3): 18 cores x 32 fp32 FLOP/cycle x
     * 2.3 GHz = 1.3248 TFLOPS ("1.3"), x 64 int8 ops/cycle = 2.6496 TOPS ("2.6"); PCIe Gen3 x16:
     * 8 GT/s x 128/130 x 16 / 8 = 15.75 GB/s. The TPU stays device 0. */
    struct hw_system *s = load("google-tpu-v1");
    ck_assert_int_eq(s->n_dev, 2);
    ck_assert_str_eq(s->dev[0].name, "tpu");
    ck_assert_near(hw_vector_peak(&s->dev[1], P_FP32, NULL), 1.3248e12, 1e-9);
    ck_assert_near(hw_vector_peak(&s->dev[1], P_INT8, NULL), 2.6496e12, 1e-9);
    ck_assert_near(s->link[0].bandwidth_Bps, 15.75e9, 1e-9);
    free(s);
}
END_TEST

Suite *make_hw_suite(void)
{
    Suite *s = suite_create("hw");
    TCase *t = tcase_create("hw");
    tcase_add_loop_test(t, shipped_files_load, 0, (int)(sizeof shipped / sizeof shipped[0]));
    tcase_add_test(t, shipped_headline_peaks);
    tcase_add_test(t, fixture_derived_values);
    tcase_add_test(t, default_energies);
    tcase_add_test(t, modes_apply);
    tcase_add_loop_test(t, modes_bad, 0, (int)(sizeof bad_modes / sizeof bad_modes[0]));
    tcase_add_loop_test(t, bad_inputs, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(t, bad_system_structure);
    tcase_add_test(t, memtech_table);
    tcase_add_test(t, technology_sets_energy);
    tcase_add_loop_test(t, shipped_dram_technologies, 0, (int)(sizeof shipped / sizeof shipped[0]));
    tcase_add_test(t, cards_ship_with_hosts);
    suite_add_tcase(s, t);
    return s;
}
