/* sweep_spec.c -- reading and checking a sweep spec (sweeps/README.md). Paths in a spec are taken
 * as given, else relative to the directory above the spec's folder (the repository root for
 * sweeps/x.json), else under the installed data directory; a bare name NAME means
 * hwdesc/NAME.json or models/NAME.json.
 *
 * Sizes are checked here, before anything is allocated by them: the space (the product of the
 * value counts, at most 16 axes x 1024 values = 2^160, so counted in double and exactly in 64 bits
 * up to SW_MAX_POINTS), the hardware variants and the NSGA-II plan. A thing given twice (a system,
 * a workload, an axis value, an objective) is refused: its results would be stored twice under
 * two labels, or under one label for two different things. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "jsonu.h"
#include "sweep.h"


static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* A shipped name: NAME or DIR/NAME, NAME of letters, digits, '_', '-' and '.' not starting with '.'. */
static int shipped_name(const char *dir, const char *name)
{
    size_t dl = strlen(dir);
    if (!strncmp(name, dir, dl) && name[dl] == '/')
        name += dl + 1;
    if (!name[0] || name[0] == '.')
        return 0;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
              *c == '-' || *c == '.'))
            return 0;
    return 1;
}

/* Resolves name (a path or a bare name in dir) against the spec's location; with
 * SW_LOAD_SHIPPED_ONLY, only a shipped name under the current directory. Returns 0, -1 when there is
 * no such file, -2 when name does not fit in out (never cut: a prefix names another file). A candidate
 * that does not fit is not looked for. */
static int resolve(const char *spec_path, const char *dir, const char *name, const char *const *exts, char *out,
                   size_t n, unsigned flags);

/* The refusal of resolve()'s answer rc for name, what ("workload", "hwdesc", ...) in j. */
static int unresolved(struct ju *j, int rc, const char *what, const char *name, const char *hint)
{
    if (rc == -2)
        return ju_fail(j, "a path of %zu bytes: dse takes paths of at most %d bytes", strlen(name), DSE_PATH_LEN - 1);
    return ju_fail(j, "no such %s '%s' (%s)", what, name, hint);
}

static int resolve(const char *spec_path, const char *dir, const char *name, const char *const *exts, char *out,
                   size_t n, unsigned flags)
{
#define FITS(...) (snprintf(out, n, __VA_ARGS__) < (int)n)
    char root[DSE_PATH_LEN + 4];
    if (strlen(name) >= n)
        return -2;
    if (flags & SW_LOAD_SHIPPED_ONLY) {
        if (!shipped_name(dir, name))
            return -1;
        snprintf(out, n, "%s", name);
        if (strchr(name, '/') && is_file(out))
            return 0;
        for (int k = 0; exts[k] && !strchr(name, '/'); k++)
            if (FITS("%s/%s%s", dir, name, exts[k]) && is_file(out))
                return 0;
        return -1;
    }
    const char *slash = strrchr(spec_path, '/');
    if (slash) { /* the directory above the spec's folder */
        snprintf(root, sizeof root, "%.*s/..", (int)(slash - spec_path), spec_path);
    } else {
        snprintf(root, sizeof root, "..");
    }
    const char *bases[2 + JU_MAX_DATA_DIRS] = {".", root};
    char dirs[JU_DATA_DIRS_BYTES];
    int nb = 2 + ju_data_dirs(bases + 2, JU_MAX_DATA_DIRS, dirs, sizeof dirs);
    for (int b = 0; b < nb; b++) {
        if ((b == 0 ? FITS("%s", name) : FITS("%s/%s", bases[b], name)) && is_file(out))
            return 0;
        for (int k = 0; exts[k] && !strchr(name, '/'); k++)
            if (FITS("%s/%s/%s%s", bases[b], dir, name, exts[k]) && is_file(out))
                return 0;
    }
#undef FITS
    snprintf(out, n, "%s", name);
    struct stat st;
    if (stat(name, &st) == 0) /* it exists but is no regular file (/dev/zero, a directory): the loader says so */
        return 0;
    return -1;
}

/* A workload's "serving" block: the requests (drawn now, at rate 1), the scheduler, the SLOs. */
static int load_serving(struct ju *j, const cJSON *o, const char *spec_path, unsigned flags, struct sw_workload *w)
{
    static const char *const keys[] = {"rate",  "requests",  "seed",     "arrival",   "burstiness",         "lengths",
                                       "prompt_dist", "output_dist", "scheduler", "max_batch", "max_batched_tokens",
                                       "block_size",  "mem_util",  "slo",      "preemption", "prefill_replicas",
                                       "admission",   "prefix_tokens", "prefix_share", "too_long", "note", NULL};
    static const char *const arrivals[] = {"poisson", "gamma", "offline", "constant", NULL};
    static const enum serve_arrival akind[] = {SA_POISSON, SA_GAMMA, SA_OFFLINE, SA_CONSTANT};
    struct sw_serving *sv = &w->serving;
    size_t old = ju_key(j, "serving");
    int rc, a = 0, sc = SCHED_CONTINUOUS;
    long long v;
    double cv = 2;
    char buf[DSE_PATH_LEN];
    struct serve_dist pd = {SD_FIXED, 512, 0}, od = {SD_FIXED, 128, 0};
    struct serve_req *lengths = NULL;
    int64_t nl = 0;
    memset(sv, 0, sizeof *sv);
    sv->on = 1;
    sv->rate = 1;
    sv->mem_util = 0; /* the stack's memory.utilization, else all the reserve leaves (sweep.c) */
    if ((rc = ju_object(j, o, keys)) || (rc = ju_enum(j, o, "arrival", JU_OPT, arrivals, &a)) ||
        (rc = ju_enum(j, o, "scheduler", JU_OPT, serve_sched_names, &sc)) ||
        (rc = ju_num(j, o, "rate", akind[a] == SA_OFFLINE ? JU_OPT | JU_POS : JU_POS, 1e9, &sv->rate)) ||
        (rc = ju_num(j, o, "burstiness", JU_OPT | JU_POS, 100, &cv)) ||
        (rc = ju_num(j, o, "mem_util", JU_OPT | JU_POS, 1, &sv->mem_util)))
        goto out;
    sv->cfg.sched = (enum serve_sched)sc;
    v = 1000;
    if ((rc = ju_int(j, o, "requests", JU_OPT, 1, 1000000, &v)))
        goto out;
    sv->n = v;
    long long seed = 1, mb = 0, mbt = 0, bs = 0;
    if ((rc = ju_int(j, o, "seed", JU_OPT, 0, 4294967295LL, &seed)) || (rc = ju_int(j, o, "max_batch", JU_OPT, 1, 1 << 20, &mb)) ||
        (rc = ju_int(j, o, "max_batched_tokens", JU_OPT, 1, 1 << 22, &mbt)) ||
        (rc = ju_int(j, o, "block_size", JU_OPT, 1, 1 << 16, &bs)))
        goto out;
    int pk = 0;
    long long prr = 0;
    if ((rc = ju_enum(j, o, "preemption", JU_OPT, serve_preempt_names, &pk)) ||
        (rc = ju_int(j, o, "prefill_replicas", JU_OPT, 1, 4096, &prr)))
        goto out;
    sv->cfg.preempt = (enum serve_preempt)pk;
    int ak = 0, tlm = TOO_LONG_ERROR;
    if ((rc = ju_enum(j, o, "admission", JU_OPT, serve_admit_names, &ak)) ||
        (rc = ju_enum(j, o, "too_long", JU_OPT, serve_too_long_names, &tlm)))
        goto out;
    sv->cfg.admit = (enum serve_admit)ak;
    long long pt = 0;
    if ((rc = ju_int(j, o, "prefix_tokens", JU_OPT, 1, 10000000, &pt)) ||
        (rc = ju_num(j, o, "prefix_share", JU_OPT | JU_POS, 1, &sv->cfg.prefix_share)))
        goto out;
    sv->cfg.prefix_tokens = pt;
    sv->cfg.prefill_replicas = (int)prr;
    sv->cfg.max_batch = (int)mb;
    sv->cfg.max_batched_tokens = mbt;
    sv->cfg.block_tokens = sv->cfg.sched == SCHED_STATIC ? 1 : (int)bs;
    const cJSON *slo = cJSON_GetObjectItemCaseSensitive(o, "slo");
    if (slo) {
        static const char *const sk[] = {"ttft_ms", "tpot_ms", "e2e_ms", "note", NULL};
        double t[3] = {0, 0, 0};
        size_t o2 = ju_key(j, "slo");
        rc = ju_object(j, slo, sk);
        for (int i = 0; i < 3 && !rc; i++)
            rc = ju_num(j, slo, sk[i], JU_OPT | JU_POS, 1e9, &t[i]);
        ju_pop(j, o2);
        if (rc)
            goto out;
        sv->cfg.slo_ttft_s = t[0] / 1e3;
        sv->cfg.slo_tpot_s = t[1] / 1e3;
        sv->cfg.slo_e2e_s = t[2] / 1e3;
    }
    const char *dk[2] = {"prompt_dist", "output_dist"};
    struct serve_dist *dd[2] = {&pd, &od};
    int have_len = cJSON_GetObjectItemCaseSensitive(o, "lengths") != NULL;
    for (int i = 0; i < 2; i++) {
        if (!cJSON_GetObjectItemCaseSensitive(o, dk[i]))
            continue;
        size_t o2 = ju_key(j, dk[i]);
        if (have_len)
            rc = ju_fail(j, "\"lengths\" draws both lengths from its file: give no %s", dk[i]);
        else if (!(rc = ju_str(j, o, dk[i], 0, buf, sizeof buf)) && serve_dist_parse(dk[i], buf, dd[i], j->e))
            rc = ju_fail(j, "expected fixed:N, uniform:A-B or normal:MEAN,SD, got '%s'", buf);
        ju_pop(j, o2);
        if (rc)
            goto out;
    }
    if (have_len) {
        static const char *const ext[] = {".csv", NULL};
        char path[DSE_PATH_LEN];
        if ((rc = ju_str(j, o, "lengths", 0, buf, sizeof buf)))
            goto out;
        if ((rc = resolve(spec_path, "models/traces", buf, ext, path, sizeof path, flags))) {
            size_t o2 = ju_key(j, "lengths");
            rc = unresolved(j, rc, "trace", buf, "a path, or a name in models/traces/");
            ju_pop(j, o2);
            goto out;
        }
        if ((rc = serve_trace_load(path, 10000000, &lengths, &nl, j->e)))
            goto out;
    }
    if ((rc = serve_trace_make(akind[a], 1, cv, sv->n, &pd, &od, lengths, nl, (unsigned long)seed, &sv->unit, j->e)))
        goto out;
    /* every request within the model's context, or skipped or truncated ("too_long", as dse serve --too-long) */
    const struct wl_transformer *tf = &w->model.tf;
    int64_t first, offered = sv->n;
    sv->too_long_mode = (enum serve_too_long)tlm;
    serve_fit_context(sv->unit, &sv->n, tf->max_pos < 2 ? 2 : tf->max_pos, sv->too_long_mode, &sv->too_long, &first);
    if (sv->too_long && tlm == TOO_LONG_ERROR) {
        rc = ju_fail(j, "%lld of %lld requests exceed %s %lld of %s, the first request %lld (prompt %d + output %d "
                     "tokens): \"too_long\": \"skip\" rejects them, \"truncate\" cuts their prompts", (long long)sv->too_long,
                     (long long)offered, tf->max_pos_key, (long long)tf->max_pos, w->model.name, (long long)first + 1,
                     sv->unit[first].prompt, sv->unit[first].output);
        goto out;
    }
    if (!sv->n) {
        rc = ju_fail(j, "all %lld requests exceed %s %lld of %s: none left to serve after \"too_long\": \"skip\"",
                     (long long)offered, tf->max_pos_key, (long long)tf->max_pos, w->model.name);
        goto out;
    }
    for (int64_t i = 0; i < sv->n; i++)
        if (sv->unit[i].prompt > sv->longest)
            sv->longest = sv->unit[i].prompt;
    if (sv->cfg.prefix_tokens > 0) {
        size_t o2 = ju_key(j, "prefix_tokens");
        if (serve_prefix_check(&sv->cfg, sv->unit, sv->n, NULL, NULL, j->e)) {
            char why[sizeof j->e->msg];
            dse_strlcpy(why, j->e->msg, sizeof why);
            rc = ju_fail(j, "%s", why);
        }
        ju_pop(j, o2);
        if (rc)
            goto out;
    }
out:
    free(lengths);
    ju_pop(j, old);
    return rc;
}

