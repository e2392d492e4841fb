/* check_eval.c -- whole design points: totals equal the sum of their parts, phases, placement
 * fallback with transfers, infeasible points. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_fixtures.h"
#include "check_suites.h"
#include "eval.h"
#include "pass.h"

static struct eval_req req(const struct hw_system *s, int dev, const struct wl_model *m, enum prec p, int64_t batch,
                           enum wl_phase ph, int64_t prompt, int64_t gen)
{
    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = s;
    r.dev = dev;
    for (int t = 0; t < OP_COUNT; t++)
        r.type_dev[t] = -1;
    r.model = m;
    r.x.prec.w = r.x.prec.a = r.x.prec.kv = p;
    r.batch = batch;
    r.phase = ph;
    r.prompt = prompt;
    r.gen = gen;
    r.want_ops = 1;
    return r;
}

static void run(struct eval_req *r, struct eval_result *res)
{
    struct dse_err e;
    ck_assert_msg(eval_run(r, res, &e) == DSE_OK, "%s", e.msg);
}

static void check_sums(const struct eval_result *res)
{
    double t = 0, en = 0, macs = 0;
    for (int i = 0; i < res->n_ops; i++) {
        const struct eval_op *o = &res->ops[i];
        ck_assert(o->time_s >= 0 && o->energy_J >= 0 && o->utilization >= 0 && o->utilization <= 1 + 1e-12);
        t += o->time_s;
        en += o->energy_J;
        macs += o->macs;
    }
    const struct eval_totals *T = &res->t;
    ck_assert_near(t + T->runtime_s, T->latency_s, 1e-9); /* runtime: issue, per-step, per-request time */
    /* the runtime's time is static energy only: idle W (energy_static_J / latency_s) x runtime_s */
    ck_assert_near(en + T->energy_static_J * T->runtime_s / T->latency_s, T->energy_J, 1e-9);
    ck_assert_near(macs, T->macs, 1e-12);
    ck_assert_near(T->energy_J, T->energy_compute_J + T->energy_memory_J + T->energy_static_J + T->energy_link_J +
                                    T->energy_active_J + T->energy_enclosure_J, 1e-12);
    ck_assert_near(T->avg_power_W * T->latency_s, T->energy_J, 1e-12);
    ck_assert_near(T->peak_memory_bytes, T->weight_bytes + T->kv_bytes + T->act_bytes, 1e-12);
}

