/* check_pass.c -- software stacks: the loader's bad inputs, each graph pass, the memory planner and the
 * runtime costs, with hand-derived traffic and times on the fixtures of check_fixtures.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_fixtures.h"
#include "check_suites.h"
#include "eval.h"
#include "pass.h"

static void load_graph(const char *json, struct wl_model *m)
{
    struct dse_err e;
    ck_assert_msg(wl_load_buf(json, strlen(json), "t.json", 0, m, &e) == DSE_OK, "%s", e.msg);
}

static struct sw_stack stack_with(unsigned passes)
{
    struct sw_stack s;
    pass_none(&s);
    s.passes = passes;
    return s;
}

/* Evaluates model m (batch 1) on device 0 of sys at precision p with stack sw. */
static void run(const struct hw_system *sys, const struct wl_model *m, enum prec p, const struct sw_stack *sw,
                struct eval_result *res)
{
    struct eval_req r;
    struct dse_err e;
    memset(&r, 0, sizeof r);
    memset(res, 0, sizeof *res);
    r.sys = sys;
    r.sw = sw;
    r.model = m;
    for (int t = 0; t < OP_COUNT; t++)
        r.type_dev[t] = -1;
    r.x.prec = (struct prec_cfg){p, p, p};
    r.batch = r.prompt = 1;
    r.want_ops = 1;
    ck_assert_msg(eval_run(&r, res, &e) == DSE_OK, "%s", e.msg);
    ck_assert_msg(res->feasible, "%s", res->reason);
}

static int bad_stack(const char *json, const char *want)
{
    struct sw_stack s;
    struct dse_err e;
    int rc = pass_load_buf(json, strlen(json), "s.json", &s, &e);
    ck_assert_int_eq(rc, DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, want) != NULL, "message '%s' lacks '%s'", e.msg, want);
    return rc;
}

#define HEAD "{\"schema\":\"dse-software-1\",\"name\":\"s\",\"targets\":[\"gpu\"],"

START_TEST(loader_bad_inputs)
{
    static const char good[] = HEAD "\"passes\":{\"bn_fold\":true,\"source\":\"t\"}}";
    struct sw_stack s;
    struct dse_err e;
    ck_assert_int_eq(pass_load_buf(good, strlen(good), "s.json", &s, &e), DSE_OK);
    ck_assert(pass_has(&s, PASS_BN_FOLD) && !pass_has(&s, PASS_EPILOGUE));
    bad_stack(HEAD "\"passes\":{\"bn_fold\":true,\"source\":\"t\"},\"extra\":1}", "extra");
    bad_stack(HEAD "\"passes\":{\"bn_fold\":true}}", "source");
    bad_stack(HEAD "\"passes\":{\"bn_fold\":1,\"source\":\"t\"}}", "expected true or false");
    bad_stack(HEAD "\"passes\":{\"fuse_all\":true,\"source\":\"t\"}}", "fuse_all");
    bad_stack(HEAD "\"passes\":{\"source\":\"t\"},\"memory\":{\"kv_cache\":\"pages\",\"source\":\"t\"}}",
              "unknown value 'pages'");
    bad_stack(HEAD "\"passes\":{\"source\":\"t\"},\"memory\":{\"kv_cache\":\"paged\",\"source\":\"t\"}}",
              "block size");
    bad_stack(HEAD "\"passes\":{\"source\":\"t\"},\"memory\":{\"weights_on_chip\":1.5,\"source\":\"t\"}}",
              "weights_on_chip");
    bad_stack(HEAD "\"passes\":{\"source\":\"t\"},\"runtime\":{\"per_step_us\":-1,\"source\":\"t\"}}", "per_step_us");
    bad_stack(HEAD "\"passes\":{\"source\":\"t\"},\"runtime\":{\"per_token_us\":-1,\"source\":\"t\"}}", "per_token_us");
    bad_stack(HEAD "\"passes\":{\"source\":\"t\"},\"runtime\":{\"per_token_device_share\":1.5,\"source\":\"t\"}}",
              "per_token_device_share");
    bad_stack("{\"schema\":\"dse-software-1\",\"name\":\"s\",\"targets\":[\"tpu\"],\"passes\":{\"source\":\"t\"}}",
              "expected a device class");
    bad_stack("{\"schema\":\"dse-software-1\",\"name\":\"none\",\"targets\":[\"cpu\"],\"passes\":{\"source\":\"t\"}}",
              "built-in");
    bad_stack("{\"schema\":\"dse-software-2\",\"name\":\"s\"}", "dse-software-1");
}
END_TEST

