/* wl_transformer.c -- transformer graphs from HuggingFace-style configs.
 *
 * Supported model_type, each read as HF's own class reads it (models/README.md lists the keys):
 *   llama, mistral, qwen2, phi3   pre-RMSNorm, rotary, gated MLP (SwiGLU), grouped-query attention;
 *                                 qwen2 has q/k/v biases; mistral, qwen2 and phi3 sliding windows
 *   gemma, gemma2                 as llama with GeGLU, an explicit head_dim, embeddings x sqrt(hidden)
 *                                 and tied embeddings by default; gemma2 adds RMSNorm on the attention
 *                                 and MLP outputs, tanh soft-capping of attention and output logits,
 *                                 and alternates sliding-window (even layers) and global layers
 *   mixtral, qwen2_moe            mixture of experts: a router GEMM [h -> E], softmax and top-k, the
 *                                 routed rows gathered (dispatch), the E expert FFNs as expert-bank
 *                                 GEMMs (wl.h: all E resident, the touched ones read), the k outputs
 *                                 weighted and summed (combine); qwen2_moe adds a shared expert with
 *                                 a sigmoid gate and may keep dense layers (decoder_sparse_step,
 *                                 mlp_only_layers)
 *   qwen3                         as qwen2 without q/k/v biases (attention_bias, default false), an
 *                                 explicit head_dim (default 128) and RMSNorm of each head's q and k
 *   gpt2                          pre-LayerNorm, learned positions, GELU, tied head
 *   gpt_neox                      pre-LayerNorm, rotary (its rotary_pct share costs as all of it),
 *                                 GELU two-matrix MLP with biases, attention biases (attention_bias),
 *                                 parallel attention and MLP (use_parallel_residual), untied head
 *   gptj                          GPT-J: one pre-LayerNorm feeding attention and MLP in parallel, rotary
 *                                 (its rotary_dim share costs as all of it), no attention biases, a
 *                                 biased GELU two-matrix MLP, an untied head with a bias
 *   falcon                        pre-LayerNorm, rotary (ALiBi refused), GELU two-matrix MLP, biases or
 *                                 none (bias), multi-query / grouped KV heads, parallel attention and
 *                                 MLP with one LayerNorm (first architecture) or two (new_decoder_
 *                                 architecture), tied head by default
 *   bert, roberta                 post-LayerNorm encoder with token-type embeddings and pooler
 *                                 (roberta: as bert, its positions offset by the padding index, which
 *                                 max_position_embeddings already counts)
 *   distilbert                    post-LayerNorm encoder (dim, n_layers, n_heads, hidden_dim), no
 *                                 token types, no pooler
 *   vit                           pre-LayerNorm encoder on patches with a class token and classifier
 *   t5                            encoder-decoder (build_t5 below): RMS-style norms, no biases, heads of
 *                                 d_kv, relative position tables, cross-attention, ReLU or gated FFN
 * Every key of the config is either read, or known not to change the cost (ids, dtypes, dropout, eps,
 * rope_theta, ...), or an input error naming it: an unmodelled key may change the architecture.
 * Layers of one kind (windowed or not, MoE or dense) are emitted once with count = their number.
 * Decoders keep K and V of every layer in a KV cache (kind kv): a step with `past` cached tokens reads
 * them through attention's k_past/v_past inputs; a sliding-window layer keeps a rolling cache of its
 * last `window` tokens (Mistral's reference code), so it reads and holds at most window - 1 past rows.
 * The LM head runs on the last token only, as serving engines do during generation. Layout
 * transposes (patch tokens) and the MoE reshapes are views. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonu.h"
#include "wl_build.h"

enum tf_kind { F_LLAMA, F_MISTRAL, F_QWEN2, F_GPT2, F_BERT, F_VIT, F_GEMMA, F_GEMMA2, F_PHI3, F_MIXTRAL, F_QWEN2_MOE,
              F_QWEN3, F_GPT_NEOX, F_ROBERTA, F_DISTILBERT, F_FALCON, F_T5, F_GPTJ, F_COUNT };
static const char *const family_names[F_COUNT + 1] = {"llama",     "mistral",  "qwen2",   "gpt2",       "bert",
                                                      "vit",       "gemma",    "gemma2",  "phi3",       "mixtral",
                                                      "qwen2_moe", "qwen3",    "gpt_neox", "roberta",   "distilbert",
                                                      "falcon",    "t5",       "gptj",     NULL};

/* Keys each family reads (as its HF configuration class does). */
#define DEC_KEYS "hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", \
                 "intermediate_size", "vocab_size", "max_position_embeddings", "tie_word_embeddings", "hidden_act"
#define QWEN2_KEYS DEC_KEYS, "sliding_window", "use_sliding_window", "max_window_layers", "layer_types"
static const char *const keys_llama[] = {DEC_KEYS, "head_dim", "attention_bias", "mlp_bias", NULL};
static const char *const keys_mistral[] = {DEC_KEYS, "head_dim", "sliding_window", NULL};
static const char *const keys_qwen2[] = {QWEN2_KEYS, NULL};
static const char *const keys_gpt2[] = {"n_embd", "n_layer", "n_head", "n_inner", "n_positions", "vocab_size",
                                        "activation_function", "tie_word_embeddings", NULL};
static const char *const keys_gptj[] = {"n_embd", "n_layer", "n_head", "n_inner", "n_positions", "vocab_size",
                                        "activation_function", "rotary_dim", "tie_word_embeddings", NULL};
static const char *const keys_bert[] = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                        "intermediate_size", "vocab_size", "max_position_embeddings",
                                        "type_vocab_size", "hidden_act", "position_embedding_type", NULL};
static const char *const keys_vit[] = {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                                       "hidden_act", "image_size", "patch_size", "num_channels", "num_labels",
                                       "id2label", "qkv_bias", NULL};
static const char *const keys_gemma[] = {DEC_KEYS, "head_dim", "attention_bias", "hidden_activation", NULL};
static const char *const keys_gemma2[] = {DEC_KEYS, "head_dim", "attention_bias", "hidden_activation",
                                          "sliding_window", "sliding_window_size", "attn_logit_softcapping",
                                          "final_logit_softcapping", "layer_types", NULL};
static const char *const keys_phi3[] = {DEC_KEYS, "sliding_window", NULL};
static const char *const keys_mixtral[] = {DEC_KEYS, "head_dim", "sliding_window", "num_local_experts",
                                           "num_experts_per_tok", NULL};
static const char *const keys_qwen3[] = {QWEN2_KEYS, "head_dim", "attention_bias", NULL};
static const char *const keys_gpt_neox[] = {"hidden_size", "num_hidden_layers", "num_attention_heads",
                                            "intermediate_size", "vocab_size", "max_position_embeddings", "hidden_act",
                                            "tie_word_embeddings", "attention_bias", "use_parallel_residual",
                                            "rotary_pct", NULL};
static const char *const keys_falcon[] = {"hidden_size", "num_hidden_layers", "num_attention_heads", "num_kv_heads",
                                          "multi_query", "new_decoder_architecture", "parallel_attn", "bias", "alibi",
                                          "vocab_size", "max_position_embeddings", "ffn_hidden_size", "activation",
                                          "num_ln_in_parallel_attn", "tie_word_embeddings", NULL};
static const char *const keys_distilbert[] = {"dim", "n_layers", "n_heads", "hidden_dim", "vocab_size",
                                              "max_position_embeddings", "activation", "sinusoidal_pos_embds", NULL};
static const char *const keys_t5[] = {"d_model", "d_kv", "d_ff", "num_layers", "num_decoder_layers", "num_heads",
                                      "relative_attention_num_buckets", "feed_forward_proj", "vocab_size",
                                      "tie_word_embeddings", "is_encoder_decoder", NULL};
static const char *const keys_qwen2_moe[] = {QWEN2_KEYS, "num_experts", "num_experts_per_tok", "moe_intermediate_size",
                                             "shared_expert_intermediate_size", "decoder_sparse_step",
                                             "mlp_only_layers", NULL};

/* Keys known not to change the cost: identifiers, dtypes (the design point's precision decides),
 * initialisation, epsilons, dropout (inference), rope_theta and rope_scaling (a rotation costs the
 * same; rope_scaling extends no limit here: max_position_embeddings is the context checked), labels,
 * cache and output switches, and dse's own "source" note. */
static const char *const neutral_common[] = {
    "source", "_name_or_path", "architectures", "auto_map", "model_type", "transformers_version", "torch_dtype",
    "dtype", "bos_token_id", "eos_token_id", "pad_token_id", "sep_token_id", "initializer_range", "rms_norm_eps",
    "layer_norm_eps", "layer_norm_epsilon", "rope_theta", "rope_scaling", "attention_dropout", "hidden_dropout",
    "hidden_dropout_prob", "attention_probs_dropout_prob", "attn_pdrop", "embd_pdrop", "resid_pdrop",
    "classifier_dropout", "use_cache", "gradient_checkpointing", "pretraining_tp", "tokenizer_class", "problem_type",
    "id2label", "label2id", "num_labels", "task_specific_params", "use_bfloat16", "return_dict", "output_attentions",
    "output_hidden_states", "torchscript", NULL};
/* GPT-2: n_ctx is a legacy alias HF does not read; the summary head belongs to the double-heads model;
 * the attention scalings and upcast change numerics only. */
