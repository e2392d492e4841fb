/* cli_validate.c -- `dse validate` (measure native kernels, compare with the model's predictions,
 * store and plot the errors) and `dse calibrate` (fit the device's efficiencies and per-call overhead
 * on a training subset, report held-out error before and after, write a calibrated hwdesc). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <gsl/gsl_errno.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli.h"
#include "outfile.h"
#include "store.h"
#include "config.h"
#include "gitversion.h"
#include "jsonu.h"
#include "kern.h"
#include "plot.h"
#include "hostload.h"
#include "probe.h"
#include "validate.h"

static struct cli_opt validate_opts_proto[] = {
    {"hw", 1, "host hwdesc (default hwdesc/host.json; probed first when absent); with --published: the device to check", NULL},
    {"published", 0, "predict the published measurements of validate/published (each case's device, stack and "
                     "workload) and report their errors", NULL},
    {"corpus", 1, "with --published: a folder of corpus CSV files, or one file (default validate/published)", NULL},
    {"measured", 1, "predict a measured-kernel corpus: a source under validate/measured (vidur-mlp, xla-matmul, ...), "
                    "'all', or a kernels.csv; MAPE, within +-10 %/+-15 % and worst shapes per device, kernel class and "
                    "half (with --hw NAME: one device; --half; --plot FILE; --json)", NULL},
    {"cases-csv", 1, "with --measured: write every predicted row (case, hw, class, half, precision, shape, measured_ms, "
                     "predicted_ms, error_pct) to this CSV", NULL},
    {"serving", 0, "with --published: the serving corpus (CORPUS/serving/cases.csv: runs under load, each "
                   "simulated by dse serve)", NULL},
    {"multi-device", 0, "with --published: the multi-device corpus (CORPUS/multi-device/cases.csv: training steps and "
                        "multi-device inference, each case's layout)", NULL},
    {"power", 0, "with --published: the power corpus (CORPUS/power/*.csv: average power and energy per inference "
                 "or token measured on a device or system), predicted by the power model; MAPE per device and half", NULL},
    {"half", 1, "with --published or --measured: show the fit half only ('fit', for choosing model terms without seeing the "
                "held-out cases), the held-out half, or all (default)", NULL},
    {"software", 1, "with --published: one stack for every case, or 'default' for each device's own; with "
                    "--multi-device: the releases to fit (NAME@VERSION, comma-separated, one stack)", NULL},
    {"write-error-bars", 1, "with --published: write the held-out error bars per device class and workload kind "
                            "(JSON; dse eval reads validate/published/error-bars.json)", NULL},
    {"suite", 1, "kernel suite (default validate/full.json, or validate/quick.json with --quick)", NULL},
    CLI_OPT_SET,
    {"import", 1, "compare external measurements (suite JSON with measured_ms, CSV, or a dse --json result) instead of measuring", NULL},
    {"device", 1, "with --import: the hwdesc device of cases that name none (default: its first device)", NULL},
    {"quick", 0, "the quick suite and shorter timing (under 2 minutes on 2 cores)", NULL},
    {"threads", 1, "kernel threads (default: OpenMP's)", NULL},
    {"repeat", 1, "measure the suite N times (1-20, default 1); each kernel's time is the median of the passes, and the run-to-run noise is reported", NULL},
    {"fidelity", 1, "model tier to check: analytical (default) or cycle", NULL},
    {"db", 1, "SQLite database (default results/validate.db)", NULL},
    {"plot", 1, "predicted-vs-measured plot (default results/validate-SUITE.png; 'none' to skip)", NULL},
    {"precision-errors", 0, "print the measured output error of emulated precisions instead, and the published "
                            "quality table beside it", NULL},
    {"quality-table", 1, "with --precision-errors: the published quality table to print (default: validate/quality/"
                         "published-quality.csv; none: not printed)", NULL},
    {"json", 0, "print one JSON object", NULL},
    {"help", 0, "this help", NULL},
    {NULL, 0, NULL, NULL},
};

static struct cli_opt calibrate_opts_proto[] = {
    {"hw", 1, "host hwdesc to calibrate (default hwdesc/host.json); with --published: the device (hwdesc name)", NULL},
    {"published", 0, "fit the device's efficiencies to its fit half of validate/published, report the held-out "
                     "error, write the calibrated hwdesc", NULL},
    {"corpus", 1, "with --published: a folder of corpus CSV files, or one file (default validate/published)", NULL},
    {"multi-device", 0, "with --published: fit a software release's whole-run factors (efficiency.training, .prefill, "
                        ".decode of --software NAME@VERSION[,...]) to the fit half of the multi-device and "
                        "single-device cases that ran it, report each corpus's held-out error, write the stack file to "
                        "--out", NULL},
    {"serving", 0, "with --published: fit a release's runtime costs (runtime.per_step_us, per_request_us of "
                   "--software NAME@VERSION[,...]) to the fit half of the cases that ran it in the serving, "
                   "multi-device and single-device corpora, report each corpus's held-out error, write the stack "
                   "file to --out", NULL},
    {"terms", 1, "with --serving: the runtime costs to fit, comma-separated (per_step_us, per_request_us; default "
                 "both); the others keep the release's present values", NULL},
    {"power", 0, "with --published: fit the device's idle, active and engine power (power.idle_W, active_W, "
                 "matrix_W, vector_W) to its fit-half power_W cases of the power corpus, report the held-out error", NULL},
    {"software", 1, "with --published: one stack for every case, or 'default' for each device's own; with "
                    "--multi-device: the releases to fit (NAME@VERSION, comma-separated, one stack)", NULL},
    {"measured", 1, "fit an architecture's kernel terms (hwdesc/arch/NAME.json, shared by every board of the die) to "
                    "the fit half of measured-kernel sources (validate/measured: vidur-mlp,xla-matmul,...) run on --hw; "
                    "with --arch NAME and --out FILE", NULL},
    {"arch", 1, "with --measured: the architecture the terms are of (nvidia-gh100, nvidia-ga100, ...)", NULL},
    {"level", 1, "with --measured: fit a system's topology level NAME (efficiency, latency_us, base_latency_us) "
                 "instead: the innermost to the fit-half collective rows within one node, an outer one to the rows "
                 "spread over nodes; writes the system's hwdesc to --out", NULL},
    {"out", 1, "calibrated hwdesc (with --multi-device: stack file) to write (required)", NULL},
    {"suite", 1, "kernel suite (default validate/full.json, or validate/quick.json with --quick)", NULL},
    {"import", 1, "fit to external measurements instead of measuring", NULL},
    {"device", 1, "with --import: the hwdesc device to calibrate (default: its first device)", NULL},
    {"quick", 0, "the quick suite and shorter timing", NULL},
    {"threads", 1, "kernel threads (default: OpenMP's)", NULL},
    {"repeat", 1, "measure the suite N times (1-20, default 5: a noisy host calibrates badly from few passes); each kernel's time is the median of the passes", NULL},
    {"fidelity", 1, "model tier to calibrate: analytical (default) or cycle", NULL},
    {"force", 0, "write the calibrated hwdesc even when its held-out error is worse than before (else exit 1)", NULL},
    {"json", 0, "print one JSON object", NULL},
    {"help", 0, "this help", NULL},
    {NULL, 0, NULL, NULL},
};

/* The environment recorded with every measurement (nn-meter#83: predictions drift with frequency). */
static void environment(char *buf, size_t n, int threads)
{
    char model[160] = "unknown", gov[64] = "unknown", mhz[32] = "unknown", line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':');
        if (c && !strncmp(line, "model name", 10)) {
            dse_strlcpy(model, c + 2, sizeof model);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    }
    if (f)
        fclose(f);
    if ((f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "r"))) {
        if (fgets(gov, sizeof gov, f))
            gov[strcspn(gov, "\n")] = '\0';
        fclose(f);
    }
    if ((f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "r"))) {
        if (fgets(mhz, sizeof mhz, f))
            snprintf(mhz, sizeof mhz, "%.0f", atof(mhz) / 1000);
        fclose(f);
    }
    const char *bind = getenv("OMP_PROC_BIND"), *places = getenv("OMP_PLACES");
    snprintf(buf, n,
             "{\"cpu\":\"%s\",\"governor\":\"%s\",\"cur_MHz\":\"%s\",\"compiler\":\"%s\",\"optimized\":%d,"
             "\"threads\":%d,\"OMP_PROC_BIND\":\"%s\",\"OMP_PLACES\":\"%s\",\"dse\":\"%s\",\"git\":\"%s\"}",
             model, gov, mhz, __VERSION__,
#ifdef __OPTIMIZE__
             1,
#else
             0,
#endif
             threads, bind ? bind : "", places ? places : "", PACKAGE_VERSION, DSE_GIT_HASH);
}

