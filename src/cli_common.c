/* cli_common.c -- option parsing and data-file lookup shared by the commands. */
#include "cli.h"
#include "pass.h"
#include "eval.h"
#include "jsonu.h"
#include "outfile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>


int cli_parse(int argc, char **argv, int first, struct cli_opt *opts, const char **pos, int max_pos, int *n_pos,
              const char *cmd, struct dse_err *e)
{
    *n_pos = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0') {
            if (*n_pos >= max_pos)
                return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: unexpected argument '%s' (see dse help %s)", cmd, a,
                                   cmd);
            pos[(*n_pos)++] = a;
            continue;
        }
        const char *name = a + 2, *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        struct cli_opt *o = opts;
        for (; o->name; o++)
            if (strlen(o->name) == nl && strncmp(o->name, name, nl) == 0)
                break;
        if (!o->name)
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: unknown option '%s' (see dse help %s)", cmd, a, cmd);
        if (o->value) /* the last would win: refused rather than one silently dropped */
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: option --%s given twice", cmd, o->name);
        if (o->has_arg) {
            if (eq)
                o->value = eq + 1;
            else if (i + 1 < argc)
                o->value = argv[++i];
            else
                return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: option --%s needs a value", cmd, o->name);
        } else {
            if (eq)
                return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: option --%s takes no value", cmd, o->name);
            o->value = "1";
        }
    }
    return DSE_OK;
}

static const struct cli_opt *find_opt(const struct cli_opt *opts, const char *name, size_t len)
{
    for (; opts->name; opts++)
        if (strlen(opts->name) == len && !strncmp(opts->name, name, len))
            return opts;
    return NULL;
}

int cli_short_opts(int argc, char **argv, const struct cli_opt *opts, const char *cmd, struct cli_args *args,
                   struct dse_err *e)
{
    int value_next = 0;
    char **av = args->av = calloc((size_t)argc + 1, sizeof *av), **owned = args->owned = calloc((size_t)argc + 1, sizeof *owned);
    args->n = argc;
    if (!av || !owned)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        av[i] = a;
        if (i < 2 || value_next) {
            value_next = 0;
            continue;
        }
        if (!strncmp(a, "--", 2) && a[2]) {
            const struct cli_opt *o = find_opt(opts, a + 2, strcspn(a + 2, "="));
            value_next = o && o->has_arg && !strchr(a, '=');
        } else if (!strcmp(a, "-o")) {
            av[i] = "--out";
            value_next = 1;
        } else if (!strcmp(a, "-h")) {
            av[i] = "--help";
        } else if (!strncmp(a, "-o", 2)) {
            size_t l = strlen(a);
            if (!(owned[i] = malloc(l + 5)))
                return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
            snprintf(owned[i], l + 5, "--out=%s", a + 2);
            av[i] = owned[i];
        } else if (a[0] == '-' && a[1]) {
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: unknown option '%s' (see dse help %s)", cmd, a, cmd);
        }
    }
    return DSE_OK;
}

void cli_args_free(struct cli_args *args)
{
    for (int i = 0; args->owned && i < args->n; i++)
        free(args->owned[i]);
    free(args->owned);
    free(args->av);
    memset(args, 0, sizeof *args);
}

void cli_why_add(struct cli_why *w, const char *reason, long long n)
{
    char kind[sizeof w->k[0].kind];
    size_t k = strcspn(reason, "0123456789");
    snprintf(kind, sizeof kind, "%.*s", (int)(k < sizeof kind - 1 ? k : sizeof kind - 1), reason);
    for (int i = 0; i < CLI_WHY_KINDS; i++) {
        struct cli_why_kind *x = &w->k[i];
        if (x->n && !strcmp(x->kind, kind)) {
            x->n += n;
            x->varied |= strcmp(x->example, reason) != 0;
            return;
        }
        if (!x->n) {
            dse_strlcpy(x->kind, kind, sizeof x->kind);
            dse_strlcpy(x->example, reason, sizeof x->example);
            x->n = n;
            return;
        }
    }
    w->other += n;
}