/* q, k, v projections of one input: 64 tokens of 256, to 256 + 64 + 64 columns. */
static const char QKV[] = "{\"format\":\"dse-graph-1\",\"name\":\"qkv\",\"tensors\":["
                          "{\"name\":\"x\",\"shape\":[1,64,256],\"kind\":\"input\"},"
                          "{\"name\":\"wq\",\"shape\":[256,256],\"kind\":\"weight\"},"
                          "{\"name\":\"wk\",\"shape\":[256,64],\"kind\":\"weight\"},"
                          "{\"name\":\"wv\",\"shape\":[256,64],\"kind\":\"weight\"},"
                          "{\"name\":\"q\",\"shape\":[1,64,256]},{\"name\":\"k\",\"shape\":[1,64,64]},"
                          "{\"name\":\"v\",\"shape\":[1,64,64]}],\"ops\":["
                          "{\"name\":\"q_proj\",\"type\":\"matmul\",\"inputs\":[\"x\",\"wq\"],\"outputs\":[\"q\"]},"
                          "{\"name\":\"k_proj\",\"type\":\"matmul\",\"inputs\":[\"x\",\"wk\"],\"outputs\":[\"k\"]},"
                          "{\"name\":\"v_proj\",\"type\":\"matmul\",\"inputs\":[\"x\",\"wv\"],\"outputs\":[\"v\"]}]}";

START_TEST(gemm_merge_keeps_counts)
{
    /* Merged: one matmul of N = 384 over a [256, 384] weight, the parts views of its output.
     * Parameters 256 x 384 = 98,304 and MACs 64 x 256 x 384 = 6,291,456, as the three had; one launch. */
    struct wl_model m;
    struct wl_graph g;
    struct dse_err e;
    load_graph(QKV, &m);
    struct wl_shape sh = {.batch = 1, .tokens = 1, .past = 0, .tp = 1, .train = 0};
    ck_assert_int_eq(wl_build(&m, &sh, &g, &e), DSE_OK);
    struct sw_stack s = stack_with(1u << PASS_GEMM_MERGE);
    ck_assert_msg(pass_apply(&s, &g, &e) == DSE_OK, "%s", e.msg);
    ck_assert_double_eq(wl_params(&g), 98304);
    ck_assert_double_eq(wl_macs(&g), 6291456);
    int matmuls = 0, slices = 0;
    for (int i = 0; i < g.n_op; i++) {
        matmuls += g.op[i].type == OP_MATMUL;
        slices += g.op[i].type == OP_SLICE;
        if (g.op[i].type == OP_MATMUL) {
            ck_assert_double_eq(g.op[i].gn, 384);
            ck_assert_str_eq(g.op[i].name, "q_proj+2");
        }
    }
    ck_assert_int_eq(matmuls, 1);
    ck_assert_int_eq(slices, 3);
    ck_assert_double_eq(pass_kernel_launches(&g), 1);
    wl_graph_free(&g);
    wl_model_free(&m);
}
END_TEST

/* A residual block: 1x1 convolution, BatchNorm, ReLU, the input added back, ReLU. x and the outputs
 * are 64 x 64 x 80 fp16 = 655,360 B, above half of FIX_GPU's 1 MiB L2: they live in DRAM. */
