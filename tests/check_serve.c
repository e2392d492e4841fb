/* check_serve.c -- the serving simulation (serve.h): schedulers traced by hand on a synthetic iteration
 * cost, preemption, replicas, the capacity search, traces and their errors, and the cost built from a
 * real evaluation. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_fixtures.h"
#include "check_suites.h"
#include "eval.h"
#include "par.h"
#include "serve.h"

/* A synthetic cost: lin(N) = A + B (N - 1) (grid 1 and 1025), logits L0 per sequence, decode attention
 * D per key beyond a 1-token cache (a cache of c tokens: c - 1), prefill attention Q per pair; no
 * energy, no idle power. */
#define A 10e-3
#define B 10e-6
#define L0 0.1e-3
#define D 1e-6
#define Q 1e-7
static struct serve_cost synth(double kv_tokens)
{
    struct serve_cost c;
    memset(&c, 0, sizeof c);
    c.n_grid = 2;
    c.tok[0] = 1;
    c.tok[1] = 1025;
    c.lin_s[0] = A;
    c.lin_s[1] = A + 1024 * B;
    c.lg_s[0] = L0;
    c.lg_s[1] = 1025 * L0;
    c.dec_ctx_s = D;
    c.pre_pair_s = Q;
    c.kv_capacity_tokens = kv_tokens;
    c.kv_token_bytes = 1;
    c.replicas = 1;
    c.devices = 1;
    c.usd_per_s = NAN;
    return c;
}

static struct serve_cfg cfg_of(enum serve_sched s, int64_t budget, int block)
{
    struct serve_cfg g;
    memset(&g, 0, sizeof g);
    g.sched = s;
    g.max_batch = 256;
    g.max_batched_tokens = budget;
    g.block_tokens = block;
    return g;
}

START_TEST(iteration_cost)
{
    struct serve_cost c = synth(1e6);
    /* lin(100) = A + 99 B between the grid points; beyond the last, its segment extended */
    ck_assert_double_eq_tol(serve_iter_s(&c, 100, 0, 0, 0, NULL), A + 99 * B, 1e-15);
    ck_assert_double_eq_tol(serve_iter_s(&c, 2049, 0, 0, 0, NULL), A + 2048 * B, 1e-15);
    /* each term adds: 3 sequences' logits, 500 cached tokens, 40 pairs */
    ck_assert_double_eq_tol(serve_iter_s(&c, 1, 3, 500, 40, NULL), A + 3 * L0 + 500 * D + 40 * Q, 1e-15);
    ck_assert_double_eq_tol(serve_iter_s(&c, 0, 0, 0, 0, NULL), 0, 1e-15);
    /* a runtime's host work per emitted token (per_token_us) and the gap energy over it count per
     * sequence that emits one (L = 3), not per token run (N = 1) */
    c.tok_s = 430e-6;
    c.tok_J = 430e-6 * 124;
    double J;
    ck_assert_double_eq_tol(serve_iter_s(&c, 1, 3, 500, 40, &J), A + 3 * L0 + 3 * 430e-6 + 500 * D + 40 * Q, 1e-15);
    ck_assert_double_eq_tol(J, 3 * 430e-6 * 124, 1e-15);
}
END_TEST

START_TEST(continuous_one_request)
{
    /* prompt 100, output 4: a prefill of 100 tokens (5050 pairs, one token out), then 3 decode steps
     * over caches of 100, 101 and 102 tokens (99 + 100 + 101 keys beyond one) */
    struct serve_cost c = synth(1e6);
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 16);
    struct serve_req r = {0, 100, 4};
    struct serve_result res;
    struct dse_err e;
    ck_assert_int_eq(serve_run(&c, &g, &r, 1, 1, &res, &e), DSE_OK);
    double ttft = A + 99 * B + L0 + 5050 * Q;
    double dec = 3 * (A + L0) + (99 + 100 + 101) * D;
    ck_assert_double_eq_tol(res.ttft_s.p50, ttft, 1e-12);
    ck_assert_double_eq_tol(res.e2e_s.p50, ttft + dec, 1e-12);
    ck_assert_double_eq_tol(res.tpot_s.p50, dec / 3, 1e-12);
    ck_assert_int_eq(res.iterations, 4);
    ck_assert_int_eq(res.output_tokens, 4);
    ck_assert_double_eq_tol(res.makespan_s, ttft + dec, 1e-12);
    ck_assert_double_eq_tol(res.batch_mean, 1, 1e-12);
    serve_result_free(&res);
}
END_TEST

START_TEST(continuous_preemption)
{
    /* KV of 10 tokens in blocks of 1; two requests (prompt 4, output 5) at t = 0. Both prefill (5 blocks
     * each: the prompt and the first decode token), decode once (cache 5); the next step needs 2 blocks
     * with none free: the later request is preempted (5 blocks back). The first decodes 3 more steps
     * alone (caches 6, 7, 8) and finishes; the second is prefilled again over prompt + its 2 tokens (6)
     * and decodes twice. 1 preemption, 1 + 1 + 3 + 1 + 2 = 8 iterations. */
    struct serve_cost c = synth(10);
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 1);
    struct serve_req r[2] = {{0, 4, 5}, {0, 4, 5}};
    struct serve_result res;
    struct dse_err e;
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 1, &res, &e), DSE_OK);
    ck_assert_int_eq(res.preemptions, 1);
    ck_assert_int_eq(res.iterations, 8);
    ck_assert_int_eq(res.completed, 2);
    /* both first tokens come from the first prefill: lin(8) + 2 logits + 2 x 10 pairs */
    double t1 = A + 7 * B + 2 * L0 + 20 * Q;
    ck_assert_double_eq_tol(res.ttft_all[0], t1, 1e-12);
    ck_assert_double_eq_tol(res.ttft_all[1], t1, 1e-12);
    /* the first finishes after steps over caches 4 + 4, then 5, 6, 7 alone (keys beyond one: 3 + 3, 4, 5,
     * 6); the second's prefill of 6 (21 pairs), then caches 6 and 7 */
    double d1 = t1 + (A + B + 2 * L0 + 6 * D) + (A + L0 + 4 * D) + (A + L0 + 5 * D) + (A + L0 + 6 * D);
    ck_assert_double_eq_tol(res.e2e_all[0], d1, 1e-12);
    double d2 = d1 + (A + 5 * B + L0 + 21 * Q) + (A + L0 + 5 * D) + (A + L0 + 6 * D);
    ck_assert_double_eq_tol(res.e2e_all[1], d2, 1e-12);
    serve_result_free(&res);
    /* a request that could never fit is refused, naming it */
    struct serve_req big = {0, 8, 5};
    ck_assert_int_eq(serve_run(&c, &g, &big, 1, 0, &res, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "request 1 (prompt 8 + output 5 tokens) needs more KV cache than the 10 tokens"), "%s",
                  e.msg);
}
END_TEST

