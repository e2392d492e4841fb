/* fuzz_trace.c -- libFuzzer target for the request-trace loader (serve_trace_load_buf, dse serve --trace
 * and --lengths): the header, comments, line length, each field's number and range, arrival order.
 * Build and run: sh fuzz/run.sh [seconds] trace */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct serve_req *v = NULL;
    int64_t n = 0;
    struct dse_err e;
    dse_err_clear(&e);
    if (serve_trace_load_buf((const char *)data, size, "fuzz.csv", 100000, &v, &n, &e) == DSE_OK)
        free(v);
    return 0;
}
