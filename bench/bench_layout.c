/* bench_layout.c -- multi-device figures of issue 11, printed (not asserted): the time of one
 * multi-device evaluation on prebuilt graphs (Llama-2-70B, tp 8 x pp 1 and tp 4 x pp 2 on a DGX H100,
 * generate 128 tokens after a 512-token prompt), and the automatic layout search for GPT-3 175B
 * training on 1024 A100s (128 DGX A100 nodes), with the count of layouts searched.
 * Usage: bench/bench_layout (run from the source tree; bench/run.sh runs it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eval.h"
#include "eval_layout.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int fail(const struct dse_err *e)
{
    fprintf(stderr, "bench_layout: %s\n", e->msg);
    return 1;
}

static struct eval_req request(const struct hw_system *s, const struct wl_model *m, const struct sw_stack *sw)
{
    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = s;
    r.dev = s->topo.dev;
    for (int t = 0; t < OP_COUNT; t++)
        r.type_dev[t] = -1;
    r.model = m;
    r.sw = sw;
    r.x.prec.w = r.x.prec.a = r.x.prec.kv = P_FP16;
    return r;
}

/* Mean time of one eval_point on graphs built once (what a sweep pays per point). */
static int time_eval(const char *label, struct eval_req *r, struct dse_err *e)
{
    struct eval_graphs eg;
    struct eval_scratch s;
    struct eval_result res = {0};
    memset(&s, 0, sizeof s);
    if (par_layout_complete(r->sys, &r->layout, e) || eval_check_layout(r, e) ||
        eval_graphs_build(r->model, r->phase, eval_micro_batch(r), r->prompt, &r->layout, r->sw, &eg, e))
        return 1;
    if (eval_scratch_fit(&s, &eg, e))
        return 1;
    int n = 0;
    double t0 = now(), t;
    do {
        if (eval_point(r, &eg, &s, &res, e))
            return 1;
        n++;
    } while ((t = now() - t0) < 0.5);
    printf("%-58s %9.3f ms per evaluation (%d runs; %s, %.4g tokens/s)\n", label, t / n * 1e3, n,
           res.feasible ? "feasible" : res.reason, res.t.tokens_per_s);
    eval_scratch_free(&s);
    eval_graphs_free(&eg);
    eval_result_free(&res);
    return 0;
}

int main(void)
{
    struct dse_err e;
    struct hw_system *node = malloc(sizeof *node), *cl = malloc(sizeof *cl);
    struct wl_model m70, m175;
    struct sw_stack trt, meg;
    if (!node || !cl)
        return 1;
    if (hw_load_file("hwdesc/nvidia-dgx-h100.json", node, &e) || hw_load_file("hwdesc/nvidia-a100-cluster-32node.json", cl, &e) ||
        wl_load_file("models/llama-2-70b.json", &m70, &e) || wl_load_file("models/gpt-megatron-175b.json", &m175, &e) ||
        pass_load_file("software/tensorrt.json", &trt, &e) || pass_load_file("software/megatron.json", &meg, &e))
        return fail(&e);
    struct eval_req r = request(node, &m70, &trt);
    r.phase = PH_GENERATE;
    r.batch = 16;
    r.prompt = 512;
    r.gen = 128;
    r.layout = (struct par_layout){{8, 1, 1}, 1, 1, 1};
    if (time_eval("llama-2-70b generate 512+128, batch 16, DGX H100 tp 8", &r, &e))
        return fail(&e);
    r.layout = (struct par_layout){{4, 1, 2}, 2, 1, 1};
    if (time_eval("llama-2-70b generate 512+128, batch 16, DGX H100 tp 4 x pp 2", &r, &e))
        return fail(&e);

    cl->topo.level[cl->topo.n_level - 1].count = 128; /* 128 DGX A100 nodes: 1024 GPUs */
    cl->topo.devices = cl->topo.level[0].count * 128;
    struct eval_req t = request(cl, &m175, &meg);
    t.phase = PH_TRAIN;
    t.batch = 1536;
    t.prompt = 2048;
    t.train.zero = 1;
    t.train.recompute = RC_FULL;
    struct layout_choice best[8];
    struct layout_stats st;
    double t0 = now();
    if (eval_layout_search(&t, metric_find("mfu_pct"), best, 8, &st, &e))
        return fail(&e);
    double dt = now() - t0;
    printf("%-58s %9.3f s for %lld layouts (%lld refused, %lld infeasible); best tp %d x cp %d x dp %d x pp %d, %d "
           "micro-batches: MFU %.1f %%\n",
           "layout search: gpt-megatron-175b training, 1024 A100", dt, st.searched, st.refused, st.infeasible,
           best[0].layout.n[PAR_TP], best[0].layout.n[PAR_CP], best[0].layout.n[PAR_DP], best[0].layout.n[PAR_PP],
           best[0].layout.microbatches, best[0].value);
    wl_model_free(&m70);
    wl_model_free(&m175);
    free(node);
    free(cl);
    return 0;
}