START_TEST(reserved_admission)
{
    /* continuous_preemption's two requests with blocks reserved for prompt + output (9 of the 10): the
     * second waits for the first to finish, nobody is preempted. Each: a prefill of 4 (10 pairs), then
     * decode steps over caches of 4, 5, 6, 7 (keys beyond one: 3, 4, 5, 6). */
    struct serve_cost c = synth(10);
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 1);
    g.admit = ADMIT_RESERVE;
    struct serve_req r[2] = {{0, 4, 5}, {0, 4, 5}};
    struct serve_result res;
    struct dse_err e;
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 1, &res, &e), DSE_OK);
    double one = (A + 3 * B + L0 + 10 * Q) + 4 * (A + L0) + (3 + 4 + 5 + 6) * D;
    ck_assert_int_eq(res.preemptions, 0);
    ck_assert_int_eq(res.iterations, 10);
    ck_assert_double_eq_tol(res.e2e_all[0], one, 1e-12);
    ck_assert_double_eq_tol(res.e2e_all[1], 2 * one, 1e-12);
    serve_result_free(&res);
    /* the in-flight scheduler reserves by default */
    struct serve_cfg d = cfg_of(SCHED_INFLIGHT, 0, 0);
    d.max_batched_tokens = 0;
    serve_cfg_defaults(&d, 100);
    ck_assert(d.admit == ADMIT_RESERVE && d.max_batched_tokens == 8192 && d.block_tokens == 16);
}
END_TEST

START_TEST(prefix_caching)
{
    /* two requests of prompt 10 (output 2) whose first 8 tokens are a shared prefix, blocks of 4: the
     * first, alone, prefills all 10 (55 pairs) and leaves the prefix's 2 blocks to the cache; the second,
     * arriving after it finished, prefills only its last 2 tokens after the 8 cached (2 x 8 + 3 = 19
     * pairs). Each then decodes once over a cache of 10 (9 keys beyond one). */
    struct serve_cost c = synth(1e6);
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 4);
    g.prefix_tokens = 8;
    struct serve_req r[2] = {{0, 10, 2}, {1, 10, 2}};
    struct serve_result res;
    struct dse_err e;
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 1, &res, &e), DSE_OK);
    double first = (A + 9 * B + L0 + 55 * Q) + (A + L0 + 9 * D), second = (A + B + L0 + 19 * Q) + (A + L0 + 9 * D);
    ck_assert_double_eq_tol(res.e2e_all[0], second, 1e-12);
    ck_assert_double_eq_tol(res.e2e_all[1], first, 1e-12);
    ck_assert_double_eq_tol(res.ttft_all[0], A + B + L0 + 19 * Q, 1e-12);
    serve_result_free(&res);
    /* chunked prefill starts the second's chunk after the cached prefix as well */
    g.sched = SCHED_CHUNKED;
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 1, &res, &e), DSE_OK);
    ck_assert_double_eq_tol(res.ttft_all[0], A + B + L0 + 19 * Q, 1e-12);
    serve_result_free(&res);
    /* a prefix on a share of the requests: none of them carries a share of 0.0001 but the first */
    g.sched = SCHED_CONTINUOUS;
    g.prefix_share = 1e-4;
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 1, &res, &e), DSE_OK);
    ck_assert_double_eq_tol(res.e2e_all[1], first, 1e-12); /* the second computes its whole prompt */
    ck_assert_double_eq_tol(res.e2e_all[0], first, 1e-12);
    serve_result_free(&res);
    g.sched = SCHED_STATIC;
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 0, &res, &e), DSE_EINPUT);
    /* a cache of 2 blocks of 4: the first request (prompt 5, output 1; the only carrier) leaves its
     * prefix's block to the cache; the second (no prefix; prompt 5 + its first token: 2 blocks) finds one
     * free, and no running sequence uses the prefix: its block is evicted (as vLLM evicts cached blocks no
     * sequence references), and the second runs: a prefill of 5 (15 pairs), a decode over a cache of 5 */
    struct serve_cost small = synth(10);
    struct serve_cfg h = cfg_of(SCHED_CONTINUOUS, 8192, 4);
    h.prefix_tokens = 4;
    h.prefix_share = 1e-4;
    struct serve_req two[2] = {{0, 5, 1}, {1, 5, 2}};
    ck_assert_msg(serve_run(&small, &h, two, 2, 1, &res, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_eq(res.prefix_evictions, 1);
    ck_assert_double_eq_tol(res.kv_use_peak, 1, 1e-15);
    ck_assert_double_eq_tol(res.e2e_all[1], (A + 4 * B + L0 + 15 * Q) + (A + L0 + 4 * D), 1e-12);
    serve_result_free(&res);
}
END_TEST

START_TEST(swap_preemption)
{
    /* continuous_preemption's two requests with swap: the preempted one's cache of 5 tokens (1 B each
     * here) goes to the host at 1000 B/s (5 ms, paid by the iteration after it), and comes back (5 ms
     * more) when 6 blocks are free, after the first finishes; then it decodes on (caches 5, 6, 7): no
     * prefill again. 8 iterations, 1 preemption. */
    struct serve_cost c = synth(10);
    c.swap_Bps = 1000;
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 1);
    g.preempt = PREEMPT_SWAP;
    struct serve_req r[2] = {{0, 4, 5}, {0, 4, 5}};
    struct serve_result res;
    struct dse_err e;
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 1, &res, &e), DSE_OK);
    double t1 = A + 7 * B + 2 * L0 + 20 * Q, sw = 5 / 1000.0;
    double d1 = t1 + (A + B + 2 * L0 + 6 * D) + (A + L0 + 4 * D + sw) + (A + L0 + 5 * D) + (A + L0 + 6 * D);
    double d2 = d1 + (A + L0 + 4 * D + sw) + (A + L0 + 5 * D) + (A + L0 + 6 * D);
    ck_assert_int_eq(res.preemptions, 1);
    ck_assert_int_eq(res.iterations, 8);
    ck_assert_double_eq_tol(res.e2e_all[0], d1, 1e-12);
    ck_assert_double_eq_tol(res.e2e_all[1], d2, 1e-12);
    serve_result_free(&res);
    /* without a host link there is nowhere to swap to */
    c.swap_Bps = 0;
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 0, &res, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "swap preemption copies caches to the host"), "%s", e.msg);
}
END_TEST

