/* cli_list.c -- `dse list hw|models|sweeps|software`: what ships, one line each. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "eval.h"
#include "jsonu.h"

#define MAX_FILES 1024

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted file names in dir ending in one of the extensions (NULL-terminated); returns the count or -1. */
static int scan(const char *dir, const char *const *exts, char **names)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < MAX_FILES) {
        size_t l = strlen(de->d_name);
        int ok = 0;
        for (int k = 0; exts[k]; k++)
            if (l > strlen(exts[k]) && !strcmp(de->d_name + l - strlen(exts[k]), exts[k]))
                ok = 1;
        if (ok && (names[n] = strdup(de->d_name)))
            n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    return n;
}

/* --json / --csv: each list's rows as objects of typed fields (the table's columns, numbers as numbers),
 * printed at the end; text: NULL (the caller prints its line). */
enum { OUT_TEXT, OUT_JSON, OUT_CSV };
struct lout {
    int fmt;
    cJSON *rows;
};

static cJSON *lout_row(struct lout *o)
{
    if (o->fmt == OUT_TEXT)
        return NULL;
    cJSON *r = cJSON_CreateObject();
    if (r)
        cJSON_AddItemToArray(o->rows, r);
    return r;
}

static void csv_field(const cJSON *v)
{
    if (cJSON_IsNumber(v)) {
        printf("%.10g", v->valuedouble);
        return;
    }
    const char *t = cJSON_IsString(v) ? v->valuestring : "";
    if (!strpbrk(t, ",\"\n")) {
        printf("%s", t);
        return;
    }
    putchar('"');
    for (; *t; t++) {
        if (*t == '"')
            putchar('"');
        putchar(*t);
    }
    putchar('"');
}

static void lout_finish(struct lout *o)
{
    if (o->fmt == OUT_JSON) {
        char *txt = ju_print(o->rows, 1);
        if (txt)
            printf("%s\n", txt);
        free(txt);
    } else if (o->fmt == OUT_CSV && cJSON_GetArraySize(o->rows) > 0) {
        const cJSON *first = cJSON_GetArrayItem(o->rows, 0), *r, *f;
        for (f = first->child; f; f = f->next)
            printf("%s%s", f == first->child ? "" : ",", f->string);
        printf("\n");
        cJSON_ArrayForEach(r, o->rows)
        {
            for (f = r->child; f; f = f->next) {
                if (f != r->child)
                    putchar(',');
                csv_field(f);
            }
            printf("\n");
        }
    }
    cJSON_Delete(o->rows);
}

static void fmt_bytes(double b, char *out, size_t n)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(out, n, "%.4g GiB", b / (1024.0 * 1024 * 1024));
    else
        snprintf(out, n, "%.4g MiB", b / (1024.0 * 1024));
}

