/* check_wl.c -- workloads: published parameter and MAC counts, shapes, attention, lifetimes, CSV. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "jsonu.h"
#include "wl.h"

static void build(const struct wl_model *m, int64_t batch, int64_t tokens, int64_t past, struct wl_graph *g)
{
    struct dse_err e;
    struct wl_shape s = {.batch = batch, .tokens = tokens, .past = past, .tp = 1, .train = 0};
    int rc = wl_build(m, &s, g, &e);
    ck_assert_msg(rc == DSE_OK, "%s", e.msg);
}

/* Published parameter counts. */
static const struct {
    const char *file;
    double params;
    const char *source;
} published[] = {
    {"models/llama-3.2-1b.json", 1235814400, "HF meta-llama/Llama-3.2-1B safetensors: 1,235,814,400"},
    {"models/llama-2-7b.json", 6738415616, "HF meta-llama/Llama-2-7b-hf: 6,738,415,616 (\"6.74B\")"},
    {"models/llama-3.1-8b.json", 8030261248, "HF meta-llama/Llama-3.1-8B: 8,030,261,248"},
    {"models/llama-2-70b.json", 68976648192, "HF meta-llama/Llama-2-70b-hf: 68,976,648,192"},
    {"models/qwen2-0.5b.json", 494032768, "HF Qwen/Qwen2-0.5B: 494,032,768"},
    {"models/gpt2.json", 124439808, "HF gpt2: 124,439,808"},
    {"models/bert-base.json", 109482240, "HF bert-base-uncased BertModel: 109,482,240"},
    {"models/vit-b-16.json", 86567656, "timm/HF vit_base_patch16_224: 86,567,656"},
    /* KerasHub preset metadata (keras-team/keras-hub, keras_hub/src/models/NAME/NAME_presets.py "params"), which loads these
     * checkpoints; the same totals by hand in models/README.md. Gemma ties its head to the table. */
    {"models/gemma-2b.json", 2506172416, "KerasHub gemma_2b_en: 2,506,172,416"},
    {"models/gemma-2-2b.json", 2614341888, "KerasHub gemma2_2b_en: 2,614,341,888"},
    {"models/gemma-2-9b.json", 9241705984, "KerasHub gemma2_9b_en: 9,241,705,984"},
    {"models/phi-3-mini-4k.json", 3821079552, "KerasHub phi3_mini_4k_instruct_en; HF safetensors: 3,821,079,552"},
    {"models/mistral-7b.json", 7241732096, "KerasHub mistral_7b_en: 7,241,732,096"},
    {"models/mixtral-8x7b.json", 46702792704, "KerasHub mixtral_8_7b_en: 46,702,792,704 (every expert)"},
    {"models/qwen1.5-moe-a2.7b.json", 14315784192, "KerasHub qwen1.5_moe_2.7b_en: 14,315,784,192 (HF: 14.3B)"},
    {"models/resnet50.json", 25557032, "torchvision resnet50: 25,557,032"},
    {"models/mobilenet-v2.json", 3504872, "torchvision mobilenet_v2: 3,504,872"},
};

START_TEST(published_params)
{
    struct wl_model m;
    struct wl_graph g;
    test_model(published[_i].file, &m);
    build(&m, 1, 1, 0, &g);
    ck_assert_msg(wl_params(&g) == published[_i].params, "%s: %.0f params, expected %.0f (%s)", published[_i].file,
                  wl_params(&g), published[_i].params, published[_i].source);
    wl_graph_free(&g);
    wl_model_free(&m);
}
END_TEST

