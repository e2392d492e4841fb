/* wl_transformer.c -- transformer graphs from HuggingFace-style configs.
 *
 * Supported model_type: llama, mistral, qwen2 (pre-RMSNorm, rotary, SwiGLU, grouped-query
 * attention), gpt2 (pre-LayerNorm, learned positions, GELU, tied head), bert (post-LayerNorm
 * encoder with token-type embeddings and pooler), vit (pre-LayerNorm encoder on 16x16 patches with
 * a class token and classifier). One decoder/encoder layer is emitted once with count = layers.
 * Decoders keep K and V of every layer in a KV cache (kind kv): a step with `past` cached tokens
 * reads them through attention's k_past/v_past inputs. The LM head runs on the last token only, as
 * serving engines do during generation. Layout transposes (patch tokens) are treated as views. */
#include <stdio.h>
#include <string.h>

#include "jsonu.h"
#include "wl_build.h"

static int cfg_int(struct ju *j, const cJSON *r, const char *key, int flags, long long dflt, int64_t *out)
{
    long long v = dflt;
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(r, key);
    if (x && cJSON_IsNull(x)) /* HF writes null for "use the default" (gpt2 n_inner) */
        x = NULL;
    int rc = x ? ju_int(j, r, key, 0, 1, 100000000LL, &v) : (flags & JU_OPT) ? DSE_OK : ju_int(j, r, key, 0, 1, 1, &v);
    *out = v;
    return rc;
}

static int cfg_bool(struct ju *j, const cJSON *r, const char *key, int dflt, int *out)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(r, key);
    *out = dflt;
    if (!x || cJSON_IsNull(x))
        return DSE_OK;
    if (!cJSON_IsBool(x)) {
        size_t old = ju_key(j, key);
        int rc = ju_fail(j, "expected true or false");
        ju_pop(j, old);
        return rc;
    }
    *out = cJSON_IsTrue(x);
    return DSE_OK;
}