void cli_why_sort(struct cli_why *w)
{
    for (int i = 1; i < CLI_WHY_KINDS; i++) /* insertion sort: stable, and few kinds */
        for (int j = i; j > 0 && w->k[j].n > w->k[j - 1].n; j--) {
            struct cli_why_kind t = w->k[j];
            w->k[j] = w->k[j - 1];
            w->k[j - 1] = t;
        }
}

void cli_print_json(cJSON *o)
{
    char *txt = ju_print(o, 1);
    if (txt)
        puts(txt);
    free(txt);
    cJSON_Delete(o);
}

int cli_load_opt(const struct cli_opt *opts, struct wl_load_opt *lo, struct dse_err *e)
{
    const char *d = cli_get(opts, "dim"), *u = cli_get(opts, "unknown-ops");
    memset(lo, 0, sizeof *lo);
    if (u && strcmp(u, "memory") && strcmp(u, "error"))
        return dse_err_set(e, DSE_EINPUT, NULL, "--unknown-ops", "expected error or memory, got '%s'", u);
    lo->unknown_memory = u && !strcmp(u, "memory");
    while (d && *d) { /* NAME=N[,NAME=N...] */
        char one[WL_NAME_LEN + 32];
        size_t n = strcspn(d, ",");
        if (n >= sizeof one)
            return dse_err_set(e, DSE_EINPUT, NULL, "--dim", "binding too long: '%.40s...'", d);
        memcpy(one, d, n);
        one[n] = '\0';
        int rc = wl_load_opt_dim(lo, one, e);
        if (rc)
            return rc;
        d += n + (d[n] == ',');
    }
    return DSE_OK;
}

const char *cli_get(const struct cli_opt *opts, const char *name)
{
    for (; opts->name; opts++)
        if (strcmp(opts->name, name) == 0)
            return opts->value;
    return NULL;
}

int cli_list_check(const char *opt, const char *s, struct dse_err *e)
{
    size_t n = strlen(s);
    if (!n)
        return dse_err_set(e, DSE_EINPUT, NULL, opt, "expected a comma-separated list, got an empty string");
    if (s[0] == ',' || s[n - 1] == ',' || strstr(s, ",,"))
        return dse_err_set(e, DSE_EINPUT, NULL, opt, "'%.200s' has an empty item: expected ITEM[,ITEM...]", s);
    return DSE_OK;
}

int cli_int(const char *opt, const char *s, long long min, long long max, long long *out, struct dse_err *e)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v < min || v > max)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "--%s: expected an integer in [%lld, %lld], got '%s'", opt, min,
                           max, s);
    *out = v;
    return DSE_OK;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Whether needle occurs in hay, ASCII case folded (strcasestr is a GNU extension). */
static int has_folded(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return 1;
    return n == 0;
}

/* Levenshtein distance of a and b, ASCII case folded, both under 128 bytes (else a large number). */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la >= 128 || lb >= 128)
        return 1 << 20;
    int row[128], prev;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        prev = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int cur = row[j], sub = prev + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            row[j] = cur + 1 < row[j - 1] + 1 ? cur + 1 : row[j - 1] + 1;
            if (sub < row[j])
                row[j] = sub;
            prev = cur;
        }
    }
    return row[lb];
}

/* "did you mean A, B?" for a name not found: the shipped names of dir (files with one of exts under
 * each base) that contain it (h100 -> nvidia-h100-sxm5-80gb) or are a few edits from it
 * (lama-3.1-8b -> llama-3.1-8b), closest first, at most four. */
