/* check_validate.c -- validation suites, the graphs that predict native kernels, and calibration
 * recovering known efficiencies. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_fixtures.h"
#include "check_suites.h"
#include "errbar.h"
#include "eval.h"
#include "hostload.h"
#include "validate.h"

static const char *write_tmp(char *buf, size_t n, const char *ext, const char *text)
{
    snprintf(buf, n, "/tmp/dse-check-%d-XXXXXX%s", (int)getpid(), ext);
    int fd = mkstemps(buf, (int)strlen(ext));
    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return buf;
}

START_TEST(suites_load_and_shapes)
{
    char p[512];
    struct vsuite s;
    struct dse_err e;
    ck_assert_msg(vsuite_load(src_path(p, sizeof p, "validate/quick.json"), &s, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_eq(s.n, 36);
    vsuite_free(&s);
    ck_assert_msg(vsuite_load(src_path(p, sizeof p, "validate/full.json"), &s, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_ge(s.n, 60);
    vsuite_free(&s);
    /* Defaults fill in: attention T = S and Hkv = H; the shape text names every field. */
    const char *j = "{\"name\":\"t\",\"kernels\":[{\"kernel\":\"attention\",\"shape\":{\"H\":4,\"S\":16,\"D\":8}},"
                    "{\"kernel\":\"gemm\",\"precision\":\"int8\",\"shape\":{\"M\":2,\"N\":3,\"K\":4},\"measured_ms\":1.5}]}";
    char path[128];
    write_tmp(path, sizeof path, ".json", j);
    ck_assert_msg(vsuite_load(path, &s, &e) == DSE_OK, "%s", e.msg);
    unlink(path);
    ck_assert_str_eq(s.k[0].shape, "B=1,H=4,Hkv=4,S=16,T=16,D=8,causal=1");
    ck_assert(s.k[1].prec == P_INT8 && s.k[1].measured_ms == 1.5);
    vsuite_free(&s);
    /* CSV import. */
    write_tmp(path, sizeof path, ".csv", "kernel,shape,precision,measured_ms\ngemm,M=8;N=8;K=8,fp32,0.01\ncopy,n=1024,fp32,0.002\n");
    ck_assert_msg(vsuite_load(path, &s, &e) == DSE_OK, "%s", e.msg);
    unlink(path);
    ck_assert_int_eq(s.n, 2);
    ck_assert(s.k[0].M == 8 && s.k[1].type == VK_COPY && s.k[1].n == 1024);
    vsuite_free(&s);
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"kernels\":[{\"kernel\":\"fft\",\"shape\":{}}]}", "unknown kernel 'fft'"},
        {"{\"kernels\":[{\"kernel\":\"gemm\",\"shape\":{\"M\":2,\"N\":3}}]}", "K: missing"},
        {"{\"kernels\":[{\"kernel\":\"softmax\",\"precision\":\"int8\",\"shape\":{\"rows\":2,\"cols\":2}}]}", "runs fp32"},
        {"{\"kernels\":[{\"kernel\":\"gemm\",\"shape\":{\"M\":2,\"N\":3,\"K\":0}}]}", "expected an integer in [1,"},
        {"{\"kernels\":[]}", "at least one kernel"},
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_tmp(path, sizeof path, ".json", bad[i].text);
        ck_assert_int_eq(vsuite_load(path, &s, &e), DSE_EINPUT);
        unlink(path);
        ck_assert_msg(strstr(e.msg, bad[i].msg) != NULL, "case %u: %s", i, e.msg);
    }
}
END_TEST