START_TEST(llama2_7b_decode_macs)
{
    /* One decode token with an empty cache, by hand: per layer q,k,v,o 4 x 4096^2 = 67,108,864 and
     * MLP 3 x 4096 x 11008 = 135,266,304 -> 202,375,168 x 32 layers = 6,476,005,376; lm_head
     * 4096 x 32000 = 131,072,000; attention over 1 key: 2 (QK, PV) x 32 heads x 128 = 8,192 per
     * layer -> 262,144. Total 6,607,339,520. The embedding is a gather (no MACs). */
    struct wl_model m;
    struct wl_graph g;
    test_model("models/llama-2-7b.json", &m);
    build(&m, 1, 1, 0, &g);
    ck_assert_double_eq(wl_macs(&g), 6607339520.0);
    wl_graph_free(&g);
    /* With 511 tokens cached the attention sees 512 keys: + 32 x 2 x 32 x 128 x 511 more MACs. */
    build(&m, 1, 1, 511, &g);
    ck_assert_double_eq(wl_macs(&g), 6607339520.0 + 32.0 * 2 * 32 * 128 * 511);
    /* KV cache of that step: 2 (K, V) x 32 layers x 512 tokens x 4096 x 2 bytes (fp16) = 268,435,456. */
    struct prec_cfg p = {P_FP16, P_FP16, P_FP16};
    ck_assert_double_eq(wl_kind_bytes(&g, WL_KV, &p), 268435456.0);
    wl_graph_free(&g);
    wl_model_free(&m);
}
END_TEST

START_TEST(cnn_macs)
{
    struct wl_model m;
    struct wl_graph g;
    /* ResNet-50 at 224: 4.09 GMACs (torchvision model card "GFLOPS 4.09", counted as MACs). */
    test_model("models/resnet50.json", &m);
    build(&m, 1, 1, 0, &g);
    ck_assert_near(wl_macs(&g), 4.09e9, 0.005);
    /* conv1 by hand: 112 x 112 outputs x 64 filters x 3 x 7 x 7 = 118,013,952 MACs. */
    ck_assert_double_eq(g.op[0].macs, 118013952.0);
    wl_graph_free(&g);
    build(&m, 8, 1, 0, &g); /* MACs scale with the batch */
    ck_assert_near(wl_macs(&g), 8 * 4.09e9, 0.005);
    wl_graph_free(&g);
    wl_model_free(&m);
    /* MobileNetV2 1.0 at 224: 300 M multiply-adds (Sandler et al., CVPR 2018, Table 4). */
    test_model("models/mobilenet-v2.json", &m);
    build(&m, 1, 1, 0, &g);
    ck_assert_near(wl_macs(&g), 300e6, 0.01);
    wl_graph_free(&g);
    wl_model_free(&m);
}
END_TEST

START_TEST(attention_causal_pairs)
{
    /* A graph with one attention op: q [1, S, 2 heads x 4], k/v [1, S, 1 kv head x 4] (GQA), k_past/v_past
     * [1, P, 4]. MACs = heads x pairs x 2 x head_dim with causal pairs = S(T-S+1) + S(S-1)/2, T = S+P. */
    static const struct {
        int S, P;
        double pairs;
    } c[] = {{4, 0, 10}, {1, 9, 10}, {3, 2, 12}}; /* 1+2+3+4; 10 keys; 3+4+5 */
    for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct wl_graph g;
        struct dse_err e;
        wl_graph_init(&g, "att");
        int64_t q[3] = {1, c[i].S, 8}, k[3] = {1, c[i].S, 4}, kp[3] = {1, c[i].P, 4};
        int in[5];
        in[0] = wl_add_tensor(&g, "q", WL_INPUT, 3, q, &e);
        in[1] = wl_add_tensor(&g, "k", WL_INPUT, 3, k, &e);
        in[2] = wl_add_tensor(&g, "v", WL_INPUT, 3, k, &e);
        int n = 3;
        if (c[i].P) {
            in[3] = wl_add_tensor(&g, "kp", WL_KV, 3, kp, &e);
            in[4] = wl_add_tensor(&g, "vp", WL_KV, 3, kp, &e);
            n = 5;
        }
        int out = wl_add_tensor(&g, "o", WL_ACT, 3, q, &e);
        int op = wl_add_op(&g, "attn", OP_ATTENTION, in, n, &out, 1, &e);
        g.op[op].heads = 2;
        g.op[op].causal = 1;
        ck_assert_msg(wl_finalize(&g, "t", &e) == DSE_OK, "%s", e.msg);
        ck_assert_double_eq(g.op[0].macs, 2 * c[i].pairs * 2 * 4);
        /* FLOPs: 2 per MAC plus 5 per score (softmax) per head. */
        ck_assert_double_eq(g.op[0].flops, 2 * g.op[0].macs + 5 * 2 * c[i].pairs);
        wl_graph_free(&g);
    }
}
END_TEST

