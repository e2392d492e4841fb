/* check_model.c -- the analytical roofline, worked by hand for each device class. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_fixtures.h"
#include "check_suites.h"
#include "model.h"
#include "pass.h"

/* A one-op graph: inputs of the given kinds and shapes, one activation output. */
struct one {
    struct wl_graph g;
};

static void one_op(struct wl_graph *g, enum op_type type, int n_in, const enum wl_kind *kinds,
                   const int64_t (*shapes)[4], const int *ranks, const int64_t *out_shape, int out_rank)
{
    struct dse_err e;
    int in[5];
    wl_graph_init(g, "one");
    for (int i = 0; i < n_in; i++) {
        char name[8];
        snprintf(name, sizeof name, "in%d", i);
        in[i] = wl_add_tensor(g, name, kinds[i], ranks[i], shapes[i], &e);
    }
    int out = wl_add_tensor(g, "out", WL_ACT, out_rank, out_shape, &e);
    int op = wl_add_op(g, "op", type, in, n_in, &out, 1, &e);
    ck_assert_int_ge(op, 0);
}

static void finalize(struct wl_graph *g)
{
    struct dse_err e;
    ck_assert_msg(wl_finalize(g, "t", &e) == DSE_OK, "%s", e.msg);
}

static void cost(const struct hw_system *s, int dev, const struct wl_graph *g, enum prec p, struct op_cost *c)
{
    struct exec_cfg x = {.prec = {p, p, p}, .fidelity = FID_ANALYTICAL,
                         .graph_weight_bytes = wl_kind_bytes(g, WL_WEIGHT, &(struct prec_cfg){p, p, p})};
    const struct hw_device *d = &s->dev[dev];
    ck_assert_int_eq(model_for(d->cls)->op_cost(d, g, &g->op[0], &x, c), OPS_OK);
    /* Invariants on every cost. */
    ck_assert(c->compute_s >= 0 && c->memory_s >= 0 && c->overhead_s >= 0);
    ck_assert(c->utilization >= 0 && c->utilization <= 1 + 1e-12);
    ck_assert(c->energy_compute_J >= 0 && c->energy_memory_J >= 0 && c->energy_static_J >= 0);
    double hi = c->compute_s > c->memory_s ? c->compute_s : c->memory_s;
    double lo = c->compute_s > c->memory_s ? c->memory_s : c->compute_s;
    ck_assert_near(c->time_s, hi + d->serial_fraction * lo + c->overhead_s, 1e-12);
}