START_TEST(graphs_match_kernels)
{
    struct vk k;
    struct wl_graph g;
    struct dse_err e;
    memset(&k, 0, sizeof k);
    k.type = VK_GEMM;
    k.prec = P_FP32;
    k.M = 37, k.N = 29, k.K = 53;
    ck_assert_int_eq(vk_graph(&k, &g, &e), DSE_OK);
    ck_assert_double_eq(wl_macs(&g), 37.0 * 29 * 53);
    wl_graph_free(&g);
    /* Decode attention over a 1024-token cache, 32 query heads on 8 kv heads of 64: the cache is read
     * through k_past / v_past; MACs = 32 heads x 1024 keys x 2 x 64. */
    memset(&k, 0, sizeof k);
    k.type = VK_ATTENTION;
    k.prec = P_FP32;
    k.b = 1, k.heads = 32, k.hkv = 8, k.s = 1, k.t = 1024, k.d = 64, k.causal = 1;
    ck_assert_int_eq(vk_graph(&k, &g, &e), DSE_OK);
    ck_assert_double_eq(wl_macs(&g), 32.0 * 1024 * 2 * 64);
    ck_assert_int_eq(g.op[0].n_in, 5);
    wl_graph_free(&g);
    /* Depthwise 3x3 on 144 channels of 56x56, pad 1: 56 x 56 x 144 x 9 MACs. */
    memset(&k, 0, sizeof k);
    k.type = VK_CONV;
    k.prec = P_FP32;
    k.n = 1, k.c = 144, k.h = 56, k.w = 56, k.oc = 144, k.kh = 3, k.kw = 3, k.stride = 1, k.pad = 1, k.groups = 144;
    ck_assert_int_eq(vk_graph(&k, &g, &e), DSE_OK);
    ck_assert_double_eq(wl_macs(&g), 56.0 * 56 * 144 * 9);
    wl_graph_free(&g);
}
END_TEST

START_TEST(calibration_recovers_known_efficiencies)
{
    /* "Measurements" made by the model itself with known efficiencies (matmul 0.55, eltwise 0.3, L2
     * 0.6, DRAM 0.7, 4 us per call, GEMM operands packed at 2 and 5 G elements/s after a
     * 3 us setup, 2 us to run on all 4 cores, 20 % of the shorter of
     * compute and memory time not overlapped) on the CPU fixture: the fit,
     * started from the ideal roofline, must recover them and predict the held-out cases exactly. */
    struct hw_system *s = test_fixture(FIX_CPU), *truth = malloc(sizeof *truth);
    struct dse_err e;
    *truth = *s;
    struct calib want, got;
    memset(&want, 0, sizeof want);
    want.fit_class[EC_MATMUL] = want.fit_class[EC_ELTWISE] = 1;
    want.eff_class[EC_MATMUL] = 0.55;
    want.eff_class[EC_ELTWISE] = 0.3;
    want.n_levels = 2;
    want.eff_level[0] = 0.6; /* L2 */
    want.eff_level[1] = 0.7; /* DRAM */
    want.per_op_s = 4e-6;
    want.fit_pack = 1;
    want.pack_elem_per_s[0] = 2e9;
    want.pack_elem_per_s[1] = 5e9;
    want.gemm_setup_s = 3e-6;
    want.fit_fork = 1;
    want.fork_join_s = 2e-6;
    want.serial_fraction = 0.2;
    calib_apply(&truth->dev[0], &want);
    /* GEMMs: compute-bound when large, overhead-bound when tiny, skinny (16 rows: unpacked), and
     * tall or wide so that the two packing rates show apart. */
    static const long long gemms[][3] = {{16, 16, 16}, {64, 64, 64},    {128, 128, 128}, {256, 256, 256},
                                         {512, 512, 512}, {96, 96, 96}, {512, 64, 256},  {64, 512, 256},
                                         {1024, 48, 128}, {48, 1024, 128}, {384, 384, 384}, {192, 192, 192}};
    struct vk k[32];
    struct wl_graph g[32];
    int n = 0;
    for (int i = 0; i < 12; i++) {
        memset(&k[n], 0, sizeof k[n]);
        k[n].type = VK_GEMM;
        k[n].prec = P_FP32;
        k[n].M = gemms[i][0];
        k[n].N = gemms[i][1];
        k[n].K = gemms[i][2];
        n++;
    }
    static const long long ns[] = {1024, 65536, 1 << 20, 1 << 24, 1 << 26, 1 << 12, 1 << 18, 1 << 22};
    for (int i = 0; i < 8; i++) { /* copies: from L2 to DRAM */
        memset(&k[n], 0, sizeof k[n]);
        k[n].type = VK_COPY;
        k[n].prec = P_FP32;
        k[n].n = ns[i];
        n++;
    }
    for (int i = 0; i < 6; i++) { /* GELU: vector-bound in cache, then partly memory-bound */
        memset(&k[n], 0, sizeof k[n]);
        k[n].type = VK_GELU;
        k[n].prec = P_FP32;
        k[n].n = 4096L << (2 * i);
        n++;
    }
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(vk_graph(&k[i], &g[i], &e), DSE_OK);
        ck_assert_int_eq(vk_predict(&k[i], &g[i], truth, 0, FID_ANALYTICAL, 0, &k[i].measured_ms, NULL, &e), DSE_OK);
    }
    int train[32], held[32], nt = 0, nh = 0;
    for (int i = 0; i < n; i++) {
        if (i % 3 == 2)
            held[nh++] = i;
        else
            train[nt++] = i;
    }
    ck_assert_msg(calib_fit(s, 0, k, g, train, nt, FID_ANALYTICAL, 0, &got, &e) == DSE_OK, "%s", e.msg);
    ck_assert_near(got.eff_class[EC_MATMUL], 0.55, 1e-3);
    ck_assert_near(got.eff_class[EC_ELTWISE], 0.3, 1e-3);
    ck_assert_near(got.eff_level[1], 0.7, 1e-3);
    ck_assert_near(got.per_op_s, 4e-6, 1e-3);
    ck_assert_int_eq(got.fit_pack, 1);
    ck_assert_near(got.pack_elem_per_s[0] / 2e9, 1, 1e-3);
    ck_assert_near(got.pack_elem_per_s[1] / 5e9, 1, 1e-3);
    ck_assert_near(got.gemm_setup_s / 3e-6, 1, 1e-3);
    ck_assert_int_eq(got.fit_fork, 1);
    ck_assert_near(got.fork_join_s / 2e-6, 1, 1e-3);
    ck_assert_near(got.serial_fraction, 0.2, 1e-3);
    calib_apply(&s->dev[0], &got);
    for (int i = 0; i < nh; i++) {
        double ms;
        ck_assert_int_eq(vk_predict(&k[held[i]], &g[held[i]], s, 0, FID_ANALYTICAL, 0, &ms, NULL, &e), DSE_OK);
        ck_assert_near(ms, k[held[i]].measured_ms, 1e-3);
    }
    for (int i = 0; i < n; i++)
        wl_graph_free(&g[i]);
    free(truth);
    free(s);
}
END_TEST