static int list_hw(const char *dir, char **names, int n, struct lout *o)
{
    int bad = 0;
    struct hw_system *sys = malloc(sizeof *sys);
    if (!sys)
        return DSE_ERUNTIME;
    if (o->fmt == OUT_TEXT)
        printf("%-30s %-20s %-22s %-28s %8s  %s\n", "name", "devices", "peak (main device)", "main memory", "TDP_W",
               "description");
    for (int i = 0; i < n; i++) {
        char path[1024];
        struct dse_err e;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (hw_load_file(path, sys, &e)) {
            dse_err_print(stderr, &e);
            bad = 1;
            continue;
        }
        char devs[64] = "", peak[32], mem[64], cap[24];
        double tdp = 0;
        for (int k = 0; k < sys->n_dev; k++) {
            int copies = sys->topo.n_level && k == sys->topo.dev ? sys->topo.devices : 1; /* a topology's device */
            char cnt[16] = "";
            if (copies > 1)
                snprintf(cnt, sizeof cnt, "%dx ", copies);
            snprintf(devs + strlen(devs), sizeof devs - strlen(devs), "%s%s%s", k ? "+" : "", cnt,
                     hw_class_names[sys->dev[k].cls]);
            tdp += copies * sys->dev[k].tdp_W;
        }
        const struct hw_device *d = &sys->dev[eval_default_device(sys)];
        enum prec p = P_FP32;
        double pk = hw_max_peak(d, &p);
        snprintf(peak, sizeof peak, "%.4g T%s %s", pk / 1e12, prec_is_int(p) ? "OPS" : "FLOPS", prec_names[p]);
        const struct hw_mem *m = &d->mem[d->n_mem - 1];
        fmt_bytes(m->capacity_bytes, cap, sizeof cap);
        snprintf(mem, sizeof mem, "%s %s %.4g GB/s", cap, m->name, m->bandwidth_Bps / 1e9);
        cJSON *r = lout_row(o);
        if (r) {
            cJSON_AddStringToObject(r, "name", sys->name);
            cJSON_AddStringToObject(r, "devices", devs);
            cJSON_AddNumberToObject(r, "peak_TOPS", pk / 1e12); /* tera-operations a second: FLOPs or integer ops */
            cJSON_AddStringToObject(r, "peak_precision", prec_names[p]);
            cJSON_AddStringToObject(r, "main_memory", m->name);
            cJSON_AddNumberToObject(r, "main_memory_GiB", m->capacity_bytes / (1024.0 * 1024 * 1024));
            cJSON_AddNumberToObject(r, "main_memory_GBps", m->bandwidth_Bps / 1e9);
            cJSON_AddNumberToObject(r, "tdp_W", tdp);
            cJSON_AddStringToObject(r, "description", sys->description);
        } else {
            printf(tdp >= 1e4 ? "%-30s %-20s %-22s %-28s %8.0f  %s\n" : "%-30s %-20s %-22s %-28s %8.4g  %s\n", sys->name,
                   devs, peak, mem, tdp, sys->description);
        }
    }
    free(sys);
    return bad ? DSE_EINPUT : DSE_OK;
}

static const char *model_kind(const struct wl_model *m)
{
    switch (m->kind) {
    case WLM_TRANSFORMER: return m->tf.model_type;
    case WLM_CNN: return m->cnn.arch;
    case WLM_TOPO: return "scale-sim csv";
    case WLM_ONNX: return "onnx";
    default: return "graph";
    }
}

/* zoo: the network zoo (models/zoo), each generator spec's published parameter and MAC counts beside
 * the built graph's. */
