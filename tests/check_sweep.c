/* check_sweep.c -- sweeps: spec errors, power caps, determinism across thread counts, NSGA-II
 * against the exhaustive front of a small space. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_fixtures.h"
#include "check_suites.h"
#include "pareto.h"
#include "sweep.h"

/* Writes text to a temporary file under the source tree's tests/ (so relative model paths in the
 * spec resolve from the directory above it) and returns its path in buf. */
static const char *spec_file(char *buf, unsigned n, const char *text)
{
    char dir[512];
    src_path(dir, sizeof dir, "tests");
    snprintf(buf, n, "%s/tmp-spec-%d-XXXXXX", dir, (int)getpid());
    int fd = mkstemp(buf);
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return buf;
}

static const char SMALL[] =
    "{\"name\": \"small\", \"workload\": {\"model\": \"models/llama-3.2-1b.json\", \"phase\": \"generate\","
    " \"prompt\": 64, \"generate\": 8}, \"system\": \"hwdesc/nvidia-jetson-orin-nano-8gb.json\","
    " \"axes\": {\"precision\": [\"fp16\", \"w8a16\", \"w4a16\", \"w8a8\", \"w4a8\"],"
    " \"batch\": [1, 2, 4, 8, 16, 32, 64, 128], \"placement\": [\"gpu\", \"cpu\"],"
    " \"power_W\": [3, 5, 7, 9, 11, 13], \"memory_GB\": [2, 8]},"
    " \"objectives\": [{\"metric\": \"tokens_per_s\", \"goal\": \"max\"},"
    " {\"metric\": \"energy_per_token_mJ\", \"goal\": \"min\"}],"
    " \"search\": {\"method\": \"grid\"}}";

/* 160 power caps, 3 W to 162 W. */
#define P10(a) #a "0, " #a "1, " #a "2, " #a "3, " #a "4, " #a "5, " #a "6, " #a "7, " #a "8, " #a "9"
#define POW160 "3, 4, 5, 6, 7, 8, 9, " P10(1) ", " P10(2) ", " P10(3) ", " P10(4) ", " P10(5) ", " P10(6) ", " \
    P10(7) ", " P10(8) ", " P10(9) ", " P10(10) ", " P10(11) ", " P10(12) ", " P10(13) ", " P10(14) ", " P10(15) \
    ", 160, 161, 162"

struct collect {
    long long n, cap;
    struct sw_row *rows;
};

static int collect_rows(void *ctx, const struct sw_row *rows, int n, struct dse_err *e)
{
    struct collect *c = ctx;
    (void)e;
    if (c->n + n > c->cap) {
        c->cap = (c->n + n) * 2;
        c->rows = realloc(c->rows, sizeof *c->rows * (size_t)c->cap);
        ck_assert_ptr_nonnull(c->rows);
    }
    memcpy(c->rows + c->n, rows, sizeof *rows * (size_t)n);
    c->n += n;
    return DSE_OK;
}

static void run_spec_budget(const char *text, int threads, size_t budget, struct collect *c, struct sweep_spec *sp);

static void run_spec(const char *text, int threads, struct collect *c, struct sweep_spec *sp)
{
    run_spec_budget(text, threads, 0, c, sp);
}

/* run_spec with the graph cache's budget (0: the default). */
static void run_spec_budget(const char *text, int threads, size_t budget, struct collect *c, struct sweep_spec *sp)
{
    char path[600];
    struct dse_err e;
    struct sweep_prep *p;
    int stopped;
    spec_file(path, sizeof path, text);
    int rc = sweep_spec_load(path, sp, &e);
    unlink(path);
    ck_assert_msg(rc == DSE_OK, "%s", e.msg);
    ck_assert_msg(sweep_prepare(sp, &p, &e) == DSE_OK, "%s", e.msg);
    ck_assert_msg(sweep_scratch_init(p, threads, &e) == DSE_OK, "%s", e.msg);
    if (budget)
        sweep_set_graph_budget(p, budget);
    struct sweep_sink k = {c, collect_rows, NULL, NULL, NULL};
    ck_assert_msg(sweep_run(p, threads, NULL, &k, &stopped, &e) == DSE_OK, "%s", e.msg);
    ck_assert(!stopped);
    sweep_prep_free(p);
}

