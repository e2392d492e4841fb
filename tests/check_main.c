/* check_main.c -- runs every suite; exit status 0 when all pass. */
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "check_suites.h"
#include "config.h"
#include "hw.h"
#include "wl.h"

const char *src_path(char *buf, unsigned n, const char *rel)
{
    const char *root = getenv("DSE_SRCDIR");
    snprintf(buf, n, "%s/%s", root && *root ? root : ".", rel);
    return buf;
}

struct hw_system *test_fixture(const char *json)
{
    struct hw_system *s = malloc(sizeof *s);
    struct dse_err e;
    ck_assert_ptr_nonnull(s);
    ck_assert_msg(hw_load_buf(json, strlen(json), "fixture", s, &e) == DSE_OK, "%s", e.msg);
    return s;
}

void test_model(const char *rel, struct wl_model *m)
{
    char p[512];
    struct dse_err e;
    ck_assert_msg(wl_load_file(src_path(p, sizeof p, rel), m, &e) == DSE_OK, "%s", e.msg);
}

int main(void)
{
    SRunner *sr = srunner_create(make_core_suite());
    srunner_add_suite(sr, make_hw_suite());
    srunner_add_suite(sr, make_wl_suite());
    srunner_add_suite(sr, make_model_suite());
    srunner_add_suite(sr, make_eval_suite());
    srunner_add_suite(sr, make_search_suite());
    srunner_add_suite(sr, make_sweep_suite());
    srunner_add_suite(sr, make_validate_suite());
    srunner_add_suite(sr, make_kern_suite());
    srunner_add_suite(sr, make_probe_suite());
    srunner_add_suite(sr, make_power_suite());
    srunner_add_suite(sr, make_pass_suite());
    srunner_add_suite(sr, make_par_suite());
    srunner_add_suite(sr, make_serve_suite());
    srunner_add_suite(sr, make_quality_suite());
#ifdef HAVE_CUDA
    srunner_add_suite(sr, make_kern_cuda_suite());
#endif
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    int run = srunner_ntests_run(sr);
    srunner_free(sr);
    printf("check_dse: %d passed, %d failed\n", run - failed, failed);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
