/* cli_probe.c -- `dse probe`: detect and measure this host, write its hwdesc (default
 * hwdesc/host.json) through a temporary file renamed into place, prove it loads, and report what
 * was found as a table or one JSON object. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "hw.h"
#include "jsonu.h"
#include "outfile.h"
#include "probe.h"

static struct cli_opt probe_opts_proto[] = {
    {"out", 1, "hwdesc file to write (default hwdesc/host.json)", NULL},
    {"quick", 0, "shorter runs: 5 of ~20 ms each (default 9 of ~100 ms)", NULL},
    {"threads", 1, "OpenMP threads (default: one per physical core this process may use)", NULL},
    {"isa", 1, "kernel set: avx512, avx2, neon or portable (default: the best this CPU runs)", NULL},
    {"force", 0, "overwrite FILE even when dse probe did not write it", NULL},
    {"json", 0, "print one JSON object instead of the table", NULL},
    {"help", 0, "this help", NULL},
    {NULL, 0, NULL, NULL},
};

/* How probe_hwdesc marks a file it wrote: its note starts with this, its description contains the other. */
#define PROBE_NOTE "written by dse probe"
#define PROBE_DESC "(measured by dse probe"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The file stem: "hwdesc/host.json" -> "host" (bounded to a hwdesc name). */
static void stem_of(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t l = strlen(b);
    if (l > 5 && !strcmp(b + l - 5, ".json"))
        l -= 5;
    if (l >= n)
        l = n - 1;
    memcpy(out, b, l);
    out[l] = '\0';
    if (!out[0])
        snprintf(out, n, "host");
}

static void dir_of(const char *path, char *out, size_t n)
{
    const char *b = strrchr(path, '/');
    if (!b)
        snprintf(out, n, ".");
    else if (b == path)
        snprintf(out, n, "/");
    else
        snprintf(out, n, "%.*s", (int)(b - path), path);
}

/* May we write path? Only a file this command wrote (its note or description says so), or --force. */
static int check_target(const char *path, int force, struct dse_err *e)
{
    struct stat st;
    char dir[1024];
    dir_of(path, dir, sizeof dir);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return dse_err_set(e, DSE_EINPUT, path, NULL,
                           "no directory '%s' to write it in (run from the dse source tree, or give --out)", dir);
    if (access(dir, W_OK) != 0)
        return dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot write in '%s': %s", dir, strerror(errno));
    if (stat(path, &st) != 0)
        return errno == ENOENT ? DSE_OK
                               : dse_err_set(e, DSE_ERUNTIME, path, NULL, "cannot check it: %s", strerror(errno));
    if (!S_ISREG(st.st_mode))
        return dse_err_set(e, DSE_EINPUT, path, NULL, "exists and is not a regular file");
    if (force)
        return DSE_OK;
    char *buf = NULL;
    size_t len = 0;
    int ours = 0;
    struct dse_err e2;
    dse_err_clear(&e2);
    if (ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, &e2) == DSE_OK) {
        cJSON *root = cJSON_ParseWithLength(buf, len);
        const cJSON *note = cJSON_GetObjectItemCaseSensitive(root, "note"),
                    *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
        ours = (cJSON_IsString(note) && !strncmp(note->valuestring, PROBE_NOTE, strlen(PROBE_NOTE))) ||
               (cJSON_IsString(desc) && strstr(desc->valuestring, PROBE_DESC));
        cJSON_Delete(root);
    }
    free(buf);
    if (!ours)
        return dse_err_set(e, DSE_EINPUT, path, NULL,
                           "exists and was not written by dse probe (its note/description does not say so); give "
                           "another --out, or --force to overwrite it");
    return DSE_OK;
}

/* Writes txt to path through a temporary file in the same directory renamed into place, so a
 * reader never sees half a file. */

static void fmt_rate(double v, const char *unit, char *buf, size_t n)
{
    if (v >= 1e12)
        snprintf(buf, n, "%.2f T%s", v / 1e12, unit);
    else if (v >= 1e9)
        snprintf(buf, n, "%.1f G%s", v / 1e9, unit);
    else
        snprintf(buf, n, "%.1f M%s", v / 1e6, unit);
}

