/* validate_measured.c -- the measured-kernel corpus (validate/measured/SOURCE/kernels.csv, schema and
 * split rules in validate/measured/README.md): published timings of single GEMMs, attention, norm and
 * element-wise kernels and of collectives, each row predicted on the shipped hwdesc it names.
 *
 * A kernel row becomes the one-operator workload graph of the native suites (vk_graph) and is predicted
 * by the same evaluation as any workload (vk_predict at the tier asked), its operands starting in main
 * memory (the corpora time kernels inside a model's run, or operands larger than the caches) and, as a
 * profiler's trace times a kernel, without the host's launch: the caller gives a system whose devices
 * cost each kernel their fixed duration (kc_trace_view: kernel_us of the architecture) instead. A collective row is predicted by the alpha-beta model of par_coll_cost over the
 * system's topology (its ranks contiguous: `nodes` nodes of ranks / nodes devices each, or one device
 * per node); the reduction's own memory traffic is not added (the collective op of a workload pays it
 * on the device, this check the network alone), which under-predicts small all-reduces inside a node
 * where the copy, not the link, is the bound. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonu.h"
#include "par.h"
#include "validate.h"

#define KC_MAX_ROWS 2000000

enum { KC_CASE, KC_HW, KC_KERNEL, KC_PREC, KC_SHAPE, KC_MEASURED, KC_HALF, KC_GROUP, KC_NOTE, KC_COLS,
       KC_WORKLOAD = KC_COLS, KC_SOFTWARE, KC_NET_COLS };
/* A kernel source's header, and a network source's, which adds the workload and the stack it ran. */
static const char *const kc_cols[KC_NET_COLS + 1] = {"case", "hw", "kernel", "precision", "shape", "measured_ms",
                                                     "half", "group", "note", "workload", "software", NULL};
static const char *const kc_coll_names[COLL_COUNT] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                      "send_recv"};

struct kc_load {
    struct kcorpus *mc;
    const char *file;
    int ncols; /* KC_COLS (kernels) or KC_NET_COLS (networks) */
};

static int slug_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (!n || n >= max)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' || *s == '_'))
            return 0;
    return 1;
}

/* A row's shape "NAME=INT;NAME=INT;...": each name one of names[0..n), its value in [lo[i], hi[i]] into
 * v[i] (the caller's defaults stay for names not given); `expect` says what the kernel takes. */
static int shape_ints(const char *shape, const char *const *names, int n, const long long *lo, const long long *hi,
                      long long *v, const char *expect, const char *file, const char *where, struct dse_err *e)
{
    char buf[160];
    if (strlen(shape) >= sizeof buf)
        return dse_err_set(e, DSE_EINPUT, file, where, "shape: too long");
    dse_strlcpy(buf, shape, sizeof buf);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ";", &save); kv; kv = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(kv, '=');
        int i = 0;
        if (eq)
            *eq = '\0';
        while (i < n && strcmp(kv, names[i]))
            i++;
        if (!eq || i == n)
            return dse_err_set(e, DSE_EINPUT, file, where, "shape: %s, got '%.40s'", expect, kv);
        if (pcsv_int(eq + 1, lo[i], hi[i], &v[i]))
            return dse_err_set(e, DSE_EINPUT, file, where, "shape: %s: expected a whole number in [%lld, %lld], got '%.30s'",
                               kv, lo[i], hi[i], eq + 1);
    }
    return DSE_OK;
}

/* "B=..;H=..;W=..;S=.." of a network row: B required, the rest optional (H and W as a CNN spec's image). */
static int net_shape(const char *shape, struct kcase *c, const char *file, const char *where, struct dse_err *e)
{
    long long v[4] = {-1, 0, 0, 0};
    static const char *const names[] = {"B", "H", "W", "S"};
    static const long long lo[] = {1, 32, 32, 1}, hi[] = {1 << 20, 8192, 8192, 1 << 20};
    int rc = shape_ints(shape, names, 4, lo, hi, v, "a network takes B, H, W and S", file, where, e);
    if (rc)
        return rc;
    if (v[0] < 0)
        return dse_err_set(e, DSE_EINPUT, file, where, "shape: a network needs its batch B");
    if ((v[1] > 0) != (v[2] > 0))
        return dse_err_set(e, DSE_EINPUT, file, where, "shape: give both H and W, or neither");
    c->net_b = v[0];
    c->net_h = v[1];
    c->net_w = v[2];
    c->net_s = v[3];
    return DSE_OK;
}

