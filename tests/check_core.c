/* check_core.c -- errors, JSON helpers, precisions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_suites.h"
#include "err.h"
#include "jsonu.h"
#include "prec.h"

START_TEST(err_format)
{
    struct dse_err e;
    int rc = dse_err_set(&e, DSE_EINPUT, "hwdesc/x.json", "devices[1].memory[0].bandwidth_GBps",
                         "expected a positive number, got %g", -3.0);
    ck_assert_int_eq(rc, DSE_EINPUT);
    ck_assert_str_eq(e.msg, "hwdesc/x.json: devices[1].memory[0].bandwidth_GBps: expected a positive number, got -3");
    dse_err_set(&e, DSE_EINPUT, NULL, NULL, "plain");
    ck_assert_str_eq(e.msg, "plain");
}
END_TEST

/* FNV-1a 64 against the published test vectors (Landon Curt Noll's FNV page, isthe.com/chongo/tech/
 * comp/fnv: "" -> cbf29ce484222325, "a" -> af63dc4c8601ec8c, "foobar" -> 85944171f73967e8). dse had
 * the offset basis one digit short (1469598103934665603) until 2026-12-01. */
START_TEST(fnv1a64_vectors)
{
    ck_assert_uint_eq(dse_fnv1a64("", 0), 0xcbf29ce484222325ULL);
    ck_assert_uint_eq(dse_fnv1a64("a", 1), 0xaf63dc4c8601ec8cULL);
    ck_assert_uint_eq(dse_fnv1a64("foobar", 6), 0x85944171f73967e8ULL);
}
END_TEST

/* ju_print is cJSON_Print's text byte for byte where cJSON's 15 digits are exact (every hwdesc we
 * ship, a tree with escapes and empty containers), and exact where they are not: 0.1 + 0.2 is
 * 0.30000000000000004, which cJSON prints as 0.3 (within DBL_EPSILON). */
/* ju_print's text, formatted and not, is cJSON's for item. */
static void same_as_cjson(const cJSON *item)
{
    for (int fmt = 0; fmt < 2; fmt++) {
        char *a = ju_print(item, fmt), *b = fmt ? cJSON_Print(item) : cJSON_PrintUnformatted(item);
        ck_assert_str_eq(a, b);
        free(a);
        free(b);
    }
}

START_TEST(json_print_exact)
{
    const char *files[] = {"hwdesc/nvidia-h100-sxm5-80gb.json", "hwdesc/raspberry-pi-5-hailo-8l.json",
                           "sweeps/llm_edge.json"};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char *buf = NULL, path[512];
        size_t len = 0;
        struct dse_err e;
        cJSON *root = NULL;
        ck_assert_int_eq(ju_read_file(src_path(path, sizeof path, files[f]), JU_MAX_FILE_BYTES, &buf, &len, &e), DSE_OK);
        ck_assert_int_eq(ju_parse(buf, len, files[f], &root, &e), DSE_OK);
        same_as_cjson(root);
        cJSON_Delete(root);
        free(buf);
    }
    cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "list");
    cJSON_AddStringToObject(o, "text", "quote \" back \\ tab \t nl \n bell \a caf\xc3\xa9");
    cJSON_AddObjectToObject(o, "empty");
    cJSON_AddArrayToObject(o, "none");
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(1.5));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(-2.25e-10));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(3e9));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(42));
    cJSON_AddItemToArray(arr, cJSON_CreateNumber(NAN));
    cJSON_AddItemToArray(arr, cJSON_CreateNull());
    cJSON_AddItemToArray(arr, cJSON_CreateTrue());
    cJSON *inner = cJSON_CreateObject();
    cJSON_AddNumberToObject(inner, "x", 1e300);
    cJSON_AddItemToArray(arr, inner);
    same_as_cjson(o);
    cJSON_Delete(o);
    volatile double tenth = 0.1, fifth = 0.2;
    cJSON *n = cJSON_CreateNumber(tenth + fifth);
    char *a = ju_print(n, 0), *b = cJSON_PrintUnformatted(n);
    ck_assert_str_eq(a, "0.30000000000000004");
    ck_assert_str_eq(b, "0.3");
    free(a);
    free(b);
    /* any double reads back as itself: an LCG's bits as doubles of every magnitude */
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < 20000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        double v;
        memcpy(&v, &x, sizeof v);
        if (!isfinite(v))
            continue;
        cJSON_SetNumberValue(n, v);
        a = ju_print(n, 0);
        ck_assert_msg(strtod(a, NULL) == v, "%s is not %.17g", a, v);
        free(a);
    }
    cJSON_Delete(n);
}
END_TEST