struct stats {
    double mape, within10, within20;
    int n;
};

/* The error of time (energy = 0) or of energy (energy = 1: over the cases with a measured energy only;
 * n = 0 when none has one) over the cases idx[0..n) (idx NULL: the first n). */
static struct stats summarize_of(const struct vk *k, const int *idx, int n, int energy)
{
    struct stats s = {0, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        const struct vk *c = &k[idx ? idx[i] : i];
        if (energy && !(c->measured_mJ > 0))
            continue;
        double err = energy ? fabs(c->predicted_mJ / c->measured_mJ - 1) : fabs(c->predicted_ms / c->measured_ms - 1);
        s.mape += err;
        s.within10 += err <= 0.10;
        s.within20 += err <= 0.20;
        s.n++;
    }
    if (s.n) {
        s.mape = 100 * s.mape / s.n;
        s.within10 = 100 * s.within10 / s.n;
        s.within20 = 100 * s.within20 / s.n;
    }
    return s;
}

static struct stats summarize(const struct vk *k, const int *idx, int n) { return summarize_of(k, idx, n, 0); }

/* The fields of a case that validate and calibrate both report (and --import reads back): what ran
 * where, measured and predicted time and, where measured, energy. */
static void kernel_json(cJSON *x, const struct vk *k, const struct hw_system *sys)
{
    cJSON_AddStringToObject(x, "name", vk_kinds[k->type].name);
    cJSON_AddStringToObject(x, "shape", k->shape);
    cJSON_AddStringToObject(x, "precision", prec_names[k->prec]);
    cJSON_AddStringToObject(x, "device", sys->dev[k->dev].name);
    cJSON_AddNumberToObject(x, "measured_ms", k->measured_ms);
    cJSON_AddNumberToObject(x, "predicted_ms", k->predicted_ms);
    cJSON_AddNumberToObject(x, "error_pct", 100 * (k->predicted_ms / k->measured_ms - 1));
    if (k->measured_mJ > 0) {
        cJSON_AddNumberToObject(x, "measured_mJ", k->measured_mJ);
        cJSON_AddNumberToObject(x, "predicted_mJ", k->predicted_mJ);
        cJSON_AddNumberToObject(x, "energy_error_pct", 100 * (k->predicted_mJ / k->measured_mJ - 1));
    }
}

/* Loads the host hwdesc (probing first when asked for the default and it is absent) and picks the
 * device: its first CPU for native runs; with --import, --device or else its first device. */
static int host(const struct cli_opt *opts, struct hw_system *sys, int *dev, char *path, size_t pn, struct dse_err *e)
{
    const char *hw = cli_get(opts, "hw");
    struct stat st;
    if (!hw) {
        hw = "hwdesc/host.json";
        if (stat(hw, &st) != 0) {
            /* The full probe (about 20 s): a quick one's peaks and cache sizes vary run to run (fp32 FMA
             * 39 to 63 flops/cycle, L3 150 or 300 MiB on one 2-vCPU VM), and a calibration inherits them
             * (held-out 14-16.5 % against 9.7-14.7 % from full probes; validate/README.md). */
            int quick = cli_get(opts, "quick") != NULL;
            fprintf(stderr, "dse: %s not found: probing this host first (dse probe%s)\n", hw, quick ? " --quick" : "");
            char *argv[] = {"dse", "probe", "--out", "hwdesc/host.json", quick ? "--quick" : NULL, NULL};
            int rc = cmd_probe(quick ? 5 : 4, argv);
            if (rc)
                return dse_err_set(e, rc, NULL, NULL, "dse probe failed: run it by hand (dse probe) and retry");
        }
    }
    static const char *const ext[] = {".json", ".cfg", NULL};
    int rc = cli_resolve("--hw", "hwdesc", hw, ext, path, (unsigned)pn, e);
    if (!rc)
        rc = cli_load_hw_opts(opts, path, sys, e); /* validate's --set (calibrate has none: it writes the file) */
    if (rc)
        return rc;
    const char *want = cli_get(opts, "device");
    if (want && !cli_get(opts, "import"))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "--device applies to --import (native kernels run on this host's CPU)");
    if (cli_get(opts, "import")) {
        *dev = want ? hw_find_device(sys, want) : 0;
        return *dev >= 0 ? DSE_OK : dse_err_set(e, DSE_EINPUT, path, NULL, "--device: no device '%s'", want);
    }
    long long threads = 0;
    if (cli_get(opts, "threads") && (rc = cli_int("threads", cli_get(opts, "threads"), 1, 4096, &threads, e)))
        return rc;
    for (*dev = 0; *dev < sys->n_dev; (*dev)++)
        if (sys->dev[*dev].cls == HW_CPU) {
            /* predictions run on as many cores as the kernels: more threads than cores is not modelled */
            double cores = model_cpu_cores(&sys->dev[*dev]);
            if ((double)threads > cores)
                return dse_err_set(e, DSE_EINPUT, NULL, "--threads", "%lld: %s's cpu has %.0f cores", threads, path, cores);
            return DSE_OK;
        }
    return dse_err_set(e, DSE_EINPUT, path, NULL,
                       "no cpu device: the native kernels run on this host's CPU (use --import for measurements "
                       "taken on another device)");
}

/* What a measurement saw of its host: the load before and during it, the run-to-run noise of its
 * passes, the kernels whose timing spread stayed over the limit. */
struct measure_info {
    int measured; /* 0: imported */
    int n_skipped;                  /* kernels at a precision the device has no engine for */
    int skipped_by_prec[P_COUNT];   /* of which at each precision */
    struct hostload before, during;
    double noise_pct; /* -1 with one pass */
    int flagged, n;
};

/* A host whose measurements cannot be trusted as they are: busy before or during, or noisier than
 * the 10 % spread limit a kernel's own timing is held to. */