START_TEST(totals_are_sums)
{
    struct hw_system *s = test_fixture(FIX_GPU);
    struct wl_model m;
    struct eval_result res = {0};
    test_model("models/resnet50.json", &m);
    struct eval_req r = req(s, 0, &m, P_FP16, 4, PH_NONE, 1, 1);
    run(&r, &res);
    ck_assert(res.feasible);
    check_sums(&res);
    /* ResNet-50 weights at fp16: 25,557,032 x 2 B. */
    ck_assert_double_eq(res.t.weight_bytes, 25557032.0 * 2);
    ck_assert_near(res.t.throughput_per_s, 4 / res.t.latency_s, 1e-12);
    /* Same inputs, same answer. */
    struct eval_result again = {0};
    run(&r, &again);
    ck_assert(again.t.latency_s == res.t.latency_s && again.t.energy_J == res.t.energy_J);
    eval_result_free(&again);
    eval_result_free(&res);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(generate_is_prefill_plus_decode_steps)
{
    /* Llama-3.2-1B, prompt 16, 4 new tokens, batch 2 on the GPU fixture: the generate latency is the
     * prefill of 16 tokens plus decode steps with 16, 17, 18 and 19 cached tokens, each of which
     * equals a separate --phase decode evaluation at that context. */
    struct hw_system *s = test_fixture(FIX_GPU);
    struct wl_model m;
    struct eval_result gen = {0}, one = {0};
    test_model("models/llama-3.2-1b.json", &m);
    struct eval_req r = req(s, 0, &m, P_FP16, 2, PH_GENERATE, 16, 4);
    run(&r, &gen);
    ck_assert(gen.feasible);
    check_sums(&gen);
    r.phase = PH_PREFILL;
    run(&r, &one);
    ck_assert_near(gen.t.ttft_s, one.t.latency_s, 1e-12);
    /* the work of the steps adds up too: the steps after the first account the operators that do not
     * depend on the cache once for all of them (eval.c), which must equal costing them step by step */
    double steps = 0, macs = one.t.macs, flops = one.t.flops, e_compute = one.t.energy_compute_J,
           e_memory = one.t.energy_memory_J, bytes = one.t.main_bytes;
    for (int p = 16; p < 20; p++) {
        r.phase = PH_DECODE;
        r.prompt = p;
        run(&r, &one);
        steps += one.t.latency_s;
        macs += one.t.macs;
        flops += one.t.flops;
        e_compute += one.t.energy_compute_J;
        e_memory += one.t.energy_memory_J;
        bytes += one.t.main_bytes;
    }
    ck_assert_near(gen.t.macs, macs, 1e-9);
    ck_assert_near(gen.t.flops, flops, 1e-9);
    ck_assert_near(gen.t.energy_compute_J, e_compute, 1e-9);
    ck_assert_near(gen.t.energy_memory_J, e_memory, 1e-9);
    ck_assert_near(gen.t.main_bytes, bytes, 1e-9);
    ck_assert_near(gen.t.latency_s, gen.t.ttft_s + steps, 1e-9);
    ck_assert_near(gen.t.tpot_s, steps / 4, 1e-9);
    ck_assert_near(gen.t.tokens_per_s, 2.0 * 4 / gen.t.latency_s, 1e-12);
    ck_assert_near(gen.t.decode_tokens_per_s, 2 / gen.t.tpot_s, 1e-12);
    /* KV cache at the end: 2 (K, V) x 16 layers x 2 sequences x 20 tokens x 8 kv heads x 64 x 2 B. */
    ck_assert_double_eq(gen.t.kv_bytes, 2.0 * 16 * 2 * 20 * 8 * 64 * 2);
    /* Weights: 1,235,814,400 parameters x 2 B (the tied table counted once). */
    ck_assert_double_eq(gen.t.weight_bytes, 1235814400.0 * 2);
    eval_result_free(&gen);
    eval_result_free(&one);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(fallback_pays_transfers)
{
    /* tiny-mlp at int8 on the NPU system: fc1, relu, fc2 run on the NPU; the NPU has no softmax, so
     * softmax falls back to the CPU and its 10-byte int8 input crosses the link:
     * 2 us latency + 10 B / 1 GB/s = 2.01 us, 10 B x 40 pJ = 400 pJ. */
    struct hw_system *s = test_fixture(FIX_NPU_SYSTEM);
    struct wl_model m;
    struct eval_result res = {0};
    test_model("models/tiny-mlp.json", &m);
    struct eval_req r = req(s, 1, &m, P_INT8, 1, PH_NONE, 1, 1);
    run(&r, &res);
    ck_assert_msg(res.feasible, "%s", res.reason);
    check_sums(&res);
    int found = 0;
    for (int i = 0; i < res.n_ops; i++) {
        if (strcmp(res.ops[i].name, "softmax"))
            continue;
        found = 1;
        ck_assert_int_eq(res.ops[i].dev, 0);
        ck_assert_near(res.ops[i].xfer_s, 2.01e-6, 1e-9);
    }
    ck_assert(found);
    ck_assert_near(res.t.energy_link_J, 400e-12, 1e-9);
    /* Both devices' idle power counts while the point runs: (2 + 0.5) W x latency. */
    ck_assert_near(res.t.energy_static_J, 2.5 * res.t.latency_s, 1e-12);
    eval_result_free(&res);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(infeasible_points)
{
    struct hw_system *s = test_fixture(FIX_GPU);
    struct wl_model m;
    struct eval_result res = {0};
    /* Llama-2-70B at fp16: 68,976,648,192 x 2 B = 138 GB of weights > 16 GiB. */
    test_model("models/llama-2-70b.json", &m);
    struct eval_req r = req(s, 0, &m, P_FP16, 1, PH_DECODE, 128, 1);
    run(&r, &res);
    ck_assert(!res.feasible);
    ck_assert_msg(strstr(res.reason, "does not fit in memory") && strstr(res.reason, "weights 138 GB"), "%s",
                  res.reason);
    wl_model_free(&m);
    free(s);
    /* int8 on a device with no int8 engine. */
    s = test_fixture(FIX_GPU);
    test_model("models/tiny-mlp.json", &m);
    struct eval_req r2 = req(s, 0, &m, P_INT8, 1, PH_NONE, 1, 1);
    run(&r2, &res);
    ck_assert(!res.feasible);
    ck_assert_msg(strstr(res.reason, "cannot compute matmul") && strstr(res.reason, "int8"), "%s", res.reason);
    /* On a system where no device runs an operator at all. */
    free(s);
    s = test_fixture(FIX_SYSTOLIC);
    struct eval_req r3 = req(s, 0, &m, P_INT8, 1, PH_NONE, 1, 1);
    s->dev[0].ops_mask &= ~(1u << OP_SOFTMAX);
    run(&r3, &res);
    ck_assert(!res.feasible);
    ck_assert_msg(strstr(res.reason, "softmax") != NULL, "%s", res.reason);
    eval_result_free(&res);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(shipped_pairs_run)
{
    /* Every shipped system evaluates ResNet-50 and Llama-3.2-1B (generate, short) without error. */
    static const char *const hw[] = {"nvidia-jetson-orin-nano-8gb", "raspberry-pi-5-hailo-8l", "google-tpu-v4",
                                     "intel-xeon-8480", "aws-inferentia2", "google-coral-edge-tpu"};
    struct wl_model cnn, lm;
    test_model("models/resnet50.json", &cnn);
    test_model("models/llama-3.2-1b.json", &lm);
    for (unsigned i = 0; i < sizeof hw / sizeof hw[0]; i++) {
        char rel[128], p[512];
        struct dse_err e;
        struct hw_system *s = malloc(sizeof *s);
        snprintf(rel, sizeof rel, "hwdesc/%s.json", hw[i]);
        ck_assert_msg(hw_load_file(src_path(p, sizeof p, rel), s, &e) == DSE_OK, "%s", e.msg);
        int dev = eval_default_device(s), pr = eval_default_prec(&s->dev[dev]);
        ck_assert_int_ge(pr, 0);
        struct eval_req r = req(s, dev, &cnn, (enum prec)pr, 1, PH_NONE, 1, 1);
        struct eval_result res = {0};
        for (int f = 0; f < FID_COUNT; f++) { /* both tiers keep the invariants */
            r.x.fidelity = (enum fidelity)f;
            r.model = &cnn;
            r.phase = PH_NONE;
            run(&r, &res);
            if (res.feasible)
                check_sums(&res);
            r.model = &lm;
            r.phase = PH_GENERATE;
            r.prompt = 32;
            r.gen = 2;
            run(&r, &res);
            if (res.feasible)
                check_sums(&res);
        }
        eval_result_free(&res);
        free(s);
    }
    wl_model_free(&cnn);
    wl_model_free(&lm);
}
END_TEST

static const struct eval_op *row(const struct eval_result *res, const char *name, enum wl_phase ph)
{
    for (int i = 0; i < res->n_ops; i++)
        if (!strcmp(res->ops[i].name, name) && res->ops[i].phase == ph)
            return &res->ops[i];
    ck_abort_msg("no row '%s'", name);
    return NULL;
}

START_TEST(sliding_window_caps_cache)
{
    /* Mistral-7B (window 4096) on the GPU fixture, fp16, batch 1. After a prompt of 5000 every decode
     * step attends the window, so each step costs what a decode step after 4095 cached tokens costs,
     * and the cache at the end holds 4096 tokens per layer: 2 (K, V) x 32 layers x 4096 x 1024 x 2 B
     * = 536,870,912 B (a full cache of 5008 tokens would be 656,408,576). */
    struct hw_system *s = test_fixture(FIX_GPU);
    struct wl_model m;
    struct eval_result gen = {0}, one = {0};
    test_model("models/mistral-7b.json", &m);
    struct eval_req r = req(s, 0, &m, P_FP16, 1, PH_GENERATE, 5000, 8);
    run(&r, &gen);
    ck_assert(gen.feasible);
    check_sums(&gen);
    ck_assert_double_eq(gen.t.kv_bytes, 536870912.0);
    r.phase = PH_DECODE;
    r.prompt = 4095;
    run(&r, &one);
    ck_assert_near(gen.t.tpot_s, one.t.latency_s, 1e-12);
    ck_assert_double_eq(one.t.kv_bytes, 536870912.0);
    /* Below the window the cache grows a token a step: prompt 100 + 10 new = 110 tokens,
     * 2 x 32 x 110 x 1024 x 2 = 14,417,920 B; crossing it (4000 + 200) it stops at 4096 tokens. */
    r.phase = PH_GENERATE;
    r.prompt = 100;
    r.gen = 10;
    run(&r, &one);
    ck_assert_double_eq(one.t.kv_bytes, 14417920.0);
    r.prompt = 4000;
    r.gen = 200;
    run(&r, &one);
    ck_assert_double_eq(one.t.kv_bytes, 536870912.0);
    eval_result_free(&gen);
    eval_result_free(&one);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(moe_reads_touched_experts)
{
    /* Mixtral-8x7B decode, batch 1, on the GPU fixture (analytical, capacity left aside: 93 GB of
     * weights). A token reaches 2 of 8 experts: each expert-bank GEMM reads 2 x 4096 x 14336 x 2 B
     * = 234,881,024 B from DRAM per layer (its activations stay in L2), 32 layers. Totals report
     * every parameter and the 12,879,925,248 a token uses (tests/check_wl.c). */
    struct hw_system *s = test_fixture(FIX_GPU);
    struct wl_model m;
    struct eval_result res = {0};
    test_model("models/mixtral-8x7b.json", &m);
    struct eval_req r = req(s, 0, &m, P_FP16, 1, PH_DECODE, 64, 1);
    r.skip_capacity = 1;
    run(&r, &res);
    ck_assert(res.feasible);
    check_sums(&res);
    ck_assert_double_eq(row(&res, "layers.experts.gate_proj", PH_DECODE)->bytes, 32 * 234881024.0);
    ck_assert_double_eq(res.t.params, 46702792704.0);
    ck_assert_double_eq(res.t.active_params, 12879925248.0);
    ck_assert_double_eq(res.t.weight_bytes, 46702792704.0 * 2);
    eval_result_free(&res);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(cpu_cycle_embedding_reads_rows)
{
    /* The CPU cycle tier charges an embedding the rows it gathers: Llama-3.2-1B decode, batch 1, fp32 on
     * the Raspberry Pi 5: one row of 2048 x 4 B (+ the id and the output row), not the 128256 x 2048 x 4 B
     * = 1,050,673,152 B table. */
    char p[512];
    struct dse_err e;
    struct hw_system *s = malloc(sizeof *s);
    ck_assert_msg(hw_load_file(src_path(p, sizeof p, "hwdesc/raspberry-pi-5.json"), s, &e) == DSE_OK, "%s", e.msg);
    struct wl_model m;
    struct eval_result res = {0};
    test_model("models/llama-3.2-1b.json", &m);
    struct eval_req r = req(s, eval_default_device(s), &m, P_FP32, 1, PH_DECODE, 16, 1);
    r.x.fidelity = FID_CYCLE;
    run(&r, &res);
    ck_assert(res.feasible);
    ck_assert_msg(row(&res, "embed_tokens", PH_DECODE)->bytes <= 3 * 2048 * 4 + 4, "%g B",
                  row(&res, "embed_tokens", PH_DECODE)->bytes);
    eval_result_free(&res);
    wl_model_free(&m);
    free(s);
}
END_TEST

/* The default precision is the float with the highest GEMM peak, ties to the narrower, else int8. The
 * peaks are set by hand on a loaded fixture device (TFLOP/s figures only compared, not used). */
/* Training precisions (eval_check_train_prec): no stack here trains in int8, int4 or a weight-only
 * format, fp8 only megatron-core on a device with an fp8 engine; and no training step that runs reports
 * more model FLOP/s per device than its device's GEMM peak at the step's precision (model FLOPs, 6 N per
 * token, are at most the FLOPs run, each at most the peak). Over shipped systems (A100 and H100
 * clusters, a TPU v4 slice, a single A100), GPT and CNN workloads, every precision, tp 1 and 8. */
START_TEST(training_precisions_and_peaks)
{
    static const char *const systems[] = {"hwdesc/nvidia-a100-cluster-32node.json", "hwdesc/nvidia-h100-cluster-32node.json",
                                          "hwdesc/google-tpu-v4-slice-64.json", "hwdesc/nvidia-a100-sxm4-80gb.json"};
    static const char *const models[] = {"models/gpt-megatron-1.7b.json", "models/resnet50.json"};
    static const char *const stacks[] = {NULL, "megatron-core"}; /* NULL: the class's trainer */
    static const char *const precs[] = {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "w4a16", "w8a8"};
    struct hw_system *sys = malloc(sizeof *sys);
    struct dse_err e;
    int ran = 0, refused = 0;
    for (size_t si = 0; si < sizeof systems / sizeof systems[0]; si++) {
        char hp[512];
        ck_assert_msg(hw_load_file(src_path(hp, sizeof hp, systems[si]), sys, &e) == DSE_OK, "%s", e.msg);
        int dev = eval_default_device(sys);
        for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++) {
            struct wl_model m;
            test_model(models[mi], &m);
            for (size_t k = 0; k < sizeof stacks / sizeof stacks[0]; k++) {
                struct sw_stack sw;
                const char *name = stacks[k] ? stacks[k] : pass_train_default(sys->dev[dev].cls);
                ck_assert_msg(pass_load_named(name, hp, &sw, &e) == DSE_OK, "%s", e.msg);
                if (pass_check_target(&sw, &sys->dev[dev], &e))
                    continue;
                for (size_t pi = 0; pi < sizeof precs / sizeof precs[0]; pi++)
                    for (int tp = 1; tp <= 8; tp *= 8) {
                        struct eval_req r = req(sys, dev, &m, P_FP16, 64, PH_TRAIN, 512, 0);
                        ck_assert_int_eq(prec_parse(precs[pi], &r.x.prec, &e), DSE_OK);
                        r.sw = &sw;
                        r.want_ops = 0;
                        r.skip_capacity = 1;
                        r.layout.n[PAR_TP] = m.kind == WLM_TRANSFORMER ? tp : 1;
                        if (par_layout_complete(sys, &r.layout, &e) || eval_check_layout(&r, &e))
                            continue;
                        int allowed = eval_check_train_prec(&r, &e) == DSE_OK;
                        enum prec a = r.x.prec.a;
                        /* the rule, stated here: one float for weights and activations, in the stack's list */
                        int expect = r.x.prec.w == a && (a == P_FP32 || a == P_TF32 || a == P_BF16 || a == P_FP16 ||
                                                         (a == P_FP8 && !strcmp(name, "megatron-core")));
                        enum hw_engine eng;
                        expect &= hw_gemm_peak(&sys->dev[dev], a, &eng) > 0;
                        ck_assert_msg(allowed == expect, "%s %s %s %s: allowed %d, expected %d (%s)", systems[si],
                                      models[mi], name, precs[pi], allowed, expect, allowed ? "" : e.msg);
                        struct eval_result res = {0};
                        ck_assert_msg(eval_run(&r, &res, &e) == DSE_OK, "%s", e.msg);
                        if (!allowed) { /* a sweep's point: infeasible, with the refusal's reason */
                            ck_assert_msg(!res.feasible && strstr(res.reason, "train"), "%s %s %s: %s", systems[si],
                                          models[mi], precs[pi], res.feasible ? "feasible" : res.reason);
                            refused++;
                        } else if (res.feasible) {
                            double peak = hw_gemm_peak(&sys->dev[dev], prec_compute(r.x.prec.w, a), &eng) / 1e12;
                            ck_assert_msg(res.t.tflops_per_device > 0 && res.t.tflops_per_device <= peak,
                                          "%s %s %s tp %d: %.1f TFLOP/s per device, peak %.1f", systems[si],
                                          models[mi], precs[pi], tp, res.t.tflops_per_device, peak);
                            ck_assert(res.t.mfu_pct <= 100);
                            ran++;
                        }
                        eval_result_free(&res);
                    }
            }
            wl_model_free(&m);
        }
    }
    /* GPT-3-class training at int4 on the A100 cluster: the 362 TFLOP/s point, now refused */
    ck_assert(ran >= 20 && refused >= 20);
    free(sys);
}
END_TEST

START_TEST(default_prec_fastest_float)
{
    struct hw_system *s = test_fixture(FIX_GPU);
    struct hw_device *d = &s->dev[0];
    memset(d->peak, 0, sizeof d->peak);
    d->peak[ENG_VECTOR][P_FP32] = 337e9; /* the probed VM: fp32 FMA 337 GFLOP/s, bf16 dot products 166 */
    d->peak[ENG_VECTOR][P_BF16] = 166e9;
    ck_assert_int_eq(eval_default_prec(d), P_FP32);
    d->peak[ENG_MATRIX][P_FP16] = d->peak[ENG_MATRIX][P_BF16] = 990e12; /* an H100's tensor cores: tie */
    ck_assert_int_eq(eval_default_prec(d), P_FP16);
    memset(d->peak, 0, sizeof d->peak);
    d->peak[ENG_MATRIX][P_INT8] = 4e12; /* an Edge TPU: int8 only */
    ck_assert_int_eq(eval_default_prec(d), P_INT8);
    memset(d->peak, 0, sizeof d->peak);
    ck_assert_int_eq(eval_default_prec(d), -1);
    free(s);
}
END_TEST

Suite *make_eval_suite(void)
{
    Suite *s = suite_create("eval");
    TCase *t = tcase_create("eval");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, totals_are_sums);
    tcase_add_test(t, generate_is_prefill_plus_decode_steps);
    tcase_add_test(t, fallback_pays_transfers);
    tcase_add_test(t, infeasible_points);
    tcase_add_test(t, shipped_pairs_run);
    tcase_add_test(t, default_prec_fastest_float);
    tcase_add_test(t, training_precisions_and_peaks);
    tcase_add_test(t, sliding_window_caps_cache);
    tcase_add_test(t, moe_reads_touched_experts);
    tcase_add_test(t, cpu_cycle_embedding_reads_rows);
    suite_add_tcase(s, t);
    return s;
}