START_TEST(json_syntax_line_col)
{
    struct dse_err e;
    cJSON *r;
    /* The stray '}' sits on line 3, column 3 ("  }" after "{\n  \"a\": 1,\n"). */
    const char *bad = "{\n  \"a\": 1,\n  }";
    ck_assert_int_eq(ju_parse(bad, strlen(bad), "f.json", &r, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "f.json: line 3, column 3") != NULL, "%s", e.msg);
    ck_assert_int_eq(ju_parse("   ", 3, "f.json", &r, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "empty file") != NULL, "%s", e.msg);
    ck_assert_int_eq(ju_parse("{} x", 4, "f.json", &r, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "unexpected text") != NULL, "%s", e.msg);
}
END_TEST

START_TEST(json_getters)
{
    struct dse_err e;
    struct ju j;
    cJSON *r;
    const char *txt = "{\"n\": -3, \"s\": \"\", \"i\": 2.5, \"big\": 1e300, \"ok\": 7, \"a\": [1,2,3]}";
    ck_assert_int_eq(ju_parse(txt, strlen(txt), "t.json", &r, &e), DSE_OK);
    ju_init(&j, "t.json", &e);
    double x = 0;
    long long v = 0;
    char s[8];
    ck_assert_int_eq(ju_num(&j, r, "n", JU_POS, 0, &x), DSE_EINPUT);
    ck_assert_str_eq(e.msg, "t.json: n: expected a positive number, got -3");
    ck_assert_int_eq(ju_num(&j, r, "big", JU_POS, 1e15, &x), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "expected at most 1e+15") != NULL, "%s", e.msg);
    ck_assert_int_eq(ju_int(&j, r, "i", 0, 0, 10, &v), DSE_EINPUT);
    ck_assert_int_eq(ju_str(&j, r, "s", 0, s, sizeof s), DSE_EINPUT);
    ck_assert_int_eq(ju_num(&j, r, "missing", 0, 0, &x), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "missing") != NULL, "%s", e.msg);
    x = 42;
    ck_assert_int_eq(ju_num(&j, r, "missing", JU_OPT, 0, &x), DSE_OK);
    ck_assert(x == 42); /* untouched when optional and absent */
    ck_assert_int_eq(ju_int(&j, r, "ok", 0, 0, 10, &v), DSE_OK);
    ck_assert_int_eq(v, 7);
    const cJSON *arr;
    int n;
    ck_assert_int_eq(ju_array(&j, r, "a", 0, 2, &arr, &n), DSE_EINPUT); /* 3 > 2 */
    static const char *const allowed[] = {"n", "s", NULL};
    ck_assert_int_eq(ju_object(&j, r, allowed), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "i: unknown field") != NULL, "%s", e.msg);
    cJSON_Delete(r);

    const char *dup = "{\"a\": 1, \"a\": 2}";
    ck_assert_int_eq(ju_parse(dup, strlen(dup), "d.json", &r, &e), DSE_OK);
    ck_assert_int_eq(ju_object(&j, r, NULL), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "given twice") != NULL, "%s", e.msg);
    cJSON_Delete(r);
}
END_TEST

