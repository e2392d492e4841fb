/* validate_power.c -- the published power corpus (validate.h: wcase; validate/published/power/README.md):
 * average board or system power, or energy per inference or token, measured while a device ran a stated
 * workload, each predicted by dse's power model (docs/models.md, "Power and energy") on the shipped
 * hwdesc. The fit/held-out split is the other corpora's rule (FNV-1a 32 of the id odd: held-out), fixed
 * in the README before any case was gathered.
 *
 * What a case's figure is compared with (the meter's scope; each contains the one before):
 *   scope cores    the devices' own rails of a module (a Jetson's VDD_CPU_GPU_CV): every device of the
 *                  hwdesc at its power, less the energy of the memories the system shares (the module's
 *                  DRAM has its own rails), without the enclosure
 *   scope device   the device's own average power over the run: idle_W + (active and per-operation
 *                  energy) / latency; n instances sharing it add n x one instance's dynamic power
 *   scope module   every device of the hwdesc and the enclosure's base_W (a Jetson's VDD_IN: what an
 *                  nvpmodel budget limits), no chassis, no conversion
 *   scope system   the machine's at its input: every other device of the hwdesc idling (a card's host)
 *                  plus `count` devices of its topology each running one instance, the rest idling, and
 *                  the enclosure (hw_input_W: base, chassis, cooling, conversion efficiency)
 *   idle           the idle power of the device (or system)
 *   energy_J_per_inference, energy_J_per_token   that power x the latency / the inferences or tokens
 *                  all copies complete in it */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonu.h"
#include "validate.h"

static const char *const wcols[WC_COUNT + 1] = {
    "id",        "device", "framework", "software", "workload", "phase",       "batch",      "prompt",
    "gen",       "instances", "precision", "mode",  "scope",    "count",       "metric",     "value",
    "unit",      "perf_metric", "perf_value", "source", "url",  "date",        "note",       NULL};
const char *const wmetric_names[WM_COUNT + 1] = {"power_W", "energy_J_per_inference", "energy_J_per_token", NULL};
static const char *const wmetric_units[WM_COUNT] = {"W", "J", "J"};
static const char *const wscope_names[WS_COUNT + 1] = {"device", "system", "cores", "module", NULL};