static const char BLOCK[] = "{\"format\":\"dse-graph-1\",\"name\":\"block\",\"tensors\":["
                            "{\"name\":\"x\",\"shape\":[1,64,64,80],\"kind\":\"input\"},"
                            "{\"name\":\"w\",\"shape\":[64,64,1,1],\"kind\":\"weight\"},"
                            "{\"name\":\"bnp\",\"shape\":[2,64],\"kind\":\"weight\"},"
                            "{\"name\":\"c\",\"shape\":[1,64,64,80]},{\"name\":\"b\",\"shape\":[1,64,64,80]},"
                            "{\"name\":\"r\",\"shape\":[1,64,64,80]},{\"name\":\"s\",\"shape\":[1,64,64,80]},"
                            "{\"name\":\"y\",\"shape\":[1,64,64,80]}],\"ops\":["
                            "{\"name\":\"conv\",\"type\":\"conv2d\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"c\"]},"
                            "{\"name\":\"bn\",\"type\":\"eltwise\",\"fn\":\"batchnorm\",\"inputs\":[\"c\",\"bnp\"],"
                            "\"outputs\":[\"b\"]},"
                            "{\"name\":\"relu\",\"type\":\"eltwise\",\"fn\":\"relu\",\"inputs\":[\"b\"],\"outputs\":[\"r\"]},"
                            "{\"name\":\"add\",\"type\":\"eltwise\",\"fn\":\"add\",\"inputs\":[\"r\",\"x\"],\"outputs\":[\"s\"]},"
                            "{\"name\":\"relu2\",\"type\":\"eltwise\",\"fn\":\"relu\",\"inputs\":[\"s\"],\"outputs\":[\"y\"]}]}";

START_TEST(bn_fold_and_epilogue_traffic)
{
    /* DRAM traffic, fp16 (A = 655,360 B per activation, W = 8,192 B):
     *   the convolution's GEMM view is 5,120 x 64 x 64; at DRAM its tile side is
     *   floor(sqrt(1 MiB / (2 + 2 + 4))) = 362, so x is read ceil(64 / 362) = 1 time and W
     *   ceil(5120 / 362) = 15 times: 655,360 + 122,880 B read.
     * No stack: conv A + 15 W + A written = 1,433,600; bn c + 256 B of parameters + b = 1,310,976;
     *   relu 2A = 1,310,720; add r + x + s = 1,966,080; relu2 2A = 1,310,720: 7,332,096 B, 5 launches.
     * bn_fold + epilogue_fusion: one kernel (bn folded, relu, add and relu2 in the epilogue): x, 15 W,
     *   x again for the add (x has two readers), y written: 655,360 + 122,880 + 655,360 + 655,360 =
     *   2,088,960 B, 1 launch (5 us). */
    struct hw_system *sys = test_fixture(FIX_GPU);
    struct wl_model m;
    struct eval_result res;
    load_graph(BLOCK, &m);
    struct sw_stack none = stack_with(1u << PASS_ATTENTION);
    run(sys, &m, P_FP16, &none, &res);
    ck_assert_near(res.t.main_bytes, 7332096, 1e-12);
    ck_assert_double_eq(res.t.kernels, 5);
    ck_assert_near(res.t.overhead_s, 25e-6, 1e-12);
    eval_result_free(&res);
    struct sw_stack fused = stack_with(1u << PASS_BN_FOLD | 1u << PASS_EPILOGUE | 1u << PASS_ELTWISE);
    run(sys, &m, P_FP16, &fused, &res);
    ck_assert_near(res.t.main_bytes, 2088960, 1e-12);
    ck_assert_double_eq(res.t.kernels, 1);
    ck_assert_near(res.t.overhead_s, 5e-6, 1e-12);
    for (int i = 1; i < res.n_ops; i++) /* one kernel: consecutive rows, one id */
        ck_assert_int_eq(res.ops[i].kernel, res.ops[0].kernel);
    /* MACs do not change */
    ck_assert_double_eq(res.t.macs, 5120.0 * 64 * 64);
    eval_result_free(&res);
    wl_model_free(&m);
    free(sys);
}
END_TEST