START_TEST(json_read_file_limits)
{
    struct dse_err e;
    char *buf;
    size_t len;
    char p[512];
    ck_assert_int_eq(ju_read_file(src_path(p, sizeof p, "hwdesc"), 1 << 20, &buf, &len, &e), DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "is a directory") != NULL, "%s", e.msg);
    ck_assert_int_eq(ju_read_file("/nonexistent/x.json", 1 << 20, &buf, &len, &e), DSE_EINPUT);
    /* A 4 KiB limit refuses a shipped hwdesc larger than that. */
    ck_assert_int_eq(ju_read_file(src_path(p, sizeof p, "hwdesc/nvidia-a100-sxm4-80gb.json"), 4096, &buf, &len, &e),
                     DSE_EINPUT);
    ck_assert_msg(strstr(e.msg, "limit") != NULL, "%s", e.msg);
}
END_TEST

START_TEST(prec_parse_forms)
{
    struct dse_err e;
    struct prec_cfg c;
    ck_assert_int_eq(prec_parse("fp16", &c, &e), DSE_OK);
    ck_assert(c.w == P_FP16 && c.a == P_FP16 && c.kv == P_FP16);
    ck_assert_int_eq(prec_parse("w4a16", &c, &e), DSE_OK);
    ck_assert(c.w == P_INT4 && c.a == P_FP16 && c.kv == P_FP16);
    ck_assert_int_eq(prec_parse("w8a8kv8", &c, &e), DSE_OK);
    ck_assert(c.w == P_INT8 && c.a == P_INT8 && c.kv == P_INT8);
    ck_assert_int_eq(prec_parse("w=int4,a=bf16,kv=fp8", &c, &e), DSE_OK);
    ck_assert(c.w == P_INT4 && c.a == P_BF16 && c.kv == P_FP8);
    ck_assert_int_eq(prec_parse("a=fp16", &c, &e), DSE_OK);
    ck_assert(c.w == P_FP16 && c.kv == P_FP16);
    const char *bad[] = {"fp12", "w4", "w4a", "w3a16", "w4a16kv", "x=fp16", "w=int4", "", "w=int4,,a=fp16x"};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(prec_parse(bad[i], &c, &e) == DSE_EINPUT, "accepted '%s'", bad[i]);
    char buf[64];
    c.w = P_INT4;
    c.a = c.kv = P_FP16;
    prec_format(&c, buf, sizeof buf);
    ck_assert_str_eq(buf, "w=int4,a=fp16,kv=fp16");
}
END_TEST

START_TEST(prec_sizes_and_compute)
{
    ck_assert(prec_bytes(P_INT4) == 0.5 && prec_bytes(P_TF32) == 4 && prec_bytes(P_BF16) == 2);
    ck_assert_int_eq(prec_compute(P_INT4, P_FP16), P_FP16); /* weight-only: dequantize to fp16 */
    ck_assert_int_eq(prec_compute(P_INT8, P_INT8), P_INT8);
    ck_assert_int_eq(prec_compute(P_INT8, P_FP8), P_FP8);   /* tie: the second (activation) wins */
    ck_assert_int_eq(prec_compute(P_FP32, P_BF16), P_FP32);
    /* Horowitz ISSCC 2014: fp32 MAC = 3.7 pJ mult + 0.9 pJ add; int8 = 0.2 + 0.03. */
    ck_assert(fabs(prec_mac_pJ_45nm(P_FP32) - 4.6) < 1e-12);
    ck_assert(fabs(prec_mac_pJ_45nm(P_INT8) - 0.23) < 1e-12);
    ck_assert(fabs(prec_mac_pJ_45nm(P_FP16) - 1.5) < 1e-12);
}
END_TEST

Suite *make_core_suite(void)
{
    Suite *s = suite_create("core");
    TCase *t = tcase_create("core");
    tcase_add_test(t, err_format);
    tcase_add_test(t, fnv1a64_vectors);
    tcase_add_test(t, json_print_exact);
    tcase_add_test(t, json_syntax_line_col);
    tcase_add_test(t, json_getters);
    tcase_add_test(t, json_read_file_limits);
    tcase_add_test(t, prec_parse_forms);
    tcase_add_test(t, prec_sizes_and_compute);
    suite_add_tcase(s, t);
    return s;
}