START_TEST(disaggregation)
{
    /* 2 replicas, 1 prefilling and 1 decoding: prompt 100, output 4. The prefill replica emits the first
     * token (continuous_one_request's TTFT); the cache, 100 tokens of 1 B at 1000 B/s (0.1 s), reaches
     * the decode replica, which decodes over caches of 100, 101, 102 tokens */
    struct serve_cost c = synth(1e6);
    c.replicas = 2;
    c.xfer_Bps = 1000;
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 16);
    g.prefill_replicas = 1;
    struct serve_req r = {0, 100, 4};
    struct serve_result res;
    struct dse_err e;
    ck_assert_int_eq(serve_run(&c, &g, &r, 1, 1, &res, &e), DSE_OK);
    double ttft = A + 99 * B + L0 + 5050 * Q, e2e = ttft + 0.1 + 3 * (A + L0) + (99 + 100 + 101) * D;
    ck_assert_double_eq_tol(res.ttft_s.p50, ttft, 1e-12);
    ck_assert_double_eq_tol(res.e2e_s.p50, e2e, 1e-12);
    ck_assert_double_eq_tol(res.tpot_s.p50, (e2e - ttft) / 3, 1e-12);
    serve_result_free(&res);
    /* a request of one output token is done at its prefill */
    struct serve_req one = {0, 100, 1};
    ck_assert_int_eq(serve_run(&c, &g, &one, 1, 0, &res, &e), DSE_OK);
    ck_assert_double_eq_tol(res.e2e_s.p50, ttft, 1e-12);
    serve_result_free(&res);
    /* every replica prefilling leaves none to decode; no topology, nothing to send the cache over */
    g.prefill_replicas = 2;
    ck_assert_int_eq(serve_run(&c, &g, &r, 1, 0, &res, &e), DSE_EINPUT);
    g.prefill_replicas = 1;
    c.xfer_Bps = 0;
    ck_assert_int_eq(serve_run(&c, &g, &r, 1, 0, &res, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "no topology to send it over"), "%s", e.msg);
}
END_TEST

START_TEST(chunked_prefill)
{
    /* prompt 10, output 2, a budget of 4 tokens: chunks 4, 4, 2 (pairs 0 x 4 + 10, 4 x 4 + 10, 8 x 2 + 3),
     * the last emits the first token; one decode step over a cache of 10 (9 keys beyond one) */
    struct serve_cost c = synth(1e6);
    struct serve_cfg g = cfg_of(SCHED_CHUNKED, 4, 16);
    struct serve_req r = {0, 10, 2};
    struct serve_result res;
    struct dse_err e;
    ck_assert_int_eq(serve_run(&c, &g, &r, 1, 1, &res, &e), DSE_OK);
    double ttft = (A + 3 * B + 10 * Q) + (A + 3 * B + 26 * Q) + (A + B + L0 + 19 * Q);
    ck_assert_int_eq(res.iterations, 4);
    ck_assert_double_eq_tol(res.ttft_s.p50, ttft, 1e-12);
    ck_assert_double_eq_tol(res.e2e_s.p50, ttft + A + L0 + 9 * D, 1e-12);
    serve_result_free(&res);
    /* a decoding sequence and a new prompt share an iteration: the second arrives during the first's
     * prefill, its chunk rides with the first's decode step (budget 4: 1 decode + 3 prefill) */
    struct serve_req two[2] = {{0, 4, 3}, {1e-9, 3, 1}};
    ck_assert_int_eq(serve_run(&c, &g, two, 2, 1, &res, &e), DSE_OK);
    /* iteration 1: the first's 4 prompt tokens (10 pairs); iteration 2: its decode (cache 4) and the
     * second's whole prompt (6 pairs), both emit; iteration 3: the first's last decode (cache 5) */
    double i1 = A + 3 * B + L0 + 10 * Q, i2 = A + 3 * B + 2 * L0 + 3 * D + 6 * Q, i3 = A + L0 + 4 * D;
    ck_assert_int_eq(res.iterations, 3);
    ck_assert_double_eq_tol(res.e2e_all[0], i1 + i2 - 1e-9, 1e-12); /* the second's: arrived at 1 ns */
    ck_assert_double_eq_tol(res.e2e_all[1], i1 + i2 + i3, 1e-12);
    serve_result_free(&res);
    /* in-flight batching runs the same iterations (the prompts fit the budget whole) */
    g.sched = SCHED_INFLIGHT;
    ck_assert_int_eq(serve_run(&c, &g, two, 2, 1, &res, &e), DSE_OK);
    ck_assert_int_eq(res.iterations, 3);
    ck_assert_double_eq_tol(res.e2e_all[1], i1 + i2 + i3, 1e-12);
    serve_result_free(&res);
    /* continuous batching (prefills first) runs the second's prefill alone (3 tokens, 6 pairs), then
     * the first's two decode steps (caches 4 and 5) */
    g.sched = SCHED_CONTINUOUS;
    ck_assert_int_eq(serve_run(&c, &g, two, 2, 1, &res, &e), DSE_OK);
    double p2 = A + 2 * B + L0 + 6 * Q;
    ck_assert_int_eq(res.iterations, 4);
    ck_assert_double_eq_tol(res.e2e_all[0], i1 + p2 - 1e-9, 1e-12);
    ck_assert_double_eq_tol(res.e2e_all[1], i1 + p2 + (A + L0 + 3 * D) + (A + L0 + 4 * D), 1e-12);
    serve_result_free(&res);
    /* in-flight batching does not cut a prompt: one over the budget is refused */
    g.sched = SCHED_INFLIGHT;
    struct serve_req longp = {0, 10, 2};
    ck_assert_int_eq(serve_run(&c, &g, &longp, 1, 0, &res, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "exceeds the iteration budget of 4 tokens"), "%s", e.msg);
}
END_TEST

