/* bench_onnx.c -- ONNX import figures of issue 13, printed (not asserted): for each file named, the
 * time to load it (read, decode, sort, one trial build at batch 1) and to build its graph once more
 * at batch 8 (the per-(batch, sequence) shape inference a sweep pays), the mean of several runs, with
 * the file's size and its operator, parameter and MAC counts.
 * Usage: bench/bench_onnx FILE.onnx... (bench/run.sh writes the files with python3-onnx). */
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>

#include "wl.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int status = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        struct dse_err e;
        double load = 0, build = 0;
        int runs = 5, ops = 0;
        double params = 0, macs = 0;
        if (stat(argv[i], &st)) {
            fprintf(stderr, "bench_onnx: %s: cannot stat\n", argv[i]);
            status = 1;
            continue;
        }
        for (int r = 0; r < runs; r++) {
            struct wl_model m;
            struct wl_graph g;
            double t0 = now();
            if (wl_load_file(argv[i], &m, &e)) {
                dse_err_print(stderr, &e);
                return 1;
            }
            double t1 = now();
            struct wl_shape s = {.batch = 8, .tokens = 128, .tp = 1};
            if (wl_build(&m, &s, &g, &e)) {
                s.batch = 1; /* a fixed batch: built at 1 */
                if (wl_build(&m, &s, &g, &e)) {
                    dse_err_print(stderr, &e);
                    wl_model_free(&m);
                    return 1;
                }
            }
            double t2 = now();
            load += t1 - t0;
            build += t2 - t1;
            ops = g.n_op;
            params = wl_params(&g);
            macs = wl_macs(&g);
            wl_graph_free(&g);
            wl_model_free(&m);
        }
        const char *base = argv[i];
        for (const char *p = argv[i]; *p; p++)
            if (*p == '/')
                base = p + 1;
        printf("onnx %-20s %7.1f MB %6d ops  load %7.1f ms  build %6.1f ms  (mean of %d; %.0f params, %.4g MACs)\n",
               base, st.st_size / 1e6, ops, load / runs * 1e3, build / runs * 1e3, runs, params, macs);
    }
    return status;
}