START_TEST(graph_lifetimes_tiny_mlp)
{
    /* tiny-mlp at batch 1, fp32: image 784x4 = 3136 B, h 1024, a 1024, logits 40, probs 40.
     * Live at fc1: image + h = 4160; relu: h + a = 2048; fc2: a + logits = 1064; softmax: 80. */
    struct wl_model m;
    struct wl_graph g;
    test_model("models/tiny-mlp.json", &m);
    build(&m, 1, 1, 0, &g);
    struct prec_cfg p = {P_FP32, P_FP32, P_FP32};
    ck_assert_double_eq(wl_peak_act_bytes(&g, &p, NULL), 4160);
    /* 784x256 + 256 + 256x10 = 203,520 parameters; MACs 784x256 + 256x10 = 203,264. */
    ck_assert_double_eq(wl_params(&g), 203520);
    ck_assert_double_eq(wl_macs(&g), 203264);
    wl_graph_free(&g);
    build(&m, 32, 1, 0, &g); /* "B" dimensions follow the batch */
    ck_assert_double_eq(wl_macs(&g), 32 * 203264.0);
    ck_assert_double_eq(wl_params(&g), 203520);
    wl_graph_free(&g);
    wl_model_free(&m);
}
END_TEST

START_TEST(graph_topological_order)
{
    /* Ops listed out of order are sorted; a cycle is rejected. */
    const char *txt = "{\"tensors\":[{\"name\":\"x\",\"shape\":[4],\"kind\":\"input\"},{\"name\":\"y\",\"shape\":[4]},"
                      "{\"name\":\"z\",\"shape\":[4]}],\"ops\":["
                      "{\"name\":\"second\",\"type\":\"eltwise\",\"fn\":\"relu\",\"inputs\":[\"y\"],\"outputs\":[\"z\"]},"
                      "{\"name\":\"first\",\"type\":\"eltwise\",\"fn\":\"gelu\",\"inputs\":[\"x\"],\"outputs\":[\"y\"]}]}";
    struct wl_model m;
    struct wl_graph g;
    struct dse_err e;
    ck_assert_int_eq(wl_load_buf(txt, strlen(txt), "t.json", 0, &m, &e), DSE_OK);
    build(&m, 1, 1, 0, &g);
    ck_assert_str_eq(g.op[0].name, "first");
    ck_assert_str_eq(g.op[1].name, "second");
    ck_assert_double_eq(g.op[0].flops, 4 * 17); /* gelu: 17 FLOPs per element (wl_fn_flops) */
    wl_graph_free(&g);
    wl_model_free(&m);
    const char *cyc = "{\"tensors\":[{\"name\":\"y\",\"shape\":[4]},{\"name\":\"z\",\"shape\":[4]}],\"ops\":["
                      "{\"name\":\"a\",\"type\":\"eltwise\",\"fn\":\"relu\",\"inputs\":[\"y\"],\"outputs\":[\"z\"]},"
                      "{\"name\":\"b\",\"type\":\"eltwise\",\"fn\":\"relu\",\"inputs\":[\"z\"],\"outputs\":[\"y\"]}]}";
    ck_assert_int_eq(wl_load_buf(cyc, strlen(cyc), "c.json", 0, &m, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "cycle") != NULL, "%s", e.msg);
}
END_TEST