static const char *const neutral_gpt2[] = {"n_ctx", "summary_type", "summary_use_proj", "summary_activation",
                                           "summary_proj_to_labels", "summary_first_dropout", "scale_attn_weights",
                                           "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn",
                                           /* the original OpenAI GPT's special-token switches, which HF's
                                              GPT2Config keeps as unread attributes (gpt2-medium's config) */
                                           "n_special", "predict_special_tokens", NULL};
static const char *const neutral_vit[] = {"encoder_stride", NULL}; /* masked-image-modeling head only */
/* gptj: EleutherAI's config keeps "rotary" (true), which HF's GPTJConfig does not read, and GPT-2's
 * summary-head and attention-scaling keys (numerics, or a head this model lacks). */
static const char *const neutral_gptj[] = {"rotary", "n_ctx", "summary_type", "summary_use_proj", "summary_activation",
                                           "summary_proj_to_labels", "summary_first_dropout", "scale_attn_weights",
                                           NULL};
/* query_pre_attn_scalar is the softmax scale (folded); cache_implementation "hybrid" is the windowed
 * cache modelled here. */
static const char *const neutral_gemma2[] = {"query_pre_attn_scalar", "cache_implementation", NULL};
static const char *const neutral_phi3[] = {"original_max_position_embeddings", NULL};
/* Training-time router losses and noise; norm_topk_prob renormalises the k weights (k divisions). */
static const char *const neutral_moe[] = {"output_router_logits", "router_aux_loss_coef", "router_jitter_noise",
                                          "norm_topk_prob", NULL};
/* gpt_neox: the rotation's base and the parallel-residual fp32 switch change numerics only. */
static const char *const neutral_gpt_neox[] = {"rotary_emb_base", "use_fused_softmax", NULL};
/* distilbert: dropouts of the task heads, tie_weights_ of the MLM head only. */
static const char *const neutral_distilbert[] = {"dropout", "qa_dropout", "seq_classif_dropout", "tie_weights_",
                                                 NULL};
/* t5: relative positions have no table (n_positions is a nominal length HF does not read); the bucket
 * range, the start token and the legacy output_past and dense_act_fn / is_gated_act (derived from
 * feed_forward_proj, which is read) change no cost. */
static const char *const neutral_t5[] = {"n_positions", "relative_attention_max_distance", "decoder_start_token_id",
                                         "dropout_rate", "initializer_factor", "output_past", "dense_act_fn",
                                         "is_gated_act", NULL};
static const char *const neutral_none[] = {NULL};
/* falcon: the residual taken after the LayerNorm instead of before moves no data */
static const char *const false_falcon[] = {"apply_residual_connection_post_layernorm", NULL};
/* Keys accepted only as false (or null): HF's class for the family ignores them or they would add
 * parts (cross-attention, an encoder-decoder, biases HF never builds). */
static const char *const false_common[] = {"add_cross_attention", "is_encoder_decoder", "is_decoder", NULL};
static const char *const false_bias[] = {"attention_bias", "mlp_bias", NULL};
static const char *const false_mlp_bias[] = {"mlp_bias", NULL};
/* qwen2: multimodal rotary sections (Qwen2-VL) are another model; false is the text model. */
static const char *const false_qwen2[] = {"attention_bias", "mlp_bias", "use_mrope", NULL};

static const struct tf_family {
    const char *const *keys, *const *neutral, *const *false_only;
} families[F_COUNT] = {
    [F_LLAMA] = {keys_llama, neutral_none, neutral_none},
    [F_MISTRAL] = {keys_mistral, neutral_none, false_bias},
    [F_QWEN2] = {keys_qwen2, neutral_none, false_qwen2},
    [F_GPT2] = {keys_gpt2, neutral_gpt2, neutral_none},
    [F_BERT] = {keys_bert, neutral_none, neutral_none},
    [F_VIT] = {keys_vit, neutral_vit, neutral_none},
    [F_GEMMA] = {keys_gemma, neutral_none, false_mlp_bias},
    [F_GEMMA2] = {keys_gemma2, neutral_gemma2, false_mlp_bias},
    [F_PHI3] = {keys_phi3, neutral_phi3, false_bias},
    [F_MIXTRAL] = {keys_mixtral, neutral_moe, false_bias},
    [F_QWEN2_MOE] = {keys_qwen2_moe, neutral_moe, false_bias},
    [F_QWEN3] = {keys_qwen3, neutral_none, false_mlp_bias},
    [F_GPT_NEOX] = {keys_gpt_neox, neutral_gpt_neox, neutral_none},
    [F_ROBERTA] = {keys_bert, neutral_none, neutral_none},
    [F_DISTILBERT] = {keys_distilbert, neutral_distilbert, neutral_none},
    [F_FALCON] = {keys_falcon, neutral_none, false_falcon},
    [F_T5] = {keys_t5, neutral_t5, neutral_none},
    [F_GPTJ] = {keys_gptj, neutral_gptj, neutral_none},
};

/* A hint for keys users meet most, appended to the "not modelled" error. */
static const char *key_hint(const char *k)
{
    static const char *const hints[][2] = {
        {"num_local_experts", "; a mixture of experts is model_type mixtral or qwen2_moe"},
        {"num_experts", "; a mixture of experts is model_type mixtral or qwen2_moe"},
        {"num_experts_per_tok", "; a mixture of experts is model_type mixtral or qwen2_moe"},
        {"sliding_window", "; HF's class for this model_type has no sliding window"},
        {"quantization_config", "; choose the weight precision with --precision (e.g. w4a16) instead"},
        {"text_config", "; multimodal wrappers are not modelled"},
    };
    for (unsigned i = 0; i < sizeof hints / sizeof hints[0]; i++)
        if (!strcmp(k, hints[i][0]))
            return hints[i][1];
    return "";
}

/* Every key is read by the family, known not to change the cost, or an input error naming it. */
static int check_keys(struct ju *j, const cJSON *r, int fam)
{
    const struct tf_family *f = &families[fam];
    for (const cJSON *x = r->child; x; x = x->next) {
        const char *k = x->string ? x->string : "";
        for (const cJSON *y = r->child; y != x; y = y->next)
            if (y->string && !strcmp(y->string, k)) {
                ju_key(j, k);
                return ju_fail(j, "given twice");
            }
        if (ju_lookup(f->keys, k) >= 0 || ju_lookup(neutral_common, k) >= 0 || ju_lookup(f->neutral, k) >= 0)
            continue;
        if (ju_lookup(false_common, k) >= 0 || ju_lookup(f->false_only, k) >= 0) {
            if (cJSON_IsFalse(x) || cJSON_IsNull(x))
                continue;
            ju_key(j, k);
            return ju_fail(j, "only false is modelled for model_type %s (HF's class ignores it or it adds parts "
                              "dse does not build)",
                           family_names[fam]);
        }
        ju_key(j, k);
        return ju_fail(j, "not modelled for model_type %s: a key dse does not read may change the architecture, "
                          "so it is refused rather than ignored (the keys each model_type reads: models/README.md)%s",
                       family_names[fam], key_hint(k));
    }
    return DSE_OK;
}

/* A member that is present and not null (HF writes null for "use the default"). */
static const cJSON *given(const cJSON *r, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(r, key);
    return x && !cJSON_IsNull(x) ? x : NULL;
}

static int cfg_int(struct ju *j, const cJSON *r, const char *key, int flags, long long dflt, int64_t *out)
{
    long long v = dflt;
    int rc = given(r, key) ? ju_int(j, r, key, 0, 1, 100000000LL, &v)
                           : (flags & JU_OPT) ? DSE_OK : ju_int(j, r, key, 0, 1, 1, &v);
    *out = v;
    return rc;
}

static int cfg_bool(struct ju *j, const cJSON *r, const char *key, int dflt, int *out)
{
    const cJSON *x = given(r, key);
    *out = dflt;
    if (!x)
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

/* A soft-capping constant: a positive number, or null for none. */
static int cfg_cap(struct ju *j, const cJSON *r, const char *key, double dflt, double *out)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(r, key);
    *out = x ? 0 : dflt;
    return x && !cJSON_IsNull(x) ? ju_num(j, r, key, JU_POS, 1e9, out) : DSE_OK;
}

/* Activation names (HF's ACT2FN) and the function whose cost they have: the GELU forms (erf, tanh,
 * sigmoid-free fast approximations) all cost as wl_fn_flops(FN_GELU). */
static const char *const act_names[] = {"silu", "swish", "gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast",
                                        "gelu_python", "gelu_accurate", "relu", "relu6", "sigmoid", "tanh", NULL};
static const enum wl_fn act_fns[] = {FN_SILU, FN_SILU, FN_GELU, FN_GELU, FN_GELU, FN_GELU,
                                     FN_GELU, FN_GELU, FN_RELU, FN_RELU6, FN_SIGMOID, FN_TANH};
_Static_assert(sizeof act_names / sizeof act_names[0] == sizeof act_fns / sizeof act_fns[0] + 1,
               "one function per activation name");

static int cfg_act(struct ju *j, const cJSON *r, const char *key, const char *dflt, int *fn)
{
    char name[48];
    const cJSON *x = given(r, key);
    size_t old = ju_key(j, key);
    int rc = DSE_OK;
    if (x && (!cJSON_IsString(x) || !x->valuestring)) {
        rc = ju_fail(j, "expected an activation name (a string)");
        goto out;
    }
    dse_strlcpy(name, x ? x->valuestring : dflt, sizeof name);
    int a = ju_lookup(act_names, name);
    if (a < 0) {
        char list[200];
        ju_list_names(act_names, list, sizeof list);
        rc = ju_fail(j, "unknown activation '%.40s' (known: %s)", name, list);
        goto out;
    }
    *fn = act_fns[a];
out:
    ju_pop(j, old);
    return rc;
}