/* "bytes=..;ranks=..;nodes=.." of a collective row. */
static int coll_shape(const char *shape, struct kcase *c, const char *file, const char *where, struct dse_err *e)
{
    long long v[3] = {-1, -1, 1};
    static const char *const names[] = {"bytes", "ranks", "nodes"};
    static const long long lo[] = {1, 1, 1}, hi[] = {1LL << 40, HW_MAX_TOPO_DEVICES, 4096};
    int rc = shape_ints(shape, names, 3, lo, hi, v, "expected bytes=N;ranks=N;nodes=N", file, where, e);
    if (rc)
        return rc;
    if (v[0] < 0 || v[1] < 0)
        return dse_err_set(e, DSE_EINPUT, file, where, "shape: a collective needs bytes and ranks");
    if (v[1] % v[2])
        return dse_err_set(e, DSE_EINPUT, file, where, "shape: %lld ranks do not spread evenly over %lld nodes", v[1], v[2]);
    c->bytes = (double)v[0];
    c->ranks = (int)v[1];
    c->nodes = (int)v[2];
    snprintf(c->k.shape, sizeof c->k.shape, "bytes=%lld,ranks=%lld,nodes=%lld", v[0], v[1], v[2]);
    return DSE_OK;
}

static int kc_row(char **f, int line, void *ctx, struct dse_err *e)
{
    struct kc_load *L = ctx;
    struct kcorpus *mc = L->mc;
    char where[32];
    snprintf(where, sizeof where, "line %d", line);
    if (mc->n == KC_MAX_ROWS)
        return dse_err_set(e, DSE_EINPUT, L->file, where, "more than %d rows", KC_MAX_ROWS);
    if (mc->n == mc->cap) {
        int cap = mc->cap ? mc->cap * 2 : 1024;
        struct kcase *c = realloc(mc->c, sizeof *c * (size_t)cap);
        if (!c)
            return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
        mc->c = c;
        mc->cap = cap;
    }
    struct kcase *c = &mc->c[mc->n];
    memset(c, 0, sizeof *c);
    c->coll = -1;
    if (!slug_ok(f[KC_CASE], sizeof c->id))
        return dse_err_set(e, DSE_EINPUT, L->file, where, "case: expected a slug of [a-z0-9._-] under %zu characters, "
                                                          "got '%.40s'", sizeof c->id, f[KC_CASE]);
    if (!slug_ok(f[KC_HW], sizeof c->hw))
        return dse_err_set(e, DSE_EINPUT, L->file, where, "hw: expected a shipped hwdesc name, got '%.40s'", f[KC_HW]);
    dse_strlcpy(c->id, f[KC_CASE], sizeof c->id);
    dse_strlcpy(c->hw, f[KC_HW], sizeof c->hw);
    int p = prec_from_name(f[KC_PREC]);
    if (p < 0)
        return dse_err_set(e, DSE_EINPUT, L->file, where, "precision: unknown '%.20s'", f[KC_PREC]);
    for (int k = 0; k < COLL_COUNT; k++)
        if (!strcmp(f[KC_KERNEL], kc_coll_names[k]))
            c->coll = k;
    int rc;
    if (L->ncols == KC_NET_COLS) { /* a network source: every row a network, every network row here */
        if (strcmp(f[KC_KERNEL], "network"))
            return dse_err_set(e, DSE_EINPUT, L->file, where, "kernel: a network source's rows are 'network', got "
                                                              "'%.30s'", f[KC_KERNEL]);
        if (!f[KC_WORKLOAD][0] || strlen(f[KC_WORKLOAD]) >= sizeof c->workload || strstr(f[KC_WORKLOAD], ".."))
            return dse_err_set(e, DSE_EINPUT, L->file, where, "workload: expected a shipped workload name, got "
                                                              "'%.40s'", f[KC_WORKLOAD]);
        if (!slug_ok(f[KC_SOFTWARE], sizeof c->software) && !strchr(f[KC_SOFTWARE], '@'))
            return dse_err_set(e, DSE_EINPUT, L->file, where, "software: expected a stack name (or default), got "
                                                              "'%.40s'", f[KC_SOFTWARE]);
        if (strlen(f[KC_SOFTWARE]) >= sizeof c->software)
            return dse_err_set(e, DSE_EINPUT, L->file, where, "software: too long");
        c->net = 1;
        dse_strlcpy(c->workload, f[KC_WORKLOAD], sizeof c->workload);
        dse_strlcpy(c->software, f[KC_SOFTWARE], sizeof c->software);
        if ((rc = net_shape(f[KC_SHAPE], c, L->file, where, e)))
            return rc;
        int n = snprintf(c->k.shape, sizeof c->k.shape, "%s:B=%lld", c->workload, c->net_b);
        if (c->net_h)
            n += snprintf(c->k.shape + n, sizeof c->k.shape - (size_t)n, ",H=%lld,W=%lld", c->net_h, c->net_w);
        if (c->net_s)
            snprintf(c->k.shape + n, sizeof c->k.shape - (size_t)n, ",S=%lld", c->net_s);
        c->k.prec = (enum prec)p;
    } else if (!strcmp(f[KC_KERNEL], "network")) {
        return dse_err_set(e, DSE_EINPUT, L->file, where, "kernel: a network row needs the header's workload and "
                                                          "software columns (validate/measured/README.md)");
    } else if (c->coll >= 0) {
        if ((rc = coll_shape(f[KC_SHAPE], c, L->file, where, e)))
            return rc;
        c->k.prec = (enum prec)p;
    } else {
        if (vk_kind_from_name(f[KC_KERNEL]) < 0)
            return dse_err_set(e, DSE_EINPUT, L->file, where, "kernel: unknown '%.30s' (validate/measured/README.md "
                                                              "lists the kernels)", f[KC_KERNEL]);
        char spec[200];
        int n = snprintf(spec, sizeof spec, "%s:%s", f[KC_KERNEL], f[KC_SHAPE]);
        if (n < 0 || (size_t)n >= sizeof spec)
            return dse_err_set(e, DSE_EINPUT, L->file, where, "shape: too long");
        for (char *s = spec; *s; s++)
            if (*s == ';')
                *s = ',';
        if ((rc = pcase_kernel(spec, f[KC_PREC], L->file, where, &c->k, e)))
            return rc;
        c->k.cold = 1;
        c->k.burst = 1; /* a profiler's or benchmark's timing of one kernel */
    }
    char *end;
    c->measured_ms = strtod(f[KC_MEASURED], &end);
    if (end == f[KC_MEASURED] || *end || !(c->measured_ms > 0) || !(c->measured_ms < 1e9))
        return dse_err_set(e, DSE_EINPUT, L->file, where, "measured_ms: expected a positive number, got '%.30s'",
                           f[KC_MEASURED]);
    if (strcmp(f[KC_HALF], "fit") && strcmp(f[KC_HALF], "heldout"))
        return dse_err_set(e, DSE_EINPUT, L->file, where, "half: expected fit or heldout, got '%.20s'", f[KC_HALF]);
    c->heldout = !strcmp(f[KC_HALF], "heldout");
    if (strlen(f[KC_GROUP]) >= sizeof c->group || strlen(f[KC_NOTE]) >= sizeof c->note)
        return dse_err_set(e, DSE_EINPUT, L->file, where, "group or note: too long (%zu, %zu characters at most)",
                           sizeof c->group - 1, sizeof c->note - 1);
    dse_strlcpy(c->group, f[KC_GROUP], sizeof c->group);
    dse_strlcpy(c->note, f[KC_NOTE], sizeof c->note);
    mc->n++;
    return DSE_OK;
}