static const char ATTN[] = "{\"format\":\"dse-graph-1\",\"name\":\"attn\",\"tensors\":["
                           "{\"name\":\"q\",\"shape\":[1,128,256],\"kind\":\"input\"},"
                           "{\"name\":\"k\",\"shape\":[1,128,256],\"kind\":\"input\"},"
                           "{\"name\":\"v\",\"shape\":[1,128,256],\"kind\":\"input\"},"
                           "{\"name\":\"o\",\"shape\":[1,128,256]}],\"ops\":["
                           "{\"name\":\"attention\",\"type\":\"attention\",\"heads\":4,\"causal\":true,"
                           "\"inputs\":[\"q\",\"k\",\"v\"],\"outputs\":[\"o\"]}]}";

START_TEST(unfused_attention_scores)
{
    /* 4 heads of 64, 128 queries over 128 keys: the unfused kernels write and read the scores
     * (4 x 128 x 128 = 65,536 elements, 131,072 B in fp16) twice: 4 x 131,072 = 524,288 B more DRAM
     * traffic than the fused kernel, whatever q, k, v and o move in both; 4 launches: 20 us. */
    struct hw_system *sys = test_fixture(FIX_GPU);
    struct wl_model m;
    struct eval_result res;
    load_graph(ATTN, &m);
    struct sw_stack fused = stack_with(1u << PASS_ATTENTION), unfused = stack_with(0);
    run(sys, &m, P_FP16, &fused, &res);
    double fused_bytes = res.t.main_bytes;
    ck_assert_double_eq(res.t.kernels, 1);
    eval_result_free(&res);
    run(sys, &m, P_FP16, &unfused, &res);
    ck_assert_near(res.t.main_bytes - fused_bytes, 524288, 1e-12);
    ck_assert_double_eq(res.t.kernels, 4);
    ck_assert_near(res.t.overhead_s, 20e-6, 1e-12);
    eval_result_free(&res);
    wl_model_free(&m);
    free(sys);
}
END_TEST

/* Three 4 MiB int8 weights (1024 x 4096) read in turn, on the systolic fixture (24 MiB SRAM). */
static const char THREE[] = "{\"format\":\"dse-graph-1\",\"name\":\"three\",\"tensors\":["
                            "{\"name\":\"x\",\"shape\":[1,1024],\"kind\":\"input\"},"
                            "{\"name\":\"w1\",\"shape\":[1024,4096],\"kind\":\"weight\"},"
                            "{\"name\":\"w2\",\"shape\":[4096,1024],\"kind\":\"weight\"},"
                            "{\"name\":\"w3\",\"shape\":[1024,4096],\"kind\":\"weight\"},"
                            "{\"name\":\"h1\",\"shape\":[1,4096]},{\"name\":\"h2\",\"shape\":[1,1024]},"
                            "{\"name\":\"h3\",\"shape\":[1,4096]}],\"ops\":["
                            "{\"name\":\"fc1\",\"type\":\"matmul\",\"inputs\":[\"x\",\"w1\"],\"outputs\":[\"h1\"]},"
                            "{\"name\":\"fc2\",\"type\":\"matmul\",\"inputs\":[\"h1\",\"w2\"],\"outputs\":[\"h2\"]},"
                            "{\"name\":\"fc3\",\"type\":\"matmul\",\"inputs\":[\"h2\",\"w3\"],\"outputs\":[\"h3\"]}]}";