int wl_parse_transformer(const void *json_root, const char *file, struct wl_transformer *c, struct dse_err *e)
{
    static const char *const types[] = {"llama", "mistral", "qwen2", "gpt2", "bert", "vit", NULL};
    const cJSON *r = json_root;
    struct ju j;
    int rc, t;
    ju_init(&j, file, e);
    memset(c, 0, sizeof *c);
    if ((rc = ju_str(&j, r, "model_type", 0, c->model_type, sizeof c->model_type)))
        return rc;
    if ((t = ju_lookup(types, c->model_type)) < 0) {
        char list[128];
        ju_list_names(types, list, sizeof list);
        ju_key(&j, "model_type");
        return ju_fail(&j, "unsupported model_type '%s' (supported: %s)", c->model_type, list);
    }
    const char *hk = t == 3 ? "n_embd" : "hidden_size", *lk = t == 3 ? "n_layer" : "num_hidden_layers",
               *ak = t == 3 ? "n_head" : "num_attention_heads";
    if ((rc = cfg_int(&j, r, hk, 0, 0, &c->hidden)) || (rc = cfg_int(&j, r, lk, 0, 0, &c->layers)) ||
        (rc = cfg_int(&j, r, ak, 0, 0, &c->heads)) ||
        (rc = cfg_int(&j, r, "num_key_value_heads", JU_OPT, c->heads, &c->kv_heads)) ||
        (rc = cfg_int(&j, r, "head_dim", JU_OPT, c->hidden / c->heads, &c->head_dim)))
        return rc;
    if (c->heads % c->kv_heads) {
        ju_key(&j, "num_key_value_heads");
        return ju_fail(&j, "%lld does not divide num_attention_heads %lld", (long long)c->kv_heads,
                       (long long)c->heads);
    }
    if (!cJSON_GetObjectItemCaseSensitive(r, "head_dim") && c->hidden % c->heads) {
        ju_key(&j, hk);
        return ju_fail(&j, "%lld is not divisible by %lld heads", (long long)c->hidden, (long long)c->heads);
    }
    switch (t) {
    case 0: case 1: case 2: /* llama family */
        c->decoder = 1;
        c->gated_mlp = 1;
        c->act = FN_SILU;
        c->rms = 1;
        if ((rc = cfg_int(&j, r, "intermediate_size", 0, 0, &c->intermediate)) ||
            (rc = cfg_int(&j, r, "vocab_size", 0, 0, &c->vocab)) ||
            (rc = cfg_int(&j, r, "max_position_embeddings", JU_OPT, 4096, &c->max_pos)) ||
            (rc = cfg_bool(&j, r, "tie_word_embeddings", 0, &c->tied)) ||
            (rc = cfg_bool(&j, r, "attention_bias", t == 2, &c->qkv_bias)) ||
            (rc = cfg_bool(&j, r, "mlp_bias", 0, &c->mlp_bias)))
            return rc;
        c->out_bias = t == 2 ? 0 : c->qkv_bias; /* qwen2: biases on q, k, v only */
        break;
    case 3: /* gpt2 */
        c->decoder = 1;
        c->act = FN_GELU;
        c->learned_pos = 1;
        c->qkv_bias = c->out_bias = c->mlp_bias = 1;
        if ((rc = cfg_int(&j, r, "n_inner", JU_OPT, 4 * c->hidden, &c->intermediate)) ||
            (rc = cfg_int(&j, r, "vocab_size", 0, 0, &c->vocab)) ||
            (rc = cfg_int(&j, r, "n_positions", JU_OPT, 1024, &c->max_pos)) ||
            (rc = cfg_bool(&j, r, "tie_word_embeddings", 1, &c->tied)))
            return rc;
        break;
    case 4: /* bert */
        c->act = FN_GELU;
        c->learned_pos = 1;
        c->qkv_bias = c->out_bias = c->mlp_bias = 1;
        c->pooler = 1;
        if ((rc = cfg_int(&j, r, "intermediate_size", 0, 0, &c->intermediate)) ||
            (rc = cfg_int(&j, r, "vocab_size", 0, 0, &c->vocab)) ||
            (rc = cfg_int(&j, r, "max_position_embeddings", JU_OPT, 512, &c->max_pos)) ||
            (rc = cfg_int(&j, r, "type_vocab_size", JU_OPT, 2, &c->type_vocab)))
            return rc;
        break;
    default: /* vit */
        c->act = FN_GELU;
        c->learned_pos = 1;
        c->qkv_bias = c->out_bias = c->mlp_bias = 1;
        if ((rc = cfg_int(&j, r, "intermediate_size", 0, 0, &c->intermediate)) ||
            (rc = cfg_int(&j, r, "image_size", JU_OPT, 224, &c->image_size)) ||
            (rc = cfg_int(&j, r, "patch_size", JU_OPT, 16, &c->patch_size)) ||
            (rc = cfg_int(&j, r, "num_channels", JU_OPT, 3, &c->channels)) ||
            (rc = cfg_int(&j, r, "num_labels", JU_OPT, 1000, &c->num_labels)))
            return rc;
        if (c->image_size % c->patch_size) {
            ju_key(&j, "patch_size");
            return ju_fail(&j, "%lld does not divide image_size %lld", (long long)c->patch_size,
                           (long long)c->image_size);
        }
        c->max_pos = (c->image_size / c->patch_size) * (c->image_size / c->patch_size) + 1;
        break;
    }
    if (c->layers > 100000 || c->hidden > 1000000 || c->vocab > 100000000) {
        return ju_fail(&j, "model dimensions out of range");
    }
    return DSE_OK;
}

/* Sequence length of an encoder step: ViT's is fixed by the image; BERT's is the step's tokens. */
static int64_t encoder_seq(const struct wl_transformer *c, const struct wl_shape *s)
{
    if (!strcmp(c->model_type, "vit"))
        return c->max_pos;
    return s->tokens;
}

int wl_build_transformer(const struct wl_transformer *c, const char *name, const struct wl_shape *s,
                         struct wl_graph *g, struct dse_err *e)
{
    wl_graph_init(g, name);
    struct gb b = {g, e, "", 1, DSE_OK};
    const int64_t B = s->batch, h = c->hidden, H = c->heads, KV = c->kv_heads, hd = c->head_dim;
    const int vit = !strcmp(c->model_type, "vit"), bert = !strcmp(c->model_type, "bert");
    const int64_t S = c->decoder ? s->tokens : encoder_seq(c, s);
    const int64_t P = c->decoder ? s->past : 0;
    if (!vit && (S + P) > c->max_pos && !c->decoder)
        return dse_err_set(e, DSE_EINPUT, NULL, NULL, "sequence of %lld tokens exceeds max_position_embeddings %lld",
                           (long long)(S + P), (long long)c->max_pos);
    int x, in[5];