static void suggest(const char *name, const char *dir, const char *const *exts, const char *const *bases, int nb,
                    char *out, size_t n)
{
    enum { MAX_S = 4 };
    char best[MAX_S][96];
    int score[MAX_S], k = 0, tol = (int)strlen(name) / 4 + 1;
    out[0] = '\0';
    for (int b = 0; b < nb; b++) {
        char path[DSE_PATH_LEN];
        if (snprintf(path, sizeof path, "%s/%s", bases[b], dir) >= (int)sizeof path)
            continue;
        DIR *d = opendir(path);
        for (struct dirent *de; d && (de = readdir(d));) {
            char stem[96];
            size_t l = strlen(de->d_name);
            int ext_ok = 0;
            for (int x = 0; exts[x] && !ext_ok; x++) {
                size_t el = strlen(exts[x]);
                if (l > el && l - el < sizeof stem && !strcmp(de->d_name + l - el, exts[x])) {
                    snprintf(stem, sizeof stem, "%.*s", (int)(l - el), de->d_name);
                    ext_ok = 1;
                }
            }
            if (!ext_ok)
                continue;
            int s = has_folded(stem, name) ? 0 : edit_distance(name, stem);
            if (s > tol)
                continue;
            int dup = 0;
            for (int i = 0; i < k; i++)
                dup |= !strcmp(best[i], stem);
            if (dup)
                continue;
            int at = k < MAX_S ? k++ : MAX_S - 1; /* insertion by score, then name: deterministic */
            if (at == MAX_S - 1 && k == MAX_S && (s > score[at] || (s == score[at] && strcmp(stem, best[at]) > 0)))
                continue;
            for (; at > 0 && (score[at - 1] > s || (score[at - 1] == s && strcmp(best[at - 1], stem) > 0)); at--) {
                score[at] = score[at - 1];
                memcpy(best[at], best[at - 1], sizeof best[0]);
            }
            score[at] = s;
            dse_strlcpy(best[at], stem, sizeof best[0]);
        }
        if (d)
            closedir(d);
    }
    size_t at = 0;
    for (int i = 0; i < k && at < n; i++)
        at += (size_t)snprintf(out + at, n - at, "%s%s", i ? ", " : "did you mean ", best[i]);
    if (k && at < n)
        snprintf(out + at, n - at, "?");
}

int cli_resolve(const char *opt, const char *dir, const char *name, const char *const *exts, char *out, unsigned n,
                struct dse_err *e)
{
    struct stat st;
    if (!*name)
        return dse_err_set(e, DSE_EINPUT, NULL, opt, "expected a file or a name from dse list, got an empty string");
    if (strlen(name) >= n || strlen(name) >= DSE_PATH_LEN) /* never cut: a prefix names another file */
        return dse_path_check(name, opt, e) ? DSE_EINPUT
                                            : dse_err_set(e, DSE_EINPUT, NULL, opt, "a path of %zu bytes: at most %u",
                                                          strlen(name), n - 1);
    if (stat(name, &st) == 0) {
        snprintf(out, n, "%s", name);
        return DSE_OK;
    }
    const char *bases[1 + JU_MAX_DATA_DIRS] = {"."};
    char dirs[JU_DATA_DIRS_BYTES];
    int nb = 1 + ju_data_dirs(bases + 1, JU_MAX_DATA_DIRS, dirs, sizeof dirs);
    for (int b = 0; b < nb; b++) { /* a candidate that does not fit in out is not looked for; a name with a
                                      folder ("zoo/yolov8n") is looked for under dir too */
        if (snprintf(out, n, "%s/%s/%s", bases[b], dir, name) < (int)n && is_file(out))
            return DSE_OK;
        for (int k = 0; exts[k]; k++)
            if (snprintf(out, n, "%s/%s/%s%s", bases[b], dir, name, exts[k]) < (int)n && is_file(out))
                return DSE_OK;
    }
    if (strchr(name, '/')) { /* a path: let the loader report what is wrong */
        snprintf(out, n, "%s", name);
        return DSE_OK;
    }
    if (!strcmp(dir, "models")) /* the network zoo's names work bare too (a name in models/ itself wins) */
        for (int b = 0; b < nb; b++)
            for (int k = 0; exts[k]; k++)
                if (snprintf(out, n, "%s/models/zoo/%s%s", bases[b], name, exts[k]) < (int)n && is_file(out))
                    return DSE_OK;
    char near[400];
    suggest(name, dir, exts, bases, nb, near, sizeof near);
    return dse_err_set(e, DSE_EINPUT, name, NULL, "no such file, nor %s/%s%s here%s or in %s (%s)", dir, name,
                       exts[0], nb > 2 ? ", in DSE_PATH's folders" : "", bases[nb - 1], near[0] ? near : "try dse list");
}

