/* check_power.c -- power limits: a device obeys the lower of its TDP and power cap, stepping down its
 * DVFS table and then idling part of the time; and no shipped hardware x model reports more. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "cost.h"
#include "eval.h"
#include "jsonu.h"

/* One GPU-class device with round numbers: fp16 matrix 1e13 FLOP/s at 1 pJ per MAC, fp32 vector
 * 1e12; one memory level (DRAM 1 GiB, 100 GB/s, 10 pJ/B: no tiling); no per-op overhead; idle 10 W,
 * TDP 100 W; DVFS points 500 MHz 0.6 V, 750 MHz 0.8 V, 1000 MHz 1.0 V. */
#define FIX_POW_HEAD                                                                                          \
    "{\"schema\":\"dse-hwdesc-1\",\"name\":\"fix-pow\",\"devices\":[{\"name\":\"gpu\",\"class\":\"gpu\","        \
    "\"clock\":{\"base_MHz\":1000,\"boost_MHz\":1000,\"source\":\"test fixture\"},\"compute\":["                \
    "{\"engine\":\"matrix\",\"precision\":\"fp16\",\"units\":1,\"flops_per_cycle_per_unit\":10000,"             \
    "\"energy_pJ_per_mac\":1,\"source\":\"test fixture\"},"                                                    \
    "{\"engine\":\"vector\",\"precision\":\"fp32\",\"units\":1,\"flops_per_cycle_per_unit\":1000,"              \
    "\"energy_pJ_per_mac\":10,\"source\":\"test fixture\"}],"                                                  \
    "\"memory\":[{\"name\":\"dram\",\"kind\":\"dram\",\"capacity_GiB\":1,\"bandwidth_GBps\":100,"              \
    "\"energy_pJ_per_byte\":10,\"source\":\"test fixture\"}],"
#define FIX_POW_DVFS                                                                                          \
    "\"dvfs\":{\"points\":[{\"freq_MHz\":500,\"voltage_V\":0.6},{\"freq_MHz\":750,\"voltage_V\":0.8},"          \
    "{\"freq_MHz\":1000,\"voltage_V\":1.0}],\"source\":\"test fixture\"},"

/* One fp16 matmul [1000 x 1000] x [1000 x 1000]: 1e9 MACs, 2e9 FLOPs: 0.2 ms at 1e13 FLOP/s; A, B
 * and C 2e6 B each: 6e6 B / 100 GB/s = 0.06 ms, so compute-bound. Energy 1e9 x 1 pJ + 6e6 x 10 pJ
 * = 1.06 mJ: 1.06 mJ / 0.2 ms = 5.3 W dynamic + 10 W idle = 15.3 W. */
static const char GRAPH[] =
    "{\"format\":\"dse-graph-1\",\"name\":\"mm\",\"tensors\":["
    "{\"name\":\"a\",\"shape\":[1,1000,1000],\"kind\":\"input\"},{\"name\":\"w\",\"shape\":[1000,1000],\"kind\":\"weight\"},"
    "{\"name\":\"c\",\"shape\":[1,1000,1000]}],"
    "\"ops\":[{\"name\":\"mm\",\"type\":\"matmul\",\"inputs\":[\"a\",\"w\"],\"outputs\":[\"c\"]}]}";

static void run_mm(struct hw_system *s, struct eval_result *res)
{
    struct wl_model m;
    struct dse_err e;
    ck_assert_msg(wl_load_buf(GRAPH, sizeof GRAPH - 1, "mm.json", 0, &m, &e) == DSE_OK, "%s", e.msg);
    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = s;
    for (int t = 0; t < OP_COUNT; t++)
        r.type_dev[t] = -1;
    r.model = &m;
    r.x.prec.w = r.x.prec.a = r.x.prec.kv = P_FP16;
    r.batch = r.prompt = 1;
    r.want_ops = 1;
    ck_assert_msg(eval_run(&r, res, &e) == DSE_OK, "%s", e.msg);
    wl_model_free(&m);
}