static int measure_noisy(const struct measure_info *mi)
{
    return mi->measured && (hostload_busy(&mi->before) || hostload_busy(&mi->during) || mi->noise_pct > 10 ||
                            (mi->n > 0 && 10 * mi->flagged >= mi->n));
}

/* One line per phase on stderr, whether or not it is a terminal (a log shows what ran, and when). */
static void phase(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void phase(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dse %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The result lines (text) and fields (JSON) that say what the host was doing, and which kernels of the
 * suite it could not run for want of an engine. */
static void skipped_text(const struct measure_info *mi, const char *dev, char *buf, size_t n)
{
    size_t at = (size_t)snprintf(buf, n, "skipped %d kernel%s at", mi->n_skipped, mi->n_skipped == 1 ? "" : "s");
    for (int p = 0; p < P_COUNT && at < n; p++)
        if (mi->skipped_by_prec[p])
            at += (size_t)snprintf(buf + at, n - at, " %s (%d)", prec_names[p], mi->skipped_by_prec[p]);
    if (at < n)
        snprintf(buf + at, n - at, ": '%s' has no engine for %s (dse probe records only the precisions this host "
                 "runs natively)", dev, mi->n_skipped == 1 ? "it" : "them");
}

static void measure_print(const struct measure_info *mi, const char *dev)
{
    if (mi->n_skipped) {
        char buf[400];
        skipped_text(mi, dev, buf, sizeof buf);
        printf("%s\n", buf);
    }
    if (!mi->measured)
        return;
    char a[160], b[160];
    hostload_format(&mi->before, a, sizeof a);
    hostload_format(&mi->during, b, sizeof b);
    printf("host load before measuring: %s\nhost load while measuring: %s\n", a, b);
    if (measure_noisy(mi))
        printf("WARNING: the host was busy or noisy (steal >= %.0f %% or other load >= %.0f %%, run-to-run noise over 10 %%,\n"
               "or a tenth of the kernels flagged): these figures carry that noise; measure on an idle host\n",
               HOSTLOAD_STEAL_PCT, HOSTLOAD_OTHER_PCT);
}

static void load_json(cJSON *o, const char *key, const struct hostload *l)
{
    if (!l->ok)
        return;
    cJSON *x = cJSON_AddObjectToObject(o, key);
    cJSON_AddNumberToObject(x, "steal_pct", l->steal_pct);
    cJSON_AddNumberToObject(x, "other_pct", l->other_pct);
    cJSON_AddNumberToObject(x, "cpus", l->cpus);
    cJSON_AddNumberToObject(x, "seconds", l->seconds);
}

static void measure_json(cJSON *o, const struct measure_info *mi)
{
    cJSON *sk = cJSON_AddObjectToObject(o, "skipped_kernels"); /* precision -> count */
    for (int p = 0; p < P_COUNT; p++)
        if (mi->skipped_by_prec[p])
            cJSON_AddNumberToObject(sk, prec_names[p], mi->skipped_by_prec[p]);
    if (!mi->measured)
        return;
    load_json(o, "host_load_before", &mi->before);
    load_json(o, "host_load_during", &mi->during);
    cJSON_AddNumberToObject(o, "flagged_kernels", mi->flagged);
    cJSON_AddBoolToObject(o, "host_noisy", measure_noisy(mi));
}

/* Measures (or takes imported times for) every case and predicts it. With --repeat N the whole suite
 * is measured N times (passes apart in time sample a host whose speed drifts), each case's time is
 * the median of its passes, and the noise is the mean over cases and passes of |pass / median - 1|:
 * the error a perfect model would still show against one pass (-1 with one pass). The host's load is
 * sampled for half a second before measuring (a warning when busy) and over the measurement. */
static int run_suite(const struct cli_opt *opts, struct vsuite *s, struct wl_graph **graphs, const struct hw_system *sys,
                     int dev, enum fidelity f, int threads, const char *cmd, int default_passes,
                     struct measure_info *mi, struct dse_err *e)
{
    int quick = cli_get(opts, "quick") != NULL, rc = DSE_OK, imported = cli_get(opts, "import") != NULL;
    int tty = isatty(STDERR_FILENO);
    long long passes = default_passes;
    memset(mi, 0, sizeof *mi);
    mi->noise_pct = -1;
    if (cli_get(opts, "repeat") && (rc = cli_int("repeat", cli_get(opts, "repeat"), 1, 20, &passes, e)))
        return rc;
    if (imported)
        passes = 1;
    const char *suite = imported               ? cli_get(opts, "import")
                        : cli_get(opts, "suite") ? cli_get(opts, "suite")
                        : quick                  ? "validate/quick.json"
                                                 : "validate/full.json";
    char path[1024];
    static const char *const ext[] = {".json", NULL};
    if ((rc = cli_resolve("--suite", "validate", suite, ext, path, sizeof path, e)) || (rc = vsuite_load(path, s, e)))
        return rc;
    *graphs = calloc((size_t)s->n, sizeof **graphs);
    double *t = malloc(sizeof *t * (size_t)(s->n > 0 ? s->n : 1) * (size_t)passes);
    if (!*graphs || !t) {
        free(t);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    for (int i = 0; i < s->n && !rc; i++) { /* each case's device, before anything is measured */
        struct vk *k = &s->k[i];
        k->dev = k->device[0] ? hw_find_device(sys, k->device) : dev;
        k->predicted_mJ = -1;
        if (imported && k->measured_ms <= 0)
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "case %d (%s %s) has no measured_ms to import", i,
                             vk_kinds[k->type].name, k->shape);
        else if (k->dev < 0)
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "case %d (%s %s): no device '%s' in %s", i, vk_kinds[k->type].name,
                             k->shape, k->device, sys->name);
        else if (!imported && k->dev != dev)
            rc = dse_err_set(e, DSE_EINPUT, path, NULL,
                             "case %d (%s %s): runs on this host's CPU, not on '%s' (use --import for measurements "
                             "taken there)",
                             i, vk_kinds[k->type].name, k->shape, k->device);
    }
    /* Kernels at a precision the device has no engine for (an AVX2 host without bf16 instructions, say)
     * cannot be predicted: skipped before anything is measured, counted, and reported. */
    int kept = 0;
    for (int i = 0; i < s->n && !rc; i++) {
        struct vk *k = &s->k[i];
        if ((rc = vk_graph(k, &(*graphs)[i], e))) {
            wl_graph_free(&(*graphs)[i]);
            break;
        }
        if (!vk_supported(k, &(*graphs)[i], &sys->dev[k->dev])) {
            mi->n_skipped++;
            mi->skipped_by_prec[k->prec]++;
            wl_graph_free(&(*graphs)[i]);
            continue;
        }
        s->k[kept] = *k;
        (*graphs)[kept++] = (*graphs)[i];
    }
    s->n = kept; /* the graphs beyond are freed or moved */
    if (!rc) {
        if (mi->n_skipped) {
            char buf[400];
            skipped_text(mi, sys->dev[dev].name, buf, sizeof buf);
            phase(cmd, "%s", buf);
        }
        if (!kept)
            rc = dse_err_set(e, DSE_EINPUT, path, NULL, "no kernel of the suite can be predicted on '%s' (%d skipped: "
                             "no engine for their precisions)", sys->dev[dev].name, mi->n_skipped);
    }
    struct hostload_mark m0, m1;
    if (!imported && !rc) {
        char buf[160];
        mi->measured = 1;
        hostload_sample(0.5, &mi->before);
        hostload_format(&mi->before, buf, sizeof buf);
        phase(cmd, "host load before measuring: %s%s", buf,
              hostload_busy(&mi->before) ? " (busy: the measurements will carry its noise; an idle host is better)" : "");
        phase(cmd, "measuring %d kernels of %s, %lld pass%s, %d threads", s->n, s->name, passes, passes > 1 ? "es" : "",
              threads > 0 ? threads :
#ifdef _OPENMP
                          omp_get_max_threads()
#else
                          1
#endif
        );
        hostload_mark(&m0);
    }
    for (int p = 0; p < passes && !imported && !rc; p++) {
        double t0 = now_s();
        int flagged = 0;
        for (int i = 0; i < s->n && !rc; i++) {
            struct vk *k = &s->k[i];
            if (tty)
                fprintf(stderr, "\r[%d/%d]%s %-10s %-40.40s", i + 1, s->n, passes > 1 ? " " : "", vk_kinds[k->type].name,
                        k->shape);
            if (tty && passes > 1)
                fprintf(stderr, " pass %d/%lld", p + 1, passes);
            rc = vk_measure(k, quick ? 3 : 5, quick ? 20 : 100, threads, e);
            flagged += k->flagged;
            t[(size_t)i * (size_t)passes + (size_t)p] = k->measured_ms;
        }
        if (tty)
            fprintf(stderr, "\r%100s\r", "");
        if (!rc)
            phase(cmd, "pass %d/%lld measured in %.1f s (%d kernel%s with a timing spread over 10 %%)", p + 1, passes,
                  now_s() - t0, flagged, flagged == 1 ? "" : "s");
    }
    if (mi->measured && !rc) {
        char buf[160];
        hostload_mark(&m1);
        hostload_between(&m0, &m1, &mi->during);
        hostload_format(&mi->during, buf, sizeof buf);
        phase(cmd, "host load while measuring: %s", buf);
        for (int i = 0; i < s->n; i++)
            mi->flagged += s->k[i].flagged;
        mi->n = s->n;
    }
    if (!rc && passes > 1) {
        double dev_sum = 0;
        for (int i = 0; i < s->n; i++) {
            double *ti = t + (size_t)i * (size_t)passes, sorted[20];
            memcpy(sorted, ti, sizeof *ti * (size_t)passes);
            double med = vk_median(sorted, (int)passes);
            for (int p = 0; p < passes; p++)
                dev_sum += fabs(ti[p] / med - 1);
            s->k[i].measured_ms = med;
        }
        mi->noise_pct = s->n > 0 ? 100 * dev_sum / ((double)s->n * (double)passes) : 0;
    }
    free(t);
    for (int i = 0; i < s->n && !rc; i++) {
        struct vk *k = &s->k[i];
        rc = vk_predict(k, &(*graphs)[i], sys, k->dev, f, imported ? 0 : threads, &k->predicted_ms, &k->predicted_mJ, e);
    }
    return rc;
}

/* The run's results into db's validation tables (store.c; docs/sweep-db.md). */
static int store(const char *db, const char *hw, const struct hw_system *devices, const struct vsuite *s,
                 enum fidelity f, const char *env, const struct stats *st, struct dse_err *e)
{
    struct store_vcase *c = calloc((size_t)(s->n > 0 ? s->n : 1), sizeof *c);
    if (!c)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (int i = 0; i < s->n; i++) {
        const struct vk *k = &s->k[i];
        c[i] = (struct store_vcase){vk_kinds[k->type].name, k->shape, prec_names[k->prec], devices->dev[k->dev].name,
                                    k->measured_ms, k->predicted_ms, k->spread_pct, k->measured_mJ, k->predicted_mJ,
                                    k->runs, k->flagged};
    }
    struct store_vrun r = {hw, s->name, fidelity_names[f], env, s->n, st->mape, st->within10, st->within20};
    int rc = store_validation(db, &r, c, s->n, e);
    free(c);
    return rc;
}

static int by_error_desc(const void *a, const void *b, const struct vk *k)
{
    double x = fabs(k[*(const int *)a].predicted_ms / k[*(const int *)a].measured_ms - 1);
    double y = fabs(k[*(const int *)b].predicted_ms / k[*(const int *)b].measured_ms - 1);
    return x < y ? 1 : x > y ? -1 : *(const int *)a - *(const int *)b;
}

/* Sorts idx by decreasing error (insertion sort: suites are small). */
static void worst_first(const struct vk *k, int *idx, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && by_error_desc(&idx[j - 1], &idx[j], k) > 0; j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
}

/* The published quality deltas beside the measured errors: what quality_loss_pct is built from. */
static void print_quality_table(const struct ql_table *t)
{
    printf("\npublished quality deltas (%s; quality_loss_pct of docs/models.md: %% of the 16-bit baseline's figure "
           "lost, positive worse)\n\n%-36s %-13s %8s %-22s %-13s %9s  %s\n",
           t->path, "id", "family", "params_B", "precision", "metric", "loss_pct", "method");
    for (int i = 0; i < t->n; i++) {
        const struct ql_row *r = &t->row[i];
        char pf[64];
        prec_format(&r->prec, pf, sizeof pf);
        printf("%-36s %-13s %8g %-22s %-13s %9.2f  %s\n", r->id, t->fam[r->fam].name, r->params_B, pf,
               ql_metrics[r->metric].name, r->loss_pct, r->method);
    }
}

static int precision_errors(int json)
{
    static const enum prec ps[] = {P_FP32, P_BF16, P_FP16, P_FP8, P_INT8, P_INT4};
    int np = (int)(sizeof ps / sizeof ps[0]);
    cJSON *o = json ? cJSON_CreateArray() : NULL;
    if (!json)
        printf("relative output error (Frobenius) of a 256x256x256 GEMM with emulated weight (rows) and activation\n"
               "(columns) precisions against an fp64 reference; Gaussian data, weights scaled 1/sqrt(K), seed 1\n\n%8s",
               "w \\ a");
    for (int j = 0; !json && j < np; j++)
        printf(" %10s", prec_names[ps[j]]);
    if (!json)
        printf("\n");
    for (int i = 0; i < np; i++) {
        if (!json)
            printf("%8s", prec_names[ps[i]]);
        for (int j = 0; j < np; j++) {
            double err = kern_gemm_rel_error(ps[i], ps[j], 256, 256, 256, 1);
            if (json) {
                cJSON *x = cJSON_CreateObject();
                cJSON_AddStringToObject(x, "weights", prec_names[ps[i]]);
                cJSON_AddStringToObject(x, "activations", prec_names[ps[j]]);
                cJSON_AddNumberToObject(x, "rel_error", err);
                cJSON_AddItemToArray(o, x);
            } else {
                printf(" %10.3g", err);
            }
        }
        if (!json)
            printf("\n");
    }
    if (json) {
        char *s = ju_print(o, 1);
        if (s)
            puts(s);
        free(s);
        cJSON_Delete(o);
    }
    return 0;
}

static int common_opts(const struct cli_opt *opts, int *threads, enum fidelity *f, struct dse_err *e)
{
    long long t = 0;
    *threads = 0;
    *f = FID_ANALYTICAL;
    if (cli_get(opts, "threads")) {
        int rc = cli_int("threads", cli_get(opts, "threads"), 1, 4096, &t, e);
        if (rc)
            return rc;
        *threads = (int)t;
    }
    if (cli_get(opts, "fidelity"))
        return cli_fidelity(cli_get(opts, "fidelity"), f, e);
    return DSE_OK;
}

static int used_threads(int threads)
{
#ifdef _OPENMP
    return threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
    return 1;
#endif
}

int cmd_validate(int argc, char **argv)
{
    struct cli_opt opts[sizeof validate_opts_proto / sizeof validate_opts_proto[0]];
    memcpy(opts, validate_opts_proto, sizeof opts);
    struct dse_err e;
    const char *pos[1];
    int npos, rc, dev = 0, threads;
    struct measure_info mi;
    enum fidelity f;
    struct hw_system *sys = malloc(sizeof *sys);
    struct vsuite s;
    struct wl_graph *graphs = NULL;
    char hwpath[1024];
    memset(&s, 0, sizeof s);
    dse_err_clear(&e);
    if (!sys)
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    if ((rc = cli_parse(argc, argv, 2, opts, pos, 0, &npos, "validate", &e)) || (rc = common_opts(opts, &threads, &f, &e)))
        goto out;
    if (cli_get(opts, "help")) {
        printf("usage: dse validate [options]\n\nRuns the native kernels of a suite (validate/*.json) on this host, predicts each\n"
               "with the host's hwdesc, and reports measured vs predicted: error per kernel, MAPE, the share within\n"
               "+-10 %% and +-20 %%, the worst cases; stores everything in SQLite and plots predicted vs measured.\n\n"
               "options:\n");
        cli_print_options(validate_opts_proto);
        free(sys);
        return 0;
    }
    if (cli_get(opts, "precision-errors")) {
        free(sys);
        struct ql_table qt;
        if ((rc = cli_quality_table(opts, NULL, &qt, &e))) {
            dse_err_print(stderr, &e);
            return rc;
        }
        rc = precision_errors(cli_get(opts, "json") != NULL);
        if (!rc && qt.n && !cli_get(opts, "json"))
            print_quality_table(&qt);
        ql_free(&qt);
        return rc;
    }
    if (cli_get(opts, "quality-table")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "validate: --quality-table goes with --precision-errors");
        goto out;
    }
    if (cli_get(opts, "published")) {
        free(sys);
        return cli_validate_published(opts);
    }
    if (cli_get(opts, "measured")) {
        free(sys);
        return cli_validate_measured(opts);
    }
    if (cli_get(opts, "corpus") || cli_get(opts, "software") || cli_get(opts, "write-error-bars") || cli_get(opts, "half")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "validate: --corpus, --software and --write-error-bars go with --published");
        goto out;
    }
    int json = cli_get(opts, "json") != NULL;
    if ((rc = host(opts, sys, &dev, hwpath, sizeof hwpath, &e)) ||
        (rc = run_suite(opts, &s, &graphs, sys, dev, f, threads, "validate", 1, &mi, &e)))
        goto out;
    struct stats st = summarize(s.k, NULL, s.n), en = summarize_of(s.k, NULL, s.n, 1);
    char env[1024];
    environment(env, sizeof env, used_threads(threads));
    const char *db = cli_get(opts, "db") ? cli_get(opts, "db") : "results/validate.db";
    if (!cli_get(opts, "db"))
        mkdir("results", 0777);
    if ((rc = store(db, hwpath, sys, &s, f, env, &st, &e)))
        goto out;
    char plot_path[600] = "";
    const char *pl = cli_get(opts, "plot");
    if (!pl || strcmp(pl, "none")) {
        if (pl)
            snprintf(plot_path, sizeof plot_path, "%s", pl);
        else
            snprintf(plot_path, sizeof plot_path, "results/validate-%.*s.png", (int)strcspn(s.name, "."), s.name);
        double *m = malloc(sizeof *m * (size_t)s.n), *p = malloc(sizeof *p * (size_t)s.n);
        struct dse_err pe;
        char title[200];
        snprintf(title, sizeof title, "dse validate: %s on %s (%s tier): MAPE %.1f%%, %.0f%% within +-10%%", s.name,
                 sys->name, fidelity_names[f], st.mape, st.within10);
        for (int i = 0; m && p && i < s.n; i++) {
            m[i] = s.k[i].measured_ms;
            p[i] = s.k[i].predicted_ms;
        }
        if (!m || !p || plot_pred_vs_meas(m, p, s.n, title, plot_path, &pe)) {
            fprintf(stderr, "dse: plot not written: %s\n", m && p ? pe.msg : "out of memory");
            plot_path[0] = '\0';
        }
        free(m);
        free(p);
    }
    int *idx = malloc(sizeof *idx * (size_t)s.n);
    for (int i = 0; idx && i < s.n; i++)
        idx[i] = i;
    if (idx)
        worst_first(s.k, idx, s.n);
    if (json) {
        cJSON *o = cJSON_CreateObject(), *arr;
        cJSON_AddStringToObject(o, "hw", hwpath);
        if (cli_get(opts, "set"))
            cJSON_AddStringToObject(o, "what_if", cli_get(opts, "set"));
        cJSON_AddStringToObject(o, "suite", s.name);
        cJSON_AddStringToObject(o, "fidelity", fidelity_names[f]);
        cJSON_AddNumberToObject(o, "n_kernels", s.n);
        cJSON_AddNumberToObject(o, "mape_pct", st.mape);
        cJSON_AddNumberToObject(o, "within10_pct", st.within10);
        cJSON_AddNumberToObject(o, "within20_pct", st.within20);
        if (mi.noise_pct >= 0)
            cJSON_AddNumberToObject(o, "noise_pct", mi.noise_pct);
        measure_json(o, &mi);
        if (en.n) {
            cJSON_AddNumberToObject(o, "n_energy", en.n);
            cJSON_AddNumberToObject(o, "energy_mape_pct", en.mape);
        }
        cJSON_AddItemToObject(o, "environment", cJSON_Parse(env));
        arr = cJSON_AddArrayToObject(o, "kernels");
        for (int i = 0; i < s.n; i++) {
            const struct vk *k = &s.k[i];
            cJSON *x = cJSON_CreateObject();
            kernel_json(x, k, sys);
            cJSON_AddNumberToObject(x, "spread_pct", k->spread_pct);
            double gf = vk_gflops(k, &graphs[i]), pk = vk_peak_gflops(k, &graphs[i], &sys->dev[k->dev]);
            cJSON_AddNumberToObject(x, "gflops", gf);
            if (pk > 0)
                cJSON_AddNumberToObject(x, "peak_pct", 100 * gf / pk);
            cJSON_AddBoolToObject(x, "flagged", k->flagged);
            cJSON_AddItemToArray(arr, x);
        }
        cli_print_json(o);
    } else {
        printf("dse validate: suite %s, %d kernels on %s (%s), %s tier, %d threads\n", s.name, s.n, sys->name,
               hwpath, fidelity_names[f], used_threads(threads));
        cli_print_whatif(opts);
        printf("\n");
        printf("%-10s %-48s %-5s %12s %12s %9s %8s %9s %6s\n", "kernel", "shape", "prec", "measured_ms",
               "predicted_ms", "error", "spread", "GFLOP/s", "%peak");
        for (int i = 0; i < s.n; i++) {
            const struct vk *k = &s.k[i];
            double gf = vk_gflops(k, &graphs[i]), pk = vk_peak_gflops(k, &graphs[i], &sys->dev[k->dev]);
            printf("%-10s %-48.48s %-5s %12.5g %12.5g %8.1f%% %7.1f%% %9.1f %5.0f%%%s\n", vk_kinds[k->type].name, k->shape,
                   prec_names[k->prec], k->measured_ms, k->predicted_ms, 100 * (k->predicted_ms / k->measured_ms - 1),
                   k->spread_pct, gf, pk > 0 ? 100 * gf / pk : 0, k->flagged ? " (noisy)" : "");
        }
        printf("\nMAPE %.1f%%; %.0f%% of kernels within +-10%%, %.0f%% within +-20%%\n", st.mape, st.within10,
               st.within20);
        if (en.n) {
            printf("\nenergy of one run, where measured:\n%-10s %-48s %12s %12s %9s\n", "kernel", "shape",
                   "measured_mJ", "predicted_mJ", "error");
            for (int i = 0; i < s.n; i++)
                if (s.k[i].measured_mJ > 0)
                    printf("%-10s %-48.48s %12.5g %12.5g %8.1f%%\n", vk_kinds[s.k[i].type].name, s.k[i].shape,
                           s.k[i].measured_mJ, s.k[i].predicted_mJ, 100 * (s.k[i].predicted_mJ / s.k[i].measured_mJ - 1));
            printf("energy MAPE %.1f%% over %d kernels\n", en.mape, en.n);
        }
        if (mi.noise_pct >= 0)
            printf("run-to-run noise %.1f%% (mean |pass / median - 1| over %s passes): a model that predicted the\n"
                   "median exactly would show about this error against any one pass\n",
                   mi.noise_pct, cli_get(opts, "repeat") ? cli_get(opts, "repeat") : "1");
        measure_print(&mi, sys->dev[dev].name);
        printf("worst:");
        for (int i = 0; idx && i < 3 && i < s.n; i++)
            printf(" %s %s (%+.0f%%)%s", vk_kinds[s.k[idx[i]].type].name, s.k[idx[i]].shape,
                   100 * (s.k[idx[i]].predicted_ms / s.k[idx[i]].measured_ms - 1), i < 2 && i + 1 < s.n ? ";" : "");
        printf("\nstored in %s%s%s\n", db, plot_path[0] ? "; plot: " : "", plot_path);
    }
    free(idx);