START_TEST(planner_pins_weights_in_order)
{
    /* pin_share 0.4 of 24 MiB = 9.6 MiB: w1 and w2 (8 MiB) are pinned, w3 would make 12 MiB: it
     * streams. The 1 KiB input is read twice by fc1 (tile side floor(sqrt(24 MiB / 6)) = 2048 < 4096
     * columns); h1 and h2 stay in the SRAM. Each inference reads w3 and the input twice: 4,194,304 +
     * 2,048 = 4,196,352 B; with no stack every weight streams: 3 x 4,194,304 + 2,048 = 12,584,960 B. */
    struct hw_system *sys = test_fixture(FIX_SYSTOLIC);
    struct wl_model m;
    struct eval_result res;
    load_graph(THREE, &m);
    struct sw_stack s = stack_with(1u << PASS_ATTENTION);
    s.targets = (1u << HW_CLASS_COUNT) - 1;
    run(sys, &m, P_INT8, &s, &res);
    ck_assert_near(res.t.main_bytes, 12584960, 1e-12);
    eval_result_free(&res);
    s.weights_on_chip = 1;
    s.pin_share = 0.4;
    run(sys, &m, P_INT8, &s, &res);
    ck_assert_near(res.t.main_bytes, 4196352, 1e-12);
    eval_result_free(&res);
    wl_model_free(&m);
    free(sys);
}
END_TEST

START_TEST(planner_unified_buffer_size)
{
    /* A TPU v1-like device: 4 MiB accumulators (the array's own), a unified buffer of 2, 8 or 24 MiB,
     * DRAM. A stack pinning weights while they fit 0.75 of the buffer plans into the buffer, never the
     * accumulators (level 0, even when larger). int8 weights of THREE: 4 MiB each, read once per
     * inference (M = 1). 2 MiB: 1.5 MiB for weights, none pinned: fc1..fc3 each read 4,194,304 B of
     * weights; 8 MiB: 6 MiB, w1 pinned (w1 + w2 = 8 MiB > 6): fc2 and fc3 read theirs; 24 MiB: 18 MiB,
     * all three pinned (12 MiB): fc2 and fc3 read nothing, fc1 only its 1 KiB input. The activations
     * (4 KiB and 1 KiB) stay in the buffer in every case. */
    static const int ub_MiB[] = {2, 8, 24};
    static const double fc2_bytes[] = {4194304, 4194304, 0}, fc3_bytes[] = {4194304, 4194304, 0};
    struct wl_model m;
    load_graph(THREE, &m);
    struct sw_stack s = stack_with(1u << PASS_ATTENTION);
    s.targets = (1u << HW_CLASS_COUNT) - 1;
    s.weights_on_chip = 1;
    s.pin_share = 0.75;
    s.activations_on_chip = 1;
    for (int i = 0; i < 3; i++) {
        char json[2048];
        snprintf(json, sizeof json,
                 "{\"schema\":\"dse-hwdesc-1\",\"name\":\"ub\",\"devices\":[{\"name\":\"tpu\",\"class\":\"systolic\","
                 "\"clock\":{\"base_MHz\":1000,\"boost_MHz\":1000,\"source\":\"t\"},"
                 "\"compute\":[{\"engine\":\"matrix\",\"precision\":\"int8\",\"units\":1,\"flops_per_cycle_per_unit\":32768,"
                 "\"headline_TOPS\":32.768,\"source\":\"t\"}],\"memory\":["
                 "{\"name\":\"acc\",\"kind\":\"sram\",\"capacity_MiB\":4,\"bandwidth_GBps\":1000,\"source\":\"t\"},"
                 "{\"name\":\"ub\",\"kind\":\"sram\",\"capacity_MiB\":%d,\"bandwidth_GBps\":500,\"source\":\"t\"},"
                 "{\"name\":\"dram\",\"kind\":\"dram\",\"capacity_GiB\":8,\"bandwidth_GBps\":30,\"energy_pJ_per_byte\":20,\"source\":\"t\"}],"
                 "\"power\":{\"idle_W\":20,\"tdp_W\":400,\"source\":\"t\"}}]}",
                 ub_MiB[i]);
        struct hw_system *sys = test_fixture(json);
        struct wl_graph g;
        struct dse_err e;
        struct wl_shape sh = {.batch = 1, .tokens = 1, .past = 0, .tp = 1, .train = 0};
        ck_assert_int_eq(wl_build(&m, &sh, &g, &e), DSE_OK);
        signed char home[16];
        struct prec_cfg p = {P_INT8, P_INT8, P_INT8};
        ck_assert_int_eq(pass_plan_memory(&s, &sys->dev[0], &g, &p, home), 1);
        ck_assert_int_eq(home[wl_find_tensor(&g, "h1")], 1);
        ck_assert_int_eq(home[wl_find_tensor(&g, "h2")], 1);
        ck_assert_int_eq(home[wl_find_tensor(&g, "w1")], ub_MiB[i] >= 8 ? 1 : 2);
        ck_assert_int_eq(home[wl_find_tensor(&g, "w3")], ub_MiB[i] >= 24 ? 1 : 2);
        wl_graph_free(&g);
        struct eval_result res;
        run(sys, &m, P_INT8, &s, &res);
        for (int k = 0; k < res.n_ops; k++) {
            if (!strcmp(res.ops[k].name, "fc2"))
                ck_assert_msg(res.ops[k].bytes == fc2_bytes[i], "UB %d MiB: fc2 %.0f B", ub_MiB[i], res.ops[k].bytes);
            if (!strcmp(res.ops[k].name, "fc3"))
                ck_assert_msg(res.ops[k].bytes == fc3_bytes[i], "UB %d MiB: fc3 %.0f B", ub_MiB[i], res.ops[k].bytes);
        }
        eval_result_free(&res);
        free(sys);
    }
    wl_model_free(&m);
}
END_TEST