START_TEST(graph_shape_errors)
{
    static const struct {
        const char *json, *msg;
    } c[] = {
        {"{\"tensors\":[{\"name\":\"a\",\"shape\":[2,3],\"kind\":\"input\"},{\"name\":\"w\",\"shape\":[4,5],\"kind\":\"weight\"},"
         "{\"name\":\"y\",\"shape\":[2,5]}],\"ops\":[{\"name\":\"mm\",\"type\":\"matmul\",\"inputs\":[\"a\",\"w\"],\"outputs\":[\"y\"]}]}",
         "ops[0] (mm): inner dimensions differ"},
        {"{\"tensors\":[{\"name\":\"x\",\"shape\":[1,3,8,8],\"kind\":\"input\"},{\"name\":\"w\",\"shape\":[4,3,3,3],\"kind\":\"weight\"},"
         "{\"name\":\"y\",\"shape\":[1,4,8,8]}],\"ops\":[{\"name\":\"c\",\"type\":\"conv2d\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"y\"]}]}",
         "output 'y' has shape [1, 4, 8, 8] but conv2d gives [1, 4, 6, 6]"},
        {"{\"tensors\":[{\"name\":\"x\",\"shape\":[4],\"kind\":\"input\"},{\"name\":\"y\",\"shape\":[4]}],"
         "\"ops\":[{\"name\":\"s\",\"type\":\"spline\",\"inputs\":[\"x\"],\"outputs\":[\"y\"]}]}",
         "unknown operator 'spline'"},
        {"{\"tensors\":[{\"name\":\"x\",\"shape\":[4],\"kind\":\"input\"},{\"name\":\"y\",\"shape\":[4]}],"
         "\"ops\":[{\"name\":\"s\",\"type\":\"softmax\",\"inputs\":[\"q\"],\"outputs\":[\"y\"]}]}",
         "unknown tensor 'q'"},
        {"{\"tensors\":[{\"name\":\"x\",\"shape\":[0],\"kind\":\"input\"}],\"ops\":[]}", "expected a positive integer"},
        {"{\"tensors\":[{\"name\":\"x\",\"shape\":[4]},{\"name\":\"y\",\"shape\":[4]}],"
         "\"ops\":[{\"name\":\"s\",\"type\":\"softmax\",\"inputs\":[\"x\"],\"outputs\":[\"y\"]}]}",
         "produced by no operator"},
    };
    for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++) {
        struct wl_model m;
        struct dse_err e;
        ck_assert_int_eq(wl_load_buf(c[i].json, strlen(c[i].json), "g.json", 0, &m, &e), DSE_EINPUT);
        ck_assert_msg(strstr(e.msg, c[i].msg) != NULL, "case %u: '%s' lacks '%s'", i, e.msg, c[i].msg);
    }
}
END_TEST

START_TEST(scalesim_csv)
{
    struct wl_model m;
    struct wl_graph g;
    test_model("models/gemm-scalesim.csv", &m);
    build(&m, 1, 1, 0, &g);
    ck_assert_int_eq(g.n_op, 4);
    /* FF1: M 512, N 3072, K 768 -> 1,207,959,552 MACs. */
    ck_assert_str_eq(g.op[2].name, "FF1");
    ck_assert_double_eq(g.op[2].macs, 512.0 * 3072 * 768);
    wl_graph_free(&g);
    wl_model_free(&m);
    test_model("models/resnet50-scalesim.csv", &m);
    build(&m, 1, 1, 0, &g);
    /* The whole ResNet-50: 53 convolutions and the FC layer. SCALE-Sim ofmap = ceil((229 - 7 + 2) / 2)
     * = 112: MACs 112 x 112 x 7 x 7 x 3 x 64 = 118,013,952. */
    ck_assert_int_eq(g.n_op, 54);
    ck_assert_double_eq(g.op[0].macs, 118013952.0);
    ck_assert_int_eq(g.t[g.op[0].out[0]].dim[2], 112);
    wl_graph_free(&g);
    wl_model_free(&m);
    const char *bad = "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
                      "L1,4,4,5,5,3,8,1,\n";
    struct dse_err e;
    ck_assert_int_eq(wl_load_buf(bad, strlen(bad), "t.csv", 1, &m, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "t.csv: line 2: filter 5x5 larger") != NULL, "%s", e.msg);
}
END_TEST

START_TEST(transformer_phases_shapes)
{
    /* Llama-3.2-1B decode with 100 cached tokens, batch 4: attention reads k_past [4, 100, 8 x 64]. */
    struct wl_model m;
    struct wl_graph g;
    test_model("models/llama-3.2-1b.json", &m);
    ck_assert(wl_model_is_lm(&m));
    build(&m, 4, 1, 100, &g);
    int found = 0;
    for (int i = 0; i < g.n_op; i++) {
        if (g.op[i].type != OP_ATTENTION)
            continue;
        found = 1;
        ck_assert_int_eq(g.op[i].n_in, 5);
        const struct wl_tensor *kp = &g.t[g.op[i].in[3]];
        ck_assert(kp->dim[0] == 4 && kp->dim[1] == 100 && kp->dim[2] == 512 && kp->kind == WL_KV);
        ck_assert_double_eq(g.op[i].count, 16); /* one layer stored, counted 16 times */
    }
    ck_assert(found);
    wl_graph_free(&g);
    wl_model_free(&m);
    test_model("models/bert-base.json", &m);
    ck_assert(!wl_model_is_lm(&m));
    wl_model_free(&m);
}
END_TEST

