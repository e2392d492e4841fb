/* check_probe.c -- the probe's hwdesc writer on a made-up host and measurement (no timing here: the
 * measurements themselves are exercised by the CLI test probe-writes-hwdesc). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "hw.h"
#include "probe.h"

/* A 2-core host: L1 48 KiB and L2 2 MiB per core, one 260 MiB L3 (what a VM's sysfs shows of the
 * host's shared L3), 8 GiB of memory. */
static void fake_host(struct probe_host *h)
{
    memset(h, 0, sizeof *h);
    strcpy(h->arch, "x86_64");
    strcpy(h->model, "Test CPU");
    h->online = h->allowed = h->physical = 2;
    h->threads_per_core = 1;
    h->pin[0] = 0, h->pin[1] = 1, h->n_pin = 2;
    h->feat = PROBE_F_AVX2 | PROBE_F_FMA | PROBE_F_AVX512F;
    static const struct {
        int level;
        const char *type;
        double kib;
        int per_core;
    } c[] = {{1, "Data", 48, 1}, {2, "Unified", 2048, 1}, {3, "Unified", 260 * 1024, 0}};
    for (int i = 0; i < 3; i++) {
        struct probe_cache *pc = &h->cache[h->n_cache++];
        pc->level = c[i].level;
        strcpy(pc->type, c[i].type);
        pc->size_bytes = c[i].kib * 1024;
        pc->per_core = c[i].per_core;
        pc->shared_cpus = c[i].per_core ? 1 : 2;
        for (int cpu = 0; cpu < PROBE_MAX_CPUS; cpu++)
            pc->inst[cpu] = -1;
        pc->inst[0] = 0;
        pc->inst[1] = (short)(c[i].per_core ? 1 : 0);
    }
    h->mem_bytes = 8.0 * (1 << 30);
    h->cpuinfo_MHz = 2000;
    strcpy(h->governor, "unknown");
    strcpy(h->compiler, "test");
    strcpy(h->omp_proc_bind, "unset");
    strcpy(h->omp_places, "unset");
}

static void stat_of(struct probe_stat *s, double v)
{
    s->median = s->min = s->max = v;
    s->runs = 9;
}

/* fp32 200 GFLOP/s; L1 400, L2 200, L3 40, DRAM 20 GB/s; the L3 found at 32 MiB per thread. */
static void fake_meas(struct probe_meas *m)
{
    memset(m, 0, sizeof *m);
    m->threads = 2;
    m->runs = 9;
    m->run_s = 0.1;
    strcpy(m->isa, "avx512");
    strcpy(m->isa_label, "AVX-512");
    m->mr = 14, m->nr = 32;
    strcpy(m->mk_src, "test");
    stat_of(&m->peak[PROBE_FP32], 200e9);
    m->peak_per_iter[PROBE_FP32] = 1;
    strcpy(m->peak_how[PROBE_FP32], "test chains");
    stat_of(&m->read[PROBE_L1], 400e9);
    stat_of(&m->read[PROBE_L2], 200e9);
    stat_of(&m->read[PROBE_L3], 40e9);
    stat_of(&m->read[PROBE_DRAM], 20e9);
    stat_of(&m->copy, 18e9);
    stat_of(&m->triad, 19e9);
    m->stream_fraction = 0.95;
    m->buf_bytes[PROBE_L1] = 24 * 1024;
    m->buf_bytes[PROBE_L2] = 1 << 20;
    m->buf_bytes[PROBE_L3] = 32.0 * (1 << 20);
    m->buf_bytes[PROBE_DRAM] = 512.0 * (1 << 20);
    m->cache_bytes = (96 + 4096 + 260 * 1024) * 1024.0;
    m->idle_W = -1;
    m->steal_pct = m->other_pct = -1;
}

static const cJSON *level(const cJSON *hw, int i)
{
    const cJSON *d = cJSON_GetArrayItem(cJSON_GetObjectItem(hw, "devices"), 0);
    return cJSON_GetArrayItem(cJSON_GetObjectItem(d, "memory"), i);
}

static void check_loads(const cJSON *hw, int n_mem)
{
    char *txt = cJSON_PrintUnformatted(hw);
    ck_assert_ptr_nonnull(txt);
    struct hw_system *sys = calloc(1, sizeof *sys);
    struct dse_err e;
    memset(&e, 0, sizeof e);
    int rc = hw_load_buf(txt, strlen(txt), "probe.json", sys, &e);
    ck_assert_msg(rc == 0, "%s", e.msg);
    ck_assert_int_eq(sys->dev[0].n_mem, n_mem);
    free(txt);
    free(sys);
}