START_TEST(grid_same_on_any_thread_count)
{
    struct collect a = {0}, b = {0};
    struct sweep_spec sa, sb;
    run_spec(SMALL, 1, &a, &sa);
    run_spec(SMALL, 2, &b, &sb);
    /* 5 x 8 x 2 x 6 x 2 = 960 points, each once, in point order. */
    ck_assert_int_eq(a.n, 960);
    ck_assert_int_eq(b.n, 960);
    for (long long i = 0; i < a.n; i++) {
        ck_assert_int_eq(a.rows[i].point, i);
        ck_assert_int_eq(a.rows[i].point, b.rows[i].point);
        ck_assert_int_eq(a.rows[i].feasible, b.rows[i].feasible);
        ck_assert(memcmp(a.rows[i].metric, b.rows[i].metric, sizeof(double) * (size_t)metric_count) == 0);
    }
    /* memory_GB is evaluated last: points 2k and 2k+1 differ only in capacity. A 2 GB memory cannot
     * hold fp16 weights (1,235,814,400 x 2 B = 2.47 GB), 8 GB can (batch 1, cpu or gpu). */
    ck_assert(!a.rows[0].feasible && strstr(a.rows[0].reason, "does not fit"));
    free(a.rows);
    free(b.rows);
    sweep_spec_free(&sa);
    sweep_spec_free(&sb);
}
END_TEST

/* A multi-device space: layouts (tp, pp, micro-batches, cp) on a DGX H100 and a training step with
 * recomputation over a DGX A100, each the same on 1 and 2 threads; layouts a model or system refuses
 * are infeasible points with their reasons, not errors. */
static const char LAYOUTS[] =
    "{\"name\": \"layouts\", \"workload\": {\"model\": \"models/llama-2-7b.json\", \"phase\": \"generate\","
    " \"prompt\": 128, \"generate\": 8}, \"system\": [\"hwdesc/nvidia-dgx-h100.json\", \"hwdesc/nvidia-dgx-a100.json\"],"
    " \"axes\": {\"tp\": [1, 2, 3, 4, 8], \"pp\": [1, 2], \"microbatches\": [1, 2], \"cp\": [1, 2],"
    " \"batch\": [2, 8]},"
    " \"objectives\": [{\"metric\": \"tokens_per_s_per_device\", \"goal\": \"max\"},"
    " {\"metric\": \"tpot_ms\", \"goal\": \"min\"}], \"search\": {\"method\": \"grid\"}}";
static const char TRAINING[] =
    "{\"name\": \"training\", \"workload\": {\"model\": \"models/gpt2.json\", \"phase\": \"train\","
    " \"prompt\": 512, \"zero\": 1}, \"system\": \"hwdesc/nvidia-dgx-a100.json\","
    " \"axes\": {\"tp\": [1, 2, 4], \"pp\": [1, 2], \"microbatches\": [1, 4, 8], \"recompute\": [\"none\", \"full\"],"
    " \"batch\": [32, 64]},"
    " \"objectives\": [{\"metric\": \"latency_ms\", \"goal\": \"min\"},"
    " {\"metric\": \"peak_memory_MB\", \"goal\": \"min\"}], \"search\": {\"method\": \"grid\"}}";

START_TEST(layouts_same_on_any_thread_count)
{
    const char *specs[2] = {LAYOUTS, TRAINING};
    for (int k = 0; k < 2; k++) {
        struct collect a = {0}, b = {0};
        struct sweep_spec sa, sb;
        run_spec(specs[k], 1, &a, &sa);
        run_spec(specs[k], 2, &b, &sb);
        ck_assert_int_eq(a.n, b.n);
        int feasible = 0, refused = 0;
        for (long long i = 0; i < a.n; i++) {
            ck_assert_int_eq(a.rows[i].feasible, b.rows[i].feasible);
            ck_assert(memcmp(a.rows[i].metric, b.rows[i].metric, sizeof(double) * (size_t)metric_count) == 0);
            feasible += a.rows[i].feasible;
            refused += !a.rows[i].feasible && (strstr(a.rows[i].reason, "devices, but") ||
                                               strstr(a.rows[i].reason, "attention heads do not split") ||
                                               strstr(a.rows[i].reason, "must divide"));
        }
        ck_assert_msg(feasible > 0 && refused > 0, "spec %d: %d feasible, %d refused by layout", k, feasible, refused);
        free(a.rows);
        free(b.rows);
        sweep_spec_free(&sa);
        sweep_spec_free(&sb);
    }
}
END_TEST