void cli_data_dir(const char *dir, char *out, unsigned n)
{
    const char *bases[JU_MAX_DATA_DIRS];
    char dirs[JU_DATA_DIRS_BYTES];
    int nb = ju_data_dirs(bases, JU_MAX_DATA_DIRS, dirs, sizeof dirs);
    snprintf(out, n, "%s", dir);
    for (int b = 0; b < nb && !is_dir(out); b++)
        snprintf(out, n, "%s/%s", bases[b], dir);
}

void cli_print_options(const struct cli_opt *opts)
{
    for (; opts->name; opts++) {
        char left[48];
        snprintf(left, sizeof left, "--%s%s", opts->name, opts->has_arg ? " X" : "");
        printf("  %-22s %s\n", left, opts->help);
    }
}

int cli_workload_opts(const struct cli_opt *opts, const struct wl_model *m, struct eval_req *r, struct dse_err *e)
{
    int rc;
    int lm = wl_model_is_lm(m);
    long long v;
    r->batch = 1;
    if (cli_get(opts, "batch")) {
        if ((rc = cli_int("batch", cli_get(opts, "batch"), 1, 1000000, &v, e)))
            return rc;
        r->batch = v;
    }
    r->phase = lm ? PH_GENERATE : PH_NONE;
    const char *phs = cli_get(opts, "phase");
    if (phs) {
        int p = -1;
        for (int i = 1; wl_phase_names[i]; i++)
            if (!strcmp(wl_phase_names[i], phs))
                p = i;
        if (p < 0) {
            rc = dse_err_set(e, DSE_EINPUT, NULL, "--phase", "expected prefill, decode, generate or train, got '%s'", phs);
            return rc;
        }
        if (!lm && p != PH_TRAIN) {
            rc = dse_err_set(e, DSE_EINPUT, NULL, "--phase", "%s is not a decoder language model; phases apply to "
                                                              "llama, qwen2, mistral and gpt2 configs",
                             m->name);
            return rc;
        }
        r->phase = (enum wl_phase)p;
    }
    /* Options that do not apply to this workload are refused, not ignored. */
    int takes_seq = wl_model_takes_tokens(m);
    if ((cli_get(opts, "prompt") && !takes_seq) || (cli_get(opts, "generate") && r->phase != PH_GENERATE)) {
        rc = dse_err_set(e, DSE_EINPUT, NULL, cli_get(opts, "generate") && r->phase != PH_GENERATE ? "--generate" : "--prompt",
                         "does not apply to %s (%s)", m->name,
                         takes_seq ? "--generate needs --phase generate" : "its input size is fixed by the model");
        return rc;
    }
    r->prompt = (m->kind == WLM_TRANSFORMER && !lm) || m->kind == WLM_ONNX ? 128 : 512;
    if (cli_get(opts, "prompt")) {
        if ((rc = cli_int("prompt", cli_get(opts, "prompt"), 1, 10000000, &v, e)))
            return rc;
        r->prompt = v;
    }
    if (m->kind == WLM_TRANSFORMER && !lm && m->tf.post_norm && r->prompt > m->tf.max_pos) {
        rc = dse_err_set(e, DSE_EINPUT, NULL, "--prompt", "%lld tokens exceed max_position_embeddings %lld of %s",
                         (long long)r->prompt, (long long)m->tf.max_pos, m->name);
        return rc;
    }
    r->gen = 128;
    if (cli_get(opts, "generate")) {
        if ((rc = cli_int("generate", cli_get(opts, "generate"), 1, 1000000, &v, e)))
            return rc;
        r->gen = v;
    }
    return DSE_OK;
}