START_TEST(prediction_follows_threads)
{
    /* dse validate --threads N measures N cores, so the prediction must use N of the device's cores
     * (it used all of them). A copy of 2^24 fp32 on the CPU fixture (4 cores, DRAM 20 GB/s) streams
     * 2^24 x 4 = 67,108,864 B in and writes as many twice (write-allocate): 201,326,592 B / 20e9 B/s
     * = 10.066 ms on all cores; each core gets 1/4 of the bandwidth, so 1 core takes 4x (40.265 ms)
     * and 2 cores 2x (20.133 ms). No fork/join or per-op overhead in the fixture. */
    struct hw_system *s = test_fixture(FIX_CPU);
    struct dse_err e;
    struct vk k;
    struct wl_graph g;
    memset(&k, 0, sizeof k);
    k.type = VK_COPY;
    k.prec = P_FP32;
    k.n = 1 << 24;
    ck_assert_int_eq(vk_graph(&k, &g, &e), DSE_OK);
    double all, one, two, four;
    ck_assert_int_eq(vk_predict(&k, &g, s, 0, FID_ANALYTICAL, 0, &all, NULL, &e), DSE_OK);
    ck_assert_int_eq(vk_predict(&k, &g, s, 0, FID_ANALYTICAL, 1, &one, NULL, &e), DSE_OK);
    ck_assert_int_eq(vk_predict(&k, &g, s, 0, FID_ANALYTICAL, 2, &two, NULL, &e), DSE_OK);
    ck_assert_int_eq(vk_predict(&k, &g, s, 0, FID_ANALYTICAL, 4, &four, NULL, &e), DSE_OK);
    ck_assert_near(all, 201326592.0 / 20e9 * 1e3, 1e-9);
    ck_assert_near(one / all, 4, 1e-9);
    ck_assert_near(two / all, 2, 1e-9);
    ck_assert_near(four / all, 1, 1e-9);
    wl_graph_free(&g);
    free(s);
}
END_TEST

