/* pass_load.c -- reading and checking software stack files (software/NAME.json; schema in
 * software/README.md): every field known, every figure in range and sourced. */
#include "pass.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonu.h"


const struct pass_info pass_table[PASS_COUNT] = {
    [PASS_GEMM_MERGE] = {"gemm_merge", "matmuls sharing an input merge into one GEMM (QKV, gate/up)"},
    [PASS_BN_FOLD] = {"bn_fold", "BatchNorm folds into the preceding convolution or matmul"},
    [PASS_EPILOGUE] = {"epilogue_fusion", "bias, activation, residual add run in the GEMM/conv epilogue"},
    [PASS_ELTWISE] = {"eltwise_fusion", "chains of element-wise ops run as one kernel"},
    [PASS_NORM] = {"norm_fusion", "a norm or softmax fuses with its element-wise neighbours"},
    [PASS_ATTENTION] = {"fused_attention", "attention is one kernel with no S x T tensor in memory"},
    [PASS_LAUNCH] = {"launch_elimination", "kernels replayed from a captured graph: no host launch each"},
    [PASS_LAYER_FUSION] = {"layer_fusion", "consecutive layers fuse through on-chip memory (depth-first)"},
};
_Static_assert(sizeof pass_table / sizeof pass_table[0] == PASS_COUNT, "one pass_table row per enum pass_id");

const char *const kv_alloc_names[KV_COUNT + 1] = {"contiguous", "paged", "concat", NULL};
const char *const partition_names[PART_COUNT + 1] = {"any", "prefix", NULL};

const char *const sw_run_keys[SW_RUN_COUNT + 1] = {"training", "prefill", "decode", NULL};

static void no_version(struct sw_stack *s)
{
    s->version[0] = 0;
    for (int k = 0; k < SW_RUN_COUNT; k++)
        s->eff[k] = 1;
    s->mape_pct[0] = s->mape_pct[1] = -1;
}

void pass_none(struct sw_stack *s)
{
    memset(s, 0, sizeof *s);
    no_version(s);
    dse_strlcpy(s->name, "none", sizeof s->name);
    dse_strlcpy(s->description, "no software stack: every operator its own kernel, as the graph is written",
                sizeof s->description);
    s->targets = (1u << HW_CLASS_COUNT) - 1;
    s->trains = 1; /* the graph as written has a backward like any other */
    s->train_precs = PASS_TRAIN_PRECS;
    s->kv = KV_CONTIGUOUS;
    s->passes = 1u << PASS_ATTENTION; /* the graph's attention operator is the fused kernel it names */
}

int pass_has(const struct sw_stack *s, enum pass_id p) { return s && (s->passes & (1u << p)) != 0; }

static int need_source(struct ju *j, const cJSON *o)
{
    char src[1024];
    return ju_str(j, o, "source", 0, src, sizeof src);
}

static int get_bool(struct ju *j, const cJSON *o, const char *key, int *out)
{
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!b)
        return DSE_OK;
    if (!cJSON_IsBool(b)) {
        size_t old = ju_key(j, key);
        int rc = ju_fail(j, "expected true or false");
        ju_pop(j, old);
        return rc;
    }
    *out = cJSON_IsTrue(b);
    return DSE_OK;
}

static int load_targets(struct ju *j, const cJSON *root, struct sw_stack *s)
{
    const cJSON *arr;
    int n, rc;
    if ((rc = ju_array(j, root, "targets", 0, HW_CLASS_COUNT, &arr, &n)))
        return rc;
    size_t old = ju_key(j, "targets");
    if (n == 0)
        rc = ju_fail(j, "expected at least one device class (cpu, gpu, systolic, npu)");
    for (int i = 0; i < n && !rc; i++) {
        const cJSON *c = cJSON_GetArrayItem(arr, i);
        size_t o2 = ju_idx(j, i);
        int k = cJSON_IsString(c) ? ju_lookup(hw_class_names, c->valuestring) : -1;
        if (k < 0) {
            char list[64];
            ju_list_names(hw_class_names, list, sizeof list);
            rc = ju_fail(j, "expected a device class (one of: %s)", list);
        } else if (s->targets & (1u << k)) {
            rc = ju_fail(j, "'%s' is listed twice", c->valuestring);
        }
        s->targets |= k >= 0 ? 1u << k : 0;
        ju_pop(j, o2);
    }
    ju_pop(j, old);
    return rc;
}