static double front_hv(const struct sweep_spec *sp, const struct collect *c, const double *ref)
{
    double *obj = malloc(sizeof *obj * (size_t)(c->n ? c->n : 1) * sp->n_obj);
    int n = 0;
    struct dse_err e;
    for (long long i = 0; i < c->n; i++)
        if (c->rows[i].feasible)
            sweep_objectives(sp, &c->rows[i], obj + (size_t)n++ * sp->n_obj);
    double hv = pareto_hypervolume(obj, n, sp->n_obj, ref, &e);
    free(obj);
    return hv;
}

START_TEST(nsga2_reaches_the_exhaustive_front)
{
    /* The same 960-point space searched by NSGA-II (population 40, 30 generations): its evaluated
     * points' front must reach 99 % of the hypervolume of the exhaustive front, both measured from
     * the exhaustive run's reference point. */
    struct collect g = {0}, n = {0};
    struct sweep_spec sg, sn;
    run_spec(SMALL, 2, &g, &sg);
    char spec[sizeof SMALL + 64];
    snprintf(spec, sizeof spec, "%.*s\"search\": {\"method\": \"nsga2\", \"population\": 40, \"generations\": 30,"
             " \"seed\": 7}}", (int)(strstr(SMALL, "\"search\"") - SMALL), SMALL);
    run_spec(spec, 2, &n, &sn);
    double *obj = malloc(sizeof *obj * (size_t)g.n * 2), ref[2];
    int nf = 0;
    for (long long i = 0; i < g.n; i++)
        if (g.rows[i].feasible)
            sweep_objectives(&sg, &g.rows[i], obj + (size_t)nf++ * 2);
    pareto_reference(obj, nf, 2, ref);
    double full = front_hv(&sg, &g, ref), got = front_hv(&sn, &n, ref);
    ck_assert(full > 0);
    ck_assert_msg(got >= 0.99 * full, "NSGA-II hypervolume %.6g is %.2f%% of the exhaustive %.6g", got,
                  100 * got / full, full);
    ck_assert_int_le(n.n, 40 * 31); /* distinct points only */
    free(obj);
    free(g.rows);
    free(n.rows);
    sweep_spec_free(&sg);
    sweep_spec_free(&sn);
}
END_TEST

START_TEST(random_is_seeded_and_distinct)
{
    char spec[sizeof SMALL + 64];
    snprintf(spec, sizeof spec, "%.*s\"search\": {\"method\": \"random\", \"samples\": 200, \"seed\": 3}}",
             (int)(strstr(SMALL, "\"search\"") - SMALL), SMALL);
    struct collect a = {0}, b = {0};
    struct sweep_spec sa, sb;
    run_spec(spec, 1, &a, &sa);
    run_spec(spec, 2, &b, &sb);
    ck_assert_int_eq(a.n, 200);
    for (long long i = 0; i < a.n; i++) {
        ck_assert_int_eq(a.rows[i].point, b.rows[i].point);
        for (long long j = 0; j < i; j++)
            ck_assert(a.rows[i].point != a.rows[j].point);
    }
    free(a.rows);
    free(b.rows);
    sweep_spec_free(&sa);
    sweep_spec_free(&sb);
}
END_TEST

