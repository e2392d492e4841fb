/* fuzz_trace.c -- libFuzzer target for the request-trace loader (serve_trace_load_buf, dse serve --trace
 * and --lengths): the header and a byte-order mark before it, comments, line length, each field's number
 * and range, arrival order; then what --too-long does to the loaded requests (serve_fit_context at a
 * context of 2,048 tokens), whose results must fit the context and keep their order.
 * Build and run: sh fuzz/run.sh [seconds] trace */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct serve_req *v = NULL;
    int64_t n = 0;
    struct dse_err e;
    dse_err_clear(&e);
    if (serve_trace_load_buf((const char *)data, size, "fuzz.csv", 100000, &v, &n, &e) != DSE_OK)
        return 0;
    struct serve_req *w = malloc(sizeof *w * (size_t)n);
    if (!w)
        abort();
    for (int mode = 0; mode < TOO_LONG_COUNT; mode++) {
        memcpy(w, v, sizeof *w * (size_t)n);
        int64_t m = n, k, first;
        serve_fit_context(w, &m, 2048, (enum serve_too_long)mode, &k, &first);
        if (k < 0 || k > n || (k > 0) != (first >= 0) || m != (mode == TOO_LONG_SKIP ? n - k : n))
            abort();
        for (int64_t i = 0; i < m; i++) {
            int fits = (int64_t)w[i].prompt + w[i].output <= 2048 && w[i].prompt >= 1 && w[i].output >= 1;
            if ((mode != TOO_LONG_ERROR && !fits) || (i && w[i].arrival_s < w[i - 1].arrival_s))
                abort();
        }
    }
    free(w);
    free(v);
    return 0;
}