static void fmt_size(double b, char *buf, size_t n)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(buf, n, "%.2f GiB", b / (1024.0 * 1024 * 1024));
    else if (b >= 1024.0 * 1024)
        snprintf(buf, n, "%.4g MiB", b / (1024.0 * 1024));
    else
        snprintf(buf, n, "%.4g KiB", b / 1024);
}

static double spread(const struct probe_stat *s)
{
    return s->median > 0 ? 100 * (s->max - s->min) / s->median : 0;
}

static void features_str(const struct probe_host *h, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (int i = 0; i < PROBE_F_COUNT && k < n; i++)
        if (h->feat & (1u << i))
            k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? " " : "", probe_feature_names[i]);
    if (!buf[0])
        snprintf(buf, n, "none of those dse uses");
}

/* The largest spread over the figures written to the hwdesc. */
static double max_spread(const struct probe_meas *m)
{
    double x = 0;
    for (int p = 0; p < PROBE_NPEAK; p++)
        if (m->peak[p].runs)
            x = fmax(x, spread(&m->peak[p]));
    for (int l = 0; l < PROBE_NLEVEL; l++)
        if (m->read[l].runs)
            x = fmax(x, spread(&m->read[l]));
    if (m->triad.runs)
        x = fmax(x, spread(&m->triad));
    return x;
}

static cJSON *stat_json(const struct probe_stat *s, double scale)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "median", s->median / scale);
    cJSON_AddNumberToObject(o, "min", s->min / scale);
    cJSON_AddNumberToObject(o, "max", s->max / scale);
    cJSON_AddNumberToObject(o, "spread_pct", spread(s));
    cJSON_AddNumberToObject(o, "runs", s->runs);
    return o;
}

