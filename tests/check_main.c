/* check_main.c -- runs every suite; exit status 0 when all pass. */
#include <stdio.h>
#include <stdlib.h>

#include "check_suites.h"

const char *src_path(char *buf, unsigned n, const char *rel)
{
    const char *root = getenv("DSE_SRCDIR");
    snprintf(buf, n, "%s/%s", root && *root ? root : ".", rel);
    return buf;
}

int main(void)
{
    SRunner *sr = srunner_create(make_core_suite());
    srunner_add_suite(sr, make_hw_suite());
    srunner_add_suite(sr, make_wl_suite());
    srunner_add_suite(sr, make_model_suite());
    srunner_add_suite(sr, make_eval_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    int run = srunner_ntests_run(sr);
    srunner_free(sr);
    printf("check_dse: %d passed, %d failed\n", run - failed, failed);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