static int load_workload(struct ju *j, const cJSON *o, const char *spec_path, unsigned flags, struct sw_workload *w)
{
    static const char *const keys[] = {"model", "phase", "prompt", "generate", "optimizer", "zero", "recompute",
                                       "serving", "dims", "unknown_ops", "note", NULL};
    static const char *const exts[] = {".json", ".csv", ".onnx", NULL};
    char name[256], ph[32];
    int rc;
    long long v;
    struct dse_err *e = j->e;
    if ((rc = ju_object(j, o, keys)) || (rc = ju_str(j, o, "model", 0, name, sizeof name)))
        return rc;
    if ((rc = resolve(spec_path, "models", name, exts, w->path, sizeof w->path, flags))) {
        size_t old = ju_key(j, "model");
        rc = unresolved(j, rc, "workload", name, "a path, or a name in models/");
        ju_pop(j, old);
        return rc;
    }
    struct wl_load_opt lo; /* an ONNX model's bindings: "dims": {"NAME": N}, "unknown_ops": "error" | "memory" */
    memset(&lo, 0, sizeof lo);
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(o, "dims");
    if (dims) {
        size_t old = ju_key(j, "dims");
        if (!cJSON_IsObject(dims))
            return ju_fail(j, "expected an object of NAME: N bindings");
        for (const cJSON *it = dims->child; it; it = it->next) {
            char one[WL_NAME_LEN + 32];
            size_t o2 = ju_key(j, it->string);
            if (!cJSON_IsNumber(it) || strlen(it->string) >= WL_NAME_LEN || !(it->valuedouble >= 1) ||
                it->valuedouble > WL_MAX_DIM || it->valuedouble != (double)(long long)it->valuedouble)
                return ju_fail(j, "expected a positive integer up to %g", WL_MAX_DIM);
            snprintf(one, sizeof one, "%s=%.0f", it->string, it->valuedouble);
            if (wl_load_opt_dim(&lo, one, e))
                return ju_fail(j, "%s", e->msg);
            ju_pop(j, o2);
        }
        ju_pop(j, old);
    }
    static const char *const unknown_ops[] = {"error", "memory", NULL};
    int uo = 0;
    if ((rc = ju_enum(j, o, "unknown_ops", JU_OPT, unknown_ops, &uo)))
        return rc;
    lo.unknown_memory = uo == 1;
    size_t pl = strlen(w->path);
    int onnx = pl > 5 && !strcasecmp(w->path + pl - 5, ".onnx");
    if ((rc = wl_load_file_opt(w->path, &lo, &w->model, e)))
        return rc;
    char *text;
    size_t len;
    if ((rc = ju_read_file(w->path, onnx ? (2u << 30) - 1 : JU_MAX_FILE_BYTES, &text, &len, e)))
        return rc;
    w->hash = dse_fnv1a64(text, len);
    free(text);
    int lm = wl_model_is_lm(&w->model);
    w->phase = lm ? PH_GENERATE : PH_NONE;
    if (cJSON_GetObjectItemCaseSensitive(o, "phase")) {
        if ((rc = ju_str(j, o, "phase", 0, ph, sizeof ph)))
            return rc;
        int p = ju_lookup(wl_phase_names, ph);
        if (p <= 0 || (!lm && p != PH_TRAIN)) {
            size_t old = ju_key(j, "phase");
            rc = ju_fail(j, lm || p <= 0 ? "expected prefill, decode, generate or train, got '%s'"
                                         : "'%s': inference phases apply to decoder language models only (any model "
                                           "takes train)",
                         ph);
            ju_pop(j, old);
            return rc;
        }
        w->phase = (enum wl_phase)p;
    }
    v = lm ? 512 : 128;
    if ((rc = ju_int(j, o, "prompt", JU_OPT, 1, 10000000, &v)))
        return rc;
    w->prompt = v;
    v = 128;
    if ((rc = ju_int(j, o, "generate", JU_OPT, 1, 100000, &v)))
        return rc;
    w->gen = v;
    /* a training step's configuration (eval.h: struct train_cfg), refused for other phases */
    int k = 0;
    const char *tk[] = {"optimizer", "zero", "recompute"};
    for (int i = 0; i < 3; i++)
        if (cJSON_GetObjectItemCaseSensitive(o, tk[i]) && w->phase != PH_TRAIN) {
            size_t old = ju_key(j, tk[i]);
            rc = ju_fail(j, "configures a training step: add \"phase\": \"train\"");
            ju_pop(j, old);
            return rc;
        }
    if ((rc = ju_enum(j, o, "optimizer", JU_OPT, train_opt_names, &k)))
        return rc;
    w->train.optimizer = (enum train_opt)k;
    k = 0;
    if ((rc = ju_enum(j, o, "recompute", JU_OPT, train_recompute_names, &k)))
        return rc;
    w->train.recompute = (enum train_recompute)k;
    v = 0;
    if ((rc = ju_int(j, o, "zero", JU_OPT, 0, 3, &v)))
        return rc;
    w->train.zero = (int)v;
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(o, "serving");
    if (sv) {
        static const char *const not_with[] = {"phase", "prompt", "generate", NULL};
        for (int i = 0; not_with[i]; i++)
            if (cJSON_GetObjectItemCaseSensitive(o, not_with[i])) {
                size_t old = ju_key(j, not_with[i]);
                rc = ju_fail(j, "a serving workload's lengths come from its \"serving\" block: give no %s", not_with[i]);
                ju_pop(j, old);
                return rc;
            }
        if (!lm) {
            size_t old = ju_key(j, "serving");
            rc = ju_fail(j, "serving simulates decoder language models; %s has no prefill and decode phases",
                         w->model.name);
            ju_pop(j, old);
            return rc;
        }
        if ((rc = load_serving(j, sv, spec_path, flags, w)))
            return rc;
        w->phase = PH_DECODE; /* the graphs a point's layout is checked with: a decode step over 1 token */
        w->prompt = 1;
    }
    return DSE_OK;
}