START_TEST(gpu_gemm_compute_bound)
{
    /* fp16 matmul [1024, 1024] x [1024, 1024] on the GPU fixture.
     *   MACs = 1024^3 = 1,073,741,824; FLOPs = 2,147,483,648; compute = 2.147483648e9 / 1e13
     *   = 214.7483648 us.
     *   Operands 2 MiB each (1024 x 1024 x 2 B = 2,097,152): x (input) and W (weight) live in DRAM;
     *   the 2 MiB output exceeds half of the 1 MiB L2, so it lives in DRAM too.
     *   L2 (level 0, no tiling): 3 x 2,097,152 = 6,291,456 B -> 6.291456 us at 1000 GB/s.
     *   DRAM: tile t = floor(sqrt(1,048,576 / (2 + 2 + 4))) = floor(362.04) = 362; A and B re-read
     *   ceil(1024 / 362) = 3 times: 2 MiB x 3 + 2 MiB x 3 + 2 MiB = 14,680,064 B -> 146.80064 us.
     *   Compute-bound: time = 214.7483648 + 5 (overhead) = 219.7483648 us.
     *   Energy: 1,073,741,824 MACs x 0.5 pJ = 536.870912 uJ; memory 6,291,456 x 1 pJ + 14,680,064
     *   x 10 pJ = 153.092096 uJ; static 10 W x 219.7483648 us = 2197.483648 uJ. */
    struct hw_system *s = test_fixture(FIX_GPU);
    struct wl_graph g;
    enum wl_kind k[2] = {WL_INPUT, WL_WEIGHT};
    int64_t sh[2][4] = {{1024, 1024}, {1024, 1024}}, o[4] = {1024, 1024};
    int r[2] = {2, 2};
    one_op(&g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh, r, o, 2);
    finalize(&g);
    struct op_cost c;
    cost(s, 0, &g, P_FP16, &c);
    ck_assert_near(c.compute_s, 214.7483648e-6, 1e-9);
    ck_assert_near(c.bytes[0], 6291456, 1e-12);
    ck_assert_near(c.bytes[1], 14680064, 1e-12);
    ck_assert_near(c.memory_s, 146.80064e-6, 1e-9);
    ck_assert_int_eq(c.mem_level, 1);
    ck_assert_near(c.time_s, 219.7483648e-6, 1e-9);
    ck_assert_int_eq(c.bound, BOUND_COMPUTE);
    ck_assert_int_eq(c.engine, ENG_MATRIX);
    ck_assert_near(c.energy_compute_J, 536.870912e-6, 1e-9);
    ck_assert_near(c.energy_memory_J, 153.092096e-6, 1e-9);
    ck_assert_near(c.energy_static_J, 2197.483648e-6, 1e-9);
    ck_assert_near(c.utilization, 214.7483648 / 219.7483648, 1e-9);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(gpu_eltwise_memory_and_overhead_bound)
{
    /* fp16 add of two [1024, 1024] activations: 1,048,576 FLOPs / 1e12 (vector) = 1.048576 us.
     * 3 x 2 MiB = 6,291,456 B through L2 and DRAM (no tiling for element-wise ops): DRAM
     * 62.91456 us -> memory-bound; time = 62.91456 + 5 = 67.91456 us.
     * Compute energy: 1,048,576 FLOPs x (1 pJ per vector MAC / 2) = 0.524288 uJ. */
    struct hw_system *s = test_fixture(FIX_GPU);
    struct wl_graph g;
    enum wl_kind k[2] = {WL_INPUT, WL_INPUT};
    int64_t sh[2][4] = {{1024, 1024}, {1024, 1024}}, o[4] = {1024, 1024};
    int r[2] = {2, 2};
    one_op(&g, OP_ELTWISE, 2, k, (const int64_t(*)[4])sh, r, o, 2);
    g.op[0].fn = FN_ADD;
    finalize(&g);
    struct op_cost c;
    cost(s, 0, &g, P_FP16, &c);
    ck_assert_near(c.compute_s, 1.048576e-6, 1e-9);
    ck_assert_near(c.memory_s, 62.91456e-6, 1e-9);
    ck_assert_near(c.time_s, 67.91456e-6, 1e-9);
    ck_assert_int_eq(c.bound, BOUND_MEMORY);
    ck_assert_int_eq(c.engine, ENG_VECTOR);
    ck_assert_near(c.energy_compute_J, 0.524288e-6, 1e-9);
    wl_graph_free(&g);

    /* relu on 16 fp16 values: the 32 B input comes from DRAM (0.32 ns), the 32 B output stays in L2
     * (64 B of L2 traffic, 0.064 ns); 16 ps of compute; the 5 us launch overhead dominates. */
    enum wl_kind k1[1] = {WL_INPUT};
    int64_t sh1[1][4] = {{16}}, o1[4] = {16};
    int r1[1] = {1};
    one_op(&g, OP_ELTWISE, 1, k1, (const int64_t(*)[4])sh1, r1, o1, 1);
    g.op[0].fn = FN_RELU;
    finalize(&g);
    cost(s, 0, &g, P_FP16, &c);
    ck_assert_int_eq(c.bound, BOUND_OVERHEAD);
    ck_assert_near(c.memory_s, 32 / 1e11, 1e-9);
    ck_assert_near(c.time_s, 5e-6 + 32 / 1e11, 1e-9);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(cpu_gemm_on_vector_units)
{
    /* fp32 matmul [256, 256] x [256, 256] on the CPU fixture (no matrix engine: SIMD does GEMM).
     *   FLOPs 2 x 256^3 = 33,554,432 / 256 GFLOP/s = 131.072 us.
     *   x and W (262,144 B each) live in DRAM; the 262,144 B output fits in half the 1 MiB L2.
     *   L2: 3 x 262,144 = 786,432 B -> 3.93216 us at 200 GB/s.
     *   DRAM: t = floor(sqrt(1,048,576 / 12)) = 295 >= 256, no re-reads: x + W = 524,288 B ->
     *   26.2144 us at 20 GB/s. Compute-bound, no overhead: time = 131.072 us. */
    struct hw_system *s = test_fixture(FIX_CPU);
    struct wl_graph g;
    enum wl_kind k[2] = {WL_INPUT, WL_WEIGHT};
    int64_t sh[2][4] = {{256, 256}, {256, 256}}, o[4] = {256, 256};
    int r[2] = {2, 2};
    one_op(&g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh, r, o, 2);
    finalize(&g);
    struct op_cost c;
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_int_eq(c.engine, ENG_VECTOR);
    ck_assert_near(c.compute_s, 131.072e-6, 1e-9);
    ck_assert_near(c.bytes[0], 786432, 1e-12);
    ck_assert_near(c.bytes[1], 524288, 1e-12);
    ck_assert_near(c.memory_s, 26.2144e-6, 1e-9);
    ck_assert_near(c.time_s, 131.072e-6, 1e-9);
    ck_assert_int_eq(c.bound, BOUND_COMPUTE);
    ck_assert_near(c.utilization, 1.0, 1e-12);
    /* Energy: 16,777,216 MACs x 4 pJ = 67.108864 uJ; memory 786,432 x 2 + 524,288 x 20 pJ = 12.058624 uJ. */
    ck_assert_near(c.energy_compute_J, 67.108864e-6, 1e-9);
    ck_assert_near(c.energy_memory_J, 12.058624e-6, 1e-9);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(cpu_packing_and_write_allocate)
{
    /* The CPU fixture with packing rates (dse calibrate fits them on real hosts): left operand
     * 10 G elements/s, right 20 G elements/s.
     * fp32 matmul [256, 256] x [256, 256]: as cpu_gemm_on_vector_units, compute 131.072 us; packing
     * the left input 256 x 256 = 65,536 elements at 10 G/s = 6.5536 us and the right 65,536 at
     * 20 G/s = 3.2768 us: overhead 9.8304 us, time 140.9024 us.
     * A convolution packs its weights as the left operand: 3x3, C = 16 -> OC = 32 on 16 x 16, pad 1:
     * weights 32 x 144 = 4,608 elements (0.4608 us), unfolded input 144 x 256 = 36,864, written by
     * im2col and then packed, 2 x 36,864 at 20 G/s = 3.6864 us: overhead 4.1472 us.
     * At stride 2 (8 x 8 outputs: 144 x 64 = 9,216 unfolded elements, counted twice):
     * 0.4608 + 2 x 9,216 / 20 G/s = 0.4608 + 0.9216 = 1.3824 us. With 32 rows
     * (skinny: MODEL_SKINNY_ROWS) nothing is packed.
     * A GEMM setup cost of 3 us (gemm_setup_us) adds to a packed GEMM's overhead only: 7.1472 us for
     * the convolution, still 0 for the skinny matmul.
     * add of two 1,048,576-float vectors (4 MiB each, beyond half the 1 MiB L2, so in DRAM): DRAM
     * bytes = 2 x 4,194,304 read + 2 x 4,194,304 for the output (write-allocate: read, then written)
     * = 16,777,216 B at 20 GB/s = 838.8608 us; L2 sees 3 x 4,194,304 = 12,582,912 B (62.91456 us).
     * With serial_fraction 0.5, half the compute time (1,048,576 FLOPs / 256 GFLOP/s = 4.096 us) is
     * added: 838.8608 + 2.048 = 840.9088 us. */
    struct hw_system *s = test_fixture(FIX_CPU);
    s->dev[0].pack_elem_per_s[0] = 10e9;
    s->dev[0].pack_elem_per_s[1] = 20e9;
    struct wl_graph g;
    struct op_cost c;
    enum wl_kind k[2] = {WL_INPUT, WL_WEIGHT};
    int64_t sh[2][4] = {{256, 256}, {256, 256}}, o[4] = {256, 256};
    int r[2] = {2, 2};
    one_op(&g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh, r, o, 2);
    finalize(&g);
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_near(c.overhead_s, 9.8304e-6, 1e-12);
    ck_assert_near(c.time_s, 140.9024e-6, 1e-12);
    wl_graph_free(&g);
    int64_t shc[2][4] = {{1, 16, 16, 16}, {32, 16, 3, 3}}, oc[4] = {1, 32, 16, 16};
    int rc4[2] = {4, 4};
    one_op(&g, OP_CONV2D, 2, k, (const int64_t(*)[4])shc, rc4, oc, 4);
    g.op[0].ph = g.op[0].pw = 1;
    finalize(&g);
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_near(c.overhead_s, 4.1472e-6, 1e-12);
    wl_graph_free(&g);
    int64_t oc2[4] = {1, 32, 8, 8};
    one_op(&g, OP_CONV2D, 2, k, (const int64_t(*)[4])shc, rc4, oc2, 4);
    g.op[0].ph = g.op[0].pw = 1;
    g.op[0].sh = g.op[0].sw = 2;
    finalize(&g);
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_near(c.overhead_s, 1.3824e-6, 1e-12);
    wl_graph_free(&g);
    /* Depthwise 3x3, 16 channels of 16 x 16, stride 2 -> 8 x 8: 2 x 16 x 64 x 9 = 18,432 FLOPs at
     * 256 GFLOP/s = 72 ns, x 2 for the stride-2 gather, x 4 on one core (9,216 MACs are below the
     * grain): 576 ns. */
    int64_t shd[2][4] = {{1, 16, 16, 16}, {16, 1, 3, 3}}, od[4] = {1, 16, 8, 8};
    one_op(&g, OP_CONV2D, 2, k, (const int64_t(*)[4])shd, rc4, od, 4);
    g.op[0].ph = g.op[0].pw = 1;
    g.op[0].sh = g.op[0].sw = 2;
    g.op[0].groups = 16;
    finalize(&g);
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_near(c.compute_s, 576e-9, 1e-15);
    wl_graph_free(&g);
    one_op(&g, OP_CONV2D, 2, k, (const int64_t(*)[4])shc, rc4, oc, 4);
    g.op[0].ph = g.op[0].pw = 1;
    finalize(&g);
    s->dev[0].gemm_setup_s = 3e-6;
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_near(c.overhead_s, 7.1472e-6, 1e-12);
    wl_graph_free(&g);
    int64_t sh32[2][4] = {{32, 256}, {256, 256}}, o32[4] = {32, 256};
    one_op(&g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh32, r, o32, 2);
    finalize(&g);
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_near(c.overhead_s, 0, 1e-15);
    wl_graph_free(&g);

    enum wl_kind ka[2] = {WL_INPUT, WL_INPUT};
    int64_t sa[2][4] = {{1048576}, {1048576}}, oa[4] = {1048576};
    int ra[2] = {1, 1};
    one_op(&g, OP_ELTWISE, 2, ka, (const int64_t(*)[4])sa, ra, oa, 1);
    g.op[0].fn = FN_ADD;
    finalize(&g);
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_near(c.bytes[1], 16777216, 1e-6);
    ck_assert_near(c.bytes[0], 12582912, 1e-6);
    ck_assert_near(c.memory_s, 838.8608e-6, 1e-12);
    ck_assert_near(c.overhead_s, 0, 1e-15); /* element-wise: no packing */
    ck_assert_near(c.time_s, 838.8608e-6, 1e-12);
    s->dev[0].serial_fraction = 0.5;
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_near(c.time_s, 840.9088e-6, 1e-12);
    /* Parallel (1,048,576 output elements >= MODEL_GRAIN_ELEMS): a 5 us fork/join is added. */
    s->dev[0].serial_fraction = 0;
    s->dev[0].fork_join_s = 5e-6;
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_near(c.time_s, 843.8608e-6, 1e-12);
    wl_graph_free(&g);

    /* add of two 16,384-float vectors: below the grain, one of the 4 cores runs it, no fork/join.
     * Inputs (64 KiB each) in DRAM: 131,072 B at 20 GB/s = 6.5536 us; the output in L2; on one core
     * every rate is a quarter: memory 26.2144 us, compute 16,384 FLOPs / 64 GFLOP/s = 0.256 us. */
    int64_t ss[2][4] = {{16384}, {16384}}, os[4] = {16384};
    one_op(&g, OP_ELTWISE, 2, ka, (const int64_t(*)[4])ss, ra, os, 1);
    g.op[0].fn = FN_ADD;
    finalize(&g);
    cost(s, 0, &g, P_FP32, &c);
    ck_assert_near(c.memory_s, 26.2144e-6, 1e-12);
    ck_assert_near(c.compute_s, 0.256e-6, 1e-12);
    ck_assert_near(c.time_s, 26.2144e-6, 1e-12);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(systolic_conv_weights_on_chip)
{
    /* int8 conv 3x3, pad 1, 64 -> 64 channels on a 56x56 map, on the systolic fixture.
     *   MACs 56 x 56 x 64 x 64 x 9 = 115,605,504; FLOPs 231,211,008 / 32.768e12 = 7.05601 us.
     *   Weights 36,864 B. Input 200,704 B (graph input: DRAM); output 200,704 B stays in the SRAM.
     * With no software stack, weights live in main memory:
     *   SRAM: every operand passes it, 200,704 + 36,864 + 200,704 = 438,272 B; DRAM: the input once
     *   (t = floor(sqrt(24 MiB / 6)) = 2048 >= 64 filters) and the weights once per 2048-row tile of
     *   the 3,136 output pixels (ceil(3136 / 2048) = 2): 200,704 + 2 x 36,864 = 274,432 B ->
     *   9.147733 us at 30 GB/s: memory-bound.
     * A stack that pins weights (memory.weights_on_chip 0.5: 36,864 B <= 0.5 x 24 MiB) keeps them in
     * the SRAM, as the Edge TPU and Hailo compilers do (pass_plan_memory):
     *   SRAM: 200,704 + 36,864 + 200,704 = 438,272 B -> 0.438272 us at 1000 GB/s.
     *   DRAM: only the input, 200,704 B -> 6.690133 us. Compute-bound by a little: 7.05601 us. */
    struct hw_system *s = test_fixture(FIX_SYSTOLIC);
    struct wl_graph g;
    enum wl_kind k[2] = {WL_INPUT, WL_WEIGHT};
    int64_t sh[2][4] = {{1, 64, 56, 56}, {64, 64, 3, 3}}, o[4] = {1, 64, 56, 56};
    int r[2] = {4, 4};
    one_op(&g, OP_CONV2D, 2, k, (const int64_t(*)[4])sh, r, o, 4);
    g.op[0].ph = g.op[0].pw = 1;
    finalize(&g);
    ck_assert_double_eq(g.op[0].macs, 115605504.0);
    struct op_cost c;
    cost(s, 0, &g, P_INT8, &c);
    ck_assert_near(c.bytes[0], 438272, 1e-12);
    ck_assert_near(c.bytes[1], 274432, 1e-12);
    ck_assert_int_eq(c.bound, BOUND_MEMORY);
    ck_assert_near(c.time_s, 274432 / 30e9, 1e-9);

    struct sw_stack sw;
    pass_none(&sw);
    sw.weights_on_chip = 1;
    sw.pin_share = 0.5;
    signed char home[8];
    struct exec_cfg x = {.prec = {P_INT8, P_INT8, P_INT8}, .fidelity = FID_ANALYTICAL, .home = home};
    ck_assert_int_eq(pass_plan_memory(&sw, &s->dev[0], &g, &x.prec, home), 1);
    ck_assert_int_eq(home[1], 0); /* the weights: in the sram level */
    ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &x, &c), OPS_OK);
    ck_assert_near(c.compute_s, 231211008.0 / 32.768e12, 1e-9);
    ck_assert_near(c.bytes[0], 438272, 1e-12);
    ck_assert_near(c.bytes[1], 200704, 1e-12);
    ck_assert_near(c.memory_s, 200704 / 30e9, 1e-9);
    ck_assert_int_eq(c.bound, BOUND_COMPUTE);
    ck_assert_near(c.time_s, 231211008.0 / 32.768e12, 1e-9);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(npu_support_and_vector_fallback)
{
    /* NPU fixture: runs matmul, conv2d, eltwise only; int8 only; no vector engine. */
    struct hw_system *s = test_fixture(FIX_NPU_SYSTEM);
    const struct hw_device *npu = &s->dev[1];
    struct wl_graph g;
    struct op_cost c;
    struct exec_cfg x = {.prec = {P_INT8, P_INT8, P_INT8}, .fidelity = FID_ANALYTICAL};
    enum wl_kind k[1] = {WL_INPUT};
    int64_t sh[1][4] = {{1000, 1000}}, o[4] = {1000, 1000};
    int r[1] = {2};
    one_op(&g, OP_SOFTMAX, 1, k, (const int64_t(*)[4])sh, r, o, 2);
    finalize(&g);
    ck_assert_int_eq(model_for(HW_NPU)->op_cost(npu, &g, &g.op[0], &x, &c), OPS_UNSUPPORTED_OP);
    wl_graph_free(&g);
    /* relu on 1e6 int8 values runs in the MAC array's pipeline: 1e6 FLOPs / 4e12 = 0.25 us; the
     * 1 MB input comes over the 1 GB/s host level: 1 ms; the 1 MB output stays in SRAM. */
    one_op(&g, OP_ELTWISE, 1, k, (const int64_t(*)[4])sh, r, o, 2);
    g.op[0].fn = FN_RELU;
    finalize(&g);
    ck_assert_int_eq(model_for(HW_NPU)->op_cost(npu, &g, &g.op[0], &x, &c), OPS_OK);
    ck_assert_int_eq(c.engine, ENG_MATRIX);
    ck_assert_near(c.compute_s, 0.25e-6, 1e-9);
    ck_assert_near(c.bytes[1], 1e6, 1e-12);
    ck_assert_near(c.memory_s, 1e-3, 1e-9);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(views_cost_nothing)
{
    struct hw_system *s = test_fixture(FIX_GPU);
    struct wl_graph g;
    enum wl_kind k[1] = {WL_INPUT};
    int64_t sh[1][4] = {{64, 64}}, o[4] = {4096};
    int r[1] = {2};
    one_op(&g, OP_RESHAPE, 1, k, (const int64_t(*)[4])sh, r, o, 1);
    finalize(&g);
    struct op_cost c;
    cost(s, 0, &g, P_FP16, &c);
    ck_assert(c.time_s == 0 && c.energy_memory_J == 0 && c.bound == BOUND_NONE);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(class_table)
{
    for (int k = 0; k < HW_CLASS_COUNT; k++) {
        const struct device_model *m = model_for((enum hw_class)k);
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(m->name, hw_class_names[k]);
        ck_assert_ptr_nonnull(m->op_cost);
        ck_assert_ptr_nonnull(m->check);
    }
    ck_assert_ptr_null(model_for(HW_CLASS_COUNT));
    /* A systolic device must have a matrix engine: the CPU fixture relabelled fails the check. */
    struct hw_system *s = test_fixture(FIX_CPU);
    struct dse_err e;
    s->dev[0].cls = HW_SYSTOLIC;
    ck_assert_int_eq(model_for(HW_SYSTOLIC)->check(&s->dev[0], &e), DSE_EINPUT);
    free(s);
}
END_TEST

/* ---- the systolic cycle tier ---- */

START_TEST(systolic_folds_by_hand)
{
    struct sa_gemm s;
    /* WS on 128x128, M = 12769 output pixels, K = 7x7x3 = 147, N = 64 filters: Sr = K = 147 -> 2 row
     * folds, Sc = N = 64 -> 1 column fold; per fold 2R + C + T - 2 = 256 + 128 + 12769 - 2 = 13151
     * demand rows -> 26302 rows, compute cycles 26301 (SCALE-Sim counts the last row's cycle from 0);
     * mapping 147 x 64 / (2 x 128 x 128) = 28.71 %; compute utilization mapping x T / (13151 + C - 1)
     * = 0.28711 x 12769 / 13278. */
    model_systolic_gemm(128, 128, DF_WS, 12769, 147, 64, &s);
    ck_assert_double_eq(s.folds, 2);
    ck_assert_double_eq(s.compute_cycles, 26301);
    ck_assert_near(s.mapping_efficiency, 9408.0 / 32768, 1e-12);
    ck_assert_near(s.compute_util, 9408.0 / 32768 * 12769 / 13278, 1e-12);
    /* OS on 32x32, M = 100, K = 50, N = 70: Sr = 100 -> 4 row folds, Sc = 70 -> 3 column folds;
     * per fold T + R + C - 2 = 50 + 32 + 32 - 2 = 112 -> 12 x 112 - 1 = 1343 cycles; mapping
     * 100 x 70 / (12 x 1024) = 0.5697; compute utilization mapping x 50 / 112; the output writes
     * SCALE-Sim counts: M N + (R + C) per fold = 7000 + 12 x 64 = 7768. */
    model_systolic_gemm(32, 32, DF_OS, 100, 50, 70, &s);
    ck_assert_double_eq(s.folds, 12);
    ck_assert_double_eq(s.cycles_per_fold, 112);
    ck_assert_double_eq(s.compute_cycles, 1343);
    ck_assert_near(s.mapping_efficiency, 7000.0 / 12288, 1e-12);
    ck_assert_near(s.compute_util, 7000.0 / 12288 * 50 / 112, 1e-12);
    ck_assert_double_eq(s.ofmap_writes, 7768);
    /* IS on 16x8 (R = 16 rows, C = 8 cols), M = 20, K = 40, N = 5: Sr = K = 40 -> 3 row folds,
     * Sc = M = 20 -> 3 column folds; per fold 2 x 16 + 8 + 5 - 2 = 43 -> 9 x 43 - 1 = 386 cycles. */
    model_systolic_gemm(16, 8, DF_IS, 20, 40, 5, &s);
    ck_assert_double_eq(s.folds, 9);
    ck_assert_double_eq(s.compute_cycles, 386);
    ck_assert_near(s.mapping_efficiency, 800.0 / (9 * 128), 1e-12);
}
END_TEST

static const char FIX_ARRAY[] =
    "[general]\nrun_name = fixture\n\n[architecture_presets]\nArrayHeight: 128\nArrayWidth: 128\n"
    "IfmapSramSzkB: 1048576\nFilterSramSzkB: 1048576\nOfmapSramSzkB: 1048576\nBandwidth: 100000\nDataflow: os\n"
    "[run_presets]\nInterfaceBandwidth: USER\n";

START_TEST(systolic_cycle_matches_roofline_when_exact)
{
    /* A large aligned GEMM with buffers that hold everything: OS on 128x128, M = N = 1024, K = 65536.
     * Cycles = (1024/128)^2 folds x (65536 + 254) - 1 = 64 x 65790 - 1 = 4,210,559; the roofline's
     * compute time is 2 x 1024 x 1024 x 65536 / (2 x 128 x 128 x 1 GHz) = 4,194,304 cycles: within
     * 255 / 65536 = 0.39 %. A misaligned shape (M = N = 129) folds 4x and the tiers differ. */
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    ck_assert_msg(hw_load_scalesim_buf(FIX_ARRAY, strlen(FIX_ARRAY), "fix.cfg", s, &e) == DSE_OK, "%s", e.msg);
    ck_assert(s->dev[0].array.present && s->dev[0].array.dataflow == DF_OS && s->dev[0].array.rows == 128);
    ck_assert(s->dev[0].array.interface == SA_USER && s->dev[0].array.interface_words_per_cycle == 100000);
    struct wl_graph g;
    enum wl_kind k[2] = {WL_INPUT, WL_WEIGHT};
    int64_t sh[2][4] = {{1024, 65536}, {65536, 1024}}, o[4] = {1024, 1024};
    int r[2] = {2, 2};
    one_op(&g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh, r, o, 2);
    finalize(&g);
    struct exec_cfg xa = {.prec = {P_INT8, P_INT8, P_INT8}, .fidelity = FID_ANALYTICAL}, xc = xa;
    xc.fidelity = FID_CYCLE;
    struct op_cost ca, cc;
    ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xa, &ca), OPS_OK);
    ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xc, &cc), OPS_OK);
    ck_assert_double_eq(cc.cycles_compute, 4210559);
    ck_assert_double_eq(cc.cycles_stall, 0);
    ck_assert_near(cc.time_s, 4210559e-9, 1e-12);
    ck_assert_near(ca.compute_s, 4194304e-9, 1e-12);
    ck_assert(fabs(cc.time_s / ca.time_s - 1) < 0.005);
    wl_graph_free(&g);
    int64_t sh2[2][4] = {{129, 65536}, {65536, 129}}, o2[4] = {129, 129};
    one_op(&g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh2, r, o2, 2);
    finalize(&g);
    ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xa, &ca), OPS_OK);
    ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xc, &cc), OPS_OK);
    /* 2 x 2 folds of which 3 are mostly empty: mapping 129^2 / (4 x 128^2) = 25.4 %. The analytical
     * tier counts the same folds (model_gemm_eff), so the tiers agree but for fill and drain:
     * 4 x (65536 + 254) cycles against 2 x 129 x 129 x 65536 / (2 x 128 x 128 x 0.254) = 4 x 65536. */
    ck_assert_near(cc.mapping_efficiency, 16641.0 / 65536, 1e-12);
    ck_assert_near(ca.compute_s, 4 * 65536e-9, 1e-9);
    ck_assert(fabs(cc.time_s / ca.time_s - 1) < 0.005);
    ck_assert(cc.utilization >= 0 && cc.utilization <= 1);
    wl_graph_free(&g);
    /* No cycle tier for a GPU yet: refused, not faked. */
    struct hw_system *gpu = test_fixture(FIX_GPU);
    ck_assert_int_eq(model_cost(&gpu->dev[0], &g, &g.op[0], &xc, &cc), OPS_NO_TIER);
    free(gpu);
    free(s);
}
END_TEST