    /* --- embeddings --- */
    if (vit) {
        const int64_t np = c->image_size / c->patch_size, n = np * np;
        int img = gb_tensor(&b, "pixel_values", WL_INPUT, 4, B, c->channels, c->image_size, c->image_size);
        in[0] = img;
        in[1] = gb_tensor(&b, "patch_embed.weight", WL_WEIGHT, 4, h, c->channels, c->patch_size, c->patch_size);
        in[2] = gb_tensor(&b, "patch_embed.bias", WL_WEIGHT, 1, h, 0, 0, 0);
        int pe = gb_op(&b, "patch_embed", OP_CONV2D, in, 3, "patch_embed", WL_ACT, 4, B, h, np, np);
        if (pe >= 0) {
            struct wl_op *op = &g->op[g->n_op - 1];
            op->sh = op->sw = (int)c->patch_size;
        }
        int tok = gb_op(&b, "patch_tokens", OP_RESHAPE, &pe, 1, "patch_tokens", WL_ACT, 3, B, n, h, 0);
        in[0] = gb_tensor(&b, "cls_index", WL_INDEX, 2, B, 1, 0, 0);
        in[1] = gb_tensor(&b, "cls_token", WL_WEIGHT, 2, 1, h, 0, 0);
        int cls = gb_op(&b, "cls_expand", OP_EMBEDDING, in, 2, "cls_expand", WL_ACT, 3, B, 1, h, 0);
        in[0] = cls;
        in[1] = tok;
        int seq = gb_op(&b, "cat_cls", OP_CONCAT, in, 2, "tokens", WL_ACT, 3, B, n + 1, h, 0);
        if (seq >= 0)
            g->op[g->n_op - 1].axis = 1;
        int pos = gb_tensor(&b, "pos_embed", WL_WEIGHT, 2, n + 1, h, 0, 0);
        x = gb_eltwise(&b, "add_pos", FN_ADD, seq, pos);
    } else {
        in[0] = gb_tensor(&b, "input_ids", WL_INDEX, 2, B, S, 0, 0);
        in[1] = gb_tensor(&b, "embed_tokens", WL_WEIGHT, 2, c->vocab, h, 0, 0);
        x = gb_op(&b, "embed_tokens", OP_EMBEDDING, in, 2, "embed_out", WL_ACT, 3, B, S, h, 0);
        if (c->learned_pos) {
            in[0] = gb_tensor(&b, "position_ids", WL_INDEX, 2, B, S, 0, 0);
            in[1] = gb_tensor(&b, "embed_positions", WL_WEIGHT, 2, c->max_pos, h, 0, 0);
            int pe = gb_op(&b, "embed_positions", OP_EMBEDDING, in, 2, "pos_out", WL_ACT, 3, B, S, h, 0);
            x = gb_eltwise(&b, "add_pos", FN_ADD, x, pe);
        }
        if (bert) {
            in[0] = gb_tensor(&b, "token_type_ids", WL_INDEX, 2, B, S, 0, 0);
            in[1] = gb_tensor(&b, "embed_token_type", WL_WEIGHT, 2, c->type_vocab, h, 0, 0);
            int te = gb_op(&b, "embed_token_type", OP_EMBEDDING, in, 2, "type_out", WL_ACT, 3, B, S, h, 0);
            x = gb_eltwise(&b, "add_type", FN_ADD, x, te);
            x = gb_norm(&b, "embed_norm", 0, x);
        }
    }

