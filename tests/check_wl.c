/* check_wl.c -- workloads: published parameter and MAC counts, shapes, attention, lifetimes, CSV. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "wl.h"

static void build(const struct wl_model *m, int64_t batch, int64_t tokens, int64_t past, struct wl_graph *g)
{
    struct dse_err e;
    struct wl_shape s = {batch, tokens, past};
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
    suite_add_tcase(s, t);
    return s;
}