/* Axes that name hwdesc fields of the system rather than of a device: the operating point (dvfs_mode: the
 * top-level "mode") and the thermal model's conditions (ambient_C, cooling, duration_s: thermal.X). The
 * hwdesc path an alias sets, or NULL when name is none. */
static const char *hw_alias(const char *name)
{
    static const char *const names[] = {"dvfs_mode", "ambient_C", "cooling", "duration_s", NULL};
    static const char *const paths[] = {"mode", "thermal.ambient_C", "thermal.cooling", "thermal.duration_s"};
    int i = ju_lookup(names, name);
    return i >= 0 ? paths[i] : NULL;
}

static int axis_kind(const char *name, enum sw_axis_kind *k)
{
    static const char *const names[] = {"precision", "batch", "placement", "memory_GB",    "power_W",   "fidelity",
                                        "software",  "tp",    "pp",        "dp",           "microbatches", "recompute",
                                        "ep",        "cp",    "scheduler", "max_batched_tokens", "block_size", "rate",
                                        "prompt",    "generate", NULL};
    static const enum sw_axis_kind kinds[] = {AX_PRECISION, AX_BATCH, AX_PLACEMENT, AX_MEMORY, AX_POWER, AX_FIDELITY,
                                              AX_SOFTWARE,  AX_TP,    AX_PP,        AX_DP,     AX_MICRO, AX_RECOMPUTE,
                                              AX_EP,        AX_CP,    AX_SCHED,     AX_MBT,    AX_BLOCK, AX_RATE,
                                              AX_PROMPT,    AX_GENERATE};
    int i = ju_lookup(names, name);
    if (i >= 0) {
        *k = kinds[i];
        return 0;
    }
    if ((!strncmp(name, "hw:", 3) && name[3]) || hw_alias(name)) { /* dvfs_mode: hw:mode; the thermal conditions */
        *k = AX_HW;
        return 0;
    }
    return -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The canonical form of a placement DEVICE,TYPE=DEVICE2,...: the overrides sorted, so two orders of
 * the same overrides compare equal. An operator type placed twice is refused (the last would win
 * silently). Returns 0, or -1 with why. */
static int placement_key(const char *s, char *key, size_t n, char *why, size_t wn)
{
    char buf[sizeof ((struct sw_value *)0)->s], *tok[sizeof buf / 2 + 1], *save = NULL;
    int k = 0;
    dse_strlcpy(buf, s, sizeof buf);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        tok[k++] = t; /* a token is at least one character and a comma: at most sizeof buf / 2 */
    if (k > 1)
        qsort(tok + 1, (size_t)k - 1, sizeof *tok, cmp_str);
    for (int i = 2; i < k; i++) { /* sorted: the overrides of one type are adjacent */
        size_t l = strcspn(tok[i], "=");
        if (tok[i][l] == '=' && !strncmp(tok[i - 1], tok[i], l + 1)) {
            snprintf(why, wn, "operator type '%.*s' placed twice", (int)l, tok[i]);
            return -1;
        }
    }
    key[0] = '\0';
    for (int i = 0; i < k; i++)
        snprintf(key + strlen(key), n - strlen(key), "%s%s", i ? "," : "", tok[i]);
    return 0;
}

/* The index in sp->stack of the stack `name` (a path, a name in software/, or none), resolved near
 * file (the spec's or a hwdesc's path), loading it the first time; -1 with the error in j. */
static int add_stack(struct ju *j, struct sweep_spec *sp, const char *name, const char *file, unsigned flags)
{
    char path[DSE_PATH_LEN] = "", base[DSE_PATH_LEN];
    struct dse_err pe;
    const char *ver = ""; /* NAME@VERSION: a release of the stack */
    if (strcmp(name, "none")) {
        static const char *const ext[] = {".json", NULL};
        if (pass_split_version(name, base, sizeof base, &ver, &pe))
            return ju_fail(j, "%s", pe.msg), -1;
        if (flags & SW_LOAD_SHIPPED_ONLY) {
            int r = resolve(file, "software", base, ext, path, sizeof path, flags);
            if (r)
                return unresolved(j, r, "shipped software stack", base, "a name in software/"), -1;
        } else if (pass_resolve(base, file, path, sizeof path, &pe)) {
            return ju_fail(j, "%s", pe.msg), -1;
        }
    }
    for (int k = 0; k < sp->n_stacks; k++) /* the same file and release (a bare name: its default) */
        if ((!strcmp(sp->stack[k].path, path) &&
             !strcmp(sp->stack[k].version, *ver ? ver : sp->stack[k].default_version)) ||
            (!path[0] && !strcmp(sp->stack[k].name, "none")))
            return k;
    if (sp->n_stacks >= SW_MAX_STACKS)
        return ju_fail(j, "more than %d software stacks (axis values and devices' defaults)", SW_MAX_STACKS), -1;
    struct sw_stack *s = &sp->stack[sp->n_stacks];
    if (!path[0]) {
        pass_none(s);
        sp->stack_hash[sp->n_stacks] = 0;
        return sp->n_stacks++;
    }
    char *buf;
    size_t len;
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, j->e);
    if (!rc) {
        rc = pass_load_buf(buf, len, path, s, j->e);
        if (!rc && *ver && pass_select_version(s, ver, &pe))
            rc = ju_fail(j, "%s", pe.msg);
        sp->stack_hash[sp->n_stacks] = dse_fnv1a64(buf, len); /* the file's (a release is the spec's to name) */
        free(buf);
    }
    return rc ? -1 : sp->n_stacks++;
}

/* The stacks a spec reaches: its software axis's values, its "software" (then no axis), and every
 * device's default (hwdesc "software"), each loaded once before anything is evaluated. */