static const struct wl_op *find_op(const struct wl_graph *g, const char *name)
{
    for (int i = 0; i < g->n_op; i++)
        if (!strcmp(g->op[i].name, name))
            return &g->op[i];
    ck_abort_msg("no op '%s' in %s", name, g->name);
    return NULL;
}

START_TEST(moe_experts)
{
    /* Expected distinct experts of E reached by T tokens picking k each, E (1 - (1 - k/E)^T), by hand:
     * one token reaches its k; two Mixtral tokens 8 (1 - (6/8)^2) = 3.5; four 8 (1 - 81/256) = 5.46875. */
    ck_assert_double_eq(wl_experts_touched(8, 2, 1), 2);
    ck_assert_double_eq(wl_experts_touched(8, 2, 2), 3.5);
    ck_assert_double_eq(wl_experts_touched(8, 2, 4), 5.46875);
    ck_assert_double_eq_tol(wl_experts_touched(60, 4, 1), 4, 1e-12); /* 60 (1 - 56/60): rounding */
    ck_assert_double_eq(wl_experts_touched(4, 4, 3), 4); /* k = E: every expert */

    /* Mixtral-8x7B by hand: per layer attention 2 x 4096^2 + 2 x 4096 x 1024 = 41,943,040, router
     * 4096 x 8 = 32,768, 2 norms 8,192, one expert 3 x 4096 x 14336 = 176,160,768; 32 layers, embedding
     * and head 2 x 32000 x 4096, final norm 4096. Active (2 of 8 experts): 32 x 394,305,536
     * + 262,148,096 = 12,879,925,248 (Mixtral of Experts, arXiv 2401.04088: "13B active"; model card
     * "12.9B"); total with all 8: 46,702,792,704. */
    struct wl_model m;
    struct wl_graph g;
    test_model("models/mixtral-8x7b.json", &m);
    build(&m, 1, 1, 0, &g);
    ck_assert_double_eq(wl_params(&g), 46702792704.0);
    ck_assert_double_eq(wl_active_params(&g), 12879925248.0);
    /* One decode token reaches 2 experts: one GEMM view per expert of 1 row, 2 x 4096 x 14336 MACs, and
     * 2/8 of the resident bank read: 2 x 4096 x 14336 x 2 B at fp16. */
    struct prec_cfg p16 = {P_FP16, P_FP16, P_FP16};
    const struct wl_op *o = find_op(&g, "layers.experts.gate_proj");
    ck_assert(o->experts == 8 && o->topk == 2 && o->count == 32);
    ck_assert_double_eq(o->gbatch, 2);
    ck_assert_double_eq(o->gm, 1);
    ck_assert_double_eq(o->macs, 2.0 * 4096 * 14336);
    ck_assert_double_eq(g.t[o->in[1]].elems, 8.0 * 4096 * 14336);
    ck_assert_double_eq(wl_op_read_bytes(&g, o, 1, &p16), 2.0 * 4096 * 14336 * 2);
    /* The router is a [4096 -> 8] GEMM; the combine sums each token's 2 rows (2 x 4096 adds). */
    ck_assert_double_eq(find_op(&g, "layers.router")->macs, 4096.0 * 8);
    ck_assert_double_eq(find_op(&g, "layers.moe_combine")->flops, 2.0 * 4096);
    wl_graph_free(&g);
    /* Batch 4: 4 tokens reach 5.46875 experts of 8 rows / 5.46875 each; MACs follow the rows, not D. */
    build(&m, 4, 1, 0, &g);
    o = find_op(&g, "layers.experts.down_proj");
    ck_assert_double_eq(o->gbatch, 5.46875);
    ck_assert_double_eq(o->gm * o->gbatch, 8);
    ck_assert_double_eq(o->macs, 8.0 * 14336 * 4096);
    ck_assert_double_eq(wl_op_read_bytes(&g, o, 1, &p16), 5.46875 * 14336 * 4096 * 2);
    wl_graph_free(&g);
    wl_model_free(&m);

    /* Qwen1.5-MoE-A2.7B by hand: attention q, k, v 3 x (2048^2 + 2048 bias) + o 2048^2 = 16,783,360,
     * router 2048 x 60 = 122,880, shared expert 3 x 2048 x 5632 = 34,603,008 and its gate 2048, norms 4096,
     * 4 of 60 experts 4 x 3 x 2048 x 1408 = 34,603,008: 86,118,400 x 24 + 2 x 151936 x 2048 + 2048
     * = 2,689,173,504 active (HF model card: "2.7B activated parameters", 14.3B in total). */
    test_model("models/qwen1.5-moe-a2.7b.json", &m);
    build(&m, 1, 1, 0, &g);
    ck_assert_double_eq(wl_active_params(&g), 2689173504.0);
    ck_assert_double_eq(find_op(&g, "layers.shared_expert_gate")->macs, 2048);
    wl_graph_free(&g);
    wl_model_free(&m);

    /* Dense layers among the MoE ones (HF: layer i is MoE when (i + 1) % decoder_sparse_step == 0 and
     * i is not in mlp_only_layers). A dense layer: attention 16,783,360 + MLP 3 x 2048 x 5632 = 34,603,008
     * + norms 4096 = 51,390,464; a MoE layer 16,783,360 + 60 x 8,650,752 + 34,603,008 + 2048 + 122,880
     * + 4096 = 570,560,512; embeddings, head and final norm 622,331,904. Step 2: 12 of each,
     * 8,085,743,616; mlp_only_layers [0]: 1 dense + 23 MoE, 13,796,614,144. */
    static const struct {
        const char *from, *to;
        double params;
        int64_t dense;
    } v[] = {{"\"decoder_sparse_step\": 1", "\"decoder_sparse_step\": 2", 8085743616.0, 12},
             {"\"decoder_sparse_step\": 1", "\"mlp_only_layers\": [0]", 13796614144.0, 1}};
    char path[512], *text;
    size_t len;
    struct dse_err e;
    ck_assert(ju_read_file(src_path(path, sizeof path, "models/qwen1.5-moe-a2.7b.json"), 1 << 20, &text, &len, &e) == 0);
    for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) {
        char buf[4096], *at = strstr(text, v[i].from);
        ck_assert(at && len + 16 < sizeof buf);
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - text), text, v[i].to, at + strlen(v[i].from));
        ck_assert_msg(wl_load_buf(buf, strlen(buf), "q.json", 0, &m, &e) == DSE_OK, "%s", e.msg);
        ck_assert_int_eq(m.tf.block_layers[0][0], v[i].dense);
        build(&m, 2, 3, 0, &g);
        ck_assert_double_eq(wl_params(&g), v[i].params);
        ck_assert_double_eq(find_op(&g, "layers.dense.down_proj")->count, (double)v[i].dense);
        ck_assert_double_eq(find_op(&g, "layers.moe.experts.down_proj")->count, 24.0 - (double)v[i].dense);
        wl_graph_free(&g);
        wl_model_free(&m);
    }
    free(text);
}
END_TEST

