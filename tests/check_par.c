/* check_par.c -- topologies, collectives and parallel layouts: alpha-beta costs worked by hand on
 * fixtures with round numbers, the layout rules, the bad inputs, and layouts through eval. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_fixtures.h"
#include "check_suites.h"
#include "eval.h"
#include "eval_impl.h"
#include "eval_layout.h"
#include "par.h"

#define US 1e-6

/* FIX_GPU with a topology whose levels are `levels` (a JSON array body). */
static struct hw_system *topo_fixture(const char *levels)
{
    static char buf[sizeof FIX_GPU + 2048];
    snprintf(buf, sizeof buf, "%.*s,\"topology\":{\"device\":\"gpu\",\"levels\":[%s]}}", (int)(sizeof FIX_GPU - 2),
             FIX_GPU, levels);
    return test_fixture(buf);
}

/* An 8-way switch (100 GB/s, 1 us a step) under a 4-way fat tree (10 GB/s, 5 us): 32 devices. */
static const char NODE8[] = "{\"name\":\"nvl\",\"kind\":\"switch\",\"count\":8,\"bandwidth_GBps\":100,\"latency_us\":1,"
                            "\"source\":\"test fixture\"}";
static const char IB4[] = "{\"name\":\"ib\",\"kind\":\"fat_tree\",\"count\":4,\"bandwidth_GBps\":10,\"latency_us\":5,"
                          "\"source\":\"test fixture\"}";

static double coll(const struct hw_system *s, enum coll_kind k, int size, int stride, double bytes)
{
    struct coll_cost c;
    struct dse_err e;
    ck_assert_msg(par_coll_cost(&s->topo, k, size, stride, bytes, &c, &e) == DSE_OK, "%s", e.msg);
    return c.time_s;
}

START_TEST(switch_collectives)
{
    struct hw_system *s = topo_fixture(NODE8);
    ck_assert_int_eq(s->topo.devices, 8);
    /* all-reduce of 1 GB over 8: ring 2 x 7 x 1 us + 2 x 7/8 x 1e9 / 1e11 = 14 us + 17.5 ms; the tree
     * 2 x 3 x 1 us + 2 x 1e9 / 1e11 = 20.006 ms is slower */
    ck_assert_near(coll(s, COLL_ALLREDUCE, 8, 1, 1e9), 14 * US + 17.5e-3, 1e-12);
    /* 8 KiB: the tree wins, 6 us + 2 x 8192 / 1e11 = 6.16384 us (the ring: 14.14336 us) */
    ck_assert_near(coll(s, COLL_ALLREDUCE, 8, 1, 8192), 6 * US + 2 * 8192 / 1e11, 1e-12);
    /* reduce-scatter and all-gather: 7 x 1 us + 7/8 x 1e9 / 1e11 */
    ck_assert_near(coll(s, COLL_REDUCESCATTER, 8, 1, 1e9), 7 * US + 8.75e-3, 1e-12);
    ck_assert_near(coll(s, COLL_ALLGATHER, 8, 1, 1e9), 7 * US + 8.75e-3, 1e-12);
    /* all-to-all of 8e8: each sends 7/8 of it, 7 x 1 us + 7e8 / 1e11 */
    ck_assert_near(coll(s, COLL_ALLTOALL, 8, 1, 8e8), 7 * US + 7e-3, 1e-12);
    /* send/recv: 1 us + 1e9 / 1e11 */
    ck_assert_near(coll(s, COLL_SENDRECV, 2, 4, 1e9), 1 * US + 1e-2, 1e-12);
    /* a group of 2 every 4 (members 0 and 4): a ring of 2, 2 x 1 us + 2 x 1/2 x 1e9 / 1e11 */
    ck_assert_near(coll(s, COLL_ALLREDUCE, 2, 4, 1e9), 2 * US + 1e-2, 1e-12);
    /* nothing to do alone */
    ck_assert(coll(s, COLL_ALLREDUCE, 1, 1, 1e9) == 0);
    free(s);
}
END_TEST

START_TEST(hierarchical_collectives)
{
    char lv[512];
    snprintf(lv, sizeof lv, "%s,%s", NODE8, IB4);
    struct hw_system *s = topo_fixture(lv);
    ck_assert_int_eq(s->topo.devices, 32);
    /* all-reduce of 1e9 over all 32: reduce-scatter in the node (7 us + 8.75 ms), all-reduce of 1e9/8
     * over 4 nodes (ring 2 x 3 x 5 us + 2 x 3/4 x 1.25e8 / 1e10 = 30 us + 18.75 ms; the tree 20 us +
     * 25 ms is slower), all-gather in the node (7 us + 8.75 ms) */
    ck_assert_near(coll(s, COLL_ALLREDUCE, 32, 1, 1e9), 14 * US + 17.5e-3 + 30 * US + 18.75e-3, 1e-12);
    /* the dp group of tp 8 x dp 4: one device per node, 4 apart by 8: 30 us + 2 x 3/4 x 1e9 / 1e10 */
    ck_assert_near(coll(s, COLL_ALLREDUCE, 4, 8, 1e9), 30 * US + 0.15, 1e-12);
    /* all-to-all of 3.2e9 over 32: the node carries 3.2e9 x 7 x 1 / 32 = 7e8 (7 us + 7 ms), the tree
     * 3.2e9 x 3 x 8 / 32 = 2.4e9 (3 x 5 us + 0.24 s) */
    ck_assert_near(coll(s, COLL_ALLTOALL, 32, 1, 3.2e9), 7 * US + 7e-3 + 15 * US + 0.24, 1e-12);
    /* a send to the next node: 5 us + 1e9 / 1e10 */
    ck_assert_near(coll(s, COLL_SENDRECV, 2, 8, 1e9), 5 * US + 0.1, 1e-12);
    /* all-gather of 1e9 over 16 (two nodes): the same bytes per level as a reduce-scatter, 7 us +
     * 7/8 x 1e9 / 1e11 in the node, 1 x 5 us + 1/2 x 1.25e8 / 1e10 across */
    ck_assert_near(coll(s, COLL_ALLGATHER, 16, 1, 1e9), 7 * US + 8.75e-3 + 5 * US + 6.25e-3, 1e-12);
    free(s);
}
END_TEST