static int load_stacks(struct ju *j, const cJSON *root, const char *path, unsigned flags, struct sweep_spec *sp)
{
    sp->sw_fixed = -1;
    for (int a = 0; a < sp->n_axes; a++) {
        struct sw_axis *ax = &sp->axes[a];
        if (ax->kind != AX_SOFTWARE)
            continue;
        size_t old = ju_key(j, "axes");
        ju_key(j, "software");
        for (int i = 0; i < ax->n; i++) {
            size_t o2 = ju_idx(j, i);
            if ((ax->v[i].ref = add_stack(j, sp, ax->v[i].s, path, flags)) < 0)
                return j->e->code ? j->e->code : DSE_EINPUT;
            for (int k = 0; k < i; k++)
                if (ax->v[k].ref == ax->v[i].ref)
                    return ju_fail(j, "stack %s given twice (as [%d] %s)", ax->v[i].s, k, ax->v[k].s);
            ju_pop(j, o2);
        }
        ju_pop(j, old);
    }
    const cJSON *sw = cJSON_GetObjectItemCaseSensitive(root, "software");
    if (sw) {
        char name[512];
        int rc = ju_str(j, root, "software", 0, name, sizeof name);
        if (rc)
            return rc;
        size_t old = ju_key(j, "software");
        for (int a = 0; a < sp->n_axes; a++)
            if (sp->axes[a].kind == AX_SOFTWARE)
                return ju_fail(j, "give the stack here or as an axis, not both");
        if ((sp->sw_fixed = add_stack(j, sp, name, path, flags)) < 0)
            return j->e->code ? j->e->code : DSE_EINPUT;
        ju_pop(j, old);
    }
    int train = 0;
    for (int w = 0; w < sp->n_workloads; w++)
        train |= sp->wl[w].phase == PH_TRAIN;
    for (int s = 0; s < sp->n_systems; s++) { /* devices' defaults, resolved beside their hwdesc */
        cJSON *sys = cJSON_Parse(sp->system_text[s]);
        const cJSON *devs = sys ? cJSON_GetObjectItemCaseSensitive(sys, "devices") : NULL, *d;
        int k = 0, rc = DSE_OK;
        for (int i = 0; i < HW_MAX_DEVICES; i++)
            sp->dev_stack[s][i] = -1;
        cJSON_ArrayForEach(d, devs)
        {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "software");
            if (k < HW_MAX_DEVICES && cJSON_IsString(n) && n->valuestring[0]) {
                size_t old = ju_key(j, "system");
                if ((sp->dev_stack[s][k] = add_stack(j, sp, n->valuestring, sp->system_path[s], flags)) < 0)
                    rc = j->e->code ? j->e->code : DSE_EINPUT;
                /* a training spec: a device whose own stack is inference-only trains with its class's
                 * trainer (pass_train_default), as dse eval --phase train does */
                int cls = ju_lookup(hw_class_names, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "class"))
                                                        ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(d, "class"))
                                                        : "");
                if (!rc && train && !sp->stack[sp->dev_stack[s][k]].trains && cls >= 0 &&
                    (sp->dev_stack[s][k] = add_stack(j, sp, pass_train_default(cls), sp->system_path[s], flags)) < 0)
                    rc = j->e->code ? j->e->code : DSE_EINPUT;
                ju_pop(j, old);
            }
            k++;
            if (rc)
                break;
        }
        cJSON_Delete(sys);
        if (rc)
            return rc;
    }
    return DSE_OK;
}

