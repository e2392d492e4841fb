/* kcu_run.c -- times a suite of GPU kernels (src/kern_cuda.h) and prints the measurements as the CSV
 * that `dse validate --import` reads. Built with ./configure --enable-cuda; run by validate/gpu/run.sh.
 *
 *   kcu_run [--check] [--warmup N] [--runs N] [--min-ms MS] [SUITE.json ...]
 *
 * A suite is {"name", "description", "kernels": [{"kernel", "precision", "shape": {...}}]} (the format of
 * validate/quick.json; kinds and shape keys as kern_cuda.h names them). --check first runs kcu_check
 * on small cases of every kind, precision and code path. Output on stdout: '#' comment lines (the GPU,
 * each check, each case that could not run) and one CSV line per case:
 *   kernel,shape,precision,measured_ms,device,note,p25_ms,p75_ms,runs
 * (shape as M=1;N=2;K=3, device empty, note = what ran). Kinds dse's suites do not know
 * (gemm_bias_gelu) are printed as comments, the same fields after "# not imported: ", so the file
 * imports as it is. Progress and achieved rates on stderr. Exit status: 0, 1 when a check failed or a
 * case failed other than by being skipped, 2 for a usage or input error, 3 when there is no GPU. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_cuda.h"

enum { EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_NOGPU = 3 };

struct opts {
    int check, warmup, runs;
    double min_ms;
};

/* Sets the case's shape from "K1=V1;K2=V2" (a shape as the CSV spells it). 0, or -1 with err set. */
static int parse_shape(struct kcu_case *c, const char *shape, char *err, size_t errn)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", shape);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '='), *end;
        if (!eq) {
            snprintf(err, errn, "shape '%s': expected KEY=VALUE", kv);
            return -1;
        }
        *eq = '\0';
        errno = 0;
        long long v = strtoll(eq + 1, &end, 10);
        if (errno || end == eq + 1 || *end || kcu_set_field(c, kv, v)) {
            snprintf(err, errn, "shape key '%s=%s': not an integer or not a %s key", kv, eq + 1, kcu_kind_names[c->kind]);
            return -1;
        }
    }
    return 0;
}

static void list_names(const char *const *names, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; names && names[i] && at < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "", names[i]);
}

/* One suite entry to a case; 0, or -1 with the reason in err. */
static int parse_case(const cJSON *o, struct kcu_case *c, char *err, size_t errn)
{
    char list[200];
    if (!cJSON_IsObject(o)) {
        snprintf(err, errn, "expected an object");
        return -1;
    }
    for (const cJSON *it = o->child; it; it = it->next)
        if (strcmp(it->string, "kernel") && strcmp(it->string, "precision") && strcmp(it->string, "shape") &&
            strcmp(it->string, "note")) {
            snprintf(err, errn, "unknown key '%s' (known: kernel, precision, shape, note)", it->string);
            return -1;
        }
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kernel"), *p = cJSON_GetObjectItemCaseSensitive(o, "precision"),
                *sh = cJSON_GetObjectItemCaseSensitive(o, "shape");
    int kind = cJSON_IsString(k) ? kcu_kind_from_name(k->valuestring) : -1;
    if (kind < 0) {
        list_names(kcu_kind_names, list, sizeof list);
        snprintf(err, errn, "kernel: expected one of %s", list);
        return -1;
    }
    int prec = p ? (cJSON_IsString(p) ? kcu_prec_from_name(p->valuestring) : -1) : 0;
    if (prec < 0) {
        list_names(kcu_prec_names, list, sizeof list);
        snprintf(err, errn, "precision: expected one of %s", list);
        return -1;
    }
    kcu_case_init(c, (enum kcu_kind)kind, (enum kcu_prec)prec);
    if (!cJSON_IsObject(sh)) {
        snprintf(err, errn, "shape: expected an object");
        return -1;
    }
    for (const cJSON *f = sh->child; f; f = f->next) {
        long long v;
        if (cJSON_IsBool(f))
            v = cJSON_IsTrue(f);
        else if (cJSON_IsNumber(f) && f->valuedouble == (double)(long long)f->valuedouble)
            v = (long long)f->valuedouble;
        else {
            snprintf(err, errn, "shape.%s: expected an integer", f->string);
            return -1;
        }
        if (kcu_set_field(c, f->string, v)) {
            list_names(kcu_fields(c->kind), list, sizeof list);
            snprintf(err, errn, "shape.%s: not a %s key (known: %s)", f->string, kcu_kind_names[kind], list);
            return -1;
        }
    }
    return kcu_validate(c, err, errn);
}