static int list_models(const char *dir, char **names, int n, struct lout *o, int zoo)
{
    int bad = 0;
    if (o->fmt == OUT_TEXT && zoo)
        printf("%-26s %-14s %9s %9s %9s %9s %9s %9s\n", "name", "kind", "image", "params_M", "pub_M", "GMAC",
               "pub_GMAC", "worst_%");
    else if (o->fmt == OUT_TEXT)
        printf("%-22s %-14s %12s %12s %14s  %s\n", "name", "kind", "params_M", "active_M", "GMAC", "per");
    for (int i = 0; i < n; i++) {
        char path[1024];
        struct dse_err e;
        struct wl_model m;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (wl_load_file(path, &m, &e)) {
            dse_err_print(stderr, &e);
            bad = 1;
            continue;
        }
        int lm = wl_model_is_lm(&m), enc = m.kind == WLM_TRANSFORMER && !lm;
        int seq = enc || (m.kind == WLM_ONNX && wl_model_takes_tokens(&m));
        struct wl_shape s = {.batch = 1, .tokens = lm ? 1 : seq ? 128 : 1, .past = 0, .tp = 1, .train = 0};
        struct wl_graph g;
        if (wl_build(&m, &s, &g, &e)) {
            dse_err_print(stderr, &e);
            bad = 1;
        } else {
            const char *per = lm && m.kind == WLM_TRANSFORMER && !strcmp(m.tf.model_type, "t5")
                                  ? "prefill of a 1-token input"
                              : lm ? "token (decode, empty cache)"
                              : seq && !(enc && !strcmp(m.tf.model_type, "vit")) ? "128-token sequence"
                                                                                  : "inference, batch 1";
            const struct wl_cnn *c = m.kind == WLM_CNN ? &m.cnn : NULL;
            double pp = c ? c->published_params : 0, pm = c ? c->published_GMACs * 1e9 : 0, worst = 0;
            if (pp > 0)
                worst = fabs(wl_params(&g) / pp - 1);
            if (pm > 0 && fabs(wl_macs(&g) / pm - 1) > worst)
                worst = fabs(wl_macs(&g) / pm - 1);
            cJSON *r = lout_row(o);
            if (r) {
                cJSON_AddStringToObject(r, "name", m.name);
                cJSON_AddStringToObject(r, "kind", model_kind(&m));
                cJSON_AddNumberToObject(r, "params", wl_params(&g));
                cJSON_AddNumberToObject(r, "active_params", wl_active_params(&g));
                cJSON_AddNumberToObject(r, "macs", wl_macs(&g));
                cJSON_AddStringToObject(r, "per", per);
                if (pp > 0)
                    cJSON_AddNumberToObject(r, "published_params", pp);
                if (pm > 0)
                    cJSON_AddNumberToObject(r, "published_macs", pm);
                if (pp > 0 || pm > 0)
                    cJSON_AddNumberToObject(r, "worst_count_error_pct", 100 * worst);
            } else if (zoo) {
                char img[24] = "-";
                if (c)
                    snprintf(img, sizeof img, "%lldx%lld", (long long)c->image_h, (long long)c->image_w);
                printf("%-26s %-14s %9s %9.3f %9.3f %9.4g %9.4g %9.2f\n", m.name, model_kind(&m), img, wl_params(&g) / 1e6,
                       pp / 1e6, wl_macs(&g) / 1e9, pm / 1e9, 100 * worst);
            } else {
                printf("%-22s %-14s %12.2f %12.2f %14.4g  %s\n", m.name, model_kind(&m), wl_params(&g) / 1e6,
                       wl_active_params(&g) / 1e6, wl_macs(&g) / 1e9, per);
            }
            wl_graph_free(&g);
        }
        wl_model_free(&m);
    }
    return bad ? DSE_EINPUT : DSE_OK;
}

static int list_sweeps(const char *dir, char **names, int n, struct lout *o)
{
    int bad = 0;
    if (o->fmt == OUT_TEXT)
        printf("%-24s %s\n", "name", "description");
    for (int i = 0; i < n; i++) {
        char path[1024], *buf;
        size_t len;
        struct dse_err e;
        cJSON *root;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, &e);
        if (!rc) {
            rc = ju_parse(buf, len, path, &root, &e);
            free(buf);
        }
        if (rc) {
            dse_err_print(stderr, &e);
            bad = 1;
            continue;
        }
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "description");
        cJSON *r = lout_row(o);
        if (r) {
            char nm[256];
            snprintf(nm, sizeof nm, "%.*s", (int)(strlen(names[i]) - 5), names[i]);
            cJSON_AddStringToObject(r, "name", nm);
            cJSON_AddStringToObject(r, "description", cJSON_IsString(d) ? d->valuestring : "");
        } else {
            printf("%-24.*s %s\n", (int)(strlen(names[i]) - 5), names[i], cJSON_IsString(d) ? d->valuestring : "");
        }
        cJSON_Delete(root);
    }
    if (n == 0 && o->fmt == OUT_TEXT)
        printf("(none yet)\n");
    return bad ? DSE_EINPUT : DSE_OK;
}