START_TEST(sliding_window)
{
    /* Keys per query min(p + 1, W), by hand: 8 queries from position 0 with W = 4: 1+2+3+4+4+4+4+4 = 26;
     * one query after 3 cached: 4; 3 queries after 2 cached: 3+4+4 = 11; a window wider than the
     * context is plain causal: 4 queries 1+2+3+4 = 10. */
    ck_assert_double_eq(wl_attention_pairs(8, 0, 4), 26);
    ck_assert_double_eq(wl_attention_pairs(1, 3, 4), 4);
    ck_assert_double_eq(wl_attention_pairs(3, 2, 4), 11);
    ck_assert_double_eq(wl_attention_pairs(4, 0, 10), 10);
    ck_assert_double_eq(wl_attention_pairs(4, 0, 0), 10);

    /* Mistral-7B (window 4096) decoding after 16384 tokens keeps a rolling cache: 4095 past rows, so
     * attention sees 4096 keys: 32 heads x 4096 x 2 x 128 MACs per layer; the cache of that step
     * 2 (K, V) x 32 layers x 4096 tokens x 1024 x 2 B = 536,870,912, not 16385 tokens' 2,147,614,720. */
    struct wl_model m;
    struct wl_graph g;
    struct prec_cfg p16 = {P_FP16, P_FP16, P_FP16};
    test_model("models/mistral-7b.json", &m);
    ck_assert_int_eq(m.tf.window, 4096);
    build(&m, 1, 1, 16384, &g);
    const struct wl_op *o = find_op(&g, "layers.attention");
    ck_assert_int_eq(g.t[o->in[3]].dim[1], 4095);
    ck_assert_double_eq(o->macs, 32.0 * 4096 * 2 * 128);
    ck_assert_double_eq(o->gn, 4096);
    ck_assert_double_eq(wl_kind_bytes(&g, WL_KV, &p16), 536870912.0);
    wl_graph_free(&g);
    /* A prefill of 6000 tokens attends 4096 x 4097 / 2 + (6000 - 4096) x 4096 = 8,390,656 + 7,798,784
     * = 16,189,440 pairs per head and
     * keeps the last 4096 rows of each K and V: the same 536,870,912 B. */
    build(&m, 1, 6000, 0, &g);
    o = find_op(&g, "layers.attention");
    ck_assert_double_eq(o->macs, 32.0 * 16189440 * 2 * 128);
    double kv = 0;
    for (int i = 0; i < g.n_t; i++)
        if (g.t[i].kind == WL_KV)
            kv += wl_kv_bytes(&g.t[i], &p16, 0) * g.t[i].count;
    ck_assert_double_eq(kv, 536870912.0);
    wl_graph_free(&g);
    wl_model_free(&m);

    /* Gemma-2-2B alternates: even layers windowed (4096), odd global: two blocks of 13, soft-capped
     * attention (tanh + 2 scalings: 16 more FLOPs per score) and logits (tanh on 256000). */
    test_model("models/gemma-2-2b.json", &m);
    ck_assert(m.tf.block_layers[1][0] == 13 && m.tf.block_layers[0][0] == 13);
    build(&m, 1, 1, 5000, &g);
    const struct wl_op *sw = find_op(&g, "layers.swa.attention"), *gl = find_op(&g, "layers.full.attention");
    ck_assert(sw->count == 13 && gl->count == 13 && sw->window == 4096 && gl->window == 0);
    ck_assert_int_eq(g.t[sw->in[3]].dim[1], 4095);
    ck_assert_int_eq(g.t[gl->in[3]].dim[1], 5000);
    ck_assert_double_eq(gl->flops, 2 * gl->macs + (5 + 16) * 8.0 * 5001);
    ck_assert_double_eq(find_op(&g, "logit_softcap")->flops, 14.0 * 256000);
    wl_graph_free(&g);
    wl_model_free(&m);

    /* Qwen2-0.5B ships sliding_window 131072 with use_sliding_window false (HF: no window), and
     * Phi-3-mini's 2047 applies to every layer (HF and vLLM apply it; docs/models.md). */
    test_model("models/qwen2-0.5b.json", &m);
    ck_assert(m.tf.window == 0 && m.tf.block_layers[0][0] == 24);
    wl_model_free(&m);
    test_model("models/phi-3-mini-4k.json", &m);
    ck_assert(m.tf.window == 2047 && m.tf.block_layers[1][0] == 32);
    wl_model_free(&m);
}
END_TEST