START_TEST(static_batches)
{
    /* two requests (prompt 3, output 2; prompt 5, output 4) in one batch: padded prefill 2 x 5 tokens,
     * 2 x 15 pairs; decode step s = 1..3 over caches of 5 + s - 1 (2 x (5 + s - 2) keys beyond one);
     * the first done after step 1 */
    struct serve_cost c = synth(1e6);
    struct serve_cfg g = cfg_of(SCHED_STATIC, 1 << 20, 1);
    struct serve_req r[2] = {{0, 3, 2}, {0, 5, 4}};
    struct serve_result res;
    struct dse_err e;
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 1, &res, &e), DSE_OK);
    double pre = A + 9 * B + 2 * L0 + 30 * Q, s1 = A + B + 2 * L0 + 8 * D, s2 = A + B + 2 * L0 + 10 * D,
           s3 = A + B + 2 * L0 + 12 * D;
    ck_assert_double_eq_tol(res.e2e_all[0], pre + s1, 1e-12);
    ck_assert_double_eq_tol(res.e2e_all[1], pre + s1 + s2 + s3, 1e-12);
    ck_assert_int_eq(res.iterations, 4);
    serve_result_free(&res);
}
END_TEST

START_TEST(replicas_and_percentiles)
{
    /* four identical requests 1 s apart over 2 replicas: each replica serves every other one, alone,
     * so every request takes one request's time; over 1 replica likewise (1 s apart is idle between) */
    struct serve_cost c = synth(1e6);
    c.replicas = 2;
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 16);
    struct serve_req r[4] = {{0, 100, 4}, {1, 100, 4}, {2, 100, 4}, {3, 100, 4}};
    struct serve_result res;
    struct dse_err e;
    ck_assert_int_eq(serve_run(&c, &g, r, 4, 0, &res, &e), DSE_OK);
    double one = A + 99 * B + L0 + 5050 * Q + 3 * (A + L0) + (99 + 100 + 101) * D;
    ck_assert_double_eq_tol(res.e2e_s.max, one, 1e-12);
    ck_assert_double_eq_tol(res.makespan_s, 3 + one, 1e-12);
    ck_assert_double_eq_tol(res.throughput_rps, 4 / (3 + one), 1e-12);
    serve_result_free(&res);
    /* SLO attainment: a TTFT limit below one prefill fails everyone, above it passes everyone */
    g.slo_ttft_s = 1e-3;
    ck_assert_int_eq(serve_run(&c, &g, r, 4, 0, &res, &e), DSE_OK);
    ck_assert_double_eq_tol(res.slo_attainment, 0, 1e-15);
    serve_result_free(&res);
    g.slo_ttft_s = 1;
    ck_assert_int_eq(serve_run(&c, &g, r, 4, 0, &res, &e), DSE_OK);
    ck_assert_double_eq_tol(res.slo_attainment, 1, 1e-15);
    ck_assert_double_eq_tol(res.goodput_rps, res.throughput_rps, 1e-15);
    serve_result_free(&res);
}
END_TEST

START_TEST(capacity_search)
{
    /* fixed lengths, Poisson arrivals: the capacity meets the attainment, half again above it does not */
    struct serve_cost c = synth(1e6);
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 16);
    g.slo_ttft_s = 0.2;
    struct serve_dist p = {SD_FIXED, 200, 0}, o = {SD_FIXED, 50, 0};
    struct serve_req *u;
    struct dse_err e;
    ck_assert_int_eq(serve_trace_make(SA_POISSON, 1, 0, 2000, &p, &o, NULL, 0, 7, &u, &e), DSE_OK);
    struct serve_capacity_result cap;
    struct serve_result at;
    ck_assert_int_eq(serve_capacity(&c, &g, u, 2000, 0.9, 0.02, &cap, &at, &e), DSE_OK);
    double rate = cap.rate_rps;
    ck_assert(cap.feasible && rate > 0 && cap.evals >= 3 && cap.evals < 40);
    ck_assert(at.slo_attainment >= 0.9);
    ck_assert_double_eq_tol(cap.lower_bound_rps, cap.top_rps * SERVE_CAPACITY_FLOOR, 1e-15 * cap.top_rps);
    ck_assert(rate >= cap.lower_bound_rps && rate <= cap.top_rps);
    serve_result_free(&at);
    struct serve_req *v = malloc(sizeof *v * 2000);
    for (int i = 0; i < 2000; i++) {
        v[i] = u[i];
        v[i].arrival_s = u[i].arrival_s / (1.5 * rate);
    }
    struct serve_result hi;
    ck_assert_int_eq(serve_run(&c, &g, v, 2000, 0, &hi, &e), DSE_OK);
    ck_assert(hi.slo_attainment < 0.9);
    serve_result_free(&hi);
    /* the same seed gives the same requests */
    struct serve_req *u2;
    ck_assert_int_eq(serve_trace_make(SA_POISSON, 1, 0, 2000, &p, &o, NULL, 0, 7, &u2, &e), DSE_OK);
    ck_assert(!memcmp(u, u2, sizeof *u * 2000));
    free(u2);
    free(u);
    free(v);
}
END_TEST