START_TEST(host_load_arithmetic)
{
    /* Between two marks 1 s apart on 2 CPUs at 100 ticks/s: 150 busy, 40 idle, 10 stolen jiffies
     * (200 in all); this process used 0.5 s = 50 jiffies of the busy ones. Other processes: (150 - 50)
     * / 200 = 50 %; steal 10 / 200 = 5 %: busy on both counts. */
    struct hostload_mark a = {1, 1000, 500, 20, 1520, 2.0, 10.0, 100, 2}, b = {1, 1150, 540, 30, 1720, 2.5, 11.0, 100, 2};
    struct hostload l;
    hostload_between(&a, &b, &l);
    ck_assert(l.ok && l.cpus == 2);
    ck_assert_near(l.other_pct, 50, 1e-12);
    ck_assert_near(l.steal_pct, 5, 1e-12);
    ck_assert_near(l.seconds, 1, 1e-12);
    ck_assert(hostload_busy(&l));
    /* Quiet: 2 busy jiffies of 200 (1 %), no steal. */
    struct hostload_mark c = {1, 1002, 698, 20, 1720, 2.0, 11.0, 100, 2};
    hostload_between(&a, &c, &l);
    ck_assert_near(l.other_pct, 1, 1e-12);
    ck_assert(!hostload_busy(&l));
    /* Unreadable /proc/stat: nothing known, never "busy". */
    a.ok = 0;
    hostload_between(&a, &b, &l);
    ck_assert(!l.ok && !hostload_busy(&l));
}
END_TEST

START_TEST(published_split_rule)
{
    /* The held-out rule of validate/published/README.md: FNV-1a 32 of the id, odd = held out. Test
     * vectors of FNV-1a 32 (Fowler, Noll, Vo): "a" 0xe40c292c, "b" 0xe70c2de5, "foobar" 0xbf9cf968. */
    ck_assert_int_eq(pcase_is_heldout("a"), 0);
    ck_assert_int_eq(pcase_is_heldout("b"), 1);
    ck_assert_int_eq(pcase_is_heldout("foobar"), 0);
}
END_TEST

/* An error-bar table: gpu has an all-kinds row and a cnn row; npu only a cnn row. */
static const char EB_GOOD[] =
    "{\"schema\": \"dse-error-bars-1\", \"tier\": \"analytical\", \"source\": \"test\", \"classes\": ["
    "{\"class\": \"gpu\", \"kind\": \"all\", \"n\": 30, \"low_pct\": -25, \"high_pct\": 40, \"mape_pct\": 21},"
    "{\"class\": \"gpu\", \"kind\": \"cnn\", \"n\": 7, \"low_pct\": -20, \"high_pct\": 30, \"mape_pct\": 23},"
    "{\"class\": \"npu\", \"kind\": \"cnn\", \"n\": 5, \"low_pct\": -40, \"high_pct\": 100, \"mape_pct\": 43}]}";

