/* check_quality.c -- the published quality table (validate/quality) and the quality model behind
 * quality_loss_pct (quality.h, eval_quality): the table loads, a bad table is refused with its file and
 * line, the formats rank as practice ranks them on every shipped LLM, and each expected value is traced
 * to the cited rows it comes from (figures in validate/quality/published-quality.csv). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "eval.h"
#include "quality.h"
#include "wl.h"

static void load_shipped(struct ql_table *t)
{
    char p[512];
    struct dse_err e;
    dse_err_clear(&e);
    ck_assert_msg(ql_load_file(src_path(p, sizeof p, "validate/quality/published-quality.csv"), t, &e) == DSE_OK,
                  "%s", e.msg);
}

static struct prec_cfg pc(const char *s)
{
    struct prec_cfg c;
    struct dse_err e;
    ck_assert_msg(prec_parse(s, &c, &e) == DSE_OK, "%s", e.msg);
    return c;
}

static double est(const struct ql_table *t, const char *name, int kind, double params, const char *prec,
                  struct ql_est *q)
{
    struct prec_cfg c = pc(prec);
    ck_assert_msg(ql_estimate(t, name, kind, params, &c, q), "%s at %s: not covered", name, prec);
    return q->loss_pct;
}

/* Whether the estimate used exactly the rows named (a space-separated list). */
static int used_exactly(const struct ql_table *t, const struct ql_est *q, const char *ids)
{
    char buf[1024], *save = NULL;
    int n = 0;
    dse_strlcpy(buf, ids, sizeof buf);
    for (char *id = strtok_r(buf, " ", &save); id; id = strtok_r(NULL, " ", &save), n++) {
        int hit = 0;
        for (int i = 0; i < q->n_used; i++)
            hit |= !strcmp(t->row[q->used[i]].id, id);
        if (!hit)
            return 0;
    }
    return n == q->n_used_all;
}

START_TEST(table_loads)
{
    struct ql_table t;
    load_shipped(&t);
    ck_assert_int_eq(t.n, 86);
    /* every row names its source and where it is published; those with both figures were checked against
     * loss_pct by the loader; families keep one kind */
    int with_figures = 0;
    for (int i = 0; i < t.n; i++) {
        const struct ql_row *r = &t.row[i];
        ck_assert(r->source[0] && !strncmp(r->url, "http", 4) && r->key != 0);
        with_figures += !isnan(r->baseline);
        ck_assert_int_eq(t.fam[r->fam].kind, r->kind);
    }
    ck_assert_int_eq(with_figures, 82); /* the 4 Model Optimizer rows publish the loss only */
    /* QServe's table, Llama-2-7B, FP16 5.47 -> AWQ W4A16 g128 5.60: (5.60 / 5.47 - 1) x 100 = 2.3766 */
    int awq = -1;
    for (int i = 0; i < t.n; i++)
        if (!strcmp(t.row[i].id, "qserve-llama2-7b-awq"))
            awq = i;
    ck_assert_int_ge(awq, 0);
    ck_assert_near(t.row[awq].loss_pct, 2.38, 1e-12);
    ck_assert_near((t.row[awq].quantized / t.row[awq].baseline - 1) * 100, 2.3766, 1e-4);
    /* families match by a name's prefix, the longest, at a separator */
    ck_assert_str_eq(t.fam[ql_family_of(&t, "llama-3.2-1b")].name, "llama-3");
    ck_assert_str_eq(t.fam[ql_family_of(&t, "Llama-2-70B")].name, "llama-2");
    ck_assert_str_eq(t.fam[ql_family_of(&t, "mixtral-8x7b")].name, "mixtral");
    ck_assert_int_eq(ql_family_of(&t, "llama-30b"), -1);
    ck_assert_int_eq(ql_family_of(&t, "qwen2.5-7b"), -1);
    ql_free(&t);
}
END_TEST