START_TEST(traces)
{
    struct serve_dist d;
    struct dse_err e;
    ck_assert_int_eq(serve_dist_parse("--prompt-dist", "uniform:10-20", &d, &e), DSE_OK);
    ck_assert(d.kind == SD_UNIFORM && d.a == 10 && d.b == 20);
    ck_assert_int_eq(serve_dist_parse("--prompt-dist", "normal:512,64", &d, &e), DSE_OK);
    ck_assert_int_eq(serve_dist_parse("--prompt-dist", "uniform:20-10", &d, &e), DSE_EINPUT);
    ck_assert_int_eq(serve_dist_parse("--output-dist", "fixed:0", &d, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "--output-dist: expected fixed:N"), "%s", e.msg);
    /* uniform draws stay in range; gamma arrivals keep their mean rate */
    struct serve_req *v;
    ck_assert_int_eq(serve_dist_parse("--prompt-dist", "uniform:10-20", &d, &e), DSE_OK);
    struct serve_dist o = {SD_FIXED, 3, 0};
    ck_assert_int_eq(serve_trace_make(SA_GAMMA, 5, 2, 20000, &d, &o, NULL, 0, 3, &v, &e), DSE_OK);
    for (int i = 0; i < 20000; i++)
        ck_assert(v[i].prompt >= 10 && v[i].prompt <= 20 && v[i].output == 3 && (!i || v[i].arrival_s >= v[i - 1].arrival_s));
    double rate = 19999 / v[19999].arrival_s; /* mean inter-arrival 0.2 s; cv 2 over 20000 gaps: within 5 % */
    ck_assert_msg(fabs(rate / 5 - 1) < 0.05, "rate %g", rate);
    free(v);
    ck_assert_int_eq(serve_trace_make(SA_POISSON, -1, 0, 10, &d, &o, NULL, 0, 3, &v, &e), DSE_EINPUT);
    /* a trace file: its rows, and its errors by line */
    char p[512];
    ck_assert_int_eq(serve_trace_load(src_path(p, sizeof p, "tests/data/serve-trace-ok.csv"), 1000, &v, &(int64_t){0}, &e),
                     DSE_OK);
    ck_assert(v[0].arrival_s == 0 && v[0].prompt == 100 && v[2].output == 7);
    free(v);
    int64_t n;
    ck_assert_int_eq(serve_trace_load(src_path(p, sizeof p, "tests/data/bad-serve-trace-unsorted.csv"), 1000, &v, &n, &e),
                     DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "line 5: arrival_s 0.5 is earlier than the line before"), "%s", e.msg);
    ck_assert_int_eq(serve_trace_load(src_path(p, sizeof p, "tests/data/bad-serve-trace-empty.csv"), 1000, &v, &n, &e),
                     DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "no requests after the header"), "%s", e.msg);
}
END_TEST

START_TEST(cost_from_eval)
{
    /* Llama 3.2 1B on the fixture GPU, fp16: the KV cache of a token is 2 (K and V) x 16 layers x 8 KV
     * heads x 64 x 2 B = 32768 B; decode attention grows with the cache; the logits cost per sequence */
    struct hw_system *s = test_fixture(FIX_GPU);
    struct wl_model m;
    test_model("models/llama-3.2-1b.json", &m);
    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = s;
    r.model = &m;
    for (int t = 0; t < OP_COUNT; t++)
        r.type_dev[t] = -1;
    r.x.prec.w = r.x.prec.a = r.x.prec.kv = P_FP16;
    struct dse_err e;
    ck_assert_int_eq(par_layout_complete(s, &r.layout, &e), DSE_OK);
    struct serve_cost c;
    ck_assert_msg(serve_cost_build(&r, 4096, 0.9, &c, &e) == DSE_OK, "%s", e.msg);
    ck_assert_double_eq_tol(c.kv_token_bytes, 32768, 1e-9);
    ck_assert(c.n_grid == 13 && c.tok[12] == 4096);
    for (int i = 1; i < c.n_grid; i++)
        ck_assert(c.lin_s[i] >= c.lin_s[i - 1] * 0.999);
    ck_assert(c.dec_ctx_s > 0 && c.lg_s[0] > 0 && c.pre_pair_s > 0);
    /* the KV room: the memory's 0.9 less weights and activations, over the bytes a token keeps */
    ck_assert_double_eq_tol(c.kv_capacity_tokens, floor((c.mem_bytes * 0.9 - c.weight_bytes - c.act_bytes) / 32768), 1e-9);
    /* a one-token iteration costs what a batch-1 decode step over a 1-token cache does */
    struct eval_req q = r;
    q.phase = PH_DECODE;
    q.batch = 1;
    q.prompt = 1;
    struct eval_result res = {0};
    ck_assert_int_eq(eval_run(&q, &res, &e), DSE_OK);
    ck_assert_double_eq_tol(serve_iter_s(&c, 1, 1, 0, 0, NULL) / res.t.latency_s, 1, 1e-9);
    /* and over a cache of 1001 tokens, what that decode step does (attention read linearly) */
    q.prompt = 1001;
    eval_result_free(&res);
    ck_assert_int_eq(eval_run(&q, &res, &e), DSE_OK);
    ck_assert_double_eq_tol(serve_iter_s(&c, 1, 1, 1000, 0, NULL) / res.t.latency_s, 1, 1e-3);
    eval_result_free(&res);
    wl_model_free(&m);
    free(s);
}
END_TEST