/* Layer kinds: which layers use the sliding window and which a mixture-of-experts MLP, counted into
 * c->block_layers. HF's rules: mistral, mixtral and phi3 window every layer when sliding_window is
 * set; qwen2 and qwen2_moe window layers i >= max_window_layers when use_sliding_window is true;
 * gemma2 windows the even layers; layer_types, where given, names each layer's kind. qwen2_moe's layer
 * i is MoE unless listed in mlp_only_layers or (i + 1) is not a multiple of decoder_sparse_step. */
static int classify_layers(struct ju *j, const cJSON *r, struct wl_transformer *c)
{
    const int fam = c->family, L = (int)c->layers;
    int rc = DSE_OK, use_sw = fam == F_MISTRAL || fam == F_MIXTRAL || fam == F_PHI3 || fam == F_GEMMA2;
    int64_t W = 0, first_sw = 0, step = 1, w2;
    if (fam == F_MISTRAL || fam == F_MIXTRAL || fam == F_PHI3 || fam == F_GEMMA2 || fam == F_QWEN2 ||
        fam == F_QWEN2_MOE || fam == F_QWEN3) {
        /* HF's defaults when the key is absent: 4096 (mistral, qwen2, qwen2_moe, gemma2), none
         * (mixtral, phi3); null is none. */
        const cJSON *x = cJSON_GetObjectItemCaseSensitive(r, "sliding_window");
        int64_t dflt = (fam == F_MIXTRAL || fam == F_PHI3) ? 0 : 4096;
        W = x ? 0 : dflt;
        if (x && !cJSON_IsNull(x) && (rc = cfg_int(j, r, "sliding_window", 0, 0, &W)))
            return rc;
    }
    if (fam == F_GEMMA2 && given(r, "sliding_window_size")) {
        if ((rc = cfg_int(j, r, "sliding_window_size", 0, 0, &w2)))
            return rc;
        if (w2 != W) {
            ju_key(j, "sliding_window_size");
            return ju_fail(j, "%lld differs from sliding_window %lld", (long long)w2, (long long)W);
        }
    }
    if (fam == F_QWEN2 || fam == F_QWEN2_MOE || fam == F_QWEN3) {
        long long v = 28; /* HF's default */
        if ((rc = cfg_bool(j, r, "use_sliding_window", 0, &use_sw)) ||
            (given(r, "max_window_layers") && (rc = ju_int(j, r, "max_window_layers", 0, 0, 100000000LL, &v))))
            return rc;
        first_sw = v;
    }
    if (!use_sw || W <= 0)
        W = 0;
    char *sw = calloc(2 * (size_t)L, 1), *dense = sw + L; /* per layer: windowed, dense MLP */
    if (!sw)
        return dse_err_set(j->e, DSE_ERUNTIME, NULL, NULL, "out of memory");
    const cJSON *lt = given(r, "layer_types");
    for (int i = 0; i < L; i++)
        sw[i] = W > 0 && (fam == F_GEMMA2 ? i % 2 == 0 : i >= first_sw);
    if (lt) {
        int n;
        const cJSON *arr;
        if ((rc = ju_array(j, r, "layer_types", 0, L, &arr, &n)))
            goto out;
        size_t old = ju_key(j, "layer_types");
        if (n != L) {
            rc = ju_fail(j, "%d entries for %d layers", n, L);
            goto lt_out;
        }
        const cJSON *it = arr->child;
        for (int i = 0; i < L; i++, it = it->next) {
            const char *v = cJSON_IsString(it) && it->valuestring ? it->valuestring : "";
            sw[i] = !strcmp(v, "sliding_attention");
            if (!sw[i] && strcmp(v, "full_attention")) {
                ju_idx(j, i);
                rc = ju_fail(j, "expected \"sliding_attention\" or \"full_attention\" (other kinds are not modelled)");
                goto lt_out;
            }
            if (sw[i] && W <= 0) {
                ju_idx(j, i);
                rc = ju_fail(j, "a sliding layer needs a sliding_window");
                goto lt_out;
            }
        }
    lt_out:
        ju_pop(j, old);
        if (rc)
            goto out;
    }
    /* A window as wide as every position limits nothing: those layers cost as global ones. */
    if (W >= c->max_pos)
        W = 0;
    c->window = W;

    memset(dense, c->experts == 0, (size_t)L);
    if (fam == F_QWEN2_MOE) {
        const cJSON *arr;
        int n;
        if ((rc = cfg_int(j, r, "decoder_sparse_step", JU_OPT, 1, &step)) ||
            (rc = ju_array(j, r, "mlp_only_layers", JU_OPT, L, &arr, &n)))
            goto out;
        for (int i = 0; i < L; i++)
            dense[i] = (i + 1) % step != 0;
        size_t old = ju_key(j, "mlp_only_layers");
        const cJSON *v = arr ? arr->child : NULL;
        for (int i = 0; i < n; i++, v = v->next) {
            double d = cJSON_IsNumber(v) ? v->valuedouble : -1;
            if (!(d >= 0 && d < L && d == floor(d))) {
                ju_idx(j, i);
                rc = ju_fail(j, "expected a layer index in [0, %d]", L - 1);
                break;
            }
            dense[(int)d] = 1;
        }
        ju_pop(j, old);
        if (rc)
            goto out;
    }
    for (int i = 0; i < L; i++)
        c->block_layers[W > 0 && sw[i]][!dense[i]]++;
out:
    free(sw);
    return rc;
}