START_TEST(error_bars_table)
{
    struct eb_table t;
    struct dse_err e;
    int fb;
    ck_assert_msg(eb_load_buf(EB_GOOD, sizeof EB_GOOD - 1, "eb.json", &t, &e) == DSE_OK, "%s", e.msg);
    ck_assert_int_eq(t.n, 3);
    const struct eb_row *r = eb_find(&t, HW_GPU, PK_CNN, &fb); /* its own row */
    ck_assert(r && r->n == 7 && r->low_pct == -20 && r->high_pct == 30 && !fb);
    r = eb_find(&t, HW_GPU, PK_LLM_DECODE, &fb); /* no row of its kind: the class's over all kinds */
    ck_assert(r && r->n == 30 && fb);
    ck_assert_ptr_null(eb_find(&t, HW_NPU, PK_ENCODER, &fb)); /* npu has no all-kinds row */
    ck_assert_ptr_null(eb_find(&t, HW_CPU, PK_CNN, &fb));
    /* The pessimistic end: error = predicted / true time - 1, so at -20 % the true time is predicted /
     * 0.8: a 10 ms latency becomes 12.5 ms, 100 inferences/s become 80; a quantity not scaling with
     * time stays. */
    ck_assert_double_eq_tol(eb_pessimistic(10, 1, -20), 12.5, 1e-12);
    ck_assert_double_eq_tol(eb_pessimistic(100, -1, -20), 80, 1e-12);
    ck_assert(eb_pessimistic(7, 0, -20) == 7);
    /* at +30 % (dse too slow) the pessimistic end is the predicted time / 1.3: faster */
    ck_assert_double_eq_tol(eb_pessimistic(13, 1, 30), 10, 1e-12);

    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"{\"schema\": \"dse-error-bars-2\", \"tier\": \"analytical\", \"source\": \"s\", \"classes\": []}",
         "expected \"dse-error-bars-1\""},
        {"{\"schema\": \"dse-error-bars-1\", \"tier\": \"exact\", \"source\": \"s\", \"classes\": []}",
         "tier: expected analytical or cycle"},
        {"{\"schema\": \"dse-error-bars-1\", \"tier\": \"analytical\", \"source\": \"s\", \"classes\": [{\"class\": "
         "\"fpga\", \"kind\": \"all\", \"n\": 3, \"low_pct\": -1, \"high_pct\": 1, \"mape_pct\": 1}]}",
         "classes[0].class: expected a device class"},
        {"{\"schema\": \"dse-error-bars-1\", \"tier\": \"analytical\", \"source\": \"s\", \"classes\": [{\"class\": "
         "\"gpu\", \"kind\": \"movies\", \"n\": 3, \"low_pct\": -1, \"high_pct\": 1, \"mape_pct\": 1}]}",
         "classes[0].kind: expected all or a workload kind"},
        {"{\"schema\": \"dse-error-bars-1\", \"tier\": \"analytical\", \"source\": \"s\", \"classes\": [{\"class\": "
         "\"gpu\", \"kind\": \"all\", \"n\": 3, \"low_pct\": 5, \"high_pct\": 1, \"mape_pct\": 1}]}",
         "classes[0].low_pct: expected a number above -100 and at most high_pct (1), got 5"},
        {"{\"schema\": \"dse-error-bars-1\", \"tier\": \"analytical\", \"source\": \"s\", \"classes\": [{\"class\": "
         "\"gpu\", \"kind\": \"all\", \"n\": 3, \"low_pct\": -100, \"high_pct\": 1, \"mape_pct\": 1}]}",
         "got -100"},
        {"{\"schema\": \"dse-error-bars-1\", \"tier\": \"analytical\", \"source\": \"s\", \"classes\": [{\"class\": "
         "\"gpu\", \"kind\": \"all\", \"n\": 2, \"low_pct\": -1, \"high_pct\": 1, \"mape_pct\": 1}]}",
         "classes[0].n"},
        {"{\"schema\": \"dse-error-bars-1\", \"tier\": \"analytical\", \"source\": \"s\", \"classes\": [{\"class\": "
         "\"gpu\", \"kind\": \"all\", \"n\": 3, \"low_pct\": -1, \"high_pct\": 1, \"mape_pct\": 1}, {\"class\": "
         "\"gpu\", \"kind\": \"all\", \"n\": 4, \"low_pct\": -1, \"high_pct\": 1, \"mape_pct\": 1}]}",
         "given twice"},
        {"{\"schema\": \"dse-error-bars-1\", \"tier\": \"analytical\", \"source\": \"s\", \"classes\": [], \"x\": 1}",
         "x"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(eb_load_buf(bad[i].text, strlen(bad[i].text), "eb.json", &t, &e) == DSE_EINPUT, "case %zu loads", i);
        ck_assert_msg(strstr(e.msg, bad[i].msg) != NULL, "case %zu: '%s' lacks '%s'", i, e.msg, bad[i].msg);
    }
}
END_TEST