/* Loads a config given as text; returns the status and leaves the message in e. */
static int load_cfg(const char *json, struct dse_err *e)
{
    struct wl_model m;
    int rc = wl_load_buf(json, strlen(json), "c.json", 0, &m, e);
    if (!rc)
        wl_model_free(&m);
    return rc;
}

START_TEST(config_keys_refused)
{
    /* Keys that change the architecture and are not modelled are errors naming them; so are unknown
     * activations and layer kinds; keys known not to change the cost load. */
#define LLAMA "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"intermediate_size\": 128, " \
              "\"vocab_size\": 100, \"max_position_embeddings\": 256"
    static const struct {
        const char *json, *msg;
    } bad[] = {
        {"{\"model_type\": \"mistral\", \"num_key_value_heads\": 4, \"num_local_experts\": 8, " LLAMA "}",
         "c.json: num_local_experts: not modelled for model_type mistral"},
        {"{\"model_type\": \"llama\", \"hidden_act\": \"quick_gelu\", " LLAMA "}",
         "c.json: hidden_act: unknown activation 'quick_gelu' (known: silu, swish, gelu,"},
        {"{\"model_type\": \"llama\", \"partial_rotary_factor\": 0.5, " LLAMA "}",
         "c.json: partial_rotary_factor: not modelled for model_type llama"},
        {"{\"model_type\": \"llama\", \"is_encoder_decoder\": true, " LLAMA "}",
         "c.json: is_encoder_decoder: only false is modelled"},
        {"{\"model_type\": \"mistral\", " LLAMA "}", "c.json: num_key_value_heads: missing"},
        {"{\"model_type\": \"mixtral\", \"num_key_value_heads\": 4, \"num_local_experts\": 4, "
         "\"num_experts_per_tok\": 5, " LLAMA "}",
         "c.json: num_experts_per_tok: 5 exceeds the 4 experts"},
        {"{\"model_type\": \"gemma2\", \"num_key_value_heads\": 4, \"layer_types\": [\"full_attention\"], " LLAMA "}",
         "c.json: layer_types: 1 entries for 2 layers"},
        {"{\"model_type\": \"qwen2_moe\", \"num_key_value_heads\": 4, \"num_experts\": 4, \"num_experts_per_tok\": 2, "
         "\"moe_intermediate_size\": 32, \"shared_expert_intermediate_size\": 64, \"mlp_only_layers\": [2], " LLAMA "}",
         "c.json: mlp_only_layers[0]: expected a layer index in [0, 1]"},
        {"{\"model_type\": \"llama\", \"max_position_embeddings\": 8, " LLAMA "}", "c.json: max_position_embeddings: given twice"},
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct dse_err e;
        ck_assert_int_eq(load_cfg(bad[i].json, &e), DSE_EINPUT);
        ck_assert_msg(strstr(e.msg, bad[i].msg) != NULL, "case %u: '%s' lacks '%s'", i, e.msg, bad[i].msg);
    }
    struct dse_err e;
    /* cost-neutral keys (ids, eps, dropout, rope_scaling) and false-only ones set false load */
    ck_assert_msg(load_cfg("{\"model_type\": \"llama\", \"rope_scaling\": {\"factor\": 8.0}, \"bos_token_id\": 1, "
                           "\"attention_dropout\": 0.0, \"is_decoder\": false, \"torch_dtype\": \"bfloat16\", " LLAMA "}",
                           &e) == DSE_OK,
                  "%s", e.msg);
    /* ViT's classifier has len(id2label) outputs (HF derives num_labels from it): 3 labels x (64 + 1) */
    struct wl_model m;
    static const char vit[] = "{\"model_type\": \"vit\", \"hidden_size\": 64, \"num_hidden_layers\": 1, "
                              "\"num_attention_heads\": 4, \"intermediate_size\": 128, \"encoder_stride\": 16, "
                              "\"id2label\": {\"0\": \"a\", \"1\": \"b\", \"2\": \"c\"}, \"label2id\": {\"a\": 0}}";
    ck_assert_msg(wl_load_buf(vit, strlen(vit), "v.json", 0, &m, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_eq(m.tf.num_labels, 3);
    wl_model_free(&m);
#undef LLAMA
}
END_TEST

Suite *make_wl_suite(void)
{
    Suite *s = suite_create("workload");
    TCase *t = tcase_create("workload");
    tcase_set_timeout(t, 30);
    tcase_add_loop_test(t, published_params, 0, (int)(sizeof published / sizeof published[0]));
    tcase_add_test(t, llama2_7b_decode_macs);
    tcase_add_test(t, cnn_macs);
    tcase_add_test(t, attention_causal_pairs);
    tcase_add_test(t, graph_lifetimes_tiny_mlp);
    tcase_add_test(t, graph_topological_order);
    tcase_add_test(t, graph_shape_errors);
    tcase_add_test(t, scalesim_csv);
    tcase_add_test(t, transformer_phases_shapes);
    tcase_add_test(t, moe_experts);
    tcase_add_test(t, sliding_window);
    tcase_add_test(t, config_keys_refused);
    suite_add_tcase(s, t);
    return s;
}