int wl_parse_transformer(const void *json_root, const char *file, struct wl_transformer *c, struct dse_err *e)
{
    const cJSON *r = json_root;
    struct ju j;
    int rc, t;
    ju_init(&j, file, e);
    memset(c, 0, sizeof *c);
    if ((rc = ju_str(&j, r, "model_type", 0, c->model_type, sizeof c->model_type)))
        return rc;
    if ((t = ju_lookup(family_names, c->model_type)) < 0) {
        char list[160];
        ju_list_names(family_names, list, sizeof list);
        ju_key(&j, "model_type");
        return ju_fail(&j, "unsupported model_type '%s' (supported: %s)", c->model_type, list);
    }
    c->family = t;
    if ((rc = check_keys(&j, r, t)))
        return rc;
    const int gptj = t == F_GPTJ, gpt2 = t == F_GPT2 || gptj, gemma = t == F_GEMMA || t == F_GEMMA2;
    const int dbert = t == F_DISTILBERT;
    const int bertlike = t == F_BERT || t == F_ROBERTA || dbert, enc = bertlike || t == F_VIT, neox = t == F_GPT_NEOX;
    const int falcon = t == F_FALCON;
    const int t5 = t == F_T5;
    const char *hk = gpt2 ? "n_embd" : dbert ? "dim" : t5 ? "d_model" : "hidden_size",
               *lk = gpt2 ? "n_layer" : dbert ? "n_layers" : t5 ? "num_layers" : "num_hidden_layers",
               *ak = gpt2 ? "n_head" : dbert ? "n_heads" : t5 ? "num_heads" : "num_attention_heads";
    /* Families whose HF default for num_key_value_heads is not the query head count must say it. */
    int kv_flags = t == F_LLAMA || t == F_PHI3 || gpt2 || enc || neox || falcon || t5 ? JU_OPT : 0;
    if ((rc = cfg_int(&j, r, hk, 0, 0, &c->hidden)) || (rc = cfg_int(&j, r, lk, 0, 0, &c->layers)) ||
        (rc = cfg_int(&j, r, ak, 0, 0, &c->heads)) ||
        (rc = cfg_int(&j, r, falcon ? "num_kv_heads" : "num_key_value_heads", kv_flags, c->heads, &c->kv_heads)) ||
        (rc = cfg_int(&j, r, t5 ? "d_kv" : "head_dim", JU_OPT, gemma ? 256 : t == F_QWEN3 ? 128 : t5 ? 64 : c->hidden / c->heads,
                      &c->head_dim)))
        return rc;
    /* Limits (wide of every published model) that keep graphs and counts finite. */
    const struct {
        const char *key;
        int64_t v, max;
    } lim[] = {{lk, c->layers, 100000}, {hk, c->hidden, 1000000}, {"head_dim", c->head_dim, 100000}};
    for (unsigned i = 0; i < sizeof lim / sizeof lim[0]; i++)
        if (lim[i].v > lim[i].max) {
            ju_key(&j, lim[i].key);
            return ju_fail(&j, "%lld is out of range (at most %lld)", (long long)lim[i].v, (long long)lim[i].max);
        }
    if (c->heads % c->kv_heads) {
        ju_key(&j, "num_key_value_heads");
        return ju_fail(&j, "%lld does not divide num_attention_heads %lld", (long long)c->kv_heads,
                       (long long)c->heads);
    }
    if (!given(r, "head_dim") && !gemma && t != F_QWEN3 && !t5 && c->hidden % c->heads) {
        ju_key(&j, hk);
        return ju_fail(&j, "%lld is not divisible by %lld heads", (long long)c->hidden, (long long)c->heads);
    }
    c->max_pos_key = gpt2 || t5 ? "n_positions" : "max_position_embeddings";
    c->decoder = !enc;
    c->rms = !gpt2 && !enc && !neox && !falcon;
    c->gated_mlp = c->rms && !t5;
    c->learned_pos = (gpt2 && !gptj) || enc;
    c->post_norm = bertlike;
    if (gpt2) {
        c->qkv_bias = c->out_bias = c->mlp_bias = 1;
        if ((rc = cfg_act(&j, r, "activation_function", "gelu_new", &c->act)) ||
            (rc = cfg_int(&j, r, "n_inner", JU_OPT, 4 * c->hidden, &c->intermediate)) ||
            (rc = cfg_int(&j, r, "vocab_size", 0, 0, &c->vocab)) ||
            (rc = cfg_int(&j, r, "n_positions", JU_OPT, gptj ? 2048 : 1024, &c->max_pos)) ||
            (rc = cfg_bool(&j, r, "tie_word_embeddings", !gptj, &c->tied)))
            return rc;
        if (gptj) { /* HF's GPTJBlock: ln_1 feeds attention and MLP, x + attn + mlp; q, k, v and out_proj
                       unbiased; fc_in and fc_out biased; lm_head biased (GPTJForCausalLM) */
            int64_t rd = 64;
            if ((rc = cfg_int(&j, r, "rotary_dim", JU_OPT, 64, &rd)))
                return rc;
            if (rd > c->hidden / c->heads) {
                ju_key(&j, "rotary_dim");
                return ju_fail(&j, "%lld is more than a head's %lld dimensions", (long long)rd,
                               (long long)(c->hidden / c->heads));
            }
            c->qkv_bias = c->out_bias = 0;
            c->parallel_block = c->shared_norm = 1;
            c->head_bias = 1;
        }
    } else if (enc) {
        c->qkv_bias = c->out_bias = c->mlp_bias = 1;
        if ((rc = cfg_act(&j, r, dbert ? "activation" : "hidden_act", "gelu", &c->act)) ||
            (rc = cfg_int(&j, r, dbert ? "hidden_dim" : "intermediate_size", dbert ? JU_OPT : 0, 4 * c->hidden,
                          &c->intermediate)))
            return rc;
        if (dbert) { /* sinusoidal positions fill the same table (a buffer of the same size): same cost */
            int sin;
            if ((rc = cfg_bool(&j, r, "sinusoidal_pos_embds", 0, &sin)) ||
                (rc = cfg_int(&j, r, "vocab_size", JU_OPT, 30522, &c->vocab)) ||
                (rc = cfg_int(&j, r, "max_position_embeddings", JU_OPT, 512, &c->max_pos)))
                return rc;
        }
    } else if (falcon) {
        /* HF's FalconConfig and FalconDecoderLayer: keys and values of num_kv_heads heads with the new
         * architecture (two LayerNorms in parallel by default), else one head shared (multi_query) or
         * every head; attention and MLP in parallel (parallel_attn; the new architecture always), one
         * LayerNorm for both in the first architecture; every linear biased or none (bias) */
        int mq, na, pa, alibi;
        int64_t nln = 2;
        if ((rc = cfg_bool(&j, r, "multi_query", 1, &mq)) || (rc = cfg_bool(&j, r, "new_decoder_architecture", 0, &na)) ||
            (rc = cfg_bool(&j, r, "parallel_attn", 1, &pa)) || (rc = cfg_bool(&j, r, "bias", 0, &c->qkv_bias)) ||
            (rc = cfg_bool(&j, r, "alibi", 0, &alibi)) || (rc = cfg_act(&j, r, "activation", "gelu", &c->act)) ||
            (rc = cfg_int(&j, r, "ffn_hidden_size", JU_OPT, 4 * c->hidden, &c->intermediate)) ||
            (rc = cfg_int(&j, r, "vocab_size", JU_OPT, 65024, &c->vocab)) ||
            (rc = cfg_int(&j, r, "max_position_embeddings", JU_OPT, 2048, &c->max_pos)) ||
            (rc = cfg_int(&j, r, "num_ln_in_parallel_attn", JU_OPT, 2, &nln)) ||
            (rc = cfg_bool(&j, r, "tie_word_embeddings", 1, &c->tied)))
            return rc;
        if (alibi) {
            ju_key(&j, "alibi");
            return ju_fail(&j, "ALiBi attention biases are not modelled (only false: rotary positions)");
        }
        if (nln != 1 && nln != 2) {
            ju_key(&j, "num_ln_in_parallel_attn");
            return ju_fail(&j, "expected 1 or 2, got %lld", (long long)nln);
        }
        if (!na)
            c->kv_heads = mq ? 1 : c->heads;
        c->out_bias = c->mlp_bias = c->qkv_bias;
        c->parallel_block = na || pa;
        c->shared_norm = c->parallel_block && (!na || nln == 1);
    } else if (t == F_T5) {
        /* HF's T5Config: d_kv per head (heads x d_kv need not be d_model), num_layers encoder layers and
         * num_decoder_layers (default the same) decoder layers, RMS-style T5LayerNorm, no biases,
         * relative position buckets; feed_forward_proj "relu" or "gated-ACT" (T5 v1.1, Flan-T5) */
        int ed = 1;
        char ff[48] = "relu";
        if ((rc = cfg_bool(&j, r, "is_encoder_decoder", 1, &ed)) ||
            (rc = cfg_int(&j, r, "d_ff", 0, 0, &c->intermediate)) || (rc = cfg_int(&j, r, "vocab_size", 0, 0, &c->vocab)) ||
            (rc = cfg_int(&j, r, "num_decoder_layers", JU_OPT, c->layers, &c->dec_layers)) ||
            (rc = cfg_int(&j, r, "relative_attention_num_buckets", JU_OPT, 32, &c->rel_buckets)) ||
            (rc = cfg_bool(&j, r, "tie_word_embeddings", 1, &c->tied)) ||
            (given(r, "feed_forward_proj") && (rc = ju_str(&j, r, "feed_forward_proj", 0, ff, sizeof ff))))
            return rc;
        if (!ed) {
            ju_key(&j, "is_encoder_decoder");
            return ju_fail(&j, "false (T5's encoder or decoder alone) is not modelled");
        }
        if (c->dec_layers > 100000) {
            ju_key(&j, "num_decoder_layers");
            return ju_fail(&j, "%lld is out of range (at most 100000)", (long long)c->dec_layers);
        }
        c->gated_mlp = !strncmp(ff, "gated-", 6);
        const char *act = c->gated_mlp ? ff + 6 : ff;
        int a = ju_lookup(act_names, act);
        if (a < 0) {
            ju_key(&j, "feed_forward_proj");
            return ju_fail(&j, "unknown activation '%.40s' (expected relu, gelu, ... or gated-ACT)", act);
        }
        c->act = act_fns[a];
        c->max_pos = 100000000; /* relative positions: no table, no limit */
    } else if (neox) {
        c->mlp_bias = 1; /* dense_h_to_4h and dense_4h_to_h always carry biases */
        if ((rc = cfg_act(&j, r, "hidden_act", "gelu", &c->act)) ||
            (rc = cfg_int(&j, r, "intermediate_size", 0, 0, &c->intermediate)) ||
            (rc = cfg_int(&j, r, "vocab_size", 0, 0, &c->vocab)) ||
            (rc = cfg_int(&j, r, "max_position_embeddings", 0, 0, &c->max_pos)) ||
            (rc = cfg_bool(&j, r, "tie_word_embeddings", 0, &c->tied)) ||
            (rc = cfg_bool(&j, r, "attention_bias", 1, &c->qkv_bias)) ||
            (rc = cfg_bool(&j, r, "use_parallel_residual", 1, &c->parallel_block)))
            return rc;
        c->out_bias = c->qkv_bias;
        double pct = 0.25;
        if (given(r, "rotary_pct") && (rc = ju_num(&j, r, "rotary_pct", JU_POS, 1, &pct)))
            return rc;
    } else {
        /* A decoder's context limit has no default worth trusting: HF's differ per family. */
        if ((rc = cfg_int(&j, r, "intermediate_size", t == F_QWEN2_MOE ? JU_OPT : 0, 0, &c->intermediate)) ||
            (rc = cfg_int(&j, r, "vocab_size", 0, 0, &c->vocab)) ||
            (rc = cfg_int(&j, r, "max_position_embeddings", 0, 0, &c->max_pos)) ||
            (rc = cfg_bool(&j, r, "tie_word_embeddings", gemma, &c->tied)) ||
            (rc = cfg_act(&j, r, "hidden_act", gemma ? "gelu_pytorch_tanh" : "silu", &c->act)))
            return rc;
        if (gemma) { /* HF's Gemma MLPs read hidden_activation; absent, gelu_pytorch_tanh (hidden_act ignored) */
            c->embed_scale = 1;
            if ((rc = cfg_act(&j, r, "hidden_activation", "gelu_pytorch_tanh", &c->act)) ||
                (rc = cfg_bool(&j, r, "attention_bias", 0, &c->qkv_bias)))
                return rc;
            c->out_bias = c->qkv_bias;
        }
        if (t == F_LLAMA) {
            if ((rc = cfg_bool(&j, r, "attention_bias", 0, &c->qkv_bias)) ||
                (rc = cfg_bool(&j, r, "mlp_bias", 0, &c->mlp_bias)))
                return rc;
            c->out_bias = c->qkv_bias;
        }
        if (t == F_QWEN2 || t == F_QWEN2_MOE)
            c->qkv_bias = 1; /* q, k, v only (HF's Qwen2Attention) */
        if (t == F_QWEN3) {
            c->qk_norm = 1;
            if ((rc = cfg_bool(&j, r, "attention_bias", 0, &c->qkv_bias)))
                return rc;
            c->out_bias = c->qkv_bias;
        }
        if (t == F_GEMMA2) {
            c->sandwich_norm = 1;
            if ((rc = cfg_cap(&j, r, "attn_logit_softcapping", 50, &c->attn_softcap)) ||
                (rc = cfg_cap(&j, r, "final_logit_softcapping", 30, &c->final_softcap)))
                return rc;
        }
        if (t == F_MIXTRAL) {
            if ((rc = cfg_int(&j, r, "num_local_experts", 0, 0, &c->experts)) ||
                (rc = cfg_int(&j, r, "num_experts_per_tok", 0, 0, &c->topk)))
                return rc;
            c->moe_intermediate = c->intermediate;
        }
        if (t == F_QWEN2_MOE) {
            if ((rc = cfg_int(&j, r, "num_experts", 0, 0, &c->experts)) ||
                (rc = cfg_int(&j, r, "num_experts_per_tok", 0, 0, &c->topk)) ||
                (rc = cfg_int(&j, r, "moe_intermediate_size", 0, 0, &c->moe_intermediate)) ||
                (rc = cfg_int(&j, r, "shared_expert_intermediate_size", 0, 0, &c->shared_intermediate)))
                return rc;
        }
        if (c->experts > 65536 || c->topk > c->experts) {
            ju_key(&j, c->experts > 65536 ? (t == F_MIXTRAL ? "num_local_experts" : "num_experts") : "num_experts_per_tok");
            return c->experts > 65536
                       ? ju_fail(&j, "%lld is out of range (at most 65536)", (long long)c->experts)
                       : ju_fail(&j, "%lld exceeds the %lld experts", (long long)c->topk, (long long)c->experts);
        }
    }
    if (t == F_BERT || t == F_ROBERTA) {
        const cJSON *pt = given(r, "position_embedding_type");
        c->pooler = 1;
        if (pt && !(cJSON_IsString(pt) && pt->valuestring && !strcmp(pt->valuestring, "absolute"))) {
            ju_key(&j, "position_embedding_type");
            return ju_fail(&j, "only \"absolute\" is modelled (relative position embeddings are not)");
        }
        if ((rc = cfg_int(&j, r, "vocab_size", 0, 0, &c->vocab)) ||
            (rc = cfg_int(&j, r, "max_position_embeddings", JU_OPT, 512, &c->max_pos)) ||
            (rc = cfg_int(&j, r, "type_vocab_size", JU_OPT, 2, &c->type_vocab)))
            return rc;
    }
    if (t == F_VIT) {
        const cJSON *labels = given(r, "id2label");
        int64_t n = labels && cJSON_IsObject(labels) ? cJSON_GetArraySize(labels) : 1000;
        if ((rc = cfg_int(&j, r, "image_size", JU_OPT, 224, &c->image_size)) ||
            (rc = cfg_int(&j, r, "patch_size", JU_OPT, 16, &c->patch_size)) ||
            (rc = cfg_int(&j, r, "num_channels", JU_OPT, 3, &c->channels)) ||
            (rc = cfg_int(&j, r, "num_labels", JU_OPT, n, &c->num_labels)) ||
            (rc = cfg_bool(&j, r, "qkv_bias", 1, &c->qkv_bias)))
            return rc;
        if (labels && (!cJSON_IsObject(labels) || n < 1 || n != c->num_labels)) { /* HF: num_labels = len(id2label) */
            ju_key(&j, "id2label");
            return ju_fail(&j, "expected an object of %lld labels (num_labels)", (long long)c->num_labels);
        }
        if (c->image_size % c->patch_size) {
            ju_key(&j, "patch_size");
            return ju_fail(&j, "%lld does not divide image_size %lld", (long long)c->patch_size,
                           (long long)c->image_size);
        }
        c->max_pos = (c->image_size / c->patch_size) * (c->image_size / c->patch_size) + 1;
    }
    if (c->vocab > 100000000) {
        ju_key(&j, "vocab_size");
        return ju_fail(&j, "%lld is out of range (at most 100000000)", (long long)c->vocab);
    }
    if ((rc = classify_layers(&j, r, c)))
        return rc;
    if (c->block_layers[0][0] + c->block_layers[1][0] > 0 && c->intermediate == 0) /* qwen2_moe's dense layers */
        return cfg_int(&j, r, "intermediate_size", 0, 0, &c->intermediate);
    return DSE_OK;
}