    /* --- one layer, counted `layers` times --- */
    b.prefix = "layers.";
    b.count = (double)c->layers;
    const int post = bert;
    const enum wl_kind kvk = c->decoder ? WL_KV : WL_ACT;
    int n1 = post ? x : gb_norm(&b, "input_norm", c->rms, x);
    int q = gb_linear(&b, "q_proj", n1, H * hd, c->qkv_bias, WL_ACT);
    int k = gb_linear(&b, "k_proj", n1, KV * hd, c->qkv_bias, c->learned_pos ? kvk : WL_ACT);
    int v = gb_linear(&b, "v_proj", n1, KV * hd, c->qkv_bias, kvk);
    if (!c->learned_pos) { /* rotary embedding on q and k; k is cached after rotation */
        q = gb_eltwise(&b, "rope_q", FN_ROPE, q, -1);
        if (!b.rc) {
            in[0] = k;
            k = gb_op(&b, "rope_k", OP_ELTWISE, in, 1, "rope_k", kvk, 3, B, S, KV * hd, 0);
            if (k >= 0)
                g->op[g->n_op - 1].fn = FN_ROPE;
        }
    }
    in[0] = q;
    in[1] = k;
    in[2] = v;
    int nin = 3;
    if (P > 0) {
        in[3] = gb_tensor(&b, "k_cache", WL_KV, 3, B, P, KV * hd, 0);
        in[4] = gb_tensor(&b, "v_cache", WL_KV, 3, B, P, KV * hd, 0);
        nin = 5;
    }
    int att = gb_op(&b, "attention", OP_ATTENTION, in, nin, "attention", WL_ACT, 3, B, S, H * hd, 0);
    if (att >= 0) {
        g->op[g->n_op - 1].heads = (int)H;
        g->op[g->n_op - 1].causal = c->decoder;
    }
    int o = gb_linear(&b, "o_proj", att, h, c->out_bias, WL_ACT);
    int x1 = gb_eltwise(&b, "residual_attn", FN_ADD, x, o);
    if (post)
        x1 = gb_norm(&b, "attn_norm", 0, x1);
    int n2 = post ? x1 : gb_norm(&b, "post_attention_norm", c->rms, x1);
    int mlp;
    if (c->gated_mlp) {
        int gate = gb_linear(&b, "gate_proj", n2, c->intermediate, c->mlp_bias, WL_ACT);
        int up = gb_linear(&b, "up_proj", n2, c->intermediate, c->mlp_bias, WL_ACT);
        int a = gb_eltwise(&b, "act", (enum wl_fn)c->act, gate, -1);
        int m = gb_eltwise(&b, "gate_mul", FN_MUL, a, up);
        mlp = gb_linear(&b, "down_proj", m, h, c->mlp_bias, WL_ACT);
    } else {
        int f1 = gb_linear(&b, "fc1", n2, c->intermediate, c->mlp_bias, WL_ACT);
        int a = gb_eltwise(&b, "act", (enum wl_fn)c->act, f1, -1);
        mlp = gb_linear(&b, "fc2", a, h, c->mlp_bias, WL_ACT);
    }
    x = gb_eltwise(&b, "residual_mlp", FN_ADD, x1, mlp);
    if (post)
        x = gb_norm(&b, "out_norm", 0, x);

    /* --- head --- */
    b.prefix = "";
    b.count = 1;
    int64_t Sx = vit ? c->max_pos : S;
    if (!post)
        x = gb_norm(&b, "final_norm", c->rms, x);
    int last = x;
    if (Sx > 1 && (c->decoder || vit || c->pooler)) { /* last token (decoder) or class token (encoder) */
        last = gb_op(&b, c->decoder ? "last_token" : "cls_token_out", OP_SLICE, &x, 1, "head_in", WL_ACT, 3, B, 1, h, 0);
        if (last >= 0)
            g->op[g->n_op - 1].axis = 1;
    }
    if (c->decoder) {
        if (c->tied) { /* lm_head reuses the [vocab, hidden] embedding table, read transposed */
            in[0] = last;
            in[1] = wl_find_tensor(g, "embed_tokens");
            gb_op(&b, "lm_head", OP_MATMUL, in, 2, "logits", WL_ACT, 3, B, 1, c->vocab, 0);
            if (!b.rc)
                g->op[g->n_op - 1].transb = 1;
        } else {
            gb_linear(&b, "lm_head", last, c->vocab, 0, WL_ACT);
        }
    } else if (vit) {
        gb_linear(&b, "classifier", last, c->num_labels, 1, WL_ACT);
    } else if (c->pooler) {
        int pd = gb_linear(&b, "pooler", last, h, 1, WL_ACT);
        gb_eltwise(&b, "pooler_act", FN_TANH, pd, -1);
    }
    return b.rc;
}