START_TEST(clock_far_from_zero)
{
    /* continuous_one_request's request (prompt 100, output 4) arriving at 0, 1e16 s (rate 1e-13 puts
     * arrivals there; a double's step at 1e16 is 2 s) and 1e308 s: the same TTFT, TPOT and end-to-end to
     * the picosecond, as the clock counts from the arrival, not from 0 */
    struct serve_cost c = synth(1e6);
    double ttft = A + 99 * B + L0 + 5050 * Q, dec = 3 * (A + L0) + (99 + 100 + 101) * D;
    static const double at[3] = {0, 1e16, 1e308};
    static const enum serve_sched sch[4] = {SCHED_CONTINUOUS, SCHED_CHUNKED, SCHED_INFLIGHT, SCHED_STATIC};
    struct dse_err e;
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 4; j++) {
            struct serve_cfg g = cfg_of(sch[j], 8192, sch[j] == SCHED_STATIC ? 1 : 16);
            /* two requests 1e13 s apart (rate 1e-13): each alone */
            struct serve_req r[2] = {{at[k], 100, 4}, {at[k] + 1e13, 100, 4}};
            if (k == 2)
                r[1].arrival_s = at[k]; /* 1e308 + 1e13 is 1e308: together, the second waits */
            struct serve_result res;
            ck_assert_msg(serve_run(&c, &g, r, k == 2 ? 1 : 2, 1, &res, &e) == DSE_OK, "%s", e.msg);
            ck_assert_msg(fabs(res.ttft_s.p50 - ttft) < 1e-12, "arrival %g, %s: TTFT %.17g s, expected %.17g", at[k],
                          serve_sched_names[sch[j]], res.ttft_s.p50, ttft);
            ck_assert_msg(fabs(res.e2e_s.max - (ttft + dec)) < 1e-12, "arrival %g: end-to-end %.17g", at[k], res.e2e_s.max);
            ck_assert_msg(fabs(res.tpot_s.p50 - dec / 3) < 1e-12, "arrival %g: TPOT %.17g", at[k], res.tpot_s.p50);
            /* the makespan: first arrival to last completion (1e13 + one request's time when 2) */
            ck_assert_double_eq_tol(res.makespan_s, (k == 2 ? 0 : 1e13) + ttft + dec, k == 2 ? 1e-12 : 1e-2);
            serve_result_free(&res);
        }
    /* disaggregation: the decode pool's arrivals (arrival + TTFT + transfer) kept in two parts */
    c.replicas = 2;
    c.xfer_Bps = 1000;
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 16);
    g.prefill_replicas = 1;
    struct serve_req r = {1e16, 100, 4};
    struct serve_result res;
    ck_assert_int_eq(serve_run(&c, &g, &r, 1, 0, &res, &e), DSE_OK);
    ck_assert_msg(fabs(res.e2e_s.p50 - (ttft + 0.1 + dec)) < 1e-12, "disaggregated end-to-end %.17g", res.e2e_s.p50);
    serve_result_free(&res);
    /* an arrival that is not a finite time is refused */
    struct serve_req inf = {INFINITY, 100, 4};
    ck_assert_int_eq(serve_run(&c, &g, &inf, 1, 0, &res, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "not a finite time"), "%s", e.msg);
}
END_TEST

START_TEST(capacity_none)
{
    /* a TTFT limit of 1 us, below one request's prefill alone (A + 199 B + L0 + 20100 Q, about 14 ms): no
     * rate meets it. The search says so (feasible 0, rate 0) with its bounds, 1.25 x the drain rate and
     * SERVE_CAPACITY_FLOOR of that, and returns the run at the floor, where nobody meets it. */
    struct serve_cost c = synth(1e6);
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 16);
    g.slo_ttft_s = 1e-6;
    struct serve_dist p = {SD_FIXED, 200, 0}, o = {SD_FIXED, 50, 0};
    struct serve_req *u;
    struct dse_err e;
    ck_assert_int_eq(serve_trace_make(SA_POISSON, 1, 0, 200, &p, &o, NULL, 0, 7, &u, &e), DSE_OK);
    struct serve_capacity_result cap;
    struct serve_result at;
    ck_assert_int_eq(serve_capacity(&c, &g, u, 200, 0.9, 0.02, &cap, &at, &e), DSE_OK);
    ck_assert(!cap.feasible);
    ck_assert_double_eq(cap.rate_rps, 0);
    ck_assert(cap.top_rps > 0 && cap.evals >= 3 && cap.evals <= 66);
    ck_assert_double_eq_tol(cap.lower_bound_rps, cap.top_rps * SERVE_CAPACITY_FLOOR, 1e-15 * cap.top_rps);
    ck_assert_int_eq(at.requests, 200);
    ck_assert_double_eq_tol(at.slo_attainment, 0, 1e-15);
    ck_assert_double_eq_tol(at.ttft_s.p50, A + 199 * B + L0 + 20100 * Q, 1e-9); /* alone at the floor */
    serve_result_free(&at);
    free(u);
}
END_TEST

/* A deterministic generator for the property test (64-bit LCG, Knuth's MMIX constants). */
static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x >> 33;
}
static int64_t pick(uint64_t *x, int64_t lo, int64_t hi) { return lo + (int64_t)(lcg(x) % (uint64_t)(hi - lo + 1)); }