static cJSON *facts_json(const struct probe_host *h, const struct probe_meas *m, const char *out, double secs,
                         double clock, const char *clk_src)
{
    char feat[256];
    cJSON *o = cJSON_CreateObject(), *ho = cJSON_AddObjectToObject(o, "host");
    cJSON_AddStringToObject(ho, "model", h->model);
    cJSON_AddStringToObject(ho, "arch", h->arch);
    cJSON_AddNumberToObject(ho, "logical_online", h->online);
    cJSON_AddNumberToObject(ho, "logical_allowed", h->allowed);
    cJSON_AddNumberToObject(ho, "physical_cores", h->physical);
    cJSON_AddNumberToObject(ho, "packages", h->packages);
    cJSON_AddNumberToObject(ho, "threads_per_core", h->threads_per_core);
    features_str(h, feat, sizeof feat);
    cJSON_AddStringToObject(ho, "simd", feat);
    cJSON *ca = cJSON_AddArrayToObject(ho, "caches");
    for (int i = 0; i < h->n_cache; i++) {
        const struct probe_cache *c = &h->cache[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "level", c->level);
        cJSON_AddStringToObject(x, "type", c->type);
        cJSON_AddNumberToObject(x, "size_KiB", c->size_bytes / 1024);
        cJSON_AddNumberToObject(x, "shared_cpus", c->shared_cpus);
        cJSON_AddBoolToObject(x, "per_core", c->per_core);
        cJSON_AddNumberToObject(x, "instances_used", probe_cache_instances(h, c, m->threads));
        cJSON_AddItemToArray(ca, x);
    }
    if (h->mem_bytes > 0)
        cJSON_AddNumberToObject(ho, "memory_GiB", h->mem_bytes / (1024.0 * 1024 * 1024));
    else
        cJSON_AddStringToObject(ho, "memory_GiB", "unknown");
    if (h->cgroup_mem_bytes > 0)
        cJSON_AddNumberToObject(ho, "cgroup_memory_GiB", h->cgroup_mem_bytes / (1024.0 * 1024 * 1024));
    cJSON_AddStringToObject(ho, "governor", h->governor);
    const char *fk[] = {"cur_MHz", "min_MHz", "max_MHz", "base_MHz", "cpuinfo_MHz"};
    double fv[] = {h->cur_MHz, h->min_MHz, h->max_MHz, h->base_MHz, h->cpuinfo_MHz};
    for (int i = 0; i < 5; i++) {
        if (fv[i] > 0)
            cJSON_AddNumberToObject(ho, fk[i], fv[i]);
        else
            cJSON_AddStringToObject(ho, fk[i], "unknown");
    }
    if (h->rapl_tdp_W > 0)
        cJSON_AddNumberToObject(ho, "rapl_tdp_W", h->rapl_tdp_W);
    else
        cJSON_AddStringToObject(ho, "rapl_tdp_W", "unknown");
    cJSON_AddStringToObject(ho, "compiler", h->compiler);
    cJSON_AddNumberToObject(ho, "openmp", (double)h->openmp);
    cJSON_AddStringToObject(ho, "OMP_PROC_BIND", h->omp_proc_bind);
    cJSON_AddStringToObject(ho, "OMP_PLACES", h->omp_places);

    cJSON *mo = cJSON_AddObjectToObject(o, "measured");
    cJSON_AddNumberToObject(mo, "threads", m->threads);
    cJSON_AddBoolToObject(mo, "pinned", m->pinned);
    cJSON_AddStringToObject(mo, "kernels", m->isa);
    cJSON_AddNumberToObject(mo, "runs", m->runs);
    cJSON_AddNumberToObject(mo, "run_ms", 1000 * m->run_s);
    cJSON_AddNumberToObject(mo, "clock_MHz_used", clock);
    cJSON_AddStringToObject(mo, "clock_source", clk_src);
    if (m->clock_MHz.runs)
        cJSON_AddItemToObject(mo, "dependent_add_clock_MHz", stat_json(&m->clock_MHz, 1));
    /* the precisions the hwdesc gives an engine (what dse validate can predict here), and those it lacks */
    cJSON *np = cJSON_AddArrayToObject(mo, "native_precisions"), *nn = cJSON_AddArrayToObject(mo, "not_native");
    for (int p = 0; p < PROBE_NPEAK; p++)
        cJSON_AddItemToArray(m->peak[p].runs ? np : nn, cJSON_CreateString(probe_peak_names[p]));
    cJSON *pk = cJSON_AddObjectToObject(mo, "peak_G_per_s");
    for (int p = 0; p < PROBE_NPEAK; p++)
        if (m->peak[p].runs) {
            cJSON *x = stat_json(&m->peak[p], 1e9);
            cJSON_AddStringToObject(x, "how", m->peak_how[p]);
            cJSON_AddItemToObject(pk, probe_peak_names[p], x);
        }
    cJSON *bw = cJSON_AddObjectToObject(mo, "read_GBps");
    for (int l = 0; l < PROBE_NLEVEL; l++)
        if (m->read[l].runs) {
            cJSON *x = stat_json(&m->read[l], 1e9);
            cJSON_AddNumberToObject(x, "buffer_bytes_per_thread", m->buf_bytes[l]);
            cJSON_AddItemToObject(bw, probe_level_names[l], x);
        }
    if (m->copy.runs)
        cJSON_AddItemToObject(mo, "stream_copy_GBps", stat_json(&m->copy, 1e9));
    if (m->triad.runs)
        cJSON_AddItemToObject(mo, "stream_triad_GBps", stat_json(&m->triad, 1e9));
    cJSON_AddNumberToObject(mo, "stream_fraction", m->stream_fraction);
    if (m->idle_W >= 0)
        cJSON_AddNumberToObject(mo, "idle_W", m->idle_W);
    else
        cJSON_AddStringToObject(mo, "idle_W", "unknown");
    if (m->steal_pct >= 0) {
        cJSON_AddNumberToObject(mo, "steal_pct", m->steal_pct);
        cJSON_AddNumberToObject(mo, "other_load_pct", m->other_pct);
    }
    cJSON_AddNumberToObject(mo, "max_spread_pct", max_spread(m));
    cJSON_AddNumberToObject(mo, "measure_s", m->seconds);
    cJSON_AddNumberToObject(mo, "peaks_s", m->peaks_s);
    cJSON_AddNumberToObject(mo, "caches_s", m->caches_s);
    cJSON_AddNumberToObject(mo, "dram_s", m->dram_s);
    cJSON_AddStringToObject(o, "out", out);
    cJSON_AddNumberToObject(o, "seconds", secs);
    return o;
}