static int load_axis(struct ju *j, const cJSON *arr, const char *name, struct sw_axis *a)
{
    int n = cJSON_GetArraySize(arr), rc = DSE_OK;
    if (!cJSON_IsArray(arr) || n < 1 || n > SW_MAX_VALUES)
        return ju_fail(j, "expected an array of 1 to %d values", SW_MAX_VALUES);
    a->v = calloc((size_t)n, sizeof *a->v);
    /* What makes two values the same: the text, or for precisions and placements a canonical form
     * (w4a16 is w=int4,a=fp16,kv=fp16; npu,softmax=cpu,attention=cpu is npu,attention=cpu,softmax=cpu). */
    char(*key)[sizeof a->v->s] = calloc((size_t)n, sizeof *key);
    if (!a->v || !key) {
        free(key);
        return dse_err_set(j->e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    if (strlen(name) >= sizeof a->name || (a->kind == AX_HW && strlen(name + 3) >= sizeof a->path)) {
        free(key);
        return ju_fail(j, "an axis name of %zu characters: at most %zu", strlen(name),
                       (a->kind == AX_HW ? sizeof a->path + 2 : sizeof a->name - 1));
    }
    a->n = n;
    a->numeric = 1;
    dse_strlcpy(a->name, name, sizeof a->name);
    if (a->kind == AX_HW) /* an alias names a system-level field (hw_alias) */
        dse_strlcpy(a->path, hw_alias(name) ? hw_alias(name) : name + 3, sizeof a->path);
    for (int i = 0; i < n && !rc; i++) {
        const cJSON *x = cJSON_GetArrayItem(arr, i);
        struct sw_value *v = &a->v[i];
        size_t old = ju_idx(j, i);
        if (cJSON_IsNumber(x)) {
            v->is_num = 1;
            v->num = x->valuedouble;
            /* the shortest form that reads back as the same double: 102.4, not 102.40000000000001 */
            ju_shortest(v->s, sizeof v->s, v->num);
            /* The range first: casting a double outside long long's range is undefined. */
            if (a->kind == AX_BATCH && !(v->num >= 1 && v->num <= 1000000 && v->num == (double)(long long)v->num))
                rc = ju_fail(j, "expected an integer batch size in [1, 1000000], got %.17g", v->num);
            else if ((a->kind == AX_TP || a->kind == AX_PP || a->kind == AX_DP || a->kind == AX_MICRO || a->kind == AX_EP || a->kind == AX_CP) &&
                     !(v->num >= 1 && v->num <= (a->kind == AX_MICRO ? 4096 : HW_MAX_TOPO_DEVICES) &&
                       v->num == (double)(long long)v->num))
                rc = ju_fail(j, "expected an integer in [1, %d] (%s), got %.17g",
                             a->kind == AX_MICRO ? 4096 : HW_MAX_TOPO_DEVICES, a->kind == AX_MICRO ? "micro-batches" : "devices",
                             v->num);
            else if ((a->kind == AX_MEMORY || a->kind == AX_POWER || a->kind == AX_RATE) && !(v->num > 0 && v->num < 1e9))
                rc = ju_fail(j, "expected a positive number below 1e9, got %.17g", v->num);
            else if ((a->kind == AX_PROMPT || a->kind == AX_GENERATE) &&
                     !(v->num >= 1 && v->num <= 10000000 && v->num == (double)(long long)v->num))
                rc = ju_fail(j, "expected an integer in [1, 10000000] (tokens), got %.17g", v->num);
            else if ((a->kind == AX_MBT || a->kind == AX_BLOCK) &&
                     !(v->num >= 1 && v->num <= (a->kind == AX_MBT ? 1 << 22 : 1 << 16) && v->num == (double)(long long)v->num))
                rc = ju_fail(j, "expected an integer in [1, %d] (tokens), got %.17g", a->kind == AX_MBT ? 1 << 22 : 1 << 16,
                             v->num);
            else if (a->kind == AX_PRECISION || a->kind == AX_PLACEMENT || a->kind == AX_FIDELITY ||
                     a->kind == AX_SOFTWARE || a->kind == AX_RECOMPUTE || a->kind == AX_SCHED)
                rc = ju_fail(j, "expected a string");
        } else if (cJSON_IsString(x) && x->valuestring[0] && strlen(x->valuestring) < sizeof v->s) {
            a->numeric = 0;
            dse_strlcpy(v->s, x->valuestring, sizeof v->s);
            if (a->kind == AX_BATCH || a->kind == AX_MEMORY || a->kind == AX_POWER || a->kind == AX_TP ||
                a->kind == AX_PP || a->kind == AX_DP || a->kind == AX_MICRO || a->kind == AX_EP || a->kind == AX_CP ||
                a->kind == AX_MBT || a->kind == AX_BLOCK || a->kind == AX_RATE || a->kind == AX_PROMPT ||
                a->kind == AX_GENERATE)
                rc = ju_fail(j, "expected a number, got \"%s\"", v->s);
            else if (a->kind == AX_SCHED && ju_lookup(serve_sched_names, v->s) < 0)
                rc = ju_fail(j, "expected static, continuous, chunked or inflight, got \"%s\"", v->s);
            else if (a->kind == AX_FIDELITY && ju_lookup(fidelity_names, v->s) < 0)
                rc = ju_fail(j, "expected analytical or cycle, got \"%s\"", v->s);
            else if (a->kind == AX_RECOMPUTE && ju_lookup(train_recompute_names, v->s) < 0)
                rc = ju_fail(j, "expected none, selective or full, got \"%s\"", v->s);
            else if (a->kind == AX_PRECISION) {
                struct prec_cfg pc;
                if (prec_parse(v->s, &pc, j->e))
                    rc = ju_fail(j, "%s", strstr(j->e->msg, "'") ? strstr(j->e->msg, "'") : j->e->msg);
                else
                    prec_format(&pc, key[i], sizeof key[i]);
            } else if (a->kind == AX_PLACEMENT) {
                char why[128];
                if (placement_key(v->s, key[i], sizeof key[i], why, sizeof why))
                    rc = ju_fail(j, "'%s': %s", v->s, why);
            }
        } else {
            rc = ju_fail(j, "expected a number or a non-empty string of at most %zu characters", sizeof v->s - 1);
        }
        if (!rc && !key[i][0])
            dse_strlcpy(key[i], v->s, sizeof key[i]);
        for (int k = 0; k < i && !rc; k++)
            if (!strcmp(key[k], key[i]))
                rc = strcmp(a->v[k].s, v->s) ? ju_fail(j, "value %s given twice (as [%d] %s)", v->s, k, a->v[k].s)
                                             : ju_fail(j, "value %s given twice", v->s);
        ju_pop(j, old);
    }
    free(key);
    return rc;
}

/* The label of a system or workload in its axis column: the file name without folder and extension. */
static void file_label(const char *path, char *out, size_t n)
{
    const char *base = strrchr(path, '/');
    dse_strlcpy(out, base ? base + 1 : path, n);
    char *dot = strrchr(out, '.');
    if (dot && dot != out)
        *dot = '\0';
}

static int add_list_axis(struct sweep_spec *sp, enum sw_axis_kind kind, const char *name, int n, int spec_pos,
                         char (*labels)[sizeof ((struct sw_value *)0)->s], struct dse_err *e)
{
    struct sw_axis *a = &sp->axes[sp->n_axes++];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    a->n = n;
    a->spec_pos = spec_pos;
    dse_strlcpy(a->name, name, sizeof a->name);
    a->v = calloc((size_t)n, sizeof *a->v);
    if (!a->v)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (int i = 0; i < n; i++)
        dse_strlcpy(a->v[i].s, labels[i], sizeof a->v[i].s);
    return DSE_OK;
}

/* The "name" of a hwdesc text, or "" (the loader reports a bad file later, in sweep_prepare). */
static void hwdesc_name(const char *text, char *out, size_t n)
{
    cJSON *r = cJSON_ParseWithLengthOpts(text, strlen(text), NULL, 0);
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(r, "name");
    dse_strlcpy(out, cJSON_IsString(nm) ? nm->valuestring : "", n);
    cJSON_Delete(r);
}

/* 1 when both paths name one file (the same canonical path). */
static int same_file(const char *a, const char *b)
{
    char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
    int same = ra && rb && !strcmp(ra, rb);
    free(ra);
    free(rb);
    return same;
}

/* Systems i and k (k < i) must differ as files, contents and hwdesc names, and in their labels. */
static int check_systems(struct ju *j, const struct sweep_spec *sp, const cJSON *sys,
                         char (*labels)[sizeof ((struct sw_value *)0)->s])
{
    char names[SW_MAX_SYSTEMS][128];
    for (int i = 0; i < sp->n_systems; i++) {
        hwdesc_name(sp->system_text[i], names[i], sizeof names[i]);
        file_label(sp->system_path[i], labels[i], sizeof labels[i]);
        for (int k = 0; k < i; k++) {
            const char *why = same_file(sp->system_path[i], sp->system_path[k])     ? "the same file"
                              : !strcmp(sp->system_text[i], sp->system_text[k])   ? "the same content"
                              : names[i][0] && !strcmp(names[i], names[k]) ? "the same hwdesc name"
                                                                                  : NULL;
            size_t old = ju_idx(j, i);
            int rc = DSE_OK;
            if (why)
                rc = ju_fail(j, "'%s' is the same system as system[%d] '%s' (%s): list it once",
                             cJSON_GetArrayItem(sys, i)->valuestring, k, cJSON_GetArrayItem(sys, k)->valuestring, why);
            else if (!strcmp(labels[i], labels[k]))
                rc = ju_fail(j, "'%s' and system[%d] '%s' would share the label '%s' in the system column: rename "
                                "one file",
                             sp->system_path[i], k, sp->system_path[k], labels[i]);
            ju_pop(j, old);
            if (rc)
                return rc;
        }
    }
    return DSE_OK;
}

/* Workloads: the same model (file or content) with the same phase, prompt and generated tokens is
 * given twice. One model with different settings is labelled with the settings that tell its
 * entries apart ("llama-3.2-1b prompt=2048"); two different models of one file name are refused. */
static int check_workloads(struct ju *j, const struct sweep_spec *sp, char (*labels)[sizeof ((struct sw_value *)0)->s])
{
    int nw = sp->n_workloads, same_model[SW_MAX_WORKLOADS][SW_MAX_WORKLOADS];
    for (int i = 0; i < nw; i++)
        file_label(sp->wl[i].path, labels[i], sizeof labels[i]);
    for (int i = 0; i < nw; i++)
        for (int k = 0; k < i; k++) {
            const struct sw_workload *a = &sp->wl[i], *b = &sp->wl[k];
            same_model[i][k] = same_model[k][i] = same_file(a->path, b->path) || a->hash == b->hash;
            int rc = DSE_OK;
            size_t old = ju_idx(j, i);
            if (same_model[i][k] && a->phase == b->phase && a->prompt == b->prompt && a->gen == b->gen)
                rc = ju_fail(j, "the same workload as workload[%d] (%s, %s, prompt %lld, generate %lld): list it once",
                             k, a->path, wl_phase_names[a->phase], (long long)a->prompt, (long long)a->gen);
            else if (!same_model[i][k] && !strcmp(labels[i], labels[k]))
                rc = ju_fail(j, "'%s' and workload[%d] '%s' would share the label '%s' in the workload column: rename "
                                "one file",
                             a->path, k, b->path, labels[i]);
            ju_pop(j, old);
            if (rc)
                return rc;
        }
    char base[SW_MAX_WORKLOADS][sizeof labels[0]];
    for (int i = 0; i < nw; i++)
        memcpy(base[i], labels[i], sizeof base[i]);
    for (int i = 0; i < nw; i++) {
        int phase = 0, prompt = 0, gen = 0;
        for (int k = 0; k < nw; k++)
            if (k != i && same_model[i][k] && !strcmp(base[i], base[k])) {
                phase |= sp->wl[k].phase != sp->wl[i].phase;
                prompt |= sp->wl[k].prompt != sp->wl[i].prompt;
                gen |= sp->wl[k].gen != sp->wl[i].gen;
            }
        char *l = labels[i];
        size_t n = sizeof labels[i];
        if (phase)
            snprintf(l + strlen(l), n - strlen(l), " phase=%s", wl_phase_names[sp->wl[i].phase]);
        if (prompt)
            snprintf(l + strlen(l), n - strlen(l), " prompt=%lld", (long long)sp->wl[i].prompt);
        if (gen)
            snprintf(l + strlen(l), n - strlen(l), " generate=%lld", (long long)sp->wl[i].gen);
    }
    for (int i = 0; i < nw; i++) /* a label cut at its size could still meet another */
        for (int k = 0; k < i; k++)
            if (!strcmp(labels[i], labels[k])) {
                size_t old = ju_idx(j, i);
                int rc = ju_fail(j, "would share the label '%s' with workload[%d] in the workload column", labels[i], k);
                ju_pop(j, old);
                return rc;
            }
    return DSE_OK;
}

/* Sizes, before anything is allocated by them: the space (exact in 64 bits up to SW_MAX_POINTS;
 * above it the double product, for the message) and the hardware variants. */
static int check_sizes(struct ju *j, struct sweep_spec *sp)
{
    char counts[SW_MAX_AXES * 8] = "";
    double space = 1, variants = sp->n_systems;
    long long pts = 1;
    int over = 0;
    for (int i = 0; i < sp->n_axes; i++) {
        const struct sw_axis *a = &sp->axes[i];
        space *= a->n;
        over |= __builtin_mul_overflow(pts, (long long)a->n, &pts) || pts > SW_MAX_POINTS;
        snprintf(counts + strlen(counts), sizeof counts - strlen(counts), "%s%d", i ? " x " : "", a->n);
        if (a->kind == AX_HW || a->kind == AX_POWER)
            variants *= a->n;
    }
    size_t old = ju_key(j, "axes");
    int rc = DSE_OK;
    if (over)
        rc = ju_fail(j, "the space has %.3g points (%s), more than %.3g (2^62; point indices are 64-bit integers): "
                        "use fewer values",
                     space, counts, (double)SW_MAX_POINTS);
    else if (variants > SW_MAX_VARIANTS)
        rc = ju_fail(j, "%.3g hardware variants (systems x hw: values x power caps), more than %d (each is a loaded "
                        "hwdesc): use fewer values",
                     variants, SW_MAX_VARIANTS);
    ju_pop(j, old);
    sp->points = pts;
    sp->n_variants = (long long)variants;
    return rc;
}

/* The search plan, bounded by the space: random samples are distinct points; an NSGA-II population
 * is drawn from the space and its evaluations are at most SW_NSGA2_EVALS_PER_POINT per point. */
static int load_search(struct ju *j, const cJSON *root, struct sweep_spec *sp)
{
    const cJSON *se = cJSON_GetObjectItemCaseSensitive(root, "search");
    sp->method = SEARCH_GRID;
    sp->seed = 1;
    if (!se)
        return DSE_OK;
    static const char *const skeys[] = {"method", "samples", "seed", "population", "generations", NULL};
    static const char *const methods[] = {"grid", "random", "nsga2", NULL};
    static const char *const only[] = {"samples", "random", "population", "nsga2", "generations", "nsga2", NULL};
    char m[16];
    long long v;
    int rc;
    ju_key(j, "search");
    if ((rc = ju_object(j, se, skeys)) || (rc = ju_str(j, se, "method", 0, m, sizeof m)))
        return rc;
    int mi = ju_lookup(methods, m);
    if (mi < 0)
        return ju_fail(j, "method: expected grid, random or nsga2, got \"%s\"", m);
    sp->method = (enum sw_method)mi;
    for (int k = 0; only[k]; k += 2) /* a field of another method would be ignored */
        if (cJSON_GetObjectItemCaseSensitive(se, only[k]) && strcmp(m, only[k + 1]))
            return ju_fail(j, "%s applies to method %s", only[k], only[k + 1]);
    v = 1;
    if ((rc = ju_int(j, se, "seed", JU_OPT, 0, 4294967295LL, &v)))
        return rc;
    sp->seed = (unsigned long)v;
    if (mi == SEARCH_RANDOM) {
        if ((rc = ju_int(j, se, "samples", 0, 1, 100000000LL, &sp->samples)))
            return rc;
        if (sp->samples > sp->points) {
            ju_key(j, "samples");
            return ju_fail(j, "%lld distinct samples of a space of %lld points: at most %lld (a grid evaluates "
                              "every point once)",
                           sp->samples, sp->points, sp->points);
        }
    }
    if (mi == SEARCH_NSGA2) {
        if ((rc = ju_int(j, se, "population", 0, 4, 100000, &sp->population)) ||
            (rc = ju_int(j, se, "generations", 0, 1, 100000, &sp->generations)))
            return rc;
        size_t old = ju_key(j, "population");
        if (sp->population % 2)
            return ju_fail(j, "expected an even number, got %lld", sp->population);
        if (sp->points < 4)
            return ju_fail(j, "the space has %lld point%s, fewer than the smallest population (4): use "
                              "{\"method\": \"grid\"}",
                           sp->points, sp->points == 1 ? "" : "s");
        if (sp->population > sp->points)
            return ju_fail(j, "%lld is more than the %lld points of the space: at most %lld, or use {\"method\": "
                              "\"grid\"}",
                           sp->population, sp->points, sp->points & ~1LL);
        ju_pop(j, old);
        /* population <= 1e5 and generations <= 1e5: evals <= 1e10 fits; the cap saturates. */
        long long evals = sp->population * (sp->generations + 1);
        long long cap = sp->points > LLONG_MAX / SW_NSGA2_EVALS_PER_POINT ? LLONG_MAX
                                                                          : SW_NSGA2_EVALS_PER_POINT * sp->points;
        if (evals > cap) {
            ju_key(j, "generations");
            return ju_fail(j, "population %lld x (generations %lld + 1) = %lld evaluations, more than %d per point of "
                              "the %lld-point space (%lld): at most %lld generations, or use {\"method\": \"grid\"}",
                           sp->population, sp->generations, evals, SW_NSGA2_EVALS_PER_POINT, sp->points, cap,
                           cap / sp->population - 1);
        }
    }
    ju_pop(j, 0);
    return DSE_OK;
}

/* The table file a spec's KEY names (its value in file): "none" gives "", a name is taken as given (with
 * SW_LOAD_SHIPPED_ONLY only the shipped one), and no name the shipped table find locates near path
 * (with SW_LOAD_SHIPPED_ONLY: under the current directory only), or "" when none is found. */
static int table_file(struct ju *j, const char *key, const char *file, const char *shipped, unsigned flags,
                      int (*find)(const char *, char *, size_t), const char *path, char *found, size_t n)
{
    found[0] = '\0';
    if (!strcmp(file, "none"))
        return DSE_OK;
    if (file[0]) {
        if ((flags & SW_LOAD_SHIPPED_ONLY) && strcmp(file, shipped)) {
            size_t old = ju_key(j, key);
            int rc = ju_fail(j, "only the shipped %s or none here", shipped);
            ju_pop(j, old);
            return rc;
        }
        dse_strlcpy(found, file, n);
    } else if (flags & SW_LOAD_SHIPPED_ONLY) {
        dse_strlcpy(found, is_file(shipped) ? shipped : "", n);
    } else if (!find(path, found, n)) {
        found[0] = '\0';
    }
    return DSE_OK;
}

/* "error_bars" (a file, or "none") and "rank" ("predicted", the default, or "pessimistic"). Without
 * "error_bars" the shipped table is used when found (with SW_LOAD_SHIPPED_ONLY: under the current
 * directory only); pessimistic ranking needs a table. */
static int load_error_bars(struct ju *j, const cJSON *root, const char *path, unsigned flags, struct sweep_spec *sp)
{
    char file[512] = "", rank[16] = "predicted", found[1024];
    int rc;
    if ((rc = ju_str(j, root, "error_bars", JU_OPT, file, sizeof file)) ||
        (rc = ju_str(j, root, "rank", JU_OPT, rank, sizeof rank)))
        return rc;
    if (strcmp(rank, "predicted") && strcmp(rank, "pessimistic")) {
        size_t old = ju_key(j, "rank");
        rc = ju_fail(j, "expected \"predicted\" or \"pessimistic\", got \"%s\"", rank);
        ju_pop(j, old);
        return rc;
    }
    sp->pessimistic = rank[1] == 'e';
    sp->err_low_m = (int)(metric_find("expected_error_low_pct") - metric_table);
    sp->err_high_m = (int)(metric_find("expected_error_high_pct") - metric_table);
    static const char shipped[] = "validate/published/error-bars.json";
    if ((rc = table_file(j, "error_bars", file, shipped, flags, eb_resolve, path, found, sizeof found)))
        return rc;
    if (found[0]) {
        char *buf;
        size_t len;
        if ((rc = ju_read_file(found, JU_MAX_FILE_BYTES, &buf, &len, j->e)))
            return rc;
        rc = eb_load_buf(buf, len, found, &sp->errbars, j->e);
        sp->errbars_hash = dse_fnv1a64(buf, len);
        free(buf);
        if (rc)
            return rc;
        sp->have_errbars = 1;
    }
    if (sp->pessimistic && !sp->have_errbars) {
        size_t old = ju_key(j, "rank");
        rc = ju_fail(j, "pessimistic ranking needs error bars: %s", file[0] ? "\"error_bars\" is \"none\""
                                                                     : "no validate/published/error-bars.json found");
        ju_pop(j, old);
        return rc;
    }
    return DSE_OK;
}

/* "store": the metrics each point keeps in the database beyond those the run needs (objectives,
 * constraints, error bars), as a list of registry names, or "all". The others are recomputed on
 * demand (dse show, dse report); storing fewer columns is what makes the database keep up. */
static int load_store(struct ju *j, const cJSON *root, struct sweep_spec *sp)
{
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "store");
    memset(sp->stored, 0, sizeof sp->stored);
    for (int k = 0; k < sp->n_obj; k++)
        sp->stored[sp->obj[k].m - metric_table] = 1;
    for (int k = 0; k < sp->n_con; k++)
        sp->stored[sp->con[k].m - metric_table] = 1;
    sp->stored[sp->err_low_m] = sp->stored[sp->err_high_m] = 1;
    ju_key(j, "store");
    if (cJSON_IsString(st) && !strcmp(st->valuestring, "all")) {
        memset(sp->stored, 1, (size_t)metric_count);
    } else if (cJSON_IsArray(st)) {
        int n = cJSON_GetArraySize(st);
        if (n > metric_count)
            return ju_fail(j, "%d metrics listed, the registry has %d", n, metric_count);
        for (int i = 0; i < n; i++) {
            const cJSON *x = cJSON_GetArrayItem(st, i);
            const struct metric *m = cJSON_IsString(x) ? metric_find(x->valuestring) : NULL;
            size_t o = ju_idx(j, i);
            if (!cJSON_IsString(x))
                return ju_fail(j, "expected a metric name");
            if (!m)
                return ju_fail(j, "unknown metric '%s' (dse help sweep lists them)", x->valuestring);
            sp->stored[m - metric_table] = 1;
            ju_pop(j, o);
        }
    } else if (st) {
        return ju_fail(j, "expected \"all\" or a list of metric names");
    }
    ju_pop(j, 0);
    sp->n_stored = 0;
    for (int i = 0; i < metric_count; i++)
        sp->n_stored += sp->stored[i];
    return DSE_OK;
}

/* "quality_table" (a file, or "none"): the published quality table behind quality_loss_pct (quality.h).
 * Without it the shipped validate/quality/published-quality.csv is used when found beside the spec's tree,
 * here or in the data directories (with SW_LOAD_SHIPPED_ONLY: under the current directory only);
 * without a table every quantized precision gets the measured GEMM error, flagged. */
static int load_quality(struct ju *j, const cJSON *root, const char *path, unsigned flags, struct sweep_spec *sp)
{
    static const char shipped[] = "validate/quality/published-quality.csv";
    char file[512] = "", found[1024];
    int rc;
    if ((rc = ju_str(j, root, "quality_table", JU_OPT, file, sizeof file)))
        return rc;
    if ((rc = table_file(j, "quality_table", file, shipped, flags, ql_resolve, path, found, sizeof found)))
        return rc;
    if (!found[0])
        return DSE_OK;
    char *buf;
    size_t len;
    if ((rc = ju_read_file(found, JU_MAX_FILE_BYTES, &buf, &len, j->e)))
        return rc;
    rc = ql_load_buf(buf, len, found, &sp->quality, j->e);
    free(buf);
    if (rc)
        return rc;
    sp->have_quality = 1;
    return DSE_OK;
}

/* Takes buf (len bytes, NUL-terminated, malloc'd): it becomes sp->text. */
static int load_text(char *buf, size_t len, const char *path, unsigned flags, struct sweep_spec *sp,
                     struct dse_err *e)
{
    static const char *const keys[] = {"name",       "description", "note",   "workload", "system",     "axes",
                                       "objectives", "constraints", "search", "fidelity", "software",   "error_bars",
                                       "rank",       "store",       "quality_table", "cost", NULL};
    cJSON *root = NULL;
    struct ju j;
    int rc;
    char labels[SW_MAX_SYSTEMS > SW_MAX_WORKLOADS ? SW_MAX_SYSTEMS : SW_MAX_WORKLOADS][sizeof sp->axes[0].v->s];
    memset(sp, 0, sizeof *sp);
    dse_strlcpy(sp->path, path, sizeof sp->path);
    sp->text = buf;
    sp->hash = dse_fnv1a64(buf, len);
    if ((rc = ju_parse(buf, len, path, &root, e)))
        goto out;
    ju_init(&j, path, e);
    if ((rc = ju_object(&j, root, keys)) || (rc = ju_str(&j, root, "name", 0, sp->name, sizeof sp->name)) ||
        (rc = ju_str(&j, root, "description", JU_OPT, sp->description, sizeof sp->description)))
        goto out;
    for (const char *c = sp->name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
              *c == '-' || *c == '.')) {
            ju_key(&j, "name");
            rc = ju_fail(&j, "use letters, digits, '_', '-' and '.' only (it names results/<name>.db)");
            goto out;
        }

    /* cost: the cost metrics' assumptions (cost.h); each unset one its default */
    cost_default(&sp->cost);
    const cJSON *co = cJSON_GetObjectItemCaseSensitive(root, "cost");
    if (co) {
        static const char *const ckeys[] = {"usd_per_kWh", "pue", "amortize_years", "utilization", "hosting_usd_per_hour",
                                            "source", "note", NULL};
        size_t o2 = ju_key(&j, "cost");
        if ((rc = ju_object(&j, co, ckeys)) ||
            (rc = ju_num(&j, co, "usd_per_kWh", JU_OPT | JU_NONNEG, 100, &sp->cost.usd_per_kWh)) ||
            (rc = ju_num(&j, co, "pue", JU_OPT | JU_POS, 10, &sp->cost.pue)) ||
            (rc = ju_num(&j, co, "amortize_years", JU_OPT | JU_POS, 100, &sp->cost.amortize_years)) ||
            (rc = ju_num(&j, co, "utilization", JU_OPT | JU_POS, 1, &sp->cost.utilization)) ||
            (rc = ju_num(&j, co, "hosting_usd_per_hour", JU_OPT | JU_NONNEG, 1e6, &sp->cost.hosting_usd_per_hour)))
            goto out;
        if (sp->cost.pue < 1) {
            ju_key(&j, "pue");
            rc = ju_fail(&j, "expected a PUE of at least 1 (facility energy over IT energy), got %g", sp->cost.pue);
            goto out;
        }
        ju_pop(&j, o2);
    }

    if (cJSON_GetObjectItemCaseSensitive(root, "fidelity")) {
        char f[16];
        if ((rc = ju_str(&j, root, "fidelity", 0, f, sizeof f)))
            goto out;
        int fi = ju_lookup(fidelity_names, f);
        if (fi < 0) {
            ju_key(&j, "fidelity");
            rc = ju_fail(&j, "expected \"analytical\" or \"cycle\", got \"%s\"", f);
            goto out;
        }
        sp->fidelity = (enum fidelity)fi;
    }

    /* system: one path or a list (then an axis) */
    const cJSON *sys = cJSON_GetObjectItemCaseSensitive(root, "system");
    static const char *const hw_ext[] = {".json", NULL};
    ju_key(&j, "system");
    if (!sys) {
        rc = ju_fail(&j, "missing (a hwdesc path or name, or a list of them)");
        goto out;
    }
    int ns = cJSON_IsArray(sys) ? cJSON_GetArraySize(sys) : 1;
    if (ns < 1 || ns > SW_MAX_SYSTEMS) {
        rc = ju_fail(&j, "expected 1 to %d systems", SW_MAX_SYSTEMS);
        goto out;
    }
    for (int i = 0; i < ns; i++) {
        const cJSON *s = cJSON_IsArray(sys) ? cJSON_GetArrayItem(sys, i) : sys;
        size_t o2 = cJSON_IsArray(sys) ? ju_idx(&j, i) : j.len;
        if (!cJSON_IsString(s) || !s->valuestring[0]) {
            rc = ju_fail(&j, "expected a hwdesc path or name");
            goto out;
        }
        if ((rc = resolve(path, "hwdesc", s->valuestring, hw_ext, sp->system_path[i], sizeof sp->system_path[i], flags))) {
            rc = unresolved(&j, rc, "hwdesc", s->valuestring, "a path, or a name in hwdesc/");
            goto out;
        }
        size_t slen;
        if ((rc = ju_read_file(sp->system_path[i], JU_MAX_FILE_BYTES, &sp->system_text[i], &slen, e)))
            goto out;
        sp->system_hash[i] = dse_fnv1a64(sp->system_text[i], slen);
        ju_pop(&j, o2);
    }
    sp->n_systems = ns;
    if ((rc = check_systems(&j, sp, sys, labels)))
        goto out;
    int pos = 0;
    if (ns > 1 && (rc = add_list_axis(sp, AX_SYSTEM, "system", ns, pos++, labels, e)))
        goto out;
    ju_pop(&j, 0);

    /* workload: one object or a list (then an axis) */
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(root, "workload");
    ju_key(&j, "workload");
    if (!wl) {
        rc = ju_fail(&j, "missing (an object with model, phase, prompt, generate, or a list of them)");
        goto out;
    }
    int nw = cJSON_IsArray(wl) ? cJSON_GetArraySize(wl) : 1;
    if (nw < 1 || nw > SW_MAX_WORKLOADS) {
        rc = ju_fail(&j, "expected 1 to %d workloads", SW_MAX_WORKLOADS);
        goto out;
    }
    for (int i = 0; i < nw; i++) {
        size_t o2 = cJSON_IsArray(wl) ? ju_idx(&j, i) : j.len;
        sp->n_workloads = i + 1; /* so that a half-loaded model is freed on error */
        if ((rc = load_workload(&j, cJSON_IsArray(wl) ? cJSON_GetArrayItem(wl, i) : wl, path, flags, &sp->wl[i])))
            goto out;
        ju_pop(&j, o2);
    }
    if ((rc = check_workloads(&j, sp, labels)))
        goto out;
    ju_pop(&j, 0);
    for (int i = 0; i < nw; i++)
        if (sp->wl[i].serving.on && sp->cost.utilization != 1) { /* its idle time is simulated, not assumed */
            ju_key(&j, "cost");
            ju_key(&j, "utilization");
            rc = ju_fail(&j, "a serving workload's runs simulate the system's busy and idle time under their arrivals: "
                         "leave utilization out and lower the rate instead");
            goto out;
        }

    /* axes, in spec order; system and workload lists come first */
    if (nw > 1 && (rc = add_list_axis(sp, AX_WORKLOAD, "workload", nw, pos++, labels, e)))
        goto out;
    const cJSON *axes = cJSON_GetObjectItemCaseSensitive(root, "axes");
    ju_key(&j, "axes");
    if (axes && !cJSON_IsObject(axes)) {
        rc = ju_fail(&j, "expected an object of axis name -> list of values");
        goto out;
    }
    int mem_axis = -1;
    for (const cJSON *a = axes ? axes->child : NULL; a; a = a->next) {
        size_t o2 = ju_key(&j, a->string);
        enum sw_axis_kind k;
        if (axis_kind(a->string, &k)) {
            rc = ju_fail(&j, "unknown axis (known: precision, batch, placement, memory_GB, power_W, fidelity, software, "
                             "tp, pp, dp, microbatches, recompute, ep, cp, scheduler, max_batched_tokens, block_size, "
                             "rate, prompt, generate, dvfs_mode, ambient_C, cooling, duration_s, hw:PATH)");
            goto out;
        }
        for (int i = 0; i < sp->n_axes; i++)
            if (!strcmp(sp->axes[i].name, a->string)) {
                rc = ju_fail(&j, "axis given twice");
                goto out;
            }
        if (sp->n_axes >= SW_MAX_AXES) {
            rc = ju_fail(&j, "more than %d axes", SW_MAX_AXES);
            goto out;
        }
        struct sw_axis *ax = &sp->axes[sp->n_axes];
        memset(ax, 0, sizeof *ax);
        ax->kind = k;
        ax->spec_pos = pos++;
        sp->n_axes++;
        if ((rc = load_axis(&j, a, a->string, ax)))
            goto out;
        for (int w = 0; w < sp->n_workloads && (k == AX_PROMPT || k == AX_GENERATE); w++) { /* every workload takes it */
            const struct sw_workload *wk = &sp->wl[w];
            if (wk->serving.on)
                rc = ju_fail(&j, "workload %s is served: its lengths come from its \"serving\" block", wk->model.name);
            else if (k == AX_PROMPT && !wl_model_takes_tokens(&wk->model))
                rc = ju_fail(&j, "workload %s has no sequence the prompt would set (its input size is fixed)",
                             wk->model.name);
            else if (k == AX_GENERATE && wk->phase != PH_GENERATE)
                rc = ju_fail(&j, "applies to phase generate; workload %s runs %s", wk->model.name,
                             wl_phase_names[wk->phase]);
            if (rc)
                goto out;
        }
        if (k == AX_MEMORY)
            mem_axis = sp->n_axes - 1;
        ju_pop(&j, o2);
    }
    ju_pop(&j, 0);
    if (mem_axis >= 0 && mem_axis != sp->n_axes - 1) { /* evaluation order: memory last */
        struct sw_axis m = sp->axes[mem_axis];
        memmove(&sp->axes[mem_axis], &sp->axes[mem_axis + 1], sizeof m * (size_t)(sp->n_axes - 1 - mem_axis));
        sp->axes[sp->n_axes - 1] = m;
    }
    if ((rc = check_sizes(&j, sp)) || (rc = load_stacks(&j, root, path, flags, sp)))
        goto out;

    /* objectives */
    const cJSON *arr;
    int n;
    if ((rc = ju_array(&j, root, "objectives", 0, SW_MAX_OBJ, &arr, &n)))
        goto out;
    ju_key(&j, "objectives");
    if (n < 1) {
        rc = ju_fail(&j, "expected 1 to %d objectives", SW_MAX_OBJ);
        goto out;
    }
    static const char *const okeys[] = {"metric", "goal", "reference", NULL};
    for (int i = 0; i < n; i++) {
        const cJSON *o = cJSON_GetArrayItem(arr, i);
        char m[64], g[8];
        size_t o2 = ju_idx(&j, i);
        if ((rc = ju_object(&j, o, okeys)) || (rc = ju_str(&j, o, "metric", 0, m, sizeof m)) ||
            (rc = ju_str(&j, o, "goal", 0, g, sizeof g)))
            goto out;
        const struct metric *mt = metric_find(m);
        if (!mt) {
            rc = ju_fail(&j, "unknown metric '%s' (see docs/models.md or dse help sweep for the registry)", m);
            goto out;
        }
        if (strcmp(g, "min") && strcmp(g, "max")) {
            rc = ju_fail(&j, "goal: expected \"min\" or \"max\", got \"%s\"", g);
            goto out;
        }
        for (int k = 0; k < i; k++)
            if (sp->obj[k].m == mt) {
                rc = ju_fail(&j, "metric %s is already objectives[%d]: list it once", m, k);
                goto out;
            }
        for (int w = 0; w < sp->n_workloads; w++)
            if (!metric_applies_to(mt, sp->wl[w].phase, sp->wl[w].serving.on)) {
                rc = sp->wl[w].serving.on ? ju_fail(&j, "metric %s is not a serving metric (serve_*), which workload "
                                                    "%s's serving runs give", m, sp->wl[w].model.name)
                                          : ju_fail(&j, "metric %s does not apply to workload %s (phase %s)", m,
                                                    sp->wl[w].model.name, wl_phase_names[sp->wl[w].phase]);
                goto out;
            }
        sp->obj[i].m = mt;
        sp->obj[i].maximize = g[1] == 'a';
        if (cJSON_GetObjectItemCaseSensitive(o, "reference")) { /* the hypervolume's reference, fixed */
            if ((rc = ju_num(&j, o, "reference", 0, 1e300, &sp->obj[i].ref)))
                goto out;
            sp->obj[i].has_ref = 1;
        }
        if (i > 0 && sp->obj[i].has_ref != sp->obj[0].has_ref) {
            rc = ju_fail(&j, "a hypervolume reference is given for %s objectives: give every objective one, or none",
                         sp->obj[0].has_ref ? "some but not this of the" : "this but not the first of the");
            goto out;
        }
        ju_pop(&j, o2);
    }
    sp->n_obj = n;
    ju_pop(&j, 0);

    /* constraints */
    if ((rc = ju_array(&j, root, "constraints", JU_OPT, SW_MAX_CONSTRAINTS, &arr, &n)))
        goto out;
    ju_key(&j, "constraints");
    static const char *const ckeys[] = {"metric", "le", "ge", NULL};
    for (int i = 0; i < n; i++) {
        const cJSON *o = cJSON_GetArrayItem(arr, i);
        char m[64];
        size_t o2 = ju_idx(&j, i);
        if ((rc = ju_object(&j, o, ckeys)) || (rc = ju_str(&j, o, "metric", 0, m, sizeof m)))
            goto out;
        if (!(sp->con[i].m = metric_find(m))) {
            rc = ju_fail(&j, "unknown metric '%s'", m);
            goto out;
        }
        int hl = cJSON_GetObjectItemCaseSensitive(o, "le") != NULL, hg = cJSON_GetObjectItemCaseSensitive(o, "ge") != NULL;
        if (hl == hg) {
            rc = ju_fail(&j, "expected exactly one of le and ge");
            goto out;
        }
        sp->con[i].le = hl;
        if ((rc = ju_num(&j, o, hl ? "le" : "ge", 0, 0, &sp->con[i].bound)))
            goto out;
        ju_pop(&j, o2);
    }
    sp->n_con = n;
    ju_pop(&j, 0);

    if ((rc = load_error_bars(&j, root, path, flags, sp)) || (rc = load_quality(&j, root, path, flags, sp)) ||
        (rc = load_store(&j, root, sp)))
        goto out;
    rc = load_search(&j, root, sp);
out:
    cJSON_Delete(root);
    if (rc)
        sweep_spec_free(sp);
    return rc;
}