/* A SCALE-Sim configuration as text: array, SRAM KiB (ifmap, filter, ofmap), dataflow, bandwidth mode. */
static void sa_cfg(struct hw_system *s, int rows, int cols, int ik, int fk, int ok, const char *df, const char *mode,
                   int bw)
{
    char buf[512];
    struct dse_err e;
    snprintf(buf, sizeof buf,
             "[general]\nrun_name = t\n[architecture_presets]\nArrayHeight: %d\nArrayWidth: %d\nIfmapSramSzkB: %d\n"
             "FilterSramSzkB: %d\nOfmapSramSzkB: %d\nDataflow: %s\nBandwidth: %d\n[run_presets]\n"
             "InterfaceBandwidth: %s\n",
             rows, cols, ik, fk, ok, df, bw, mode);
    ck_assert_msg(hw_load_scalesim_buf(buf, strlen(buf), "t.cfg", s, &e) == DSE_OK, "%s", e.msg);
}

START_TEST(scalesim_user_stalls_by_hand)
{
    struct hw_system *s = malloc(sizeof *s);
    struct sa_report r;
    /* A read stall (SCALE-Sim v2 22f88b1 gives the same: validate/scalesim, case hand-read). WS on
     * 8x8, M = 1024, K = N = 8, 1 KiB ifmap and filter SRAMs, 64 KiB ofmap, 4 words per cycle per
     * interface. One fold: 2R + C + T - 2 = 1046 rows, compute cycles 1045. The ifmap (1024 x 8 =
     * 8192 words) streams one anti-diagonal d = t + c per row (row 8 + d); the first d diagonals hold
     * P(d) = 8d - 28 words (8 <= d <= 1024). Its SRAM: S = 1024, sets of e = ceil(S/100) = 11 words,
     * window nA = ceil(512/11) = 47 sets (517 words), move nP = 47 sets, fetched in ceil(512/4) = 128
     * lines: move k arrives at -1 + 129k. Move k is needed when the demand reaches word 517k, on
     * diagonal floor((517k + 28)/8), row 8 + that; the last word 8191 is in set 744 < 47 x 16, so
     * k <= 15. Stall = max_k (129k - 2 - row_k), rising with k: k = 15: row 8 + floor(7783/8) = 980,
     * 1933 - 980 = 953. Total 1045 + 953 = 1998. DRAM ifmap reads: the first fill min(128, 2048)
     * lines + 15 x 128 lines of 4 words = 8192, the last arriving at 15 x 129 - 1 = 1934. Filter (64
     * words) and outputs (8192 < D = 32768) never wait. */
    sa_cfg(s, 8, 8, 1, 1, 64, "ws", "USER", 4);
    ck_assert_int_eq(model_systolic_layer(&s->dev[0], 1024, 8, 8, 1, &r), 0);
    ck_assert_double_eq(r.compute_cycles, 1045);
    ck_assert_double_eq(r.stall_cycles, 953);
    ck_assert_double_eq(r.total_cycles, 1998);
    ck_assert_double_eq(r.dram_acc[SA_IFMAP], 8192);
    ck_assert_double_eq(r.dram_start[SA_IFMAP], -128);
    ck_assert_double_eq(r.dram_stop[SA_IFMAP], 1934);
    ck_assert_double_eq(r.dram_acc[SA_FILTER], 64);
    /* A write stall (SCALE-Sim: case hand-write). WS on 8 rows x 2 columns, M = 4096, K = 8, N = 2,
     * 1 KiB ofmap SRAM (Sw = 1024, drain D = 512 words in ceil(512/1) = 512 cycles), 1 word per
     * cycle. One fold of 2 x 8 + 2 + 4096 - 2 = 4112 rows (compute 4111); output word j (t + c = j
     * diagonals) is written at row 15 + ceil(j / 2): 1 in row 15, 2 in each row to 4110, 1 in 4111.
     * Word 512 (row 271) puts 513 waiting: drain 1 at cycle 271, to 782, leaves 1. At row 782 (word
     * 1533, 1021 waiting) drain 2 starts, to 1293, leaving 510; the buffer fills (1024) at word 2047,
     * row 1039 < 1293: stall 254, drain 3 at 1293 to 1804, 513 left. From then each 512 words (256
     * rows) fill it again while a drain of 512 cycles runs: stall i at word 2047 + 512i, row 1039 +
     * 256i, until drain end 1293 + 511i: S = 254 + 255i; the last word 8191 is i = 12: S = 3314.
     * Total 4111 + 3314 = 7425 (the last drain's end). */
    sa_cfg(s, 8, 2, 64, 1, 1, "ws", "USER", 1);
    ck_assert_int_eq(model_systolic_layer(&s->dev[0], 4096, 8, 2, 1, &r), 0);
    ck_assert_double_eq(r.compute_cycles, 4111);
    ck_assert_double_eq(r.stall_cycles, 3314);
    ck_assert_double_eq(r.total_cycles, 7425);
    ck_assert_double_eq(r.dram_start[SA_OFMAP], 271);
    ck_assert_double_eq(r.dram_acc[SA_OFMAP], 8192);
    free(s);
}
END_TEST