/* active_W: the device's active power (power.active_W), 0 in the tests of limits alone. */
static struct hw_system *fixture_active(int dvfs, double tdp, double active)
{
    char txt[2048];
    snprintf(txt, sizeof txt,
             "%s%s\"power\":{\"idle_W\":10,\"tdp_W\":%g,\"active_W\":%g,\"source\":\"test fixture\"}}]}",
             FIX_POW_HEAD, dvfs ? FIX_POW_DVFS : "", tdp, active);
    return test_fixture(txt);
}

static struct hw_system *fixture(int dvfs, double tdp) { return fixture_active(dvfs, tdp, 0); }

START_TEST(throttle_dvfs_then_duty_cycle)
{
    struct eval_result res = {0};
    /* Under TDP (15.3 W of 100 W): as computed, not throttled. */
    struct hw_system *s = fixture(1, 100);
    run_mm(s, &res);
    ck_assert(res.feasible && !res.throttle_note[0]);
    ck_assert_near(res.t.latency_s, 0.2e-3, 1e-12);
    ck_assert_near(res.t.avg_power_W, 15.3, 1e-12);
    ck_assert_double_eq(res.t.throttle_slowdown, 1);
    /* Cap 12 W. At 750 MHz (f 0.75, V^2 0.64): 0.2 / 0.75 = 0.26667 ms, 0.64 + 0.06 = 0.70 mJ:
     * 2.625 + 10 = 12.625 W, over. At 500 MHz (f 0.5, V^2 0.36): 0.4 ms, 0.42 mJ: 1.05 + 10 = 11.05 W,
     * fits: the fastest listed point that does. Then the clock between them, x of the way to 750 MHz
     * (f = 0.5 + 0.25 x, V = 0.6 + 0.2 x; power 10 + 5 f (V^2 + 0.06) W), bisected 6 times: x = 42/64
     * fits (f 0.6640625, V 0.73125: 10 + 5 x 0.6640625 x 0.5947266 = 11.9747 W), 43/64 does not
     * (10 + 5 x 0.6679688 x 0.5993066 = 12.0016 W): 664.0625 MHz, 0.2 / 0.6640625 = 0.3011765 ms. */
    hw_apply_power_cap(&s->dev[0], 12);
    run_mm(s, &res);
    ck_assert(res.feasible);
    ck_assert_near(res.t.latency_s, 0.2e-3 / 0.6640625, 1e-12);
    ck_assert_near(res.t.avg_power_W, 10 + 5 * 0.6640625 * (0.73125 * 0.73125 + 0.06), 1e-12);
    ck_assert_near(res.t.throttle_slowdown, 1 / 0.6640625, 1e-12);
    ck_assert_msg(strstr(res.throttle_note, "clock 664 of 1000 MHz") && strstr(res.throttle_note, "12 W power cap"),
                  "%s", res.throttle_note);
    /* Cap 10.5 W: even 500 MHz is over (11.05 W), so the device idles part of the time: T' = 0.42 mJ /
     * (10.5 - 10) W = 0.84 ms, busy 0.4 / 0.84 = 48 %; 4.2x slower; exactly 10.5 W. */
    hw_apply_power_cap(&s->dev[0], 10.5);
    run_mm(s, &res);
    ck_assert_near(res.t.latency_s, 0.84e-3, 1e-12);
    ck_assert_near(res.t.avg_power_W, 10.5, 1e-12);
    ck_assert_near(res.t.throttle_slowdown, 4.2, 1e-12);
    ck_assert_near(res.ops[0].time_s, 0.84e-3, 1e-12);
    ck_assert_near(res.ops[0].energy_J, 0.42e-3 + 10 * 0.84e-3, 1e-12);
    ck_assert_msg(strstr(res.throttle_note, "busy 48 % of the time"), "%s", res.throttle_note);
    /* Cap at idle power: nothing left to run on. */
    hw_apply_power_cap(&s->dev[0], 10);
    run_mm(s, &res);
    ck_assert(!res.feasible);
    ck_assert_msg(strstr(res.reason, "at or below the idle power 10 W"), "%s", res.reason);
    free(s);
    /* No DVFS table and a 12 W TDP: only the duty cycle: T' = 1.06 mJ / 2 W = 0.53 ms (2.65x). */
    s = fixture(0, 12);
    run_mm(s, &res);
    ck_assert_near(res.t.latency_s, 0.53e-3, 1e-12);
    ck_assert_near(res.t.avg_power_W, 12, 1e-12);
    ck_assert_near(res.t.throttle_slowdown, 2.65, 1e-12);
    ck_assert_msg(strstr(res.throttle_note, "12 W TDP"), "%s", res.throttle_note);
    eval_result_free(&res);
    free(s);
}
END_TEST

