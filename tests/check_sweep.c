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

static void run_spec(const char *text, int threads, struct collect *c, struct sweep_spec *sp)
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
    struct sweep_sink k = {c, collect_rows, NULL, NULL, NULL};
    ck_assert_msg(sweep_run(p, threads, &k, &stopped, &e) == DSE_OK, "%s", e.msg);
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
    };
    for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++) {
        char text[sizeof SMALL + 64], path[600];
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
    tcase_add_test(t, nsga2_reaches_the_exhaustive_front);
    tcase_add_test(t, random_is_seeded_and_distinct);
    tcase_add_test(t, spec_errors);
    tcase_add_test(t, placement_and_proxy);
    suite_add_tcase(s, t);
    return s;
}