START_TEST(kv_never_overcommitted)
{
    /* Random schedulers, admissions, preemptions, block sizes, small KV caches, lengths, prefixes and
     * shares, replicas and disaggregation: every run completes every request with the KV blocks never
     * over-committed: serve_run checks free blocks >= 0 at every change (DSE_ERUNTIME otherwise), the
     * peak use over every iteration is at most 1, and every timeline sample lies in [0, 1]. The shape
     * that broke (continuous, prefix caching on half the requests, a cache of a few requests' length) is
     * among them. */
    uint64_t x = 23;
    int prefixed = 0, evicted = 0, preempted = 0;
    for (int trial = 0; trial < 400; trial++) {
        struct serve_cost c = synth((double)pick(&x, 32, 3000));
        c.swap_Bps = 1e6;
        c.xfer_Bps = 1e6;
        static const int blocks[4] = {1, 4, 16, 32};
        enum serve_sched sch = (enum serve_sched)pick(&x, 0, SCHED_COUNT - 1);
        struct serve_cfg g = cfg_of(sch, 0, sch == SCHED_STATIC ? 1 : blocks[pick(&x, 0, 3)]);
        g.admit = (enum serve_admit)pick(&x, 0, ADMIT_COUNT - 1);
        g.preempt = (enum serve_preempt)pick(&x, 0, PREEMPT_COUNT - 1);
        g.max_batch = (int)pick(&x, 1, 64);
        int64_t kv = (int64_t)c.kv_capacity_tokens / g.block_tokens * g.block_tokens;
        if (kv < 4) /* a cache that holds no request of 2 + 2 tokens */
            continue;
        if (sch != SCHED_STATIC && pick(&x, 0, 9) < 6) {
            g.prefix_tokens = pick(&x, 1, kv / 2);
            static const double share[4] = {0, 0.3, 0.5, 0.9};
            g.prefix_share = share[pick(&x, 0, 3)];
        }
        int R = (int)pick(&x, 1, 3);
        c.replicas = R;
        if (R > 1 && sch != SCHED_STATIC && pick(&x, 0, 1))
            g.prefill_replicas = 1;
        int64_t n = pick(&x, 1, 60), longest = 0;
        struct serve_req r[60];
        double t = 0, gap = 1e-3 * (double)pick(&x, 1, 2000);
        for (int64_t i = 0; i < n; i++) {
            int64_t pmin = g.prefix_tokens + 1, len = pick(&x, pmin + 1 < kv ? pmin + 1 : kv, kv);
            int64_t pr = pick(&x, pmin < len ? pmin : len - 1, len - 1);
            if (pr < 1)
                pr = 1;
            r[i] = (struct serve_req){t, (int32_t)pr, (int32_t)(len - pr)};
            t += gap * (double)pick(&x, 0, 100) / 50;
            longest = pr > longest ? pr : longest;
        }
        if (g.prefix_tokens >= longest || g.prefix_tokens + 1 > kv - 1)
            g.prefix_tokens = 0, g.prefix_share = 0;
        g.max_batched_tokens = sch == SCHED_CHUNKED ? pick(&x, 8, 2048) : sch == SCHED_STATIC ? longest * g.max_batch
                                                                       : longest + pick(&x, 0, 2048);
        struct serve_result res;
        struct dse_err e;
        int rc = serve_run(&c, &g, r, n, 1, &res, &e);
        if (rc == DSE_EINPUT && strstr(e.msg, "prefix")) /* a prompt no longer than the prefix: refused */
            continue;
        ck_assert_msg(rc == DSE_OK, "trial %d (%s, block %d, %lld KV tokens, prefix %lld share %g, %d replicas): %s",
                      trial, serve_sched_names[sch], g.block_tokens, (long long)kv, (long long)g.prefix_tokens,
                      g.prefix_share, R, e.msg);
        ck_assert_msg(res.kv_use_peak <= 1 && res.kv_use_peak >= 0, "trial %d (%s, block %d, prefix %lld share %g): "
                      "KV use peaks at %.4f", trial, serve_sched_names[sch], g.block_tokens, (long long)g.prefix_tokens,
                      g.prefix_share, res.kv_use_peak);
        ck_assert_int_eq(res.completed, n);
        for (int64_t i = 0; i < n; i++)
            ck_assert(res.ttft_all[i] > 0 && res.e2e_all[i] > 0);
        prefixed += g.prefix_tokens > 0;
        evicted += res.prefix_evictions > 0;
        preempted += res.preemptions > 0;
        serve_result_free(&res);
        /* the timeline: every sample within [0, 1] (at most 4,096, thinned evenly) */
        g.timeline = 4096;
        ck_assert_int_eq(serve_run(&c, &g, r, n, 0, &res, &e), DSE_OK);
        for (int i = 0; i < res.n_timeline; i++)
            ck_assert_msg(res.timeline[i].kv_use >= 0 && res.timeline[i].kv_use <= 1 && res.timeline[i].running >= 0,
                          "trial %d: sample %d: KV use %.4f", trial, i, res.timeline[i].kv_use);
        serve_result_free(&res);
    }
    /* the configurations covered what matters: prefixes, their eviction, preemption */
    ck_assert_msg(prefixed > 150 && evicted > 10 && preempted > 50, "prefixed %d, evicted %d, preempted %d", prefixed,
                  evicted, preempted);
}
END_TEST

