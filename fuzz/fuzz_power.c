/* fuzz_power.c -- libFuzzer target for the power corpus loader (wcorpus_load_buf,
 * the CSV files of validate/published/power): the fixed header, quoting, every field's check (phases and the idle
 * workload, scopes, counts, metrics and their units, the performance columns, kernels' shapes, values),
 * ids unique. Build and run: sh fuzz/run.sh [seconds] power */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct wcase *c = NULL;
    int n = 0;
    struct dse_err e;
    dse_err_clear(&e);
    if (wcorpus_load_buf((const char *)data, size, "fuzz.csv", &c, &n, &e) == DSE_OK)
        free(c);
    return 0;
}