START_TEST(scalesim_calc_no_stalls)
{
    /* InterfaceBandwidth CALC: SCALE-Sim sizes the interfaces so that nothing stalls. GoogLeNet
     * inception 5b's 1x1 (M = 7 x 7 = 49, K = 832, N = 384) on 32x32 WS with 64/64/32 KiB SRAMs: with
     * USER 10 words per cycle it stalls (SCALE-Sim: 1,168,807 of 1,213,422 cycles, validate/scalesim);
     * with CALC the total is the compute: 26 x 12 folds x (64 + 32 + 49 - 2) rows - 1 = 44,615. */
    struct hw_system *s = malloc(sizeof *s);
    struct sa_report r;
    sa_cfg(s, 32, 32, 64, 64, 32, "ws", "CALC", 10);
    ck_assert(s->dev[0].array.interface == SA_CALC);
    ck_assert_int_eq(model_systolic_layer(&s->dev[0], 49, 832, 384, 1, &r), 0);
    ck_assert_double_eq(r.stall_cycles, 0);
    ck_assert_double_eq(r.total_cycles, 44615);
    sa_cfg(s, 32, 32, 64, 64, 32, "ws", "USER", 10);
    ck_assert_int_eq(model_systolic_layer(&s->dev[0], 49, 832, 384, 1, &r), 0);
    ck_assert_double_eq(r.stall_cycles, 1168807);
    /* Through the cycle tier: a 1x1 convolution as that matmul. */
    struct wl_graph g;
    enum wl_kind k[2] = {WL_INPUT, WL_WEIGHT};
    int64_t sh[2][4] = {{49, 832}, {832, 384}}, o[4] = {49, 384};
    int rk[2] = {2, 2};
    one_op(&g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh, rk, o, 2);
    finalize(&g);
    struct exec_cfg x = {.prec = {P_INT8, P_INT8, P_INT8}, .fidelity = FID_CYCLE};
    struct op_cost c;
    ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &x, &c), OPS_OK);
    ck_assert_double_eq(c.cycles_stall, 1168807);
    sa_cfg(s, 32, 32, 64, 64, 32, "ws", "CALC", 10);
    ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &x, &c), OPS_OK);
    ck_assert_double_eq(c.cycles_stall, 0);
    ck_assert_double_eq(c.cycles_compute, 44615);
    ck_assert_near(c.time_s, 44615e-9, 1e-15);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(scalesim_cfg_errors)
{
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
#define ARR "[architecture_presets]\nArrayHeight: 8\nArrayWidth: 8\nIfmapSramSzkB: 1\nFilterSramSzkB: 1\nOfmapSramSzkB: 1\n"
    const char *bad[] = {"[architecture_presets]\nArrayHeight: 0\n", "[architecture_presets]\nArrayWidth: 8\n",
                         ARR "Dataflow: rs\n", "no section\nArrayHeight 8\n", ARR "Dataflow: ws\nBandwidth: 10\n",
                         ARR "Dataflow: ws\n[run_presets]\nInterfaceBandwidth: ESTIMATE\n",
                         ARR "Dataflow: ws\n[run_presets]\nInterfaceBandwidth: USER\n",
                         ARR "Dataflow: ws\nBandwidth: 10,20,30\n[run_presets]\nInterfaceBandwidth: USER\n",
                         ARR "Dataflow: ws\nBandwidth: 2.5\n[run_presets]\nInterfaceBandwidth: USER\n"};
    const char *msg[] = {"expected a positive integer", "missing arrayheight", "expected os, ws or is",
                         "expected 'key: value'", "run_presets: missing InterfaceBandwidth",
                         "line 9: InterfaceBandwidth: expected USER or CALC", "missing Bandwidth",
                         "line 8: Bandwidth: one integer expected, got the list '10,20,30'",
                         "Bandwidth: expected a positive integer"};
    for (int i = 0; i < 9; i++) {
        ck_assert_int_eq(hw_load_scalesim_buf(bad[i], strlen(bad[i]), "x.cfg", s, &e), DSE_EINPUT);
        ck_assert_msg(strstr(e.msg, msg[i]) != NULL, "case %d: %s", i, e.msg);
    }
    /* CALC does not read Bandwidth (SCALE-Sim's scale_config.py): absent, it loads. */
    const char *calc = ARR "Dataflow: ws\n[run_presets]\nInterfaceBandwidth: CALC\n";
    ck_assert_msg(hw_load_scalesim_buf(calc, strlen(calc), "x.cfg", s, &e) == DSE_OK, "%s", e.msg);
    ck_assert(s->dev[0].array.interface == SA_CALC);
#undef ARR
    free(s);
}
END_TEST