static int load_passes(struct ju *j, const cJSON *root, struct sw_stack *s)
{
    const char *keys[PASS_COUNT + 3];
    for (int p = 0; p < PASS_COUNT; p++)
        keys[p] = pass_table[p].name;
    keys[PASS_COUNT] = "source";
    keys[PASS_COUNT + 1] = "note";
    keys[PASS_COUNT + 2] = NULL;
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "passes");
    size_t old = ju_key(j, "passes");
    int rc = o ? ju_object(j, o, keys) : ju_fail(j, "missing (expected an object of pass name -> true/false, source)");
    for (int p = 0; p < PASS_COUNT && !rc; p++) {
        int on = 0;
        rc = get_bool(j, o, pass_table[p].name, &on);
        if (on)
            s->passes |= 1u << p;
    }
    if (!rc)
        rc = need_source(j, o);
    ju_pop(j, old);
    return rc;
}

static int load_memory(struct ju *j, const cJSON *root, struct sw_stack *s)
{
    static const char *const keys[] = {"weights_on_chip", "activations_on_chip", "activations_first", "kv_cache",
                                       "kv_block_tokens", "partition", "utilization", "source", "note", NULL};
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "memory");
    if (!o)
        return DSE_OK;
    size_t old = ju_key(j, "memory");
    int kv = KV_CONTIGUOUS, part = PART_ANY, act = 0, first = 0, rc;
    long long blk = 0;
    double share = 0, util = 0;
    if (!(rc = ju_object(j, o, keys)) && !(rc = ju_num(j, o, "weights_on_chip", JU_OPT | JU_NONNEG, 1, &share)) &&
        !(rc = ju_num(j, o, "utilization", JU_OPT | JU_POS, 1, &util)) &&
        !(rc = get_bool(j, o, "activations_on_chip", &act)) && !(rc = get_bool(j, o, "activations_first", &first)) &&
        !(rc = ju_enum(j, o, "kv_cache", JU_OPT, kv_alloc_names, &kv)) &&
        !(rc = ju_int(j, o, "kv_block_tokens", JU_OPT, 1, 1 << 20, &blk)) &&
        !(rc = ju_enum(j, o, "partition", JU_OPT, partition_names, &part)) && !(rc = need_source(j, o))) {
        size_t o2 = ju_key(j, first && !act ? "activations_first" : "kv_block_tokens");
        if (first && !act)
            rc = ju_fail(j, "true needs activations_on_chip true (they are what it places first)");
        else if (kv == KV_PAGED && blk == 0)
            rc = ju_fail(j, "missing: a paged KV cache needs its block size in tokens");
        else if (kv != KV_PAGED && blk)
            rc = ju_fail(j, "only a paged KV cache (kv_cache \"paged\") has blocks");
        ju_pop(j, o2);
    }
    ju_pop(j, old);
    s->weights_on_chip = share > 0;
    s->pin_share = share;
    s->activations_on_chip = act;
    s->activations_first = first;
    s->kv = (enum kv_alloc)kv;
    s->kv_block_tokens = (int)blk;
    s->mem_util = util < 1 ? util : 0;
    s->partition = (enum partition)part;
    return rc;
}

/* "overlap": which collectives the stack runs under compute (a training step's gradient reduction,
 * weight gather, tensor-parallel all-reduces). */
static int load_overlap(struct ju *j, const cJSON *root, struct sw_stack *s)
{
    static const char *const keys[] = {"grad_reduce", "param_gather", "tp_comm", "source", "note", NULL};
    int *flag[] = {&s->overlap_grad, &s->overlap_param, &s->overlap_tp};
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "overlap");
    if (!o)
        return DSE_OK;
    size_t old = ju_key(j, "overlap");
    int rc = ju_object(j, o, keys);
    for (int k = 0; k < 3 && !rc; k++) {
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
        if (g && !cJSON_IsBool(g)) {
            ju_key(j, keys[k]);
            rc = ju_fail(j, "expected true or false");
        }
        *flag[k] = cJSON_IsTrue(g);
    }
    if (!rc)
        rc = need_source(j, o);
    ju_pop(j, old);
    return rc;
}