int cli_load_hw(const char *path, struct hw_system *sys, struct dse_err *e)
{
    size_t n = strlen(path);
    if (n > 4 && !strcasecmp(path + n - 4, ".cfg"))
        return hw_load_scalesim_cfg(path, sys, e);
    return hw_load_file(path, sys, e);
}

int cli_set_hw(const struct cli_opt *opts, const char *hwp, struct hw_system *sys, struct dse_err *e)
{
    const char *set = cli_get(opts, "set");
    if (!set)
        return DSE_OK;
    enum { MAX_SET = 16 };
    char buf[2048], *fields[MAX_SET], *values[MAX_SET], *save = NULL, *text;
    size_t len;
    int n = 0, rc;
    if (strlen(set) >= sizeof buf)
        return dse_err_set(e, DSE_EINPUT, NULL, "--set", "%zu characters: at most %zu", strlen(set), sizeof buf - 1);
    if ((rc = cli_list_check("--set", set, e)))
        return rc;
    dse_strlcpy(buf, set, sizeof buf);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (strncmp(t, "hw:", 3) || !eq || eq == t + 3 || !eq[1])
            return dse_err_set(e, DSE_EINPUT, NULL, "--set", "expected hw:PATH=VALUE, got '%.80s'", t);
        if (n == MAX_SET)
            return dse_err_set(e, DSE_EINPUT, NULL, "--set", "more than %d fields", MAX_SET);
        *eq = '\0';
        fields[n] = t + 3;
        values[n++] = eq + 1;
    }
    size_t pl = strlen(hwp);
    if (pl > 4 && !strcmp(hwp + pl - 4, ".cfg"))
        return dse_err_set(e, DSE_EINPUT, hwp, "--set", "sets fields of a hwdesc JSON file, not of a SCALE-Sim .cfg");
    if ((rc = ju_read_file(hwp, JU_MAX_FILE_BYTES, &text, &len, e)))
        return rc;
    rc = sweep_hw_set(text, hwp, n, (const char *const *)fields, (const char *const *)values, sys, e);
    free(text);
    return rc;
}

int cli_load_hw_opts(const struct cli_opt *opts, const char *path, struct hw_system *sys, struct dse_err *e)
{
    int rc = cli_load_hw(path, sys, e);
    return rc ? rc : cli_set_hw(opts, path, sys, e);
}

void cli_print_whatif(const struct cli_opt *opts)
{
    if (cli_get(opts, "set"))
        printf("what-if: --set %s (fields of the hwdesc changed for this run only)\n", cli_get(opts, "set"));
}

int cli_fidelity(const char *s, enum fidelity *out, struct dse_err *e)
{
    for (int i = 0; i < FID_COUNT; i++)
        if (!strcmp(s, fidelity_names[i])) {
            *out = (enum fidelity)i;
            return DSE_OK;
        }
    return dse_err_set(e, DSE_EINPUT, NULL, "--fidelity", "expected analytical or cycle, got '%s'", s);
}

void cli_today(char *buf, unsigned n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%d", &tm);
}

int cli_hwdesc_device(const char *path, const char *name, cJSON **root, cJSON **dev, struct dse_err *e)
{
    char *buf;
    size_t len;
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    if (rc)
        return rc;
    rc = ju_parse(buf, len, path, root, e);
    free(buf);
    if (rc)
        return rc;
    cJSON *it;
    *dev = NULL;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(*root, "devices"))
    {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
        if (cJSON_IsString(nm) && !strcmp(nm->valuestring, name))
            *dev = it;
    }
    if (*dev)
        return DSE_OK;
    cJSON_Delete(*root);
    *root = NULL;
    return dse_err_set(e, DSE_EINPUT, path, NULL, "no device '%s' to calibrate", name);
}