int wl_check_context(const struct wl_model *m, enum wl_phase ph, int64_t prompt, int64_t gen, const char *file,
                     const char *path, struct dse_err *e)
{
    if (!wl_model_is_lm(m))
        return DSE_OK;
    const struct wl_transformer *c = &m->tf;
    int64_t total = prompt + (ph == PH_GENERATE ? gen : ph == PH_DECODE ? 1 : 0);
    if (total <= c->max_pos)
        return DSE_OK;
    if (ph == PH_GENERATE)
        return dse_err_set(e, DSE_EINPUT, file, path,
                           "prompt %lld + %lld generated tokens = %lld exceed %s %lld of %s", (long long)prompt,
                           (long long)gen, (long long)total, c->max_pos_key, (long long)c->max_pos, m->name);
    if (ph == PH_DECODE)
        return dse_err_set(e, DSE_EINPUT, file, path,
                           "a decode step after %lld cached tokens is token %lld, beyond %s %lld of %s",
                           (long long)prompt, (long long)total, c->max_pos_key, (long long)c->max_pos, m->name);
    return dse_err_set(e, DSE_EINPUT, file, path, "a prompt of %lld tokens exceeds %s %lld of %s", (long long)prompt,
                       c->max_pos_key, (long long)c->max_pos, m->name);
}

/* Sequence length of an encoder step: ViT's is fixed by the image; BERT's is the step's tokens. */
static int64_t encoder_seq(const struct wl_transformer *c, const struct wl_shape *s)
{
    if (c->family == F_VIT)
        return c->max_pos;
    return s->tokens;
}

int wl_expert_parallel(struct wl_transformer *c, int ep, double imbalance, const char *file, struct dse_err *e)
{
    if (ep <= 1)
        return DSE_OK;
    if (c->experts < 1)
        return dse_err_set(e, DSE_EINPUT, file, NULL,
                           "expert parallelism (ep %d) spreads a mixture of experts; this model_type %s has none", ep,
                           c->model_type);
    if (c->experts % ep)
        return dse_err_set(e, DSE_EINPUT, file, "num_local_experts",
                           "%lld experts do not split over ep %d (ep must divide them)", (long long)c->experts, ep);
    if (!(imbalance >= 1) || imbalance > (double)ep)
        return dse_err_set(e, DSE_EINPUT, NULL, "--moe-imbalance",
                           "expected the busiest device's share over the mean, in [1, ep %d], got %g", ep, imbalance);
    c->ep = ep;
    c->moe_imbalance = imbalance;
    return DSE_OK;
}

/* A collective over the tp group on x: an all-reduce (same shape), or an all-gather along the last
 * axis (tp x its width). */
static int tp_collective(struct gb *b, const char *name, int x, int gather, int tp)
{
    if (b->rc || tp <= 1)
        return x;
    const struct wl_tensor *t = &b->g->t[x];
    int64_t d[4] = {0, 0, 0, 0};
    int r = t->rank;
    for (int i = 0; i < r && i < 4; i++)
        d[i] = t->dim[i];
    if (gather)
        d[r - 1] *= tp;
    int y = gb_op(b, name, gather ? OP_ALLGATHER : OP_ALLREDUCE, &x, 1, name, WL_ACT, r, d[0], d[1], d[2], d[3]);
    if (y >= 0)
        b->g->op[b->g->n_op - 1].axis = r - 1;
    return y;
}

/* Dense MLP on x: gated (act(gate) x up, then down) or two-matrix (fc1, act, fc2). pre names it. */
static int dense_mlp(struct gb *b, const struct wl_transformer *c, const char *pre, int x, int64_t inter)
{
    char n1[48], n2[48], n3[48], n4[48], n5[48];
    snprintf(n4, sizeof n4, "%sact", pre);
    if (c->gated_mlp) {
        snprintf(n1, sizeof n1, "%sgate_proj", pre);
        snprintf(n2, sizeof n2, "%sup_proj", pre);
        snprintf(n3, sizeof n3, "%sdown_proj", pre);
        snprintf(n5, sizeof n5, "%sgate_mul", pre);
        int gate = gb_linear(b, n1, x, inter, c->mlp_bias, WL_ACT);
        int up = gb_linear(b, n2, x, inter, c->mlp_bias, WL_ACT);
        int a = gb_eltwise(b, n4, (enum wl_fn)c->act, gate, -1);
        int m = gb_eltwise(b, n5, FN_MUL, a, up);
        return gb_linear(b, n3, m, c->hidden, c->mlp_bias, WL_ACT);
    }
    snprintf(n1, sizeof n1, "%sfc1", pre);
    snprintf(n3, sizeof n3, "%sfc2", pre);
    int f1 = gb_linear(b, n1, x, inter, c->mlp_bias, WL_ACT);
    int a = gb_eltwise(b, n4, (enum wl_fn)c->act, f1, -1);
    return gb_linear(b, n3, a, c->hidden, c->mlp_bias, WL_ACT);
}

