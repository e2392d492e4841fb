/* check_suites.h -- one Check suite per module, run together by check_main.c. */
#ifndef DSE_CHECK_SUITES_H
#define DSE_CHECK_SUITES_H

#include <check.h>

Suite *make_core_suite(void);
Suite *make_hw_suite(void);
Suite *make_wl_suite(void);
Suite *make_model_suite(void);
Suite *make_eval_suite(void);
Suite *make_search_suite(void);
Suite *make_sweep_suite(void);
Suite *make_validate_suite(void);
Suite *make_kern_suite(void);
Suite *make_probe_suite(void);
Suite *make_power_suite(void);
Suite *make_pass_suite(void);
Suite *make_par_suite(void);
Suite *make_serve_suite(void);
Suite *make_quality_suite(void);
Suite *make_kern_cuda_suite(void); /* only with ./configure --enable-cuda (HAVE_CUDA) */

/* Path of a file in the source tree ($DSE_SRCDIR or "."), written into the caller's buffer. */
const char *src_path(char *buf, unsigned n, const char *rel);

struct hw_system;
struct wl_model;
/* Loads a hwdesc from JSON text (a fixture) into a malloc'd system, failing the test on error. */
struct hw_system *test_fixture(const char *json);
/* Loads a workload file relative to the source tree, failing the test on error. */
void test_model(const char *rel, struct wl_model *m);

#define ck_assert_near(x, y, rel)                                                                              \
    do {                                                                                                       \
        double x_ = (double)(x), y_ = (double)(y);                                                             \
        ck_assert_msg(fabs(x_ - y_) <= (rel) * fabs(y_) + 1e-300, "%s = %.12g, expected %.12g (rel tol %g)", #x, \
                      x_, y_, (double)(rel));                                                                  \
    } while (0)

#endif