int sweep_spec_load(const char *path, struct sweep_spec *sp, struct dse_err *e)
{
    char *buf;
    size_t len;
    memset(sp, 0, sizeof *sp);
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    return rc ? rc : load_text(buf, len, path, 0, sp, e);
}

int sweep_spec_load_buf(const char *text, size_t len, const char *path, unsigned flags, struct sweep_spec *sp,
                        struct dse_err *e)
{
    memset(sp, 0, sizeof *sp);
    if (len > JU_MAX_FILE_BYTES)
        return dse_err_set(e, DSE_EINPUT, path, NULL, "larger than %u bytes", JU_MAX_FILE_BYTES);
    char *buf = malloc(len + 1);
    if (!buf)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    memcpy(buf, text, len);
    buf[len] = '\0';
    return load_text(buf, len, path, flags, sp, e);
}

void sweep_spec_free(struct sweep_spec *sp)
{
    free(sp->text);
    for (int i = 0; i < SW_MAX_SYSTEMS; i++)
        free(sp->system_text[i]);
    for (int i = 0; i < sp->n_workloads; i++) {
        wl_model_free(&sp->wl[i].model);
        free(sp->wl[i].serving.unit);
    }
    for (int i = 0; i < sp->n_axes; i++)
        free(sp->axes[i].v);
    ql_free(&sp->quality);
    memset(sp, 0, sizeof *sp);
}