/* Reads a suite file into a malloc'd array of cases. 0, or EXIT_USAGE with a message on stderr. */
static int load_suite(const char *path, struct kcu_case **out, int *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "kcu_run: %s: %s\n", path, strerror(errno));
        return EXIT_USAGE;
    }
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 65536 > cap) {
            char *t = realloc(text, cap = 2 * cap + 65536);
            if (!t) {
                free(text);
                fclose(f);
                fprintf(stderr, "kcu_run: %s: out of memory\n", path);
                return EXIT_USAGE;
            }
            text = t;
        }
        got = fread(text + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    fclose(f);
    text[len] = '\0';
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    free(text);
    const cJSON *ks = root ? cJSON_GetObjectItemCaseSensitive(root, "kernels") : NULL;
    if (!cJSON_IsArray(ks) || cJSON_GetArraySize(ks) < 1) {
        fprintf(stderr, "kcu_run: %s: %s\n", path, root ? "expected {\"kernels\": [...]} with at least one case"
                                                        : "not valid JSON");
        cJSON_Delete(root);
        return EXIT_USAGE;
    }
    int m = cJSON_GetArraySize(ks), i = 0;
    struct kcu_case *c = calloc((size_t)m, sizeof *c);
    if (!c) {
        cJSON_Delete(root);
        fprintf(stderr, "kcu_run: %s: out of memory\n", path);
        return EXIT_USAGE;
    }
    for (const cJSON *it = ks->child; it; it = it->next, i++) {
        char err[512];
        if (parse_case(it, &c[i], err, sizeof err)) {
            fprintf(stderr, "kcu_run: %s: kernels[%d]: %s\n", path, i, err);
            free(c);
            cJSON_Delete(root);
            return EXIT_USAGE;
        }
    }
    cJSON_Delete(root);
    *out = c;
    *n = m;
    return 0;
}

/* Small cases covering every kind, precision and code path (vector and scalar tails, warp and block
 * rows, prefill and decode attention, grouped-query heads, every conv2d route). */
static const struct {
    const char *kind, *prec, *shape;
} checks[] = {
    {"gemm", "fp32", "M=33;N=70;K=90"},
    {"gemm", "tf32", "M=33;N=70;K=90"},
    {"gemm", "fp16", "M=33;N=70;K=90"},
    {"gemm", "bf16", "M=33;N=70;K=90"},
    {"gemm", "fp8", "M=32;N=64;K=80"},
    {"gemm", "int8", "M=33;N=64;K=80"},
    {"gemm", "fp16", "M=1;N=256;K=512"},
    {"gemm", "int8", "M=1;N=64;K=128"},
    {"gemm_bias_gelu", "fp16", "M=40;N=96;K=64"},
    {"gemm_bias_gelu", "bf16", "M=40;N=96;K=64"},
    {"add", "fp16", "n=100003"},
    {"add", "fp32", "n=100003"},
    {"gelu", "fp16", "n=100003"},
    {"gelu", "fp32", "n=100003"},
    {"silu", "fp16", "n=100003"},
    {"silu", "fp32", "n=100003"},
    {"copy", "fp32", "n=100003"},
    {"triad", "fp32", "n=100003"},
    {"softmax", "fp16", "rows=37;cols=1000"},
    {"softmax", "fp16", "rows=5;cols=5000"},
    {"softmax", "fp16", "rows=9;cols=77"},
    {"layernorm", "fp16", "rows=37;cols=1000"},
    {"layernorm", "fp16", "rows=3;cols=2050"},
    {"rmsnorm", "fp16", "rows=37;cols=1000"},
    {"rmsnorm", "fp16", "rows=5;cols=5000"},
    {"attention", "fp16", "B=2;H=4;Hkv=2;S=100;T=100;D=64;causal=1"},
    {"attention", "bf16", "B=2;H=4;Hkv=2;S=100;T=100;D=64;causal=0"},
    {"attention", "fp16", "B=1;H=4;Hkv=1;S=70;T=200;D=128;causal=1"},
    {"attention", "bf16", "B=1;H=2;Hkv=2;S=33;T=33;D=96;causal=1"},
    {"attention", "fp16", "B=1;H=2;Hkv=1;S=130;T=130;D=32;causal=1"},
    {"attention", "fp16", "B=2;H=8;Hkv=2;S=1;T=1000;D=128;causal=1"},
    {"attention", "bf16", "B=2;H=12;Hkv=2;S=3;T=300;D=64;causal=1"},
    {"attention", "fp16", "B=1;H=8;Hkv=8;S=1;T=77;D=96;causal=0"},
    {"conv2d", "fp16", "N=2;C=16;H=9;W=9;OC=32;KH=3;KW=3;stride=1;pad=1"},
    {"conv2d", "fp16", "N=1;C=3;H=32;W=32;OC=16;KH=7;KW=7;stride=2;pad=3"},
    {"conv2d", "fp16", "N=2;C=32;H=7;W=7;OC=16;KH=1;KW=1"},
    {"conv2d", "fp16", "N=1;C=8;H=8;W=8;OC=8;KH=1;KW=1;stride=2"},
    {"conv2d", "fp16", "N=2;C=24;H=15;W=15;OC=24;KH=3;KW=3;stride=2;pad=1;groups=24"},
    {"conv2d", "fp16", "N=1;C=16;H=8;W=8;OC=32;KH=3;KW=3;pad=1;groups=2"},
};