/* ju_print (cJSON_Print's layout) indents with tabs and puts one after each key's colon; the shipped
 * hwdescs use two spaces and ": ". A raw tab can only be layout (cJSON escapes those in strings): a leading one becomes two
 * spaces, any other one space. Returns a new string (NULL when out of memory); txt is freed. */
static char *untab(char *txt)
{
    char *o = malloc(strlen(txt) * 2 + 1), *w = o;
    int lead = 1; /* within a line's indentation */
    for (const char *p = txt; o && *p; p++) {
        if (*p != '\t') {
            *w++ = *p;
        } else {
            *w++ = ' ';
            if (lead)
                *w++ = ' ';
        }
        lead = *p == '\n' || (lead && *p == '\t');
    }
    if (o)
        *w = 0;
    free(txt);
    return o;
}

static int check_hwdesc(const char *tmp, void *ctx, struct dse_err *e)
{
    (void)ctx;
    struct hw_system *check = malloc(sizeof *check);
    int rc = check ? hw_load_file(tmp, check, e) : dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    free(check);
    return rc;
}

static int check_stack(const char *tmp, void *ctx, struct dse_err *e)
{
    (void)ctx;
    struct sw_stack *check = malloc(sizeof *check);
    int rc = check ? pass_load_file(tmp, check, e) : dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    free(check);
    return rc;
}

int cli_write_json(cJSON *root, const char *path, int kind, struct dse_err *e)
{
    char *txt = ju_print(root, 1);
    cJSON_Delete(root);
    if (!txt || !(txt = untab(txt)))
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    size_t n = strlen(txt);
    char *buf = realloc(txt, n + 2);
    if (!buf) {
        free(txt);
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    }
    buf[n] = '\n'; /* never a calibrated hwdesc or stack file that dse itself would refuse */
    int rc = out_file_write(path, buf, n + 1, kind == CLI_JSON_HWDESC ? check_hwdesc : kind == CLI_JSON_STACK ? check_stack
                                                                                                       : NULL,
                            NULL, NULL, e);
    free(buf);
    return rc;
}

int cli_quality_table(const struct cli_opt *opts, const char *near_file, struct ql_table *qt, struct dse_err *e)
{
    const char *f = cli_get(opts, "quality-table");
    char path[1024];
    memset(qt, 0, sizeof *qt);
    if (f && !strcmp(f, "none"))
        return DSE_OK;
    if (f)
        dse_strlcpy(path, f, sizeof path);
    else if (!ql_resolve(near_file, path, sizeof path))
        return DSE_OK;
    return ql_load_file(path, qt, e);
}

void cli_quality_note(const struct ql_table *qt, const struct ql_est *q, char *buf, size_t n)
{
    char d[768];
    ql_describe(qt, q, 6, d, sizeof d);
    if (q->flags & (1u << QL_FALLBACK))
        snprintf(buf, n, "quality_loss_pct %.3g (FALLBACK: %s%s)", q->loss_pct, d,
                 qt ? "" : "; no validate/quality/published-quality.csv found");
    else
        snprintf(buf, n, "quality_loss_pct %.3g expected (%s%s%s)", q->loss_pct, d, qt ? "; " : "",
                 qt ? qt->path : "");
}