/* A bad table is refused naming its file and line, and what would be accepted. */
START_TEST(bad_tables_refused)
{
    static const char hdr[] = "id,kind,family,model,params_B,precision,method,metric,baseline_precision,baseline,"
                              "quantized,loss_pct,source,url,note\n";
    static const char good[] = "a,llm,llama-2,Llama-2-7B,7,w8a8,SQ,wikitext2_ppl,fp16,5.47,5.54,1.28,paper T1,"
                               "https://x.org,\n";
    static const struct {
        const char *rows, *want;
    } bad[] = {
        {"b,llm,llama-2,Llama-2-7B,7,w8a8,SQ,wikitext2_ppl,fp16,5.47,5.54,1.28,paper,https://x.org\n",
         "bad.csv: line 4: expected 15 fields, got 14"},
        {"a,llm,llama-2,Llama-2-7B,7,w4a16,AWQ,wikitext2_ppl,fp16,5.47,5.60,2.38,paper T1,https://x.org,\n",
         "bad.csv: line 4: id 'a' given twice (first on line 3)"},
        {"b,rnn,lstm,LSTM,1,int8,PTQ,wikitext2_ppl,fp16,,,1,paper,https://x.org,\n",
         "bad.csv: line 4: kind 'rnn': expected llm, encoder or cnn"},
        {"b,cnn,llama-2,Llama-2-7B,7,int8,PTQ,imagenet_top1,fp32,,,1,paper,https://x.org,\n",
         "bad.csv: line 4: family 'llama-2' is of kind llm on its earlier rows, cnn here"},
        {"b,llm,llama-2,Llama-2-7B,7,w9a8,SQ,wikitext2_ppl,fp16,,,1,paper,https://x.org,\n",
         "bad.csv: line 4: precision: --precision: 'w9a8': expected a precision"},
        {"b,llm,llama-2,Llama-2-7B,7,bf16,none,wikitext2_ppl,fp16,,,0,paper,https://x.org,\n",
         "bad.csv: line 4: precision 'bf16' quantizes nothing"},
        {"b,cnn,resnet50,ResNet-50,0.0256,w=fp16,a=fp16,kv=int4,KV,imagenet_top1,fp32,,,1,p,https://x.org,\n",
         "bad.csv: line 4: expected 15 fields: an unterminated quote or more fields"},
        {"b,cnn,resnet50,ResNet-50,0.0256,\"w=fp16,a=fp16,kv=int4\",KV,imagenet_top1,fp32,,,1,p,https://x.org,\n",
         "bad.csv: line 4: precision 'w=fp16,a=fp16,kv=int4' quantizes nothing that counts for this kind"},
        /* (5.60 / 5.47 - 1) x 100 = 2.3766, not 2.83 */
        {"b,llm,llama-2,Llama-2-7B,7,w4a16,AWQ,wikitext2_ppl,fp16,5.47,5.60,2.83,paper,https://x.org,\n",
         "bad.csv: line 4: loss_pct 2.83 disagrees with baseline 5.47 and quantized 5.6: (quantized / baseline - 1) x "
         "100 = 2.3766"},
        /* accuracy: (76.1 - 75.9) / 76.1 x 100 = 0.2628 */
        {"b,cnn,resnet50,ResNet-50,0.0256,int8,PTQ,imagenet_top1,fp32,76.1,75.9,-0.26,p,https://x.org,\n",
         "bad.csv: line 4: loss_pct -0.26 disagrees with baseline 76.1 and quantized 75.9: (baseline - quantized) / "
         "baseline x 100 = 0.2628"},
        {"b,llm,llama-2,Llama-2-7B,7,w4a16,AWQ,wikitext2_ppl,fp16,5.47,,2.38,paper,https://x.org,\n",
         "bad.csv: line 4: baseline '5.47', quantized '': expected both figures"},
        {"b,llm,llama-2,Llama-2-7B,0,w4a16,AWQ,wikitext2_ppl,fp16,,,2.38,paper,https://x.org,\n",
         "bad.csv: line 4: params_B '0': expected the model's parameters in billions"},
        {"b,llm,llama-2,Llama-2-7B,7,w4a16,AWQ,bleu,fp16,,,2.38,paper,https://x.org,\n",
         "bad.csv: line 4: metric 'bleu': expected wikitext2_ppl, mmlu_acc, imagenet_top1 or mrpc_f1"},
        {"b,llm,llama-2,Llama-2-7B,7,w4a16,AWQ,wikitext2_ppl,int8,,,2.38,paper,https://x.org,\n",
         "bad.csv: line 4: baseline_precision 'int8': expected the float the baseline ran at"},
        {"b,llm,llama-2,Llama-2-7B,7,w4a16,AWQ,wikitext2_ppl,fp16,,,-100,paper,https://x.org,\n",
         "bad.csv: line 4: loss_pct '-100': expected the relative loss in % of the baseline, above -100"},
        {"b,llm,llama-2,Llama-2-7B,7,w4a16,AWQ,wikitext2_ppl,fp16,,,nan,paper,https://x.org,\n",
         "bad.csv: line 4: loss_pct 'nan'"},
        {"b,llm,llama-2,Llama-2-7B,7,w4a16,AWQ,wikitext2_ppl,fp16,,,2.38,,https://x.org,\n",
         "bad.csv: line 4: source: expected the paper with its table"},
        {"b,llm,llama-2,Llama-2-7B,7,w4a16,AWQ,wikitext2_ppl,fp16,,,2.38,paper,x.org,\n",
         "bad.csv: line 4: url 'x.org': expected where the figure is published"},
        {"B,llm,llama-2,Llama-2-7B,7,w4a16,AWQ,wikitext2_ppl,fp16,,,2.38,paper,https://x.org,\n",
         "bad.csv: line 4: id 'B': expected a slug"},
        {"b,llm,Llama 2,Llama-2-7B,7,w4a16,AWQ,wikitext2_ppl,fp16,,,2.38,paper,https://x.org,\n",
         "bad.csv: line 4: family 'Llama 2': expected a slug"},
        {"b,llm,llama-2,Llama-2-7B,7,w8a8,SQ,wikitext2_ppl,fp16,5.47,5.54,1.28,paper T1,https://x.org,\n",
         "bad.csv: line 4: the same measurement as line 3"},
        {"\n# a comment and a blank line are counted\nb,llm,llama-2,Llama-2-7B,7,w4a16,\"AWQ,wikitext2_ppl,fp16\n",
         "bad.csv: line 6: expected 15 fields: an unterminated quote or more fields"},
    };
    struct ql_table t;
    struct dse_err e;
    char text[2048];
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "# quality\n%s%s%s", hdr, good, bad[i].rows);
        dse_err_clear(&e);
        ck_assert_int_eq(ql_load_buf(text, strlen(text), "bad.csv", &t, &e), DSE_EINPUT);
        ck_assert_msg(strstr(e.msg, bad[i].want) != NULL, "case %u: '%s' lacks '%s'", i, e.msg, bad[i].want);
    }
    /* the header, an empty table, a NUL byte */
    static const char *const whole[][2] = {
        {"id,kind\n", "bad.csv: line 1: expected the header id,kind,family,... of validate/quality/README.md"},
        {"# nothing but comments\n", "bad.csv: empty: no header"},
        {"id,kind,family,model,params_B,precision,method,metric,baseline_precision,baseline,quantized,loss_pct,"
         "source,url,note\n", "bad.csv: no rows"},
    };
    for (unsigned i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        ck_assert_int_eq(ql_load_buf(whole[i][0], strlen(whole[i][0]), "bad.csv", &t, &e), DSE_EINPUT);
        ck_assert_msg(strstr(e.msg, whole[i][1]) != NULL, "whole %u: '%s'", i, e.msg);
    }
    snprintf(text, sizeof text, "%s%s", hdr, good);
    text[strlen(hdr) + 3] = '\0';
    ck_assert_int_eq(ql_load_buf(text, strlen(hdr) + strlen(good), "bad.csv", &t, &e), DSE_EINPUT);
    /* and the good row alone loads */
    snprintf(text, sizeof text, "%s%s", hdr, good);
    ck_assert_int_eq(ql_load_buf(text, strlen(text), "ok.csv", &t, &e), DSE_OK);
    ck_assert_int_eq(t.n, 1);
    ql_free(&t);
}
END_TEST