/* Runs every check; returns how many failed (a skip is not a failure). */
static int run_checks(void)
{
    int failed = 0, n = (int)(sizeof checks / sizeof checks[0]);
    for (int i = 0; i < n; i++) {
        struct kcu_case c;
        char err[512], shape[160];
        double e = 0, tol = 0;
        kcu_case_init(&c, (enum kcu_kind)kcu_kind_from_name(checks[i].kind),
                      (enum kcu_prec)kcu_prec_from_name(checks[i].prec));
        if (parse_shape(&c, checks[i].shape, err, sizeof err) || kcu_validate(&c, err, sizeof err)) {
            printf("# check %s %s %s: FAILED: bad check case: %s\n", checks[i].kind, checks[i].prec, checks[i].shape, err);
            failed++;
            continue;
        }
        kcu_shape(&c, shape, sizeof shape);
        int rc = kcu_check(&c, &e, &tol, err, sizeof err);
        if (rc == 0)
            printf("# check %s %s %s: ok, relative error %.3g (bound %.3g)\n", checks[i].kind, checks[i].prec, shape, e, tol);
        else if (rc == KCU_SKIP)
            printf("# check %s %s %s: skipped: %s\n", checks[i].kind, checks[i].prec, shape, err);
        else {
            printf("# check %s %s %s: FAILED: %s\n", checks[i].kind, checks[i].prec, shape, err);
            failed++;
        }
        fflush(stdout);
    }
    fprintf(stderr, "kcu_run: %d checks, %d failed\n", n, failed);
    return failed;
}

/* Commas would split the CSV field (dse's reader has no quoting). */
static void no_commas(char *s)
{
    for (; *s; s++)
        if (*s == ',')
            *s = ';';
}

/* Times the cases; returns how many failed (skips excluded). */
static int run_cases(const struct kcu_case *c, int n, const struct opts *o, int *done)
{
    int failed = 0;
    for (int i = 0; i < n; i++) {
        char shape[160], err[512];
        struct kcu_timing t;
        const char *kind = kcu_kind_names[c[i].kind], *prec = kcu_prec_names[c[i].prec];
        kcu_shape(&c[i], shape, sizeof shape);
        int rc = kcu_time(&c[i], o->warmup, o->runs, o->min_ms, &t, err, sizeof err);
        if (rc) {
            no_commas(err);
            printf("# %s %s %s %s: %s\n", rc == KCU_SKIP ? "skipped" : "failed", kind, shape, prec, err);
            fprintf(stderr, "[%d] %s %s %s: %s: %s\n", ++*done, kind, prec, shape, rc == KCU_SKIP ? "skipped" : "FAILED",
                    err);
            failed += rc != KCU_SKIP;
            continue;
        }
        no_commas(t.impl);
        /* gemm_bias_gelu: dse's suites have no such kernel, so the row is a comment (kept, not imported) */
        printf("%s%s,%s,%s,%.6g,,%s,%.6g,%.6g,%d\n", c[i].kind == KCU_GEMM_BIAS_GELU ? "# not imported: " : "", kind,
               shape, prec, t.median_ms, t.impl, t.p25_ms, t.p75_ms, t.runs);
        fflush(stdout);
        const double fl = kcu_flops(&c[i]), by = kcu_min_bytes(&c[i]);
        fprintf(stderr, "[%d] %s %s %s: %.4g ms (p25 %.4g, p75 %.4g, %d runs), %.1f TFLOP/s, %.0f GB/s, %s\n", ++*done,
                kind, prec, shape, t.median_ms, t.p25_ms, t.p75_ms, t.runs, fl / (t.median_ms * 1e9),
                by / (t.median_ms * 1e6), t.impl);
    }
    return failed;
}