static int kc_strcmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int kcorpus_unique(const struct kcorpus *mc, int from, const char *what, struct dse_err *e)
{
    int m = mc->n - from, rc = DSE_OK;
    if (m < 2)
        return DSE_OK;
    const char **ids = malloc(sizeof *ids * (size_t)m); /* a sorted copy: n log n */
    if (!ids)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    for (int i = 0; i < m; i++)
        ids[i] = mc->c[from + i].id;
    qsort(ids, (size_t)m, sizeof *ids, kc_strcmp);
    for (int i = 1; i < m && !rc; i++)
        if (!strcmp(ids[i], ids[i - 1]))
            rc = dse_err_set(e, DSE_EINPUT, what, NULL, "case '%s' appears twice", ids[i]);
    free(ids);
    return rc;
}

int kcorpus_load_buf(const char *text, size_t len, const char *fname, struct kcorpus *mc, struct dse_err *e)
{
    struct kc_load L = {mc, fname, KC_COLS};
    int n0 = mc->n;
    /* the header (the first line that is not a comment or blank) tells a network source */
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        if (j > i && text[i] != '#' && text[i] != '\r') {
            static const char net_head[] = "case,hw,kernel,precision,shape,measured_ms,half,group,note,workload,";
            if (j - i >= sizeof net_head - 1 && !memcmp(text + i, net_head, sizeof net_head - 1))
                L.ncols = KC_NET_COLS;
            break;
        }
        i = j + 1;
    }
    int rc = pcsv_rows_doc(text, len, fname, kc_cols, L.ncols, "measured-kernel corpus", "validate/measured/README.md",
                           kc_row, &L, e);
    if (!rc && mc->n == n0)
        rc = dse_err_set(e, DSE_EINPUT, fname, NULL, "no rows");
    if (!rc)
        rc = kcorpus_unique(mc, n0, fname, e);
    if (rc)
        mc->n = n0;
    return rc;
}