/* x [T rows, K] @ an expert bank [E, K, n] -> [..., n] (wl.h: rows are tokens x topk). */
static int expert_linear(struct gb *b, const struct wl_transformer *c, const char *name, int x, int64_t n)
{
    if (b->rc)
        return -1;
    const struct wl_tensor *t = &b->g->t[x]; /* copied out: adding the weight may move the table */
    const int64_t d0 = t->dim[0], d1 = t->dim[1], k = t->dim[t->rank - 1];
    char wn[WL_NAME_LEN];
    snprintf(wn, sizeof wn, "%s.weight", name);
    int ep = c->ep > 1 ? c->ep : 1; /* this device's experts */
    int in[2] = {x, gb_tensor(b, wn, WL_WEIGHT, 3, c->experts / ep, k, n, 0)};
    int y = gb_op(b, name, OP_MATMUL, in, 2, name, WL_ACT, 3, d0, d1, n, 0);
    if (y >= 0) {
        b->g->op[b->g->n_op - 1].experts = (int)(c->experts / ep);
        b->g->op[b->g->n_op - 1].topk = (int)c->topk;
        b->g->op[b->g->n_op - 1].ep = ep;
    }
    return y;
}

/* Mixture-of-experts MLP on n2 [B, S, h]:
 *   router [h -> E] GEMM, softmax over E, top-k (a view: the selection's compares are not counted)
 *   dispatch: each token's row gathered once per chosen expert (a row gather, [B, S k, h])
 *   experts: gated FFN on the bank (gate, up [E, h, I]; down [E, I, h]) over the S k rows
 *   combine: rows x their routing weight, then the k rows of each token summed (a k x 1 sum-pool)
 *   shared expert (qwen2_moe): a dense gated FFN scaled by sigmoid(x . w_gate [h -> 1]), added. */
static int moe_mlp(struct gb *b, const struct wl_transformer *c, int64_t B, int64_t S, int n2)
{
    struct wl_graph *g = b->g;
    const int64_t h = c->hidden, E = c->experts, k = c->topk;
    int in[2];
    int logits = gb_linear(b, "router", n2, E, 0, WL_ACT);
    in[0] = logits;
    int probs = gb_op(b, "router_softmax", OP_SOFTMAX, in, 1, "router_softmax", WL_ACT, 3, B, S, E, 0);
    in[0] = probs;
    int top = gb_op(b, "router_topk", OP_SLICE, in, 1, "router_topk", WL_ACT, 3, B, S, k, 0);
    if (top >= 0)
        g->op[g->n_op - 1].axis = 2;
    in[0] = top;
    int wts = gb_op(b, "routing_weights", OP_RESHAPE, in, 1, "routing_weights", WL_ACT, 3, B, S * k, 1, 0);
    in[0] = n2;
    int rows = gb_op(b, "moe_rows", OP_RESHAPE, in, 1, "moe_rows", WL_ACT, 2, B * S, h, 0, 0);
    in[0] = gb_tensor(b, "expert_rows", WL_INDEX, 2, B, S * k, 0, 0);
    in[1] = rows;
    int xr = gb_op(b, "moe_dispatch", OP_EMBEDDING, in, 2, "moe_dispatch", WL_ACT, 3, B, S * k, h, 0);
    /* expert parallelism: the rows travel to the devices of their experts (all-to-all over the ep
     * group), the busiest receiving imbalance x its share, and back after the experts */
    const int64_t Rk = c->ep > 1 ? (int64_t)ceil((double)(S * k) * (c->moe_imbalance > 1 ? c->moe_imbalance : 1)) : S * k;
    if (c->ep > 1) {
        in[0] = xr;
        xr = gb_op(b, "moe_dispatch_alltoall", OP_ALLTOALL, in, 1, "moe_dispatch_alltoall", WL_ACT, 3, B, Rk, h, 0);
        if (xr >= 0)
            g->op[g->n_op - 1].coll_dim = WG_EP;
    }
    int gate = expert_linear(b, c, "experts.gate_proj", xr, c->moe_intermediate);
    int up = expert_linear(b, c, "experts.up_proj", xr, c->moe_intermediate);
    int a = gb_eltwise(b, "experts.act", (enum wl_fn)c->act, gate, -1);
    int m = gb_eltwise(b, "experts.gate_mul", FN_MUL, a, up);
    int down = expert_linear(b, c, "experts.down_proj", m, h);
    if (c->ep > 1) {
        in[0] = down;
        down = gb_op(b, "moe_combine_alltoall", OP_ALLTOALL, in, 1, "moe_combine_alltoall", WL_ACT, 3, B, S * k, h, 0);
        if (down >= 0)
            g->op[g->n_op - 1].coll_dim = WG_EP;
    }
    int wd = gb_eltwise(b, "moe_weighted", FN_MUL, down, wts);
    in[0] = wd;
    int w4 = gb_op(b, "moe_rows_4d", OP_RESHAPE, in, 1, "moe_rows_4d", WL_ACT, 4, B, S, k, h);
    in[0] = w4;
    int sum = gb_op(b, "moe_combine", OP_POOL, in, 1, "moe_combine", WL_ACT, 4, B, S, 1, h);
    if (sum >= 0) { /* a k x 1 window summing each token's k rows (an average pool up to a constant) */
        struct wl_op *op = &g->op[g->n_op - 1];
        op->kh = op->sh = (int)k;
        op->kw = op->sw = 1;
    }
    in[0] = sum;
    int out = gb_op(b, "moe_out", OP_RESHAPE, in, 1, "moe_out", WL_ACT, 3, B, S, h, 0);
    if (c->shared_intermediate > 0) {
        int sh = dense_mlp(b, c, "shared_expert.", n2, c->shared_intermediate);
        int sg = gb_linear(b, "shared_expert_gate", n2, 1, 0, WL_ACT);
        int sgs = gb_eltwise(b, "shared_expert_sigmoid", FN_SIGMOID, sg, -1);
        int shg = gb_eltwise(b, "shared_expert_gated", FN_MUL, sh, sgs);
        out = gb_eltwise(b, "moe_add_shared", FN_ADD, out, shg);
    }
    return out;
}

/* RMSNorm of each of n heads of d in x [B, S, n d]: viewed as [B, S, n, d], normalised over d (weights
 * of d), viewed back. */
static int head_norm(struct gb *b, const char *name, int x, int64_t n, int64_t d)
{
    if (b->rc)
        return -1;
    const int64_t B = b->g->t[x].dim[0], S = b->g->t[x].dim[1];
    char v1[WL_NAME_LEN], v2[WL_NAME_LEN];
    snprintf(v1, sizeof v1, "%s_heads", name);
    snprintf(v2, sizeof v2, "%s_out", name);
    int in[1] = {x};
    int h4 = gb_op(b, v1, OP_RESHAPE, in, 1, v1, WL_ACT, 4, B, S, n, d);
    int nn = gb_norm(b, name, 1, h4);
    in[0] = nn;
    return gb_op(b, v2, OP_RESHAPE, in, 1, v2, WL_ACT, 3, B, S, n * d, 0);
}