START_TEST(prefix_longer_than_prompt)
{
    /* a prefix of 512 tokens on prompts of 512: refused (it was cut to 511 before), naming the request and
     * what would be accepted; 511 runs. With a share, only the carriers' prompts count: request 2 (index 1,
     * 0.618 mod 1) does not carry a share of 0.5, so its prompt of 100 tokens is no obstacle. */
    struct serve_cost c = synth(1e6);
    struct serve_cfg g = cfg_of(SCHED_CONTINUOUS, 8192, 16);
    g.prefix_tokens = 512;
    struct serve_req r[2] = {{0, 600, 4}, {1, 512, 4}};
    struct serve_result res;
    struct dse_err e;
    ck_assert_int_eq(serve_prefix_check(&g, r, 2, NULL, "--prefix-tokens", &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "--prefix-tokens") && strstr(e.msg, "a shared prefix of 512 tokens is not shorter than "
                  "request 2's prompt of 512 tokens") && strstr(e.msg, "at most 511 here"), "%s", e.msg);
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 0, &res, &e), DSE_EINPUT);
    g.prefix_tokens = 511;
    ck_assert_int_eq(serve_run(&c, &g, r, 2, 0, &res, &e), DSE_OK);
    serve_result_free(&res);
    g.prefix_tokens = 512;
    g.prefix_share = 0.5;
    ck_assert(serve_carries_prefix(&g, 0) && !serve_carries_prefix(&g, 1));
    r[1].prompt = 100;
    ck_assert_msg(serve_run(&c, &g, r, 2, 0, &res, &e) == DSE_OK, "%s", e.msg);
    serve_result_free(&res);
}
END_TEST

START_TEST(too_long_requests)
{
    /* a context of 100 tokens; requests of 50 + 50 (fits), 90 + 20, 10 + 120 and 30 + 80 */
    static const struct serve_req in[4] = {{0, 50, 50}, {1, 90, 20}, {2, 10, 120}, {3, 30, 80}};
    struct serve_req r[4];
    int64_t n = 4, k, first;
    memcpy(r, in, sizeof r);
    serve_fit_context(r, &n, 100, TOO_LONG_ERROR, &k, &first); /* counted, nothing changed */
    ck_assert(n == 4 && k == 3 && first == 1 && !memcmp(r, in, sizeof r));
    serve_fit_context(r, &n, 100, TOO_LONG_SKIP, &k, &first); /* the one that fits is left, at its arrival */
    ck_assert(n == 1 && k == 3 && first == 1 && r[0].arrival_s == 0 && r[0].prompt == 50);
    memcpy(r, in, sizeof r);
    n = 4;
    serve_fit_context(r, &n, 100, TOO_LONG_TRUNCATE, &k, &first);
    /* prompts cut to 100 - output: 80 + 20; the output of 120 alone exceeds: 1 + 99; 20 + 80 */
    ck_assert(n == 4 && k == 3);
    ck_assert(r[0].prompt == 50 && r[0].output == 50);
    ck_assert(r[1].prompt == 80 && r[1].output == 20 && r[1].arrival_s == 1);
    ck_assert(r[2].prompt == 1 && r[2].output == 99);
    ck_assert(r[3].prompt == 20 && r[3].output == 80);
    memcpy(r, in, sizeof r);
    n = 1;
    serve_fit_context(r, &n, 100, TOO_LONG_SKIP, &k, &first);
    ck_assert(n == 1 && k == 0 && first == -1);
}
END_TEST

START_TEST(trace_byte_order_marks)
{
    char p[512];
    struct serve_req *v;
    int64_t n;
    struct dse_err e;
    /* a UTF-8 byte-order mark before the header (Excel's "CSV UTF-8"): read as without it */
    ck_assert_msg(serve_trace_load(src_path(p, sizeof p, "tests/data/serve-trace-bom.csv"), 1000, &v, &n, &e) == DSE_OK,
                  "%s", e.msg);
    ck_assert(n == 3 && v[0].prompt == 100 && v[2].output == 7);
    free(v);
    /* UTF-16 (its mark FF FE) and a mark inside the file are refused, saying so */
    ck_assert_int_eq(serve_trace_load(src_path(p, sizeof p, "tests/data/bad-serve-trace-utf16.csv"), 1000, &v, &n, &e),
                     DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "line 1: UTF-16 text (it opens with the byte-order mark FF FE)"), "%s", e.msg);
    ck_assert_int_eq(serve_trace_load(src_path(p, sizeof p, "tests/data/bad-serve-trace-bom-inside.csv"), 1000, &v, &n,
                                      &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "line 4: a UTF-8 byte-order mark (EF BB BF) inside the file"), "%s", e.msg);
    /* arrivals near the largest double load (and serve: clock_far_from_zero) */
    ck_assert_msg(serve_trace_load(src_path(p, sizeof p, "tests/data/serve-trace-far.csv"), 1000, &v, &n, &e) == DSE_OK,
                  "%s", e.msg);
    ck_assert(n == 3 && v[2].arrival_s == 1.7e308);
    free(v);
}
END_TEST

Suite *make_serve_suite(void)
{
    Suite *s = suite_create("serve");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 60); /* kv_never_overcommitted: 800 runs, about 1 s */
    tcase_add_test(t, iteration_cost);
    tcase_add_test(t, continuous_one_request);
    tcase_add_test(t, continuous_preemption);
    tcase_add_test(t, reserved_admission);
    tcase_add_test(t, prefix_caching);
    tcase_add_test(t, swap_preemption);
    tcase_add_test(t, disaggregation);
    tcase_add_test(t, chunked_prefill);
    tcase_add_test(t, static_batches);
    tcase_add_test(t, replicas_and_percentiles);
    tcase_add_test(t, capacity_search);
    tcase_add_test(t, traces);
    tcase_add_test(t, cost_from_eval);
    tcase_add_test(t, clock_far_from_zero);
    tcase_add_test(t, capacity_none);
    tcase_add_test(t, kv_never_overcommitted);
    tcase_add_test(t, prefix_longer_than_prompt);
    tcase_add_test(t, too_long_requests);
    tcase_add_test(t, trace_byte_order_marks);
    suite_add_tcase(s, t);
    return s;
}