static void print_table(const struct probe_host *h, const struct probe_meas *m, const char *out, double secs,
                        double clock, const char *clk_src)
{
    char a[256], b[64], c[64];
    printf("dse probe: %s (%s)\n\ndetected\n", h->model, h->arch);
    printf("  %-16s %d online, %d allowed logical CPUs; %d physical cores, %d package%s, %d thread%s per core\n",
           "cpus", h->online, h->allowed, h->physical, h->packages, h->packages == 1 ? "" : "s",
           h->threads_per_core, h->threads_per_core == 1 ? "" : "s");
    features_str(h, a, sizeof a);
    printf("  %-16s %s\n", "simd", a);
    if (h->feat & (PROBE_F_AMX_TILE | PROBE_F_AMX_BF16 | PROBE_F_AMX_INT8))
        printf("  %-16s AMX present, not measured (no matrix entry written)\n", "");
    for (int i = 0; i < h->n_cache; i++) {
        const struct probe_cache *k = &h->cache[i];
        fmt_size(k->size_bytes, b, sizeof b);
        snprintf(a, sizeof a, "L%d %s", k->level, k->type);
        printf("  %-16s %-16s %s x %d %s (shared_cpu_list: %d CPU%s)\n", i ? "" : "caches", a, b,
               probe_cache_instances(h, k, m->threads), k->per_core ? "per core" : "shared", k->shared_cpus,
               k->shared_cpus == 1 ? "" : "s");
    }
    if (!h->n_cache)
        printf("  %-16s unknown (no sysfs cache information)\n", "caches");
    if (h->mem_bytes > 0)
        fmt_size(h->mem_bytes, b, sizeof b);
    else
        snprintf(b, sizeof b, "unknown");
    printf("  %-16s %s%s\n", "memory", b, h->cgroup_mem_bytes > 0 ? " (cgroup limit lower)" : "");
    printf("  %-16s governor %s; cpufreq max %s; /proc/cpuinfo %s\n", "frequency", h->governor,
           h->max_MHz > 0 ? (snprintf(b, sizeof b, "%.0f MHz", h->max_MHz), b) : "unknown",
           h->cpuinfo_MHz > 0 ? (snprintf(c, sizeof c, "%.0f MHz", h->cpuinfo_MHz), c) : "unknown");
    printf("  %-16s %.0f MHz from %s\n", "clock used", clock, clk_src);
    if (h->rapl_tdp_W > 0)
        printf("  %-16s RAPL TDP %.0f W over %d package%s\n", "power", h->rapl_tdp_W, h->rapl_packages,
               h->rapl_packages == 1 ? "" : "s");
    else
        printf("  %-16s unknown (no RAPL): the hwdesc carries a labelled estimate\n", "power");
    printf("  %-16s %s, OpenMP %ld; OMP_PROC_BIND=%s OMP_PLACES=%s\n", "compiler", h->compiler, h->openmp,
           h->omp_proc_bind, h->omp_places);

    printf("\nmeasured: %d threads (%s), %s kernels, median of %d runs of ~%.0f ms; spread = (max - min) / median\n",
           m->threads, m->pinned ? "pinned, one per physical core" : "placed by OpenMP", m->isa_label, m->runs,
           1000 * m->run_s);
    printf("  %-16s %16s %8s  %s\n", "figure", "median", "spread", "how");
    if (m->clock_MHz.runs) {
        snprintf(b, sizeof b, "%.0f MHz", m->clock_MHz.median);
        printf("  %-16s %16s %7.1f%%  dependent integer adds, per thread\n", "clock", b, spread(&m->clock_MHz));
    }
    for (int p = 0; p < PROBE_NPEAK; p++) {
        if (!m->peak[p].runs)
            continue;
        fmt_rate(m->peak[p].median, p == PROBE_INT8 ? "OP/s" : "FLOP/s", b, sizeof b);
        snprintf(a, sizeof a, "%s peak", probe_peak_names[p]);
        printf("  %-16s %16s %7.1f%%  %s\n", a, b, spread(&m->peak[p]), m->peak_how[p]);
    }
    for (int p = 0; p < PROBE_NPEAK; p++)
        if (!m->peak[p].runs) /* no instruction for it: no engine in the hwdesc, so nothing predicted at it */
            printf("  %-16s %16s %8s  no %s instructions on this CPU: not native here, no engine in the "
                   "hwdesc\n", (snprintf(a, sizeof a, "%s peak", probe_peak_names[p]), a), "-", "",
                   probe_peak_names[p]);
    for (int l = 0; l < PROBE_NLEVEL; l++) {
        if (!m->read[l].runs)
            continue;
        fmt_rate(m->read[l].median, "B/s", b, sizeof b);
        fmt_size(m->buf_bytes[l], c, sizeof c);
        snprintf(a, sizeof a, "%s read", probe_level_names[l]);
        printf("  %-16s %16s %7.1f%%  sum over %s%s per thread\n", a, b, spread(&m->read[l]),
               l == PROBE_DRAM ? "3 arrays of " : "", c);
    }
    if (m->copy.runs) {
        fmt_rate(m->copy.median, "B/s", b, sizeof b);
        printf("  %-16s %16s %7.1f%%  c = a, 8 bytes per element\n", "STREAM copy", b, spread(&m->copy));
    }
    if (m->triad.runs) {
        fmt_rate(m->triad.median, "B/s", b, sizeof b);
        printf("  %-16s %16s %7.1f%%  a = b + q c, 12 bytes per element\n", "STREAM triad", b, spread(&m->triad));
    }
    printf("  %-16s %16.3f %8s  triad / DRAM read%s\n", "stream_fraction", m->stream_fraction, "",
           m->triad.runs ? "" : " (not measured: 1)");
    if (m->idle_W >= 0)
        printf("  %-16s %14.1f W %8s  RAPL energy while sleeping\n", "idle power", m->idle_W, "");
    if (m->steal_pct >= 0)
        printf("  %-16s %15.1f%% %8s  of CPU time stolen by the hypervisor; %.1f%% used by other processes\n",
               "steal", m->steal_pct, "", m->other_pct);
    if (m->n_curve > 1) {
        printf("\n%s read at halving buffer sizes (per thread):", probe_level_names[m->curve_level]);
        for (int i = 0; i < m->n_curve; i++) {
            fmt_size(m->curve_bytes[i], c, sizeof c);
            printf("%s %s %.1f GB/s", i ? "," : "", c, m->curve_Bps[i] / 1e9);
        }
        printf("\n");
        if (m->eff_cap_bytes[m->curve_level] > 0) {
            fmt_size(m->eff_cap_bytes[m->curve_level], c, sizeof c);
            printf("note: the sysfs size reads slower than smaller buffers; the hwdesc gives %s the measured\n"
                   "capacity %s (twice the largest buffer within 3/4 of the best rate, all threads)\n",
                   probe_level_names[m->curve_level], c);
        } else if (m->dropped[m->curve_level])
            printf("note: no size read at least 1.25x DRAM: %s is left out of the hwdesc\n",
                   probe_level_names[m->curve_level]);
    }
    double ms = max_spread(m);
    if (ms > 10)
        printf("\nwarning: spreads up to %.0f%%: the host was not quiet (see steal above; in a VM, neighbours on the\n"
               "shared L3 and memory do not show there); rerun when it is idle, or compare several runs\n", ms);
    printf("\nwrote %s (loads as a hwdesc); %.1f s\n", out, secs);
}