/* One decoder/encoder layer on x, of one kind (windowed attention or not, MoE MLP or dense). */
static int layer(struct gb *b, const struct wl_transformer *c, const struct wl_shape *s, int64_t S, int x,
                 int windowed, int moe)
{
    struct wl_graph *g = b->g;
    const int64_t B = s->batch, h = c->hidden, H = c->heads, KV = c->kv_heads, hd = c->head_dim;
    const int post = c->post_norm;
    const int64_t W = windowed ? c->window : 0;
    /* A rolling cache of W tokens holds at most W - 1 past ones beside the new token. */
    const int64_t P = !c->decoder ? 0 : W > 0 && s->past > W - 1 ? W - 1 : s->past;
    const enum wl_kind kvk = c->decoder && !s->train ? WL_KV : WL_ACT;
    int in[5];
    int n1 = post ? x : gb_norm(b, "input_norm", c->rms, x);
    int q = gb_linear(b, "q_proj", n1, H * hd, c->qkv_bias, WL_ACT);
    int k = gb_linear(b, "k_proj", n1, KV * hd, c->qkv_bias, c->learned_pos ? kvk : WL_ACT);
    int v = gb_linear(b, "v_proj", n1, KV * hd, c->qkv_bias, kvk);
    if (c->qk_norm) { /* qwen3: each head's q and k normalised over head_dim */
        q = head_norm(b, "q_norm", q, H, hd);
        k = head_norm(b, "k_norm", k, KV, hd);
    }
    if (!c->learned_pos) { /* rotary embedding on q and k; k is cached after rotation */
        q = gb_eltwise(b, "rope_q", FN_ROPE, q, -1);
        if (!b->rc) {
            in[0] = k;
            k = gb_op(b, "rope_k", OP_ELTWISE, in, 1, "rope_k", kvk, 3, B, S, KV * hd, 0);
            if (k >= 0)
                g->op[g->n_op - 1].fn = FN_ROPE;
        }
    }
    if (W > 0 && !b->rc) /* of the new rows, the last W stay in the cache */
        g->t[k].max_rows = g->t[v].max_rows = W;
    const int cp = c->cp > 1 ? c->cp : 1, cp_seq = cp > 1 && S > 1; /* context-parallel prefill / pass */
    if (cp_seq && !b->rc) { /* every device's keys and values for its queries (ring attention moves the same) */
        in[0] = k;
        int kg = gb_op(b, "k_cp_allgather", OP_ALLGATHER, in, 1, "k_cp_allgather", WL_ACT, 3, B, S * cp, KV * hd, 0);
        if (kg >= 0) {
            g->op[g->n_op - 1].axis = 1;
            g->op[g->n_op - 1].coll_dim = WG_CP;
        }
        in[0] = v;
        int vg = gb_op(b, "v_cp_allgather", OP_ALLGATHER, in, 1, "v_cp_allgather", WL_ACT, 3, B, S * cp, KV * hd, 0);
        if (vg >= 0) {
            g->op[g->n_op - 1].axis = 1;
            g->op[g->n_op - 1].coll_dim = WG_CP;
        }
        k = kg;
        v = vg;
    }
    in[0] = q;
    in[1] = k;
    in[2] = v;
    int nin = 3;
    if (P > 0) {
        in[3] = gb_tensor(b, "k_cache", WL_KV, 3, B, P, KV * hd, 0);
        in[4] = gb_tensor(b, "v_cache", WL_KV, 3, B, P, KV * hd, 0);
        nin = 5;
        if (W > 0 && !b->rc)
            g->t[in[3]].max_rows = g->t[in[4]].max_rows = W - 1;
    }
    int att = gb_op(b, "attention", OP_ATTENTION, in, nin, "attention", WL_ACT, 3, B, S, H * hd, 0);
    if (att >= 0) {
        struct wl_op *op = &g->op[g->n_op - 1];
        op->heads = (int)H;
        op->causal = c->decoder;
        op->window = W;
        op->softcap = c->attn_softcap;
        op->cp = cp_seq ? cp : 1;
    }
    if (cp > 1 && !cp_seq) { /* a decode step over 1/cp of the cache: the partial results combined */
        att = tp_collective(b, "attn_cp_allreduce", att, 0, cp);
        if (att >= 0)
            g->op[g->n_op - 1].coll_dim = WG_CP;
    }
    int o = gb_linear(b, "o_proj", att, h, c->out_bias, WL_ACT);
    o = tp_collective(b, "attn_allreduce", o, 0, c->tp); /* row-parallel o_proj: partial sums */
    if (c->sandwich_norm)
        o = gb_norm(b, "attn_out_norm", 1, o);
    int x1 = gb_eltwise(b, "residual_attn", FN_ADD, x, o);
    if (post)
        x1 = gb_norm(b, "attn_norm", 0, x1);
    /* gpt_neox's parallel residual: the MLP reads the layer input, x + attn(ln1 x) + mlp(ln2 x) */
    int n2 = post ? x1 : c->shared_norm ? n1 : gb_norm(b, c->sandwich_norm ? "pre_mlp_norm" : "post_attention_norm", c->rms,
                                                       c->parallel_block ? x : x1);
    int mlp = moe ? moe_mlp(b, c, B, S, n2) : dense_mlp(b, c, "", n2, c->intermediate);
    mlp = tp_collective(b, "mlp_allreduce", mlp, 0, c->tp); /* row-parallel down projection: partial sums */
    if (c->sandwich_norm)
        mlp = gb_norm(b, "mlp_out_norm", 1, mlp);
    x = gb_eltwise(b, "residual_mlp", FN_ADD, x1, mlp);
    if (post)
        x = gb_norm(b, "out_norm", 0, x);
    return x;
}

int wl_shard_transformer(const struct wl_transformer *c, int tp, int pad, const char *file, struct wl_transformer *out,
                         struct dse_err *e)
{
    *out = *c;
    if (tp <= 1)
        return DSE_OK;
    if (pad) { /* the runtime pads heads and widths up to multiples of tp: ceil of each share */
        out->heads = (c->heads + tp - 1) / tp;
        out->kv_heads = c->kv_heads >= tp ? (c->kv_heads + tp - 1) / tp : 1;
        out->intermediate = (c->intermediate + tp - 1) / tp;
        out->moe_intermediate = (c->moe_intermediate + tp - 1) / tp;
        out->shared_intermediate = (c->shared_intermediate + tp - 1) / tp;
        out->vocab = (c->vocab + tp - 1) / tp;
        out->tp = tp;
        return DSE_OK;
    }
    if (c->heads % tp)
        return dse_err_set(e, DSE_EINPUT, file, "num_attention_heads",
                           "%lld attention heads do not split over tp %d (tp must divide them)", (long long)c->heads, tp);
    if (c->kv_heads % tp && tp % c->kv_heads)
        return dse_err_set(e, DSE_EINPUT, file, "num_key_value_heads",
                           "%lld key/value heads neither split over tp %d nor replicate evenly (one must divide the "
                           "other)",
                           (long long)c->kv_heads, tp);
    const int64_t *ffn[3] = {&c->intermediate, &c->moe_intermediate, &c->shared_intermediate};
    static const char *const key[3] = {"intermediate_size", "moe_intermediate_size", "shared_expert_intermediate_size"};
    for (int i = 0; i < 3; i++)
        if (*ffn[i] % tp)
            return dse_err_set(e, DSE_EINPUT, file, key[i], "%lld does not split over tp %d (tp must divide it)",
                               (long long)*ffn[i], tp);
    out->heads = c->heads / tp;
    out->kv_heads = c->kv_heads >= tp ? c->kv_heads / tp : 1; /* fewer KV heads than devices: each keeps a copy of one */
    out->intermediate = c->intermediate / tp;
    out->moe_intermediate = c->moe_intermediate / tp;
    out->shared_intermediate = c->shared_intermediate / tp;
    out->vocab = (c->vocab + tp - 1) / tp; /* padded to a multiple of tp, as Megatron-LM pads it */
    out->tp = tp;
    return DSE_OK;
}

/* ---- T5: an encoder-decoder ----
 * A step of shape (tokens S, past P) is: the prefill (P = 0), the encoder over the S-token input, each
 * decoder layer's cross-attention keys and values projected once from its output (the cross cache,
 * kind kv, S rows) and the decoder's first step on its start token; or a decode step (P > 0: P is the
 * encoder's length, the input's), the decoder on one token, its self-attention reading a cache of the
 * tokens generated so far (1 at build: the start token; eval grows it by one a step) and its
 * cross-attention the P-row cross cache, which never grows (max_rows). Every layer: T5LayerNorm (RMS,
 * scale only) before each sublayer, q, k, v, o of heads x d_kv without biases, residuals; the FFN
 * relu (T5) or gated (T5 v1.1, Flan-T5). Relative position biases: a gather from each stack's
 * [buckets, heads] table in its first layer (their parameters and reads); adding them to the scores
 * is not costed (fused in attention kernels). The LM head runs on the step's one token, tied to the
 * embeddings by default (T5 v1.0; scaled by d_model^-0.5, not costed). Training and tp/cp splits of
 * T5 are not modelled (refused). */
static int t5_attn(struct gb *b, const struct wl_transformer *c, const char *pre, int x, int kvx, int cached_kv,
                   int64_t P, int causal)
{
    if (b->rc)
        return -1;
    const int64_t B = b->g->t[x].dim[0], S = b->g->t[x].dim[1], inner = c->heads * c->head_dim;
    char n[48];
    int in[5], nin = 3;
    int n1 = gb_norm(b, pre, 1, x);
    snprintf(n, sizeof n, "%s.q", pre);
    in[0] = gb_linear(b, n, n1, inner, 0, WL_ACT);
    if (kvx >= 0) { /* self-attention: the new keys and values join the decoder's cache (kind kv) */
        snprintf(n, sizeof n, "%s.k", pre);
        in[1] = gb_linear(b, n, n1, inner, 0, cached_kv ? WL_KV : WL_ACT);
        snprintf(n, sizeof n, "%s.v", pre);
        in[2] = gb_linear(b, n, n1, inner, 0, cached_kv ? WL_KV : WL_ACT);
        if (P > 0) {
            snprintf(n, sizeof n, "%s.k_cache", pre);
            in[3] = gb_tensor(b, n, WL_KV, 3, B, P, inner, 0);
            snprintf(n, sizeof n, "%s.v_cache", pre);
            in[4] = gb_tensor(b, n, WL_KV, 3, B, P, inner, 0);
            nin = 5;
        }
    } else { /* cross-attention: the cross cache's keys and values (cached_kv: their tensors k, v) */
        in[1] = cached_kv & 0xffff;
        in[2] = cached_kv >> 16;
    }
    snprintf(n, sizeof n, "%s.attention", pre);
    int att = gb_op(b, n, OP_ATTENTION, in, nin, n, WL_ACT, 3, B, S, inner, 0);
    if (att >= 0) {
        struct wl_op *op = &b->g->op[b->g->n_op - 1];
        op->heads = (int)c->heads;
        op->causal = causal;
        op->cross = kvx < 0;
    }
    snprintf(n, sizeof n, "%s.o", pre);
    int o = gb_linear(b, n, att, c->hidden, 0, WL_ACT);
    snprintf(n, sizeof n, "%s.residual", pre);
    return gb_eltwise(b, n, FN_ADD, x, o);
}

static int t5_ffn(struct gb *b, const struct wl_transformer *c, const char *pre, int x)
{
    char n[48];
    snprintf(n, sizeof n, "%s.norm", pre);
    int n1 = gb_norm(b, n, 1, x);
    snprintf(n, sizeof n, "%s.", pre);
    int f = dense_mlp(b, c, n, n1, c->intermediate);
    snprintf(n, sizeof n, "%s.residual", pre);
    return gb_eltwise(b, n, FN_ADD, x, f);
}

/* each stack's relative position bias: bucket ids of the step's query-key pairs gathered from the
 * [buckets, heads] table */