/* "parallel": how the stack shards a model (tp_padding: heads and widths tp does not divide padded up). */
static int load_parallel(struct ju *j, const cJSON *root, struct sw_stack *s)
{
    static const char *const keys[] = {"tp_padding", "sequence_parallel", "source", "note", NULL};
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "parallel");
    if (!o)
        return DSE_OK;
    size_t old = ju_key(j, "parallel");
    int rc = ju_object(j, o, keys);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "tp_padding"), *sq = cJSON_GetObjectItemCaseSensitive(o, "sequence_parallel");
    if (!rc && ((t && !cJSON_IsBool(t)) || (sq && !cJSON_IsBool(sq)))) {
        ju_key(j, t && !cJSON_IsBool(t) ? "tp_padding" : "sequence_parallel");
        rc = ju_fail(j, "expected true or false");
    }
    if (!rc)
        rc = need_source(j, o);
    s->tp_padding = cJSON_IsTrue(t);
    s->sequence_parallel = cJSON_IsTrue(sq);
    ju_pop(j, old);
    return rc;
}

/* "training_precisions": {"precisions": ["bf16", ...], "source": ...}: the floats a training step of
 * the stack computes in (fp32, tf32, bf16, fp16, fp8); only with "training": true; absent, PASS_TRAIN_PRECS. */
static int load_train_precs(struct ju *j, const cJSON *root, struct sw_stack *s)
{
    static const char *const keys[] = {"precisions", "source", "note", NULL};
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "training_precisions");
    s->train_precs = s->trains ? PASS_TRAIN_PRECS : 0;
    if (!o)
        return DSE_OK;
    size_t old = ju_key(j, "training_precisions");
    int rc = ju_object(j, o, keys);
    if (!rc && !s->trains)
        rc = ju_fail(j, "applies to a stack that trains: add \"training\": true or remove it");
    const cJSON *a = rc ? NULL : cJSON_GetObjectItemCaseSensitive(o, "precisions");
    if (!rc && (!cJSON_IsArray(a) || !cJSON_GetArraySize(a))) {
        ju_key(j, "precisions");
        rc = ju_fail(j, "expected a non-empty array of precisions (fp32, tf32, bf16, fp16, fp8)");
    }
    if (!rc) {
        s->train_precs = 0;
        const cJSON *el;
        int i = 0;
        cJSON_ArrayForEach(el, a)
        {
            int p = cJSON_IsString(el) ? prec_from_name(el->valuestring) : -1;
            if (p != P_FP32 && p != P_TF32 && p != P_BF16 && p != P_FP16 && p != P_FP8) {
                ju_key(j, "precisions");
                ju_idx(j, i);
                rc = ju_fail(j, "expected fp32, tf32, bf16, fp16 or fp8 (the floats mixed-precision training computes "
                                "in)%s%s%s", cJSON_IsString(el) ? ", got \"" : "", cJSON_IsString(el) ? el->valuestring : "",
                             cJSON_IsString(el) ? "\"" : "");
                break;
            }
            s->train_precs |= 1u << p;
            i++;
        }
    }
    if (!rc)
        rc = need_source(j, o);
    ju_pop(j, old);
    return rc;
}