START_TEST(spec_errors)
{
    static const struct {
        const char *from, *to, *msg;
    } c[] = {
        {"\"power_W\"", "\"power_kW\"", "axes.power_kW: unknown axis"},
        {"\"tokens_per_s\", \"goal\": \"max\"", "\"tokens_per_sec\", \"goal\": \"max\"", "unknown metric 'tokens_per_sec'"},
        {"\"goal\": \"max\"", "\"goal\": \"up\"", "expected \"min\" or \"max\""},
        {"{\"method\": \"grid\"}", "{\"method\": \"anneal\"}", "expected grid, random or nsga2"},
        {"\"fp16\", \"w8a16\"", "\"fp12\", \"w8a16\"", "axes.precision[0]"},
        {"[1, 2, 4,", "[0, 2, 4,", "expected an integer batch size"},
        {"\"gpu\", \"cpu\"", "\"gpu\", \"gpu\"", "given twice"},
        {"hwdesc/nvidia-jetson-orin-nano-8gb.json", "hwdesc/nope.json", "no such hwdesc"},
        /* Issue 9, item 8: things given twice, each named with the entry it repeats. */
        {"\"system\": \"hwdesc/nvidia-jetson-orin-nano-8gb.json\"",
         "\"system\": [\"hwdesc/nvidia-jetson-orin-nano-8gb.json\", \"nvidia-jetson-orin-nano-8gb\"]",
         "system[1]: 'nvidia-jetson-orin-nano-8gb' is the same system as system[0] "
         "'hwdesc/nvidia-jetson-orin-nano-8gb.json' (the same file)"},
        {"\"fp16\", \"w8a16\"", "\"fp16\", \"w=fp16,a=fp16,kv=fp16\"",
         "axes.precision[1]: value w=fp16,a=fp16,kv=fp16 given twice (as [0] fp16)"},
        {"\"gpu\", \"cpu\"", "\"cpu,softmax=gpu,matmul=gpu\", \"cpu,matmul=gpu,softmax=gpu\"",
         "axes.placement[1]: value cpu,matmul=gpu,softmax=gpu given twice (as [0] cpu,softmax=gpu,matmul=gpu)"},
        {"\"gpu\", \"cpu\"", "\"gpu\", \"cpu,softmax=gpu,matmul=gpu,softmax=cpu\"",
         "axes.placement[1]: 'cpu,softmax=gpu,matmul=gpu,softmax=cpu': operator type 'softmax' placed twice"},
        {"{\"metric\": \"energy_per_token_mJ\", \"goal\": \"min\"}", "{\"metric\": \"tokens_per_s\", \"goal\": \"min\"}",
         "objectives[1]: metric tokens_per_s is already objectives[0]"},
        {"{\"model\": \"models/llama-3.2-1b.json\", \"phase\": \"generate\", \"prompt\": 64, \"generate\": 8}",
         "[{\"model\": \"models/llama-3.2-1b.json\", \"phase\": \"generate\", \"prompt\": 64, \"generate\": 8},"
         " {\"model\": \"llama-3.2-1b\", \"prompt\": 64, \"generate\": 8}]",
         "workload[1]: the same workload as workload[0]"},
        /* A field of another search method would be ignored. */
        {"{\"method\": \"grid\"}", "{\"method\": \"grid\", \"population\": 40}", "population applies to method nsga2"},
        {"{\"method\": \"grid\"}", "{\"method\": \"grid\", \"limit\": 100}", "search.limit: unknown field"},
        /* Item 14: the range is checked before any cast: 2^63 is reported whole. */
        {"[1, 2, 4,", "[9223372036854775808, 2, 4,", "got 9.2233720368547758e+18"},
    };
    for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++) {
        char text[sizeof SMALL + 256], path[600];
        const char *at = strstr(SMALL, c[i].from);
        ck_assert_msg(at != NULL, "case %u", i);
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - SMALL), SMALL, c[i].to, at + strlen(c[i].from));
        struct sweep_spec sp;
        struct dse_err e;
        spec_file(path, sizeof path, text);
        int rc = sweep_spec_load(path, &sp, &e);
        unlink(path);
        ck_assert_int_eq(rc, DSE_EINPUT);
        ck_assert_msg(strstr(e.msg, c[i].msg) != NULL, "case %u: '%s' lacks '%s'", i, e.msg, c[i].msg);
    }
}
END_TEST

/* Loads text as a spec; returns its status with the message in e. */
static int load_text(const char *text, struct sweep_spec *sp, struct dse_err *e)
{
    char path[600];
    spec_file(path, sizeof path, text);
    int rc = sweep_spec_load(path, sp, e);
    unlink(path);
    return rc;
}

/* SMALL with its "axes" and "search" replaced. */
static char *small_with(const char *axes, const char *search)
{
    const char *a = strstr(SMALL, "\"axes\""), *o = strstr(SMALL, "\"objectives\""), *se = strstr(SMALL, "\"search\"");
    size_t n = strlen(SMALL) + strlen(axes) + strlen(search) + 64;
    char *t = malloc(n);
    ck_assert_ptr_nonnull(t);
    snprintf(t, n, "%.*s\"axes\": %s, %.*s\"search\": %s}", (int)(a - SMALL), SMALL, axes, (int)(se - o), o, search);
    return t;
}