int kcorpus_load(const char *path, struct kcorpus *mc, struct dse_err *e)
{
    size_t len;
    char *text = NULL;
    int rc = ju_read_file(path, (size_t)1 << 30, &text, &len, e);
    if (rc)
        return rc;
    rc = kcorpus_load_buf(text, len, path, mc, e);
    free(text);
    return rc;
}

void kcorpus_free(struct kcorpus *mc)
{
    free(mc->c);
    memset(mc, 0, sizeof *mc);
}

const char *kcase_class(const struct kcase *c)
{
    if (c->net)
        return "network";
    if (c->coll >= 0)
        return kc_coll_names[c->coll];
    if (c->k.type == VK_ATTENTION)
        return c->k.s == 1 ? "attention_decode" : "attention_prefill";
    return vk_kinds[c->k.type].name;
}

/* A collective over `ranks` devices of sys's topology: contiguous ranks, or one per node. */
static int coll_predict(struct kcase *c, const struct hw_system *sys, struct dse_err *e)
{
    const struct hw_topology *t = &sys->topo;
    if (t->n_level < 1 || t->devices < c->ranks)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s has %d devices in its topology, the case %d ranks", sys->name,
                           t->n_level < 1 ? 1 : t->devices, c->ranks);
    int per_node = c->ranks / c->nodes, node = t->level[0].count, stride;
    if (c->nodes == 1 && c->ranks <= node)
        stride = 1;
    else if (c->nodes > 1 && per_node == node)
        stride = 1;
    else if (c->nodes > 1 && per_node == 1)
        stride = node;
    else
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%d ranks over %d nodes of %d devices: not a group dse places "
                                                      "(contiguous ranks, or one per node)", c->ranks, c->nodes, node);
    if ((long long)stride * c->ranks > t->devices)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s: %d nodes asked, %d in its topology", sys->name, c->nodes,
                           t->devices / node);
    struct coll_cost cc;
    int rc = par_coll_cost(t, (enum coll_kind)c->coll, c->ranks, stride, c->bytes, &cc, e);
    if (!rc)
        c->predicted_ms = cc.time_s * 1e3;
    return rc;
}

void kc_trace_view(struct hw_system *sys)
{
    for (int d = 0; d < sys->n_dev; d++)
        sys->dev[d].per_op_s = sys->dev[d].graph_node_s = sys->dev[d].kernel_s;
}