static int load_runtime(struct ju *j, const cJSON *root, struct sw_stack *s)
{
    static const char *const keys[] = {"host_us_per_kernel", "per_step_us", "per_request_us", "per_token_us",
                                       "per_token_device_share", "scheduler_steps", "source", "note", NULL};
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "runtime");
    if (!o)
        return DSE_OK;
    size_t old = ju_key(j, "runtime");
    double h = 0, step = 0, req = 0, tok = 0, busy = 0;
    long long ss = 0;
    int rc;
    if (!(rc = ju_object(j, o, keys)) && !(rc = ju_num(j, o, "host_us_per_kernel", JU_OPT | JU_NONNEG, 1e6, &h)) &&
        !(rc = ju_num(j, o, "per_step_us", JU_OPT | JU_NONNEG, 1e7, &step)) &&
        !(rc = ju_num(j, o, "per_request_us", JU_OPT | JU_NONNEG, 1e8, &req)) &&
        !(rc = ju_num(j, o, "per_token_us", JU_OPT | JU_NONNEG, 1e6, &tok)) &&
        !(rc = ju_num(j, o, "per_token_device_share", JU_OPT | JU_NONNEG, 1, &busy)) &&
        !(rc = ju_int(j, o, "scheduler_steps", JU_OPT, 1, 1024, &ss)))
        rc = need_source(j, o);
    s->sched_steps = (int)ss;
    ju_pop(j, old);
    s->host_kernel_s = h * 1e-6;
    s->per_step_s = step * 1e-6;
    s->per_request_s = req * 1e-6;
    s->per_token_s = tok * 1e-6;
    s->token_busy = busy;
    return rc;
}

/* One "versions"[] entry: {"version", "released", "kernels", "runtime" (the keys of the stack's),
 * "efficiency": {"training", "prefill", "decode", "training_heldout_mape_pct", "inference_heldout_mape_pct",
 * "source", "note"}, "source", "note"}. */
static int load_version(struct ju *j, const cJSON *o, struct sw_stack *s, struct sw_version *v)
{
    static const char *const keys[] = {"version", "released", "kernels", "runtime", "efficiency", "source", "note",
                                       NULL};
    static const char *const rkeys[] = {"host_us_per_kernel", "per_step_us", "per_request_us", "per_token_us",
                                        "per_token_device_share", "scheduler_steps", "source", "note", NULL};
    static const char *const ekeys[] = {"training", "prefill", "decode", "training_heldout_mape_pct",
                                        "inference_heldout_mape_pct", "source", "note", NULL};
    int rc;
    memset(v, 0, sizeof *v);
    v->host_kernel_s = v->per_step_s = v->per_request_s = v->per_token_s = v->token_busy = -1;
    v->sched_steps = -1;
    v->mape_pct[0] = v->mape_pct[1] = -1;
    for (int k = 0; k < SW_RUN_COUNT; k++)
        v->eff[k] = 1;
    if ((rc = ju_object(j, o, keys)) || (rc = ju_str(j, o, "version", 0, v->name, sizeof v->name)) ||
        (rc = ju_str(j, o, "released", 0, v->released, sizeof v->released)) ||
        (rc = ju_str(j, o, "kernels", JU_OPT, v->kernels, sizeof v->kernels)) || (rc = need_source(j, o)))
        return rc;
    for (const char *c = v->name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '-' || *c == '_')) {
            ju_key(j, "version");
            return ju_fail(j, "expected [A-Za-z0-9._-] (it follows '@' in NAME@VERSION), got '%s'", v->name);
        }
    for (int i = 0; i < s->n_versions; i++)
        if (!strcmp(s->versions[i].name, v->name)) {
            ju_key(j, "version");
            return ju_fail(j, "'%s' is listed twice", v->name);
        }
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "runtime");
    if (r) {
        size_t old = ju_key(j, "runtime");
        double h = -1, step = -1, req = -1, tok = -1, busy = -1;
        long long ss = -1;
        if (!(rc = ju_object(j, r, rkeys)) && !(rc = ju_num(j, r, "host_us_per_kernel", JU_OPT | JU_NONNEG, 1e6, &h)) &&
            !(rc = ju_num(j, r, "per_step_us", JU_OPT | JU_NONNEG, 1e7, &step)) &&
            !(rc = ju_num(j, r, "per_request_us", JU_OPT | JU_NONNEG, 1e8, &req)) &&
            !(rc = ju_num(j, r, "per_token_us", JU_OPT | JU_NONNEG, 1e6, &tok)) &&
            !(rc = ju_num(j, r, "per_token_device_share", JU_OPT | JU_NONNEG, 1, &busy)) &&
            !(rc = ju_int(j, r, "scheduler_steps", JU_OPT, 1, 1024, &ss)))
            rc = need_source(j, r);
        v->sched_steps = ss >= 1 ? (int)ss : -1;
        ju_pop(j, old);
        v->host_kernel_s = h >= 0 ? h * 1e-6 : -1;
        v->per_step_s = step >= 0 ? step * 1e-6 : -1;
        v->per_request_s = req >= 0 ? req * 1e-6 : -1;
        v->per_token_s = tok >= 0 ? tok * 1e-6 : -1;
        v->token_busy = busy >= 0 ? busy : -1;
        if (rc)
            return rc;
    }
    const cJSON *ef = cJSON_GetObjectItemCaseSensitive(o, "efficiency");
    if (ef) {
        size_t old = ju_key(j, "efficiency");
        if (!(rc = ju_object(j, ef, ekeys)))
            for (int k = 0; k < SW_RUN_COUNT && !rc; k++)
                rc = ju_num(j, ef, sw_run_keys[k], JU_OPT | JU_POS, 1, &v->eff[k]);
        if (!rc && !(rc = ju_num(j, ef, "training_heldout_mape_pct", JU_OPT | JU_NONNEG, 1e6, &v->mape_pct[0])) &&
            !(rc = ju_num(j, ef, "inference_heldout_mape_pct", JU_OPT | JU_NONNEG, 1e6, &v->mape_pct[1])))
            rc = need_source(j, ef);
        ju_pop(j, old);
    }
    return rc;
}