START_TEST(planner_layer_fusion_band)
{
    /* An int8 activation of 64 x 512 x 512 = 16 MiB does not fit half of the 24 MiB SRAM (12 MiB), but
     * the band a 3x3 stride-1 convolution reads, (3 + 1) rows of 64 x 512, is 128 KiB: with layer
     * fusion it stays on chip (the sram level, 0), without it lives in DRAM (1). */
    static const char conv[] = "{\"format\":\"dse-graph-1\",\"name\":\"c\",\"tensors\":["
                               "{\"name\":\"x\",\"shape\":[1,64,512,512],\"kind\":\"input\"},"
                               "{\"name\":\"w\",\"shape\":[64,64,1,1],\"kind\":\"weight\"},"
                               "{\"name\":\"w2\",\"shape\":[64,64,3,3],\"kind\":\"weight\"},"
                               "{\"name\":\"a\",\"shape\":[1,64,512,512]},{\"name\":\"y\",\"shape\":[1,64,512,512]}],"
                               "\"ops\":[{\"name\":\"c1\",\"type\":\"conv2d\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"a\"]},"
                               "{\"name\":\"c2\",\"type\":\"conv2d\",\"padding\":1,\"inputs\":[\"a\",\"w2\"],"
                               "\"outputs\":[\"y\"]}]}";
    struct hw_system *sys = test_fixture(FIX_SYSTOLIC);
    struct wl_model m;
    struct wl_graph g;
    struct dse_err e;
    load_graph(conv, &m);
    struct wl_shape sh = {.batch = 1, .tokens = 1, .past = 0, .tp = 1, .train = 0};
    ck_assert_int_eq(wl_build(&m, &sh, &g, &e), DSE_OK);
    signed char home[8];
    struct prec_cfg p = {P_INT8, P_INT8, P_INT8};
    int a = wl_find_tensor(&g, "a");
    struct sw_stack s = stack_with(0);
    s.activations_on_chip = 1;
    ck_assert_int_eq(pass_plan_memory(&s, &sys->dev[0], &g, &p, home), 1);
    ck_assert_int_eq(home[a], 1);
    s.passes |= 1u << PASS_LAYER_FUSION;
    ck_assert_int_eq(pass_plan_memory(&s, &sys->dev[0], &g, &p, home), 1);
    ck_assert_int_eq(home[a], 0);
    s = stack_with(1u << PASS_ATTENTION); /* no planning: the cost model's default rule */
    ck_assert_int_eq(pass_plan_memory(&s, &sys->dev[0], &g, &p, home), 0);
    wl_graph_free(&g);
    wl_model_free(&m);
    free(sys);
}
END_TEST