static void today(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    if (localtime_r(&t, &tm))
        strftime(buf, n, "%Y-%m-%d", &tm);
    else
        snprintf(buf, n, "unknown-date");
}

int cmd_probe(int argc, char **argv)
{
    struct cli_opt opts[sizeof probe_opts_proto / sizeof probe_opts_proto[0]];
    memcpy(opts, probe_opts_proto, sizeof opts);
    struct dse_err e;
    const char *pos[1];
    int npos, rc;
    double t0 = now_s();
    struct probe_host *h = NULL;
    struct probe_meas *m = NULL;
    struct hw_system *sys = NULL;
    cJSON *doc = NULL;
    char *txt = NULL;
    dse_err_clear(&e);
    if ((rc = cli_parse(argc, argv, 2, opts, pos, 0, &npos, "probe", &e)))
        goto out;
    if (cli_get(opts, "help")) {
        printf("usage: dse probe [--out FILE] [--quick] [--threads N] [--isa NAME] [--json] [--force]\n\n"
               "Detects this host (CPU, cores, SIMD, caches, memory, frequency, power limits), measures peak\n"
               "FP32/FP64 (and bf16/int8 where the CPU has them) with FMA chains on every core, read bandwidth\n"
               "of each cache level and DRAM, and STREAM copy/triad, then writes a hwdesc of one CPU device.\n"
               "Every figure is a median of timed runs; its source says how it was measured. An existing FILE\n"
               "is overwritten only when dse probe wrote it (or with --force). Default run under a minute,\n"
               "--quick well under 20 s on 2 cores.\n\noptions:\n");
        cli_print_options(probe_opts_proto);
        return 0;
    }
    struct probe_opts po = {0, cli_get(opts, "quick") != NULL, cli_get(opts, "isa")};
    long long v;
    if (cli_get(opts, "threads")) {
        if ((rc = cli_int("threads", cli_get(opts, "threads"), 1, PROBE_MAX_CPUS, &v, &e)))
            goto out;
        po.threads = (int)v;
    }
    const char *path = cli_get(opts, "out") ? cli_get(opts, "out") : "hwdesc/host.json";
    if (!*path) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--out", "expected a file name, got an empty string");
        goto out;
    }
    if ((rc = check_target(path, cli_get(opts, "force") != NULL, &e)))
        goto out;
    h = calloc(1, sizeof *h);
    m = calloc(1, sizeof *m);
    sys = malloc(sizeof *sys);
    if (!h || !m || !sys) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    if ((rc = probe_detect("", h, &e)))
        goto out;
    if (po.threads > h->allowed) {
        rc = dse_err_set(&e, DSE_EINPUT, NULL, "--threads",
                         "%d exceeds the %d logical CPUs this process may use", po.threads, h->allowed);
        goto out;
    }
    if (!cli_get(opts, "json") && isatty(STDERR_FILENO))
        fprintf(stderr, "dse probe: measuring %s on %d threads (%s)...\n", h->model,
                po.threads ? po.threads : h->physical, po.quick ? "--quick: a few seconds" : "about 20 s");
    if ((rc = probe_measure(h, &po, m, &e)))
        goto out;

    char date[32], name[HW_NAME_LEN], clk_src[96];
    today(date, sizeof date);
    stem_of(path, name, sizeof name);
    double clock = probe_clock_MHz(h, m, clk_src, sizeof clk_src);
    doc = probe_hwdesc(h, m, name, date);
    txt = doc ? ju_print(doc, 1) : NULL;
    if (!txt) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory building the hwdesc");
        goto out;
    }
    size_t len = strlen(txt);
    char *t2 = realloc(txt, len + 2); /* end the file with a newline */
    if (!t2) {
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        goto out;
    }
    txt = t2;
    txt[len] = '\n';
    txt[len + 1] = '\0';
    /* Validate before anything is written, so a file that would not load never replaces one. */
    if (hw_load_buf(txt, (unsigned long)len + 1, path, sys, &e) != DSE_OK) {
        char msg[sizeof e.msg];
        dse_strlcpy(msg, e.msg, sizeof msg);
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "the hwdesc built for this host does not load: %s", msg);
        goto out;
    }
    int through = 0; /* --out /dev/stdout: written through, nothing to read back */
    if ((rc = out_file_write(path, txt, strlen(txt), NULL, NULL, &through, &e)))
        goto out;
    if (!through && hw_load_file(path, sys, &e) != DSE_OK) {
        char msg[sizeof e.msg];
        dse_strlcpy(msg, e.msg, sizeof msg);
        rc = dse_err_set(&e, DSE_ERUNTIME, NULL, NULL, "wrote %s but it does not load back: %s", path, msg);
        goto out;
    }
    double secs = now_s() - t0;
    if (cli_get(opts, "json")) {
        cJSON *f = facts_json(h, m, path, secs, clock, clk_src);
        char *s = f ? ju_print(f, 1) : NULL;
        if (s)
            puts(s);
        free(s);
        cJSON_Delete(f);
    } else
        print_table(h, m, path, secs, clock, clk_src);
out:
    if (rc)
        dse_err_print(stderr, &e);
    cJSON_Delete(doc);
    free(txt);
    free(sys);
    free(m);
    free(h);
    return rc;
}