static int load_versions(struct ju *j, const cJSON *root, struct sw_stack *s)
{
    const cJSON *arr;
    int n, rc;
    if ((rc = ju_array(j, root, "versions", JU_OPT, SW_MAX_VERSIONS, &arr, &n)) ||
        (rc = ju_str(j, root, "default_version", JU_OPT, s->default_version, sizeof s->default_version)))
        return rc;
    size_t old = ju_key(j, "versions");
    for (int i = 0; i < n && !rc; i++) {
        size_t o2 = ju_idx(j, i);
        const cJSON *v = cJSON_GetArrayItem(arr, i);
        if (!cJSON_IsObject(v))
            rc = ju_fail(j, "expected an object (version, released, kernels, runtime, efficiency, source)");
        else if (!(rc = load_version(j, v, s, &s->versions[s->n_versions])))
            s->n_versions++;
        ju_pop(j, o2);
    }
    ju_pop(j, old);
    if (!rc && s->default_version[0]) {
        int found = 0;
        for (int i = 0; i < s->n_versions; i++)
            found |= !strcmp(s->versions[i].name, s->default_version);
        if (!found) {
            ju_key(j, "default_version");
            rc = ju_fail(j, "'%s' is not one of the stack's versions", s->default_version);
        }
    }
    return rc;
}