static void t5_bias(struct gb *b, const struct wl_transformer *c, const char *pre, int64_t pairs)
{
    char n[48], t[48], o[48];
    int in[2];
    snprintf(n, sizeof n, "%s.rel_bucket", pre);
    snprintf(t, sizeof t, "%s.rel_bias", pre);
    snprintf(o, sizeof o, "%s.rel_bias_out", pre);
    in[0] = gb_tensor(b, n, WL_INDEX, 2, 1, pairs, 0, 0);
    in[1] = gb_tensor(b, t, WL_WEIGHT, 2, c->rel_buckets, c->heads, 0, 0);
    gb_op(b, t, OP_EMBEDDING, in, 2, o, WL_ACT, 3, 1, pairs, c->heads, 0);
}

static int build_t5(const struct wl_transformer *c, const struct wl_shape *s, struct gb *b)
{
    struct wl_graph *g = b->g;
    const int64_t B = s->batch, h = c->hidden, inner = c->heads * c->head_dim;
    if (s->train)
        return dse_err_set(b->e, DSE_EINPUT, NULL, NULL, "training T5 (an encoder-decoder) is not modelled");
    const int prefill = s->past == 0;
    const int64_t L = prefill ? s->tokens : s->past; /* the encoder's tokens */
    int in[2], kc = -1, vc = -1;
    in[1] = gb_tensor(b, "shared", WL_WEIGHT, 2, c->vocab, h, 0, 0);
    if (prefill) { /* the encoder, then every decoder layer's cross keys and values from its output */
        in[0] = gb_tensor(b, "input_ids", WL_INDEX, 2, B, L, 0, 0);
        int x = gb_op(b, "encoder.embed", OP_EMBEDDING, in, 2, "encoder.embed", WL_ACT, 3, B, L, h, 0);
        t5_bias(b, c, "encoder", L * L);
        b->prefix = "encoder.layers.";
        b->count = (double)c->layers;
        x = t5_attn(b, c, "self_attn", x, x, 0, 0, 0);
        x = t5_ffn(b, c, "ffn", x);
        b->prefix = "";
        b->count = 1;
        int enc = gb_norm(b, "encoder.final_norm", 1, x);
        b->prefix = "decoder.layers.";
        b->count = (double)c->dec_layers;
        kc = gb_linear(b, "cross_attn.k", enc, inner, 0, WL_KV);
        vc = gb_linear(b, "cross_attn.v", enc, inner, 0, WL_KV);
        b->prefix = "";
        b->count = 1;
    } else { /* the cross cache: the encoder's L rows, kept whole (it never grows) */
        b->prefix = "decoder.layers.";
        b->count = (double)c->dec_layers;
        kc = gb_tensor(b, "cross_attn.k_cache", WL_KV, 3, B, L, inner, 0);
        vc = gb_tensor(b, "cross_attn.v_cache", WL_KV, 3, B, L, inner, 0);
        b->prefix = "";
        b->count = 1;
        if (!b->rc) {
            g->t[kc].max_rows = g->t[vc].max_rows = L;
            g->t[kc].count = g->t[vc].count = (double)c->dec_layers;
        }
    }
    if (b->rc)
        return b->rc;
    /* the decoder's step: one token (the start token at prefill), its self cache of the tokens before */
    const int64_t P = prefill ? 0 : 1;
    in[0] = gb_tensor(b, "decoder_input_ids", WL_INDEX, 2, B, 1, 0, 0);
    in[1] = wl_find_tensor(g, "shared");
    int y = gb_op(b, "decoder.embed", OP_EMBEDDING, in, 2, "decoder.embed", WL_ACT, 3, B, 1, h, 0);
    t5_bias(b, c, "decoder", P + 1);
    b->prefix = "decoder.layers.";
    b->count = (double)c->dec_layers;
    y = t5_attn(b, c, "self_attn", y, y, 1, P, 1);
    y = t5_attn(b, c, "cross_attn", y, -1, kc | vc << 16, 0, 0);
    y = t5_ffn(b, c, "ffn", y);
    b->prefix = "";
    b->count = 1;
    y = gb_norm(b, "decoder.final_norm", 1, y);
    if (c->tied) { /* the shared table, read transposed */
        in[0] = y;
        in[1] = wl_find_tensor(g, "shared");
        gb_op(b, "lm_head", OP_MATMUL, in, 2, "logits", WL_ACT, 3, B, 1, c->vocab, 0);
        if (!b->rc)
            g->op[g->n_op - 1].transb = 1;
    } else {
        gb_linear(b, "lm_head", y, c->vocab, 0, WL_ACT);
    }
    return b->rc;
}

int wl_build_transformer(const struct wl_transformer *c, const char *name, const struct wl_shape *s,
                         struct wl_graph *g, struct dse_err *e)
{
    wl_graph_init(g, name);
    struct gb b = {g, e, "", 1, DSE_OK};
    if (c->family == F_T5)
        return build_t5(c, s, &b);
    const int64_t B = s->batch, h = c->hidden;
    const int vit = c->family == F_VIT, bert = c->post_norm;
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
        x = tp_collective(&b, "embed_allreduce", x, 0, c->tp); /* vocabulary-parallel: each shard's rows */
        if (c->embed_scale) /* gemma: x sqrt(hidden) */
            x = gb_eltwise(&b, "embed_scale", FN_SCALE, x, -1);
        if (c->learned_pos) {
            in[0] = gb_tensor(&b, "position_ids", WL_INDEX, 2, B, S, 0, 0);
            in[1] = gb_tensor(&b, "embed_positions", WL_WEIGHT, 2, c->max_pos, h, 0, 0);
            int pe = gb_op(&b, "embed_positions", OP_EMBEDDING, in, 2, "pos_out", WL_ACT, 3, B, S, h, 0);
            x = gb_eltwise(&b, "add_pos", FN_ADD, x, pe);
        }
        if (bert && c->type_vocab > 0) {
            in[0] = gb_tensor(&b, "token_type_ids", WL_INDEX, 2, B, S, 0, 0);
            in[1] = gb_tensor(&b, "embed_token_type", WL_WEIGHT, 2, c->type_vocab, h, 0, 0);
            int te = gb_op(&b, "embed_token_type", OP_EMBEDDING, in, 2, "type_out", WL_ACT, 3, B, S, h, 0);
            x = gb_eltwise(&b, "add_type", FN_ADD, x, te);
        }
        if (bert)
            x = gb_norm(&b, "embed_norm", 0, x);
    }

    /* --- the layers: one block per kind, counted by the layers of that kind --- */
    const int64_t(*bl)[2] = c->block_layers;
    int kinds_w = (bl[0][0] + bl[0][1] > 0) + (bl[1][0] + bl[1][1] > 0);
    int kinds_m = (bl[0][0] + bl[1][0] > 0) + (bl[0][1] + bl[1][1] > 0);
    for (int w = 0; w < 2; w++)
        for (int m = 0; m < 2; m++) {
            if (!bl[w][m])
                continue;
            char pre[32];
            snprintf(pre, sizeof pre, "layers.%s%s", kinds_w > 1 ? (w ? "swa." : "full.") : "",
                     kinds_m > 1 ? (m ? "moe." : "dense.") : "");
            b.prefix = pre;
            b.count = (double)bl[w][m];
            x = layer(&b, c, s, S, x, w, m);
            b.prefix = "";
        }

    /* --- head --- */
    b.prefix = "";
    b.count = 1;
    const int post = bert;
    int64_t Sx = vit ? c->max_pos : S;
    if (!post)
        x = gb_norm(&b, "final_norm", c->rms, x);
    int last = x;
    const int all_tokens = c->decoder && s->train; /* training: every position predicts the next token */
    if (Sx > 1 && (c->decoder || vit || c->pooler) && !all_tokens) { /* last token (decoder) or class token (encoder) */
        last = gb_op(&b, c->decoder ? "last_token" : "cls_token_out", OP_SLICE, &x, 1, "head_in", WL_ACT, 3, B, 1, h, 0);
        if (last >= 0)
            g->op[g->n_op - 1].axis = 1;
    }
    if (c->decoder) {
        int logits;
        if (c->tied) { /* lm_head reuses the [vocab, hidden] embedding table, read transposed */
            in[0] = last;
            in[1] = wl_find_tensor(g, "embed_tokens");
            logits = gb_op(&b, "lm_head", OP_MATMUL, in, 2, "logits", WL_ACT, 3, B, all_tokens ? S : 1, c->vocab, 0);
            if (!b.rc)
                g->op[g->n_op - 1].transb = 1;
        } else {
            logits = gb_linear(&b, "lm_head", last, c->vocab, c->head_bias, WL_ACT);
        }
        if (c->final_softcap > 0) /* c tanh(logits / c): tanh counted, the two scalings not */
            logits = gb_eltwise(&b, "logit_softcap", FN_TANH, logits, -1);
        if (all_tokens) { /* the loss: a softmax over each shard's vocabulary (Megatron-LM's vocabulary-parallel
                             cross-entropy also all-reduces each position's max and sum over tp: two [B, S]
                             vectors, not counted) */
            in[0] = logits;
            gb_op(&b, "loss_softmax", OP_SOFTMAX, in, 1, "loss_softmax", WL_ACT, 3, B, S, c->vocab, 0);
        } else {
            tp_collective(&b, "logits_allgather", logits, 1, c->tp); /* each shard's vocabulary columns */
        }
    } else if (vit) {
        gb_linear(&b, "classifier", last, c->num_labels, 1, WL_ACT);
    } else if (c->pooler) {
        int pd = gb_linear(&b, "pooler", last, h, 1, WL_ACT);
        gb_eltwise(&b, "pooler_act", FN_TANH, pd, -1);
    }
    return b.rc;
}