/* The orders of practice, on every shipped decoder LM (each JSON file of models/):
 *  - fp8 W8A8 (weights, activations and KV cache in E4M3) is no worse than int8 SmoothQuant W8A8: on
 *    Llama-3.1-8B the FP8 card gives 7.2169 -> 7.2752 (+0.81 %, row quark-llama31-8b-instruct-fp8) where
 *    SmoothQuant gives 6.24 -> 6.38 (+2.24 %, QServe's table) and 6.138 -> 6.258 (+1.96 %, SmoothQuant's
 *    README); NVIDIA's TensorRT-LLM table gives FP8 below INT8-SQ on all four models it lists (MMLU loss
 *    0.87 % against 2.75 % on Llama-2-70B);
 *  - W4A16 group 128 (AWQ, GPTQ) is a small loss: at most a third of W4A4's (QServe's table: Llama-2-7B
 *    AWQ 5.60 and QuaRot 6.19 against FP16 5.47, +2.38 % and +13.16 %) and under 20 %;
 *  - int4 W4A4 is a large loss: above 5 % on every one (the smallest published, Mistral-7B QuaRot and Atom,
 *    +9.90 % and +9.71 %), and above W4A16.
 * None of them falls back to the measured GEMM error, which ranked fp8 4x worse than int8. */