static int load_wrow(char **f, const char *file, int line, void *row, struct dse_err *e)
{
    struct wcase *c = row;
    memset(c, 0, sizeof *c);
    char where[32];
    snprintf(where, sizeof where, "line %d", line);
    dse_strlcpy(c->file, file, sizeof c->file);
    c->line = line;
    static const int req[] = {WC_ID, WC_DEVICE, WC_SOFTWARE, WC_WORKLOAD, WC_PHASE, WC_PRECISION, WC_SCOPE, WC_METRIC,
                              WC_VALUE, WC_UNIT, WC_SOURCE, WC_URL, WC_DATE};
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++)
        if (!f[req[i]][0])
            return dse_err_set(e, DSE_EINPUT, file, where, "%s: empty", wcols[req[i]]);
    struct {
        int col;
        char *dst;
        size_t n;
    } str[] = {{WC_ID, c->id, sizeof c->id},
               {WC_DEVICE, c->device, sizeof c->device},
               {WC_SOFTWARE, c->software, sizeof c->software},
               {WC_WORKLOAD, c->workload, sizeof c->workload},
               {WC_PRECISION, c->precision, sizeof c->precision},
               {WC_MODE, c->mode, sizeof c->mode}};
    for (size_t i = 0; i < sizeof str / sizeof str[0]; i++) {
        if (strlen(f[str[i].col]) >= str[i].n)
            return dse_err_set(e, DSE_EINPUT, file, where, "%s: longer than %zu characters", wcols[str[i].col],
                               str[i].n - 1);
        dse_strlcpy(str[i].dst, f[str[i].col], str[i].n);
    }
    for (const char *p = c->id; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '.' || *p == '-'))
            return dse_err_set(e, DSE_EINPUT, file, where, "id: '%s': use a-z, 0-9, '.' and '-'", c->id);
    c->idle = !strcmp(f[WC_PHASE], "idle");
    c->is_kernel = !strcmp(f[WC_PHASE], "kernel");
    int ph = ju_lookup(wl_phase_names, f[WC_PHASE]);
    if (ph < 0 && !c->idle && !c->is_kernel)
        return dse_err_set(e, DSE_EINPUT, file, where,
                           "phase: expected none, prefill, decode, generate, train, kernel or idle, got '%s'",
                           f[WC_PHASE]);
    c->phase = ph < 0 ? PH_NONE : (enum wl_phase)ph;
    if (c->idle != !strcmp(c->workload, "idle"))
        return dse_err_set(e, DSE_EINPUT, file, where, "workload 'idle' goes with phase idle and only with it (got "
                           "workload '%s', phase '%s')", c->workload, f[WC_PHASE]);
    int nodata = c->idle || c->is_kernel;
    if (pcsv_int(f[WC_BATCH], nodata ? 0 : 1, 1000000, &c->batch) || pcsv_int(f[WC_PROMPT], 0, 10000000, &c->prompt) ||
        pcsv_int(f[WC_GEN], 0, 1000000, &c->gen))
        return dse_err_set(e, DSE_EINPUT, file, where,
                           "batch, prompt, gen: expected whole numbers (batch >= 1 but for idle and kernels), got "
                           "'%s', '%s', '%s'", f[WC_BATCH], f[WC_PROMPT], f[WC_GEN]);
    c->instances = 1;
    if (f[WC_INSTANCES][0] && pcsv_int(f[WC_INSTANCES], 1, 4096, &c->instances))
        return dse_err_set(e, DSE_EINPUT, file, where, "instances: expected a whole number in [1, 4096], got '%s'",
                           f[WC_INSTANCES]);
    c->count = 1;
    if (f[WC_NDEV][0] && pcsv_int(f[WC_NDEV], 1, 65536, &c->count))
        return dse_err_set(e, DSE_EINPUT, file, where, "count: expected a whole number in [1, 65536], got '%s'",
                           f[WC_NDEV]);
    int sc = ju_lookup(wscope_names, f[WC_SCOPE]), m = ju_lookup(wmetric_names, f[WC_METRIC]);
    if (sc < 0)
        return dse_err_set(e, DSE_EINPUT, file, where, "scope: expected cores, device, module or system, got '%s'", f[WC_SCOPE]);
    if (m < 0)
        return dse_err_set(e, DSE_EINPUT, file, where,
                           "metric: expected power_W, energy_J_per_inference or energy_J_per_token, got '%s'",
                           f[WC_METRIC]);
    c->scope = (enum wscope)sc;
    c->metric = (enum wmetric)m;
    if (strcmp(f[WC_UNIT], wmetric_units[m]))
        return dse_err_set(e, DSE_EINPUT, file, where, "unit: %s is given in %s, got '%s'", wmetric_names[m],
                           wmetric_units[m], f[WC_UNIT]);
    if (m != WM_POWER && nodata)
        return dse_err_set(e, DSE_EINPUT, file, where, "metric %s needs a workload with inferences (phase %s has none)",
                           wmetric_names[m], f[WC_PHASE]);
    char *end;
    c->value = strtod(f[WC_VALUE], &end);
    if (end == f[WC_VALUE] || *end || !(c->value > 0) || !isfinite(c->value) || c->value > 1e7)
        return dse_err_set(e, DSE_EINPUT, file, where, "value: expected a positive number of at most 1e7, got '%s'",
                           f[WC_VALUE]);
    c->perf_metric = -1;
    c->perf_value = NAN;
    if (f[WC_PERF_METRIC][0] || f[WC_PERF_VALUE][0]) {
        static const enum pmetric perf_ok[] = {PM_THROUGHPUT, PM_TOKENS, PM_LATENCY, PM_TFLOPS};
        int pm = ju_lookup(pmetric_names, f[WC_PERF_METRIC]);
        int known = 0;
        for (size_t i = 0; i < sizeof perf_ok / sizeof perf_ok[0]; i++)
            known |= pm == (int)perf_ok[i];
        if (!known || nodata != (pm == PM_TFLOPS) || c->idle)
            return dse_err_set(e, DSE_EINPUT, file, where,
                               "perf_metric: expected throughput_per_s, tokens_per_s or latency_ms (tflops for a "
                               "kernel; none when idle), got '%s'", f[WC_PERF_METRIC]);
        c->perf_metric = pm;
        c->perf_value = strtod(f[WC_PERF_VALUE], &end);
        if (end == f[WC_PERF_VALUE] || *end || !(c->perf_value > 0) || !isfinite(c->perf_value))
            return dse_err_set(e, DSE_EINPUT, file, where, "perf_value: expected a positive number, got '%s'",
                               f[WC_PERF_VALUE]);
    }
    if (c->is_kernel) {
        struct prec_cfg pc;
        if (prec_parse(c->precision, &pc, e))
            return dse_err_set(e, DSE_EINPUT, file, where, "precision: %s", e->msg);
        if (pcase_kernel(c->workload, prec_names[pc.w], file, where, &c->k, e))
            return e->code;
    }
    c->heldout = pcase_is_heldout(c->id);
    return DSE_OK;
}