START_TEST(error_bars_in_eval)
{
    /* An evaluation carries its class and kind's interval: a graph workload (kind other) on a GPU
     * falls back to the gpu all-kinds row; a table of another tier gives none. */
    struct eb_table t;
    struct dse_err e;
    ck_assert(eb_load_buf(EB_GOOD, sizeof EB_GOOD - 1, "eb.json", &t, &e) == DSE_OK);
    struct hw_system *s = test_fixture(FIX_GPU);
    struct wl_model m;
    test_model("models/tiny-mlp.json", &m);
    struct eval_req r;
    memset(&r, 0, sizeof r);
    r.sys = s;
    r.model = &m;
    r.dev = eval_default_device(s);
    for (int k = 0; k < OP_COUNT; k++)
        r.type_dev[k] = -1;
    r.x.prec.w = r.x.prec.a = r.x.prec.kv = P_FP16;
    r.batch = r.prompt = r.gen = 1;
    r.errbars = &t;
    struct eval_result res = {0};
    ck_assert_msg(eval_run(&r, &res, &e) == DSE_OK, "%s", e.msg);
    ck_assert(res.feasible && res.t.err_low_pct == -25 && res.t.err_high_pct == 40 && res.t.err_n == 30 &&
              res.t.err_fallback);
    dse_strlcpy(t.tier, "cycle", sizeof t.tier);
    ck_assert(eval_run(&r, &res, &e) == DSE_OK);
    ck_assert(isnan(res.t.err_low_pct) && isnan(res.t.err_high_pct));
    r.errbars = NULL;
    ck_assert(eval_run(&r, &res, &e) == DSE_OK && isnan(res.t.err_low_pct));
    eval_result_free(&res);
    wl_model_free(&m);
    free(s);
}
END_TEST

/* A corpus row's id names it in reports and in the held-out split (pcase_is_heldout hashes it): a
 * second row of the same id is an input error in both tables read by pcsv_table; distinct ids load. */
START_TEST(corpus_ids_unique)
{
    static const char mhead[] = "id,system,nodes,devices,framework,software,workload,phase,batch,seq,gen,tp,pp,dp,"
                                "microbatches,zero,recompute,precision,metric,value,unit,flops,source,url,date,note\n";
    static const char mrow[] = ",nvidia-a100-cluster-32node,4,32,fw,megatron,gpt-megatron-1.7b,train,512,2048,0,1,1,32,1,"
                               "0,full,fp16,tflops_per_device,137,TFLOP/s,megatron_hfu,s,u,2021-04-08,n\n";
    static const char shead[] = "id,system,devices,tp,framework,software,workload,precision,scheduler,max_batch,arrival,"
                                "rate_rps,requests,prompt_dist,output_dist,metric,value,unit,source,url,date,note\n";
    static const char srow[] = ",nvidia-dgx-h100,8,2,fw,tensorrt,llama-2-70b,fp8,inflight,1024,poisson,71.2,172032,"
                               "openorca,openorca,throughput_tokens_per_s,20556.40,tokens/s,s,u,2024-03-27,n\n";
    char text[2048];
    struct dse_err e = {0};
    struct mcase *mc = NULL;
    struct scase *sc = NULL;
    int n = -1;
    snprintf(text, sizeof text, "%sa%sb%s", mhead, mrow, mrow);
    ck_assert_int_eq(mcorpus_load_buf(text, strlen(text), "m.csv", &mc, &n, &e), DSE_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(mc[1].id, "b");
    free(mc);
    snprintf(text, sizeof text, "%sa%sa%s", mhead, mrow, mrow);
    ck_assert_int_eq(mcorpus_load_buf(text, strlen(text), "m.csv", &mc, &n, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "id 'a' given twice") != NULL, "%s", e.msg);
    snprintf(text, sizeof text, "%sa%sb%s", shead, srow, srow);
    ck_assert_int_eq(scorpus_load_buf(text, strlen(text), "s.csv", &sc, &n, &e), DSE_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(sc[1].id, "b");
    free(sc);
    snprintf(text, sizeof text, "%sb%sb%s", shead, srow, srow);
    ck_assert_int_eq(scorpus_load_buf(text, strlen(text), "s.csv", &sc, &n, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "id 'b' given twice") != NULL, "%s", e.msg);
}
END_TEST

Suite *make_validate_suite(void)
{
    Suite *s = suite_create("validate");
    TCase *t = tcase_create("validate");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, suites_load_and_shapes);
    tcase_add_test(t, published_split_rule);
    tcase_add_test(t, error_bars_table);
    tcase_add_test(t, error_bars_in_eval);
    tcase_add_test(t, graphs_match_kernels);
    tcase_add_test(t, calibration_recovers_known_efficiencies);
    tcase_add_test(t, prediction_follows_threads);
    tcase_add_test(t, host_load_arithmetic);
    tcase_add_test(t, corpus_ids_unique);
    suite_add_tcase(s, t);
    return s;
}