void cli_quality_json(struct cJSON *o, const struct ql_table *qt, const struct ql_est *q)
{
    cJSON *x = cJSON_AddObjectToObject(o, "quality"), *a;
    char d[768];
    if (!x)
        return;
    cJSON_AddNumberToObject(x, "loss_pct", q->loss_pct);
    cJSON_AddStringToObject(x, "basis", ql_basis_of(q));
    cJSON_AddBoolToObject(x, "fallback", (q->flags & (1u << QL_FALLBACK)) != 0);
    if ((a = cJSON_AddArrayToObject(x, "flags")))
        for (int b = 0; b < QL_BASIS_COUNT; b++)
            if (q->flags & (1u << b))
                cJSON_AddItemToArray(a, cJSON_CreateString(ql_basis_names[b]));
    if (qt && q->fam >= 0)
        cJSON_AddStringToObject(x, "family", qt->fam[q->fam].name);
    else
        cJSON_AddNullToObject(x, "family");
    if (q->metric >= 0)
        cJSON_AddStringToObject(x, "metric", ql_metrics[q->metric].name);
    else
        cJSON_AddNullToObject(x, "metric");
    if ((a = cJSON_AddArrayToObject(x, "rows")))
        for (int i = 0; qt && i < q->n_used; i++)
            cJSON_AddItemToArray(a, cJSON_CreateString(qt->row[q->used[i]].id));
    cJSON_AddNumberToObject(x, "rows_total", q->n_used_all);
    if (qt)
        cJSON_AddStringToObject(x, "table", qt->path);
    else
        cJSON_AddNullToObject(x, "table");
    ql_describe(qt, q, 6, d, sizeof d);
    cJSON_AddStringToObject(x, "note", d);
}

int cli_cost(const struct cli_opt *opts, const struct cost_cfg *base, struct cost_cfg *c, struct dse_err *e)
{
    if (base)
        *c = *base;
    else
        cost_default(c);
    static const char *const names[] = {"usd-per-kwh", "pue", "amortize-years", "utilization", "hosting-usd-per-hour"};
    double *dst[] = {&c->usd_per_kWh, &c->pue, &c->amortize_years, &c->utilization, &c->hosting_usd_per_hour};
    for (int i = 0; i < 5; i++) {
        const char *v = cli_get(opts, names[i]);
        if (!v)
            continue;
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end || !isfinite(x))
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "--%s: expected a number, got '%s'", names[i], v);
        *dst[i] = x;
    }
    return cost_check(c, "cost: ", e);
}

int cli_thermal(const struct cli_opt *opts, struct hw_system *sys, int need_duration, struct dse_err *e)
{
    static const char *const names[] = {"duration", "ambient", "cooling"};
    struct hw_thermal *t = &sys->thermal;
    for (int i = need_duration ? 0 : 1; i < 3; i++) {
        const char *v = cli_get(opts, names[i]);
        if (!v)
            continue;
        if (!t->present)
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "--%s: %s has no thermal model (a hwdesc \"thermal\" "
                               "section: thermal resistance, heat capacity, throttle temperature)", names[i], sys->name);
        if (i == 2) {
            int k;
            for (k = 0; k < t->n_cooling && strcmp(t->cooling_name[k], v); k++)
                ;
            if (k == t->n_cooling) {
                char list[HW_MAX_COOLING * 26] = "";
                for (int c = 0; c < t->n_cooling; c++)
                    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", c ? ", " : "", t->cooling_name[c]);
                return dse_err_set(e, DSE_EINPUT, NULL, NULL, "--cooling: %s has no cooling '%s' (it has: %s)",
                                   sys->name, v, list);
            }
            t->cooling = k;
            continue;
        }
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end || !isfinite(x))
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "--%s: expected a number, got '%s'", names[i], v);
        if (i == 0 && !(x > 0 && x <= 1e9))
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "--duration: expected seconds in (0, 1e9], got '%s'", v);
        if (i == 1 && !(x >= -60 && x < t->throttle_C))
            return dse_err_set(e, DSE_EINPUT, NULL, NULL, "--ambient: expected degC from -60 up to below %s's "
                               "throttle temperature %g, got '%s'", sys->name, t->throttle_C, v);
        *(i == 0 ? &t->duration_s : &t->ambient_C) = x;
    }
    if (need_duration && (cli_get(opts, "ambient") || cli_get(opts, "cooling")) && !(t->duration_s > 0))
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "--%s: the thermal model needs the run's length: add --duration S",
                           cli_get(opts, "ambient") ? "ambient" : "cooling");
    return DSE_OK;
}