/* n hw: axes of 1024 values each (clock, TDP, idle power, ... of the GPU). */
static char *hw_axes(int n)
{
    static const char *const field[] = {"clock.boost_MHz", "clock.base_MHz", "power.tdp_W", "power.idle_W",
                                        "memory.0.bandwidth_GBps", "memory.0.capacity_GiB", "overhead.per_op_us"};
    size_t cap = (size_t)n * 1024 * 24 + 1024, k = 0;
    char *t = malloc(cap);
    ck_assert_ptr_nonnull(t);
    k += (size_t)snprintf(t + k, cap - k, "{");
    for (int a = 0; a < n; a++) {
        k += (size_t)snprintf(t + k, cap - k, "%s\"hw:devices.gpu.%s\": [", a ? ", " : "", field[a]);
        for (int v = 0; v < 1024; v++)
            k += (size_t)snprintf(t + k, cap - k, "%s%d", v ? ", " : "", 1000 + v);
        k += (size_t)snprintf(t + k, cap - k, "]");
    }
    snprintf(t + k, cap - k, "}");
    return t;
}

/* Issue 9, items 11, 12 and 20: sizes are counted in 64 bits (or double) and checked by the loader
 * before anything is allocated by them; plans are bounded by the space. */
START_TEST(spec_sizes)
{
    struct sweep_spec sp;
    struct dse_err e;
    /* SMALL: 5 precisions x 8 batches x 2 placements x 6 power caps x 2 memory sizes = 960 points;
     * variants: 1 system x 6 power caps = 6. */
    ck_assert_msg(load_text(SMALL, &sp, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_eq(sp.points, 960);
    ck_assert_int_eq(sp.n_variants, 6);
    sweep_spec_free(&sp);
    static const struct {
        int hw_axes;
        const char *search, *msg;
    } c[] = {
        /* 4 hw: axes of 1024 values: 1024^4 = 2^40 = 1.0995e12 variants (an int held 0: the heap
         * overflow of item 11). */
        {4, "{\"method\": \"random\", \"samples\": 10}",
         "axes: 1.1e+12 hardware variants (systems x hw: values x power caps), more than 4096"},
        /* 7 hw: axes: 1024^7 = 2^70 = 1.1806e21 points, reported whole (not 9e18). */
        {7, "{\"method\": \"random\", \"samples\": 10}",
         "axes: the space has 1.18e+21 points (1024 x 1024 x 1024 x 1024 x 1024 x 1024 x 1024), more than 4.61e+18"},
    };
    for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *axes = hw_axes(c[i].hw_axes), *t = small_with(axes, c[i].search);
        ck_assert_int_eq(load_text(t, &sp, &e), DSE_EINPUT);
        ck_assert_msg(strstr(e.msg, c[i].msg) != NULL, "case %u: '%s' lacks '%s'", i, e.msg, c[i].msg);
        free(axes);
        free(t);
    }
    /* Plans bounded by the space: 2 points (batch 1, 2), or 3 x 160 = 480 points. */
    static const struct {
        const char *axes, *search, *msg;
    } d[] = {
        {"{\"batch\": [1, 2]}", "{\"method\": \"nsga2\", \"population\": 1000, \"generations\": 100000}",
         "search.population: the space has 2 points, fewer than the smallest population (4)"},
        {"{\"batch\": [1, 2, 4], \"power_W\": [" POW160 "]}",
         "{\"method\": \"nsga2\", \"population\": 1000, \"generations\": 10}",
         "search.population: 1000 is more than the 480 points of the space: at most 480"},
        /* 40 x (1000 + 1) = 40,040 evaluations > 10 x 480 = 4,800: at most 4800 / 40 - 1 = 119 generations. */
        {"{\"batch\": [1, 2, 4], \"power_W\": [" POW160 "]}",
         "{\"method\": \"nsga2\", \"population\": 40, \"generations\": 1000}",
         "search.generations: population 40 x (generations 1000 + 1) = 40040 evaluations, more than 10 per point of "
         "the 480-point space (4800): at most 119 generations"},
        {"{\"batch\": [1, 2, 4], \"power_W\": [" POW160 "]}", "{\"method\": \"random\", \"samples\": 481}",
         "search.samples: 481 distinct samples of a space of 480 points: at most 480"},
    };
    for (unsigned i = 0; i < sizeof d / sizeof d[0]; i++) {
        char *t = small_with(d[i].axes, d[i].search);
        ck_assert_int_eq(load_text(t, &sp, &e), DSE_EINPUT);
        ck_assert_msg(strstr(e.msg, d[i].msg) != NULL, "case %u: '%s' lacks '%s'", i, e.msg, d[i].msg);
        free(t);
    }
    /* At the bounds: 480 samples; population 480 for 9 generations (4,800 evaluations). */
    char *t = small_with("{\"batch\": [1, 2, 4], \"power_W\": [" POW160 "]}",
                         "{\"method\": \"nsga2\", \"population\": 480, \"generations\": 9}");
    ck_assert_msg(load_text(t, &sp, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_eq(sweep_planned(&sp), 4800);
    sweep_spec_free(&sp);
    free(t);
}
END_TEST

/* Item 8: two entries for one model with different settings are labelled by what differs; two hw:
 * axes that name one field are one axis given twice. */
START_TEST(spec_labels_and_fields)
{
    struct sweep_spec sp;
    struct dse_err e;
    char text[sizeof SMALL + 256];
    const char *at = strstr(SMALL, "\"workload\""), *end = strstr(SMALL, "\"system\"");
    snprintf(text, sizeof text, "%.*s\"workload\": [{\"model\": \"llama-3.2-1b\", \"prompt\": 64, \"generate\": 8},"
             " {\"model\": \"models/llama-3.2-1b.json\", \"prompt\": 128, \"generate\": 8}], %s",
             (int)(at - SMALL), SMALL, end);
    ck_assert_msg(load_text(text, &sp, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_eq(sp.axes[0].kind, AX_WORKLOAD);
    ck_assert_str_eq(sp.axes[0].v[0].s, "llama-3.2-1b prompt=64");
    ck_assert_str_eq(sp.axes[0].v[1].s, "llama-3.2-1b prompt=128");
    sweep_spec_free(&sp);
    /* The Orin Nano's devices are [cpu, gpu]: devices.gpu and devices.1 are one device. */
    char *t = small_with("{\"hw:devices.gpu.clock.boost_MHz\": [500, 625], \"hw:devices.1.clock.boost_MHz\": [400]}",
                         "{\"method\": \"grid\"}");
    struct sweep_prep *p;
    ck_assert_msg(load_text(t, &sp, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_eq(sweep_prepare(&sp, &p, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "hw:devices.1.clock.boost_MHz: names the same field of") &&
                      strstr(e.msg, "as axes.hw:devices.gpu.clock.boost_MHz"),
                  "%s", e.msg);
    sweep_spec_free(&sp);
    free(t);
}
END_TEST

/* A batch axis of 300 values (300 distinct micro-batch sizes, more than the 256 graphs the sweep once
 * built up front and refused beyond) over tp 1 and 2 on a DGX A100: every point evaluated, the same
 * bit for bit on 1 thread with the default graph budget and on 2 threads with a budget of 1 byte (one
 * point a chunk, every graph built when needed and evicted when the next is), and equal to eval_run of
 * the same point. */
START_TEST(batch_axis_past_256)
{
    char *spec = malloc(8192);
    ck_assert_ptr_nonnull(spec);
    int at = snprintf(spec, 8192, "{\"name\": \"b300\", \"workload\": {\"model\": \"models/gpt2.json\", \"phase\": "
                      "\"prefill\", \"prompt\": 64}, \"system\": \"hwdesc/nvidia-dgx-a100.json\", \"axes\": {\"tp\": "
                      "[1, 2], \"batch\": [");
    for (int b = 1; b <= 300; b++)
        at += snprintf(spec + at, 8192 - (size_t)at, "%s%d", b > 1 ? ", " : "", b);
    snprintf(spec + at, 8192 - (size_t)at, "]}, \"objectives\": [{\"metric\": \"latency_ms\", \"goal\": \"min\"}, "
             "{\"metric\": \"throughput_per_s\", \"goal\": \"max\"}], \"search\": {\"method\": \"grid\"}}");
    struct collect a = {0}, b = {0};
    struct sweep_spec sa, sb;
    run_spec_budget(spec, 1, 0, &a, &sa);
    run_spec_budget(spec, 2, 1, &b, &sb);
    ck_assert_int_eq(a.n, 600);
    ck_assert_int_eq(b.n, 600);
    for (long long i = 0; i < a.n; i++) {
        ck_assert_int_eq(a.rows[i].point, i);
        ck_assert_int_eq(b.rows[i].point, i);
        ck_assert_msg(a.rows[i].feasible && b.rows[i].feasible, "point %lld: %s", i, a.rows[i].reason);
        ck_assert(memcmp(a.rows[i].metric, b.rows[i].metric, sizeof(double) * (size_t)metric_count) == 0);
    }
    /* point 300 + 256 = tp 2 (axis order tp, batch), batch 257: as eval_run gives it */
    struct hw_system *sys = malloc(sizeof *sys);
    struct wl_model m;
    struct dse_err e;
    char hp[512];
    src_path(hp, sizeof hp, "hwdesc/nvidia-dgx-a100.json");
    ck_assert_msg(hw_load_file(hp, sys, &e) == DSE_OK, "%s", e.msg);
    test_model("models/gpt2.json", &m);
    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = sys;
    r.dev = eval_default_device(sys);
    for (int t = 0; t < OP_COUNT; t++)
        r.type_dev[t] = -1;
    r.model = &m;
    r.x.prec.w = r.x.prec.a = r.x.prec.kv = (enum prec)eval_default_prec(&sys->dev[r.dev]);
    r.batch = 257;
    r.phase = PH_PREFILL;
    r.prompt = 64;
    r.sw = &sa.stack[sa.dev_stack[0][r.dev]];
    r.layout.n[PAR_TP] = 2;
    r.skip_capacity = 1;
    r.errbars = sa.have_errbars ? &sa.errbars : NULL;
    ck_assert_msg(par_layout_complete(sys, &r.layout, &e) == DSE_OK, "%s", e.msg);
    struct eval_result res = {0};
    ck_assert_msg(eval_run(&r, &res, &e) == DSE_OK, "%s", e.msg);
    const struct metric *lat = metric_find("latency_ms");
    ck_assert(a.rows[556].metric[lat - metric_table] == res.t.latency_s * 1e3);
    eval_result_free(&res);
    wl_model_free(&m);
    free(sys);
    free(a.rows);
    free(b.rows);
    sweep_spec_free(&sa);
    sweep_spec_free(&sb);
    free(spec);
}
END_TEST

/* Random and NSGA-II evaluate one point at a time (sweep_eval_point): each row must equal the row
 * of the same point from the whole key (sweep_eval_key), which the grid uses. */
START_TEST(eval_point_is_eval_key)
{
    struct sweep_spec sp;
    struct sweep_prep *p;
    struct dse_err e;
    ck_assert_msg(load_text(SMALL, &sp, &e) == DSE_OK, "%s", e.msg);
    ck_assert_msg(sweep_prepare(&sp, &p, &e) == DSE_OK, "%s", e.msg);
    ck_assert_msg(sweep_scratch_init(p, 1, &e) == DSE_OK, "%s", e.msg);
    int n_mem = sweep_mem_count(&sp);
    ck_assert_int_eq(n_mem, 2);
    struct sw_row rows[2], one;
    for (long long key = 0; key < sp.points; key += n_mem) {
        ck_assert_int_eq(sweep_eval_key(p, key, 0, rows, &e), n_mem);
        for (int m = 0; m < n_mem; m++) {
            ck_assert_int_eq(sweep_eval_point(p, key + m, 0, &one, &e), 0);
            ck_assert_int_eq(one.point, key + m);
            ck_assert_int_eq(one.feasible, rows[m].feasible);
            ck_assert_str_eq(one.reason, rows[m].reason);
            ck_assert(memcmp(one.metric, rows[m].metric, sizeof(double) * (size_t)metric_count) == 0);
        }
    }
    sweep_prep_free(p);
    sweep_spec_free(&sp);
}
END_TEST

/* Item 20: an objective a point has no value for says what the hwdesc lacks. The Orin Nano gives
 * neither an area model nor a die area. */
START_TEST(missing_metric_reason)
{
    struct collect c = {0};
    struct sweep_spec sp;
    char text[sizeof SMALL + 64];
    const char *at = strstr(SMALL, "{\"metric\": \"energy_per_token_mJ\"");
    snprintf(text, sizeof text, "%.*s{\"metric\": \"die_area_mm2\", \"goal\": \"min\"}], \"search\": {\"method\": \"grid\"}}",
             (int)(at - SMALL), SMALL);
    run_spec(text, 1, &c, &sp);
    int seen = 0;
    for (long long i = 0; i < c.n; i++) {
        ck_assert(!c.rows[i].feasible);
        if (strstr(c.rows[i].reason, "objective die_area_mm2")) {
            ck_assert_str_eq(c.rows[i].reason, "objective die_area_mm2 not available for this point: a device used has "
                                               "no area model and no cost.die_area_mm2 in its hwdesc");
            seen++;
        }
    }
    ck_assert_int_gt(seen, 0);
    free(c.rows);
    sweep_spec_free(&sp);
}
END_TEST

/* The buffer entry point (the fuzz target's): the same spec as from a file; with
 * SW_LOAD_SHIPPED_ONLY, a path outside hwdesc/ and models/ is not read. */
START_TEST(spec_from_buffer)
{
    struct sweep_spec a, b;
    struct dse_err e;
    char cwd[600], src[600];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    src_path(src, sizeof src, ".");
    ck_assert_int_eq(chdir(src), 0); /* shipped names resolve from the repository root */
    ck_assert_msg(load_text(SMALL, &a, &e) == DSE_OK, "%s", e.msg);
    ck_assert_msg(sweep_spec_load_buf(SMALL, strlen(SMALL), "sweeps/x.json", SW_LOAD_SHIPPED_ONLY, &b, &e) == DSE_OK,
                  "%s", e.msg);
    ck_assert(a.hash == b.hash && a.points == b.points && a.n_axes == b.n_axes);
    ck_assert(a.wl[0].hash == b.wl[0].hash && a.system_hash[0] == b.system_hash[0]);
    sweep_spec_free(&a);
    sweep_spec_free(&b);
    char text[sizeof SMALL + 64];
    const char *at = strstr(SMALL, "models/llama-3.2-1b.json");
    snprintf(text, sizeof text, "%.*s../models/llama-3.2-1b.json%s", (int)(at - SMALL), SMALL,
             at + strlen("models/llama-3.2-1b.json"));
    ck_assert_int_eq(sweep_spec_load_buf(text, strlen(text), "sweeps/x.json", SW_LOAD_SHIPPED_ONLY, &b, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "workload.model: no such workload") != NULL, "%s", e.msg);
    ck_assert_int_eq(chdir(cwd), 0);
}
END_TEST

START_TEST(placement_and_proxy)
{
    struct hw_system *s = test_fixture(FIX_NPU_SYSTEM);
    struct dse_err e;
    int dev, td[OP_COUNT];
    ck_assert_int_eq(eval_parse_placement(s, "npu,softmax=cpu,attention=cpu", &dev, td, &e), DSE_OK);
    ck_assert(dev == 1 && td[OP_SOFTMAX] == 0 && td[OP_ATTENTION] == 0 && td[OP_MATMUL] == -1);
    ck_assert_int_eq(eval_parse_placement(s, "gpu", &dev, td, &e), DSE_EINPUT);
    ck_assert_int_eq(eval_parse_placement(s, "npu,spline=cpu", &dev, td, &e), DSE_EINPUT);
    ck_assert_int_eq(eval_parse_placement(s, "softmax=cpu", &dev, td, &e), DSE_EINPUT);
    free(s);
    /* fp16 everywhere: sqrt(3) x 2^-11 = 8.4573e-4; int8 weights and activations, no KV:
     * sqrt(2) x 4 / (127 sqrt(12)) = 1.2859e-2. */
    struct prec_cfg f = {P_FP16, P_FP16, P_FP16}, i8 = {P_INT8, P_INT8, P_INT8};
    ck_assert_near(prec_accuracy_proxy(&f, 1), sqrt(3.0) * ldexp(1, -11), 1e-12);
    ck_assert_near(prec_accuracy_proxy(&i8, 0), sqrt(2.0) * 4 / (127 * sqrt(12.0)), 1e-12);
}
END_TEST

Suite *make_sweep_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *t = tcase_create("sweep");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, grid_same_on_any_thread_count);
    tcase_add_test(t, batch_axis_past_256);
    tcase_add_test(t, layouts_same_on_any_thread_count);
    tcase_add_test(t, nsga2_reaches_the_exhaustive_front);
    tcase_add_test(t, random_is_seeded_and_distinct);
    tcase_add_test(t, spec_errors);
    tcase_add_test(t, spec_sizes);
    tcase_add_test(t, spec_labels_and_fields);
    tcase_add_test(t, eval_point_is_eval_key);
    tcase_add_test(t, missing_metric_reason);
    tcase_add_test(t, spec_from_buffer);
    tcase_add_test(t, placement_and_proxy);
    suite_add_tcase(s, t);
    return s;
}