static int usage(void)
{
    fprintf(stderr, "usage: kcu_run [--check] [--warmup N] [--runs N] [--min-ms MS] [SUITE.json ...]\n"
                    "  times each suite's cases on GPU 0 (CUDA_VISIBLE_DEVICES selects another) and prints CSV for\n"
                    "  dse validate --import; --check first compares small cases of every kernel with a host\n"
                    "  reference. Defaults: 5 warm-up runs, then at least 20 runs and 20 ms per case.\n");
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    struct opts o = {0, 5, 20, 20.0};
    int nsuite = 0, failed = 0, done = 0;
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (!strcmp(argv[i], "--check"))
            o.check = 1;
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc && (o.warmup = (int)strtol(argv[++i], &end, 10)) >= 0 && !*end)
            ;
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc && (o.runs = (int)strtol(argv[++i], &end, 10)) >= 1 && !*end)
            ;
        else if (!strcmp(argv[i], "--min-ms") && i + 1 < argc && (o.min_ms = strtod(argv[++i], &end)) >= 0 && !*end)
            ;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") || argv[i][0] == '-')
            return usage();
        else
            nsuite++;
    }
    if (!nsuite && !o.check)
        return usage();
    /* Every suite is read and checked before the GPU is touched. */
    struct kcu_case *cases[64];
    const char *names[64];
    int ncase[64], k = 0, rc = 0;
    if (nsuite > 64) {
        fprintf(stderr, "kcu_run: at most 64 suites\n");
        return EXIT_USAGE;
    }
    for (int i = 1; i < argc && !rc; i++) {
        if (argv[i][0] == '-') {
            i += strcmp(argv[i], "--check") != 0; /* skip the option's value */
            continue;
        }
        names[k] = argv[i];
        if (!(rc = load_suite(argv[i], &cases[k], &ncase[k])))
            k++;
    }
    struct kcu_info g;
    char err[512];
    if (!rc && kcu_probe(&g, err, sizeof err)) {
        fprintf(stderr, "kcu_run: %s\n", err);
        rc = EXIT_NOGPU;
    }
    if (rc) {
        while (k > 0)
            free(cases[--k]);
        return rc;
    }
    printf("# kcu_run: %s, compute capability %d.%d, %d SMs, %d MHz; memory %.0f GB/s (%d MHz x %d bits), L2 %.0f MiB, "
           "%.1f GB (%.1f GB free); driver %d.%d, runtime %d.%d\n",
           g.name, g.cc_major, g.cc_minor, g.sms, g.sm_clock_MHz, g.mem_GBps, g.mem_clock_MHz, g.bus_width_bits,
           g.l2_bytes / 1048576, g.total_bytes * 1e-9, g.free_bytes * 1e-9, g.driver_version / 1000,
           g.driver_version % 1000 / 10, g.runtime_version / 1000, g.runtime_version % 1000 / 10);
    printf("# timing: %d warm-up runs, then at least %d runs and %g ms; CUDA events around each run\n", o.warmup, o.runs,
           o.min_ms);
    fflush(stdout);
    if (o.check)
        failed += run_checks();
    if (k)
        printf("kernel,shape,precision,measured_ms,device,note,p25_ms,p75_ms,runs\n");
    for (int i = 0; i < k; i++) {
        printf("# suite %s: %d cases\n", names[i], ncase[i]);
        failed += run_cases(cases[i], ncase[i], &o, &done);
        free(cases[i]);
    }
    if (failed)
        fprintf(stderr, "kcu_run: %d failed\n", failed);
    return failed ? EXIT_FAILED : 0;
}