START_TEST(ring_and_torus_collectives)
{
    struct hw_system *s = topo_fixture("{\"name\":\"nl\",\"kind\":\"ring\",\"count\":12,\"bandwidth_GBps\":50,"
                                       "\"latency_us\":1.5,\"source\":\"test fixture\"}");
    /* the whole ring, both ways round (2 x 50 GB/s): 2 x (11 x 1.5 us + 11/12 x 1.2e9 / 1e11) */
    ck_assert_near(coll(s, COLL_ALLREDUCE, 12, 1, 1.2e9), 2 * (16.5 * US + 11e-3), 1e-12);
    /* 4 neighbours, a line (50 GB/s): 2 x (3 x 1.5 us + 3/4 x 1e9 / 5e10) */
    ck_assert_near(coll(s, COLL_ALLREDUCE, 4, 1, 1e9), 2 * (4.5 * US + 15e-3), 1e-12);
    /* every third of 12 closes the ring with hops of 3, sharing links with 2 other groups:
     * 2 x (3 x 3 x 1.5 us + 3/4 x 1e9 / (2 x 5e10 / 3)) */
    ck_assert_near(coll(s, COLL_ALLREDUCE, 4, 3, 1e9), 2 * (13.5 * US + 22.5e-3), 1e-12);
    /* all-to-all of 1.2e9 over the 12: each sends 1.1e9, the distances min(d, 12 - d) sum to 36, the
     * busiest link carries 1.1e9 x 36 / (2 x 11) = 1.8e9: 11 x 1.5 us + 1.8e9 / 5e10 */
    ck_assert_near(coll(s, COLL_ALLTOALL, 12, 1, 1.2e9), 16.5 * US + 36e-3, 1e-12);
    free(s);
    s = topo_fixture("{\"name\":\"ici\",\"kind\":\"torus\",\"count\":64,\"dims\":[4,4,4],\"bandwidth_GBps\":45,"
                     "\"latency_us\":1,\"source\":\"test fixture\"}");
    /* dimension by dimension, each a closed ring both ways (9e10): 2 x 3 x 3 x 1 us + 2 x 3/4 x
     * (6.4e8 + 1.6e8 + 4e7) / 9e10 = 18 us + 14 ms */
    ck_assert_near(coll(s, COLL_ALLREDUCE, 64, 1, 6.4e8), 18 * US + 14e-3, 1e-12);
    /* a send 4 ranks on: one hop in the second dimension, 1 us + 9e8 / 4.5e10 */
    ck_assert_near(coll(s, COLL_SENDRECV, 2, 4, 9e8), 1 * US + 0.02, 1e-12);
    /* 16 ranks on: one hop in the third; 32 on: two hops in the third, either way round */
    ck_assert_near(coll(s, COLL_SENDRECV, 2, 16, 9e8), 1 * US + 0.02, 1e-12);
    ck_assert_near(coll(s, COLL_SENDRECV, 2, 32, 9e8), 2 * US + 0.02, 1e-12);
    free(s);
    /* a fixed cost per collective and level */
    s = topo_fixture("{\"name\":\"nvl\",\"kind\":\"switch\",\"count\":8,\"bandwidth_GBps\":100,\"latency_us\":1,"
                     "\"base_latency_us\":6,\"source\":\"test fixture\"}");
    ck_assert_near(coll(s, COLL_ALLREDUCE, 8, 1, 1e9), 6 * US + 14 * US + 17.5e-3, 1e-12);
    free(s);
    /* ... paid once for a collective over two levels, the larger; an efficiency of 0.5 halves a level's
     * bandwidth: reduce-scatter in the node 7 us + 7/8 x 1e9 / 5e10, all-reduce of 1.25e8 across
     * (30 us + 2 x 3/4 x 1.25e8 / 1e10), all-gather back */
    s = topo_fixture("{\"name\":\"nvl\",\"kind\":\"switch\",\"count\":8,\"bandwidth_GBps\":100,\"latency_us\":1,"
                     "\"base_latency_us\":6,\"efficiency\":0.5,\"source\":\"test fixture\"},"
                     "{\"name\":\"ib\",\"kind\":\"fat_tree\",\"count\":4,\"bandwidth_GBps\":10,\"latency_us\":5,"
                     "\"base_latency_us\":8,\"source\":\"test fixture\"}");
    ck_assert_near(coll(s, COLL_ALLREDUCE, 32, 1, 1e9), 8 * US + 2 * (7 * US + 17.5e-3) + 30 * US + 18.75e-3, 1e-12);
    free(s);
}
END_TEST

START_TEST(layouts)
{
    char lv[512];
    snprintf(lv, sizeof lv, "%s,%s", NODE8, IB4);
    struct hw_system *s = topo_fixture(lv);
    struct dse_err e;
    struct par_layout l = {{8, 0, 0}, 0, 0, 0};
    ck_assert_int_eq(par_layout_complete(s, &l, &e), DSE_OK);
    ck_assert(l.n[PAR_TP] == 8 && l.n[PAR_DP] == 4 && l.n[PAR_PP] == 1 && l.microbatches == 1); /* dp fills */
    int size, stride;
    par_group(&l, PAR_DP, &size, &stride);
    ck_assert(size == 4 && stride == 8);
    struct par_layout bad = {{3, 0, 0}, 0, 0, 0};
    ck_assert_int_eq(par_layout_complete(s, &bad, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "tp 3 x dp 1 x pp 1 = 3 devices, but 'fix-gpu' has 32"), "%s", e.msg);
    struct par_layout over = {{8, 8, 1}, 0, 0, 0};
    ck_assert_int_eq(par_layout_complete(s, &over, &e), DSE_EINPUT);
    free(s);
    /* 12 devices as nodes of 6: a dp group of 3 every 4 (0, 4, 8) has two in node 0, one in node 1 */
    s = topo_fixture("{\"name\":\"n6\",\"kind\":\"switch\",\"count\":6,\"bandwidth_GBps\":100,\"latency_us\":1,"
                     "\"source\":\"test fixture\"},{\"name\":\"x\",\"kind\":\"fat_tree\",\"count\":2,"
                     "\"bandwidth_GBps\":10,\"latency_us\":5,\"source\":\"test fixture\"}");
    struct par_layout straddle = {{4, 3, 1}, 0, 0, 0};
    ck_assert_int_eq(par_layout_complete(s, &straddle, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "dp 3:") && strstr(e.msg, "straddles level 'n6'"), "%s", e.msg);
    struct par_layout fine = {{6, 2, 1}, 0, 0, 0};
    ck_assert_int_eq(par_layout_complete(s, &fine, &e), DSE_OK);
    free(s);
    /* a 3x4 torus: tp 2 takes two of the first dimension's three */
    s = topo_fixture("{\"name\":\"ici\",\"kind\":\"torus\",\"count\":12,\"dims\":[3,4],\"bandwidth_GBps\":45,"
                     "\"latency_us\":1,\"source\":\"test fixture\"}");
    struct par_layout odd = {{2, 6, 1}, 0, 0, 0};
    ck_assert_int_eq(par_layout_complete(s, &odd, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "straddles a dimension of level 'ici' (a 3x4 torus)"), "%s", e.msg);
    struct par_layout whole = {{3, 4, 1}, 0, 0, 0};
    ck_assert_int_eq(par_layout_complete(s, &whole, &e), DSE_OK);
    free(s);
    /* no topology: one device */
    s = test_fixture(FIX_GPU);
    struct par_layout one = {{0, 0, 0}, 0, 0, 0};
    ck_assert_int_eq(par_layout_complete(s, &one, &e), DSE_OK);
    ck_assert(one.n[PAR_TP] == 1 && one.n[PAR_DP] == 1 && one.n[PAR_PP] == 1);
    struct par_layout two = {{2, 0, 0}, 0, 0, 0};
    ck_assert_int_eq(par_layout_complete(s, &two, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "has no topology"), "%s", e.msg);
    free(s);
}
END_TEST