static int cmp_id(const void *a, const void *b) { return strcmp(((const struct wcase *)a)->id, ((const struct wcase *)b)->id); }

/* Appends the cases of text to *all (n of them so far), refusing an id another file already has. */
static int append(const char *text, size_t len, const char *path, struct wcase **all, int *n, struct dse_err *e)
{
    _Static_assert(offsetof(struct wcase, id) == 0, "pcsv_table reads the id at the start of a case");
    void *c;
    int k, rc = pcsv_table(text, len, path, wcols, WC_COUNT, "power corpus", sizeof(struct wcase), load_wrow, &c, &k, e);
    if (rc)
        return rc;
    if (*n + k > PCSV_MAX_CASES) {
        free(c);
        return dse_err_set(e, DSE_EINPUT, path, NULL, "more than %d power cases in all", PCSV_MAX_CASES);
    }
    struct wcase *grown = realloc(*all, sizeof *grown * (size_t)(*n + k + 1));
    if (!grown) {
        free(c);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    if (k) /* a file of a header only: no rows, and c NULL */
        memcpy(grown + *n, c, sizeof *grown * (size_t)k);
    free(c);
    *all = grown;
    *n += k;
    return DSE_OK;
}

/* Ids are unique across files: a duplicate would count one measurement twice. */
static int check_ids(const struct wcase *c, int n, struct dse_err *e)
{
    struct wcase *s = malloc(sizeof *s * (size_t)(n + 1));
    if (!s)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    memcpy(s, c, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_id);
    int rc = DSE_OK;
    for (int i = 1; i < n && !rc; i++)
        if (!strcmp(s[i].id, s[i - 1].id)) {
            char where[32];
            snprintf(where, sizeof where, "line %d", s[i].line);
            rc = dse_err_set(e, DSE_EINPUT, s[i].file, where, "id '%s' is also %s line %d", s[i].id, s[i - 1].file,
                             s[i - 1].line);
        }
    free(s);
    return rc;
}

/* The checks once every file is read: some case, ids unique; *out takes all (freed on an error). */
static int load_done(struct wcase *all, int n, int rc, const char *path, struct wcase **out, int *count,
                     struct dse_err *e)
{
    if (!rc && !n)
        rc = dse_err_set(e, DSE_EINPUT, path, NULL, "no power cases");
    if (!rc)
        rc = check_ids(all, n, e);
    if (rc) {
        free(all);
        return rc;
    }
    *out = all;
    *count = n;
    return DSE_OK;
}

int wcorpus_load_buf(const char *text, size_t len, const char *path, struct wcase **out, int *count, struct dse_err *e)
{
    struct wcase *all = NULL;
    int n = 0, rc = append(text, len, path, &all, &n, e);
    return load_done(all, n, rc, path, out, count, e);
}

int wcorpus_load(const char *const *paths, int np, struct wcase **out, int *count, struct dse_err *e)
{
    struct wcase *all = NULL;
    int n = 0, rc = DSE_OK;
    for (int i = 0; i < np && !rc; i++) {
        char *buf;
        size_t len;
        if (!(rc = ju_read_file(paths[i], JU_MAX_FILE_BYTES, &buf, &len, e))) {
            rc = append(buf, len, paths[i], &all, &n, e);
            free(buf);
        }
    }
    return load_done(all, n, rc, np ? paths[0] : NULL, out, count, e);
}

/* ---- prediction ---- */

/* Sets the operating point c->mode on device dev of sys: "" the hwdesc's own, cap=W a power limit, else
 * one of the system's modes (a Jetson nvpmodel mode). */
static int apply_mode(struct wcase *c, struct hw_system *sys, int dev)
{
    struct hw_device *d = &sys->dev[dev];
    char mode[sizeof c->mode];
    dse_strlcpy(mode, c->mode, sizeof mode);
    size_t n = strlen(mode);
    if (n >= 7 && !strcmp(mode + n - 7, "+locked")) { /* clocks pinned (jetson_clocks) in that mode */
        sys->clocks_locked = 1;
        mode[n - 7] = '\0';
    }
    if (!mode[0])
        return 0;
    int k = hw_mode_find(sys, mode);
    if (k >= 0) {
        hw_apply_mode(sys, k);
        return 0;
    }
    char *end;
    if (!strncmp(mode, "cap=", 4)) {
        double w = strtod(mode + 4, &end);
        if (end == mode + 4 || *end || !(w > 0) || w > 1e6) {
            snprintf(c->reason, sizeof c->reason, "mode '%s': expected cap=W, a power limit in watts", c->mode);
            return -1;
        }
        hw_apply_power_cap(d, w);
        if (d->disabled[0]) {
            dse_strlcpy(c->reason, d->disabled, sizeof c->reason);
            return -1;
        }
        return 0;
    }
    if (sys->n_modes) {
        char list[HW_MAX_MODES * 34] = "";
        for (int i = 0; i < sys->n_modes; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", sys->modes[i].name);
        snprintf(c->reason, sizeof c->reason, "mode '%s': %s has no such mode (%s)", mode, sys->name, list);
    } else {
        snprintf(c->reason, sizeof c->reason, "mode '%s': the hwdesc of %s names no operating point (no modes)",
                 mode, sys->name);
    }
    return -1;
}

/* Idle power of every device of sys but dev (a card's host; a topology's device counts once), with its
 * active power too where the clocks are locked (hw_system.clocks_locked: they do not idle down). */
static double others_idle_W(const struct hw_system *sys, int dev)
{
    double w = 0;
    for (int d = 0; d < sys->n_dev; d++)
        if (d != dev)
            w += sys->dev[d].idle_W + (sys->clocks_locked ? sys->dev[d].active_W : 0);
    return w;
}

/* The tokens one copy completes in a run of request r (0: the workload has none). */
static double tokens_of(const struct eval_req *r)
{
    switch (r->phase) {
    case PH_GENERATE: return (double)r->batch * (double)r->gen;
    case PH_PREFILL: return (double)r->batch * (double)r->prompt;
    case PH_DECODE: return (double)r->batch;
    default: return 0;
    }
}

/* One copy on device dev of one: its device power (idle included), latency, the request it ran. */
static int run_copy(struct wcase *c, struct hw_system *one, int dev, int threads, int tp, const struct wl_model *m,
                    const struct sw_stack *sw, double *dev_W, double *shared_W, double *lat_s, struct eval_req *r,
                    struct dse_err *e)
{
    const struct hw_mem *mm = &one->dev[dev].mem[one->dev[dev].n_mem - 1];
    *shared_W = 0;
    int rc;
    if (c->is_kernel && tp > 1) {
        snprintf(c->reason, sizeof c->reason, "a kernel over %d devices: kernels run on one", tp);
        return DSE_OK;
    }
    if (c->is_kernel) {
        struct wl_graph g;
        double ms = 0, mJ = 0;
        if ((rc = vk_graph(&c->k, &g, e)))
            return rc;
        /* the devices' own energy: the enclosure is added by the case's scope */
        struct hw_enclosure en = one->encl;
        one->encl.present = 0;
        rc = vk_predict(&c->k, &g, one, dev, FID_ANALYTICAL, threads, &ms, &mJ, e);
        one->encl = en;
        wl_graph_free(&g);
        if (rc == DSE_EINPUT) { /* the device lacks the kernel's precision: a reason, not an error */
            dse_strlcpy(c->reason, e->msg, sizeof c->reason);
            dse_err_clear(e);
            return DSE_OK;
        }
        if (rc)
            return rc;
        *lat_s = ms * 1e-3;
        *dev_W = mJ / ms - others_idle_W(one, dev);
        memset(r, 0, sizeof *r);
        return DSE_OK;
    }
    struct pcase p;
    memset(&p, 0, sizeof p);
    dse_strlcpy(p.id, c->id, sizeof p.id);
    dse_strlcpy(p.file, c->file, sizeof p.file);
    dse_strlcpy(p.precision, c->precision, sizeof p.precision);
    p.phase = c->phase;
    p.batch = c->batch;
    p.prompt = c->prompt;
    p.gen = c->gen;
    p.tp = tp;
    p.metric = PM_LATENCY; /* the run of the case's own phase (pcase_eval) */
    struct eval_result res;
    rc = pcase_eval(&p, one, dev, threads, m, sw, FID_ANALYTICAL, r, &res, e);
    if (!rc && !res.feasible)
        dse_strlcpy(c->reason, res.reason, sizeof c->reason);
    else if (!rc) {
        *dev_W = res.dev_power_W[dev]; /* one device's, each of a tensor-parallel group alike */
        *lat_s = res.t.latency_s;
        if (mm->shared >= 0 && *lat_s > 0) /* main memory the system shares: its traffic's energy */
            *shared_W = res.t.main_bytes * mm->energy_J_per_byte / *lat_s;
    }
    eval_result_free(&res);
    return rc;
}

int wcase_predict(struct wcase *c, const struct hw_system *sys, const struct wl_model *m, const struct sw_stack *sw,
                  struct dse_err *e)
{
    int dev = eval_default_device(sys), threads = 0, rc = DSE_OK;
    c->ok = 0;
    c->reason[0] = '\0';
    c->perf_predicted = NAN;
    if (c->phase == PH_TRAIN) {
        snprintf(c->reason, sizeof c->reason, "a training step's power: not predicted by this corpus yet (the "
                 "multi-device corpus holds training cases)");
        return DSE_OK;
    }
    int topo = sys->topo.n_level > 0 && sys->topo.dev == dev;
    long long ntopo = topo ? hw_topo_devices(sys) : 1, copies = c->instances;
    if ((c->scope == WS_CORES || c->scope == WS_MODULE) && c->count > 1) {
        snprintf(c->reason, sizeof c->reason, "scope %s of %lld devices: a module's rails are measured one module at a "
                 "time", wscope_names[c->scope], c->count);
        return DSE_OK;
    }
    /* devices one instance spans: count devices run `instances` copies of the model, each tensor-parallel
     * over count / instances of them (a device scope's instances share one device when count is 1) */
    long long span = 1;
    if (c->count > 1 && !c->idle) {
        if (c->count % c->instances) {
            snprintf(c->reason, sizeof c->reason, "%lld instances on %lld devices: not an equal share each",
                     c->instances, c->count);
            return DSE_OK;
        }
        span = c->count / c->instances;
    }
    if (c->scope == WS_SYSTEM && c->count > 1 && (!topo || c->count > ntopo)) {
        snprintf(c->reason, sizeof c->reason, "a server of %lld devices: %s holds %lld with its hosts (one host per "
                 "card), so the server's hosts are not described", c->count, sys->name, ntopo);
        return DSE_OK;
    }
    if (span > 1 && (!topo || span > ntopo)) {
        snprintf(c->reason, sizeof c->reason, "%lld devices at once under one model (tensor-parallel): %s has no "
                 "topology of that many devices to run the layout on (a system hwdesc, e.g. nvidia-dgx-h100, has)",
                 span, sys->name);
        return DSE_OK;
    }
    struct hw_system *one = malloc(sizeof *one);
    if (!one)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    *one = *sys;
    if (apply_mode(c, one, dev))
        goto out;
    if (sw && !c->idle && pass_check_target(sw, &one->dev[dev], e)) {
        dse_strlcpy(c->reason, e->msg, sizeof c->reason);
        dse_err_clear(e);
        goto out;
    }
    /* Copies of the workload at once: on one device, each on its share; on a system's devices, one each (or
     * one per tensor-parallel group: a copy of the system resized to the group runs it). */
    int shared = c->count == 1;
    if (shared && c->instances > 1 && !c->idle)
        pcase_share_device(one, dev, c->instances, &threads);
    if (span > 1 && vcase_resize(one, 1, span, c->reason, sizeof c->reason))
        goto out;
    double idle = one->dev[dev].idle_W, dev_W = idle, shared_W = 0, lat = 0;
    struct eval_req r;
    memset(&r, 0, sizeof r);
    if (!c->idle) {
        if ((rc = run_copy(c, one, dev, threads, (int)span, m, sw, &dev_W, &shared_W, &lat, &r, e)) || c->reason[0])
            goto out;
    }
    /* the device's power: its idle once, each copy's dynamic power on top */
    double busy_W = shared ? idle + (double)copies * (dev_W - idle) : dev_W;
    double P = busy_W, others = others_idle_W(one, dev);
    switch (c->scope) {
    case WS_CORES: P = others + busy_W - (double)copies * shared_W; break;
    case WS_MODULE: P = others + busy_W + one->encl.base_W; break;
    case WS_DEVICE: P = (double)c->count * busy_W; break; /* the count devices' board power, summed */
    case WS_SYSTEM: {
        long long n_busy = c->idle ? 0 : shared ? 1 : c->count;
        double devs = others + (double)n_busy * busy_W + (double)(ntopo - n_busy) * idle;
        P = hw_input_W(one, hw_enclosures(one, (double)ntopo), devs, others + (double)ntopo * idle);
        break;
    }
    default: break;
    }
    double inferences = c->is_kernel ? 0 : (double)copies * (double)r.batch, tokens = (double)copies * tokens_of(&r);
    switch (c->metric) {
    case WM_POWER: c->predicted = P; break;
    case WM_J_INFERENCE: c->predicted = inferences > 0 ? P * lat / inferences : NAN; break;
    default:
        if (!(tokens > 0)) {
            snprintf(c->reason, sizeof c->reason, "energy per token of a workload without tokens");
            goto out;
        }
        c->predicted = P * lat / tokens;
        break;
    }
    if (lat > 0) {
        switch (c->perf_metric) {
        case PM_THROUGHPUT: c->perf_predicted = inferences / lat; break;
        case PM_TOKENS: c->perf_predicted = tokens / lat; break;
        case PM_LATENCY: c->perf_predicted = lat * 1e3; break;
        case PM_TFLOPS: /* a GEMM's 2 M N K, as its sources count */
            if (c->k.type == VK_GEMM)
                c->perf_predicted = 2.0 * (double)c->k.M * (double)c->k.N * (double)c->k.K / lat / 1e12;
            break;
        default: break;
        }
    }
    c->error = c->predicted / c->value - 1;
    c->ok = isfinite(c->error);
    if (!c->ok)
        snprintf(c->reason, sizeof c->reason, "no finite prediction");
out:
    free(one);
    return rc;
}