/* g: an fp16-shaped M x K by K x N matmul (input times weight), finalized. */
static void matmul_graph(struct wl_graph *g, int64_t M, int64_t K, int64_t N)
{
    enum wl_kind k[2] = {WL_INPUT, WL_WEIGHT};
    int64_t sh[2][4] = {{M, K}, {K, N}}, o[4] = {M, N};
    int r[2] = {2, 2};
    one_op(g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh, r, o, 2);
    finalize(g);
}

START_TEST(gpu_cycle_waves)
{
    /* GPU fixture + gpu {sms 10, 1 CTA/SM, 128x128 tiles}: per-CTA peak 1e13 / 10 = 1e12 FLOP/s.
     * fp16 GEMM M = 1280, N = 128, K = 1024: 10 x 1 tiles = one full wave:
     *   compute = 2 x 128 x 128 x 1024 / 1e12 = 33.554432 us = the roofline's 2 x 1280 x 128 x 1024 / 1e13.
     * M = 1408: 11 tiles, 2 waves: 67.108864 us; the analytical tier quantizes the same tiles and
     * waves (model_gemm_eff), where the bare roofline would say 36.909875 us. */
    char txt[sizeof FIX_GPU + 256];
    const char *at = strstr(FIX_GPU, "\"power\":");
    snprintf(txt, sizeof txt, "%.*s\"gpu\":{\"sms\":10,\"tile_m\":128,\"tile_n\":128,\"tile_k\":32,\"bw_fraction\":0.5,"
             "\"source\":\"test fixture\"},%s", (int)(at - FIX_GPU), FIX_GPU, at);
    struct hw_system *s = test_fixture(txt);
    struct exec_cfg xc = {.prec = {P_FP16, P_FP16, P_FP16}, .fidelity = FID_CYCLE}, xa = xc;
    xa.fidelity = FID_ANALYTICAL;
    static const int64_t Ms[2] = {1280, 1408};
    static const double want[2] = {33.554432e-6, 67.108864e-6};
    for (int i = 0; i < 2; i++) {
        struct wl_graph g;
        matmul_graph(&g, Ms[i], 1024, 128);
        struct op_cost cc, ca;
        ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xc, &cc), OPS_OK);
        ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xa, &ca), OPS_OK);
        ck_assert_near(cc.compute_s, want[i], 1e-9);
        ck_assert_near(ca.compute_s, want[i], 1e-9);
        ck_assert_near(cc.overhead_s, 5e-6, 1e-12); /* the launch */
        xc.graph_capture = 1;
        ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xc, &cc), OPS_OK);
        ck_assert(cc.overhead_s == 0); /* replayed from a captured graph */
        xc.graph_capture = 0;
        wl_graph_free(&g);
    }
    /* A streaming op reaches bw_fraction 0.5 of DRAM: 6,291,456 B of fp16 add at 50 GB/s = 125.82912 us. */
    struct wl_graph g;
    enum wl_kind k[2] = {WL_INPUT, WL_INPUT};
    int64_t sh[2][4] = {{1024, 1024}, {1024, 1024}}, o[4] = {1024, 1024};
    int r[2] = {2, 2};
    one_op(&g, OP_ELTWISE, 2, k, (const int64_t(*)[4])sh, r, o, 2);
    g.op[0].fn = FN_ADD;
    finalize(&g);
    struct op_cost cc;
    ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xc, &cc), OPS_OK);
    ck_assert_near(cc.memory_s, 6291456 / 50e9, 1e-9);
    ck_assert_int_eq(cc.bound, BOUND_MEMORY);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(gpu_splitk_tail_fill)
{
    /* FIX_GPU + gpu {sms 10, 1 CTA/SM, 128 x 128 x 32 tiles}: per-CTA rate 1e13 / 10 = 1e12 FLOP/s; DRAM
     * 100 GB/s; a launch 5 us. Both tiers must give each figure (one set of terms).
     * (a) tail 0: fp16 GEMM M = N = 128, K = 4096: 1 tile < 10 SMs, split = min(10, 4096 / 32) = 10,
     *     kc = ceil(ceil(4096 / 10) / 32) x 32 = 416: main loop 2 x 128 x 128 x 416 / 1e12 = 13.631488 us
     *     (one wave); partials 2 x 4 x 10 x 128 x 128 = 1,310,720 B / 100 GB/s = 13.1072 us after it:
     *     26.738688 us against the unsplit 10 x 2 x 128 x 128 x 4096 / 1e13 = 134.217728 us (one tile in
     *     a wave of 10), so split: overhead 5 + 13.1072 us.
     * (b) tail 0, K = 256: split = min(10, 8) = 8, kc 32: 1.048576 us + 2 x 4 x 8 x 16384 B / 100 GB/s
     *     = 10.48576 us, 11.534336 us against unsplit 8.388608 us: the library keeps the unsplit kernel,
     *     overhead the launch only.
     * (c) tail 0.5: M = 1408, N = 128, K = 1024: 11 tiles, w = 1.1, waves 1.1 + 0.5 x 0.9 = 1.55:
     *     1.55 x 2 x 128 x 128 x 1024 / 1e12 = 52.0093696 us (strict quantization: 2 waves, 67.108864).
     * (d) fill 1024, tail 0: M = 1280 (one wave): kc / (kc + 1024 / 1) = 1/2: 67.108864 us;
     *     M = 2560 (two waves): 1024 / (1024 + 512): 2 x 33.554432 x 1.5 = 100.663296 us. */
    static const struct {
        const char *eff;
        int64_t M, K;
        double compute, overhead;
    } c[] = {
        {"\"gemm_wave_tail\":0", 128, 4096, 13.631488e-6, 18.1072e-6},
        {"\"gemm_wave_tail\":0", 128, 256, 8.388608e-6, 5e-6},
        {"\"gemm_wave_tail\":0.5", 1408, 1024, 52.0093696e-6, 5e-6},
        {"\"gemm_k_fill\":1024", 1280, 1024, 67.108864e-6, 5e-6},
        {"\"gemm_k_fill\":1024", 2560, 1024, 100.663296e-6, 5e-6},
    };
    for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++) {
        char txt[sizeof FIX_GPU + 512];
        const char *at = strstr(FIX_GPU, "\"power\":");
        snprintf(txt, sizeof txt,
                 "%.*s\"gpu\":{\"sms\":10,\"tile_m\":128,\"tile_n\":128,\"tile_k\":32,\"bw_fraction\":0.5,"
                 "\"source\":\"test fixture\"},\"efficiency\":{%s,\"source\":\"test fixture\"},%s",
                 (int)(at - FIX_GPU), FIX_GPU, c[i].eff, at);
        struct hw_system *s = test_fixture(txt);
        struct exec_cfg xc = {.prec = {P_FP16, P_FP16, P_FP16}, .fidelity = FID_CYCLE}, xa = xc;
        xa.fidelity = FID_ANALYTICAL;
        struct wl_graph g;
        matmul_graph(&g, c[i].M, c[i].K, 128);
        struct op_cost cc, ca;
        ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xc, &cc), OPS_OK);
        ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xa, &ca), OPS_OK);
        ck_assert_msg(fabs(cc.compute_s - c[i].compute) < 1e-12 && fabs(ca.compute_s - c[i].compute) < 1e-12,
                      "case %u: compute %g / %g us, want %g", i, cc.compute_s * 1e6, ca.compute_s * 1e6,
                      c[i].compute * 1e6);
        ck_assert_msg(fabs(cc.overhead_s - c[i].overhead) < 1e-12 && fabs(ca.overhead_s - c[i].overhead) < 1e-12,
                      "case %u: overhead %g / %g us, want %g", i, cc.overhead_s * 1e6, ca.overhead_s * 1e6,
                      c[i].overhead * 1e6);
        wl_graph_free(&g);
        free(s);
    }
}
END_TEST