/* The sysfs L3 half-share (65 MiB per thread) read at 15.2 GB/s, under 3/4 of the 40 GB/s read at
 * 32 MiB: the level's capacity is then 2 (a buffer is half a thread's share) x 32 MiB x 2
 * threads = 128 MiB = 131072 KiB, not sysfs's 260 MiB, and its source says why. */
START_TEST(test_probe_measured_l3_capacity)
{
    struct probe_host h;
    struct probe_meas m;
    fake_host(&h);
    fake_meas(&m);
    m.eff_cap_bytes[PROBE_L3] = 2 * m.buf_bytes[PROBE_L3] * 2;
    m.curve_level = PROBE_L3;
    m.n_curve = 2;
    m.curve_bytes[0] = 65.0 * (1 << 20), m.curve_Bps[0] = 15.2e9;
    m.curve_bytes[1] = 32.0 * (1 << 20), m.curve_Bps[1] = 40e9;
    cJSON *hw = probe_hwdesc(&h, &m, "host", "2026-11-30");
    ck_assert_ptr_nonnull(hw);
    const cJSON *l3 = level(hw, 2);
    ck_assert_str_eq(cJSON_GetObjectItem(l3, "name")->valuestring, "l3");
    ck_assert_int_eq((int)cJSON_GetObjectItem(l3, "capacity_KiB")->valuedouble, 131072);
    ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(l3, "source")->valuestring,
                                 "capacity: measured (sysfs says 260 MiB x 1, but per thread 65 MiB read at 15.2 GB/s, 32 MiB read "
                                 "at 40.0 GB/s: twice the largest buffer within 3/4 of the best rate, times 2 threads)"));
    /* L2 keeps sysfs's size: 2 MiB x 2 cores = 4096 KiB */
    ck_assert_int_eq((int)cJSON_GetObjectItem(level(hw, 1), "capacity_KiB")->valuedouble, 4096);
    check_loads(hw, 4);
    cJSON_Delete(hw);
}
END_TEST

/* No L3 buffer read faster than DRAM: the level is left out and the DRAM level's source names it. */
START_TEST(test_probe_dropped_level)
{
    struct probe_host h;
    struct probe_meas m;
    fake_host(&h);
    fake_meas(&m);
    m.dropped[PROBE_L3] = 1;
    m.read[PROBE_L3].runs = 0;
    cJSON *hw = probe_hwdesc(&h, &m, "host", "2026-11-30");
    ck_assert_ptr_nonnull(hw);
    const cJSON *dram = level(hw, 2);
    ck_assert_str_eq(cJSON_GetObjectItem(dram, "name")->valuestring, "dram");
    ck_assert_ptr_null(level(hw, 3));
    ck_assert_ptr_nonnull(strstr(cJSON_GetObjectItem(dram, "source")->valuestring, "left out: l3"));
    check_loads(hw, 3);
    cJSON_Delete(hw);
}
END_TEST

/* The clock per-cycle figures use: cpufreq's maximum when there is one, else the clock measured in the
 * same run when its runs agree within 20 %, else /proc/cpuinfo's nominal figure. */
START_TEST(test_probe_clock_choice)
{
    struct probe_host h;
    struct probe_meas m;
    fake_host(&h); /* cpuinfo 2000 MHz, no cpufreq */
    fake_meas(&m);
    m.clock_MHz = (struct probe_stat){2900, 2880, 2920, 9}; /* spread 40 / 2900 = 1.4 % */
    ck_assert_double_eq(probe_clock_MHz(&h, &m, NULL, 0), 2900);
    m.clock_MHz.min = 1400; /* spread 1520 / 2900 = 52 %: noisy, the nominal clock instead */
    ck_assert_double_eq(probe_clock_MHz(&h, &m, NULL, 0), 2000);
    h.max_MHz = 3500;
    ck_assert_double_eq(probe_clock_MHz(&h, &m, NULL, 0), 3500);
}
END_TEST

Suite *make_probe_suite(void)
{
    Suite *s = suite_create("probe");
    TCase *tc = tcase_create("hwdesc");
    tcase_add_test(tc, test_probe_measured_l3_capacity);
    tcase_add_test(tc, test_probe_dropped_level);
    tcase_add_test(tc, test_probe_clock_choice);
    suite_add_tcase(s, tc);
    return s;
}