START_TEST(runtime_host_bound_and_steps)
{
    /* Ten ReLUs of 64 fp16 values on FIX_GPU: each costs its 5 us launch and a few ns of data, so
     * the GPU's work is just over 50 us. Issuing them at 12 us each takes 120 us: the GPU waits for the
     * host, and the step takes 120 us, plus 30 us per step and 100 us per request: 250 us, of which
     * runtime_ms is what the GPU's own time does not cover. Under launch elimination nothing is issued
     * per kernel (and FIX_GPU has no graph_node_us, so replayed kernels cost no launch): the GPU's time
     * less its 50 us of launches, plus 130 us. */
    char json[4096] = "{\"format\":\"dse-graph-1\",\"name\":\"relus\",\"tensors\":[{\"name\":\"t0\",\"shape\":[64],"
                      "\"kind\":\"input\"}";
    for (int i = 1; i <= 10; i++)
        snprintf(json + strlen(json), sizeof json - strlen(json), ",{\"name\":\"t%d\",\"shape\":[64]}", i);
    strcat(json, "],\"ops\":[");
    for (int i = 1; i <= 10; i++)
        snprintf(json + strlen(json), sizeof json - strlen(json),
                 "%s{\"name\":\"r%d\",\"type\":\"eltwise\",\"fn\":\"relu\",\"inputs\":[\"t%d\"],\"outputs\":[\"t%d\"]}",
                 i > 1 ? "," : "", i, i - 1, i);
    strcat(json, "]}");
    struct hw_system *sys = test_fixture(FIX_GPU);
    struct wl_model m;
    struct eval_result res;
    load_graph(json, &m);
    struct sw_stack s = stack_with(1u << PASS_ATTENTION);
    run(sys, &m, P_FP16, &s, &res);
    double gpu = res.t.latency_s;
    ck_assert(gpu > 50e-6 && gpu < 51e-6);
    eval_result_free(&res);
    s.host_kernel_s = 12e-6;
    s.per_step_s = 30e-6;
    s.per_request_s = 100e-6;
    run(sys, &m, P_FP16, &s, &res);
    ck_assert_near(res.t.latency_s, 250e-6, 1e-9);
    ck_assert_near(res.t.runtime_s, 250e-6 - gpu, 1e-9);
    eval_result_free(&res);
    s.passes |= 1u << PASS_LAUNCH; /* FIX_GPU has no graph_node_us: replayed kernels cost no launch */
    run(sys, &m, P_FP16, &s, &res);
    ck_assert_near(res.t.latency_s, gpu - 50e-6 + 130e-6, 1e-9);
    eval_result_free(&res);
    wl_model_free(&m);
    free(sys);
}
END_TEST

START_TEST(shipped_stacks_load)
{
    static const char *const names[] = {"compiled", "eager", "llama.cpp", "tensorrt", "tflite", "tflite-edgetpu",
                                        "vendor-npu", "vllm"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char rel[128], p[512];
        struct sw_stack s;
        struct dse_err e;
        snprintf(rel, sizeof rel, "software/%s.json", names[i]);
        ck_assert_msg(pass_load_file(src_path(p, sizeof p, rel), &s, &e) == DSE_OK, "%s", e.msg);
        ck_assert_str_eq(s.name, names[i]);
    }
}
END_TEST

Suite *make_pass_suite(void)
{
    Suite *s = suite_create("pass");
    TCase *t = tcase_create("pass");
    tcase_add_test(t, loader_bad_inputs);
    tcase_add_test(t, gemm_merge_keeps_counts);
    tcase_add_test(t, bn_fold_and_epilogue_traffic);
    tcase_add_test(t, unfused_attention_scores);
    tcase_add_test(t, planner_pins_weights_in_order);
    tcase_add_test(t, planner_layer_fusion_band);
    tcase_add_test(t, planner_unified_buffer_size);
    tcase_add_test(t, runtime_host_bound_and_steps);
    tcase_add_test(t, shipped_stacks_load);
    suite_add_tcase(s, t);
    return s;
}