/* Each bad topology and the message expected. */
static const struct {
    const char *levels, *msg;
} bad_topo[] = {
    {"{\"name\":\"a\",\"kind\":\"switch\",\"count\":8,\"bandwidth_GBps\":0,\"latency_us\":1,\"source\":\"t\"}",
     "topology.levels[0].bandwidth_GBps: expected a positive number, got 0"},
    {"{\"name\":\"a\",\"kind\":\"switch\",\"count\":1,\"bandwidth_GBps\":1,\"latency_us\":1,\"source\":\"t\"}",
     "topology.levels[0].count: expected an integer in [2, 65536], got 1"},
    {"{\"name\":\"a\",\"kind\":\"mesh\",\"count\":8,\"bandwidth_GBps\":1,\"latency_us\":1,\"source\":\"t\"}",
     "unknown value 'mesh'"},
    {"{\"name\":\"a\",\"kind\":\"torus\",\"count\":8,\"dims\":[2,2],\"bandwidth_GBps\":1,\"latency_us\":1,\"source\":\"t\"}",
     "topology.levels[0].dims: the dimensions multiply to 4, but count is 8"},
    {"{\"name\":\"a\",\"kind\":\"torus\",\"count\":8,\"bandwidth_GBps\":1,\"latency_us\":1,\"source\":\"t\"}",
     "a torus needs its dimensions"},
    {"{\"name\":\"a\",\"kind\":\"ring\",\"count\":8,\"dims\":[8],\"bandwidth_GBps\":1,\"latency_us\":1,\"source\":\"t\"}",
     "only a torus has dims"},
    {"{\"name\":\"a\",\"kind\":\"ring\",\"count\":8,\"bandwidth_GBps\":1,\"latency_us\":1}", "source: missing"},
    {"{\"name\":\"a\",\"kind\":\"ring\",\"count\":8,\"bandwidth_GBps\":1,\"latency_us\":-1,\"source\":\"t\"}",
     "latency_us: expected a non-negative number"},
    {"", "topology.levels: expected at least one level"},
    {"{\"name\":\"a\",\"kind\":\"switch\",\"count\":256,\"bandwidth_GBps\":1,\"latency_us\":1,\"source\":\"t\"},"
     "{\"name\":\"b\",\"kind\":\"switch\",\"count\":512,\"bandwidth_GBps\":1,\"latency_us\":1,\"source\":\"t\"}",
     "more than the 65536 supported"},
    {"{\"name\":\"a\",\"kind\":\"switch\",\"count\":2,\"bandwidth_GBps\":1,\"latency_us\":1,\"source\":\"t\"},"
     "{\"name\":\"a\",\"kind\":\"switch\",\"count\":2,\"bandwidth_GBps\":1,\"latency_us\":1,\"source\":\"t\"}",
     "level name 'a' used twice"},
};

START_TEST(bad_topologies)
{
    char buf[sizeof FIX_GPU + 1024];
    snprintf(buf, sizeof buf, "%.*s,\"topology\":{\"device\":\"gpu\",\"levels\":[%s]}}", (int)(sizeof FIX_GPU - 2),
             FIX_GPU, bad_topo[_i].levels);
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    ck_assert_int_eq(hw_load_buf(buf, strlen(buf), "bad.json", s, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, bad_topo[_i].msg) && !strncmp(e.msg, "bad.json: ", 10), "case %d: got '%s'", _i, e.msg);
    free(s);
    /* a device the system does not have */
    snprintf(buf, sizeof buf, "%.*s,\"topology\":{\"device\":\"tpu\",\"levels\":[%s]}}", (int)(sizeof FIX_GPU - 2),
             FIX_GPU, NODE8);
    s = malloc(sizeof *s);
    ck_assert_int_eq(hw_load_buf(buf, strlen(buf), "bad.json", s, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "topology.device: expected the name of a device of this system, got 'tpu'"), "%s", e.msg);
    free(s);
}
END_TEST

static struct eval_req lreq(const struct hw_system *s, const struct wl_model *m, int64_t batch, int tp, int dp, int pp,
                            int mb)
{
    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = s;
    r.dev = 0;
    for (int t = 0; t < OP_COUNT; t++)
        r.type_dev[t] = -1;
    r.model = m;
    r.x.prec.w = r.x.prec.a = r.x.prec.kv = P_FP16;
    r.batch = batch;
    r.phase = PH_PREFILL;
    r.prompt = 128;
    r.want_ops = 1;
    struct par_layout l = {{tp, dp, pp}, mb, 0, 0};
    struct dse_err e;
    ck_assert_msg(par_layout_complete(s, &l, &e) == DSE_OK, "%s", e.msg);
    r.layout = l;
    return r;
}

static void lrun(struct eval_req *r, struct eval_result *res)
{
    struct dse_err e;
    ck_assert_msg(eval_run(r, res, &e) == DSE_OK, "%s", e.msg);
    ck_assert_msg(res->feasible, "%s", res->reason);
}

static const struct eval_op *row(const struct eval_result *res, const char *name)
{
    for (int i = 0; i < res->n_ops; i++)
        if (!strcmp(res->ops[i].name, name))
            return &res->ops[i];
    ck_abort_msg("no row '%s'", name);
    return NULL;
}