out:
    if (rc)
        dse_err_print(stderr, &e);
    for (int i = 0; graphs && i < s.n; i++)
        wl_graph_free(&graphs[i]);
    free(graphs);
    vsuite_free(&s);
    free(sys);
    return rc;
}

/* Writes the calibrated hwdesc: the original JSON with the device's efficiency and overhead set. */
static int write_calibrated(const char *in, const char *out, const char *devname, const char *const *levels,
                            const struct calib *c, const char *suite, int n_train, int n_held, double before,
                            double after, double cv_mape, int forced, struct dse_err *e)
{
    cJSON *root, *d;
    int rc = cli_hwdesc_device(in, devname, &root, &d, e);
    if (rc)
        return rc;
    char today[16], src[512];
    cli_today(today, sizeof today);
    snprintf(src, sizeof src,
             "fitted by dse calibrate %s on %d kernels of suite %s (GSL nonlinear least squares on log time); "
             "held-out MAPE on %d kernels: %.1f%% before, %.1f%% after; 3-fold cross-validated MAPE %.1f%% "
             "(heldout_mape_pct)%s",
             today, n_train, suite, n_held, before, after, cv_mape,
             forced ? " (written with --force: worse than the uncalibrated model)" : "");
    cJSON *ef = cJSON_CreateObject(), *pc, *pl;
    cJSON_AddNumberToObject(ef, "compute", c->fit_class[EC_MATMUL] ? c->eff_class[EC_MATMUL] : 1);
    cJSON_AddNumberToObject(ef, "vector", c->fit_class[EC_ELTWISE] ? c->eff_class[EC_ELTWISE] : 1);
    cJSON_AddNumberToObject(ef, "memory", c->n_levels ? c->eff_level[c->n_levels - 1] : 1);
    pc = cJSON_AddObjectToObject(ef, "per_class");
    for (int k = 0; k < EC_COUNT; k++)
        if (c->fit_class[k])
            cJSON_AddNumberToObject(pc, hw_eff_class_names[k], c->eff_class[k]);
    pl = cJSON_AddObjectToObject(ef, "per_level");
    for (int l = 0; l < c->n_levels; l++)
        cJSON_AddNumberToObject(pl, levels[l], c->eff_level[l]);
    cJSON_AddNumberToObject(ef, "serial_fraction", c->serial_fraction);
    cJSON_AddNumberToObject(ef, "heldout_mape_pct", cv_mape); /* the expected error dse eval shows: the
                                                                    cross-validated one, not fold 3's alone */
    cJSON_AddStringToObject(ef, "source", src);
    cJSON *ov = cJSON_CreateObject();
    cJSON_AddNumberToObject(ov, "per_op_us", c->per_op_s * 1e6);
    if (c->fit_fork)
        cJSON_AddNumberToObject(ov, "fork_join_us", c->fork_join_s * 1e6);
    if (c->fit_group)
        cJSON_AddNumberToObject(ov, "per_group_us", c->per_group_s * 1e6);
    if (c->fit_pack) {
        cJSON_AddNumberToObject(ov, "pack_left_Gelem_per_s", c->pack_elem_per_s[0] * 1e-9);
        cJSON_AddNumberToObject(ov, "pack_right_Gelem_per_s", c->pack_elem_per_s[1] * 1e-9);
        cJSON_AddNumberToObject(ov, "gemm_setup_us", c->gemm_setup_s * 1e6);
    }
    cJSON_AddStringToObject(ov, "source", src);
    cJSON_DeleteItemFromObjectCaseSensitive(d, "efficiency");
    cJSON_DeleteItemFromObjectCaseSensitive(d, "overhead");
    cJSON_AddItemToObject(d, "efficiency", ef);
    cJSON_AddItemToObject(d, "overhead", ov);
    return cli_write_json(root, out, 1, e);
}