START_TEST(formats_rank_as_practice)
{
    struct ql_table t;
    load_shipped(&t);
    char dir[512], path[1024];
    DIR *d = opendir(src_path(dir, sizeof dir, "models"));
    ck_assert_ptr_nonnull(d);
    int lms = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t n = strlen(de->d_name);
        if (n < 6 || strcmp(de->d_name + n - 5, ".json"))
            continue;
        struct wl_model m;
        struct dse_err e;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        ck_assert_msg(wl_load_file(path, &m, &e) == DSE_OK, "%s", e.msg);
        if (!wl_model_is_lm(&m)) {
            wl_model_free(&m);
            continue;
        }
        lms++;
        struct ql_est f8, i8, w4, i4;
        struct prec_cfg c;
        c = pc("fp8"), eval_quality(&t, &m, &c, &f8);
        c = pc("w8a8"), eval_quality(&t, &m, &c, &i8);
        c = pc("w4a16"), eval_quality(&t, &m, &c, &w4);
        c = pc("int4"), eval_quality(&t, &m, &c, &i4);
        unsigned fb = 1u << QL_FALLBACK;
        ck_assert_msg(!((f8.flags | i8.flags | w4.flags | i4.flags) & fb), "%s: a fallback", m.name);
        ck_assert_msg(f8.loss_pct <= i8.loss_pct, "%s: fp8 %g above int8 %g", m.name, f8.loss_pct, i8.loss_pct);
        ck_assert_msg(w4.loss_pct > 0 && w4.loss_pct < 20 && w4.loss_pct <= i4.loss_pct / 3,
                      "%s: w4a16 %g, int4 %g", m.name, w4.loss_pct, i4.loss_pct);
        ck_assert_msg(i4.loss_pct > 5 && i4.loss_pct > w4.loss_pct, "%s: int4 %g", m.name, i4.loss_pct);
        wl_model_free(&m);
    }
    closedir(d);
    ck_assert_int_ge(lms, 40); /* every shipped decoder LM was looked at */
    ql_free(&t);
}
END_TEST

