/* check_hw.c -- hardware descriptions: every shipped file loads; derived peaks; defaults; errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_fixtures.h"
#include "check_suites.h"
#include "hw.h"

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
    /* DRAM: 1.3 nJ per 64 bits = 162.5 pJ/B, not node-scaled. */
    ck_assert_near(hw_default_mem_J_per_byte(MEM_DRAM, 1e9, 7), 162.5e-12, 1e-9);

    /* A compute entry without energy_pJ_per_mac gets Horowitz's 45 nm figure scaled by node; the
     * NPU system fixture gives no process_nm, so 45 nm applies and the figure is unscaled. */
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    ck_assert_int_eq(hw_load_buf(FIX_NPU_SYSTEM, sizeof FIX_NPU_SYSTEM - 1, "fix", s, &e), DSE_OK);
    /* cpu fp32 entry has no energy: 4.6 pJ x 45/45 */
    ck_assert_near(s->dev[0].mac_J[ENG_VECTOR][P_FP32], 4.6e-12, 1e-9);
    /* npu int8: 0.23 pJ */
    ck_assert_near(s->dev[1].mac_J[ENG_MATRIX][P_INT8], 0.23e-12, 1e-9);
    ck_assert(!(s->dev[1].ops_mask & (1u << OP_SOFTMAX)));
    ck_assert(s->dev[1].ops_mask & (1u << OP_RESHAPE)); /* views run anywhere */
    ck_assert_near(s->link[0].latency_s, 2e-6, 1e-12);
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
    {"\"power\":{", "\"powr\":{", "unknown field"},
    {",\"source\":\"test fixture\"}],\"power\"", "}],\"power\"", "source: missing"},
    {"\"schema\":\"dse-hwdesc-1\"", "\"schema\":\"dse-hwdesc-2\"", "expected \"dse-hwdesc-1\""},
    {"\"memory\":[", "\"memory\":[\"shared0\",", "names no level"},
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

Suite *make_hw_suite(void)
{
    Suite *s = suite_create("hw");
    TCase *t = tcase_create("hw");
    tcase_add_loop_test(t, shipped_files_load, 0, (int)(sizeof shipped / sizeof shipped[0]));
    tcase_add_test(t, shipped_headline_peaks);
    tcase_add_test(t, fixture_derived_values);
    tcase_add_test(t, default_energies);
    tcase_add_loop_test(t, bad_inputs, 0, (int)(sizeof bad / sizeof bad[0]));
    tcase_add_test(t, bad_system_structure);
    suite_add_tcase(s, t);
    return s;
}