/* Active power (power.active_W 20 W) is drawn while the kernel runs and scales with f x V^2 along the
 * DVFS table, as MAC energy scales with V^2. Unthrottled: 1.06 mJ / 0.2 ms = 5.3 W + 20 + 10 idle =
 * 35.3 W. Cap 30 W: 750 MHz (f 0.75, V^2 0.64: active 20 x 0.48 = 9.6 W over 0.26667 ms = 2.56 mJ, plus
 * 0.64 + 0.06 mJ): 3.26 mJ / 0.26667 ms = 12.225 W + 10 = 22.225 W, fits; between 750 and 1000 MHz
 * (f = 0.75 + 0.25 x, V = 0.8 + 0.2 x; power 10 + f (5 (V^2 + 0.06) + 20 V^2) W) 6 bisections give
 * x = 41/64 (f 0.91015625, V 0.928125: 29.8736 W; 42/64: 30.09 W, over): 0.2 / 0.91015625 ms, active
 * 20 x f V^2 W over it = 20 x 0.928125^2 x 0.2 mJ. Cap 15 W: 750 MHz is over;
 * 500 MHz (f 0.5, V^2 0.36: active 3.6 W x 0.4 ms = 1.44 mJ, plus 0.36 + 0.06 mJ = 1.86 mJ):
 * 1.86 / 0.4 = 4.65 + 10 = 14.65 W, fits; towards 750 MHz, x = 4/64 (f 0.515625, V 0.6125: 14.9907 W;
 * 5/64: 15.16 W, over): 0.2 / 0.515625 ms. Cap 12 W: 500 MHz is over, so duty cycle: T' = 1.86 mJ /
 * (12 - 10) W = 0.93 ms, 2.325 x 0.4 ms, 4.65x the unthrottled 0.2 ms. */
START_TEST(active_power_throttles)
{
    struct eval_result res = {0};
    struct hw_system *s = fixture_active(1, 100, 20);
    run_mm(s, &res);
    ck_assert(res.feasible && !res.throttle_note[0]);
    ck_assert_near(res.t.avg_power_W, 35.3, 1e-12);
    ck_assert_near(res.t.energy_active_J, 20 * 0.2e-3, 1e-12);
    ck_assert_near(res.ops[0].energy_J, 1.06e-3 + 4e-3 + 10 * 0.2e-3, 1e-12);
    hw_apply_power_cap(&s->dev[0], 30);
    run_mm(s, &res);
    double f = 0.91015625, v = 0.928125;
    ck_assert_near(res.t.latency_s, 0.2e-3 / f, 1e-12);
    ck_assert_near(res.t.avg_power_W, 10 + f * (5 * (v * v + 0.06) + 20 * v * v), 1e-12);
    ck_assert_near(res.t.energy_active_J, 20 * v * v * 0.2e-3, 1e-12);
    ck_assert_msg(strstr(res.throttle_note, "clock 910 of 1000 MHz"), "%s", res.throttle_note);
    hw_apply_power_cap(&s->dev[0], 15);
    run_mm(s, &res);
    f = 0.515625, v = 0.6125;
    ck_assert_near(res.t.latency_s, 0.2e-3 / f, 1e-12);
    ck_assert_near(res.t.avg_power_W, 10 + f * (5 * (v * v + 0.06) + 20 * v * v), 1e-12);
    hw_apply_power_cap(&s->dev[0], 12);
    run_mm(s, &res);
    ck_assert_near(res.t.latency_s, 0.93e-3, 1e-12);
    ck_assert_near(res.t.avg_power_W, 12, 1e-12);
    ck_assert_near(res.t.throttle_slowdown, 4.65, 1e-12);
    eval_result_free(&res);
    free(s);
}
END_TEST