/* Each value traced to its rows (loss_pct as the table gives it, to 2 decimals). */
START_TEST(values_traced_to_rows)
{
    struct ql_table t;
    struct ql_est q;
    load_shipped(&t);
    /* Llama-3.1-8B int8 SmoothQuant W8A8 (KV cache int8): the three 8B rows of family llama-3,
     * (2.24 + 2.28 + 1.96) / 3 = 2.16 */
    ck_assert_near(est(&t, "llama-3.1-8b", QK_LLM, 8.03e9, "w8a8", &q), (2.24 + 2.28 + 1.96) / 3, 1e-12);
    ck_assert(q.flags == 1u << QL_PUBLISHED);
    ck_assert(used_exactly(&t, &q, "qserve-llama31-8b-sq qserve-llama3-8b-sq smoothquant-llama3-8b"));
    /* fp8 everywhere: the Quark card, (7.2752 / 7.2169 - 1) x 100 = 0.81 */
    ck_assert_near(est(&t, "llama-3.1-8b", QK_LLM, 8.03e9, "fp8", &q), 0.81, 1e-12);
    ck_assert(used_exactly(&t, &q, "quark-llama31-8b-instruct-fp8"));
    /* Llama-3.2-1B (1.24e9) is below the family's smallest published size (8B): that size's figure */
    ck_assert_near(est(&t, "llama-3.2-1b", QK_LLM, 1.24e9, "fp8", &q), 0.81, 1e-12);
    ck_assert(q.flags == 1u << QL_NEAREST_SIZE);
    /* Llama-2-7B W4A16 g128: GPTQ-R 2.93 and AWQ 2.38, mean 2.655 */
    ck_assert_near(est(&t, "llama-2-7b", QK_LLM, 6.74e9, "w4a16", &q), (2.93 + 2.38) / 2, 1e-12);
    ck_assert(used_exactly(&t, &q, "qserve-llama2-7b-gptq qserve-llama2-7b-awq"));
    /* between sizes, linear in log N: llama-2 W8A8 at 30B from 13B (1.43 - 0.42) / 2 = 0.505 and 70B
     * (1.20 + 1.17) / 2 = 1.185; weight of 13B = ln(70 / 30) / ln(70 / 13) */
    double w13 = log(70.0 / 30) / log(70.0 / 13);
    ck_assert_near(est(&t, "llama-2-30b", QK_LLM, 30e9, "w8a8", &q), w13 * 0.505 + (1 - w13) * 1.185, 1e-12);
    ck_assert(q.flags == 1u << QL_INTERPOLATED);
    ck_assert(used_exactly(&t, &q, "qserve-llama2-13b-sq smoothquant-llama2-13b qserve-llama2-70b-sq "
                                   "smoothquant-llama2-70b"));
    /* Llama-2 has no fp8 W8A8 perplexity: its int8 figure at 7B, (1.28 + 0.75) / 2 = 1.015, scaled by the one
     * other family with both (llama-3, nearest size 8B): 0.81 / 2.16 */
    ck_assert_near(est(&t, "llama-2-7b", QK_LLM, 6.74e9, "fp8", &q), 1.015 * 0.81 / 2.16, 1e-12);
    ck_assert(q.flags & (1u << QL_SCALED));
    ck_assert(used_exactly(&t, &q, "qserve-llama2-7b-sq smoothquant-llama2-7b quark-llama31-8b-instruct-fp8 "
                                   "qserve-llama31-8b-sq qserve-llama3-8b-sq smoothquant-llama3-8b"));
    /* a family the table lacks (Qwen2.5-7B, 7.6e9): the median of the five LLM families at that size:
     * llama-2 1.015 (7B), llama-3 2.16 (8B), mistral (0.76 + 0.46) / 2 = 0.61, mixtral 1.33 (47B, nearest),
     * falcon 0.59 (7B): median 1.015 */
    ck_assert_near(est(&t, "qwen2.5-7b", QK_LLM, 7.6e9, "w8a8", &q), 1.015, 1e-12);
    ck_assert(q.fam == -1 && (q.flags & (1u << QL_OTHER_MODELS)));
    /* W8A16 is published for no LLM: bounded by the narrower W8A8 (int8 activations, KV int8) */
    ck_assert_near(est(&t, "llama-3.1-8b", QK_LLM, 8.03e9, "w8a16", &q), (2.24 + 2.28 + 1.96) / 3, 1e-12);
    ck_assert(q.flags & (1u << QL_UPPER_BOUND));
    /* the KV cache alone: KVQuant-4bit on Llama-2-70B, (3.13 / 3.12 - 1) x 100 = 0.32 */
    ck_assert_near(est(&t, "llama-2-70b", QK_LLM, 69e9, "w16a16kv4", &q), 0.32, 1e-12);
    /* a CNN at int8: ResNet-50, (76.1 - 75.9) / 76.1 x 100 = 0.26 (PyTorch's table) */
    ck_assert_near(est(&t, "resnet50", QK_CNN, 25.6e6, "int8", &q), 0.26, 1e-12);
    /* reference formats: 0 by definition, with or without a table */
    ck_assert_near(est(NULL, "anything", -1, 0, "bf16", &q), 0, 0);
    ck_assert(q.flags == 1u << QL_REFERENCE);
    ck_assert_near(est(&t, "resnet50", QK_CNN, 25.6e6, "w=fp32,a=tf32,kv=fp16", &q), 0, 0);
    /* not covered: fp8 on a CNN (no CNN has an fp8 row), no table at all */
    struct prec_cfg c = pc("fp8");
    ck_assert(!ql_estimate(&t, "resnet50", QK_CNN, 25.6e6, &c, &q) && q.flags == 0);
    ck_assert(!ql_estimate(NULL, "llama-2-7b", QK_LLM, 6.74e9, &c, &q));
    ql_free(&t);
}
END_TEST

/* eval_quality's fallback: the measured GEMM error in %, flagged (what the proxy used to be). */
START_TEST(fallback_is_the_measured_error)
{
    struct ql_table t;
    struct wl_model m;
    struct ql_est q;
    load_shipped(&t);
    test_model("models/resnet50.json", &m);
    struct prec_cfg c = pc("fp8");
    eval_quality(&t, &m, &c, &q);
    ck_assert(q.flags == 1u << QL_FALLBACK);
    ck_assert_near(q.loss_pct, 100 * eval_accuracy_proxy(&c, 0), 1e-12);
    c = pc("int8"); /* ResNet-50 int8 is published */
    eval_quality(&t, &m, &c, &q);
    ck_assert(q.flags == 1u << QL_PUBLISHED && fabs(q.loss_pct - 0.26) < 1e-12);
    eval_quality(NULL, &m, &c, &q); /* no table */
    ck_assert(q.flags == 1u << QL_FALLBACK);
    wl_model_free(&m);
    ql_free(&t);
}
END_TEST

Suite *make_quality_suite(void)
{
    Suite *s = suite_create("quality");
    TCase *t = tcase_create("quality");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, table_loads);
    tcase_add_test(t, bad_tables_refused);
    tcase_add_test(t, formats_rank_as_practice);
    tcase_add_test(t, values_traced_to_rows);
    tcase_add_test(t, fallback_is_the_measured_error);
    suite_add_tcase(s, t);
    return s;
}