int pass_select_version(struct sw_stack *s, const char *ver, struct dse_err *e)
{
    if (!*ver)
        ver = s->default_version;
    no_version(s);
    s->host_kernel_s = s->base_rt[0];
    s->per_step_s = s->base_rt[1];
    s->per_request_s = s->base_rt[2];
    s->per_token_s = s->base_rt[3];
    s->token_busy = s->base_rt[4];
    s->sched_steps = s->base_sched_steps;
    if (!*ver)
        return DSE_OK;
    const struct sw_version *v = NULL;
    for (int i = 0; i < s->n_versions && !v; i++)
        if (!strcmp(s->versions[i].name, ver))
            v = &s->versions[i];
    if (!v) {
        char list[SW_MAX_VERSIONS * (SW_VERSION_LEN + 2) + 8] = "";
        for (int i = 0; i < s->n_versions; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", s->versions[i].name);
        return dse_err_set(e, DSE_EINPUT, s->path[0] ? s->path : NULL, "software",
                           "stack '%s' has no version '%s' (%s%s)", s->name, ver, s->n_versions ? "it has: " : "it lists none",
                           list);
    }
    dse_strlcpy(s->version, v->name, sizeof s->version);
    if (v->host_kernel_s >= 0)
        s->host_kernel_s = v->host_kernel_s;
    if (v->per_step_s >= 0)
        s->per_step_s = v->per_step_s;
    if (v->per_request_s >= 0)
        s->per_request_s = v->per_request_s;
    if (v->per_token_s >= 0)
        s->per_token_s = v->per_token_s;
    if (v->token_busy >= 0)
        s->token_busy = v->token_busy;
    if (v->sched_steps >= 0)
        s->sched_steps = v->sched_steps;
    for (int k = 0; k < SW_RUN_COUNT; k++)
        s->eff[k] = v->eff[k];
    s->mape_pct[0] = v->mape_pct[0];
    s->mape_pct[1] = v->mape_pct[1];
    return DSE_OK;
}

const char *pass_label(const struct sw_stack *s, char *out, unsigned long n)
{
    if (!s)
        snprintf(out, n, "none");
    else
        snprintf(out, n, "%s%s%s", s->name, s->version[0] ? "@" : "", s->version);
    return out;
}

int pass_load_buf(const char *buf, unsigned long len, const char *fname, struct sw_stack *s, struct dse_err *e)
{
    static const char *const keys[] = {"schema",  "name",     "description", "targets", "passes", "memory",
                                       "runtime", "training", "overlap",     "parallel", "source", "note",
                                       "training_precisions", "versions", "default_version", NULL};
    cJSON *root = NULL;
    struct ju j;
    char schema[32];
    int rc;
    memset(s, 0, sizeof *s);
    if ((rc = ju_parse(buf, len, fname, &root, e)))
        return rc;
    ju_init(&j, fname, e);
    if ((rc = ju_object(&j, root, keys)) || (rc = ju_str(&j, root, "schema", 0, schema, sizeof schema)))
        goto out;
    if (strcmp(schema, "dse-software-1") != 0) {
        ju_key(&j, "schema");
        rc = ju_fail(&j, "expected \"dse-software-1\", got \"%s\"", schema);
        goto out;
    }
    if ((rc = ju_str(&j, root, "name", 0, s->name, sizeof s->name)) ||
        (rc = ju_str(&j, root, "description", JU_OPT, s->description, sizeof s->description)) ||
        (rc = load_targets(&j, root, s)) || (rc = load_passes(&j, root, s)) || (rc = load_memory(&j, root, s)) ||
        (rc = load_runtime(&j, root, s)) || (rc = load_overlap(&j, root, s)) || (rc = load_parallel(&j, root, s)))
        goto out;
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "training");
    if (tr && !cJSON_IsBool(tr)) {
        ju_key(&j, "training");
        rc = ju_fail(&j, "expected true or false");
        goto out;
    }
    s->trains = cJSON_IsTrue(tr);
    if ((rc = load_train_precs(&j, root, s)) || (rc = load_versions(&j, root, s)))
        goto out;
    s->base_rt[0] = s->host_kernel_s;
    s->base_rt[1] = s->per_step_s;
    s->base_rt[2] = s->per_request_s;
    s->base_rt[3] = s->per_token_s;
    s->base_rt[4] = s->token_busy;
    s->base_sched_steps = s->sched_steps;
    if (!strcmp(s->name, "none")) {
        ju_key(&j, "name");
        rc = ju_fail(&j, "\"none\" is the built-in stack of a device that names none; choose another name");
        goto out;
    }
    dse_strlcpy(s->path, fname, sizeof s->path);
    rc = pass_select_version(s, "", e);
out:
    cJSON_Delete(root);
    if (rc)
        memset(s, 0, sizeof *s);
    return rc;
}

const char *pass_train_default(int hw_class) { return hw_class == HW_GPU ? "megatron" : "compiled"; }