START_TEST(cpu_cycle_microtiles)
{
    /* CPU fixture + cpu {mr 8, nr 8}: 4 cores, 256 GFLOP/s -> 64 GFLOP/s per core; a micro-tile of
     * K = 64 is 2 x 8 x 8 x 64 = 8,192 FLOPs, 0.128 us on one core. fp32 GEMM 128 x 64 x 64 (2^19
     * MACs: at the grain, so parallel): 16 x 8 = 128 micro-tiles, 32 per core: 4.096 us, the
     * roofline's 2 x 128 x 64 x 64 / 256e9. With 3 threads: ceil(128 / 3) = 43 rounds -> 5.504 us.
     * M = 129: 17 x 8 = 136 micro-tiles, 34 rounds -> 4.352 us (padding). M = 64 (2^18 MACs, below
     * the grain): one core, 64 rounds -> 8.192 us. A fork/join of 1 us is paid by the parallel ones
     * only. */
    char txt[sizeof FIX_CPU + 128];
    const char *at = strstr(FIX_CPU, "\"power\":");
    snprintf(txt, sizeof txt, "%.*s\"cpu\":{\"mr\":8,\"nr\":8,\"stream_fraction\":0.5,\"source\":\"test fixture\"},%s",
             (int)(at - FIX_CPU), FIX_CPU, at);
    struct hw_system *s = test_fixture(txt);
    s->dev[0].fork_join_s = 1e-6;
    static const int64_t Ms[4] = {128, 128, 129, 64};
    static const int threads[4] = {0, 3, 0, 0};
    static const double want[4] = {4.096e-6, 5.504e-6, 4.352e-6, 8.192e-6};
    for (int i = 0; i < 4; i++) {
        struct wl_graph g;
        enum wl_kind k[2] = {WL_INPUT, WL_WEIGHT};
        int64_t sh[2][4] = {{Ms[i], 64}, {64, 64}}, o[4] = {Ms[i], 64};
        int r[2] = {2, 2};
        one_op(&g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh, r, o, 2);
        finalize(&g);
        struct exec_cfg xc = {.prec = {P_FP32, P_FP32, P_FP32}, .fidelity = FID_CYCLE, .threads = threads[i]};
        struct op_cost cc;
        ck_assert_int_eq(model_cost(&s->dev[0], &g, &g.op[0], &xc, &cc), OPS_OK);
        ck_assert_near(cc.compute_s, want[i], 1e-9);
        ck_assert_near(cc.overhead_s, Ms[i] == 64 ? 0 : 1e-6, 1e-15);
        wl_graph_free(&g);
    }
    free(s);
}
END_TEST