int kcase_predict(struct kcase *c, const struct hw_system *sys, enum fidelity f, struct dse_err *e)
{
    c->ok = 0;
    c->reason[0] = '\0';
    int rc;
    if (c->net)
        return dse_err_set(e, DSE_ERUNTIME, NULL, NULL, "%s: a network row is predicted with its workload", c->id);
    if (c->coll >= 0) {
        rc = coll_predict(c, sys, e);
    } else {
        struct wl_graph g;
        int dev = eval_default_device(sys);
        double ms = 0;
        if ((rc = vk_graph(&c->k, &g, e)))
            return rc;
        rc = vk_supported(&c->k, &g, &sys->dev[dev])
                 ? vk_predict(&c->k, &g, sys, dev, f, 0, &ms, NULL, e)
                 : dse_err_set(e, DSE_EINPUT, NULL, NULL, "%s has no engine for %s at %s", sys->dev[dev].name,
                               vk_kinds[c->k.type].name, prec_names[c->k.prec]);
        wl_graph_free(&g);
        c->predicted_ms = ms;
    }
    if (rc == DSE_EINPUT) { /* not predictable here: a reason, not a failure of the run */
        dse_strlcpy(c->reason, e->msg, sizeof c->reason);
        dse_err_clear(e);
        return DSE_OK;
    }
    c->ok = !rc && c->predicted_ms > 0;
    if (!rc && !c->ok)
        dse_strlcpy(c->reason, "predicted no time", sizeof c->reason);
    return rc;
}

int kcase_predict_net(struct kcase *c, const struct hw_system *sys, const struct wl_model *m, const struct sw_stack *sw,
                      enum fidelity f, struct dse_err *e)
{
    c->ok = 0;
    c->reason[0] = '\0';
    struct wl_model mm = *m; /* a shallow view: only a generator's input size changes */
    if (c->net_h && m->kind == WLM_CNN) {
        mm.cnn.image_h = c->net_h;
        mm.cnn.image_w = c->net_w;
    } else if (c->net_h && m->kind == WLM_TRANSFORMER && !strcmp(m->tf.model_type, "vit")) {
        if (c->net_h != c->net_w || c->net_h != m->tf.image_size) {
            snprintf(c->reason, sizeof c->reason, "%s takes %lldx%lld images, the row %lldx%lld", m->name,
                     (long long)m->tf.image_size, (long long)m->tf.image_size, c->net_h, c->net_w);
            return DSE_OK;
        }
    } else if (c->net_h) {
        snprintf(c->reason, sizeof c->reason, "%s is not built from a generator: its input size is its file's, the "
                                              "row's %lldx%lld not applied", m->name, c->net_h, c->net_w);
        return DSE_OK;
    }
    struct pcase pc;
    memset(&pc, 0, sizeof pc);
    dse_strlcpy(pc.id, c->id, sizeof pc.id);
    dse_strlcpy(pc.device, sys->dev[eval_default_device(sys)].name, sizeof pc.device);
    dse_strlcpy(pc.software, c->software, sizeof pc.software);
    dse_strlcpy(pc.workload, c->workload, sizeof pc.workload);
    dse_strlcpy(pc.precision, prec_names[c->k.prec], sizeof pc.precision);
    pc.phase = PH_NONE;
    pc.batch = c->net_b;
    pc.prompt = c->net_s;
    pc.instances = 1;
    pc.metric = PM_THROUGHPUT;
    pc.value = (double)c->net_b / c->measured_ms * 1e3;
    int rc = pcase_predict(&pc, sys, &mm, sw, f, e);
    if (rc == DSE_EINPUT) {
        dse_strlcpy(c->reason, e->msg, sizeof c->reason);
        dse_err_clear(e);
        return DSE_OK;
    }
    if (rc)
        return rc;
    if (!pc.ok) {
        dse_strlcpy(c->reason, pc.reason, sizeof c->reason);
        return DSE_OK;
    }
    c->predicted_ms = (double)c->net_b / pc.predicted * 1e3;
    c->ok = c->predicted_ms > 0;
    return DSE_OK;
}
