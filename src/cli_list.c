/* cli_list.c -- `dse list hw|models|sweeps|software`: what ships, one line each. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "eval.h"
#include "jsonu.h"

#define MAX_FILES 1024

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted file names in dir ending in one of the extensions; returns the count or -1. */
static int scan(const char *dir, const char *ext1, const char *ext2, char **names)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < MAX_FILES) {
        size_t l = strlen(de->d_name);
        int ok = 0;
        for (int k = 0; k < 2; k++) {
            const char *x = k ? ext2 : ext1;
            if (x && l > strlen(x) && !strcmp(de->d_name + l - strlen(x), x))
                ok = 1;
        }
        if (ok && (names[n] = strdup(de->d_name)))
            n++;
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    return n;
}

static void fmt_bytes(double b, char *out, size_t n)
{
    if (b >= 1024.0 * 1024 * 1024)
        snprintf(out, n, "%.4g GiB", b / (1024.0 * 1024 * 1024));
    else
        snprintf(out, n, "%.4g MiB", b / (1024.0 * 1024));
}

static int list_hw(const char *dir, char **names, int n)
{
    int bad = 0;
    struct hw_system *sys = malloc(sizeof *sys);
    if (!sys)
        return DSE_ERUNTIME;
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
        printf(tdp >= 1e4 ? "%-30s %-20s %-22s %-28s %8.0f  %s\n" : "%-30s %-20s %-22s %-28s %8.4g  %s\n", sys->name,
               devs, peak, mem, tdp, sys->description);
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
    default: return "graph";
    }
}

static int list_models(const char *dir, char **names, int n)
{
    int bad = 0;
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
        struct wl_shape s = {.batch = 1, .tokens = lm ? 1 : enc ? 128 : 1, .past = 0, .tp = 1, .train = 0};
        struct wl_graph g;
        if (wl_build(&m, &s, &g, &e)) {
            dse_err_print(stderr, &e);
            bad = 1;
        } else {
            printf("%-22s %-14s %12.2f %12.2f %14.4g  %s\n", m.name, model_kind(&m), wl_params(&g) / 1e6,
                   wl_active_params(&g) / 1e6, wl_macs(&g) / 1e9,
                   lm ? "token (decode, empty cache)" : enc && strcmp(m.tf.model_type, "vit") ? "128-token sequence"
                                                                                              : "inference, batch 1");
            wl_graph_free(&g);
        }
        wl_model_free(&m);
    }
    return bad ? DSE_EINPUT : DSE_OK;
}

static int list_sweeps(const char *dir, char **names, int n)
{
    int bad = 0;
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
        printf("%-24.*s %s\n", (int)(strlen(names[i]) - 5), names[i], cJSON_IsString(d) ? d->valuestring : "");
        cJSON_Delete(root);
    }
    if (n == 0)
        printf("(none yet)\n");
    return bad ? DSE_EINPUT : DSE_OK;
}

static int list_software(const char *dir, char **names, int n)
{
    int bad = 0;
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
        printf("%-16s %-22s %-10s %-8.3g %s\n", s.name, targets, kv_alloc_names[s.kv], s.host_kernel_s * 1e6, passes);
    }
    return bad ? DSE_EINPUT : DSE_OK;
}

int cmd_list(int argc, char **argv)
{
    static const char *const what[] = {"hw", "models", "sweeps", "software", NULL};
    static const char *const dirs[] = {"hwdesc", "models", "sweeps", "software"};
    if (argc < 3 || ju_lookup(what, argv[2]) < 0 || argc > 3) {
        fprintf(stderr, "dse: usage: dse list hw|models|sweeps|software\n");
        return DSE_EINPUT;
    }
    int k = ju_lookup(what, argv[2]);
    char dir[512], *names[MAX_FILES];
    cli_data_dir(dirs[k], dir, sizeof dir);
    int n = scan(dir, ".json", k == 1 ? ".csv" : NULL, names);
    if (n < 0) {
        fprintf(stderr, "dse: %s: cannot open directory\n", dir);
        return DSE_EINPUT;
    }
    int rc = k == 0   ? list_hw(dir, names, n)
             : k == 1 ? list_models(dir, names, n)
             : k == 2 ? list_sweeps(dir, names, n)
                      : list_software(dir, names, n);
    for (int i = 0; i < n; i++)
        free(names[i]);
    return rc;
}