START_TEST(tensor_parallel_shard)
{
    struct hw_system *s = topo_fixture(NODE8);
    struct wl_model m;
    test_model("models/llama-3.2-1b.json", &m);
    struct eval_graphs eg;
    struct dse_err e;
    /* Llama 3.2 1B (hidden 2048, 16 layers, 32 heads, 8 KV heads of 64, FFN 8192, vocabulary 128256,
     * tied): a layer's shard of 2 holds q and o 2 x 2048 x 1024, k and v 2 x 2048 x 256, gate, up, down
     * 3 x 2048 x 4096 and its 2 norms whole (2 x 2048): 4194304 + 1048576 + 25165824 + 4096 = 30412800;
     * x 16 = 486604800; the table 64128 x 2048 = 131334144 and the final norm 2048: 617940992 */
    struct par_layout tp2 = {{2, 4, 1}, 1, 1, 1};
    ck_assert_int_eq(eval_graphs_build(&m, PH_PREFILL, 1, 128, &tp2, NULL, &eg, &e), DSE_OK);
    ck_assert_near(eg.first_params, 617940992.0, 1e-15);
    int ar = 0, ag = 0;
    for (int i = 0; i < eg.first.n_op; i++) {
        ar += eg.first.op[i].type == OP_ALLREDUCE ? (int)eg.first.op[i].count : 0;
        ag += eg.first.op[i].type == OP_ALLGATHER;
    }
    ck_assert_int_eq(ar, 1 + 2 * 16); /* the embedding's, and two per layer */
    ck_assert_int_eq(ag, 1);          /* the logits */
    eval_graphs_free(&eg);

    /* each all-reduce of the prefill moves 128 x 2048 x 2 B = 524288 B over 2 of the switch: ring
     * 2 x 1 us + 2 x 1/2 x 524288 / 1e11 = 7.24288 us (the tree: 12.48576 us) */
    struct eval_req r = lreq(s, &m, 1, 2, 0, 1, 0);
    struct eval_result res = {0};
    lrun(&r, &res);
    ck_assert_near(row(&res, "layers.attn_allreduce")->xfer_s, 16 * 7.24288e-6, 1e-9);
    ck_assert_near(row(&res, "embed_allreduce")->xfer_s, 7.24288e-6, 1e-9);
    ck_assert_near(res.t.weight_bytes, 617940992.0 * 2, 1e-12);
    ck_assert(res.t.devices == 8 && res.layout.n[PAR_DP] == 4);
    eval_result_free(&res);

    /* a stack release's multi-device inference calibration: efficiency.prefill 0.5 doubles the prefill's
     * kernel times, efficiency.decode 0.25 quadruples the decode steps', and neither touches the links */
    struct sw_stack plain, cal;
    pass_none(&plain);
    pass_none(&cal);
    cal.eff[SW_PREFILL] = 0.5;
    cal.eff[SW_DECODE] = 0.25;
    struct eval_req rg = r, rgc;
    rg.phase = PH_GENERATE;
    rg.gen = 4;
    rg.sw = &plain;
    rgc = rg;
    rgc.sw = &cal;
    struct eval_result g0 = {0}, g1 = {0};
    lrun(&rg, &g0);
    lrun(&rgc, &g1);
    int seen[2] = {0, 0};
    for (int i = 0; i < g0.n_ops; i++) {
        const struct eval_op *o0 = &g0.ops[i], *o1 = &g1.ops[i];
        ck_assert_str_eq(o0->name, o1->name);
        ck_assert_near(o1->xfer_s, o0->xfer_s, 1e-12);
        if (!strcmp(o0->name, "layers.q_proj+2") || !strcmp(o0->name, "layers.q_proj")) {
            int dec = o0->phase == PH_DECODE;
            ck_assert_near(o1->time_s, (dec ? 4 : 2) * o0->time_s, 1e-9);
            seen[dec] = 1;
        }
    }
    ck_assert(seen[0] && seen[1]);
    eval_result_free(&g0);
    eval_result_free(&g1);

    /* a runtime that pads (Neuron: heads up to a multiple of tp) rounds each share up: 32 heads over 3
     * are 11 a device, 8 KV heads 3, the FFN's 8192 2731 */
    struct wl_transformer padded;
    ck_assert_int_eq(wl_shard_transformer(&m.tf, 3, 1, m.path, &padded, &e), DSE_OK);
    ck_assert(padded.heads == 11 && padded.kv_heads == 3 && padded.intermediate == 2731);
    ck_assert_int_eq(wl_shard_transformer(&m.tf, 3, 0, m.path, &padded, &e), DSE_EINPUT);
    /* tp must divide the heads: 32 heads over 3 is refused, naming the file and key */
    struct eval_req r3 = r;
    r3.layout.n[PAR_TP] = 3;
    ck_assert_int_eq(eval_check_layout(&r3, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "llama-3.2-1b.json: num_attention_heads: 32 attention heads do not split over tp 3"),
                  "%s", e.msg);
    wl_model_free(&m);
    /* a CNN has no heads to split */
    test_model("models/resnet50.json", &m);
    struct eval_req rc = lreq(s, &m, 1, 2, 0, 1, 0);
    rc.phase = PH_NONE;
    ck_assert_int_eq(eval_check_layout(&rc, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "tensor parallelism (tp 2) splits transformer configs"), "%s", e.msg);
    /* the graph builder refuses the same split with the same words (one check serves both) */
    struct wl_graph g;
    struct wl_shape sh = {.batch = 1, .tokens = 1, .tp = 2};
    ck_assert_int_eq(wl_build(&m, &sh, &g, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "tensor parallelism (tp 2) splits transformer configs"), "%s", e.msg);
    sh.tp = 1;
    sh.cp = 2;
    ck_assert_int_eq(wl_build(&m, &sh, &g, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "context parallelism (cp 2) splits a transformer's token sequence; resnet50 has none"),
                  "%s", e.msg);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(data_parallel_replicas)
{
    struct hw_system *one = test_fixture(FIX_GPU), *s = topo_fixture(NODE8);
    struct wl_model m;
    test_model("models/llama-3.2-1b.json", &m);
    struct eval_req r1 = lreq(one, &m, 1, 1, 1, 1, 0), r8 = lreq(s, &m, 1, 1, 8, 1, 0);
    struct eval_result a = {0}, b = {0};
    lrun(&r1, &a);
    lrun(&r8, &b);
    /* 8 replicas of one device each: the same latency, 8 x the throughput and the energy */
    ck_assert_near(b.t.latency_s, a.t.latency_s, 1e-12);
    ck_assert_near(b.t.throughput_per_s, 8 * a.t.throughput_per_s, 1e-12);
    ck_assert_near(b.t.tokens_per_s_per_device, a.t.tokens_per_s, 1e-12);
    ck_assert_near(b.t.energy_J, 8 * a.t.energy_J, 1e-12);
    ck_assert_near(b.t.energy_per_token_J, a.t.energy_per_token_J, 1e-12);
    ck_assert_near(b.t.weight_bytes, a.t.weight_bytes, 1e-12); /* per device */
    eval_result_free(&a);
    eval_result_free(&b);
    wl_model_free(&m);
    free(one);
    free(s);
}
END_TEST

/* A single pass's row times (a result of one micro-batch, pp 1) before, in and after the repeated
 * layers (rows with count > 1 are a layer's; they come in op order). */
static void parts(const struct eval_result *res, double t[3])
{
    int first = -1, last = -1;
    for (int i = 0; i < res->n_ops; i++)
        if (res->ops[i].count > 1) {
            first = first < 0 ? i : first;
            last = i;
        }
    t[0] = t[1] = t[2] = 0;
    for (int i = 0; i < res->n_ops; i++)
        t[i < first ? 0 : i > last ? 2 : 1] += res->ops[i].time_s;
}

START_TEST(pipeline_stages)
{
    struct hw_system *s = topo_fixture(NODE8);
    struct wl_model m;
    test_model("models/llama-3.2-1b.json", &m);
    struct eval_req r1 = lreq(s, &m, 1, 1, 8, 1, 0), r2 = lreq(s, &m, 1, 1, 4, 2, 0);
    struct eval_result a = {0}, b = {0}, c = {0};
    lrun(&r1, &a);
    lrun(&r2, &b);
    /* one micro-batch through 2 stages: the same work in turn, plus one send of the boundary
     * activation (128 x 2048 x 2 B = 524288 B) to a device 4 ranks on in the switch: 1 us + 524288 / 1e11 */
    double send = 1e-6 + 524288 / 1e11;
    ck_assert_near(b.t.latency_s, a.t.latency_s + send, 1e-12);
    ck_assert_near(b.t.pipe_s, send, 1e-12);
    /* a stage's weights: half the layers (16 x 60821504 / 2) and the tied table with the final norm
     * (128256 x 2048 + 2048 = 262670336, on the last stage; the first holds the table alone) */
    ck_assert_near(b.t.weight_bytes, 2 * (16 * 60821504.0 / 2 + 262670336.0), 1e-12);
    /* two micro-batches of 1 through 2 stages of 8 layers: the first through both (the whole pass,
     * a's latency), the second one slowest stage later: 8/16 of the layers plus the larger end, the
     * last stage's final norm and head (128256 x 2048 GEMM of the last token) or the first stage's
     * embedding; one send on the critical path; twice the sequences */
    struct eval_req r3 = lreq(s, &m, 2, 1, 4, 2, 2);
    lrun(&r3, &c);
    double part[3];
    parts(&a, part);
    ck_assert(part[0] > 0 && part[1] > 0 && part[2] > 0);
    ck_assert_near(part[0] + part[1] + part[2], a.t.latency_s, 1e-12);
    double tmax = 8.0 / 16 * part[1] + (part[0] > part[2] ? part[0] : part[2]);
    ck_assert_near(c.t.latency_s, a.t.latency_s + tmax + send, 1e-12);
    ck_assert_near(c.t.throughput_per_s, 4 * 2 / c.t.latency_s, 1e-12);
    /* op rows plus the sends make the latency and the energy */
    double t = 0, en = 0;
    for (int i = 0; i < c.n_ops; i++) {
        t += c.ops[i].time_s;
        en += c.ops[i].energy_J;
    }
    ck_assert_near(t + c.t.pipe_s + c.t.runtime_s, c.t.latency_s, 1e-12);
    ck_assert_near(en + c.t.pipe_J + c.t.energy_static_J * (c.t.pipe_s + c.t.runtime_s) / c.t.latency_s, c.t.energy_J,
                   1e-9);
    struct dse_err e;
    struct eval_req bad = r3;
    bad.batch = 3;
    ck_assert_int_eq(eval_check_layout(&bad, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "microbatches 2 must divide the batch 3"), "%s", e.msg);
    eval_result_free(&a);
    eval_result_free(&b);
    eval_result_free(&c);
    wl_model_free(&m);
    free(s);
}
END_TEST

/* The pipeline's factors (eval_par.c) by hand: 40 layers over 32 stages hold at most ceil(40/32) = 2
 * each, a share of 2/40 = 0.05 for the slowest stage. Parts of one pass: before 1, layers 40, after 3:
 * t_max = 0.05 x 40 + max(1, 3) = 5, G = 44. */
START_TEST(pipeline_factors)
{
    struct par_layout l = {{1, 1, 32}, 4, 0, 0};
    const double t[STAGE_COUNT] = {1, 40, 3};
    double f[STAGE_COUNT], d[STAGE_COUNT];
    /* 4 micro-batches, prefill or training: G + 3 t_max = 44 + 15 = 59 = 1 x 1 + 1.15 x 40 + 4 x 3 */
    eval_pipe_factors(&l, 40, 0, t, f, d);
    ck_assert_near(f[STAGE_BEFORE], 1, 1e-15);
    ck_assert_near(f[STAGE_LAYERS], 1 + 3 * 0.05, 1e-15);
    ck_assert_near(f[STAGE_AFTER], 4, 1e-15);
    ck_assert_near(f[0] * t[0] + f[1] * t[1] + f[2] * t[2], 59, 1e-12);
    /* the slowest (last) stage's device: 4 micro-batches of 2 layers and the head, nothing of the first's */
    ck_assert_near(d[STAGE_LAYERS], 4 * 0.05, 1e-15);
    ck_assert_near(d[STAGE_AFTER], 4, 1e-15);
    ck_assert_near(d[STAGE_BEFORE], 0, 1e-15);
    /* a decode step of 4: 4 t_max = 20 < G = 44, so each step is one pass through every stage */
    eval_pipe_factors(&l, 40, 1, t, f, d);
    ck_assert_near(f[0] * t[0] + f[1] * t[1] + f[2] * t[2], 44, 1e-12);
    /* of 16: 16 t_max = 80 >= 44, the slowest stage sets the pace: 0.8 x 40 + 16 x 3 */
    l.microbatches = 16;
    eval_pipe_factors(&l, 40, 1, t, f, d);
    ck_assert_near(f[STAGE_LAYERS], 0.8, 1e-15);
    ck_assert_near(f[STAGE_BEFORE], 0, 1e-15);
    ck_assert_near(f[0] * t[0] + f[1] * t[1] + f[2] * t[2], 80, 1e-12);
    /* 8 stages divide the 40 layers: 5 each, 16 micro-batches: 44 + 15 x (5 + 3) = 164, where the balanced
     * model of before ((16 + 8 - 1) / 8 x 44 = 126.5) spread the head over every stage */
    l.n[PAR_PP] = 8;
    eval_pipe_factors(&l, 40, 0, t, f, d);
    ck_assert_near(f[0] * t[0] + f[1] * t[1] + f[2] * t[2], 164, 1e-12);
    /* 32 stages, the layers alone (no ends), 16 micro-batches: 40 + 15 x 2 = 70, a stage's time being
     * ceil(40 / 32) = 2 layers; the balanced model gave 40 + 15 x 1.25 = 58.75 */
    l.n[PAR_PP] = 32;
    const double tl[STAGE_COUNT] = {0, 40, 0};
    eval_pipe_factors(&l, 40, 0, tl, f, d);
    ck_assert_near(f[1] * tl[1], 70, 1e-12);
    ck_assert_near(eval_stage_share(&l, 40), 0.05, 1e-15);
    /* one stage: every part M times */
    l.n[PAR_PP] = 1;
    eval_pipe_factors(&l, 40, 0, t, f, d);
    ck_assert(f[0] == 16 && f[1] == 16 && f[2] == 16 && d[1] == 16);
    ck_assert_near(eval_stage_share(&l, 40), 1, 1e-15);
}
END_TEST

/* Stages that do not divide the layers (GPT-2's 12 over 8 stages: 2 on some, 1 on others) through eval:
 * the slowest stage's 2 layers set the pace and hold the weights, not 12 / 8 = 1.5. */
START_TEST(uneven_pipeline_stages)
{
    struct hw_system *s = topo_fixture(NODE8);
    struct wl_model m;
    test_model("models/gpt2.json", &m);
    struct eval_req r1 = lreq(s, &m, 1, 1, 8, 1, 0), r8 = lreq(s, &m, 8, 1, 1, 8, 8);
    r1.skip_capacity = r8.skip_capacity = 1;
    struct eval_result a = {0}, b = {0};
    lrun(&r1, &a);
    lrun(&r8, &b);
    double part[3];
    parts(&a, part);
    /* 8 micro-batches of 1 through 8 stages: G + 7 t_max, t_max = 2/12 of the layers + the larger end;
     * 7 sends of the boundary, 128 x 768 fp16 = 196608 B, to the next rank in the switch: 1 us +
     * 196608 / 1e11 each */
    double send = 7 * (1e-6 + 196608 / 1e11);
    double tmax = 2.0 / 12 * part[1] + (part[0] > part[2] ? part[0] : part[2]);
    ck_assert_near(b.t.pipe_s, send, 1e-12);
    ck_assert_near(b.t.latency_s, a.t.latency_s + 7 * tmax + send, 1e-12);
    ck_assert(b.t.latency_s > (8 + 8 - 1) / 8.0 * a.t.latency_s); /* the balanced model's figure, too fast */
    /* the slowest stage's weights: 2 of the 12 layers and the larger end (the token and position
     * tables 50257 x 768 + 1024 x 768 = 39383808 of the first stage, against the final norm's 1536 and
     * the tied table's 38597376 of the last) */
    struct eval_graphs eg;
    struct dse_err e;
    ck_assert_int_eq(eval_graphs_build(&m, PH_PREFILL, 1, 128, NULL, NULL, &eg, &e), DSE_OK);
    ck_assert_near(eg.w_before, 39383808.0, 1e-15);
    ck_assert_near(eg.w_after, 1536 + 38597376.0, 1e-15);
    ck_assert_near(b.t.weight_bytes, 2 * (eg.w_layers * 2 / 12 + eg.w_before), 1e-12);
    eval_graphs_free(&eg);
    /* op rows plus the sends still make the latency */
    double t = 0;
    for (int i = 0; i < b.n_ops; i++)
        t += b.ops[i].time_s;
    ck_assert_near(t + b.t.pipe_s + b.t.runtime_s, b.t.latency_s, 1e-12);
    eval_result_free(&a);
    eval_result_free(&b);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(layout_search)
{
    struct hw_system *s = topo_fixture(NODE8);
    struct wl_model m;
    test_model("models/llama-3.2-1b.json", &m);
    struct eval_req r = lreq(s, &m, 8, 1, 0, 1, 0);
    struct layout_choice best[8];
    struct layout_stats st;
    struct dse_err e;
    const struct metric *tps = metric_find("tokens_per_s_per_device");
    ck_assert_int_eq(eval_layout_search(&r, tps, best, 8, &st, &e), DSE_OK);
    /* micro-batches for pp 1: 1; pp 2: 1, 2, 4, 8; pp 4: 1, 4, 8; pp 8: 1, 8 -- so the pp choices of 8,
     * 4, 2 and 1 devices give 10, 8, 5 and 1 layouts. tp x cp (cp a power of two dividing the 128
     * tokens): 1x1 10, 1x2 8, 1x4 5, 1x8 1, 2x1 8, 2x2 5, 2x4 1, 4x1 5, 4x2 1, 8x1 1 -- 45 layouts, all
     * valid for 32 heads, 8 KV heads and 16 layers (no experts: ep 1) */
    ck_assert_int_eq((int)st.searched, 45);
    ck_assert_int_eq((int)st.refused, 0);
    ck_assert_int_eq(st.kept, 8);
    for (int i = 1; i < st.kept; i++)
        ck_assert(best[i].value <= best[i - 1].value);
    /* the best is what eval gives for it */
    r.layout = best[0].layout;
    struct eval_result res = {0};
    lrun(&r, &res);
    ck_assert_near(res.t.tokens_per_s_per_device, best[0].value, 1e-12);
    eval_result_free(&res);
    wl_model_free(&m);
    free(s);
}
END_TEST

static double pass_time(const struct eval_result *res, int pass)
{
    double t = 0;
    for (int i = 0; i < res->n_ops; i++)
        t += res->ops[i].pass == pass ? res->ops[i].time_s : 0;
    return t;
}

/* A training step's row of op `name` in pass 0 (forward) or 1 (backward). */
static const struct eval_op *pass_row(const struct eval_result *res, const char *name, int pass)
{
    for (int i = 0; i < res->n_ops; i++)
        if (!strcmp(res->ops[i].name, name) && res->ops[i].pass == pass)
            return &res->ops[i];
    ck_abort_msg("no row '%s' in pass %d", name, pass);
    return NULL;
}

START_TEST(training_step)
{
    struct hw_system *s = topo_fixture(NODE8);
    struct wl_model m;
    test_model("models/llama-3.2-1b.json", &m);
    /* 8 replicas of one device, a global batch of 8 sequences of 128 tokens: one each */
    struct eval_req r = lreq(s, &m, 8, 1, 8, 1, 0);
    r.phase = PH_TRAIN;
    r.skip_capacity = 1; /* the fixture's 16 GiB holds the step's states only from ZeRO 3 */
    struct eval_result a = {0};
    lrun(&r, &a);
    const double P = 1235814400.0; /* Llama 3.2 1B's parameters (tensor_parallel_shard) */
    ck_assert_near(a.t.params, P, 1e-15);
    /* a GEMM's backward costs twice its forward; forward and backward rows come in op order */
    const struct eval_op *fwd = pass_row(&a, "layers.q_proj", 0), *bwd = pass_row(&a, "layers.q_proj", 1);
    ck_assert(bwd > fwd);
    ck_assert_near(bwd->time_s, 2 * fwd->time_s, 1e-12);
    ck_assert_near(bwd->macs, 2 * fwd->macs, 1e-12);
    /* AdamW in mixed precision moves 30 B a parameter: 30 x P / 100 GB/s, ZeRO 0 keeping every state */
    const struct eval_op *opt = row(&a, "optimizer_adamw");
    ck_assert_near(opt->time_s, 30 * P / 1e11, 1e-12);
    /* memory per device: fp16 weights 2 P, fp32 gradients 4 P, master + moments 12 P */
    ck_assert_near(a.t.weight_bytes, 2 * P, 1e-12);
    ck_assert_near(a.t.grad_bytes, 4 * P, 1e-12);
    ck_assert_near(a.t.optimizer_bytes, 12 * P, 1e-12);
    /* the fp32 gradients' all-reduce over the 8 replicas: ring 14 us + 2 x 7/8 x 4P / 1e11 (the tree,
     * 6 us + 2 x 4P / 1e11, is slower), whole without a stack that overlaps it, and less the backward
     * it runs under with one ("overlap": {"grad_reduce": true}) */
    double ar = 14e-6 + 2 * 7.0 / 8 * 4 * P / 1e11, tb = pass_time(&a, 1);
    ck_assert_near(row(&a, "grad_allreduce")->xfer_s, ar, 1e-9);
    struct sw_stack ov;
    pass_none(&ov);
    ov.overlap_grad = 1;
    struct eval_req ro = r;
    ro.sw = &ov;
    struct eval_result ao = {0};
    lrun(&ro, &ao);
    ck_assert_near(row(&ao, "grad_allreduce")->xfer_s, ar > tb ? ar - tb : 0, 1e-9);
    eval_result_free(&ao);
    /* MFU: 6 N per token, 8 x 128 tokens, over 8 devices of 1e13 FLOP/s */
    ck_assert_near(a.t.mfu_pct, 100 * 6 * P * 8 * 128 / (a.t.latency_s * 8 * 1e13), 1e-12);
    ck_assert_near(a.t.tokens_per_s, 8 * 128 / a.t.latency_s, 1e-12);

    /* ZeRO 1 shards the optimizer states and its step over dp, 3 the weights too; full recomputation
     * runs each forward again in the backward: a GEMM's backward is then 3 x its forward */
    struct eval_req z = r;
    z.train.zero = 3;
    z.train.recompute = RC_FULL;
    struct eval_result b = {0};
    lrun(&z, &b);
    ck_assert_near(row(&b, "optimizer_adamw")->time_s, 30 * P / 8 / 1e11, 1e-12);
    ck_assert_near(b.t.optimizer_bytes, 12 * P / 8, 1e-12);
    ck_assert_near(b.t.grad_bytes, 4 * P / 8, 1e-12);
    ck_assert_near(b.t.weight_bytes, 2 * P / 8, 1e-12);
    ck_assert_near(pass_row(&b, "layers.q_proj", 1)->time_s, 3 * pass_row(&b, "layers.q_proj", 0)->time_s, 1e-12);
    /* full recomputation keeps only the layer inputs (16 x 128 x 2048 fp16) and one layer's activations */
    ck_assert(b.t.act_bytes < a.t.act_bytes / 4);
    /* sequence parallelism (a stack's, Megatron-LM's) under tp 2: a layer's tensors of the residual
     * stream's width (input and post-attention norms, o_proj and down_proj outputs, their all-reduces,
     * the two residual adds: 8 of [1, 128, 2048] a layer, 16 layers) are kept 1/2 each */
    struct eval_graphs tg;
    struct dse_err te;
    struct par_layout tpl = {{2, 4, 1}, 1, 1, 1};
    ck_assert_int_eq(eval_graphs_build(&m, PH_TRAIN, 1, 128, &tpl, NULL, &tg, &te), DSE_OK);
    ck_assert_near(tg.act_whole_elems, 8 * 16 * 128 * 2048.0, 1e-12);
    eval_graphs_free(&tg);
    struct sw_stack spst;
    pass_none(&spst);
    struct eval_req rs = lreq(s, &m, 4, 2, 4, 1, 0), rn; /* one sequence a replica, as tg */
    rs.phase = PH_TRAIN;
    rs.skip_capacity = 1;
    rn = rs;
    rn.sw = &spst;
    spst.sequence_parallel = 1;
    struct eval_result sa = {0}, sb = {0};
    rs.sw = NULL;
    lrun(&rs, &sa);
    lrun(&rn, &sb);
    ck_assert_near(sa.t.act_bytes - sb.t.act_bytes, 8 * 16 * 128 * 2048.0 / 2 * 2, 1e-9); /* fp16 */
    eval_result_free(&sa);
    eval_result_free(&sb);
    /* a release's calibrated training efficiency of 0.5 doubles every kernel's time in the step, not the
     * links' (the same stack as z's, or the built-in one) */
    struct sw_stack half;
    if (z.sw)
        half = *z.sw;
    else
        pass_none(&half);
    half.eff[SW_TRAIN] = 0.5;
    struct eval_req rh = z;
    rh.sw = &half;
    struct eval_result h = {0};
    lrun(&rh, &h);
    ck_assert_near(row(&h, "layers.q_proj")->time_s, 2 * row(&b, "layers.q_proj")->time_s, 1e-12);
    ck_assert_near(row(&h, "optimizer_adamw")->time_s, 2 * row(&b, "optimizer_adamw")->time_s, 1e-12);
    ck_assert_near(h.t.comm_s, b.t.comm_s, 1e-12);
    eval_result_free(&h);
    /* an inference stack refuses to train */
    struct sw_stack trt;
    pass_none(&trt);
    trt.trains = 0;
    struct eval_req q = r;
    q.sw = &trt;
    struct eval_result c = {0};
    struct dse_err e;
    struct eval_graphs eg;
    struct eval_scratch sc;
    memset(&sc, 0, sizeof sc);
    ck_assert_int_eq(eval_graphs_build(&m, PH_TRAIN, 1, 128, NULL, &trt, &eg, &e), DSE_OK);
    ck_assert_int_eq(eval_scratch_fit(&sc, &eg, &e), DSE_OK);
    ck_assert_int_eq(eval_point(&q, &eg, &sc, &c, &e), DSE_OK);
    ck_assert(!c.feasible && strstr(c.reason, "is for inference only"));
    eval_scratch_free(&sc);
    eval_graphs_free(&eg);
    eval_result_free(&a);
    eval_result_free(&b);
    eval_result_free(&c);
    wl_model_free(&m);
    free(s);
}
END_TEST

/* Megatron-LM's communication overlaps (a stack's overlap.tp_comm and .param_gather; eval_par.c):
 * a tp all-reduce's halves hidden under the GEMMs beside it, ZeRO's weight gather under the forward */
START_TEST(tp_comm_overlap)
{
    /* exposed = max(0, t/2 - g_prev) + max(0, t/2 - g_next): 10 us beside GEMMs of 3 and 8 us leaves
     * (5 - 3) + 0 = 2; beside nothing all 10; under longer GEMMs 0 */
    ck_assert_near(eval_tp_exposed(10, 3, 8), 2, 1e-15);
    ck_assert_near(eval_tp_exposed(10, 0, 0), 10, 1e-15);
    ck_assert_near(eval_tp_exposed(10, 6, 5), 0, 1e-15);
    struct hw_system *s = topo_fixture(NODE8);
    struct wl_model m;
    test_model("models/llama-3.2-1b.json", &m);
    /* the GEMMs beside a layer's two all-reduces: o_proj before the attention's, gate and up (reading
     * the post-attention norm) after it; down_proj before the MLP's, the next layer's q, k and v after */
    struct eval_graphs eg;
    struct dse_err e;
    struct par_layout tp2 = {{2, 4, 1}, 1, 1, 1};
    ck_assert_int_eq(eval_graphs_build(&m, PH_TRAIN, 1, 128, &tp2, NULL, &eg, &e), DSE_OK);
    const struct wl_graph *g = &eg.first;
    int seen = 0;
    for (int i = 0; i < g->n_op; i++) {
        int prev, next[8], nn;
        if (!strcmp(g->op[i].name, "layers.attn_allreduce")) {
            nn = eval_tp_neighbours(g, i, &prev, next, 8);
            ck_assert(prev >= 0 && !strcmp(g->op[prev].name, "layers.o_proj"));
            ck_assert_int_eq(nn, 2);
            ck_assert(!strcmp(g->op[next[0]].name, "layers.gate_proj") && !strcmp(g->op[next[1]].name, "layers.up_proj"));
            seen++;
        } else if (!strcmp(g->op[i].name, "layers.mlp_allreduce")) {
            nn = eval_tp_neighbours(g, i, &prev, next, 8);
            ck_assert(prev >= 0 && !strcmp(g->op[prev].name, "layers.down_proj"));
            ck_assert_int_eq(nn, 3);
            ck_assert(!strcmp(g->op[next[0]].name, "layers.q_proj") && !strcmp(g->op[next[2]].name, "layers.v_proj"));
            seen++;
        } else if (!strcmp(g->op[i].name, "embed_allreduce")) {
            ck_assert_int_eq(eval_tp_neighbours(g, i, &prev, next, 8), 0); /* not in a layer: nothing beside */
            ck_assert_int_eq(prev, -1);
            seen++;
        }
    }
    ck_assert_int_eq(seen, 3);
    eval_graphs_free(&eg);
    /* in a step (tp 2 x dp 4, ZeRO 1), a layer's forward all-reduce keeps what its GEMMs leave; the
     * weight gather is hidden under the forward, which is longer */
    struct sw_stack plain, over;
    pass_none(&plain);
    pass_none(&over);
    over.overlap_tp = over.overlap_param = 1;
    struct eval_req r = lreq(s, &m, 4, 2, 4, 1, 0), ro;
    r.phase = PH_TRAIN;
    r.skip_capacity = 1;
    r.train.zero = 1;
    r.sw = &plain;
    ro = r;
    ro.sw = &over;
    struct eval_result a = {0}, b = {0};
    lrun(&r, &a);
    lrun(&ro, &b);
    for (int pass = 0; pass < 2; pass++) {
        const struct eval_op *ar = pass_row(&a, "layers.attn_allreduce", pass), *br = pass_row(&b, "layers.attn_allreduce", pass);
        double n = ar->count, t = ar->xfer_s / n;
        double gp = pass_row(&b, "layers.o_proj", pass)->time_s / n;
        double gn = (pass_row(&b, "layers.gate_proj", pass)->time_s + pass_row(&b, "layers.up_proj", pass)->time_s) / n;
        ck_assert(t > 0);
        ck_assert_near(br->xfer_s / n, eval_tp_exposed(t, gp, gn), 1e-9);
        ck_assert(br->xfer_s < ar->xfer_s);
        const struct eval_op *mr = pass_row(&a, "layers.mlp_allreduce", pass), *mb = pass_row(&b, "layers.mlp_allreduce", pass);
        double gq = (pass_row(&b, "layers.q_proj", pass)->time_s + pass_row(&b, "layers.k_proj", pass)->time_s +
                     pass_row(&b, "layers.v_proj", pass)->time_s) / n;
        ck_assert_near(mb->xfer_s / n, eval_tp_exposed(mr->xfer_s / n, pass_row(&b, "layers.down_proj", pass)->time_s / n, gq),
                       1e-9);
    }
    /* the embedding's all-reduce, beside no GEMM of a layer, stays whole */
    ck_assert_near(pass_row(&b, "embed_allreduce", 0)->xfer_s, pass_row(&a, "embed_allreduce", 0)->xfer_s, 1e-12);
    /* ZeRO 1: reduce-scatter under the backward in neither (no grad_reduce overlap), the gather under
     * the forward only with param_gather: the step row loses the gather's time */
    const struct eval_op *sa = row(&a, "grad_reducescatter+param_allgather"), *sb = row(&b, "grad_reducescatter+param_allgather");
    ck_assert(sb->xfer_s < sa->xfer_s);
    struct coll_cost gat;
    int size, stride;
    par_group(&r.layout, PAR_DP, &size, &stride);
    /* a tp 2 shard's 617940992 weights (tensor_parallel_shard) of 2 bytes */
    ck_assert_int_eq(par_coll_cost(&s->topo, COLL_ALLGATHER, size, stride, 617940992.0 * 2, &gat, &e), DSE_OK);
    ck_assert_near(sa->xfer_s - sb->xfer_s, gat.time_s, 1e-9);
    eval_result_free(&a);
    eval_result_free(&b);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(expert_parallel)
{
    struct hw_system *s = topo_fixture(NODE8);
    struct wl_model m;
    test_model("models/mixtral-8x7b.json", &m);
    struct eval_req r1 = lreq(s, &m, 1, 1, 8, 1, 0), r2 = r1;
    r2.layout.ep = 2;
    r1.skip_capacity = r2.skip_capacity = 1;
    struct eval_result a = {0}, b = {0};
    lrun(&r1, &a);
    lrun(&r2, &b);
    /* the prefill's 128 tokens x top-2 = 256 rows of 4096 fp16 go to the devices of their experts: an
     * all-to-all of 2097152 B over 2 of the switch sends half, 1 us + 1048576 / 1e11, each way, per layer */
    double a2a = 1e-6 + 1048576 / 1e11;
    ck_assert_near(row(&b, "layers.moe_dispatch_alltoall")->xfer_s, 32 * a2a, 1e-9);
    ck_assert_near(row(&b, "layers.moe_combine_alltoall")->xfer_s, 32 * a2a, 1e-9);
    /* the model's parameters and a token's active ones are the whole model's, not the shard's (a shard
     * holding 4 of 8 experts once counted more active parameters than a token uses) */
    ck_assert_near(b.t.params, a.t.params, 1e-15);
    ck_assert_near(b.t.active_params, a.t.active_params, 1e-15);
    ck_assert(b.t.active_params < b.t.params);
    /* half of each layer's 8 experts (3 x 4096 x 14336 parameters each) per device */
    ck_assert_near(a.t.weight_bytes - b.t.weight_bytes, 2.0 * 32 * 4 * 3 * 4096.0 * 14336, 1e-9);
    /* the rows the experts compute: balanced, the same per device; the busiest of an imbalance 1.5 has
     * 1.5 x as many */
    struct eval_req r3 = r2;
    r3.layout.moe_imbalance = 1.5;
    struct eval_result c = {0};
    lrun(&r3, &c);
    ck_assert_near(row(&c, "layers.experts.gate_proj")->macs, 1.5 * row(&b, "layers.experts.gate_proj")->macs, 1e-12);
    struct dse_err e;
    struct eval_req bad = r2;
    bad.layout.ep = 3;
    ck_assert_int_eq(par_layout_complete(s, &bad.layout, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "ep 3 must divide dp 8"), "%s", e.msg);
    eval_result_free(&a);
    eval_result_free(&b);
    eval_result_free(&c);
    wl_model_free(&m);
    test_model("models/llama-3.2-1b.json", &m);
    struct eval_req dense = lreq(s, &m, 1, 1, 8, 1, 0);
    dense.layout.ep = 2;
    ck_assert_int_eq(eval_check_layout(&dense, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "expert parallelism (ep 2) spreads a mixture of experts' experts; llama-3.2-1b has none"),
                  "%s", e.msg);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(context_parallel)
{
    struct hw_system *s = topo_fixture(NODE8);
    struct wl_model m;
    test_model("models/llama-3.2-1b.json", &m);
    struct eval_req r1 = lreq(s, &m, 1, 1, 8, 1, 0), r2 = r1;
    r2.layout.n[PAR_CP] = 2;
    r2.layout.n[PAR_DP] = 0;
    struct dse_err e;
    ck_assert_int_eq(par_layout_complete(s, &r2.layout, &e), DSE_OK);
    ck_assert(r2.layout.n[PAR_DP] == 4);
    struct eval_result a = {0}, b = {0};
    lrun(&r1, &a);
    lrun(&r2, &b);
    /* each device: 64 of the 128 tokens, the causal pairs of 128 queries (128 x 129 / 2 = 8256) shared two
     * ways (4128 each), every GEMM on half the rows; the rows' MACs are the system's, and 4 replicas of 2
     * devices do half the work of 8 of 1 */
    ck_assert_near(row(&b, "layers.attention")->macs, row(&a, "layers.attention")->macs / 2, 1e-12);
    ck_assert_near(row(&b, "layers.q_proj")->macs, row(&a, "layers.q_proj")->macs / 2, 1e-12);
    ck_assert_near(row(&b, "layers.attention")->macs, 8 * 16 * 4128.0 * 32 * 2 * 64, 1e-12); /* 8 devices, 16 layers,
                                                                                        32 heads, QK and PV of 64 */
    /* keys and values gathered: [1, 128, 8 x 64] fp16 = 131072 B over 2 of the switch (ring: 1 us +
     * 1/2 x 131072 / 1e11), each of 16 layers */
    ck_assert_near(row(&b, "layers.k_cp_allgather")->xfer_s, 16 * (1e-6 + 0.5 * 131072 / 1e11), 1e-9);
    ck_assert(b.t.devices == 8);
    eval_result_free(&a);
    eval_result_free(&b);
    /* a decode step over a 128-token cache: 64 rows of it per device, the attention's output
     * [1, 1, 2048] fp16 = 4096 B all-reduced over the 2 (ring 2 us + 4096 / 1e11) */
    struct eval_req d = r2;
    d.phase = PH_DECODE;
    lrun(&d, &b);
    ck_assert_near(row(&b, "layers.attn_cp_allreduce")->xfer_s, 16 * (2e-6 + 4096 / 1e11), 1e-9);
    ck_assert_near(b.t.kv_bytes, 16 * 2 * 64 * 512 * 2.0 + 16 * 2 * 512 * 2.0, 1e-12); /* 64 cached + the new row */
    eval_result_free(&b);
    struct eval_req odd = r2;
    odd.prompt = 127;
    ck_assert_int_eq(eval_check_layout(&odd, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "127 tokens do not split over cp 2"), "%s", e.msg);
    wl_model_free(&m);
    free(s);
}
END_TEST

Suite *make_par_suite(void)
{
    Suite *s = suite_create("par");
    TCase *t = tcase_create("par");
    tcase_add_test(t, switch_collectives);
    tcase_add_test(t, hierarchical_collectives);
    tcase_add_test(t, ring_and_torus_collectives);
    tcase_add_test(t, layouts);
    tcase_add_loop_test(t, bad_topologies, 0, (int)(sizeof bad_topo / sizeof bad_topo[0]));
    tcase_add_test(t, tensor_parallel_shard);
    tcase_add_test(t, data_parallel_replicas);
    tcase_add_test(t, pipeline_stages);
    tcase_add_test(t, pipeline_factors);
    tcase_add_test(t, uneven_pipeline_stages);
    tcase_add_test(t, layout_search);
    tcase_add_test(t, training_step);
    tcase_add_test(t, tp_comm_overlap);
    tcase_add_test(t, expert_parallel);
    tcase_add_test(t, context_parallel);
    suite_add_tcase(s, t);
    return s;
}