START_TEST(npu_cycle_tiling)
{
    /* NPU fixture: int8 4 TOPS, 4 MiB scratchpad (2 MiB usable with double buffering), host memory
     * at 1 GB/s. int8 matmul [1, 1024] x [1024, 4096]: 4 MiB of weights do not fit and are not pinned;
     * the activations (1 KiB in, 4 KiB out) stay: one tile, weights stream once.
     *   DMA = 4,194,304 (weights) + 1,024 (graph input) = 4,195,328 B -> 4.195328 ms
     *   compute = 2 x 1024 x 4096 / 4e12 = 2.097152 us; one tile: no overlap, time = DMA + compute. */
    struct hw_system *s = test_fixture(FIX_NPU_SYSTEM);
    struct wl_graph g;
    enum wl_kind k[2] = {WL_INPUT, WL_WEIGHT};
    int64_t sh[2][4] = {{1, 1024}, {1024, 4096}}, o[4] = {1, 4096};
    int r[2] = {2, 2};
    one_op(&g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh, r, o, 2);
    finalize(&g);
    struct exec_cfg xc = {.prec = {P_INT8, P_INT8, P_INT8}, .fidelity = FID_CYCLE, .graph_weight_bytes = 4194304};
    struct op_cost cc;
    ck_assert_int_eq(model_cost(&s->dev[1], &g, &g.op[0], &xc, &cc), OPS_OK);
    ck_assert_near(cc.memory_s, 4195328 / 1e9, 1e-9);
    ck_assert_near(cc.compute_s, 2.097152e-6, 1e-9);
    ck_assert_near(cc.time_s, 4195328 / 1e9 + 2.097152e-6, 1e-9);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(kernel_efficiency_terms)
{
    /* FIX_GPU with efficiency.per_precision fp16 0.5, gemm_k_half 1024 and bw_half_MB 1 (no "gpu"
     * section: no tile quantization). fp16 matmul 1280 x 1024 x 128: 2 x 1280 x 128 x 1024 =
     * 335,544,320 FLOPs / (1e13 x 0.5 x 1024 / (1024 + 1024)) = 134.217728 us. An fp16 add of two
     * 1024 x 1024 tensors moves 6,291,456 B at DRAM: (6,291,456 + 1,000,000) / 100 GB/s = 72.91456 us. */
    char txt[sizeof FIX_GPU + 256];
    const char *at = strstr(FIX_GPU, "\"power\":");
    snprintf(txt, sizeof txt, "%.*s\"efficiency\":{\"per_precision\":{\"fp16\":0.5},\"gemm_k_half\":1024,"
             "\"bw_half_MB\":1,\"source\":\"test fixture\"},%s", (int)(at - FIX_GPU), FIX_GPU, at);
    struct hw_system *s = test_fixture(txt);
    struct wl_graph g;
    enum wl_kind k[2] = {WL_INPUT, WL_WEIGHT};
    int64_t sh[2][4] = {{1280, 1024}, {1024, 128}}, o[4] = {1280, 128};
    int r[2] = {2, 2};
    one_op(&g, OP_MATMUL, 2, k, (const int64_t(*)[4])sh, r, o, 2);
    finalize(&g);
    struct op_cost c;
    cost(s, 0, &g, P_FP16, &c);
    ck_assert_near(c.compute_s, 134.217728e-6, 1e-9);
    wl_graph_free(&g);
    enum wl_kind k2[2] = {WL_INPUT, WL_INPUT};
    int64_t sh2[2][4] = {{1024, 1024}, {1024, 1024}}, o2[4] = {1024, 1024};
    one_op(&g, OP_ELTWISE, 2, k2, (const int64_t(*)[4])sh2, r, o2, 2);
    g.op[0].fn = FN_ADD;
    finalize(&g);
    cost(s, 0, &g, P_FP16, &c);
    ck_assert_near(c.memory_s, 72.91456e-6, 1e-9);
    wl_graph_free(&g);
    free(s);
}
END_TEST

Suite *make_model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *t = tcase_create("roofline");
    tcase_add_test(t, gpu_gemm_compute_bound);
    tcase_add_test(t, kernel_efficiency_terms);
    tcase_add_test(t, gpu_eltwise_memory_and_overhead_bound);
    tcase_add_test(t, cpu_gemm_on_vector_units);
    tcase_add_test(t, cpu_packing_and_write_allocate);
    tcase_add_test(t, systolic_conv_weights_on_chip);
    tcase_add_test(t, npu_support_and_vector_fallback);
    tcase_add_test(t, views_cost_nothing);
    tcase_add_test(t, class_table);
    tcase_add_test(t, systolic_folds_by_hand);
    tcase_add_test(t, systolic_cycle_matches_roofline_when_exact);
    tcase_add_test(t, scalesim_cfg_errors);
    tcase_add_test(t, scalesim_user_stalls_by_hand);
    tcase_add_test(t, scalesim_calc_no_stalls);
    tcase_add_test(t, gpu_cycle_waves);
    tcase_add_test(t, gpu_splitk_tail_fill);
    tcase_add_test(t, cpu_cycle_microtiles);
    tcase_add_test(t, npu_cycle_tiling);
    suite_add_tcase(s, t);
    return s;
}