/* cost_usd (cost.h): a price of 31,536,000 USD over 1 year is 1 USD/s; rent 3600 USD/h is 1 USD/s; hosting
 * 1800 USD/device-hour x 2 devices is 1 USD/s. Work of T = 2 s at utilisation 0.5 holds the system 4 s:
 * 3 x 1 USD/s x 4 s = 12 USD; its 3.6e6 J plus 1000 W idle over the 2 s it waits = 3,602,000 J x PUE 1.5
 * x 0.2 USD/kWh / 3.6e6 = 0.3001667 USD; 12.3001667 in all. Without a price or a rent: NAN. */
START_TEST(cost_of_work)
{
    struct cost_cfg c;
    struct dse_err e;
    cost_default(&c);
    ck_assert_double_eq(c.usd_per_kWh, 0.10);
    ck_assert_double_eq(c.pue, 1);
    ck_assert_double_eq(c.amortize_years, 3);
    ck_assert_double_eq(c.utilization, 1);
    c.usd_per_kWh = 0.2;
    c.pue = 1.5;
    c.amortize_years = 1;
    c.utilization = 0.5;
    c.hosting_usd_per_hour = 1800;
    ck_assert_int_eq(cost_check(&c, "cost.", &e), DSE_OK);
    ck_assert_double_eq_tol(cost_usd(&c, 31536000, 3600, 2, 1000, 2, 3.6e6), 12 + 3602000 * 1.5 * 0.2 / 3.6e6, 1e-9);
    ck_assert(isnan(cost_usd(&c, 0, 0, 2, 1000, 2, 3.6e6)));
    /* defaults, a price alone: 94608000 USD over 3 years = 1 USD/s, 10 s and 3.6e6 J at 0.1 USD/kWh: 10.1 */
    cost_default(&c);
    ck_assert_double_eq_tol(cost_usd(&c, 94608000, 0, 1, 50, 10, 3.6e6), 10.1, 1e-9);
    c.pue = 0.9;
    ck_assert_int_eq(cost_check(&c, "cost.", &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "cost.pue: expected a PUE in [1, 10]"), "%s", e.msg);
    cost_default(&c);
    c.utilization = 0;
    ck_assert_int_eq(cost_check(&c, "cost.", &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "cost.utilization: expected a share of the time in (0, 1], got 0"), "%s", e.msg);
}
END_TEST

/* Every shipped hwdesc x a CNN, an encoder and a decoder (generate), at batch 1 and 64, unlimited and
 * with each device capped at half its TDP: no device used reports more than its limit, and the system
 * (whose unused devices idle) no more than the sum of its devices' limits. */