int pass_load_file(const char *path, struct sw_stack *s, struct dse_err *e)
{
    char *buf;
    size_t len;
    int rc = ju_read_file(path, JU_MAX_FILE_BYTES, &buf, &len, e);
    if (rc)
        return rc;
    rc = pass_load_buf(buf, len, path, s, e);
    free(buf);
    return rc;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int pass_resolve(const char *name, const char *near_file, char *out, unsigned long n, struct dse_err *e)
{
    if (!*name)
        return dse_err_set(e, DSE_EINPUT, NULL, "software", "expected a stack name or file, got an empty string");
    if (strlen(name) >= n) /* never cut: a prefix names another file */
        return dse_err_set(e, DSE_EINPUT, NULL, "software", "a path of %zu bytes: at most %lu", strlen(name), n - 1);
    if (strchr(name, '/') || is_file(name)) { /* a path: the loader reports what is wrong with it */
        snprintf(out, n, "%s", name);
        return DSE_OK;
    }
    char root[DSE_PATH_LEN + 4] = "..";
    const char *slash = near_file ? strrchr(near_file, '/') : NULL;
    if (slash) /* the folder above the file's own (hwdesc/x.json -> ./software) */
        snprintf(root, sizeof root, "%.*s/..", (int)(slash - near_file), near_file);
    const char *bases[2 + JU_MAX_DATA_DIRS] = {".", root};
    char dirs[JU_DATA_DIRS_BYTES];
    int nb = 2 + ju_data_dirs(bases + 2, JU_MAX_DATA_DIRS, dirs, sizeof dirs);
    for (int b = 0; b < nb; b++) {
        if (snprintf(out, n, "%s/software/%s.json", bases[b], name) < (int)n && is_file(out))
            return DSE_OK;
    }
    return dse_err_set(e, DSE_EINPUT, NULL, "software",
                       "no software stack '%s': no software/%s.json here, beside %s, or in %s%s (dse list software)",
                       name, name, near_file ? near_file : ".", nb > 3 ? "DSE_PATH's folders and " : "", bases[nb - 1]);
}

int pass_split_version(const char *name, char *base, unsigned long n, const char **ver, struct dse_err *e)
{
    const char *at = strrchr(name, '@');
    *ver = "";
    if (!at || strchr(at, '/')) {
        if (strlen(name) >= n)
            return dse_err_set(e, DSE_EINPUT, NULL, "software", "a name of %zu bytes: at most %lu", strlen(name), n - 1);
        snprintf(base, n, "%s", name);
        return DSE_OK;
    }
    if (at == name || !at[1])
        return dse_err_set(e, DSE_EINPUT, NULL, "software", "expected NAME@VERSION, got '%s'", name);
    if ((unsigned long)(at - name) >= n)
        return dse_err_set(e, DSE_EINPUT, NULL, "software", "a name of %zu bytes: at most %lu", strlen(name), n - 1);
    snprintf(base, n, "%.*s", (int)(at - name), name);
    if (!strcmp(base, "none"))
        return dse_err_set(e, DSE_EINPUT, NULL, "software", "the built-in stack 'none' has no versions");
    *ver = at + 1;
    return DSE_OK;
}

int pass_load_named(const char *name, const char *near_file, struct sw_stack *s, struct dse_err *e)
{
    char path[1024], base[1024];
    if (!strcmp(name, "none")) {
        pass_none(s);
        return DSE_OK;
    }
    const char *ver;
    int rc = pass_split_version(name, base, sizeof base, &ver, e);
    if (rc)
        return rc;
    rc = pass_resolve(base, near_file, path, sizeof path, e);
    if (!rc)
        rc = pass_load_file(path, s, e);
    if (!rc && *ver && (rc = pass_select_version(s, ver, e)))
        memset(s, 0, sizeof *s);
    return rc;
}

int pass_check_target(const struct sw_stack *s, const struct hw_device *d, struct dse_err *e)
{
    if (s->targets & (1u << d->cls))
        return DSE_OK;
    char list[64] = "";
    size_t at = 0;
    for (int c = 0; c < HW_CLASS_COUNT; c++)
        if (s->targets & (1u << c))
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "", hw_class_names[c]);
    return dse_err_set(e, DSE_EINPUT, NULL, "software", "stack '%s' compiles for %s devices, not '%s' (class %s)",
                       s->name, list, d->name, hw_class_names[d->cls]);
}