/* Every third kernel is held out: a deterministic split that spans every kernel family. The hwdesc
 * written is fitted with fold 2 held out (i % 3 == 2); folds 0 and 1 are fitted too, for a 3-fold
 * cross-validated error: fold 2 guided which model terms were kept (validate/README.md), so its own
 * held-out error is the most optimistic of the three. */
#define CV_FOLDS 3
static int in_fold(int i, int fold) { return i % CV_FOLDS == fold; }
static int heldout(int i) { return in_fold(i, 2); }

/* Fits with fold `fold` held out and returns its held-out stats (predictions into a scratch array,
 * leaving the cases untouched). */
static int cv_fold(const struct hw_system *sys, int dev, struct vsuite *s, const struct wl_graph *graphs, int fold,
                   enum fidelity f, int threads, struct stats *out, struct dse_err *e)
{
    int *train = malloc(sizeof *train * (size_t)s->n), *held = malloc(sizeof *held * (size_t)s->n), nt = 0, nh = 0;
    double *keep = malloc(sizeof *keep * (size_t)s->n);
    struct hw_system *cal = malloc(sizeof *cal);
    int rc = DSE_OK;
    if (!train || !held || !keep || !cal) {
        rc = dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < s->n; i++) {
        if (in_fold(i, fold))
            held[nh++] = i;
        else
            train[nt++] = i;
        keep[i] = s->k[i].predicted_ms;
    }
    struct calib c;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    rc = calib_fit(sys, dev, s->k, graphs, train, nt, f, threads, &c, e);
    gsl_set_error_handler(old);
    if (rc)
        goto out;
    *cal = *sys;
    calib_apply(&cal->dev[dev], &c);
    for (int i = 0; i < nh && !rc; i++)
        rc = vk_predict(&s->k[held[i]], &graphs[held[i]], cal, dev, f, threads, &s->k[held[i]].predicted_ms, NULL, e);
    if (!rc)
        *out = summarize(s->k, held, nh);
    for (int i = 0; i < s->n; i++)
        s->k[i].predicted_ms = keep[i];
out:
    free(train);
    free(held);
    free(keep);
    free(cal);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    struct cli_opt opts[sizeof calibrate_opts_proto / sizeof calibrate_opts_proto[0]];
    memcpy(opts, calibrate_opts_proto, sizeof opts);
    struct dse_err e;
    const char *pos[1];
    int npos, rc, dev = 0, threads;
    struct measure_info mi;
    enum fidelity f;
    struct hw_system *sys = malloc(sizeof *sys), *cal = malloc(sizeof *cal);
    struct vsuite s;
    struct wl_graph *graphs = NULL;
    int *train = NULL, *held = NULL;
    double *before = NULL;
    char hwpath[1024];
    memset(&s, 0, sizeof s);
    dse_err_clear(&e);
    if (!sys || !cal) {
        free(sys);
        free(cal);
        return fprintf(stderr, "dse: out of memory\n"), DSE_ERUNTIME;
    }
    if ((rc = cli_parse(argc, argv, 2, opts, pos, 0, &npos, "calibrate", &e)) ||
        (rc = common_opts(opts, &threads, &f, &e)))
        goto out;
    if (cli_get(opts, "help")) {
        printf("usage: dse calibrate --out CAL.json [options]\n\nMeasures a kernel suite (or imports measurements "
               "with --import), fits the device's efficiencies (per\noperator class and memory level), the overlap "
               "of compute and memory, the per-call overhead and, on a\nCPU, the GEMM packing rates and set-up, "
               "fork/join and per-group costs to two thirds of the kernels\n(GSL nonlinear least squares), reports "
               "the error on the held-out third before and after, and\nwrites the calibrated hwdesc "
               "(docs/models.md).\n\noptions:\n");
        cli_print_options(calibrate_opts_proto);
        goto out;
    }
    if (cli_get(opts, "published")) {
        free(sys);
        free(cal);
        return cli_calibrate_published(opts);
    }
    if (cli_get(opts, "measured")) {
        free(sys);
        free(cal);
        return cli_calibrate_measured(opts);
    }
    if (!cli_get(opts, "out")) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, NULL, "calibrate: --out CAL.json is required (see dse help calibrate)");
        goto out;
    }
    int json = cli_get(opts, "json") != NULL;
    if ((rc = host(opts, sys, &dev, hwpath, sizeof hwpath, &e)))
        goto out;
    const char *inputs[] = {hwpath, cli_get(opts, "import"), cli_get(opts, "suite")},
               *what[] = {"the hwdesc being calibrated", "the imported measurements", "the kernel suite"};
    if ((rc = out_file_not_input(cli_get(opts, "out"), "--out", inputs, what, 3, 0, &e)) ||
        (rc = run_suite(opts, &s, &graphs, sys, dev, f, threads, "calibrate", 5, &mi, &e)))
        goto out;
    if (cli_get(opts, "import"))
        threads = 0; /* measured elsewhere: on all the cores of its device */
    for (int i = 0; i < s.n; i++)
        if (s.k[i].dev != dev) {
            rc = dse_err_set(&e, DSE_EINPUT, s.path, NULL,
                             "case %d ran on device '%s': dse calibrate fits one device, '%s' (choose with --device)", i,
                             sys->dev[s.k[i].dev].name, sys->dev[dev].name);
            goto out;
        }
    train = malloc(sizeof *train * (size_t)s.n);
    held = malloc(sizeof *held * (size_t)s.n);
    if (!train || !held) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    int nt = 0, nh = 0;
    for (int i = 0; i < s.n; i++) {
        if (heldout(i))
            held[nh++] = i;
        else
            train[nt++] = i;
    }
    if (nh < 1) {
        rc = dse_err_set(&e, DSE_EINPUT, s.path, NULL, "need at least 3 kernels (one held out)");
        goto out;
    }
    struct stats before_h = summarize(s.k, held, nh), before_t = summarize(s.k, train, nt);
    if (!(before = malloc(sizeof *before * (size_t)s.n))) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    for (int i = 0; i < s.n; i++)
        before[i] = s.k[i].predicted_ms;
    struct calib c;
    phase("calibrate", "fitting the model to %d training kernels (%d held out)", nt, nh);
    gsl_error_handler_t *old = gsl_set_error_handler_off(); /* GSL's default handler aborts */
    rc = calib_fit(sys, dev, s.k, graphs, train, nt, f, threads, &c, &e);
    gsl_set_error_handler(old);
    if (rc)
        goto out;
    *cal = *sys;
    calib_apply(&cal->dev[dev], &c);
    for (int i = 0; i < s.n && !rc; i++)
        rc = vk_predict(&s.k[i], &graphs[i], cal, dev, f, threads, &s.k[i].predicted_ms, &s.k[i].predicted_mJ, &e);
    if (rc)
        goto out;
    struct stats after_h = summarize(s.k, held, nh), after_t = summarize(s.k, train, nt);
    /* Cross-validation: folds 0 and 1 held out in turn (fold 2 is the fit above). */
    struct stats cv[CV_FOLDS];
    cv[2] = after_h;
    for (int fold = 0; fold < 2 && !rc; fold++) {
        phase("calibrate", "cross-validation: refitting with fold %d of %d held out", fold + 1, CV_FOLDS);
        rc = cv_fold(sys, dev, &s, graphs, fold, f, threads, &cv[fold], &e);
    }
    if (rc)
        goto out;
    double cv_mape = (cv[0].mape + cv[1].mape + cv[2].mape) / 3, cv_w20 = (cv[0].within20 + cv[1].within20 + cv[2].within20) / 3;
    const char *levels[HW_MAX_MEM];
    for (int l = 0; l < sys->dev[dev].n_mem; l++)
        levels[l] = sys->dev[dev].mem[l].name;
    phase("calibrate", "held-out MAPE %.1f %% before, %.1f %% after (%d kernels)", before_h.mape, after_h.mape, nh);
    /* A fit that predicts the held-out kernels worse than the uncalibrated model has learned the
     * training kernels' noise (or a host that changed while measuring), not the device: not written
     * unless asked. */
    int worse = after_h.mape > before_h.mape, written = !worse || cli_get(opts, "force");
    if (written && (rc = write_calibrated(hwpath, cli_get(opts, "out"), sys->dev[dev].name, levels, &c, s.name, nt, nh,
                                          before_h.mape, after_h.mape, cv_mape, worse, &e)))
        goto out;
    if (written)
        phase("calibrate", "wrote %s%s", cli_get(opts, "out"), worse ? " (--force: the fit is worse than the uncalibrated model)" : "");
    if (json) {
        cJSON *o = cJSON_CreateObject(), *p;
        cJSON_AddStringToObject(o, "hw", hwpath);
        cJSON_AddStringToObject(o, "out", cli_get(opts, "out"));
        cJSON_AddStringToObject(o, "suite", s.name);
        cJSON_AddNumberToObject(o, "n_train", nt);
        cJSON_AddNumberToObject(o, "n_heldout", nh);
        cJSON_AddNumberToObject(o, "train_mape_before_pct", before_t.mape);
        cJSON_AddNumberToObject(o, "train_mape_after_pct", after_t.mape);
        cJSON_AddNumberToObject(o, "heldout_mape_before_pct", before_h.mape);
        cJSON_AddNumberToObject(o, "heldout_mape_after_pct", after_h.mape);
        cJSON_AddNumberToObject(o, "heldout_within20_before_pct", before_h.within20);
        cJSON_AddNumberToObject(o, "heldout_within20_after_pct", after_h.within20);
        cJSON *cvo = cJSON_AddObjectToObject(o, "crossval");
        cJSON *cvm = cJSON_AddArrayToObject(cvo, "fold_mape_pct");
        for (int k = 0; k < CV_FOLDS; k++)
            cJSON_AddItemToArray(cvm, cJSON_CreateNumber(cv[k].mape));
        cJSON_AddNumberToObject(cvo, "mape_pct", cv_mape);
        cJSON_AddNumberToObject(cvo, "within20_pct", cv_w20);
        if (mi.noise_pct >= 0)
            cJSON_AddNumberToObject(o, "noise_pct", mi.noise_pct);
        measure_json(o, &mi);
        cJSON_AddBoolToObject(o, "written", written);
        p = cJSON_AddObjectToObject(o, "fitted");
        for (int k = 0; k < EC_COUNT; k++)
            if (c.fit_class[k])
                cJSON_AddNumberToObject(p, hw_eff_class_names[k], c.eff_class[k]);
        for (int l = 0; l < c.n_levels; l++) {
            char name[HW_NAME_LEN + 16];
            snprintf(name, sizeof name, "bandwidth_%s", levels[l]);
            cJSON_AddNumberToObject(p, name, c.eff_level[l]);
        }
        if (c.fit_pack) {
            cJSON_AddNumberToObject(p, "pack_left_Gelem_per_s", c.pack_elem_per_s[0] * 1e-9);
            cJSON_AddNumberToObject(p, "pack_right_Gelem_per_s", c.pack_elem_per_s[1] * 1e-9);
            cJSON_AddNumberToObject(p, "gemm_setup_us", c.gemm_setup_s * 1e6);
        }
        cJSON_AddNumberToObject(p, "serial_fraction", c.serial_fraction);
        cJSON_AddNumberToObject(p, "per_op_us", c.per_op_s * 1e6);
        if (c.fit_fork)
            cJSON_AddNumberToObject(p, "fork_join_us", c.fork_join_s * 1e6);
        if (c.fit_group)
            cJSON_AddNumberToObject(p, "per_group_us", c.per_group_s * 1e6);
        cJSON *arr = cJSON_AddArrayToObject(o, "kernels"); /* measured times: refit later with --import */
        for (int i = 0; i < s.n; i++) {
            const struct vk *k = &s.k[i];
            cJSON *x = cJSON_CreateObject();
            kernel_json(x, k, sys);
            cJSON_AddNumberToObject(x, "predicted_before_ms", before[i]);
            cJSON_AddBoolToObject(x, "heldout", heldout(i));
            cJSON_AddItemToArray(arr, x);
        }
        char *txt = ju_print(o, 1);
        if (txt)
            puts(txt);
        free(txt);
        cJSON_Delete(o);
    } else {
        printf("dse calibrate: %s on suite %s: fitted on %d kernels, checked on %d held out\n\n", sys->name, s.name, nt,
               nh);
        printf("fitted compute efficiency:");
        for (int k = 0; k < EC_COUNT; k++)
            if (c.fit_class[k])
                printf(" %s %.3f", hw_eff_class_names[k], c.eff_class[k]);
        printf("\nfitted bandwidth efficiency:");
        for (int l = 0; l < c.n_levels; l++)
            printf(" %s %.3f", levels[l], c.eff_level[l]);
        if (c.fit_pack)
            printf("\nGEMM operand packing: left %.3f, right %.3f G elements/s, %.2f us per call",
                   c.pack_elem_per_s[0] * 1e-9, c.pack_elem_per_s[1] * 1e-9, c.gemm_setup_s * 1e6);
        printf("\ncompute/memory overlap: %.0f%% of the shorter phase not hidden", 100 * c.serial_fraction);
        printf("\nper-call overhead: %.2f us", c.per_op_s * 1e6);
        if (c.fit_fork)
            printf(", %.2f us more to run on all cores", c.fork_join_s * 1e6);
        if (c.fit_group)
            printf(", %.3f us per convolution group", c.per_group_s * 1e6);
        printf("\n\n");
        printf("%-28s %10s %10s\n", "", "before", "after");
        printf("%-28s %9.1f%% %9.1f%%\n", "training MAPE", before_t.mape, after_t.mape);
        printf("%-28s %9.1f%% %9.1f%%\n", "held-out MAPE", before_h.mape, after_h.mape);
        printf("%-28s %9.0f%% %9.0f%%\n", "held-out within +-20%", before_h.within20, after_h.within20);
        printf("3-fold cross-validation (each third held out in turn; the hwdesc is fold 3's fit):\n"
               "  held-out MAPE %.1f / %.1f / %.1f %% (mean %.1f %%), within +-20 %% %.0f / %.0f / %.0f %%\n",
               cv[0].mape, cv[1].mape, cv[2].mape, cv_mape, cv[0].within20, cv[1].within20, cv[2].within20);
        if (mi.noise_pct >= 0)
            printf("run-to-run noise of the measurements: %.1f%% (mean |pass / median - 1| over %s passes)\n", mi.noise_pct,
                   cli_get(opts, "repeat") ? cli_get(opts, "repeat") : "5");
        measure_print(&mi, sys->dev[dev].name);
        if (written)
            printf("\nwrote %s (dse eval --hw %s now reports the expected error)%s\n", cli_get(opts, "out"),
                   cli_get(opts, "out"), worse ? "\nWARNING: written with --force: its held-out error is worse than the uncalibrated model's" : "");
        else
            printf("\nnot written: %s\n", cli_get(opts, "out"));
    }
    if (!written)
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL,
                         "calibrate: %s not written: held-out MAPE %.1f %% after fitting, %.1f %% before (worse than the "
                         "uncalibrated model: measure again on an idle host, or write it anyway with --force)",
                         cli_get(opts, "out"), after_h.mape, before_h.mape);
out:
    if (rc)
        dse_err_print(stderr, &e);
    for (int i = 0; graphs && i < s.n; i++)
        wl_graph_free(&graphs[i]);
    free(graphs);
    free(train);
    free(held);
    free(before);
    vsuite_free(&s);
    free(sys);
    free(cal);
    return rc;
}