START_TEST(shipped_never_exceed_limits)
{
    static const char *const models[] = {"models/resnet50.json", "models/bert-base.json", "models/llama-3.2-1b.json"};
    char dir[512], path[1024];
    DIR *dp = opendir(src_path(dir, sizeof dir, "hwdesc"));
    ck_assert(dp != NULL);
    struct wl_model m[3];
    for (int i = 0; i < 3; i++)
        test_model(models[i], &m[i]);
    struct hw_system *s = malloc(sizeof *s);
    struct eval_result res = {0};
    struct dse_err e;
    int checked = 0, throttled = 0;
    for (struct dirent *de; (de = readdir(dp));) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".json") || !strncmp(de->d_name, "host", 4))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        ck_assert_msg(hw_load_file(path, s, &e) == DSE_OK, "%s", e.msg);
        for (int cap = 0; cap < 2; cap++) {
            if (cap)
                for (int d = 0; d < s->n_dev; d++)
                    hw_apply_power_cap(&s->dev[d], s->dev[d].tdp_W / 2);
            int dev = eval_default_device(s), p = eval_default_prec(&s->dev[dev]);
            for (int mi = 0; mi < 3; mi++)
                for (int64_t b = 1; b <= 64; b *= 64) {
                    struct eval_req r;
                    memset(&r, 0, sizeof r);
                    r.sys = s;
                    r.dev = dev;
                    for (int t = 0; t < OP_COUNT; t++)
                        r.type_dev[t] = -1;
                    r.model = &m[mi];
                    r.x.prec.w = r.x.prec.a = r.x.prec.kv = p >= 0 ? (enum prec)p : P_INT8;
                    r.batch = b;
                    r.phase = wl_model_is_lm(&m[mi]) ? PH_GENERATE : PH_NONE;
                    r.prompt = wl_model_is_lm(&m[mi]) ? 128 : 128;
                    r.gen = 16;
                    r.skip_capacity = 1;
                    ck_assert_msg(eval_run(&r, &res, &e) == DSE_OK, "%s %s: %s", de->d_name, models[mi], e.msg);
                    if (!res.feasible)
                        continue;
                    double sum = 0;
                    for (int d = 0; d < s->n_dev; d++) {
                        if (!(res.used & (1u << d))) { /* idles: its idle power counts, under its limit */
                            double pc = s->dev[d].power_cap_W;
                            sum += pc > 0 && pc < s->dev[d].tdp_W ? pc : s->dev[d].tdp_W;
                            continue;
                        }
                        ck_assert_msg(res.dev_power_W[d] <= res.dev_limit_W[d] * (1 + 1e-9),
                                      "%s %s batch %lld cap %d: device %s at %.4g W, limit %.4g W", de->d_name,
                                      models[mi], (long long)b, cap, s->dev[d].name, res.dev_power_W[d],
                                      res.dev_limit_W[d]);
                        sum += res.dev_limit_W[d];
                    }
                    /* the devices' power (an enclosure's base, chassis and conversion are not the devices') */
                    double devs = res.t.module_W - hw_enclosures(s, res.t.devices) * s->encl.base_W;
                    ck_assert_msg(devs <= sum * (1 + 1e-9), "%s %s: %.4g W over %.4g W", de->d_name, models[mi], devs,
                                  sum);
                    checked++;
                    throttled += res.throttle_note[0] != 0;
                }
        }
    }
    closedir(dp);
    ck_assert_int_ge(checked, 40);
    ck_assert_int_ge(throttled, 1); /* the half-TDP caps bind somewhere: the check is not vacuous */
    eval_result_free(&res);
    for (int i = 0; i < 3; i++)
        wl_model_free(&m[i]);
    free(s);
}
END_TEST

START_TEST(large_sram_banked)
{
    /* Horowitz 45 nm: 1 MiB (2^20 B) 100 pJ per 64-bit read = 12.5 pJ/B; 256 KiB (2^18) on the line
     * between 32 KiB (2.5) and 1 MiB: 2.5 + (18 - 15) x (12.5 - 2.5) / 5 = 8.5 pJ/B; 128 MiB is
     * banked, so no more than 1 MiB's 12.5 (the old extrapolation gave 2.5 + 12 x 2 = 26.5). */
    ck_assert_near(hw_default_mem_J_per_byte(MEM_SRAM, 1 << 20, 45), 12.5e-12, 1e-12);
    ck_assert_near(hw_default_mem_J_per_byte(MEM_CACHE, 1 << 18, 45), 8.5e-12, 1e-12);
    ck_assert_near(hw_default_mem_J_per_byte(MEM_SRAM, 128.0 * (1 << 20), 45), 12.5e-12, 1e-12);
    ck_assert_near(hw_default_mem_J_per_byte(MEM_SRAM, 128.0 * (1 << 20), 7), 12.5e-12 * 7 / 45, 1e-12);
}
END_TEST

Suite *make_power_suite(void)
{
    Suite *s = suite_create("power");
    TCase *t = tcase_create("power");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, throttle_dvfs_then_duty_cycle);
    tcase_add_test(t, active_power_throttles);
    tcase_add_test(t, cost_of_work);
    tcase_add_test(t, shipped_never_exceed_limits);
    tcase_add_test(t, large_sram_banked);
    suite_add_tcase(s, t);
    return s;
}