static int list_software(const char *dir, char **names, int n, struct lout *o)
{
    int bad = 0;
    if (o->fmt == OUT_TEXT)
        printf("%-16s %-22s %-10s %-8s %s\n", "name", "targets", "kv_cache", "host_us", "passes");
    for (int i = 0; i < n; i++) {
        char path[1024], targets[64] = "", passes[256] = "";
        struct dse_err e;
        struct sw_stack s;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (pass_load_file(path, &s, &e)) {
            dse_err_print(stderr, &e);
            bad = 1;
            continue;
        }
        for (int c = 0; c < HW_CLASS_COUNT; c++)
            if (s.targets & (1u << c))
                snprintf(targets + strlen(targets), sizeof targets - strlen(targets), "%s%s", targets[0] ? "," : "",
                         hw_class_names[c]);
        for (int p = 0; p < PASS_COUNT; p++)
            if (pass_has(&s, (enum pass_id)p))
                snprintf(passes + strlen(passes), sizeof passes - strlen(passes), "%s%s", passes[0] ? " " : "",
                         pass_table[p].name);
        char vers[SW_MAX_VERSIONS * (SW_VERSION_LEN + 12) + 16] = ""; /* its releases, the default marked */
        for (int v = 0; v < s.n_versions; v++)
            snprintf(vers + strlen(vers), sizeof vers - strlen(vers), "%s%s%s", v ? ", " : "  releases: ",
                     s.versions[v].name, strcmp(s.versions[v].name, s.default_version) ? "" : " (default)");
        cJSON *r = lout_row(o);
        if (r) {
            cJSON_AddStringToObject(r, "name", s.name);
            char names_v[sizeof vers] = "";
            for (int v = 0; v < s.n_versions; v++)
                snprintf(names_v + strlen(names_v), sizeof names_v - strlen(names_v), "%s%s", v ? " " : "",
                         s.versions[v].name);
            cJSON_AddStringToObject(r, "versions", names_v);
            cJSON_AddStringToObject(r, "default_version", s.default_version);
            cJSON_AddStringToObject(r, "targets", targets);
            cJSON_AddStringToObject(r, "kv_cache", kv_alloc_names[s.kv]);
            cJSON_AddNumberToObject(r, "host_us", s.host_kernel_s * 1e6);
            cJSON_AddStringToObject(r, "passes", passes);
        } else {
            printf("%-16s %-22s %-10s %-8.3g %s%s\n", s.name, targets, kv_alloc_names[s.kv], s.host_kernel_s * 1e6,
                   passes, vers);
        }
    }
    return bad ? DSE_EINPUT : DSE_OK;
}

int cmd_list(int argc, char **argv)
{
    static const char *const what[] = {"hw", "models", "sweeps", "software", "zoo", NULL};
    static const char *const dirs[] = {"hwdesc", "models", "sweeps", "software", "models/zoo"};
    static const char *const json_ext[] = {".json", NULL}, *const model_ext[] = {".json", ".csv", ".onnx", NULL};
    struct lout o = {OUT_TEXT, NULL};
    int k = -1, bad = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--csv")) {
            if (o.fmt != OUT_TEXT)
                bad = 1;
            o.fmt = argv[i][2] == 'j' ? OUT_JSON : OUT_CSV;
        } else if (k < 0 && ju_lookup(what, argv[i]) >= 0) {
            k = ju_lookup(what, argv[i]);
        } else {
            bad = 1;
        }
    }
    if (k < 0 || bad) {
        fprintf(stderr, "dse: usage: dse list hw|models|sweeps|software|zoo [--json | --csv]\n");
        return DSE_EINPUT;
    }
    char dir[512], *names[MAX_FILES];
    cli_data_dir(dirs[k], dir, sizeof dir);
    int n = scan(dir, k == 1 || k == 4 ? model_ext : json_ext, names);
    if (n < 0) {
        fprintf(stderr, "dse: %s: cannot open directory\n", dir);
        return DSE_EINPUT;
    }
    if (o.fmt != OUT_TEXT && !(o.rows = cJSON_CreateArray())) {
        for (int i = 0; i < n; i++)
            free(names[i]);
        fprintf(stderr, "dse: out of memory\n");
        return DSE_ERUNTIME;
    }
    int rc = k == 0   ? list_hw(dir, names, n, &o)
             : k == 1 || k == 4 ? list_models(dir, names, n, &o, k == 4)
             : k == 2 ? list_sweeps(dir, names, n, &o)
                      : list_software(dir, names, n, &o);
    lout_finish(&o);
    for (int i = 0; i < n; i++)
        free(names[i]);
    return rc;
}
